"""Every answer from the numeric route: a ``solve`` question's value, or why it has none, without SymPy.

A check needs only an answer's value; its closed form is needed where it is shown (the workbook, the
report, ``explain``, ``planner solve --closed-form``), and only there is the Solver
(:class:`planner.questions.solve.Solver`, SymPy) asked, for a bounded time. This module answers
``solve X where lhs = rhs`` and ``solve min/max X where ...`` from the plan's IR compiled by
:mod:`planner.compute.numeric`:

- a root: ``lhs - rhs`` on a grid of :data:`GRID` points over ``X``'s declared domain (evenly between
  two bounds, geometrically around the value on an open side); each sign change refined by bisection
  to adjacent floats (a jump across zero is no root), the grid's zeros, and the points where the sides
  touch without crossing (:data:`TOUCH`); an integer input's root must be whole (exactly);
- an integer threshold: the condition at every integer of the declared domain when it has both bounds
  and at most :data:`MAX_INTEGERS`; otherwise (one bound, or none) a galloping search: every integer
  within :data:`DENSE` of each bound and of the input's value, and steps doubling from the value out to
  the bounds (or to 2**53, where floats stop counting integers), the edge bisected; true on exactly one
  run that reaches the end it looks from, the edge settled in exact arithmetic
  (:class:`planner.compute.exact.ExactEvaluator`) at ``n`` and its neighbour (where the condition has
  no rational value, as over an aggregate: by a float margin of :data:`MARGIN`, else in floats, said);
- the least (greatest) real value where a condition holds (``solve min X`` of an ``X`` not declared
  integer): :func:`_real_threshold`.

Every answer is then checked by a full evaluation of the plan at it (every constraint; a root that
breaks one is left out, noted). No root, several, a stretch of roots, a condition that is not monotone,
no smallest, an answer the condition uses that moves with the question's own input: located errors,
with the values that show them. The numeric route never guesses. A ``maximize`` or ``minimize`` is
:func:`planner.questions.optimum.optimum`'s.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import replace
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from ..compute.evaluation import Plan
from ..compute.exact import ExactEvaluator, NotRational
from ..compute.numeric import compile_program
from ..language import ir
from ..compute.evaluation import format_value
from ..compute.numbers import answer_style, apart, figure, interval, significant
from ..language.errors import (ConstraintError, KindError, Label, MultipleRootsError, NoRootError, NotMonotoneError,
                               PlanError, SolveError)
from ..language.limits import within
from ..language.model import whole_numbers
from .answer import SolveResult, Verification, least_hint
from .optimum import optimum

GRID = 2001  # grid points over a root's domain
MAX_INTEGERS = 1_000_000  # integers of a threshold's domain evaluated at once
MARGIN = 1e-9  # relative gap between a comparison's sides that floats decide without exact arithmetic
FORM_WAIT = 20.0  # seconds a closed form is waited for (wall clock); then the numeric answer stands, saying so
_ORDER = (ir.CmpOp.LT, ir.CmpOp.LE, ir.CmpOp.GT, ir.CmpOp.GE)

_PROGRAMS: "weakref.WeakKeyDictionary[Plan, dict[int, tuple[Any, Any]]]" = weakref.WeakKeyDictionary()


def answer(plan: Plan, stmt, scenario=None, overrides=None, origins=None) -> Fraction:
    """The answer of ``stmt`` in base units (exact for a threshold); raises its located PlanError."""
    return _answer(plan, stmt, scenario, overrides, origins)[0]


def result(plan: Plan, stmt, scenario=None, overrides=None, origins=None) -> SolveResult:
    """The answer as a :class:`SolveResult` without a closed form (``planner solve --closed-form``
    asks the Solver for one); raises its located PlanError."""
    value, verification, method, *more = _answer(plan, stmt, scenario, overrides, origins)
    q = plan.model.quantities[stmt.target]
    shown = float(value / q.display.scale)
    return SolveResult(
        target=stmt.target, mode=stmt.mode, scenario=scenario, value=float(value), display_value=shown,
        unit=q.unit_text, exact=value if stmt.mode != "root" and q.integer else None, closed_form=None,
        verification=verification, method=method, roots=(float(value),) if stmt.mode == "root" else (),
        statement=stmt, alias=stmt.alias, question=ir.question_text(stmt),
        notes=(*(more[0] if more else ()), "closed form not derived (planner solve --closed-form derives it)"
               if stmt.mode == "root" or q.integer else NO_FORM_REAL))


def _answer(plan: Plan, stmt, scenario, overrides, origins) -> tuple:
    q = plan.model.quantities[stmt.target]
    if q.is_bool:
        raise KindError(f"`{stmt.target}` is true/false; `solve` is for numbers only", stmt.target_span,
                        hint=f"evaluate with `--set {stmt.target}=true` and `--set {stmt.target}=false` instead")
    used = _used_answers(plan, stmt, scenario, overrides, origins)
    program = _program(plan, stmt)
    inputs, _ = plan.input_values(scenario, overrides, origins)
    inputs = {**inputs, **used}  # (the program's arguments: inputs, then the answers its formulas use)
    where = scenario or True  # (truthy: the scenario's name, said in the errors' notes)

    def broken(value) -> Optional[PlanError]:  # why the plan does not hold at an answer (None: it holds)
        answers = {**used, **({stmt.alias: value} if stmt.alias in plan.model.formula_answers else {})}
        return _broken(plan, stmt, q, value, scenario, {**(overrides or {}), stmt.target: value}, origins, answers)
    with np.errstate(all="ignore"):
        try:
            if stmt.mode == "root":
                found = _root(plan, program, q, inputs, stmt, where, broken)
            else:
                found = (_threshold(plan, program, q, inputs, stmt, where) if q.integer else
                         _real_threshold(plan, program, q, inputs, stmt, where))
        except SolveError:
            raise
        except (NotRational, ArithmeticError, ValueError, TypeError) as err:
            raise SolveError(f"could not evaluate `{_cond(stmt)}` over `{q.name}`'s domain ({err})",
                             stmt.condition.span, notes=_where(where),
                             hint=f"planner eval --set {q.name}=... shows the plan at one value") from None
    if stmt.mode == "root":
        return found  # (every root was checked against the plan: the others are left out, noted)
    error = broken(found[0])
    if error is not None:
        raise error
    return found


def _reached(plan: Plan, expr) -> set[str]:
    """The quantities and answers ``expr`` uses, in itself, through the formulas and the user functions
    it uses, and through the answers those use (walked on the IR: no SymPy)."""
    model = plan.model
    seen: set[str] = set()
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, str):
            if node in seen:
                continue
            seen.add(node)
            q = model.quantities.get(node)
            if q is not None:
                todo.extend(q.deps)
                todo.extend(q.answer_deps)
            continue
        for n in ir.walk(node):
            if isinstance(n, ir.Name):
                todo.append(n.name)
            elif isinstance(n, ir.Call) and n.func in model.functions and n.func + "()" not in seen:
                seen.add(n.func + "()")
                todo.append(model.functions[n.func].body)
    return {n for n in seen if n in model.quantities or n in model.answers}


def _used_answers(plan: Plan, stmt, scenario, overrides, origins) -> dict:
    """The answers ``stmt``'s condition uses, in itself or through the formulas it uses, each from the
    one door (:class:`Answers`) in this scenario with these overrides: exact (a Fraction) where known,
    else a float. One moved by ``stmt``'s own input (it would be solved again at each value), or a
    condition its input does not move, is a located error; so is an answer used that has none."""
    model = plan.model
    reached = _reached(plan, stmt.condition)
    names = sorted(n for n in reached if n in model.answers)
    for name in names:
        if name == stmt.alias or stmt.target in model.answer_inputs(name.removesuffix(".value")):
            raise SolveError(
                f"`{_cond(stmt)}` uses the answer `{name}`, which changes with `{stmt.target}` itself",
                stmt.condition.span, label=f"through `{name}`", notes=_where(scenario),
                hint=f"planner solves one question at a time: `{name}` would have to be solved again at every "
                     f"`{stmt.target}`; write its condition into this one instead")
    if stmt.target not in reached:
        raise SolveError(f"`{_cond(stmt)}` does not depend on `{stmt.target}`", stmt.condition.span,
                         label=f"`{stmt.target}` does not change this",
                         hint="solve for an input that the condition uses (directly or through formulas)")
    out: dict = {}
    for name in names:
        v = plan.answer_source.value(name, scenario, overrides, origins)
        out[name] = v if isinstance(v, Fraction) else float(v)
    return out


def _broken(plan: Plan, stmt, q, value, scenario, overrides, origins, answers) -> Optional[PlanError]:
    """Why the plan evaluated in full at an answer does not hold (a constraint broken there, its own or
    one that depends on it; a figure without a value), as a located error; None where it holds. The
    compiled program first; the located evaluation (:meth:`Plan.evaluate`) only where a figure is not
    finite, except a ``first`` that found nothing, the plan's stated "never" (telling a "never" from an
    error inside it walks every term: seconds on a monthly plan, at every answer)."""
    try:
        inputs, _ = plan.input_values(scenario, overrides, origins)
        raw = plan.run_compiled(inputs, answers)
    except PlanError as err:
        return err
    shown = format_value(float(value / q.display.scale), q.unit_text)
    model = plan.model

    def elsewhere(expr) -> bool:  # uses an answer not given (an optimum over this answer...): not asked here
        return any(n in model.answers and n.removesuffix(".value") not in answers and n not in answers
                   for n in _reached(plan, expr))
    for i, (name, c) in enumerate(plan._constraints):
        if bool(np.all(raw[f"__constraint{i}"])) or (model.formula_answers and elsewhere(c.condition)):
            continue
        if q.name not in _reached(plan, c.condition):  # broken whatever the answer: the plan's own error
            try:
                plan.evaluate(scenario, {k: v for k, v in overrides.items() if k != q.name}, origins)
            except PlanError as err:
                return err
        owner = plan.model.quantities[name]
        at = "" if name == q.name or owner.is_bool else \
            f" (`{name}` = {format_value(float(raw[name]) / float(owner.display.scale), owner.unit_text)})"
        return ConstraintError(
            f"constraint violated at the answer: `{c.condition.span.flat}` does not hold at `{q.name}` = {shown}{at}",
            c.span, label="this constraint", labels=[Label(stmt.condition.span, f"solved for `{q.name}` here")],
            notes=_where(scenario), hint=f"no `{q.name}` that answers the question keeps this constraint; check "
                                         "the inputs or the constraint")
    quantities = plan.model.quantities
    for name in plan.model.derived:
        v = raw[name]
        if isinstance(v, (bool, np.bool_)) or quantities[name].is_bool or math.isfinite(float(v)):
            continue
        expr = quantities[name].definition.expr
        if isinstance(expr, ir.Aggregate) and expr.op is ir.AggOp.FIRST or (model.formula_answers and elsewhere(expr)):
            continue
        if not plan.model.formula_answers:  # (else the located evaluation would ask for this very answer)
            try:
                plan.evaluate(scenario, overrides, origins)
            except PlanError as err:
                return err
            continue
        return SolveError(f"`{name}` has no value at the answer `{q.name}` = {shown}", stmt.condition.span,
                          notes=_where(scenario), hint=f"planner eval --set {q.name}=... shows what happens there")
    return None


def _program(plan: Plan, stmt):
    cache = _PROGRAMS.setdefault(plan, {})
    key = id(stmt)
    if key in cache and cache[key][0] is stmt:
        return cache[key][1]
    c = stmt.condition
    if stmt.mode == "root":
        if not (isinstance(c, ir.Compare) and len(c.ops) == 1 and c.ops[0] in (ir.CmpOp.EQ, ir.CmpOp.APPROX)):
            raise SolveError(f"`solve {stmt.target} where ...` needs an equation `lhs = rhs`, got `{_cond(stmt)}`",
                             c.span, hint=f"for the least `{stmt.target}` where it holds write `solve min "
                                          f"{stmt.target} where {_cond(stmt)}` (`solve max` for the greatest)")
        program = _compiled(plan, [("__lhs", c.operands[0]), ("__rhs", c.operands[1])])
    else:
        outputs = [("__cond", c)]
        for i, (lhs, rhs) in enumerate(_sides(plan, c) or ()):  # float margins, see _decided
            outputs += [(f"__lhs{i}", lhs), (f"__rhs{i}", rhs)]
        program = _compiled(plan, outputs)
    cache[key] = (stmt, program)  # the statement kept alive, so that its id is not reused
    return program


def _compiled(plan: Plan, outputs):
    """The outputs as one program over the plan's arguments, then the answers the outputs name
    themselves (``solve x where y(x) = target_price``: no formula uses that answer)."""
    model = plan.model
    direct = sorted({n.name for _, e in outputs for n in ir.free_names(e)
                     if n.name in model.answers and n.name not in model.formula_answers})
    return compile_program(model, plan.arguments + direct, outputs)


def _args(plan: Plan, program, values) -> list:
    """The program's arguments from ``values`` (inputs and the answers it uses, by name)."""
    out = plan.args(values, values)
    out.extend(np.float64(values[a]) for a in program.inputs[len(out):])
    return out


