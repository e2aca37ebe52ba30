"""Answers from the numeric route first: a ``solve`` question's value without SymPy.

A check needs only an answer's value; its closed form is needed where it is shown (the workbook, the
report, ``explain``, ``planner solve --closed-form``). This module answers ``solve X where lhs = rhs``
and ``solve min/max X where ...`` from the plan's IR compiled by :mod:`planner.compute.numeric`:

- a root: ``lhs - rhs`` on a grid of :data:`GRID` points over ``X``'s declared domain (sampled as the
  Solver's numeric method does: evenly between two bounds, geometrically around the value on an open
  side), monotone on the grid with exactly one sign change (at most one grid point at zero), refined by bisection to adjacent
  floats;
- an integer threshold: the condition at every integer of the declared domain when it has both bounds
  and at most :data:`MAX_INTEGERS`; otherwise (one bound, or none) a galloping search: every integer
  within :data:`DENSE` of each bound and of the input's value, and steps doubling from the value out to
  the bounds (or to 2**53, where floats stop counting integers), the edge bisected; true on exactly one
  run that reaches the end it looks from, the edge verified in exact arithmetic
  (:class:`planner.compute.exact.ExactEvaluator`) at ``n`` and its neighbour (where the condition has
  no rational value, as over an aggregate: a comparison whose sides differ by more than
  :data:`MARGIN`, relative, in floats at both);
- the least (greatest) real value where a condition holds (``solve min X`` of an ``X`` not declared
  integer): :func:`_real_threshold`, this route's alone (the Solver's thresholds are integers).

Every answer is then checked by a full evaluation of the plan at it (every constraint). Anything else
(an integer root, a condition true on several runs or down to -inf, several sign changes, a value that is not finite, a
condition with no rational value, an answer the condition uses that moves with the question's own input)
is refused: the
caller falls back to :class:`planner.questions.solve.Solver`, which derives closed forms and reports
the located errors (no root, several roots, not monotone). The fast route never guesses. A ``maximize``
or ``minimize`` is :func:`planner.questions.optimum.optimum`'s.
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
from ..compute.numbers import interval, significant
from ..language.errors import MultipleRootsError, NoRootError, NotMonotoneError, PlanError, SolveError
from ..language.model import whole_numbers
from .answer import SolveResult, Verification, least_hint
from .optimum import optimum

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
    value, verification, method, *more = found
    q = plan.model.quantities[stmt.target]
    shown = float(value / q.display.scale)
    return SolveResult(
        target=stmt.target, mode=stmt.mode, scenario=scenario, value=float(value), display_value=shown,
        unit=q.unit_text, exact=value if stmt.mode != "root" and q.integer else None, closed_form=None,
        verification=verification, method=method, roots=(float(value),) if stmt.mode == "root" else (),
        statement=stmt, alias=stmt.alias, question=ir.question_text(stmt),
        notes=(*(more[0] if more else ()), "closed form not derived (planner solve --closed-form derives it)"
               if stmt.mode == "root" or q.integer else NO_FORM_REAL))


def _answer(plan: Plan, stmt, scenario, overrides, origins):
    if not isinstance(stmt, ir.Solve):
        return None
    q = plan.model.quantities.get(stmt.target)
    if q is None or q.is_bool:
        return None
    used = _used_answers(plan, stmt, scenario, overrides, origins)
    if used is None:
        return None
    program = _program(plan, stmt)
    if program is None:
        return None
    inputs, _ = plan.input_values(scenario, overrides, origins)
    inputs = {**inputs, **used}  # (the program's arguments: inputs, then the answers its formulas use)
    # over ranges the Solver has no better method (and takes minutes): this route's findings are final
    final = (scenario or True) if over_ranges(plan, stmt) else False
    with np.errstate(all="ignore"):
        try:
            if stmt.mode == "root":
                found = None if q.integer else _root(plan, program, q, inputs, stmt, final)
            else:
                found = (_threshold(plan, program, q, inputs, stmt, final) if q.integer else
                         _real_threshold(plan, program, q, inputs, stmt, scenario or True))
        except SolveError:
            raise
        except (PlanError, NotRational, ArithmeticError, ValueError, TypeError):
            return None
    if found is None:
        return None
    answers = dict(used)
    if stmt.alias in plan.model.formula_answers:
        answers[stmt.alias] = found[0]
    if not _holds_everywhere(plan, scenario, {**(overrides or {}), stmt.target: found[0]}, origins, answers):
        return None
    return found


def _used_answers(plan: Plan, stmt, scenario, overrides, origins) -> Optional[dict]:
    """The answers ``stmt``'s condition uses, in itself or through the formulas it uses, each from the
    one door (:class:`Answers`) in this scenario with these overrides: exact (a Fraction) where known,
    else a float. None (ask the Solver) where one is moved by ``stmt``'s own input (solved again at each
    value: the Solver's), is an optimum's value, or has no answer (the Solver says why)."""
    model = plan.model
    names: set[str] = set()
    seen: set[str] = set()
    todo = [n.name for n in ir.free_names(stmt.condition)]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in model.answers:
            names.add(n)
        elif n in model.quantities:
            todo.extend(model.quantities[n].deps)
            todo.extend(model.quantities[n].answer_deps)
    out: dict = {}
    for name in sorted(names):
        if name.endswith(".value") or name == stmt.alias or stmt.target in model.answer_inputs(name):
            return None
        try:
            r = plan.answer_source.result(name, scenario, overrides, origins)
        except PlanError:
            return None
        exact = r.exact
        if getattr(exact, "is_Rational", False):
            exact = Fraction(int(exact.p), int(exact.q))
        out[name] = exact if isinstance(exact, Fraction) else float(r.value)
    return out


def _holds_everywhere(plan: Plan, scenario, overrides, origins, answers=None) -> bool:
    """The plan evaluated in full at an answer: every constraint holds (its own, and those that depend on
    it) and every figure has a value. The compiled program first; the located evaluation
    (:meth:`Plan.evaluate`) only where a figure is not finite, except a ``first`` that found nothing,
    the plan's stated "never" (telling a "never" from an error inside it walks every term: seconds on a
    monthly plan, at every answer)."""
    try:
        inputs, _ = plan.input_values(scenario, overrides, origins)
        raw = plan.run_compiled(inputs, answers)
    except PlanError:
        return False
    if not all(bool(np.all(v)) for k, v in raw.items() if k.startswith("__constraint")):
        return False
    quantities = plan.model.quantities
    for name in plan.model.derived:
        v = raw[name]
        if isinstance(v, (bool, np.bool_)) or quantities[name].is_bool or math.isfinite(float(v)):
            continue
        expr = quantities[name].definition.expr
        if plan.model.formula_answers:  # a figure without a value where the plan's formulas use answers:
            return False  # the Solver's (the located evaluation would ask for this very answer again)
        if not (isinstance(expr, ir.Aggregate) and expr.op is ir.AggOp.FIRST):
            try:  # the located evaluation says whether this is an error
                plan.evaluate(scenario, overrides, origins)
            except PlanError:
                return False
            return True
    return True


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
    try:
        return compile_program(model, plan.arguments + direct, outputs)
    except PlanError:
        return None


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


def _root(plan: Plan, program, q, inputs, stmt, final=False) -> Optional[Fraction]:
    """The one root in the domain, or None (ask the Solver); where ``final`` (truthy: the scenario's
    name, or True) no root or several are located errors from the grid's own sign changes."""
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
    if not final and not (np.all(steps >= 0) or np.all(steps <= 0)):  # monotone on the grid, or ask the Solver
        return None
    signs = np.sign(ys)
    zero = np.flatnonzero(signs == 0)
    change = np.flatnonzero(signs[:-1] * signs[1:] < 0)
    if final and (zero.size + change.size != 1 or np.any(zero[1:] - zero[:-1] == 1)):
        roots = [float(xs[i]) for i in zero] + [_bisect(f, float(xs[i]), float(xs[i + 1]), float(ys[i]))[0]
                                               for i in change]
        raise _no_single_root(plan, q, stmt, sorted(roots), (float(xs[0]), float(ys[0])),
                              (float(xs[-1]), float(ys[-1])), final, zero.tolist())
    if zero.size > 1:
        return None
    if zero.size:
        return _root_found(stmt, q, float(xs[zero[0]]), 0.0)
    if change.size != 1:
        return None
    i = int(change[0])
    x, fx = _bisect(f, float(xs[i]), float(xs[i + 1]), float(ys[i]))
    if x is None:
        return None
    beside = np.nextafter(x, float(xs[i + 1]) if (fx > 0) == (ys[i] > 0) else float(xs[i]))
    other = float(f(np.array([beside]))[0])
    if fx != 0 and min(abs(fx), abs(other)) > 1e-6 * float(np.max(np.abs(ys))):  # a step across zero, not a root
        scale, (low, high) = q.display.scale, sorted([(x, fx), (float(beside), other)])
        raise NoRootError(
            f"no `{q.name}` makes `{_cond(stmt)}` hold: its sides jump past each other at {q.name} = "
            f"{format_value(low[0] / scale, q.unit_text)} (lhs - rhs from {significant(low[1], 3)} to "
            f"{significant(high[1], 3)} at the next float)", stmt.condition.span, label="a step, not a root",
            notes=_where(final), hint=least_hint(q.name, stmt.condition))
    return _root_found(stmt, q, x, fx)


