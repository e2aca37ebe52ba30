"""Sweeps: every point of a grid of input values, in one vectorised call.

``sweep alpha in [0.3, 0.6], gamma in 1..8 show speedup`` evaluates the
cartesian grid of the axes (16 points here) per scenario. The plan's
quantities are compiled once, restricted to what the shown quantities and
the constraints need, and run on numpy arrays: a 1,000,000-point grid
is one call (see ``benchmarks/sweep_speed.py``).

Nothing is silently ``nan``: a point that breaks an input's constraint, an
integer input swept to a fraction, or a shown quantity that is not finite
becomes an :class:`Issue` naming the point, the quantity and why (the
sub-expression that divides by zero, from :mod:`planner.compute.diagnose`).

:class:`SweepResult` is what the Excel writer and the report read: the axes
(:class:`planner.questions.ranges.Points`), the shown names, and one column per axis
and shown quantity, in base units (:meth:`SweepResult.display` converts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ..compute.diagnose import diagnose, is_first
from ..compute.evaluation import Plan, as_number, format_value, scenarios_for
from ..compute.runtime import Program
from ..language import ir
from ..language.errors import NeverError, PlanError, RangeError, UnknownNameError, suggest
from ..language.graph import cone
from ..language.source import Span
from .ranges import MAX_POINTS, Points, expand

MAX_DIAGNOSED = 20  # points explained in detail; the rest are counted


@dataclass(frozen=True)
class Issue:
    """One point that has no trustworthy value for one quantity."""

    index: int  # flat index of the point in the grid
    point: dict[str, float]  # axis name -> value in its display unit
    quantity: str
    kind: str  # "constraint" | "integer" | "not finite"
    reason: str

    def describe(self, plan: Plan) -> str:
        at = ", ".join(f"{n} = {format_value(v, plan.model.quantities[n].unit_text)}" for n, v in self.point.items())
        return f"at {at}: {self.reason}"


@dataclass
class SweepResult:
    plan: Plan
    scenario: Optional[str]
    axes: list[Points]
    show: list[str]
    columns: dict[str, np.ndarray]  # base units, one entry per point, axes first
    bad: np.ndarray  # bool per point: True when the point has any issue
    issues: list[Issue] = field(default_factory=list)  # at most MAX_DIAGNOSED explained
    issue_count: int = 0  # all (point, quantity) problems
    statement: Optional[ir.Sweep] = None
    problems: list[tuple[np.ndarray, str, str, Optional[str]]] = field(default_factory=list)  # mask, name, kind, why
    never: dict[str, np.ndarray] = field(default_factory=dict)  # a `first(...)` -> the points where it finds nothing
    offset: int = 0  # flat index of the first point (a block of a bigger sweep)
    total: Optional[int] = None  # points of the whole sweep (the same as ``size`` unless a block)

    @property
    def size(self) -> int:
        return int(self.bad.shape[0])

    @property
    def label(self) -> str:
        return self.scenario or "base"

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.axes] + [n for n in self.show if n not in {a.name for a in self.axes}]

    def display(self, name: str) -> np.ndarray:
        q = self.plan.model.quantities[name]
        col = self.columns[name]
        return col if q.is_bool else col / float(q.display.scale)

    def with_never(self, name: str, texts: list, word: str = "never") -> list:
        """A column's ``texts`` with ``word`` where ``name``, a ``first(...)``, finds nothing."""
        never = self.never.get(name)
        return texts if never is None else [word if never[i] else t for i, t in enumerate(texts)]

    def notes(self) -> dict[int, list[str]]:
        """Short text per point with an issue, by index in this result (explained points get the reason)."""
        explained = {(s.index - self.offset, s.quantity): s.reason for s in self.issues}
        out: dict[int, list[str]] = {}
        for mask, name, kind, detail in self.problems:
            for i in np.flatnonzero(mask):
                i = int(i)
                reason = explained.get((i, name)) or detail or f"{kind} (not explained: only the first " \
                    f"{MAX_DIAGNOSED} issues are)"
                out.setdefault(i, []).append(f"{name}: {reason}")
        return out


