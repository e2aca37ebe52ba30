"""Terminal output: aligned tables (tabulate) fitted to a width, Markdown tables, JSON and CSV
helpers, and figures by the number rule; the commands' views (:mod:`.views`) render with them.

A sweep's table, JSON and CSV live here too: a streamed sweep (:mod:`.stream`) writes their layouts
block by block. The JSON shapes are documented in docs/cli.md ("JSON output") and kept stable: new
keys may be added, existing ones keep their meaning.
"""

from __future__ import annotations

import io
import math

from ..compute.evaluation import Evaluation, Plan, format_value
from .numbers import SIGNIFICANT, NumberStyle, is_money, texts

from typing import TYPE_CHECKING
if TYPE_CHECKING:  # for annotations only: importing them would import SymPy into `planner eval`
    from typing import Any, Iterable, Optional, Sequence
    from ..questions.explain import Explanation
    from ..questions.answer import SolveResult
    from ..questions.sweep import SweepResult

SWEEP_FORMAT = "planner.sweep/1"


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


def markdown_cell(v: Any) -> str:
    """A GitHub table cell: `|` escaped, line breaks flattened."""
    return " ".join(str(v).split()).replace("|", "\\|")


def markdown_table(rows: Sequence[Sequence[Any]], headers: Sequence[str],
                   align: Optional[Sequence[str]] = None) -> str:
    """A GitHub table of :func:`markdown_cell` cells."""
    from tabulate import tabulate

    return tabulate([[markdown_cell(c) for c in r] for r in rows], headers=[markdown_cell(h) for h in headers],
                    tablefmt="github", disable_numparse=True, colalign=align)


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


NEVER = "never"  # a `first(...)` that found nothing, wherever a value is shown


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


# ---- sweeps ----

def column_header(plan: Plan, name: str) -> str:
    """A quantity's column in a table: its name, its unit in parentheses (``step_time (ms)``)."""
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
    headers = [column_header(plan, n) for n in names] + (["notes"] if notes else [])
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


def _sweep_py(v):
    if isinstance(v, bool) or str(getattr(v, "dtype", "")) == "bool":  # numpy's bool_ too
        return bool(v)
    return float(v)


# ---- solve ----

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


# ---- explain ----

def explain_latex(e: Explanation) -> str:
    """The formula over inputs in LaTeX, printed from its IR (or why there is none)."""
    from .latex import formula_latex

    return formula_latex(e.in_inputs_ir) if e.in_inputs_ir is not None else f"({e.no_ir})"


# ---- series over periods: a table of periods -------------------------------------------------------

def period_labels(plan: Plan, ev: Evaluation) -> list[str]:
    """Each period as the plan counts them: ``1 month``, ``2 month``..."""
    unit, scale = plan.period_unit
    return [format_value(float(v) / scale, unit) for v in ev.periods]
