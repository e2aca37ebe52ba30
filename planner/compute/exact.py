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
                if n not in self.values:
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
            return env[e.name] if e.name in env else self.quantity(e.name)
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
        raise NotRational(type(e).__name__)

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
