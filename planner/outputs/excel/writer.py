"""The live workbook: every figure a formula over named input cells, with planner's value cached.

Sheets, in order:

* **Summary** (:mod:`.summary`): the title, notes, headline figures per scenario, key inputs
  (linked to the Inputs sheet), the answers and the check status, all live;
* **Inputs** (:mod:`.inputs`): one row per input (name, value in its display unit, unit,
  description, tags, constraints); the value cell is styled as an input,
  carries a workbook-level defined name, data validation from its
  constraints and its doc as a comment;
* **Model** (:mod:`.derived`): every derived quantity in dependency order, a live formula over
  the defined names, converted to its display unit, with its own name;
* **Months** (:mod:`.periods`; Weeks, Quarters, Periods): a plan with series over periods, each series a
  row of live formulas, a column per period;
* **Scenarios** (:mod:`.scenarios`): one column per scenario: overridden inputs as values,
  the rest referencing the Inputs sheet, every derived quantity a formula over cells of its own column;
* one sheet per **sweep** (:mod:`.tables`), with one chart per output;
* **Solve** (:mod:`.solving`): each answer live, with its "Solve work" sheet and a sheet per
  maximize/minimize;
* **Checks** (:mod:`.checking`): each check a live TRUE/FALSE cell, with planner's tolerance,
  and the **Check contexts** work sheet for the checks' ``with`` columns;
* **Cash flows** (work): the terms of sums over ranges, a row per sum and column, a column per
  value of the range (generator.py prints a term once and fills in each column), and a block of rows
  for a sum whose terms use the variable of the range around it;
* **Helpers**: subexpressions moved out of formulas longer than Excel's
  8,192 characters (only when needed).

The sheet builders write plain cells (:mod:`.book`); this module composes
them and renders the result with XlsxWriter, the one library that writes a
formula together with its cached value (openpyxl writes formulas without
values, so a file read without recalculating shows empty cells; openpyxl
stays for reading workbooks back in :mod:`.reader`). Every sheet gets its
print setup: one page wide, landscape when wide, the header rows repeated,
a print area, the plan's title and the sheet's name in the page header.
Column widths are fitted to their content; longer text wraps.

Plan text (titles, docs, tags, units, scenario names) is always written as
a string cell, never as a formula. The bytes are deterministic: fixed
document timestamps and zip entry dates. Custom document properties record
the plan the workbook came from (:func:`provenance`), which ``planner
import`` checks. The workbook asks every engine for a full recalculation
when it is opened.
"""

from __future__ import annotations

import io
import math
import zipfile
from typing import Mapping, Optional, Sequence

from ...compute.evaluation import Plan
from ..numbers import style_for
from . import book as state
from . import checking, derived, inputs, periods, scenarios, solving, summary, tables, trials
from .book import CHECK_CONTEXTS, FIXED_TIME, SCENARIOS, ZIP_TIME, AnswerRef, Cell, Sheet, provenance  # noqa: F401

PAPER_A4 = 9
MIN_WIDTH, MAX_WIDTH = 6, 50
STYLES = {
    state.TITLE: {"bold": True, "font_size": 14},
    state.NOTE: {"italic": True, "font_color": "#595959"},
    state.HEADER: {"bold": True, "bg_color": "#DDEBF7", "bottom": 1, "bottom_color": "#9BC2E6"},
    "header over figures": {"bold": True, "bg_color": "#DDEBF7", "bottom": 1, "bottom_color": "#9BC2E6",
                            "align": "right"},
    "header over units": {"bold": True, "bg_color": "#DDEBF7", "bottom": 1, "bottom_color": "#9BC2E6",
                          "indent": 1},
    state.UNIT: {"italic": True, "font_color": "#595959"},
    state.LABEL: {"bold": True},
    state.INPUT: {"bg_color": "#FFCC99", "font_color": "#3F3F76", "border": 1, "border_color": "#7F7F7F"},
    state.BASE_ONLY: {"bg_color": "#F2F2F2", "font_color": "#595959", "border": 1, "border_color": "#BFBFBF"},
    "units": {"indent": 1},
    state.NAME: {},
    state.IDENT: {"font_color": "#7F7F7F", "font_size": 9},
    "ident over figures": {"font_color": "#7F7F7F", "font_size": 9, "align": "right"},
    summary.SECTION: {"bold": True, "font_size": 12, "font_color": "#1F4E78"},
    state.FIGURE: {"align": "right"},
    "good": {"bg_color": "#C6EFCE", "font_color": "#006100"},
    "bad": {"bg_color": "#FFC7CE", "font_color": "#9C0006"},
    "stale": {"bg_color": "#FFEB9C", "font_color": "#9C5700"},
    "link": {"font_color": "#0563C1", "underline": 1},
}
HIGHLIGHT = {"bg_color": "#FFF2CC", "bold": True}
BOOLEAN = '"TRUE";"TRUE";"FALSE"'  # TRUE/FALSE as every engine shows them, before it recalculates too
LINE_HEIGHT = 15  # points per line of 11-point text
NOTE_WIDTH = 100  # characters a note may take before it wraps


