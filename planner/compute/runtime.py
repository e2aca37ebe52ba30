"""What the numeric route's compiler (:mod:`planner.compute.numeric`) makes, and what it runs on.

A :class:`Program` is plain data (steps named from :data:`STEPS` over numbered registers), so the
compiled-plan cache keeps it as data and checks it (:meth:`Program.valid`) before it runs; this
module imports nothing of planner's but the table of built-in functions
(:mod:`planner.language.functions`, whose records carry each function's operation on floats and on
numpy), so a warm run from the cache reads it without the compiler.

Each runtime is a table from a step's name to a function of the registers and the step's
arguments; :func:`run_numpy` and :func:`run_floats` bind a program's steps to one table once and
run them in order. The two tables compute the same operations; the float one gives up
(:class:`GiveUp`, or any arithmetic exception) wherever Python's floats would not give numpy's
answer: a division by zero or an overflow (numpy: inf), a domain error (numpy: nan), a complex
power, a nan that ``max`` or ``min`` would drop, a value that is not finite at the end. The
caller then runs numpy, which gives the same values (to the last bit for ``+ - * / sqrt``; the C
library's ``pow``, ``exp`` and ``log`` may differ from numpy's loops in the last bit) and every
error report.

Aggregates over a range run on numpy only (their terms are a trailing array axis).
"""

from __future__ import annotations

import math
import threading

from ..language.functions import FUNCTIONS

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional, Sequence

BLOCK = 1 << 16  # array elements per block of an aggregate's terms


# ---- what a program is ------------------------------------------------------------------------

class _Code:
    """Plain data: its ``__slots__`` but the last, ``_bound`` (its steps bound to a runtime, made on first
    run), which a pickle leaves out."""

    __slots__ = ()

    def __getstate__(self):
        return tuple(getattr(self, f) for f in self.__slots__[:-1])

    def __setstate__(self, state) -> None:
        for f, v in zip(self.__slots__[:-1], state, strict=True):  # (a state of another length: ValueError)
            setattr(self, f, v)
        self._bound = {}


class Program(_Code):
    """Steps from input values to output values: plain data.

    * ``inputs``: the names of the values a run takes, in order (registers ``0..len(inputs)-1``);
    * ``outputs``: the names of what it returns, in order; ``results`` their registers;
    * ``consts``: ``(register, value)`` set before the steps run (floats and true/false);
    * ``steps``: ``(op, register, arguments)``; an argument is a register number, except for
      ``agg`` (kind, start, end, step, cap and the body, a :class:`Body`);
    * ``size``: how many registers a run uses (registers are reused once their value is dead).
    """

    __slots__ = ("inputs", "outputs", "size", "consts", "steps", "results", "aggregates", "_bound")

    def __init__(self, inputs, outputs, size, consts, steps, results, aggregates) -> None:
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.size = size
        self.consts = tuple(consts)
        self.steps = tuple(steps)
        self.results = tuple(results)
        self.aggregates = aggregates  # whether a step is an aggregate over a range (numpy only)
        self._bound: dict = {}

    def __repr__(self) -> str:
        return f"Program(inputs={len(self.inputs)}, outputs={len(self.outputs)}, steps={len(self.steps)})"

    def valid(self) -> bool:
        """Whether this is a program the compiler could have made (read from a cache written by
        anyone): every step's name in the runtime's table, every register in range."""
        return _valid(self.steps, self.consts, self.size, range(len(self.inputs))) and \
            len(self.results) == len(self.outputs) and all(_register(r, self.size) for r in self.results)

    def __call__(self, values: Sequence) -> tuple:
        """Every output on numpy values (arrays broadcast against each other, or numpy scalars)."""
        return run_numpy(self, values)

    def scalar(self, values: Sequence) -> Optional[tuple]:
        """Every output from Python floats and true/false values, or ``None`` where the float run
        cannot give what numpy gives (see the module): the caller then runs numpy."""
        if self.aggregates:
            return None
        return run_floats(self, values)


