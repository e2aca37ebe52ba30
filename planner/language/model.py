"""The checked model: what the analysis passes know about each quantity.

Built by :mod:`planner.language.analysis` from the IR; SymPy expressions are attached by
:mod:`planner.compute.symbolic`. Plain data: later stages read it, never mutate it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from . import ir
from .units import Dim, Unit


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

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"


@dataclass(frozen=True)
class Bound:
    """One side of an input's domain from its constraints."""

    value: Fraction  # in base units
    inclusive: bool


@dataclass
class Quantity:
    name: str
    definition: ir.Definition
    is_input: bool
    type: Type
    display: Unit
    deps: tuple[str, ...]
    # inputs only
    value: Optional[Fraction | bool] = None
    integer: bool = False
    lower: Optional[Bound] = None
    upper: Optional[Bound] = None

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

    @property
    def inputs(self) -> list[str]:
        return [n for n in self.order if self.quantities[n].is_input]

    @property
    def derived(self) -> list[str]:
        return [n for n in self.order if not self.quantities[n].is_input]
