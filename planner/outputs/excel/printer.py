"""SymPy to Excel formulas: one small method per node type, plus a rename table.

In the shape of SymPy's ``printing/octave.py``: a :class:`CodePrinter`
subclass with a table of function names and a ``_print_<Class>`` method per
construct. It is strict: a node without a method here raises
:class:`UnsupportedFormula` (a silently wrong workbook is worse than none).

Excel's grammar differs from Python's where it matters:

* unary minus binds tighter than ``^`` (``=-2^2`` is 4), and ``^`` is
  left-associative (``=2^3^2`` is 64), so negations and powers are
  parenthesised whenever they are operands;
* ``TRUE = 1`` is FALSE in Excel (TRUE in LibreOffice), so a boolean
  quantity, which :mod:`planner.compute.symbolic` writes as ``Eq(b, 1)``, prints as
  the bare cell or name;
* only functions both Excel and LibreOffice Calc 7.4 know: ``INT`` for
  floor, ``-INT(-(x))`` for ceiling (not ``CEILING.MATH``), ``LN``, ``EXP``,
  ``SQRT``, ``ABS``, ``SIGN``, ``MOD``, ``MAX``, ``MIN``, ``IF``, ``AND``,
  ``OR``, ``NOT``; no ``LET`` or ``LAMBDA``;
* a power with a variable exponent is 0 where it falls below the smallest
  double (``IF(n*LN(0.5)<-708,0,0.5^n)``): numpy gives 0 there,
  LibreOffice's ``^`` gives ``#NUM!``;
* numeric literals are exact to 15 significant digits (Excel's precision);
  other rationals are written as a quotient (``1/3``).

:func:`formula` adds the 8,192-character limit: a formula that is too long
has its largest subexpressions moved into helper cells (through a callback
the workbook writer provides) until it fits.
"""

from __future__ import annotations

import functools

from collections import ChainMap

from fractions import Fraction
from typing import Callable, Iterable, Mapping, Optional

import sympy as sp
from sympy.concrete.expr_with_intlimits import ExprWithIntLimits
from sympy.printing.codeprinter import CodePrinter
from sympy.printing.str import StrPrinter

from ...language.errors import PlanError

LIMIT = 8192  # characters in a cell formula, the leading "=" included
MAX_NESTING = 64  # levels of nested function calls
MAX_ARGS = 255  # arguments of one function call
DIGITS = 15  # significant digits Excel keeps in a number

# Excel precedence levels, loosest first (for deciding parentheses).
CMP, ADD, NEG, MUL, POW, ATOM = 10, 20, 30, 40, 50, 60

_FUNCTIONS = {
    "Abs": "ABS",
    "sign": "SIGN",
    "log": "LN",
    "exp": "EXP",
    "floor": "INT",
    "Max": "MAX",
    "Min": "MIN",
    "Mod": "MOD",
}
_RELATIONS = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


MAX_PRINTED = 2_000_000  # characters of one printed formula, helper cells included, before it is split
# Helper cells one aggregate (with the aggregates nested in it) may write: each costs about 0.3 ms to
# write and 5 KB to hold, so 100,000 is half a minute; nested ranges allow 1,000,000 terms (hours).
MAX_TERM_CELLS = 100_000


class Scaled(str):
    """A reference in base units written as a conversion of a display-unit cell, ``(horizon*2628000)``.

    The text is the conversion (what the printer writes for a symbol when the conversion stays in
    text); ``cell`` and ``scale`` say what it is made of (base value = cell * scale), so that
    :func:`formula` can write the conversion into the SymPy expression instead, where SymPy cancels
    it against the plan's own factors: ``horizon / (1 month)`` prints ``horizon``, not
    ``(horizon*2628000)/2628000``.
    """

    def __new__(cls, text: str, cell: str, scale: Fraction):
        obj = super().__new__(cls, text)
        obj.cell, obj.scale = cell, scale
        return obj


class CellValue(sp.Dummy):
    """A quantity as its cell holds it, in its display unit: ``base`` is ``scale * cell``. Its value is
    ``env[base] / scale`` (see :meth:`value`)."""

    def __new__(cls, base: sp.Symbol, scale: Fraction):
        obj = super().__new__(cls, base.name, **base.assumptions0)
        obj.base, obj.scale = base, scale
        return obj

    def value(self, env: Mapping):
        return env[self.base] / (self.scale.numerator / self.scale.denominator)

    def _sympystr(self, printer) -> str:
        return self.name


@functools.lru_cache(maxsize=4096)  # one per quantity and unit: SymPy's caches see the same symbol
def _cell(base: sp.Symbol, scale: Fraction) -> CellValue:
    return CellValue(base, scale)


def in_display(expr: sp.Basic, refs: Mapping, helper_refs: Optional[Mapping] = None,
               scale: Fraction = Fraction(1)) -> tuple:
    """``expr / scale`` over the cells as they hold their figures (display units), where the references
    are :class:`Scaled` conversions: each base-unit symbol becomes ``scale * cell``, and SymPy's own
    evaluation cancels the factors that meet their inverse (exact: the factors are Rationals). A
    coefficient in front of a sum moves into its term, so the term is in the unit of the figure. With
    nothing to cancel (no conversion, no sum) the scale is left to write once, ``(x+y)*1000``.

    Returns the expression, the references with the cells added, and the scale left to write (1, or
    ``scale`` for a condition, which has no unit)."""
    swap, cells = {}, {}
    for s in _free_symbols(expr):
        r = refs.get(s)
        if isinstance(r, Scaled) and r.scale != 1:
            c = swap[s] = _cell(s, r.scale)
            cells[c] = r.cell
    if swap:
        expr = expr.xreplace({s: c * sp.Rational(c.scale.numerator, c.scale.denominator) for s, c in swap.items()})
        refs = ChainMap(cells, refs)
        if helper_refs is not None:
            helper_refs = ChainMap({c: getattr(helper_refs.get(s), "cell", refs[c]) for s, c in swap.items()},
                                   helper_refs)
    if scale != 1 and isinstance(expr, sp.Expr) and (swap or expr.has(sp.Sum)):  # something to cancel
        expr = _into_sums(expr / sp.Rational(scale.numerator, scale.denominator))
        scale = Fraction(1)
    return expr, refs, helper_refs, scale