def _run(plan: Plan, program, inputs, target: str, x) -> tuple:
    return program(_args(plan, program, {**inputs, target: x}))  # (``inputs`` holds the answers used too)


def _runner(plan: Plan, program, inputs, target: str):
    """:func:`_run` at many values of ``target``: the other arguments converted once (a bisection runs
    the program about fifty times)."""
    base = _args(plan, program, inputs)
    at = plan.model.inputs.index(target)

    def run(x) -> tuple:
        args = list(base)
        args[at] = x
        return program(args)
    return run


def _points(q) -> Optional[np.ndarray]:
    """Points over the declared domain (base units), as :meth:`planner.questions.ranges.Domain.sample` (the
    workbook's search) has them: evenly between two bounds; around the input's value, geometrically out
    to 1e12 of its size, on an open side."""
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


def _root(plan: Plan, program, q, inputs, stmt, where, broken) -> tuple:
    """The one root in the domain at which the plan holds: the sign changes of ``lhs - rhs`` on the grid
    (:func:`_points`) narrowed by bisection to adjacent floats (a change that is a jump, not a root, left
    out), the grid's zeros, and the points where the sides touch without crossing (a least ``|lhs - rhs|``
    within :data:`TOUCH` of the sides' size). Roots at which ``broken`` finds the plan does not hold are
    left out, noted. No root, several, or a stretch of roots: located errors. An integer input's root
    must be a whole number."""
    xs = _points(q)
    if xs is None:
        raise SolveError(f"`{q.name}`'s declared domain {_domain_text(q)} is empty", stmt.condition.span,
                         notes=_where(where))
    run = _runner(plan, program, inputs, stmt.target)

    def sides(x):
        lhs, rhs = run(x)
        return (np.broadcast_to(np.asarray(lhs, dtype=float), np.shape(x)),
                np.broadcast_to(np.asarray(rhs, dtype=float), np.shape(x)))

    def f(x):
        lhs, rhs = sides(x)
        return lhs - rhs

    lhs, rhs = sides(xs)
    ys = lhs - rhs
    finite = np.isfinite(ys)
    if not finite.any():
        raise SolveError(f"`{_cond(stmt)}` has no value anywhere in {_domain_text(q)}", stmt.condition.span,
                         notes=_where(where), hint=f"planner eval --set {q.name}=... shows what happens there")
    zero = finite & (ys == 0)
    if np.any(zero[1:] & zero[:-1]):  # sides equal on a stretch of neighbouring points
        raise _no_single_root(plan, q, stmt, [float(x) for x in xs[zero]], (float(xs[0]), float(ys[0])),
                              (float(xs[-1]), float(ys[-1])), where, np.flatnonzero(zero).tolist())
    found: list[tuple[float, float, bool]] = [(float(xs[i]), 0.0, False) for i in np.flatnonzero(zero)]  # (x, f, touch)
    jumps: list[tuple] = []
    size = float(np.max(np.abs(ys[finite])))
    for i in np.flatnonzero(finite[:-1] & finite[1:] & (np.sign(ys[:-1]) * np.sign(ys[1:]) < 0)):
        x, fx = _bisect(f, float(xs[i]), float(xs[i + 1]), float(ys[i]))
        if x is None:
            continue
        beside = float(np.nextafter(x, float(xs[i + 1]) if (fx > 0) == (ys[i] > 0) else float(xs[i])))
        other = float(f(np.array([beside]))[0])
        if fx != 0 and min(abs(fx), abs(other)) > 1e-6 * size:  # a step across zero, not a root
            jumps.append(sorted([(x, fx), (beside, other)]))
        else:
            found.append((x, fx, False))
    a = np.abs(ys)
    touch = np.flatnonzero(finite[1:-1] & finite[:-2] & finite[2:] & (a[1:-1] < a[:-2]) & (a[1:-1] <= a[2:])
                           & (np.sign(ys[:-2]) == np.sign(ys[1:-1])) & (np.sign(ys[2:]) == np.sign(ys[1:-1]))
                           & (ys[1:-1] != 0)) + 1
    for i in touch[np.argsort(a[touch])][:TOUCHES]:  # near each grid minimum of |lhs - rhs|: its extremum
        sign = float(np.sign(ys[i]))
        x = _least(lambda t: sign * float(f(np.array([t]))[0]), float(xs[i - 1]), float(xs[i + 1]))
        l, r = (float(s[0]) for s in sides(np.array([x])))
        if abs(l - r) <= TOUCH * max(abs(l), abs(r)):  # the sides touch (or cross closer than floats tell apart)
            found.append((x, l - r, True))
        elif sign * (l - r) < 0:  # it dips across zero between two points of the grid: two roots
            found += [(*_bisect(f, float(xs[i - 1]), x, float(ys[i - 1])), False),
                      (*_bisect(f, x, float(xs[i + 1]), l - r), False)]
    found.sort()
    notes, kept, first_error = [], [], None
    scale = q.display.scale
    for x, fx, touch in found:
        value = Fraction(x)
        if q.integer:  # an integer input takes whole values only
            n = round(x / float(scale))
            if abs(x / float(scale) - n) > 1e-9 * max(1, abs(n)) or _verified_root(plan, inputs, stmt, n * scale) is False:
                continue
            value, fx, touch = n * scale, 0.0, False
        error = broken(value)
        if error is not None:
            notes.append(f"{q.name} = {format_value(float(value / scale), q.unit_text)} is left out: {error.message}")
            first_error = first_error or error
            continue
        kept.append((value, fx, touch))
    if q.integer and found and not kept and not notes:
        raise _not_whole(plan, program, inputs, q, stmt, [x for x, *_ in found], where)
    if not kept and notes:
        raise first_error
    if not kept:
        if jumps and not found:
            (low, high), = jumps[:1]
            raise NoRootError(
                f"no `{q.name}` makes `{_cond(stmt)}` hold: its sides jump past each other at {q.name} = "
                f"{format_value(low[0] / float(scale), q.unit_text)} (lhs - rhs from {significant(low[1], 3)} to "
                f"{significant(high[1], 3)} at the next float)", stmt.condition.span, label="a step, not a root",
                notes=_where(where), hint=least_hint(q.name, stmt.condition))
        raise _no_single_root(plan, q, stmt, [], (float(xs[0]), float(ys[0])), (float(xs[-1]), float(ys[-1])), where)
    if len(kept) > 1:
        err = _no_single_root(plan, q, stmt, [float(v) for v, *_ in kept], None, None, where)
        err.notes[:0] = notes
        raise err
    value, fx, touch = kept[0]
    notes += [f"sign change without a root near {q.name} = {format_value(low[0] / float(scale), q.unit_text)} "
              "(a jump)" for low, _ in jumps]
    return (*_root_found(value, fx, touch), tuple(notes))


