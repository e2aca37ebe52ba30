"""The sheet of periods: each series one row of live formulas, a column per period.

A plan with periods (``periods = 1 month..60 month``) gets a reader's sheet named for its periods
(Months, Weeks, Quarters...): the periods as column headers ("Month 1", "Month 2"...), the row under
them their values in the periods' unit (what ``period`` reads), then one row per series in the plan's
order, each cell the series' formula for its period (:mod:`.generator`: ``previous`` is the cell to
its left, the first column the series' first value, over the inputs' named cells). A series written
as a table of values (``series price = [10 USD, 12 USD]``) is a row of input cells an analyst edits.
Reductions (``min(cash)``, ``count(cash < 0 USD)``, ``first(period where ...)``, ``x at 24 month``)
are formulas over a row on the Model sheet; a reduction of an expression (``sum(demand - sold)``) or
over a condition reads a working row below the series, labelled with what it holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ...compute.numbers import is_percent
from ...language import ir
from .book import (HEADER, INPUT, LABEL, NAME, NOTE, TITLE, UNITS, Book, Chart, NumberStyle, Series, cached,
                   capitalised, scale_of, sheet_ref, sheet_title, unit_of)
from .generator import PeriodRows, col_letter
from .names import table_names

FIRST = 3  # the first period's column (C): the series' words and its unit before it
HEADER_ROW = 4  # the periods' labels; the row under them holds their values
PERCENT_DECIMALS = 2  # a percentage's cells on the sheet: 78.13%, as an analyst reads a utilisation


def constant(model, e: ir.Expr):
    """A table's item as an input cell's exact number (base units), or None where it is a formula."""
    from ...compute.exact import ExactEvaluator, NotRational

    if any(isinstance(n, (ir.Name, ir.ScenarioRef)) for n in ir.walk(e)):
        return None
    try:
        v = ExactEvaluator(model, {}).expr(e)
    except (NotRational, KeyError, TypeError):
        return None
    return v if isinstance(v, Fraction) else None


def table_items(expr: ir.Expr):
    """The items of a series written as a table of values (``series price = [10 USD, 12 USD]``), or None:
    the cells an analyst edits (:func:`planner.outputs.excel.reader.read_inputs` reads them back)."""
    if isinstance(expr, ir.Series) and isinstance(expr.first, ir.PeriodTable) and expr.then is None:
        return expr.first.items
    return expr.items if isinstance(expr, ir.PeriodTable) else None


@dataclass(frozen=True)
class Block:
    """Whole quarters or years of months after the months: ``count`` columns from ``col``, each ``size``
    months, headed by ``labels``."""

    word: str
    size: int
    col: int
    labels: tuple


def blocks(unit: str, values: list) -> list:
    """Months (1, 2, 3 ...): a column per whole quarter (six months or more) and per whole year (24 or
    more), each block after an empty column; none for other periods."""
    n = len(values)
    if unit != "month" or values[:2] != [1.0, 2.0]:
        return []
    out, col = [], FIRST + n + 2
    years = n // 12 if n >= 24 else 0
    if n >= 6:
        quarters = n // 3
        labels = tuple(f"Y{k // 4 + 1} Q{k % 4 + 1}" if quarters > 4 else f"Q{k + 1}" for k in range(quarters))
        out.append(Block("quarter", 3, col, labels))
        col += quarters + 1
    if years:
        out.append(Block("year", 12, col, tuple(f"Year {y + 1}" for y in range(years))))
    return out


def layout(book: Book) -> None:
    """The sheet of periods and a row for every series (before any formula reads one)."""
    names = book.plan.series_order()
    if not names or book.model.periods is None:
        return
    ev = book.base
    unit, size = book.plan.period_unit
    values = [float(v) / size for v in ev.periods]
    word = unit if unit and unit.isalpha() else "period"
    title = sheet_title(book, (word.capitalize() + "s") if word != "period" else "Periods")
    ws = book.create_sheet(title)
    ws.text(1, 1, book.said(book.plan.title), TITLE, overflow=True)
    ws.note(2, 1, f"Every series, one row of live formulas, a column per {word}: a cell's formula reads the "
            f"inputs and the {word} before it (the cell to its left). Orange rows are tables of values to edit. "
            "The figures that reduce a series (least, sum, the first period where...) are on the Model sheet; "
            "working rows at the bottom hold the terms they reduce.")
    ws.header(HEADER_ROW, ["Series", "Unit"])
    for j, v in enumerate(values):
        label = f"{word.capitalize()} {v:g}" if float(v).is_integer() else f"{word.capitalize()} {j + 1}"
        ws.text(HEADER_ROW, FIRST + j, label, HEADER)
        ws.number(HEADER_ROW + 1, FIRST + j, v)
    book.period_blocks = blocks(unit, values)
    if book.period_blocks:  # after an empty column, the rule's (a total, or the value at the end)
        ws.text(HEADER_ROW, FIRST + len(values) + 1, "Per " + ", ".join(b.word for b in book.period_blocks), HEADER)
        for b in book.period_blocks:
            for k, label in enumerate(b.labels):
                ws.text(HEADER_ROW, b.col + k, label, HEADER)
    ws.text(HEADER_ROW + 1, 1, f"period ({word}s)", NAME)
    ws.text(HEADER_ROW + 1, 2, unit, UNITS)
    ws.freeze = (HEADER_ROW + 2, FIRST)
    ws.repeat = (HEADER_ROW, HEADER_ROW)
    ws.landscape = True
    top = HEADER_ROW + 2
    selected = {}
    if book.selectable:  # the reader's rows follow the Summary's selector; the base case's below them, grouped
        selected = {name: top + i for i, name in enumerate(names)}
        top += len(names) + 1
        ws.note(top - 1, 1, "The base case (the Inputs sheet's values), which the Model sheet's Value column "
                "reduces (expand + to see it)")
        ws.group(top, top + len(names) - 1)
    rows = {name: top + i for i, name in enumerate(names)}
    state = {"next": top + len(names) + 1, "start": top + len(names) + 1}

    def add_row(cells: list, label: str, held: list) -> int:
        if state["next"] == state["start"]:
            ws.label(state["next"], 1, "Working rows: the terms the Model sheet's figures reduce")
            state["next"] += 1
        row = state["next"]
        state["next"] += 1
        ws.text(row, 1, label, NOTE)
        for j, text in enumerate(cells):
            ws.formula(row, FIRST + j, text, held[j])
        return row

    scale = Fraction(size).limit_denominator(10**12) if not float(size).is_integer() else Fraction(int(size))
    book.periods = PeriodRows(sheet_ref(title), rows, FIRST, len(values), HEADER_ROW + 1, scale, add_row)
    if selected:
        book.periods_selected = PeriodRows(sheet_ref(title), selected, FIRST, len(values), HEADER_ROW + 1, scale,
                                           add_row)
        book.periods_selected.suffix = " (the selected scenario)"
    first = book.model.periods.values.items[0]
    if isinstance(first, ir.Number):  # each period as the plan writes it (`36 month`): a working row's values
        at = [ir.Number(Fraction(v).limit_denominator(10**9) * first.value / Fraction(values[0]).limit_denominator(
              10**9) if values[0] else Fraction(v).limit_denominator(10**9), first.unit, first.span) for v in values]
        for rows_ in (book.periods, book.periods_selected):
            if rows_ is not None:
                rows_.at = at
    book.periods_sheet = ws
    book.series_names = names
    tables = [n for n in names if table_items(book.q[n].definition.expr) is not None]
    book.table_names = table_names(book.names, tables)  # the tables' input cells, named (before any helper is)
    book.taken_names |= {v.upper() for v in book.table_names.values()}


def _rows(book: Book, ws, p: PeriodRows, refs: dict, base: PeriodRows = None) -> None:
    """One block of series rows: each series' formula in every period over ``refs``, planner's value cached.
    ``base``: the block whose input cells (a table of values) this one reads."""
    from .generator import Generator

    gen = Generator(book.model, refs, values=book.env(book.base_context), where="periods", periods=p)
    ev = book.base
    for name in book.series_names:
        q = book.q[name]
        row = p.rows[name]
        ws.text(row, 1, book.label(name), NAME)
        ws.text(row, 2, unit_of(q), UNITS)
        scale = None if q.is_bool else scale_of(q)
        series = ev.series.get(name)
        style = row_style(book, name)
        expr = q.definition.expr
        items = table_items(expr)
        if items is not None and base is None and scale is not None:  # the table's cells, named as an input is
            book.defined[book.table_names[name]] = (f"{p.sheet}!${col_letter(p.first)}${row}:"
                                              f"${col_letter(p.first + min(len(items), p.count) - 1)}${row}")
        for j in range(p.count):
            value = "" if series is None else (bool(series[j]) if q.is_bool else cached(series[j], scale))
            col = p.first + j
            if items is not None and j >= len(items) and ws.at(row, p.first + len(items) - 1).kind != "text":
                ws.formula(row, col, f"={col_letter(col - 1)}{row}", value, style)  # the last value holds on
                continue
            if items is not None and j < len(items):
                v = constant(book.model, items[j])
                if v is not None and scale is not None and base is not None:
                    ws.formula(row, col, f"={col_letter(col)}{base.rows[name]}", value, style)  # the table, edited once
                    continue
                if v is not None and scale is not None:
                    ws.number(row, col, float(v / scale), style, INPUT)
                    continue
            p.col = col
            try:
                text = gen.formula(expr, scale)
            finally:
                p.col = None
            ws.formula(row, col, text, value, style)
        if book.period_blocks and not q.is_bool:
            _totals(book, ws, p, name, row, series, scale, style)


def row_style(book: Book, name: str):
    """A series' cells on the sheet of periods: its style by the one rule (:meth:`Book.style`), but a
    percentage to at most :data:`PERCENT_DECIMALS` decimals (78.13%, where six significant digits of its
    every period give 78.1250% in every cell of the row); the cell holds the full value."""
    style = book.style(name)
    if style is None or not style.percent or style.scientific or style.decimals <= PERCENT_DECIMALS:
        return style
    return NumberStyle(PERCENT_DECIMALS, False, True, money=style.money)


def block_rule(book: Book, name: str) -> str:
    """How a series' whole quarters and years read it, as a finance reader expects (docs/workbook.md): an
    amount per period by its unit (``bag/month``, ``kUSD/month``) its ``total``; a level (its period before
    carries over, :func:`_levels`: a balance, a stock, a headcount) ``at the end``; a percentage, a price or
    a rate (a unit per anything but the period: ``USD/bag``), a table of values typed per period (a price
    list) and a count of a level's value (``min(demand, gpus)``: GPUs busy) their ``average``; any other (an
    amount that accumulates: money, bags, GPUs bought) its ``total``."""
    q = book.q[name]
    expr, unit = q.definition.expr, q.unit_text
    per_period = "/" in unit and unit.split("/", 1)[1].strip() == book.plan.period_unit[0]
    if per_period and not is_percent(unit):
        return "total"
    if name in _levels(book):
        return "at the end"
    if is_percent(unit) or table_items(expr) is not None or "/" in unit:
        return "average"
    return "average" if not unit and _reads_level(book, expr) else "total"


def _levels(book: Book) -> set:
    """The stocks: the series whose value carries over from the period before, read by their own formula
    (``cash = previous * (1 + rate) + income``) or by one they read in the same period (``shelf =
    min(room, on_hand - sold)`` with ``on_hand = previous(shelf) + roast``: the shelf is what the month before
    left on it). A flow read a period late (``receipts = previous(sales)``) stays a flow."""
    series = set(book.series_names)
    exprs = {n: list(ir.walk(book.q[n].definition.expr)) for n in series}
    reads = {n: {e.name for e in exprs[n] if isinstance(e, ir.Name) and e.name in series} for n in series}

    def carried(n: str) -> bool:
        seen, todo = set(), [n]
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                if any(isinstance(e, ir.Previous) and e.name == n for e in exprs[m]):
                    return True
                todo.extend(reads[m])
        return False

    return {n for n in series if carried(n)}


def _reads_level(book: Book, expr) -> bool:
    """``expr`` reads a level's value in its own period (not the period before)."""
    levels = _levels(book)
    return any(isinstance(e, ir.Name) and e.name in levels for e in ir.walk(expr))


