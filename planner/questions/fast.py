"""Answers from the numeric route first: a ``solve`` question's value without SymPy.

A check needs only an answer's value; its closed form is needed where it is shown (the workbook, the
report, ``explain``, ``planner solve --closed-form``). This module answers ``solve X where lhs = rhs``
and ``solve min/max X where ...`` from the plan's IR compiled by :mod:`planner.compute.numeric`:

- a root: ``lhs - rhs`` on a grid of :data:`GRID` points over ``X``'s declared domain (sampled as the
  Solver's numeric method does: evenly between two bounds, geometrically around the value on an open
  side), monotone on the grid with exactly one sign change (at most one grid point at zero), refined by bisection to adjacent
  floats;
- an integer threshold: the condition at every integer of the declared domain (both bounds required,
  at most :data:`MAX_INTEGERS`), true on exactly one run that reaches the end it looks from,
  the edge verified in exact arithmetic (:class:`planner.compute.exact.ExactEvaluator`) at ``n`` and its
  neighbour (where the condition has no rational value, as over an aggregate: a comparison whose sides
  differ by more than :data:`MARGIN`, relative, in floats at both).

Every answer is then checked by a full evaluation of the plan at it (every constraint). Anything else
(an integer root, a threshold without both bounds, several sign changes, a value that is not finite, a
condition with no rational value, a formula that uses another answer, a maximize) is refused: the
caller falls back to :class:`planner.questions.solve.Solver`, which derives closed forms and reports
the located errors (no root, several roots, not monotone). The fast route never guesses.
"""

from __future__ import annotations

import math
import weakref
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from ..compute.evaluation import Plan
from ..compute.exact import ExactEvaluator, NotRational
from ..compute.numeric import compile_program
from ..language import ir
from ..language.errors import PlanError
from .answer import SolveResult, Verification

GRID = 2001  # grid points over a root's domain
MAX_INTEGERS = 1_000_000  # integers of a threshold's domain evaluated at once
MARGIN = 1e-9  # relative gap between a comparison's sides that floats decide without exact arithmetic
_ORDER = (ir.CmpOp.LT, ir.CmpOp.LE, ir.CmpOp.GT, ir.CmpOp.GE)

_PROGRAMS: "weakref.WeakKeyDictionary[Plan, dict[int, tuple[Any, Any]]]" = weakref.WeakKeyDictionary()


def answer(plan: Plan, stmt, scenario=None, overrides=None, origins=None) -> Optional[Fraction]:
    """The answer of ``stmt`` in base units (exact for a threshold), or None: ask the Solver."""
    found = _answer(plan, stmt, scenario, overrides, origins)
    return None if found is None else found[0]


def result(plan: Plan, stmt, scenario=None, overrides=None, origins=None) -> Optional[SolveResult]:
    """The answer as a :class:`SolveResult` without a closed form (``planner solve --closed-form``
    asks the Solver for one), or None: ask the Solver."""
    found = _answer(plan, stmt, scenario, overrides, origins)
    if found is None:
        return None
    value, verification, method = found
    q = plan.model.quantities[stmt.target]
    shown = float(value / q.display.scale)
    return SolveResult(
        target=stmt.target, mode=stmt.mode, scenario=scenario, value=float(value), display_value=shown,
        unit=q.unit_text, exact=value if stmt.mode != "root" else None, closed_form=None,
        verification=verification, method=method, roots=(float(value),) if stmt.mode == "root" else (),
        statement=stmt, alias=stmt.alias, question=ir.question_text(stmt),
        notes=("closed form not derived (planner solve --closed-form derives it)",))


def _answer(plan: Plan, stmt, scenario, overrides, origins):
    if not isinstance(stmt, ir.Solve) or plan.model.formula_answers:
        return None
    q = plan.model.quantities.get(stmt.target)
    if q is None or q.is_bool:
        return None
    program = _program(plan, stmt)
    if program is None:
        return None
    inputs, _ = plan.input_values(scenario, overrides, origins)
    with np.errstate(all="ignore"):
        try:
            if stmt.mode == "root":
                found = None if q.integer else _root(plan, program, q, inputs, stmt)
            else:
                found = _threshold(plan, program, q, inputs, stmt) if q.integer else None
        except (PlanError, NotRational, ArithmeticError, ValueError, TypeError):
            return None
    if found is None:
        return None
    value, verification, method = found
    try:  # the answer keeps every constraint (its own, and those that depend on it)
        plan.evaluate(scenario, {**(overrides or {}), stmt.target: value}, origins)
    except PlanError:
        return None
    return found


def _program(plan: Plan, stmt):
    cache = _PROGRAMS.setdefault(plan, {})
    key = id(stmt)
    if key in cache and cache[key][0] is stmt:
        return cache[key][1]
    c = stmt.condition
    if stmt.mode == "root":
        if not (isinstance(c, ir.Compare) and len(c.ops) == 1 and c.ops[0] in (ir.CmpOp.EQ, ir.CmpOp.APPROX)):
            program = None
        else:
            outputs = [("__lhs", c.operands[0]), ("__rhs", c.operands[1])]
            program = _compiled(plan, outputs)
    else:
        outputs = [("__cond", c)]
        if isinstance(c, ir.Compare) and len(c.ops) == 1 and c.ops[0] in _ORDER:
            outputs += [("__lhs", c.operands[0]), ("__rhs", c.operands[1])]  # a float margin, see _decided
        program = _compiled(plan, outputs)
    cache[key] = (stmt, program)  # the statement kept alive, so that its id is not reused
    return program


