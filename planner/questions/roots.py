"""One unknown: the roots of a condition in one input, and where it holds over the integers.

The mathematics under :mod:`planner.questions.solve`, on SymPy expressions already
written over inputs (:func:`inline`) with every other input replaced by its
exact value:

* :func:`pieces` splits ``max``/``min``/``abs``/``if`` into smooth branches
  plus their switch points; :func:`exact_roots` finds every real root of
  every piece exactly (``Poly.real_roots``) when the pieces are rational in
  the unknown, so no root is missed and none is picked silently (otherwise
  the numeric route's answer stands: :mod:`planner.questions.fast`);
* :func:`integer_runs` (exact, from the change points) says on which integer
  ranges a condition holds.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Optional

import sympy as sp

from ..compute.evaluation import Plan
from ..compute.symbolic import AGGREGATES, closed_forms, expand_aggregates, inline_inputs, rational
from .ranges import Domain

MAX_PIECES = 256  # branch combinations of max/min/abs/if considered exactly
MAX_DEGREE = 64  # larger polynomials go to the numeric path
DIGITS = 60  # precision for algebraic roots


def inline(plan: Plan, expr: sp.Basic) -> sp.Basic:
    """``expr`` written over inputs only (:func:`planner.compute.symbolic.inline_inputs`), with its
    sums over ranges in closed form where SymPy finds one (:func:`planner.compute.symbolic.closed_forms`)."""
    return closed_forms(inline_inputs(plan.model, plan.symbols, plan.exprs, expr))


def relations(cond: sp.Basic) -> list[sp.Basic]:
    """``lhs - rhs`` of every comparison inside a condition."""
    out = []
    for node in sp.preorder_traversal(cond):
        if isinstance(node, sp.core.relational.Relational):
            out.append(node.lhs - node.rhs)
    return out


KINKS = (sp.Max, sp.Min, sp.Abs, sp.Piecewise)  # functions with branches


_STEPS = (sp.floor, sp.ceiling, sp.sign, sp.Heaviside)


def pieces(expr: sp.Basic, x: sp.Symbol, limit: int = MAX_PIECES) -> Optional[list[sp.Basic]]:
    """Smooth expressions whose real roots include every root and every
    branch switch of ``expr`` (max/min/abs/if split into branches). None when
    ``expr`` has steps (floor, ceil) in ``x`` or too many branches."""
    todo, out = [expr], []
    while todo:
        e = todo.pop()
        if any(isinstance(n, _STEPS + AGGREGATES) and n.has(x) for n in sp.preorder_traversal(e)):
            return None  # steps, or a sum over a range with no closed form: the numeric path
        kink = next((n for n in sp.preorder_traversal(e) if isinstance(n, KINKS) and n.has(x)), None)
        if kink is None:
            out.append(e)
            continue
        if isinstance(kink, (sp.Max, sp.Min)):
            args = list(kink.args)
            todo += [e.xreplace({kink: a}) for a in args]
            todo += [args[i] - args[j] for i in range(len(args)) for j in range(i + 1, len(args))]
        elif isinstance(kink, sp.Abs):
            u = kink.args[0]
            todo += [e.xreplace({kink: u}), e.xreplace({kink: -u}), u]
        else:
            for value, c in kink.args:
                todo.append(e.xreplace({kink: value}))
                if c not in (sp.true, sp.false):
                    todo += relations(c)
        if len(todo) + len(out) > limit:
            return None
    return out


def exact_roots(expr: sp.Basic, x: sp.Symbol) -> Optional[list[sp.Basic]]:
    """Every real root of every piece of ``expr`` and of its denominators, exactly;
    None when ``expr`` is not piecewise rational in ``x`` with rational coefficients
    (:func:`degree_of` tells the degree of the polynomial a root solves)."""
    parts = pieces(expr, x)
    if parts is None:
        return None
    found: list[sp.Basic] = []
    for piece in parts:
        num, den = sp.fraction(sp.together(piece))
        for part in (num, den):
            if not part.has(x):
                continue
            try:
                poly = sp.Poly(part, x)
            except sp.PolynomialError:
                return None
            if poly.domain not in (sp.ZZ, sp.QQ) or poly.degree() > MAX_DEGREE:
                return None
            if not poly.is_zero:
                found.extend(poly.real_roots())
    return dedupe(found)


def dedupe(values: list[sp.Basic]) -> list[sp.Basic]:
    keyed = sorted(((sp.Float(v.evalf(DIGITS), DIGITS), v) for v in values), key=lambda t: t[0])
    out: list[sp.Basic] = []
    last = None
    for approx, v in keyed:
        if last is not None and abs(approx - last) <= sp.Float(10) ** (-40) * max(1, abs(approx)):
            continue
        out.append(v)
        last = approx
    return out


def value_at(expr: sp.Basic, x: sp.Symbol, value: sp.Basic) -> sp.Basic:
    """``expr`` at ``x = value``: exact for rationals, 60 digits for algebraic numbers."""
    if isinstance(value, sp.Rational):
        return expand_aggregates(expr.xreplace({x: value}))
    r = expand_aggregates(expr.xreplace({x: sp.Float(value.evalf(DIGITS), DIGITS)}))
    return r if r in (sp.true, sp.false) else r.evalf(DIGITS - 10)


ROOT_TOL = 1e-40  # an algebraic candidate is a root when |f| <= ROOT_TOL * (size of f's terms) at 60 digits


def residual(expr: sp.Basic, x: sp.Symbol, value: sp.Basic) -> tuple[float, float]:
    """``expr`` at ``x = value`` at :data:`DIGITS` digits, and the size of its terms there.

    The size bounds what rounding can leave in the result: sums add their
    terms' sizes (``|a| + |b|``, however much ``a + b`` cancels), products
    multiply them, and a power scales the base's relative size by its exponent.
    A genuine root leaves ``|value| <= size * 1e-58`` or so, whatever the sides
    are worth there (both are about zero at ``profit = 0``). Walked with a
    stack, not recursion. Both results are floats (``inf``/``nan`` when the
    expression has no value there).
    """
    import mpmath

    with mpmath.workdps(DIGITS):
        at = _mp(sp.Float(value.evalf(DIGITS), DIGITS))
        done: dict[sp.Basic, tuple] = {}
        stack = [expr]
        while stack:
            node = stack[-1]
            if node in done:
                stack.pop()
                continue
            kids = _terms(node)
            todo = [k for k in kids if k not in done]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            try:
                done[node] = _combine(node, [done[k] for k in kids], x, at, value)
            except (TypeError, ValueError, ZeroDivisionError):
                done[node] = (mpmath.nan, mpmath.inf)
        v, size = done[expr]
        return float(v), float(size)


def _mp(v: sp.Basic):
    import mpmath

    if isinstance(v, sp.Rational):
        return mpmath.mpf(v.p) / v.q
    return mpmath.mpf(sp.Float(v, DIGITS)._mpf_)


def _terms(node: sp.Basic) -> list[sp.Basic]:
    if isinstance(node, sp.Piecewise):
        return [pair.expr for pair in node.args]
    return [a for a in node.args if isinstance(a, sp.Expr)]


def _combine(node: sp.Basic, kids: list[tuple], x: sp.Symbol, at, value: sp.Basic) -> tuple:
    """(value, size) of one node from its terms'."""
    import mpmath

    if node == x:
        return at, abs(at)
    if isinstance(node, sp.Rational):
        v = _mp(node)
        return v, abs(v)
    if isinstance(node, sp.Add):
        return mpmath.fsum(k[0] for k in kids), mpmath.fsum(k[1] for k in kids)
    if isinstance(node, sp.Mul):
        return mpmath.fprod(k[0] for k in kids), mpmath.fprod(k[1] for k in kids)
    if isinstance(node, sp.Pow) and isinstance(node.exp, sp.Rational) and node.exp.q == 1:
        (b, size), e = kids[0], int(node.exp)
        v = b ** e
        if b == 0:
            return v, (size ** e if e > 0 else mpmath.inf)
        return v, abs(v) * (size / abs(b)) ** abs(e)
    if isinstance(node, (sp.Max, sp.Min)):
        pick = max if isinstance(node, sp.Max) else min
        return pick(k[0] for k in kids), max(k[1] for k in kids)
    if isinstance(node, sp.Abs):
        return abs(kids[0][0]), kids[0][1]
    # anything else (a branch, a function of constants): its value, and its terms' sizes
    v = node.xreplace({x: sp.Float(value.evalf(DIGITS), DIGITS)}).evalf(DIGITS)
    if not v.is_real:
        raise TypeError(v)
    v = _mp(v)
    return v, max([abs(v)] + [k[1] for k in kids])


