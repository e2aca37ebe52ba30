"""Static types and dimensions of expressions.

Every expression is a number with a dimension (exponents over base
dimensions, see :mod:`planner.language.units`) or a boolean; constants also carry
their exact value. Adding bytes to seconds, comparing a rate with a time,
raising a quantity with units to a variable power, taking ``ln`` of bytes:
each is a located error naming both operands' units.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Callable, Iterable, Mapping, Optional

from . import ir, literals
from .functions import FUNCTIONS
from .errors import (
    ArityError,
    DisplayUnitError,
    ErrorSink,
    EvaluationError,
    KindError,
    Label,
    LimitError,
    ParseError,
    PlanError,
    RangeError,
    UnitError,
    UnknownNameError,
    UnknownUnitError,
    did_you_mean,
    suggest,
)
from .limits import MAX_EXACT_BITS
from .model import Type
from .source import Source, Span
from .units import DIMENSIONLESS, LIKELY, TIME, Dim, Unit, UnitTable, canonical_text

NUM = Type("num", DIMENSIONLESS)
BOOL = Type("bool")


def unit_of(expr: ir.UnitExpr, table: UnitTable, sink: ErrorSink | None = None,
            names: Iterable[str] = ()) -> Optional[Unit]:
    """Resolve a written unit (``TB/s``) against the unit table."""
    scale = Fraction(1)
    dim = DIMENSIONLESS
    for factor in expr.factors:
        unit = table.lookup(factor.name, factor.span.source)
        if unit is None:
            err = unknown_unit(factor, table, names)
            if sink is None:
                raise err
            sink.add(err)
            return None
        scale *= unit.scale ** factor.power
        dim = dim * unit.dim ** factor.power
    return Unit(scale, dim, expr.text)


_RATE = re.compile(r"([kKMGTP]?)([bB])ps")


def unknown_unit(factor: ir.UnitFactor, table: UnitTable, names: Iterable[str] = ()) -> PlanError:
    text = factor.span.source.text
    before = text[factor.span.start - 1:factor.span.start] if factor.span.start > 0 else ""
    if factor.name in ("e", "E") and (before.isdigit() or before == "."):
        number = re.search(r"[\d._]*$", text[:factor.span.start]).group()
        return ParseError(f"`{number}{factor.name}` is an incomplete number: the exponent has no digits",
                          Span(factor.span.source, factor.span.start - len(number), factor.span.end),
                          label="exponent missing", hint=f"write the exponent, as in `{number}{factor.name}9`")
    guess = suggest(factor.name, table.names())
    hint = LIKELY.get(factor.name) or did_you_mean(factor.name, guess)
    rate = _RATE.fullmatch(factor.name)
    if rate:
        prefix, b = rate.groups()
        hint = (f"`{factor.name}` is {'bits' if b == 'b' else 'bytes'} per second: write "
                f"`{prefix}{'bit' if b == 'b' else 'B'}/s`")
    if factor.name in set(names):
        # the literal before this factor: `2` in `2 layers`, `2 B` in `2 B*layers`
        before = re.search(r"(\d[\w.+-]*(?:[ \t]*[^\W\d]\S*?)?)[ \t]*[*·/]?[ \t]*$",
                           factor.span.source.text[:factor.span.start])
        literal = before.group(1) if before else "2"
        hint = f"`{factor.name}` is a quantity: write `{literal} * {factor.name}` (with spaces) to multiply"
    if factor.name.lower() in {"tflops", "gflops", "pflops", "flops"}:
        hint = "write FLOP/s for a rate (`1000 TFLOP/s`), FLOP for a count"
    return UnknownUnitError(
        f"unknown unit `{factor.name}`", factor.span, label="not a unit",
        hint=hint or "declare it with `unit NAME` (a new dimension) or `unit NAME = 1000 OTHER`; "
        "to multiply a number by a quantity, write `*`",
    )


def dim_text(t: Type) -> str:
    """A type for messages, in the user's own unit where it has one (`%/year`, `month`), else the base
    unit (`B/s`); `a plain number`, `true/false`."""
    if t.is_bool:
        return "true/false"
    if t.dim is None:
        return "0"
    if t.unit and not t.dim.dimensionless:
        return t.unit
    return canonical_text(t.dim) or "a plain number"


def _plain(t: Type) -> bool:
    return t.dim is not None and t.dim.dimensionless and not t.unit


def _rate_hint(other: ir.Expr, other_t: Type) -> Optional[str]:
    """`(1 + r)` with `r` in %/year: say how to make it a plain number."""
    if other_t.dim is None or other_t.dim.dimensionless:
        return None
    text = other.span.flat
    if other_t.dim == TIME ** -1:
        per = (other_t.unit or "").rpartition("/")[2] if other_t.unit and "/" in other_t.unit else "month"
        return (f"`{text}` is a rate per time ({dim_text(other_t)}): multiply it by a time to get a plain number, "
                f"as in `{text} * 1 {per}`")
    if other_t.dim == TIME:
        return f"`{text}` is a time ({dim_text(other_t)}): divide it by a unit to get a plain number, as in " \
               f"`{text} / 1 {other_t.unit or 's'}`"
    return None


class Typer(ir.Visitor):
    """Infers the :class:`Type` of IR expressions (a ``visit_<Node>`` each); user functions are typed
    at each call, with the argument types bound to their parameters."""

    def __init__(self, units: UnitTable, defs: Mapping[str, ir.Definition],
                 functions: Mapping[str, ir.FunctionDef], bind: Callable) -> None:
        self.units = units
        self.defs = defs
        self.functions = functions
        self.bind = bind
        self.saw_aggregate = False  # whether any aggregate was typed (else ranges need no check)
        self.period: Optional[Type] = None  # the type of `period` in a plan with periods
        self._series_first: dict[str, Type] = {}  # a series' type from its first value, for `previous`
        self._units_written: dict[str, Optional[str]] = {}  # name -> its `-> unit` or literal's unit (None: neither)
        self._calls: dict[tuple, Type] = {}  # a user function's type by its parameters' types (those typed)

    def type(self, e: ir.Expr, scope: dict[str, Type], lookup: Callable[[str], Optional[Type]]) -> Type:
        """The type of ``e``; ``scope`` holds function parameters, ``lookup``
        the types of the plan's quantities. Raises the first error."""
        return self._visits[e.__class__](self, e, scope, lookup)

    def visit_Name(self, e: ir.Name, scope, lookup) -> Type:
        name = e.name
        if name in scope:
            t = scope[name]
            return Type(t.kind, t.dim, None, t.unit)
        t = lookup(name)
        if t is None:
            if name in self.defs:
                raise Poisoned()  # its own error is already reported
            raise UnknownNameError(f"unknown name `{name}`", e.span)
        return Type(t.kind, t.dim, None, self._written(name, t))

    def visit_Number(self, e: ir.Number, scope, lookup) -> Type:
        value = e.value
        dim = None if value == 0 else DIMENSIONLESS
        if e.unit is not None:
            unit = unit_of(e.unit, self.units, names=self.defs)
            value, dim = value * unit.scale, unit.dim
        literals.check(value, e.span)
        return Type("num", dim, value, e.unit.text if e.unit is not None else None)

    def visit_Bool(self, e: ir.Bool, scope, lookup) -> Type:
        return BOOL

    def visit_ScenarioRef(self, e: ir.ScenarioRef, scope, lookup) -> Type:
        t = lookup(e.name)
        return Type(t.kind, t.dim, None, self._written(e.name, t))

    def visit_Neg(self, e: ir.Neg, scope, lookup) -> Type:
        t = self._num(e.operand, scope, lookup, "negate")
        return Type("num", t.dim, -t.const if t.const is not None else None, t.unit)

    def visit_Compare(self, e: ir.Compare, scope, lookup) -> Type:
        types = [self.type(o, scope, lookup) for o in e.operands]
        for i, op in enumerate(e.ops):
            a, b = types[i], types[i + 1]
            if (isinstance(e.operands[i], ir.Never) or isinstance(e.operands[i + 1], ir.Never)) \
                    and op not in (ir.CmpOp.EQ, ir.CmpOp.NE):
                raise KindError("`never` is not a number: compare with `==` or `!=`", e.op_spans[i],
                                hint="`check first_negative == never`, or `first_negative != never`")
            if a.is_bool or b.is_bool:
                if a.is_bool and b.is_bool and op in (ir.CmpOp.EQ, ir.CmpOp.NE):
                    continue
                raise KindError(f"cannot compare true/false with `{op.value}`", e.op_spans[i],
                                labels=[Label(e.operands[i].span, dim_text(a)),
                                        Label(e.operands[i + 1].span, dim_text(b))])
            if not same_dim(a, b):
                raise UnitError(
                    f"cannot compare {dim_text(a)} with {dim_text(b)}", e.op_spans[i],
                    labels=[Label(e.operands[i].span, dim_text(a)), Label(e.operands[i + 1].span, dim_text(b))],
                    hint=self._period_hint(e.operands[i:i + 2]) or "both sides of a comparison need the same "
                                                                     "dimension")
        return BOOL

    def visit_Logic(self, e: ir.Logic | ir.Not, scope, lookup) -> Type:
        for operand in ir.children(e):
            t = self.type(operand, scope, lookup)
            if not t.is_bool:
                word = "not" if isinstance(e, ir.Not) else e.op.value
                raise KindError(f"`{word}` needs true/false, got {dim_text(t)}", operand.span,
                                hint="compare it first, for example `x > 0`")
        return BOOL

    visit_Not = visit_Logic

    # ---- series over periods ------------------------------------------------------
    def visit_Never(self, e: ir.Never, scope, lookup) -> Type:
        return Type("num", None)

    def visit_Period(self, e: ir.Period, scope, lookup) -> Type:
        return self.period

    def visit_PeriodTable(self, e: ir.PeriodTable, scope, lookup) -> Type:
        return _alike(e.items, [self.type(i, scope, lookup) for i in e.items], "a period table",
                      "every period's value needs the same dimension: `[10 USD, 12 USD]`")

    def visit_Series(self, e: ir.Series, scope, lookup) -> Type:
        first = self.type(e.first, scope, lookup)
        self._series_first[e.name] = first
        if e.then is None:
            return Type(first.kind, first.dim, None, first.unit)
        then = self.type(e.then, scope, lookup)
        if first.is_bool != then.is_bool or (not first.is_bool and not same_dim(first, then)):
            raise UnitError(f"the series `{e.name}` starts as {dim_text(first)} but goes on as {dim_text(then)}",
                            e.then.span, label=dim_text(then), labels=[Label(e.first.span, dim_text(first))],
                            hint="its value in every period needs one dimension")
        dim = first.dim if first.dim is not None else then.dim
        return Type(first.kind, dim, None, first.unit or then.unit)

    def visit_Previous(self, e: ir.Previous, scope, lookup) -> Type:
        t = lookup(e.name) or self._series_first.get(e.name)
        if t is None and e.init is not None:
            t = self.type(e.init, scope, lookup)
        if t is None:
            d = self.defs.get(e.name)
            if d is None:
                raise UnknownNameError(f"unknown name `{e.name}`", e.name_span)
            expr = d.expr.first if isinstance(d.expr, ir.Series) else d.expr
            t = self._series_first[e.name] = self.type(expr, {}, lookup)
        if e.init is not None:
            i = self.type(e.init, scope, lookup)
            if i.is_bool != t.is_bool or (not t.is_bool and not same_dim(i, t)):
                raise UnitError(f"`{e.name}` is {dim_text(t)}, but its value before the first period is "
                                f"{dim_text(i)}", e.init.span, label=dim_text(i),
                                labels=[Label(e.name_span, dim_text(t))])
        return Type(t.kind, t.dim, None, t.unit)

    def visit_At(self, e: ir.At, scope, lookup) -> Type:
        t = self.type(e.series, scope, lookup)
        w = self._num(e.when, scope, lookup, "find the period of")
        if self.period is not None and not same_dim(w, self.period):
            n = e.when.span.flat.split()[0] if isinstance(e.when, ir.Number) else "36"
            unit = self.period.unit if not self.period.dim.dimensionless else None
            raise UnitError(f"`at` takes a period ({dim_text(self.period)}), not {dim_text(w)}", e.when.span,
                            label=dim_text(w), hint=f"write the period with its unit: `{e.series.span.flat} at "
                                                    f"{n} {unit}`" if unit else "write the period as a plain "
                                                    f"number: `{e.series.span.flat} at {n}`")
        return Type(t.kind, t.dim, None, t.unit)

    def at_precedence(self, expr: ir.Expr, error: PlanError, lookup) -> None:
        """``x at k * 1 month`` reads as ``(x at k) * 1 month`` (`at` takes one atom): when a unit error
        comes from a formula where the other reading is a period, point at the `at` and suggest parentheses."""
        if self.period is None or not isinstance(error, UnitError):
            return
        loose = lambda n: lookup(n) or (None if n in self.defs else Type("num", None, None, None))  # noqa: E731
        for b in ir.walk(expr):
            if not (isinstance(b, ir.Binary) and isinstance(b.left, ir.At) and b.op is not ir.BinOp.POW):
                continue
            try:
                w, r = self.type(b.left.when, {}, loose), self.type(b.right, {}, loose)
                alt = self.type(ir.Binary(b.op, b.left.when, b.right, b.span, b.op_span), {}, loose)
            except (PlanError, Poisoned):
                continue
            if self.period.dim in (w.dim, r.dim) and same_dim(alt, self.period):
                series, when, op, right = b.left.series.span.flat, b.left.when.span.flat, b.op.value, b.right.span.flat
                note, spans = f"`at` reads `{when}` alone", (b.span, b.left.span, b.left.when.span)
                if error.span in spans:
                    error.label = f"{error.label}; {note}" if error.label else note
                elif any(lab.span in spans for lab in error.labels):
                    error.labels = [Label(lab.span, f"{lab.text}; {note}") if lab.span in spans else lab
                                    for lab in error.labels]
                else:
                    error.labels.append(Label(b.left.span, note))
                error.hint = (f"`{b.span.flat}` reads as `({b.left.span.flat}) {op} {right}`; for the period "
                              f"`{when} {op} {right}`, write `{series} at ({when} {op} {right})`")
                return

    def visit_Reduce(self, e: ir.Reduce, scope, lookup) -> Type:
        body = self.type(e.body, scope, lookup)
        if e.cond is not None and not self.type(e.cond, scope, lookup).is_bool:
            raise KindError(f"`{e.op}(... where ...)` needs a condition after `where`", e.cond.span,
                            label="a number, not a condition", hint="compare it, as in `cash < 0 USD`")
        if e.op == "count":
            if e.cond is None and not body.is_bool:
                raise KindError("`count` counts the periods where a condition holds", e.body.span,
                                label="a number, not a condition",
                                hint=f"compare it, as in `count({e.body.span.flat} < 0)`")
            return NUM
        if e.op in ("first", "last"):
            return Type(body.kind, body.dim, None, body.unit)
        if body.is_bool:
            raise KindError(f"`{e.op}` needs numbers; this is a condition", e.body.span, label="true/false",
                            hint="count the periods where it holds with `count(...)`")
        return Type("num", body.dim, None, body.unit)

    def var_type(self, e: ir.Aggregate, scope, lookup) -> Type:
        """The type of an aggregate's variable: its list's values, or its range's ends."""
        v = e.values
        if v.kind == "list":
            return _alike(v.items, [self.type(i, scope, lookup) for i in v.items], "a list",
                          "every value of a list needs the same dimension", mixed="a list mixes true/false and numbers")
        start, stop = v.items[0], v.items[1]
        a = self._num(start, scope, lookup, "count from")
        b = self._num(stop, scope, lookup, "count to")
        if not same_dim(a, b):
            raise UnitError(f"a range from {dim_text(a)} to {dim_text(b)}", v.span,
                            labels=[Label(start.span, dim_text(a)), Label(stop.span, dim_text(b))],
                            hint="write both ends in the same dimension, such as `1 month..lifetime`")
        dim = a.dim if a.dim is not None else b.dim
        unit = a.unit or b.unit
        if v.kind == "step":
            by = v.items[2]
            s = self._num(by, scope, lookup, "step by")
            if s.const is None:
                raise KindError("the step of a range must be a constant, such as `1 month` or `0.5`", by.span,
                                label="not a constant")
            if s.const <= 0:
                raise RangeError("the step of a range must be positive", by.span,
                                 label=f"this is {float(s.const):g}",
                                 hint="a range counts up from its start: `1..n step 2`")
            if not same_dim(s, Type("num", dim)):
                raise UnitError(f"the range is in {dim_text(Type('num', dim, None, unit))} but its step is "
                                f"{dim_text(s)}", by.span, label=dim_text(s), labels=[Label(start.span, dim_text(a))])
            unit = a.unit or s.unit
        return Type("num", dim, None, unit)

    def visit_Aggregate(self, e: ir.Aggregate, scope, lookup) -> Type:
        self.saw_aggregate = True
        name = e.op.value
        var = self.var_type(e, scope, lookup)
        inner = dict(scope)
        inner[e.var] = var
        body = self.type(e.body, inner, lookup)
        if e.op is ir.AggOp.COUNT:
            if not body.is_bool:
                raise KindError("`count` counts where a condition holds", e.body.span,
                                label="a number, not a condition",
                                hint=f"compare it, as in `count({e.body.span.flat} > 0 for ...)`; "
                                     "to add the values up use `sum`")
            return NUM
        if e.op is ir.AggOp.FIRST:
            if not body.is_bool:
                raise KindError("`first` finds where a condition holds", e.body.span,
                                label="a number, not a condition",
                                hint=f"compare it, as in `first({e.var} for {e.var} in ... where "
                                     f"{e.body.span.flat} > 0)`")
            return var
        if body.is_bool:
            hint = "count where a condition holds with `count(...)`" if e.op is ir.AggOp.SUM else \
                "use `if(condition, a, b)` to turn a condition into numbers"
            raise KindError(f"`{name}` needs numbers; this is a condition", e.body.span, label="true/false",
                            hint=hint)
        if e.op is ir.AggOp.PRODUCT and body.dim is not None and not body.dim.dimensionless:
            if e.values.kind != "list":
                raise UnitError(f"a product over a range multiplies plain numbers, not {dim_text(body)}",
                                e.body.span, label=dim_text(body),
                                hint="divide by a unit first to make each factor a plain number")
            return Type("num", body.dim ** len(e.values.items))
        return Type("num", body.dim, None, body.unit if e.op is not ir.AggOp.PRODUCT else None)

    def _written(self, name: str, t: Type) -> Optional[str]:
        """The unit a quantity is shown in, as written: its `-> unit`, else its literal's unit."""
        written = self._units_written.get(name, _UNSEEN)
        if written is _UNSEEN:
            written = None
            d = self.defs.get(name)
            if d is not None:
                lit = d.expr.operand if isinstance(d.expr, ir.Neg) else d.expr
                if d.display is not None:
                    written = d.display.text
                elif isinstance(lit, ir.Number) and lit.unit is not None:
                    written = lit.unit.text
            self._units_written[name] = written
        return t.unit if written is None else written

    def _period_hint(self, pair) -> Optional[str]:
        """``period >= 6`` in a plan of months: the number in the periods' unit (``6 month``)."""
        n = _period_number(pair)
        if n is None or self.period is None or self.period.dim.dimensionless or not self.period.unit:
            return None
        return f"`period` counts in {self.period.unit}: `{n} {self.period.unit}`"

    def _num(self, e: ir.Expr, scope, lookup, what: str) -> Type:
        t = self.type(e, scope, lookup)
        if t.is_bool:
            raise KindError(f"cannot {what} true/false", e.span, label="this is a condition, not a number",
                            hint="use `if(condition, a, b)` to choose between numbers")
        return t

    def visit_Binary(self, e: ir.Binary, scope, lookup) -> Type:
        a = self.type(e.left, scope, lookup)
        if a.kind != "num":
            a = self._num(e.left, scope, lookup, _VERBS[e.op])  # raises: a condition is not a number
        b = self.type(e.right, scope, lookup)
        if b.kind != "num":
            b = self._num(e.right, scope, lookup, _VERBS[e.op])
        ca, cb = a.const, b.const
        if e.op in (ir.BinOp.ADD, ir.BinOp.SUB):
            if not same_dim(a, b):
                verb = "add" if e.op is ir.BinOp.ADD else "subtract"
                prep = "and" if e.op is ir.BinOp.ADD else "from"
                left, right = (a, b) if e.op is ir.BinOp.ADD else (b, a)
                hint = None
                if a.dim is not None and a.dim.dimensionless:
                    hint = _rate_hint(e.right, b)
                elif b.dim is not None and b.dim.dimensionless:
                    hint = _rate_hint(e.left, a)
                raise UnitError(
                    f"cannot {verb} {dim_text(left)} {prep} {dim_text(right)}", e.op_span,
                    labels=[Label(e.left.span, dim_text(a)), Label(e.right.span, dim_text(b))],
                    hint=hint or _same_dimension_hint(a, b))
            dim = a.dim if a.dim is not None else b.dim
            const = None
            if ca is not None and cb is not None:
                const = ca + cb if e.op is ir.BinOp.ADD else ca - cb
            unit = a.unit if a.unit == b.unit or b.dim is None else (b.unit if a.dim is None else None)
            return Type("num", dim, const, unit)
        if e.op is ir.BinOp.MUL:
            dim = None if a.dim is None or b.dim is None else a.dim * b.dim
            unit = b.unit if _plain(a) else (a.unit if _plain(b) else None)
            return Type("num", dim, ca * cb if ca is not None and cb is not None else None, unit)
        if e.op is ir.BinOp.DIV:
            dim = None if a.dim is None else (a.dim if b.dim is None else a.dim / b.dim)
            const = ca / cb if ca is not None and cb not in (None, 0) else None
            return Type("num", dim, const, a.unit if _plain(b) else None)
        # power
        if b.dim is not None and not b.dim.dimensionless:
            hint = f"divide it by its unit to get a plain number, as in `{e.right.span.flat} / 1 {b.unit}`" \
                if b.unit else "divide it by a unit to get a plain number"
            raise UnitError(f"an exponent must be a plain number, not {dim_text(b)}", e.right.span,
                            label=dim_text(b), hint=hint)
        if a.dim is not None and not a.dim.dimensionless:
            if cb is None:
                raise UnitError(
                    f"a quantity in {dim_text(a)} can only be raised to a constant power", e.right.span,
                    labels=[Label(e.left.span, dim_text(a))], label="not a constant",
                    hint="divide by a unit first to make the base a plain number")
            dim = a.dim ** cb
        else:
            dim = a.dim
        const = None
        if ca is not None and cb is not None:
            _exact_power(e, ca, cb)
        if ca is not None and cb is not None and cb.denominator == 1 and abs(cb) <= 64 and not (ca == 0 and cb < 0):
            const = ca ** int(cb)
        return Type("num", dim, const)

    def visit_Call(self, e: ir.Call, scope, lookup) -> Type:
        if e.func in self.functions:
            f = self.functions[e.func]
            bound = self.bind(f, e, report=False)
            if bound is None:
                raise ArityError(f"bad call to `{f.name}`", e.span)
            body, inner = ir.inline(f, e, lambda a: self.type(a, scope, lookup),
                                    lambda d, params: self.type(d, params, lookup))
            key = (f.name, tuple((n, t.kind, t.dim, t.const, t.unit) for n, t in inner.items()))
            got = self._calls.get(key)  # (a call of a call of ... types each body once per argument types)
            if got is not None:
                return got
            try:
                t = self.type(body, inner, lookup)
            except PlanError as err:
                if err.span is not None and err.span.source is f.span.source and f.span.start <= err.span.start < f.span.end:
                    err.labels.append(Label(e.span, f"in this call of `{f.name}`"))
                raise
            if f.display is not None:
                unit = unit_of(f.display, self.units)
                if not t.is_bool and not same_dim(t, Type("num", unit.dim)):
                    raise DisplayUnitError(f"`{f.name}` returns {dim_text(t)}, not {canonical_text(unit.dim) or 'a plain number'}",
                                           f.display.span, labels=[Label(e.span, "called here")])
            got = self._calls[key] = Type(t.kind, t.dim)
            return got
        return FUNCTIONS[e.func].dims(_Checker(self, scope, lookup), e, [a.value for a in e.args])