TOUCH = 1e-12  # |lhs - rhs| at a touching root, relative to the sides' size
TOUCHES = 20  # grid minima of |lhs - rhs| without a sign change looked at for a touching root (or two close ones)


def _least(g, a: float, b: float) -> float:
    """The point of ``[a, b]`` where ``g`` is least (golden-section search down to adjacent floats)."""
    phi = (math.sqrt(5) - 1) / 2
    c, d = b - phi * (b - a), a + phi * (b - a)
    gc, gd = g(c), g(d)
    for _ in range(200):
        if not (a < c < d < b):
            break
        if gc <= gd:
            b, d, gd = d, c, gc
            c = b - phi * (b - a)
            gc = g(c)
        else:
            a, c, gc = c, d, gd
            d = a + phi * (b - a)
            gd = g(d)
    return c if gc <= gd else d


def _verified_root(plan: Plan, inputs, stmt, value: Fraction) -> Optional[bool]:
    """Whether ``lhs = rhs`` at ``value`` in exact arithmetic (None: it has no rational value there)."""
    exact = {**inputs, stmt.target: value}
    if not all(isinstance(v, (bool, int, Fraction)) for v in exact.values()):
        return None
    try:
        out = ExactEvaluator(plan.model, exact).expr(stmt.condition)
    except (NotRational, ZeroDivisionError, ArithmeticError):
        return None
    return out if isinstance(out, bool) else None


