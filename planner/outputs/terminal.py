"""Terminal output: aligned tables (tabulate), JSON and CSV shapes.

Every command's printed form lives here: ``eval``, and the answers of the
questions (sweeps, solves, sensitivity, explain), which the question
modules return as plain results.

The JSON shapes are documented in docs/cli.md ("JSON output") and kept
stable: new keys may be added, existing ones keep their meaning.
"""

from __future__ import annotations

import io
import math

from ..compute.evaluation import Evaluation, Plan, format_value
from ..language.errors import PlanError
from ..language.live import plain as prose_text
from .numbers import SIGNIFICANT, NumberStyle, answer_style, differing, is_money, plan_styles, texts

from typing import TYPE_CHECKING
if TYPE_CHECKING:  # for annotations only: importing them would import SymPy into `planner eval`
    from typing import Any, Iterable, Optional, Sequence
    from ..questions.explain import Explanation
    from ..questions.sensitivity import Sensitivity
    from ..questions.solve import SolveResult
    from ..questions.sweep import SweepResult

EVAL_FORMAT = "planner.eval/1"
SWEEP_FORMAT = "planner.sweep/1"
SOLVE_FORMAT = "planner.solve/1"


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], align: Optional[Sequence[str]] = None,
          maxcolwidths: Optional[Sequence[Optional[int]]] = None) -> str:
    if not maxcolwidths:
        text = _simple_table(rows, headers, align)
        if text is not None:
            return text
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                    colalign=align, maxcolwidths=list(maxcolwidths) if maxcolwidths else None)


_PAD = {"left": str.ljust, "right": str.rjust, "center": lambda text, width: f"{text:^{width}}"}


def _simple_table(rows: Sequence[Sequence[Any]], headers: Sequence[str],
                  align: Optional[Sequence[str]]) -> Optional[str]:
    """tabulate's "simple" table (strings, no number parsing), character for character, for the
    common case: one-line printable ASCII cells (or None), left, right or centre aligned. ``None``
    otherwise (tabulate lays it out). Importing tabulate is a fifth of a small ``planner eval``."""
    n = len(headers)
    if not rows or not n:
        return None
    aligns = ["left"] * n if align is None else list(align)
    if len(aligns) != n or any(a not in _PAD for a in aligns):
        return None
    for h in headers:
        if h.__class__ is not str or not (h.isascii() and h.isprintable()):
            return None
    body = []
    widths = [len(h) + 2 for h in headers]  # tabulate's MIN_PADDING for headers
    for r in rows:
        if len(r) != n:
            return None
        line = []
        for i, c in enumerate(r):
            if c is None:
                c = ""
            elif c.__class__ is not str or not (c.isascii() and c.isprintable()):
                return None
            c = c.strip()
            if len(c) > widths[i]:
                widths[i] = len(c)
            line.append(c)
        body.append(line)
    pads = [_PAD[a] for a in aligns]
    out = ["  ".join(pad(h, w) for pad, h, w in zip(pads, headers, widths)).rstrip(),
           "  ".join("-" * w for w in widths)]
    out.extend("  ".join(pad(c, w) for pad, c, w in zip(pads, line, widths)).rstrip() for line in body)
    return "\n".join(out)


def markdown_table(rows: Sequence[Sequence[Any]], headers: Sequence[str],
                   align: Optional[Sequence[str]] = None) -> str:
    """A GitHub table: `|` escaped, line breaks flattened."""
    from tabulate import tabulate

    def cell(v: Any) -> str:
        return " ".join(str(v).split()).replace("|", "\\|")

    return tabulate([[cell(c) for c in r] for r in rows], headers=[cell(h) for h in headers], tablefmt="github",
                    disable_numparse=True, colalign=align)


def jsonl(records: Iterable[dict[str, Any]]) -> str:
    """One JSON object per line (JSON Lines)."""
    import json

    return "\n".join(json.dumps(r, ensure_ascii=False, allow_nan=False) for r in records)