class _Checker:
    """What a built-in's dimension rule (:mod:`planner.language.functions`) asks of the typer."""

    NUM = NUM

    def __init__(self, typer: Typer, scope, lookup) -> None:
        self.typer, self.scope, self.lookup = typer, scope, lookup

    def num(self, arg: ir.Expr, fn: str) -> Type:
        return self.typer._num(arg, self.scope, self.lookup, f"pass to `{fn}`")

    @staticmethod
    def type(kind: str, dim, unit: Optional[str] = None) -> Type:
        return Type(kind, dim, None, unit)

    @staticmethod
    def plain(arg: ir.Expr, t: Type, fn: str) -> None:
        if t.dim is not None and not t.dim.dimensionless:
            hint = "divide by a unit to get a plain number, for example `floor(x / 1 GB)`"
            raise UnitError(f"`{fn}` needs a plain number, got {dim_text(t)}", arg.span, label=dim_text(t),
                            hint=hint)

    @staticmethod
    def same(fn: str, e: ir.Call, args: list, types: list) -> Type:
        first = types[0]
        for arg, t in zip(args[1:], types[1:]):
            if not same_dim(first, t):
                raise UnitError(f"`{fn}` of {dim_text(first)} and {dim_text(t)}", e.span,
                                labels=[Label(args[0].span, dim_text(first)), Label(arg.span, dim_text(t))],
                                hint="all arguments need the same dimension")
            if first.dim is None:
                first = t
        return Type("num", next((t.dim for t in types if t.dim is not None), None), None,
                    next((t.unit for t in types if t.unit), None))

    def branches(self, e: ir.Call, args: list) -> Type:
        typer, scope, lookup = self.typer, self.scope, self.lookup
        cond = typer.type(args[0], scope, lookup)
        if not cond.is_bool:
            raise KindError(f"the condition of `if` must be true/false, got {dim_text(cond)}", args[0].span,
                            hint="compare it, for example `x > 0`")
        a = typer.type(args[1], scope, lookup)
        b = typer.type(args[2], scope, lookup)
        if a.kind != b.kind or (not a.is_bool and not same_dim(a, b)):
            raise UnitError(f"the branches of `if` differ: {dim_text(a)} and {dim_text(b)}", e.span,
                            labels=[Label(args[1].span, dim_text(a)), Label(args[2].span, dim_text(b))])
        return Type(a.kind, a.dim if a.dim is not None else b.dim, None, a.unit or b.unit)


