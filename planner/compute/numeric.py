"""The one numeric route: every figure planner computes comes from here.

A formula's IR is compiled into a :class:`Program`: a flat list of steps
over numbered registers, in the order the formula is written (``a + b - c``
adds ``a`` and ``b``, then subtracts ``c``), each quantity computed once and
read by every formula that uses it. A program is plain data (tuples of
strings, numbers and register numbers), so the compiled-plan cache stores it
as data, never as code. It runs on one of two runtimes
(:mod:`planner.compute.runtime`):

* numpy (:meth:`Program.__call__`): arrays for sweeps (every point at once),
  numpy scalars for one evaluation; 1/0 is inf and a domain error nan, which
  :mod:`planner.compute.diagnose` then locates;
* Python floats (:meth:`Program.scalar`), for one evaluation without
  importing numpy (its import is most of a small ``planner eval``). Where
  plain floats would raise or go on differently (1/0, a complex power, a nan
  that ``max`` would drop, an aggregate), the run gives up and the caller
  runs numpy; so every value and every error comes out as numpy gives it.

Nothing here asks SymPy: the exact route (:mod:`planner.compute.exact`) and
the symbolic one (:mod:`planner.compute.symbolic`, for closed forms,
derivatives and LaTeX) are separate, and agree with this one to 1e-12
relative (``tests/test_numeric.py``).

What a formula means here, operator by operator, is what the README says:
``^`` binds tighter than a leading minus; ``floor``/``ceil`` (and ``round``,
half away from zero) see their argument rounded to 15 significant digits, as
spreadsheets do; ``a ~= b`` holds within half a unit of the last written
digit of the literal on its right (else its left), wherever it is written;
``if`` takes one branch's value (both are computed, so a division by zero in
the other is no error); sums, products, maxima, minima and counts over a
range run their terms as a trailing array axis (``aggregate``).
"""

from __future__ import annotations

from fractions import Fraction

from ..language import ir
from ..language.aggregates import Ranges
from ..language.analysis import unit_of
from ..language.functions import FUNCTIONS, fill
from ..language.limits import deep
from ..language.model import Model
from ..language.precision import approx_tolerance, in_floats
from .runtime import Body, Program, ScanBody, step_reads as _reads

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Mapping, Optional, Sequence


_BINARY = {ir.BinOp.ADD: "+", ir.BinOp.SUB: "-", ir.BinOp.MUL: "*", ir.BinOp.DIV: "/", ir.BinOp.POW: "^"}
_COMPARE = {ir.CmpOp.EQ: "==", ir.CmpOp.NE: "!=", ir.CmpOp.LT: "<", ir.CmpOp.LE: "<=", ir.CmpOp.GT: ">",
            ir.CmpOp.GE: ">=", ir.CmpOp.APPROX: "=="}


def chain(e: ir.Binary) -> tuple[ir.Expr, list[ir.Binary]]:
    """A chain of ``+ -`` (or of ``*``) from ``e`` down its left side, found without recursing down it: its
    first operand and its links left to right (each link's ``op`` and ``right``). The symbolic route
    builds one node of a chain's terms from it."""
    links, node = [], e
    ops = (ir.BinOp.ADD, ir.BinOp.SUB) if e.op in (ir.BinOp.ADD, ir.BinOp.SUB) else (ir.BinOp.MUL,)
    while node.__class__ is ir.Binary and node.op in ops:
        links.append(node)
        node = node.left
    return node, links[::-1]


def call(f, args: list, scope: "Scope") -> int:
    """A built-in's call on registers: its step (over its arguments with the omitted ones filled in,
    a folding one pairwise)."""
    args = fill(f, args, lambda d: scope.const(float(d)))
    if f.fold:
        acc = args[0]
        for a in args[1:]:
            acc = scope.emit(f.step, acc, a)
        return acc
    return scope.emit(f.step, *args)


# ---- compiling ---------------------------------------------------------------------------------

