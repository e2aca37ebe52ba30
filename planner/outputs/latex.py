"""LaTeX for people: the plan's formulas as a reader meets them in a report.

A :class:`sympy.printing.latex.LatexPrinter` subclass in the shape of SymPy's
own printers: a few small ``_print_<Class>`` methods, each one rule.

* Every product shows its multiplication (``2 \\cdot \\mathrm{batch}``):
  juxtaposed multi-letter names would run together.
* A name of more than one letter is upright text with its underscores
  (``\\mathrm{draft\\_cost}``, ``\\mathrm{h100.peak}``, ``\\mathrm{customers0}``:
  no subscript from a digit or an underscore); a Greek name is its letter
  (``alpha`` is α); a one-letter name is a variable (italic ``c``).
* A true/false quantity used in a condition is its name, not ``= 1``
  (SymPy holds it as ``Eq(flag, 1)``); ``if`` reads "if" and "otherwise".
* Integers are grouped as in the workbook (``70{,}000{,}000{,}000``).

The output renders with KaTeX and with GitHub's MathJax (the tests render
every shipped plan's report with KaTeX, ``throwOnError``).
"""

from __future__ import annotations

import re
from typing import Collection, Optional

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE

GROUP_FROM = 10_000  # integers from here up get thousands separators


def name_latex(name: str) -> str:
    """A plan name as LaTeX: ``\\alpha``, ``c``, or ``\\mathrm{draft\\_cost}``."""
    if len(name) == 1 and name.isalpha():
        return name
    greek = sp.latex(sp.Symbol(name))
    if greek.startswith("\\") and greek[1:] == name.lower() and name.isalpha():
        return greek  # alpha, gamma, Lambda...
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


def group_digits(digits: str) -> str:
    """``70000000000`` -> ``70{,}000{,}000{,}000`` (``{,}``: a comma without the space of punctuation)."""
    sign = "-" if digits.startswith("-") else ""
    digits = digits.lstrip("-")
    if len(digits) < len(str(GROUP_FROM)):
        return sign + digits
    head = len(digits) % 3 or 3
    parts = [digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)]
    return sign + "{,}".join(parts)


def _decimal(r: sp.Rational, digits: int = 12) -> Optional[str]:
    """``1/5`` -> ``0.2``: a rational whose denominator divides a power of ten, as a short decimal."""
    q = int(r.q)
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    places = max(twos, fives)
    if q != 1 or places > digits:
        return None
    sign = "-" if r.p < 0 else ""
    scaled = abs(int(r.p)) * 10 ** places // int(r.q)
    whole, frac = divmod(scaled, 10 ** places)
    return f"{sign}{group_digits(str(whole))}.{str(frac).rjust(places, '0')}"


