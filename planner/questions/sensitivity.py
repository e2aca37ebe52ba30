"""Sensitivity: which input moves a quantity most.

For each input a quantity depends on, the elasticity ``dy/dx * x / |y|`` at
the current values (a 1% rise in ``x`` moves ``y`` by about that many % of its size: its sign is the
direction ``y`` moves, also where ``y`` is negative, a loss that deepens reads as a fall),
sorted by magnitude. The derivative is SymPy's, of the quantity written over
its inputs (:func:`planner.questions.roots.inline`), evaluated with exact rationals.

``max``/``min``/``abs``/``if`` are not differentiable everywhere: the
derivative is taken on the branch active at the current values. Where two
branches meet (a kink: ``max(a, b)`` with ``a == b``), the derivative does not
exist: the row gives the elasticity of a rise and, in its note, of a fall
(one-sided differences of the plan as planner evaluates it), never their average.

A quantity whose formulas use an aggregate (``sum``, ``product``, ``max``/``min`` over a
range) is differentiated numerically, on the compiled plan: a sum's terms branch on
its variable (``if(k < cap, k, cap)``), so no one branch is active for the whole sum,
and SymPy's derivative of such a sum can run for minutes. Each side is measured at two
steps (``h`` and ``h/16``); a side whose slope is not steady between them is a jump or a
kink within the step and is said to be so. An integer input moves by one step of its
display unit (a sum's range ``1..n`` has no value between ``n`` and ``n + 1``), up and
down, within its declared bounds.

A slope answers "what does a small change do"; a reader asks what a real one does. Each row's
elasticity is therefore held against the effect of the stated change itself, a 1% rise and a 1%
fall of the input in a whole evaluation (:func:`_stated`). Where the two disagree, a step
(``ceil``, ``floor``, ``round``, an ``if``) or a kink lies within 1% of the value, and the row
gives the effect of the change on each side instead, ranked by the larger, its method and note
saying so; where a step function is flat within 1% either way, the note says how far the nearest
step is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Optional

import numpy as np

from ..compute.evaluation import Plan, format_value
from ..compute.numbers import significant
from ..language.graph import cone
from ..language.errors import KindError, PlanError, UnknownNameError, suggest
from .fast import ranges_in

STEP = 1e-6  # relative step of the numeric difference


def _steps() -> tuple:
    """SymPy's step functions (floor, ceil, sign): SymPy is imported only where a derivative is
    symbolic, not for a quantity that goes through a sum over a range (differences of the numeric
    program) or through an answer."""
    import sympy as sp

    return (sp.floor, sp.ceiling, sp.sign)


@dataclass(frozen=True)
class Row:
    input: str
    value: float  # in the input's display unit
    unit: str
    elasticity: Optional[float]  # None when the quantity is 0 there or the derivative is not finite
    derivative: Optional[float]  # dy/dx in display units of y per display unit of x; None when not finite
    method: str  # "symbolic", "symbolic (active branch)", "numeric difference", "one-sided differences",
    #              "one-step differences" (an integer input) or "none" (no finite slope)
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
    return (size is None, -(size or 0.0), r.input)


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
        out.rows.append(Row(name, out.value, q.unit_text, 1.0, 1.0, "symbolic", "the quantity is an input"))
        return out
    answers = [a for n in cone(plan.model, [name]) for a in plan.model.quantities[n].answer_deps]
    if answers:
        out.rows.extend(_through_answers(plan, ev, name, sorted(set(answers)), overrides, origins))
        out.rows.sort(key=_order)
        return out
    if ranges_in(plan, q.definition.expr):
        out.rows.extend(_stated(plan, ev, name, r) for r in _differences(plan, ev, name))
        out.rows.sort(key=_order)
        return out
    fast = _forward(plan, ev, name)
    if fast is not None:
        out.rows.extend(fast)
        out.rows.sort(key=_order)
        return out
    import sympy as sp  # (the symbolic route: imported only here)

    from ..compute.closed import NoClosedForm, plan_text
    from .roots import exact_number

    expr, has_branches, stepped_in = _inlined(plan, name)
    point = {plan.symbols[n]: exact_number(v) for n, v in ev.inputs.items()}
    kinks: list[sp.Basic] = []
    jumps: list[sp.Basic] = []
    active = _active(expr, point, kinks, jumps)
    branched = bool(kinks) or has_branches
    y_f = float(ev.values[name])
    y_scale = float(q.display.scale)
    for sym in sorted(expr.free_symbols, key=lambda s: s.name):
        n = plan.symbols.names.get(sym)
        if n is None or plan.model.quantities[n].is_bool:
            continue
        xq = plan.model.quantities[n]
        x = point[sym]
        method, note = "symbolic", ""
        kinked = [k for k in kinks if k.has(sym)]
        stepped = [k for k in jumps if k.has(sym)]
        flat = sym in stepped_in
        d = None
        if xq.integer and _off_branch(plan, ev, name, n, active, point, sym):
            step = _difference_row(plan, ev, name, n)
            out.rows.append(replace(step, note=step.note + "; a branch or step changes within one step"))
            continue
        if stepped:
            out.rows.append(_stated(plan, ev, name, Row(
                n, float(x) / float(xq.display.scale), xq.unit_text, None, None, "none",
                f"a jump: `{plan_text(stepped[0])}` steps at this value (flat on either side)")))
            continue
        if not kinked:
            raw = _derivative(plan, active, sym)
            d = None if raw.has(sp.Derivative) else raw.xreplace(point)
        if kinked:
            out.rows.append(_stated(plan, ev, name, _difference_row(
                plan, ev, name, n, f"a kink: `{plan_text(kinked[0])}` has equal arguments")))
            continue
        if d is None or d.has(sp.Derivative) or not (d.is_number and d.is_finite):
            dv = _numeric(plan, ev, name, n)
            method = "numeric difference"
            if d is None or not d.is_number:
                note = "SymPy has no derivative here (floor, ceil or round)"
            else:
                note = f"the symbolic derivative is not finite here ({NoClosedForm(d).what})"  # infinity, undefined
            if not math.isfinite(dv):
                dv, method = None, "none"
                note += "; no finite derivative at this value"
        else:
            dv = float(d)
            if branched:
                method = "symbolic (active branch)"
            if flat:
                note = "floor/ceil/round are flat here (derivative 0)"
        elasticity = None if y_f == 0 or dv is None else dv * float(x) / abs(y_f)
        rise = fall = None
        if xq.integer:
            step = _difference_row(plan, ev, name, n)  # the one-step values, in Row.rise/Row.fall
            rise, fall = step.rise, step.fall
            note = (note + "; " if note else "") + "integer input, treated as continuous"
        out.rows.append(_stated(plan, ev, name, Row(
            n, float(x) / float(xq.display.scale), xq.unit_text, elasticity,
            None if dv is None else dv * float(xq.display.scale) / y_scale, method, note, rise, fall)))
    out.rows.sort(key=_order)
    return out


def _memo(plan: Plan) -> dict:
    """What :func:`sensitivity` derives from the plan alone, kept on the plan: a report asks for each
    headline in every scenario, and the scenarios share the inlined formulas and, where the same
    branches are active, their derivatives."""
    return plan.__dict__.setdefault("_sensitivity_memo", {})


def _inlined(plan: Plan, name: str) -> tuple[sp.Basic, bool, frozenset]:
    """``name`` written over the inputs (:func:`.roots.inline`), whether it has branches (max, min,
    abs, if), and the symbols inside a floor, ceil or sign (flat in them, where defined)."""
    import sympy as sp

    from .roots import KINKS, inline

    memo = _memo(plan)
    got = memo.get(name)
    if got is None:
        expr = inline(plan, plan.symbols[name])
        nodes = list(sp.preorder_traversal(expr))
        got = memo[name] = (expr, any(isinstance(e, KINKS) for e in nodes),
                            frozenset(s for e in nodes if isinstance(e, _steps()) for s in e.free_symbols))
    return got


def _derivative(plan: Plan, active: sp.Basic, sym: sp.Symbol) -> sp.Basic:
    import sympy as sp

    memo = _memo(plan)
    key = ("d", active, sym)
    got = memo.get(key)
    if got is None:
        got = memo[key] = sp.diff(active, sym)
    return got


def _active(e: sp.Basic, point: dict, kinks: list, jumps: list) -> sp.Basic:
    """``e`` with every max/min/abs/if replaced by its branch active at ``point``,
    and every floor/ceil/sign by its (locally constant) value there; a step
    whose argument sits exactly on a jump goes to ``jumps``."""
    import sympy as sp

    if not e.args or e.is_Atom:
        return e
    if isinstance(e, _steps()):
        v = _active(e.args[0], point, kinks, jumps).xreplace(point)
        if not v.is_Rational:
            return e
        if (v.is_Integer if not isinstance(e, sp.sign) else v == 0):
            jumps.append(e)
        return e.func(v)
    if isinstance(e, (sp.Max, sp.Min)):
        args = [_active(a, point, kinks, jumps) for a in e.args]
        vals = [a.xreplace(point) for a in args]
        best = max(vals) if isinstance(e, sp.Max) else min(vals)
        winners = [a for a, v in zip(args, vals) if v == best]
        if len(winners) > 1:
            kinks.append(e)
        return winners[0]
    if isinstance(e, sp.Abs):
        u = _active(e.args[0], point, kinks, jumps)
        v = u.xreplace(point)
        if v == 0:
            kinks.append(e)
        return u if v >= 0 else -u
    if isinstance(e, sp.Piecewise):
        for value, cond in e.args:
            if cond is sp.true or cond.xreplace(point) is sp.true:
                return _active(value, point, kinks, jumps)
        return e
    args = [_active(a, point, kinks, jumps) for a in e.args]
    return e.func(*args) if any(a is not b for a, b in zip(args, e.args)) else e


FORWARD_MIN = 64  # cones at least this large are differentiated through the graph


def _forward(plan: Plan, ev, name: str) -> Optional[list[Row]]:
    """Forward mode through the dependency graph: each quantity's partial derivatives
    (SymPy, on its own small expression, at exact values) combined by the chain rule in
    topological order. For large smooth cones only (None otherwise): the inlined
    expression of a long chain costs about the cube of its length to differentiate."""
    import sympy as sp

    from .roots import KINKS, exact_number

    qs = plan.model.quantities
    order = cone(plan.model, [name])  # dependencies first
    if len(order) < FORWARD_MIN:
        return None
    exact = {n: exact_number(v) for n, v in ev.inputs.items()}
    grad: dict[str, dict[str, sp.Basic]] = {}
    for n in order:
        q = qs[n]
        if q.is_input:
            grad[n] = {} if q.is_bool else {n: sp.Integer(1)}
            continue
        e = plan.exprs[n]
        if any(isinstance(k, KINKS + _steps()) for k in sp.preorder_traversal(e)) or q.is_bool:
            return None
        at = {plan.symbols[d]: exact[d] for d in q.deps}
        exact[n] = e.xreplace(at)
        g: dict[str, sp.Basic] = {}
        for d in q.deps:
            if not grad[d]:
                continue
            part = sp.diff(e, plan.symbols[d]).xreplace(at)
            if not (part.is_number and part.is_finite):
                return None
            for i, v in grad[d].items():
                g[i] = g.get(i, 0) + part * v
        grad[n] = g
    q = qs[name]
    y_f, y_scale = float(ev.values[name]), float(q.display.scale)
    rows = []
    for i, d in sorted(grad[name].items()):
        xq, x = qs[i], exact[i]
        dv = float(d)
        note = "integer input, treated as continuous" if xq.integer else ""
        rows.append(Row(i, float(x) / float(xq.display.scale), xq.unit_text, None if y_f == 0 else dv * float(x) / abs(y_f),
                        dv * float(xq.display.scale) / y_scale, "symbolic", note))
    return rows


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


def _numeric(plan: Plan, ev, name: str, input_name: str) -> float:
    """Symmetric difference of quantity ``name`` in input ``input_name`` (base units)."""
    x = float(ev.inputs[input_name])
    h = abs(x) * STEP if x != 0 else float(plan.model.quantities[input_name].display.scale) * STEP
    inputs = {n: (v if isinstance(v, bool) else float(v)) for n, v in ev.inputs.items()}
    inputs[input_name] = np.array([x - h, x + h])
    out = np.asarray(plan.run_compiled(inputs)[name], dtype=float)
    return float((out[1] - out[0]) / (2 * h))


TOL = 1e-3  # relative: two slopes closer than this are the same slope


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(abs(a), abs(b)) + 1e-12


def _differences(plan: Plan, ev, name: str) -> list[Row]:
    """One row per input in the cone of ``name``, from differences of the compiled plan."""
    qs = plan.model.quantities
    inputs = [n for n in cone(plan.model, [name]) if qs[n].is_input and not qs[n].is_bool]
    _batched(plan, ev, sorted(inputs))
    return [_difference_row(plan, ev, name, n) for n in sorted(inputs)]


def _difference_steps(plan: Plan, ev, input_name: str) -> np.ndarray:
    """The points :func:`_difference_row` evaluates ``input_name`` at (base units)."""
    xq = plan.model.quantities[input_name]
    x, scale = float(ev.inputs[input_name]), float(xq.display.scale)
    if xq.integer:
        return np.array([x - scale, x, x + scale])
    h = abs(x) * STEP if x != 0 else scale * STEP
    return np.array([x - h, x - h / 16, x, x + h / 16, x + h])


def _batched(plan: Plan, ev, inputs: list[str]) -> None:
    """Every input's difference steps and stated change (a 1% rise and fall) in one run of the compiled plan,
    a block of columns per input (the others at their values), kept where :func:`_run_at` looks: a plan's
    run costs much the same for 5 points as for 300, and a report asks for each input of each headline."""
    memo = _memo(plan)
    blocks = [(n, at) for n in inputs
              for at in (_difference_steps(plan, ev, n), np.array([float(ev.inputs[n]) * (1 + CHANGE),
                                                        float(ev.inputs[n]) * (1 - CHANGE)]))
              if _key(ev, n, at) not in memo]
    if len(blocks) < 2:
        return
    total = sum(len(at) for _, at in blocks)
    values = {n: (v if isinstance(v, bool) else float(v)) for n, v in ev.inputs.items()}
    for n in {n for n, _ in blocks}:
        values[n] = np.concatenate([at if m == n else np.full(len(at), values[n]) for m, at in blocks])
    try:
        raw = plan.run_compiled(values)
    except (PlanError, ArithmeticError, ValueError):  # one input's points fail the whole run: each its own
        return
    start = 0
    for n, at in blocks:
        memo[_key(ev, n, at)] = _Columns(raw, start, start + len(at), total)
        start += len(at)


class _Columns:
    """The columns ``start:stop`` of a batched run's figures (:func:`_batched`): a figure that varies has a
    value per column (its last axis); one that does not is the same for every column."""

    def __init__(self, raw: dict, start: int, stop: int, total: int) -> None:
        self.raw, self.start, self.stop, self.total = raw, start, stop, total

    def __getitem__(self, name: str):
        value = self.raw[name]
        a = np.asarray(value)
        return a[..., self.start:self.stop] if a.ndim and a.shape[-1] == self.total else value


def _difference_row(plan: Plan, ev, name: str, input_name: str, kink: str = "a kink") -> Row:
    """The slope of ``name`` in ``input_name`` from one-sided differences of the compiled plan.

    A continuous input: each side at steps ``h`` and ``h/16`` (``h`` = 1e-6 of the value); a side is
    known when its two slopes agree (else a jump or kink lies within ``h``). An integer input: one
    step of its display unit each way. A side outside the declared bounds (a constraint fails there)
    is not used. Both sides known and equal: the central difference. Different: the rise's slope,
    the fall's in the note."""
    q, xq = plan.model.quantities[name], plan.model.quantities[input_name]
    x = float(ev.inputs[input_name])
    scale = float(xq.display.scale)
    shown = x / scale
    y = float(ev.values[name])
    y_scale = float(q.display.scale)
    steps = _difference_steps(plan, ev, input_name)
    raw = _run_at(plan, ev, input_name, steps)
    f = np.broadcast_to(np.asarray(raw[name], dtype=float), steps.shape)
    ok = np.isfinite(f)
    for i in range(len(plan._constraints)):
        ok = ok & np.broadcast_to(np.asarray(raw[f"__constraint{i}"], dtype=bool), steps.shape)
    mid = len(steps) // 2
    f0 = f[mid]

    def side(sign: int) -> tuple[Optional[float], str]:
        far = mid + sign * mid
        if not ok[far]:
            return None, "outside the input's bounds or no value there"
        slope = (f[far] - f0) / (steps[far] - x)
        if not xq.integer:
            near = mid + sign
            if not ok[near]:
                return None, "no value there"
            if not _same(slope, (f[near] - f0) / (steps[near] - x)):
                return None, "a jump or kink within 1e-6 of the value"
        return float(slope), ""

    up, up_why = side(1)
    down, down_why = side(-1)

    def el(d: Optional[float]) -> Optional[float]:
        return None if d is None or y == 0 else d * x / abs(y)

    def show(d: Optional[float]) -> str:
        e = el(d)
        return f"{e + 0.0:+.4f}" if e is not None else f"slope {_signed(d * scale / y_scale)}"

    rise, fall = ("one step up", "one step down") if xq.integer else ("a rise", "a fall")
    what = "integer input: " if xq.integer else ""
    if up is not None and down is not None and _same(up, down):
        d = float((f[-1] - f[0]) / (steps[-1] - steps[0]))
        method = "one-step differences" if xq.integer else "numeric difference"
        note = what + ("a step up and a step down agree" if xq.integer
                       else "central difference of the plan as evaluated (through its sums, ranges or series)")
    elif up is not None and down is not None:
        d = up
        method = "one-sided differences"
        note = ((what if xq.integer else f"not differentiable here ({kink}): ")
                + f"{rise} gives elasticity {show(up)}, {fall} {show(down)}; shown: {rise}")
    elif up is not None or down is not None:
        d = up if up is not None else down
        method = "one-sided differences"
        missing, why = (rise, up_why) if up is None else (fall, down_why)
        note = what + f"one side only: no slope for {missing} ({why}); shown: the other side"
    else:
        return Row(input_name, shown, xq.unit_text, None, None, "none",
                   f"no finite slope on either side: {up_why}")
    return Row(input_name, shown, xq.unit_text, el(d), d * scale / y_scale, method, note, el(up), el(down))