class Body(_Code):
    """The body of an aggregate over a range: its own registers, the outer values it reads
    (``captures``: (outer register, inner register)), the register of the range's variable and of
    the term."""

    __slots__ = ("captures", "var", "size", "consts", "steps", "result", "_bound")

    def __init__(self, captures, var, size, consts, steps, result) -> None:
        self.captures = tuple(captures)
        self.var = var
        self.size = size
        self.consts = tuple(consts)
        self.steps = tuple(steps)
        self.result = result
        self._bound: dict = {}


class ScanBody(_Code):
    """One period of a run over a plan's periods (``scan``): its registers, the outer values it reads
    (``captures``: (outer register, inner register)), the registers of ``period``, of whether this
    is the first period (``first``) and of the period's index (``index``, from 0); ``state``: (the
    register that holds a series' value in the period before, the register of its value in this
    one); ``outputs``: the registers whose values, period by period, the run gives back (each an
    array with the periods as its last axis)."""

    __slots__ = ("captures", "period", "first", "index", "state", "size", "consts", "steps", "outputs", "_bound")

    def __init__(self, captures, period, first, index, state, size, consts, steps, outputs) -> None:
        self.captures = tuple(captures)
        self.period, self.first, self.index = period, first, index
        self.state = tuple(state)
        self.size = size
        self.consts = tuple(consts)
        self.steps = tuple(steps)
        self.outputs = tuple(outputs)
        self._bound: dict = {}


# Reductions of a series (an array whose last axis is the periods) to one figure, over the periods where
# a condition holds (the second argument; true for all); `at_period` is a series' value at one period.
SERIES_STEPS = {"by_period": None, "sum_over": 2, "mean_over": 2, "min_over": 2, "max_over": 2, "last_over": 2, "first_over": 2,
                "count_over": 1, "at_period": 4, "period_of": 2, "isnan": 1}

_CORE = {"+": 2, "-": 2, "*": 2, "/": 2, "^": 2, "neg": 1, "==": 2, "!=": 2, "<": 2, "<=": 2, ">": 2, ">=": 2,
         "approx": 3, "and": 2, "or": 2, "not": 1}
_ARITY = {**_CORE, **SERIES_STEPS, **{f.step: f.arity for f in FUNCTIONS.values()}}
STEPS = frozenset(_ARITY) | {"agg", "scan", "item", "subprogram"}
_KINDS = ("sum", "product", "max", "min")


def _register(r, size: int) -> bool:
    return r.__class__ is int and 0 <= r < size


def _valid(steps, consts, size, fixed) -> bool:
    if size.__class__ is not int or size < 1:
        return False
    for reg, value in consts:
        if not _register(reg, size) or value.__class__ not in (float, bool):
            return False
    for step in steps:
        if step.__class__ is not tuple or len(step) != 3:
            return False
        op, dst, args = step
        if op not in STEPS or not _register(dst, size) or args.__class__ is not tuple:
            return False
        if op == "agg":
            if len(args) != 6:
                return False
            kind, start, end, stride, cap, body = args
            if kind not in _KINDS or not (_register(start, size) and _register(end, size)) \
                    or stride.__class__ is not float or not stride > 0 or cap.__class__ is not int \
                    or body.__class__ is not Body or not all(_register(o, size) for o, _ in body.captures) \
                    or not _register(body.var, body.size) or not _register(body.result, body.size) \
                    or not all(_register(i, body.size) for _, i in body.captures) \
                    or not _valid(body.steps, body.consts, body.size, ()):
                return False
        elif op == "scan":
            if len(args) != 4:
                return False
            start, end, stride, body = args
            if not (_register(start, size) and _register(end, size)) or stride.__class__ is not float \
                    or not stride > 0 or body.__class__ is not ScanBody \
                    or not all(_register(o, size) and _register(i, body.size) for o, i in body.captures) \
                    or not all(_register(x, body.size) for x in (body.period, body.first, body.index)) \
                    or not all(_register(a, body.size) and _register(b, body.size) for a, b in body.state) \
                    or not all(_register(o, body.size) for o in body.outputs) \
                    or not _valid(body.steps, body.consts, body.size, ()):
                return False
        elif op == "item":
            if len(args) != 2 or not _register(args[0], size) or args[1].__class__ is not int or args[1] < 0:
                return False
        elif op == "subprogram":  # a series' figure inside a program SymPy's form compiled to
            if not args or args[0].__class__ is not Program or not args[0].valid() \
                    or len(args) - 1 != len(args[0].inputs) or not all(_register(a, size) for a in args[1:]):
                return False
        elif (len(args) != _ARITY[op] if _ARITY[op] is not None else not args) or not all(_register(a, size) for a in args):
            return False
    return True


