"""IR to SymPy, by construction (never by parsing strings).

Each quantity gets its own expression over the symbols of the quantities
it uses directly; the graph composes them. Values are in base units, so a
literal ``3.0 TB/s`` becomes the exact rational 3000000000000. User
functions are expanded inline. Booleans referenced by name become
``Eq(symbol, 1)`` (their values are 0/1 or numpy booleans).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

import sympy as sp
from sympy.concrete.expr_with_intlimits import ExprWithIntLimits

from ..language import ir
from ..language.aggregates import Ranges
from ..language.functions import FUNCTIONS, MAX_EXACT_EXPONENT, fill
from ..language.analysis import unit_of
from ..language.graph import cone  # noqa: F401  (re-exported: the graph walk lives with the graph)
from ..language.model import Model
from ..language.precision import approx_tolerance
from .numeric import chain

_REL = {
    ir.CmpOp.EQ: sp.Eq, ir.CmpOp.NE: sp.Ne, ir.CmpOp.LT: sp.Lt,
    ir.CmpOp.LE: sp.Le, ir.CmpOp.GT: sp.Gt, ir.CmpOp.GE: sp.Ge,
}


def rational(value: Fraction) -> sp.Rational:
    return sp.Rational(value.numerator, value.denominator)


class SymbolTable:
    """One SymPy symbol per quantity, created from the name (never sympified)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.symbols: dict[str, sp.Symbol] = {}
        self.names: dict[sp.Symbol, str] = {}
        for name in model.quantities:
            sym = sp.Symbol(name, real=True)
            self.symbols[name] = sym
            self.names[sym] = name
        # question answers used as quantities (`solve ... as NAME`): symbols of their own, kept apart
        # from the quantities' (their values come from the questions, not from formulas)
        self.answers: dict[str, sp.Symbol] = {name: sp.Symbol(name, real=True) for name in model.answers}
        self.answer_names: dict[sp.Symbol, str] = {sym: name for name, sym in self.answers.items()}

    def all(self) -> dict[str, sp.Symbol]:
        """Quantities' and answers' symbols by name."""
        return {**self.symbols, **self.answers}

    def __getitem__(self, name: str) -> sp.Symbol:
        return self.symbols[name]


# ---- aggregates -------------------------------------------------------------------

class Index(sp.Dummy):
    """The variable of a sum (product, max, min) over a range: an integer counting steps.

    ``terms`` is the most values its range can hold, from the declared bounds of the inputs its ends
    use (:mod:`planner.language.aggregates`): the compiled evaluation and the workbook size their
    terms with it. ``unit``/``step``: the range variable is ``index * step`` (or ``start + index * step``)
    in base units, shown in ``unit``. Printed by its own name (``m``, not SymPy's ``_m``)."""

    def __new__(cls, name: str, terms: int, unit: str = "", scale: Fraction = Fraction(1)):
        obj = super().__new__(cls, name, integer=True)
        obj.terms = terms
        obj.unit = unit
        obj.scale = scale
        obj.value = obj  # the range variable in base units, set by the converter (k * step, start + k * step)
        return obj

    def _sympystr(self, printer) -> str:
        return self.name


def loose_index(expr: sp.Basic) -> Optional[str]:
    """The name of a range's variable that ``expr`` holds outside the sum (product, max, min) that binds
    it, or None. SymPy's folding of an ``if`` whose condition holds a sum over an ``if`` of its variable
    (``if(sum(if(k > b, k, 0) for k in 1..10) > 20, ...)``, through ``ExprCondPair``) pulls the inner
    condition out of the sum: ``Piecewise((2*x, k > b), ...)``, a wrong formula."""
    return next((s.name for s in sorted(expr.free_symbols, key=str) if isinstance(s, Index)), None)


def loose_note(name: str) -> str:
    return (f"no closed form: SymPy's folding took the range variable `{name}` out of the sum (or max, min, "
            "product) that binds it, which would be a wrong formula")


class _Scoped:
    """Aggregates that keep their inner aggregates whole. SymPy's ``ExprWithLimits`` folds every
    ``Piecewise`` that uses its variable up to the top of its body (``piecewise_fold``), through the
    sums inside it too: ``min(sum(if(k > m - term, ...) for k in 1..m) for m in ...)`` became
    ``Piecewise((Sum(...), k > m - term), ...)``, ``k`` outside the sum that binds it (a wrong value,
    and an export error). The aggregates inside the body are masked while SymPy builds the node."""

    def __new__(cls, function, *symbols, **assumptions):
        function = sp.sympify(function)
        core = function
        while type(core) is cls:  # SymPy merges nested sums into one node: their bodies are the body
            core = core.function
        reps, todo = {}, [core] if core.has(sp.Piecewise) else []  # no Piecewise: nothing to fold
        while todo:
            node = todo.pop()
            if isinstance(node, AGGREGATES):
                reps.setdefault(node, sp.Dummy("aggregate"))
            elif node.args:
                todo.extend(node.args)
        if not reps:
            return super().__new__(cls, function, *symbols, **assumptions)
        obj = super().__new__(cls, function.xreplace(reps), *symbols, **assumptions)
        back = {v: k for k, v in reps.items()}
        if not isinstance(obj, cls):
            return obj.xreplace(back)
        obj._args = (obj.function.xreplace(back),) + obj._args[1:]  # a node just made: nothing holds its hash
        obj._mhash = None
        return obj

    def _eval_evalf(self, prec):
        """Its value where it is a number (no free symbols, at most 10,000 terms), written out: SymPy's
        ``Max``/``Min`` refuse a number they cannot compare (``max(sum(k for k in 1..3), n)``)."""
        if self.free_symbols or not all(lo.is_Integer and hi.is_Integer and hi - lo < 10_000
                                        for _, lo, hi in self.limits):
            return None
        done = self.doit()
        return None if done.has(*AGGREGATES) else done._eval_evalf(prec)