class Book(state.Book):
    """The workbook being written: the shared state of :class:`book.Book`, composed sheet by sheet."""

    def build(self) -> "Book":
        for s in self.wanted:
            self.context(s)
        self.collect_check_contexts()
        tables.sweep_contexts(self)
        solving.collect_contexts(self)
        scenarios.scenarios_layout(self)
        needed = scenarios.sheets_needed(self)
        periods.layout(self)  # the series' rows, before a formula reads one
        summary.create(self)
        inputs.inputs_sheet(self)
        derived.model_sheet(self)
        periods.fill(self)
        if SCENARIOS in needed:
            scenarios.context_sheet(self, SCENARIOS)
        tables.sweep_sheets(self)
        trials.trials_sheet(self, getattr(self, "trials", trials.DEFAULT_TRIALS))  # uncertain inputs: live
        solving.solve_sheet(self)
        tables.mark_answers(self)
        checking.checks_sheet(self)
        if CHECK_CONTEXTS in needed:
            scenarios.context_sheet(self, CHECK_CONTEXTS)
        for title in needed:
            scenarios.fill_sheet(self, title)
        summary.fill(self)
        # the reader's sheets first, then the working ones (grey tabs), helper cells last
        self.sheets.sort(key=lambda ws: (ws.work, ws is self.flows, ws is self.helpers))
        return self


# ---- rendering ----------------------------------------------------------------------

WORK_PRINT_ROWS = 12  # a working sheet prints its title, notes and first rows: the reader's copy skips it
WORK_PRINT_WIDTH = 160  # characters of column width a working sheet prints (a landscape A4 page, about)


def column_pixels(width: float) -> int:
    """XlsxWriter's (and Excel's) pixel width of a column ``width`` characters wide."""
    return int(width * 7 + 5) if width >= 1 else int(width * 12 + 0.5)


def shown_text(cell: Cell) -> str:
    """About what the cell shows: for fitting the column's width."""
    value = cell.cached if cell.kind == "formula" else cell.value
    if isinstance(value, bool):
        return "FALSE" if not value else "TRUE"
    if isinstance(value, (int, float)):
        if cell.num is not None:
            return cell.num.text(value * 100) + "%" if cell.num.percent else cell.num.text(value)
        return f"{value:.10g}"
    return "" if value is None else str(value)


HEADER_WRAP = 10  # characters of a header a column widens for; a longer header of several words wraps


def fitted_widths(ws: Sheet) -> dict[int, float]:
    """Column widths (characters) that fit the text and figures of the rows that print (a collapsed group's
    rows wrap when expanded), up to each column's cap."""
    longest: dict[int, int] = {}
    hidden = hidden_rows(ws)
    for (row, col), cell in ws.cells.items():
        if cell.overflow or row in hidden:
            continue
        lines = shown_text(cell).split("\n")
        size = max(len(line) for line in lines)
        if cell.style == state.HEADER:  # a right-aligned header clear of the next column's; a long one wraps
            size = min(size, max(HEADER_WRAP, max(len(w) for line in lines for w in line.split() or [""]))) + 2
        elif cell.style == state.IDENT:  # 9-point letters
            size = math.ceil(size * 0.85)
        longest[col] = max(longest.get(col, 0), size)
    numeric = {col for (_, col), cell in ws.cells.items() if cell.kind in ("number", "formula", "bool")}
    out = {}
    for col in range(1, ws.max_col + 1):
        if col in ws.widths:
            out[col] = ws.widths[col]
            continue
        cap = ws.caps.get(col, MAX_WIDTH)
        least = 10 if col in numeric else MIN_WIDTH
        out[col] = float(min(max(longest.get(col, 0) + 2, least), cap))
    return out