class GiveUp(Exception):
    """The float run cannot promise numpy's value here: numpy runs instead."""


# ---- Python floats --------------------------------------------------------------------------

def _f_pow(a, b):
    if a == 0.0:  # numpy's power has fast paths (x^0.5 is sqrt: -0.0 ^ 0.5 is -0.0, Python's 0.0)
        raise GiveUp
    v = a ** b
    if v.__class__ is not float:  # a negative base to a fractional power (numpy: nan)
        raise GiveUp
    return v


FLOATS = {
    "+": lambda r, a: r[a[0]] + r[a[1]],
    "-": lambda r, a: r[a[0]] - r[a[1]],
    "*": lambda r, a: r[a[0]] * r[a[1]],
    "/": lambda r, a: r[a[0]] / r[a[1]],
    "^": lambda r, a: _f_pow(r[a[0]], r[a[1]]),
    "neg": lambda r, a: -r[a[0]],
    "==": lambda r, a: r[a[0]] == r[a[1]],
    "!=": lambda r, a: r[a[0]] != r[a[1]],
    "<": lambda r, a: r[a[0]] < r[a[1]],
    "<=": lambda r, a: r[a[0]] <= r[a[1]],
    ">": lambda r, a: r[a[0]] > r[a[1]],
    ">=": lambda r, a: r[a[0]] >= r[a[1]],
    "approx": lambda r, a: abs(r[a[0]] - r[a[1]]) <= r[a[2]],
    "and": lambda r, a: r[a[0]] and r[a[1]],
    "or": lambda r, a: r[a[0]] or r[a[1]],
    "not": lambda r, a: not r[a[0]],
}


def _on_registers(fn, arity: int):
    """A built-in's operation (:mod:`planner.language.functions`) as a step on registers."""
    if arity == 1:
        return lambda r, a: fn(r[a[0]])
    if arity == 2:
        return lambda r, a: fn(r[a[0]], r[a[1]])
    if arity == 3:
        return lambda r, a: fn(r[a[0]], r[a[1]], r[a[2]])
    return lambda r, a: fn(*[r[i] for i in a])


FLOATS.update({f.step: _on_registers(f.floats, f.arity) for f in FUNCTIONS.values()})
FLOATS["isnan"] = lambda r, a: r[a[0]] != r[a[0]]
FLOATS["by_period"] = lambda r, a: r[a[1 + min(r[a[0]], len(a) - 2)]]  # a period table's item (index first)
FLOATS["__copy"] = lambda r, a: r[a[0]]  # (a scan's first-period choice, made once: _phases)


