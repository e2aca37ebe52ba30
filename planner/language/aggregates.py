"""Aggregates over ranges: their step, and how many terms they can have at most.

``sum(cash / (1 + r)^m for m in 1..lifetime)`` runs ``m`` over ``1, 2, ...,
lifetime``. A range steps by its ``step`` (default: one of the unit its start
is written in, so ``1 month..lifetime`` steps by a month) and holds
``floor((stop - start) / step) + 1`` values (none when ``stop < start``). A range that starts with a
formula counts in the unit of the first number written with one in it: ``max(1 month, m - 47
month)..m`` holds at most 48 months, not 48 months of seconds.

A range whose ends are not constants is sized from the declared bounds of
the inputs they use (``where lifetime <= 120 month``): the evaluation and the
workbook's rows of terms need that largest count, and a plan without it is a
located error that says which bound to declare. :class:`Ranges` works that
out on the IR alone, by interval arithmetic through the formulas (user
functions with their arguments, derived quantities through their
definitions), so an evaluator compiled straight from the IR can use it too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Mapping, Optional, Union

from . import ir
from .functions import FUNCTIONS
from .errors import ConstraintError, KindError, Label, PlanError, RangeError

MAX_TERMS = 20_000  # values of one range (the workbook writes one cell per term)
MAX_NESTED_TERMS = 1_000_000  # terms of an aggregate times the values of the ranges around it


@dataclass(frozen=True)
class Interval:
    """``lo <= x <= hi``; ``None`` is unbounded on that side. ``blame``: inputs whose missing bound
    made a side unbounded (for the message)."""

    lo: Optional[Fraction]
    hi: Optional[Fraction]
    blame: tuple[str, ...] = ()

    @staticmethod
    def point(v: Fraction) -> "Interval":
        return Interval(v, v)


ANY = Interval(None, None)


@dataclass(frozen=True)
class Step:
    """A range's step in base units; the variable is shown in ``unit`` (one of which is ``scale``)."""

    value: Fraction
    unit: str
    scale: Fraction
Scope = Mapping[str, Union[Interval, tuple]]  # a name bound by a function call or an aggregate


def _merge(*xs: Interval) -> tuple[str, ...]:
    out: list[str] = []
    for x in xs:
        out.extend(b for b in x.blame if b not in out)
    return tuple(out)


def _add(a: Interval, b: Interval) -> Interval:
    lo = None if a.lo is None or b.lo is None else a.lo + b.lo
    hi = None if a.hi is None or b.hi is None else a.hi + b.hi
    return Interval(lo, hi, _merge(a, b))


def _neg(a: Interval) -> Interval:
    return Interval(None if a.hi is None else -a.hi, None if a.lo is None else -a.lo, a.blame)


def _mul(a: Interval, b: Interval) -> Interval:
    if None in (a.lo, a.hi, b.lo, b.hi):
        # one side may still be known when both factors are non-negative
        if a.lo is not None and b.lo is not None and a.lo >= 0 and b.lo >= 0:
            hi = None if a.hi is None or b.hi is None else a.hi * b.hi
            return Interval(a.lo * b.lo, hi, _merge(a, b))
        return Interval(None, None, _merge(a, b))
    products = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    return Interval(min(products), max(products), _merge(a, b))


def _div(a: Interval, b: Interval) -> Interval:
    if b.lo is not None and b.hi is not None and (b.lo > 0 or b.hi < 0):
        return _mul(a, Interval(1 / b.hi, 1 / b.lo, b.blame))
    if b.lo is not None and b.lo > 0 and b.hi is None:  # a positive divisor without an upper bound
        inv = Interval(Fraction(0), 1 / b.lo, b.blame)
        return _mul(a, inv) if a.lo is not None and a.lo >= 0 else Interval(None, None, _merge(a, b))
    return Interval(None, None, _merge(a, b))


def _hull(*xs: Interval) -> Interval:
    lo = None if any(x.lo is None for x in xs) else min(x.lo for x in xs)
    hi = None if any(x.hi is None for x in xs) else max(x.hi for x in xs)
    return Interval(lo, hi, _merge(*xs))


def _monotone(a: Interval, fn: Callable[[Fraction], Fraction]) -> Interval:
    return Interval(None if a.lo is None else fn(a.lo), None if a.hi is None else fn(a.hi), a.blame)


_ARITHMETIC = {ir.BinOp.ADD: _add, ir.BinOp.SUB: lambda a, b: _add(a, _neg(b)), ir.BinOp.MUL: _mul,
               ir.BinOp.DIV: _div}


class _BOUNDS:
    """What a built-in's bounds rule (:mod:`planner.language.functions`) is given."""

    Interval = Interval
    merge = staticmethod(_merge)
    hull = staticmethod(_hull)
    monotone = staticmethod(_monotone)