@functools.lru_cache(maxsize=16384)  # the same expressions come back for each term and table row
def _free_symbols(expr: sp.Basic) -> frozenset:
    return frozenset(expr.free_symbols)


def _into_sums(e: sp.Basic) -> sp.Basic:
    """``c * Sum(f)`` as ``Sum(c * f)`` for a Rational ``c``, and likewise a range's max, min or first for
    a positive ``c`` (which keeps their order): the sum's row of terms is in the figure's unit."""
    from ...compute.symbolic import RangeFirst, RangeMax, RangeMin

    def moves(m) -> bool:
        if not (m.is_Mul and len(m.args) == 2 and m.args[0].is_Rational):
            return False
        agg = m.args[1]
        return isinstance(agg, sp.Sum) or isinstance(agg, (RangeMax, RangeMin, RangeFirst)) and m.args[0] > 0

    def moved(m):
        c, agg = m.args
        if isinstance(agg, RangeFirst):  # the value where the condition holds, scaled
            (value, cond), *rest = agg.function.args
            return type(agg)(sp.Piecewise((c * value, cond), *rest), *agg.limits)
        return type(agg)(c * agg.function, *agg.limits)

    if not e.has(sp.Sum, RangeMax, RangeMin, RangeFirst):
        return e
    return e.replace(moves, moved)


from .generator import FormulaTooLong, UnsupportedFormula  # noqa: E402  (one family of export errors)


# The value of a term cell outside its range, for its cached result ("" for MAX/MIN: no number).
_IDENTITY_VALUE = {"0": sp.Integer(0), "1": sp.Integer(1)}


