"""The workbook's shared state and style: what every sheet builder imports.

Sheet builders write into an in-memory grid (:class:`Sheet`, :class:`Cell`,
:class:`Chart`): plain data that :mod:`.writer` renders with XlsxWriter, the
library that stores a formula together with its value. Every formula cell
carries planner's own value (``cached``, in the cell's display unit), so a
mail preview, pandas or ``openpyxl(data_only=True)`` shows the right numbers
without recalculating; every number carries the :class:`NumberStyle` of its
quantity (:mod:`planner.outputs.numbers`, the rule the report uses too).

:class:`Book` holds the plan, its evaluation as written, the Excel names,
the evaluation contexts (the defined names, or a column of the Scenarios
sheet per scenario, or of the Check contexts sheet per check ``with``
context), and resolves a quantity's cell in a context (:meth:`Book.cell`,
:meth:`Book.refs`) and its value there (:meth:`Book.env`,
:meth:`Book.evaluate`). Sheet builders (:mod:`.summary`, :mod:`.inputs`,
:mod:`.derived`, :mod:`.scenarios`, :mod:`.tables`, :mod:`.solving`,
:mod:`.checking`) import this module; :mod:`.writer` composes them and is
imported by none of them.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from ...compute.evaluation import Plan, display_value
from ...language import ir
from ...language.errors import PlanError
from ...language.live import plain
from ...questions.checks import check_scenarios
from ..numbers import NumberStyle, answer_style, cell_scale, is_percent, plan_styles, scale_of, style_for, unit_of, written_decimals  # noqa: F401 (the sheets import them from here)
from .names import excel_names, is_cell_like
from .generator import (  # noqa: F401 (the sheets import cached and col_letter from here)
    ATOM, FLOW_FIRST, FLOW_HEADER, Generator, NotWritten, Piece, UnsupportedFormula, cached, col_letter,
)

FIXED_TIME = datetime.datetime(2000, 1, 1)
ZIP_TIME = (2000, 1, 1, 0, 0, 0)
MAX_TEXT = 32767  # characters in a cell
MAX_VALIDATION = 255  # characters in a data validation formula
CONTROL = re.compile(r"[\000-\010]|[\013-\014]|[\016-\037]")  # characters a cell may not hold

# named styles (the writer turns each into an XlsxWriter format)
STALE = "planner's answer at export; re-run planner"  # the status of a written (not live) answer after an edit
NO_ANSWER = "no answer"  # a question with no answer in a scenario: a finding, neither holds nor FAILS
TITLE, NOTE, HEADER, UNIT, INPUT, NAME, LABEL = "title", "note", "header", "unit", "input", "name", "label"
SELECTED = 7  # Inputs and Model: the column of the scenario the Summary's selector picks
BASE_ONLY = "base_only"  # an input only the base case reads (every scenario sets its own): not marked editable
UNITS = "units"  # a unit beside a figure (indented, so "250" and "kUSD" do not run together)
IDENT = "ident"  # a quantity's identifier beside its words (small, grey): where planner and import find the row
FIGURE = "figure"  # a figure that may be a word ("never"): aligned right, as the numbers around it
NEVER_WORD = "never"  # what a `first` that finds nothing shows where a reader reads it (Summary, Scenarios)


# ---- small helpers ------------------------------------------------------------

def col_index(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - ord("A") + 1
    return n


def sheet_ref(title: str) -> str:
    """A sheet name as it appears in a reference (quoted when needed)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", title) and not is_cell_like(title):
        return title
    return "'" + title.replace("'", "''") + "'"


def clean(text: object) -> str:
    return CONTROL.sub("", str(text))[:MAX_TEXT]


def literal(text: str) -> str:
    """Text as an Excel string literal inside a formula (never as formula text)."""
    return '"' + clean(text).replace('"', '""') + '"'


def shown_figures(values: list[float], unit: str) -> list[float]:
    """Cell figures as the reader reads them (a percentage's 0.6 is 60)."""
    return [v * 100 for v in values] if is_percent(unit) else values


def finite(values: Iterable) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(float(v))]


PLAN_FILE, PLAN_TITLE, PLAN_INPUTS = "planner plan file", "planner plan title", "planner inputs"
PLAN_HASH = "planner plan hash"  # the plan's text at export: the write-back refuses a plan changed since


def provenance(plan: Plan) -> dict[str, str]:
    """The plan's file name, title, a hash of its input names (sorted) and a hash of its text, as
    document properties."""
    names = sorted(n for n, q in plan.model.quantities.items() if q.is_input)
    digest = hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:16]
    short = lambda text: CONTROL.sub("", text)[:255]  # noqa: E731 (Excel's limit for a property)
    return {PLAN_FILE: short(Path(plan.path).name), PLAN_TITLE: short(plan.title), PLAN_INPUTS: f"sha256:{digest}",
            PLAN_HASH: plan_hash(plan.source.text)}