def hidden_rows(ws: Sheet) -> set[int]:
    """The rows of collapsed groups: hidden, so they do not print (they still calculate)."""
    return {r for first, last, collapsed in ws.groups if collapsed for r in range(first, last + 1)}


def lines(text: str, width: float) -> int:
    """Lines ``text`` takes when wrapped in a column ``width`` characters wide (a little slack for words)."""
    room = max(width - 1, 1) * 1.15  # proportional text: about 1.15 letters per digit width
    return sum(max(1, -(-len(part) // int(room))) for part in text.split("\n"))


def note_span(ws: Sheet, row: int, col: int, text: str, widths: dict[int, float], last: int,
              size: float = 1.0) -> tuple[int, float]:
    """The last column a note or title is merged across (it stops at the next filled cell), and the width;
    ``size``: the font's size against 11 points."""
    end, width = col, widths.get(col, 8.43)
    need = min(len(text) * size / 1.15 + 2, NOTE_WIDTH)
    while width < need and (row, end + 1) not in ws.cells and (end < last or width < 60):
        end += 1
        width += widths.get(end, 8.43)
    return end, width


def chart_extent(ws: Sheet, widths: dict[int, float]) -> int:
    """The last column a chart reaches (for the print area)."""
    last = ws.max_col
    for chart in ws.charts:
        col, pixels = chart.col, 0
        while pixels < chart.x_offset + chart.width + 20:
            pixels += column_pixels(widths.get(col, 8.43))
            col += 1
        last = max(last, col - 1)
    return last


def _over_units(ws: Sheet, row: int, col: int) -> bool:
    """Whether the cell below a header is a unit beside a figure (indented): the header is indented too, so
    that a right-aligned header over the figures to its left does not run into it ("Value" "Unit")."""
    for r in range(row + 1, row + 4):  # a figure without a unit leaves its unit cell empty
        cell = ws.at(r, col)
        if cell is not None:
            return cell.style == state.UNITS
    return False


def _over_figures(ws: Sheet, row: int, col: int) -> bool:
    """Whether the first filled cell below a header (past a unit row) is a figure: a number, a formula of one
    or a truth value."""
    for r in range(row + 1, row + 3):
        cell = ws.at(r, col)
        if cell is None:
            continue
        if cell.kind in ("number", "bool"):
            return True
        if cell.kind == "formula":
            return isinstance(cell.cached, (int, float)) or cell.cached is None
        if cell.style not in (state.UNIT, state.IDENT):  # past a row of units or of names
            return False
    return False


PAGE_PIXELS = {False: 523, True: 770}  # printable width of an A4 page (portrait, landscape; 0.5" margins) in
# column pixels (XlsxWriter's): LibreOffice prints 72 of them to the inch
PAGE_POINTS = {False: 734, True: 487}  # printable height, 0.75" margins
MIN_SCALE = 0.6  # the least a sheet is shrunk to fit its width: 11-point text prints at 6.6 points


def print_layout(wide: float, tall: float, landscape: Optional[bool] = None,
                 first: float = 0) -> tuple[int, float, bool, Optional[int], int]:
    """Printing ``wide`` pixels (at 100%) by ``tall`` points of visible rows, in the best orientation (or
    ``landscape`` if given): (pages, the scale, landscape, the print percentage, pages tall). The percentage is
    None for one page wide, fit to width, and then pages tall is 0 (as many as it takes) or, when shrinking a
    little more (not below MIN_SCALE) saves a page, that number; the percentage is MIN_SCALE when fitting the
    width would print it smaller, its columns going on over pages side by side. The orientation with fewer
    pages wins; on a tie, the larger print. ``first``: the pixels of the first column, which every page across
    repeats."""
    options = []
    for turn in ((landscape,) if landscape is not None else (False, True)):
        fit = min(1.0, PAGE_PIXELS[turn] / max(wide, 1))
        scale = max(fit, MIN_SCALE)
        page = PAGE_PIXELS[turn] / scale  # pixels of the sheet (at 100%) one page takes
        across = 1 if wide <= page else 1 + math.ceil((wide - page) / max(page - first, 1) - 1e-9)
        down = max(1, math.ceil(tall * scale / PAGE_POINTS[turn] - 1e-9))
        tall_pages = 0
        if across == 1 and down > 1 and PAGE_POINTS[turn] * (down - 1) / tall >= MIN_SCALE:
            down -= 1  # fit to one page wide and one page fewer tall: still legible
            scale, tall_pages = min(scale, PAGE_POINTS[turn] * down / tall), down
        options.append((across * down, -scale, turn, None if fit >= MIN_SCALE else round(scale * 100), tall_pages))
    pages, scale, turn, percent, tall_pages = min(options)
    return pages, -scale, turn, percent, tall_pages


TEXT_FLOOR = 18  # characters: the narrowest print_plan makes a column of text to fit the page


def print_plan(sheet: Sheet, widths: dict[int, float]) -> tuple[bool, Optional[int], int, dict[int, float]]:
    """The orientation, print scale and pages tall (see :func:`print_layout`) and column widths a sheet prints with. A sheet
    wider than a page at MIN_SCALE first narrows its widest columns of text (down to TEXT_FLOOR characters;
    their text wraps, the rows grow), in either orientation; the one with fewer pages wins."""
    hidden = hidden_rows(sheet)
    numeric = {c for (_, c), cell in sheet.cells.items()  # figures, names and links keep their widths
               if cell.kind != "text" or cell.style == state.IDENT}
    last = chart_extent(sheet, widths)
    best = None
    for turn in ((sheet.landscape,) if sheet.landscape is not None else (False, True)):
        room = PAGE_PIXELS[turn] / MIN_SCALE
        fitted = dict(widths)
        text = sorted((c for c in range(1, last + 1) if c not in numeric and c not in sheet.widths
                       and widths.get(c, 8.43) > TEXT_FLOOR and not any(ch.col == c for ch in sheet.charts)),
                      key=lambda c: -widths[c])
        least = sum(column_pixels(min(widths.get(c, 8.43), TEXT_FLOOR) if c in text else widths.get(c, 8.43))
                    for c in range(1, last + 1))
        while least <= room and sum(column_pixels(fitted.get(c, 8.43)) for c in range(1, last + 1)) > room:
            top = fitted[text[0]]  # the widest text columns come down together, to the next one's width
            ties = [c for c in text if fitted[c] >= top - 1e-9]
            rest = [fitted[c] for c in text if fitted[c] < top - 1e-9]
            over = sum(column_pixels(fitted.get(c, 8.43)) for c in range(1, last + 1)) - room
            level = max(top - over / 7 / len(ties), max(rest, default=TEXT_FLOOR), TEXT_FLOOR)
            for c in ties:
                fitted[c] = level
            if level <= TEXT_FLOOR or all(fitted[c] <= TEXT_FLOOR for c in text):
                break
        tall = sum(h for r, h in row_heights(sheet, fitted, last).items() if r not in hidden)
        wide = sum(column_pixels(fitted.get(c, 8.43)) for c in range(1, last + 1))
        pages, scale, turn, percent, tall_pages = print_layout(wide, tall, turn, column_pixels(fitted.get(1, 8.43)))
        option = (pages, -scale, turn, percent, tall_pages, fitted)
        if best is None or option[:2] < best[:2]:
            best = option
    return best[2], best[3], best[4], best[5]


def row_heights(sheet: Sheet, widths: dict[int, float], last_col: int) -> dict[int, float]:
    """The height of each row (points) as the sheet prints: wrapped text grows its row, bold text (a header,
    a headline row) wraps sooner; a note or title merged over the columns it runs across grows by its lines."""
    heights = {r: float(LINE_HEIGHT) for r in range(1, max(sheet.max_row, 1) + 1)}
    for (r, c), cell in sheet.cells.items():
        text = cell.value if cell.kind in ("text", "link") else ""
        if not text:
            continue
        if wraps(cell, widths.get(c, MAX_WIDTH)):
            bold = 1.1 if cell.style == state.HEADER or r in sheet.highlight else 1.0  # bold letters are wider
            heights[r] = max(heights[r], LINE_HEIGHT * lines(text, widths.get(c, MAX_WIDTH) / bold))
        elif cell.kind == "text" and cell.overflow and cell.style in (state.NOTE, state.TITLE):
            scale = 1.45 if cell.style == state.TITLE else 1.0  # 14-point bold: about 1.45 times as wide as 11
            _, width = note_span(sheet, r, c, text, widths, last_col, scale)
            size = 20 if cell.style == state.TITLE else LINE_HEIGHT
            heights[r] = max(heights[r], size * lines(text, width / scale))
    return heights


def wraps(cell: Cell, width: float) -> bool:
    """Whether a cell's text wraps in its column (text longer than the column; a note runs across instead)."""
    return (not cell.overflow and cell.kind in ("text", "link") and bool(cell.value)
            and len(max(cell.value.split("\n"), key=len)) + 2 > width)


def printed_columns(sheet: Sheet, widths: dict[int, float]) -> int:
    """The last column that prints: past the charts, to the end of a link, note or title that runs past its
    column (a note stops at the next filled cell)."""
    last = chart_extent(sheet, widths)
    for (r, c), cell in sorted(sheet.cells.items()):
        if cell.kind == "link" and cell.overflow:
            last = max(last, note_span(sheet, r, c, cell.value, widths, last)[0])
        elif cell.kind == "text" and cell.overflow and cell.style in (state.NOTE, state.TITLE):
            scale = 1.45 if cell.style == state.TITLE else 1.0
            last = max(last, note_span(sheet, r, c, cell.value, widths, last, scale)[0])
    return last


def _escape_header(text: str) -> str:
    return text.replace("&", "&&")[:100]


def _prepared(formula: str, expand_future_functions: bool = False) -> str:
    """A formula as XlsxWriter stores it: without its leading ``=``. XlsxWriter's own step also runs 30
    regular expressions over every formula to prefix functions newer than Excel 2007 (``_xlfn.``); the
    workbook uses none (:mod:`.generator` writes only functions Excel 2007 and LibreOffice 7.4 share,
    which the recalculation tests hold it to), and those passes were a fifth of a 36-month plan's export."""
    return formula[1:] if formula.startswith("=") else formula


def render(book: state.Book) -> bytes:
    import xlsxwriter

    from ...language.speed import on

    raw = io.BytesIO()
    wb = xlsxwriter.Workbook(raw, {"in_memory": True, "strings_to_numbers": False, "strings_to_formulas": False,
                                   "strings_to_urls": False, "max_url_length": 255})
    formats: dict[tuple, object] = {}

    def fmt(style: Optional[str] = None, num: Optional[str] = None, highlight: bool = False, wrap: bool = False,
            quote: bool = False):
        key = (style, num, highlight, wrap, quote)
        if key not in formats:
            spec = {"valign": "top", **(STYLES.get(style, {}) if style else {})}
            if highlight and style != state.INPUT:
                spec.update(HIGHLIGHT)
            if num:
                spec["num_format"] = num
            if wrap:
                spec.update({"text_wrap": True, "valign": "top"})
            if quote:
                spec["quote_prefix"] = True
            formats[key] = wb.add_format(spec)
        return formats[key]

    from ...language.live import plain

    title = plain(book.plan.title)  # the page header and the document's title: `{{` is one brace
    for sheet in book.sheets:
        ws = wb.add_worksheet(sheet.title)
        if on("formulas"):  # a speed trick, listed in planner.language.speed (off: XlsxWriter's own step)
            ws._prepare_formula = _prepared  # noqa: SLF001 (see _prepared)
        widths = fitted_widths(sheet)
        landscape, percent, tall_pages, widths = print_plan(sheet, widths)
        for col, width in widths.items():
            ws.set_column(col - 1, col - 1, width)
        last_col = printed_columns(sheet, widths)
        heights = row_heights(sheet, widths, last_col)
        for (r, c), cell in sorted(sheet.cells.items()):
            hl = r in sheet.highlight
            style = cell.num
            value = cell.value if cell.kind == "number" else cell.cached if cell.kind == "formula" else None
            if style is None and isinstance(value, (int, float)) and not isinstance(value, bool):
                style = style_for([value])  # a count, a line number: the same rule, from its own size
            num = style.excel() if style is not None and cell.kind in ("number", "formula") else None
            if cell.kind == "bool" or cell.kind == "formula" and isinstance(cell.cached, bool):
                num = BOOLEAN
            text = cell.value if cell.kind in ("text", "link") else ""
            wrap = wraps(cell, widths.get(c, MAX_WIDTH))
            if cell.kind == "text" and cell.overflow and cell.style in (state.NOTE, state.TITLE):
                scale = 1.45 if cell.style == state.TITLE else 1.0  # 14-point bold: about 1.45 times as wide as 11
                end, _ = note_span(sheet, r, c, text, widths, last_col, scale)
                quote = text[:1] in ("=", "+", "-", "@")
                if end > c:
                    ws.merge_range(r - 1, c - 1, r - 1, end - 1, "", fmt(cell.style, None, hl, True, quote))
                ws.write_string(r - 1, c - 1, text, fmt(cell.style, None, hl, True, quote))
            elif cell.kind == "text":
                quote = cell.value[:1] in ("=", "+", "-", "@")
                style = "header over figures" if cell.style == state.HEADER and _over_figures(sheet, r, c) \
                    else "header over units" if cell.style == state.HEADER and _over_units(sheet, r, c) \
                    else "ident over figures" if cell.style == state.IDENT and _over_figures(sheet, r, c) \
                    else cell.style  # a header sits over its column's figures, which Excel aligns right
                ws.write_string(r - 1, c - 1, cell.value, fmt(style, None, hl, wrap, quote))
            elif cell.kind == "number":
                ws.write_number(r - 1, c - 1, cell.value, fmt(cell.style, num, hl))
            elif cell.kind == "bool":
                ws.write_boolean(r - 1, c - 1, cell.value, fmt(cell.style, None, hl))
            elif cell.kind == "formula":
                ws.write_formula(r - 1, c - 1, cell.value, fmt(cell.style, num, hl), cell.cached)
            elif cell.kind == "link":
                sheet_name, _, at = cell.target.partition("!")
                ws.write_url(r - 1, c - 1, f"internal:{state.sheet_ref(sheet_name)}!{at}",
                             fmt("link", None, hl, wrap), string=cell.value)
            if cell.comment:
                ws.write_comment(r - 1, c - 1, state.clean(cell.comment)[:2000],
                                 {"author": "planner", "width": 300, "height": 80})
        options: dict[int, dict] = {}
        for first, last, collapsed in sheet.groups:  # hidden rows do not print; they still calculate
            for r in range(first, last + 1):
                options[r] = {"level": 1, "hidden": collapsed}
            if collapsed:
                options.setdefault(first - 1, {})["collapsed"] = True  # the summary line's button shows +
        if sheet.groups:
            ws.outline_settings(True, False, True, False)  # the + of a group on its summary line, above it
        for r in sorted(set(heights) | set(options)):
            height = heights.get(r, LINE_HEIGHT)
            if height > LINE_HEIGHT or r in options:
                ws.set_row(r - 1, height if height > LINE_HEIGHT else None, None, options.get(r, {}))
        for r in sorted(sheet.highlight):
            for c in range(1, sheet.max_col + 1):
                if (r, c) not in sheet.cells:
                    ws.write_blank(r - 1, c - 1, None, fmt(None, None, True))
        for r, c, spec in sheet.validations:
            ws.data_validation(r - 1, c - 1, r - 1, c - 1, spec)
        for r1, c1, r2, c2, spec in sheet.conditionals:
            spec = dict(spec)
            spec["format"] = wb.add_format(STYLES[spec.pop("style")])
            ws.conditional_format(r1 - 1, c1 - 1, r2 - 1, c2 - 1, spec)
        for chart in sheet.charts:
            ws.insert_chart(chart.row - 1, chart.col - 1, _chart(wb, chart, {w.title: w for w in book.sheets}),
                            {"x_offset": 8 + chart.x_offset, "y_offset": 4, "object_position": 1})
        if sheet.freeze:
            ws.freeze_panes(sheet.freeze[0] - 1, sheet.freeze[1] - 1)
        if sheet.work:
            ws.set_tab_color("#A6A6A6")
        # print setup (print_plan): one page wide where that stays legible, the orientation that takes fewer
        # pages, header rows on every page; a table too wide even so prints at MIN_SCALE on pages side by side,
        # its labels repeated
        if sheet.work:  # its first rows and columns only, one page
            landscape, percent, tall_pages = sum(widths.get(c, 8.43) for c in range(1, last_col + 1)) > 100, None, 0
        if landscape:
            ws.set_landscape()
        ws.set_paper(PAPER_A4)
        if percent is None:
            ws.fit_to_pages(1, tall_pages)
        else:
            ws.set_print_scale(percent)
            units = sheet is getattr(book, "periods_sheet", None)  # the series' units beside their names
            ws.repeat_columns(0, 1 if units else 0)  # the row labels on every page across
        if sheet.work:  # out of the default print: one page of its first rows (and columns), saying what it is
            shown, room = 1, widths.get(1, 8.43)  # a wide sheet (Cash flows: a column per month) prints its
            while shown < last_col and room + widths.get(shown + 1, 8.43) <= WORK_PRINT_WIDTH:  # first columns
                shown += 1                                                                        # readably
                room += widths.get(shown, 8.43)
            ws.print_area(0, 0, min(max(sheet.max_row, 1), WORK_PRINT_ROWS) - 1, shown - 1)
        else:
            ws.print_area(0, 0, max(sheet.max_row, 1) - 1, last_col - 1)
        if sheet.repeat:
            ws.repeat_rows(sheet.repeat[0] - 1, sheet.repeat[1] - 1)
        ws.set_margins(left=0.5, right=0.5, top=0.75, bottom=0.75)
        ws.set_header(f"&L{_escape_header(_header_title(title))}&R&A", {"margin": 0.3})
        work = "&LA working sheet: only its first rows print" if sheet.work else ""
        ws.set_footer(f"{work}&CPage &P of &N", {"margin": 0.3})
    for name, target in book.defined.items():
        if wb.define_name(name, "=" + target) != 0:  # XlsxWriter refuses (and would drop) the name
            raise RuntimeError(f"XlsxWriter refused the defined name {name!r}")
    wb.set_properties({"title": title, "author": "planner", "created": FIXED_TIME})
    for name, value in provenance(book.plan).items():
        wb.set_custom_property(name, value, "text")
    wb.close()
    return raw.getvalue()


def _axis_format(sheets: dict, ref: tuple) -> Optional[str]:
    """The number format of the first cell of a series' range (axes read as the table does: 60%,
    2,180.91)."""
    title, row, col = ref[0], ref[1], ref[2]
    cell = sheets[title].at(row, col) if title in sheets else None
    if cell is None or cell.num is None:
        return None
    if cell.num.money and not cell.num.scientific:
        return "#,##0"  # an axis of money in whole units; the table beside it has the cents
    figures = [c.cached if c.kind == "formula" else c.value  # a column of a table, or a row of periods
               for c in (sheets[title].at(r, k) for r in range(row, ref[3] + 1) for k in range(col, ref[4] + 1))
               if c is not None]
    figures = [v for v in figures if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if cell.num.percent and not cell.num.scientific:  # round ticks: 150%, not the table's 150.0000%
        return "#,##0%" if not figures or max(figures) - min(figures) >= 0.1 else "#,##0.0%"
    figures = [abs(v) for v in figures]
    if not cell.num.scientific:
        if figures and max(figures) >= 10:
            return "#,##0"  # an axis's ticks are round: thousands separators, no decimals past 10
        return "General"  # round ticks below 10 (0.5, 1, 1.5), not the table's six figures (1.000000)
    return cell.num.excel().split(";")[0]


def _chart(wb, chart: state.Chart, sheets: Optional[dict] = None):
    """A sweep's chart: x against y, lines with markers (a question's answer a dashed line). A series over the
    periods (``chart.line``): a line per row (the base case's dashed) against the periods' row on a value axis
    with a label every 1, 2, 3, 6, 12... periods (about a dozen: 6, 12, ... 48). A line chart's category axis
    would say so with tickLblSkip, which LibreOffice ignores (48 labels run together); a value axis's major
    unit every engine honours."""
    c = wb.add_chart({"type": "scatter", "subtype": "straight" if chart.line else "straight_with_markers"})
    if chart.line:
        c.show_hidden_data()  # the base case's rows are folded (hidden) under the selected scenario's
    for k, s in enumerate(chart.series):
        sheet, r1, c1, r2, c2 = s.x
        ysheet, y1, yc1, y2, yc2 = s.y
        dashed = s.marker or chart.line and k > 0
        c.add_series({
            "name": s.name[:255],
            "categories": [sheet, r1 - 1, c1 - 1, r2 - 1, c2 - 1],
            "values": [ysheet, y1 - 1, yc1 - 1, y2 - 1, yc2 - 1],
            "marker": {"type": "none"} if s.marker or chart.line else {"type": "circle", "size": 5},
            "line": {"width": 1.25, "dash_type": "dash", "color": "#404040"} if dashed
            else {"width": 2.0 if chart.line else 1.5},
        })
    grid = {"visible": True, "line": {"color": "#D9D9D9"}}
    c.set_title({"name": chart.title[:255], "name_font": {"size": 11, "bold": True}})
    x_axis = {"name": chart.x_title, "name_font": {"size": 9, "bold": False}, "label_position": "low"}
    if chart.line and chart.series:
        count = chart.series[0].x[4] - chart.series[0].x[2] + 1
        step = next((n for n in (1, 2, 3, 6, 12, 24, 60, 120) if count / n <= 12), max(1, count // 12))
        lo, hi = chart.x_range  # the first and last period: the axis from and to a multiple of the step
        x_axis.update({"major_unit": step, "min": math.floor(lo / step) * step, "max": math.ceil(hi / step) * step})
    else:
        x_axis["major_gridlines"] = grid
        if chart.x_range is not None and chart.x_range[0] < chart.x_range[1]:
            x_axis.update({"min": chart.x_range[0], "max": chart.x_range[1]})
    if chart.x_log:
        x_axis["log_base"] = 10
    y_axis = {"name": chart.y_title, "major_gridlines": grid, "name_font": {"size": 9, "bold": False},
              "label_position": "low"}
    if chart.line:  # the periods' axis along the bottom, below a negative balance (Gnumeric ignores "low")
        y_axis["crossing"] = "min"
    if sheets and chart.series:
        for axis, ref in ((x_axis, chart.series[0].x), (y_axis, chart.series[0].y))[1 if chart.line else 0:]:
            code = _axis_format(sheets, ref)
            if code is not None:
                axis["num_format"] = code.replace("0.0#####%", "0%")
    c.set_x_axis(x_axis)
    c.set_y_axis(y_axis)
    c.set_legend({"none": True} if len(chart.series) == 1 else {"position": "bottom"})
    c.set_size({"width": chart.width, "height": chart.height})
    return c


def to_bytes(book: state.Book) -> bytes:
    """Render with fixed timestamps, so the same plan gives the same bytes. XlsxWriter's warnings (a name
    or a cell it would drop) are errors: a workbook missing part of the plan is worse than none."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        raw = io.BytesIO(render(book))
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o600 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def workbook_bytes(plan: Plan, scenarios: Optional[Sequence[str]] = None, overrides: Optional[Mapping] = None,
                   origins: Optional[Mapping] = None, solve_results: Optional[Sequence] = None,
                   trials: int = 1000, answers=None, checks: Optional[Sequence] = None) -> bytes:
    """The live workbook for ``plan`` as .xlsx bytes.

    ``scenarios`` picks the scenario columns (default: all; columns that
    checks need are added); ``overrides`` (from ``--set``) change the input
    values written on the Inputs sheet. What a caller has already computed for the plan as written is
    not computed again: ``solve_results``, the questions' door ``answers``
    (:class:`planner.questions.fast.Answers`) and every check's result ``checks``
    (:func:`planner.questions.every_check.run_every_check`'s, ignored under ``overrides``).
    """
    book = Book(plan, scenarios, overrides, origins, solve_results, answers, checks)
    book.trials = trials  # rows of the Trials sheet (a plan with uncertain inputs)
    return to_bytes(book.build())


HEADER_TITLE = 60  # characters of the plan's title a page header shows: the sheet's name at the right stays clear


def _header_title(title: str) -> str:
    """The title as a page header shows it: cut at a word before :data:`HEADER_TITLE` characters, with an
    ellipsis, so that on a portrait page it never runs into the sheet's name."""
    if len(title) <= HEADER_TITLE:
        return title
    cut = title[:HEADER_TITLE].rsplit(" ", 1)[0].rstrip(" ,:;-")
    return cut + "…"
