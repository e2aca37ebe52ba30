"""Live tables: a row per point, formulas over the row's inputs.

A table varies some inputs (a sweep's axes, an optimisation's candidates,
a bisection's midpoints). Each row holds those inputs, the requested outputs
as formulas, and, in helper columns, every intermediate quantity that
depends on a varied input (the "cone"), so nothing is expanded: each cell
is its quantity's own formula over cells of the same row, the plan's
defined names, or a scenario's column for what the table does not vary.

Formulas are printed once per column with a row placeholder and then
stamped per row (a 1,000-row sweep prints each formula once).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional, Sequence

import sympy as sp
from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.utils import get_column_letter

from .book import (
    HEADER_FILL,
    HEADER_FONT,
    NOTE_FONT,
    TITLE_FONT,
    Book,
    Context,
    in_base,
    put_formula,
    put_text,
    sheet_ref,
)
from .printer import FormulaTooLong, formula

MAX_SWEEP_ROWS = 1000
ROW = "\x00"  # placeholder for the row number in formulas printed once per column


@dataclass
class Output:
    label: str
    expr: sp.Basic  # base units
    scale: Fraction = Fraction(1)
    unit: str = ""
    is_bool: bool = False
    quantity: Optional[str] = None  # the plan quantity this column shows, if any
    guard: bool = False  # an error shows as an empty string (ignored by MAX/MIN)
    when: Optional[sp.Basic] = None  # where this condition fails the cell is an empty string too


def cone(book: Book, varied: Sequence[str], exprs: Sequence[sp.Basic]) -> list[str]:
    """Derived quantities the outputs need that change with the varied inputs (dependency order)."""
    from ...questions.sweep import default_show

    model = book.model
    affected = set(default_show(book.plan, varied))
    names = book.plan.symbols.names
    needed: set[str] = set()
    stack = [names[s] for e in exprs for s in e.free_symbols if s in names]
    while stack:
        n = stack.pop()
        if n in needed:
            continue
        needed.add(n)
        stack.extend(model.quantities[n].deps)
    return [n for n in model.order if n in affected and n in needed]


def output_for(book: Book, name: str) -> Output:
    q = book.q[name]
    return Output(name, book.plan.exprs[name] if not q.is_input else book.sym[name],
                  Fraction(1) if q.is_bool else q.display.scale, q.unit_text, q.is_bool,
                  quantity=None if q.is_input else name)


class LiveTable:
    """Columns: varied inputs, outputs, then helper columns for the cone."""

    def __init__(self, book: Book, ws, ctx: Context, varied: Sequence[str], outputs: Sequence[Output],
                 top: int, left: int = 1) -> None:
        self.book, self.ws, self.ctx = book, ws, ctx
        self.varied = list(varied)
        self.outputs = list(outputs)
        shown = {o.quantity for o in self.outputs if o.quantity is not None}
        exprs = [o.expr for o in self.outputs] + [o.when for o in self.outputs if o.when is not None]
        self.helpers = [n for n in cone(book, self.varied, exprs) if n not in shown]
        self.top = top  # header row; units below; data from top + 2
        self.left = left
        self.col: dict[str, int] = {}
        c = left
        for n in self.varied:
            self.col["in:" + n] = c
            c += 1
        for i, _ in enumerate(self.outputs):
            self.col[f"out:{i}"] = c
            c += 1
        for n in self.helpers:
            self.col["q:" + n] = c
            c += 1
        self.width = c - left
        self.first = top + 2
        self.rows = 0

    def letter(self, key: str) -> str:
        return get_column_letter(self.col[key])

    def header(self) -> None:
        ws, book = self.ws, self.book
        for n in self.varied:
            self._head(self.col["in:" + n], n, book.q[n].unit_text)
        for i, o in enumerate(self.outputs):
            self._head(self.col[f"out:{i}"], o.label, o.unit)
        for n in self.helpers:
            cell = self._head(self.col["q:" + n], n, book.q[n].unit_text)
            cell.font = NOTE_FONT
        if self.helpers:
            put_text(ws, self.top - 1, self.col["q:" + self.helpers[0]], "intermediate quantities "
                     "(each the plan's own formula over this row)", NOTE_FONT)

    def _head(self, col: int, label: str, unit: str):
        cell = put_text(self.ws, self.top, col, label, HEADER_FONT)
        cell.fill = HEADER_FILL
        put_text(self.ws, self.top + 1, col, unit, NOTE_FONT)
        self.ws.column_dimensions[get_column_letter(col)].width = max(12, min(30, len(label) + 2))
        return cell

    def _refs(self, row: str, qualified: bool = False) -> dict:
        """Symbols in base units for a row (``row`` is a number or a placeholder); ``qualified``:
        sheet-qualified absolute references, for helper cells on another sheet."""
        refs = self.book.refs(self.ctx, None if qualified else self.ws.title)
        prefix = f"{sheet_ref(self.ws.title)}!$" if qualified else ""
        dollar = "$" if qualified else ""
        columns = [(n, "in:" + n) for n in self.varied] + [(n, "q:" + n) for n in self.helpers]
        columns += [(o.quantity, f"out:{i}") for i, o in enumerate(self.outputs) if o.quantity is not None]
        for n, key in columns:
            q = self.book.q[n]
            text = f"{prefix}{self.letter(key)}{dollar}{row}"
            refs[self.book.sym[n]] = text if q.is_bool else in_base(text, q.display.scale)
        return refs

    def _print(self, expr, scale: Fraction, where: str, guard: bool = False,
               when: Optional[sp.Basic] = None) -> Callable[[int], str]:
        """Print once with a row placeholder; stamp per row (per-row printing when it must spill).
        ``guard``: an error shows as ""; ``when``: so does a row where this condition fails."""

        def text(print_one: Callable[[sp.Basic, Fraction], str]) -> str:
            body = print_one(expr, scale)[1:]
            if when is not None:
                body = f'IF({print_one(when, Fraction(1))[1:]},{body},"")'
            return "=" + (f'IFERROR({body},"")' if guard else body)

        try:
            template = text(lambda e, k: formula(e, self._refs(ROW), self.book.bools, spill=None, scale=k))
        except FormulaTooLong:
            return lambda r: text(lambda e, k: self.book.formula(e, self._refs(str(r)), k, where,
                                                                  self._refs(str(r), qualified=True)))
        return lambda r: template.replace(ROW, str(r))

    def stale(self) -> list[str]:
        """Columns (``out:i``, ``q:NAME``) that use a question's answer which changes with a varied input:
        one Solve cell cannot stand for it on every row, so these columns hold planner's values."""
        model = self.book.model
        moving = {a for a in model.answers if model.answer_inputs(a) & set(self.varied)}
        if not moving:
            return []
        plan = self.book.plan
        out = []
        for i, o in enumerate(self.outputs):
            syms = {plan.symbols.answer_names.get(x) for x in o.expr.free_symbols}
            names = [plan.symbols.names[x] for x in o.expr.free_symbols if x in plan.symbols.names]
            if syms & moving or any(model.answer_cone(n) & moving for n in names):
                out.append(f"out:{i}")
        out += ["q:" + n for n in self.helpers if n in model.quantities and model.answer_cone(n) & moving]
        return out

    def fill(self, inputs: Sequence[Sequence], fixed: Optional[dict[str, Sequence]] = None) -> None:
        """One row per entry of ``inputs``: per varied input a display value or a formula text
        (``ROW`` in it stands for the row's own number). ``fixed``: columns written as values, one per row."""
        ws, book = self.ws, self.book
        fixed = fixed or {}
        stamps = []
        for i, o in enumerate(self.outputs):
            if f"out:{i}" in fixed:
                continue
            stamps.append((self.col[f"out:{i}"],
                           self._print(o.expr, o.scale, f"{ws.title}: {o.label}", o.guard, o.when)))
        for n in self.helpers:
            if "q:" + n in fixed:
                continue
            q = book.q[n]
            scale = Fraction(1) if q.is_bool else q.display.scale
            stamps.append((self.col["q:" + n], self._print(book.plan.exprs[n], scale, f"{ws.title}: {n}")))
        for key, column in fixed.items():
            for k, v in enumerate(column):
                ws.cell(row=self.first + k, column=self.col[key], value=v)
        for k, values in enumerate(inputs):
            r = self.first + k
            for n, v in zip(self.varied, values):
                c = self.col["in:" + n]
                if isinstance(v, str):
                    put_formula(ws, r, c, v.replace(ROW, str(r)))
                else:
                    ws.cell(row=r, column=c, value=v)
            for c, stamp in stamps:
                put_formula(ws, r, c, stamp(r))
        self.rows = len(inputs)

    @property
    def last(self) -> int:
        return self.first + self.rows - 1

    def range(self, key: str) -> str:
        """The column's data cells, absolute (``$B$7:$B$16``)."""
        col = self.letter(key)
        return f"${col}${self.first}:${col}${self.last}"