def plan_hash(text: str) -> str:
    """The hash of a plan's text that the export records and the write-back compares."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def percent_figure(unit: str, figure: float) -> float:
    """A figure in its display unit as a cell holds it (60 % -> 0.6)."""
    return figure / 100 if is_percent(unit) and isinstance(figure, float) else figure


def figure(q, value: float) -> float:
    """``q``'s figure in its display unit (60 for 60 %) as its cell holds it (0.6)."""
    return value if q.is_bool else percent_figure(q.unit_text, value)


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def prose(doc: str) -> str:
    """A doc string as a cell shows it: the report's code marks dropped (```batch``` is batch), a live
    value as its source (``{npv_saving}``: a label is text, not a formula)."""
    return (plain(doc) or "").replace("`", "")


def sheet_title(book: "Book", base: str) -> str:
    text = re.sub(r"[\[\]:*?/\\']", " ", base).strip()[:31] or "Sheet"
    taken = {ws.title.lower() for ws in book.sheets}
    candidate, n = text, 1
    while candidate.lower() in taken:
        n += 1
        suffix = f" {n}"
        candidate = text[: 31 - len(suffix)] + suffix
    return candidate


# ---- the grid ----------------------------------------------------------------------

@dataclass
class Cell:
    """One cell: ``kind`` is text, number, bool, formula (``value`` is the formula text, ``cached``
    planner's value of it) or link (text that jumps to ``target``, ``Inputs!B7``)."""

    value: object
    kind: str
    cached: object = None
    num: Optional[NumberStyle] = None
    style: Optional[str] = None
    comment: Optional[str] = None
    target: Optional[str] = None
    wrap: bool = False
    overflow: bool = False  # a title or note that may run across the empty cells to its right


@dataclass
class Series:
    name: str
    x: tuple  # (sheet title, first row, column, last row, column), 1-based
    y: tuple
    marker: bool = False  # a question's answer marked across the chart (a dashed line, no markers)


@dataclass
class Chart:
    title: str
    x_title: str
    y_title: str
    series: list[Series]
    row: int  # anchor, 1-based
    col: int
    width: int = 520  # pixels
    height: int = 300
    x_log: bool = False
    x_range: Optional[tuple[float, float]] = None  # the data's own range (axes otherwise start at round numbers)
    x_offset: int = 0  # pixels right of the anchor column (charts side by side under a table)
    line: bool = False  # a line over the periods (x_range their first and last), not a sweep's x against y

    ROWS = 16  # rows of the default height (20 px) a chart of the default height takes, with a gap

    @property
    def rows(self) -> int:
        """Rows of the default height (20 px) this chart takes, with a gap."""
        return self.height // 20 + 1


@dataclass
class _Figures:
    """What :class:`planner.outputs.viewmodel.LiveValues` reads of an analysis: the plan, its evaluations
    (and no answers: prose naming one is left as written)."""

    plan: Plan
    evaluations: list
    solves: list = field(default_factory=list)


