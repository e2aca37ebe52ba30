"""SymPy's canonical forms, mirrored in plain Python for the formulas plans write.

Evaluating a plan must give the same numbers to the last bit whether its
formulas go through SymPy or not, and SymPy rewrites what it builds: it folds
the numbers of a sum or a product in exact rationals (``0.1 * x * 3`` is
``3/10 * x``), collects like terms and powers (``x * x`` is ``x**2``,
``x / x`` is 1), distributes a number over a sum (``(x + 1) / 3`` is
``x/3 + 1/3``), sorts operands into its canonical order (floating-point
addition and multiplication are not associative, so the order is part of the
result), splits integer terms out of ``floor`` and decides comparisons it can
prove. This module builds the same trees, as nested tuples, from the same
constructor calls :mod:`planner.compute.symbolic` makes:

* ``("n", Fraction)`` a rational, ``("s", name)`` a real symbol, ``("d", name, i)``
  a ``Dummy`` (a check's ``x@scenario`` or question answer; no assumptions),
* ``("+", args)``, ``("*", args)``, ``("^", base, exp)``,
* ``("f", name, args)`` for ``Max``, ``Min``, ``Abs``, ``sign``, ``floor``,
  ``ceiling``, ``exp`` and ``log``,
* ``("pw", ((expr, cond), ...))``, ``("r", op, lhs, rhs)`` with ``op`` one of
  ``Eq Ne Lt Le Gt Ge``, ``("and", args)``, ``("or", args)``, ``("not", arg)``
  and ``("b", bool)``.

It mirrors SymPy 1.12-1.14 (``Add.flatten``, ``Mul.flatten``, ``Pow``,
``Basic.compare``, ``ordered``, the functions' ``eval``) only where it is
sure to: whatever falls outside (a power of a number with a fractional
exponent, a sign SymPy could prove through its assumptions, ``exp`` of a
logarithm, ...) raises :class:`Unsupported`, and the caller takes SymPy's own
route for that formula. ``tests/test_ircompile.py`` compares the two routes'
generated code and values over every shipped plan, every plan in the tests
and generated formulas.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cmp_to_key
from typing import Iterable, Optional


class Unsupported(Exception):
    """A construct whose SymPy form this module does not reproduce."""


Node = tuple

_F0, _F1 = Fraction(0), Fraction(1)  # shared: a Fraction is immutable, and making one costs a microsecond
ZERO: Node = ("n", _F0)
ONE: Node = ("n", _F1)
NEG_ONE: Node = ("n", Fraction(-1))
HALF: Node = ("n", Fraction(1, 2))
TRUE: Node = ("b", True)
FALSE: Node = ("b", False)


def num(value) -> Node:
    return ("n", value if isinstance(value, Fraction) else Fraction(value))


def sym(name: str) -> Node:
    return ("s", name)


def is_num(e: Node) -> bool:
    return e[0] == "n"


def is_int(e: Node) -> bool:
    return e[0] == "n" and e[1].denominator == 1


def is_bool(e: Node) -> bool:
    return e[0] in ("b", "r", "and", "or", "not")


# ---- canonical order: Basic.compare and ordered() --------------------------------------

_CLASS_ORDER = {name: i for i, name in enumerate([
    "Zero", "One", "Half", "Infinity", "NaN", "NegativeOne", "NegativeInfinity",
    "Integer", "Rational", "Float", "Exp1", "Pi", "ImaginaryUnit", "Symbol", "Wild",
    "Pow", "Mul", "Add", "Derivative", "Integral", "Abs", "Sign", "Sqrt", "Floor", "Ceiling",
    "Re", "Im", "Arg", "Conjugate", "Exp", "Log", "Sin", "Cos", "Tan", "Cot", "ASin", "ACos", "ATan", "ACot",
    "Sinh", "Cosh", "Tanh", "Coth", "ASinh", "ACosh", "ATanh", "ACoth", "RisingFactorial", "FallingFactorial",
    "factorial", "binomial", "Gamma", "LowerGamma", "UpperGamma", "PolyGamma", "Erf", "Chebyshev", "Chebyshev2",
    "Function", "WildFunction", "Lambda", "Order",
    "Equality", "Unequality", "StrictGreaterThan", "StrictLessThan", "GreaterThan", "LessThan",
])}
_UNKNOWN = len(_CLASS_ORDER) + 1
_REL_CLASS = {"Eq": "Equality", "Ne": "Unequality", "Lt": "StrictLessThan", "Le": "LessThan",
              "Gt": "StrictGreaterThan", "Ge": "GreaterThan"}


def class_name(e: Node) -> str:
    tag = e[0]
    if tag == "n":
        v = e[1]
        if v.denominator == 1:  # integers compared as ints (a Fraction's == is a Python call)
            n = v.numerator
            return "Zero" if n == 0 else "One" if n == 1 else "NegativeOne" if n == -1 else "Integer"
        return "Half" if v.denominator == 2 and v.numerator == 1 else "Rational"
    if tag == "s":
        return "Symbol"
    if tag == "d":
        return "Dummy"
    if tag == "+":
        return "Add"
    if tag == "*":
        return "Mul"
    if tag == "^":
        return "Pow"
    if tag == "f":
        return e[1]
    if tag == "pw":
        return "Piecewise"
    if tag == "r":
        return _REL_CLASS[e[1]]
    if tag == "and":
        return "And"
    if tag == "or":
        return "Or"
    if tag == "not":
        return "Not"
    if tag == "b":
        return "BooleanTrue" if e[1] else "BooleanFalse"
    if tag == "pair":
        return "ExprCondPair"
    raise AssertionError(e)


def _content(e: Node) -> tuple:
    """``_hashable_content()``: what two nodes of one class are compared by."""
    tag = e[0]
    if tag == "n":
        return (e[1].numerator, e[1].denominator)
    if tag == "s":
        return (e[1],)  # every plan symbol has the same assumptions (real=True)
    if tag == "d":
        return (e[1], e[2])
    if tag in ("+", "*", "and", "or"):
        return e[1]
    if tag == "^":
        return (e[1], e[2])
    if tag == "f":
        return e[2]
    if tag == "pw":
        return tuple(("pair", v, c) for v, c in e[1])
    if tag == "pair":
        return (e[1], e[2])
    if tag == "r":
        return (e[2], e[3])
    if tag == "not":
        return (e[1],)
    if tag == "b":
        return ()
    raise AssertionError(e)


def compare(a: Node, b: Node) -> int:
    """``Basic.compare``: the order SymPy sorts the terms of a sum and the factors of a product in."""
    if a is b or a == b:
        return 0
    n1, n2 = class_name(a), class_name(b)
    if n1 != n2:
        i1, i2 = _CLASS_ORDER.get(n1, _UNKNOWN), _CLASS_ORDER.get(n2, _UNKNOWN)
        if i1 == _UNKNOWN and i2 == _UNKNOWN:
            return (n1 > n2) - (n1 < n2)
        if i1 != i2:
            return (i1 > i2) - (i1 < i2)
    st, ot = _content(a), _content(b)
    c = (len(st) > len(ot)) - (len(st) < len(ot))
    if c:
        return c
    for x, y in zip(st, ot):
        if isinstance(x, tuple):
            c = compare(x, y)
        else:
            c = (x > y) - (x < y)
        if c:
            return c
    return 0


_KEY = cmp_to_key(compare)


def node_count(e: Node) -> int:
    """``_node_count``: Basic nodes in the tree (what ``ordered`` sorts by first)."""
    tag = e[0]
    if tag in ("n", "s", "b", "d"):
        return 1
    if tag in ("+", "*", "and", "or"):
        return 1 + sum(node_count(a) for a in e[1])
    if tag == "^":
        return 1 + node_count(e[1]) + node_count(e[2])
    if tag == "f":
        return 1 + sum(node_count(a) for a in e[2])
    if tag == "pw":
        return 1 + sum(1 + node_count(v) + node_count(c) for v, c in e[1])
    if tag == "r":
        return 1 + node_count(e[2]) + node_count(e[3])
    if tag == "not":
        return 1 + node_count(e[1])
    raise AssertionError(e)


_FUNCTION_KEYS = {"exp": 10, "log": 11}


def _class_key(e: Node) -> tuple:
    tag = e[0]
    if tag == "n":
        return (1, 0, "Number")
    if tag == "s":
        return (2, 0, "Symbol")
    if tag == "*":
        return (3, 0, "Mul")
    if tag == "+":
        return (3, 1, "Add")
    if tag == "^":
        return (3, 2, "Pow")
    if tag == "f":
        name = e[1]
        if name in ("Max", "Min"):
            return (5, 0, name)
        return (4, _FUNCTION_KEYS.get(name, 10000), name)
    raise Unsupported("sort key of " + class_name(e))


_ONE_KEY = ((1, 0, "Number"), (0, ()), (), Fraction(1))


def sort_key(e: Node) -> tuple:
    """``Expr.sort_key()`` (the key of ``default_sort_key``)."""
    tag = e[0]
    if tag == "n":
        return ((1, 0, "Number"), (0, ()), (), e[1])
    if tag == "s":
        return ((2, 0, "Symbol"), (1, (e[1],)), _ONE_KEY, Fraction(1))
    if tag == "r":  # Basic.sort_key
        return ((5, 0, _REL_CLASS[e[1]]), (2, (sort_key(e[2]), sort_key(e[3]))), _ONE_KEY, Fraction(1))
    coeff, expr = as_coeff_mul(e)
    if expr[0] == "^":
        expr, exp = expr[1], expr[2]
    else:
        exp = ONE
    if expr[0] == "s":
        args: tuple = (expr[1],)
    elif expr[0] == "+":
        args = tuple(sort_key(t) for t in ordered_terms(expr))
    elif expr[0] == "*":
        args = tuple(sorted((sort_key(f) for f in expr[1])))
    elif expr[0] == "f":
        args = tuple(sort_key(a) for a in expr[2])
    elif expr[0] == "n":
        args = (str(expr[1]),)
    else:
        raise Unsupported("sort key of " + class_name(expr))
    return (_class_key(expr), (len(args), args), sort_key(exp), coeff)


def ordered_terms(e: Node) -> list[Node]:
    """``Add.as_ordered_terms()``: the terms by descending lexicographic monomial, then coefficient."""
    terms = list(e[1])
    if len(terms) == 2 and terms[0][0] == "n" and terms[1][0] == "*":
        m = terms[1][1]
        if len(m) == 2 and m[0][0] == "n" and terms[0][1] > 0 and m[0][1] < 0:
            return terms
    gens: set = set()
    parts = []
    for t in terms:
        c, rest = as_coeff_mul(t)
        powers: dict = {}
        if rest != ONE:
            for f in (rest[1] if rest[0] == "*" else (rest,)):
                if f[0] == "n":
                    c *= f[1]
                    continue
                base, p = _decompose_power(f)
                powers[base] = p
                gens.add(base)
        parts.append((t, float(c), powers))
    order = sorted(gens, key=sort_key)
    index = {g: i for i, g in enumerate(order)}
    keyed = []
    for t, c, powers in parts:
        monom = [0] * len(order)
        for base, p in powers.items():
            monom[index[base]] = p
        keyed.append((tuple(-m for m in monom), ((False, 0.0), (c, 0.0)), t))
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [t for _, _, t in keyed]


def _decompose_power(f: Node) -> tuple[Node, int]:
    if f[0] == "^":
        b, ex = f[1], f[2]
        if is_int(ex):
            return b, int(ex[1])
        if is_num(ex):
            raise Unsupported("fractional power in a sort key")
        c, rest = as_coeff_mul(ex)
        if c.denominator == 1 and rest != ONE:
            return ("^", b, rest), int(c)
        raise Unsupported("power in a sort key")
    if f[0] == "f" and f[1] == "exp":
        raise Unsupported("exp in a sort key")
    return f, 1


def ordered(args: Iterable[Node]) -> list[Node]:
    """``sympy.ordered``: by node count, then by ``default_sort_key``; ties keep their order."""
    return sorted(args, key=lambda a: (node_count(a), sort_key(a)))


# ---- helpers of Add and Mul --------------------------------------------------------------

def as_coeff_mul(e: Node) -> tuple[Fraction, Node]:
    """``as_coeff_Mul()``: the rational coefficient and the rest."""
    tag = e[0]
    if tag == "n":
        return e[1], ONE
    if tag == "*" and e[1][0][0] == "n":
        rest = e[1][1:]
        return e[1][0][1], rest[0] if len(rest) == 1 else ("*", rest)
    return _F1, e


def as_base_exp(e: Node) -> tuple[Node, Node]:
    if e[0] == "^":
        b, ex = e[1], e[2]
        if b[0] == "n" and b[1].numerator == 1 and b[1].denominator != 1:
            return num(b[1].denominator), neg(ex)
        return b, ex
    return e, ONE


def _from_args(tag: str, args: list[Node], identity: Node) -> Node:
    if not args:
        return identity
    if len(args) == 1:
        return args[0]
    return (tag, tuple(args))


_BOOL_TAGS = frozenset(("b", "r", "and", "or", "not"))


def _check_expr(args: Iterable[Node]) -> None:
    for a in args:
        if a[0] in _BOOL_TAGS:
            raise Unsupported("a condition used as a number")


# ---- Add -------------------------------------------------------------------------------

def add(*args: Node) -> Node:
    """``Add(*args)`` with SymPy's evaluation."""
    _check_expr(args)
    seq = [a for a in args if a[0] != "n" or a[1] != 0]
    if not seq:
        return ZERO
    if len(seq) == 1:
        return seq[0]
    if len(seq) == 2:
        a, b = seq
        if b[0] == "n":
            a, b = b, a
        if a[0] == "n" and b[0] == "*":
            return ("+", (a, b))
    fast = _add_distinct(seq)
    if fast is not None:
        return fast
    terms: dict[Node, Fraction] = {}
    coeff = Fraction(0)
    i = 0
    while i < len(seq):
        o = seq[i]
        i += 1
        tag = o[0]
        if tag == "n":
            coeff += o[1]
            continue
        if tag == "+":
            seq.extend(o[1])
            continue
        if tag == "*":
            c, s = as_coeff_mul(o)
        elif tag == "^":
            b, e = as_base_exp(o)
            if b[0] == "n" and (is_int(e) or (is_num(e) and e[1] < 0)):
                raise Unsupported("an unevaluated power of a number")
            c, s = Fraction(1), o
        else:
            c, s = Fraction(1), o
        terms[s] = terms[s] + c if s in terms else c
    newseq = []
    for s, c in terms.items():
        if c == 0:
            continue
        if c == 1:
            newseq.append(s)
        elif s[0] == "*":
            newseq.append(("*", (num(c),) + s[1]))
        elif s[0] == "+":
            newseq.append(("*", (num(c), s)))
        else:
            newseq.append(mul(num(c), s))
    newseq.sort(key=_KEY)
    if coeff != 0:
        newseq.insert(0, num(coeff))
    return _from_args("+", newseq, ZERO)