def _bisect(f, a: float, b: float, fa: float) -> tuple[Optional[float], float]:
    """A sign change narrowed down to adjacent floats: the end nearer zero and its value. Each run of the
    plan takes 63 points between the ends (a run of many points costs about what a run of one does), and
    the first that is zero or of the other sign is the new end, as 6 steps of bisection."""
    for _ in range(200):
        xs = np.unique(np.linspace(a, b, 65)[1:-1])
        xs = xs[(xs > a) & (xs < b)]
        if not xs.size:
            break
        ys = np.broadcast_to(f(xs), xs.shape)
        past = np.flatnonzero(((ys > 0) != (fa > 0)) | (ys == 0) | ~np.isfinite(ys))
        k = int(past[0]) if past.size else xs.size
        if k < xs.size and not math.isfinite(ys[k]):
            return None, float(ys[k])
        if k < xs.size and ys[k] == 0:
            return float(xs[k]), 0.0
        if k:
            a, fa = float(xs[k - 1]), float(ys[k - 1])
        if k < xs.size:
            b = float(xs[k])
    fb = float(f(np.array([b]))[0])
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
        notes = [f"at {q.name} = {format_value(x / scale, q.unit_text)}: lhs - rhs = {format_value(y)} (base units)"
                 for x, y in (first, last)]
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
        return err
    shown = ", ".join(format_value(x / scale, q.unit_text) for x in roots)
    err = MultipleRootsError(f"`{cond}` has {len(roots)} roots for `{q.name}` in {_domain_text(q)}: {shown}",
                             stmt.condition.span, label="several solutions", notes=where,
                             hint=f"narrow the domain of `{q.name}` with a constraint (`where ...`) so one root remains")
    err.roots = roots  # type: ignore[attr-defined]
    return err


