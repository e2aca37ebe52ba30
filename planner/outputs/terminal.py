"""Terminal output: aligned tables (tabulate), JSON and CSV shapes.

Every command's printed form lives here: ``eval``, and the answers of the
questions (sweeps, solves, sensitivity, explain), which the question
modules return as plain results.

The JSON shapes are documented in the README ("JSON output") and kept
stable: new keys may be added, existing ones keep their meaning.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from ..compute.evaluation import Evaluation, Plan, format_value
from ..language.errors import PlanError
from ..questions.explain import Explanation
from ..questions.sensitivity import Sensitivity
from ..questions.solve import SolveResult
from ..questions.sweep import SweepResult

EVAL_FORMAT = "planner.eval/1"
SWEEP_FORMAT = "planner.sweep/1"
SOLVE_FORMAT = "planner.solve/1"


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


# ---- checks ----

GREEN, RED, RESET = "\x1b[32m", "\x1b[31m", "\x1b[0m"


def check_text(results: Sequence[Any], verbose: bool = False, color: bool = False) -> str:
    """``planner check``: each failure with expected against actual (passes too when verbose), then the count.
    ``color`` paints `ok` green and `FAIL` red (for a terminal)."""
    ok, fail = (f"{GREEN}ok{RESET}  ", f"{RED}FAIL{RESET}") if color else ("ok  ", "FAIL")
    lines = []
    failed = 0
    for r in results:
        if not r.passed:
            failed += 1
            lines.append(f"{fail} {r.location}: {r.text}\n     {r.describe()}")
        elif verbose:
            where = f" [{r.scenario}]" if r.scenario else ""
            value = f" = {r.actual}" if r.lhs is not None else ""
            lines.append(f"{ok} {r.text}{where}{value}")
    summary = f"{len(results) - failed} passed, {failed} failed"
    if color:
        summary = f"{RED if failed else GREEN}{summary}{RESET}"
    lines.append(summary)
    return "\n".join(lines)


def check_json(plan: Plan, results: Sequence[Any]) -> dict[str, Any]:
    failed = [r for r in results if not r.passed]
    return {
        "format": "planner.check/1",
        "file": plan.path,
        "passed": len(results) - len(failed),
        "failed": len(failed),
        "checks": [check_record(r) for r in results],
    }


def check_record(r) -> dict[str, Any]:
    return {"check": r.text, "line": r.check.span.line, "scenario": r.scenario, "passed": r.passed,
            "actual": r.lhs, "expected": r.rhs, "unit": r.unit, "tolerance": r.tolerance,
            "error": r.error.message if r.error else None, "with": r.overrides}


# ---- sweeps ----

def _sweep_header(plan: Plan, name: str) -> str:
    unit = plan.model.quantities[name].unit_text
    return f"{name} ({unit})" if unit else name


def sweep_title(result: SweepResult) -> str:
    if result.statement is not None:
        text = result.statement.span.flat
        where = f"  ({result.statement.span.location()})"
    else:
        text = "sweep " + ", ".join(f"{a.name} in {a.text}" for a in result.axes)
        where = ""
    return f"{text}{where}  [{result.label}]"


def sweep_table(result: SweepResult) -> str:
    plan = result.plan
    names = result.names
    notes = result.notes()
    cols = {n: result.display(n) for n in names}
    rows = []
    for i in range(result.size):
        row = [format_value(_sweep_py(cols[n][i])) for n in names]
        rows.append(row + ["; ".join(notes.get(i, []))] if notes else row)
    headers = [_sweep_header(plan, n) for n in names] + (["notes"] if notes else [])
    text = sweep_title(result) + "\n" + table(rows, headers, ["right"] * len(names) + (["left"] if notes else []))
    return text + _sweep_issue_footer(result)


def _sweep_issue_footer(result: SweepResult) -> str:
    if not result.issue_count:
        return ""
    points = int(result.bad.sum())
    kinds = sorted({f"{name} ({kind})" for _, name, kind, _ in result.problems})
    return f"\n{points:,} of {result.size:,} points have issues: " + ", ".join(kinds)


def sweep_json(results: Sequence[SweepResult]) -> dict[str, Any]:
    out = []
    for r in results:
        plan = r.plan
        names = r.names
        cols = {n: r.display(n) for n in names}
        out.append({
            "sweep": sweep_title(r).rsplit("  [", 1)[0],
            "line": r.statement.span.line if r.statement is not None else None,
            "scenario": r.label,
            "axes": [{"name": a.name, "unit": a.unit, "count": a.count} for a in r.axes],
            "show": [{"name": n, "unit": plan.model.quantities[n].unit_text} for n in r.show],
            "points": [{n: json_number(_sweep_py(cols[n][i])) for n in names} for i in range(r.size)],
            "issues": [{"index": s.index, "point": s.point, "quantity": s.quantity, "kind": s.kind,
                        "reason": s.reason} for s in r.issues],
            "issue_count": r.issue_count,
            "points_with_issues": int(r.bad.sum()),
        })
    return {"format": SWEEP_FORMAT, "file": results[0].plan.path if results else None, "sweeps": out}


def sweep_csv(results: Sequence[SweepResult]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = None
    for r in results:
        names = r.names
        cols = {n: r.display(n) for n in names}
        notes = r.notes()
        if names != header:  # one header per block of same-shaped sweeps (scenarios stack)
            if header is not None:
                w.writerow([])
            w.writerow(["sweep", "scenario"] + [_sweep_header(r.plan, n) for n in names] + ["issue"])
            header = names
        label = sweep_title(r).rsplit("  [", 1)[0]
        for i in range(r.size):
            w.writerow([label, r.label] + [_sweep_csv(_sweep_py(cols[n][i])) for n in names] + ["; ".join(notes.get(i, []))])
    return buf.getvalue()


def _sweep_py(v):
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    return float(v)


def _sweep_csv(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


# ---- solve ----

def solve_text(results: Sequence[SolveResult]) -> str:
    """Human text: one block per question, one line per scenario."""
    lines: list[str] = []
    last = None
    for r in results:
        if r.statement is not last:
            if lines:
                lines.append("")
            where = f"  ({r.statement.span.location()})" if r.statement.span.source.name != "--where" else ""
            alias = f"  as {r.alias}" if r.alias and f" as {r.alias}" not in r.question else ""
            lines.append(f"{r.question}{alias}{where}")
            last = r.statement
        value = format_value(r.display_value, r.unit, 10)
        head = f"  [{r.label}] {r.target} = {value}"
        if r.optimum is not None:
            head += f"  ({format_value(r.optimum_display, r.optimum_unit, 6)} at the optimum)"
        lines.append(head)
        lines.append(f"      verified     {r.verification.text}")
        lines.append(f"      method       {r.method}")
        if r.closed_form is not None:
            lines.append(f"      closed form  {r.target} = {r.closed_form_text}")
        for note in r.notes:
            lines.append(f"      note         {note}")
    return "\n".join(lines)


def solve_json(plan: Plan, results: Sequence[SolveResult], errors: Sequence[PlanError] = ()) -> dict[str, Any]:
    return {"format": SOLVE_FORMAT, "file": plan.path, "results": [r.to_json() for r in results],
            "errors": [{"message": e.message, "family": e.family,
                        "location": e.span.location() if e.span is not None else None} for e in errors]}


def solve_csv(results: Sequence[SolveResult]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["question", "alias", "scenario", "target", "mode", "value", "unit", "optimum", "closed_form",
                "method", "verification"])
    for r in results:
        w.writerow([r.question, r.alias or "", r.label, r.target, r.mode, repr(r.display_value), r.unit,
                    "" if r.optimum_display is None else repr(r.optimum_display), r.closed_form_text or "",
                    r.method, r.verification.text])
    return buf.getvalue()


# ---- sensitivity ----

def sensitivity_table(s: Sensitivity) -> str:
    rows = [[r.input, format_value(r.value, r.unit), "n/a" if r.elasticity is None else f"{r.elasticity:+.4f}",
             "n/a" if r.derivative is None else format_value(r.derivative), r.method + (f" ({r.note})" if r.note else "")] for r in s.rows]
    head = (f"sensitivity of {s.quantity} = {format_value(s.value, s.unit)}  [{s.label}]\n"
            f"elasticity: a 1% rise in the input moves {s.quantity} by about that many %\n")
    per = f"d {s.quantity}/d input ({s.unit or '1'} per input unit)"
    return head + table(rows, ["input", "value", "elasticity", per, "method"],
                        ["left", "right", "right", "right", "left"])


def sensitivity_json(plan: Plan, results: Sequence[Sensitivity]) -> dict[str, Any]:
    return {"format": "planner.sensitivity/1", "file": plan.path, "results": [
        {"quantity": s.quantity, "scenario": s.label, "value": s.value, "unit": s.unit,
         "inputs": [{"input": r.input, "value": r.value, "unit": r.unit, "elasticity": r.elasticity,
                     "derivative": r.derivative, "method": r.method, "note": r.note} for r in s.rows]}
        for s in results]}


def sensitivity_csv(results: Sequence[Sensitivity]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["quantity", "scenario", "input", "value", "unit", "elasticity", "derivative", "method", "note"])
    for s in results:
        for r in s.rows:
            w.writerow([s.quantity, s.label, r.input, repr(r.value), r.unit,
                        "" if r.elasticity is None else repr(r.elasticity),
                        "" if r.derivative is None else repr(r.derivative), r.method, r.note])
    return buf.getvalue()


# ---- explain ----

def explain_text(e: Explanation) -> str:
    lines = [f"{e.name} = {e.formula}", f"  defined at   {e.location} ({e.kind})"]
    if e.doc:
        lines.append(f"  description  {e.doc}")
    if e.tags:
        lines.append(f"  tags         {', '.join(e.tags)}")
    if e.constraints:
        lines.append(f"  constraints  {', '.join(e.constraints)}")
    if e.kind == "derived":
        lines.append(f"  sympy        {e.sympy}")
        lines.append(f"  in inputs    {e.in_inputs}")
        lines.append(f"  latex        {e.in_inputs_latex}")
        if e.scaled:
            lines.append("  (numbers inside SymPy forms are in base units: B, s, B/s ...)")
    lines.append(f"  value        {e.value}" + (f"   (scenario {e.scenario})" if e.scenario else ""))
    if e.inputs and e.kind == "derived":
        lines.append("  inputs")
        width = max(len(n) for n, _ in e.inputs)
        for n, v in e.inputs:
            lines.append(f"    {n.ljust(width)}  {v}")
    if e.used_by:
        lines.append(f"  used by      {', '.join(e.used_by)}")
    return "\n".join(lines)