def _add_distinct(seq: list[Node]) -> Optional[Node]:
    """``add`` of canonical terms that share no non-numeric part: no term to collect, so the
    general path's result is the terms themselves, sorted, after the sum of the numbers."""
    coeff = _F0
    seen = set()
    out = []
    for o in seq:
        tag = o[0]
        if tag == "n":
            coeff = o[1] if coeff is _F0 else coeff + o[1]  # (0 + c is c: no Fraction arithmetic)
            continue
        if tag == "+" or (tag == "^" and o[1][0] == "n"):
            return None
        s = as_coeff_mul(o)[1] if tag == "*" else o
        if s in seen:
            return None
        seen.add(s)
        out.append(o)
    if len(out) > 1:
        out.sort(key=_KEY)
    if coeff.numerator != 0:
        out.insert(0, ("n", coeff))
    return _from_args("+", out, ZERO)


def neg(e: Node) -> Node:
    """``-e`` (each class's ``__neg__``)."""
    tag = e[0]
    if tag == "n":
        return num(-e[1])
    if tag == "*":
        args = e[1]
        if args[0][0] == "n":
            c = -args[0][1]
            if c == 1:
                rest = args[1:]
                return rest[0] if len(rest) == 1 else ("*", rest)
            return ("*", (num(c),) + args[1:])
        return ("*", (NEG_ONE,) + args)
    if tag == "+":
        return mul(NEG_ONE, e)
    if is_bool(e):
        raise Unsupported("minus a condition")
    return ("*", (NEG_ONE, e))