def degree_of(value: sp.Basic, x: sp.Symbol) -> int:
    """The degree of the polynomial over the rationals that ``value`` solves
    (1 for a rational, the factor's degree for a CRootOf, else its minimal polynomial's)."""
    if isinstance(value, sp.Rational):
        return 1
    if isinstance(value, sp.CRootOf):
        return value.poly.degree()
    try:
        return sp.Poly(sp.minimal_polynomial(value, x), x).degree()
    except (NotImplementedError, sp.PolynomialError, ValueError):
        return 0


def holds_at(cond: sp.Basic, x: sp.Symbol, value: sp.Basic) -> Optional[bool]:
    """Whether ``cond`` holds at ``x = value``; None when it has no truth value there (``1/0 >= 0``)."""
    try:
        r = value_at(cond, x, value)
    except TypeError:  # SymPy refuses to compare zoo or nan
        return None
    if r is sp.true or r is sp.false:
        return bool(r)
    try:
        return bool(r.evalf(DIGITS - 10)) if r.is_Boolean else None
    except TypeError:
        return None


def to_float(v: sp.Basic) -> float:
    try:
        return float(v)
    except TypeError:
        return float("nan")


Interval = tuple[Optional[sp.Basic], Optional[sp.Basic]]  # ends in base units; None: unbounded