class Sum(_Scoped, sp.Sum):
    """``sum(...)`` over a range: SymPy's ``Sum`` with its inner aggregates kept whole (:class:`_Scoped`)."""

    __slots__ = ()


class Product(_Scoped, sp.Product):
    """``product(...)`` over a range (:class:`_Scoped`)."""

    __slots__ = ()


class _RangeExtreme(_Scoped, ExprWithIntLimits):
    """``max``/``min`` of a body over an integer range (SymPy has ``Max``/``Min`` of listed arguments only)."""

    __slots__ = ()
    _symbol = ""
    _pick = sp.Max

    def doit(self, **hints):
        (k, lo, hi), = self.limits
        body = self.function.doit(**hints) if hints.get("deep", True) else self.function
        if lo.is_Integer and hi.is_Integer and 0 <= hi - lo < 10_000:
            return self._pick(*[body.xreplace({k: sp.Integer(i)}) for i in range(int(lo), int(hi) + 1)])
        return self.func(body, (k, lo, hi))

    def _sympystr(self, printer) -> str:
        (k, lo, hi), = self.limits
        return f"{self._symbol}({printer._print(self.function)} for {printer._print(k)} in " \
               f"{printer._print(lo)}..{printer._print(hi)})"


class RangeMax(_RangeExtreme):
    __slots__ = ()
    _symbol = "max"
    _pick = sp.Max


class RangeMin(_RangeExtreme):
    __slots__ = ()
    _symbol = "min"
    _pick = sp.Min


class Never(sp.AtomicExpr):
    """No value: a ``first(...)`` that found nothing. Numbers are nan; the workbook writes ``NA()``."""

    is_number = True
    is_finite = False

    def _sympystr(self, printer) -> str:
        return "never"



class RangeFirst(_RangeExtreme):
    """``first(m for m in a..b where c)``: the least value of ``Piecewise((m, c), (oo, True))`` over the
    range, with none (:class:`Never`) where the condition holds nowhere. Written out term by term
    (:meth:`doit`), the first value whose condition holds."""

    __slots__ = ()
    _symbol = "first"
    _pick = sp.Min

    def _pair(self) -> tuple:
        """The value and the condition (SymPy folds ``Piecewise((m, true), (oo, true))`` to ``m``)."""
        f = self.function
        if isinstance(f, sp.Piecewise) and len(f.args) == 2:
            return f.args[0]
        return (self.limits[0][0], sp.false) if f == sp.oo else (f, sp.true)

    def doit(self, **hints):
        (k, lo, hi), = self.limits
        value, cond = self._pair()
        if lo.is_Integer and hi.is_Integer and 0 <= hi - lo < 10_000:
            pieces = [(value.xreplace({k: sp.Integer(i)}), cond.xreplace({k: sp.Integer(i)}))
                      for i in range(int(lo), int(hi) + 1)]
            pieces = [(v, c) for v, c in pieces if c is not sp.false]
            return sp.Piecewise(*pieces, (Never(), True))
        return self

    def _sympystr(self, printer) -> str:
        (k, lo, hi), = self.limits
        value, cond = self._pair()
        return f"first({printer._print(value)} for {printer._print(k)} in {printer._print(lo)}..{printer._print(hi)}" \
               f" where {printer._print(cond)})"


AGGREGATES = (sp.Sum, sp.Product, RangeMax, RangeMin, RangeFirst)  # SymPy nodes of aggregates over ranges


def closed_forms(expr: sp.Basic) -> sp.Basic:
    """``expr`` with each sum or product over a range in closed form where SymPy finds one (geometric
    and polynomial sums: ``Sum(q**m, (m, 1, n))`` is ``(q - q**(n + 1))/(1 - q)``), for solving. A sum
    whose body branches (``if``, ``max``, ``floor``) is left as it is."""
    if not expr.has(sp.Sum, sp.Product):
        return expr

    def simple(node) -> bool:
        return not node.function.has(sp.Piecewise, sp.Max, sp.Min, sp.floor, sp.ceiling, sp.Abs, sp.sign,
                                     RangeMax, RangeMin, RangeFirst)

    return expr.replace(lambda n: isinstance(n, (sp.Sum, sp.Product)) and simple(n),
                        lambda n: n.doit(deep=False))