def _root_found(stmt, q, x: float, residual: float):
    said = "exactly 0 in floats" if residual == 0 else f"{significant(residual, 3)} (floats; it changes sign at the next float)"
    ver = Verification(text=f"lhs - rhs = {said} at the root",
                       exact=False, residual=residual)
    method = (f"numeric route: {GRID} points over the declared domain, monotone with one sign "
              "change, refined by bisection to adjacent floats")
    return Fraction(x), ver, method


def _threshold(plan: Plan, program, q, inputs, stmt, final=False) -> Optional[Fraction]:
    scale = q.display.scale
    lo, hi = whole_numbers(q.lower, q.upper, scale)
    if lo is not None and hi is not None and hi < lo:
        return None
    around = int(round(float((q.value or 0) / scale)))

    def held(ns: np.ndarray) -> np.ndarray:
        out = np.broadcast_to(np.asarray(_run(plan, program, inputs, stmt.target, ns * float(scale))[0]), ns.shape)
        if out.dtype != bool:
            raise TypeError("not a condition")
        return out

    ns = _integers(lo, hi, around)
    if ns is None:
        return None
    truth = held(ns)
    true = np.flatnonzero(truth)
    one_run = true.size and true[-1] - true[0] + 1 == true.size
    reaches = one_run and (true[-1] == ns.size - 1 if stmt.mode == "min" else true[0] == 0)
    if not reaches:  # never, or not one run reaching the end: the Solver says why, or (final) this route
        if final:
            raise _not_one_run(q, stmt, ns, truth, lo, hi, final)
        return None
    # the run reaches the end it looks from (the domain's end, or the last point of the doubling search)
    if stmt.mode == "min":
        i = int(true[0])
        if i == 0:
            if lo is None:  # holds as far down as floats count: there is no smallest (the Solver says so)
                return None
            n, neighbor = lo, lo - 1
        else:
            n, neighbor = _edge(held, int(ns[i - 1]), int(ns[i]))
    else:
        i = int(true[-1])
        if i == ns.size - 1:
            if hi is None:
                return None
            n, neighbor = hi, hi + 1
        else:
            n, neighbor = _edge(held, int(ns[i + 1]), int(ns[i]))
    first, last = int(ns[0]), int(ns[-1])
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
    every = ns.size == last - first + 1
    searched = (f"the condition at every integer from {first} to {last}" if every else
                f"the condition at {ns.size} integers from {first} to {last} (every one near the ends and near "
                f"{q.name}'s value, doubling steps between), the edge found by bisection")
    method = (f"numeric route: {searched}; the edge checked at n and its neighbour in exact arithmetic "
              "(or by a clear float margin)")
    return n * scale, ver, method


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
    overflows. ``final`` is the scenario's name (or True): the Solver has no real threshold."""
    xs = _points(q)
    if xs is None:
        return None
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
    full = repr(float(yes) / float(scale)).removesuffix(".0")
    said = shown(yes) if shown(yes).split(" ")[0].replace(",", "") == full else f"{shown(yes)} ({full})"
    ver = Verification(text=f"holds at {q.name} = {said}, fails at the float just {'below' if low else 'above'} "
                            f"it ({no / scale!r})", exact=False, holds=True, neighbor=no / scale, neighbor_holds=False)
    return Fraction(yes), ver, _REAL_METHOD.format(n=xs.size), ()