# ---- running -------------------------------------------------------------

def default_show(plan: Plan, axes: Sequence[str]) -> list[str]:
    """Derived quantities that depend on any swept input, in file order."""
    swept = set(axes)
    affected: set[str] = set()
    for n in plan.model.order:
        q = plan.model.quantities[n]
        if not q.is_input and any(d in swept or d in affected for d in q.deps):
            affected.add(n)
    return [n for n in plan.definition_order() if n in affected]


def run(
    plan: Plan,
    axes: Sequence[tuple[str, ir.Values, Optional[Span]]],
    show: Optional[Sequence[str]] = None,
    scenario: Optional[str] = None,
    overrides=None,
    origins=None,
    statement: Optional[ir.Sweep] = None,
    show_spans: Optional[Sequence[Optional[Span]]] = None,
) -> SweepResult:
    """Evaluate the grid of ``axes`` (name, values, span of the name) in one scenario."""
    prepared = prepare(plan, axes, show, scenario, overrides, origins, statement, show_spans)
    return prepared.block(0, prepared.size)


def prepare(
    plan: Plan,
    axes: Sequence[tuple[str, ir.Values, Optional[Span]]],
    show: Optional[Sequence[str]] = None,
    scenario: Optional[str] = None,
    overrides=None,
    origins=None,
    statement: Optional[ir.Sweep] = None,
    show_spans: Optional[Sequence[Optional[Span]]] = None,
    max_points: int = MAX_POINTS,
) -> "SweepRun":
    """A sweep ready to run, checked (axes, point count, shown names) but not evaluated: its
    points are evaluated block by block (:meth:`SweepRun.block`), so a big sweep streams out
    in bounded memory. ``max_points``: the most points allowed (a chunked sweep, which reduces the
    grid to figures, allows more)."""
    points = [expand(plan, name, values, span) for name, values, span in axes]
    seen: dict[str, Points] = {}
    for p, (_, _, span) in zip(points, axes):
        if p.name in seen:
            raise RangeError(f"`{p.name}` is swept twice", span or p.span, hint="give each input one axis")
        seen[p.name] = p
    shape = tuple(p.count for p in points)
    size = int(np.prod(shape, dtype=np.int64))
    if size > max_points:
        raise RangeError(f"too many points: {' x '.join(f'{n:,}' for n in shape)} = {size:,} "
                         f"(the limit is {max_points:,})", statement.span if statement else points[-1].span,
                         hint="sweep fewer values per axis")
    show = list(show) if show is not None else default_show(plan, [p.name for p in points])
    for i, n in enumerate(show):
        if n not in plan.model.quantities:
            guess = suggest(n, plan.model.quantities)
            span = show_spans[i] if show_spans else None
            raise UnknownNameError(f"cannot show `{n}`: it is not defined in {plan.path}", span,
                                   hint=f"did you mean `{guess}`?" if guess else None)
        if plan.model.quantities[n].per_period:
            from ..language.errors import KindError

            raise KindError(f"cannot show `{n}` in a sweep: it is a series (a value per period)",
                            show_spans[i] if show_spans else plan.model.quantities[n].definition.name_span,
                            hint=f"show a figure of it, defined as a quantity: `low = min({n})`, `end = last({n})`")
    inputs, _ = plan.input_values(scenario, overrides, origins)
    compiled, derived = plan.compile_for(show)
    answers, failed = _answers(plan, points, derived, scenario, overrides, origins)
    return SweepRun(plan, scenario, points, show, shape, size, inputs, compiled, derived, statement,
                    (overrides, origins), [p.array() for p in points], answers, failed)