def expand_aggregates(expr: sp.Basic) -> sp.Basic:
    """``expr`` with every aggregate whose range is known (numbers at both ends) written out term by
    term, so it can be evaluated exactly."""
    if not expr.has(*AGGREGATES):
        return expr
    return expr.replace(lambda n: isinstance(n, AGGREGATES) and all(x.is_Number for x in n.limits[0][1:]),
                        lambda n: n.doit())


class Converter(ir.Visitor):
    def __init__(self, model: Model, symbols: SymbolTable) -> None:
        self.model = model
        self.symbols = symbols
        self.exprs: dict[str, sp.Basic] = {}  # quantities converted so far (for integer ends of ranges)
        self.ranges = Ranges(model.quantities, model.functions, lambda u: unit_of(u, model.units), model.answers)

    def expr(self, e: ir.Expr, env: Optional[Mapping[str, sp.Basic]] = None,
             ref: Optional[Callable[[ir.ScenarioRef], sp.Basic]] = None) -> sp.Basic:
        return self.visit(e, env or {}, ref, {})

    def _ref_name(self, name: str) -> sp.Basic:
        sym = self.symbols[name]
        if self.model.quantities[name].is_bool:
            return sp.Eq(sym, 1)
        return sym

    def visit_Number(self, e: ir.Number, env, ref, scope) -> sp.Basic:
        value = e.value
        if e.unit is not None:
            value *= unit_of(e.unit, self.model.units).scale
        return rational(value)

    def visit_Bool(self, e: ir.Bool, env, ref, scope) -> sp.Basic:
        return sp.true if e.value else sp.false

    def visit_Name(self, e: ir.Name, env, ref, scope) -> sp.Basic:
        if e.name in env:
            return env[e.name]
        if e.name not in self.model.quantities and e.name in self.symbols.answers:
            return self.symbols.answers[e.name]
        return self._ref_name(e.name)

    def visit_ScenarioRef(self, e: ir.ScenarioRef, env, ref, scope) -> sp.Basic:
        if ref is None:
            raise AssertionError("scenario reference outside a check")
        return ref(e)

    def visit_Neg(self, e: ir.Neg, env, ref, scope) -> sp.Basic:
        return -self.visit(e.operand, env, ref, scope)

    def visit_Binary(self, e: ir.Binary, env, ref, scope) -> sp.Basic:
        c = lambda x: self.visit(x, env, ref, scope)  # noqa: E731
        # The constructors the operators end in, called directly: the same trees, about
        # twice as fast to build (no sympify or operator dispatch), which counts for big plans.
        if e.op in (ir.BinOp.ADD, ir.BinOp.SUB):
            # `a + b - c + ...` as one Add of all its terms: built pairwise, SymPy
            # would flatten and sort ever longer sums (quadratic in the number of terms).
            first, links = chain(e)
            return sp.Add(c(first), *[c(x.right) if x.op is ir.BinOp.ADD else -c(x.right) for x in links])
        if e.op is ir.BinOp.MUL:
            first, links = chain(e)
            return sp.Mul(c(first), *[c(x.right) for x in links])
        a, b = c(e.left), c(e.right)
        if e.op is ir.BinOp.DIV:
            if isinstance(b, sp.Rational) and b != 0:
                return sp.Mul(a, sp.Rational(b.q, b.p))
            return sp.Mul(a, sp.Pow(b, sp.S.NegativeOne))
        return _power(a, b)

    def visit_Compare(self, e: ir.Compare, env, ref, scope) -> sp.Basic:
        ops = [self.visit(o, env, ref, scope) for o in e.operands]
        rels = [self._approx(e, i, ops[i], ops[i + 1]) if op is ir.CmpOp.APPROX else _REL[op](ops[i], ops[i + 1])
                for i, op in enumerate(e.ops)]
        return rels[0] if len(rels) == 1 else sp.And(*rels)

    def visit_Logic(self, e: ir.Logic, env, ref, scope) -> sp.Basic:
        return (sp.And if e.op is ir.BoolOp.AND else sp.Or)(self.visit(e.left, env, ref, scope),
                                                            self.visit(e.right, env, ref, scope))

    def visit_Not(self, e: ir.Not, env, ref, scope) -> sp.Basic:
        return sp.Not(self.visit(e.operand, env, ref, scope))

    def _series(self, e: ir.Expr, env, ref, scope) -> sp.Basic:
        names = [n.name for n in ir.walk(e) if isinstance(n, ir.Name)]
        names += [n.name for n in ir.walk(e) if isinstance(n, ir.Previous)]
        return series_opaque(self.model, "series", names, e)

    visit_Series = visit_Period = visit_Previous = visit_Reduce = visit_At = visit_Never = visit_PeriodTable = _series

    def _approx(self, e: ir.Compare, i: int, a: sp.Basic, b: sp.Basic) -> sp.Basic:
        """``a ~= b``: within half a unit of the last written digit (:mod:`planner.language.precision`)."""
        tol = approx_tolerance(e, i, self.model.units)
        return sp.Eq(a, b) if tol is None else sp.Le(sp.Abs(a - b), rational(tol))

    def visit_Aggregate(self, e: ir.Aggregate, env, ref, scope) -> sp.Basic:
        """A list is written out (``sum([q, k])`` is ``q + k``); a range becomes ``Sum``, ``Product``,
        :class:`RangeMax` or :class:`RangeMin` over an :class:`Index` (``count`` sums 1 where its
        condition holds)."""
        values = e.values
        op = e.op
        if values.kind == "list" and op is ir.AggOp.FIRST:
            pieces = []
            for item in values.items:
                value = self.visit(item, env, ref, scope)
                cond = self.visit(e.body, {**env, e.var: value}, ref, {**scope, e.var: (item, scope)})
                if cond is not sp.false:
                    pieces.append((value, cond))
            return sp.Piecewise(*pieces, (Never(), True))
        if values.kind == "list":
            terms = []
            for item in values.items:
                inner_env = {**env, e.var: self.visit(item, env, ref, scope)}
                terms.append(self.visit(e.body, inner_env, ref, {**scope, e.var: (item, scope)}))
            if op is ir.AggOp.SUM:
                return sp.Add(*terms)
            if op is ir.AggOp.PRODUCT:
                return sp.Mul(*terms)
            if op is ir.AggOp.COUNT:
                return sp.Add(*[_indicator(t) for t in terms])
            return (sp.Max if op is ir.AggOp.MAX else sp.Min)(*terms)
        step = self.ranges.step(values, self._constant)
        n = self.ranges.terms(e, scope, step.value)
        a = self.visit(values.items[0], env, ref, scope)
        b = self.visit(values.items[1], env, ref, scope)
        s = rational(step.value)
        k = Index(e.written_var or "i", n, step.unit, step.scale)
        if self.integral(a / s):  # m = k * step, k from start/step: `1..n`, `1 month..lifetime`
            lo, var = a / s, k * s
            hi = b / s if self.integral(b / s) else sp.floor(b / s)
        else:  # m = start + k * step, k from 0
            lo, var = sp.Integer(0), a + k * s
            hi = (b - a) / s if self.integral((b - a) / s) else sp.floor((b - a) / s)
        k.value = var
        inner_scope = {**scope, e.var: self.ranges.var_interval(e, scope)}
        body = self.visit(e.body, {**env, e.var: var}, ref, inner_scope)
        if op is ir.AggOp.COUNT:
            body = _indicator(body)
        elif op is ir.AggOp.FIRST:
            body = sp.Piecewise((var, body), (sp.oo, True), evaluate=False)  # kept whole for RangeFirst
        cls = {ir.AggOp.SUM: Sum, ir.AggOp.COUNT: Sum, ir.AggOp.PRODUCT: Product,
               ir.AggOp.MAX: RangeMax, ir.AggOp.MIN: RangeMin, ir.AggOp.FIRST: RangeFirst}[op]
        return cls(body, (k, lo, hi))

    def _constant(self, e: ir.Expr) -> Optional[Fraction]:
        v = self.visit(e, {}, None, {})
        return Fraction(int(v.p), int(v.q)) if isinstance(v, sp.Rational) else None

    def integral(self, e: sp.Basic) -> bool:
        """Whether ``e`` is an integer for every admissible value of the inputs it uses: integer
        inputs (in their display unit), ranges' indices, floors and ceilings, combined with integer
        coefficients. Then a range ends exactly at ``e`` (else at its floor)."""
        e = sp.sympify(e)
        if e.is_Integer:
            return True
        if e.is_Number:
            return False
        for _ in range(64):  # derived quantities are replaced by their formulas, a level at a time
            mapping = {}
            for sym in e.free_symbols:
                name = self.symbols.names.get(sym)
                if isinstance(sym, sp.Dummy) and sym.is_integer:  # an index, or an integer input's count
                    continue
                if name is None:
                    return False
                q = self.model.quantities[name]
                if q.is_input:
                    if not q.integer or q.is_bool:
                        return False
                    mapping[sym] = rational(q.display.scale) * sp.Dummy(name, integer=True)
                elif name in self.exprs:
                    mapping[sym] = self.exprs[name]
                else:
                    return False
            if not mapping:
                break
            e = e.xreplace(mapping)
        steps = {n: sp.Dummy("step", integer=True) for n in sp.preorder_traversal(e)
                 if isinstance(n, (sp.floor, sp.ceiling))}
        e = e.xreplace(steps) if steps else e
        gens = [g for g in e.free_symbols if g.is_integer]
        if len(gens) != len(e.free_symbols):
            return False
        try:
            poly = sp.Poly(sp.expand(e), *gens) if gens else None
        except sp.PolynomialError:
            return False
        if poly is None:
            return bool(e.is_Integer)
        return all(c.is_Integer for c in poly.coeffs())

    def visit_Call(self, e: ir.Call, env, ref, scope) -> sp.Basic:
        c = lambda x: self.visit(x, env, ref, scope)  # noqa: E731
        f = self.model.functions.get(e.func)
        if f is not None:  # a user function: expanded inline (ir.inline)
            _, inner_scope = ir.inline(f, e, lambda a: (a, scope), lambda d, bound: (d, bound))
            body, inner = ir.inline(f, e, c, lambda d, bound: self.visit(d, bound, ref,
                                                                          {k: inner_scope[k] for k in bound}))
            return self.visit(body, inner, ref, inner_scope)
        f = FUNCTIONS[e.func]
        args = fill(f, [c(a.value) for a in e.args], sp.Integer)
        return opaque(f)(*args) if f.opaque else f.sympy(sp, args)