class Sheet:
    """A worksheet being built: cells, widths, validations, charts and print setup, as plain data."""

    def __init__(self, title: str, work: bool = False) -> None:
        self.title = title
        self.work = work  # working for another sheet (grey tab)
        self.cells: dict[tuple[int, int], Cell] = {}
        self.widths: dict[int, float] = {}  # fixed column widths (characters)
        self.caps: dict[int, float] = {}  # widest a fitted column may grow; longer text wraps
        self.freeze: Optional[tuple[int, int]] = None  # the first cell that scrolls
        self.repeat: Optional[tuple[int, int]] = None  # rows printed at the top of every page
        self.validations: list[tuple[int, int, dict]] = []
        self.conditionals: list[tuple[int, int, int, int, dict]] = []
        self.charts: list[Chart] = []
        self.highlight: set[int] = set()  # headline rows
        self.landscape: Optional[bool] = None  # None: decided from the printed width
        # rows outlined (level 1) under the summary line just above them: (first, last, collapsed); collapsed rows
        # are hidden, so they leave the print, and still calculate; the reader expands a group with its +
        self.groups: list[tuple[int, int, bool]] = []

    # -- writing ------------------------------------------------------------------
    def text(self, row: int, col: int, text: Optional[str], style: Optional[str] = None,
             overflow: bool = False) -> Optional[Cell]:
        """A string cell: text from a plan never becomes a formula."""
        if text is None or text == "":
            return self.cells.get((row, col))
        cell = Cell(clean(text), "text", style=style, overflow=overflow)
        self.cells[(row, col)] = cell
        return cell

    def note(self, row: int, col: int, text: str) -> Optional[Cell]:
        return self.text(row, col, text, NOTE, overflow=True)

    def label(self, row: int, col: int, text: str) -> Optional[Cell]:
        """A block's title (bold), free to run across the empty cells to its right."""
        return self.text(row, col, text, LABEL, overflow=True)

    def number(self, row: int, col: int, value, num: Optional[NumberStyle] = None,
               style: Optional[str] = None) -> Cell:
        if isinstance(value, (bool, np.bool_)):
            cell = Cell(bool(value), "bool", style=style)
        else:
            cell = Cell(float(value), "number", num=num, style=style)
        self.cells[(row, col)] = cell
        return cell

    def formula(self, row: int, col: int, text: str, value, num: Optional[NumberStyle] = None,
                style: Optional[str] = None) -> Cell:
        assert text.startswith("="), text
        cell = Cell(text, "formula", cached=cached(value), num=num, style=style)
        self.cells[(row, col)] = cell
        return cell

    def link(self, row: int, col: int, text: str, target: str, style: Optional[str] = None) -> Cell:
        cell = Cell(clean(text), "link", target=target, style=style)
        self.cells[(row, col)] = cell
        return cell

    def status(self, row: int, col: int, holds: str, value: bool, stale: bool = False) -> Cell:
        """A live "holds"/"FAILS" beside a TRUE/FALSE cell (``holds`` is its reference), coloured. ``stale``:
        the answer is planner's figure written at export, not a formula, so once an edit moves the inputs its
        check fails because the answer is out of date, not wrong: it says so instead of FAILS."""
        otherwise = STALE if stale else "FAILS"
        return self.formula(row, col, f'=IF({holds},"holds","{otherwise}")', "holds" if value else otherwise)

    def flag(self, first: int, col: int, last: int) -> None:
        """Colour a column of :meth:`status` cells: green where it holds, red where not. (The rules test the
        text, not the TRUE/FALSE cell: LibreOffice 7.4 fails now and then to print (to PDF) a sheet whose
        conditional formats cover formulas with a cached TRUE/FALSE.)"""
        if last < first:
            return
        for text, style in (("holds", "good"), ("FAILS", "bad"), (STALE, "stale")):
            self.conditionals.append((first, col, last, col, {"type": "cell", "criteria": "==",
                                                              "value": f'"{text}"', "style": style}))

    def header(self, row: int, titles: Sequence[str], first: int = 1) -> None:
        for i, t in enumerate(titles, start=first):
            self.text(row, i, t, HEADER)

    def at(self, row: int, col: int) -> Optional[Cell]:
        return self.cells.get((row, col))

    def group(self, first: int, last: int, collapsed: bool = True) -> None:
        """Outline rows ``first``..``last`` under the summary line at ``first - 1`` (collapsed: hidden)."""
        if last >= first:
            self.groups.append((first, last, collapsed))

    @property
    def max_row(self) -> int:
        rows = [r for r, _ in self.cells] + [c.row + c.height // 20 for c in self.charts]
        return max(rows, default=1)

    @property
    def max_col(self) -> int:
        return max((c for _, c in self.cells), default=1)


@dataclass
class Context:
    """Where one evaluation of the plan lives: the named cells, or a column.

    ``overrides`` are a check's ``with`` values (inputs set by the check);
    the other inputs refer to the Inputs sheet or are the scenario's own.
    """

    label: str
    scenario: Optional[str]
    overrides: dict = field(default_factory=dict)  # a check's `with` values
    sheet: Optional[str] = None  # None: the defined names
    column: Optional[str] = None

    @property
    def key(self) -> tuple:
        return context_key(self.scenario, self.overrides)


@dataclass(frozen=True)
class AnswerRef:
    """``check ... with x = ALIAS``: an input set to a question's answer, live from the Solve sheet.

    ``scenario`` and ``plain`` (the check's other overrides) say which answer.
    """

    alias: str
    scenario: Optional[str]
    plain: tuple  # ((name, exact value), ...)

    def __str__(self) -> str:
        return f"answer {self.alias} in {self.scenario} with {self.plain}"


def context_key(scenario: Optional[str], overrides: Mapping) -> tuple:
    return scenario, tuple(sorted((k, str(v)) for k, v in overrides.items()))


SCENARIOS, CHECK_CONTEXTS, FLOWS = "Scenarios", "Check contexts", "Cash flows"


class Book:
    """Builds the workbook for one plan as sheets of plain cells; :mod:`.writer` renders them."""

    def __init__(self, plan: Plan, scenarios: Optional[Sequence[str]] = None,
                 overrides: Optional[Mapping] = None, origins: Optional[Mapping] = None,
                 solve_results: Optional[Sequence] = None, answers=None, checks: Optional[Sequence] = None) -> None:
        self.plan = plan
        self.model = plan.model
        self.q = plan.model.quantities
        self.overrides = dict(overrides or {})
        self.origins = dict(origins or {})
        self.base = plan.evaluate(None, self.overrides, self.origins)
        self.names = excel_names(plan.definition_order())
        self.taken_names = {v.upper() for v in self.names.values()}  # helper names must not collide
        self.closed_forms: dict = {}  # a Solve closed form as IR, once per form (the Solve sheet)
        self.sheets: list[Sheet] = []
        self.defined: dict[str, str] = {}  # Excel name -> target (``Inputs!$B$5``)
        self.input_rows: dict[str, int] = {}  # input -> row on the Inputs sheet
        self.model_rows: dict[str, int] = {}  # derived quantity -> row on the Model sheet
        self.rows: dict[str, int] = {}  # quantity -> row on the Scenarios (and Check contexts) sheet
        self.contexts: dict[tuple, Context] = {}
        self._live = None  # the report's filler of live values in prose, made when a title or note needs it
        self._refs: dict[tuple, dict] = {}
        self._env: dict[tuple, dict] = {}
        self._inputs: dict[tuple, dict] = {}
        self._compiled: dict = {}
        self._styles: Optional[dict] = None
        self.helpers: Optional[Sheet] = None
        self.periods = None  # the sheet of series (generator.PeriodRows), in a plan with periods
        self.periods_selected = None  # its rows for the scenario the Summary selects (a plan with scenarios)
        self.period_blocks = []  # months: whole quarters and years shown after them (periods.Block)
        self.flows: Optional[Sheet] = None  # the Cash flows sheet: sums' terms, a column per value of the range
        self.flow_rows: dict[tuple, tuple] = {}  # its functions' rows by their formulas: each written once
        self.solve_results = solve_results
        from ...questions.fast import Answers

        # the questions, by alias (their statements, types and units): a caller's door, with what it has answered
        self.answers = Answers(plan) if answers is None else answers
        self.checks_run = None if self.overrides else checks  # every check's result, when a caller has them
        self.aliases = self.answers.statements
        self.answer_types = self.answers.types if self.aliases else {}
        self.solve_needs: list[tuple] = []  # (statement, scenario, overrides) the checks use
        self.solve_index: dict[tuple, int] = {}  # (id(statement), context key) -> row on the Solve sheet
        # where things landed, for readers of the layout (tests, the Summary sheet)
        self.sweep_blocks: list = []  # (statement, scenario, sheet title, LiveTable)
        self.solve_cells: list = []  # (statement, Context, "C5" on the Solve sheet or None)
        self.solve_rows: list = []  # (statement, Context, SolveResult or PlanError, row)
        self.check_cells: list = []  # (check, scenario, "G5" on the Checks sheet)
        self.check_results: list = []  # planner's CheckResult per check cell
        wanted = [s for s in plan.resolve_scenarios(scenarios if scenarios else "all") if s is not None]
        self.base_context = Context("base", None)
        self.contexts[self.base_context.key] = self.base_context
        self.wanted = wanted

    # ---- sheets --------------------------------------------------------------------
    def create_sheet(self, title: str, work: bool = False) -> Sheet:
        ws = Sheet(title, work)
        self.sheets.append(ws)
        return ws

    def sheet(self, title: str) -> Sheet:
        return next(ws for ws in self.sheets if ws.title == title)

    def heading(self, ws: Sheet) -> int:
        """The plan's title and notes at the top of ``ws``; the row after them."""
        ws.text(1, 1, self.said(self.plan.title), TITLE, overflow=True)
        row = 2
        for note in self.model.plan.notes:
            ws.note(row, 1, self.said(note))
            row += 1
        return row

    def said(self, text: str) -> str:
        """Prose with live values (``{step_time}``) filled as the report fills them, per scenario, and
        marked as figures of the export (a cell of text does not follow an edit); as written when a live
        value names a question's answer (the workbook's answers are on the Solve sheet)."""
        from ...language.live import has_live, pieces
        from ..viewmodel import LiveValues

        if not has_live(text):
            return plain(text)  # `{{` is one brace, with or without a live value
        if any(not isinstance(p, str) and p.name not in self.q for p in pieces(text)):
            return text
        if self._live is None:
            scenarios = self.plan.resolve_scenarios("all") or [None]
            self._live = LiveValues(_Figures(self.plan, self.plan.evaluate_all(scenarios, self.overrides,
                                                                               self.origins)))
        return self._live(text).replace("`", "") + " (figures as exported)"

    @property
    def sheetnames(self) -> list[str]:
        return [ws.title for ws in self.sheets]

    def derived_order(self) -> list[str]:
        """Derived quantities in dependency order, otherwise as they appear in the file."""
        out: list[str] = []
        seen: set[str] = set()
        for root in self.plan.definition_order():
            stack = [(root, iter(self.q[root].deps))] if root not in seen else []
            seen.add(root)
            while stack:  # iterative depth-first: a 10,000-long chain must not recurse
                n, deps = stack[-1]
                d = next(deps, None)
                if d is None:
                    stack.pop()
                    if not self.q[n].is_input:
                        out.append(n)
                elif d not in seen:
                    seen.add(d)
                    stack.append((d, iter(self.q[d].deps)))
        out += [n for n in self.model.derived if n not in seen]
        return [n for n in out if not self.q[n].per_period]  # the series: a row each on the sheet of periods

    @property
    def headlines(self) -> list[str]:
        """The headline quantities, by the report's rule (tagged [headline], else the plan's leaves)."""
        from ..viewmodel import headline_names

        return headline_names(self.plan)[0]

    # ---- references --------------------------------------------------------------
    def cell(self, ctx: Context, name: str, here: Optional[str] = None) -> str:
        """The cell (display units) holding ``name`` in ``ctx``, seen from sheet ``here``."""
        if ctx.sheet is None:
            return self.names[name]
        row = self.rows[name]
        if here == ctx.sheet:
            return f"{ctx.column}{row}"
        return f"{sheet_ref(ctx.sheet)}!${ctx.column}${row}"

    def read(self, ctx: Context, name: str, here: Optional[str] = None) -> str:
        """``name``'s cell in ``ctx`` as a formula reads it: :meth:`cell`, except that a figure that may be never
        shows the word on the Scenarios sheet (:func:`.scenarios.fill_column`), which a formula reads back as
        #N/A, the workbook's never (``x == never`` is ``ISNA(x)``; MAX or a comparison do not skip it)."""
        cell = self.cell(ctx, name, here)
        return f"IF(ISNUMBER({cell}),{cell},NA())" if ctx.sheet is not None and self.may_be_never(name) else cell

    def pieces(self, ctx: Context, here: Optional[str] = None) -> dict[str, Piece]:
        """Every quantity's cell in ``ctx`` seen from sheet ``here`` as the formula generator reads it (the
        cell, and the base units one unit of its figure is), and each answer a formula uses (its cell on
        the Solve sheet for ``ctx``). A fresh copy."""
        key = ("pieces", ctx.key, here)
        if key not in self._refs:
            out = {name: Piece(self.read(ctx, name, here), ATOM, None if q.is_bool else scale_of(q))
                   for name, q in self.q.items() if not q.per_period}  # a series: its row (generator.PeriodRows)
            for name in self.model.answers:
                stmt = self.aliases.get(name.removesuffix(".value"))
                if stmt is not None and (id(stmt), ctx.key) in self.solve_index:
                    ref, scale = self.answer_cell(name, ctx.scenario, ctx.overrides, "")  # qualified: formulas move
                    out[name] = Piece(ref, ATOM, scale)
            self._refs[key] = out
        return dict(self._refs[key])

    def quantity_formula(self, name: str, ctx: Context, refs: Mapping[str, Piece], where: str,
                         row_refs: Optional[Mapping[str, Piece]] = None, periods=None) -> str:
        """``=...`` for derived quantity ``name`` in ``ctx`` as its author wrote it, in its cell's unit
        (:mod:`.generator`); the terms of its sums over ranges go to rows of the Cash flows sheet."""
        q = self.q[name]
        gen = Generator(self.model, refs, row=self.flow_cells, values=self.env(ctx), where=where,
                        row_refs=row_refs, spill=lambda text, value: self.helper_cell(text, where, value),
                        periods=periods or self.periods, analyzer=self.plan.analyzer)
        mark = self._flows_mark()
        try:
            return gen.formula(q.definition.expr, None if q.is_bool else scale_of(q))
        except NotWritten as err:
            self._flows_rollback(mark)
            raise UnsupportedFormula(f"{where}: the workbook has no formula for it ({err})", q.definition.span,
                                     hint="`planner eval`, `check` and `report` compute it as it is") from None
        except UnsupportedFormula as err:  # which figure: `Model: total: sum over ranges ...`, at its definition
            if not err.message.startswith(where):
                err.message = f"{where}: {err.message}"
            if err.span is None:
                err.span = q.definition.span
            raise

    def _flows_mark(self) -> tuple:
        return (self.flows, getattr(self, "flows_row", 3))

    def _flows_rollback(self, mark: tuple) -> None:
        """The Cash flows rows written since ``mark`` removed (a formula that was then written otherwise)."""
        flows, line = mark
        if self.flows is None:
            return
        if flows is None:
            self.sheets.remove(self.flows)
            self.flows, self.flow_rows = None, {}
            return
        for key in [k for k in self.flows.cells if k[0] > line]:
            del self.flows.cells[key]
        self.flow_rows = {k: v for k, v in self.flow_rows.items() if v[1][1] <= line}
        self.flows_row = line

    def flow_cells(self, cells: list[str], held: Callable[[], list], where: str, written: str = "",
                   unit: str = "", shared: bool = False, at: Optional[tuple] = None) -> tuple[list, tuple]:
        """One row of the Cash flows sheet: formulas ``cells`` holding ``held()`` (computed only when the row
        is written), a column per value of the range, the index being the column's number in the header row;
        ``written`` is the term as a formula, for the Term column, ``unit`` its cells' unit, for the Unit
        column; ``at`` (the range's variable, its unit, its value in each column), where those are not the
        header's numbers, a row above it. Returns the cells as ranges and (the sheet as a reference, the
        row); a ``shared`` row (a function's, which several figures read) is found written where its like is."""
        key = tuple(cells)  # (the same cells are the same row, whichever sheet's figure wrote it first)
        if shared and key in self.flow_rows:
            return self.flow_rows[key]
        if self.flows is None:
            self.flows = self.create_sheet(sheet_title(self, FLOWS), work=True)
            self.flows.text(1, 1, "Cash flows", TITLE, overflow=True)
            self.flows.note(2, 1, "The terms of the sums over ranges, a column per value of the range (a month, "
                            "a year) numbered in row 3; every cell of a row is the same formula over its column's "
                            "number. Column B is the term as the plan writes it, column C the unit of its row's cells. A "
                            "figure elsewhere adds up its row (SUM over the row), whose terms are in that figure's "
                            "unit where the sum is a part of it (kUSD for an NPV in kUSD). A term beyond "
                            "the range's end, as the inputs set it, is 0 (blank for first, min, max).")
            self.flows.header(3, ["Used by", "Term", "Unit"])
            self.flows.repeat = (3, 3)
            self.flows.freeze = (4, FLOW_FIRST)
            self.flows.caps.update({1: 50, 2: 60})
            self.flows_row = 3
        ws = self.flows
        if at is not None:  # a range from 0 (irr's flows): each column's value of its variable, in line
            var, word, numbers = at
            self.flows_row += 1
            ws.text(self.flows_row, 1, f"{where}: {var}" + (f" ({word})" if word else ""), NAME)
            ws.text(self.flows_row, 3, word, UNITS)
            for j, v in enumerate(numbers):
                ws.number(self.flows_row, FLOW_FIRST + j, float(v))
        self.flows_row += 1
        row = self.flows_row
        held = held()
        style = self.number_style(held, unit)  # money to cents, as the Model sheet shows it
        ws.text(row, 1, where)
        ws.text(row, 2, written)
        ws.text(row, 3, unit, UNITS)
        for j, (text, value) in enumerate(zip(cells, held)):
            if ws.at(FLOW_HEADER, FLOW_FIRST + j) is None:  # a number: the terms' index is this cell
                ws.number(FLOW_HEADER, FLOW_FIRST + j, j + 1, style=HEADER)
            ws.formula(row, FLOW_FIRST + j, text, value, style)
        ref = sheet_ref(ws.title)
        last = col_letter(FLOW_FIRST + len(cells) - 1)
        got = [f"{ref}!${col_letter(FLOW_FIRST)}${row}:${last}${row}"] if cells else [], (ref, row)
        if shared:
            self.flow_rows[key] = got
        return got

    def helper_cell(self, text: str, where: str, value) -> str:
        """A part of a formula longer than Excel allows, in a cell of the Helpers sheet holding ``value``."""
        if self.helpers is None:
            self.helpers = self.create_sheet("Helpers", work=True)
            self.helpers.note(1, 1, "Subexpressions moved out of formulas longer than Excel's 8,192 characters, "
                              "and the terms of sums over ranges (one cell per value a range can hold; base units)")
            self.helpers.header(2, ["Used by", "Value"])
            self.helpers.repeat = (2, 2)
            self.helpers.freeze = (3, 1)
            self.helpers.caps[1] = 60
            self.helpers_row = 2
        self.helpers_row += 1
        self.helpers.text(self.helpers_row, 1, where)
        self.helpers.formula(self.helpers_row, 2, text, value, self.number_style([value]))
        return f"Helpers!$B${self.helpers_row}"

    def define(self, name: str, target: str) -> None:
        self.defined[self.names[name]] = target

    # ---- the scenario selector ---------------------------------------------------------
    @cached_property
    def selectable(self) -> list["Context"]:
        """The scenarios the Summary's selector offers (besides base): the Scenarios sheet's columns."""
        return [c for c in self.contexts.values() if c.sheet == SCENARIOS and not c.overrides]

    @cached_property
    def selector_names(self) -> tuple[str, str]:
        """The defined names of the selector cell and of its list of choices (clear of the plan's names)."""
        out = []
        for base in ("SelectedScenario", "ScenarioChoices"):
            name, n = base, 1
            while name.upper() in self.taken_names:
                n += 1
                name = f"{base}{n}"
            out.append(name)
        return out[0], out[1]

    def selected_input(self, name: str) -> Optional[str]:
        """``=CHOOSE(...)`` of ``name``'s cell in the selected scenario, or None when no scenario sets it."""
        setters = [c for c in self.selectable if name in self.model.scenarios[c.scenario].overrides]
        if not setters:
            return None
        selected, choices = self.selector_names
        cells = [self.names[name]] + [f"{sheet_ref(SCENARIOS)}!${c.column}${self.rows[name]}" for c in self.selectable]
        return f"=CHOOSE(MATCH({selected},{choices},0),{','.join(cells)})"

    def label(self, name: str) -> str:
        """A row's label: the quantity's doc string, capitalised, else its identifier."""
        q = self.q.get(name)
        return capitalised(prose(q.doc)) if q is not None and q.doc else name

    def words(self, name: str) -> str:
        """A quantity named for a reader: its doc string, else its identifier."""
        q = self.q.get(name)
        return prose(q.doc) if q is not None and q.doc else name

    def phrase(self, names: Sequence[str]) -> str:
        """Quantities in words: "a", "a and b", "a, b and c"."""
        words = [self.words(n) for n in names]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]

    def answer_words(self, stmt) -> str:
        """A question's answer named for a reader: ``solve ... as breakeven_utilisation`` is "Breakeven
        utilisation"; without an alias, "target_utilisation where npv_own = npv_rent"."""
        if stmt.alias:
            text = stmt.alias.replace("_", " ")
            return text[:1].upper() + text[1:]
        if isinstance(stmt, ir.Optimize):
            return f"{'Largest' if stmt.sense == 'max' else 'Smallest'} {stmt.objective.span.flat} over {stmt.over}"
        return f"{stmt.target} where {stmt.condition.span.flat}"

    def scenario_cells(self, name: str) -> str:
        """Where to edit input ``name`` for the scenarios that set it: ``edit Scenarios!D10 (low_use), E10
        (busy)``."""
        setters = [c for c in self.selectable if name in self.model.scenarios[c.scenario].overrides]
        row = self.rows[name]
        if len(setters) > 3:  # a dozen cells named one by one is a paragraph: the row, and how many
            return f"edit Scenarios! row {row} ({len(setters)} scenarios)"
        return "edit Scenarios!" + ", ".join(f"{c.column}{row} ({c.label})" for c in setters)

    # ---- contexts ------------------------------------------------------------------
    def context(self, scenario: Optional[str], overrides: Optional[Mapping] = None) -> Context:
        """The column for a scenario with a check's overrides (created on first use)."""
        overrides = dict(overrides or {})
        key = context_key(scenario, overrides)
        if key not in self.contexts:
            label = scenario or "base"
            if overrides:
                label += " with " + ", ".join(f"{k} = {self._shown(k, v)}" for k, v in overrides.items())
            self.contexts[key] = Context(label, scenario, overrides)
        return self.contexts[key]

    def _shown(self, name: str, value) -> str:
        from ...compute.evaluation import format_value

        if isinstance(value, AnswerRef):
            return value.alias
        q = self.q[name]
        return format_value(display_value(q, value), q.unit_text)

    def collect_check_contexts(self) -> None:
        """The columns and solve answers the checks refer to."""
        for check in self.model.checks:
            plain, from_alias = self.check_overrides(check)
            used = self.answers_used(check)
            for s in check_scenarios(self.plan, check):
                for name in used + list(from_alias.values()):
                    need = (self.aliases[name.removesuffix(".value")], s, plain)
                    if need not in self.solve_needs:
                        self.solve_needs.append(need)
                merged = self.check_context(s, plain, from_alias)
                self.context(s, merged)
                for node in ir.walk(check.condition):
                    if isinstance(node, ir.ScenarioRef):
                        self.context(None if node.scenario == "base" else node.scenario, merged)

    def check_overrides(self, check: ir.Check) -> tuple[dict, dict]:
        """A check's ``with``: exact values, and inputs set to a question's answer (name -> alias)."""
        plain, from_alias = {}, {}
        for o in check.overrides:
            if isinstance(o.expr, ir.Name) and o.expr.name in self.answer_types:
                from_alias[o.name] = o.expr.name
            else:
                plain[o.name] = self.plan.analyzer.override_value(o, self.q, "`with`", report=False)
        return plain, from_alias

    def check_context(self, scenario, plain: dict, from_alias: dict) -> dict:
        key = tuple(sorted(plain.items()))
        return {**plain, **{x: AnswerRef(a, scenario, key) for x, a in from_alias.items()}}

    def answers_used(self, check: ir.Check) -> list[str]:
        return sorted({n.name for n in ir.walk(check.condition)
                       if isinstance(n, ir.Name) and n.name in self.answer_types})

    def answer_cell(self, name: str, scenario: Optional[str], plain: Mapping, here: str) -> tuple[str, Fraction]:
        """The Solve sheet cell of an answer (``ALIAS``) or optimum (``ALIAS.value``), and its cell scale."""
        stmt = self.aliases[name.removesuffix(".value")]
        row = self.solve_index[(id(stmt), self.context(scenario, dict(plain)).key)]
        col = "H" if name.endswith(".value") else "C"
        ref = f"${col}${row}" if here == "Solve" else f"Solve!${col}${row}"
        return ref, cell_scale(*self.answers.unit(name))

    def answer_value(self, name: str, scenario: Optional[str], plain: Mapping):
        """planner's answer (base units), or NaN when the question has none there."""
        try:
            return float(self.answers.value(name, scenario, {**self.overrides, **dict(plain)}, self.origins))
        except PlanError:
            return float("nan")

    # ---- values: planner's own, for the cached results -------------------------------
    def inputs(self, ctx: Context) -> dict:
        """Every input's base value in ``ctx`` (exact where known; a check's answer as a float)."""
        key = ctx.key
        if key not in self._inputs:
            plain = {k: v for k, v in ctx.overrides.items() if not isinstance(v, AnswerRef)}
            values, _ = self.plan.input_values(ctx.scenario, {**self.overrides, **plain}, self.origins)
            for name, ref in ctx.overrides.items():
                if isinstance(ref, AnswerRef):
                    values[name] = self.answer_value(ref.alias, ref.scenario, dict(ref.plain))
            self._inputs[key] = values
        return dict(self._inputs[key])

    def env(self, ctx: Context, varied: Optional[Mapping] = None) -> dict:
        """Quantity name -> base value (floats, bools; numpy arrays where ``varied`` gives arrays):
        the plan's formulas as the cells compute them, no constraint checked."""
        key = ctx.key
        if varied is None and key in self._env:
            return self._env[key]
        values = self.inputs(ctx)
        if varied:
            values.update(varied)
        answers = self.formula_answers(ctx)
        raw = self.plan.run_compiled(values, answers)
        out = dict(answers)  # the answers formulas use (`solve ... as x`, then `y = 2 * x`), by name
        for name in self.model.inputs:
            v = values[name]
            if isinstance(v, np.ndarray):
                out[name] = v
            elif self.q[name].is_bool:
                out[name] = bool(v)
            else:
                out[name] = float(v)
        for name in self.model.derived:
            v = raw[name]
            out[name] = v if isinstance(v, np.ndarray) and v.ndim else (
                bool(v) if self.q[name].is_bool else float(v))
        if varied is None:
            self._env[key] = out
        return out

    def formula_answers(self, ctx: Context) -> dict:
        """planner's values (base units) of the answers the formulas use, in ``ctx``; NaN where a
        question has no answer (the cells show #N/A there)."""
        if not self.model.formula_answers:
            return {}
        plain = {k: v for k, v in ctx.overrides.items() if not isinstance(v, AnswerRef)}
        merged = {**self.overrides, **plain}
        try:
            return self.plan.formula_answer_values(ctx.scenario, merged, self.origins)
        except PlanError:
            return {a: self.answer_value(a, ctx.scenario, plain) for a in self.model.formula_answers}

    def display(self, ctx: Context, name: str):
        """``name``'s value in ``ctx`` as its cell holds it (exact for an input as written; a percentage
        as the fraction)."""
        q = self.q[name]
        if q.is_input and not q.is_bool:
            v = self.inputs(ctx)[name]
            if isinstance(v, Fraction):
                return float(v / scale_of(q))
        v = self.env(ctx)[name]
        if not q.is_bool and v != v and self.never(name):
            return "#N/A"  # a `first` that found nothing: never, as its formula shows it (NA())
        return bool(v) if q.is_bool else cached(v, scale_of(q))

    def moves(self, set_by: set) -> dict[str, bool]:
        """Derived quantity (and series) -> whether an input in ``set_by`` or an answer moves it."""
        out: dict[str, bool] = {}
        for name in self.model.order:  # dependencies first; a series in its place among the figures
            q = self.q[name]
            if not q.is_input:
                out[name] = any(d in set_by or out.get(d, False) for d in q.deps) or bool(q.answer_deps)
        return out

    def reads_series(self, name: str) -> bool:
        """Whether ``name`` is a series or reads one (a reduction), through the quantities it uses."""
        if not hasattr(self, "_reads_series"):
            self._reads_series: dict[str, bool] = {}
        got = self._reads_series.get(name)
        if got is None:
            seen, stack, got = set(), [name], False
            while stack and not got:
                n = stack.pop()
                if n in seen or n not in self.q:
                    continue
                seen.add(n)
                got = self.q[n].per_period
                stack.extend(self.q[n].deps)
            self._reads_series[name] = got
        return got

    def may_be_never(self, name: str) -> bool:
        """Whether ``name``'s formula takes a ``first(...)`` (which may find nothing: "never"), itself or
        through the user functions it calls (asked once per cell of every column: kept)."""
        known = self.__dict__.setdefault("_may_be_never", {})
        if name not in known:
            known[name] = self._takes_first(name)
        return known[name]

    def _takes_first(self, name: str) -> bool:
        q = self.q[name]
        if q.is_input or q.is_bool:
            return False
        stack, seen = [q.definition.expr], set()
        while stack:
            for node in ir.walk(stack.pop()):
                if isinstance(node, ir.Aggregate) and node.op is ir.AggOp.FIRST or \
                        isinstance(node, ir.Reduce) and node.op == "first":
                    return True
                if isinstance(node, ir.Call) and node.func in self.model.functions and node.func not in seen:
                    seen.add(node.func)
                    f = self.model.functions[node.func]
                    stack += [f.body] + [p.default for p in f.params if p.default is not None]
        return False

    def never(self, name: str) -> bool:
        """Whether ``name`` is a ``first(...)``, whose no value (never) the workbook shows as #N/A."""
        e = self.q[name].definition.expr
        return (isinstance(e, ir.Reduce) and e.op == "first") or (isinstance(e, ir.Aggregate) and e.op is ir.AggOp.FIRST)

    def value_of(self, expr: ir.Expr, env: Mapping[str, object]):
        """The IR expression ``expr`` over the quantities and answers with these base values (scalars or
        arrays; a check's ``name@scenario`` under that key), on planner's numeric route."""
        from ...compute.numeric import compile_program

        names = list(env)
        key = (id(expr), tuple(names))
        got = self._compiled.get(key)
        if got is None:
            refs = {id(n): f"{n.name}@{n.scenario}" for n in ir.walk(expr) if isinstance(n, ir.ScenarioRef)}
            got = self._compiled[key] = (expr, compile_program(self.model, names, [("out", expr)], refs))
        _, program = got
        args = [np.bool_(v) if isinstance(v, bool) else v for v in env.values()]
        v = program(args)[0]
        if isinstance(v, np.ndarray) and v.ndim:
            return v
        return bool(v) if isinstance(v, (bool, np.bool_)) else float(v)

    def names_in(self, expr: ir.Expr) -> set[str]:
        """The quantities and answers ``expr`` uses, through the user functions it calls too."""
        return set(self.plan.analyzer._refs(expr, frozenset()))

    # ---- number styles ---------------------------------------------------------------
    def number_style(self, values: Iterable, unit: str = "") -> Optional[NumberStyle]:
        """The style of figures as cells hold them (a percentage's fractions) in ``unit``."""
        vals = [v for v in values if not isinstance(v, (bool, np.bool_, str)) and v is not None]
        if not vals:
            return None
        return style_for(shown_figures(finite(vals), unit), unit)

    def answer_style(self, q, r) -> Optional[NumberStyle]:
        """The style of a question's answer ``r`` (of ``q``) in its cell: as every figure's, except that a least
        value (``solve min``) is never shown below itself nor a greatest above (:func:`..numbers.answer_style`,
        as the report and the terminal write it)."""
        style = self.number_style([figure(q, r.display_value)], q.unit_text)
        if style is None or q.is_bool:
            return style
        return answer_style(float(r.display_value), q.unit_text, getattr(r, "mode", "root"), style)

    def style(self, name: str) -> Optional[NumberStyle]:
        """One style per quantity, the one every output uses (:func:`..numbers.plan_styles`: its figures in
        the base case and every scenario, an input's written decimals), so a cell shows the report's digits."""
        if self._styles is None:
            self._styles = plan_styles(self.plan)
        return self._styles.get(name)

