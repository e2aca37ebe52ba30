"""Live tables: a row per point, formulas over the row's inputs.

A table varies some inputs (a sweep's axes, an optimisation's candidates,
a bisection's midpoints). Each row holds those inputs, the requested outputs
as formulas, and, in helper columns, every intermediate quantity that
depends on a varied input (the "cone"), so nothing is expanded: each cell
is its quantity's own formula over cells of the same row, the plan's
defined names, or a scenario's column for what the table does not vary.

Formulas are printed once per column with a row placeholder and then
stamped per row (a 1,000-row sweep prints each formula once). Their cached
values come from one vectorised evaluation of the plan over all rows.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional, Sequence

import numpy as np

from ...language import ir

from ..numbers import cell_unit, significant
from .book import (scale_of, capitalised,
    HEADER,
    TITLE,
    UNIT,
    Book,
    Chart,
    Context,
    Series,
    cached,
    col_letter,
    sheet_ref,
    sheet_title,  # noqa: F401  (the sheet builders' shared helper, re-exported)
)
from .generator import ATOM, Generator, NotWritten, Piece, UnsupportedFormula

MAX_SWEEP_ROWS = 1000
GRID, GRID_CHART = 3, (380, 280)  # three or more charts of a table go under it, this many to a row, this size
MARK_ROWS = 4  # below a sweep's table: a blank row, a note and the two ends of a solve's answer line
HEADER_WIDTH = 18  # characters of a table's column: longer headers wrap
MAX_SERIES = 24  # lines in one chart; a grid with more values on its other axes charts the first ones
ROW = "\x00"  # placeholder for the row number in formulas printed once per column


@dataclass
class Output:
    label: str
    expr: ir.Expr  # the plan's own expression
    scale: Fraction = Fraction(1)
    unit: str = ""
    is_bool: bool = False
    quantity: Optional[str] = None  # the plan quantity this column shows, if any
    guard: bool = False  # an error shows as an empty string (ignored by MAX/MIN)
    when: Optional[ir.Expr] = None  # where this condition fails the cell is an empty string too


@dataclass(frozen=True)
class Live:
    """A varied input's cell in one row: a formula (``ROW`` stands for the row's own number) and
    planner's value of it (display units)."""

    text: str
    value: object


def cone(book: Book, varied: Sequence[str], exprs: Sequence[ir.Expr]) -> list[str]:
    """Derived quantities the outputs need that change with the varied inputs (dependency order)."""
    from ...questions.sweep import default_show

    model = book.model
    affected = set(default_show(book.plan, varied))
    needed: set[str] = set()
    stack = [n for e in exprs for n in book.names_in(e) if n in model.quantities]
    while stack:
        n = stack.pop()
        if n in needed:
            continue
        needed.add(n)
        stack.extend(model.quantities[n].deps)
    return [n for n in model.order if n in affected and n in needed]


def output_for(book: Book, name: str) -> Output:
    q = book.q[name]
    return Output(name, q.definition.expr if not q.is_input else ir.Name(name, q.definition.name_span),
                  scale_of(q), q.unit_text, q.is_bool,
                  quantity=None if q.is_input else name)