_OPAQUE: dict = {}


def opaque(f) -> type:
    """The SymPy function of a built-in kept as one node (so the workbook writes Excel's own function
    for it): its value, its derivative and its rewriting as a formula come from the record's
    ``expand``; ``record`` names it for the printers and :func:`program`."""
    cls = _OPAQUE.get(f.name)
    if cls is None:
        def formula(self):
            return f.expand(sp, list(self.args)) if f.expand is not None else self

        def fdiff(self, argindex=1):
            if f.expand is None:
                return f.derivative(sp, self, list(self.args), argindex - 1)
            dummies = [sp.Dummy(real=True) for _ in self.args]
            d = sp.diff(f.expand(sp, dummies), dummies[argindex - 1])
            return d.xreplace(dict(zip(dummies, self.args)))

        def _eval_evalf(self, prec):
            if not all(a.is_number for a in self.args):
                return None
            if f.expand is not None:
                return formula(self)._eval_evalf(prec)
            try:  # no formula (irr): its float value
                return sp.Float(f.floats(*[float(a) for a in self.args]), precision=prec)
            except (ArithmeticError, ValueError):
                return None

        def eval(cls, *args):  # a call whose formula is 0 is 0 (a solve's closed form takes it apart)
            return sp.S.Zero if f.expand is not None and f.expand(sp, list(args)).is_zero else None

        cls = _OPAQUE[f.name] = type(f.name, (sp.Function,), {
            **({} if f.variadic else {"nargs": len(f.params)}), "record": f, "formula": formula, "fdiff": fdiff, "eval": classmethod(eval),
            "_eval_evalf": _eval_evalf, "_eval_rewrite_as_Piecewise": lambda self, *a, **k: formula(self),
            "_eval_is_real": lambda self: True if all(a.is_real for a in self.args) else None})
    return cls