class ExcelPrinter(CodePrinter):
    """Print a SymPy expression as an Excel formula (without the leading ``=``).

    ``refs`` maps each symbol to the text that stands for it in base units:
    a defined name, a cell, or a conversion such as ``(hbm_bandwidth*1E+12)``
    (the text must already be an atom). ``bools`` are the symbols of
    true/false quantities.
    """

    printmethod = "_excelcode"
    language = "Excel"
    _default_settings = {**CodePrinter._default_settings, "strict": True}

    def __init__(self, refs: Mapping[sp.Symbol, str], bools: Iterable[sp.Symbol] = (), settings=None,
                 cells: Optional[Callable[[list], list[str]]] = None,
                 row: Optional[Callable[..., tuple]] = None,
                 row_refs: Optional[Mapping[sp.Symbol, str]] = None) -> None:
        super().__init__(settings)
        self.refs = refs
        self.bools = frozenset(bools)
        self.cells = cells  # writes the terms of an aggregate into helper cells (see :func:`formula`)
        self.row = row  # writes the terms of an aggregate as one row of the Cash flows sheet (see :func:`formula`)
        self.row_refs = refs if row_refs is None else row_refs  # the references a row's cells use (qualified)
        self._open: list[tuple] = []  # the aggregates whose term is being printed once for every column

    # ---- dispatch: only the methods of this class, nothing inherited ---------
    def _print(self, expr, **kwargs) -> str:
        if isinstance(expr, sp.Basic):
            for cls in type(expr).__mro__:
                method = _own_method(type(self), "_print_" + cls.__name__)
                if method is not None:
                    text = method(self, expr)
                    if len(text) > MAX_PRINTED:  # a power tower prints its exponent twice per level: 2^n
                        raise UnsupportedFormula(f"the formula would be longer than {MAX_PRINTED:,} characters")
                    return text
        raise UnsupportedFormula(f"Excel has no formula for {type(expr).__name__} (`{expr}`)")

    def doprint(self, expr, assign_to=None) -> str:
        return self._print(expr)

    def wrap(self, expr, level: int) -> str:
        """``expr`` printed, in parentheses unless it binds tighter than ``level``."""
        text = self._print(expr)
        return text if self.precedence(expr) > level else f"({text})"

    def precedence(self, e) -> int:
        """How tightly the printed form of ``e`` binds (mirrors the methods below)."""
        if isinstance(e, sp.Rational):
            if e < 0:
                return NEG
            if _decimal(Fraction(e.p, e.q)) is not None:
                return ATOM
            return MUL if len(str(e.p)) <= DIGITS and len(str(e.q)) <= DIGITS else ATOM
        if isinstance(e, sp.Float):
            return NEG if e < 0 else ATOM
        if isinstance(e, sp.Add):
            return ADD
        if isinstance(e, sp.Mul):
            return NEG if _negative(e) else MUL
        if isinstance(e, sp.Pow):
            if e.exp == sp.S.Half:
                return ATOM
            if not e.exp.is_Number:
                return ATOM  # the underflow guard is an IF(...)
            return MUL if e.exp < 0 else POW
        if isinstance(e, sp.ceiling):
            return NEG
        if isinstance(e, (sp.Equality, sp.Unequality)) and self._bool_ref(e) is not None:
            return ATOM
        if isinstance(e, sp.core.relational.Relational):
            return CMP
        return ATOM

    # ---- atoms ----------------------------------------------------------------
    def _print_Symbol(self, e) -> str:
        try:
            return self.refs[e]
        except KeyError:
            raise UnsupportedFormula(f"no cell or name for `{e}`") from None

    def _print_Rational(self, e) -> str:
        value = Fraction(e.p, e.q)
        if value and abs(value) < TINY:
            return "0"  # below the smallest double: 0, as numpy gives (a literal 1E-400 is #VALUE!)
        if abs(value) > HUGE:
            raise UnsupportedFormula("a constant beyond the largest number Excel holds (about 1E+308)")
        text = _decimal(value)
        if text is not None:
            return text
        if len(str(abs(e.p))) <= DIGITS and len(str(e.q)) <= DIGITS:
            return f"{e.p}/{e.q}"
        return _float_text(float(value))

    def _print_Float(self, e) -> str:
        return _float_text(float(e))

    def _print_Exp1(self, e) -> str:
        return "EXP(1)"

    def _print_Pi(self, e) -> str:
        return "PI()"

    def _print_Never(self, e) -> str:  # a `first` that found nothing: #N/A, as planner's "never"
        return "NA()"

    def _print_ComplexInfinity(self, e) -> str:
        # SymPy's 1/0, as the workbook writes a division by zero its algebra would hide
        # (`IF(z=0,1/0,...)` for `0 / z`: Excel's own #DIV/0! where planner reports the division)
        return "(1/0)"

    def _print_BooleanTrue(self, e) -> str:
        return "TRUE"

    def _print_BooleanFalse(self, e) -> str:
        return "FALSE"

    # ---- arithmetic -------------------------------------------------------------
    def _print_Add(self, e) -> str:
        # SymPy's canonical order with the constant last (``x-3``), unless every other term is
        # negative (``1-x``); cheaper than as_ordered_terms on large plans
        terms = list(e.args)
        if terms[0].is_Number and not all(_negative(t) for t in terms[1:]):
            terms = terms[1:] + terms[:1]
        if _negative(terms[0]):  # a positive term first where there is one: ``b-a``, not ``-a+b``
            first = next((i for i, t in enumerate(terms) if not _negative(t)), 0)
            terms = [terms[first]] + terms[:first] + terms[first + 1:]
        out = self.wrap(terms[0], ADD - 1)
        for t in terms[1:]:
            if _negative(t):
                out += "-" + self.wrap(-t, ADD)
            else:
                out += "+" + self.wrap(t, ADD - 1)
        return out

    def _print_Mul(self, e) -> str:
        if _negative(e):
            # Excel's unary minus binds tighter than ^: -(x^2) keeps its parentheses; a product or a
            # quotient that does not start with a power needs none (negation is exact: -(a/b) is -a/b)
            inner = -e
            if isinstance(inner, sp.Mul) and not self._starts_with_power(inner):
                return "-" + self._print(inner)
            return "-" + self.wrap(inner, POW)
        coeff, factors = e.as_coeff_mul()
        num: list[str] = []
        den: list[str] = []
        if coeff != 1:
            c = Fraction(coeff.p, coeff.q) if isinstance(coeff, sp.Rational) else None
            if c is None or c.denominator == 1 or _decimal(c) is not None and c.numerator != 1:
                num.append(self.wrap(coeff, MUL - 1))
            else:
                if c.numerator != 1:
                    num.append(self._print(sp.Integer(c.numerator)))
                den.append(self._print(sp.Integer(c.denominator)))
        for f in factors:
            if isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0:
                base = f.base if f.exp == -1 else sp.Pow(f.base, -f.exp)
                den.append(self.wrap(base, MUL))
            else:
                num.append(self.wrap(f, MUL - 1))
        text = "*".join(num) if num else "1"
        if den:
            text += "/" + (den[0] if len(den) == 1 else "(" + "*".join(den) + ")")
        return text

    def _starts_with_power(self, e) -> bool:
        """Whether the printed product ``e`` (no negative coefficient) starts with a power ``a^b``."""
        coeff, factors = e.as_coeff_mul()
        if coeff != 1:
            return False
        first = next((f for f in factors if not (isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0)), None)
        return first is not None and self.precedence(first) == POW

    def _print_Pow(self, e) -> str:
        base, exp = e.base, e.exp
        if exp == sp.S.Half:
            return f"SQRT({self._print(base)})"
        if exp.is_Number and exp < 0:
            inverse = base if exp == -1 else sp.Pow(base, -exp)
            return "1/" + self.wrap(inverse, MUL)
        # Excel: ^ is left-associative and looser than unary minus.
        power = self.wrap(base, POW) + "^" + self.wrap(exp, POW)
        if exp.is_Number:
            return power
        # A power whose exponent moves can fall below the smallest double: numpy gives 0,
        # LibreOffice's ^ gives #NUM!. Where ln|result| < -708 (below 3.3E-308) the answer is 0.
        if base.is_Number and base > 0:
            log = f"LN({self._print(base)})"
        else:
            log = f"LN(ABS({self._print(base)})+1E-300)"  # a zero base: 0 for a positive exponent
        return f"IF({self.wrap(exp, MUL)}*{log}<-708,0,{power})"

    # ---- functions ----------------------------------------------------------------
    def _print_Function(self, e) -> str:
        record = getattr(type(e), "record", None)  # a built-in kept whole: Excel's own function
        if record is not None:
            args = list(e.args)
            while record.defaults and len(args) > record.lo and \
                    args[-1] == record.defaults[len(args) - len(record.params) - 1]:
                args.pop()  # trailing arguments at their defaults are left out, as a person writes them
            texts = [self._print(a) for a in args]
            return _call(record.excel, record.excel_args(texts) if record.excel_args else texts)
        name = _FUNCTIONS.get(type(e).__name__)
        if name is None:
            raise UnsupportedFormula(f"Excel has no function for `{type(e).__name__}` (in `{e}`)")
        return _call(name, [self._print(a) for a in e.args])

    def _print_MinMaxBase(self, e) -> str:  # Max and Min are not Functions in SymPy
        return self._print_Function(e)

    def _print_ceiling(self, e) -> str:
        # Portable ceiling: CEILING.MATH needs _xlfn and some engines differ on negatives.
        arg = e.args[0]
        if _negative(arg):  # ceiling(-y) = -INT(y)
            return f"-INT({self._print(-arg)})"
        return f"-INT(-{self.wrap(arg, POW)})"

    def _print_Piecewise(self, e) -> str:
        pieces = list(e.args)
        last_value, last_cond = pieces[-1]
        if last_cond is not sp.true:
            raise UnsupportedFormula(f"a piecewise expression without an `otherwise` branch: `{e}`")
        out = self._print(last_value)
        for value, cond in reversed(pieces[:-1]):
            out = f"IF({self._print(cond)},{self._print(value)},{out})"
        return out

    # ---- aggregates over ranges ------------------------------------------------------
    # One helper cell per term, as many as the range can hold (the most its declared bounds allow):
    # IF(k <= end, term, identity), so editing an end in the workbook moves the sum. The terms are
    # contiguous cells, added up with SUM (PRODUCT, MAX, MIN) over their range.
    def _aggregate(self, e, fn: str, identity: str) -> str:
        if self.cells is None:
            raise FormulaTooLong(f"`{fn}` over a range writes its terms into helper cells")
        limits = list(e.limits)
        k, lo, hi = limits[-1]
        body = e.function if len(limits) == 1 else type(e)(e.function, *limits[:-1])
        n = getattr(k, "terms", None)
        if n is None:
            raise UnsupportedFormula(f"a range without a known size: `{e}`")
        if self._open and any(o[0] in e.free_symbols for o in self._open):
            return self._running(e, fn, k, lo, hi, body, n)  # raises _NotARow unless a running total
        if self.row is not None and lo.is_Integer:
            try:
                ranges, _, _ = self._row(fn, identity, k, lo, hi, body, n)
            except _NotARow:
                pass
            else:
                if not ranges:
                    return {"SUM": "0", "PRODUCT": "1"}.get(fn, "NA()")
                return self._total(fn, ranges)
        return self._cells(e, fn, identity, k, lo, hi, body, n)

    def _total(self, fn: str, args: list[str]) -> str:
        if fn == "FIRST":  # the least value where its condition holds; none: #N/A, as planner's "never"
            return f"IF(COUNT({','.join(args)})=0,NA(),{_call('MIN', args)})"
        if fn in ("MAX", "MIN"):  # every term outside the range: no value, as planner (MAX of no number is 0)
            return f"IF(COUNT({','.join(args)})=0,NA(),{_call(fn, args)})"
        return _call(fn, args)

    # A row of the Cash flows sheet: the term is printed once, with stand-ins for the index's value and
    # for the column, which each cell fills in (a 36-month plan printed each term apart: most of its
    # export). A sum inside the term over the same index up to the outer one (``cash_rent(n) = sum(...
    # for m in 1 month..n)``) is the running total of its own row, ``SUM($C$9:H9)``, not a row per term.
    def _row(self, fn: str, identity: str, k, lo, hi, body, n) -> tuple[list, list, Optional[tuple]]:
        level = len(self._open)
        index, column = f"\x00k{level}\x00", f"\x00c{level}\x00"
        saved = self.refs
        self.refs = {**self.row_refs, k: index}
        self._open.append((k, lo, column, n, []))
        try:
            if fn == "FIRST":
                (value, cond), _ = body.args
                texts = (self._print(value), self._print(cond))
            else:
                texts = (self._print(body),)
            bound = self._print(sp.Le(k, hi, evaluate=False))
        finally:
            self.refs = saved
            _, _, _, _, running = self._open.pop()
        cells, values = [], []
        by_header = n <= ROW_TERMS  # a row of cells: the index is its column's header, the same formula in each
        for j in range(n):
            kj = lo + j
            # a fixed end: the terms up to it; a moving end: IF(k <= end, ...) in each cell (SymPy's
            # assumptions on `kj <= n` were most of a 20,000-term sum's export)
            if hi.is_Number and kj > hi:
                break
            inside = sp.true if hi.is_Number else None
            letter = _letter(FLOW_FIRST + j)
            if by_header:  # the header holds 1, 2, 3 ...: the index is the header, shifted where it starts elsewhere
                at = f"{letter}${FLOW_HEADER}" if lo == 1 else \
                    f"({letter}${FLOW_HEADER}{'+' if lo > 1 else '-'}{abs(lo - 1)})"
            else:  # down a column of the Helpers sheet: the index's value itself
                at = self._print(kj)
                if kj < 0:
                    at = f"({at})"

            def fill(t: str) -> str:
                return t.replace(index, at).replace(column, letter)

            if fn == "FIRST":
                cond = fill(texts[1]) if inside is sp.true else f"AND({fill(bound)},{fill(texts[1])})"
                text = f"=IF({cond},{fill(texts[0])},\"\")"
            else:
                text = "=" + fill(texts[0]) if inside is sp.true else \
                    f"=IF({fill(bound)},{fill(texts[0])},{identity})"
            if len(text) > LIMIT or nesting(text) > MAX_NESTING:
                raise _NotARow
            cells.append(text)
            values.append(kj)
        # the values the cells hold (the writer's cached results): the term over the index where it is
        # inside the range, the running totals it uses as symbols bound to their rows' cumulative values
        within = sp.Le(k, hi, evaluate=False)  # (evaluated, SymPy asks its assumptions of k and the end)
        if fn == "FIRST":
            (term, cond), _ = body.args
            cond = sp.And(within, cond, evaluate=False)
        else:
            term, cond = body, within
        if running:
            stand = {total: symbol for total, symbol, _ in running}
            with sp.evaluate(False):
                term, cond = term.xreplace(stand), cond.xreplace(stand)
        extra = {symbol: totals[:len(cells)] for _, symbol, totals in running}
        outside = {"0": 0.0, "1": 1.0}.get(identity, "")
        if fn == "FIRST":
            (value, holds), _ = body.args
            written = f"{plan_text(value)} where {plan_text(holds)}"
        else:
            written = plan_text(body)
        return self.row(cells, term, cond, outside, k, values, extra, _term_label(k, lo), written)

    def _running(self, e, fn: str, k, lo, hi, body, n) -> str:
        """An aggregate inside a row's term that depends on the row's index: a running total of its own
        row when it sums over the same index up to it, else the row is given up (helper cells instead)."""
        outer = self._open[-1]
        ok, olo, column, on, running = outer
        if (fn != "SUM" or hi != ok or lo != olo or n < on or not lo.is_Integer or n > ROW_TERMS
                or any(o[0] in body.free_symbols for o in self._open) or self.row is None):
            raise _NotARow
        saved, self._open = self._open, []
        try:
            _, held, (sheet, line) = self._row(fn, "0", k, lo, sp.Integer(lo + n - 1), body, n)
        finally:
            self._open = saved
        symbol = sp.Dummy("running", real=True)
        totals, total = [], 0.0
        for v in held:
            total = total + v if isinstance(v, float) and isinstance(total, float) else float("nan")
            totals.append(total)
        running.append((e, symbol, totals))
        return f"SUM({sheet}!${_letter(FLOW_FIRST)}${line}:{column}${line})"

    def _cells(self, e, fn: str, identity: str, k, lo, hi, body, n) -> str:
        """One helper cell per term, each printed apart (a term that a row cannot hold)."""
        cells = term_cells(e)
        if cells > MAX_TERM_CELLS:
            raise UnsupportedFormula(
                f"`{fn.lower()}` over ranges would write {cells:,} helper cells, one per term (at most "
                f"{MAX_TERM_CELLS:,}): the workbook is not written",
                hint="lower the declared bounds of the inputs that end the ranges (`where n <= 1000`), or "
                     "write the inner sum in closed form; `planner eval`, `check` and `report` compute it as it is")
        first = fn == "FIRST"  # (value, condition): the term is the value where the condition holds
        values = [lo + j for j in range(n)]
        if hi.is_Number:  # a fixed end: the terms up to it, no condition
            values = [kj for kj in values if kj <= hi]
            insides = [sp.true] * len(values)
        else:  # a moving end: IF(k <= end, ...) in each cell. Left unevaluated: SymPy's assumptions on
            # `kj <= n` took 29 s of a 20,000-term sum's export, and the cell's IF says the same.
            insides = [sp.Le(kj, hi, evaluate=False) for kj in values]
        rows = []
        # SymPy left to evaluate each term rebuilds every Min/Max and Piecewise in it (factor_terms,
        # _find_localzeros): 60 of the 120 s of a 36-month plan's export. The term is printed as it
        # stands instead, the value of k written in. (One evaluate(False) for all: each entry and exit
        # clears SymPy's caches.)
        with sp.evaluate(False):
            for kj, inside in zip(values, insides):
                if first:
                    (value, cond), _ = body.args
                    term, holds = value.xreplace({k: kj}), cond.xreplace({k: kj})
                    rows.append((term, sp.And(inside, holds) if inside is not sp.true else holds, identity, kj))
                else:
                    rows.append((body.xreplace({k: kj}), inside, identity, kj))
        rows = [(term, inside, identity, _term_label(k, kj)) for term, inside, identity, kj in rows]
        if not rows:
            return {"SUM": "0", "PRODUCT": "1"}.get(fn, "NA()")
        refs = self.cells(rows)
        return self._total(fn, _as_range(refs))

    def _print_Sum(self, e) -> str:
        return self._aggregate(e, "SUM", "0")

    def _print_Product(self, e) -> str:
        return self._aggregate(e, "PRODUCT", "1")

    def _print_RangeMax(self, e) -> str:
        return self._aggregate(e, "MAX", '""')

    def _print_RangeMin(self, e) -> str:
        return self._aggregate(e, "MIN", '""')

    def _print_RangeFirst(self, e) -> str:
        return self._aggregate(e, "FIRST", '""')

    # ---- logic -------------------------------------------------------------------
    def _bool_ref(self, e) -> Optional[tuple[sp.Symbol, bool]]:
        """``Eq(b, 1)`` for a boolean symbol ``b`` is the bare cell (TRUE = 1 is FALSE in Excel)."""
        lhs, rhs = e.lhs, e.rhs
        if rhs in self.bools and lhs.is_Number:
            lhs, rhs = rhs, lhs
        if lhs in self.bools and rhs in (sp.S.One, sp.S.Zero):
            truth = (rhs == 1) == isinstance(e, sp.Equality)
            return lhs, truth
        return None

    def _print_Relational(self, e) -> str:
        if isinstance(e, (sp.Equality, sp.Unequality)):
            ref = self._bool_ref(e)
            if ref is not None:
                sym, truth = ref
                return self._print(sym) if truth else f"NOT({self._print(sym)})"
        op = _RELATIONS.get(e.rel_op)
        if op is None:
            raise UnsupportedFormula(f"no Excel comparison for `{e.rel_op}`")
        return self.wrap(e.lhs, CMP) + op + self.wrap(e.rhs, CMP)

    def _print_And(self, e) -> str:
        return _call("AND", [self._print(a) for a in e.args])

    def _print_Or(self, e) -> str:
        return _call("OR", [self._print(a) for a in e.args])

    def _print_Not(self, e) -> str:
        return f"NOT({self._print(e.args[0])})"