def run_floats(program, values: Sequence) -> Optional[tuple]:
    """The program's outputs from Python floats and bools, or None (see the module)."""
    if len(values) != len(program.inputs):
        raise ValueError("not as many values as inputs")
    steps = program._bound.get("floats")
    if steps is None:
        steps = program._bound["floats"] = [(FLOATS[op], dst, args) for op, dst, args in program.steps]
    r = [None] * program.size
    for i, v in enumerate(values):
        cls = v.__class__
        if cls is not float and cls is not bool:
            if cls is int:
                v = float(v)
            else:
                return None
        r[i] = v
    for reg, v in program.consts:
        r[reg] = v
    try:
        for fn, dst, args in steps:
            r[dst] = fn(r, args)
    except (ArithmeticError, ValueError, TypeError, GiveUp):
        return None
    out = tuple(r[i] for i in program.results)
    for v in out:
        cls = v.__class__
        if cls is float:
            if v - v != 0.0:  # inf or nan
                return None
        elif cls is not bool:
            return None
    return out


# ---- numpy -------------------------------------------------------------------------------------

def _numpy_table():
    import numpy as np

    def approx(x):
        x = np.asarray(x, dtype=float)
        magnitude = np.floor(np.log10(np.abs(x)))
        scale = 10.0 ** (14 - magnitude)
        rounded = np.round(x * scale) / scale
        return np.where(np.isfinite(rounded) & (x != 0), rounded, x)

    table = {
        "+": lambda r, a: r[a[0]] + r[a[1]],
        "-": lambda r, a: r[a[0]] - r[a[1]],
        "*": lambda r, a: r[a[0]] * r[a[1]],
        "/": lambda r, a: np.divide(r[a[0]], r[a[1]]),
        "^": lambda r, a: np.power(r[a[0]], r[a[1]]),
        "neg": lambda r, a: np.negative(r[a[0]]),
        "==": lambda r, a: np.equal(r[a[0]], r[a[1]]),
        "!=": lambda r, a: np.not_equal(r[a[0]], r[a[1]]),
        "<": lambda r, a: np.less(r[a[0]], r[a[1]]),
        "<=": lambda r, a: np.less_equal(r[a[0]], r[a[1]]),
        ">": lambda r, a: np.greater(r[a[0]], r[a[1]]),
        ">=": lambda r, a: np.greater_equal(r[a[0]], r[a[1]]),
        "approx": lambda r, a: np.abs(r[a[0]] - r[a[1]]) <= r[a[2]],
        "and": lambda r, a: np.logical_and(r[a[0]], r[a[1]]),
        "or": lambda r, a: np.logical_or(r[a[0]], r[a[1]]),
        "not": lambda r, a: np.logical_not(r[a[0]]),
        "agg": lambda r, a: _aggregate(np, approx, r, *a),
        "scan": lambda r, a: _scan(np, approx, r, *a),
        "item": lambda r, a: r[a[0]][a[1]],
        "subprogram": lambda r, a: run_numpy(a[0], [r[i] for i in a[1:]])[0],
    }
    table.update(_series_table(np))
    table.update({f.step: _on_registers(f.numpy(np, approx), f.arity) for f in FUNCTIONS.values()})
    return table, approx


_NUMPY = None


def numpy_table():
    global _NUMPY
    if _NUMPY is None:
        _NUMPY = _numpy_table()
    return _NUMPY


def _bind(code, table):
    steps = code._bound.get("numpy")
    if steps is None:
        steps = code._bound["numpy"] = [(table[op], dst, args) for op, dst, args in code.steps]
    return steps


def run_numpy(program, values: Sequence) -> tuple:
    """The program's outputs on numpy values: arrays (broadcast together) or scalars."""
    import numpy as np

    table, _ = numpy_table()
    if len(values) != len(program.inputs):
        raise ValueError("not as many values as inputs")
    r = [None] * program.size
    for i, v in enumerate(values):
        r[i] = v if isinstance(v, np.ndarray) else (np.bool_(v) if isinstance(v, (bool, np.bool_)) else np.float64(v))
    for reg, v in program.consts:
        r[reg] = np.bool_(v) if v.__class__ is bool else np.float64(v)
    with np.errstate(all="ignore"):
        for fn, dst, args in _bind(program, table):
            r[dst] = fn(r, args)
    return tuple(r[i] for i in program.results)