def sub(a: Node, b: Node) -> Node:
    return add(a, neg(b))


# ---- Mul -------------------------------------------------------------------------------

def _keep_coeff(coeff: Fraction, factors: Node) -> Node:
    if factors == ONE:
        return num(coeff)
    if coeff == 1:
        return factors
    if coeff == -1:
        return neg(factors)
    if factors[0] == "+":
        return ("*", (num(coeff), factors))
    if factors[0] == "*":
        margs = list(factors[1])
        if margs[0][0] == "n":
            margs[0] = num(margs[0][1] * coeff)
            if margs[0][1] == 1:
                margs.pop(0)
        else:
            margs.insert(0, num(coeff))
        return _from_args("*", margs, ONE)
    m = mul(num(coeff), factors)
    if m[0] == "n" and factors[0] != "n":
        return ("*", (num(coeff), factors))
    return m


def mul(*args: Node) -> Node:
    """``Mul(*args)`` with SymPy's evaluation."""
    _check_expr(args)
    seq = [a for a in args if a[0] != "n" or not _is_one(a[1])]
    if not seq:
        return ONE
    if len(seq) == 1:
        return seq[0]
    if len(seq) == 2:
        a, b = seq
        if b[0] == "n":
            a, b = b, a
        if a[0] == "n" and a[1] != 0:
            r, bb = as_coeff_mul(b)
            if bb[0] == "+":
                if r != 1:
                    ar = a[1] * r
                    return bb if ar == 1 else ("*", (num(ar), bb))
                return add(*[_keep_coeff(a[1], t) for t in bb[1]])
    fast = _mul_distinct(seq)
    if fast is not None:
        return fast
    coeff = Fraction(1)
    c_powers: list[tuple[Node, Node]] = []
    num_exp: list[tuple[Node, Node]] = []
    exps = 0
    i = 0
    while i < len(seq):
        o = seq[i]
        i += 1
        tag = o[0]
        if tag == "*":
            seq.extend(o[1])
            continue
        if tag == "n":
            coeff *= o[1]
            continue
        if tag == "f" and o[1] == "exp":  # a power of E: alone in a product it stays as it is
            exps += 1
            if exps > 1:
                raise Unsupported("exponentials multiplied together")
        b, e = as_base_exp(o)
        if tag == "^" and b[0] == "n":
            if is_num(e):
                if is_int(e):
                    coeff *= _rational_power(b[1], int(e[1]))
                    continue
                raise Unsupported("a number to a fractional power")
            if b[1] > 0:
                num_exp.append((b, e))
                continue
            raise Unsupported("a negative number to a symbolic power")
        c_powers.append((b, e))
    c_powers = _gather(c_powers)
    if len(num_exp) > 1:
        raise Unsupported("powers of numbers with symbolic exponents combined")
    c_part: list[Node] = []
    for _ in range(2):
        new_c_powers = []
        changed = False
        for b, e in c_powers:
            if e == ZERO:
                continue
            if e == ONE:
                if b[0] == "n":
                    coeff *= b[1]
                    continue
                p = b
            else:
                p = power(b, e)
                if p[0] == "^" and b[0] != "^":
                    bi = b
                    b, e = as_base_exp(p)
                    if b != bi:
                        changed = True
            c_part.append(p)
            new_c_powers.append((b, e))
        if changed and len({b for b, _ in new_c_powers}) != len(new_c_powers):
            c_part = []
            c_powers = _gather(new_c_powers)
        else:
            break
    for b, e in num_exp:
        c_part.append(power(b, e))
    if coeff == 0:
        return ZERO
    kept = []
    for f in c_part:
        if f[0] == "n":
            coeff *= f[1]
        else:
            kept.append(f)
    c_part = kept
    c_part.sort(key=_KEY)
    if coeff != 1:
        c_part.insert(0, num(coeff))
    if len(c_part) == 2 and c_part[0][0] == "n" and c_part[1][0] == "+":
        c = c_part[0]
        return add(*[mul(c, t) for t in c_part[1][1]])
    return _from_args("*", c_part, ONE)


