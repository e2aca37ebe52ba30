"""Monte Carlo: every quantity of a plan over samples of its uncertain inputs.

One shared sample set per run: each uncertain input is sampled once (:mod:`.sampling`, Latin
hypercube by default, seeded), and every scenario and every quantity is evaluated on those same
samples, so ``x - x`` is exactly 0 and two quantities that use one input move together. The
plan's formulas run on the sample arrays in one vectorised call, through the same compiled
program a sweep uses (:meth:`planner.compute.evaluation.Plan.compile_outputs`).

In a scenario (or with ``--set``) that sets an uncertain input, that input is the value set: a
constant there.

What every output prints (mean, sd, percentiles, shares of "never", of true and of a condition, the
notes on ``first(...)``) comes from one reduction, :func:`reduce`, with two executors: all the samples
held here (:data:`IN_MEMORY`), or lazy chunked arrays reduced as they run
(:class:`planner.questions.chunked.Scheduler`, ``--dask``): a figure added to one is in both.

Probability checks (``check P(cost < 1 USD) >= 90%``, ``check p95(cost) <= 2 USD``) run here
against the simulation; their results read as :class:`planner.questions.checks.CheckResult`
does, so ``planner check`` prints them with the others.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from ..compute.diagnose import is_first
from ..compute.evaluation import Plan, format_value, scenarios_for
from ..compute.numbers import share as share_text
from ..language import ir
from ..language.errors import ConstraintError, DistributionError, KindError, Label, LimitError, PlanError, UnitError
from ..language.graph import cone
from ..language.literals import magnitude_problem
from ..language.dims import dim_text
from ..language.series import per_period
from ..language.model import Type, whole_numbers
from ..language.uncertain import DISCRETE, describe, domain, percentile_level
from ..language.units import DIMENSIONLESS
from . import sampling
from .checks import CheckResult

DEFAULT_SAMPLES = 10_000
MAX_SAMPLES = 10_000_000
MAX_SAMPLE_BYTES = 2 * 1024 ** 3  # the samples one in-memory run may hold: samples x columns x 8 bytes
BLOCK = 1 << 17  # samples evaluated at once
DEFAULT_PERCENTILES = (5.0, 50.0, 95.0)
METHODS = ("lhs", "random", "counter")


@dataclass(frozen=True)
class UncertainInput:
    name: str
    kind: str
    params: tuple[float, ...]  # base units
    distribution: ir.Distribution
    within: tuple[float, float] = (0.0, 1.0)  # the probabilities the input's domain keeps (truncation)

    @property
    def text(self) -> str:
        return describe(self.distribution)


def uncertain_inputs(plan: Plan) -> dict[str, UncertainInput]:
    """The plan's uncertain inputs, their parameters in base units; a located error where a
    parameter's unit does not fit its input's. Worked out once per plan."""
    cache = _PROGRAMS.setdefault(plan, {})
    if "inputs" not in cache:
        cache["inputs"] = _uncertain_inputs(plan)
    return dict(cache["inputs"])


def _uncertain_inputs(plan: Plan) -> dict[str, UncertainInput]:
    out: dict[str, UncertainInput] = {}
    for name in plan.model.inputs:
        q = plan.model.quantities[name]
        d = q.definition.uncertain
        if d is None:
            continue
        params = []
        for i, p in enumerate(d.params):
            t = plan.analyzer.infer_strict(p)
            if d.kind == DISCRETE and i % 2:  # a weight
                params.append(float(t.const))
                continue
            if t.dim is not None and t.dim != q.dim:
                raise UnitError(f"`{p.span.flat}` is not in the unit of `{name}` ({q.unit_text or 'a plain number'})",
                                p.span, label="another unit", labels=[Label(q.definition.expr.span, "point value")],
                                hint="write the point value and the distribution in units of one dimension")
            params.append(float(t.const))
        within = domain(q, params)  # (checked as the plan loaded: the part its constraints keep)
        if d.kind == DISCRETE:  # in rising order of value: the inverse CDF rises, as LHS and a copula need
            params = [x for pair in sorted(zip(params[::2], params[1::2]), key=lambda vw: vw[0]) for x in pair]
        out[name] = UncertainInput(name, d.kind, tuple(params), d, within)
    return out


def draw(plan: Plan, samples: int = DEFAULT_SAMPLES, seed: int = 0, method: str = "lhs",
         inputs: Optional[dict[str, UncertainInput]] = None) -> dict[str, np.ndarray]:
    """The samples of every uncertain input (base units): the run's one shared sample set."""
    check_samples(samples)
    check_seed(seed)
    if method not in METHODS:
        raise DistributionError(f"unknown sampling method `{method}`", hint="methods: " + ", ".join(METHODS))
    inputs = uncertain_inputs(plan) if inputs is None else inputs
    check_memory(samples, len(inputs))
    spec = {name: (u.kind, u.params, u.within) for name, u in inputs.items()}
    return sampling.draw(spec, samples, seed, method, copula(plan))


def copula(plan: Plan) -> Optional[tuple[list[str], list[list[float]]]]:
    """The inputs in a declared correlation (plan order) and the factor ``L`` of their normals'
    correlation matrix, or ``None``. Why a Gaussian copula and not Iman-Conover: it works trial by
    trial (input j's score is ``L_j . z`` of that trial's own scores), so the workbook's Trials sheet
    writes it as formulas of the trial number, and a trial's numbers do not depend on how many trials
    there are; Iman-Conover reorders the whole sample set, which no per-row formula can follow. The
    declared number is the rank correlation (Spearman's); the normals get ``2 sin(pi rho / 6)``,
    which gives exactly that rank correlation."""
    from ..language.uncertain import correlation_factor

    pairs = [s for s in plan.model.plan.statements if isinstance(s, ir.Correlation)]
    if not pairs:
        return None
    names = [n for n in plan.model.order if any(n in (p.a, p.b) for p in pairs)]
    return names, correlation_factor(names, pairs)