@dataclass
class SweepRun:
    """A prepared sweep: its axes, the compiled program, the fixed inputs."""

    plan: Plan
    scenario: Optional[str]
    axes: list[Points]
    show: list[str]
    shape: tuple[int, ...]
    size: int
    inputs: dict[str, Any]
    compiled: Program
    derived: list[str]
    statement: Optional[ir.Sweep]
    fixed: tuple
    arrays: list[np.ndarray]  # each axis's values, base units
    answers: dict[str, Any]  # the answers the formulas use: a number, or one per point
    failed: list  # (mask of points, answer, reason): a question without an answer there
    diagnosed: int = 0  # points explained so far (at most MAX_DIAGNOSED over the whole sweep)

    @property
    def label(self) -> str:
        return self.scenario or "base"

    def block(self, start: int, stop: int) -> SweepResult:
        """Points ``start`` to ``stop - 1`` (flat indices; the last axis runs fastest), evaluated in
        one vectorised call, their issues found and the first ones explained."""
        stop = min(stop, self.size)
        n = stop - start
        if len(self.axes) == 1:
            grid = [self.arrays[0][start:stop]]
        else:
            index = np.unravel_index(np.arange(start, stop, dtype=np.int64), self.shape)
            grid = [a[i] for a, i in zip(self.arrays, index)]
        columns_in: dict[str, Any] = dict(self.inputs)
        for p, col in zip(self.axes, grid):
            columns_in[p.name] = col
        plan = self.plan
        answers = {a: (v[start:stop] if isinstance(v, np.ndarray) else v) for a, v in self.answers.items()}
        failed = [(mask[start:stop], a, reason) for mask, a, reason in self.failed]
        args = plan.args(columns_in, answers)  # numpy scalars: 1 / 0 is inf (an issue), not a ZeroDivisionError
        raw = dict(zip(self.compiled.outputs, self.compiled(args)))
        columns: dict[str, np.ndarray] = {}
        for p, col in zip(self.axes, grid):
            columns[p.name] = col
        for name in self.show:
            if name not in columns:
                v = raw[name] if name in raw else as_number(columns_in[name])
                columns[name] = np.broadcast_to(np.asarray(v), (n,))
        result = SweepResult(plan, self.scenario, self.axes, self.show, columns, np.zeros(n, dtype=bool),
                             statement=self.statement, offset=start, total=self.size)
        _find_issues(plan, result, raw, columns_in, self.derived, self.axes, self.fixed, failed, answers, self)
        return result


MAX_SOLVED_POINTS = 10_000  # a sweep that changes an answer a formula uses solves its question at each point


def _answers(plan: Plan, points: list[Points], derived: list[str], scenario, overrides, origins):
    """The answers the swept formulas use: once when the sweep does not change them, else at every point
    (a question solved again with the point's inputs). Returns (answers, failures): a failure is
    (mask of points, answer, reason)."""
    needed = {a for n in derived for a in plan.model.quantities[n].answer_deps}
    out: dict[str, Any] = {}
    failed: list[tuple[np.ndarray, str, str]] = []
    swept = {p.name for p in points}
    shape = tuple(p.count for p in points)
    size = int(np.prod(shape, dtype=np.int64))
    for a in plan.model.formula_answers:
        if a not in needed:
            continue
        source = plan.answer_source
        if not (plan.model.answer_inputs(a) & swept):
            try:
                out[a] = float(source.value(a, scenario, overrides, origins))
            except PlanError as err:
                failed.append((np.ones(size, dtype=bool), a, err.message))
                out[a] = np.nan
            continue
        if size > MAX_SOLVED_POINTS:
            raise RangeError(f"the sweep changes the answer `{a}`, so its question is solved at every point: "
                             f"{size:,} points is more than {MAX_SOLVED_POINTS:,}", points[-1].span,
                             hint="sweep fewer points")
        values = np.full(size, np.nan)
        bad = np.zeros(size, dtype=bool)
        reason = ""
        for i, idx in enumerate(np.ndindex(*shape)):
            at = dict(overrides or {})
            at.update({p.name: p.exact(k) for p, k in zip(points, idx)})
            try:
                values[i] = float(source.value(a, scenario, at, origins))
            except PlanError as err:
                bad[i] = True
                reason = reason or err.message
        if bad.any():
            failed.append((bad, a, reason))
        out[a] = values
    return out, failed