def _alike(items, types: list[Type], what: str, hint: str, mixed: Optional[str] = None) -> Type:
    """The common type of the values of a list or a period table; a located error at the first value that
    differs from those before it (``mixed``: the message for true/false among numbers, a kind error)."""
    first, first_item = types[0], items[0]
    for item, t in zip(items[1:], types[1:]):
        labels = [Label(first_item.span, dim_text(first))]
        if t.is_bool != first.is_bool and mixed is not None:
            raise KindError(mixed, item.span, labels=labels, label=dim_text(t))
        if t.is_bool != first.is_bool or (not t.is_bool and not same_dim(first, t)):
            raise UnitError(f"the values of {what} differ: {dim_text(first)} and {dim_text(t)}", item.span,
                            label=dim_text(t), labels=labels, hint=hint)
        if first.dim is None:
            first, first_item = t, item
    return Type(first.kind, first.dim, None, first.unit)


def _exact_power(e: ir.Binary, base: Fraction, exponent: Fraction) -> None:
    """A power of two constants is computed exactly (SymPy): refuse one whose value is beyond
    double precision, or whose exact digits would take unbounded time (``1.0000001 ^ 100000000``)."""
    if base == 0 or base == 1 or exponent == 0:
        return
    log10 = float(exponent) * math.log10(abs(base))
    if log10 > 300:  # (a tiny result is fine: it is 0 in floating point, as the README says)
        size = f"about 1e{log10:.0f}" if log10 < 1e15 else "astronomically large"
        raise EvaluationError(
            f"`{e.span.flat}` is {size}: too large for double-precision arithmetic",
            e.span, label="beyond 1e300", hint=literals.HINT)
    bits = abs(exponent.numerator) * max(base.numerator.bit_length(), base.denominator.bit_length())
    if bits > MAX_EXACT_BITS:
        raise LimitError(
            f"`{e.span.flat}` would take {bits:,} bits to compute exactly (the limit is {MAX_EXACT_BITS:,})",
            e.span, label="an exact power of constants",
            hint="make the base an input (`rate = " + e.left.span.flat + "`, then `rate ^ " + e.right.span.flat
                 + "`): inputs are computed in floating point")


