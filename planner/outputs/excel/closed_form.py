"""A closed form SymPy derived, as an Excel formula: the one formula of the workbook printed from SymPy.

The Solve sheet shows a question's closed form (``planner solve --closed-form``) as a live formula over
the named inputs. The closed form is a SymPy tree (SymPy derived it, by inverting the plan's formulas),
so it is printed here, by a small :class:`CodePrinter` in the shape of SymPy's ``printing/octave.py``;
every other formula of the workbook is generated from the plan's IR (:mod:`.generator`). When SymPy trees
can be turned back into the IR (``to_ir``), this module goes and the closed form is generated like the rest.

It is strict: a node without a method raises :class:`UnsupportedFormula` (the sheet then solves by
bisection). Excel's grammar as in :mod:`.generator`: unary minus binds tighter than ``^``, ``^`` is
left-associative, ``TRUE = 1`` is FALSE in Excel (a boolean's ``Eq(b, 1)`` prints as the bare cell),
``-INT(-(x))`` for a ceiling, the underflow guard of a moving exponent, 15 digits. :func:`formula` splits
a formula longer than its limit into helper cells through a callback.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Iterable, Mapping, Optional

import sympy as sp
from sympy.printing.codeprinter import CodePrinter

from .generator import (ADD, ATOM, CMP, DIGITS, HUGE, LIMIT, MAX_NESTING, MUL, NEG, POW, TINY, FormulaTooLong,
                        UnsupportedFormula, _decimal, _float_text, call as _call, nesting)


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

    def __init__(self, refs: Mapping[sp.Symbol, str], bools: Iterable[sp.Symbol] = (), settings=None) -> None:
        super().__init__(settings)
        self.refs = refs
        self.bools = frozenset(bools)

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


def formula(expr: sp.Basic, refs: Mapping[sp.Symbol, str], bools: Iterable[sp.Symbol] = (),
            spill: Optional[Callable[[str, sp.Basic], str]] = None, limit: int = LIMIT,
            helper_refs: Optional[Mapping[sp.Symbol, str]] = None) -> str:
    """``=...`` for ``expr``. When the text exceeds ``limit``, the largest subexpressions go to helper
    cells: ``spill(formula_text, subexpression)`` writes one and returns its reference. Helper cells
    live on another sheet, so their formulas use ``helper_refs`` (sheet-qualified; default ``refs``)."""
    bools = frozenset(bools)
    printer = ExcelPrinter(refs, bools)

    def too_big(t: str) -> bool:
        return len(t) > limit or nesting(t) > MAX_NESTING

    text = "=" + printer.doprint(expr)
    if not too_big(text):
        return text
    if spill is None:
        raise FormulaTooLong(f"a formula of {len(text)} characters and {nesting(text)} nested calls exceeds "
                             f"Excel's limits ({limit} characters, {MAX_NESTING} levels)")
    refs = dict(refs)  # copies: stand-ins for helper cells are added below
    helper_refs = dict(helper_refs) if helper_refs is not None else dict(refs)
    originals: dict[sp.Symbol, sp.Basic] = {}  # stand-in -> the subexpression it replaced

    def helper(sub: sp.Basic) -> sp.Basic:
        """``sub`` moved into a helper cell; returns the symbol that stands for it."""
        whole = sub
        while whole.free_symbols & originals.keys():
            whole = whole.xreplace(originals)
        ref = spill(formula(sub, helper_refs, bools, lambda t, e: spill(t, e.xreplace(originals)), limit), whole)
        boolean = isinstance(sub, sp.logic.boolalg.Boolean) and not isinstance(sub, sp.Expr)
        stand_in = sp.Symbol(f"spill#{len(refs)}") if boolean else sp.Symbol(f"spill#{len(refs)}", real=True)
        refs[stand_in] = helper_refs[stand_in] = ref
        originals[stand_in] = whole
        return stand_in

    seen: set[sp.Basic] = set()
    while too_big(text):
        candidates = [c for c in _parts(expr) if c not in seen and not c.is_Atom]
        if not candidates:
            raise FormulaTooLong(f"a formula of {len(text)} characters exceeds Excel's limits "
                                 "and cannot be split further")
        printer = ExcelPrinter(refs, bools)
        deep = nesting(text) > MAX_NESTING  # move the deepest part out, else the longest

        def size(c):
            t = printer.doprint(c)
            return (nesting(t), len(t)) if deep else (len(t), 0)

        biggest = max(candidates, key=lambda c: (size(c), sp.default_sort_key(c)))
        seen.add(biggest)
        expr = expr.xreplace({biggest: helper(biggest)})
        printer = ExcelPrinter(refs, bools)
        text = "=" + printer.doprint(expr)
    return text


def evaluate(expr: sp.Basic, env: Mapping[sp.Symbol, object]) -> object:
    """``expr`` over symbols with these values, on planner's numeric runtime (a part's cached value)."""
    from ...compute.symbolic import program

    import numpy as np

    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    v = program(syms, [expr])([np.bool_(env[s]) if isinstance(env[s], bool) else env[s] for s in syms])[0]
    return bool(v) if isinstance(v, (bool, np.bool_)) else float(v)


_ASSOCIATIVE = (sp.Add, sp.Mul, sp.Max, sp.Min, sp.And, sp.Or)


def _parts(e: sp.Basic) -> list[sp.Basic]:
    """Subexpressions that can move into a helper cell (Piecewise pairs opened)."""
    out = []
    for a in e.args:
        if isinstance(a, sp.functions.elementary.piecewise.ExprCondPair):
            out.extend(x for x in a.args if x is not sp.true)
        else:
            out.append(a)
    return out

