"""The SymPy -> Excel formula printer: one line per construct, precedence traps,
and what Excel cannot express (which must raise, never print something wrong).

The same expressions are evaluated by LibreOffice in test_excel_workbook.py
(``test_printer_formulas_evaluate_in_libreoffice``).
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
import sympy as sp

from planner.outputs.excel.printer import FormulaTooLong, UnsupportedFormula, formula, nesting, number

a, b, c, x, y = sp.symbols("a b c x y", real=True)
flag = sp.Symbol("flag", real=True)
REFS = {a: "a", b: "b", c: "c", x: "x", y: "y", flag: "flag"}
BOOLS = {flag}


def p(e) -> str:
    return formula(e, REFS, BOOLS)[1:]


# (expression, Excel text): one construct per line
CASES = [
    # atoms and numbers (exact to 15 digits, Excel's own precision)
    (x, "x"),
    (sp.Integer(2048), "2048"),
    (sp.Integer(70_000_000_000), "7E+10"),
    (sp.Integer(10) ** 12 * x, "1E+12*x"),
    (sp.Rational(83, 20) * x, "4.15*x"),
    (x / 8, "x/8"),
    (x / 1000, "x/1000"),
    (sp.Rational(2, 3) * x, "2*x/3"),
    (sp.Rational(1, 3), "1/3"),
    (sp.Rational(1, 10**12), "1E-12"),
    (sp.Rational(1, 8), "0.125"),
    (sp.Integer(2) ** 60 * x, "1.152921504606847E+18*x"),
    (sp.Float(0.1) * x, "0.1*x"),
    (sp.E, "EXP(1)"),
    (sp.pi * x, "PI()*x"),
    # arithmetic
    (x + y, "x+y"),
    (x - y, "x-y"),
    (x - 3, "x-3"),
    (1 - x, "1-x"),
    (x * y, "x*y"),
    (x / (y * c), "x/(c*y)"),
    (x / (y + c), "x/(c+y)"),
    ((x + y) * c, "c*(x+y)"),
    (x ** 2, "x^2"),
    (x ** -2, "1/x^2"),
    (1 / x, "1/x"),
    (x ** (-y), "IF((-y)*LN(ABS(x)+1E-300)<-708,0,x^(-y))"),  # 0 below the smallest double
    (sp.sqrt(x), "SQRT(x)"),
    (1 / sp.sqrt(x), "1/SQRT(x)"),
    (x ** sp.Rational(1, 3), "x^(1/3)"),
    (x ** sp.Rational(3, 2), "x^1.5"),
    # precedence traps: unary minus binds tighter than ^ in Excel; ^ is left-associative
    (-x ** 2, "-(x^2)"),
    (-x * y, "-x*y"),  # negation is exact: -(x*y) is (-x)*y, no parentheses needed
    (-x / 12, "-x/12"),
    (-x ** 2 * y, "-y*x^2"),
    (-(x * y) ** 2, "-(x^2*y^2)"),  # a product that starts with a power keeps them
    (-(x + y), "-x-y"),
    (a ** b ** c, "IF(IF(c*LN(ABS(b)+1E-300)<-708,0,b^c)*LN(ABS(a)+1E-300)<-708,0,"
                  "a^IF(c*LN(ABS(b)+1E-300)<-708,0,b^c))"),
    ((a ** b) ** c, "IF(c*LN(ABS(IF(b*LN(ABS(a)+1E-300)<-708,0,a^b))+1E-300)<-708,0,"
                    "IF(b*LN(ABS(a)+1E-300)<-708,0,a^b)^c)"),
    (sp.Pow(-a - b, 3), "(-a-b)^3"),
    (sp.Pow(-a, sp.Rational(1, 3)), "(-a)^(1/3)"),
    ((x + y) ** 2, "(x+y)^2"),
    (2 ** x, "IF(x*LN(2)<-708,0,2^x)"),
    (-a ** b, "-IF(b*LN(ABS(a)+1E-300)<-708,0,a^b)"),
    # functions
    (sp.Max(x, y, c), "MAX(c,x,y)"),
    (sp.Min(x, y), "MIN(x,y)"),
    (sp.Abs(x), "ABS(x)"),
    (sp.sign(x), "SIGN(x)"),
    (sp.log(x), "LN(x)"),
    (sp.log(x, 2), "LN(x)/LN(2)"),
    (sp.exp(x), "EXP(x)"),
    (sp.floor(x), "INT(x)"),
    (sp.ceiling(x / y), "-INT(-(x/y))"),
    (sp.ceiling(-x), "-INT(x)"),
    (sp.Mod(x, y), "MOD(x,y)"),
    (sp.Piecewise((x, x > y), (y, True)), "IF(x>y,x,y)"),
    (sp.Piecewise((x, x > 1), (y, x > 0), (c, True)), "IF(x>1,x,IF(x>0,y,c))"),
    # comparisons and logic; a boolean quantity is the bare cell (TRUE = 1 is FALSE in Excel)
    (sp.Eq(x, y), "x=y"),
    (sp.Ne(x, y), "x<>y"),
    (x < y, "x<y"),
    (x <= y, "x<=y"),
    (x > y, "x>y"),
    (x >= y, "x>=y"),
    (sp.Eq(flag, 1), "flag"),
    (sp.Not(sp.Eq(flag, 1)), "NOT(flag)"),
    (sp.Eq(sp.Eq(flag, 1), sp.false), "flag=FALSE"),
    (sp.And(x < y, sp.Eq(flag, 1)), "AND(flag,x<y)"),
    (sp.Or(x < y, x > c), "OR(x>c,x<y)"),
    (sp.Not(x < y), "x>=y"),
    (sp.true, "TRUE"),
    (sp.false, "FALSE"),
    (sp.Eq(x + y, 2 * c), "x+y=2*c"),
]


@pytest.mark.parametrize("expr, text", CASES, ids=[t for _, t in CASES])
def test_printer(expr, text):
    assert p(expr) == text


@pytest.mark.parametrize("value, text", [
    (Fraction(3), "3"), (Fraction(-3), "-3"), (Fraction(0), "0"), (Fraction(1, 1000), "0.001"),
    (Fraction(1, 10**5), "0.00001"), (Fraction(1, 10**6), "1E-6"), (Fraction(123456), "123456"),
    (Fraction(10**6), "1E+6"), (Fraction(1_073_741_824), "1073741824"), (Fraction(-83, 20), "-4.15"),
    (Fraction(1, 3), "1/3"), (0.1, "0.1"), (1e-300, "1E-300"),
])
def test_number(value, text):
    assert number(value) == text


def test_display_scale_is_written_into_the_formula():
    assert formula(x, REFS, scale=Fraction(10**9)) == "=x/1E+9"
    assert formula(x + y, REFS, scale=Fraction(1, 1000)) == "=(x+y)*1000"
    assert formula(x * y, REFS, scale=Fraction(1, 8)) == "=(x*y)*8"
    # a constant folds its unit in: 46.667 ms is 0.046667 s, shown as 46.667
    assert formula(sp.Rational(46667, 10**6), REFS, scale=Fraction(1, 1000)) == "=46.667"


# What Excel cannot express: each must raise, never print something wrong.
UNSUPPORTED = [
    sp.I * x,
    sp.oo,
    -sp.oo,
    sp.nan,
    sp.gamma(x),
    sp.LambertW(x),
    sp.Integral(x, x),
    sp.Sum(x, (x, 1, 3)),
    sp.Xor(x > 1, y > 1),
    sp.Piecewise((x, x > 1)),  # no "otherwise" branch
    sp.Symbol("unknown") + x,  # no cell for it
    sp.Function("f")(x),
]


@pytest.mark.parametrize("expr", UNSUPPORTED, ids=[str(e) for e in UNSUPPORTED])
def test_unsupported_constructs_raise(expr):
    with pytest.raises(UnsupportedFormula):
        formula(expr, REFS, BOOLS)


def test_a_division_by_zero_is_excels_own():
    # SymPy's zoo is 1/0: the workbook writes it so (#DIV/0! in every engine), as where planner reports a
    # division by zero that SymPy's algebra removed (`0 / z` is IF(z=0,(1/0),0))
    assert formula(sp.zoo, REFS) == "=(1/0)"
    assert formula(sp.Piecewise((sp.zoo, sp.Eq(x, 0)), (y, True)), REFS) == "=IF(x=0,(1/0),y)"


def long_sum(n: int):
    syms = sp.symbols(f"v0:{n}", real=True)
    refs = {s: f"Inputs!$B${i + 1}" for i, s in enumerate(syms)}
    return sp.Add(*[s * sp.exp(s) for s in syms]), refs


def test_too_long_without_helper_cells_raises():
    expr, refs = long_sum(600)
    with pytest.raises(FormulaTooLong):
        formula(expr, refs)


def test_too_long_spills_into_helper_cells():
    expr, refs = long_sum(600)
    helpers: list[str] = []

    def spill(text: str) -> str:
        assert text.startswith("=") and len(text) <= 8192
        helpers.append(text)
        return f"Helpers!$B${len(helpers)}"

    text = formula(expr, refs, spill=spill)
    assert len(text) <= 8192
    assert helpers and "Helpers!$B$1" in text
    # every term is somewhere: in the formula or in a helper cell
    everything = text + "".join(helpers)
    assert all(f"Inputs!$B${i + 1}" in everything for i in range(600))


def test_more_than_255_arguments_nest():
    syms = sp.symbols("m0:600", real=True)
    refs = {s: s.name for s in syms}
    text = formula(sp.Max(*syms, evaluate=False), refs)  # (SymPy's own Max of 600 takes minutes)
    assert text.startswith("=MAX(MAX(m")
    assert all(part.count(",") <= 254 for part in re.findall(r"MAX\(([^()]*)\)", text))


def test_deep_nesting_spills_past_64_levels():
    branches = [(sp.Integer(i), x < i) for i in range(80)] + [(y, True)]
    expr = sp.Piecewise(*branches)
    with pytest.raises(FormulaTooLong):
        formula(expr, REFS)
    helpers: list[str] = []

    def spill(text: str) -> str:
        helpers.append(text)
        return f"Helpers!$B${len(helpers)}"

    text = formula(expr, REFS, spill=spill)
    assert helpers and all(nesting(t) <= 64 for t in [text] + helpers)
    assert nesting("=IF(a>1,MAX(b,'x(y'!A1),(c+d))") == 2


def test_constants_outside_the_double_range():
    assert number(Fraction(1, 10**400)) == "0"  # underflow: 0, as planner computes it (1E-400 is #VALUE!)
    assert number(-1e-320) == "0"
    assert number(Fraction(1, 10**300)) == "1E-300"
    with pytest.raises(UnsupportedFormula):
        number(Fraction(10**400))