def _is_one(v: Fraction) -> bool:
    return v.denominator == 1 and v.numerator == 1


def _mul_distinct(seq: list[Node]) -> Optional[Node]:
    """``mul`` of factors with distinct bases, each as the general path leaves it (no product, no
    ``exp``, powers only of symbols and sums): nothing to gather, so the general path's result is
    the factors, sorted, after the product of the numbers."""
    coeff = _F1
    bases = set()
    out = []
    for o in seq:
        tag = o[0]
        if tag == "n":
            coeff = o[1] if coeff is _F1 else coeff * o[1]  # (1 * c is c: no Fraction arithmetic)
            continue
        if tag == "*" or (tag == "f" and o[1] == "exp"):
            return None
        if tag == "^" and o[1][0] not in ("s", "d", "+"):  # (x**a)**2 from (x**a * y)**2: evaluated below
            return None
        b = o[1] if tag == "^" else o
        if b in bases:
            return None
        bases.add(b)
        out.append(o)
    if coeff.numerator == 0:
        return ZERO
    if len(out) > 1:
        out.sort(key=_KEY)
    if not _is_one(coeff):
        out.insert(0, ("n", coeff))
    if len(out) == 2 and out[0][0] == "n" and out[1][0] == "+":
        c = out[0]
        return add(*[mul(c, t) for t in out[1][1]])
    return _from_args("*", out, ONE)


