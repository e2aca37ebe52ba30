"""Sweep values: ``[a, b]``, ``a..b``, ``step``, ``times`` and ``count``, exactly.

An :class:`ir.Values` becomes :class:`Points`: exact rationals in base units
(``1 GB..8 GB step 1 GB`` is 1e9, 2e9, ... bytes) and, for the vectorised
questions, the same values as one float64 array. Every mistake is a located
error: an empty range, a step of the wrong sign, a ``times`` factor not
above 1, a ``count`` below 2, too many points, a value in the wrong unit.

The command line writes values as ``name=VALUES`` (``alpha=0.3,0.6,0.8``,
``gamma=1..8``, ``batch=1..1024 times 2``,
``hbm_bandwidth=2 TB/s..4 TB/s count 5``), parsed by the same grammar
(start rule ``cli_values``) through :func:`parse_assignment`.

:class:`Domain` is the other range a question reads: an input's declared bounds, which a solve
searches and the workbook's Solve sheet bisects (plain fractions: no SymPy needed to read them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import numpy as np

from ..compute.evaluation import format_value, input_quantity
from ..compute.numbers import interval
from ..language import ir
from ..language.errors import KindError, PlanError, RangeError, UnitError, UsageError
from ..language.model import Bound, Quantity, whole_numbers
from ..language.source import Source, Span
from ..language.units import canonical_text

MAX_POINTS = 10_000_000  # per axis and per grid
_EXACT_LIMIT = 100_000  # geometric ranges keep exact values up to this many points


@dataclass(frozen=True)
class Points:
    """The values of one swept input, in base units.

    Arithmetic kinds (``range``, ``step``, ``count``) are ``start + i * step``;
    ``times`` is ``start * factor**i``; ``list`` holds the items. ``exact(i)``
    is the exact rational, :meth:`array` the float64 array of all points
    (each the correctly rounded value of its rational for arithmetic kinds).
    """

    name: str
    kind: str
    count: int
    start: Fraction
    step: Fraction = Fraction(0)
    factor: Fraction = Fraction(1)
    items: tuple[Fraction, ...] = ()
    scale: Fraction = Fraction(1)  # the quantity's display scale
    unit: str = ""
    span: Optional[Span] = None

    def exact(self, i: int) -> Fraction:
        if not 0 <= i < self.count:
            raise IndexError(i)
        if self.kind == "list":
            return self.items[i]
        if self.kind == "times":
            return self.start * self.factor ** i
        return self.start + i * self.step

    def exact_values(self) -> list[Fraction]:
        return [self.exact(i) for i in range(self.count)]

    def array(self) -> np.ndarray:
        """All points as float64 in base units."""
        if self.kind == "list":
            return np.array([float(v) for v in self.items], dtype=np.float64)
        if self.kind == "times":
            if self.count <= _EXACT_LIMIT:
                return np.array([float(v) for v in self.exact_values()], dtype=np.float64)
            return float(self.start) * float(self.factor) ** np.arange(self.count, dtype=np.float64)
        # start + i*step = (A + i*S) / D with integers A, S, D: one rounding per point
        d = math.lcm(self.start.denominator, self.step.denominator)
        a, s = self.start * d, self.step * d
        out = np.arange(self.count, dtype=np.float64)
        if abs(a) < 2**53 and abs(s) * self.count < 2**53:
            if s != 1:
                out *= float(s)
            if a:
                out += float(a)
            if d != 1:
                out /= float(d)
            return out
        out *= float(self.step)
        out += float(self.start)
        return out

    def display(self) -> np.ndarray:
        """All points in the quantity's display unit."""
        return self.array() / float(self.scale)

    @property
    def text(self) -> str:
        return self.span.flat if self.span is not None else ""