_STATE = threading.local()  # the resume points of inner aggregates while an outer one runs


def _reads(body) -> frozenset:
    """The body's registers read before they are written: the captures it uses."""
    got = body._bound.get("reads")
    if got is None:
        written, read = {body.var} | {reg for reg, _ in body.consts}, set()
        for op, dst, args in body.steps:
            read.update(x for x in step_reads(op, args) if x not in written)
            written.add(dst)
        if body.result not in written:  # a term that is a capture itself (`sum(i for j in 1..3)`)
            read.add(body.result)
        read.discard(body.var)
        got = body._bound["reads"] = frozenset(read)
    return got


def _resumable(saved, reads, step) -> bool:
    """Whether an inner aggregate's saved run read exactly what this one reads (the same objects:
    registers are never changed in place, and the saved run keeps its own alive)."""
    before, before_step = saved
    return before_step == step and len(before) == len(reads) and before[-1] == reads[-1] and \
        all(x is y for x, y in zip(before[:-1], reads[:-1]))


_IDENTITY = {"sum": 0.0, "product": 1.0, "max": -math.inf, "min": math.inf}


def _aggregate(np, approx, r, kind: str, start: int, end: int, step: float, cap: int, body):
    """``kind`` (sum, product, max, min) of the body at ``start``, ``start + step``, ... up to ``end``,
    elementwise over arrays of the ends (a sweep's points, or an outer aggregate's terms): the terms
    are a trailing axis, masked past each point's own end. Terms go in blocks of about
    :data:`BLOCK` elements: a single evaluation gets all its terms at once, a sweep of many points
    one term at a time (each term an array over the points), so memory stays small and numpy's
    loops stay long.

    An aggregate inside another's body whose terms do not depend on the outer one's variable
    (``cash(n) = sum(rent(m) for m in 1..n)`` inside ``first(n for n in 1..36 where ...)``) resumes
    where its previous run (for the outer term before) stopped, when nothing it reads has changed:
    a prefix sum instead of a triangle of terms. It resumes only at a block boundary that both runs
    share, and only over terms no mask touched, so the figures are the same to the last bit
    (:func:`_resumable`).

    No value (nan) where an end has none, where the range holds more than ``cap`` values (the most
    its declared bounds allow: only an input outside its constraints gets there), and for the max
    or min of an empty range."""
    memo = getattr(_STATE, "memo", None)
    if memo is None:  # the outermost aggregate: the inner ones' resume points last as long as it runs
        _STATE.memo = {}
        try:
            return _aggregate(np, approx, r, kind, start, end, step, cap, body)
        finally:
            _STATE.memo = None
    reduce = {"sum": np.sum, "product": np.prod, "max": np.max, "min": np.min}[kind]
    combine = {"sum": np.add, "product": np.multiply, "max": np.maximum, "min": np.minimum}[kind]
    a = np.asarray(r[start], dtype=np.float64)
    b = np.asarray(r[end], dtype=np.float64)
    points = np.broadcast_shapes(a.shape, b.shape)
    count = np.floor(approx((b - a) / step)) + 1
    count = np.where(count < 0, 0, count)
    finite = np.isfinite(count)
    n = int(min(cap, np.max(count[finite]))) if finite.any() else 0
    least = int(min(cap, np.min(count[finite]))) if finite.all() and count.size else 0  # terms every point has
    table, _ = numpy_table()
    steps = _bind(body, table)
    prototype = [None] * body.size  # the same objects for every block: inner aggregates can resume
    for outer, reg in body.captures:
        prototype[reg] = np.asarray(r[outer])[..., None]
    for reg, v in body.consts:
        prototype[reg] = np.bool_(v) if v.__class__ is bool else np.float64(v)
    reads = tuple(r[outer] for outer, reg in body.captures if reg in _reads(body)) + (r[start], points)
    fill = _IDENTITY[kind]
    acc = None
    lo, block = 0, 1  # one term first, to learn how wide the body's values are
    saved = memo.get(id(body))
    if saved is not None and saved[0] is body and _resumable(saved[1], reads, step) and saved[2] <= least:
        _, _, lo, block, acc = saved
    while lo < n:
        hi = min(n, lo + block)
        j = np.arange(lo, hi, dtype=np.float64)
        inner = list(prototype)
        inner[body.var] = a[..., None] + j * step
        for fn, dst, args in steps:
            inner[dst] = fn(inner, args)
        values = np.asarray(inner[body.result], dtype=np.float64)
        shape = np.broadcast_shapes(values.shape, points + (hi - lo,))
        if hi <= least:  # inside every point's range: no mask
            part = reduce(np.broadcast_to(values, shape), axis=-1)
        else:
            part = reduce(np.where(j < count[..., None], values, fill), axis=-1)
        acc = part if acc is None else combine(acc, part)
        full = hi == lo + block  # not cut short by the end: a boundary every longer run shares
        width = int(np.prod(shape[:-1], dtype=np.int64))
        block = max(1, BLOCK // max(1, width))
        if full and hi <= least:
            memo[id(body)] = (body, (reads, step), hi, block, acc)
        lo = hi
    if acc is None:
        acc = np.full(count.shape, fill)
    bad = ~finite | (count > cap)
    if kind in ("max", "min"):
        bad = bad | (count == 0)
    return np.where(bad, np.nan, acc) if bad.any() else acc


# ---- series over periods ------------------------------------------------------------------------

MAX_PERIODS = 100_000  # a run over more periods than this gives no value (nan)


def _scan(np, approx, r, start: int, end: int, step: float, body: ScanBody) -> tuple:
    """The body run once per period, in order (the value of a series in the period before is in
    its ``state`` register): each output an array with the periods as its last axis. Linear in the
    periods; every value is an array over a sweep's points or a simulation's samples (or a scalar).
    The number of periods comes from the range's ends: where they differ between points, a point's
    values past its own last period are nan."""
    a = np.asarray(r[start], dtype=np.float64)
    b = np.asarray(r[end], dtype=np.float64)
    count = np.floor(approx((b - a) / step)) + 1
    count = np.where(np.isfinite(count) & (count > 0), count, 0)
    n = int(min(MAX_PERIODS, np.max(count))) if count.size else 0
    if count.size == 1 and n:  # one evaluation: Python floats, where they give numpy's values
        got = _scan_floats(r, start, step, body, n)
        if got is not None:
            return got
    table, _ = numpy_table()
    prototype = [None] * body.size
    for outer, reg in body.captures:
        prototype[reg] = r[outer]
    for reg, v in body.consts:
        prototype[reg] = np.bool_(v) if v.__class__ is bool else np.float64(v)
    columns = _periods(body, _phases(body, "numpy", table), prototype, r[start], step, n, np.float64(np.nan), np.bool_)
    out = []
    uneven = count.size > 1 and np.min(count) != n
    for column in columns:
        if not column:
            out.append(np.empty((0,)))
            continue
        # periods first, one contiguous row each (a fast copy), then seen with the periods last (a view)
        stacked = np.moveaxis(np.stack(np.broadcast_arrays(*column), axis=0), 0, -1)
        if uneven and stacked.dtype != bool:
            shape = np.broadcast_shapes(stacked.shape, count.shape + (n,))
            stacked = np.where(np.arange(n) < count[..., None], np.broadcast_to(stacked, shape), np.nan)
        out.append(stacked)
    out.append(np.arange(n) < count[..., None])  # the periods each point has (its own end): reductions keep to them
    return tuple(out)


def step_reads(op: str, args: tuple) -> tuple:
    """The registers a step reads (an aggregate's and a run over periods' captured ones too)."""
    if op == "agg":
        return (args[1], args[2]) + tuple(outer for outer, _ in args[5].captures)
    if op == "scan":
        return (args[0], args[1]) + tuple(outer for outer, _ in args[3].captures)
    if op == "item":
        return (args[0],)
    if op == "subprogram":
        return args[1:]
    return args


def _phases(body: ScanBody, runtime: str, table: dict) -> tuple[list, list]:
    """The body's steps bound to ``table``, for the first period and for the later ones: a choice on
    whether this is the first period (``if(first, a, b)``, how a series' first value and ``previous(x,
    start)`` are compiled) is made once per phase, a copy of one side, and the steps that then feed
    nothing are dropped (a series' first formula does not run in later periods, nor its recurrence in
    the first). Backwards liveness over the registers, so reused registers are safe."""
    key = "phases-" + runtime
    got = body._bound.get(key)
    if got is None:
        copy = table["__copy"]
        got = []
        for first in (True, False):
            live = set(body.outputs) | {value for _, value in body.state}
            kept = []
            for op, dst, args in reversed(body.steps):
                if dst not in live:
                    continue
                live.discard(dst)
                if op == "if" and args[0] == body.first:
                    src = args[1] if first else args[2]
                    kept.append((copy, dst, (src,)))
                    live.add(src)
                    continue
                kept.append((table[op], dst, args))
                live.update(step_reads(op, args))
            got.append(kept[::-1])
        got = body._bound[key] = tuple(got)
    return got


def _periods(body: ScanBody, phases: tuple[list, list], prototype: list, start, step: float, n: int, before,
             flag) -> list[list]:
    """The body's steps run once per period, in order (``phases``: the first period's and the later ones',
    :func:`_phases`): each output's values, period by period. ``before``: the value of a series in the
    period before the first; ``flag``: the type of whether this is the first period (numpy's or Python's)."""
    first_steps, later_steps = phases
    previous = [before] * len(body.state)
    columns: list = [[] for _ in body.outputs]
    for t in range(n):
        regs = list(prototype)
        regs[body.period] = start + t * step
        regs[body.first] = flag(t == 0)
        regs[body.index] = t
        for (held, _), v in zip(body.state, previous):
            regs[held] = v
        for fn, dst, args in (later_steps if t else first_steps):
            regs[dst] = fn(regs, args)
        previous = [regs[value] for _, value in body.state]
        for column, reg in zip(columns, body.outputs):
            column.append(regs[reg])
    return columns


def _scan_floats(r, start: int, step: float, body: ScanBody, n: int) -> Optional[tuple]:
    """:func:`_scan` on Python floats for one evaluation (every value a scalar), or None where floats
    cannot promise numpy's values (as :func:`run_floats`): the caller runs numpy."""
    import numpy as np

    if any(op not in FLOATS for op, _, _ in body.steps):
        return None
    values = []
    for outer, reg in body.captures:
        v = r[outer]
        if getattr(v, "ndim", 0):
            return None
        values.append((reg, bool(v) if isinstance(v, (bool, np.bool_)) else float(v)))
    prototype = [None] * body.size
    for reg, v in values:
        prototype[reg] = v
    for reg, v in body.consts:
        prototype[reg] = v
    try:  # (the value before the first period, 1.0, is read only by the side of a first-period choice not taken)
        columns = _periods(body, _phases(body, "floats", FLOATS), prototype, float(r[start]), step, n, 1.0, bool)
    except (ArithmeticError, ValueError, TypeError, GiveUp):
        return None
    out = []
    for column in columns:
        kinds = {v.__class__ for v in column}
        if kinds == {bool}:
            out.append(np.array(column, dtype=bool))
        elif kinds == {float}:
            arr = np.array(column, dtype=np.float64)
            if not np.isfinite(arr).all():
                return None
            out.append(arr)
        else:
            return None
    out.append(np.ones(n, dtype=bool))  # every period is the point's own (see _scan)
    return tuple(out)


def _series_table(np) -> dict:
    def pair(b, c):
        b = np.asarray(b)
        c = np.asarray(c, dtype=bool)
        shape = np.broadcast_shapes(b.shape, c.shape)
        return np.broadcast_to(b, shape).astype(np.float64), np.broadcast_to(c, shape)

    def total(b, c):
        b, c = pair(b, c)
        return np.sum(np.where(c, b, 0.0), axis=-1)

    def mean(b, c):
        b, c = pair(b, c)
        k = np.sum(c, axis=-1)
        return np.where(k > 0, np.sum(np.where(c, b, 0.0), axis=-1) / np.maximum(k, 1), np.nan)

    def extreme(fn, fill):
        def run(b, c):
            b, c = pair(b, c)
            if b.shape[-1] == 0:
                return np.full(b.shape[:-1], np.nan)
            v = fn(np.where(c, b, fill), axis=-1)
            return np.where(np.any(c, axis=-1), v, np.nan)
        return run

    def pick(last):
        def run(b, c):
            b, c = pair(b, c)
            if b.shape[-1] == 0:
                return np.full(b.shape[:-1], np.nan)
            i = (b.shape[-1] - 1 - np.argmax(c[..., ::-1], axis=-1)) if last else np.argmax(c, axis=-1)
            v = np.take_along_axis(b, i[..., None], axis=-1)[..., 0]
            return np.where(np.any(c, axis=-1), v, np.nan)
        return run

    def at_period(stack, when, start, step):
        stack = np.asarray(stack, dtype=np.float64)
        n = stack.shape[-1]
        if np.ndim(when) == 0 and np.ndim(start) == 0:  # one period for every point (`net at m` in a range of
            # flows): that column; 0.8 of the 6 s a 36-month plan's report spent in this function went to
            # broadcasting one index to every point
            raw = (float(when) - float(start)) / float(step)
            i = round(raw)
            return stack[..., i].copy() if 0 <= i < n and abs(raw - i) <= 1e-9 else np.full(stack.shape[:-1], np.nan)
        raw = (np.asarray(when, dtype=np.float64) - start) / step
        i = np.round(raw)
        shape = np.broadcast_shapes(stack.shape[:-1], i.shape)
        i = np.broadcast_to(i, shape)
        valid = (i >= 0) & (i < n) & (np.abs(raw - np.round(raw)) <= 1e-9)  # `at 2.5 month` is no period
        if n == 0:
            return np.full(shape, np.nan)
        s = np.broadcast_to(stack, shape + (n,))
        v = np.take_along_axis(s, np.where(valid, i, 0).astype(np.int64)[..., None], axis=-1)[..., 0]
        return np.where(valid, v, np.nan)

    return {
        "__copy": lambda r, a: r[a[0]],
        "by_period": lambda r, a: r[a[1 + min(r[a[0]], len(a) - 2)]],
        "sum_over": lambda r, a: total(r[a[0]], r[a[1]]),
        "mean_over": lambda r, a: mean(r[a[0]], r[a[1]]),
        "min_over": lambda r, a: extreme(np.min, np.inf)(r[a[0]], r[a[1]]),
        "max_over": lambda r, a: extreme(np.max, -np.inf)(r[a[0]], r[a[1]]),
        "last_over": lambda r, a: pick(True)(r[a[0]], r[a[1]]),
        "first_over": lambda r, a: pick(False)(r[a[0]], r[a[1]]),
        "count_over": lambda r, a: np.sum(np.asarray(r[a[0]], dtype=bool), axis=-1).astype(np.float64),
        "at_period": lambda r, a: at_period(r[a[0]], r[a[1]], r[a[2]], r[a[3]]),
        "period_of": lambda r, a: np.asarray(r[a[0]])[..., r[a[1]]],
        "isnan": lambda r, a: np.isnan(np.asarray(r[a[0]], dtype=np.float64)),
    }