class _NotARow(Exception):
    """A term a row of the Cash flows sheet cannot hold (it uses an outer index otherwise than as a running
    total's end, or its formula is too long): its terms go to helper cells one by one."""


FLOW_FIRST = 3  # the Cash flows sheet's first column of terms (C): the label and the index before it
FLOW_HEADER = 3  # the Cash flows sheet's row of column numbers (1, 2, 3 ...), which the terms use as their index
ROW_TERMS = 16_384 - FLOW_FIRST + 1  # terms a row holds (Excel's last column is XFD); more go down a column


class _PlanText(StrPrinter):
    """A term as a formula in the plan's own words: ``own_monthly/(cost_of_capital + 1)^(m/12)``, the
    input cells by name (their figures, in display units), the range's index by its name."""

    def _print_Pow(self, e, rational=False):
        return super()._print_Pow(e, rational).replace("**", "^")

    def _print_Min(self, e):
        return "min(" + ", ".join(self._print(a) for a in e.args) + ")"

    def _print_Max(self, e):
        return "max(" + ", ".join(self._print(a) for a in e.args) + ")"

    def _print_Piecewise(self, e):
        out = self._print(e.args[-1].expr)
        for value, cond in reversed(e.args[:-1]):
            out = f"if({self._print(cond)}, {self._print(value)}, {out})"
        return out

    def _print_And(self, e):
        return " and ".join(self.parenthesize(a, 1) for a in e.args)

    def _print_Or(self, e):
        return " or ".join(self.parenthesize(a, 1) for a in e.args)

    def _print_Sum(self, e):
        (k, lo, hi), *_ = e.limits
        return f"sum({self._print(e.function)} for {self._print(k)} in {self._print(lo)}..{self._print(hi)})"