def _gather(c_powers: list[tuple[Node, Node]]) -> list[tuple[Node, Node]]:
    common: dict[Node, dict[Node, list[Fraction]]] = {}
    for b, e in c_powers:
        c, t = as_coeff_mul(e)
        common.setdefault(b, {}).setdefault(t, []).append(c)
    out = []
    for b, d in common.items():
        for t, cs in d.items():
            out.append((b, mul(num(sum(cs, Fraction(0))), t)))
    return out


def _rational_power(b: Fraction, n: int) -> Fraction:
    if b == 0 and n < 0:
        raise Unsupported("zero to a negative power")
    return b ** n


# ---- Pow -------------------------------------------------------------------------------

def power(b: Node, e: Node) -> Node:
    """``Pow(b, e)`` with SymPy's evaluation."""
    _check_expr((b, e))
    if e == ZERO:
        return ONE
    if e == ONE:
        return b
    if b[0] == "n":
        if b[1] == 1:
            return ONE
        if e[0] == "n":
            if e[1].denominator == 1:
                return num(_rational_power(b[1], int(e[1])))
            raise Unsupported("a number to a fractional power")
        if b[1] <= 0:
            raise Unsupported("zero or a negative number to a symbolic power")
        _no_log_exponent(e)
        return ("^", b, e)
    if e[0] != "n":
        _no_log_exponent(e)
    if _is_number_expr(b):
        if b[0] == "f" and b[1] == "log" and is_int(e):  # 1 / log(2), of log(x, 2)
            return ("^", b, e)
        raise Unsupported("a power of an irrational constant")
    tag = b[0]
    if tag in ("s", "d", "+"):
        return ("^", b, e)
    if tag == "^":
        if is_int(e):
            return power(b[1], mul(b[2], e))
        raise Unsupported("a power of a power")
    if tag == "*":
        if is_int(e):
            return mul(*[("^", f, e) if f[0] != "n" else num(_rational_power(f[1], int(e[1]))) for f in b[1]])
        if e[0] == "n":
            raise Unsupported("a product to a fractional power")
        return ("^", b, e)
    if tag == "f":
        name = b[1]
        if name == "Abs" and is_int(e):
            x = b[2][0]
            if e[1].numerator % 2 == 0:
                return power(x, e)
            if e[1] != -1:
                return mul(power(x, num(e[1] - 1)), b)
            return ("^", b, e)
        if name in ("Max", "Min", "floor", "ceiling", "log"):
            return ("^", b, e)
        raise Unsupported(f"a power of {name}")
    if tag == "pw":
        return piecewise([(power(v, e), c) for v, c in b[1]])
    raise Unsupported("a power of " + class_name(b))


def _no_log_exponent(e: Node) -> None:
    if _contains(e, lambda n: n[0] == "f" and n[1] == "log"):
        raise Unsupported("a logarithm in an exponent")


def _contains(e: Node, pred) -> bool:
    stack = [e]
    while stack:
        n = stack.pop()
        if pred(n):
            return True
        tag = n[0]
        if tag in ("+", "*", "and", "or"):
            stack.extend(n[1])
        elif tag == "^":
            stack.extend((n[1], n[2]))
        elif tag == "f":
            stack.extend(n[2])
        elif tag == "pw":
            for v, c in n[1]:
                stack.extend((v, c))
        elif tag == "r":
            stack.extend((n[2], n[3]))
        elif tag == "not":
            stack.append(n[1])
    return False


def _symbols(e: Node) -> bool:
    return _contains(e, lambda n: n[0] in ("s", "d"))


def _dummies(e: Node) -> bool:
    return _contains(e, lambda n: n[0] == "d")


def _is_number_expr(e: Node) -> bool:
    """A constant that is not a rational (``log(2)``): SymPy evaluates such things numerically."""
    return e[0] != "n" and not _symbols(e)


# ---- signs: what SymPy can and cannot prove ------------------------------------------------