_UNSEEN = object()
_VERBS = {ir.BinOp.ADD: "add", ir.BinOp.SUB: "subtract", ir.BinOp.MUL: "multiply", ir.BinOp.DIV: "divide",
          ir.BinOp.POW: "raise"}


class Poisoned(Exception):
    """A name whose own definition already failed: skip, do not re-report."""


def same_dim(a: Type, b: Type) -> bool:
    return a.dim is None or b.dim is None or a.dim == b.dim


def _period_number(pair) -> Optional[str]:
    """``period >= 6`` (or ``6 <= period``): the plain number's text."""
    for p, n in (pair, pair[::-1]):
        if isinstance(p, ir.Period) and isinstance(n, ir.Number) and n.unit is None:
            return n.span.flat
    return None


def _same_dimension_hint(a: Type, b: Type) -> str:
    """What to do about adding two dimensions, in the operands' own terms: where one is the other times a
    unit (GB and GB/s), the factor that converts it; else a likely slip (a missing factor, a parenthesis)."""
    if a.dim is not None and b.dim is not None and not a.dim.dimensionless and not b.dim.dimensionless:
        for big, small in ((a, b), (b, a)):
            ratio = canonical_text(big.dim / small.dim)
            if ratio and not any(c in ratio for c in "/*^ "):
                per = (small.unit or "").rpartition("/")[2]
                if big.dim / small.dim == TIME and "/" in (small.unit or "") and per.isidentifier():
                    ratio = per  # `5 USD/month` beside USD: a month, in the plan's own unit (not seconds)
                return (f"both operands need the same dimension: multiply the {dim_text(small)} operand by a "
                        f"quantity in {ratio} (`... * 1 {ratio}`)")
    return ("both operands need the same dimension: look for a missing factor or a misplaced parenthesis "
            "in the formula")


