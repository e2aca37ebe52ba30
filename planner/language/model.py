"""The checked model: what the analysis passes know about each quantity.

Built by :mod:`planner.language.analysis` from the IR; SymPy expressions are attached by
:mod:`planner.compute.symbolic`. Plain data: later stages read it, never mutate it.
"""

from __future__ import annotations

from .lazy import field  # dataclasses.field, for the classes made on first use
from functools import cached_property
import math
from fractions import Fraction

from . import ir
from .lazy import lazy_dataclass as dataclass  # dataclasses.dataclass, made on first use
from .units import Dim, Unit

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional


@dataclass(frozen=True)
class Type:
    """Static type of an expression: a number with a dimension, or a boolean.

    ``dim`` is ``None`` for an exact literal zero, which fits any dimension.
    ``const`` is the exact value (in base units) when the expression is a
    constant.
    """

    kind: str  # "num" | "bool"
    dim: Optional[Dim] = None
    const: Optional[Fraction] = None
    unit: Optional[str] = field(default=None, compare=False)  # as the user wrote it (`%/year`), for messages

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"


@dataclass(frozen=True)
class Bound:
    """One side of an input's domain from its constraints."""

    value: Fraction  # in base units
    inclusive: bool


def whole_numbers(lower: Optional[Bound], upper: Optional[Bound], scale: Fraction) -> tuple[Optional[int], Optional[int]]:
    """The least and greatest whole numbers of a display unit (``scale`` base units each) inside the
    bounds, exactly (an open bound at a whole number leaves that number out); None where unbounded."""
    lo = hi = None
    if lower is not None:
        v = Fraction(lower.value) / scale
        lo = math.ceil(v) if (lower.inclusive or v.denominator != 1) else int(v) + 1
    if upper is not None:
        v = Fraction(upper.value) / scale
        hi = math.floor(v) if (upper.inclusive or v.denominator != 1) else int(v) - 1
    return lo, hi


@dataclass
class Quantity:
    name: str
    definition: ir.Definition
    is_input: bool
    type: Type
    display: Unit
    deps: tuple[str, ...]  # the quantities its formula uses
    # inputs only
    value: Optional[Fraction | bool] = None
    integer: bool = False
    lower: Optional[Bound] = None
    upper: Optional[Bound] = None
    answer_deps: tuple[str, ...] = ()  # question answers its formula uses (`as NAME`), derived only
    per_period: bool = False  # a series over the plan's periods (a value per period), not one figure

    @property
    def is_bool(self) -> bool:
        return self.type.is_bool

    @property
    def dim(self) -> Dim:
        return self.type.dim or Dim()

    @property
    def unit_text(self) -> str:
        return "" if self.is_bool else self.display.text

    @property
    def doc(self) -> Optional[str]:
        return self.definition.doc

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(t.text for t in self.definition.tags)

    @property
    def formula(self) -> str:
        """The formula as the user wrote it."""
        return self.definition.expr.span.flat


@dataclass
class Answer:
    """A question's answer used as a quantity: ``solve x where ... as NAME`` (the value of ``x``),
    ``maximize f over x in ... as NAME`` (the best ``x``) and ``NAME.value`` (the best ``f``).
    Its value comes from answering the question in the scenario being evaluated."""

    name: str
    statement: ir.Statement  # ir.Solve | ir.Optimize
    type: Type
    deps: tuple[str, ...]  # quantities the question uses directly (its input included)
    answer_deps: tuple[str, ...]  # answers the question uses directly
    optimum: bool = False  # ``NAME.value``: the objective at the best value

    @property
    def target(self) -> str:
        s = self.statement
        return s.target if isinstance(s, ir.Solve) else s.over


@dataclass
class ScenarioModel:
    name: str
    scenario: ir.Scenario
    overrides: dict[str, Fraction | bool] = field(default_factory=dict)
    axis: Optional[str] = None
    picks: dict[str, str] = field(default_factory=dict)  # axis -> member, for combinations


@dataclass
class Model:
    plan: ir.PlanIR
    quantities: dict[str, Quantity]
    order: list[str]  # topological: dependencies first
    functions: dict[str, ir.FunctionDef]
    scenarios: dict[str, ScenarioModel]
    axes: dict[str, list[str]]
    units: object  # UnitTable
    sweeps: list[ir.Sweep]
    solves: list[ir.Solve]
    optimizes: list[ir.Optimize]
    checks: list[ir.Check]
    answers: dict[str, Answer] = field(default_factory=dict)
    warnings: list = field(default_factory=list)  # PlanWarning: accepted, but the user should know
    periods: Optional[ir.Periods] = None  # the plan's periods, where it has series

    @cached_property
    def series(self) -> list[str]:
        """The quantities with a value per period (series), in dependency order."""
        return [n for n in self.order if self.quantities[n].per_period]

    @property
    def formula_answers(self) -> list[str]:
        """Answers that formulas use, in dependency order (computed before an evaluation)."""
        used = {a for q in self.quantities.values() for a in q.answer_deps}
        return [a for a in self.answers if a in used]

    def answer_inputs(self, name: str) -> set[str]:
        """The inputs whose values move answer ``name``: every input its question uses, through formulas and
        the answers it uses, except its own input (the question varies that one itself)."""
        a = self.answers[name]
        out: set[str] = set()
        seen: set[str] = set()
        todo = list(a.deps) + list(a.answer_deps)
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in self.answers:
                out |= self.answer_inputs(n)
            elif n in self.quantities:
                q = self.quantities[n]
                if q.is_input:
                    out.add(n)
                todo.extend(q.deps)
                todo.extend(q.answer_deps)
        out.discard(a.target)
        return out

    def answer_cone(self, name: str) -> set[str]:
        """Every quantity and answer that answer ``name`` depends on, directly or not."""
        out: set[str] = set()
        todo = [name]
        while todo:
            n = todo.pop()
            if n in self.answers:
                a = self.answers[n]
                items = list(a.deps) + list(a.answer_deps)
            elif n in self.quantities:
                q = self.quantities[n]
                items = list(q.deps) + list(q.answer_deps)
            else:
                continue
            for d in items:
                if d not in out:
                    out.add(d)
                    todo.append(d)
        return out

    @cached_property
    def inputs(self) -> list[str]:
        """The inputs in dependency order (worked out once: the order and the quantities do not change
        once the model is made, and an evaluation asks several times)."""
        return [n for n in self.order if self.quantities[n].is_input]

    @cached_property
    def rank(self) -> dict[str, int]:
        """Each quantity's place in :attr:`order` (to sort by it without a search per name)."""
        return {n: i for i, n in enumerate(self.order)}

    @cached_property
    def derived(self) -> list[str]:
        """The derived quantities in dependency order (worked out once, as :attr:`inputs`)."""
        return [n for n in self.order if not self.quantities[n].is_input and not self.quantities[n].per_period]
