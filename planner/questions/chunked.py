"""Sweeps and simulations too large for memory: chunked xarray/Dask arrays, reduced to figures.

The one home of dask, distributed and xarray (optional: ``pip install '.[dask]'`` in a checkout, or ``pip install 'dask[array]' distributed xarray``).

* A sweep's axes are one-dimensional :class:`xarray.DataArray` s, each along its own dimension and
  chunked; :func:`xarray.apply_ufunc` (``dask="parallelized"``) runs the plan's compiled
  :class:`planner.compute.runtime.Program` (the numpy runtime) on each block of the grid, the axes
  broadcast against each other inside the block, so a block (about ``chunk_mb`` MB of values, every
  quantity computed for it counted) is one task, not one task per point, and no block is kept once
  it is reduced.
* A simulation's samples are a chunked axis of sample numbers: each block draws its own samples
  (:func:`planner.questions.sampling.draw`), the same numbers the in-memory run draws for those sample numbers (the
  ``random`` method's stream advanced to the block's first sample, or the ``counter`` generator),
  then runs the same program.

What comes back is figures, never the grid: the count, minimum and maximum (exact), the mean and
standard deviation (Dask's reductions: the in-memory figures to rounding, about 1e-15), the share of points or samples where a condition holds
(exact: a count), and percentiles, which need the data in order. They are found exactly, as
numpy's ``percentile`` (linear interpolation) gives them, by refinement (:func:`order_statistics`):
a pass counts the values in 65,536 bins of the range that holds the wanted rank, the next pass
counts inside that bin, and once a bin holds at most :data:`GATHER` values they are gathered and
sorted. The bins are over the floats' order (their bits as integers), so each pass narrows 16 bits
of 64 and no more than four histogram passes are needed; a typical grid takes two passes after the
first (each pass evaluates the grid again).

The same code runs on this machine's cores (Dask's threaded scheduler: numpy releases the GIL) or on
a ``dask.distributed`` cluster (``scheduler`` = its address; its workers need planner installed).
"""

from __future__ import annotations

import math
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ..compute.evaluation import Plan
from ..language import ir
from ..language.errors import DistributionError, PlanError, UsageError
from . import sampling, simulate
from .sweep import SweepRun

EXTRA = "pip install 'dask[array]' distributed xarray"
CHUNK_MB = 100.0  # the size of a block of the grid (float64 values of one quantity)
MAX_POINTS = 10 ** 12  # points of a chunked sweep, or samples of a chunked simulation
BINS = 1 << 16  # bins per refinement pass of a percentile
GATHER = 1 << 20  # values gathered and sorted, at most, to read an order statistic
DEFAULT_PERCENTILES = simulate.DEFAULT_PERCENTILES
_SIGN = np.int64(0x7FFF_FFFF_FFFF_FFFF)


# ---- the libraries and the scheduler -------------------------------------------------------

def libraries():
    """dask and xarray, or a usage error that says what to install."""
    try:
        import dask
        import dask.array  # noqa: F401
        import xarray
    except ImportError as exc:
        raise UsageError(f"--dask needs Dask and xarray, and `{exc.name or 'dask'}` is not installed",
                         hint=f"install the extra: {EXTRA}") from None
    return dask, xarray


@dataclass
class Scheduler:
    """Where the blocks run: this machine's threads, or a distributed cluster's workers."""

    get: Any  # what dask.compute's ``scheduler=`` takes
    where: str  # in words, for the run's note
    step: Any = None  # called with the name of each pass over the data (a progress bar's step)
    passes: int = 0  # passes over the data so far

    def compute(self, *things, what: str = ""):
        dask, _ = libraries()
        self.passes += 1
        if self.step is not None:
            self.step(f"pass {self.passes}: {what}" if what else f"pass {self.passes}")
        return dask.compute(*things, scheduler=self.get)

    def summaries(self, columns: dict[str, Any], levels: Sequence[float], extra=(), check=None) -> tuple[dict, list]:
        """The chunked executor of :func:`planner.questions.simulate.reduce`: per lazy column (nan left
        out) count, mean, sd, min, max and the percentiles ``levels`` (exact, :func:`order_statistics`),
        and ``extra`` computed in the first pass (``check(extra)`` before the percentiles' passes)."""
        stats, got = _first_pass(self, columns, extra)
        if check is not None:
            check(got)
        _add_percentiles(self, columns, stats, levels)
        return stats, got