# ---- sweep sheets ------------------------------------------------------------------

def sheet_title(book: Book, base: str) -> str:
    text = re.sub(r"[\[\]:*?/\\']", " ", base).strip()[:31] or "Sheet"
    taken = {ws.title.lower() for ws in book.wb.worksheets}
    candidate, n = text, 1
    while candidate.lower() in taken:
        n += 1
        suffix = f" {n}"
        candidate = text[: 31 - len(suffix)] + suffix
    return candidate


def sweep_contexts(book: Book) -> None:
    from ...compute.evaluation import scenarios_for

    for stmt in book.model.sweeps:
        for s in scenarios_for(book.plan, stmt.scenarios):
            if s is not None:
                book.context(s)


def sweep_sheets(book: Book) -> None:
    from ...compute.evaluation import scenarios_for
    from ...questions.ranges import expand
    from ...questions.sweep import default_show

    for k, stmt in enumerate(book.model.sweeps, start=1):
        axes = [expand(book.plan, a.name, a.values, a.name_span) for a in stmt.axes]
        names = [p.name for p in axes]
        show = [n.name for n in stmt.show] or default_show(book.plan, names)
        ws = book.wb.create_sheet(sheet_title(book, f"Sweep {k} " + ", ".join(names)))
        put_text(ws, 1, 1, stmt.span.flat, TITLE_FONT)
        total = 1
        for p in axes:
            total *= p.count
        shown = min(total, MAX_SWEEP_ROWS)
        note = f"{total:,} points" if shown == total else (
            f"{total:,} points; the first {shown:,} are shown (the full sweep: `planner sweep`)")
        put_text(ws, 2, 1, note + ". Edit any input on the Inputs sheet and the table follows.", NOTE_FONT)
        points = list(itertools.islice(itertools.product(*[range(p.count) for p in axes]), shown))
        rows = [[float(p.exact(i) / p.scale) for p, i in zip(axes, idx)] for idx in points]
        top = 5
        for scenario in scenarios_for(book.plan, stmt.scenarios):
            ctx = book.context(scenario) if scenario is not None else book.base_context
            put_text(ws, top - 1, 1, f"scenario: {scenario}" if scenario else "base (the plan as written)",
                     HEADER_FONT)
            outputs = [output_for(book, n) for n in show if n not in names]
            table = LiveTable(book, ws, ctx, names, outputs, top + 1)
            table.header()
            table.fill(rows, _fixed(book, stmt, scenario, table, len(rows)))
            book.sweep_blocks.append((stmt, scenario, ws.title, table))
            _chart(ws, table, names[0], outputs, top, grid=len(names) > 1)
            top = table.last + 4


