"""Exact evaluation of formulas over rational inputs, straight from the IR.

``check a == b`` holds when the two sides are equal in exact arithmetic
(``0.1 + 0.2 - 0.3 == 0``), even where their floats differ in the last bit.
With rational inputs, a formula of ``+ - * /``, integer powers, ``max``,
``min``, ``abs``, ``floor``, ``ceil``, ``round``, ``if`` and comparisons has
a rational value: this computes it with :class:`fractions.Fraction`, each
quantity once. Anything else (``sqrt``, ``exp``, ``ln``, a fractional power)
has no rational value here: :class:`NotRational`, and the caller decides
another way (SymPy).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Mapping, Optional, Union

from ..language import ir
from ..language.analysis import unit_of
from ..language.functions import FUNCTIONS, fill
from ..language.model import Model
from ..language.precision import approx_tolerance

Value = Union[Fraction, bool]

MAX_EXPONENT = 10_000  # larger integer powers are not computed exactly (as checks._cheap_exactly)


class NotRational(Exception):
    """The formula has no rational value (or one too costly to compute exactly)."""


class ExactEvaluator:
    def __init__(self, model: Model, inputs: Mapping[str, Value]) -> None:
        self.model = model
        self.values: dict[str, Value] = dict(inputs)
        self.failed: dict[str, NotRational] = {}  # quantities without a rational value, and why
        self._t: Optional[int] = None  # the period being computed (its index), inside a series
        self._series: Optional[dict[str, list]] = None  # every series' values, period by period

    def quantity(self, name: str) -> Value:
        if name in self.failed:
            raise self.failed[name]
        if name not in self.values and name not in self.model.quantities:
            raise NotRational(f"`{name}` is a question's answer, found in floating point")
        if name not in self.values:
            order = [name]  # the quantities it uses, evaluated first (no recursion along a chain)
            todo = [name]
            seen = {name}
            while todo:
                for d in self.model.quantities[todo.pop()].deps:
                    if d not in seen and d not in self.values and d in self.model.quantities:
                        seen.add(d)
                        order.append(d)
                        todo.append(d)
            for n in sorted(order, key=self.model.rank.__getitem__):
                if n not in self.values and not self.model.quantities[n].per_period:  # (series: _series)
                    try:
                        self.values[n] = self.expr(self.model.quantities[n].definition.expr)
                    except NotRational as err:
                        self.failed[n] = err
                        raise
        return self.values[name]

    def expr(self, e: ir.Expr, env: Optional[dict] = None) -> Value:
        env = env or {}
        t = type(e)
        if t is ir.Number:
            return e.value * (unit_of(e.unit, self.model.units).scale if e.unit is not None else 1)
        if t is ir.Bool:
            return e.value
        if t is ir.Name:
            if e.name in env:
                return env[e.name]
            q = self.model.quantities.get(e.name)
            if q is not None and q.per_period:
                if self._t is None:
                    raise NotRational("a series is no one value")
                return self.series()[e.name][self._t]
            return self.quantity(e.name)
        if t is ir.Neg:
            return -self._num(e.operand, env)
        if t is ir.Binary:
            a, b = self._num(e.left, env), self._num(e.right, env)
            op = e.op
            if op is ir.BinOp.ADD:
                return a + b
            if op is ir.BinOp.SUB:
                return a - b
            if op is ir.BinOp.MUL:
                return a * b
            if op is ir.BinOp.DIV:
                if b == 0:
                    raise NotRational("division by zero")
                return a / b
            if b.denominator != 1 or abs(b) > MAX_EXPONENT or (a == 0 and b < 0):
                raise NotRational("a power without a rational value")
            return a ** int(b)
        if t is ir.Compare:
            ops = [self.expr(o, env) for o in e.operands]
            for i, op in enumerate(e.ops):
                if op is ir.CmpOp.APPROX:  # within the written precision (planner.language.precision)
                    tol = approx_tolerance(e, i, self.model.units)
                    holds = ops[i] == ops[i + 1] if tol is None else abs(ops[i] - ops[i + 1]) <= tol
                else:
                    holds = _cmp(op, ops[i], ops[i + 1])
                if not holds:
                    return False
            return True
        if t is ir.Logic:
            a, b = self.expr(e.left, env), self.expr(e.right, env)
            return (a and b) if e.op is ir.BoolOp.AND else (a or b)
        if t is ir.Not:
            return not self.expr(e.operand, env)
        if t is ir.Call:
            return self._call(e, env)
        if t is ir.Series or t is ir.Period or t is ir.Previous or t is ir.Reduce or t is ir.At:
            return self._over_periods(e, env)
        if t is ir.PeriodTable and self._t is not None:
            return self.expr(e.items[min(self._t, len(e.items) - 1)], env)
        raise NotRational(type(e).__name__)

    # ---- series over periods: period by period, in rationals ------------------------------------
    def periods(self) -> tuple[Fraction, Fraction, int]:
        """The first period's value, the step and how many periods there are (exactly)."""
        from ..language.aggregates import Ranges

        values = self.model.periods.values
        start, end = self._num(values.items[0], {}), self._num(values.items[1], {})
        ranges = Ranges(self.model.quantities, self.model.functions, lambda u: unit_of(u, self.model.units))
        step = ranges.step(values, lambda x: self._num(x, {}) if x is not None else None).value
        count = (end - start) // step + 1
        return start, step, max(0, int(count))

    def series(self) -> dict[str, list]:
        """Every series' values, computed in period order (each period's in the plan's order: a series
        reads the same period of the ones before it and the period before of any)."""
        if self._series is None:
            _, _, n = self.periods()
            names = [q for q in self.model.order if self.model.quantities[q].per_period]
            table: dict[str, list] = {q: [] for q in names}
            self._series = table
            for t in range(n):
                self._t = t
                try:
                    for q in names:
                        table[q].append(self.expr(self.model.quantities[q].definition.expr))
                finally:
                    self._t = None
        return self._series

    def _over_periods(self, e, env) -> Value:
        t = type(e)
        if t is ir.Series:
            return self.expr(e.first if self._t == 0 or e.then is None else e.then, env)
        if t is ir.Period:
            start, step, _ = self.periods()
            return start + self._t * step
        if t is ir.Previous:
            if self._t == 0:
                if e.init is None:
                    raise NotRational("no period before the first")
                return self.expr(e.init, env)
            return self.series()[e.name][self._t - 1]
        if self._t is not None:
            raise NotRational("a reduction inside a series")
        _, _, n = self.periods()
        if t is ir.At:
            start, step, _ = self.periods()
            at = (self._num(e.when, env) - start) / step
            if at.denominator != 1 or not 0 <= at < n:
                raise NotRational("outside the periods")
            return self._at(e.series, env, int(at))
        pairs = []
        for i in range(n):
            cond = True if e.cond is None else self._at(e.cond, env, i)
            pairs.append((self._at(e.body, env, i), cond))
        if e.op == "count":
            return Fraction(sum(1 for v, c in pairs if (c if e.cond is not None else v) is True))
        kept = [v for v, c in pairs if c is True]
        if e.op == "sum":
            return sum(kept, Fraction(0))
        if not kept:
            raise NotRational("never: no period holds")
        if e.op == "mean":
            return sum(kept, Fraction(0)) / len(kept)
        if e.op == "min":
            return min(kept)
        if e.op == "max":
            return max(kept)
        return kept[-1] if e.op == "last" else kept[0]

    def _at(self, e: ir.Expr, env, i: int) -> Value:
        self.series()
        self._t = i
        try:
            return self.expr(e, env)
        finally:
            self._t = None

    def _num(self, e: ir.Expr, env) -> Fraction:
        v = self.expr(e, env)
        if isinstance(v, bool):
            raise NotRational("a condition used as a number")
        return v

    def _call(self, e: ir.Call, env) -> Value:
        f = self.model.functions.get(e.func)
        if f is not None:
            body, inner = ir.inline(f, e, lambda a: self.expr(a, env), self.expr)
            return self.expr(body, inner)
        f = FUNCTIONS[e.func]
        if f.lazy:  # only the branch taken
            cond = self.expr(e.args[0].value, env)
            return self.expr(e.args[1 if cond else 2].value, env)
        value = None
        if f.exact is not None:
            value = f.exact(*fill(f, [self._num(a.value, env) for a in e.args], Fraction))
        if value is None:
            raise NotRational(f"`{e.func}` has no rational value")
        return value


def constant(model, e: ir.Expr) -> Optional[Fraction]:
    """``e``'s exact value where it reads no input (a range's step or end written as a formula), else None."""
    try:
        v = ExactEvaluator(model, {}).expr(e)
    except (NotRational, KeyError):
        return None
    return v if isinstance(v, Fraction) else None


def _cmp(op: ir.CmpOp, a, b) -> bool:
    if op is ir.CmpOp.EQ:
        return a == b
    if op is ir.CmpOp.NE:
        return a != b
    if op is ir.CmpOp.LT:
        return a < b
    if op is ir.CmpOp.LE:
        return a <= b
    if op is ir.CmpOp.GT:
        return a > b
    return a >= b