def _totals(book: Book, ws, p: PeriodRows, name: str, row: int, series, scale, style) -> None:
    """A series' whole quarters and years by :func:`block_rule`: its last month, its average or its total."""
    rule = block_rule(book, name)
    ws.text(row, p.first + p.count + 1, rule, UNITS)
    for b in book.period_blocks:
        for k in range(len(b.labels)):
            start, end = p.first + b.size * k, p.first + b.size * (k + 1) - 1
            cells = f"{col_letter(start)}{row}:{col_letter(end)}{row}"
            text = {"at the end": f"={col_letter(end)}{row}", "average": f"=AVERAGE({cells})"}.get(rule, f"=SUM({cells})")
            value = ""
            if series is not None:
                months = series[b.size * k:b.size * (k + 1)]
                value = cached({"at the end": months[-1], "average": months.mean()}.get(rule, months.sum()), scale)
            ws.formula(row, b.col + k, text, value, style)


def fill(book: Book) -> None:
    """Each series' row: its formula in every period, planner's value cached (the base case's block, then
    the selected scenario's)."""
    if book.periods is None:
        return
    from ...language.limits import deep

    ws = book.periods_sheet  # on one thread with a big stack: each formula's own would cost a thread start
    deep(_rows, book, ws, book.periods, book.pieces(book.base_context))
    if book.periods_selected is not None:
        deep(_rows, book, ws, book.periods_selected, book.selected_refs, base=book.periods)
    ws.caps.update({1: 40})
    for name in book.series_names:
        if name in book.headlines:
            ws.highlight.add((book.periods_selected or book.periods).rows[name])
    model = book.sheet("Model")
    book.sheets.remove(ws)
    book.sheets.insert(book.sheets.index(model) + 1, ws)  # the reader's: after the Model sheet
    charts(book)