def both_signs(d: Node) -> bool:
    """True when ``d`` surely takes both signs as its symbols vary over the reals, so that SymPy's
    (sound) assumptions cannot prove ``d >= 0``, ``d <= 0`` or ``d != 0``: some symbol occurs in it
    exactly once, as a plain factor of one term or an odd power of one (``x``, ``2*x*y``, ``x**3``,
    ``1/x``), or ``d`` is ``c + a*x**(2k)`` with ``a`` and ``c`` of opposite signs."""
    counts: dict[Node, int] = {}
    linear: set[Node] = set()

    def walk(n: Node, plain: bool) -> None:
        tag = n[0]
        if tag in ("s", "d"):
            counts[n] = counts.get(n, 0) + 1
            if plain:
                linear.add(n)
        elif tag == "+" or tag == "*":
            for a in n[1]:
                walk(a, plain)
        elif tag == "^":
            odd = n[1][0] in ("s", "d") and is_int(n[2]) and n[2][1].numerator % 2 != 0
            walk(n[1], plain and odd)
            walk(n[2], False)
        elif tag == "f":
            for a in n[2]:
                walk(a, False)
        elif tag == "pw":
            for v, c in n[1]:
                walk(v, False)
                walk(c, False)
        elif tag == "r":
            walk(n[2], False)
            walk(n[3], False)
        elif tag in ("and", "or"):
            for a in n[1]:
                walk(a, False)
        elif tag == "not":
            walk(n[1], False)

    walk(d, True)
    if any(counts[s] == 1 for s in linear):
        return True
    if d[0] == "+" and len(d[1]) == 2 and d[1][0][0] == "n":
        c, t = d[1][0][1], d[1][1]
        a, rest = as_coeff_mul(t)
        if rest[0] == "^" and rest[1][0] == "s" and is_int(rest[2]) and rest[2][1] != 0:
            return (a > 0) != (c > 0)
    return False


def decide(d: Node) -> Optional[int]:
    """The sign of ``d`` when SymPy knows it (a rational), None when SymPy surely does not."""
    if d[0] == "n":
        v = d[1]
        return (v > 0) - (v < 0)
    if both_signs(d):
        return None
    raise Unsupported("a comparison SymPy may decide from its assumptions")


# ---- functions ---------------------------------------------------------------------------

def max_min(name: str, args: list[Node]) -> Node:
    """``Max(*args)`` / ``Min(*args)``: nested ones of the same kind flattened, arguments SymPy can
    order removed, the rest in ``ordered`` order."""
    _check_expr(args)
    flat: list[Node] = []
    for a in args:
        if a[0] == "f" and a[1] == name:
            flat.extend(a[2])
        elif a[0] == "f" and a[1] in ("Max", "Min"):
            raise Unsupported("max inside min (or min inside max)")
        elif _is_number_expr(a):
            raise Unsupported("an irrational constant in max/min")
        else:
            flat.append(a)
    unique = list(dict.fromkeys(flat))
    kept: list[Node] = []
    for v in ordered(unique):
        keep = True
        for z in list(kept):
            s = decide(sub(v, z))
            if s is None:
                continue
            keep = False
            if (s >= 0) if name == "Max" else (s < 0):  # SymPy keeps the newer of two equal ones in Max
                kept.remove(z)
                kept.append(v)
            break
        if keep:
            kept.append(v)
    if len(kept) == 1:
        return kept[0]
    return ("f", name, tuple(ordered(kept)))


def _plain_factor(f: Node) -> bool:
    return f[0] == "s" or (f[0] == "^" and f[1][0] == "s" and is_int(f[2]))


def abs_(x: Node) -> Node:
    """``Abs(x)``."""
    _check_expr((x,))
    tag = x[0]
    if tag == "n":
        return num(abs(x[1]))
    if tag == "s":
        return ("f", "Abs", (x,))
    if tag == "*":
        known, unknown = [], []
        for f in x[1]:
            if f[0] == "n":
                known.append(num(abs(f[1])))
            elif f[0] == "s":
                unknown.append(f)
            elif f[0] == "^" and f[1][0] == "s" and is_int(f[2]):
                if f[2][1] % 2 == 0:
                    known.append(f)
                elif f[2][1] < 0:
                    unknown.append(f)
                else:
                    known.append(power(("f", "Abs", (f[1],)), f[2]))
            else:
                raise Unsupported("abs of a product of that")
        rest = ("f", "Abs", (_from_args("*", unknown, ONE),)) if unknown else ONE
        if unknown and len(unknown) == 1 and unknown[0][0] == "^":
            raise Unsupported("abs of a reciprocal")
        return mul(mul(*known), rest)
    if tag == "^" and x[1][0] == "s" and is_int(x[2]):
        if x[2][1] % 2 == 0:
            return x
        raise Unsupported("abs of an odd power")
    if tag == "+":
        if not both_signs(x) or _contains(x, lambda n: n[0] == "^"):
            raise Unsupported("abs of a sum SymPy may simplify")
        # signsimp: Abs(1 - x) is Abs(x - 1)
        return ("f", "Abs", (neg(x) if _could_extract_minus_sign(x) else x,))
    raise Unsupported("abs of " + class_name(x))