def _indicator(cond: sp.Basic) -> sp.Basic:
    """1 where ``cond`` holds, else 0 (what ``count`` adds up)."""
    if cond is sp.true:
        return sp.Integer(1)
    if cond is sp.false:
        return sp.Integer(0)
    return sp.Piecewise((sp.Integer(1), cond), (sp.Integer(0), True))




def _power(a: sp.Basic, b: sp.Basic) -> sp.Basic:
    """``a ^ b``; a constant base to a huge constant exponent in floating point, not exactly:
    SymPy would compute ``sqrt(2) ^ 1000000000`` as the 150,514,998-digit integer 2^500000000.
    (Powers of two literals are bounded earlier, in the analysis.)"""
    if b.is_Number and abs(b) > MAX_EXACT_EXPONENT and a.is_number and not isinstance(a, sp.Rational):
        return sp.Pow(a.evalf(), b)
    return sp.Pow(a, b)


# ---- numbers from SymPy trees ------------------------------------------------------------------
# Questions that work on SymPy expressions (a solve's closed form and the function it brackets, the
# workbook's cached values of the formulas it writes) compute them on the numeric route's runtime:
# the tree becomes a :class:`planner.compute.numeric.Program`, run on numpy or floats like any other.

_FUNCTIONS = {sp.Abs: "abs", sp.floor: "floor", sp.ceiling: "ceil", sp.exp: "exp", sp.log: "ln"}
_RELATIONS = {sp.Eq: "==", sp.Ne: "!=", sp.Lt: "<", sp.Le: "<=", sp.Gt: ">", sp.Ge: ">="}
_FOLDS = {sp.Max: "max", sp.Min: "min", sp.And: "and", sp.Or: "or"}
_AGGREGATES = {sp.Sum: "sum", Sum: "sum", sp.Product: "product", Product: "product"}
UNSIZED_TERMS = 1_000_000  # terms of a range whose variable carries no size (none the converter makes)


def program(inputs: Sequence[sp.Symbol], outputs: Sequence[sp.Basic]):
    """``outputs`` (SymPy expressions over the symbols ``inputs``) as one program taking the values
    of ``inputs`` in order. Raises ``NotImplementedError`` on a node it has no step for."""
    from ..language.limits import deep

    return deep(_program, list(inputs), list(outputs))


def _program(inputs: list, outputs: list):
    from .numeric import Program, Scope, allocate

    top = Scope(None)
    top.env = {sym: top.new() for sym in inputs}
    walker = _Walker()
    results = [walker.p(e, top) for e in outputs]
    steps, (regs, renumber), size = allocate(top.steps, top.values, len(inputs), results, top.size)
    return Program([str(s) for s in inputs], [f"out{i}" for i in range(len(outputs))], size,
                   [(renumber[r], v) for r, v in top.values], steps, regs, walker.aggregates)