@functools.lru_cache(maxsize=4096)  # each row of a sweep or a bisection writes the same terms again
def plan_text(e: sp.Basic, limit: int = 1000) -> str:
    """``e`` as the Term column of the Cash flows sheet shows it (cut at ``limit`` characters)."""
    text = _PlanText().doprint(e)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _letter(n: int) -> str:
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def _term_label(k, kj) -> str:
    value = getattr(k, "value", None)
    if value is not None:
        v = value.xreplace({k: kj}) / sp.Rational(k.scale.numerator, k.scale.denominator)
        if v.is_Number:
            return f"{k.name} = {_float_text(float(v))}" + (f" {k.unit}" if k.unit else "")
    return f"{k.name} = {kj}"


def _as_range(refs: list[str]) -> list[str]:
    """Consecutive cells of one column (``Helpers!$B$5``, ``Helpers!$B$6`` ...) as one range."""
    import re

    parsed = [re.fullmatch(r"(.*!)?\$?([A-Z]+)\$?(\d+)", r) for r in refs]
    if all(parsed) and len({(m.group(1), m.group(2)) for m in parsed}) == 1:
        rows = [int(m.group(3)) for m in parsed]
        if rows == list(range(rows[0], rows[0] + len(rows))):
            first = parsed[0]
            return [f"{first.group(1) or ''}${first.group(2)}${rows[0]}:${first.group(2)}${rows[-1]}"]
    return refs


