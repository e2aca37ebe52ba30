"""The live workbook: every figure a formula over named input cells.

Sheets, in order:

* **Inputs**: one row per input (name, value in its display unit, unit,
  description, tags, constraints); the value cell is styled as an input,
  carries a workbook-level defined name, data validation from its
  constraints and its doc as a comment.
* **Model**: every derived quantity in dependency order, a live formula over
  the defined names, converted to its display unit, with its own name.
* **Scenarios**: one column per scenario (and per `check ... with` context):
  overridden inputs as values, the rest referencing the Inputs sheet, every
  derived quantity a formula over cells of its own column.
* one sheet per **sweep**, and per **maximize/minimize** (see
  :mod:`planner.excel.tables`);
* **Solve**: each answer live (see :mod:`planner.excel.solving`);
* **Checks**: each check a live TRUE/FALSE cell, with planner's tolerance;
* **Helpers**: subexpressions moved out of formulas longer than Excel's
  8,192 characters (only when needed).

Plan text (titles, docs, tags, units, scenario names) is always written as
a string cell, never as a formula. The bytes are deterministic: fixed
document timestamps and zip entry dates. Custom document properties record
the plan the workbook came from (:func:`provenance`), which ``planner
import`` checks.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import math
import re
import zipfile
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Optional, Sequence

import sympy as sp
from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.comments import Comment
from openpyxl.packaging.custom import StringProperty
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.writer.excel import ExcelWriter

from ...language import ir
from ...questions.checks import check_scenarios
from ...language.errors import PlanError
from ...compute.evaluation import Evaluation, Plan
from .names import excel_names, is_cell_like
from .printer import ExcelPrinter, formula, number

FIXED_TIME = datetime.datetime(2000, 1, 1)
ZIP_TIME = (2000, 1, 1, 0, 0, 0)
HEADER_FONT = Font(bold=True)
HEADER_FILL = PatternFill("solid", fgColor="DDEBF7")
TITLE_FONT = Font(bold=True, size=14)
NOTE_FONT = Font(italic=True, color="595959")
MAX_TEXT = 32767  # characters in a cell
MAX_VALIDATION = 255  # characters in a data validation formula
GOOD_FILL = PatternFill("solid", fgColor="C6EFCE")
BAD_FILL = PatternFill("solid", fgColor="FFC7CE")


# ---- small helpers ------------------------------------------------------------

def sheet_ref(title: str) -> str:
    """A sheet name as it appears in a reference (quoted when needed)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", title) and not is_cell_like(title):
        return title
    return "'" + title.replace("'", "''") + "'"


def in_base(text: str, scale: Fraction) -> str:
    """A display-unit reference converted to base units, as an atom: ``(hbm_bandwidth*1E+12)``."""
    if scale == 1:
        return text
    if scale.numerator == 1:
        return f"({text}/{number(scale.denominator)})"
    if scale.denominator == 1:
        return f"({text}*{number(scale.numerator)})"
    return f"({text}*{number(scale.numerator)}/{number(scale.denominator)})"


def put_text(ws, row: int, col: int, text: Optional[str], font=None):
    """A plain string cell: text from a plan never becomes a formula."""
    cell = ws.cell(row=row, column=col)
    if text is None or text == "":
        return cell
    cell.value = ILLEGAL_CHARACTERS_RE.sub("", str(text))[:MAX_TEXT]
    cell.data_type = "s"
    if cell.value[:1] in ("=", "+", "-", "@"):
        cell.quotePrefix = True
    if font is not None:
        cell.font = font
    return cell


def put_formula(ws, row: int, col: int, text: str, fmt: Optional[str] = None):
    assert text.startswith("=")
    cell = ws.cell(row=row, column=col)
    cell.value = text
    if fmt:
        cell.number_format = fmt
    return cell


def number_format(value) -> str:
    """A format that suits the magnitude: thousands separators, ~5 significant digits."""
    if isinstance(value, bool) or value is None:
        return "General"
    v = float(value)
    if not math.isfinite(v):
        return "General"
    a = abs(v)
    if a == 0:
        return "0"
    if v == int(v) and a < 1e15:
        return "#,##0"
    if a >= 1e9 or a < 1e-3:
        return "0.000E+00"
    decimals = min(6, max(0, 4 - math.floor(math.log10(a))))
    return "#,##0." + "0" * decimals if decimals else "#,##0"


