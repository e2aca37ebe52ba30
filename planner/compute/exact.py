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

import operator
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


COMPARE = {ir.CmpOp.EQ: operator.eq, ir.CmpOp.NE: operator.ne, ir.CmpOp.LT: operator.lt, ir.CmpOp.LE: operator.le,
           ir.CmpOp.GT: operator.gt, ir.CmpOp.GE: operator.ge}


class Formula:
    """What a walk that evaluates a formula straight from the IR does the same way, exactly
    (:class:`ExactEvaluator`) or in floats (:mod:`planner.compute.diagnose`): a literal in base units,
    ``and``, ``or``, ``not``, a comparison chain, the branch an ``if`` takes and a user function's body.
    A walk mixes it into an :class:`~planner.language.ir.Visitor` and gives ``number`` (a literal's
    value), ``tolerance`` (an ``~=``'s, as it compares) and ``builtin`` (a built-in's value)."""

    model: Model

    def visit_Number(self, e: ir.Number, env: dict):
        return self.number(e.value * (unit_of(e.unit, self.model.units).scale if e.unit is not None else 1))

    def visit_Bool(self, e: ir.Bool, env: dict) -> bool:
        return e.value

    def visit_Compare(self, e: ir.Compare, env: dict) -> bool:
        ops = [self.visit(o, env) for o in e.operands]
        for i, op in enumerate(e.ops):
            if op is ir.CmpOp.APPROX:  # within the written precision (planner.language.precision)
                tol = approx_tolerance(e, i, self.model.units)
                holds = ops[i] == ops[i + 1] if tol is None else abs(ops[i] - ops[i + 1]) <= self.tolerance(tol)
            else:
                holds = COMPARE[op](ops[i], ops[i + 1])
            if not holds:
                return False
        return True

    def visit_Logic(self, e: ir.Logic, env: dict):
        a, b = self.visit(e.left, env), self.visit(e.right, env)
        return (a and b) if e.op is ir.BoolOp.AND else (a or b)

    def visit_Not(self, e: ir.Not, env: dict) -> bool:
        return not self.visit(e.operand, env)

    def visit_Call(self, e: ir.Call, env: dict):
        f = self.model.functions.get(e.func)
        if f is not None:
            body, inner = ir.inline(f, e, lambda a: self.visit(a, env), self.visit)
            return self.visit(body, inner)
        f = FUNCTIONS[e.func]
        if f.lazy:  # only the branch taken
            cond = self.visit(e.args[0].value, env)
            return self.visit(e.args[1 if cond else 2].value, env)
        return self.builtin(f, e, env)


class ExactEvaluator(Formula, ir.Visitor):
    number = staticmethod(Fraction)
    tolerance = staticmethod(Fraction)

    def __init__(self, model: Model, inputs: Mapping[str, Value]) -> None:
        self.model = model
        self.values: dict[str, Value] = dict(inputs)
        self.failed: dict[str, NotRational] = {}  # quantities without a rational value, and why
        self._t: Optional[int] = None  # the period being computed (its index), inside a series
        self._series: Optional[dict[str, list]] = None  # the series' values computed, period by period
        self._periods: Optional[tuple[Fraction, Fraction, int]] = None

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
        return self.visit(e, env or {})

    def visit_Name(self, e: ir.Name, env: dict) -> Value:
        if e.name in env:
            return env[e.name]
        q = self.model.quantities.get(e.name)
        if q is not None and q.per_period:
            if self._t is None:
                raise NotRational("a series is no one value")
            return self.series(e.name)[e.name][self._t]
        return self.quantity(e.name)

    def visit_Neg(self, e: ir.Neg, env: dict) -> Fraction:
        return -self._num(e.operand, env)

    def visit_Binary(self, e: ir.Binary, env: dict) -> Fraction:
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

    def visit_PeriodTable(self, e: ir.PeriodTable, env: dict) -> Value:
        if self._t is None:
            raise NotRational("PeriodTable")
        return self.visit(e.items[min(self._t, len(e.items) - 1)], env)

    def visit_other(self, e: ir.Expr, env: dict) -> Value:
        raise NotRational(type(e).__name__)

    # ---- series over periods: period by period, in rationals ------------------------------------
    def periods(self) -> tuple[Fraction, Fraction, int]:
        """The first period's value, the step and how many periods there are (exactly)."""
        if self._periods is None:
            self._periods = self._count_periods()
        return self._periods

    def _count_periods(self) -> tuple[Fraction, Fraction, int]:
        from ..language.aggregates import Ranges

        values = self.model.periods.values
        start, end = self._num(values.items[0], {}), self._num(values.items[1], {})
        ranges = Ranges(self.model.quantities, self.model.functions, lambda u: unit_of(u, self.model.units))
        step = ranges.step(values, lambda x: self._num(x, {}) if x is not None else None).value
        count = (end - start) // step + 1
        return start, step, max(0, int(count))

    def series(self, need: Optional[str] = None) -> dict[str, list]:
        """Series' values, computed in period order (each period's in the plan's order: a series reads the
        same period of the ones before it and the period before of any): ``need`` and the series it reads,
        directly or through ``previous`` (every series where None), the others when something reads them."""
        if self._series is None:
            self._series = {}
        if need not in self._series:
            wanted = None if need is None else self._reads(need)
            self._fill([q for q in self.model.order if self.model.quantities[q].per_period
                        and q not in self._series and (wanted is None or q in wanted)])
        return self._series

    def _reads(self, name: str) -> set[str]:
        """``name`` and every quantity it reads, directly or not, a ``previous(x)``'s ``x`` too."""
        seen, todo = {name}, [name]
        while todo:
            q = self.model.quantities[todo.pop()]
            for n in (*q.deps, *(p.name for p in ir.walk(q.definition.expr) if isinstance(p, ir.Previous))):
                if n not in seen and n in self.model.quantities:
                    seen.add(n)
                    todo.append(n)
        return seen

    def _fill(self, names: list[str]) -> None:
        """The series ``names`` computed period by period (none of them kept where one fails)."""
        _, _, n = self.periods()
        table: dict[str, list] = {q: [] for q in names}
        self._series.update(table)
        t = self._t
        try:
            for self._t in range(n):
                for q in names:
                    table[q].append(self.expr(self.model.quantities[q].definition.expr))
        except BaseException:
            for q in names:
                del self._series[q]
            raise
        finally:
            self._t = t

    def visit_Series(self, e: ir.Series, env: dict) -> Value:
        return self.visit(e.first if self._t == 0 or e.then is None else e.then, env)

    def visit_Period(self, e: ir.Period, env: dict) -> Fraction:
        start, step, _ = self.periods()
        return start + self._t * step

    def visit_Previous(self, e: ir.Previous, env: dict) -> Value:
        if self._t == 0:
            if e.init is None:
                raise NotRational("no period before the first")
            return self.visit(e.init, env)
        return self.series(e.name)[e.name][self._t - 1]

    def visit_At(self, e: ir.At, env: dict) -> Value:
        if self._t is not None:
            raise NotRational("a reduction inside a series")
        start, step, n = self.periods()
        at = (self._num(e.when, env) - start) / step
        if at.denominator != 1 or not 0 <= at < n:
            raise NotRational("outside the periods")
        return self._at(e.series, env, int(at))

    def visit_Reduce(self, e: ir.Reduce, env: dict) -> Value:
        if self._t is not None:
            raise NotRational("a reduction inside a series")
        _, _, n = self.periods()
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

    def builtin(self, f, e: ir.Call, env: dict) -> Value:
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