def zero_intervals(f: sp.Basic, x: sp.Symbol, dom: Domain, candidates: list[sp.Basic]) -> list[Interval]:
    """The stretches of the domain on which ``f`` is zero throughout.

    ``candidates`` are every root of every piece and every branch switch
    (:func:`exact_roots`): between two neighbouring ones ``f`` is a single
    rational function without roots, so it is either zero on the whole
    stretch or nowhere on it, and one exact evaluation inside decides.
    """
    inside = [c for c in candidates if dom.contains(c)]
    ends = [None if dom.lo is None else rational(dom.lo)] + inside + [None if dom.hi is None else rational(dom.hi)]
    out: list[Interval] = []
    for a, b in zip(ends, ends[1:]):
        if a is not None and b is not None and a == b:
            continue
        if a is None or b is None:
            t = (sp.Integer(0) if b is None else b - 1) if a is None else a + 1
        else:
            t = sp.Rational(sp.Float((a + b).evalf(DIGITS), DIGITS)) / 2
        if value_at(f, x, t) != 0:
            continue
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def change_points(cond: sp.Basic, x: sp.Symbol) -> Optional[list[sp.Basic]]:
    out: list[sp.Basic] = []
    for rel in relations(cond):
        if not rel.has(x):
            continue
        roots = exact_roots(rel, x)
        if roots is None:
            return None
        out.extend(roots)
    return dedupe(out)


Run = tuple[Optional[int], Optional[int], bool]  # first, last (None: unbounded), holds


def integer_runs(holds: Callable[[int], bool], cands: list[sp.Basic], lo, hi) -> list[Run]:
    """Where the condition holds over the integer domain, from its change points."""
    pts: set[int] = set()
    for c in cands:
        f = int(sp.floor(c))
        pts.update((f - 1, f, f + 1, f + 2))
    if lo is not None:
        pts.add(lo)
    if hi is not None:
        pts.add(hi)
    if not pts:
        pts.add(0)
    if lo is None:
        pts.add(min(pts) - 1)
    if hi is None:
        pts.add(max(pts) + 1)
    pts = {p for p in pts if (lo is None or p >= lo) and (hi is None or p <= hi)}
    test = sorted(pts)
    full = []
    for a, b in zip(test, test[1:] + [None]):
        full.append(a)
        if b is not None and b - a >= 2:
            full.append(a + 1)
    full = sorted(set(full))
    truth = [holds(p) for p in full]
    runs: list[Run] = []
    for i, (p, t) in enumerate(zip(full, truth)):
        start = None if (i == 0 and lo is None) else p
        end = (full[i + 1] - 1) if i + 1 < len(full) else hi
        if runs and runs[-1][2] == t:
            runs[-1] = (runs[-1][0], end, t)
        else:
            runs.append((start, end, t))
    return runs