class Ranges(ir.Visitor):
    """Steps and term counts of a plan's aggregates, from the declared bounds of its inputs (the bounds of
    an expression by a ``visit_<Node>`` each; a node without one is unbounded).

    ``quantities`` is the checked model's (each with ``is_input``, ``lower``/``upper``, ``display``,
    ``definition``); ``functions`` the user functions; ``unit_of`` resolves a written unit
    (an :class:`ir.UnitExpr`) to its :class:`~planner.language.units.Unit`.
    """

    def __init__(self, quantities, functions, unit_of: Callable, answers=None) -> None:
        self.quantities = quantities
        self.functions = functions
        self.unit_of = unit_of
        self.answers = answers or {}  # a question's answer lies in its input's declared domain
        self._derived: dict[str, Interval] = {}

    # ---- steps --------------------------------------------------------------
    def step(self, values: ir.Values, scope_step: Callable[[ir.Expr], Optional[Fraction]]) -> "Step":
        """The step of a range in base units, and the unit it counts in (for messages).

        ``scope_step(expr)`` is the exact value of an explicit step (None when it is not a constant)."""
        start = values.items[0]
        if values.kind == "step":
            by = values.items[2]
            v = scope_step(by)
            if v is None:
                raise KindError("the step of a range must be a constant, such as `1 month` or `0.5`", by.span,
                                label="not a constant")
            if v <= 0:
                raise RangeError("the step of a range must be positive", by.span, label=f"this is {_num(v)}",
                                 hint="a range counts up from its start: `1..n step 2`")
            unit = ir.literal_unit(by)
            if unit is None:
                return Step(v, "", Fraction(1))
            return Step(v, unit.text, self.unit_of(unit).scale)
        unit = ir.literal_unit(start)
        if unit is not None:
            scale = self.unit_of(unit).scale
            return Step(scale, unit.text, scale)
        if isinstance(start, ir.Name) and start.name in self.quantities:
            q = self.quantities[start.name]
            return Step(q.display.scale, q.unit_text, q.display.scale)
        unit = _unit_inside(start)  # `max(1 month, m - 47 month)..m` counts in months, as `1 month..m` does
        if unit is not None:
            scale = self.unit_of(unit).scale
            return Step(scale, unit.text, scale)
        return Step(Fraction(1), "", Fraction(1))

    # ---- intervals ------------------------------------------------------------
    def interval(self, e: ir.Expr, scope: Scope) -> Interval:
        """Bounds of ``e`` over every admissible input (base units)."""
        return self.visit(e, scope)

    def visit_other(self, e: ir.Expr, scope: Scope) -> Interval:
        return ANY

    def visit_Number(self, e: ir.Number, scope: Scope) -> Interval:
        return Interval.point(e.value * (self.unit_of(e.unit).scale if e.unit is not None else 1))

    def visit_Name(self, e: ir.Name, scope: Scope) -> Interval:
        if e.name in scope:
            bound = scope[e.name]
            if isinstance(bound, Interval):
                return bound
            expr, outer = bound
            return self.interval(expr, outer)
        q = self.quantities.get(e.name)
        if q is None and e.name in self.answers and not self.answers[e.name].optimum:
            q = self.quantities.get(self.answers[e.name].target)
            if q is not None and q.is_input:
                return Interval(q.lower.value if q.lower else None, q.upper.value if q.upper else None,
                                (q.name,) if q.lower is None or q.upper is None else ())
        if q is None or q.is_bool:
            return ANY
        if q.is_input:
            lo = q.lower.value if q.lower is not None else None
            hi = q.upper.value if q.upper is not None else None
            return Interval(lo, hi, (e.name,) if lo is None or hi is None else ())
        if e.name not in self._derived:
            self._derived[e.name] = ANY  # a guard: cycles are reported elsewhere
            self._derived[e.name] = self.interval(q.definition.expr, {})
        return self._derived[e.name]

    def visit_Neg(self, e: ir.Neg, scope: Scope) -> Interval:
        return _neg(self.interval(e.operand, scope))

    def visit_Binary(self, e: ir.Binary, scope: Scope) -> Interval:
        a, b = self.interval(e.left, scope), self.interval(e.right, scope)
        if e.op is not ir.BinOp.POW:
            return _ARITHMETIC[e.op](a, b)
        if b.lo is not None and b.lo == b.hi and b.lo.denominator == 1 and 0 <= b.lo <= 64 \
                and a.lo is not None and a.lo >= 0:
            n = int(b.lo)
            return _monotone(a, lambda v: v ** n)
        return Interval(None, None, _merge(a, b))

    def visit_Call(self, e: ir.Call, scope: Scope) -> Interval:
        if e.func in self.functions:
            f = self.functions[e.func]
            body, inner = ir.inline(f, e, lambda a: (a, scope), lambda d, bound: (d, bound))
            return self.interval(body, inner)
        args = [self.interval(a.value, scope) for a in e.args]
        f = FUNCTIONS[e.func]
        if f.interval is None:
            return Interval(None, None, _merge(*args))
        return f.interval(_BOUNDS, args)

    def var_interval(self, agg: ir.Aggregate, scope: Scope) -> Interval:
        """Bounds of an aggregate's variable: its range's ends, or the hull of its list's values."""
        v = agg.values
        if v.kind == "list":
            return _hull(*[self.interval(i, scope) for i in v.items])
        a, b = self.interval(v.items[0], scope), self.interval(v.items[1], scope)
        return Interval(a.lo, b.hi, _merge(a, b))

    # ---- term counts ------------------------------------------------------------
    def terms(self, agg: ir.Aggregate, scope: Scope, step: Fraction) -> int:
        """(``step``: the range's step in base units, :attr:`Step.value`.)"""
        """The largest number of values the range of ``agg`` can hold; a located error when it has no
        bound or too many values."""
        values = agg.values
        if values.kind == "list":
            return len(values.items)
        start, stop = values.items[0], values.items[1]
        a, b = self.interval(start, scope), self.interval(stop, scope)
        missing = []
        if a.lo is None:
            missing.append(("start", start, a, "lower"))
        if b.hi is None:
            missing.append(("end", stop, b, "upper"))
        if missing:
            what, expr, iv, side = missing[0]
            raise _unbounded(agg, what, expr, iv, side, self.quantities)
        n = math.floor((b.hi - a.lo) / step) + 1
        if n > MAX_TERMS:
            raise RangeError(
                f"the range `{values.span.flat}` can hold {n:,} values (at most {MAX_TERMS:,})", values.span,
                label="too many values",
                hint="narrow the declared bounds of its ends, or take bigger steps (`a..b step 12`)")
        return max(0, n)

    @staticmethod
    def nested(agg: ir.Aggregate, n: int, outer: tuple) -> int:
        """The terms ``agg`` (``n`` values) takes inside the aggregates ``outer`` (each ``(span, n)``,
        outermost first): the product, or a located error past :data:`MAX_NESTED_TERMS`."""
        total = max(n, 1)
        for _, m in outer:
            total *= max(m, 1)
        if outer and total > MAX_NESTED_TERMS:
            sizes = " x ".join(f"{m:,}" for _, m in outer) + f" x {n:,}"
            raise RangeError(
                f"nested aggregates can take {total:,} terms in all ({sizes}; at most {MAX_NESTED_TERMS:,})",
                agg.values.span, label="inside the ranges marked",
                labels=[Label(span, f"{m:,} values") for span, m in outer],
                hint="narrow the declared bounds of the ranges' ends, or, when the inner aggregate does not "
                     "use the outer variable, make it a quantity of its own")
        return total