def wrap_text(text: str, width: Optional[int]) -> str:
    """Prose and answer lines (not tables) folded at ``width``, continuing under their own indent."""
    if width is None:
        return text
    import textwrap

    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        import re

        indent = line[: len(line) - len(line.lstrip())]
        labelled = re.match(r"(\s*)\S+(?: \S+)*?\s{2,}(?=\S)", line)  # `  verified     text`: under the text
        hang = len(labelled.group(0)) if labelled and len(labelled.group(0)) <= width // 2 else len(indent) + 4
        out.extend(textwrap.wrap(line, width, subsequent_indent=" " * hang,
                                 break_long_words=True, break_on_hyphens=False) or [indent])
    return "\n".join(out)


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _column_width(rows: Sequence[Sequence[str]], headers: Sequence[str], i: int) -> int:
    """A column's width in a tabulate "simple" table (headers get two characters of padding)."""
    cells = max((len(line) for r in rows for line in str(r[i]).split("\n")), default=0)
    return max(cells, max(len(line) for line in str(headers[i]).split("\n")) + 2)


def fit(rows: Sequence[Sequence[Any]], headers: Sequence[str], align: Sequence[str], width: Optional[int],
        keep: int = 1, tail: int = 0, wrap: Optional[int] = None, what: str = "columns") -> str:
    """A table that fits ``width`` characters (None: any width).

    In order, until it fits: headers break at `/` and before a `(unit)`; the
    ``wrap`` column (notes, methods) wraps; then the columns between the first
    ``keep`` and the last ``tail`` are split into blocks of columns, printed one
    under the other, each repeating the first ``keep`` and the last ``tail``
    columns, with a line saying which ``what`` each block shows."""
    text = table(rows, headers, align)
    if width is None or _widest(text) <= width:
        return text
    headers = [_break_header(h) for h in headers]
    text = table(rows, headers, align)
    if _widest(text) <= width:
        return text
    limits = _wrap_limits(rows, headers, align, width, wrap)
    text = table(rows, headers, align, limits)
    if _widest(text) <= width:
        return text
    # blocks of the middle columns; the wrapped column (notes) only in the last block
    n = len(headers)
    middle = list(range(keep, n - tail))
    repeated = list(range(keep)) + [i for i in range(n - tail, n) if i != wrap]
    base = sum(_column_width(rows, headers, i) + 2 for i in repeated)
    blocks: list[list[int]] = [[]]
    used = base
    for i in middle:
        w = _column_width(rows, headers, i) + 2
        if blocks[-1] and used + w > width:
            blocks.append([])
            used = base
        blocks[-1].append(i)
        used += w
    wrapped = wrap is not None and wrap >= n - tail
    if wrapped and used + 18 > width:
        blocks.append([])  # no room for the notes beside the last block: they follow on their own
    if len(blocks) == 1:
        return text  # nothing to split: as narrow as it gets
    out = []
    for k, block in enumerate(blocks):
        last = k == len(blocks) - 1
        if not block:  # the notes alone
            cols = list(range(keep)) + [wrap]
            sub_rows = [[r[i] for i in cols] for r in rows]
            sub_headers = [headers[i] for i in cols]
            out.append(table(sub_rows, sub_headers, [align[i] for i in cols],
                             _wrap_limits(sub_rows, sub_headers, None, width, len(cols) - 1)))
            continue
        cols = list(range(keep)) + block + [i for i in range(n - tail, n) if i != wrap or last]
        sub_rows = [[r[i] for i in cols] for r in rows]
        sub_headers = [headers[i] for i in cols]
        sub_align = [align[i] for i in cols]
        sub_wrap = cols.index(wrap) if wrap in cols else None
        limits = _wrap_limits(sub_rows, sub_headers, sub_align, width, sub_wrap)
        first, end = block[0] - keep + 1, block[-1] - keep + 1
        span = f"{what} {first}-{end}" if end > first else f"{what[:-1] if what.endswith('s') else what} {first}"
        if len(block) < len(middle):
            note = f"{span} of {len(middle)}"
            if k == 0:
                note += " (split to fit the terminal; --format csv for one table)"
            out.append(wrap_text(note, width))
        out.append(table(sub_rows, sub_headers, sub_align, limits))
        out.append("")
    return "\n".join(out).rstrip("\n")


