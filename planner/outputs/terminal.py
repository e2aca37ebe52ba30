"""Terminal output: aligned tables (tabulate), JSON and CSV shapes.

The JSON shapes are documented in the README ("JSON output") and kept
stable: new keys may be added, existing ones keep their meaning.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Iterable, Optional, Sequence

from ..compute.evaluation import Evaluation, Plan, format_value

EVAL_FORMAT = "planner.eval/1"


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], align: Optional[Sequence[str]] = None) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                    colalign=align)


def json_number(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            return None
        return f
    return v


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def quantity_meta(plan: Plan, name: str) -> dict[str, Any]:
    q = plan.model.quantities[name]
    meta: dict[str, Any] = {
        "kind": "input" if q.is_input else "derived",
        "type": "boolean" if q.is_bool else "number",
        "unit": q.unit_text,
        "base_unit": "" if q.is_bool else (str(q.dim) if not q.dim.dimensionless else ""),
        "doc": q.doc,
        "tags": list(q.tags),
        "formula": q.formula,
        "depends_on": list(q.deps),
        "line": q.definition.span.line,
    }
    if q.is_input:
        meta["constraints"] = [c.span.flat for c in q.definition.constraints]
    return meta


def eval_json(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> dict[str, Any]:
    return {
        "format": EVAL_FORMAT,
        "file": plan.path,
        "title": plan.title,
        "notes": list(plan.model.plan.notes),
        "scenarios": [ev.label for ev in evaluations],
        "quantities": {n: quantity_meta(plan, n) for n in names},
        "values": {ev.label: {n: json_number(ev.display(n)) for n in names} for ev in evaluations},
        "base_values": {ev.label: {n: json_number(ev.values[n]) for n in names} for ev in evaluations},
        "overrides": {ev.label: _overrides(plan, ev) for ev in evaluations},
    }


def _overrides(plan: Plan, ev: Evaluation) -> dict[str, Any]:
    out = {}
    for name, origin in ev.origins.items():
        if origin.description != "the plan":
            out[name] = {"value": json_number(ev.display(name)), "from": origin.description}
    return out


def eval_table(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> str:
    headers = ["quantity"] + [ev.label for ev in evaluations] + ["unit", "notes"]
    rows = []
    for n in names:
        q = plan.model.quantities[n]
        values = [format_value(ev.display(n)) for ev in evaluations]
        notes = []
        if q.is_input:
            overridden = any(ev.origins.get(n) and ev.origins[n].description != "the plan" for ev in evaluations)
            notes.append("input*" if overridden else "input")
        notes.extend(q.tags)
        rows.append([n] + values + [q.unit_text, ", ".join(notes)])
    align = ["left"] + ["right"] * len(evaluations) + ["left", "left"]
    return table(rows, headers, align)


def eval_csv(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["quantity", "unit"] + [ev.label for ev in evaluations])
    for n in names:
        q = plan.model.quantities[n]
        w.writerow([n, q.unit_text] + [_csv_value(ev.display(n)) for ev in evaluations])
    return buf.getvalue()


def _csv_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(float(v))


def csv_rows(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for row in rows:
        w.writerow([_csv_value(v) if isinstance(v, (bool, float)) else v for v in row])
    return buf.getvalue()