def sign_(x: Node) -> Node:
    """``sign(x)``."""
    _check_expr((x,))
    tag = x[0]
    if tag == "n":
        v = x[1]
        return num((v > 0) - (v < 0))
    if tag == "s":
        return ("f", "sign", (x,))
    if tag == "*":
        c, rest = as_coeff_mul(x)
        factors = rest[1] if rest[0] == "*" else (rest,)
        for f in factors:
            if not (_plain_factor(f) or (f[0] == "+" and both_signs(f))):
                raise Unsupported("sign of a product of that")
        s = (c > 0) - (c < 0)
        if c == 1:
            return ("f", "sign", (x,))
        return mul(num(s), ("f", "sign", (rest,)))
    if tag == "+" and both_signs(x):
        return ("f", "sign", (x,))
    raise Unsupported("sign of " + class_name(x))


def _has_rounding(e: Node) -> bool:
    return _contains(e, lambda n: n[0] == "f" and n[1] in ("floor", "ceiling", "sign"))


def floor_ceiling(name: str, x: Node) -> Node:
    """``floor(x)`` / ``ceiling(x)``: integer terms move out (``floor(x + 2)`` is ``floor(x) + 2``)."""
    _check_expr((x,))
    if x[0] == "n":
        v = x[1]
        return num(math.floor(v) if name == "floor" else math.ceil(v))
    if _is_number_expr(x) or _has_rounding(x) or _dummies(x):
        raise Unsupported(f"{name} of that")
    terms = x[1] if x[0] == "+" else (x,)
    ipart = Fraction(0)
    rest = []
    for t in terms:
        if t[0] == "n" and t[1].denominator == 1:
            ipart += t[1]
        elif _is_number_expr(t):
            raise Unsupported(f"{name} of a sum with an irrational constant")
        else:
            rest.append(t)
    inner = add(*rest) if len(rest) != len(terms) else x
    return add(num(ipart), ("f", name, (inner,)))


def exp_(x: Node) -> Node:
    _check_expr((x,))
    if _dummies(x):
        raise Unsupported("exp of a value from another scenario")
    if x[0] == "n":
        if x[1] == 0:
            return ONE
        if x[1] == 1:
            raise Unsupported("e")
        return ("f", "exp", (x,))
    if _contains(x, lambda n: n[0] == "f" and n[1] in ("log", "exp")) or _is_number_expr(x):
        raise Unsupported("exp of that")
    return ("f", "exp", (x,))


def log_(x: Node) -> Node:
    _check_expr((x,))
    if _dummies(x):
        raise Unsupported("log of a value from another scenario")
    if x[0] == "n":
        v = x[1]
        if v <= 0:
            raise Unsupported("log of zero or a negative number")
        if v == 1:
            return ZERO
        if v.numerator == 1:
            return neg(("f", "log", (num(v.denominator),)))
        return ("f", "log", (x,))
    if _contains(x, lambda n: n[0] == "f" and n[1] == "exp") or _is_number_expr(x):
        raise Unsupported("log of that")
    return ("f", "log", (x,))


# ---- comparisons and conditions ----------------------------------------------------------

_NEGATED = {"Eq": "Ne", "Ne": "Eq", "Lt": "Ge", "Le": "Gt", "Gt": "Le", "Ge": "Lt"}
_REVERSED = {"Eq": "Eq", "Ne": "Ne", "Lt": "Gt", "Le": "Ge", "Gt": "Lt", "Ge": "Le"}


def relation(op: str, lhs: Node, rhs: Node) -> Node:
    """``Eq``/``Ne``/``Lt``/``Le``/``Gt``/``Ge`` of two numbers: decided when SymPy decides it."""
    if is_bool(lhs) or is_bool(rhs):  # `check flag == true`: SymPy leaves Eq(flag == 1, True) as it is
        if op not in ("Eq", "Ne") or not (is_bool(lhs) and is_bool(rhs)):
            raise Unsupported("a comparison of a condition with a number")
        if lhs == rhs or (lhs[0] == "b" and rhs[0] == "b"):
            return TRUE if (lhs == rhs) == (op == "Eq") else FALSE
        return ("r", op, lhs, rhs)
    _check_expr((lhs, rhs))
    if _dummies(lhs) or _dummies(rhs):  # not known to be real: SymPy decides only Eq(x, x)
        if lhs != rhs and both_signs(sub(lhs, rhs)):
            return ("r", op, lhs, rhs)
        raise Unsupported("a comparison of values from other scenarios")
    if lhs == rhs:
        return TRUE if op in ("Eq", "Le", "Ge") else FALSE
    s = decide(sub(lhs, rhs))
    if s is None:
        return ("r", op, lhs, rhs)
    truth = {"Eq": s == 0, "Ne": s != 0, "Lt": s < 0, "Le": s <= 0, "Gt": s > 0, "Ge": s >= 0}[op]
    return TRUE if truth else FALSE


def _could_extract_minus_sign(e: Node) -> bool:
    tag = e[0]
    if tag == "n":
        return e[1] < 0
    if tag == "*":
        return e[1][0][0] == "n" and e[1][0][1] < 0
    if tag == "+":
        negative = sum(1 for t in e[1] if _could_extract_minus_sign(t))
        positive = len(e[1]) - negative
        if positive != negative:
            return negative > positive
        return sort_key(e) < sort_key(neg(e))  # x - 1 rather than 1 - x
    return False


def _number_valued(e: Node) -> bool:
    return not _symbols(e)