def _break_header(h: str) -> str:
    """`large/mi300x/bf16` over three lines, `speedup (ms)` over two."""
    h = str(h)
    if "\n" in h or len(h) <= 8:
        return h
    if " (" in h:
        h = h.replace(" (", "\n(", 1)
    return "/\n".join(h.split("/")) if "/" in h and "(" not in h else h


def _wrap_limits(rows, headers, align, width, wrap) -> Optional[list[Optional[int]]]:
    if wrap is None:
        return None
    others = sum(_column_width(rows, headers, i) + 2 for i in range(len(headers)) if i != wrap)
    room = max(16, width - others)
    return [room if i == wrap else None for i in range(len(headers))]


def json_number(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            return None
        return f
    return v


def _csv_writer(buf):
    import csv  # here, as json below: a table for the terminal needs neither

    return csv.writer(buf, lineterminator="\n")


def dumps(data: Any) -> str:
    import json

    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def quantity_meta(plan: Plan, name: str) -> dict[str, Any]:
    q = plan.model.quantities[name]
    meta: dict[str, Any] = {
        "kind": "input" if q.is_input else "derived",
        "type": "boolean" if q.is_bool else "number",
        "unit": q.unit_text,
        "base_unit": "" if q.is_bool else (str(q.dim) if not q.dim.dimensionless else ""),
        "doc": prose_text(q.doc),
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
        "title": prose_text(plan.title),  # prose as text: `{{` is one brace (planner.language.live)
        "notes": [prose_text(n) for n in plan.model.plan.notes],
        "scenarios": [ev.label for ev in evaluations],
        "quantities": {n: quantity_meta(plan, n) for n in names},
        "values": {ev.label: {n: _json_value(ev, n, ev.display(n)) for n in names} for ev in evaluations},
        "base_values": {ev.label: {n: _json_value(ev, n, ev.values[n]) for n in names} for ev in evaluations},
        "overrides": {ev.label: _overrides(plan, ev) for ev in evaluations},
    }


NEVER = "never"  # a `first(...)` that found nothing, wherever a value is shown


def _json_value(ev: Evaluation, name: str, v: Any) -> Any:
    return NEVER if ev.is_never(name) else json_number(v)


def _overrides(plan: Plan, ev: Evaluation) -> dict[str, Any]:
    out = {}
    for name, origin in ev.origins.items():
        if origin.description != "the plan":
            out[name] = {"value": json_number(ev.display(name)), "from": origin.description}
    return out


def figures(values: Sequence[Any], unit: str, digits: int = 6, style: Optional[NumberStyle] = None) -> list[str]:
    """A quantity's figures as the terminal prints them (without the unit), by the workbook's and the
    report's number rule: one style for all of them (``style``, the quantity's own, where given), digits
    grouped (``42,000``, ``44,570.7``), money to cents (``6,527,500.00``, never ``6.5275e+06``). ``digits``
    above six (an answer's figure) keeps that many significant digits, grouped the same way."""
    if style is None and digits > SIGNIFICANT and not is_money(unit):
        return [format_value(v, "", digits) for v in values]
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    shown = iter([style.text(v) for v in numbers] if style is not None else texts(numbers, unit))
    return [next(shown) if isinstance(v, (int, float)) and not isinstance(v, bool) else format_value(v)
            for v in values]


def plain(v: Any) -> str:
    """One figure alone by the rule: six significant digits, grouped (``44,570.7``, ``1.257E-11``)."""
    return format_value(v)


def figure(value: Any, unit: str, digits: int = 6) -> str:
    """One figure and its unit, apart: ``6,527,500.00 USD``."""
    return f"{figures([value], unit, digits)[0]} {unit}".strip()


def _eval_rows(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]):
    headers = ["quantity"] + [ev.label for ev in evaluations] + ["unit", "notes"]
    rows = []
    styles = plan_styles(plan, evaluations, names)
    for n in names:
        q = plan.model.quantities[n]
        values = figures([ev.display(n) for ev in evaluations], q.unit_text, style=styles.get(n))
        values = [NEVER if ev.is_never(n) else v for ev, v in zip(evaluations, values)]
        notes = []
        if q.is_input:
            overridden = any(ev.origins.get(n) and ev.origins[n].description != "the plan" for ev in evaluations)
            notes.append("input*" if overridden else "input")
        notes.extend(q.tags)
        rows.append([n] + values + [q.unit_text, ", ".join(notes)])
    align = ["left"] + ["right"] * len(evaluations) + ["left", "left"]
    return rows, headers, align


