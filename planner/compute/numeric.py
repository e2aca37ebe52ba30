"""The numpy runtime compiled plans call, without SymPy: ``approx`` and the aggregates'
(``aggregate``, ``expand``).

Both routes to a compiled plan (:mod:`planner.compute.ircompile` from the IR,
:mod:`planner.compute.compiled` through SymPy) generate code that calls
these and return a :class:`planner.compute.program.CompiledPlan`.
"""

from __future__ import annotations

import numpy as np

from .program import CompiledPlan, IRCompiled, load_source  # noqa: F401  (where they were)


def approx(x):
    """``x`` rounded to 15 significant digits, as spreadsheets do before
    ``INT``/``CEILING``: so ``floor(log(1000, 10))`` is 3 (the float quotient
    is 2.9999999999999996) and planner agrees with its own workbook."""
    x = np.asarray(x, dtype=float)
    with np.errstate(all="ignore"):
        magnitude = np.floor(np.log10(np.abs(x)))
        scale = 10.0 ** (14 - magnitude)
        rounded = np.round(x * scale) / scale
    return np.where(np.isfinite(rounded) & (x != 0), rounded, x)


BLOCK = 1 << 16  # array elements per block of terms of an aggregate
MAX_TERMS = 1_000_000  # terms of a range whose variable carries no size (never for plans)
_IDENTITY = {"sum": 0.0, "product": 1.0, "max": -np.inf, "min": np.inf}
_REDUCE = {"sum": np.sum, "product": np.prod, "max": np.max, "min": np.min}
_COMBINE = {"sum": np.add, "product": np.multiply, "max": np.maximum, "min": np.minimum}


def expand(a, n: int):
    """``a`` with ``n`` trailing axes of length one: a value from outside an aggregate's body,
    lined up against the axis (or axes, nested) of its terms."""
    return np.asarray(a)[(...,) + (None,) * n]


def aggregate(kind: str, body, lo, hi, cap: int):
    """``kind`` (sum, product, max, min) of ``body(k)`` for the integers ``k = lo, lo + 1, ..., hi``,
    elementwise over arrays of ``lo`` and ``hi`` (a sweep's points): the terms are a trailing axis,
    masked past each point's own ``hi``. Terms go in blocks of about :data:`BLOCK` elements: a
    single evaluation gets all its terms at once, a sweep of many points one term at a time (each
    term an array over the points), so memory stays small and numpy's loops stay long.

    No value (nan) where an end has none, where the range holds more than ``cap`` values (the most
    its declared bounds allow: only an input outside its constraints gets there), and for the max or
    min of an empty range."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    count = np.floor(approx(hi - lo)) + 1
    count = np.where(count < 0, 0, count)
    finite = np.isfinite(count)
    n = int(min(cap, np.max(count[finite]))) if finite.any() else 0
    least = int(min(cap, np.min(count[finite]))) if finite.all() and count.size else 0  # terms every point has
    fill = _IDENTITY[kind]
    reduce, combine = _REDUCE[kind], _COMBINE[kind]
    acc = None
    start, block = 0, 1  # one term first, to learn how wide the body's values are
    while start < n:
        stop = min(n, start + block)
        j = np.arange(start, stop, dtype=np.float64)
        k = lo[..., None] + j
        values = np.asarray(body(k), dtype=np.float64)
        shape = np.broadcast_shapes(values.shape, k.shape)
        if stop <= least:  # inside every point's range: no mask
            part = reduce(np.broadcast_to(values, shape), axis=-1)
        else:
            part = reduce(np.where(j < count[..., None], values, fill), axis=-1)
        acc = part if acc is None else combine(acc, part)
        start = stop
        width = int(np.prod(shape[:-1], dtype=np.int64))
        block = max(1, BLOCK // max(1, width))
    if acc is None:
        acc = np.full(count.shape, fill)
    bad = ~finite | (count > cap)
    if kind in ("max", "min"):
        bad = bad | (count == 0)
    return np.where(bad, np.nan, acc) if bad.any() else acc