class _Walker:
    def __init__(self) -> None:
        self.aggregates = False
        self.memo: dict = {}  # (scope, subtree) -> its register: each common subtree computed once
        self.scopes: list = []  # kept alive while their ids key the memo

    def p(self, e: sp.Basic, scope) -> int:
        key = (id(scope), e)
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._p(e, scope)
        return got

    def _p(self, e: sp.Basic, scope) -> int:
        x = lambda a: self.p(a, scope)  # noqa: E731
        if e.is_Symbol:
            return _lookup(e, scope)
        if isinstance(e, Never):
            return scope.const(float("nan"))
        if e is sp.true or e is sp.false:
            return scope.const(bool(e))
        if e is sp.nan or e is sp.zoo:  # zoo (a division by zero SymPy kept: `x / 0`) is no Number
            return scope.const(float("nan"))
        if e.is_Number or e in (sp.E, sp.pi):
            if isinstance(e, sp.Rational):
                try:
                    return scope.const(e.p / e.q)
                except OverflowError:
                    return scope.const(float("inf") if e > 0 else float("-inf"))
            return scope.const(float(e))
        t = type(e)
        if t is sp.Add:
            acc = None
            for a in e.args:
                coeff, rest = a.as_coeff_Mul()
                if acc is not None and isinstance(coeff, sp.Rational) and coeff.p < 0:
                    acc = scope.emit("-", acc, x(rest if coeff == -1 else sp.Mul(-coeff, rest)))
                else:
                    acc = x(a) if acc is None else scope.emit("+", acc, x(a))
            return acc
        if t is sp.Mul:
            num, den = [], []
            for a in e.args:
                if isinstance(a, sp.Pow) and a.exp.is_Number and a.exp < 0:
                    den.append(a.base if a.exp == -1 else sp.Pow(a.base, -a.exp, evaluate=False))
                elif isinstance(a, sp.Rational) and not isinstance(a, sp.Integer) and a.p in (1, -1):
                    num.append(sp.Integer(a.p))
                    den.append(sp.Integer(a.q))
                else:
                    num.append(a)
            negate = len(num) > 1 and num[0] == -1
            if negate:
                num = num[1:]
            acc = None
            for a in num:
                acc = x(a) if acc is None else scope.emit("*", acc, x(a))
            if acc is None:
                acc = scope.const(1.0)
            if den:
                d = None
                for a in den:
                    d = x(a) if d is None else scope.emit("*", d, x(a))
                acc = scope.emit("/", acc, d)
            return scope.emit("neg", acc) if negate else acc
        if t is sp.Pow:
            base, exp = e.args
            if exp == sp.S.Half:
                return scope.emit("sqrt", x(base))
            if exp == -1:
                return scope.emit("/", scope.const(1.0), x(base))
            return scope.emit("^", x(base), x(exp))
        if t in _FUNCTIONS:
            return scope.emit(_FUNCTIONS[t], x(e.args[0]))
        if getattr(t, "numeric", None) is not None:  # a series' figure (see `series_opaque`): its own program
            self.aggregates = True
            return scope.emit("subprogram", t.numeric(), *[x(a) for a in e.args])
        if getattr(t, "record", None) is not None:  # a built-in kept whole (see `opaque`)
            return scope.emit(t.record.step, *[x(a) for a in e.args])
        if t is sp.sign:
            a = x(e.args[0])
            zero = scope.const(0.0)
            pos = scope.emit("if", scope.emit(">", a, zero), scope.const(1.0), zero)
            neg = scope.emit("if", scope.emit("<", a, zero), scope.const(-1.0), pos)
            return scope.emit("if", scope.emit("!=", a, a), a, neg)  # nan stays nan
        if t in _FOLDS:
            acc = None
            for a in e.args:
                acc = x(a) if acc is None else scope.emit(_FOLDS[t], acc, x(a))
            return acc
        if t is sp.Not:
            return scope.emit("not", x(e.args[0]))
        if t is sp.ITE:  # SymPy's form of a comparison with an if inside: `if(c, a, b) > 2`
            cond, then, other = e.args
            return scope.emit("if", x(cond), x(then), x(other))
        if t in _RELATIONS:
            return scope.emit(_RELATIONS[t], x(e.lhs), x(e.rhs))
        if t is sp.Piecewise:
            out = None
            for value, cond in reversed(e.args):
                if cond is sp.true:
                    out = x(value)
                else:
                    out = scope.emit("if", x(cond), x(value), scope.const(float("nan")) if out is None else out)
            return out
        if t is sp.factorial:  # SymPy's form of a product over 1..n: that product again
            k = sp.Dummy("k", integer=True)
            return self._aggregate(k, [(k, sp.Integer(1), e.args[0])], "product", scope)
        if t is RangeFirst:  # the least value where the condition holds; none: nan
            out = self._aggregate(e.function, list(e.limits), "min", scope)
            inf = scope.const(float("inf"))
            return scope.emit("if", scope.emit("<", out, inf), out, scope.const(float("nan")))
        if t in _AGGREGATES or isinstance(e, _RangeExtreme):
            kind = _AGGREGATES.get(t) or ("max" if isinstance(e, RangeMax) else "min")
            return self._aggregate(e.function, list(e.limits), kind, scope)
        raise NotImplementedError(f"no numeric step for {t.__name__}: {e}")

    def _aggregate(self, body_expr, limits: list, kind: str, scope) -> int:
        """SymPy merges nested sums into one node, innermost limits first: ``Sum(f, (j, 1, i), (i, 1, n))``."""
        from .numeric import Body, Scope, allocate

        k, lo, hi = limits[-1]
        start, end = self.p(lo, scope), self.p(hi, scope)
        body = Scope(scope)
        self.scopes.append(body)
        var = body.new()
        body.env = {k: var}
        if len(limits) > 1:
            result = self._aggregate(body_expr, limits[:-1], kind, body)
        else:
            result = self.p(body_expr, body)
        captured = list(body.captures.items())
        steps, (results, renumber), size = allocate(body.steps, body.values, 0, [result], body.size,
                                                    fixed=[var] + [inner for _, inner in captured])
        self.aggregates = True
        return scope.emit("agg", kind, start, end, 1.0, getattr(k, "terms", UNSIZED_TERMS),
                          Body([(outer, renumber[inner]) for outer, inner in captured], renumber[var], size,
                               [(renumber[r], v) for r, v in body.values], steps, results[0]))