def _compiled(plan: Plan, outputs):
    try:
        return compile_program(plan.model, plan.arguments, outputs)
    except PlanError:
        return None


def _run(plan: Plan, program, inputs, target: str, x) -> tuple:
    return program(plan.args({**inputs, target: x}))


def _runner(plan: Plan, program, inputs, target: str):
    """:func:`_run` at many values of ``target``: the other arguments converted once (a bisection runs
    the program about fifty times)."""
    base = plan.args(inputs)
    at = plan.model.inputs.index(target)

    def run(x) -> tuple:
        args = list(base)
        args[at] = x
        return program(args)
    return run


def _points(q) -> Optional[np.ndarray]:
    """Points over the declared domain (base units), as the Solver's numeric method samples it: evenly
    between two bounds; around the input's value, geometrically out to 1e12 of its size, on an open side."""
    lo = None if q.lower is None else float(q.lower.value)
    hi = None if q.upper is None else float(q.upper.value)
    if lo is not None and hi is not None:
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            return None
        xs = np.linspace(lo, hi, GRID)
        return xs[(0 if q.lower.inclusive else 1):(GRID if q.upper.inclusive else GRID - 1)]
    around = float(q.value or 0)
    m = max(abs(around), abs(lo or 0.0), abs(hi or 0.0), float(q.display.scale))
    steps = np.geomspace(m * 1e-12, m * 1e12, GRID // 2)
    if lo is not None:
        start = lo + (0 if q.lower.inclusive else m * 1e-15)
        return np.concatenate([[start], start + steps])
    if hi is not None:
        stop = hi - (0 if q.upper.inclusive else m * 1e-15)
        return np.concatenate([(stop - steps)[::-1], [stop]])
    return np.concatenate([(around - steps)[::-1], [around], around + steps])


def _root(plan: Plan, program, q, inputs, stmt) -> Optional[Fraction]:
    xs = _points(q)
    if xs is None:
        return None

    run = _runner(plan, program, inputs, stmt.target)

    def f(x):
        lhs, rhs = run(x)
        return np.asarray(lhs, dtype=float) - np.asarray(rhs, dtype=float)

    ys = np.broadcast_to(f(xs), xs.shape)
    if not np.all(np.isfinite(ys)):
        return None
    steps = np.diff(ys)
    if not (np.all(steps >= 0) or np.all(steps <= 0)):  # monotone on the grid, or ask the Solver
        return None
    signs = np.sign(ys)
    if np.count_nonzero(signs == 0) > 1:
        return None
    zero = np.flatnonzero(signs == 0)
    if zero.size:
        return _root_found(stmt, q, float(xs[zero[0]]), 0.0)
    change = np.flatnonzero(signs[:-1] != signs[1:])
    if change.size != 1:
        return None
    i = int(change[0])
    a, b, fa = float(xs[i]), float(xs[i + 1]), float(ys[i])
    for _ in range(200):  # bisection down to adjacent floats
        m = (a + b) / 2
        if m in (a, b):
            break
        fm = float(f(np.array([m]))[0])
        if not math.isfinite(fm):
            return None
        if fm == 0:
            return _root_found(stmt, q, m, 0.0)
        if (fm > 0) == (fa > 0):
            a, fa = m, fm
        else:
            b = m
    fb = float(f(np.array([b]))[0])
    return _root_found(stmt, q, a, fa) if abs(fa) <= abs(fb) else _root_found(stmt, q, b, fb)


def _root_found(stmt, q, x: float, residual: float):
    said = "exactly 0 in floats" if residual == 0 else f"{residual:.3g} (floats; it changes sign at the next float)"
    ver = Verification(text=f"lhs - rhs = {said} at the root",
                       exact=False, residual=residual)
    method = (f"numeric route: {GRID} points over the declared domain, monotone with one sign "
              "change, refined by bisection to adjacent floats")
    return Fraction(x), ver, method


def _threshold(plan: Plan, program, q, inputs, stmt) -> Optional[Fraction]:
    scale = q.display.scale
    lo = hi = None
    if q.lower is not None:
        v = q.lower.value / scale
        lo = math.ceil(v) if (q.lower.inclusive or v.denominator != 1) else int(v) + 1
    if q.upper is not None:
        v = q.upper.value / scale
        hi = math.floor(v) if (q.upper.inclusive or v.denominator != 1) else int(v) - 1
    # the whole domain: without both bounds no finite search shows that the condition does not fail
    # again further on (the Solver finds where it can change, exactly, or says it is not monotone)
    if lo is None or hi is None or hi < lo or hi - lo + 1 > MAX_INTEGERS:
        return None
    windows = [(lo, hi)]
    for first, last in windows:
        ns = np.arange(first, last + 1, dtype=float)
        held = np.broadcast_to(np.asarray(_run(plan, program, inputs, stmt.target, ns * float(scale))[0]), ns.shape)
        if held.dtype != bool:
            return None
        true = np.flatnonzero(held)
        if true.size:
            break
    else:
        return None
    if true[-1] - true[0] + 1 != true.size:  # not one run: the Solver says why
        return None
    if stmt.mode == "min":
        if true[-1] != ns.size - 1:
            return None
        n, neighbor = first + int(true[0]), first + int(true[0]) - 1
    else:
        if true[0] != 0:
            return None
        n, neighbor = first + int(true[-1]), first + int(true[-1]) + 1
    at_n, exact = _verified(plan, program, inputs, stmt, n * scale)
    if at_n is not True:
        return None
    inside = (lo is None or neighbor >= lo) and (hi is None or neighbor <= hi)
    if inside:
        at_neighbor, exact_neighbor = _verified(plan, program, inputs, stmt, neighbor * scale)
        if at_neighbor is not False:
            return None
        exact = exact and exact_neighbor
    word = "fails" if inside else "is outside the domain"
    how = "" if exact else " (decided in floats, the two sides apart by more than a billionth)"
    ver = Verification(text=f"holds at {stmt.target} = {n}, {word} at {neighbor}{how}", exact=exact, holds=True,
                       neighbor=float(neighbor), neighbor_holds=False if inside else None)
    method = (f"numeric route: the condition at every integer from {first} to {last}; the edge checked at n "
              "and its neighbour in exact arithmetic (or by a clear float margin)")
    return n * scale, ver, method


def _verified(plan: Plan, program, inputs, stmt, value: Fraction) -> tuple[Optional[bool], bool]:
    """The condition at ``value`` and whether exact arithmetic decided it: in exact arithmetic; where it
    has no rational value (an aggregate, ``sqrt``...), from floats only when its sides differ by more than
    :data:`MARGIN` (relative); else None."""
    exact = dict(inputs)
    exact[stmt.target] = value
    if all(isinstance(v, (bool, int, Fraction)) for v in exact.values()):
        try:
            out = ExactEvaluator(plan.model, exact).expr(stmt.condition)
            return (out if isinstance(out, bool) else None), True
        except NotRational:
            pass
    return _decided(plan, program, inputs, stmt, value), False


def _decided(plan: Plan, program, inputs, stmt, value: Fraction) -> Optional[bool]:
    if len(program.outputs) != 3:
        return None
    held, lhs, rhs = (float(v) for v in _run(plan, program, inputs, stmt.target, float(value)))
    if not (math.isfinite(lhs) and math.isfinite(rhs)):
        return None
    if abs(lhs - rhs) <= MARGIN * max(abs(lhs), abs(rhs)):
        return None
    return bool(held)


def questions(plan: Plan) -> list:
    """Every solve/maximize/minimize statement, in file order (as :meth:`Solver.questions`)."""
    return sorted(list(plan.model.solves) + list(plan.model.optimizes), key=lambda s: s.span.start)


class Answers:
    """Question results by name for checks, as :class:`planner.questions.solve.Answers`, from the
    fast route first; the Solver (and SymPy with it) is created only for what the fast route refuses."""

    def __init__(self, plan: Plan, slow=None) -> None:
        """``slow``: the :class:`planner.questions.solve.Answers` to ask what the fast route refuses (one
        the caller keeps for other questions), else one made when first needed."""
        self.plan = plan
        self.statements = {s.alias: s for s in questions(plan) if s.alias}
        self._types: Optional[dict] = None
        self._fast: dict[tuple, Optional[Fraction]] = {}
        self._slow = slow

    @property
    def slow(self):
        if self._slow is None:
            from .solve import Answers as SolverAnswers

            self._slow = SolverAnswers(self.plan)
        return self._slow

    @property
    def types(self) -> dict:
        if self._types is None:
            self._types = self.plan.analyzer.answer_types(self.plan.model)
        return self._types

    def __contains__(self, name: str) -> bool:
        return name in self.types

    def result(self, name: str, scenario=None, overrides=None, origins=None):
        return self.slow.result(name, scenario, overrides, origins)

    def value(self, name: str, scenario=None, overrides=None, origins=None) -> Fraction:
        """The answer (or ``.value``, an optimum) in base units."""
        stmt = self.statements.get(name)
        if stmt is not None and isinstance(stmt, ir.Solve):
            key = (name, scenario, tuple(sorted((k, str(v)) for k, v in (overrides or {}).items())))
            if key not in self._fast:
                self._fast[key] = answer(self.plan, stmt, scenario, overrides, origins)
            if self._fast[key] is not None:
                return self._fast[key]
        return self.slow.value(name, scenario, overrides, origins)

    def unit(self, name: str) -> tuple[Fraction, str]:
        stmt = self.statements.get(name)
        if stmt is not None and isinstance(stmt, ir.Solve):
            q = self.plan.model.quantities[stmt.target]
            return q.display.scale, q.unit_text
        return self.slow.unit(name)
