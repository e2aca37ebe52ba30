"""Sensitivity: which input moves a quantity most.

For each input a quantity depends on, the elasticity ``dy/dx * x / |y|`` at the current values (a 1% rise
in ``x`` moves ``y`` by about that many % of its size: its sign is the direction ``y`` moves, also where ``y``
is negative, a loss that deepens reads as a fall), sorted by magnitude. The slope is measured on the
compiled plan, the figures as planner evaluates them: each side of the value at two steps (``h`` = 1e-6 of
the value, and ``h/16``), in one run with the input moved to every point. A side whose slope is not steady
between its two steps has a jump or a kink within the step and is said to be so. Both sides known and
equal: their central difference, or where it agrees, the same slope to more digits from differences over
1%, 1/2% and 1/4% of the value (:func:`_extrapolated`), each figure rounded to the digits it has (the number
rule prints a large slope in full: 805,412,864, every digit right). Different (a kink: ``max(a, b)`` with
``a == b``): the row gives the elasticity of a rise and, in its note, of a fall, never their average.

Where a formula is not smooth is read from the plan's IR (:class:`_Breaks`): each ``max``, ``min``,
``abs``, ``if``, ``floor``, ``ceil`` and ``round`` (the built-ins with ``breaks``) on the way to the quantity,
not under an ``if`` branch not taken there, is evaluated at the same points, and one that changes argument,
branch or step within them is named in the row's note as the plan writes it (``a kink: `max(a, b)` has equal arguments``; a step there is a jump, flat on either side). Inside
a sum over a range or a series each term takes its own branch: those are measured, not named.

An integer input moves by one step of its display unit, up and down, within its declared bounds, where it
may set a range (a sum's ``1..n`` has no value between ``n`` and ``n + 1``) or where one step either way
changes a branch or a step; elsewhere its slope is taken as if it were continuous, the one-step effects
beside it.

A slope answers "what does a small change do"; a reader asks what a real one does. Each row's
elasticity is therefore held against the effect of the stated change itself, a 1% rise and a 1%
fall of the input in a whole evaluation (:func:`_stated`). Where the two disagree, the row gives
the effect of the change on each side instead, ranked by the larger, its method and note saying so
and why: a step (``ceil``, ``floor``, ``round``, an ``if``) or a kink within 1% of the value where a
break on the way changes there, else that the effect is not linear over 1%; where a step function is
flat within 1% either way, the note says how far the nearest step is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Optional

import numpy as np

from ..compute.evaluation import Plan, format_value
from ..compute.numbers import significant
from ..language import ir
from ..language.errors import KindError, PlanError, UnknownNameError, suggest
from ..language.functions import FUNCTIONS
from ..language.graph import cone
from ..language.limits import deep
from ..language.text import formula_text
from .fast import ranges_in

STEP = 1e-6  # relative step of the numeric difference
NEAR = 16  # each side's second step is h / NEAR
RANK = 4  # decimals an elasticity is ranked by, as shown: equal figures (1 and 0.99999999998) rank as equal
FLAT = "floor/ceil/round are flat here (derivative 0)"


@dataclass(frozen=True)
class Row:
    input: str
    value: float  # in the input's display unit
    unit: str
    elasticity: Optional[float]  # None when the quantity is 0 there or the derivative is not finite
    derivative: Optional[float]  # dy/dx in display units of y per display unit of x; None when not finite
    method: str  # "numeric difference", "one-sided differences", "one-step differences" (an integer input),
    #              "effect of a 1% change", "none" (no finite slope) or "exact" (the quantity is the input)
    note: str = ""
    # one-sided elasticities where they were measured (a rise and a fall of the input); where they
    # differ (a kink, an integer input) `elasticity` is the rise's and the note says both
    rise: Optional[float] = None
    fall: Optional[float] = None


def _order(r: Row):
    """Largest shown elasticity first (a step's row shows its larger side), then the sides where
    none is shown; a row never ranks above a larger figure it does not show."""
    size = abs(r.elasticity) if r.elasticity is not None else max(
        (abs(e) for e in (r.rise, r.fall) if e is not None), default=None)
    return (size is None, -rank(size or 0.0), r.input)


def rank(e: float) -> float:
    """``e`` as it is ranked (:data:`RANK`): rows whose elasticities read the same rank by name (the report:
    by the order the plan writes them)."""
    return round(e, RANK)


@dataclass
class Sensitivity:
    quantity: str
    scenario: Optional[str]
    value: float  # display units (nan when ``never``)
    unit: str
    rows: list[Row] = field(default_factory=list)
    never: bool = False  # a `first(...)` that finds nothing here: no value, so no sensitivity

    @property
    def label(self) -> str:
        return self.scenario or "base"


def sensitivity(plan: Plan, name: str, scenario: Optional[str] = None, overrides=None, origins=None,
                evaluation=None) -> Sensitivity:
    """``evaluation``: the plan's in ``scenario`` (with ``overrides``) where the caller has it (the report's
    analysis has every scenario's: a plan whose ``first(...)`` finds nothing says why again in each)."""
    q = plan.model.quantities.get(name)
    if q is None:
        guess = suggest(name, plan.model.quantities)
        raise UnknownNameError(f"no quantity `{name}` in {plan.path}", hint=f"did you mean `{guess}`?" if guess else None)
    if q.is_bool:
        raise KindError(f"`{name}` is true/false: it has no sensitivity", q.definition.name_span)
    ev = evaluation if evaluation is not None else plan.evaluate(scenario, overrides, origins)
    out = Sensitivity(name, scenario, float(ev.display(name)), q.unit_text, never=ev.is_never(name))
    if out.never:  # nothing to move: each input's "no finite slope" would say less
        return out
    if q.is_input:
        out.rows.append(Row(name, out.value, q.unit_text, 1.0, 1.0, "exact", "the quantity is an input"))
        return out
    answers = [a for n in cone(plan.model, [name]) for a in plan.model.quantities[n].answer_deps]
    if answers:
        out.rows.extend(_through_answers(plan, ev, name, sorted(set(answers)), overrides, origins))
        out.rows.sort(key=_order)
        return out
    qs = plan.model.quantities
    inputs = sorted(n for n in cone(plan.model, [name]) if qs[n].is_input and not qs[n].is_bool)
    ranged = ranges_in(plan, q.definition.expr)  # an integer input may set a range (`1..n`)
    breaks = _active(plan, ev, name)
    out.rows.extend(_row(plan, ev, name, n, ranged, breaks) for n in inputs)
    out.rows.sort(key=_order)
    return out


def _memo(plan: Plan) -> dict:
    """What :func:`sensitivity` derives from the plan alone, kept on the plan: a report asks for each
    headline in every scenario, and the headlines share the runs with each input moved and the walk of
    the formulas."""
    return plan.__dict__.setdefault("_sensitivity_memo", {})


def _row(plan: Plan, ev, name: str, input_name: str, ranged: bool, breaks: list[_Break]) -> Row:
    """The row of ``input_name``: its slope (:func:`_difference_row`), where the formulas are not smooth
    there (of ``breaks``, those on the way to ``name``) named, held against the stated change (:func:`_stated`)."""
    xq = plan.model.quantities[input_name]
    flat = FLAT if any(b.kind == "step" and input_name in b.inputs for b in breaks) else ""
    if xq.integer:
        off = _changed(plan, ev, breaks, input_name, (0, 1, 3, 4, UP, DOWN))  # within one step either way
        if not (ranged or off):  # the slope off the integers, the one-step effects beside it
            slope = _difference_row(plan, ev, name, input_name, whole=False, bounded=False)
            if slope.method == "numeric difference":
                step = _difference_row(plan, ev, name, input_name)
                note = "; ".join(n for n in (flat, "integer input, treated as continuous") if n)
                return replace(slope, note=note, rise=step.rise, fall=step.fall)
        row = _difference_row(plan, ev, name, input_name)
        return replace(row, note=row.note + "; a branch or step changes within one step") if off else row
    changed = _changed(plan, ev, breaks, input_name, (0, 1, 3, 4))
    jump = next((b for b in changed if b.kind == "step"), None)
    if jump is not None:  # a step the quantity does not follow (under a `max` argument that does not win): none
        f, ok = _moved(plan, ev, name, input_name)
        if all(abs(f[i] - f[MID]) <= NOISE * abs(f[MID]) for i in (0, 1, 3, 4) if ok[i]):
            jump = None
    if jump is not None:
        row = Row(input_name, float(ev.inputs[input_name] / xq.display.scale), xq.unit_text, None, None, "none",
                  jump.what)
    else:
        row = _difference_row(plan, ev, name, input_name, changed[0].what if changed else "a kink")
        if flat and row.method == "numeric difference":
            row = replace(row, note=flat)
    return _stated(plan, ev, name, row, breaks)


@dataclass(frozen=True)
class _Break:
    """A call where a formula is not smooth (a built-in with ``breaks``), as :class:`_Breaks` finds it."""

    kind: str  # "kink", "step" or "branch" (:attr:`planner.language.functions.Builtin.breaks`), or "sum": a sum
    #           or series, not entered (its outputs none)
    what: str  # what it is, the call named as the plan writes it, for a row's note
    outputs: tuple[str, ...]  # its outputs in the probe program: the call and its arguments (a kink), the
    #                           call (a step), the condition (a branch)
    inputs: frozenset[str]  # the inputs it depends on
    guards: tuple[tuple[str, bool], ...]  # the conditions (outputs) of the `if` branches it is in, and the branch


class _Breaks(ir.Visitor):
    """Every call of a formula where it is not smooth (``max``, ``min``, ``abs``, ``if``, ``floor``, ``ceil``,
    ``round``), with the call written over the plan's quantities (in a user function's body, its parameters
    bound to the call's arguments) and the conditions of the ``if`` branches it is in: ``(call as written,
    call bound, the function it is in, guards)``, each guard ``(condition bound, the branch: true or false)``;
    and the quantities it names, each with its guards (``refs``). Sums over a range and series are not
    entered: each of their terms takes its own branch."""

    def __init__(self, model) -> None:
        self.model, self.found, self.refs, self.sums = model, [], [], []

    def visit_Name(self, e: ir.Name, env: dict, within: str, guards: tuple) -> None:
        if e.name not in env and e.name in self.model.quantities:
            self.refs.append((e.name, guards))

    def visit_other(self, e, env: dict, within: str, guards: tuple) -> None:
        for c in ir.children(e):
            self.visit(c, env, within, guards)

    def visit_Aggregate(self, e, env: dict, within: str, guards: tuple) -> None:
        self.sums.append((_bound(e, env), guards))

    visit_Reduce = visit_At = visit_Series = visit_Previous = visit_PeriodTable = visit_Aggregate

    def visit_Call(self, e: ir.Call, env: dict, within: str, guards: tuple) -> None:
        f = self.model.functions.get(e.func)
        if f is not None:
            for a in e.args:
                self.visit(a.value, env, within, guards)
            body, inner = ir.inline(f, e, lambda a: _bound(a, env), lambda d, bound: _bound(d, bound))
            self.visit(body, inner, e.func, guards)
            return
        bound = _bound(e, env)
        self.found.append((e, bound, within, guards))
        if FUNCTIONS[e.func].breaks == "branch" and not any(a.name for a in e.args):  # `if(c, a, b)`
            cond, then, other = (a.value for a in e.args)
            self.visit(cond, env, within, guards)
            self.visit(then, env, within, guards + ((bound.args[0].value, True),))
            self.visit(other, env, within, guards + ((bound.args[0].value, False),))
            return
        for a in e.args:
            self.visit(a.value, env, within, guards)


def _bound(e: ir.Expr, env: dict) -> ir.Expr:
    """``e`` with each name of ``env`` (a user function's parameters) replaced by what it stands for."""
    if not env:
        return e
    if e.__class__ is ir.Name:
        return env.get(e.name, e)
    out = ir.map_children(e, lambda c: _bound(c, env))
    if e.__class__ is ir.Aggregate and e.var in env:  # the variable hides a parameter of that name in the body
        out = replace(out, body=_bound(e.body, {k: v for k, v in env.items() if k != e.var}))
    return out


def _breaks(plan: Plan) -> dict[str, tuple[list[_Break], list]]:
    """Each derived quantity's breaks and the quantities it names, each with the conditions of the ``if``
    branches it is under (``(output, branch)``), found once for the plan; the program that evaluates the
    breaks and the conditions is ``_memo(plan)["probe"]``."""
    memo = _memo(plan)
    if "breaks" not in memo:
        model = plan.model
        found: dict[str, tuple[list[_Break], list]] = {}
        outputs: list = []
        conditions: dict[int, str] = {}  # id of a guard's condition -> its output

        def guarded(guards: tuple) -> tuple[tuple[str, bool], ...]:
            for cond, _ in guards:
                if id(cond) not in conditions:
                    conditions[id(cond)] = f"__guard{len(conditions)}"
                    outputs.append((conditions[id(cond)], cond))
            return tuple((conditions[id(c)], taken) for c, taken in guards)

        def walk(n: str) -> _Breaks:
            visitor = _Breaks(model)
            visitor.visit(model.quantities[n].definition.expr, {}, "", ())
            return visitor

        walks = deep(lambda: [walk(n) for n in model.derived])  # (formulas nest deep)
        for n, visitor in zip(model.derived, walks):
            breaks = []
            for call, bound, within, guards in visitor.found:
                kind, k = FUNCTIONS[call.func].breaks, len(outputs)
                if kind is None:
                    continue
                parts = {"kink": [bound] + [a.value for a in bound.args], "step": [bound],
                         "branch": [bound.args[0].value]}[kind]
                names = tuple(f"__break{k + i}" for i in range(len(parts)))
                outputs += zip(names, parts)
                text = formula_text(call.args[0].value if kind == "branch" else call)
                named = f"`{text}`" + (f" (in `{within}`)" if within else "")
                what = {"kink": f"a kink: {named} " + ("has equal arguments" if len(call.args) > 1
                                                       else "has its argument at 0"),
                        "step": f"a jump: {named} steps at this value (flat on either side)",
                        "branch": f"an `if` on its edge: {named}"}[kind]
                inputs = frozenset(i for i in cone(model, _reads(model, bound)) if model.quantities[i].is_input)
                breaks.append(_Break(kind, what, names, inputs, guarded(guards)))
            for bound, guards in visitor.sums:  # not entered: a break there is measured, not named
                inputs = frozenset(i for i in cone(model, _reads(model, bound)) if model.quantities[i].is_input)
                breaks.append(_Break("sum", "", (), inputs, guarded(guards)))
            found[n] = (breaks, [(r, guarded(guards)) for r, guards in visitor.refs])
        if outputs:
            from ..compute.numeric import compile_program

            memo["probe"] = compile_program(model, plan.arguments, outputs)
        memo["breaks"] = found
    return memo["breaks"]


def _probe(plan: Plan, ev, input_name: Optional[str] = None) -> dict:
    """The breaks' and guards' outputs with ``input_name`` at each of its :func:`_points` (none: at the
    values of ``ev``)."""
    return _run_at(plan, ev, input_name, _points(plan, ev, input_name) if input_name else None, "probe")


def _active(plan: Plan, ev, name: str) -> list[_Break]:
    """The breaks on the way to ``name`` at the values of ``ev``: in the formulas it uses, not under an
    ``if`` branch not taken there (`if(ep >= 2, ep_time, 0 s)` at `ep = 1` leaves `ep_time`'s out)."""
    found = _breaks(plan)
    got = _probe(plan, ev) if "probe" in _memo(plan) else {}  # (none: no break, no guard)

    def taken(guards) -> bool:
        return all(bool(got[g]) == branch for g, branch in guards)

    out, seen, todo = [], {name}, [name]
    while todo:
        breaks, refs = found.get(todo.pop(), ((), ()))
        out += [b for b in breaks if taken(b.guards)]
        for r, guards in refs:
            if r not in seen and taken(guards):
                seen.add(r)
                todo.append(r)
    return out


def _reads(model, e: ir.Expr) -> list[str]:
    """The quantities ``e`` reads, in itself and in the bodies of the user functions it calls."""
    names, seen, todo = set(), set(), [(e, frozenset())]
    while todo:
        expr, params = todo.pop()
        names |= {x.name for x in ir.free_names(expr) if x.name not in params}
        for node in ir.walk(expr):
            f = model.functions.get(node.func) if node.__class__ is ir.Call else None
            if f is not None and f.name not in seen:
                seen.add(f.name)
                todo.append((f.body, frozenset(p.name for p in f.params)))
    return [n for n in names if n in model.quantities]


def _changed(plan: Plan, ev, breaks: list[_Break], input_name: str, at: tuple[int, ...]) -> list[_Break]:
    """The ``breaks`` that change argument, branch or step between the input's value and its points ``at``
    (indexes into :func:`_points`)."""
    breaks = [b for b in breaks if input_name in b.inputs and b.outputs]
    if not breaks:
        return []
    points, got = _points(plan, ev, input_name), _probe(plan, ev, input_name)
    raw = _run_at(plan, ev, input_name, points)  # a point outside the input's bounds is no change
    valid = np.ones(points.shape, dtype=bool)
    for i in range(len(plan._constraints)):
        valid = valid & np.broadcast_to(np.asarray(raw[f"__constraint{i}"], dtype=bool), points.shape)
    at = [i for i in at if valid[i]]
    out = []
    for b in breaks:
        value = np.broadcast_to(np.asarray(got[b.outputs[0]], dtype=float), points.shape)
        if b.kind == "kink":  # the argument the value follows (-1: none, abs of a negative)
            args = [np.broadcast_to(np.asarray(got[o], dtype=float), points.shape) for o in b.outputs[1:]]
            choice = np.select([a == value for a in args], range(len(args)), -1).astype(float)
            choice[~np.isfinite(value)] = np.nan
        else:
            choice = value
        here = choice[MID]
        if here == here and any(c == c and c != here for c in choice[at]):  # (a point without a value: no change)
            out.append(b)
    return out


def _through_answers(plan: Plan, ev, name: str, answers: list[str], overrides, origins) -> list[Row]:
    """A quantity that uses a question's answer: a symmetric difference of whole evaluations, the
    questions answered again on each side (the answer moves with the inputs its question uses)."""
    model = plan.model
    inputs = set(n for n in cone(model, [name]) if model.quantities[n].is_input)
    for a in answers:
        inputs |= model.answer_inputs(a)
    q = model.quantities[name]
    y, y_scale = float(ev.values[name]), float(q.display.scale)
    rows = []
    for n in sorted(inputs):
        xq = model.quantities[n]
        if xq.is_bool:
            continue
        x = ev.inputs[n]
        h = abs(x) * Fraction(1, 10**6) if x != 0 else xq.display.scale * Fraction(1, 10**6)
        through = [a for a in answers if n in model.answer_inputs(a)]
        note = "through " + ", ".join(f"`{a}`" for a in through) + ": each side solved again" if through else ""
        try:
            lo = plan.evaluate(ev.scenario, {**(overrides or {}), n: x - h}, origins).values[name]
            hi = plan.evaluate(ev.scenario, {**(overrides or {}), n: x + h}, origins).values[name]
            dv = (float(hi) - float(lo)) / float(2 * h)
        except PlanError as err:
            rows.append(Row(n, float(x / xq.display.scale), xq.unit_text, None, None, "none",
                            f"no value on one side ({err.message})"))
            continue
        if xq.integer:
            note = (note + "; " if note else "") + "integer input, treated as continuous"
        rows.append(Row(n, float(x / xq.display.scale), xq.unit_text, None if y == 0 else dv * float(x) / abs(y),
                        dv * float(xq.display.scale) / y_scale, "numeric difference", note))
    return rows


TOL = 1e-3  # relative: two slopes closer than this are the same slope
NOISE = 1e-13  # relative: a value moved by no more than this has not moved (float residue)
EPS = 2.0 ** -52  # a float's relative rounding
TIE = 1e-4  # of half a unit of a digit: a slope measured this close to a tie (5 in the next digit) is the tie


def _same(a: float, b: float, slack: float = 0.0) -> bool:
    """Whether two slopes are one, to ``TOL`` and within ``slack`` (what float residue can make of them)."""
    return abs(a - b) <= TOL * max(abs(a), abs(b)) + slack + 1e-12


def _measured(slope: float, err: float) -> float:
    """``slope`` to the digits it has: the shortest decimal within ``err`` of it (as ``repr`` writes a float),
    so an exact 1/128 measured as 0.00781249998 reads 0.0078125 and shows as the exact slope does; kept as
    measured where a rounding tie lies within ``err`` but not within ``TIE`` of a unit of its digit (the number
    rule rounds it again)."""
    if not slope or not math.isfinite(slope):
        return slope + 0.0
    for digits in range(1, 17):
        r = float(f"{slope:.{digits}g}")
        if abs(r - slope) <= err:
            return r + 0.0
        tie = 10.0 ** (math.floor(math.log10(abs(slope))) - digits + 1) / 2  # half a unit of the last digit
        # as near a tie as it is known to: rounded, it could round the wrong way where shown (209.34549998
        # to 209.3455, shown 209.346), kept as measured; unless known to four digits more (1/128, 0.0078125)
        if abs(abs(r - slope) - tie) <= err and err > TIE * tie:
            break
    return slope + 0.0


def _extrapolated(f: np.ndarray, ok: np.ndarray, at: np.ndarray, sign: int = 0) -> Optional[tuple[float, float]]:
    """The slope at the value from the differences over ``H``, ``H/2`` and ``H/4`` (the :data:`WIDE` points;
    ``sign`` 0: central, 1 or -1: the side of a rise or of a fall), and how far off it may be; None where a
    point has no value. Richardson's extrapolation: of central differences ``(4 D(H/4) - D(H/2)) / 3``, exact
    up to rounding where the quantity is a polynomial of degree 4 or less in the input (as parameter counts
    are); of one-sided ones, twice (to the third power of ``H``). Held against the extrapolation one step
    coarser: the two differ by more than the finer is off, or by float rounding (over a step this wide, far
    less than over ``h``)."""
    pairs = WIDE if sign == 0 else [(pair[sign < 0], MID) for pair in WIDE]
    if not all(ok[i] for pair in pairs for i in pair):
        return None
    d = []  # each difference as its weights on the points
    for i, j in pairs:
        w = np.zeros(len(at))
        w[i], w[j] = 1 / (at[i] - at[j]), -1 / (at[i] - at[j])
        d.append(w)
    k = 4 if sign == 0 else 2  # a central difference's error goes as H^2, a one-sided one's as H
    coarse, fine = (k * d[1] - d[0]) / (k - 1), (k * d[2] - d[1]) / (k - 1)
    if sign:
        coarse, fine = fine, (4 * fine - coarse) / 3
    v = np.where(ok, f, 0.0)
    value = float(fine @ v)
    return value, abs(value - float(coarse @ v)) + EPS * float(np.abs(fine) @ np.abs(v))


# The points an input is moved to, in one run of the compiled plan (:func:`_points`): x - h, x - h/16, x,
# x + h/16, x + h, then up and down by the stated change (a continuous input) or by one step (an integer),
# then x + H, x - H, x + H/2, x - H/2, x + H/4, x - H/4 for the slope's last digits (:func:`_extrapolated`),
# H the stated change.
MID, UP, DOWN = 2, 5, 6
WIDE = (7, 8), (9, 10), (11, 12)  # the pairs of the central differences over H, H/2 and H/4


def _points(plan: Plan, ev, input_name: str) -> np.ndarray:
    xq = plan.model.quantities[input_name]
    x = float(ev.inputs[input_name])
    scale = float(xq.display.scale)
    h, wide = (abs(x) * STEP, abs(x) * CHANGE) if x != 0 else (scale * STEP, scale * CHANGE)
    far = (x + scale, x - scale) if xq.integer else (x * (1 + CHANGE), x * (1 - CHANGE))
    return np.array([x - h, x - h / NEAR, x, x + h / NEAR, x + h, *far,
                     *(x + sign * wide / k for k in (1, 2, 4) for sign in (1, -1))])


def _moved(plan: Plan, ev, name: str, input_name: str, bounded: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``name`` at each of the input's :func:`_points`, and whether it has a value there (:func:`_values`)."""
    return _values(plan, ev, name, input_name, _points(plan, ev, input_name), bounded)


def _values(plan: Plan, ev, name: str, input_name: str, at: np.ndarray, bounded: bool = True):
    """``name`` with ``input_name`` at each of ``at`` (base units), the others as in ``ev``, and whether it
    has a value there: finite and, where ``bounded``, every constraint holding."""
    raw = _run_at(plan, ev, input_name, at)
    f = np.broadcast_to(np.asarray(raw[name], dtype=float), at.shape)
    ok = np.isfinite(f)
    for i in range(len(plan._constraints) if bounded else 0):
        ok = ok & np.broadcast_to(np.asarray(raw[f"__constraint{i}"], dtype=bool), at.shape)
    return f, ok


def _difference_row(plan: Plan, ev, name: str, input_name: str, kink: str = "a kink",
                    whole: Optional[bool] = None, bounded: bool = True) -> Row:
    """The slope of ``name`` in ``input_name`` from one-sided differences of the compiled plan.

    ``whole`` (an integer input, unless told): one step of its display unit each way. Otherwise each
    side at steps ``h`` and ``h/16``; a side is known when its two slopes agree (else a jump or kink lies
    within ``h``). A side outside the declared bounds (a constraint fails there) is not used, where
    ``bounded``. Both sides known and equal: the central difference. Different: the rise's slope, the
    fall's in the note (``kink`` names what is not smooth there)."""
    q, xq = plan.model.quantities[name], plan.model.quantities[input_name]
    whole = xq.integer if whole is None else whole
    at = _points(plan, ev, input_name)
    x = float(at[MID])
    scale = float(xq.display.scale)
    shown = float(ev.inputs[input_name] / xq.display.scale)
    y = float(ev.values[name])
    y_scale = float(q.display.scale)
    f, ok = _moved(plan, ev, name, input_name, bounded)
    f0 = f[MID]
    noise = NOISE * abs(f0)  # a move this small is float residue: the slopes are compared to within it

    def slack(i: int) -> float:
        return 2 * noise / abs(at[i] - x)

    def side(far: int, near: Optional[int]) -> tuple[Optional[float], str]:
        if not ok[far]:
            return None, "outside the input's bounds or no value there"
        if near is not None and not ok[near]:
            return None, "no value there"
        if all(abs(f[i] - f0) <= noise for i in (far, near) if i is not None):
            return 0.0, ""  # not moved (`t / (t + c)` of a `t` on a branch not taken): exactly flat
        slope = (f[far] - f0) / (at[far] - x)
        if near is not None and not _same(slope, (f[near] - f0) / (at[near] - x), slack(near)):
            return None, "a jump, a kink or a slope that is not finite within 1e-6 of the value"
        return float(slope) + 0.0, ""

    (up, up_why), (down, down_why) = (side(UP, None), side(DOWN, None)) if whole else (side(4, 3), side(0, 1))

    def sharp(d: Optional[float], far: int, near: int, sign: int) -> tuple[Optional[float], float]:
        """A side's slope (``sign`` 0: the central difference) to the digits it has, and how far off it may
        be: at least a float's rounding of the quantity over the step, and for a central difference what
        the one over h/16 (rounded 16 times as much) shows of it, where the quantity is a difference of
        larger terms; where the differences over 1%, 1/2% and 1/4% agree with it, their extrapolation
        (:func:`_extrapolated`)."""
        if not d or whole:  # (0: exactly flat, no more digits to find)
            return d, 0.0
        if sign == 0:
            near_slope = float((f[near] - f[4 - near]) / (at[near] - at[4 - near]))
            err = max(EPS * abs(f0) / abs(at[far] - at[4 - far]), abs(d - near_slope) / NEAR)
        else:  # a one-sided difference is off by about its step: Richardson's extrapolation of h and h/16
            d = (NEAR * float((f[near] - f0) / (at[near] - x)) - d) / (NEAR - 1)
            err = 2 * NEAR * EPS * abs(f0) / abs(at[far] - x)
        wide = _extrapolated(f, ok, at, sign)
        if wide is not None and wide[1] < err and abs(wide[0] - d) <= 8 * err + wide[1]:
            return wide  # the same slope, to more digits
        return d, err

    (up, up_err), (down, down_err) = sharp(up, 4, 3, 1), sharp(down, 0, 1, -1)

    def el(d: Optional[float], err: float = 0.0) -> Optional[float]:
        return None if d is None or y == 0 else _measured(d * x / abs(y), err * abs(x / y))

    def show(d: Optional[float]) -> str:
        e = el(d)
        return f"{e + 0.0:+.4f}" if e is not None else f"slope {_signed(d * scale / y_scale)}"

    rise, fall = ("one step up", "one step down") if whole else ("a rise", "a fall")
    what = "integer input: " if whole else ""
    ends = (DOWN, UP) if whole else (0, 4)
    if up is not None and down is not None and _same(up, down, slack(ends[1])):
        d = 0.0 if up == down == 0 else float((f[ends[1]] - f[ends[0]]) / (at[ends[1]] - at[ends[0]]))
        if not whole:  # one slope: the central difference, each figure to the digits it has
            d, err = sharp(d, 4, 3, 0)
            return Row(input_name, shown, xq.unit_text, el(d, err),
                       _measured(d * scale / y_scale, err * scale / y_scale), "numeric difference")
        method = "one-step differences"
        note = what + "a step up and a step down agree"
        err = 0.0
    elif up is not None and down is not None:
        d, err = up, up_err
        method = "one-sided differences"
        note = ((what if whole else f"not differentiable here ({kink}): ")
                + f"{rise} gives elasticity {show(up)}, {fall} {show(down)}; shown: {rise}")
    elif up is not None or down is not None:
        d, err = (up, up_err) if up is not None else (down, down_err)
        method = "one-sided differences"
        missing, why = (rise, up_why) if up is None else (fall, down_why)
        note = what + f"one side only: no slope for {missing} ({why}); shown: the other side"
    else:
        return Row(input_name, shown, xq.unit_text, None, None, "none",
                   f"no finite slope on either side: {up_why}")
    return Row(input_name, shown, xq.unit_text, el(d, err), _measured(d * scale / y_scale, err * scale / y_scale),
               method, note, el(up, up_err), el(down, down_err))


CHANGE = 0.01  # the stated change: "a 1% rise in the input moves the quantity by about that many %"
AGREE = 0.1  # relative: a slope within this of the stated change's effect answers the reader's question
FAR = 0.5  # the nearest step is looked for up to a 50% change either way
LOOK = 400  # points each way in that look (then refined between the two around the step)
RESIDUE = 1e-9  # relative: a change this small is float residue, not an effect


def _stated(plan: Plan, ev, name: str, row: Row, breaks: list[_Break]) -> Row:
    """``row`` held against the effect of the stated change (a 1% rise and a 1% fall of the input, in
    its run of the compiled plan, :func:`_points`). Kept as it is where the slope tells the effect
    (within ``AGREE``), for an integer input (its rows already give one step each way) and where the
    quantity is 0 (no elasticity). Otherwise the row becomes the effect on each side, its elasticity
    the larger in size (the rise's on a tie), the note saying both and what lies within 1%: a step or
    a kink where one of ``breaks`` changes there, else only that the effect is not linear; a quantity
    flat within 1% either way but stepped further off says where the nearest step is."""
    xq = plan.model.quantities[row.input]
    y = float(ev.values[name])
    x = float(ev.inputs[row.input])
    if xq.integer or xq.is_bool or y == 0 or x == 0 or not math.isfinite(y):
        return row
    f, ok = _moved(plan, ev, name, row.input)
    up, down = (float(f[i]) if ok[i] else None for i in (UP, DOWN))
    # a change within float residue of the value is no change (a term that cancels exactly, as
    # `a * (b - c) - a * b + a * c`, moves by 1e-13 %: that is not a step)
    up, down = (y if v is not None and abs(v - y) <= RESIDUE * abs(y) else v for v in (up, down))
    rise = None if up is None else (up - y) / abs(y) / CHANGE + 0.0  # never -0.0
    fall = None if down is None else (down - y) / abs(y) / -CHANGE + 0.0
    local = row.elasticity
    stepped = row.method == "none" or "floor/ceil/round" in row.note
    # each side against the row's own slope on that side (a kink's one-sided rows), else the one slope
    pairs = [(e, row.rise if row.rise is not None else local) for e in (rise,) if e is not None]
    pairs += [(e, row.fall if row.fall is not None else local) for e in (fall,) if e is not None]
    if not pairs:
        return row
    agree = all(slope is not None and abs(e - slope) <= AGREE * max(abs(slope), abs(e)) + 1e-12
                for e, slope in pairs)
    if agree and not (stepped and local == 0):  # the slope tells what the change does
        return row
    # what lies within 1%: a step or a kink where a call on the way (of ``breaks``) changes there, else
    # only that the effect is not linear (a strong curve: compound growth; a break inside a sum)
    kinds = {b.kind for b in _changed(plan, ev, breaks, row.input, (UP, DOWN))}
    what = ("a step" if stepped or kinds == {"step"} else "a kink" if kinds == {"kink"} else
            "a step or kink" if kinds else "")
    through = any(b.kind == "sum" and row.input in b.inputs for b in breaks)

    def said(v: Optional[float], it: str) -> str:  # the effect of a change that gives ``name`` the value ``v``
        if v is None:
            return f"leaves {it} without a value"
        return f"leaves {it} as it is" if v == y else f"moves {it} by {_signed((v - y) / abs(y) * 100, 3)}%"

    if (rise or 0.0) == 0 and (fall or 0.0) == 0:
        nearest = _nearest_step(plan, ev, name, row.input, x, y)
        note = f"{what or 'a step'} lies outside 1% either way: a 1% rise or fall leaves `{name}` as it is"
        if nearest:
            note += f"; {nearest}"
        elasticity = 0.0
    else:
        curve = "the effect is not linear over 1%" + (" (through a sum or series, whose steps and kinks are "
                                                      "not named)" if through else "")
        note = (f"{f'{what} lies within 1% of the value' if what else curve}: "
                f"a 1% rise {said(up, f'`{name}`')}, "
                f"a 1% fall {said(down, 'it')}; the local slope gives "
                + ("no elasticity" if local is None else f"{local + 0.0:+.4f}"))
        elasticity = rise if fall is None or (rise is not None and abs(rise) >= abs(fall)) else fall
    scale = float(xq.display.scale)
    y_scale = float(plan.model.quantities[name].display.scale)
    derivative = None if elasticity is None else elasticity * abs(y) / x * scale / y_scale
    return Row(row.input, row.value, row.unit, elasticity, derivative, "effect of a 1% change", note, rise, fall)


def _effects(plan: Plan, ev, name: str, input_name: str, at: np.ndarray) -> list[Optional[float]]:
    """``name`` with ``input_name`` at each of ``at`` (base units), the others as in ``ev``; None
    where it has no finite value or a constraint fails there (the look for the nearest step)."""
    f, ok = _values(plan, ev, name, input_name, at)
    return [float(v) if good else None for v, good in zip(f, ok)]


def _run_at(plan: Plan, ev, input_name: Optional[str], at: Optional[np.ndarray], probe: str = "") -> dict:
    """Every quantity (the ``probe`` program's outputs, where told) with ``input_name`` at each of ``at`` (base
    units), the other inputs as in ``ev``: one run of the compiled plan, kept on the plan (every headline
    figure moves each input the same way)."""
    values = {n: (v if isinstance(v, bool) else float(v)) for n, v in ev.inputs.items()}
    key = (probe, input_name, () if at is None else tuple(at.tolist()), tuple(values.items()))
    memo = _memo(plan)
    if key not in memo:
        if input_name:
            values[input_name] = at
        program = memo[probe] if probe else plan.compiled
        memo[key] = dict(zip(program.outputs, program(plan.args(values))))
    return memo[key]


def _nearest_step(plan: Plan, ev, name: str, input_name: str, x: float, y: float) -> str:
    """Where, within a 50% change either way, ``name`` first moves: "the nearest step is a 5.0% rise
    (to 1,260 parcel/day), where it moves by +9.76%", or "" when it is flat that far."""
    xq = plan.model.quantities[input_name]
    found = []
    for sign in (1, -1):
        grid = np.linspace(0, FAR, LOOK + 1)[1:]
        at = x * (1 + sign * grid)
        ys = _effects(plan, ev, name, input_name, at)
        k = next((i for i, v in enumerate(ys) if v is None or abs(v - y) > RESIDUE * abs(y)), None)
        if k is None or ys[k] is None:
            continue
        lo, hi = (grid[k - 1] if k else 0.0), grid[k]
        fine = np.linspace(lo, hi, LOOK + 1)[1:]
        ys_fine = _effects(plan, ev, name, input_name, x * (1 + sign * fine))
        j = next((i for i, v in enumerate(ys_fine) if v is None or abs(v - y) > RESIDUE * abs(y)), None)
        if j is None or ys_fine[j] is None:
            continue
        found.append((fine[j], sign, ys_fine[j]))
    if not found:
        return ""
    d, sign, v = min(found)
    to = x * (1 + sign * d) / float(xq.display.scale)
    return (f"the nearest step is a {significant(d * 100, 3)}% {'rise' if sign > 0 else 'fall'} "
            f"(to {format_value(to, xq.unit_text, 4)}), where `{name}` moves by {_signed((v - y) / abs(y) * 100, 3)}%")


def _signed(v: float, digits: int = 6) -> str:
    """A change by the number rule with its sign (``+1.25``, ``-0.5``, ``+2.4E-05``), never ``-0``."""
    text = significant(v + 0.0, digits)
    return text if text.startswith("-") else "+" + text