_REAL_METHOD = ("numeric route: the condition at {n} points over the declared domain (doubling out to the largest "
                "floats on an open side), true on one run that reaches the end the question looks from, its edge "
                "narrowed to adjacent floats")


def _cond(stmt) -> str:
    return " ".join(stmt.condition.span.flat.split())


def _where(scenario) -> list[str]:
    return [f"in scenario `{scenario}`"] if isinstance(scenario, str) else []


def _not_one_run(q, stmt, ns: np.ndarray, truth: np.ndarray, lo, hi, scenario) -> SolveError:
    """A threshold's condition that never holds, or holds on several runs of the integers searched."""
    where = [f"in scenario `{scenario}`"] if isinstance(scenario, str) else []
    cond = " ".join(stmt.condition.span.flat.split())
    domain = f"[{interval('-inf' if lo is None else significant(lo), 'inf' if hi is None else significant(hi))}]"
    if not truth.any():
        return NoRootError(f"no integer `{q.name}` in {domain} makes `{cond}` hold", stmt.condition.span,
                           label="never holds in the domain", notes=where)
    runs, start = [], None
    for i, t in enumerate(truth):
        if t and start is None:
            start = i
        if start is not None and (not t or i == truth.size - 1):
            end = i if t else i - 1
            runs.append(f"{int(ns[start])}..{int(ns[end])}" if end > start else f"{int(ns[start])}")
            start = None
    other = "max" if stmt.mode == "min" else "min"
    return NotMonotoneError(
        f"`{cond}` is not monotone in `{q.name}`: it does not switch once from false to true "
        f"{'as it grows' if stmt.mode == 'min' else 'as it shrinks'}",
        stmt.condition.span, label="changes more than once", notes=[f"holds for {q.name} in " + ", ".join(runs[:6])]
        + where, hint=(f"`solve {other} {q.name}` if the condition holds below a threshold; or bound `{q.name}` "
                       "with a constraint so the condition switches once"))


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
NO_FORM = ("no closed form: the condition goes through a sum or a min/max/first over a range, or a series over "
           "periods; the answer is the numeric route's")