CHANGE = 0.01  # the stated change: "a 1% rise in the input moves the quantity by about that many %"
AGREE = 0.1  # relative: a slope within this of the stated change's effect answers the reader's question
FAR = 0.5  # the nearest step is looked for up to a 50% change either way
LOOK = 400  # points each way in that look (then refined between the two around the step)
RESIDUE = 1e-9  # relative: a change this small is float residue, not an effect


def _stated(plan: Plan, ev, name: str, row: Row) -> Row:
    """``row`` held against the effect of the stated change (a 1% rise and a 1% fall of the input,
    each a whole evaluation of the compiled plan). Kept as it is where the slope tells the effect
    (within ``AGREE``), for an integer input (its rows already give one step each way) and where the
    quantity is 0 (no elasticity). Otherwise a step or kink lies within 1%: the row becomes the
    effect on each side, its elasticity the larger in size (the rise's on a tie), the note saying
    both; a quantity flat within 1% either way but stepped further off says where the nearest step is."""
    xq = plan.model.quantities[row.input]
    y = float(ev.values[name])
    x = float(ev.inputs[row.input])
    if xq.integer or xq.is_bool or y == 0 or x == 0 or not math.isfinite(y):
        return row
    up, down = _effects(plan, ev, name, row.input, np.array([x * (1 + CHANGE), x * (1 - CHANGE)]))
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
    what = "a step" if stepped else "a step or kink"

    def said(v: Optional[float], it: str) -> str:  # the effect of a change that gives ``name`` the value ``v``
        if v is None:
            return f"leaves {it} without a value"
        return f"leaves {it} as it is" if v == y else f"moves {it} by {_signed((v - y) / abs(y) * 100, 3)}%"

    if (rise or 0.0) == 0 and (fall or 0.0) == 0:
        nearest = _nearest_step(plan, ev, name, row.input, x, y)
        note = f"{what} lies outside 1% either way: a 1% rise or fall leaves `{name}` as it is"
        if nearest:
            note += f"; {nearest}"
        elasticity = 0.0
    else:
        note = (f"{what} lies within 1% of the value: a 1% rise {said(up, f'`{name}`')}, "
                f"a 1% fall {said(down, 'it')}; the local slope gives "
                + ("no elasticity" if local is None else f"{local + 0.0:+.4f}"))
        elasticity = rise if fall is None or (rise is not None and abs(rise) >= abs(fall)) else fall
    scale = float(xq.display.scale)
    y_scale = float(plan.model.quantities[name].display.scale)
    derivative = None if elasticity is None else elasticity * abs(y) / x * scale / y_scale
    return Row(row.input, row.value, row.unit, elasticity, derivative, "effect of a 1% change", note, rise, fall)