def _unbounded(agg: ir.Aggregate, what: str, expr: ir.Expr, iv: Interval, side: str, quantities) -> PlanError:
    word = "largest" if side == "upper" else "smallest"
    culprits = [n for n in iv.blame if n in quantities]
    labels = [Label(quantities[n].definition.span, f"declare {'an' if side == 'upper' else 'a'} {side} bound here")
              for n in culprits[:1]]
    if culprits:
        name = culprits[0]
        q = quantities[name]
        op = "<=" if side == "upper" else ">="
        example = f"{name} {op} {_example(q, side)}"
        message = (f"the range `{agg.values.span.flat}` needs a {word} {what}: `{name}` has no "
                   f"{side} bound")
        hint = (f"a range is sized from the declared bounds of the inputs its ends use (the workbook writes one "
                f"row per value): add `where {example}` to `{name}`")
    else:
        message = f"the range `{agg.values.span.flat}` has no {word} {what}"
        hint = ("a range's ends must be constants or use inputs with declared bounds (`where n <= 120`); "
                "this one uses a formula whose bounds planner cannot work out")
    return ConstraintError(message, expr.span, label=f"no {word} value", labels=labels, hint=hint)


def _example(q, side: str) -> str:
    v = q.value if isinstance(q.value, Fraction) else Fraction(1)
    shown = v / q.display.scale
    guess = max(shown * 10, Fraction(10)) if side == "upper" else min(shown, Fraction(0))
    text = format(float(guess), "g")
    unit = q.unit_text
    return text + ("" if not unit else ("%" if unit == "%" else f" {unit}"))


def _unit_inside(e: ir.Expr) -> Optional[ir.UnitExpr]:
    """The unit of the first number written with one in an expression (``max(1 month, m - 47 month)``):
    what a range that starts with a formula counts in. Exponents and divisors are skipped (``x / 1 s``
    is no time)."""
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, ir.Number):
            if node.unit is not None:
                return node.unit
            continue
        if isinstance(node, ir.Binary) and node.op in (ir.BinOp.DIV, ir.BinOp.POW):
            stack.append(node.left)
            continue
        if isinstance(node, ir.Aggregate):
            continue
        stack.extend(reversed(ir.children(node)))
    return None


def _num(v: Fraction) -> str:
    return format(float(v), "g")