class Answers:
    """The one door to a plan's answers, for checks, ``with x = NAME``, formulas that use an answer, the
    report and the workbook: each answer from the numeric route first (SymPy is not imported for it);
    the Solver (:class:`planner.questions.solve.Solver`) is created only for what the numeric route
    refuses (it answers, or says why there is none: no root, several, not monotone) and for a closed form
    where one is shown (``closed_form=True``: the report, the workbook, ``explain``). A closed form is
    decoration: the Solver's search has its budget, a condition over ranges gets none (:data:`NO_FORM`),
    and where the Solver fails the numeric answer stands. Results are cached per statement, scenario
    and overrides."""

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
        if isinstance(stmt, ir.Optimize) and not closed_form:  # (the workbook and report: the Solver's, exact in SymPy)
            best = optimum(self.plan, stmt, scenario, overrides, origins)
            return best if best is not None else self.solver.answer(stmt, scenario, overrides, origins)
        quick = result(self.plan, stmt, scenario, overrides, origins) if isinstance(stmt, ir.Solve) else None
        real = is_real_threshold(self.plan, stmt)
        if quick is None and real:  # (the Solver's thresholds are integers: this route is the only one)
            moved = _used_answers(self.plan, stmt, scenario, overrides, origins) is None
            raise SolveError(f"could not find the {'least' if stmt.mode == 'min' else 'greatest'} `{stmt.target}` "
                             f"where `{_cond(stmt)}` holds: " + (
                                 f"an answer it uses changes with `{stmt.target}` itself, or has none" if moved else
                                 "the plan has no value, or breaks a constraint, there"),
                             stmt.condition.span, notes=_where(scenario),
                             hint="write that answer's condition into this one" if moved else
                             f"planner eval --set {stmt.target}=... shows what happens near it")
        if quick is None:
            return self.solver.answer(stmt, scenario, overrides, origins)
        if not closed_form:
            return quick
        if over_ranges(self.plan, stmt):
            return replace(quick, notes=(NO_FORM,))
        if real:  # the closed form of the boundary the answer sits on, where SymPy finds one
            try:
                found = self.solver.boundary(stmt, quick, scenario, overrides, origins)
            except PlanError:
                found = quick
            return found if found.closed_form is not None else replace(
                quick, notes=tuple(n for n in quick.notes if n != NO_FORM_REAL) + (NO_BOUNDARY,))
        try:
            return self.solver.answer(stmt, scenario, overrides, origins)
        except (NoRootError, MultipleRootsError, NotMonotoneError):
            raise  # the exact analysis found what the grid could not (a second root between its points)
        except PlanError as err:  # the numeric answer is verified; the Solver's trouble is with the closed form
            return replace(quick, notes=(f"no closed form: {err.message}; the answer is the numeric route's",))

    def result(self, name: str, scenario=None, overrides=None, origins=None, closed_form: bool = False):
        return self.answer(self.statements[_alias(name)], scenario, overrides, origins, closed_form)

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

    def unit(self, name: str) -> tuple[Fraction, str]:
        """Display scale and unit text of an answer."""
        stmt = self.statements[_alias(name)]
        if name.endswith(".value"):
            from .answer import objective_unit

            unit, scale = objective_unit(self.plan, stmt.objective, self.types[name])
            return scale, unit
        q = self.plan.model.quantities[stmt.target if isinstance(stmt, ir.Solve) else stmt.over]
        return q.display.scale, q.unit_text


def _alias(name: str) -> str:
    return name[: -len(".value")] if name.endswith(".value") else name
