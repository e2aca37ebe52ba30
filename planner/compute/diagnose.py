"""Find *where* a formula broke when its compiled value is not finite.

Only runs after the compiled evaluation produced NaN or infinity: it walks
the quantity's IR with the values of the quantities it uses and reports the
innermost sub-expression that divides by zero, leaves a function's domain
or overflows, with that sub-expression's span.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Mapping, Optional

from ..language import ir
from ..language.aggregates import MAX_TERMS, Ranges
from ..language.analysis import unit_of
from ..language.errors import EvaluationError, Label, NeverError, PlanError
from ..language.functions import fill
from ..language.model import Model
from ..language.precision import in_floats
from .exact import COMPARE, Formula


class _Unseen(KeyError):
    """A series (a value per period): this walk cannot follow it."""


def _never_found(e: "ir.Reduce") -> NeverError:
    cond = (e.cond or e.body).span.flat
    return NeverError(f"never: `{cond}` holds in no period", e.span, label="found nothing",
                      hint=f"a formula or check that uses it has no value here; whether it ever holds: "
                           f"`count({cond}) > 0`")


class _Found(Exception):
    def __init__(self, error: EvaluationError) -> None:
        self.error = error


def diagnose(model: Model, name: str, values: Mapping[str, float], series: Optional[Mapping] = None,
             periods=None) -> EvaluationError:
    """Why ``name`` has no value; ``series`` (each series' values, one a period) and ``periods`` (their
    values), where given, let the walk read ``x at 3 month``, as ``irr(net)`` lists its flows."""
    q = model.quantities[name]
    if isinstance(q.definition.expr, ir.Reduce) and q.definition.expr.op == "first":
        return _never_found(q.definition.expr)
    try:
        result = _Eval(model, values, series, periods).visit(q.definition.expr, {})
    except _Unseen:
        return EvaluationError(f"`{name}` has no value: a series it uses has none in some period",
                               q.definition.expr.span, label="not a finite number",
                               hint="check the inputs the series depend on (a division by zero in one period?)")
    except _Found as found:
        err = found.error
        if err.span is not None and not (q.definition.span.start <= err.span.start < q.definition.span.end):
            err.labels.append(Label(q.definition.name_span, f"while evaluating `{name}`"))
        return err
    return EvaluationError(
        f"`{name}` evaluates to {result!r}", q.definition.expr.span,
        label="not a finite number", hint="check the inputs it depends on")


def diagnose_expr(model: Model, expr: ir.Expr, values: Mapping[str, float]) -> Optional[EvaluationError]:
    """The first sub-expression of ``expr`` (a check's condition) that is not finite, walking the
    IR as written: SymPy rewrites ``0 / z`` as 0, but with ``z = 0`` it is undefined. ``values``
    holds the quantities, question answers by name, and ``name@scenario`` references."""
    try:
        result = _Eval(model, values).visit(expr, {})
    except _Found as found:
        return found.error
    except KeyError:  # a name this walk cannot see: leave the verdict to the compiled values
        return None
    if isinstance(result, float) and not math.isfinite(result):
        return EvaluationError(f"`{expr.span.flat}` evaluates to {result!r}", expr.span, label="not a finite number")
    return None


def _fmt(x: float) -> str:
    return f"{x:.6g}"


class _Eval(Formula, ir.Visitor):
    number = staticmethod(float)
    tolerance = staticmethod(in_floats)  # ``a ~= b`` as the numeric route decides it

    def __init__(self, model: Model, values: Mapping[str, float], series: Optional[Mapping] = None,
                 periods=None) -> None:
        self.model = model
        self.values = values
        self.series = series or {}
        self.periods = periods
        self.ranges = Ranges(model.quantities, model.functions, lambda u: unit_of(u, model.units), model.answers)
        self._seen: set[str] = set()  # quantities without a value already looked into (:meth:`_never`)
        self._numbers: dict = {}  # each literal's float by its value and unit: a function's body is walked per call

    def visit_Number(self, e: ir.Number, env: dict):
        key = (e.value, None if e.unit is None else e.unit.text)
        v = self._numbers.get(key)
        if v is None:
            v = self._numbers[key] = Formula.visit_Number(self, e, env)
        return v

    def _fail(self, message: str, node, label: str = "", hint: Optional[str] = None):
        raise _Found(EvaluationError(message, node.span, label=label, hint=hint))

    def _never(self, name: str) -> None:
        """``name`` has no value: when it is a ``first`` that found nothing, say that (not "nan")."""
        q = self.model.quantities.get(name)
        if q is None or q.is_input or name in self._seen:
            return
        self._seen.add(name)  # each once: a diamond of nan quantities is walked once, not exponentially
        if isinstance(q.definition.expr, ir.Reduce) and q.definition.expr.op == "first":
            err = _never_found(q.definition.expr)
            err.notes.append(f"`{name}` is never, and a formula uses it")
            raise _Found(err)
        try:
            self.visit(q.definition.expr, {})
        except _Found as found:
            err = found.error
            if isinstance(err, NeverError):
                err.notes.append(f"`{name}` is never, and a formula uses it" if is_first(q.definition.expr)
                                 else f"through `{name}`")
                raise

    def visit_Name(self, e: ir.Name, env: dict):
        if e.name in env:
            return env[e.name]
        v = self.values[e.name]
        if v != v:  # nan: a `first` that found nothing says so
            self._never(e.name)
        q = self.model.quantities.get(e.name)  # else a question's answer
        return bool(v) if q is not None and q.is_bool else float(v)

    def visit_ScenarioRef(self, e: ir.ScenarioRef, env: dict):
        return self.values.get(f"{e.name}@{e.scenario}", float("nan"))

    def visit_Neg(self, e: ir.Neg, env: dict):
        return -self.visit(e.operand, env)

    def visit_Binary(self, e: ir.Binary, env: dict):
        a, b = self.visit(e.left, env), self.visit(e.right, env)
        try:
            if e.op is ir.BinOp.ADD:
                r = a + b
            elif e.op is ir.BinOp.SUB:
                r = a - b
            elif e.op is ir.BinOp.MUL:
                r = a * b
            elif e.op is ir.BinOp.DIV:
                if b == 0:
                    self._fail("division by zero", e.right, f"`{_text(e.right)}` is 0",
                               hint="check the inputs this divisor depends on")
                r = a / b
            else:
                if a == 0 and b < 0:
                    self._fail("division by zero (0 to a negative power)", e, f"`{_text(e.left)}` is 0")
                if a < 0 and b != int(b):
                    self._fail("domain error: a negative number to a fractional power", e,
                               f"`{_text(e.left)}` is {_fmt(a)}")
                r = a ** b
        except OverflowError:
            self._fail("overflow: the result is too large", e)
        if isinstance(r, float) and not math.isfinite(r):
            self._fail("overflow: the result is too large", e, f"gives {r}")
        return r

    def visit_Never(self, e: ir.Never, env: dict) -> float:
        return float("nan")

    def visit_Compare(self, e: ir.Compare, env: dict) -> bool:
        if not any(isinstance(o, ir.Never) for o in e.operands):
            return super().visit_Compare(e, env)
        ops = [float("nan") if isinstance(o, ir.Never) else self.values.get(o.name, float("nan"))
               if isinstance(o, ir.Name) else self.visit(o, env) for o in e.operands]
        return all((ops[i] != ops[i]) == (ops[i + 1] != ops[i + 1]) if op is ir.CmpOp.EQ else
                   (ops[i] != ops[i]) != (ops[i + 1] != ops[i + 1]) for i, op in enumerate(e.ops)
                   if isinstance(e.operands[i], ir.Never) or isinstance(e.operands[i + 1], ir.Never)) and \
            all(COMPARE[op](ops[i], ops[i + 1]) for i, op in enumerate(e.ops)
                if not (isinstance(e.operands[i], ir.Never) or isinstance(e.operands[i + 1], ir.Never)))

    def _unseen(self, e: ir.Expr, env: dict):
        raise _Unseen(e)  # a series: this walk sees one figure at a time; the compiled values decide

    visit_Reduce = visit_Series = visit_Period = visit_Previous = visit_PeriodTable = _unseen

    def _outside_the_periods(self, e: ir.At, env: dict) -> None:
        """``x at 13 month`` in a plan of 12 months (or ``at 2.5 month``): say which period it is not."""
        periods = self.model.periods
        try:
            when, start, end = (self.visit(x, env) for x in (e.when, *periods.values.items[:2]))
            step = self.ranges.step(periods.values, lambda x: None)
        except (_Unseen, KeyError, PlanError):
            return
        if not all(isinstance(v, float) and math.isfinite(v) for v in (when, start, end)) or step.value <= 0:
            return
        unit = step.unit
        say = lambda v: f"{_fmt(v / float(step.scale))}{' ' + unit if unit else ''}"  # noqa: E731
        last = start + math.floor((end - start) / float(step.value) + 1e-9) * float(step.value)
        k = (when - start) / float(step.value)
        if when < start - 1e-9 * abs(float(step.value)):
            why = f"is before the first period ({say(start)})"
        elif when > last + 1e-9 * abs(float(step.value)):
            why = f"is after the last period ({say(last)})"
        elif abs(k - round(k)) > 1e-9:
            why = "is not one of the plan's periods"
        else:
            return
        self._fail(f"`{_text(e.when)}` {why}", e.when, f"{say(when)}: no period",
                   hint=f"the plan's periods are `{periods.values.span.flat}`")

    def visit_At(self, e: ir.At, env: dict):
        self._outside_the_periods(e, env)
        row = self.series.get(e.series.name) if isinstance(e.series, ir.Name) else None
        if row is not None and self.periods is not None:
            when = self.visit(e.when, env)
            for at, v in zip(self.periods, row):
                if math.isclose(float(at), when, rel_tol=1e-9) and float(v) == float(v):
                    return float(v)  # the series' value there (`irr(net)` lists its flows so)
        raise _Unseen(e)  # a series without a value there: its own periods' walk says why

    def visit_Aggregate(self, e: ir.Aggregate, env: dict):
        """Term by term, so a broken term is named with the value of the variable there."""
        values = e.values
        what = e.op.value
        if values.kind == "list":
            items = [self.visit(i, env) for i in values.items]
            shown = [_fmt(v) if isinstance(i, ir.Number) else f"`{i.span.flat}` ({_fmt(v)})"
                     for i, v in zip(values.items, items)]
        else:
            st = self.ranges.step(values, lambda x: Fraction(self.visit(x, {})))
            step, unit = st.value, st.unit
            start, stop = self.visit(values.items[0], env), self.visit(values.items[1], env)
            if not (math.isfinite(start) and math.isfinite(stop)):
                bad = values.items[0] if not math.isfinite(start) else values.items[1]
                self._fail(f"the range of `{what}` has no {'start' if bad is values.items[0] else 'end'}", bad,
                           f"`{_text(bad)}` is {start if bad is values.items[0] else stop}")
            count = max(0, math.floor(round((stop - start) / float(step), 9)) + 1)
            if count > MAX_TERMS:
                self._fail(f"the range `{values.span.flat}` holds {count:,} values, more than its declared bounds "
                           "allow", values, hint="an input is outside its constraints")
            scale = float(st.scale)
            items = [start + i * float(step) for i in range(count)]
            shown = [_fmt(v / scale) + (f" {unit}" if unit else "") for v in items]
        if e.op is ir.AggOp.FIRST:
            return self._first(e, env, items, shown)
        if not items and e.op in (ir.AggOp.MIN, ir.AggOp.MAX):
            self._fail(f"`{what}` of an empty range: `{values.span.flat}` holds no value", values,
                       hint="the end of the range is below its start")
        out = []
        for v, label in zip(items, shown):
            try:
                out.append(self.visit(e.body, {**env, e.var: v}))
            except _Found as found:
                var = e.written_var
                found.error.notes.append(f"at {var} = {label}" if var else f"at the value {label}")
                raise
        if e.op is ir.AggOp.COUNT:
            return float(sum(1 for x in out if x))
        try:
            if e.op is ir.AggOp.SUM:
                r = math.fsum(out)
            elif e.op is ir.AggOp.PRODUCT:
                r = math.prod(out)
            else:
                r = (max if e.op is ir.AggOp.MAX else min)(out)
        except OverflowError:
            self._fail(f"overflow in `{what}`", e)
        if not math.isfinite(r):
            self._fail(f"overflow: the {what} is too large", e, f"gives {r}")
        return r

    def _first(self, e: ir.Aggregate, env: dict, items: list, shown: list):
        for v, label in zip(items, shown):
            try:
                if self.visit(e.body, {**env, e.var: v}):
                    return v
            except _Found as found:
                found.error.notes.append(f"at {e.var} = {label}")
                raise
        where = f"`{e.values.span.flat}`"
        raise _Found(NeverError(
            f"never: `{e.body.span.flat}` holds for no `{e.var}` in {where}", e.span,
            label="found nothing" if items else "an empty range",
            hint=f"a formula or check that uses it has no value here; whether it ever holds: "
                 f"`count({e.body.span.flat} for {e.var} in {e.values.span.flat}) > 0`"))

    def builtin(self, f, e: ir.Call, env: dict):
        args = [self.visit(a.value, env) for a in e.args]
        bad = f.domain(*args)
        if bad is not None:
            i, message = bad
            if i is None:
                self._fail(message, e)
            arg = e.args[i].value
            self._fail(message, arg, f"`{_text(arg)}` is {_fmt(args[i])}")
        values = fill(f, args, float)
        try:
            value = functools.reduce(f.floats, values) if f.fold else f.floats(*values)
        except (ArithmeticError, ValueError):
            value = None
        if value is None:
            self._fail(f"overflow in `{e.func}`", e)
        return value


def is_first(e: ir.Expr) -> bool:
    """Whether ``e`` is a ``first(...)`` (whose value may be "never")."""
    return (isinstance(e, ir.Aggregate) and e.op is ir.AggOp.FIRST) or (isinstance(e, ir.Reduce) and e.op == "first")


def _text(e: ir.Expr) -> str:
    return e.span.flat
