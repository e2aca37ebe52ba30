"""What a question answers: :class:`SolveResult` and its :class:`Verification`, plain data.

Kept apart from :mod:`planner.questions.solve` so that the numeric route
(:mod:`planner.questions.fast`) can answer without importing SymPy; SymPy is imported only to print
a closed form (or a SymPy number) that a result holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional


def plan_number(value: Fraction) -> str:
    """An exact rational in plan syntax, printed from the IR as every formula planner writes back is
    (:mod:`planner.language.text`): ``3 / 7``, ``0.125``, ``-(22 / 7)``; planner reads it back."""
    from ..language import ir
    from ..language.source import Source, Span
    from ..language.text import formula_text

    span = Span(Source("<number>", ""), 0, 0)
    node = ir.Number(abs(Fraction(value)), None, span)
    return formula_text(ir.Neg(node, span) if value < 0 else node)


@dataclass(frozen=True)
class Verification:
    """How the answer was checked.

    Root modes: ``residual`` is ``lhs - rhs`` at the answer in base units and
    ``relative`` that divided by the size of its terms there
    (:func:`planner.questions.roots.residual`: ``|a| + |b|`` for ``a + b``; not the
    sides' values, which are both about zero at ``profit = 0``). Integer modes: the
    condition at ``n`` (``holds``) and at the neighbour ``n - 1`` (min) or
    ``n + 1`` (max), in display units; ``neighbor_holds`` is None when the
    neighbour is outside the domain. ``exact`` is True when decided with
    exact rationals (algebraic roots: 60 significant digits).
    """

    text: str
    exact: bool = True
    residual: Optional[float] = None
    relative: Optional[float] = None
    holds: Optional[bool] = None
    neighbor: Optional[float] = None
    neighbor_holds: Optional[bool] = None


@dataclass(frozen=True)
class SolveResult:
    """One answer to one question in one scenario. A stable, documented shape.

    * ``target``: the input solved for (``over`` for optimize); ``mode`` is
      ``"root"``, ``"min"``, ``"max"``, ``"maximize"`` or ``"minimize"``.
    * ``value``: the answer in base units (float); ``display_value`` in the
      target's display unit ``unit``; ``exact`` the exact SymPy number when
      known (Integer, Rational or an algebraic ``CRootOf``).
    * ``closed_form``: SymPy expression over the *other* inputs' symbols
      (``plan.symbols``), in base units, whose value is ``value``; for
      integer thresholds it already includes the rounding
      (``ceiling(...)``) and ``boundary`` is the real crossing before it.
      None when there is none; ``closed_form_text`` prints it, ``closed_form_ir`` is it as IR
      nodes (for the printers of the outputs: the report's LaTeX, the workbook).
    * ``verification``: see :class:`Verification`; ``method`` says how the
      answer was found; ``roots``: every root found in the domain (base
      units); ``optimum``: the objective's value at the answer (optimize),
      in base units, and ``optimum_display`` in ``optimum_unit``.
    * ``notes``: anything a reader should know (the polynomial an algebraic
      root solves, ties, an optimum at the edge of the range...).
    """

    target: str
    mode: str
    scenario: Optional[str]
    value: float
    display_value: float
    unit: str
    exact: Any  # a SymPy number, a Fraction (the numeric route's thresholds) or None
    closed_form: Any
    verification: Verification
    method: str
    roots: tuple[float, ...] = ()
    boundary: Any = None
    optimum: Optional[float] = None
    optimum_display: Optional[float] = None
    optimum_unit: str = ""
    statement: Any = None  # ir.Solve | ir.Optimize
    alias: Optional[str] = None
    question: str = ""  # the statement as written
    notes: tuple[str, ...] = ()
    display_form: Any = None  # the closed form in display units (each symbol its shown value)
    form_units: tuple[tuple[str, str], ...] = ()  # (name, display unit) of the target and each symbol with one
    booleans: frozenset[str] = frozenset()  # the plan's true/false quantities (a form's Eq(flag, 1) is `flag`)

    @property
    def closed_form_text(self) -> Optional[str]:
        """The closed form over the other inputs as they are shown (``rate`` in %/year, the answer in its
        own unit), in plan syntax (printed from ``closed_form_ir`` by :mod:`planner.language.text`): with
        each input its displayed figure, a plan's formula of that text is the displayed answer. None when
        there is none, or none the plan language writes (``closed_form_unwritten`` says why)."""
        node = self.closed_form_ir
        if node is None:
            return None
        from ..language.text import formula_text

        return formula_text(node)

    @property
    def exact_text(self) -> Optional[str]:
        """The exact answer in plan syntax (a rational ``a / b``, ``sqrt(2) / 3``), printed from the IR as
        ``closed_form_text`` is; None when there is none, or none the plan language writes (a root of a
        quintic: the notes give its polynomial)."""
        return self._text(self.exact)

    @property
    def boundary_text(self) -> Optional[str]:
        """The closed form of the boundary a threshold sits on, in plan syntax (as ``exact_text``)."""
        return self._text(self.boundary)

    def _text(self, value) -> Optional[str]:
        if value is None:
            return None
        if isinstance(value, (Fraction, int)):
            return plan_number(Fraction(value))
        from ..compute.closed import NoClosedForm, plan_text

        try:
            return plan_text(value, self.booleans)
        except NoClosedForm:
            return None

    @property
    def closed_form_ir(self) -> Any:
        """The closed form as IR nodes (:func:`planner.compute.closed.to_ir`), over the figures as shown;
        None when there is none, or when it holds a function the plan language has not (Lambert W)."""
        return self._written()[0]

    @property
    def closed_form_unwritten(self) -> Optional[str]:
        """Why a closed form SymPy found has no plan text (it uses the Lambert W function); else None."""
        return self._written()[1]

    def _written(self) -> tuple[Any, Optional[str]]:
        form = self.display_form if self.display_form is not None else self.closed_form
        if form is None:
            return None, None
        from ..compute.closed import NoClosedForm, to_ir

        try:
            return to_ir(form, self.booleans), None
        except NoClosedForm as exc:
            return None, str(exc)

    @property
    def label(self) -> str:
        return self.scenario or "base"

    def to_json(self) -> dict[str, Any]:
        v = self.verification
        return {
            "question": self.question, "alias": self.alias, "target": self.target, "mode": self.mode,
            "scenario": self.label, "value": self.display_value, "unit": self.unit, "base_value": self.value,
            "exact": self.exact_text,
            "closed_form": self.closed_form_text,
            "closed_form_units": dict(self.form_units) if self.closed_form_text is not None else {},
            "boundary": self.boundary_text,
            "method": self.method, "roots": list(self.roots),
            "optimum": self.optimum_display, "optimum_unit": self.optimum_unit,
            "verification": {"text": v.text, "exact": v.exact, "residual": v.residual, "relative": v.relative,
                             "holds": v.holds, "neighbor": v.neighbor, "neighbor_holds": v.neighbor_holds},
            "notes": list(self.notes),
            "line": self.statement.span.line if self.statement is not None else None,
        }


def least_hint(target: str, condition, interval: bool = False) -> str:
    """What to ask where an equation has no single root: where its sides never meet, the least value where
    one side reaches the other (``solve min x where lhs >= rhs``); where they meet on a whole interval
    (``interval``), the least value where the equation holds."""
    text = " ".join(condition.span.flat.split())
    if interval:
        return f"`solve min {target} where {text}` is the least `{target}` where it holds (`solve max` the greatest)"
    sides = getattr(condition, "operands", None)
    lhs, rhs = (" ".join(o.span.flat.split()) for o in sides) if sides and len(sides) == 2 else ("LHS", "RHS")
    return (f"`solve min {target} where {lhs} >= {rhs}` is the least `{target}` where the left side reaches the "
            f"right (`solve max` the greatest)")


def objective_unit(plan, objective, t) -> tuple[str, Fraction]:
    """The unit an objective is shown in (its own quantity's, or its type's) and that unit's scale."""
    from ..language import ir

    if isinstance(objective, ir.Name) and objective.name in plan.model.quantities:
        q = plan.model.quantities[objective.name]
        return q.unit_text, q.display.scale
    from ..language.analysis import unit_of
    from ..language.errors import PlanError
    from ..language.lower import unit_from_text
    from ..language.source import Source
    from ..language.units import canonical_text

    if getattr(t, "unit", None) and t.dim is not None and not t.dim.dimensionless:  # `-t`: t's own unit
        try:
            unit = unit_of(unit_from_text(t.unit, Source("unit", t.unit), 0), plan.model.units)
        except PlanError:
            unit = None
        if unit is not None and unit.dim == t.dim:
            return t.unit, unit.scale
    return (canonical_text(t.dim) if t.dim is not None else ""), Fraction(1)