def _not_whole(plan: Plan, program, inputs, q, stmt, roots: list[float], where) -> NoRootError:
    """An integer input's equation whose roots are not whole: the threshold questions around the first."""
    scale = float(q.display.scale)
    shown = ", ".join(format_value(r / scale, q.unit_text) for r in roots)
    lhs, rhs = (o.span.flat for o in stmt.condition.operands)
    up = math.ceil(roots[0] / scale)
    l, r = (float(v) for v in _run(plan, program, inputs, stmt.target, up * scale))
    grows, shrinks = (">=", "<=") if l > r else ("<=", ">=")
    declared = next((c for c in q.definition.constraints if c.kind == "integer"), None)
    err = NoRootError(
        f"no integer `{q.name}` makes `{_cond(stmt)}` hold: the root is {q.name} = {shown}, not an integer",
        stmt.condition.span, label="holds only between two integers",
        labels=[Label(declared.span, f"`{q.name}` is declared integer here")] if declared is not None else [],
        notes=_where(where), hint=f"ask for a threshold instead: `solve min {q.name} where {lhs} {grows} {rhs}` "
                                  f"({up}) or `solve max {q.name} where {lhs} {shrinks} {rhs}` ({up - 1})")
    err.roots = roots  # type: ignore[attr-defined]
    return err


def _bisect(f, a: float, b: float, fa: float) -> tuple[Optional[float], float]:
    """A sign change narrowed down to adjacent floats: the end nearer zero and its value. Each run of the
    plan takes 63 points between the ends (a run of many points costs about what a run of one does), and
    the first that is zero or of the other sign is the new end, as 6 steps of bisection. A point without a
    value is stepped over (a pole stays a jump between its neighbours); where neither the points left
    between the ends nor the far end have one, the change has no value to narrow to: None."""
    for _ in range(200):
        xs = np.unique(np.linspace(a, b, 65)[1:-1])
        xs = xs[(xs > a) & (xs < b)]
        if not xs.size:
            break
        ys = np.broadcast_to(f(xs), xs.shape)
        valued = np.isfinite(ys)
        if not valued.any():  # nothing between the ends has a value: a step between them, if both have one
            break
        xs, ys = xs[valued], ys[valued]
        past = np.flatnonzero(((ys > 0) != (fa > 0)) | (ys == 0))
        k = int(past[0]) if past.size else xs.size
        if k < xs.size and ys[k] == 0:
            return float(xs[k]), 0.0
        if k:
            a, fa = float(xs[k - 1]), float(ys[k - 1])
        if k < xs.size:
            b = float(xs[k])
    fb = float(f(np.array([b]))[0])
    if not math.isfinite(fb):
        return None, fb
    return (a, fa) if abs(fa) <= abs(fb) else (b, fb)


def _domain_text(q) -> str:
    scale, unit = q.display.scale, q.unit_text

    def show(bound) -> str:
        return format_value(float(bound.value / scale), unit)
    if q.lower is None and q.upper is None:
        return "all real numbers"
    left = f"{'[' if q.lower.inclusive else '('}{show(q.lower)}" if q.lower is not None else "(-inf"
    right = f"{show(q.upper)}{']' if q.upper.inclusive else ')'}" if q.upper is not None else "inf)"
    return interval(left, right)


def _no_single_root(plan: Plan, q, stmt, roots: list[float], first, last, scenario, zeros=()) -> SolveError:
    """No root, or several, as a located error with the values that show it."""
    where = [f"in scenario `{scenario}`"] if isinstance(scenario, str) else []
    cond = " ".join(stmt.condition.span.flat.split())
    scale = float(q.display.scale)
    if not roots:
        from ..language.units import canonical_text

        t = plan.analyzer.infer_strict(stmt.condition.operands[0])
        unit = canonical_text(t.dim) if t.dim is not None else ""
        notes = [f"at {q.name} = " + (format_value(x / scale, q.unit_text) if bound is not None else
                                      f"{significant(x / scale, 3)}{' ' + q.unit_text if q.unit_text else ''} "
                                      "(far end of the search)") + f": lhs - rhs = {format_value(y, unit)}"
                 for (x, y), bound in ((first, q.lower), (last, q.upper))]
        err = NoRootError(f"no `{q.name}` in {_domain_text(q)} makes `{cond}` hold", stmt.condition.span,
                          label="never holds in the domain", notes=notes + where,
                          hint="the two sides never meet there: check the inputs or widen the domain; "
                               + least_hint(q.name, stmt.condition))
        err.ends = [first, last]  # type: ignore[attr-defined]
        return err
    if len(roots) > 2 and any(b - a == 1 for a, b in zip(zeros, zeros[1:])):  # sides equal on a stretch
        end = ("the end of the search" if roots[-1] == last[0] and q.upper is None else
               format_value(roots[-1] / scale, q.unit_text))
        err = MultipleRootsError(f"`{cond}` holds for every `{q.name}` from about "
                                 f"{format_value(roots[0] / scale, q.unit_text)} to {end} (neighbouring points of "
                                 "the search are all roots)", stmt.condition.span, label="a whole interval of solutions",
                                 notes=where, hint=least_hint(q.name, stmt.condition, interval=True))
        err.roots = roots  # type: ignore[attr-defined]
        err.interval = (roots[0], roots[-1])  # type: ignore[attr-defined]
        return err
    shown = ", ".join(format_value(x / scale, q.unit_text) for x in roots)
    err = MultipleRootsError(f"`{cond}` has {len(roots)} roots for `{q.name}` in {_domain_text(q)}: {shown}",
                             stmt.condition.span, label="several solutions", notes=where,
                             hint=f"narrow the domain of `{q.name}` with a constraint (`where ...`) so one root remains")
    err.roots = roots  # type: ignore[attr-defined]
    return err