def check_seed(seed: int) -> None:
    """A seed is a whole number from 0 (numpy's SeedSequence takes no negative one; nor, so that one seed
    means the same samples whatever the method, does the counter generator), in the literals' range."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0 or magnitude_problem(seed) is not None:
        raise DistributionError(f"the seed must be a whole number of at least 0; it is {seed!r}"[:200],
                                hint="the same seed gives the same samples on every machine (--seed, default 0)")


def check_memory(samples: int, inputs: int, kept: int = 0, scenarios: int = 1) -> None:
    """Refuse, before anything is drawn, a run whose samples would not fit :data:`MAX_SAMPLE_BYTES`: each
    of ``inputs`` uncertain inputs holds two columns of ``samples`` float64 while drawn (its uniform
    numbers, its values), and each of ``scenarios`` keeps a column per each of ``kept`` quantities (and
    one more while a column's blocks are joined)."""
    limit = MAX_SAMPLE_BYTES
    columns = 2 * inputs + scenarios * (kept + 1 if kept else 0)
    need = samples * columns * 8
    if need <= limit:
        return
    fits = limit // (columns * 8)
    if fits >= 100:  # two significant digits, rounded down
        fits -= fits % 10 ** (len(str(fits)) - 2)
    what = [f"{inputs:,} uncertain input{'s' if inputs != 1 else ''}"] if inputs else []
    what += [f"{kept:,} quantit{'ies' if kept != 1 else 'y'}"] if kept else []
    where = f" in each of {scenarios:,} scenarios" if scenarios > 1 and kept else ""
    raise LimitError(
        f"{samples:,} samples of {' and '.join(what)}{where} would hold {_size(need)} in memory "
        f"(the limit is {_size(limit)})",
        hint=f"use fewer samples (--samples {fits} fits), --dask (in chunks, reduced to figures), or fewer "
             "quantities (--show) or scenarios")


def _size(n: float) -> str:
    return f"{n / 1024 ** 3:.1f} GB" if n >= 1024 ** 3 else f"{n / 1024 ** 2:.0f} MB"


def check_samples(samples: int) -> None:
    if not isinstance(samples, int) or samples < 2 or samples > MAX_SAMPLES:
        raise DistributionError(f"the sample count must be from 2 to {MAX_SAMPLES:,}; it is {samples:,}",
                                hint=f"the default is {DEFAULT_SAMPLES:,} (--samples)")


@dataclass
class Simulation:
    """Every quantity of one scenario over the run's samples (base units)."""

    plan: Plan
    scenario: Optional[str]
    samples: int
    seed: int
    method: str
    values: dict[str, Any]  # name -> array of samples, or a number where nothing uncertain reaches it
    uncertain: dict[str, UncertainInput]  # the inputs sampled in this scenario
    point: dict[str, float] = field(default_factory=dict)  # the deterministic evaluation, base units

    @property
    def label(self) -> str:
        return self.scenario or "base"

    def varies(self, name: str) -> bool:
        return isinstance(self.values[name], np.ndarray) and self.values[name].ndim == 1

    def column(self, name: str) -> np.ndarray:
        """Every sample of ``name`` (base units), a constant repeated where it does not vary."""
        v = self.values[name]
        return v if self.varies(name) else np.full(self.samples, float(v) if not isinstance(v, bool) else v)

    def display(self, name: str) -> np.ndarray:
        q = self.plan.model.quantities[name]
        col = self.column(name)
        return col if q.is_bool else col / float(q.display.scale)

    def figures(self, names: Sequence[str] = (), flags: Optional[Sequence[str]] = None,
                conditions: Sequence[tuple[str, ir.Expr]] = (), levels: Sequence[float] = DEFAULT_PERCENTILES,
                correlations: bool = False) -> "Figures":
        """The samples reduced to what the outputs print (:func:`reduce`, in memory)."""
        got = reduce(IN_MEMORY, self.plan, self.column, self, names, flags_for(self.plan, names, flags),
                     conditions, levels, self.samples, self.point)
        got.update(plan=self.plan, scenario=self.scenario, samples=self.samples, seed=self.seed, method=self.method,
                   uncertain=self.uncertain, varying={n for n in names if self.varies(n)})
        if correlations:
            got["correlations"] = {n: self.rank_correlations(n) for n in names if n not in self.uncertain}
        return Figures(**got)

    def never(self, name: str) -> Optional[float]:
        """The share of samples where ``name``, a ``first(...)``, found nothing ("never"); None for
        any other quantity."""
        return self.figures([name], [], levels=()).never(name)

    def stats(self, name: str, percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> dict[str, float]:
        """Mean, standard deviation and percentiles of ``name``, in its display unit. A ``first(...)``
        adds ``never``, the share of samples where it found nothing, and its other figures are over the
        samples where it found a value (nan when it never does)."""
        return self.figures([name], [], levels=percentiles).stats(name, percentiles)

    def rank_correlations(self, name: str) -> dict[str, float]:
        """Spearman's rank correlation of ``name`` with each sampled input, largest magnitude first: the
        tornado of what drives it (0 where it does not vary)."""
        if not self.varies(name) or self.plan.model.quantities[name].is_bool:
            return {}
        y = _ranks(self.column(name))
        out = {}
        for n in self.uncertain:
            if n == name:
                continue
            x = _ranks(self.column(n))
            sx, sy = x.std(), y.std()
            out[n] = float(np.mean((x - x.mean()) * (y - y.mean())) / (sx * sy)) if sx > 0 and sy > 0 else 0.0
        return dict(sorted(out.items(), key=lambda kv: -abs(kv[1])))

    def probability(self, condition: ir.Expr) -> float:
        """The share of samples where ``condition`` holds (where it has no value, because a ``first``
        it uses found nothing, it does not hold: :meth:`never_note` says so)."""
        return self.figures((), [], [("", condition)], ()).probability(condition)

    def no_value(self, names: Iterable[str]) -> dict[str, float]:
        """The ``first(...)`` quantities that ``names`` use (themselves included), each with the share of
        samples where it is never, for those never somewhere."""
        return self.figures((), [], [], ()).no_value(names, self)

    def never_note(self, condition: ir.Expr) -> str:
        """`` (`payback` is never in 31.5% of samples: ...)`` for a condition that has no value in some
        samples; "" for one that always has."""
        return _never_note(self.no_value(_names_with_a_value(condition)))


# ---- the one reduction: samples (all of them, or a chunk's lazily) to the figures printed ----------

def firsts_reached(plan: Plan, names: Iterable[str]) -> list[str]:
    """The ``first(...)`` quantities ``names`` use (themselves included), in name order."""
    quantities = plan.model.quantities
    found = set()
    for n in names:
        if n in quantities:
            found.update(firsts_used(plan, n))
            if is_first(quantities[n].definition.expr):
                found.add(n)
    return sorted(found)


def flags_for(plan: Plan, names: Sequence[str], flags: Optional[Sequence[str]] = None) -> list[str]:
    """The true/false quantities said in words (\"true in 38.8% of samples\"): ``flags``, else the plan's
    (:func:`default_flags`) when ``names`` are its default ones (``planner simulate`` without ``--show``)."""
    if flags is not None:
        return list(flags)
    return default_flags(plan) if list(names) == default_names(plan) else []


class InMemory:
    """The in-memory executor of :func:`reduce`: the columns are numpy arrays, reduced at once (the
    other, :class:`planner.questions.chunked.Scheduler`, reduces lazy chunked arrays)."""

    where = "memory"

    def compute(self, *things, what: str = "") -> list:
        return [np.asarray(t)[()] for t in things]

    def summaries(self, columns: dict[str, Any], levels: Sequence[float], extra=(), check=None) -> tuple[dict, list]:
        """Per column (floats, nan left out): count, mean, sd and the percentiles ``levels``
        (numpy's ``percentile``, linear); and ``extra`` computed (``check(extra)`` first)."""
        got = self.compute(*extra)
        if check is not None:
            check(got)
        out = {}
        for name, col in columns.items():
            col = np.asarray(col, dtype=float)
            missing = np.isnan(col)
            if missing.any():  # (a copy only where some are nan: a `first(...)`)
                col = col[~missing]
            if len(col) == 0:
                s = {"count": 0, "mean": math.nan, "sd": math.nan, **{f"p{_pct_text(p)}": math.nan for p in levels}}
            else:
                s = {"count": len(col), **dict(zip(("mean", "sd"), _mean_sd(col))), "whole": bool(np.all(col == np.round(col)))}
                where = spots(levels, len(col))
                ranks = sorted({r for below, above, _ in where for r in (below, above)})
                ordered = np.partition(col, ranks) if ranks else col
                for p, (below, above, t) in zip(levels, where):
                    s[f"p{_pct_text(p)}"] = lerp(float(ordered[below]), float(ordered[above]), t)
            out[name] = s
        return out, got


IN_MEMORY = InMemory()


def spots(levels: Sequence[float], count: int) -> list[tuple[int, int, float]]:
    """Per percentile level, numpy's ``percentile`` (linear): the two order statistics (0-based ranks)
    around ``(count - 1) * level / 100`` and the weight of the upper one. Both executors read a
    percentile so, from exact order statistics: the same samples give the same figure to the bit."""
    out = []
    for p in levels:
        h = float(np.true_divide(p, 100)) * (count - 1)
        below = int(math.floor(h))
        out.append((below, min(below + 1, count - 1), h - below))
    return out


def lerp(a: float, b: float, t: float) -> float:
    diff = b - a
    return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)  # as numpy's _lerp


def _count(cond_values, samples: int):
    """The (lazy) count of samples where a condition holds."""
    if np.ndim(cond_values) == 0 and not hasattr(cond_values, "dims"):  # a condition of constants only
        return np.int64(samples if bool(cond_values) else 0)
    return cond_values.sum()


def reduce(executor, plan: Plan, column, holder, names: Sequence[str], flags: Sequence[str],
           conditions: Sequence[tuple[str, ir.Expr]], levels: Sequence[float], samples: int,
           point: dict[str, Any], extra=(), check=None) -> dict[str, Any]:
    """The one reduction of a simulation to the figures its outputs print, whichever executor holds
    the samples (``executor``: :data:`IN_MEMORY`, or a :class:`planner.questions.chunked.Scheduler`
    over lazy chunked arrays). ``column(name)``: every sample of a quantity (base units); ``holder``:
    what :func:`condition_values` reads. Per name of ``names`` (display units): mean, sd, the
    percentiles ``levels`` (over the samples where it has a value), ``never`` for a ``first(...)`` and
    ``point``; per flag the share of samples where it is true; per condition the share where it holds;
    per ``first(...)`` the names and conditions use, the share of samples where it is never. Returns
    :class:`Figures`' fields. ``extra``: more lazy values, computed in the first pass over the samples
    and given to ``check`` before any other pass (a chunked run's refusals)."""
    quantities = plan.model.quantities
    floats = {}
    for n in names:
        q = quantities[n]
        v = column(n)
        floats[n] = v.astype(float) if q.is_bool else v / float(q.display.scale)
    reached = set(names) | {m.name for _, c in conditions for m in ir.walk(c) if isinstance(m, ir.Name)}
    firsts = [f for f in firsts_reached(plan, reached) if f in names or f in holder.values]  # (in memory: those kept)
    lazy = list(extra) + [np.isnan(column(f).astype(float)).mean() for f in firsts]
    lazy += [column(f).astype(float).mean() for f in flags]
    lazy += [_count(condition_values(holder, c), samples) for _, c in conditions]
    stats, got = executor.summaries(floats, levels, lazy,
                                    None if check is None else (lambda got: check(got[:len(extra)])))
    got = got[len(extra):]
    nevers = {f: float(v) for f, v in zip(firsts, got)}
    got = got[len(firsts):]
    shares = {f: float(v) for f, v in zip(flags, got)}
    probabilities = {id(c): int(v) / samples for (_, c), v in zip(conditions, got[len(flags):])}
    figures = {}
    for n in names:
        q = quantities[n]
        s = {k: v for k, v in stats[n].items() if k not in ("count", "min", "max", "whole")}
        s["whole"] = bool(stats[n].get("whole")) and not q.is_bool  # every sample a whole number (a count)
        if n in nevers:
            s["never"] = nevers[n]
        if n in point:  # a true/false as written: 1 or 0, beside its mean (the share of samples where true)
            s["point"] = float(point[n]) if q.is_bool else point[n] / float(q.display.scale)
        figures[n] = s
    return {"table": figures, "flags": shares, "shares": probabilities, "nevers": nevers,
            "levels": tuple(levels), "where": executor.where}


@dataclass
class Figures:
    """A simulation of one scenario reduced to figures (:func:`reduce`): what
    :mod:`planner.outputs.simulation` prints, whichever executor ran it."""

    plan: Plan
    scenario: Optional[str]
    samples: int
    seed: int
    method: str
    uncertain: dict[str, UncertainInput]  # the inputs sampled in this scenario
    table: dict[str, dict[str, float]]  # per name, display units: mean, sd, percentiles, never, point
    flags: dict[str, float] = field(default_factory=dict)  # per true/false quantity, the share where true
    shares: dict[int, float] = field(default_factory=dict)  # per condition (its id): the share where it holds
    nevers: dict[str, float] = field(default_factory=dict)  # per `first(...)` reached, the share where never
    levels: tuple = ()
    varying: set = field(default_factory=set)
    correlations: dict[str, dict[str, float]] = field(default_factory=dict)  # in memory only: needs every rank
    chunk: int = 0
    where: str = ""

    @property
    def label(self) -> str:
        return self.scenario or "base"

    def figures(self, names: Sequence[str] = (), flags: Optional[Sequence[str]] = None,
                conditions: Sequence[tuple[str, ir.Expr]] = (), levels: Sequence[float] = DEFAULT_PERCENTILES,
                correlations: bool = False) -> "Figures":
        """Itself: reduced already, as it ran, to what its outputs ask for."""
        return self

    def varies(self, name: str) -> bool:
        return name in self.varying

    def stats(self, name: str, percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> dict[str, float]:
        s = self.table[name]
        missing = [p for p in percentiles if f"p{_pct_text(p)}" not in s]
        if missing:
            raise ValueError(f"percentiles {missing} were not computed")
        keep = {"mean", "sd", "never", "point"} | {f"p{_pct_text(p)}" for p in percentiles}
        return {k: v for k, v in s.items() if k in keep}

    def whole(self, name: str) -> bool:
        """Every sample of ``name`` (display units) is a whole number: a count, a month."""
        return bool(self.table.get(name, {}).get("whole"))

    def never(self, name: str) -> Optional[float]:
        return self.table[name].get("never") if name in self.table else self.nevers.get(name)

    def flag(self, name: str) -> float:
        return self.flags[name]

    def probability(self, condition: ir.Expr) -> float:
        return self.shares[id(condition)]

    def rank_correlations(self, name: str) -> dict[str, float]:
        return self.correlations.get(name, {})

    def no_value(self, names: Iterable[str], sim: Optional["Simulation"] = None) -> dict[str, float]:
        """The ``first(...)`` quantities that ``names`` use (themselves included), each with the share of
        samples where it is never, for those never somewhere."""
        out = {}
        for f in firsts_reached(self.plan, names):
            share = self.nevers[f] if f in self.nevers else (sim.never(f) if sim is not None else None)
            if share:
                out[f] = share
        return out

    def never_note(self, condition: ir.Expr) -> str:
        """`` (`payback` is never in 31.5% of samples: ...)`` for a condition that has no value in some
        samples; "" for one that always has."""
        return _never_note(self.no_value(_names_with_a_value(condition)))


def _names_with_a_value(condition: ir.Expr) -> list[str]:
    """The quantities ``condition`` needs a value of: not those it compares with ``never`` anywhere
    (``runway == never or runway > 30 month`` says what a never sample gives: no note needed)."""
    def is_never(o) -> bool:
        return isinstance(o, ir.Never) or (isinstance(o, ir.Name) and o.name == "never")

    asked = {o.name for n in ir.walk(condition) if isinstance(n, ir.Compare) and any(map(is_never, n.operands))
             for o in n.operands if isinstance(o, ir.Name)}
    return [n.name for n in ir.walk(condition) if isinstance(n, ir.Name) and n.name not in asked]


def _never_note(nevers: dict[str, float]) -> str:
    if not nevers:
        return ""
    said = ", ".join(f"`{n}` is never in {share_text(v)} of samples" for n, v in nevers.items())
    return f" ({said}: there the condition has no value and counts as not holding)"


def _mean_sd(col: np.ndarray) -> tuple[float, float]:
    """The mean and standard deviation of samples; of samples near the float's end (``1e300``), on them
    scaled down (their sum and squares overflow), and an infinite spread where a sample is infinite."""
    big = float(np.max(np.abs(col)))
    scale = big if 1e150 < big < math.inf else 1.0
    col = col / scale if scale != 1.0 else col
    mean = float(np.mean(col)) * scale
    if len(col) < 2:
        return mean, math.nan
    return mean, (float(np.std(col, ddof=1)) * scale if big < math.inf else math.inf)


def _ranks(v: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1, ties sharing their mean rank (as Spearman's coefficient takes them)."""
    order = np.argsort(v, kind="stable")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(len(v), dtype=float)
    sorted_v = v[order]
    if len(v) > 1 and np.any(sorted_v[1:] == sorted_v[:-1]):
        _, inverse, counts = np.unique(v, return_inverse=True, return_counts=True)
        sums = np.bincount(inverse, weights=ranks)
        ranks = (sums / counts)[inverse]
    return ranks


def _pct_text(p: float) -> str:
    return str(int(p)) if float(p).is_integer() else str(p).replace(".", "_")


_PROGRAMS: "weakref.WeakKeyDictionary[Plan, dict]" = weakref.WeakKeyDictionary()


def fixed_answers(plan: Plan, point_ev, sampled) -> dict[str, Any]:
    """The answers the plan's formulas use, at their point values (one solve, not one per sample), for
    a simulation in which ``sampled`` inputs vary: a located error where a question depends on one of
    them. Both executors (in memory, and in chunks: :mod:`planner.questions.chunked`) read it."""
    answers = {}
    for a in [n for n in plan.model.answers if n in set(plan.model.formula_answers)]:
        if plan.model.answer_inputs(a) & set(sampled):
            raise DistributionError(
                f"a formula uses the answer `{a}`, whose question depends on an uncertain input: each sample "
                "would need its own solve", plan.model.answers[a].statement.span, label="this question",
                hint="give the inputs that question uses one value each")
        answers[a] = point_ev.answers.get(a, math.nan)
    return answers


def run(plan: Plan, scenarios: Sequence[Optional[str]] = (None,), samples: int = DEFAULT_SAMPLES, seed: int = 0,
        method: str = "lhs", overrides=None, origins=None, names: Optional[Sequence[str]] = None,
        drawn: Optional[dict[str, np.ndarray]] = None, progress=None) -> list[Simulation]:
    """Simulate ``scenarios`` on one shared sample set (``drawn``, else drawn here), in blocks of
    :data:`BLOCK` samples (``progress(n)`` after each); keep the samples of ``names`` (default: every
    quantity) and the inputs."""
    inputs = inputs_to_sample(plan)
    compiled, derived = plan.compile_for(list(names) if names is not None else list(plan.model.derived))
    kept = [n for n in derived if names is None or n in set(names)]
    check_memory(samples if drawn is None else len(next(iter(drawn.values()))), len(inputs) if drawn is None else 0,
                 len(kept), len(scenarios))
    drawn = draw(plan, samples, seed, method, inputs) if drawn is None else drawn
    samples = len(next(iter(drawn.values())))
    out = []
    for scenario in scenarios:
        point_ev = plan.evaluate(scenario, overrides, origins)  # the point values: and a bad plan fails here
        values, _ = plan.input_values(scenario, overrides, origins)
        fixed = {n for n in inputs if _set_in(plan, n, scenario, overrides)}
        sampled = {n: u for n, u in inputs.items() if n not in fixed}
        columns: dict[str, Any] = dict(values)
        columns.update({n: drawn[n] for n in sampled})
        answers = fixed_answers(plan, point_ev, sampled)
        keep = [n for n in derived if names is None or n in set(names)]
        parts: dict[str, list] = {n: [] for n in keep}
        broken: dict[int, int] = {}  # constraint -> samples where it fails
        for start in range(0, samples, BLOCK):  # in blocks: the formulas' temporaries stay small
            stop = min(samples, start + BLOCK)
            block = dict(columns)
            block.update({n: drawn[n][start:stop] for n in sampled})
            raw = dict(zip(compiled.outputs, compiled(plan.args(block, answers))))
            for i in range(len(getattr(plan, "_constraints", []))):
                ok = raw.get(f"__constraint{i}")
                if ok is not None and np.ndim(ok) > 0:
                    bad = int(np.count_nonzero(~np.asarray(ok, dtype=bool)))
                    if bad:
                        broken[i] = broken.get(i, 0) + bad
            for n in keep:
                v = raw[n]
                parts[n].append(v if isinstance(v, np.ndarray) and v.ndim == 1 else None)
            if progress is not None:
                progress(stop - start)
        result: dict[str, Any] = {}
        for n in plan.model.inputs:
            result[n] = drawn[n] if n in sampled else point_ev.values[n]
        for n in keep:
            got = parts.pop(n)  # its blocks freed once joined: the peak is one copy, not two
            result[n] = np.concatenate(got) if got and got[0] is not None else point_ev.values[n]
        sim = Simulation(plan, scenario, samples, seed, method, result, sampled, dict(point_ev.values))
        _check_samples(plan, sim, broken, keep)
        out.append(sim)
    return out


def inputs_to_sample(plan: Plan) -> dict[str, UncertainInput]:
    """The plan's uncertain inputs, for a simulation (in memory or in chunks): an error where it has none,
    or where one moves a range's end (:func:`_refuse_uncertain_bounds`)."""
    inputs = uncertain_inputs(plan)
    if not inputs:
        raise DistributionError(f"{plan.path} has no uncertain inputs to simulate",
                                hint="write an input as a range (`utilisation = 40% to 70%`) or a distribution "
                                     "(`latency = normal(10 ms, 2 ms)`)")
    _refuse_uncertain_bounds(plan, inputs)
    return inputs


def _range_ends(plan: Plan) -> list:
    """Every range's end in the plan's formulas, with the quantities it depends on: the walk once
    per plan (each run only intersects them with its uncertain inputs)."""
    cache = _PROGRAMS.setdefault(plan, {})
    if "ends" not in cache:
        ends = []
        for name in plan.model.derived:
            for node in ir.walk(plan.model.quantities[name].definition.expr):
                if isinstance(node, ir.Aggregate):
                    for end in node.values.items:
                        used = [n.name for n in ir.free_names(end) if n.name in plan.model.quantities]
                        if used:
                            ends.append((node, end, frozenset(cone(plan.model, used))))
        cache["ends"] = ends
    return cache["ends"]


def _refuse_uncertain_bounds(plan: Plan, inputs: dict[str, UncertainInput]) -> None:
    """A range's end (``sum(... for m in 1..n)``) that moves with an uncertain input: a count of terms
    that changes from sample to sample is refused (a constant is required there)."""
    for node, end, reach in _range_ends(plan):
        moving = sorted(reach & set(inputs))
        if moving:
            u = inputs[moving[0]]
            raise DistributionError(
                f"the range `{node.values.span.flat}` ends where the uncertain input `{u.name}` puts it: "
                "its number of terms would change from sample to sample", end.span,
                label="needs a constant", labels=[Label(u.distribution.span, u.text)],
                hint=f"give `{u.name}` one value (drop its distribution), or sweep it instead")


def _set_in(plan: Plan, name: str, scenario: Optional[str], overrides) -> bool:
    if overrides and name in overrides:
        return True
    return scenario is not None and name in plan.model.scenarios[scenario].overrides


def _check_samples(plan: Plan, sim: Simulation, broken: dict[int, int], derived: Sequence[str]) -> None:
    """A constraint broken in some samples (``broken``: how many, per constraint), or a quantity with
    no finite value there: a located error that counts them (a distribution that reaches past what its
    input allows is a plan to fix)."""
    n = sim.samples
    for i, bad in sorted(broken.items()):
        if bad:
            raise constraint_error(plan, sim.scenario, i, bad, n, sim.uncertain)
    for name in derived:
        v = sim.values[name]
        if is_first(plan.model.quantities[name].definition.expr):
            continue  # nan where it found nothing: "never", counted by Simulation.never
        if isinstance(v, np.ndarray) and v.dtype != bool:
            finite = np.isfinite(v)
            if not finite.all():
                nevers = sim.no_value([name])  # a `first(...)` it uses that found nothing: no value, said so
                never = np.zeros(n, dtype=bool)
                for f in nevers:
                    never |= np.isnan(sim.column(f).astype(float))
                if nevers and not (~finite & ~never).any():
                    err = never_error(plan, name, nevers, int(np.count_nonzero(never)), n,
                                      _sample_text(plan, sim, int(np.flatnonzero(never)[0])))
                else:
                    err = not_finite_error(plan, name, int(np.count_nonzero(~finite & ~never)), n,
                                           _sample_text(plan, sim, int(np.flatnonzero(~finite & ~never)[0])))
                raise in_scenario(err, sim.scenario)


def constraint_error(plan: Plan, scenario: Optional[str], i: int, bad: int, samples: int, uncertain) -> PlanError:
    """Constraint ``i`` does not hold in ``bad`` of ``samples`` samples (``uncertain``: the sampled inputs,
    by name). The in-memory run and the chunked one both say it."""
    name, c = plan._constraints[i]
    labels = []
    if name in uncertain:
        labels.append(Label(plan.model.quantities[name].definition.uncertain.span, uncertain[name].text))
    err = ConstraintError(f"`{c.condition.span.flat}` does not hold in {bad:,} of {samples:,} samples "
                          f"({bad / samples:.2%})", c.span, label="this constraint", labels=labels,
                          hint="narrow the range, or use a bounded distribution: uniform(low, high), "
                               "triangular(low, mode, high)")
    return in_scenario(err, scenario)


def not_finite_error(plan: Plan, name: str, bad: int, samples: int, at: str) -> PlanError:
    """``name`` has no finite value in ``bad`` of ``samples`` samples, the first at ``at`` (its inputs)."""
    return PlanError(f"`{name}` has no finite value in {bad:,} of {samples:,} samples (the first at {at})",
                     plan.model.quantities[name].definition.span, label="not finite there",
                     hint="a formula divides by zero or leaves its domain where the distributions reach; "
                          "narrow them or bound them")


def in_scenario(err: PlanError, scenario: Optional[str]) -> PlanError:
    """``err``, with a note of the scenario it happened in (none for the base)."""
    if scenario is not None:
        err.notes.append(f"in scenario `{scenario}`")
    return err


def _sample_text(plan: Plan, sim: Simulation, i: int) -> str:
    """Sample ``i``'s uncertain inputs, ``price = 249.17 USD, ...``."""
    return ", ".join(f"{u} = {format_value(float(sim.display(u)[i]), plan.model.quantities[u].unit_text)}"
                     for u in sim.uncertain)


def firsts_used(plan: Plan, name: str) -> list[str]:
    """The ``first(...)`` quantities ``name``'s formula uses, directly or through others (sorted)."""
    quantities = plan.model.quantities
    seen, stack = set(), list(quantities[name].deps)
    while stack:
        n = stack.pop()
        if n not in seen:
            seen.add(n)
            stack.extend(quantities[n].deps)
    return sorted(n for n in seen if is_first(quantities[n].definition.expr))


def never_error(plan: Plan, name: str, nevers: dict[str, float], bad: int, samples: int, at: str) -> PlanError:
    """``name`` has no value in ``bad`` samples, where a ``first(...)`` it uses (``nevers``: each with its
    share of never) finds nothing: that reason, as ``planner eval`` gives it for one sample (error[never]),
    with the first such sample's inputs (``at``). The in-memory run and the chunked one both say it."""
    from ..language.errors import NeverError

    quantities = plan.model.quantities
    which = ", ".join(f"`{f}` (never in {share_text(v)} of samples)" for f, v in nevers.items())
    f = next(iter(nevers))
    expr = quantities[f].definition.expr
    return NeverError(
        f"`{name}` has no value in {bad:,} of {samples:,} samples: it uses {which}, a `first(...)` that "
        f"finds nothing there (the first at {at})",
        quantities[name].definition.span, label="uses a never",
        labels=[Label(expr.span, f"`{expr.body.span.flat}` holds for no `{expr.var}` there")],
        hint=f"make `{f}` find a value in every sample (a longer range, narrower distributions), or ask about "
             f"`{f}` itself: its share of never is counted")


def _reached(plan: Plan) -> set[str]:
    inputs = {n for n in plan.model.inputs if plan.model.quantities[n].definition.uncertain is not None}
    reached = set(inputs)
    for n in plan.model.order:
        q = plan.model.quantities[n]
        if not q.is_input and any(d in reached for d in q.deps):
            reached.add(n)
    return reached


def default_names(plan: Plan) -> list[str]:
    """The uncertain inputs and every quantity they reach, in display order."""
    reached = _reached(plan)
    return [n for n in plan.display_order() if n in reached and not plan.model.quantities[n].is_bool]


def default_flags(plan: Plan) -> list[str]:
    """The true/false quantities the uncertain inputs reach, in display order: said as shares of samples."""
    reached = _reached(plan)
    return [n for n in plan.display_order() if n in reached and plan.model.quantities[n].is_bool]


# ---- conditions over samples -----------------------------------------------------------

_CMP = {
    ir.CmpOp.EQ: np.equal, ir.CmpOp.NE: np.not_equal, ir.CmpOp.LT: np.less, ir.CmpOp.LE: np.less_equal,
    ir.CmpOp.GT: np.greater, ir.CmpOp.GE: np.greater_equal,
}


def series_samples(sim: Simulation, exprs: Sequence[tuple[str, ir.Expr]]) -> list[np.ndarray]:
    """``exprs`` (a label and an expression each: a series' name, or a figure that reduces a series, such
    as ``min(cash)``) at every sample of ``sim``, computed from the sampled inputs by the numeric route:
    a series as an array (samples, periods), a figure as an array over the samples. Run in blocks of
    :data:`BLOCK` samples."""
    from ..compute.numeric import compile_program

    plan = sim.plan
    key = ("series", tuple((label, id(e)) for label, e in exprs))
    cache = _PROGRAMS.setdefault(plan, {})
    if key not in cache:
        cache[key] = (compile_program(plan.model, plan.arguments, list(exprs)), list(exprs))
    program = cache[key][0]
    # a series' value has a period axis, a figure's none; a value the trials do not move lacks the trial axis
    axes = [1 if per_period(e, plan.model.quantities) else 0 for _, e in exprs]
    parts: list[list] = [[] for _ in exprs]
    for start in range(0, sim.samples, BLOCK):
        stop = min(sim.samples, start + BLOCK)
        block = {n: (sim.values[n][start:stop] if sim.varies(n) else sim.values[n]) for n in plan.model.inputs}
        answers = {a: sim.point.get(a, math.nan) for a in plan.model.formula_answers}
        for part, own, v in zip(parts, axes, program(plan.args(block, answers))):
            v = np.asarray(v)
            same = v.ndim <= own  # the same in every trial: (periods,) for a series, () for a figure
            part.append(np.broadcast_to(v, (stop - start,) + (v.shape if same else v.shape[1:])))
    return [np.concatenate(p, axis=0) if p else np.empty(0) for p in parts]


def fan(sim: Simulation, name: str, levels: Sequence[float] = DEFAULT_PERCENTILES,
        whole: bool = False) -> dict[str, np.ndarray]:
    """A series' percentiles in each period over the samples (its display unit): ``{"p5": [...], ...}``,
    the fan of its paths; ``mean`` too. Periods where a sample has no value leave it out. ``whole``: say
    also whether every sample in every period is a whole number (``"whole"``: a count of GPUs)."""
    q = sim.plan.model.quantities[name]
    (values,) = series_samples(sim, [(name, ir.Name(name, q.definition.name_span))])
    values = np.asarray(values, dtype=np.float64) / float(q.display.scale)
    if values.ndim == 1:
        values = values[:, None]
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-nan period: nan, said as never
            out = {f"p{p:g}": np.nanpercentile(values, p, axis=0) for p in levels}
            out["mean"] = np.nanmean(values, axis=0)
    if whole:
        out["whole"] = not bool((np.abs(values - np.round(values)) > 0).any())  # (nan: no sample, not a fraction)
    return out


def _uses_series(e: ir.Expr) -> bool:
    return any(isinstance(n, (ir.Reduce, ir.At)) for n in ir.walk(e))


def _operand(sim: Simulation, e: ir.Expr):
    if _uses_series(e):  # `P(min(cash) < 0 USD)`: the reduction at every sample
        return series_samples(sim, [("operand", e)])[0]
    if isinstance(e, ir.Name):
        if e.name not in sim.values:
            from ..language.errors import UnknownNameError, suggest

            guess = suggest(e.name, list(sim.values))
            raise UnknownNameError(f"`{e.name}` is not a quantity of {sim.plan.path}", e.span,
                                   hint=f"did you mean `{guess}`?" if guess else None)
        return sim.values[e.name]
    t = sim.plan.analyzer.infer_strict(e)
    if t.const is None:
        raise KindError("inside P( ), compare quantities and constants", e.span, label="a formula",
                        hint="define the formula as a quantity (`margin = revenue - cost`) and write `P(margin > 0)`")
    return bool(t.const) if t.is_bool else float(t.const)


def condition_values(sim: Simulation, cond: ir.Expr):
    """``cond`` at every sample: comparisons of quantities and constants, joined with and, or, not."""
    if not _uses_series(cond) and not any(isinstance(n, ir.Never) for n in ir.walk(cond)):
        from ..language.lower import read_series

        cond = read_series(sim.plan.model.plan, cond)  # `min(cash)`, `runway != never` typed on the command line
    if isinstance(cond, ir.Logic):
        left, right = condition_values(sim, cond.left), condition_values(sim, cond.right)
        return np.logical_and(left, right) if cond.op is ir.BoolOp.AND else np.logical_or(left, right)
    if isinstance(cond, ir.Not):
        return np.logical_not(condition_values(sim, cond.operand))
    if isinstance(cond, ir.Name) and sim.plan.model.quantities.get(cond.name) is not None \
            and sim.plan.model.quantities[cond.name].is_bool:
        return _operand(sim, cond)
    if isinstance(cond, ir.Compare):
        sim.plan.analyzer.infer_strict(cond)  # units: `P(cost < 2 ms)` with cost in USD is an error
        out = True
        values = [np.nan if isinstance(o, ir.Never) else _operand(sim, o) for o in cond.operands]
        for op, a, b, span, left, right in zip(cond.ops, values, values[1:], cond.op_spans,
                                               cond.operands, cond.operands[1:]):
            if isinstance(left, ir.Never) or isinstance(right, ir.Never):  # `runway != never`: has a value
                same = np.isnan(np.asarray(a, dtype=float)) == np.isnan(np.asarray(b, dtype=float))
                out = np.logical_and(out, same if op is ir.CmpOp.EQ else np.logical_not(same))
                continue
            if op not in _CMP:
                raise KindError("`~=` compares figures as written; inside P( ) write `<`, `<=`, `>` or `>=`", span)
            out = np.logical_and(out, _CMP[op](a, b))
        return out
    hint = None
    if isinstance(cond, ir.Call) and cond.func == "P" and len(cond.args) == 1:  # as the output writes it
        hint = f"give the condition alone: `-p '{cond.args[0].value.span.flat}'`"
    raise KindError("expected a condition such as `cost < 2 USD`", cond.span, hint=hint)


# ---- probability checks ---------------------------------------------------------------------

@dataclass
class ProbabilityResult(CheckResult):
    """One probability check in one scenario: a :class:`planner.questions.checks.CheckResult` of a
    statistic over the samples (``check`` is an :class:`ir.ProbabilityCheck`)."""

    samples: int = 0
    stat_text: str = ""
    note: str = ""  # what the figure leaves out: samples where a `first` it uses is never

    def describe(self) -> str:
        where = f" in {self.scenario}" if self.scenario else ""
        if self.error is not None:
            return f"could not evaluate{where}: {self.error.message}"
        return f"{self.stat_text} over {self.samples:,} samples{where}: `{self.check.condition.span.flat}` is false"


def is_statistic(e: ir.Expr) -> bool:
    return isinstance(e, ir.Call) and (e.func in ("P", "mean", "sd") or percentile_level(e.func) is not None)


def statistic(sim: Simulation, call: ir.Call) -> tuple[float, str, str]:
    """A statistic's value (base units), its unit for display and a text (``P(...) = 93.1%``)."""
    if len(call.args) != 1 or call.args[0].name is not None:
        raise KindError(f"`{call.func}` takes one argument", call.span, hint=f"write `{call.func}(cost)`")
    arg = call.args[0].value
    if call.func == "P":
        p = sim.probability(arg)
        se = math.sqrt(max(p * (1 - p), 1 / sim.samples) / sim.samples)
        return p, "%", f"{call.span.flat} = {share_text(p)} (sampling error about {share_text(se)}){sim.never_note(arg)}"
    if not isinstance(arg, ir.Name) or arg.name not in sim.plan.model.quantities:
        raise KindError(f"`{call.func}` takes a quantity's name", arg.span, hint=f"write `{call.func}(cost)`")
    name = arg.name
    q = sim.plan.model.quantities[name]
    if q.is_bool:
        raise KindError(f"`{name}` is true/false: its probability is `P({name})`", arg.span)
    if not sim.varies(name):
        raise DistributionError(
            f"`{name}` depends on no uncertain input" + (f" in scenario `{sim.scenario}`" if sim.scenario else "")
            + f", so its {call.func} is its value", arg.span, label="certain",
            hint=f"check its value with `check {name} <= ...`, or make an input it uses uncertain")
    level = percentile_level(call.func)
    if level is not None and not 0 < level < 100:
        raise DistributionError(f"a percentile is between 0 and 100, not {level:g}", call.span)
    s = sim.stats(name, () if level is None else (level,))  # the one reduction's figure, display units
    nevers = sim.no_value([name])
    share = 1.0 - (s.get("never") or 0.0)  # a `first` never in some samples: the figure is over the others
    if share == 0:
        raise DistributionError(f"`{name}` is never in every sample" + (
            f" of scenario `{sim.scenario}`" if sim.scenario else "") + f", so it has no {call.func}", arg.span)
    shown_v = s[call.func if level is None else f"p{_pct_text(level)}"]
    v = shown_v * float(q.display.scale)
    shown = format_value(shown_v, q.unit_text)
    over = f" (over the {share_text(share)} of samples where it has a value; " + ", ".join(
        f"`{n}` is never in {share_text(v)}" for n, v in nevers.items()) + ")" if nevers else ""
    return v, q.unit_text, f"{call.span.flat} = {shown}{over}"


def run_probability_checks(plan: Plan, samples: int = DEFAULT_SAMPLES, seed: int = 0, method: str = "lhs",
                           sims: Optional[dict[Optional[str], Simulation]] = None) -> list[ProbabilityResult]:
    """Every probability check of the plan, per scenario, against one simulation per scenario."""
    checks = [s for s in plan.model.plan.statements if isinstance(s, ir.ProbabilityCheck)]
    if not checks:
        return []
    sims = dict(sims or {})
    wanted: list[Optional[str]] = []
    for c in checks:
        for s in scenarios_for(plan, c.scenarios):
            if s not in sims and s not in wanted:
                wanted.append(s)
    if wanted:
        # only what the checks read: a quantity no check uses (an irr with no rate in some samples) has
        # no say in whether they hold
        used = sorted({n.name for c in checks for n in ir.walk(c.condition)
                       if isinstance(n, ir.Name) and n.name in plan.model.quantities})
        for sim in run(plan, wanted, samples, seed, method, names=used):
            sims[sim.scenario] = sim
    results = []
    for c in checks:
        for s in scenarios_for(plan, c.scenarios):
            results.append(_decide(plan, c, sims[s]))
    return results


def _decide(plan: Plan, check: ir.ProbabilityCheck, sim: Simulation) -> ProbabilityResult:
    result = ProbabilityResult(check, sim.scenario, False, samples=sim.samples)
    cond = check.condition
    try:
        if not isinstance(cond, ir.Compare) or any(op not in _CMP for op in cond.ops):
            raise KindError("a probability check compares a statistic with a bound: `check P(cost < 2 USD) >= 90%`, "
                            "`check p95(cost) <= 3 USD`", cond.span)
        values, texts, units = [], [], []
        dims = [(o, None if o.func == "P" else plan.model.quantities[o.args[0].value.name].dim)
                for o in cond.operands if is_statistic(o) and len(o.args) == 1 and (
                    o.func == "P" or isinstance(o.args[0].value, ir.Name)
                    and o.args[0].value.name in plan.model.quantities)]
        for o in cond.operands:
            if is_statistic(o):
                v, unit, text = statistic(sim, o)
                values.append(v)
                texts.append(text)
                units.append(unit)
            else:
                if any(is_statistic(n) for n in ir.walk(o)):
                    raise KindError("a statistic stands alone on its side of the comparison", o.span,
                                    hint="compare it with a constant: `check p95(cost) <= 3 USD`")
                t = plan.analyzer.infer_strict(o)
                if t.const is None or t.is_bool:
                    raise KindError("the bound of a probability check is a constant such as `90%` or `3 USD`", o.span)
                for stat, dim in dims:
                    want = dim if dim is not None else Type("num", DIMENSIONLESS).dim
                    if t.dim is not None and t.dim != want:
                        raise UnitError(f"`{o.span.flat}` is {dim_text(t)}, but `{stat.span.flat}` is "
                                        f"{dim_text(Type('num', want))}", o.span, label=dim_text(t),
                                        labels=[Label(stat.span, dim_text(Type("num", want)))],
                                        hint="a probability is a share (`90%`); a statistic of a quantity is in "
                                             "its unit")
                values.append(float(t.const))
                units.append(None)
        ok = all(bool(_CMP[op](a, b)) for op, a, b in zip(cond.ops, values, values[1:]))
        unit = next((u for u in units if u is not None), "")
        scale = 1.0
        for o in cond.operands:
            if is_statistic(o) and o.func != "P":
                scale = float(plan.model.quantities[o.args[0].value.name].display.scale)
        if unit == "%":
            scale = 0.01
        result.passed = ok
        result.lhs, result.rhs = values[0] / scale, values[-1] / scale
        result.unit = unit
        result.stat_text = "; ".join(texts)
        nevers = {}
        for o in cond.operands:
            if is_statistic(o) and len(o.args) == 1:
                arg = o.args[0].value
                nevers.update(sim.no_value(n.name for n in ir.walk(arg) if isinstance(n, ir.Name)))
        if nevers:
            said = ", ".join(f"`{n}` is never in {share_text(v)} of samples" for n, v in nevers.items())
            result.note = (f"{said}: a probability counts them as not holding, a mean or percentile "
                           "leaves them out")
    except PlanError as err:  # a check that cannot mean anything is a bad plan, not a failed check
        if sim.scenario is not None and not any("scenario" in n for n in err.notes):
            err.notes.append(f"in scenario `{sim.scenario}`")
        raise
    return result


# ---- solving at a probability -------------------------------------------------------------

@dataclass
class ProbabilitySolve:
    """The value of ``target`` at the edge of a probability condition (``P(cheaper) >= 80%``) over one
    fixed sample set: ``value`` meets it, ``other`` (the last value tried on the other side) does not."""

    target: str
    value: float  # base units
    other: float
    result: ProbabilityResult
    steps: int


def solve_probability(plan: Plan, target: str, condition: ir.Expr, scenario: Optional[str] = None,
                      samples: int = DEFAULT_SAMPLES, seed: int = 0, method: str = "lhs", overrides=None,
                      origins=None) -> ProbabilitySolve:
    """Bisection on input ``target`` for the edge of ``condition`` (a probability check's comparison). The
    samples are drawn once (fixed seed), so the probability is a step function of ``target``; where the
    plan moves monotonically with it, the condition holds on one side of one edge. The bracket grows from
    the point value by doubling steps up and down, inside the input's declared bounds (over its whole
    numbers, for an integer input); then 200 halvings at most, to 1e-12 (to neighbouring integers)."""
    from fractions import Fraction

    q = plan.model.quantities.get(target)
    if q is None or not q.is_input:
        raise DistributionError(f"`{target}` is not an input of {plan.path}: solve for an input",
                                hint="write `--solve 'INPUT where P(condition) >= 80%'`")
    check = ir.ProbabilityCheck(condition, (), condition.span)
    for err in plan.analyzer.probability_bound_errors(check):  # `P(...) >= 120%`: no input can reach it
        raise err
    drawn = draw(plan, samples, seed, method)
    base = dict(overrides or {})
    scale = Fraction(q.display.scale)
    whole = bool(q.integer)

    def holds(x: float) -> ProbabilityResult:  # x: base units (a whole number of display units if integer)
        value = Fraction(round(x / float(scale))) * scale if whole else Fraction(x)
        (sim,) = run(plan, [scenario], samples, seed, method, {**base, target: value}, origins,
                     names=[n.name for n in ir.free_names(condition) if n.name in plan.model.quantities],
                     drawn=drawn)
        return _decide(plan, check, sim)

    lo, hi = _bounds(q, whole)
    x0 = float(plan.evaluate(scenario, overrides, origins).values[target])
    r0 = holds(x0)
    steps = 1
    unit = float(scale)
    step0 = unit if whole else max(abs(x0), unit) * 1e-3
    found = None
    for direction in (1, -1):  # away from the value as written, up then down, to the bounds at most
        step, b = step0, x0
        for _ in range(80):
            nxt = x0 + direction * step
            nxt = min(nxt, hi) if direction > 0 and hi is not None else nxt
            nxt = max(nxt, lo) if direction < 0 and lo is not None else nxt
            if nxt == b:  # at the bound
                break
            b = nxt
            rb = holds(b)
            steps += 1
            if rb.passed != r0.passed:
                found = (b, rb)
                break
            step *= 2
        if found is not None:
            break
    if found is None:
        within = _bounds_text(q)
        raise DistributionError(f"the condition is {'met' if r0.passed else 'not met'} for every value of "
                                f"`{target}` tried{within} (from {x0 / unit:g} {q.unit_text}".rstrip() + ")",
                                condition.span, label="does not change",
                                hint="check the condition moves with the input" + (
                                    ", or widen its bounds" if within else ""))
    b, rb = found
    # bisection: keep (yes, no) with the condition met at yes
    yes, ryes, no = (x0, r0, b) if r0.passed else (b, rb, x0)
    for _ in range(200):
        if whole:
            if abs(yes - no) <= unit * 1.5:
                break
            mid = (round((yes + no) / 2 / unit)) * unit
        else:
            mid = (yes + no) / 2
            if mid in (yes, no) or abs(yes - no) <= 1e-12 * max(abs(yes), abs(no)):
                break
        rm = holds(mid)
        steps += 1
        if rm.passed:
            yes, ryes = mid, rm
        else:
            no = mid
    return ProbabilitySolve(target, yes, no, ryes, steps)


def _bounds(q, whole: bool) -> tuple[Optional[float], Optional[float]]:
    """The values an input may take, in base units: its declared bounds (an open bound a hair inside;
    an integer's, the whole numbers of display units inside)."""
    scale = q.display.scale
    if whole:
        lo, hi = whole_numbers(q.lower, q.upper, scale)
        return (None if lo is None else float(lo * scale)), (None if hi is None else float(hi * scale))
    out = []
    for bound, side in ((q.lower, 1), (q.upper, -1)):
        if bound is None:
            out.append(None)
            continue
        v = float(bound.value)
        out.append(v if bound.inclusive else v + side * max(abs(v), float(scale)) * 1e-12)
    return out[0], out[1]


def _bounds_text(q) -> str:
    if q.lower is None and q.upper is None:
        return ""
    shown = [c.span.flat for c in q.definition.constraints if c.kind == "condition"]
    return f" within `{shown[0]}`" if shown else ""
