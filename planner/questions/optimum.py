"""``maximize`` and ``minimize`` from the numeric route: the objective at every value of its range on
the compiled plan, the best decided in exact arithmetic where floats tie (no SymPy), in floats where the
objective has no rational value. The one implementation, asked by :class:`planner.questions.fast.Answers`."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..compute.evaluation import Plan, format_value
from ..compute.exact import ExactEvaluator, NotRational
from ..compute.numeric import compile_program
from ..language import ir
from ..language.errors import SolveError
from ..language.graph import cone
from .answer import SolveResult, Verification, objective_unit
from .sweep import run as run_sweep

NEAR_TIE = 1e-9  # candidates this close (relative) to the best in floats are compared exactly
MAX_EXACT_TIES = 2000  # beyond this many near-ties, floats decide (and the note says so)


def _reached(plan: Plan, expr) -> tuple[list[str], list[str]]:
    """The quantities ``expr`` uses and the answers it names, in itself and in the bodies (and defaults)
    of the user functions it calls, as the objective reads them inlined."""
    model = plan.model
    names: set[str] = set()
    answers: set[str] = set()
    todo: list = [(expr, frozenset())]
    seen: set[str] = set()
    while todo:
        e, bound = todo.pop()
        for node in ir.free_names(e, bound):
            if node.name in model.quantities:
                names.add(node.name)
            elif node.name in model.answers:
                answers.add(node.name)
        for node in ir.walk(e):
            if isinstance(node, ir.Call) and node.func in model.functions and node.func not in seen:
                seen.add(node.func)
                f = model.functions[node.func]
                params = frozenset(p.name for p in f.params)
                todo.extend((x, params) for x in [f.body] + [p.default for p in f.params if p.default is not None])
    return sorted(names), sorted(answers)


def optimum(plan: Plan, stmt: ir.Optimize, scenario=None, overrides=None, origins=None) -> SolveResult:
    """``maximize``/``minimize``: the objective at every value of its range on the compiled plan
    (vectorised, constraints checked), the best kept; where floats cannot tell the best from others
    (within :data:`NEAR_TIE`) those are compared in exact arithmetic; where that has no rational value
    they are tied, in floats (the first is reported). An answer the objective uses that moves with the
    variable is a located error."""
    model = plan.model
    q = model.quantities[stmt.over]
    used, direct = _reached(plan, stmt.objective)
    for a in direct:
        if stmt.over in model.answer_inputs(a):
            raise SolveError(
                f"`{stmt.objective.span.flat}` uses the answer `{a}`, which changes with `{stmt.over}` itself",
                stmt.objective.span, label=f"through `{a}`", notes=scenario_note(scenario),
                hint=f"planner solves one question at a time: `{a}` would have to be solved again at every "
                     f"`{stmt.over}`; write its condition into this one instead")
    names = [n for n in cone(model, used)  # the objective's quantities, not the whole plan (series: a
             if not model.quantities[n].per_period]  # value per period, computed inside their figures)
    answers = {a: plan.answer_source.value(a, scenario, overrides, origins) for a in direct}
    fn = compile_program(model, names + direct, [("objective", stmt.objective)])
    res = run_sweep(plan, [(stmt.over, stmt.values, stmt.over_span)], names, scenario, overrides, origins)
    pts = res.axes[0]
    args = [res.columns[n] for n in names] + [float(v) for v in answers.values()]
    with np.errstate(all="ignore"):
        y = np.broadcast_to(np.asarray(fn(args)[0], dtype=float), (pts.count,)).copy()
    ok = ~res.bad & np.isfinite(y)
    notes: list[str] = []
    if (~ok).any():
        skipped = ", ".join(format_value(float(v), q.unit_text) for v in pts.display()[~ok][:10])
        notes.append(f"skipped {int((~ok).sum())} value(s) that break a constraint or give no finite "
                     f"objective: {skipped}")
    if not ok.any():
        raise SolveError(f"no value of `{stmt.over}` in {pts.text} gives a finite objective that satisfies "
                         "the constraints", stmt.values.span, notes=scenario_note(scenario))
    masked = np.where(ok, y, -np.inf if stmt.sense == "max" else np.inf)
    best = int(np.argmax(masked) if stmt.sense == "max" else np.argmin(masked))
    float_best = best
    decided = _decide(plan, stmt, pts, y, ok, best, answers, scenario, overrides, origins)
    if decided is None:  # no rational value: tied in floats
        decided = best, np.flatnonzero(ok & (np.abs(y - y[best]) <= NEAR_TIE * max(abs(float(y[best])), 1e-300))), \
            f"equal in floating point, to {NEAR_TIE:g} relative"
    best, tied, how = decided
    near = int((ok & (y == y[float_best])).sum())
    if near > len(tied):
        notes.append(f"{near} values give the same objective in floating point; exact arithmetic tells them "
                     f"apart and the best is {stmt.over} = {format_value(float(pts.display()[best]), q.unit_text)}")
    if len(tied) > 1:
        notes.append(f"tie ({how}): the same optimum at " + ", ".join(
            format_value(float(pts.display()[i]), q.unit_text) for i in tied[:10])
            + (f" and {len(tied) - 10} more" if len(tied) > 10 else "") + "; the first is reported")
    if best in (0, pts.count - 1) and pts.count > 2 and len(tied) == 1:
        notes.append(f"the objective keeps {'rising' if stmt.sense == 'max' else 'falling'} to the "
                     f"{'first' if best == 0 else 'last'} value of {pts.text}: the optimum may lie beyond "
                     f"{stmt.over} = {format_value(float(pts.display()[best]), q.unit_text)}, outside the range")
    t = plan.analyzer.infer_strict(stmt.objective)
    unit, exact_scale = objective_unit(plan, stmt.objective, t)
    scale = float(exact_scale)
    around = []
    for j in (best - 1, best + 1):
        if 0 <= j < pts.count and ok[j]:
            around.append(f"{format_value(float(pts.display()[j]), q.unit_text)} gives "
                          f"{format_value(float(y[j]) / scale, unit)}")
    ver = Verification(
        text=f"{stmt.objective.span.flat} = {format_value(float(y[best]) / scale, unit)} at "
             f"{stmt.over} = {format_value(float(pts.display()[best]), q.unit_text)}"
             + (f"; {'; '.join(around)}" if around else ""),
        exact=False)
    value = Fraction(pts.exact(best))
    return SolveResult(
        target=stmt.over, mode="maximize" if stmt.sense == "max" else "minimize", scenario=scenario,
        value=float(value), display_value=float(value / Fraction(q.display.scale)), unit=q.unit_text, exact=value,
        closed_form=None, verification=ver,
        method=f"exhaustive: the objective at all {pts.count} values, vectorised",
        roots=(), optimum=float(y[best]), optimum_display=float(y[best]) / scale, optimum_unit=unit,
        statement=stmt, alias=stmt.alias, question=ir.question_text(stmt), notes=tuple(notes))


def _decide(plan: Plan, stmt, pts, y: np.ndarray, ok: np.ndarray, best: int, answers: dict, scenario, overrides,
            origins):
    """The best candidate and its ties, (best, ties, how): floats decide where no other candidate is
    within :data:`NEAR_TIE` of the best, or where more than :data:`MAX_EXACT_TIES` are; otherwise exact
    rationals do (the objective at each near candidate). None where the objective has no rational value."""
    scale = max(abs(float(y[best])), 1e-300)
    near = np.flatnonzero(ok & (np.abs(y - y[best]) <= NEAR_TIE * scale))
    if len(near) <= 1:
        return best, near if len(near) else np.array([best]), "exact"
    if len(near) > MAX_EXACT_TIES:
        return best, near, f"equal in floating point, to {NEAR_TIE:g} relative"
    inputs, _ = plan.input_values(scenario, overrides, origins)
    exact = {n: v for n, v in inputs.items() if n != stmt.over}
    exact.update(answers)
    if not all(isinstance(v, (bool, int, Fraction)) for v in exact.values()):
        return None
    keys = []
    for i in near:
        try:
            v = ExactEvaluator(plan.model, {**exact, stmt.over: Fraction(pts.exact(int(i)))}).expr(stmt.objective)
        except (NotRational, KeyError, ZeroDivisionError):
            return None
        if isinstance(v, bool):
            return None
        keys.append(v)
    top = max(keys) if stmt.sense == "max" else min(keys)
    tied = np.array([i for i, k in zip(near, keys) if k == top])
    return int(tied[0]), tied, "exact"


def scenario_note(scenario) -> list[str]:
    """The note of the scenario a question was answered in (none for the plan as written)."""
    return [f"in scenario `{scenario}`"] if scenario else []