def titled(name: str, unit: str) -> str:
    return f"{name} ({unit})" if unit else name


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
        self.values: dict[str, list] = {}  # column key -> planner's value per row (display units)

    def letter(self, key: str) -> str:
        return col_letter(self.col[key])

    def header(self) -> None:
        ws, book = self.ws, self.book
        for c in range(self.left, self.left + self.width):  # a doc string as a header wraps, not widens
            ws.caps.setdefault(c, HEADER_WIDTH)
        for n in self.varied:
            self._head(self.col["in:" + n], n, book.q[n].unit_text)
        for i, o in enumerate(self.outputs):
            self._head(self.col[f"out:{i}"], o.label, o.unit)
        for n in self.helpers:
            self._head(self.col["q:" + n], n, book.q[n].unit_text)
        if self.helpers:
            ws.note(self.top - 1, self.col["q:" + self.helpers[0]],
                    "intermediate quantities (each the plan's own formula over this row)")

    def _head(self, col: int, label: str, unit: str):
        """A column's header: the quantity's doc string (its identifier in the comment), its unit below."""
        words = self.book.words(label)
        cell = self.ws.text(self.top, col, words, HEADER)
        if words != label:
            cell.comment = label
        self.ws.text(self.top + 1, col, cell_unit(unit), UNIT)
        return cell

    def _refs(self, row: str, qualified: bool = False) -> dict[str, Piece]:
        """Every quantity's cell for a row (``row`` is a number or a placeholder); ``qualified``:
        sheet-qualified absolute references, for the Cash flows sheet."""
        refs = self.book.pieces(self.ctx, None if qualified else self.ws.title)
        prefix = f"{sheet_ref(self.ws.title)}!$" if qualified else ""
        dollar = "$" if qualified else ""
        columns = [(n, "in:" + n) for n in self.varied] + [(n, "q:" + n) for n in self.helpers]
        columns += [(o.quantity, f"out:{i}") for i, o in enumerate(self.outputs) if o.quantity is not None]
        for n, key in columns:
            q = self.book.q[n]
            refs[n] = Piece(f"{prefix}{self.letter(key)}{dollar}{row}", ATOM, None if q.is_bool else scale_of(q))
        return refs

    def _print(self, expr: ir.Expr, scale: Optional[Fraction], where: str, guard: bool = False,
               when: Optional[ir.Expr] = None, env: Optional[Callable[[int], dict]] = None) -> Callable[[int], str]:
        """Print once with a row placeholder; stamp per row (per-row printing when its sums write rows of
        the Cash flows sheet). ``guard``: an error shows as ""; ``when``: so does a row where this
        condition fails."""
        model = self.book.model

        def text(gen: Generator) -> str:
            body = gen.formula(expr, scale)[1:]
            if when is not None:
                body = f'IF({gen.formula(when, None)[1:]},{body},"")'
            return "=" + (f'IFERROR({body},"")' if guard else body)

        try:
            template = text(Generator(model, self._refs(ROW)))
        except NotWritten:
            def stamp(r: int) -> str:
                values = env(r - self.first) if env is not None else None
                try:
                    return text(Generator(model, self._refs(str(r)), row=self.book.flow_cells, values=values,
                                          where=where, row_refs=self._refs(str(r), qualified=True),
                                          spill=lambda t, v: self.book.helper_cell(t, where, v),
                                          analyzer=self.book.plan.analyzer))
                except NotWritten as err:
                    raise UnsupportedFormula(f"{where}: the workbook has no formula for it ({err})", expr.span,
                                             hint="`planner eval`, `check` and `report` compute it as it is") from None
            return stamp
        return lambda r: template.replace(ROW, str(r))

    # -- planner's values for every row -------------------------------------------------
    def _evaluate(self, inputs: Sequence[Sequence]) -> tuple[dict, dict]:
        """Every quantity (and every output expression) over the rows, vectorised: base units."""
        book = self.book
        n = len(inputs)
        varied = {}
        for j, name in enumerate(self.varied):
            q = book.q[name]
            column = [v.value if isinstance(v, Live) else v for v in (row[j] for row in inputs)]
            if q.is_bool:
                varied[name] = np.array([bool(v) for v in column])
            else:
                varied[name] = np.array([float(v) for v in column], dtype=float) * float(scale_of(q))
        full = {k: np.broadcast_to(v, (n,)) for k, v in book.env(self.ctx, varied).items()}
        return full, full

    def stale(self) -> list[str]:
        """Columns (``out:i``, ``q:NAME``) that use a question's answer which changes with a varied input:
        one Solve cell cannot stand for it on every row, so these columns hold planner's values."""
        model = self.book.model
        moving = {a for a in model.answers if model.answer_inputs(a) & set(self.varied)}
        series = self.book.reads_series  # a series' rows compute the inputs as they are, not a row's
        out = []
        for i, o in enumerate(self.outputs):
            used = self.book.names_in(o.expr)
            names = [n for n in used if n in model.quantities]
            if used & moving or any(model.answer_cone(n) & moving or series(n) for n in names):
                out.append(f"out:{i}")
        out += ["q:" + n for n in self.helpers if n in model.quantities and (model.answer_cone(n) & moving
                                                                              or series(n))]
        return out

    def fill(self, inputs: Sequence[Sequence], fixed: Optional[dict[str, Sequence]] = None) -> None:
        """One row per entry of ``inputs``: per varied input a display value or a :class:`Live` formula.
        ``fixed``: columns (``out:i``, ``q:NAME``) written as planner's values, one per row (see :meth:`stale`)."""
        ws, book = self.ws, self.book
        fixed = fixed or {}
        n = len(inputs)
        env, symbols = self._evaluate(inputs) if n else ({}, {})

        def row_env(k: int) -> dict:
            return {s: (v[k].item() if isinstance(v, np.ndarray) else v) for s, v in symbols.items()}

        columns: list[tuple[int, Callable[[int], str], list, object]] = []  # (column, stamp, values, style)
        for i, o in enumerate(self.outputs):
            raw = env[o.quantity] if o.quantity is not None else book.value_of(o.expr, symbols) if n else []
            raw = np.broadcast_to(raw, (n,)) if n else []
            shown = [cached(v, 1 if o.is_bool else o.scale) for v in raw]
            if o.is_bool and n:  # a comparison of a value that is not finite is an error in the engine
                broken = _broken(book, o.expr, symbols, n)
                shown = ["#NUM!" if bad else v for v, bad in zip(shown, broken)]
            if o.guard:
                shown = ["" if isinstance(v, str) else v for v in shown]
            if o.when is not None and n:
                ok = np.broadcast_to(book.value_of(o.when, symbols), (n,))
                shown = [v if bool(k) else "" for v, k in zip(shown, ok)]
            if f"out:{i}" in fixed:
                shown = list(fixed[f"out:{i}"])
            self.values[f"out:{i}"] = shown
            style = None if o.is_bool else book.number_style(shown, o.unit)
            stamp = None if f"out:{i}" in fixed else \
                self._print(o.expr, None if o.is_bool else o.scale, f"{ws.title}: {o.label}", o.guard, o.when, row_env)
            columns.append((self.col[f"out:{i}"], stamp, shown, style))
        for name in self.helpers:
            q = book.q[name]
            scale = scale_of(q)
            shown = [cached(v, 1 if q.is_bool else scale) for v in np.broadcast_to(env[name], (n,))] if n else []
            if "q:" + name in fixed:
                shown = list(fixed["q:" + name])
            self.values["q:" + name] = shown
            stamp = None if "q:" + name in fixed else \
                self._print(q.definition.expr, None if q.is_bool else scale, f"{ws.title}: {name}", env=row_env)
            columns.append((self.col["q:" + name], stamp, shown,
                            None if q.is_bool else book.number_style(shown, q.unit_text)))
        varied_styles = []
        for j, name in enumerate(self.varied):
            q = book.q[name]
            values = [v.value if isinstance(v, Live) else v for v in (row[j] for row in inputs)]
            self.values["in:" + name] = values
            varied_styles.append(None if q.is_bool else book.number_style(values, q.unit_text))
        for k, values in enumerate(inputs):
            r = self.first + k
            for j, (name, v) in enumerate(zip(self.varied, values)):
                c = self.col["in:" + name]
                if isinstance(v, Live):
                    ws.formula(r, c, v.text.replace(ROW, str(r)), v.value, varied_styles[j])
                else:
                    ws.number(r, c, v, varied_styles[j])
            for c, stamp, shown, style in columns:
                if stamp is None:  # planner's value (a column that is not live)
                    if shown[k] is not None:
                        ws.number(r, c, shown[k], style)
                else:
                    ws.formula(r, c, stamp(r), shown[k], style)
        self.rows = n

    @property
    def last(self) -> int:
        return self.first + self.rows - 1

    def range(self, key: str) -> str:
        """The column's data cells, absolute (``$B$7:$B$16``)."""
        col = self.letter(key)
        return f"${col}${self.first}:${col}${self.last}"