def _lookup(sym: sp.Symbol, scope) -> int:
    """The register of ``sym`` in ``scope``: its own, or captured from the scope around it."""
    reg = scope.env.get(sym)
    if reg is None:
        if scope.parent is None:
            raise NotImplementedError(f"{sym} is not an input of this program")
        reg = scope.env[sym] = scope.capture(_lookup(sym, scope.parent))
    return reg


def build(model: Model) -> tuple[SymbolTable, dict[str, sp.Basic], Converter]:
    """SymPy expression of every derived quantity (inputs are just symbols)."""
    symbols = SymbolTable(model)
    conv = Converter(model, symbols)
    exprs: dict[str, sp.Basic] = conv.exprs
    for name in model.order:
        q = model.quantities[name]
        if not q.is_input:
            if q.per_period or any(isinstance(n, (ir.Reduce, ir.At)) for n in ir.walk(q.definition.expr)):
                exprs[name] = series_opaque(model, name, [name], ir.Name(name, q.definition.name_span))  # no closed form
            else:
                try:
                    exprs[name] = conv.expr(q.definition.expr)
                except (ValueError, TypeError):  # SymPy refused (an `if` over a `first` it cannot compare): no form
                    exprs[name] = series_opaque(model, name, [name], ir.Name(name, q.definition.name_span),
                                                "without_closed_form")
    return symbols, exprs, conv


def series_opaque(model: Model, label: str, names: Iterable[str], expr: ir.Expr,
                  why: str = "over_periods") -> sp.Basic:
    """What SymPy is given for a series or a figure computed from one (``expr``): no closed form (each
    period starts from the one before), so an undefined function of the inputs it depends on. SymPy
    can neither simplify nor invert it, so a closed form through it is never claimed. Its values come
    from the numeric route: the function carries ``expr`` compiled over those inputs (``numeric``),
    which :func:`program` runs as one step. Inputs the periods' ends use count too. ``why`` ends its name
    (``cash_over_periods``; ``q_without_closed_form``, a formula SymPy refused to build)."""
    names = [n for n in names if n in model.quantities]
    if model.periods is not None:
        names += [n.name for item in model.periods.values.items for n in ir.walk(item)
                  if isinstance(n, ir.Name) and n.name in model.quantities]
    inputs = [n for n in cone(model, names) if model.quantities[n].is_input]
    compiled: list = []

    def numeric():
        if not compiled:
            from .numeric import compile_program

            compiled.append(compile_program(model, inputs, [(label, expr)]))
        return compiled[0]

    def _eval_evalf(self, prec):  # at numbers: the numeric route's value (nan, a never, is no number)
        if not all(a.is_number for a in self.args):
            return None
        from .runtime import run_numpy

        v = float(run_numpy(numeric(), [float(a) for a in self.args])[0])
        return sp.Float(v, prec) if math.isfinite(v) else None

    def at_numbers(cls, *args):  # at rationals: exactly, period by period (else the numeric route's float)
        if not all(isinstance(a, sp.Rational) for a in args):
            return None
        from .exact import ExactEvaluator, NotRational

        exact = ExactEvaluator(model, {n: Fraction(int(a.p), int(a.q)) for n, a in zip(inputs, args)})
        try:
            v = exact.expr(expr)
        except (NotRational, KeyError):
            from .runtime import run_numpy

            f = float(run_numpy(numeric(), [float(a) for a in args])[0])
            return sp.Float(f) if math.isfinite(f) else sp.nan
        return sp.Rational(v.numerator, v.denominator) if not isinstance(v, bool) else (sp.true if v else sp.false)

    fn = type(f"{label}_{why}", (sp.Function,), {"numeric": staticmethod(numeric), "is_real": True,
                                                          "_eval_evalf": _eval_evalf, "eval": classmethod(at_numbers)})
    return fn(*[sp.Symbol(n, real=True) for n in inputs])