def run_statement(plan: Plan, stmt: ir.Sweep, scenarios=None, overrides=None, origins=None,
                  show: Optional[Sequence[str]] = None) -> list[SweepResult]:
    """A ``sweep`` statement in each of its scenarios (``scenarios``, as ``--scenario``,
    overrides its ``for``; ``show`` its ``show`` list)."""
    return [r.block(0, r.size) for r in prepare_statement(plan, stmt, scenarios, overrides, origins, show)]


def prepare_statement(plan: Plan, stmt: ir.Sweep, scenarios=None, overrides=None, origins=None,
                      show: Optional[Sequence[str]] = None, max_points: int = MAX_POINTS) -> list[SweepRun]:
    """:func:`run_statement`, prepared: one :class:`SweepRun` per scenario."""
    axes = [(a.name, a.values, a.name_span) for a in stmt.axes]
    spans = None
    if not show:
        show = [n.name for n in stmt.show] or None
        spans = [n.span for n in stmt.show] or None
    return [prepare(plan, axes, show, s, overrides, origins, statement=stmt, show_spans=spans, max_points=max_points)
            for s in scenarios_for(plan, stmt.scenarios, scenarios)]


# ---- issues -------------------------------------------------------------------

def _find_issues(plan: Plan, result: SweepResult, raw, inputs, derived, points, fixed, failed=(),
                 answers=None, run=None) -> None:
    size = result.size
    problems: list[tuple[np.ndarray, str, str, Any]] = []  # (mask, quantity, kind, detail)
    for mask, answer, reason in failed:  # a question without an answer at these points
        users = [n for n in result.show if answer in plan.model.quantities[n].answer_deps] or [answer]
        problems.append((mask, users[0], "no answer", f"the answer `{answer}`: {reason}"))
    for i, (name, c) in enumerate(plan._constraints):
        v = raw[f"__constraint{i}"]
        if np.ndim(v) == 0:  # does not depend on the axes
            if not bool(v):
                _raise_fixed_violation(plan, result.scenario, *fixed)
            continue
        ok = np.asarray(v, dtype=bool)
        if not ok.all():
            problems.append((~ok, name, "constraint", f"`{c.condition.span.flat}` does not hold"))
    for p in points:
        q = plan.model.quantities[p.name]
        if q.integer:
            shown = result.columns[p.name] / float(q.display.scale)
            frac = shown != np.round(shown)
            if frac.any():
                problems.append((frac, p.name, "integer", f"`{p.name}` must be an integer"))
    unanswered = np.zeros(size, dtype=bool)
    for mask, _, _ in failed:
        unanswered |= mask
    for n in result.show:
        col = result.columns[n]
        if col.dtype != bool:
            if col.strides == (0,):  # a scalar broadcast: check it once
                bad = np.broadcast_to(not np.isfinite(col[0]), (size,))
            else:
                finite = np.isfinite(col)
                bad = np.zeros(0, dtype=bool) if finite.all() else ~finite
            bad = np.array(bad) & ~unanswered if unanswered.any() else bad  # said already: no answer there
            if bad.any() and _found_nothing(plan, n, np.array(bad), raw, inputs, derived, answers or {}):
                result.never[n] = np.array(bad)  # "never": a stated outcome, shown as such, not an issue
                continue
            if bad.any():
                problems.append((np.array(bad), n, "not finite", None))
    result.problems = problems
    diagnosed = run.diagnosed if run is not None else 0
    for mask, name, kind, detail in problems:
        result.bad |= mask
        idx = np.flatnonzero(mask)
        result.issue_count += int(idx.size)
        for i in idx[: max(0, MAX_DIAGNOSED - diagnosed)]:
            i = int(i)
            reason = detail if detail is not None else _why(plan, name, i, raw, inputs, derived, answers or {})
            point = {p.name: float(result.columns[p.name][i]) / float(p.scale) for p in points}
            result.issues.append(Issue(result.offset + i, point, name, kind, reason))
            diagnosed += 1
    if run is not None:
        run.diagnosed = diagnosed