def _broken(book: Book, expr: ir.Expr, symbols: dict, n: int) -> np.ndarray:
    """Rows where a comparison inside ``expr`` has an operand that is not finite (numpy says False
    there, a spreadsheet shows the error)."""
    out = np.zeros(n, dtype=bool)
    for node in ir.walk(expr):
        if not isinstance(node, ir.Compare):
            continue
        for side in node.operands:
            try:
                v = book.value_of(side, symbols)
            except AssertionError:  # a name bound inside the formula (an aggregate's variable)
                continue
            if isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == bool):
                continue
            out |= ~np.isfinite(np.broadcast_to(np.asarray(v, dtype=float), (n,)))
    return out


# ---- sweep sheets ------------------------------------------------------------------

def sweep_contexts(book: Book) -> None:
    from ...compute.evaluation import scenarios_for

    for stmt in book.model.sweeps:
        for s in scenarios_for(book.plan, stmt.scenarios):
            if s is not None:
                book.context(s)


def sweep_order(counts: Sequence[int], limit: int) -> list[tuple[int, ...]]:
    """Grid points with the first axis varying fastest (each value of the other axes is one run of
    rows, one line in the chart); at most ``limit`` of them."""
    reverse = itertools.product(*[range(c) for c in reversed(counts)])
    return [tuple(reversed(p)) for p in itertools.islice(reverse, limit)]