@contextmanager
def scheduler(address: Optional[str] = None, step=None):
    """A :class:`Scheduler`: with ``address``, a ``dask.distributed`` client of that scheduler (closed
    afterwards; the cluster is left running), else Dask's threads, one per core. ``step(text)`` is
    called before each pass over the data."""
    libraries()
    if address is None:
        import dask.threaded

        cores = os.cpu_count() or 1
        yield Scheduler(lambda dsk, keys, **kw: dask.threaded.get(dsk, keys, num_workers=cores, **kw),
                        f"{cores} thread{'s' if cores != 1 else ''} of this machine", step)
        return
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs dask.distributed, which is not installed",
                         hint=f"install the extra: {EXTRA}") from None
    try:
        client = Client(address, timeout=10, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}",
                         hint="start one with `dask scheduler` and workers with `dask worker ADDRESS`, or leave out "
                              "--scheduler to use this machine's cores") from None
    try:
        workers = len(client.scheduler_info().get("workers", {}))
        yield Scheduler(client.get, f"the cluster at {address} ({workers} worker{'s' if workers != 1 else ''})", step)
    finally:
        client.close()


def check_chunk_mb(chunk_mb: float) -> None:
    if not (isinstance(chunk_mb, (int, float)) and math.isfinite(chunk_mb) and 0.001 <= chunk_mb <= 100_000):
        raise UsageError(f"the chunk size must be from 0.001 to 100,000 MB; it is {chunk_mb:g}",
                         hint=f"the default is {CHUNK_MB:g} MB (--chunk-mb)")


def chunks_for(shape: Sequence[int], chunk_mb: float) -> tuple[int, ...]:
    """Chunk lengths per axis for blocks of about ``chunk_mb`` MB of float64: the last axes whole,
    the first axis that does not fit cut to what is left, the axes before it one value at a time."""
    budget = max(1, int(chunk_mb * 1e6 / 8))
    out = []
    for n in reversed(shape):
        if n <= budget:
            out.append(n)
            budget //= n
        else:
            out.append(max(1, budget))
            budget = 1
    return tuple(reversed(out))


# ---- the blocks ----------------------------------------------------------------------------------

def _sweep_block(*blocks, program, args, positions):
    """The program over one block of the grid: ``blocks`` are the axes' values there (their own
    axis, size 1 on the others), set at their ``positions`` in the argument list ``args``."""
    shape = np.broadcast_shapes(*(b.shape for b in blocks))
    values = list(args)
    for pos, b in zip(positions, blocks):
        values[pos] = np.asarray(b, dtype=np.float64)
    return tuple(np.broadcast_to(np.asarray(v), shape) for v in program(values))


def _simulate_block(index, program, args, positions, sampled, seed, method, inputs, copula):
    """The program over one block of samples (``index``: their sample numbers, consecutive), and the
    sampled inputs' values there; evaluated :data:`planner.questions.simulate.BLOCK` samples at a time
    into the block's arrays, so the formulas' temporaries stay small."""
    n = len(index)
    if n == 0:
        return tuple(np.zeros(0) for _ in range(len(program.outputs) + len(sampled)))
    first = int(index[0])
    out: list = []
    for lo in range(0, n, simulate.BLOCK):
        hi = min(n, lo + simulate.BLOCK)
        drawn = sampling.draw(inputs, hi - lo, seed, method, copula, start=first + lo)  # as simulate.draw draws
        values = list(args)
        for name, pos in positions:
            values[pos] = drawn[name]
        part = [np.broadcast_to(np.asarray(v), (hi - lo,)) for v in program(values)] + [drawn[m] for m in sampled]
        if not out:
            out = [np.empty(n, dtype=v.dtype) for v in part]
        for whole, v in zip(out, part):
            whole[lo:hi] = v
    return tuple(out)