def inline_inputs(model: Model, symbols: SymbolTable, exprs: dict[str, sp.Basic],
                  target: Union[str, sp.Basic]) -> sp.Basic:
    """A quantity (by name), or any expression over the plan's symbols, written over inputs only.

    Expands just the quantities it uses (its cone), each once and shared, in
    dependency order, without recursion. A true/false quantity used as a
    number (``Eq(flag, 1)``, as the converter writes it) becomes its condition.
    """
    if isinstance(target, str):
        if model.quantities[target].is_input:
            return symbols[target]
        expr, names = exprs[target], model.quantities[target].deps
    else:
        expr = target
        names = [symbols.names[s] for s in expr.free_symbols if s in symbols.names]
    memo: dict[str, sp.Basic] = {}

    def replace(e: sp.Basic, deps: Iterable[str]) -> sp.Basic:
        m: dict[sp.Basic, sp.Basic] = {}
        for d in deps:
            if d in memo:
                if model.quantities[d].is_bool:
                    m[sp.Eq(symbols[d], 1)] = memo[d]
                m[symbols[d]] = memo[d]
        return e.xreplace(m) if m else e

    for n in cone(model, names):
        if not model.quantities[n].is_input:
            memo[n] = replace(exprs[n], model.quantities[n].deps)
    return replace(expr, names)


# ---- closed forms as plain data (kept in the compiled-plan cache) -------------------------------
# A closed form is a SymPy tree; the cache holds only plain data (its unpickler builds no SymPy
# object), so a form is kept as nested tuples whose heads come from a fixed table, and rebuilt here
# by calling those constructors: no text is parsed and no name is looked up outside the table.

_HEADS = {cls.__name__: cls for cls in (
    sp.Add, sp.Mul, sp.Pow, sp.log, sp.exp, sp.floor, sp.ceiling, sp.Abs, sp.sign, sp.Max, sp.Min,
    sp.LambertW, sp.Eq, sp.Ne, sp.Lt, sp.Le, sp.Gt, sp.Ge, sp.And, sp.Or, sp.Not, sp.Piecewise)}
_HEADS.update({"StrictLessThan": sp.Lt, "LessThan": sp.Le, "StrictGreaterThan": sp.Gt, "GreaterThan": sp.Ge,
               "Equality": sp.Eq, "Unequality": sp.Ne})
_CONSTANTS = {"pi": sp.pi, "E": sp.E, "oo": sp.oo, "-oo": -sp.oo, "true": sp.true, "false": sp.false}


class NotData(Exception):
    """A tree with a node the data form has no head for (kept out of the cache)."""


def to_data(expr: sp.Basic, symbols: "SymbolTable") -> tuple:
    """``expr`` as nested tuples: ``("q", p, q)`` a rational, ``("s", name)`` a plan symbol, ``("c", name)``
    a constant, ``(head, *args)`` a node from the table; :class:`NotData` for anything else (a float, a
    dummy, a sum over a range, a root of a polynomial). Rebuilt exactly by :func:`from_data`."""
    def walk(e):
        if isinstance(e, sp.Rational):
            return ("q", int(e.p), int(e.q))
        if isinstance(e, sp.Symbol):
            if symbols.names.get(e) is None or type(e) is not sp.Symbol:
                raise NotData(str(e))
            return ("s", e.name)
        for name, c in _CONSTANTS.items():
            if e is c or e == c and type(e) is type(c):
                return ("c", name)
        if isinstance(e, sp.Piecewise):
            return ("Piecewise",) + tuple(("pair", walk(v), walk(c)) for v, c in e.args)
        head = type(e).__name__
        if _HEADS.get(head) is not type(e) and not (head in _HEADS and isinstance(e, _HEADS[head])):
            raise NotData(head)
        return (head,) + tuple(walk(a) for a in e.args)

    data = walk(expr)
    if from_data(data, symbols) != expr:  # a tree that would not come back the same is not kept
        raise NotData("does not rebuild")
    return data


def from_data(data: tuple, symbols: "SymbolTable") -> sp.Basic:
    """The SymPy tree of :func:`to_data`'s ``data``; ``ValueError`` on anything that is not such data."""
    by_name = {s.name: s for s in symbols.names}

    def build(d):
        if not isinstance(d, tuple) or not d or not isinstance(d[0], str):
            raise ValueError("not a closed form")
        head = d[0]
        if head == "q" and len(d) == 3 and all(type(x) is int for x in d[1:]) and d[2] > 0:
            return sp.Rational(d[1], d[2])
        if head == "s" and len(d) == 2 and d[1] in by_name:
            return by_name[d[1]]
        if head == "c" and len(d) == 2 and d[1] in _CONSTANTS:
            return _CONSTANTS[d[1]]
        if head == "Piecewise":
            pairs = []
            for p in d[1:]:
                if not (isinstance(p, tuple) and len(p) == 3 and p[0] == "pair"):
                    raise ValueError("not a closed form")
                pairs.append((build(p[1]), build(p[2])))
            return sp.Piecewise(*pairs)
        cls = _HEADS.get(head)
        if cls is None:
            raise ValueError(f"not a closed form: {head}")
        return cls(*[build(a) for a in d[1:]])

    return build(data)