CHART_WIDTH, CHART_HEIGHT = 720, 320  # pixels: three to an A4 page, one under the other


def charts(book: Book) -> None:
    """A sheet of line charts after the sheet of periods, one per headline series (the report's choice,
    :func:`planner.outputs.periods.headline_series`): live, each line the series' row (the selected
    scenario's and the base case's where the Summary selects one), the periods' row its categories."""
    from ..periods import headline_series
    from ..viewmodel import headline_names

    names = [n for n in headline_series(book.plan, headline_names(book.plan)[0]) if not book.q[n].is_bool]
    if not names:
        return
    p, ws = book.periods, book.periods_sheet
    unit = book.plan.period_unit[0]
    word = unit if unit and unit.isalpha() else "period"
    sheet = book.create_sheet(sheet_title(book, "Charts"))
    book.sheets.remove(sheet)
    book.sheets.insert(book.sheets.index(ws) + 1, sheet)
    sheet.text(1, 1, book.said(book.plan.title), TITLE, overflow=True)
    sheet.note(2, 1, f"Each headline series {word} by {word}, drawn from its row on the {ws.title} sheet: edit an "
                     "input and the lines follow." + (" The line of the scenario picked on the Summary is drawn "
                                                      "with the base case's." if book.periods_selected else ""))
    periods = (ws.title, p.header, p.first, p.header, p.first + p.count - 1)
    size = book.plan.period_unit[1]
    span = (float(book.base.periods[0]) / size, float(book.base.periods[-1]) / size)  # the axis's first and last
    row = 4
    for name in names:
        lines = [(book.periods_selected, f"{book.words(name)} (the selected scenario)")] if book.periods_selected \
            else []
        lines.append((p, f"{book.words(name)} (base case)" if lines else book.words(name)))
        series = [Series(label, periods, (ws.title, rows.rows[name], rows.first, rows.rows[name],
                                          rows.first + rows.count - 1)) for rows, label in lines]
        chart = Chart(capitalised(f"{book.words(name)}, {word} by {word}"),
                      word.capitalize() if word != "period" else f"period ({unit})", unit_of(book.q[name]),
                      series, row, 1, width=CHART_WIDTH, height=CHART_HEIGHT, line=True, x_range=span)
        sheet.charts.append(chart)
        row += chart.rows
