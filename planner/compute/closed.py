"""Closed forms back into the IR: a SymPy expression the symbolic route derived, as IR nodes.

A closed form (a solve's root, an explanation over inputs) is SymPy's; the outputs print only the
plan's IR, so a closed form is translated back here (:func:`to_ir`) and printed by the same
generators as the plan's own formulas: the report's LaTeX, the workbook's formulas.

* A closed form is in base units: its numbers become :class:`~planner.language.ir.Number` literals
  without a unit, exact (a SymPy ``Rational`` is a :class:`fractions.Fraction`); its symbols become
  :class:`~planner.language.ir.Name` nodes of the quantities they stand for.
* ``Piecewise`` is the ``if`` call (nested, one branch after another), ``Max``/``Min`` the ``max``/``min``
  calls, ``floor``/``ceiling``/``Abs``/``exp``/``log`` their built-ins, a built-in SymPy keeps whole
  (``pmt``) its call; a sum, product, max or min over a range is the aggregate over that range.
* A true/false quantity, which SymPy holds as ``Eq(flag, 1)``, is its name again.
* A node the plan language has no function for (Lambert W, a root of a polynomial, pi) raises
  :class:`NoClosedForm`, which names it: the caller says there is no closed form to show.

A solve's closed form is made readable here too, still in SymPy, before it is translated: rewritten
through the plan's own quantities (:func:`through_quantities`) and over the values as shown
(:func:`in_display_units`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Collection, Optional

import sympy as sp

from ..language import ir
from ..language.functions import FUNCTIONS
from ..language.limits import deep
from ..language.text import decimal_places
from ..language.source import Source, Span
from .symbolic import (Product, RangeFirst, RangeMax, RangeMin, Sum, cone, inline_inputs, loose_index, loose_note,
                       rational)

_SOURCE = Source("<closed form>", "")
SPAN = Span(_SOURCE, 0, 0)  # a closed form has no place in the plan's text


class NoClosedForm(Exception):
    """A closed form holds ``node``, which no IR construct writes (``what``: its function's name)."""

    def __init__(self, node: sp.Basic, why: Optional[str] = None) -> None:
        self.node = node
        self.what = _NAMES.get(type(node).__name__, type(node).__name__)
        super().__init__(why or f"no closed form to show: it uses {self.what}, which the plan language has no "
                                f"function for")


_NAMES = {"LambertW": "the Lambert W function", "CRootOf": "a root of a polynomial", "Pi": "the number pi",
          "Infinity": "infinity", "NegativeInfinity": "infinity", "NaN": "an undefined value",
          "ComplexInfinity": "an undefined value", "Never": "no value (`never`)", "ImaginaryUnit": "the imaginary unit"}

_CALLS = {sp.exp: "exp", sp.log: "ln", sp.Abs: "abs", sp.floor: "floor", sp.ceiling: "ceil", sp.Max: "max",
          sp.Min: "min"}
_RELATIONS = {sp.Eq: ir.CmpOp.EQ, sp.Ne: ir.CmpOp.NE, sp.Lt: ir.CmpOp.LT, sp.Le: ir.CmpOp.LE,
              sp.Gt: ir.CmpOp.GT, sp.Ge: ir.CmpOp.GE}
_RANGES = {sp.Sum: ir.AggOp.SUM, Sum: ir.AggOp.SUM, sp.Product: ir.AggOp.PRODUCT, Product: ir.AggOp.PRODUCT,
           RangeMax: ir.AggOp.MAX, RangeMin: ir.AggOp.MIN}
DECIMAL_DIGITS = 12  # a rational coefficient whose decimal has at most this many places is written as one


def to_ir(expr: sp.Basic, booleans: Collection[str] = ()) -> ir.Expr:
    """``expr`` (a SymPy closed form over the plan's symbols) as an IR expression. ``booleans``: the
    names of the plan's true/false quantities (``Eq(flag, 1)`` is ``flag``). :class:`NoClosedForm`
    when a node has no IR form."""
    expr = sp.sympify(expr)
    if (name := loose_index(expr)) is not None:
        raise NoClosedForm(expr, loose_note(name))
    return deep(_Translator(frozenset(booleans)).ir, expr)


def plan_text(expr: sp.Basic, booleans: Collection[str] = ()) -> str:
    """``expr`` as plan text (``ceil(x / 3)``, ``max(a, b)``, ``x^2``): its IR printed by
    :mod:`planner.language.text`, the printer of every formula planner writes back in the plan's syntax.
    :class:`NoClosedForm` when a node has no IR form."""
    from ..language.text import formula_text

    return formula_text(to_ir(expr, booleans))


# ---- node builders ---------------------------------------------------------------------------------

def number(value: Fraction) -> ir.Expr:
    if value < 0:
        return ir.Neg(ir.Number(-value, None, SPAN), SPAN)
    return ir.Number(value, None, SPAN)


def binary(op: ir.BinOp, left: ir.Expr, right: ir.Expr) -> ir.Binary:
    return ir.Binary(op, left, right, SPAN, SPAN)


def call(func: str, *args: ir.Expr) -> ir.Call:
    return ir.Call(func, tuple(ir.Arg(None, a, SPAN) for a in args), SPAN, SPAN)


def chain(op: ir.BinOp, items: list[ir.Expr]) -> ir.Expr:
    """``a op b op c`` left-deep, as the parser builds it."""
    out = items[0]
    for item in items[1:]:
        out = binary(op, out, item)
    return out


def compare(op: ir.CmpOp, left: ir.Expr, right: ir.Expr) -> ir.Compare:
    return ir.Compare((op,), (left, right), SPAN, (SPAN,))


class _Translator:
    def __init__(self, booleans: frozenset[str]) -> None:
        self.booleans = booleans

    def ir(self, e: sp.Basic) -> ir.Expr:
        if isinstance(e, sp.Rational):
            return number(Fraction(int(e.p), int(e.q)))
        if isinstance(e, sp.Float):
            return number(Fraction(format(float(e), ".15g")))
        if isinstance(e, sp.Symbol):  # a plan symbol, or the variable of an aggregate (an Index)
            return ir.Name(e.name, SPAN)
        if e is sp.true or e is sp.false:
            return ir.Bool(bool(e), SPAN)
        if e is sp.E:
            return call("exp", number(Fraction(1)))
        t = type(e)
        if t is sp.Add:
            return self._add(e)
        if t is sp.Mul:
            return self._mul(e)
        if t is sp.Pow:
            return self._pow(e)
        if t in _CALLS:
            return call(_CALLS[t], *[self.ir(a) for a in e.args])
        record = getattr(t, "record", None)
        if record is not None and FUNCTIONS.get(record.name) is record:  # a built-in kept whole (pmt)
            return call(record.name, *[self.ir(a) for a in e.args])
        if t is sp.sign:  # sign(x): 1, -1 or 0
            x = self.ir(e.args[0])
            zero = number(Fraction(0))
            return call("if", compare(ir.CmpOp.GT, x, zero), number(Fraction(1)),
                        call("if", compare(ir.CmpOp.LT, x, zero), number(Fraction(-1)), zero))
        if t is sp.Piecewise:
            return self._piecewise(e)
        if t in _RELATIONS:
            return self._relation(e)
        if t in (sp.And, sp.Or):
            op = ir.BoolOp.AND if t is sp.And else ir.BoolOp.OR
            out = self.ir(e.args[0])
            for a in e.args[1:]:
                out = ir.Logic(op, out, self.ir(a), SPAN)
            return out
        if t is sp.Not:
            return ir.Not(self.ir(e.args[0]), SPAN)
        if t in _RANGES:
            return self._range(e, _RANGES[t])
        if t is RangeFirst:
            (k, lo, hi), = e.limits
            (value, cond), _ = e.function.args
            first = self._aggregate(ir.AggOp.FIRST, k, lo, hi, self.ir(cond))
            if value == k:
                return first
            slope = sp.diff(value, k)
            if not (slope.is_number and slope.is_positive):  # the least value is not at the first k
                raise NoClosedForm(e)
            # the range's values step with k (`m = k * 1 month`): the value at the first k that holds
            return ir.transform(self.ir(value), lambda n: first if isinstance(n, ir.Name) and n.name == k.name else n)
        if t is sp.ITE:  # a condition chosen by a condition
            return call("if", *[self.ir(a) for a in e.args])
        if t is sp.factorial:  # SymPy's product over 1..n
            k = sp.Dummy("k", integer=True)
            return self._aggregate(ir.AggOp.PRODUCT, k, sp.Integer(1), e.args[0], ir.Name(k.name, SPAN))
        raise NoClosedForm(e)

    # -- arithmetic ------------------------------------------------------------------------------------
    def _add(self, e: sp.Add) -> ir.Expr:
        out = None
        # SymPy's reading order (the printed form of the same sum), the terms added before those taken away:
        # `b * c + d - a`, not `-(a) + b * c + d`
        for term in sorted(e.as_ordered_terms(), key=lambda t: t.could_extract_minus_sign()):
            negative = term.could_extract_minus_sign()
            tex = self.ir(-term if negative else term)
            if out is None:
                out = ir.Neg(tex, SPAN) if negative else tex
            else:
                out = binary(ir.BinOp.SUB if negative else ir.BinOp.ADD, out, tex)
        return out

    def _mul(self, e: sp.Mul) -> ir.Expr:
        coeff, rest = e.as_coeff_Mul()
        if coeff.is_negative:
            return ir.Neg(self.ir(-e), SPAN)
        if isinstance(coeff, sp.Rational) and coeff.q > 10 and rest != 1 and \
                (places := decimal_places(int(coeff.q))) is not None and places <= DECIMAL_DIGITS \
                and coeff.q == 10 ** places:
            # `0.97 * price` as written, not 97 price / 100 (but `x / 16`, not 0.0625 x)
            return binary(ir.BinOp.MUL, number(Fraction(int(coeff.p), int(coeff.q))), self.ir(rest))
        num, den = [], []
        if isinstance(coeff, sp.Rational):
            if coeff.p != 1:
                num.append(number(Fraction(int(coeff.p))))
            if coeff.q != 1:
                den.append(number(Fraction(int(coeff.q))))
        elif coeff != 1:
            num.append(self.ir(coeff))
        for f in (rest.as_ordered_factors() if isinstance(rest, sp.Mul) else [rest]):  # the printed order
            base, exp = f.as_base_exp()
            if exp.could_extract_minus_sign() and not isinstance(f, sp.exp):
                den.append(self.ir(base if exp == -1 else sp.Pow(base, -exp, evaluate=False)))
            else:
                num.append(self.ir(f))
        top = chain(ir.BinOp.MUL, num) if num else number(Fraction(1))
        return binary(ir.BinOp.DIV, top, chain(ir.BinOp.MUL, den)) if den else top

    def _pow(self, e: sp.Pow) -> ir.Expr:
        base, exp = e.args
        if base is sp.E:
            return call("exp", self.ir(exp))
        if exp.could_extract_minus_sign():  # 1 / x, not 1 / x^1
            return binary(ir.BinOp.DIV, number(Fraction(1)),
                          self.ir(base if exp == -1 else sp.Pow(base, -exp, evaluate=False)))
        if exp == sp.S.Half:
            return call("sqrt", self.ir(base))
        return binary(ir.BinOp.POW, self.ir(base), self.ir(exp))

    # -- conditions ------------------------------------------------------------------------------------
    def _flag(self, e: sp.Basic) -> bool:
        return isinstance(e, sp.Symbol) and e.name in self.booleans

    def _relation(self, e) -> ir.Expr:
        if type(e) in (sp.Eq, sp.Ne):
            for flag, value in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
                if self._flag(flag) and value in (0, 1):
                    name = ir.Name(flag.name, SPAN)
                    holds = (value == 1) == (type(e) is sp.Eq)
                    return name if holds else ir.Not(name, SPAN)
        return compare(_RELATIONS[type(e)], self.ir(e.lhs), self.ir(e.rhs))

    def _piecewise(self, e: sp.Piecewise) -> ir.Expr:
        *branches, (last, cond) = e.args
        if cond is not sp.true:  # no value where no condition holds: nothing the language writes
            raise NoClosedForm(sp.nan)
        out = self.ir(last)
        for value, cond in reversed(branches):
            out = call("if", self.ir(cond), self.ir(value), out)
        return out

    # -- aggregates over ranges --------------------------------------------------------------------------
    def _range(self, e, op: ir.AggOp) -> ir.Expr:
        body = self.ir(e.function)
        for k, lo, hi in e.limits:  # SymPy's innermost first
            body = self._aggregate(op, k, lo, hi, body)
        return body

    def _aggregate(self, op: ir.AggOp, k, lo, hi, body: ir.Expr) -> ir.Aggregate:
        values = ir.Values("range", (self.ir(lo), self.ir(hi)), SPAN)
        return ir.Aggregate(op, k.name, values, body, SPAN, SPAN, SPAN)


# ---- a solve's closed form, made readable before it is printed -------------------------------------
# (the report's, sheets/*.plan's Solves: over the quantities a reader knows, in the units shown)

def in_display_units(plan, target: str, form: sp.Basic, scale_of=None) -> sp.Basic:
    """A closed form (over symbols standing for values in base units) over the quantities' values in
    their display units, giving ``target`` in its display unit: a plan in years and %/year reads
    ``(1 + rate / 100)^(-lifetime)``, not ``(31,536,000 rate + 1)^(-lifetime / 31,536,000)``.
    ``scale_of(quantity)``: the base units per unit of a value as shown, when not its display unit's
    (a workbook's percent cell holds 0.08 for 8%)."""
    scale_of = scale_of or (lambda q: q.display.scale)
    scales = {}
    for sym in form.free_symbols:
        name = plan.symbols.names.get(sym)
        if name is not None and (scale := scale_of(plan.quantities[name])) != 1:
            scales[sym] = rational(scale) * sym
    scale = scale_of(plan.quantities[target])
    if not scales and scale == 1:
        return form
    shown = form.xreplace(scales) * rational(1 / scale)
    if sp.count_ops(shown) <= 80:
        shown = sp.together(shown)  # one fraction: 100 (price (resale - ...)) / (price years) reads as one
    return shown


def through_quantities(plan, stmt, target: str, form: sp.Basic) -> sp.Basic:
    """A closed form over inputs, rewritten through the plan's own quantities where they appear in it
    (``bits_per_weight * parameters`` becomes ``weight_bytes``): the same value, a formula a reader
    of the plan recognises. Only quantities the question uses and that do not depend on ``target``
    are tried, larger ones first; a rewrite is kept only when it makes the formula shorter."""
    used = [n.name for n in ir.walk(stmt.condition if isinstance(stmt, ir.Solve) else stmt.objective)
            if isinstance(n, ir.Name) and n.name in plan.quantities]
    candidates = []
    for n in cone(plan.model, used):
        q = plan.quantities[n]
        if q.is_input or q.is_bool or isinstance(plan.exprs[n], sp.Symbol):  # `weight_gib = weight_bytes`
            continue
        if target in cone(plan.model, [n]):
            continue
        e = inline_inputs(plan.model, plan.symbols, plan.exprs, n)
        if not e.is_Atom and not e.has(sp.Max, sp.Min, sp.Piecewise):
            candidates.append((sp.count_ops(e), n, e))
    best, size = form, sp.count_ops(form)
    for _, n, e in sorted(candidates, key=lambda c: -c[0])[:50]:
        rewritten = best.subs(e, plan.symbols[n])
        if (cost := sp.count_ops(rewritten)) < size:
            best, size = rewritten, cost
    tidy = best.replace(lambda x: isinstance(x, sp.Add) and len(x.args) <= 8, _gather)
    return tidy if sp.count_ops(tidy) <= size else best


def _gather(add: sp.Add) -> sp.Basic:
    """``2 a b g + 2 a b - k f`` as ``2 a b (g + 1) - k f``: the factor most terms share, taken out
    of them (a narrower formula, the same value)."""
    terms = add.args
    best, size = add, sp.count_ops(add)
    for i in range(len(terms)):
        for j in range(i + 1, len(terms)):
            common = sp.gcd_terms(terms[i] + terms[j])
            if not isinstance(common, sp.Mul):
                continue
            factor = sp.Mul(*[f for f in common.args if not isinstance(f, sp.Add)])
            if factor.is_number:
                continue
            inside = [t for t in terms if (t / factor).as_numer_denom()[1].free_symbols.isdisjoint(factor.free_symbols)
                      and (t / factor).as_numer_denom()[1].is_number]
            rest = [t for t in terms if t not in inside]
            if len(inside) < 2:
                continue
            candidate = sp.Add(factor * sp.factor_terms(sp.Add(*[t / factor for t in inside])), *rest,
                               evaluate=False)
            if (cost := sp.count_ops(candidate)) < size:
                best, size = candidate, cost
    return best


def root_polynomial(exact, target: str, booleans: Collection[str] = ()) -> Optional[ir.Expr]:
    """The polynomial in ``target`` whose real root an algebraic answer (a ``CRootOf``) is, as IR; None
    for any other answer."""
    if not isinstance(exact, sp.CRootOf):
        return None
    poly = exact.poly.as_expr().xreplace({exact.poly.gen: sp.Symbol(target)})
    return to_ir(poly, booleans)