class PlanLatexPrinter(LatexPrinter):
    """LaTeX of SymPy expressions over a plan's symbols. ``booleans``: the names
    of true/false quantities (their ``Eq(name, 1)`` prints as the name)."""

    printmethod = "_plan_latex"

    def __init__(self, booleans: Collection[str] = (), settings: Optional[dict] = None) -> None:
        super().__init__({"mul_symbol": "dot", **(settings or {})})
        self.booleans = frozenset(booleans)

    def _print_Symbol(self, expr, style="plain"):
        return name_latex(expr.name)

    _print_Dummy = _print_Symbol

    def _print_Integer(self, expr):
        return group_digits(str(expr.p))

    def _print_Rational(self, expr):
        if expr.q == 1:
            return self._print_Integer(expr)
        decimal = _decimal(expr)
        if decimal is not None:  # 0.2 as the plan wrote it, not 1/5
            return decimal
        sign = "- " if expr.p < 0 else ""
        return rf"{sign}\frac{{{group_digits(str(abs(expr.p)))}}}{{{group_digits(str(expr.q))}}}"

    def _print_Mul(self, expr):
        # `0.97 * price` as written, not \frac{97 price}{100}; small denominators stay fractions (x / 2)
        coeff, rest = expr.as_coeff_Mul()
        if isinstance(coeff, sp.Rational) and coeff.q > 10 and rest != 1 and _decimal(coeff) is not None:
            body = self._print(rest) if not isinstance(rest, sp.Add) else self._add_parens(self._print(rest))
            return f"{_decimal(coeff)} \\cdot {body}"
        return super()._print_Mul(expr)

    def _is_flag(self, expr) -> bool:
        return (isinstance(expr, sp.Symbol) and expr.name in self.booleans)

    def _print_Equality(self, expr):
        for flag, one in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
            if self._is_flag(flag) and one == 1:
                return self._print(flag)
            if self._is_flag(flag) and one == 0:
                return r"\neg " + self._print(flag)
        return self._print_Relational(expr)

    def _print_Unequality(self, expr):
        for flag, one in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
            if self._is_flag(flag) and one == 1:
                return r"\neg " + self._print(flag)
        return self._print_Relational(expr)

    def _print_Not(self, e):
        arg = e.args[0]
        if isinstance(arg, sp.Eq) and any(self._is_flag(a) for a in arg.args):
            return r"\neg " + self._print(arg)
        return super()._print_Not(e)

    def _print_Piecewise(self, expr):
        rows = []
        for value, cond in expr.args:
            when = r"\text{otherwise}" if cond is sp.true else r"\text{if } " + self._print(cond)
            rows.append(f"{self._print(value)} & {when}")
        return r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"

    def _print_BooleanTrue(self, e):
        return r"\text{true}"

    def _print_BooleanFalse(self, e):
        return r"\text{false}"

    def parenthesize(self, item, level, is_neg=False, strict=False):
        # a condition inside a product or a power (`2 * (a > b)`) keeps its brackets
        if isinstance(item, (sp.Piecewise,)) and level >= PRECEDENCE["Mul"]:
            return self._add_parens(self._print(item))
        return super().parenthesize(item, level, is_neg, strict)


def latex(expr: sp.Basic, booleans: Collection[str] = ()) -> str:
    """The LaTeX of one expression (``booleans``: the plan's true/false quantity names)."""
    return PlanLatexPrinter(booleans).doprint(expr)


LINE_CHARACTERS = 70  # visible characters of display math that fit GitHub's 836 px column (KaTeX's 1.21 em)


def visible(tex: str) -> int:
    """About how many characters wide ``tex`` renders: commands and braces take no room."""
    text = re.sub(r"\\(?:mathrm|text|operatorname)\{", "", tex)
    text = re.sub(r"\\(?:left|right|begin\{\w+\}|end\{\w+\})", "", text)
    text = re.sub(r"\\(?:cdot|times|leq|geq|neq|lceil|rceil|lfloor|rfloor|neg|alpha|beta|gamma|delta|[a-zA-Z]+)", "x", text)
    return len(re.sub(r"[{}\\&]|\^|_(?=\{)", "", text))


def equation(name: str, expr: sp.Basic, booleans: Collection[str] = ()) -> str:
    """``name = formula`` as LaTeX; a formula too wide for the column is broken over aligned lines
    at its top-level terms (a sum) or factors (a product), a line per group that fits."""
    head = name_latex(name)
    printer = PlanLatexPrinter(booleans)
    body = printer.doprint(expr)
    if visible(head) + 3 + visible(body) <= LINE_CHARACTERS or not isinstance(expr, (sp.Add, sp.Mul)):
        return f"{head} = {body}"
    if isinstance(expr, sp.Add):
        parts = [printer._print(t) for t in printer._as_ordered_terms(expr)]
        joined = [(p if i == 0 else (f"- {p[1:].lstrip()}" if p.startswith("-") else f"+ {p}"))
                  for i, p in enumerate(parts)]
    else:
        coeff, factors = expr.as_coeff_mul()
        items = ([coeff] if coeff != 1 else []) + list(factors)
        parts = [printer.parenthesize(f, PRECEDENCE["Mul"]) for f in items]
        joined = [p if i == 0 else rf"\cdot {p}" for i, p in enumerate(parts)]
    if len(joined) < 2:
        return f"{head} = {body}"
    lines, line = [], ""
    for piece in joined:
        if line and visible(line) + visible(piece) > LINE_CHARACTERS - visible(head) - 3:
            lines.append(line)
            line = ""
        line = f"{line} {piece}".strip()
    lines.append(line)
    if len(lines) == 1:
        return f"{head} = {body}"
    return (r"\begin{aligned} " + head + r" ={} & " + r" \\ & ".join(lines) + r" \end{aligned}")