def _root_found(x, residual: float, touch: bool) -> tuple:
    said = "exactly 0 in floats" if residual == 0 else f"{significant(residual, 3)} (floats; " + (
        "the sides touch without crossing)" if touch else "it changes sign at the next float)")
    ver = Verification(text=f"lhs - rhs = {said} at the root", exact=False, residual=residual)
    method = (f"numeric route: {GRID} points over the declared domain, each sign change refined by bisection to "
              "adjacent floats (and where the sides touch without crossing), one root")
    return Fraction(x), ver, method


def _threshold(plan: Plan, program, q, inputs, stmt, where) -> tuple:
    """The least (greatest) integer of the declared domain where the condition holds: the condition at
    the integers :func:`_integers` gives, true on one run reaching the end the question looks from, its
    edge bisected, then settled in exact arithmetic at ``n`` and its neighbour (a float can miss the edge
    by one); where the condition has no rational value, by a clear float margin (:func:`_verified`), else
    in floats, said so."""
    scale = q.display.scale
    lo, hi = whole_numbers(q.lower, q.upper, scale)
    if lo is not None and hi is not None and hi < lo:
        raise SolveError(f"no integer in `{q.name}`'s declared domain {_domain_text(q)}", stmt.condition.span,
                         notes=_where(where))
    around = int(round(float((q.value or 0) / scale)))

    def held(ns: np.ndarray) -> np.ndarray:
        out = np.broadcast_to(np.asarray(_run(plan, program, inputs, stmt.target, ns * float(scale))[0]), ns.shape)
        if out.dtype != bool:
            raise TypeError("not a condition")
        return out

    ns = _integers(lo, hi, around)
    if ns is None:
        raise SolveError(f"`{q.name}`'s declared domain {_domain_text(q)} reaches past 2**53, where floats stop "
                         "counting integers", stmt.condition.span, notes=_where(where),
                         hint=f"bound `{q.name}` within +-9,007,199,254,740,992 with a constraint")
    truth = held(ns)
    true = np.flatnonzero(truth)
    one_run = true.size and true[-1] - true[0] + 1 == true.size
    reaches = one_run and (true[-1] == ns.size - 1 if stmt.mode == "min" else true[0] == 0)
    if not reaches:  # never, or not one run reaching the end it looks from
        raise _not_one_run(q, stmt, ns, truth, lo, hi, where, _condition_at(plan, program, inputs, stmt, q, held))
    # the run reaches the end it looks from (the domain's end, or the last point of the doubling search)
    low = stmt.mode == "min"
    i = int(true[0] if low else true[-1])
    if i == (0 if low else ns.size - 1):
        if (lo if low else hi) is None:
            raise SolveError(f"`{_cond(stmt)}` holds for every integer `{q.name}` "
                             + ("down to -inf: there is no smallest" if low else "up to inf: there is no largest"),
                             stmt.condition.span, notes=[f"holds for {q.name} in {int(ns[true[0]])}..{int(ns[true[-1]])}"
                                                         ", as far as floats count integers"] + _where(where),
                             hint=f"bound `{q.name}` {'below' if low else 'above'} with a constraint")
        n = lo if low else hi
    else:
        n, _ = _edge(held, int(ns[i - 1 if low else i + 1]), int(ns[i]))
    n, neighbor, exact, inside = _settled(plan, program, inputs, stmt, q, n, lo, hi, held, where)
    first, last = int(ns[0]), int(ns[-1])
    word = "fails" if inside else "is outside the domain"
    how = {True: "", False: " (decided in floats, the two sides apart by more than a billionth)",
           None: " (decided in floats: the two sides are within a billionth of each other there)"}[exact]
    ver = Verification(text=f"holds at {stmt.target} = {n}, {word} at {neighbor}{how}", exact=exact is True,
                       holds=True, neighbor=float(neighbor), neighbor_holds=False if inside else None)
    every = ns.size == last - first + 1
    searched = (f"the condition at every integer from {first} to {last}" if every else
                f"the condition at {ns.size} integers from {first} to {last} (every one near the ends and near "
                f"{q.name}'s value, doubling steps between), the edge found by bisection")
    method = (f"numeric route: {searched}; the edge checked at n and its neighbour in exact arithmetic "
              "(or by a clear float margin)")
    notes = () if inside else (f"the condition already holds at the {'lower' if low else 'upper'} end of the domain "
                               f"({_domain_text(q)})",)
    return n * scale, ver, method, notes


def _settled(plan: Plan, program, inputs, stmt, q, n: int, lo, hi, held, where) -> tuple:
    """The edge ``n`` the floats found, moved (at most 64 steps) until the condition holds at it and fails
    at its neighbour in exact arithmetic: (n, neighbour, exact: True, False by a clear float margin, None
    in floats only, inside: whether the neighbour is in the domain)."""
    step = 1 if stmt.mode == "min" else -1  # away from the side where the condition fails
    scale = q.display.scale

    def at(k: int) -> tuple[bool, Optional[bool]]:
        got, exact = _verified(plan, program, inputs, stmt, k * scale)
        if got is None and not all(np.all(np.isfinite(np.asarray(v, dtype=float)))
                                   for v in _run(plan, program, inputs, stmt.target, float(k * scale))[1:]):
            raise SolveError(f"`{_cond(stmt)}` has no value at {q.name} = {k}, so the threshold cannot be checked "
                             "there", stmt.condition.span, label="no value", notes=_where(where),
                             hint=f"a division by zero or a value outside a function's domain at {k}; leave it "
                                  f"out of `{q.name}`'s domain with a constraint")
        if got is None:
            return bool(held(np.array([float(k)]))[0]), None
        return got, exact

    for _ in range(64):
        holds, exact_n = at(n)
        if not holds:
            n += step
            if (hi is not None and n > hi) or (lo is not None and n < lo):
                break
            continue
        neighbor = n - step
        if (lo is not None and neighbor < lo) or (hi is not None and neighbor > hi):
            return n, neighbor, exact_n, False
        fails, exact_neighbor = at(neighbor)
        if fails:
            n = neighbor
            continue
        return n, neighbor, (None if None in (exact_n, exact_neighbor) else exact_n and exact_neighbor), True
    raise SolveError(f"could not verify the threshold for `{q.name}` near {n}: the condition's floats and its "
                     "exact values disagree there", stmt.condition.span, notes=_where(where))


DENSE = 4096  # integers evaluated one by one at each end of a threshold's domain and around its value
EXACT_INTEGERS = 2**53  # past this floats do not count every integer