NEVER_PROBES = 3  # points of a `first(...)` without a value looked into before all of them are called "never"


def _found_nothing(plan: Plan, name: str, bad: np.ndarray, raw, inputs, derived, answers) -> bool:
    """Whether a ``first(...)``'s points without a value are "never" (its range holds no value where
    the condition is true), not a broken formula: the first few are looked into, as eval looks."""
    q = plan.model.quantities[name]
    if not is_first(q.definition.expr):
        return False
    for i in np.flatnonzero(bad)[:NEVER_PROBES]:
        v = _at(raw[name], int(i))
        if not (isinstance(v, float) and v != v):  # an infinity is no "never"
            return False
        if not isinstance(_error_at(plan, name, int(i), raw, inputs, derived, answers), NeverError):
            return False
    return True


def _values_at(plan: Plan, i: int, raw, inputs, derived: list[str], answers=None) -> dict[str, Any]:
    """Every quantity's value at point ``i`` (inputs, the derived ones, the answers formulas use)."""
    values: dict[str, Any] = {}
    for n in plan.model.inputs:
        values[n] = _at(inputs[n], i)
    for n in derived:
        values[n] = _at(raw[n], i)
    for n in plan.model.formula_answers:
        values[n] = _at(answers[n], i) if n in (answers or {}) else float("nan")
    return values


def _error_at(plan: Plan, name: str, i: int, raw, inputs, derived: list[str], answers=None):
    """The located error of quantity ``name`` at point ``i`` (diagnosed on the IR, as eval does)."""
    first = is_first(plan.model.quantities[name].definition.expr)  # (said "never" without the series)
    return diagnose(plan.model, name, _values_at(plan, i, raw, inputs, derived, answers),
                    *(() if first else _series_at(plan, i, inputs)))


def _series_at(plan: Plan, i: int, inputs) -> tuple:
    """Each series' values at point ``i`` and the periods' (the sweep computed only what it shows), for the
    diagnosis to read `net at 3 month` (`irr(net)`'s flows) as eval's does; () in a plan without series."""
    if not plan.model.series:
        return ()
    from ..compute.evaluation import PERIODS

    raw = plan.run_compiled({n: _at(inputs[n], i) for n in plan.model.inputs})
    return {n: np.asarray(raw[n], dtype=float) for n in plan.model.series}, raw[PERIODS]


def _why(plan: Plan, name: str, i: int, raw, inputs, derived: list[str], answers=None) -> str:
    """Why quantity ``name`` is not finite at point ``i``: the first broken formula upstream."""
    values = _values_at(plan, i, raw, inputs, derived, answers)
    used = set(cone(plan.model, [name]))
    first = next((n for n in derived if n in used and not isinstance(values[n], bool)
                  and not np.isfinite(values[n])), name)
    err = diagnose(plan.model, first, values, *_series_at(plan, i, inputs))
    where = f" in `{first}`" if first != name else ""
    what = err.message
    if err.span is not None:
        what += f" at `{err.span.flat}`"
        if err.label:
            what += f" ({err.label})"
    return f"{_value_word(values.get(name))}: {what}{where}"


def _value_word(v) -> str:
    if v is None or isinstance(v, bool):
        return "no value"
    return "nan" if v != v else ("inf" if v > 0 else "-inf")


def _at(v, i: int):
    a = np.asarray(v)
    x = a if a.ndim == 0 else a[i]
    return bool(x) if a.dtype == bool else float(x)


def _raise_fixed_violation(plan: Plan, scenario, overrides, origins) -> None:
    """A constraint broken by a value the sweep does not vary: the usual located error."""
    plan.evaluate(scenario, overrides, origins)
    raise PlanError("a constraint does not hold for the inputs this sweep keeps fixed"
                    + (f" (scenario `{scenario}`)" if scenario else ""))