def _lazy(func, inputs, outputs: int, dtypes, kwargs):
    """``func`` over the chunked ``inputs`` with :func:`xarray.apply_ufunc`: ``outputs`` lazy arrays."""
    _, xr = libraries()
    if outputs == 1:  # apply_ufunc wants the array itself, not a tuple of one
        func, kwargs = _only, {"func": func, **kwargs}
    got = xr.apply_ufunc(func, *inputs, kwargs=kwargs, dask="parallelized", output_dtypes=list(dtypes),
                         output_core_dims=[[] for _ in range(outputs)])
    return list(got) if outputs > 1 else [got]


def _only(*blocks, func, **kwargs):
    return func(*blocks, **kwargs)[0]


# ---- percentiles, exactly ----------------------------------------------------------------

def _keys(values: np.ndarray) -> np.ndarray:
    """Integers in the floats' order (``-0.0`` just below ``0.0``): a float's bits, the negative
    ones' flipped but for the sign."""
    i = np.ascontiguousarray(values, dtype=np.float64).view(np.int64)
    return i ^ ((i >> 63) & _SIGN)


def _float(key: int) -> float:
    i = np.array([key], dtype=np.int64)
    return float((i ^ ((i >> 63) & _SIGN)).view(np.float64)[0])


def _width(lo: int, hi: int) -> int:
    """Keys per bin for the range ``[lo, hi)`` in :data:`BINS` bins."""
    return max(1, -(-(hi - lo) // BINS))


def _pass_block(block, histograms, gathers):
    """One block's part of a refinement pass: per range in ``histograms`` the counts of its keys in
    :data:`BINS` bins; per range in ``gathers`` its values."""
    v = np.asarray(block, dtype=np.float64).ravel()
    v = v[~np.isnan(v)]
    k = _keys(v)
    counts = []
    for lo, hi in histograms:
        inside = k[(k >= lo) & (k < hi)]
        offset = (inside.view(np.uint64) - np.uint64(lo % (1 << 64))) // np.uint64(_width(lo, hi))
        counts.append(np.bincount(offset.astype(np.int64), minlength=BINS))
    values = [v[(k >= lo) & (k < hi)] for lo, hi in gathers]
    return counts, values


def _combine(parts):
    counts = [np.sum(c, axis=0) for c in zip(*(p[0] for p in parts))]
    values = [np.concatenate(v) for v in zip(*(p[1] for p in parts))]
    return counts, values


def order_statistics(run: Scheduler, arrays: dict[str, Any], wants: dict[str, tuple]) -> dict[str, dict[int, float]]:
    """Per lazy array of ``arrays``, its ``k``-th smallest value (0-based, nan left out) for each ``k``
    of ``wants[name] = (ranks, smallest, largest, count)`` (``count`` values are not nan), exactly.
    Each pass evaluates the arrays once, together (see the module)."""
    from dask import delayed

    state: dict[tuple[str, int], tuple[int, int, int, int]] = {}  # (name, rank) -> keys [lo, hi), below, inside
    for name, (ranks, smallest, largest, count) in wants.items():
        lo, hi = int(_keys(np.array([smallest]))[0]), int(_keys(np.array([largest]))[0]) + 1
        for k in ranks:
            state[(name, k)] = (lo, hi, 0, count)
    out: dict[tuple[str, int], float] = {}
    while len(out) < len(state):
        jobs: dict[str, tuple[list, list]] = {}  # name -> (ranges to count in bins, ranges to gather)
        for (name, k), (lo, hi, below, inside) in state.items():
            if (name, k) in out:
                continue
            if hi - lo == 1:  # one float: the value
                out[(name, k)] = _float(lo)
                continue
            histograms, gathers = jobs.setdefault(name, ([], []))
            todo = gathers if inside <= GATHER else histograms
            if (lo, hi) not in todo:
                todo.append((lo, hi))
        if not jobs:
            break
        # not optimised one by one: fused apart, each array would run the program again
        blocks = {name: arrays[name].data.to_delayed(optimize_graph=False).ravel() for name in jobs}
        got = run.compute(*[delayed(_combine)([delayed(_pass_block)(b, *jobs[name]) for b in blocks[name]])
                            for name in jobs], what="percentiles")
        result = dict(zip(jobs, got))
        for (name, k), (lo, hi, below, inside) in list(state.items()):
            if (name, k) in out or name not in result:
                continue
            histograms, gathers = jobs[name]
            counts, values = result[name]
            if (lo, hi) in gathers:
                out[(name, k)] = float(np.sort(values[gathers.index((lo, hi))])[k - below])
            else:
                c = counts[histograms.index((lo, hi))]
                before = np.concatenate([[0], np.cumsum(c)]) + below
                j = int(np.searchsorted(before, k, side="right")) - 1
                w = _width(lo, hi)
                state[(name, k)] = (lo + j * w, min(hi, lo + (j + 1) * w), int(before[j]), int(c[j]))
    found: dict[str, dict[int, float]] = {}
    for (name, k), v in out.items():
        found.setdefault(name, {})[k] = v
    return found


_spots, _lerp = simulate.spots, simulate.lerp  # a percentile from two order statistics, in memory as here


def _first_pass(run: Scheduler, arrays: dict[str, Any], extra=()) -> tuple[dict, list]:
    """Per lazy array (float, nan left out): count, mean, sd, min and max; and ``extra`` (lazy
    scalars), in one pass."""
    lazy = []
    for a in arrays.values():
        # (a nan is no sample: `nan > 0` is false, so it counts as no fraction)
        lazy += [a.count(), a.mean(), a.std(ddof=1), a.min(), a.max(), (abs(a - a.round()) > 0).sum()]
    got = run.compute(*lazy, *extra, what="count, mean, sd, min, max, probabilities")
    out: dict[str, dict[str, float]] = {}
    for i, name in enumerate(arrays):
        count, mean, sd, lo, hi, fractions = (got[6 * i + j] for j in range(6))
        count = int(count)
        out[name] = {"count": count, "mean": float(mean) if count else math.nan,
                     "sd": float(sd) if count > 1 else math.nan,
                     "min": float(lo) if count else math.nan, "max": float(hi) if count else math.nan,
                     "whole": bool(count) and int(fractions) == 0}
    return out, list(got[6 * len(arrays):])


def _add_percentiles(run: Scheduler, arrays: dict[str, Any], stats: dict[str, dict], levels: Sequence[float]) -> None:
    """The percentiles ``levels`` of each lazy array (as numpy's ``percentile`` gives them), into its
    ``stats`` (from :func:`_first_pass`)."""
    wants = {}
    for name, s in stats.items():
        if levels and s["count"]:
            ranks = sorted({r for b, a, _ in _spots(levels, s["count"]) for r in (b, a)})
            wants[name] = (ranks, s["min"], s["max"], s["count"])
    found = order_statistics(run, arrays, wants) if wants else {}
    for name, s in stats.items():
        for p, (below, above, t) in zip(levels, _spots(levels, max(1, s["count"]))):
            s[f"p{_pct(p)}"] = _lerp(found[name][below], found[name][above], t) if name in found else math.nan


_pct = simulate._pct_text  # a percentile's key: p5, p99_9


class _Values:
    """What :func:`planner.questions.simulate.condition_values` reads: the plan and its lazy arrays."""

    def __init__(self, plan: Plan, values: dict[str, Any]) -> None:
        self.plan = plan
        self.values = values


def _share(cond_values, valid, n: int):
    """The lazy count of points where a condition holds (among ``valid`` ones)."""
    lazy = hasattr(cond_values, "dims")
    return simulate._count(cond_values if valid is None or not lazy else cond_values & valid, n)


# ---- sweeps ----------------------------------------------------------------------------------

@dataclass
class ChunkedSweep:
    """A sweep reduced to figures, per shown quantity over its points without an issue (display
    units): ``points``, ``mean``, ``sd``, ``min``, ``max`` and ``pN``; the share of those points
    where each condition holds; and how many points have an issue (a constraint broken, an integer
    input swept to a fraction, a shown quantity with no finite value) and are left out."""

    plan: Plan
    scenario: Optional[str]
    axes: list  # the sweep's Points
    size: int
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    stats: dict[str, dict[str, float]]
    probabilities: list[tuple[str, float]]
    left_out: int
    percentiles: tuple[float, ...]
    where: str = ""

    @property
    def label(self) -> str:
        return self.scenario or "base"

    @property
    def blocks(self) -> int:
        return int(np.prod([-(-n // c) for n, c in zip(self.shape, self.chunks)], dtype=np.int64))


def sweep(run: Scheduler, prepared: SweepRun, conditions: Sequence[tuple[str, ir.Expr]] = (),
          levels: Sequence[float] = DEFAULT_PERCENTILES, chunk_mb: float = CHUNK_MB) -> ChunkedSweep:
    """A prepared sweep (:func:`planner.questions.sweep.prepare`) as a chunked grid, reduced to figures."""
    import dask.array as da

    _, xr = libraries()
    check_chunk_mb(chunk_mb)
    plan = prepared.plan
    if any(isinstance(v, np.ndarray) for v in prepared.answers.values()):
        raise UsageError("this sweep changes an answer a formula uses (solved again at every point): "
                         "a chunked sweep cannot", hint="run it without --dask")
    for _, answer, reason in prepared.failed:  # no answer at any point
        raise PlanError(f"the swept formulas use the answer `{answer}`, which has none: {reason}",
                        hint="run without --dask to see each point")
    prepared.block(0, 1)  # a fixed input that breaks its constraint fails here, with its location
    used = [n.name for _, c in conditions for n in ir.free_names(c) if n.name in plan.model.quantities]
    program = prepared.compiled
    if any(n not in prepared.show for n in used):  # compiled for the conditions' quantities too
        program, _ = plan.compile_for(list(prepared.show) + used)
    args = plan.args(dict(prepared.inputs), prepared.answers)
    positions = [plan.model.inputs.index(p.name) for p in prepared.axes]
    chunks = chunks_for(prepared.shape, chunk_mb / max(1, len(program.outputs)))  # a chunk's values, all of them
    dims = [f"axis{i}_{p.name}" for i, p in enumerate(prepared.axes)]
    axes = [xr.DataArray(da.from_array(a, chunks=c), dims=d) for a, c, d in zip(prepared.arrays, chunks, dims)]
    grid = xr.broadcast(*axes)  # each axis over the whole grid (lazy: nothing is held)
    probe = _sweep_block(*[a[:1].reshape((1,) * (len(dims) - i)) for i, a in enumerate(prepared.arrays)],
                         program=program, args=args, positions=positions)
    lazy = dict(zip(program.outputs, _lazy(_sweep_block, axes, len(program.outputs),
                                            [v.dtype for v in probe], {"program": program, "args": args,
                                                                       "positions": positions})))
    values: dict[str, Any] = dict(lazy)
    for p, g in zip(prepared.axes, grid):
        values[p.name] = g
    for name in set(prepared.show) | set(used):
        if name not in values:  # an input the sweep keeps fixed
            v = prepared.inputs[name]
            values[name] = xr.zeros_like(grid[0], dtype=bool if isinstance(v, bool) else float) + \
                (v if isinstance(v, bool) else float(args[plan.model.inputs.index(name)]))
    # the points with an issue, as the in-memory sweep finds them (planner.questions.sweep._find_issues)
    bad = None

    def add(mask):
        nonlocal bad
        bad = mask if bad is None else (bad | mask)

    for i in range(len(plan._constraints)):
        ok = lazy[f"__constraint{i}"]
        add(~ok)
    for p, a, arr in zip(prepared.axes, axes, prepared.arrays):
        q = plan.model.quantities[p.name]
        if q.integer:
            shown = arr / float(q.display.scale)
            frac = shown != np.round(shown)
            if frac.any():
                add(xr.DataArray(da.from_array(frac, chunks=a.data.chunks), dims=a.dims))
    for name in prepared.show:
        v = values[name]
        if v.dtype != bool:
            add(~np.isfinite(v))
    valid = None if bad is None else ~bad
    floats: dict[str, Any] = {}
    for name in prepared.show:
        q = plan.model.quantities[name]
        v = values[name].astype(float) if q.is_bool else values[name] / float(q.display.scale)
        if valid is not None:
            v = v.where(valid)
        floats[name] = v
    probability_counts = [_share(simulate.condition_values(_Values(plan, values), c), valid, prepared.size)
                          for _, c in conditions]
    extra = probability_counts + ([valid.sum()] if valid is not None else [])
    stats, got = run.summaries(floats, levels, extra)
    good = int(got[-1]) if valid is not None else prepared.size
    probabilities = [(text, int(c) / good if good else math.nan) for (text, _), c in zip(conditions, got)]
    for name in prepared.show:
        stats[name]["points"] = stats[name].pop("count")
    return ChunkedSweep(plan, prepared.scenario, prepared.axes, prepared.size, prepared.shape, chunks, stats,
                        probabilities, prepared.size - good, tuple(levels), run.where)


# ---- simulations -----------------------------------------------------------------------------

def check_method(method: str) -> None:
    if method not in ("random", "counter"):
        raise UsageError(f"--dask draws each chunk's samples on its own, and `{method}` sampling cannot: "
                         "a Latin hypercube shuffles all the samples at once",
                         hint="use --method random (the same samples as `planner simulate --method random`) "
                              "or --method counter")


def simulate_chunked(run: Scheduler, plan: Plan, scenarios: Sequence[Optional[str]] = (None,),
                     samples: int = simulate.DEFAULT_SAMPLES, seed: int = 0, method: str = "random", overrides=None,
                     origins=None, names: Optional[Sequence[str]] = None,
                     conditions: Sequence[tuple[str, ir.Expr]] = (), levels: Sequence[float] = DEFAULT_PERCENTILES,
                     chunk_mb: float = CHUNK_MB) -> list[simulate.Figures]:
    """:func:`planner.questions.simulate.run` over chunks of samples, reduced to figures by the same
    :func:`planner.questions.simulate.reduce` (this module's :class:`Scheduler` its executor): the same
    samples (sample ``i`` of each input is the in-memory run's sample ``i``), so the same figures; the
    true/false quantities said as shares are :func:`planner.questions.simulate.flags_for`'s."""
    import dask.array as da

    _, xr = libraries()
    check_method(method)
    check_chunk_mb(chunk_mb)
    simulate.check_seed(seed)
    if not isinstance(samples, int) or samples < 2 or samples > MAX_POINTS:
        raise DistributionError(f"the sample count must be from 2 to {MAX_POINTS:,}; it is {samples:,}",
                                hint=f"the default is {simulate.DEFAULT_SAMPLES:,} (--samples)")
    _refuse_series_conditions(plan, conditions)
    inputs = simulate.inputs_to_sample(plan)
    names = list(names) if names is not None else simulate.default_names(plan)
    flags = simulate.flags_for(plan, names)
    wanted = names + flags + [n.name for _, c in conditions for n in ir.free_names(c)
                              if n.name in plan.model.quantities]
    compiled, derived = plan.compile_for(wanted)
    spec = {u.name: (u.kind, u.params, u.within) for u in inputs.values()}
    copula = simulate.copula(plan)
    chunk = chunks_for((samples,), chunk_mb / (len(compiled.outputs) + len(inputs)))[0]  # a chunk's values, all
    index = xr.DataArray(da.arange(samples, chunks=chunk, dtype=np.int64), dims="sample")
    out = []
    for scenario in scenarios:
        point_ev = plan.evaluate(scenario, overrides, origins)  # the point values: and a bad plan fails here
        fixed, _ = plan.input_values(scenario, overrides, origins)
        sampled = [n for n in inputs if not simulate._set_in(plan, n, scenario, overrides)]
        answers = simulate.fixed_answers(plan, point_ev, sampled)
        args = plan.args(dict(fixed), answers)
        positions = [(n, plan.model.inputs.index(n)) for n in sampled]
        kwargs = {"program": compiled, "args": args, "positions": positions, "sampled": sampled, "seed": seed,
                  "method": method, "inputs": spec, "copula": copula}
        probe = _simulate_block(np.arange(2, dtype=np.int64), **kwargs)
        k = len(compiled.outputs) + len(sampled)
        lazy = _lazy(_simulate_block, [index], k, [v.dtype for v in probe], kwargs)
        values: dict[str, Any] = dict(zip(compiled.outputs, lazy[:len(compiled.outputs)]))
        values.update(zip(sampled, lazy[len(compiled.outputs):]))
        constant = {n: point_ev.values[n] for n in plan.model.quantities if n not in values and n in point_ev.values}
        for n, v in constant.items():
            values[n] = xr.zeros_like(index, dtype=bool if isinstance(v, bool) else float) + v
        varying = {n for n in wanted if n in sampled or (n in derived and _varies(probe, compiled, n))}
        # what the in-memory run refuses: a constraint broken in some samples, a quantity not finite there
        broken = [(~values[f"__constraint{i}"]).sum() for i in range(len(plan._constraints))]
        from ..compute.diagnose import is_first

        check = [n for n in wanted if n in derived and not is_first(plan.model.quantities[n].definition.expr)
                 and values[n].dtype != bool]
        infinite = [(~np.isfinite(values[n])).sum() for n in check]
        got = simulate.reduce(
            run, plan, values.__getitem__, _Values(plan, values), names, flags, conditions, levels, samples,
            point_ev.values, broken + infinite,
            lambda got: _refuse(plan, scenario, samples, inputs, [int(b) for b in got[:len(broken)]],
                                dict(zip(check, (int(b) for b in got[len(broken):]))), values, run))
        out.append(simulate.Figures(plan, scenario, samples, seed, method, {n: inputs[n] for n in sampled},
                                    varying=varying, chunk=chunk, **got))
    return out


def _refuse_series_conditions(plan: Plan, conditions: Sequence[tuple[str, ir.Expr]]) -> None:
    """A condition that reduces a series (``min(cash) < 0 USD``) is computed per sample by the in-memory
    run only: here it is refused, naming the figure to define instead."""
    from ..language.lower import read_series

    for _, c in conditions:
        if simulate._uses_series(read_series(plan.model.plan, c)):
            raise UsageError(f"--dask computes conditions over the plan's figures; `{c.span.flat}` reduces a series",
                             hint="define the figure in the plan (`low = min(cash)`) and write the condition over "
                                  "it (`-p \"low < 0 USD\"`), or run without --dask")


def _varies(probe, compiled, name: str) -> bool:
    """Whether ``name`` moves with the samples (on the probe's two samples, or not a broadcast constant)."""
    v = probe[compiled.outputs.index(name)]
    return not (v.strides == (0,) or v.ndim == 0)


def _refuse(plan, scenario, samples, inputs, broken, infinite, values, run) -> None:
    """The in-memory run's errors (:func:`planner.questions.simulate._check_samples`), counted over
    every chunk: a constraint broken in some samples, a quantity with no finite value in some."""
    from ..compute.evaluation import format_value

    for i, bad in enumerate(broken):
        if bad:
            raise simulate.constraint_error(plan, scenario, i, bad, samples, inputs)
    for name, bad in infinite.items():
        if bad:
            missing = ~np.isfinite(values[name])
            firsts = [f for f in simulate.firsts_used(plan, name) if f in values]
            never = None
            for f in firsts:  # where a `first(...)` it uses finds nothing, it has no value: said so
                never = np.isnan(values[f]) if never is None else never | np.isnan(values[f])
            other = 0 if never is None else int(run.compute((missing & ~never).sum(), what="the samples")[0])
            if never is not None and not other:
                missing = never
            first = int(run.compute(missing.data.argmax(), what="the first sample")[0])
            shown = []
            for u in inputs:
                if u in values:
                    uq = plan.model.quantities[u]
                    value = float(run.compute(values[u][first], what="the first sample")[0]) / float(uq.display.scale)
                    shown.append(f"{u} = {format_value(value, uq.unit_text)}")
            at = ", ".join(shown)
            if never is not None and not other:
                shares = run.compute(*[np.isnan(values[f]).mean() for f in firsts], what="the shares of never")
                nevers = {f: float(v) for f, v in zip(firsts, shares) if float(v) > 0}
                err = simulate.never_error(plan, name, nevers, int(run.compute(never.sum(), what="the samples")[0]),
                                           samples, at)
            else:
                err = simulate.not_finite_error(plan, name, bad, samples, at)
            raise simulate.in_scenario(err, scenario)
