"""The workbook's shared state and style: what every sheet builder imports.

:class:`Book` holds the plan, its evaluation as written, the Excel names,
the evaluation contexts (the defined names, or a column of the Scenarios
sheet per scenario and per check ``with`` context), and resolves a
quantity's cell in a context (:meth:`Book.cell`, :meth:`Book.refs`).
The styles (fonts, fills, number formats) and the cell helpers
(:func:`put_text`, which never lets plan text become a formula,
:func:`put_formula`, :func:`header`) live here too, so every sheet looks the
same. Sheet builders (:mod:`.inputs`, :mod:`.derived`, :mod:`.scenarios`,
:mod:`.tables`, :mod:`.solving`, :mod:`.checking`) import this module;
:mod:`.writer` composes them and is imported by none of them.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Optional, Sequence

import sympy as sp
from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font, PatternFill
from openpyxl.workbook.defined_name import DefinedName

from ...compute.evaluation import Evaluation, Plan
from ...language import ir
from ...language.errors import PlanError
from ...questions.checks import check_scenarios
from .names import excel_names, is_cell_like
from .printer import formula, number

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
        """Base-unit text for every quantity's symbol in ``ctx`` (a fresh copy); an answer a formula
        uses (``solve ... as x``, then ``y = 2 * x``) is its cell on the Solve sheet for ``ctx``."""
        key = (ctx.key, here)
        if key not in self._refs:
            out = {}
            for name, q in self.q.items():
                out[self.sym[name]] = self.cell(ctx, name, here) if q.is_bool else in_base(
                    self.cell(ctx, name, here), q.display.scale)
            for name, sym in self.plan.symbols.answers.items():
                stmt = self.aliases.get(alias_base(name))
                if stmt is not None and (id(stmt), ctx.key) in self.solve_index:
                    ref, scale = self.answer_cell(name, ctx.scenario, ctx.overrides, "")  # qualified: formulas move
                    out[sym] = in_base(ref, scale)
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
            put_text(self.helpers, 1, 1, "Subexpressions moved out of formulas longer than Excel's 8,192 "
                     "characters, and the terms of sums over ranges (one cell per value a range can hold)", NOTE_FONT)
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


    def define(self, name: str, target: str) -> None:
        xl = self.names[name]
        self.wb.defined_names[xl] = DefinedName(xl, attr_text=target)