class Scope:
    """Registers of one program (or aggregate body) while it is compiled."""

    def __init__(self, parent: Optional["Scope"]) -> None:
        self.parent = parent
        self.size = 0
        self.consts: dict = {}  # (type, repr of the value) -> register
        self.values: list = []  # (register, value) of each constant
        self.steps: list = []
        self.names: dict[str, int] = {}  # quantities and answers computed (or given) in this scope
        self.captures: dict[int, int] = {}  # outer register -> register here (bodies)

    def new(self) -> int:
        self.size += 1
        return self.size - 1

    def const(self, value) -> int:
        key = (value.__class__, repr(value))  # repr: 0.0 and -0.0 are two constants
        reg = self.consts.get(key)
        if reg is None:
            reg = self.consts[key] = self.new()
            self.values.append((reg, value))
        return reg

    def emit(self, op: str, *args) -> int:
        dst = self.new()
        self.steps.append((op, dst, args))
        return dst

    def capture(self, outer: int) -> int:
        """The register here that holds the outer scope's register ``outer``."""
        reg = self.captures.get(outer)
        if reg is None:
            reg = self.captures[outer] = self.new()
        return reg


class ScanScope(Scope):
    """Registers of one period of a run over the plan's periods (:class:`ScanBody`)."""

    def __init__(self, parent: Scope) -> None:
        super().__init__(parent)
        self.period = self.new()
        self.first = self.new()
        self.index = self.new()
        self.prev: dict[str, int] = {}  # a series -> the register of its value in the period before


_OVER = {"sum": "sum_over", "mean": "mean_over", "min": "min_over", "max": "max_over", "last": "last_over",
         "first": "first_over"}