def exact_number(v) -> sp.Basic:
    if isinstance(v, bool):
        return sp.Integer(int(v))
    return rational(Fraction(v))


def tidy(e: sp.Basic) -> sp.Basic:
    """A readable form: positive numerator and denominator where SymPy allows."""
    e = sp.cancel(e)
    num, den = sp.fraction(e)
    if num.could_extract_minus_sign() and den.could_extract_minus_sign():
        num, den = -num, -den
    return sp.factor_terms(num) / sp.factor_terms(den)


# ---- closed forms over the other inputs ------------------------------------------------

FORM_OPS = 2000  # a piece larger than this (SymPy's count_ops) gets no closed form
FORM_BRANCHES = 8  # combinations of `if`/max/min branches that do not depend on the unknown, per piece
FORM_SECONDS = 1.0  # CPU budget of one question's closed-form search; then it stops, and the notes say so


class FormBudget:
    """The bounded budget of a closed-form search: sizes checked before each SymPy step
    (deterministic) and, as a last guard, CPU time checked between steps."""

    def __init__(self, seconds: Optional[float] = None) -> None:
        import time

        self.seconds = FORM_SECONDS if seconds is None else seconds
        self._clock = time.process_time
        self.deadline = self._clock() + self.seconds
        self.spent: Optional[str] = None  # why the search stopped early

    def left(self) -> bool:
        if self.spent is None and self._clock() > self.deadline:
            self.spent = f"more than {self.seconds:g} s of search"
        return self.spent is None


def root_forms(exprs: list[sp.Basic], x: sp.Symbol, decide: Callable[[sp.Basic], Optional[bool]],
                 budget: FormBudget) -> list[sp.Basic]:
    """Candidate closed forms of the roots of ``exprs`` in ``x``, over the other inputs.

    Each expression is split into smooth pieces (:func:`pieces`); a piece's
    ``if``/``max``/``min`` branches that do not depend on ``x`` are resolved
    one combination at a time (conditions ``decide`` settles from the inputs'
    declared domains are not branched on: an unreachable branch is dropped),
    so every combination is a plain rational function of ``x``. A numerator
    of degree 1 is solved directly (``-c0 / c1``), of degree 2 by
    ``sympy.roots``; a piece where ``x`` occurs once by ``solve``. Each root is
    put in one canonical form (:func:`tidy`: ``cancel``, so the same
    whatever route led to it), and the branches are put back together as one
    ``Piecewise`` over their conditions: one formula, whatever the scenario.
    Never ``simplify``: its cost has no bound on real plans (seconds for one
    Piecewise). Stops when ``budget`` is spent (``budget.spent`` says why).
    """
    forms: list[sp.Basic] = []
    for e in exprs:
        for piece in pieces(e, x) or []:
            if not budget.left():
                return forms
            if sp.count_ops(piece) > FORM_OPS:
                budget.spent = budget.spent or f"a formula over {FORM_OPS} operations"
                continue
            branches = _branches(piece, x, decide)
            if branches is None:
                budget.spent = budget.spent or f"more than {FORM_BRANCHES} combinations of branches"
                continue
            found: list[tuple[tuple, list[sp.Basic]]] = []
            for assumed, branch in branches:
                if not budget.left():
                    return forms
                found.append((assumed, _roots_of(branch, x)))
            forms.extend(_join(found))
    return [f for f in forms if not f.has(x)]


def _roots_of(piece: sp.Basic, x: sp.Symbol) -> list[sp.Basic]:
    num, _ = sp.fraction(sp.together(piece))
    try:
        poly = sp.Poly(num, x)
        if poly.degree() == 1:
            c1, c0 = poly.all_coeffs()
            return [tidy(-c0 / c1)]
        if poly.degree() == 2:
            return [tidy(r) for r in sp.roots(poly, multiple=True)]
    except sp.PolynomialError:
        pass
    exponential = exponential_roots(piece, x)
    if exponential is not None:
        return exponential
    if piece.count(x) == 1:
        try:
            return [tidy(r) for r in sp.solve(piece, x, check=False, simplify=False)]
        except (NotImplementedError, ValueError, TypeError):
            pass
    return []