def _canonical(rel: Node) -> Node:
    """``Relational.canonical``."""
    op, lhs, rhs = rel[1], rel[2], rel[3]
    if _number_valued(rhs):
        pass
    elif _number_valued(lhs):
        op, lhs, rhs = _REVERSED[op], rhs, lhs
    elif ordered([lhs, rhs]) != [lhs, rhs]:
        op, lhs, rhs = _REVERSED[op], rhs, lhs
    if _could_extract_minus_sign(lhs):
        return ("r", _REVERSED[op], neg(lhs), neg(rhs))
    if not _number_valued(rhs) and _could_extract_minus_sign(rhs):
        first = ordered([lhs, neg(rhs)])[0]
        if first != lhs:
            return ("r", op, neg(rhs), neg(lhs))  # reversed, then reversedsign
    return ("r", op, lhs, rhs)


def _canonical_coeff(rel: Node) -> Node:
    """``-2*x + 1 < 0`` as ``x > 1/2``, as Piecewise makes its conditions."""
    rel = _canonical(rel)
    op, lhs, rhs = rel[1], rel[2], rel[3]
    if lhs[0] == "+" and lhs[1][0][0] == "n":
        b, rest = lhs[1][0], _from_args("+", list(lhs[1][1:]), ZERO)
    else:
        b, rest = ZERO, lhs
    m, lhs2 = as_coeff_mul(rest)
    if m == 0:
        raise Unsupported("a condition without a variable side")
    new_rhs = mul(sub(rhs, b), power(num(m), NEG_ONE)) if (b != ZERO or m != 1) else rhs
    if m < 0:
        return relation(_REVERSED[op], lhs2, new_rhs)
    return relation(op, lhs2, new_rhs)


def not_(c: Node) -> Node:
    if c[0] == "b":
        return FALSE if c[1] else TRUE
    if c[0] == "r":
        return ("r", _NEGATED[c[1]], c[2], c[3])
    if c[0] == "not":
        return c[1]
    return ("not", c)


def and_or(kind: str, args: list[Node]) -> Node:
    """``And``/``Or``: constants absorbed, nested ones flattened, duplicates dropped. (SymPy also
    sorts the operands and may simplify them further; the value of the condition is the same.)"""
    unit, zero = (TRUE, FALSE) if kind == "and" else (FALSE, TRUE)
    flat: list[Node] = []
    for a in args:
        if not is_bool(a):
            raise Unsupported("a number used as a condition")
        if a == zero:
            return zero
        if a == unit:
            continue
        flat.extend(a[1] if a[0] == kind else (a,))
    flat = list(dict.fromkeys(flat))
    if not flat:
        return unit
    if len(flat) == 1:
        return flat[0]
    try:
        flat = ordered(flat)
    except Unsupported:
        pass  # the order of the operands does not change the condition's value
    return (kind, tuple(flat))


def _condition(c: Node) -> Node:
    """A Piecewise condition as SymPy stores it: every comparison in canonical form."""
    if c[0] == "r":
        return _canonical_coeff(c)
    if c[0] in ("and", "or"):
        return and_or(c[0], [_condition(a) for a in c[1]])
    if c[0] == "not":
        raise Unsupported("not of a compound condition in an if")
    return c


def piecewise(pairs: list[tuple[Node, Node]]) -> Node:
    """``Piecewise(*pairs)`` with the evaluation ``if(...)`` meets: false branches dropped, a true
    one ends it, conditions canonical, a branch equal to the next merged."""
    out: list[tuple[Node, Node]] = []
    seen: list[Node] = []
    for value, cond in pairs:
        if cond == FALSE:
            continue
        if cond != TRUE:
            if not is_bool(cond):
                raise Unsupported("a number used as a condition")
            cond = _condition(cond)
            if cond == FALSE:
                continue
        if value[0] == "pw":
            for v, c in value[1]:
                if c in seen:
                    raise Unsupported("a nested if repeating a condition")
                if c == cond and c != TRUE:
                    raise Unsupported("a nested if with the same condition")
        if cond in seen or (cond[0] == "and" and any(c in seen for c in cond[1])):
            continue
        if cond[0] == "and":
            kept_args = []
            for c in cond[1]:
                if c[0] == "r":
                    if _canonical(not_(c)) in seen:
                        continue
                    if c[1] in ("Lt", "Gt") and ("r", {"Lt": "Le", "Gt": "Ge"}[c[1]], c[2], c[3]) in seen:
                        raise Unsupported("a strict condition after its weak form")
                kept_args.append(c)
            cond = and_or("and", kept_args)
        elif cond[0] == "r" and _canonical(not_(cond)) in seen:
            cond = TRUE
        if out and out[-1][0] == value:
            if cond == TRUE or out[-1][1] == TRUE:
                out[-1] = (value, TRUE)
            else:
                raise Unsupported("merging branches of an if")
            seen.append(cond)
            if cond == TRUE:
                break
            continue
        if out and out[-1][1] == cond:
            seen.append(cond)
            continue
        seen.append(cond)
        out.append((value, cond))
        if cond == TRUE:
            break
    if not out:
        raise Unsupported("an if without any branch")
    if len(out) == 1 and out[0][1] == TRUE:
        return out[0][0]
    return ("pw", tuple(out))
