"""The built-in functions: one record each, read by every generator.

A record says everything a generator needs about one function: its parameters (arity and the
values of omitted trailing arguments), its dimension rule, its numeric operation (Python floats and
numpy), its exact value over rationals, the bounds it maps a range's ends to, its domain errors, its
SymPy form (for closed forms and derivatives), its Excel function and its LaTeX. Dimensions, the
numeric program, the runtimes, the exact route, the diagnosis of a non-finite value, the symbolic
route, the report's LaTeX, the workbook's printer and the language server read :data:`FUNCTIONS`;
none of them names a built-in. ``tests/test_functions.py`` holds every record to every field.

Records carry plain callables and strings only. A generator passes in what it owns: dimension rules
get a checker (:class:`planner.language.dims.Typer` gives one), SymPy builders get the ``sympy``
module, LaTeX builders get the printer, numpy operations get ``numpy``. Nothing here imports SymPy or
numpy.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Optional


MAX_EXACT_EXPONENT = 10_000  # larger integer powers are not computed exactly


def _anywhere(*values):
    return None


class Builtin:
    """One built-in function. ``params`` names the parameters in order (for messages and the editor);
    the last ``len(defaults)`` are optional, with these values when omitted. ``variadic``: any number
    of arguments from ``lo`` on (the last parameter is ``...``), ``fold``: folded pairwise by the
    binary step. The fields:

    * ``doc``: one line, for the editor and the docs;
    * ``dims``: ``(checker, call, args) -> Type``, the dimension rule;
    * ``sympy``: ``(sympy, args) -> expression`` (args complete); None for an ``opaque`` function,
      kept as one SymPy node whose formula is ``expand`` ``(sympy, args)``;
    * ``latex``: ``(printer, call, values) -> (text, precedence name)``;
    * ``floats``: the operation on floats (the runtime's step of the function's name);
      ``numpy``: ``(numpy, approx) -> the operation on arrays``;
    * ``exact``: the value over Fractions, or None (no rational value);
    * ``domain``: ``floats -> None or (argument index, or None for the whole call; message)``;
    * ``interval``: ``(bounds, [Interval]) -> Interval``, what a range's ends become; None: unbounded;
    * ``lazy``: only the chosen branch is evaluated (``if``);
    * ``breaks``: where the function is not smooth, as the sensitivity names it: ``"kink"`` (its value
      follows one argument, or the argument's sign: max, min, abs), ``"step"`` (flat between whole
      steps: floor, ceil, round) or ``"branch"`` (its first argument, a condition, picks: ``if``);
    * ``derivative``: ``(sympy, node, args, index) -> d node / d args[index]`` for an opaque node
      without a formula (``irr``: implicit differentiation of its defining equation);
    * ``excel``: the workbook's own function for an opaque node; ``excel_args``: the printed
      arguments as that function takes them (IRR takes one array);
    * ``sheet``: the workbook's spelling of any other: Excel's function name, or ``texts -> formula``
      (``-INT(-(x))``); ``sheet_keeps``: the arguments written in the result's own unit, the rest in
      base units (``"all"``, ``"rest"``: all but the first, or their indexes; max keeps all, ``if`` its
      branches, PMT its money);
    * ``reserved``: no quantity may take the name (False for names people give their own figures,
      ``npv``, ``pv``: the call ``npv(...)`` is the function, the name ``npv`` the quantity);
    * ``examples``: ``(args, value)`` from published sources, tested on every route;
    * ``flows``: the cash flows, from this argument on, may be given by a range instead of one by one
      (``npv(rate, flow(m) for m in 1 month..36 month)``): the call is lowered with them listed.

    A plain class (not a data class): the table is made on every run, the warm ones too.
    """

    __slots__ = ("name", "params", "doc", "dims", "sympy", "latex", "floats", "numpy", "exact", "domain",
                 "interval", "defaults", "variadic", "fold", "lazy", "breaks", "excel", "excel_args", "expand",
                 "derivative", "reserved", "examples", "flows", "sheet", "sheet_keeps")

    def __init__(self, name: str, params: tuple, doc: str, dims: Callable, sympy: Optional[Callable],
                 latex: Callable, *, floats: Callable, numpy: Callable, exact: Optional[Callable] = None,
                 domain: Optional[Callable] = None, interval: Optional[Callable] = None, defaults: tuple = (),
                 variadic: bool = False, fold: bool = False, lazy: bool = False, breaks: Optional[str] = None,
                 excel: Optional[str] = None, excel_args: Optional[Callable] = None, expand: Optional[Callable] = None,
                 derivative: Optional[Callable] = None, reserved: bool = True, examples: tuple = (),
                 flows: Optional[int] = None, sheet: Optional[str | Callable] = None,
                 sheet_keeps: str | tuple = ()) -> None:
        self.name, self.params, self.doc, self.dims, self.sympy, self.latex = name, params, doc, dims, sympy, latex
        self.floats, self.numpy, self.exact = floats, numpy, exact
        self.domain = domain if domain is not None else _anywhere
        self.interval, self.defaults, self.variadic, self.lazy = interval, defaults, variadic, lazy
        self.breaks = breaks
        self.fold, self.excel, self.excel_args, self.expand, self.examples = fold, excel, excel_args, expand, examples
        self.derivative, self.reserved = derivative, reserved
        self.flows = flows  # cash flows from this argument on may be given by a range (planner.language.lower)
        self.sheet, self.sheet_keeps = sheet, sheet_keeps
        missing = [n for n in ("dims", "latex", "floats", "numpy") if not callable(getattr(self, n))]
        if (sympy is None) == (excel is None) or (excel is not None and expand is None and derivative is None):
            missing.append("sympy, or excel with expand or derivative")
        if (sheet is None) == (excel is None):
            missing.append("sheet (the workbook's spelling), or excel")
        if missing:  # loud at import: every generator reads every field
            raise TypeError(f"built-in `{name}` lacks {', '.join(missing)}")

    def __repr__(self) -> str:
        return f"Builtin({self.name}({self.signature}))"

    @property
    def lo(self) -> int:
        return len(self.params) - len(self.defaults) - (1 if self.variadic else 0)

    @property
    def hi(self) -> Optional[int]:
        return None if self.variadic else len(self.params)

    @property
    def step(self) -> str:
        """The runtime step this function compiles to."""
        return self.name

    @property
    def arity(self) -> Optional[int]:
        """Registers the step takes (None: any number, one or more)."""
        return 2 if self.fold else (None if self.variadic else len(self.params))

    @property
    def signature(self) -> str:
        if self.variadic:
            return ", ".join(self.params[:-1]) + ", ..."
        required = self.params[:self.lo]
        optional = [f"[{p}]" for p in self.params[self.lo:]]
        return ", ".join([*required, *optional])

    @property
    def opaque(self) -> bool:
        """Whether the symbolic route keeps the call as one node (printed as Excel's own function)."""
        return self.excel is not None


# ---- dimension rules -------------------------------------------------------------------------
# Each takes the checker `c`: c.num(arg, fn) types a numeric argument, c.plain(arg, t, fn) refuses
# one with units, c.same(fn, call, args, types) the common type of arguments that must share a
# dimension, c.branches(call, args) the type of an `if`, c.type(kind, dim, unit) builds a result.

def _same(c, e, args):
    return c.same(e.func, e, args, [c.num(a, e.func) for a in args])


def _keep(c, e, args):
    t = c.num(args[0], e.func)
    return c.type("num", t.dim, t.unit)


def _root(c, e, args):
    t = c.num(args[0], e.func)
    return c.type("num", None if t.dim is None else t.dim ** Fraction(1, 2))


def _plain(c, e, args):
    for a in args:
        c.plain(a, c.num(a, e.func), e.func)
    return c.NUM


def _if(c, e, args):
    return c.branches(e, args)


def _money(money: tuple[int, ...]):
    """Finance: every argument not in ``money`` is a plain number (a rate per period, a count of
    periods, a timing 0/1); the ``money`` arguments share one dimension, the result's."""

    def rule(c, e, args):
        for i, a in enumerate(args):
            if i not in money:
                c.plain(a, c.num(a, e.func), e.func)
        moneys = [a for i, a in enumerate(args) if i in money]
        return c.same(e.func, e, moneys, [c.num(a, e.func) for a in moneys])
    return rule


# ---- floats ----------------------------------------------------------------------------------

def approx(x: float) -> float:
    """``x`` rounded to 15 significant digits, as spreadsheets do before ``INT``/``CEILING``: so
    ``floor(log(1000, 10))`` is 3 (the float quotient is 2.9999999999999996)."""
    if x == 0.0 or x != x or x in (math.inf, -math.inf):
        return x
    scale = 10.0 ** (14 - math.floor(math.log10(abs(x))))
    try:
        rounded = round(x * scale) / scale
    except (OverflowError, ValueError):
        return x
    return rounded if math.isfinite(rounded) else x


def _f_floor(x):
    v = float(math.floor(approx(x)))
    return v if v else math.copysign(0.0, x)  # numpy's floor keeps the sign of zero: floor(-0.0) is -0.0


def _f_ceil(x):
    v = float(math.ceil(approx(x)))
    return v if v else math.copysign(0.0, x)  # ceil(-0.5) is -0.0, as numpy's


def _sign(a):
    return 1.0 if a > 0.0 else (-1.0 if a < 0.0 else 0.0)


def _f_round(x, digits):
    scale = 10.0 ** digits
    return _sign(x) * float(math.floor(approx(abs(x) * scale + 0.5))) / scale


def _np_round(np, approx_):
    def round_(x, digits):
        scale = np.power(10.0, digits)
        return np.sign(x) * np.floor(approx_(np.abs(x) * scale + 0.5)) / scale
    return round_


def _x_round(x, digits=Fraction(0)):
    if digits.denominator != 1 or abs(digits) > MAX_EXACT_EXPONENT:
        return None
    scale = Fraction(10) ** int(digits)
    return (1 if x > 0 else -1 if x < 0 else 0) * math.floor(abs(x) * scale + Fraction(1, 2)) / scale


# ---- finance, as Excel: money paid out is negative; `type` 1 pays at the start of each period ------
# PMT: pv*(1+r)^n + pmt*(1+r*type)*((1+r)^n - 1)/r + fv = 0 (at r = 0: pv + pmt*n + fv = 0).

class _Finance:
    """A finance function's two closed forms (at a rate of 0, and any other), over floats, Fractions,
    numpy arrays and SymPy alike: ``(nper, a, b)`` and ``(rate, nper, a, b, type, (1 + rate)^nper)``."""

    def __init__(self, at_zero, general):
        self.at_zero, self.general = at_zero, general

    def __call__(self, rate, nper, a, b=0, when=0):  # floats or Fractions
        if rate == 0:
            return self.at_zero(nper, a, b)
        return self.general(rate, nper, a, b, 1 if when else 0, (1 + rate) ** nper)

    def exact(self, rate, nper, *rest):
        """Over rationals, where the number of periods is a moderate whole number."""
        if nper.denominator != 1 or abs(nper) > MAX_EXACT_EXPONENT or rate == -1:
            return None
        try:
            return Fraction(self(rate, int(nper), *rest))
        except ZeroDivisionError:
            return None

    def numpy(self, np, approx_):
        def op(rate, nper, a, b, when):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                zero = np.asarray(rate) == 0
                safe = np.where(zero, 1.0, rate)
                w = np.where(np.asarray(when) != 0, 1.0, 0.0)
                general = self.general(safe, nper, a, b, w, np.power(1 + safe, nper))
                return np.where(zero, self.at_zero(nper, a, b), general)
        return op

    def expand(self, sp, args):
        rate, nper, a, b, when = args
        w = sp.Integer(1 if when else 0) if when.is_Number else sp.Piecewise((0, sp.Eq(when, 0)), (1, True))
        general = self.general(rate, nper, a, b, w, (1 + rate) ** nper)
        if rate.is_Number:
            return self.at_zero(nper, a, b) if rate == 0 else general
        return sp.Piecewise((self.at_zero(nper, a, b), sp.Eq(rate, 0)), (general, True))


# pv*(1+r)^n + pmt*(1+r*type)*((1+r)^n - 1)/r + fv = 0, solved for each (at r = 0: pv + pmt*n + fv = 0)
_PMT = _Finance(lambda n, pv, fv: -(pv + fv) / n,
                lambda r, n, pv, fv, w, g: -r * (pv * g + fv) / ((1 + r * w) * (g - 1)))
_PV = _Finance(lambda n, pmt, fv: -(pmt * n + fv),
               lambda r, n, pmt, fv, w, g: -(pmt * (1 + r * w) * (g - 1) / r + fv) / g)
_FV = _Finance(lambda n, pmt, pv: -(pv + pmt * n),
               lambda r, n, pmt, pv, w, g: -(pv * g + pmt * (1 + r * w) * (g - 1) / r))


def _rate_domain(rate, *values):
    return (0, "domain error: a rate of -100% or less per period") if rate <= -1 else None


def _finance_domain(rate, nper, *rest):
    if rate <= -1:
        return _rate_domain(rate)
    if nper == 0:
        return 1, "domain error: zero periods"
    return None


def _finance_latex(name):
    return lambda p, e, values: (r"\operatorname{" + name + "}" + p.args(values), "atom")


# ---- cash flows, as Excel: NPV discounts its first value one period, IRR's first value is today's ------

def _npv(rate, *values):
    return sum(v / (1 + rate) ** i for i, v in enumerate(values, 1))


def _np_npv(np, approx_):
    def op(rate, *values):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return sum(v / np.power(1 + rate, i) for i, v in enumerate(values, 1))
    return op


IRR_GRID = 1000  # (a multiple of 25) rates tried between -99.9% and 10,000% per period (equal steps of ln(1 + rate))


def irr_roots(values) -> list[float]:
    """The rates per period (above -100%) where the net present value of ``values`` (the first today,
    then one a period) is 0: each sign change of it over :data:`IRR_GRID` rates, refined by bisection
    to adjacent floats. Roots closer together than the grid's step are not told apart."""
    lo, hi = math.log(0.001), math.log(101.0)
    xs = [math.expm1(lo + (hi - lo) * k / IRR_GRID) for k in range(IRR_GRID + 1)]

    def npv(r):
        return sum(v / (1 + r) ** i for i, v in enumerate(values))

    roots, before = [], npv(xs[0])
    for a, b in zip(xs, xs[1:]):
        fa, fb = before, npv(b)
        before = fb
        if fa == 0:
            roots.append(a)
        elif fa * fb < 0:
            for _ in range(200):
                m = (a + b) / 2
                if m in (a, b):
                    break
                fm = npv(m)
                if fm == 0:
                    a = b = m
                    break
                a, b, fa = (a, m, fa) if fa * fm < 0 else (m, b, fm)
            roots.append(a if abs(npv(a)) <= abs(npv(b)) else b)
    return roots


def _irr(*values):
    roots = irr_roots(values)
    if len(roots) != 1:
        raise ValueError("no single rate")
    return roots[0]


def _irr_domain(*values):
    roots = irr_roots(values)
    if not roots:
        return None, "domain error: no rate makes the net present value of these cash flows 0"
    if len(roots) > 1:
        return None, ("domain error: several rates make the net present value of these cash flows 0: "
                      + ", ".join(f"{r * 100:.4g}%" for r in roots))
    return None


def _np_irr(np, approx_):
    grid = np.expm1(np.linspace(math.log(0.001), math.log(101.0), IRR_GRID + 1))

    def npv(flows, r):  # Horner's rule in the discount factor: v0 + d (v1 + d (v2 + ...))
        d = 1 / (1 + r)
        acc = flows[-1] * np.ones_like(d)
        for v in flows[-2::-1]:
            acc = acc * d + v
        return acc

    def block(flows, rates):  # flows: (values, points): irr_roots' search for each point at once
        f = npv(flows[:, :, None], rates[None, :])
        change = (f[:, :-1] * f[:, 1:] < 0) | (f[:, :-1] == 0)
        k = np.argmax(change, axis=1)
        return refine(flows, rates[k], rates[k + 1], np.take_along_axis(f, k[:, None], axis=1)[:, 0],
                      change.sum(axis=1) == 1)

    def refine(flows, a, b, fa, one):  # the root in [a, b] of each point with one: Newton's steps, halving
        # the bracket where a step leaves it, until no point moves by more than 1e-15 of itself (or 1e-18)
        x = (a + b) / 2
        for _ in range(200):
            d = 1 / (1 + x)
            f, slope = flows[-1] * np.ones_like(d), np.zeros_like(d)
            for v in flows[-2::-1]:  # the value and its slope in d (Horner's rule for both)
                slope = slope * d + f
                f = f * d + v
            left = fa * f <= 0
            b = np.where(left, x, b)
            a, fa = np.where(left, a, x), np.where(left, fa, f)
            step = x + f / (slope * d * d)  # d(npv)/d(rate) = -slope * d^2
            new = np.where(f == 0, x, np.where((step > a) & (step < b), step, (a + b) / 2))
            moved = np.abs(new - x) > 1e-15 * np.abs(x) + 1e-18
            x = new
            if not moved[one].any():
                break
        return np.where(one, x, np.nan)

    def search(flows):  # flows whose signs change at most once (zeros aside) have at most one root (Descartes'
        # rule in 1 / (1 + rate)): the grid's every 25th rate finds it as surely as every rate does
        signs = np.sign(flows)
        last = np.maximum.accumulate(np.where(signs != 0, np.arange(len(flows))[:, None], 0), axis=0)
        filled = np.take_along_axis(signs, last, axis=0)
        simple = (filled[1:] * filled[:-1] < 0).sum(axis=0) <= 1
        out = np.empty(flows.shape[1])
        for which, rates in ((simple, grid[::25]), (~simple, grid)):
            if which.any():
                some = flows[:, which]
                out[which] = np.concatenate([block(some[:, i:i + 2048], rates) for i in range(0, some.shape[1], 2048)])
        return out

    def op(*values):
        shape = np.broadcast_shapes(*(np.shape(v) for v in values))
        flows = np.stack([np.broadcast_to(np.asarray(v, dtype=float), shape).ravel() for v in values])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = search(flows)
        return out.reshape(shape) if shape else out[0]
    return op


def _sp_npv(sp, args):
    rate, values = args[0], args[1:]
    return sp.Add(*[v / (1 + rate) ** i for i, v in enumerate(values, 1)])


def _d_irr(sp, node, args, k):
    """d irr / d value k from sum v_i (1 + r)^-i = 0: -(1 + r)^-k / sum(-i v_i (1 + r)^(-i-1))."""
    slope = sp.Add(*[-i * v * (1 + node) ** (-i - 1) for i, v in enumerate(args)])
    return -(1 + node) ** (-k) / slope


def _choose(texts):
    """IRR takes one array: the values as one, ``CHOOSE({1,2,3},a,b,c)`` (Excel and LibreOffice)."""
    return [f"CHOOSE({{{','.join(str(i) for i in range(1, len(texts) + 1))}}},{','.join(texts)})"]


def _npv_dims(c, e, args):
    c.plain(args[0], c.num(args[0], e.func), e.func)
    return _same(c, e, args[1:])


def _irr_dims(c, e, args):
    _same(c, e, args)
    return c.NUM


# ---- LaTeX -----------------------------------------------------------------------------------

def _wrap(left, right):
    return lambda p, e, values: (left + p.flat(values[0]) + right, "atom")


def _head(head):
    return lambda p, e, values: (head + p.args(values), "atom")


def _latex_round(p, e, values):
    if len(values) == 1:
        return _wrap(r"\operatorname{round}\left(", r"\right)")(p, e, values)
    return _head(r"\operatorname{round}")(p, e, values)


def _latex_if(p, e, values):
    cases = p.cases(e)
    if cases is not None:
        return cases, "atom"
    return r"\operatorname{if}" + p.args(values), "atom"


# ---- SymPy -----------------------------------------------------------------------------------

def _sp_exp(sp, args):
    coeff, rest = args[0].as_coeff_Mul()
    if isinstance(rest, sp.log) and not rest.free_symbols and abs(coeff) > MAX_EXACT_EXPONENT:
        return sp.exp(args[0].evalf())  # SymPy would rewrite exp(n*ln(r)) as the exact r^n
    return sp.exp(args[0])


def _sp_round(sp, args):
    x, digits = args
    scale = sp.Integer(10) ** digits
    # Half away from zero, as Excel's ROUND.
    return sp.sign(x) * sp.floor(sp.Abs(x) * scale + sp.Rational(1, 2)) / scale


def _sp_if(sp, args):
    cond, a, b = args
    if cond is sp.true:
        return a
    if cond is sp.false:
        return b
    return sp.Piecewise((a, cond), (b, True))


# ---- domains ---------------------------------------------------------------------------------

def _log_domain(x, base=None):
    if x <= 0:
        return 0, f"domain error: logarithm of {'zero' if x == 0 else 'a negative number'}"
    if base is not None and (base <= 0 or base == 1):
        return 1, "domain error: logarithm base must be positive and not 1"
    return None


# ---- intervals (a range's bounds from its ends) -----------------------------------------------

def _iv_max(b, args):
    lo = None if all(a.lo is None for a in args) else max(a.lo for a in args if a.lo is not None)
    hi = None if any(a.hi is None for a in args) else max(a.hi for a in args)
    return b.Interval(lo, hi, b.merge(*args))


def _iv_min(b, args):
    lo = None if any(a.lo is None for a in args) else min(a.lo for a in args)
    hi = None if all(a.hi is None for a in args) else min(a.hi for a in args if a.hi is not None)
    return b.Interval(lo, hi, b.merge(*args))


def _iv_monotone(fn):
    def iv(b, args):
        if len(args) != 1:
            return b.Interval(None, None, b.merge(*args))
        return b.monotone(args[0], fn)
    return iv


def _iv_round(v):  # half away from zero, as planner's round: -1.5 -> -2
    half = Fraction(math.floor(abs(v) + Fraction(1, 2)))
    return half if v >= 0 else -half


def _max(a, b):  # NaN is left to numpy (Python's max would pick either side)
    if a != a or b != b:
        raise ArithmeticError("nan")
    return a if a > b else b


def _min(a, b):
    if a != a or b != b:
        raise ArithmeticError("nan")
    return a if a < b else b


_RECORDS = (
    Builtin("max", ("x", "y", "..."), "the largest of its arguments (all in one dimension)", _same,
            lambda sp, a: sp.Max(*a), _head(r"\max"),
            breaks="kink", floats=_max, numpy=lambda np, _: np.maximum,
            exact=lambda *a: max(a), interval=_iv_max, variadic=True, fold=True,
            sheet="MAX", sheet_keeps="all",
            examples=(((1, 3, 2), 3), ((-1, -4), -1))),
    Builtin("min", ("x", "y", "..."), "the smallest of its arguments (all in one dimension)", _same,
            lambda sp, a: sp.Min(*a), _head(r"\min"),
            breaks="kink", floats=_min, numpy=lambda np, _: np.minimum,
            exact=lambda *a: min(a), interval=_iv_min, variadic=True, fold=True,
            sheet="MIN", sheet_keeps="all",
            examples=(((1, 3, 2), 1), ((-1, -4), -4))),
    Builtin("abs", ("x",), "the absolute value, in the argument's unit", _keep,
            lambda sp, a: sp.Abs(a[0]), _wrap(r"\left|", r"\right|"),
            breaks="kink", floats=abs, numpy=lambda np, _: np.abs, exact=abs,
            sheet="ABS", sheet_keeps=(0,), examples=(((-2.5,), 2.5),)),
    Builtin("sqrt", ("x",), "the square root (of bytes squared: bytes)", _root,
            lambda sp, a: sp.sqrt(a[0]), _wrap(r"\sqrt{", "}"),
            floats=math.sqrt, numpy=lambda np, _: np.sqrt,
            sheet="SQRT",
            domain=lambda x: (0, "domain error: square root of a negative number") if x < 0 else None,
            examples=(((16,), 4),)),
    Builtin("exp", ("x",), "e to the power x (a plain number)", _plain,
            _sp_exp, lambda p, e, values: ("e^{" + p.flat(values[0]) + "}", "pow"),
            floats=math.exp, numpy=lambda np, _: np.exp,
            sheet="EXP", examples=(((0,), 1),)),
    Builtin("ln", ("x",), "the natural logarithm (of a plain number)", _plain,
            lambda sp, a: sp.log(a[0]), _head(r"\ln"),
            floats=math.log, numpy=lambda np, _: np.log, domain=_log_domain,
            sheet="LN", examples=(((1,), 0),)),
    Builtin("log", ("x", "base"), "the logarithm of x to a base: `log(x, 10)`", _plain,
            lambda sp, a: sp.log(a[0]) / sp.log(a[1]),
            lambda p, e, values: (r"\log_{" + p.flat(values[1]) + "}" + p.args(values[:1]), "atom"),
            floats=lambda x, base: math.log(x) / math.log(base),
            numpy=lambda np, _: lambda x, base: np.log(x) / np.log(base),
            domain=_log_domain, examples=(((1000, 10), 3),), sheet=lambda a: f"LN({a[0]})/LN({a[1]})"),
    Builtin("floor", ("x",), "the largest whole number not above x (Excel's INT)", _plain,
            lambda sp, a: sp.floor(a[0]), _wrap(r"\left\lfloor ", r" \right\rfloor"),
            breaks="step", floats=_f_floor, numpy=lambda np, approx_: lambda x: np.floor(approx_(x)),
            exact=lambda x: Fraction(math.floor(x)), interval=_iv_monotone(lambda v: Fraction(math.floor(v))),
            sheet="INT",
            examples=(((-2.5,), -3), ((2.5,), 2))),
    Builtin("ceil", ("x",), "the smallest whole number not below x", _plain,
            lambda sp, a: sp.ceiling(a[0]), _wrap(r"\left\lceil ", r" \right\rceil"),
            breaks="step", floats=_f_ceil, numpy=lambda np, approx_: lambda x: np.ceil(approx_(x)),
            exact=lambda x: Fraction(math.ceil(x)), interval=_iv_monotone(lambda v: Fraction(math.ceil(v))),
            sheet=lambda a: f"-INT(-({a[0]}))",
            examples=(((-2.5,), -2), ((2.5,), 3))),
    Builtin("round", ("x", "digits"), "x rounded half away from zero, as Excel's ROUND", _plain,
            _sp_round, _latex_round, breaks="step", floats=_f_round, numpy=_np_round, exact=_x_round,
            interval=_iv_monotone(_iv_round), defaults=(0,),
            sheet="ROUND",
            examples=(((2.5,), 3), ((-2.5,), -3), ((1.2345, 2), 1.23))),
    Builtin("if", ("condition", "then", "else"), "`then` where the condition holds, else `else`", _if,
            _sp_if, _latex_if, breaks="branch", floats=lambda c, a, b: a if c else b,
            numpy=lambda np, _: np.where, exact=lambda c, a, b: a if c else b,
            interval=lambda b, args: b.hull(args[1], args[2]), lazy=True,
            sheet="IF", sheet_keeps=(1, 2),
            examples=(((True, 1, 2), 1), ((False, 1, 2), 2))),
    Builtin("pmt", ("rate", "nper", "pv", "fv", "type"),
            "the payment per period of a loan or annuity, as Excel's PMT",
            _money((2, 3)), None, _finance_latex("PMT"),
            floats=_PMT, numpy=_PMT.numpy, exact=_PMT.exact, domain=_finance_domain,
            defaults=(0, 0), excel="PMT", sheet_keeps=(2, 3), reserved=False, expand=_PMT.expand,
            examples=(((Fraction(7, 1200), 48, 55000), -1317.04),   # the task's own figure
                      ((Fraction(8, 1200), 10, 10000), -1037.03),   # Microsoft's PMT example
                      ((Fraction(6, 1200), 216, 0, 50000), -129.08),  # Microsoft's PMT example: saving
                      ((0, 10, 1000), -100.0)),
            ),
    Builtin("pv", ("rate", "nper", "pmt", "fv", "type"),
            "the present value of a series of payments, as Excel's PV", _money((2, 3)), None,
            _finance_latex("PV"), floats=_PV, numpy=_PV.numpy, exact=_PV.exact,
            domain=_finance_domain, defaults=(0, 0), excel="PV", sheet_keeps=(2, 3), reserved=False, expand=_PV.expand,
            examples=(((Fraction(8, 1200), 240, 500, 0, 0), -59777.15),  # Microsoft's PV example
                      ((0, 10, -100), 1000.0)),
            ),
    Builtin("fv", ("rate", "nper", "pmt", "pv", "type"),
            "the future value of a series of payments, as Excel's FV", _money((2, 3)), None,
            _finance_latex("FV"), floats=_FV, numpy=_FV.numpy, exact=_FV.exact,
            domain=_finance_domain, defaults=(0, 0), excel="FV", sheet_keeps=(2, 3), reserved=False, expand=_FV.expand,
            examples=(((Fraction(6, 1200), 10, -200, -500, 1), 2581.40),  # Microsoft's FV example
                      ((Fraction(12, 1200), 12, -1000), 12682.50),        # Microsoft's FV example
                      ((Fraction(11, 1200), 35, -2000, 0, 1), 82846.25)),  # Microsoft's FV example
            ),
    Builtin("npv", ("rate", "value1", "..."),
            "the net present value of cash flows one period apart, the first discounted one period, as "
            "Excel's NPV", _npv_dims, None, _finance_latex("NPV"),
            floats=_npv, numpy=_np_npv, exact=lambda rate, *v: None if rate == -1 else Fraction(_npv(rate, *v)),
            domain=_rate_domain, variadic=True, excel="NPV", sheet_keeps="rest", reserved=False, expand=_sp_npv,
            examples=(((Fraction(1, 10), -10000, 3000, 4200, 6800), 1188.44),),  # Microsoft's NPV example
            flows=1),
    Builtin("irr", ("value0", "value1", "..."),
            "the rate per period at which cash flows (the first today, then one a period) have a net "
            "present value of 0, as Excel's IRR; no rate or several are an error", _irr_dims, None,
            _finance_latex("IRR"), floats=_irr, numpy=_np_irr, domain=_irr_domain, variadic=True,
            excel="IRR", reserved=False, excel_args=_choose, derivative=_d_irr,
            examples=(((-70000, 12000, 15000, 18000, 21000, 26000), 0.0866309480365316),),  # Microsoft: 8.7%
            flows=0),
)

FUNCTIONS: dict[str, Builtin] = {f.name: f for f in _RECORDS}

# name: (min args, max args or None, parameters for messages): what the analysis and editor read
BUILTINS: dict[str, tuple[int, Optional[int], str]] = {f.name: (f.lo, f.hi, f.signature) for f in _RECORDS}


def fill(f: Builtin, values: list, wrap: Callable[[Any], Any]) -> list:
    """The arguments with the omitted trailing ones filled from ``f.defaults``, each made the
    generator's own value by ``wrap`` (a register, a SymPy number, a Fraction)."""
    missing = len(f.params) - len(values)
    if f.variadic or missing <= 0:
        return list(values)
    return list(values) + [wrap(d) for d in f.defaults[len(f.defaults) - missing:]]