def expand(plan, name: str, values: ir.Values, name_span: Optional[Span] = None,
           max_points: int = MAX_POINTS) -> Points:
    """Check and expand the values of input ``name``; raise a located error on a mistake."""
    q = input_quantity(plan, name, name_span, "a sweep varies")
    consts = [_const(plan, item, q, values, i) for i, item in enumerate(values.items)]
    common = dict(name=name, scale=q.display.scale, unit=q.unit_text, span=values.span)
    if values.kind == "list":
        if len(consts) > max_points:
            raise _too_many(values, len(consts), max_points)
        return Points(kind="list", count=len(consts), start=consts[0], items=tuple(consts), **common)
    start, stop = consts[0], consts[1]
    if values.kind == "range":
        step = _unit_step(plan, values.items[0], q)
        if stop < start:
            raise RangeError(
                "empty range: the start is above the stop", values.span, label="no values",
                hint=f"for a descending range write `{_t(values.items[0])}..{_t(values.items[1])} step "
                     f"-{_fmt(step / q.display.scale)}{(' ' + q.unit_text) if q.unit_text else ''}`")
        return _arith(values, start, stop, step, max_points, common)
    by = consts[2]
    if values.kind == "step":
        if by == 0:
            raise RangeError("a step of zero never reaches the stop", values.items[2].span, label="step is 0")
        if stop != start and (stop - start > 0) != (by > 0):
            direction = "up" if stop > start else "down"
            raise RangeError(
                f"step of the wrong sign: the range goes {direction} but the step is "
                f"{'negative' if by < 0 else 'positive'}", values.items[2].span,
                label="wrong sign", hint="change the sign of the step, or swap the start and the stop")
        return _arith(values, start, stop, by, max_points, common)
    if values.kind == "count":
        if by.denominator != 1 or by < 2:
            raise RangeError(f"`count` needs a whole number of at least 2, got {_fmt(by)}",
                            values.items[2].span, label="not a count >= 2",
                            hint="`a..b count n` gives n evenly spaced values, both ends included")
        n = int(by)
        if n > max_points:
            raise _too_many(values, n, max_points)
        if start == stop:
            raise RangeError("empty range: the start equals the stop", values.span,
                            hint="write a single value as a list: `[x]`")
        return Points(kind="count", count=n, start=start, step=(stop - start) / (n - 1), **common)
    # times: a geometric range
    if by <= 1:
        raise RangeError(f"`times` needs a factor above 1, got {_fmt(by)}", values.items[2].span,
                        label="factor <= 1", hint="for powers of two write `1..1024 times 2`")
    if start <= 0:
        raise RangeError("a geometric range (`times`) must start above zero", values.items[0].span,
                        label="not above zero")
    if stop < start:
        raise RangeError("empty range: the start is above the stop", values.span, label="no values")
    n = _geometric_count(start, stop, by, max_points, values)
    return Points(kind="times", count=n, start=start, factor=by, **common)


def parse_assignment(plan, text: str) -> tuple[str, ir.Values, Span]:
    """``name=VALUES`` from the command line, parsed by the plan grammar."""
    from ..language.lower import lower_values

    if "=" not in text:
        raise UsageError(f"sweep expects name=VALUES, got `{text}`",
                         hint="for example alpha=0.3,0.6,0.8 or gamma=1..8 or 'batch=1..1024 times 2'")
    name, _, rest = text.partition("=")
    whole = Source(f"sweep {name.strip()}", text)
    name_span = Span(whole, len(name) - len(name.lstrip()), max(1, len(name.rstrip())))
    if not rest.strip():
        raise UsageError(f"no values after `{name.strip()}=`", name_span,
                         hint="for example alpha=0.3,0.6,0.8 or gamma=1..8")
    values = lower_values(Source(whole.name, rest))
    return name.strip(), values, name_span


# ---- helpers -------------------------------------------------------------------

def _const(plan, item: ir.Expr, q: Quantity, values: ir.Values, index: int) -> Fraction:
    t = plan.analyzer.infer_strict(item)
    if t.is_bool or t.const is None:
        raise KindError("sweep values must be constants such as `0.5` or `2 TB/s`", item.span,
                        label="not a constant")
    is_count = values.kind in ("times", "count") and index == 2
    if is_count:
        if t.dim is not None and not t.dim.dimensionless:
            raise UnitError(f"`{values.kind}` takes a plain number, not {canonical_text(t.dim)}", item.span)
    elif t.dim is not None and t.dim != q.dim:
        have = canonical_text(t.dim) or "a plain number"
        want = f"is in {q.unit_text or canonical_text(q.dim)}" if not q.dim.dimensionless else "is a plain number"
        raise UnitError(f"`{q.name}` {want}; this value is {'in ' if t.dim.powers else ''}{have}", item.span,
                        label=have,
                        hint=f"write the value with a unit of {q.dim.describe()}" if not q.dim.dimensionless
                        else "write a plain number")
    return t.const


def _unit_step(plan, first: ir.Expr, q: Quantity) -> Fraction:
    """``a..b`` steps by one of the start's written unit (``1 GB..8 GB``), else one display unit."""
    from ..language.analysis import unit_of

    lit = first.operand if isinstance(first, ir.Neg) else first
    if isinstance(lit, ir.Number) and lit.unit is not None:
        return unit_of(lit.unit, plan.model.units).scale
    return q.display.scale