class Compiler(ir.Visitor):
    """The IR of a plan's formulas to a :class:`Program`.

    ``arguments`` are the names the program takes (quantities, answers used in formulas, and names
    of ``extra`` values such as a check's scenario references); a quantity that is neither an
    argument nor compiled yet is compiled from its definition when a formula first uses it."""

    def __init__(self, model: Model, arguments: Sequence[str]) -> None:
        self.model = model
        self.top = Scope(None)
        for name in arguments:
            self.top.names[name] = self.top.new()
        self.arguments = list(arguments)
        self.ranges = Ranges(model.quantities, model.functions, lambda u: unit_of(u, model.units), model.answers)
        self.refs: Mapping[int, str] = {}  # id(ScenarioRef) -> the argument that holds its value
        self._scales: dict[int, Fraction] = {}
        self._aggregates = False
        self.stacked: dict[str, int] = {}  # a series -> the top register of its values, periods last
        self.masks: dict[int, int] = {}  # a stacked register -> the register of its run's own periods (bools)

    # -- outputs ----------------------------------------------------------------
    def output(self, name: str, expr: ir.Expr, env: Optional[Mapping[str, int]] = None) -> int:
        """Compile ``expr`` as the output ``name`` (an output named like a quantity is that quantity
        from here on); its register."""
        q = self.model.quantities.get(name)
        if q is not None and q.per_period and expr is q.definition.expr:  # a series: its values, periods last
            return self._per_period(name, self.top)
        if expr.__class__ is ir.Period:  # the periods themselves
            return self._stack([expr], self.top, {}, {})[0]
        reg = self.visit(expr, self.top, dict(env or {}), {})
        if name in self.model.quantities and name not in self.top.names:
            self.top.names[name] = reg
        return reg

    def program(self, outputs: Sequence[tuple[str, int]]) -> Program:
        """The program returning the registers of ``outputs`` ((name, register) pairs)."""
        scope = self.top
        consts = scope.values
        steps, results, size = allocate(scope.steps, consts, len(self.arguments),
                                         [reg for _, reg in outputs], scope.size)
        return Program(self.arguments, [n for n, _ in outputs], size, [(results[1][r], v) for r, v in consts],
                       steps, results[0], self._aggregates)

    # -- expressions ----------------------------------------------------------------
    def visit_Number(self, e: ir.Number, scope: Scope, env: dict, ranges_scope: dict) -> int:
        v = e.value
        if e.unit is not None:
            v = v * self._scale(e.unit)
        return scope.const(_float(v))

    def visit_Name(self, e: ir.Name, scope: Scope, env: dict, ranges_scope: dict) -> int:
        return self._name(e.name, scope, env)

    def visit_Bool(self, e: ir.Bool, scope: Scope, env: dict, ranges_scope: dict) -> int:
        return scope.const(bool(e.value))

    def visit_Binary(self, e: ir.Binary, scope: Scope, env: dict, ranges_scope: dict) -> int:
        if e.op is ir.BinOp.DIV or e.op is ir.BinOp.POW:
            return scope.emit(_BINARY[e.op], self.visit(e.left, scope, env, ranges_scope),
                              self.visit(e.right, scope, env, ranges_scope))
        first, links = chain(e)  # `a + b - c` left to right, as written
        acc = self.visit(first, scope, env, ranges_scope)
        for link in links:
            acc = scope.emit(_BINARY[link.op], acc, self.visit(link.right, scope, env, ranges_scope))
        return acc

    def visit_Neg(self, e: ir.Neg, scope: Scope, env: dict, ranges_scope: dict) -> int:
        return scope.emit("neg", self.visit(e.operand, scope, env, ranges_scope))

    def visit_Compare(self, e: ir.Compare, scope: Scope, env: dict, ranges_scope: dict) -> int:
        x = lambda node: self.visit(node, scope, env, ranges_scope)  # noqa: E731
        if any(o.__class__ is ir.Never for o in e.operands):
            return self._never_compare(e, scope, x)
        regs = [x(o) for o in e.operands]
        out = None
        for i, op in enumerate(e.ops):
            tol = approx_tolerance(e, i, self.model.units) if op is ir.CmpOp.APPROX else None
            if tol is not None:
                rel = scope.emit("approx", regs[i], regs[i + 1], scope.const(in_floats(tol)))
            else:
                rel = scope.emit(_COMPARE[op], regs[i], regs[i + 1])
            out = rel if out is None else scope.emit("and", out, rel)
        return out

    def visit_Logic(self, e: ir.Logic, scope: Scope, env: dict, ranges_scope: dict) -> int:
        return scope.emit("and" if e.op is ir.BoolOp.AND else "or", self.visit(e.left, scope, env, ranges_scope),
                          self.visit(e.right, scope, env, ranges_scope))

    def visit_Not(self, e: ir.Not, scope: Scope, env: dict, ranges_scope: dict) -> int:
        return scope.emit("not", self.visit(e.operand, scope, env, ranges_scope))

    def visit_PeriodTable(self, e: ir.PeriodTable, scope: Scope, env: dict, ranges_scope: dict) -> int:
        """The item of this period (the last after the list)."""
        items = [self.visit(i, scope, env, ranges_scope) for i in e.items]
        return scope.emit("by_period", self._in_scan(scope, lambda s: s.index), *items)

    def visit_Never(self, e: ir.Never, scope: Scope, env: dict, ranges_scope: dict) -> int:
        return scope.const(NEVER)

    def visit_ScenarioRef(self, e: ir.ScenarioRef, scope: Scope, env: dict, ranges_scope: dict) -> int:
        name = self.refs.get(id(e))
        if name is None:
            raise AssertionError("a scenario reference outside a check")
        return self._name(name, scope, env)

    def _name(self, name: str, scope: Scope, env: dict) -> int:
        if name in env:
            return env[name]
        q = self.model.quantities.get(name)
        if q is not None and q.per_period:
            return self._per_period(name, scope)
        if scope.parent is not None:  # a body: plan values come from outside, computed once
            return scope.capture(self._name(name, scope.parent, {}))
        reg = scope.names.get(name)
        if reg is None:
            q = self.model.quantities.get(name)
            if q is None or q.is_input:
                raise AssertionError(f"`{name}` is not an argument of this program")
            reg = self.visit(q.definition.expr, scope, {}, {})
            scope.names[name] = reg
        return reg

    # -- series over periods ------------------------------------------------------------------
    def _never_compare(self, e: ir.Compare, scope: Scope, x) -> int:
        """``x == never`` holds where ``x`` has no value (nan); ``!=`` where it has one."""
        out = None
        for i, op in enumerate(e.ops):
            a, b = e.operands[i], e.operands[i + 1]
            if a.__class__ is ir.Never or b.__class__ is ir.Never:
                other = b if a.__class__ is ir.Never else a
                rel = scope.const(True) if other.__class__ is ir.Never else scope.emit("isnan", x(other))
                if op is ir.CmpOp.NE:
                    rel = scope.emit("not", rel)
            else:
                rel = scope.emit(_COMPARE[op], x(a), x(b))
            out = rel if out is None else scope.emit("and", out, rel)
        return out

    def _in_scan(self, scope: Scope, fn) -> int:
        """``fn(scan)``'s register of the run over periods ``scope`` is in, seen from ``scope``."""
        if isinstance(scope, ScanScope):
            return fn(scope)
        if scope.parent is None:
            raise AssertionError("a value per period outside a run over the periods")
        return scope.capture(self._in_scan(scope.parent, fn))

    def _per_period(self, name: str, scope: Scope) -> int:
        """A series' value: in a run over periods, this period's; elsewhere the whole series."""
        if isinstance(scope, ScanScope):
            reg = scope.names.get(name)
            if reg is None:
                stacked = self.stacked.get(name) if scope.parent is self.top else None
                if stacked is not None:
                    reg = scope.emit("period_of", scope.capture(stacked), scope.index)
                else:
                    reg = self.visit(self.model.quantities[name].definition.expr, scope, {}, {})
                scope.names[name] = reg
            return reg
        s = scope.parent
        while s is not None and not isinstance(s, ScanScope):
            s = s.parent
        if s is not None:
            return scope.capture(self._per_period(name, scope.parent))
        if scope is self.top and name in self.stacked:
            return self.stacked[name]
        return self._stack([ir.Name(name, self.model.quantities[name].definition.name_span)], scope, {}, {})[0]

    def visit_Series(self, e: ir.Series, scope: Scope, env: dict, ranges_scope: dict) -> int:
        first = self.visit(e.first, scope, env, ranges_scope)
        if e.then is None:
            return first
        then = self.visit(e.then, scope, env, ranges_scope)
        return scope.emit("if", self._in_scan(scope, lambda s: s.first), first, then)

    def visit_Period(self, e: ir.Period, scope: Scope, env: dict, ranges_scope: dict) -> int:
        return self._in_scan(scope, lambda s: s.period)

    def visit_Previous(self, e: ir.Previous, scope: Scope, env: dict, ranges_scope: dict) -> int:
        def held(s: ScanScope) -> int:
            reg = s.prev.get(e.name)
            if reg is None:
                reg = s.prev[e.name] = s.new()
            return reg
        prev = self._in_scan(scope, held)
        if e.init is None:
            return prev
        first = self._in_scan(scope, lambda s: s.first)
        return scope.emit("if", first, self.visit(e.init, scope, env, ranges_scope), prev)

    def visit_At(self, e: ir.At, scope: Scope, env: dict, ranges_scope: dict) -> int:
        (stack,) = self._stack([e.series], scope, env, ranges_scope)
        start, _, step = self._period_range(scope)
        return scope.emit("at_period", stack, self.visit(e.when, scope, env, ranges_scope), start, scope.const(step))

    def visit_Reduce(self, e: ir.Reduce, scope: Scope, env: dict, ranges_scope: dict) -> int:
        if e.op == "count":
            (cond,) = self._stack([e.cond if e.cond is not None else e.body], scope, env, ranges_scope)
            return scope.emit("count_over", scope.emit("and", cond, self.masks[cond]))
        exprs = [e.body] if e.cond is None else [e.body, e.cond]
        stacks = self._stack(exprs, scope, env, ranges_scope)
        cond = self.masks[stacks[0]] if e.cond is None else scope.emit("and", stacks[1], self.masks[stacks[1]])
        return scope.emit(_OVER[e.op], stacks[0], cond)

    def _period_range(self, scope: Scope) -> tuple[int, int, float]:
        values = self.model.periods.values
        start = self.visit(values.items[0], scope, {}, {})
        end = self.visit(values.items[1], scope, {}, {})
        step = self.ranges.step(values, self._constant)
        return start, end, _float(step.value)

    def _stack(self, exprs: list, scope: Scope, env: dict, ranges_scope: dict) -> list[int]:
        """Registers of ``scope`` holding ``exprs`` per period (arrays, the periods their last axis):
        one run over the periods computes them all, each series it needs once, in period order.
        At the top, a series computed by a run is kept for every later use."""
        top = scope is self.top
        if top and all(isinstance(e, ir.Name) and e.name in self.stacked for e in exprs):
            return [self.stacked[e.name] for e in exprs]
        body = ScanScope(scope)
        inner_env = {n: body.capture(r) for n, r in env.items()}
        outs = [self.visit(e, body, inner_env, ranges_scope) for e in exprs]
        done: set[str] = set()
        while len(done) < len(body.prev):  # every series read in the period before is computed here too
            for name in [n for n in body.prev if n not in done]:
                done.add(name)
                self._per_period(name, body)
        state = [(body.prev[n], body.names[n]) for n in body.prev]
        kept = [n for n, r in body.names.items() if top and n not in self.stacked and
                n in self.model.quantities and self.model.quantities[n].per_period]
        results = outs + [body.names[n] for n in kept]
        start, end, step = self._period_range(scope)
        consts = body.values
        captured = list(body.captures.items())
        fixed = [body.period, body.first, body.index] + [held for held, _ in state] + [i for _, i in captured]
        steps, (regs, renumber), size = allocate(body.steps, consts, 0, results + [v for _, v in state], body.size,
                                                 fixed=fixed)
        self._aggregates = True
        run = scope.emit("scan", start, end, step,
                         ScanBody([(outer, renumber[inner]) for outer, inner in captured], renumber[body.period],
                                  renumber[body.first], renumber[body.index],
                                  [(renumber[held], renumber[v]) for held, v in state], size,
                                  [(renumber[r], v) for r, v in consts], steps, regs[:len(results)]))
        items = [scope.emit("item", run, k) for k in range(len(results))]
        mask = scope.emit("item", run, len(results))  # each point's own periods (its horizon may be shorter)
        for reg in items:
            self.masks[reg] = mask
        for name, reg in zip(kept, items[len(outs):]):
            self.stacked[name] = reg
        if top:
            for e, reg in zip(exprs, items):
                if isinstance(e, ir.Name) and e.name not in self.stacked:
                    self.stacked[e.name] = reg
        return items[:len(outs)]

    def _scale(self, unit: ir.UnitExpr) -> Fraction:
        got = self._scales.get(id(unit))
        if got is None:
            got = self._scales[id(unit)] = unit_of(unit, self.model.units).scale
        return got

    def visit_Call(self, e: ir.Call, scope: Scope, env: dict, ranges_scope: dict) -> int:
        f = self.model.functions.get(e.func)
        if f is not None:  # a user function: expanded inline (ir.inline), its parameters bound to registers
            _, inner_ranges = ir.inline(f, e, lambda a: (a, ranges_scope), lambda d, bound: (d, bound))
            body, inner = ir.inline(f, e, lambda a: self.visit(a, scope, env, ranges_scope),
                                    lambda d, bound: self.visit(d, scope, bound, {k: inner_ranges[k] for k in bound}))
            return self.visit(body, scope, inner, inner_ranges)
        args = [self.visit(a.value, scope, env, ranges_scope) for a in e.args]
        return call(FUNCTIONS[e.func], args, scope)

    def visit_Aggregate(self, e: ir.Aggregate, scope: Scope, env: dict, ranges_scope: dict) -> int:
        op = e.op
        if e.values.kind == "list" and op is ir.AggOp.FIRST:  # the first item where the condition holds
            items = [(self.visit(item, scope, env, ranges_scope), item) for item in e.values.items]
            acc = scope.const(NEVER)
            for value, item in reversed(items):
                inner_ranges = {**ranges_scope, e.var: (item, ranges_scope)}
                cond = self.visit(e.body, scope, {**env, e.var: value}, inner_ranges)
                acc = scope.emit("if", cond, value, acc)
            return acc
        if e.values.kind == "list":  # written out, term by term
            terms = []
            for item in e.values.items:
                value = self.visit(item, scope, env, ranges_scope)
                inner_ranges = {**ranges_scope, e.var: (item, ranges_scope)}
                term = self.visit(e.body, scope, {**env, e.var: value}, inner_ranges)
                if op is ir.AggOp.COUNT:
                    term = scope.emit("if", term, scope.const(1.0), scope.const(0.0))
                terms.append(term)
            combine = {ir.AggOp.SUM: "+", ir.AggOp.COUNT: "+", ir.AggOp.PRODUCT: "*",
                       ir.AggOp.MAX: "max", ir.AggOp.MIN: "min"}[op]
            acc = terms[0]
            for t in terms[1:]:
                acc = scope.emit(combine, acc, t)
            return acc
        # a range: the terms are the values start, start + step, ... up to end
        step = self.ranges.step(e.values, self._constant)
        cap = self.ranges.terms(e, ranges_scope, step.value)
        start = self.visit(e.values.items[0], scope, env, ranges_scope)
        end = self.visit(e.values.items[1], scope, env, ranges_scope)
        body = Scope(scope)
        var = body.new()
        inner_env = {n: body.capture(r) for n, r in env.items()}
        inner_env[e.var] = var
        inner_ranges = {**ranges_scope, e.var: self.ranges.var_interval(e, ranges_scope)}
        result = self.visit(e.body, body, inner_env, inner_ranges)
        if op is ir.AggOp.COUNT:
            result = body.emit("if", result, body.const(1.0), body.const(0.0))
        elif op is ir.AggOp.FIRST:  # the least value where the condition holds: the first, a range counting up
            result = body.emit("if", result, var, body.const(_INF))
        consts = body.values
        captured = list(body.captures.items())
        steps, (results, renumber), size = allocate(body.steps, consts, 0, [result], body.size,
                                                     fixed=[var] + [inner for _, inner in captured])
        kind = {ir.AggOp.COUNT: "sum", ir.AggOp.FIRST: "min"}.get(op, op.value)
        self._aggregates = True
        out = scope.emit("agg", kind, start, end, _float(step.value), cap,
                         Body([(outer, renumber[inner]) for outer, inner in captured], renumber[var], size,
                              [(renumber[r], v) for r, v in consts], steps, results[0]))
        if op is ir.AggOp.FIRST:  # none found (or an empty range): no value, which the evaluation calls never
            out = scope.emit("if", scope.emit("<", out, scope.const(_INF)), out, scope.const(NEVER))
        return out

    def _constant(self, e: ir.Expr) -> Optional[Fraction]:
        from .exact import constant

        return constant(self.model, e)