def _integers(lo: Optional[int], hi: Optional[int], around: int) -> Optional[np.ndarray]:
    """The integers a threshold is looked for at (floats): every one of a domain of at most
    :data:`MAX_INTEGERS`; else every one within :data:`DENSE` of either bound and of the input's value,
    and steps doubling from the value out to the bounds (or to +-2**53 on an open side): a galloping
    search, whose edge :func:`_edge` then bisects."""
    if lo is not None and hi is not None and hi - lo + 1 <= MAX_INTEGERS:
        return np.arange(lo, hi + 1, dtype=float)
    bottom = -EXACT_INTEGERS if lo is None else lo
    top = EXACT_INTEGERS if hi is None else hi
    if bottom < -EXACT_INTEGERS or top > EXACT_INTEGERS:
        return None
    around = min(max(around, bottom), top)
    steps = 2 ** np.arange(0, 54, dtype=float)
    parts = [np.arange(around - DENSE, around + DENSE + 1, dtype=float), around + steps, around - steps,
             [float(bottom), float(top)]]
    if lo is not None:
        parts.append(np.arange(lo, lo + DENSE, dtype=float))
    if hi is not None:
        parts.append(np.arange(hi - DENSE + 1, hi + 1, dtype=float))
    ns = np.unique(np.concatenate(parts))
    return ns[(ns >= bottom) & (ns <= top)]


def _condition_at(plan: Plan, program, inputs, stmt, q, held):
    """The condition at integer ``k``: in exact arithmetic where it has a rational value, else in floats."""
    def at(k: int) -> bool:
        got, _ = _verified(plan, program, inputs, stmt, k * q.display.scale)
        return bool(held(np.array([float(k)]))[0]) if got is None else got
    return at


def _edge(held, false_at: int, true_at: int) -> tuple[int, int]:
    """Bisect between an integer where the condition fails and one where it holds: (n, its neighbour)."""
    a, b = false_at, true_at
    while abs(b - a) > 1:
        m = (a + b) // 2
        if bool(held(np.array([float(m)]))[0]):
            b = m
        else:
            a = m
    return b, a