def eval_table(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str],
               width: Optional[int] = None) -> str:
    """The quantities, one column per scenario; fitted to ``width`` (the terminal's) when given."""
    rows, headers, align = _eval_rows(plan, evaluations, names)
    return fit(rows, headers, align, width, keep=1, tail=2, wrap=len(headers) - 1, what="scenarios")


def eval_markdown(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> str:
    rows, headers, align = _eval_rows(plan, evaluations, names)
    return markdown_table(rows, headers, align)


def eval_jsonl(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> str:
    """One line per quantity and scenario: ``quantity``, ``scenario``, ``value`` (display unit), ``unit``,
    ``base_value``, ``kind``, ``input_from`` (where an overridden input's value came from)."""
    def records():
        for ev in evaluations:
            for n in names:
                q = plan.model.quantities[n]
                origin = ev.origins.get(n)
                yield {"quantity": n, "scenario": ev.label, "value": _json_value(ev, n, ev.display(n)),
                       "unit": q.unit_text, "base_value": _json_value(ev, n, ev.values[n]), "kind": "input" if q.is_input else "derived",
                       "input_from": origin.description if origin and origin.description != "the plan" else None}
    return jsonl(records())


def eval_csv(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> str:
    buf = io.StringIO()
    w = _csv_writer(buf)
    w.writerow(["quantity", "unit"] + [ev.label for ev in evaluations])
    for n in names:
        q = plan.model.quantities[n]
        w.writerow([n, q.unit_text] + [NEVER if ev.is_never(n) else _csv_value(ev.display(n)) for ev in evaluations])
    return buf.getvalue()


def _csv_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(float(v))


def csv_rows(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = _csv_writer(buf)
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
        note = getattr(r, "note", "")  # a probability check over samples where a `first` is never
        if not r.passed:
            failed += 1
            lines.append(f"{fail} {r.location}: {r.text}\n     {describe(r)}" + (f"\n     note: {note}" if note else ""))
        elif verbose:
            where = f" [{r.scenario}]" if r.scenario else ""
            value = f" = {r.actual}" if r.lhs is not None else ""
            lines.append(f"{ok} {r.text}{where}{value}" + (f"\n     note: {note}" if note else ""))
    summary = f"{len(results) - failed} passed, {failed} failed"
    if color:
        summary = f"{RED if failed else GREEN}{summary}{RESET}"
    lines.append(summary)
    return "\n".join(lines)


def describe(r) -> str:
    """A failed check's expected against actual, with the digits that differ (``expected 3,298,035.20 USD
    (± 0.005 USD), got 3,298,035.21 USD``: never two equal numbers)."""
    numbers = [v for v in (r.lhs, r.rhs) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if r.error is not None or len(numbers) != 2 or r.passed or getattr(r, "stat_text", ""):
        return r.describe()  # (a probability check says its statistic, sampling error and comparison)
    got, want = differing(float(r.lhs), float(r.rhs), r.unit)
    where = f" in {r.scenario}" if r.scenario else ""
    tol = f" ({r.tolerance})" if r.tolerance else ""
    apart = ""
    if got == want and getattr(r, "exact_difference", None) is not None:  # equal as floats, not exactly
        from ..questions.checks import decimal_text

        apart = f", {decimal_text(abs(r.exact_difference))} {r.unit}".rstrip() + " apart in exact arithmetic"
    return f"expected {want}{tol}, got {got}{apart}{where}"


def check_markdown(results: Sequence[Any]) -> str:
    rows = [["pass" if r.passed else "**FAIL**", r.text, r.scenario or "", r.actual, r.expected, r.tolerance,
             r.check.span.line] for r in results]
    failed = sum(not r.passed for r in results)
    return (markdown_table(rows, ["", "check", "scenario", "actual", "expected", "tolerance", "line"],
                           ["left", "left", "left", "right", "right", "left", "right"])
            + f"\n\n{len(results) - failed} passed, {failed} failed")


def check_jsonl(results: Sequence[Any]) -> str:
    return jsonl(check_record(r) for r in results)


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
            "error": r.error.message if r.error else None, "with": r.overrides,
            **({"note": r.note} if getattr(r, "note", "") else {})}


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


def _sweep_rows(result: SweepResult):
    plan = result.plan
    names = result.names
    notes = result.notes()
    cols = {n: result.display(n) for n in names}
    rows = []
    for i in range(result.size):
        rows.append([_sweep_py(cols[n][i]) for n in names])
    for j, n in enumerate(names):  # money: one style per column, to cents; other figures one by one by the
        # rule (grouped, six significant digits), as a streamed sweep too long to hold writes them (.stream)
        unit = "" if plan.model.quantities.get(n) is None else plan.model.quantities[n].unit_text
        column = [row[j] for row in rows]
        shown = figures(column, unit) if is_money(unit) else [plain(v) for v in column]
        for row, text in zip(rows, result.with_never(n, shown, NEVER)):
            row[j] = text
    for i, row in enumerate(rows):
        if notes:
            row.append("; ".join(notes.get(i, [])))
    headers = [_sweep_header(plan, n) for n in names] + (["notes"] if notes else [])
    return rows, headers, ["right"] * len(names) + (["left"] if notes else []), bool(notes)


def sweep_table(result: SweepResult, width: Optional[int] = None) -> str:
    rows, headers, align, notes = _sweep_rows(result)
    body = fit(rows, headers, align, width, keep=len(result.axes), tail=1 if notes else 0,
               wrap=len(headers) - 1 if notes else None, what="columns")
    return (wrap_text(sweep_title(result), width) + "\n" + body
            + wrap_text(_sweep_issue_footer(result), width))


def sweep_markdown(result: SweepResult) -> str:
    rows, headers, align, _ = _sweep_rows(result)
    return f"**{sweep_title(result)}**\n\n" + markdown_table(rows, headers, align) + _sweep_issue_footer(result)


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
            "points": [dict(zip(names, row)) for row in zip(*(
                r.with_never(n, [json_number(_sweep_py(v)) for v in cols[n]], NEVER) for n in names))],
            "issues": [{"index": s.index, "point": s.point, "quantity": s.quantity, "kind": s.kind,
                        "reason": s.reason} for s in r.issues],
            "issue_count": r.issue_count,
            "points_with_issues": int(r.bad.sum()),
        })
    return {"format": SWEEP_FORMAT, "file": results[0].plan.path if results else None, "sweeps": out}


def sweep_csv(results: Sequence[SweepResult]) -> str:
    buf = io.StringIO()
    w = _csv_writer(buf)
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
    if isinstance(v, bool) or str(getattr(v, "dtype", "")) == "bool":  # numpy's bool_ too
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
        style = answer_style(r.display_value, r.unit, r.mode)  # as eval, the report and the workbook write it
        value = f"{figures([r.display_value], r.unit, style=style)[0]} {r.unit}".strip()
        head = f"  [{r.label}] {r.target} = {value}"
        if r.optimum is not None:
            head += f"  ({figure(r.optimum_display, r.optimum_unit, 6)} at the optimum)"
        lines.append(head)
        lines.append(f"      verified     {r.verification.text}")
        lines.append(f"      method       {r.method}")
        if r.closed_form is not None:
            lines.append(f"      closed form  {r.target} = {r.closed_form_text}")
            if r.form_units:  # the form is over the figures as shown, not base units: say in which
                lines.append("      in units     " + "; ".join(f"{n} in {u}" for n, u in r.form_units))
        for note in r.notes:
            lines.append(f"      note         {note}")
    return "\n".join(lines)


def closed_form_latex(r: SolveResult) -> Optional[str]:
    """An answer's closed form in LaTeX on one line, printed from its IR by the report's printer; None
    when there is none (or none the plan language can write)."""
    from .latex import formula_latex

    node = r.closed_form_ir
    return None if node is None else formula_latex(node)


def answer_json(r: SolveResult) -> dict[str, Any]:
    """One answer as JSON: its own fields, and its closed form's LaTeX after the closed form."""
    out: dict[str, Any] = {}
    for key, value in r.to_json().items():
        out[key] = value
        if key == "closed_form":
            out["closed_form_latex"] = closed_form_latex(r)
    return out


def solve_json(plan: Plan, results: Sequence[SolveResult], errors: Sequence[PlanError] = (),
               missing: Sequence = ()) -> dict[str, Any]:
    """``missing``: (question, scenario, why) where a scenario has no answer in the domain."""
    return {"format": SOLVE_FORMAT, "file": plan.path, "results": [answer_json(r) for r in results],
            "no_answer": [{"question": " ".join(q.span.flat.split()), "alias": q.alias, "scenario": s or "base",
                           "reason": e.message, "location": q.span.location()} for q, s, e in missing],
            "errors": [{"message": e.message, "family": e.family,
                        "location": e.span.location() if e.span is not None else None} for e in errors]}


def solve_markdown(results: Sequence[SolveResult]) -> str:
    rows = [[r.question, r.label, format_value(r.display_value, r.unit)
             + (f" ({format_value(r.optimum_display, r.optimum_unit, 6)} at the optimum)" if r.optimum is not None
                else ""), r.method, r.verification.text, r.closed_form_text or ""] for r in results]
    return markdown_table(rows, ["question", "scenario", "answer", "method", "verified", "closed form"])


def solve_jsonl(results: Sequence[SolveResult]) -> str:
    return jsonl(answer_json(r) for r in results)


def solve_csv(results: Sequence[SolveResult]) -> str:
    buf = io.StringIO()
    w = _csv_writer(buf)
    w.writerow(["question", "alias", "scenario", "target", "mode", "value", "unit", "optimum", "closed_form",
                "method", "verification"])
    for r in results:
        w.writerow([r.question, r.alias or "", r.label, r.target, r.mode, repr(r.display_value), r.unit,
                    "" if r.optimum_display is None else repr(r.optimum_display), r.closed_form_text or "",
                    r.method, r.verification.text])
    return buf.getvalue()


# ---- sensitivity ----

def _sensitivity_rows(s: Sensitivity):
    rows = [[r.input, format_value(r.value, r.unit), "n/a" if r.elasticity is None else f"{r.elasticity:+.4f}",
             "n/a" if r.derivative is None else format_value(r.derivative),
             r.method + (f" ({r.note})" if r.note else "")] for r in s.rows]
    per = f"d {s.quantity}/d input ({s.unit or '1'} per input unit)"
    return rows, ["input", "value", "elasticity", per, "method"], ["left", "right", "right", "right", "left"]


def _never_sensitivity(s: Sensitivity) -> str:
    """What ``sensitivity`` says of a ``first(...)`` that finds nothing in the scenario."""
    return (f"{s.quantity} is never in {s.label} (its `first(...)` finds no period where its condition holds), "
            "so it has no sensitivity there")


def _or_never_row(s: Sensitivity) -> list:
    """The rows of a sensitivity; for one that is never, a single row saying so (no input, no value)."""
    if not s.never:
        return s.rows
    from ..questions.sensitivity import Row

    return [Row("", None, "", None, None, "none", _never_sensitivity(s))]


def sensitivity_table(s: Sensitivity, width: Optional[int] = None) -> str:
    if s.never:
        return wrap_text(f"sensitivity of {s.quantity} = {NEVER}  [{s.label}]\n{_never_sensitivity(s)}", width)
    rows, headers, align = _sensitivity_rows(s)
    head = (f"sensitivity of {s.quantity} = {format_value(s.value, s.unit)}  [{s.label}]\n"
            f"elasticity: a 1% rise in the input moves {s.quantity} by about that many %")
    return wrap_text(head, width) + "\n" + fit(rows, headers, align, width, keep=1, tail=1, wrap=4)


def sensitivity_markdown(s: Sensitivity) -> str:
    if s.never:
        return f"**sensitivity of {s.quantity} = {NEVER}** [{s.label}]\n\n{_never_sensitivity(s)}"
    rows, headers, align = _sensitivity_rows(s)
    return (f"**sensitivity of {s.quantity} = {format_value(s.value, s.unit)}** [{s.label}]\n\n"
            + markdown_table(rows, headers, align))


def sensitivity_jsonl(results: Sequence[Sensitivity]) -> str:
    return jsonl({"quantity": s.quantity, "scenario": s.label, "input": r.input, "value": r.value, "unit": r.unit,
                  "elasticity": r.elasticity, "derivative": r.derivative, "method": r.method, "note": r.note}
                 for s in results for r in _or_never_row(s))


def sensitivity_json(plan: Plan, results: Sequence[Sensitivity]) -> dict[str, Any]:
    return {"format": "planner.sensitivity/1", "file": plan.path, "results": [
        {"quantity": s.quantity, "scenario": s.label, "value": NEVER if s.never else s.value, "unit": s.unit,
         "inputs": [{"input": r.input, "value": r.value, "unit": r.unit, "elasticity": r.elasticity,
                     "derivative": r.derivative, "method": r.method, "note": r.note} for r in s.rows]}
        for s in results]}


def sensitivity_csv(results: Sequence[Sensitivity]) -> str:
    buf = io.StringIO()
    w = _csv_writer(buf)
    w.writerow(["quantity", "scenario", "input", "value", "unit", "elasticity", "derivative", "method", "note"])
    for s in results:
        for r in _or_never_row(s):
            w.writerow([s.quantity, s.label, r.input, "" if r.value is None else repr(r.value), r.unit,
                        "" if r.elasticity is None else repr(r.elasticity),
                        "" if r.derivative is None else repr(r.derivative), r.method, r.note])
    return buf.getvalue()


# ---- explain ----

def explain_latex(e: Explanation) -> str:
    """The formula over inputs in LaTeX, printed from its IR (or why there is none)."""
    from .latex import formula_latex

    return formula_latex(e.in_inputs_ir) if e.in_inputs_ir is not None else f"({e.no_ir})"


def explain_text(e: Explanation) -> str:
    lines = [f"{e.name} = {e.formula}", f"  defined at   {e.location} ({e.kind})"]
    if e.doc:
        lines.append(f"  description  {prose_text(e.doc)}")
    if e.tags:
        lines.append(f"  tags         {', '.join(e.tags)}")
    if e.constraints:
        lines.append(f"  constraints  {', '.join(e.constraints)}")
    if e.kind == "derived":
        lines.append(f"  sympy        {e.sympy}")
        lines.append(f"  in inputs    {e.in_inputs}")
        lines.append(f"  latex        {explain_latex(e)}")
        if e.scaled:
            lines.append("  (numbers inside SymPy forms are in base units: " + ("; ".join(e.factors) or "B, s, B/s ...") + ")")
    lines.append(f"  value        {e.value}" + (f"   (scenario {e.scenario})" if e.scenario else ""))
    if e.inputs and e.kind == "derived":
        lines.append("  inputs")
        width = max(len(n) for n, _ in e.inputs)
        for n, v in e.inputs:
            lines.append(f"    {n.ljust(width)}  {v}")
    if e.used_by:
        lines.append(f"  used by      {', '.join(e.used_by)}")
    return "\n".join(lines)


# ---- series over periods: a table of periods -------------------------------------------------------

def period_labels(plan: Plan, ev: Evaluation) -> list[str]:
    """Each period as the plan counts them: ``1 month``, ``2 month``..."""
    unit, scale = plan.period_unit
    return [format_value(float(v) / scale, unit) for v in ev.periods]


def _series_cell(v: float) -> Any:
    return NEVER if v != v else float(v)


def _series_rows(plan: Plan, ev: Evaluation, names: Sequence[str]):
    """One scenario's series: its title, headers (a column per series, its unit in the header) and a row per period."""
    unit, _ = plan.period_unit
    headers = [unit or "period"] + [f"{n} ({plan.model.quantities[n].unit_text})"
                                   if plan.model.quantities[n].unit_text else n for n in names]
    columns = [figures([_series_cell(v) for v in ev.series_display(n)], plan.model.quantities[n].unit_text)
               if not plan.model.quantities[n].is_bool else
               ["true" if v else "false" for v in ev.series[n]] for n in names]
    labels = period_labels(plan, ev)
    rows = [[labels[i]] + [c[i] for c in columns] for i in range(len(labels))]
    return f"series{'' if ev.scenario is None else f' in {ev.label}'}", headers, rows


def series_table(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str],
                 width: Optional[int] = None) -> str:
    """Each scenario's series as one table: a row per period, a column per series (its unit in the header)."""
    out = []
    for ev in evaluations:
        title, headers, rows = _series_rows(plan, ev, names)
        out.append(title + "\n" + fit(rows, headers, ["right"] * len(headers), width, keep=1, what="series"))
    return "\n".join(out)


def series_markdown(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> str:
    """Each scenario's series as a Markdown table under a heading, as :func:`series_table` lays them out."""
    from .markup import text

    out = []
    for ev in evaluations:
        title, headers, rows = _series_rows(plan, ev, names)
        out.append(f"## {text(title[0].upper() + title[1:])}\n\n" +
                   markdown_table(rows, headers, ["right"] * len(headers)))
    return "\n".join(out)


def series_jsonl(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> str:
    """The series in long form, a line per scenario, series and period (the JSON's ``series.records``)."""
    return jsonl(series_json(plan, evaluations, names)["records"])


def series_json(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> dict[str, Any]:
    """The series in long form: one record per scenario, series and period (display units; never as ``never``)."""
    records = []
    for ev in evaluations:
        labels = period_labels(plan, ev)
        unit, scale = plan.period_unit
        for n in names:
            q = plan.model.quantities[n]
            values = ev.series[n] if q.is_bool else ev.series_display(n)
            for i, v in enumerate(values):
                records.append({"scenario": ev.label, "series": n, "period": float(ev.periods[i]) / scale,
                                "period_label": labels[i], "value": bool(v) if q.is_bool else
                                (NEVER if v != v else json_number(float(v))), "unit": q.unit_text})
    return {"period_unit": plan.period_unit[0], "series": {n: quantity_meta(plan, n) for n in names},
            "records": records}


def series_csv(plan: Plan, evaluations: Sequence[Evaluation], names: Sequence[str]) -> str:
    """The series in long form: ``scenario,series,period,value,unit``, a row per period."""
    buf = io.StringIO()
    w = _csv_writer(buf)
    w.writerow(["scenario", "series", "period", "value", "unit"])
    for rec in series_json(plan, evaluations, names)["records"]:
        w.writerow([rec["scenario"], rec["series"], _csv_value(rec["period"]),
                    rec["value"] if isinstance(rec["value"], str) else _csv_value(rec["value"]), rec["unit"]])
    return buf.getvalue()