def sweep_sheets(book: Book) -> None:
    from ...compute.evaluation import scenarios_for
    from ...questions.ranges import expand
    from ...questions.sweep import default_show

    for k, stmt in enumerate(book.model.sweeps, start=1):
        axes = [expand(book.plan, a.name, a.values, a.name_span) for a in stmt.axes]
        names = [p.name for p in axes]
        show = [n.name for n in stmt.show] or default_show(book.plan, names)
        ws = book.create_sheet(sheet_title(book, f"Sweep {k} " + ", ".join(names)))
        ys = [n for n in show if n not in names]
        ws.text(1, 1, capitalised(f"{book.phrase(ys)} by {book.phrase(names)}" if ys else book.phrase(names)),
                TITLE, overflow=True)
        counts = [p.count for p in axes]
        total = int(np.prod(counts, dtype=np.int64))
        shown = min(total, MAX_SWEEP_ROWS)
        note = f"{total:,} points" if shown == total else (
            f"{total:,} points; the first {shown:,} are shown (the full sweep: `planner sweep`)")
        order = ", ".join(names[1:] + names[:1]) if len(names) > 1 else ""
        ws.note(2, 1, note + (f", ordered by {order} ({names[0]} fastest)" if order else "")
                + ". Edit any input on the Inputs sheet and the table follows. In the plan: " + stmt.span.flat)
        points = sweep_order(counts, shown)
        rows = [[float(p.exact(i) / scale_of(book.q[p.name])) for p, i in zip(axes, idx)] for idx in points]
        flat = [int(np.ravel_multi_index(idx, counts)) for idx in points]
        top = 5
        for scenario in scenarios_for(book.plan, stmt.scenarios):
            ctx = book.context(scenario) if scenario is not None else book.base_context
            ws.label(top - 1, 1, f"scenario: {scenario}" if scenario else "base (the plan as written)")
            outputs = [output_for(book, n) for n in show if n not in names]
            table = LiveTable(book, ws, ctx, names, outputs, top + 1)
            table.header()
            table.fill(rows, _fixed(book, stmt, scenario, table, len(rows)))
            table.points = flat  # row -> index of the point in planner's grid (first axis slowest)
            book.sweep_blocks.append((stmt, scenario, ws.title, table))
            before = len(ws.charts)
            marked = len(names) == 1 and any(q.target == names[0] for q in book.model.solves)
            below = table.last + (MARK_ROWS if marked else 0) + 2  # the first free row under the table
            sweep_charts(book, ws, table, axes, outputs, scenario, top, below)
            table.charts = ws.charts[before:]
            top = max([below - 2] + [c.row + c.rows - 1 for c in table.charts]) + 4