_INF = float("inf")
NEVER = float("nan")  # a `first` that found nothing (:func:`planner.compute.diagnose.diagnose` says so)


def _float(v):
    if v.__class__ is bool:
        return v
    try:
        return v.numerator / v.denominator if isinstance(v, Fraction) else float(v)  # correctly rounded
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def allocate(steps: list, consts: list, arguments: int, results: list, size: int, fixed: Sequence[int] = ()):
    """Registers renumbered so that a register whose value is dead is reused (a sweep's block holds
    an array per live register, not one per step): arguments, constants and ``fixed`` registers keep
    theirs for the whole run, ``results`` are live to the end. Returns (steps, (result registers,
    the renumbering), size)."""
    last: dict[int, int] = {}
    for i, (op, dst, args) in enumerate(steps):
        for r in _reads(op, args):
            last[r] = i
    end = len(steps)
    for r in results:
        last[r] = end
    keep = set(range(arguments)) | {r for r, _ in consts} | set(fixed)
    mapping: dict[int, int] = {}
    for r in sorted(keep):
        mapping[r] = len(mapping)
    free: list[int] = []
    top = len(mapping)
    out = []
    for i, (op, dst, args) in enumerate(steps):
        new_args = _renamed(op, args, mapping)
        for r in dict.fromkeys(_reads(op, args)):  # once each: `x * x` frees x's register once, not twice
            if last.get(r) == i and r not in keep and r in mapping:
                free.append(mapping[r])
        if free:
            reg = free.pop()
        else:
            reg, top = top, top + 1
        mapping[dst] = reg
        if dst not in last:  # never read (a dead step): its register is free again at once
            free.append(reg)
        out.append((op, reg, new_args))
    return out, ([mapping[r] for r in results], mapping), max(top, 1)