def example_unit(dim: Dim) -> str:
    examples = {"B": "GB", "s": "ms", "B/s": "TB/s", "1/s": "TFLOP/s", "B/token": "B/token"}
    text = canonical_text(dim)
    return examples.get(text, text)


def unit_named(dim: Dim, scale: Fraction, table: "UnitTable", written: str | None = None,
               prefer: "Iterable[Unit]" = ()) -> str:
    """The text of a unit of ``dim`` that is ``scale`` base units (a cell's figure that is no quantity's,
    a row of terms): ``written`` where it is that unit (the unit the plan writes the figure in), else one
    of ``prefer`` (the units the plan shows its figures in: ``kUSD/van``), a unit the plan declares or a
    built-in (``kUSD``, ``month``), else the base unit's text after the factor (``2628000 s``); "" for a
    plain number."""
    if written:
        from .lower import unit_from_text

        try:
            unit = unit_of(unit_from_text(written, Source("unit", written), 0), table)
        except PlanError:
            unit = None
        if unit is not None and unit.dim == dim and unit.scale == scale:
            return written
    if dim.dimensionless and scale == 1:
        return ""
    declared = [table.units[n] for n in table.declared if n in table.units]
    for u in (*prefer, *declared, *table.units.values()):
        if u.text and u.dim == dim and u.scale == scale:
            return u.text
    factor = str(scale.numerator) if scale.denominator == 1 else f"{float(scale):.15g}"
    return canonical_text(dim) if scale == 1 else f"{factor} {canonical_text(dim)}".strip()