PLAN_FILE, PLAN_TITLE, PLAN_INPUTS = "planner plan file", "planner plan title", "planner inputs"


def provenance(plan: Plan) -> dict[str, str]:
    """The plan's file name, title and a hash of its input names (sorted), as document properties."""
    names = sorted(n for n, q in plan.model.quantities.items() if q.is_input)
    digest = hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:16]
    clean = lambda text: ILLEGAL_CHARACTERS_RE.sub("", text)[:255]  # noqa: E731 (Excel's limit for a property)
    return {PLAN_FILE: clean(Path(plan.path).name), PLAN_TITLE: clean(plan.title), PLAN_INPUTS: f"sha256:{digest}"}


def display_value(q, value):
    if q.is_bool:
        return bool(value)
    return float(Fraction(value) / q.display.scale)


def header(ws, row: int, titles: Sequence[str]) -> None:
    for i, t in enumerate(titles, start=1):
        c = put_text(ws, row, i, t, HEADER_FONT)
        c.fill = HEADER_FILL


def widths(ws, sizes: Mapping[str, float]) -> None:
    for col, w in sizes.items():
        ws.column_dimensions[col].width = w


# ---- evaluation contexts -------------------------------------------------------

@dataclass
class Context:
    """Where one evaluation of the plan lives: the named cells, or a column.

    ``inputs`` are the values written into the column (inputs set by a
    scenario or a check's ``with``); the other inputs refer to the Inputs
    sheet.
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


def alias_base(name: str) -> str:
    """``best_gamma.value`` -> ``best_gamma``."""
    return name[: -len(".value")] if name.endswith(".value") else name


def context_key(scenario: Optional[str], overrides: Mapping) -> tuple:
    return scenario, tuple(sorted((k, str(v)) for k, v in overrides.items()))


class Book:
    """Builds the workbook for one plan; openpyxl objects never leave this package."""

    def __init__(self, plan: Plan, scenarios: Optional[Sequence[str]] = None,
                 overrides: Optional[Mapping] = None, origins: Optional[Mapping] = None,
                 solve_results: Optional[Sequence] = None) -> None:
        self.plan = plan
        self.model = plan.model
        self.q = plan.model.quantities
        self.overrides = dict(overrides or {})
        self.origins = dict(origins or {})
        self.base = plan.evaluate(None, self.overrides, self.origins)
        self.names = excel_names(plan.definition_order())
        self.sym = plan.symbols.symbols
        self.bools = frozenset(self.sym[n] for n, q in self.q.items() if q.is_bool)
        self.wb = Workbook()
        self.wb.remove(self.wb.active)
        self.rows: dict[str, int] = {}  # quantity -> row on the Scenarios sheet
        self.contexts: dict[tuple, Context] = {}
        self._refs: dict[tuple, dict] = {}
        self.helpers = None
        self.solve_results = solve_results
        from ...questions.solve import Answers

        self.answers = Answers(plan)  # the questions, by alias: their statements, types and units
        self.aliases = self.answers.statements
        self.answer_types = self.answers.types if self.aliases else {}
        self.solve_needs: list[tuple] = []  # (statement, scenario, overrides) the checks use
        self.solve_index: dict[tuple, int] = {}  # (id(statement), context key) -> row on the Solve sheet
        # where things landed, for readers of the layout (tests, the report)
        self.sweep_blocks: list = []  # (statement, scenario, sheet title, LiveTable)
        self.solve_cells: list = []  # (statement, Context, "C5" on the Solve sheet or None)
        self.check_cells: list = []  # (check, scenario, "G5" on the Checks sheet)
        wanted = [s for s in plan.resolve_scenarios(scenarios if scenarios else "all") if s is not None]
        self.base_context = Context("base", None)
        self.contexts[self.base_context.key] = self.base_context
        self.wanted = wanted

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
        return out + [n for n in self.model.derived if n not in seen]

    # ---- references --------------------------------------------------------------
    def cell(self, ctx: Context, name: str, here: Optional[str] = None) -> str:
        """The cell (display units) holding ``name`` in ``ctx``, seen from sheet ``here``."""
        if ctx.sheet is None:
            return self.names[name]
        row = self.rows[name]
        if here == ctx.sheet:
            return f"{ctx.column}{row}"
        return f"{sheet_ref(ctx.sheet)}!${ctx.column}${row}"

    def refs(self, ctx: Context, here: Optional[str] = None) -> dict[sp.Symbol, str]:
        """Base-unit text for every quantity's symbol in ``ctx`` (a fresh copy)."""
        key = (ctx.key, here)
        if key not in self._refs:
            out = {}
            for name, q in self.q.items():
                out[self.sym[name]] = self.cell(ctx, name, here) if q.is_bool else in_base(
                    self.cell(ctx, name, here), q.display.scale)
            self._refs[key] = out
        return dict(self._refs[key])

    def formula(self, expr: sp.Basic, refs: Mapping[sp.Symbol, str], scale: Fraction = Fraction(1),
                where: str = "", helper_refs: Optional[Mapping[sp.Symbol, str]] = None) -> str:
        """``=...`` for ``expr``; parts of a too-long formula go to the Helpers sheet, where they
        use ``helper_refs`` (sheet-qualified; needed when ``refs`` has same-sheet cells)."""
        return formula(expr, refs, self.bools, spill=lambda text: self.spill(text, where), scale=scale,
                       helper_refs=helper_refs)

    def spill(self, text: str, where: str) -> str:
        """Put a subexpression in a helper cell (formulas over 8,192 characters)."""
        if self.helpers is None:
            self.helpers = self.wb.create_sheet("Helpers")
            put_text(self.helpers, 1, 1, "Subexpressions moved out of formulas longer than "
                     "Excel's 8,192 characters", NOTE_FONT)
            header(self.helpers, 2, ["Used by", "Value"])
            self.helpers_row = 2
        self.helpers_row += 1
        put_text(self.helpers, self.helpers_row, 1, where)
        put_formula(self.helpers, self.helpers_row, 2, text)
        return f"Helpers!$B${self.helpers_row}"

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

    def evaluation(self, ctx: Context) -> Optional[Evaluation]:
        if any(isinstance(v, AnswerRef) for v in ctx.overrides.values()):
            return None
        merged = {**self.overrides, **ctx.overrides}
        try:
            return self.plan.evaluate(ctx.scenario, merged, self.origins)
        except PlanError:
            return None

    # ---- the whole book ---------------------------------------------------------
    def build(self) -> Workbook:
        from . import checking, solving, tables

        for s in self.wanted:
            self.context(s)
        self.collect_check_contexts()
        tables.sweep_contexts(self)
        solving.collect_contexts(self)
        self.place_contexts()
        self.inputs_sheet()
        self.model_sheet()
        scenarios = self.wb.create_sheet("Scenarios") if len(self.contexts) > 1 else None
        if scenarios is not None:
            self.scenarios_layout(scenarios)
        tables.sweep_sheets(self)
        solving.solve_sheet(self)
        checking.checks_sheet(self)
        if scenarios is not None:
            self.scenarios_fill(scenarios)
        if self.helpers is not None:  # helper cells go last
            self.wb.move_sheet(self.helpers, len(self.wb.sheetnames) - 1 - self.wb.sheetnames.index("Helpers"))
        self.wb.calculation.fullCalcOnLoad = True
        self.wb.properties.creator = "planner"
        self.wb.properties.title = self.plan.title
        self.wb.properties.created = FIXED_TIME
        self.wb.properties.modified = FIXED_TIME
        for name, value in provenance(self.plan).items():
            self.wb.custom_doc_props.append(StringProperty(name=name, value=value))
        return self.wb

    def collect_check_contexts(self) -> None:
        """The columns and solve answers the checks refer to."""
        for check in self.model.checks:
            plain, from_alias = self.check_overrides(check)
            used = self.answers_used(check)
            for s in check_scenarios(self.plan, check):
                for name in used + list(from_alias.values()):
                    need = (self.aliases[alias_base(name)], s, plain)
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
        """The Solve sheet cell of an answer (``ALIAS``) or optimum (``ALIAS.value``), and its display scale."""
        stmt = self.aliases[alias_base(name)]
        row = self.solve_index[(id(stmt), self.context(scenario, dict(plain)).key)]
        col = "F" if name.endswith(".value") else "C"
        ref = f"${col}${row}" if here == "Solve" else f"Solve!${col}${row}"
        return ref, self.answers.unit(name)[0]

    # ---- Inputs -------------------------------------------------------------------------
    def inputs_sheet(self) -> None:
        ws = self.wb.create_sheet("Inputs")
        put_text(ws, 1, 1, self.plan.title, TITLE_FONT)
        row = 2
        for note in self.model.plan.notes:
            put_text(ws, row, 1, note, NOTE_FONT)
            row += 1
        put_text(ws, row, 1, "Edit the orange cells; every other sheet follows. "
                 "`planner import` reads them back.", NOTE_FONT)
        row += 2
        header(ws, row, ["Input", "Value", "Unit", "Description", "Tags", "Constraints"])
        ws.freeze_panes = ws.cell(row=row + 1, column=1)
        inputs = [n for n in self.plan.definition_order() if self.q[n].is_input]
        for name in inputs:
            row += 1
            q = self.q[name]
            put_text(ws, row, 1, name)
            value = display_value(q, self.base.inputs[name])
            c = ws.cell(row=row, column=2, value=value)
            c.style = "Input"
            c.number_format = "General" if q.is_bool or not float(value).is_integer() else "#,##0"
            put_text(ws, row, 3, q.unit_text)
            put_text(ws, row, 4, q.doc)
            put_text(ws, row, 5, ", ".join(q.tags))
            put_text(ws, row, 6, ", ".join(c.span.flat for c in q.definition.constraints))
            if q.doc or q.tags:
                text = (q.doc or "") + ("\n[" + ", ".join(q.tags) + "]" if q.tags else "")
                comment = Comment(ILLEGAL_CHARACTERS_RE.sub("", text.strip()), "planner")
                comment.width, comment.height = 300, 80
                c.comment = comment
            self.define(name, f"Inputs!$B${row}")
            self.validation(ws, q, f"B{row}")
        widths(ws, {"A": 26, "B": 16, "C": 10, "D": 60, "E": 28, "F": 34})

    def define(self, name: str, target: str) -> None:
        xl = self.names[name]
        self.wb.defined_names[xl] = DefinedName(xl, attr_text=target)

    def validation(self, ws, q, cell: str) -> None:
        """Constraints as data validation: a TRUE/FALSE list, whole/decimal bounds, or a custom formula."""
        shown = ", ".join(c.span.flat for c in q.definition.constraints)
        if q.is_bool:
            dv = DataValidation(type="list", formula1='"TRUE,FALSE"', allow_blank=False)
            shown = "true or false"
        else:
            conditions = [c.condition for c in q.definition.constraints if c.kind == "condition"]
            if not conditions and not q.integer:
                return
            dv = self._bounds_validation(q, conditions) or self._custom_validation(q, conditions, cell)
            if dv is None:
                return
        dv.error = ILLEGAL_CHARACTERS_RE.sub("", f"{q.name}: {shown}")[:255]
        dv.errorTitle = "planner constraint"
        dv.showErrorMessage = True
        dv.errorStyle = "stop"
        ws.add_data_validation(dv)
        dv.add(cell)

    def _bounds_validation(self, q, conditions) -> Optional[DataValidation]:
        """whole/decimal with between/>=/<= when the constraints are plain bounds on the input."""
        if not all(_is_plain_bound(c, q.name, self.plan.analyzer) for c in conditions):
            return None
        lo, hi = q.lower, q.upper
        scale = q.display.scale
        kind = "whole" if q.integer else "decimal"
        if q.integer:
            lo_v = None if lo is None else (math.ceil(lo.value / scale) if lo.inclusive else math.floor(lo.value / scale) + 1)
            hi_v = None if hi is None else (math.floor(hi.value / scale) if hi.inclusive else math.ceil(hi.value / scale) - 1)
            lo_t = None if lo_v is None else str(lo_v)
            hi_t = None if hi_v is None else str(hi_v)
            lo_inc = hi_inc = True
        else:
            lo_t = None if lo is None else number(lo.value / scale)
            hi_t = None if hi is None else number(hi.value / scale)
            lo_inc = lo is None or lo.inclusive
            hi_inc = hi is None or hi.inclusive
        if lo_t is not None and hi_t is not None:
            if not (lo_inc and hi_inc):
                return None
            return DataValidation(type=kind, operator="between", formula1=lo_t, formula2=hi_t)
        if lo_t is not None:
            return DataValidation(type=kind, operator="greaterThanOrEqual" if lo_inc else "greaterThan", formula1=lo_t)
        if hi_t is not None:
            return DataValidation(type=kind, operator="lessThanOrEqual" if hi_inc else "lessThan", formula1=hi_t)
        # integer without bounds: any whole number
        return DataValidation(type="whole", operator="between", formula1="-1E+15", formula2="1E+15")

    def _custom_validation(self, q, conditions, cell: str) -> Optional[DataValidation]:
        """Any other condition as a custom rule; None past Excel's 255 characters for one (the
        constraint is still checked by planner, and shown in the Constraints column)."""
        refs = self.refs(self.base_context)
        refs[self.sym[q.name]] = in_base(cell, q.display.scale)
        printer = ExcelPrinter(refs, self.bools)
        parts = [printer.doprint(self.plan.converter.expr(c)) for c in conditions]
        if q.integer:
            parts.insert(0, f"INT({cell})={cell}")
        text = parts[0] if len(parts) == 1 else "AND(" + ",".join(parts) + ")"
        if len(text) > MAX_VALIDATION:
            return None
        return DataValidation(type="custom", formula1=text)

    # ---- Model -----------------------------------------------------------------------------
    def model_sheet(self) -> None:
        ws = self.wb.create_sheet("Model")
        put_text(ws, 1, 1, self.plan.title, TITLE_FONT)
        put_text(ws, 2, 1, "Every figure is a live formula over the named inputs, in its display unit, "
                 "in dependency order.", NOTE_FONT)
        row = 3
        header(ws, row, ["Quantity", "Value", "Unit", "Description", "Tags", "Formula (as written)"])
        ws.freeze_panes = ws.cell(row=row + 1, column=1)
        refs = self.refs(self.base_context)
        for name in self.derived_order():
            row += 1
            q = self.q[name]
            put_text(ws, row, 1, name)
            scale = Fraction(1) if q.is_bool else q.display.scale
            text = self.formula(self.plan.exprs[name], refs, scale, f"Model: {name}")
            put_formula(ws, row, 2, text, number_format(self.base.display(name)))
            put_text(ws, row, 3, q.unit_text)
            put_text(ws, row, 4, q.doc)
            put_text(ws, row, 5, ", ".join(q.tags))
            put_text(ws, row, 6, q.formula)
            self.define(name, f"Model!$B${row}")
        widths(ws, {"A": 30, "B": 16, "C": 10, "D": 60, "E": 34, "F": 70})

    # ---- Scenarios ------------------------------------------------------------------------
    def scenarios_layout(self, ws) -> None:
        """Fix rows and columns first: other sheets refer to these cells."""
        inputs = [n for n in self.plan.definition_order() if self.q[n].is_input]
        row = 5
        for name in inputs + self.derived_order():
            self.rows[name] = row
            row += 1

    def scenarios_fill(self, ws) -> None:

        put_text(ws, 1, 1, "Scenarios", TITLE_FONT)
        put_text(ws, 2, 1, "One column per scenario: inputs it sets are values (edit them here; `planner import` "
                 "reads them back for that scenario), the others follow the Inputs sheet; every derived figure "
                 "is a formula over its own column.", NOTE_FONT)
        header(ws, 3, ["Quantity", "Unit"])
        put_text(ws, 4, 1, "Description", HEADER_FONT)
        ws.freeze_panes = "C5"
        contexts = [c for c in self.contexts.values() if c.sheet is not None]
        for name, row in self.rows.items():
            put_text(ws, row, 1, name)
            put_text(ws, row, 2, self.q[name].unit_text)
        for ctx in contexts:
            col = ctx.column
            c = put_text(ws, 3, column_index_from_string(col), ctx.label, HEADER_FONT)
            c.fill = HEADER_FILL
            if ctx.scenario is not None and not ctx.overrides:
                put_text(ws, 4, c.column, self.model.scenarios[ctx.scenario].scenario.doc)
            self.fill_column(ws, ctx)
            ws.column_dimensions[col].width = max(14, min(40, len(ctx.label) + 2))
        widths(ws, {"A": 30, "B": 10})

    def place_contexts(self) -> None:
        col = 3
        for ctx in self.contexts.values():
            if ctx is self.base_context:
                continue
            ctx.sheet = "Scenarios"
            ctx.column = get_column_letter(col)
            col += 1

    def fill_column(self, ws, ctx: Context) -> None:
        values, _ = self.plan.input_values(ctx.scenario, {**self.overrides, **ctx.overrides})
        scenario_sets = set(self.model.scenarios[ctx.scenario].overrides) if ctx.scenario else set()
        ev = self.evaluation(ctx)
        col = column_index_from_string(ctx.column)
        refs, helper_refs = self.refs(ctx, ws.title), self.refs(ctx)  # once per column, not per row
        for name in self.rows:
            q = self.q[name]
            row = self.rows[name]
            if q.is_input:
                own = name in ctx.overrides or (name in scenario_sets and name not in self.overrides)
                answer = ctx.overrides.get(name)
                if isinstance(answer, AnswerRef):  # `with x = ALIAS`: the live answer, in x's unit
                    ref, scale = self.answer_cell(answer.alias, answer.scenario, dict(answer.plain), ws.title)
                    factor = scale / q.display.scale
                    put_formula(ws, row, col, f"={ref}" + ("" if factor == 1 else f"*{number(factor)}"))
                elif own:
                    c = ws.cell(row=row, column=col, value=display_value(q, values[name]))
                    c.style = "Input"
                else:
                    put_formula(ws, row, col, "=" + self.names[name])
                continue
            scale = Fraction(1) if q.is_bool else q.display.scale
            text = self.formula(self.plan.exprs[name], refs, scale, f"{ctx.label}: {name}", helper_refs)
            put_formula(ws, row, col, text,
                        number_format(ev.display(name)) if ev is not None else None)