def sweep_charts(book: Book, ws, table: LiveTable, axes, outputs: Sequence[Output], scenario, top: int,
                 below: int) -> None:
    """Charts against the first swept input, lines with markers: one or two beside the table, one below the
    other; more under the table (from row ``below``), GRID to a row, so the table and its charts print on one page:
    on a one-axis sweep one chart per unit (npv_own and npv_rent in kUSD on one chart, where they cross
    at the break-even); otherwise one per numeric output, one line per value of the other axes.
    Axes take the number formats of their columns (thousands separators, percentages)."""
    x = axes[0]
    if table.rows < 2:
        return
    run = x.count  # rows per line: the first axis varies fastest
    lines = max(1, table.rows // run) if len(axes) > 1 else 1
    others = axes[1:]
    xcol = table.col["in:" + x.name]
    placed = 0
    groups: dict[str, list[int]] = {}  # one chart per unit on a one-axis sweep: the lines cross where they break even
    for i, o in enumerate(outputs):
        if not o.is_bool:
            groups.setdefault(o.unit if len(axes) == 1 else f"#{i}", []).append(i)
    beside = len(groups) <= 2  # one chart per group
    width, height = (Chart.width, Chart.height) if beside else GRID_CHART

    def place(k: int) -> dict:  # where the k-th chart goes
        if beside:
            return {"row": top + 1 + k * (height // 20 + 1), "col": table.left + table.width + 1}
        return {"row": below + (k // GRID) * (height // 20 + 1), "col": table.left,
                "x_offset": (k % GRID) * (width + 10)}

    for members in groups.values():
        if len(members) > 1:
            i, o = members[0], outputs[members[0]]
            series = [Series(book.words(outputs[j].quantity) if outputs[j].quantity in book.q and book.q[outputs[j].quantity].doc
                             else outputs[j].label, (ws.title, table.first, xcol, table.last, xcol),
                             (ws.title, table.first, table.col[f"out:{j}"], table.last, table.col[f"out:{j}"]))
                      for j in members]
            labels = book.phrase([outputs[j].label for j in members])
            xs = [v for v in table.values["in:" + x.name] if isinstance(v, float)]
            ws.charts.append(Chart(capitalised(f"{labels} by {book.words(x.name)} — {scenario if scenario else 'base'}"),
                                   titled(book.words(x.name), cell_unit(x.unit)), o.unit, series,
                                   **place(placed), x_log=_geometric(x), width=width, height=height,
                                   x_range=(min(xs), max(xs)) if xs and not _geometric(x) else None))
            placed += 1
    for i, o in enumerate(outputs):
        if o.is_bool or len(groups.get(o.unit if len(axes) == 1 else f"#{i}", [])) > 1:
            continue
        ycol = table.col[f"out:{i}"]
        series = []
        for line in range(min(lines, MAX_SERIES)):
            first = table.first + line * run if len(axes) > 1 else table.first
            last = min(first + run - 1, table.last) if len(axes) > 1 else table.last
            if len(axes) > 1:
                values = table.values
                name = ", ".join(f"{p.name} = {_short(values['in:' + p.name][first - table.first])}"
                                 f"{(' ' + p.unit) if p.unit else ''}" for p in others)
            else:
                name = book.words(o.label)
            series.append(Series(name, (ws.title, first, xcol, last, xcol), (ws.title, first, ycol, last, ycol)))
        where = scenario if scenario else "base"
        more = f" (first {MAX_SERIES} of {lines} lines)" if lines > MAX_SERIES else ""
        xs = [v for v in table.values["in:" + x.name] if isinstance(v, float)]
        ws.charts.append(Chart(capitalised(f"{book.words(o.label)} by {book.words(x.name)} — {where}{more}"),
                               titled(book.words(x.name), cell_unit(x.unit)),
                               titled(book.words(o.label), o.unit), series, **place(placed),
                               x_log=_geometric(x), width=width, height=height,
                               x_range=(min(xs), max(xs)) if xs and not _geometric(x) else None))
        placed += 1


def mark_answers(book: Book) -> None:
    """On each sweep chart, the answer of a question that solves for the swept input in the same scenario
    (a break-even: where the lines cross) as a dashed vertical line, live from the Solve sheet: two cells
    below the table hold its ends (the answer, at the lowest and the highest figure of the chart)."""
    from ...language.errors import PlanError

    for stmt, scenario, title, table in book.sweep_blocks:
        charts = getattr(table, "charts", [])
        x = table.varied[0]
        answers = [(q, ctx, at) for q, ctx, r, at in book.solve_rows
                   if isinstance(q, ir.Solve) and q.target == x and ctx.scenario == scenario and not ctx.overrides
                   and not isinstance(r, PlanError)]
        if not charts or not answers or len(table.varied) > 1:
            continue
        q, ctx, at = answers[0]
        ws = book.sheet(title)
        solve = book.sheet("Solve").at(at, 3)
        value = solve.cached if solve.kind == "formula" else solve.value
        top, xcol = table.last + 3, table.col["in:" + x]
        words = book.answer_words(q)
        ws.note(top - 1, xcol, f"{words}, from the Solve sheet: the dashed line on the chart{'s' if len(charts) > 1 else ''} "
                "(from the lowest to the highest figure)")
        for r in (top, top + 1):
            ws.formula(r, xcol, f"=Solve!$C${at}", value, solve.num)
        for k, chart in enumerate(charts):
            ycol = xcol + 1 + k
            ranges = [f"{col_letter(s.y[2])}{s.y[1]}:{col_letter(s.y[4])}{s.y[3]}" for s in chart.series]
            figures = [v for s in chart.series for v in table.values.get(_key(table, s.y[2]), [])
                       if isinstance(v, float)]
            first = _key(table, chart.series[0].y[2])
            quantity = table.outputs[int(first[4:])].quantity if first.startswith("out:") else None
            style = book.style(quantity) if quantity is not None else None
            for r, fn in ((top, "MIN"), (top + 1, "MAX")):
                shown = (min if fn == "MIN" else max)(figures) if figures else 0.0
                ws.formula(r, ycol, f"={fn}({','.join(ranges)})", shown, style)
            chart.series.append(Series(f"{words} ({scenario or 'base'})", (title, top, xcol, top + 1, xcol),
                                       (title, top, ycol, top + 1, ycol), marker=True))


def _key(table: LiveTable, col: int) -> str:
    return next(k for k, c in table.col.items() if c == col)


def _short(v) -> str:
    """A sweep line's value in its chart's legend, as the report's chart writes it (the number rule)."""
    return significant(v) if isinstance(v, float) else str(v)


def _geometric(points) -> bool:
    """A ``times`` range over three decades or more: a log axis reads better (as in the report's plots)."""
    return points.kind == "times" and points.count > 2 and points.start > 0 and \
        points.exact(points.count - 1) / points.start >= 1000


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
    table.ws.note(table.top - 1, table.left, "not live: planner's values for " + ", ".join(shown)
                  + " (a question's answer or a series they use changes along the sweep; planner computes them at every "
                  "point)")
    return out