def _call(name: str, args: list[str]) -> str:
    """``NAME(a,b,...)``; more than Excel's 255 arguments nest (MAX, MIN, AND, OR are associative)."""
    while len(args) > MAX_ARGS:
        args = [f"{name}({','.join(args[i:i + MAX_ARGS])})" for i in range(0, len(args), MAX_ARGS)]
    return f"{name}({','.join(args)})"


def nesting(text: str) -> int:
    """How deeply function calls nest in a formula (Excel allows 64)."""
    depth = deepest = 0
    stack: list[bool] = []
    quoted = False
    for i, ch in enumerate(text):
        if ch == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "(":
            call = i > 0 and (text[i - 1].isalnum() or text[i - 1] in "._")
            stack.append(call)
            depth += call
            deepest = max(deepest, depth)
        elif ch == ")" and stack:
            depth -= stack.pop()
    return deepest


def _own_method(cls: type, name: str):
    """A ``_print_X`` method defined by ExcelPrinter (or a subclass), never by StrPrinter."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
        if klass is ExcelPrinter:
            return None
    return None


def _negative(e) -> bool:
    if e.is_Number:
        return bool(e < 0)
    if isinstance(e, sp.Mul):
        coeff = e.as_coeff_Mul()[0]
        return bool(coeff.is_Number and coeff < 0)
    return False


def _decimal(value: Fraction) -> Optional[str]:
    """Exact decimal text (``4.15``, ``1E+12``, ``1E-12``) if it fits in 15 digits, else None."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    q = value.denominator
    twos = fives = 0
    while q % 2 == 0:
        q //= 2
        twos += 1
    while q % 5 == 0:
        q //= 5
        fives += 1
    if q != 1:
        return None
    places = max(twos, fives)  # value * 10**places is an integer
    digits = value.numerator * (10 ** places // value.denominator)
    if digits == 0:
        return "0"
    exponent = -places
    while digits % 10 == 0:
        digits //= 10
        exponent += 1
    text = str(digits)
    if len(text) > DIGITS:
        return None
    point = len(text) + exponent  # position of the decimal point from the left
    if exponent >= 0 and exponent < 6:
        return sign + text + "0" * exponent
    if exponent < 0 and point > -5:
        if point > 0:
            return sign + text[:point] + "." + text[point:]
        return sign + "0." + "0" * (-point) + text
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    e = point - 1
    return f"{sign}{mantissa}E{'+' if e >= 0 else '-'}{abs(e)}"


# Excel's (and LibreOffice's) range: no subnormals, nothing from 1E+308 on
TINY = Fraction(2.2250738585072014e-308)
HUGE = Fraction(9.99999999999999e307)


def _float_text(v: float) -> str:
    if v != v or v in (float("inf"), float("-inf")):
        raise UnsupportedFormula(f"Excel has no literal for {v}")
    if abs(v) < TINY:
        return "0"
    if abs(v) > HUGE:
        raise UnsupportedFormula(f"{v:.3g} is beyond the largest number Excel holds")
    text = repr(v).upper()
    if "E" in text:
        mantissa, _, exp = text.partition("E")
        text = f"{mantissa}E{'+' if not exp.startswith('-') else '-'}{exp.lstrip('+-')}"
    if text.endswith(".0"):
        text = text[:-2]
    return text


def number(value: Fraction | int | float) -> str:
    """A constant as Excel formula text (exact where 15 digits allow)."""
    if isinstance(value, float):
        return _float_text(value)
    return ExcelPrinter({})._print(sp.Rational(Fraction(value).numerator, Fraction(value).denominator))


def formula(
    expr: sp.Basic,
    refs: Mapping[sp.Symbol, str],
    bools: Iterable[sp.Symbol] = (),
    spill: Optional[Callable[[str], str]] = None,
    limit: int = LIMIT,
    scale: Fraction = Fraction(1),
    helper_refs: Optional[Mapping[sp.Symbol, str]] = None,
    row: Optional[Callable[..., tuple]] = None,
) -> str:
    """``=...`` for ``expr`` divided by ``scale`` (its display unit).

    When the text exceeds ``limit``, the largest subexpressions go to helper
    cells: ``spill(formula_text)`` writes one and returns its reference; a
    ``spill`` that takes two arguments also gets the subexpression itself
    (``spill(formula_text, expr)``, over the original symbols), so the writer
    can store the helper cell's value. Helper cells live on another sheet,
    so their formulas use ``helper_refs`` (sheet-qualified references;
    default ``refs``).

    ``row(cells, term, condition, outside, index, values, extra, label)`` writes the terms of a sum
    (product, range max, min, first) over a range as one row of cells, formula texts ``cells`` over
    ``helper_refs``, one per value of ``index`` in ``values``; ``term`` where ``condition`` holds,
    ``outside`` elsewhere, are their values (``extra`` binds the running totals' symbols to arrays);
    it returns the cells as ranges, their values and (the sheet as a reference, the row), or None there
    when the terms are too many for a row. Without it, or for a term a row cannot hold, every term gets a
    helper cell of its own.
    """
    bools = frozenset(bools)
    expr, refs, helper_refs, scale = in_display(expr, refs, helper_refs, scale)
    inner_refs = helper_refs if helper_refs is not None else refs
    with_expr = spill is not None and _takes_expr(spill)

    written: dict[tuple, list[str]] = {}  # printing twice (to measure, to split) writes the cells once

    def cells(rows: list) -> list[str]:
        """Each (term, condition, identity, label) in a helper cell, consecutive: every text first (a term
        may spill cells of its own), then the cells."""
        key = tuple(rows)
        if key in written:
            return written[key]
        texts = []
        for term, inside, identity, _ in rows:
            text = formula(term, inner_refs, bools, spill, limit, row=row_fn)
            if inside is not sp.true:
                text = f"=IF({formula(inside, inner_refs, bools, spill, limit, row=row_fn)[1:]},{text[1:]},{identity})"
            texts.append(text)
        with sp.evaluate(False):  # only its value is needed (the cached result): no simplification
            exprs = [term if inside is sp.true else
                     sp.Piecewise((term, inside), (_IDENTITY_VALUE.get(identity, sp.nan), True))
                     for term, inside, identity, _ in rows]
        # a spill that takes the subexpression stores the helper cell's value too
        written[key] = [spill(t, e) if with_expr else spill(t) for t, e in zip(texts, exprs)]
        return written[key]

    rows_written: dict[tuple, tuple] = {}

    def row_fn(cells: list[str], *rest) -> tuple:
        key = tuple(cells)
        if key not in rows_written:
            rows_written[key] = row(cells, *rest)
        return rows_written[key]

    if row is None:
        row_fn = None  # noqa: F811
    cells_fn = cells if spill is not None else None
    printer = ExcelPrinter(refs, bools, cells=cells_fn, row=row_fn, row_refs=inner_refs)
    if isinstance(expr, sp.Rational) and scale != 1:  # a constant: fold the unit in
        value = Fraction(expr.p, expr.q) / scale
        expr, scale = sp.Rational(value.numerator, value.denominator), Fraction(1)

    def render(e) -> str:
        text = printer.doprint(e)
        if scale == 1:
            return "=" + text
        if printer.precedence(e) <= MUL:  # as printer.wrap(e, MUL), without printing e again
            text = f"({text})"
        if scale.numerator == 1:
            return f"={text}*{number(scale.denominator)}"
        if scale.denominator == 1:
            return f"={text}/{number(scale.numerator)}"
        return f"={text}/({number(scale)})"

    def too_big(t: str) -> bool:
        return len(t) > limit or nesting(t) > MAX_NESTING

    text = render(expr)
    if not too_big(text):
        return text
    if spill is None:
        raise FormulaTooLong(f"a formula of {len(text)} characters and {nesting(text)} nested calls exceeds "
                             f"Excel's limits ({limit} characters, {MAX_NESTING} levels)")
    refs = dict(refs)  # copies: stand-ins for helper cells are added below
    helper_refs = dict(helper_refs) if helper_refs is not None else dict(refs)
    inner_refs = helper_refs  # a stand-in may sit in a row's term
    printer = ExcelPrinter(refs, bools, cells=cells_fn, row=row_fn, row_refs=inner_refs)
    with_expr = _takes_expr(spill)
    originals: dict[sp.Symbol, sp.Basic] = {}  # stand-in -> the subexpression it replaced

    def helper(sub: sp.Basic) -> sp.Basic:
        """``sub`` moved into a helper cell; returns the symbol that stands for it."""
        whole = sub
        while with_expr and whole.free_symbols & originals.keys():
            whole = whole.xreplace(originals)
        inner = (lambda t, e: spill(t, e.xreplace(originals))) if with_expr else spill
        text = formula(sub, helper_refs, bools, inner, limit, row=row)
        ref = spill(text, whole) if with_expr else spill(text)
        boolean = isinstance(sub, sp.logic.boolalg.Boolean) and not isinstance(sub, sp.Expr)
        stand_in = sp.Symbol(f"spill#{len(refs)}") if boolean else sp.Symbol(f"spill#{len(refs)}", real=True)
        refs[stand_in] = helper_refs[stand_in] = ref
        originals[stand_in] = whole
        return stand_in

    if isinstance(expr, _ASSOCIATIVE) and len(expr.args) > 2 and len(text) > limit:
        # a wide node: group its arguments into helper cells of about half the limit each
        lengths = [(arg, len(ExcelPrinter(refs, bools, cells=cells_fn, row=row_fn, row_refs=inner_refs).doprint(arg))) for arg in expr.args]
        groups: list[list[sp.Basic]] = [[]]
        size = 0
        for arg, n in lengths:
            if groups[-1] and size + n > limit // 2:
                groups.append([])
                size = 0
            groups[-1].append(arg)
            size += n + 1
        if len(groups) > 1:
            parts = [g[0] if len(g) == 1 and g[0].is_Atom else helper(expr.func(*g)) for g in groups]
            return formula(expr.func(*parts), refs, bools, spill, limit, scale, helper_refs, row)
    if isinstance(expr, sp.Piecewise) and len(expr.args) > MAX_NESTING // 2 and nesting(text) > MAX_NESTING:
        # a long if/else chain: its tail goes to a helper cell (which may split again)
        keep = MAX_NESTING // 2
        tail = helper(sp.Piecewise(*expr.args[keep:]))
        head = sp.Piecewise(*(expr.args[:keep] + ((tail, True),)), evaluate=False)
        return formula(head, refs, bools, spill, limit, scale, helper_refs, row)
    seen: set[sp.Basic] = set()
    while too_big(text):
        candidates = [c for c in _parts(expr) if c not in seen and not c.is_Atom]
        if not candidates:
            raise FormulaTooLong(f"a formula of {len(text)} characters exceeds Excel's limits "
                                 "and cannot be split further")
        printer = ExcelPrinter(refs, bools, cells=cells_fn, row=row_fn, row_refs=inner_refs)
        deep = nesting(text) > MAX_NESTING  # move the deepest part out, else the longest

        def size(c):
            t = printer.doprint(c)
            return (nesting(t), len(t)) if deep else (len(t), 0)

        biggest = max(candidates, key=lambda c: (size(c), sp.default_sort_key(c)))
        while deep and nesting(printer.doprint(biggest)) > MAX_NESTING:
            # descend to the deepest part that fits in one cell: one helper per 64 levels
            inner = [c for c in _parts(biggest) if not c.is_Atom]
            if not inner:
                break
            biggest = max(inner, key=lambda c: (size(c), sp.default_sort_key(c)))
        seen.add(biggest)
        expr = expr.xreplace({biggest: helper(biggest)})
        printer = ExcelPrinter(refs, bools, cells=cells_fn, row=row_fn, row_refs=inner_refs)
        text = render(expr)
    return text


_ASSOCIATIVE = (sp.Add, sp.Mul, sp.Max, sp.Min, sp.And, sp.Or)


def term_cells(e: sp.Basic) -> int:
    """The helper cells the aggregate ``e`` writes: one per term of its last range, and per term the
    cells of the aggregates in its body (a range's size is the most its declared bounds allow)."""
    if isinstance(e, ExprWithIntLimits) and e.limits:
        k = e.limits[-1][0]
        body = e.function if len(e.limits) == 1 else type(e)(e.function, *e.limits[:-1])
        return getattr(k, "terms", 1) * (1 + term_cells(body))
    if not isinstance(e, sp.Basic) or e.is_Atom:
        return 0
    return sum(term_cells(a) for a in e.args)


@functools.lru_cache(maxsize=64)  # asked once per helper cell: inspect.signature took 2 s of a 20,000-term sum
def _takes_expr(spill: Callable) -> bool:
    """Whether a spill callback takes the subexpression too (``spill(text, expr)``)."""
    import inspect

    try:
        params = list(inspect.signature(spill).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def _parts(e: sp.Basic) -> list[sp.Basic]:
    """Subexpressions that can move into a helper cell (Piecewise pairs opened)."""
    out = []
    for a in e.args:
        if isinstance(a, sp.functions.elementary.piecewise.ExprCondPair):
            out.extend(x for x in a.args if x is not sp.true)
        else:
            out.append(a)
    return out