def _is_plain_bound(cond: ir.Expr, name: str, analyzer) -> bool:
    """``a <= x < b`` or ``x >= 1`` (and conjunctions): comparisons of the input with constants."""
    if isinstance(cond, ir.Logic) and cond.op is ir.BoolOp.AND:
        return _is_plain_bound(cond.left, name, analyzer) and _is_plain_bound(cond.right, name, analyzer)
    if not isinstance(cond, ir.Compare):
        return False
    for i, op in enumerate(cond.ops):
        if op not in (ir.CmpOp.LT, ir.CmpOp.LE, ir.CmpOp.GT, ir.CmpOp.GE):
            return False
        left, right = cond.operands[i], cond.operands[i + 1]
        mine = [o for o in (left, right) if isinstance(o, ir.Name) and o.name == name]
        other = right if mine and mine[0] is left else left
        if len(mine) != 1:
            return False
        try:
            if analyzer.infer_strict(other).const is None:
                return False
        except PlanError:
            return False
    return True


# ---- saving -------------------------------------------------------------------

def to_bytes(wb: Workbook) -> bytes:
    """Serialise with fixed timestamps, so the same plan gives the same bytes."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        ExcelWriter(wb, archive).save()
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o600 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def workbook_bytes(plan: Plan, scenarios: Optional[Sequence[str]] = None, overrides: Optional[Mapping] = None,
                   origins: Optional[Mapping] = None, solve_results: Optional[Sequence] = None) -> bytes:
    """The live workbook for ``plan`` as .xlsx bytes.

    ``scenarios`` picks the scenario columns (default: all; columns that
    checks need are added); ``overrides`` (from ``--set``) change the input
    values written on the Inputs sheet.
    """
    book = Book(plan, scenarios, overrides, origins, solve_results)
    return to_bytes(book.build())