def _fixed(book: Book, stmt, scenario, table: LiveTable, rows: int) -> dict:
    """planner's values for the columns that use an answer the sweep changes (see :meth:`LiveTable.stale`)."""
    stale = table.stale()
    if not stale:
        return {}
    from ...questions.sweep import run_statement

    names = [o.quantity for o in table.outputs] + table.helpers
    show = [n for n in names if n is not None]
    result = run_statement(book.plan, stmt, [scenario or "base"], book.overrides, book.origins, show=show)[0]
    out = {}
    for key in stale:
        name = table.outputs[int(key[4:])].quantity if key.startswith("out:") else key[2:]
        col = result.display(name)[:rows]
        out[key] = [None if isinstance(v, float) and v != v else (bool(v) if col.dtype == bool else float(v))
                    for v in col]
    shown = [table.outputs[int(k[4:])].label if k.startswith("out:") else k[2:] for k in stale]
    put_text(table.ws, table.top - 1, table.left, "not live: planner's values for " + ", ".join(shown)
             + " (a question's answer they use changes along the sweep; planner solves it at every point)", NOTE_FONT)
    return out


def _chart(ws, table: LiveTable, x_name: str, outputs: Sequence[Output], top: int, grid: bool = False) -> None:
    """A scatter chart of the numeric outputs against the first swept input (markers only for a grid)."""
    numeric = [i for i, o in enumerate(outputs) if not o.is_bool]
    if not numeric or table.rows < 2:
        return
    chart = ScatterChart()
    chart.title = ", ".join(outputs[i].label for i in numeric)[:200]
    chart.style = 13
    chart.x_axis.title = x_name
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    xcol = table.col["in:" + x_name]
    xs = Reference(ws, min_col=xcol, min_row=table.first, max_row=table.last)
    for i in numeric:
        col = table.col[f"out:{i}"]
        ys = Reference(ws, min_col=col, min_row=table.first, max_row=table.last)
        series = Series(ys, xs, title_from_data=False, title=outputs[i].label)
        series.marker.symbol = "circle"
        if grid:  # the rows of a grid do not form one line
            series.graphicalProperties.line.noFill = True
        chart.series.append(series)
    chart.width, chart.height = 16, 8
    anchor = get_column_letter(table.left + table.width + 1) + str(top)
    ws.add_chart(chart, anchor)