def exponential_roots(expr: sp.Basic, x: sp.Symbol) -> Optional[list[sp.Basic]]:
    """Roots of an expression in which ``x`` appears only in exponents ``b**(a*x + c)`` of one base
    ``b`` (a geometric sum in closed form: ``S*(q - q**(n + 1))/(1 - q) = P``): with ``u = b**(g*x)``
    it is a polynomial of degree at most 2 in ``u``, so ``x = log(u)/(g*log(b))``. None otherwise."""
    pows = [n for n in sp.preorder_traversal(expr) if isinstance(n, sp.Pow) and n.exp.has(x)]
    if not pows or any(p.base.has(x) for p in pows) or len({p.base for p in pows}) != 1:
        return None
    base = pows[0].base
    slopes = []
    for p in pows:
        try:
            poly = sp.Poly(p.exp, x)
        except sp.PolynomialError:
            return None
        if poly.degree() != 1 or not poly.LC().is_Rational:
            return None
        slopes.append(poly.LC())
    g = sp.gcd_list(slopes) if len(slopes) > 1 else slopes[0]
    u = sp.Dummy("u", positive=True)
    replaced = expr.xreplace({p: base ** (p.exp - sp.Poly(p.exp, x).LC() * x) * u ** (sp.Poly(p.exp, x).LC() / g)
                              for p in pows})
    if replaced.has(x):
        return None
    num, _ = sp.fraction(sp.together(replaced))
    try:
        poly = sp.Poly(num, u)
    except sp.PolynomialError:
        return None
    if not 1 <= poly.degree() <= 2:
        return None
    return [tidy(sp.log(r) / (g * sp.log(base))) for r in sp.roots(poly, multiple=True)]


def _branches(e: sp.Basic, x: sp.Symbol, decide) -> Optional[list[tuple[tuple, sp.Basic]]]:
    """``e`` with each ``Piecewise`` that does not involve ``x`` resolved: ``(conditions, expression)``
    per combination of conditions (true first), None past :data:`FORM_BRANCHES`."""
    out: list[tuple[tuple, sp.Basic]] = []
    todo: list[tuple[tuple, sp.Basic]] = [((), e)]
    while todo:
        assumed, e = todo.pop(0)
        pw = next((n for n in sp.preorder_traversal(e) if isinstance(n, sp.Piecewise) and not n.has(x)), None)
        if pw is None:
            out.append((assumed, e))
            continue
        cond = next(c for _, c in pw.args if c is not sp.true)
        known = decide(cond)
        for truth in ((True, False) if known is None else (known,)):
            m = {cond: sp.true if truth else sp.false}
            if isinstance(cond, sp.core.relational.Relational):
                m[cond.negated] = sp.false if truth else sp.true
            todo.append((assumed + (((cond, truth),) if known is None else ()), e.xreplace(m)))
        if len(todo) + len(out) > FORM_BRANCHES:
            return None
    return out


def _join(found: list[tuple[tuple, list[sp.Basic]]]) -> list[sp.Basic]:
    """The roots of each branch combination as formulas over all of them: the i-th root of
    every combination in one ``Piecewise`` (when all have as many roots), else each combination's
    roots alone, ``nan`` elsewhere."""
    if len(found) == 1:
        return found[0][1]
    counts = {len(roots) for _, roots in found}
    if len(counts) == 1:
        return [_piecewise([(assumed, roots[i]) for assumed, roots in found]) for i in range(counts.pop())]
    return [_piecewise([(assumed, r), ((), sp.nan)]) for assumed, roots in found for r in roots]


def _piecewise(branches: list[tuple[tuple, sp.Basic]]) -> sp.Basic:
    """One formula from branches under conditions (``(condition, truth)`` pairs, in order)."""
    if all(v == branches[0][1] for _, v in branches):
        return branches[0][1]
    args = []
    for i, (assumed, value) in enumerate(branches):
        if i == len(branches) - 1:
            args.append((value, sp.true))
        else:
            cond = sp.And(*[c if truth else sp.Not(c) for c, truth in assumed])
            args.append((value, cond))
    return sp.Piecewise(*args)