def _off_branch(plan: Plan, ev, name: str, input_name: str, active, point: dict, sym) -> bool:
    """Whether one whole step of an integer input either way leaves the branch active at ``point``
    (``if(ep > 1, a, b)`` at ``ep = 1``, ``gpus <= 8`` at 8, a floor that steps within one step): the
    plan's value there differs from the active branch's, so the branch's slope (often 0) says
    nothing of the next whole value."""
    import sympy as sp

    x = point[sym]
    h = sp.Rational(plan.model.quantities[input_name].display.scale)
    got = _effects(plan, ev, name, input_name, np.array([float(x + h), float(x - h)]))
    for v, at in zip(got, (x + h, x - h)):
        if v is None:
            continue
        w = active.xreplace({**point, sym: at})
        if not (w.is_number and w.is_real and w.is_finite) or not _close(float(w), v):
            return True
    return False


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= RESIDUE * max(abs(a), abs(b)) + 1e-300


def _effects(plan: Plan, ev, name: str, input_name: str, at: np.ndarray) -> list[Optional[float]]:
    """``name`` with ``input_name`` at each of ``at`` (base units), the others as in ``ev``; None
    where it has no finite value or a constraint fails there."""
    raw = _run_at(plan, ev, input_name, at)
    f = np.broadcast_to(np.asarray(raw[name], dtype=float), at.shape)
    ok = np.isfinite(f)
    for i in range(len(plan._constraints)):
        ok = ok & np.broadcast_to(np.asarray(raw[f"__constraint{i}"], dtype=bool), at.shape)
    return [float(v) if good else None for v, good in zip(f, ok)]


def _run_at(plan: Plan, ev, input_name: str, at: np.ndarray) -> dict:
    """Every quantity with ``input_name`` at each of ``at`` (base units), the other inputs as in ``ev``:
    one run of the compiled plan, kept on the plan (every headline figure moves each input the same way)."""
    key = _key(ev, input_name, at)
    memo = _memo(plan)
    if key not in memo:
        values = {n: (v if isinstance(v, bool) else float(v)) for n, v in ev.inputs.items()}
        values[input_name] = at
        memo[key] = plan.run_compiled(values)
    return memo[key]


def _key(ev, input_name: str, at: np.ndarray) -> tuple:
    values = {n: (v if isinstance(v, bool) else float(v)) for n, v in ev.inputs.items()}
    return ("at", input_name, tuple(at.tolist()), tuple(values.items()))


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