def _real_threshold(plan: Plan, program, q, inputs, stmt, final) -> Optional[tuple]:
    """The least (``solve min``) or greatest (``solve max``) real value of the declared domain where the
    condition holds: the condition at the root's grid (:func:`_points`), on an open side continued by
    doubling out to the largest floats; true on one run reaching the end the question looks from, its
    other edge narrowed to adjacent floats, 31 points a round (the answer holds, the float beside it
    fails). True at every point: the domain's own end (holds everywhere), or no least (greatest) at an
    open or unbounded end; nowhere, on the wrong side of one boundary, on several runs, or without a
    value: located errors, with the boundaries found. The doubling past the grid stops where the plan
    overflows. ``final`` is the scenario's name (or True), for the errors' notes."""
    xs = _points(q)
    if xs is None:
        raise SolveError(f"`{q.name}`'s declared domain {_domain_text(q)} is empty", stmt.condition.span,
                         notes=_where(final))
    top, bottom = float(xs[-1]), float(xs[0])
    doubling = 2.0 ** np.arange(1, 1100)
    with np.errstate(over="ignore"):
        more = [xs] + ([top + abs(top or 1.0) * doubling] if q.upper is None else []) \
            + ([(bottom - abs(bottom or 1.0) * doubling)[::-1]] if q.lower is None else [])
    xs = np.unique(np.concatenate(more))
    xs = xs[np.isfinite(xs) & (np.abs(xs) <= 1e300)]
    run = _runner(plan, program, inputs, stmt.target)
    scale, low = float(q.display.scale), stmt.mode == "min"
    cond, shown = _cond(stmt), (lambda x: format_value(float(x) / scale, q.unit_text))

    def sides(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # the condition, and where a side is 0/0
        out = run(x)
        truth = np.broadcast_to(np.asarray(out[0]), x.shape)
        if truth.dtype != bool:
            raise TypeError("not a condition")
        nan = np.zeros(x.shape, bool)
        for side in out[1:]:
            nan |= np.isnan(np.broadcast_to(np.asarray(side, dtype=float), x.shape))
        return truth, nan

    def held(x: np.ndarray) -> np.ndarray:
        truth, nan = sides(x)
        if nan.any():  # a side that is not a number: the condition has no value there
            raise SolveError(f"`{cond}` has no value at {q.name} = {shown(x[np.flatnonzero(nan)[0]])}",
                             stmt.condition.span, label="no value", notes=_where(final),
                             hint=f"leave such values out of `{q.name}`'s domain with a constraint (`where ...`)")
        return truth

    def edge(i: int) -> tuple[float, float]:  # the boundary between xs[i] and xs[i + 1]: (holds, fails)
        yes, no = (float(xs[i + 1]), float(xs[i])) if truth[i + 1] else (float(xs[i]), float(xs[i + 1]))
        for _ in range(2200):  # 31 points a round (a call costs what one point does): ~11 rounds to adjacent floats
            inner = np.linspace(no, yes, 33)[1:-1]
            inner = inner[(inner != no) & (inner != yes)]
            if not inner.size:
                break
            at = held(inner)
            k = int(np.argmax(at)) if at.any() else inner.size  # the first point from the failing side that holds
            no, yes = (float(inner[k - 1]) if k else no), (float(inner[k]) if k < inner.size else yes)
        return yes, no

    _, nan = sides(xs)  # the doubling past the grid ends where the plan overflows (inf - inf)
    up, down = xs[nan & (xs > top)], xs[nan & (xs < bottom)]
    xs = xs[(xs < (up.min() if up.size else np.inf)) & (xs > (down.max() if down.size else -np.inf))]
    truth = held(xs)
    flips = np.flatnonzero(truth[:-1] != truth[1:])
    searched = f"{q.name} from {shown(xs[0])} to {shown(xs[-1])} searched"
    if not truth.any():
        raise NoRootError(f"no `{q.name}` in {_domain_text(q)} makes `{cond}` hold", stmt.condition.span,
                          label="holds nowhere in the domain", notes=[searched] + _where(final),
                          hint=f"check the inputs, or widen `{q.name}`'s domain")
    edges = [edge(int(i)) for i in flips]
    bounds = [e[0] for e in edges]
    grows, least = ("grows", "least") if low else ("shrinks", "greatest")
    if flips.size > 1 or not truth[-1 if low else 0]:
        err = NotMonotoneError(
            f"`{cond}` changes more than once as `{q.name}` grows: at {q.name} = "
            + ", ".join(shown(b) for b in bounds) if flips.size > 1 else
            f"`{cond}` holds only {'below' if low else 'above'} {q.name} = {shown(bounds[0])}: it does not switch "
            f"from false to true as `{q.name}` {grows}", stmt.condition.span,
            label="several boundaries" if flips.size > 1 else f"fails as `{q.name}` {grows}", notes=_where(final),
            hint=(f"bound `{q.name}` with a constraint so the condition switches once" if flips.size > 1 else
                  f"`solve {'max' if low else 'min'} {q.name}` gives the {'greatest' if low else 'least'} "
                  f"`{q.name}` where it holds"))
        err.roots = bounds  # type: ignore[attr-defined]
        raise err
    end = "lower" if low else "upper"
    if not flips.size:  # holds at every point searched: the domain's own end, if it is one
        bound = q.lower if low else q.upper
        if bound is None or not bound.inclusive:
            raise SolveError(f"`{cond}` holds for every `{q.name}` in {_domain_text(q)} ({searched}): there is "
                             f"no {least}", stmt.condition.span, notes=_where(final),
                             hint=f"bound `{q.name}` {'below' if low else 'above'} with a constraint (`where ...`)")
        value = Fraction(bound.value)
        ver = Verification(text=f"holds at {q.name} = {shown(value)}, the {end} end of the domain, and at every "
                                "point searched", exact=False, holds=True)
        note = f"the condition holds everywhere in the domain ({_domain_text(q)}): the answer is its {end} end"
        return value, ver, _REAL_METHOD.format(n=xs.size), (note,)
    yes, no = edges[0]
    full, beside = apart(Fraction(yes) / Fraction(scale), Fraction(no) / Fraction(scale))  # never one text twice
    answer = figure(float(yes) / scale, q.unit_text, answer_style(float(yes) / scale, q.unit_text, stmt.mode))
    said = answer if answer.split(" ")[0].replace(",", "") == full else f"{answer} ({full})"  # as the answer reads
    ver = Verification(text=f"holds at {q.name} = {said}, fails at the float just {'below' if low else 'above'} "
                            f"it ({beside})", exact=False, holds=True, neighbor=no / scale, neighbor_holds=False)
    return Fraction(yes), ver, _REAL_METHOD.format(n=xs.size), ()


_REAL_METHOD = ("numeric route: the condition at {n} points over the declared domain (doubling out to the largest "
                "floats on an open side), true on one run that reaches the end the question looks from, its edge "
                "narrowed to adjacent floats")


def _cond(stmt) -> str:
    return " ".join(stmt.condition.span.flat.split())


def _where(scenario) -> list[str]:
    return [f"in scenario `{scenario}`"] if isinstance(scenario, str) else []


def _not_one_run(q, stmt, ns: np.ndarray, truth: np.ndarray, lo, hi, scenario, at) -> SolveError:
    """A threshold's condition that never holds, or holds on several runs of the integers searched; each
    run's ends where the search skipped integers bisected (``at``: the condition at an integer, exact where
    it has a rational value), so the runs said are the condition's, not the sampled points'."""
    where = [f"in scenario `{scenario}`"] if isinstance(scenario, str) else []
    cond = " ".join(stmt.condition.span.flat.split())
    domain = f"[{interval('-inf' if lo is None else significant(lo), 'inf' if hi is None else significant(hi))}]"
    if not truth.any():
        return NoRootError(f"no integer `{q.name}` in {domain} makes `{cond}` hold", stmt.condition.span,
                           label="never holds in the domain", notes=where)
    runs: dict[bool, list[str]] = {True: [], False: []}
    edges = np.flatnonzero(truth[1:] != truth[:-1])
    cuts = [_cut(at, int(ns[i]), int(ns[i + 1]), bool(truth[i])) for i in edges]  # (last of a run, first of next)
    for j, (a, b) in enumerate(zip(np.concatenate([[0], edges + 1]), np.concatenate([edges, [truth.size - 1]]))):
        # (the search's open end: as far as it goes)
        first = "-inf" if a == 0 and lo is None else str(cuts[j - 1][1] if j else int(ns[a]))
        last = "inf" if b == truth.size - 1 and hi is None else str(cuts[j][0] if j < len(cuts) else int(ns[b]))
        runs[bool(truth[a])].append(first if first == last else f"{first}..{last}")
    other = "max" if stmt.mode == "min" else "min"
    return NotMonotoneError(
        f"`{cond}` is not monotone in `{q.name}`: it does not switch once from false to true "
        f"{'as it grows' if stmt.mode == 'min' else 'as it shrinks'}",
        stmt.condition.span, label="changes more than once", notes=[f"holds for {q.name} in " + ", ".join(runs[True][:6])]
        + ([f"fails for {q.name} in " + ", ".join(runs[False][:6])] if runs[False] else []) + where, hint=(f"`solve {other} {q.name}` if the condition holds below a threshold; or bound `{q.name}` "
                       "with a constraint so the condition switches once"))


def _cut(at, a: int, b: int, left: bool) -> tuple[int, int]:
    """Where the condition changes between integers ``a`` < ``b`` (``left``: its value at ``a``), bisected:
    (the last integer with ``left``'s value, the first after it without)."""
    if at(a) != left or at(b) == left:  # the exact values disagree with the floats at the sampled points
        return a, b
    while b - a > 1:
        m = (a + b) // 2
        a, b = (m, b) if at(m) == left else (a, m)
    return a, b


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


def _sides(plan: Plan, c, depth: int = 0) -> Optional[list[tuple]]:
    """The two sides of every ordering comparison that decides ``c``: ``c`` itself, the operands of an
    ``and``, and the definitions of the true/false quantities it names (``stable``, defined as
    ``utilisation < 100%``); None where something else decides it (``or``, ``not``, ``==``...)."""
    if isinstance(c, ir.Compare):
        return [(c.operands[0], c.operands[1])] if len(c.ops) == 1 and c.ops[0] in _ORDER else None
    if isinstance(c, ir.Logic) and c.op is ir.BoolOp.AND:
        left, right = _sides(plan, c.left, depth), _sides(plan, c.right, depth)
        return None if left is None or right is None else left + right
    q = plan.model.quantities.get(c.name) if isinstance(c, ir.Name) else None
    if q is not None and q.is_bool and not q.is_input and depth < 8:
        return _sides(plan, q.definition.expr, depth + 1)
    return None


def _decided(plan: Plan, program, inputs, stmt, value: Fraction) -> Optional[bool]:
    """The condition at ``value`` from floats, where every comparison deciding it has sides further
    apart than :data:`MARGIN` (relative); else None."""
    if len(program.outputs) < 3:
        return None
    held, *sides = (float(v) for v in _run(plan, program, inputs, stmt.target, float(value)))
    for lhs, rhs in zip(sides[::2], sides[1::2]):
        if not (math.isfinite(lhs) and math.isfinite(rhs)):
            return None
        if abs(lhs - rhs) <= MARGIN * max(abs(lhs), abs(rhs)):
            return None
    return bool(held)


def questions(plan: Plan) -> list:
    """Every solve/maximize/minimize statement, in file order (as :meth:`Solver.questions`)."""
    return sorted(list(plan.model.solves) + list(plan.model.optimizes), key=lambda s: s.span.start)


def is_real_threshold(plan: Plan, stmt) -> bool:
    """Whether ``stmt`` asks for the least or greatest real value where a condition holds (``solve min X``
    of an ``X`` not declared integer): the numeric route's alone."""
    q = plan.model.quantities.get(stmt.target) if isinstance(stmt, ir.Solve) and stmt.mode != "root" else None
    return q is not None and not q.integer and not q.is_bool


def over_ranges(plan: Plan, stmt) -> bool:
    """Whether a question's condition goes through a sum, product or range min/max/first (directly, or
    through the formulas and functions it uses): SymPy has no closed form of such a condition, and checks
    it term by term (``evalf`` of a sum of ``ceil``s: seconds to minutes on a monthly plan)."""
    return isinstance(stmt, ir.Solve) and ranges_in(plan, stmt.condition)


def ranges_in(plan: Plan, expr) -> bool:
    """Whether ``expr`` goes through an aggregate over a range, in itself or in the formulas and
    functions it uses (walked on the IR: no SymPy)."""
    model = plan.model
    todo, seen = [expr], set()
    while todo:
        for node in ir.walk(todo.pop()):
            if isinstance(node, (ir.Aggregate, ir.Reduce, ir.At, ir.Series, ir.Previous)):  # a series: no closed form
                return True
            if isinstance(node, ir.Name) and node.name not in seen:
                seen.add(node.name)
                q = model.quantities.get(node.name)
                if q is not None and not q.is_input:
                    todo.append(q.definition.expr)
            elif isinstance(node, ir.Call) and node.func + "()" not in seen:
                seen.add(node.func + "()")
                if node.func in model.functions:
                    todo.append(model.functions[node.func].body)
    return False


NO_FORM_REAL = ("closed form of its boundary not derived (planner solve --closed-form derives it where there is "
                "one): the least or greatest real value where a condition holds is the numeric route's")
NO_BOUNDARY = "no closed form of its boundary over the other inputs: the answer is the numeric route's"
NO_FORM_FOUND = "no closed form over the other inputs: the answer is the numeric route's"
NO_FORM = ("no closed form: the condition goes through a sum or a min/max/first over a range, or a series over "
           "periods; the answer is the numeric route's")


class Answers:
    """The one door to a plan's answers, for checks, ``with x = NAME``, formulas that use an answer, the
    report and the workbook: every answer from the numeric route (SymPy is not imported for it), or its
    located error saying why there is none (no root, several, not monotone, no smallest). The Solver
    (:class:`planner.questions.solve.Solver`) is created only for a closed form where one is shown
    (``closed_form=True``: the report, the workbook, ``explain``, ``planner solve --closed-form``). A
    closed form is decoration: the Solver runs for at most :data:`FORM_WAIT` seconds, a condition over
    ranges gets none (:data:`NO_FORM`), and where the Solver fails the numeric answer stands, saying so.
    Results are cached per statement, scenario and overrides."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.statements = {s.alias: s for s in questions(plan) if s.alias}
        self._types: Optional[dict] = None
        self._solver = None
        self._cache: dict[tuple, tuple[Any, Any]] = {}

    @property
    def solver(self):
        """The Solver (SymPy with it), created on first use."""
        if self._solver is None:
            from .solve import Solver

            self._solver = Solver(self.plan)
        return self._solver

    def questions(self) -> list:
        return questions(self.plan)

    @property
    def types(self) -> dict:
        if self._types is None:
            self._types = self.plan.analyzer.answer_types(self.plan.model)
        return self._types

    def __contains__(self, name: str) -> bool:
        return name in self.types

    def answer(self, stmt, scenario=None, overrides=None, origins=None, closed_form: bool = False) -> SolveResult:
        """``stmt``'s answer in one scenario with these overrides; raises its located PlanError."""
        key = (id(stmt), scenario, tuple(sorted((k, str(v)) for k, v in (overrides or {}).items())), closed_form)
        if key not in self._cache:
            try:
                got = self._answer(stmt, scenario, overrides, origins, closed_form)
            except PlanError as err:
                got = err
            self._cache[key] = (stmt, got)  # the statement kept alive, so that its id is not reused
        got = self._cache[key][1]
        if isinstance(got, PlanError):
            raise got
        return got

    def _answer(self, stmt, scenario, overrides, origins, closed_form: bool) -> SolveResult:
        if isinstance(stmt, ir.Optimize):  # the best of the listed values: no closed form to derive
            return optimum(self.plan, stmt, scenario, overrides, origins)
        quick = result(self.plan, stmt, scenario, overrides, origins)
        real = is_real_threshold(self.plan, stmt)
        if not closed_form:
            return quick
        if over_ranges(self.plan, stmt):
            return replace(quick, notes=(NO_FORM,))
        try:  # a closed form is decoration: SymPy's failure, or its budget spent, leaves the numeric answer
            found = within(FORM_WAIT, self.solver.answer, stmt, scenario, overrides, origins, quick)
        except (NoRootError, MultipleRootsError, NotMonotoneError) as err:  # one door: `check` answers too
            why = f"the exact analysis disagrees ({err.message.rstrip('.')}), the numeric route found one answer"
        except PlanError as err:  # the numeric answer is verified; the Solver's trouble is with the closed form
            why = err.message
        except TimeoutError:
            why = f"its derivation took more than {FORM_WAIT:g} s"
        except Exception as err:  # noqa: BLE001 - SymPy's own failure (piecewise_fold, a comparison it cannot make)
            why = f"SymPy could not derive one ({type(err).__name__})"
        else:
            if found is not quick:
                return found
            why = None
        kept = tuple(n for n in quick.notes if not n.startswith("closed form"))
        return replace(quick, notes=kept + ((NO_BOUNDARY if real else NO_FORM_FOUND) if why is None else
                                            f"no closed form: {why}; the answer is the numeric route's",))

    def result(self, name: str, scenario=None, overrides=None, origins=None, closed_form: bool = False):
        return self.answer(self.statements[name.removesuffix(".value")], scenario, overrides, origins, closed_form)

    def value(self, name: str, scenario=None, overrides=None, origins=None) -> Fraction:
        """The answer (or ``.value``, an optimum) in base units, exact when known."""
        r = self.result(name, scenario, overrides, origins)
        if name.endswith(".value"):
            return Fraction(r.optimum)
        if isinstance(r.exact, Fraction):
            return r.exact
        if getattr(r.exact, "is_Rational", False):
            return Fraction(int(r.exact.p), int(r.exact.q))
        return Fraction(r.value)

    def mode(self, name: str) -> str:
        """``min`` or ``max``: the answer is a least or greatest value (a figure never shown past it); else ``root``."""
        stmt = self.statements[name.removesuffix(".value")]
        return stmt.mode if isinstance(stmt, ir.Solve) and not name.endswith(".value") else "root"

    def unit(self, name: str) -> tuple[Fraction, str]:
        """Display scale and unit text of an answer."""
        stmt = self.statements[name.removesuffix(".value")]
        if name.endswith(".value"):
            from .answer import objective_unit

            unit, scale = objective_unit(self.plan, stmt.objective, self.types[name])
            return scale, unit
        q = self.plan.model.quantities[stmt.target if isinstance(stmt, ir.Solve) else stmt.over]
        return q.display.scale, q.unit_text