def _renamed(op: str, args: tuple, mapping: dict) -> tuple:
    if op == "scan":
        start, end, step, body = args
        body.captures = tuple((mapping[outer], inner) for outer, inner in body.captures)
        return (mapping[start], mapping[end], step, body)
    if op == "item":
        return (mapping[args[0]], args[1])
    if op == "subprogram":
        return (args[0],) + tuple(mapping[r] for r in args[1:])
    if op == "agg":
        kind, start, end, step, cap, body = args
        body.captures = tuple((mapping[outer], inner) for outer, inner in body.captures)
        return (kind, mapping[start], mapping[end], step, cap, body)
    return tuple(mapping[r] for r in args)


def compile_program(model: Model, arguments: Sequence[str], outputs: Sequence[tuple[str, ir.Expr]],
                    refs: Optional[Mapping[int, str]] = None) -> Program:
    """``outputs`` (name, IR expression), in order, as one program over ``arguments`` (names of
    quantities, answers and ``refs``' values). ``refs`` maps ``id`` of a check's
    :class:`ir.ScenarioRef` to the argument holding its value. On a thread with a big stack
    (:func:`planner.language.limits.deep`): formulas nest deep."""
    return deep(_compile, model, list(arguments), list(outputs), dict(refs or {}))


def _compile(model: Model, arguments: list, outputs: list, refs: dict) -> Program:
    c = Compiler(model, arguments)
    c.refs = refs
    regs = [(name, c.output(name, expr)) for name, expr in outputs]
    return c.program(regs)