def _arith(values: ir.Values, start: Fraction, stop: Fraction, step: Fraction, max_points: int, common) -> Points:
    n = math.floor((stop - start) / step) + 1
    if n > max_points:
        raise _too_many(values, n, max_points)
    return Points(kind=values.kind, count=n, start=start, step=step, **common)


def _geometric_count(start: Fraction, stop: Fraction, factor: Fraction, max_points: int, values: ir.Values) -> int:
    estimate = math.floor(_log(stop / start) / _log(factor)) + 1
    if estimate > max_points + 1:
        raise _too_many(values, estimate, max_points)
    # The float estimate can be off by one at an exact power: settle it exactly.
    n = max(1, estimate - 1)
    while start * factor ** n <= stop:
        n += 1
    while n > 1 and start * factor ** (n - 1) > stop:
        n -= 1
    if n > max_points:
        raise _too_many(values, n, max_points)
    return n


def _log(v: Fraction) -> float:
    """ln of a positive rational too large or small for a float (math.log takes integers of any size)."""
    return math.log(v.numerator) - math.log(v.denominator)


def _too_many(values: ir.Values, n: int, limit: int) -> PlanError:
    return RangeError(f"too many points: {n:,} (the limit is {limit:,})", values.span,
                     label="too many values", hint="use a larger step or fewer points (`count n`)")


def _fmt(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{float(v):g}"


def _t(e: ir.Expr) -> str:
    return e.span.flat


GRID = 4097  # points of the numeric sign scan over a domain


@dataclass(frozen=True)
class Domain:
    """An input's declared domain, the interval a question about it searches (base units)."""

    lo: Optional[Fraction]
    lo_inclusive: bool
    hi: Optional[Fraction]
    hi_inclusive: bool
    scale: Fraction
    unit: str
    name: str

    @staticmethod
    def of(q: Quantity) -> "Domain":
        return Domain(q.lower.value if q.lower else None, bool(q.lower and q.lower.inclusive),
                       q.upper.value if q.upper else None, bool(q.upper and q.upper.inclusive),
                       q.display.scale, q.unit_text, q.name)

    def contains(self, v) -> bool:
        """Whether ``v`` (a Fraction, or a SymPy number compared in SymPy's exact arithmetic) is inside."""
        lo, hi = self.lo, self.hi
        if not isinstance(v, (Fraction, int)):
            from ..compute.symbolic import rational

            lo, hi = (None if e is None else rational(e) for e in (lo, hi))
        if lo is not None and (v < lo or (v == lo and not self.lo_inclusive)):
            return False
        if hi is not None and (v > hi or (v == hi and not self.hi_inclusive)):
            return False
        return True

    def text(self) -> str:
        def show(v: Fraction) -> str:
            return format_value(float(v / self.scale), self.unit)
        if self.lo is None and self.hi is None:
            return "all real numbers"
        left = f"{'[' if self.lo_inclusive else '('}{show(self.lo)}" if self.lo is not None else "(-inf"
        right = f"{show(self.hi)}{']' if self.hi_inclusive else ')'}" if self.hi is not None else "inf)"
        return interval(left, right)

    def integers(self) -> tuple[Optional[int], Optional[int]]:
        """Integer range in display units."""
        return whole_numbers(None if self.lo is None else Bound(self.lo, self.lo_inclusive),
                             None if self.hi is None else Bound(self.hi, self.hi_inclusive), self.scale)

    def sample(self, around: float, n: int = GRID) -> np.ndarray:
        """Points over the domain (base units), shrunk away from open bounds."""
        lo = None if self.lo is None else float(self.lo)
        hi = None if self.hi is None else float(self.hi)
        if lo is not None and hi is not None:
            eps = (hi - lo) * 1e-12
            return np.linspace(lo + (0 if self.lo_inclusive else eps), hi - (0 if self.hi_inclusive else eps), n)
        m = max(abs(around), abs(lo or 0.0), abs(hi or 0.0), float(self.scale))
        steps = np.geomspace(m * 1e-12, m * 1e12, n // 2)
        if lo is not None:
            start = lo + (0 if self.lo_inclusive else m * 1e-15)
            return np.concatenate([[start], start + steps])
        if hi is not None:
            stop = hi - (0 if self.hi_inclusive else m * 1e-15)
            return np.concatenate([(stop - steps)[::-1], [stop]])
        return np.concatenate([(around - steps)[::-1], [around], around + steps])
