"""The plan's IR -> Excel formula generator: one line per construct, precedence traps, units into the
cell's display unit, and what Excel cannot express (which must raise, never print something wrong).

Each case is a formula as a plan writes it and the formula the workbook writes for it: the plan's own
words, over the cells as they hold their figures. The same formulas are evaluated by LibreOffice and
Gnumeric in test_excel_workbook.py (``test_printer_formulas_evaluate_in_libreoffice``).
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from planner.outputs.excel.book import scale_of
from planner.outputs.excel.generator import (ATOM, Generator, NotWritten, Piece, UnsupportedFormula, nesting,
                                             number)
from planner.plan import loads_compiled

BASE = """unit USD
a = 2
b = 3
c = 2
x = 2.5
y = 0.7
flag = true
bw = 3 TB/s
wb = 140 GB
months = 36 month
rent = 100 USD/month
rate = 7%
"""


def gen_for(plan, refs=None, **kw) -> Generator:
    refs = refs if refs is not None else {
        n: Piece(n, ATOM, None if q.is_bool else scale_of(q)) for n, q in plan.model.quantities.items()}
    return Generator(plan.model, refs, **kw)


def cash_flow_rows():
    """A stand-in for the Cash flows sheet's rows: what each written row holds (its cells, values and label),
    and the ``row`` callback that records one (its values computed, as the sheet computes them where it writes
    the row) and gives its range, from row 4 on, its first cell in column D."""
    rows = []

    def row(cells, values, label, written, unit="", shared=False, at=None):
        rows.append((cells, values(), label))
        line = len(rows) + 3
        return [f"'Cash flows'!$D${line}:${chr(ord('D') + len(cells) - 1)}${line}"], ("'Cash flows'", line)
    return rows, row


def p(text: str, display: str = "") -> str:
    """The formula the workbook writes for ``t = text`` (in ``t``'s display unit)."""
    plan = loads_compiled(BASE + f"t = {text}" + (f" -> {display}" if display else "") + "\n")
    q = plan.model.quantities["t"]
    return gen_for(plan).formula(q.definition.expr, None if q.is_bool else scale_of(q))[1:]


# (formula as written, Excel text): one construct per line
CASES = [
    # atoms and numbers (exact to 15 digits, Excel's own precision)
    ("x", "x"),
    ("x + 2048", "x+2048"),
    ("70e9 * x", "7E+10*x"),
    ("1e12 * x", "1E+12*x"),
    ("4.15 * x", "4.15*x"),
    ("x / 8", "x/8"),
    ("2 / 3 * x", "2/3*x"),
    ("x * 0.125", "x*0.125"),
    ("x * 1e-12", "x*1E-12"),
    # arithmetic, as written: the author's order and parentheses
    ("x + y", "x+y"),
    ("x - y", "x-y"),
    ("1 - x", "1-x"),
    ("x - (y - c)", "x-(y-c)"),
    ("x + (y + c)", "x+(y+c)"),
    ("x / (y * c)", "x/(y*c)"),
    ("x / (y + c)", "x/(y+c)"),
    ("(x + y) * c", "(x+y)*c"),
    ("x * (y / c)", "x*(y/c)"),
    ("x^2", "x^2"),
    ("x^(-2)", "x^(-2)"),
    ("1 / x", "1/x"),
    ("x^(-y)", "IF(-y*LN(ABS(x)+1E-300)<-708,0,x^(-y))"),  # 0 below the smallest double
    ("sqrt(x)", "SQRT(x)"),
    ("x^(1/3)", "x^(1/3)"),  # a constant exponent: no underflow guard
    ("x^1.5", "x^1.5"),
    # precedence traps: unary minus binds tighter than ^ in Excel; ^ is left-associative
    ("-x^2", "-(x^2)"),
    ("-x * y", "-x*y"),  # negation is exact: -(x*y) is (-x)*y, no parentheses needed
    ("-x / 12", "-x/12"),
    ("-(x + y)", "-(x+y)"),
    ("(-a - b)^3", "(-a-b)^3"),
    ("(x + y)^2", "(x+y)^2"),
    ("(-a)^3", "(-a)^3"),
    ("2^x", "IF(x*LN(2)<-708,0,2^x)"),
    ("-a^b", "-IF(b*LN(ABS(a)+1E-300)<-708,0,a^b)"),
    ("a^b^c", "IF(IF(c*LN(ABS(b)+1E-300)<-708,0,b^c)*LN(ABS(a)+1E-300)<-708,0,a^IF(c*LN(ABS(b)+1E-300)<-708,0,b^c))"),
    ("(a^b)^c", "IF(c*LN(ABS(IF(b*LN(ABS(a)+1E-300)<-708,0,a^b))+1E-300)<-708,0,"
                "IF(b*LN(ABS(a)+1E-300)<-708,0,a^b)^c)"),
    # built-ins, spelled from their records
    ("max(x, y, c)", "MAX(x,y,c)"),
    ("min(x, y)", "MIN(x,y)"),
    ("abs(x - y)", "ABS(x-y)"),
    ("ln(x)", "LN(x)"),
    ("log(x, 2)", "LN(x)/LN(2)"),
    ("2 * log(x, 2)", "2*(LN(x)/LN(2))"),
    ("exp(x)", "EXP(x)"),
    ("floor(x)", "INT(x)"),
    ("ceil(x / y)", "-INT(-(x/y))"),
    ("round(x)", "ROUND(x,0)"),  # Excel's ROUND takes its digits
    ("round(x, 2)", "ROUND(x,2)"),
    ("if(x > y, x, y)", "IF(x>y,x,y)"),
    ("if(x > 1, x, if(x > 0, y, c))", "IF(x>1,x,IF(x>0,y,c))"),
    ("pmt(rate / 12, 48, 55000)", "PMT(rate/12,48,55000)"),  # Excel's own defaults: left out, as written
    ("fv(rate, 10, -200, -500, 1)", "FV(rate,10,-200,-500,1)"),
    ("npv(rate, -10000, 3000, 4200)", "NPV(rate,-10000,3000,4200)"),
    ("irr(-70000, 12000, 15000, 18000, 21000, 26000)",
     "IRR({-70000,12000,15000,18000,21000,26000})"),  # an array of constants, which every engine reads
    # comparisons and logic; a boolean quantity is the bare cell
    ("x == y", "x=y"),
    ("x != y", "x<>y"),
    ("x < y", "x<y"),
    ("x <= y", "x<=y"),
    ("x > y", "x>y"),
    ("x >= y", "x>=y"),
    ("0 <= x < 3", "AND(0<=x,x<3)"),
    ("not flag", "NOT(flag)"),
    ("flag == false", "flag=FALSE"),
    ("x < y and flag", "AND(x<y,flag)"),
    ("x < y or x > c or flag", "OR(x<y,x>c,flag)"),
    ("x + y == 2 * c", "x+y=2*c"),
    # lists, written out
    ("sum([x, y, c])", "SUM(x,y,c)"),
    ("max([x, y])", "MAX(x,y)"),
    ("count(v > 1 for v in [x, y])", "SUM(IF(x>1,1,0),IF(y>1,1,0))"),
    # a division by zero is Excel's own #DIV/0!, where planner reports it too
    ("0 / x", "0/x"),
    ("(1e-200)^2 + x", "0+x"),  # a power of literals below the smallest double: 0, as planner (Excel: #NUM!)
]


@pytest.mark.parametrize("text, excel", CASES, ids=[t for t, _ in CASES])
def test_generator(text, excel):
    assert p(text) == excel


# Units: each cell holds its figure in its display unit; the scales combine as the units do, and a
# conversion is written only where two scales meet that differ, or into the cell's own unit.
UNITS = [
    ("wb / bw", "ms", "wb/bw"),  # GB over TB/s is ms already
    ("wb / bw", "s", "wb/bw/1000"),
    ("months * rent", "USD", "months*rent"),  # months times USD a month
    ("months / 12 month", "", "months/12"),
    ("months / 1 year", "", "months/12"),  # a literal 1 of a unit writes no factor of 1
    ("months - 6 month", "month", "months-6"),
    ("months + 1 year", "month", "months+12"),  # the literal in the sum's unit
    ("50% * x", "", "0.5*x"),  # a percentage is its value
    ("wb + wb", "TB", "(wb+wb)/1000"),
    ("bw * 2 s", "GB", "bw*2*1000"),
]


@pytest.mark.parametrize("text, display, excel", UNITS, ids=[f"{t} -> {d}" for t, d, _ in UNITS])
def test_units_into_the_display_unit(text, display, excel):
    assert p(text, display) == excel


@pytest.mark.parametrize("value, text", [
    (Fraction(3), "3"), (Fraction(-3), "-3"), (Fraction(0), "0"), (Fraction(1, 1000), "0.001"),
    (Fraction(1, 10**5), "0.00001"), (Fraction(1, 10**6), "1E-6"), (Fraction(123456), "123456"),
    (Fraction(10**6), "1E+6"), (Fraction(1_073_741_824), "1073741824"), (Fraction(-83, 20), "-4.15"),
    (Fraction(1, 3), "1/3"), (0.1, "0.1"), (1e-300, "1E-300"), (Fraction(2) ** 60, "1.152921504606847E+18"),
])
def test_number(value, text):
    assert number(value) == text


def test_constants_outside_the_double_range():
    assert number(Fraction(1, 10**400)) == "0"  # underflow: 0, as planner computes it (1E-400 is #VALUE!)
    assert number(-1e-320) == "0"
    assert number(Fraction(1, 10**300)) == "1E-300"
    with pytest.raises(UnsupportedFormula):
        number(Fraction(10**400))


def test_a_name_without_a_cell_raises():
    plan = loads_compiled(BASE + "t = x + y\n")
    with pytest.raises(UnsupportedFormula, match="no cell or name for `y`"):
        gen_for(plan, {"x": Piece("x", ATOM, Fraction(1))}).formula(plan.model.quantities["t"].definition.expr)


def test_a_sum_over_a_range_needs_the_cash_flows_sheet():
    plan = loads_compiled("n = 12 where integer, 1 <= n <= 24\nt = sum(m^2 for m in 1..n)\n")
    with pytest.raises(NotWritten):
        gen_for(plan).formula(plan.model.quantities["t"].definition.expr)


def test_a_sum_over_a_range_is_a_row_of_terms():
    plan = loads_compiled("n = 12 where integer, 1 <= n <= 24\nt = sum(m^2 for m in 1..n)\n"
                          "u = sum(m for m in 3..10)\n")
    rows = []

    def row(cells, values, label, written, unit="", shared=False, at=None):
        rows.append((cells, values(), label, written))
        return [f"'Cash flows'!$D${len(rows) + 3}:$AA${len(rows) + 3}"], ("'Cash flows'", len(rows) + 3)

    values = {"n": 12.0, "t": 650.0, "u": 52.0}
    gen = gen_for(plan, row=row, values=values, where="Model: t")
    assert gen.formula(plan.model.quantities["t"].definition.expr) == "=SUM('Cash flows'!$D$4:$AA$4)"
    cells, held, label, written = rows[0]
    assert len(cells) == 24  # as many as the range can hold; each beyond the end is 0
    assert cells[0] == "=IF(D$3<=n,D$3^2,0)" and cells[23] == "=IF(AA$3<=n,AA$3^2,0)"
    assert held[:3] == [1.0, 4.0, 9.0] and held[11] == 144.0 and held[12:] == [0.0] * 12
    assert (label, written) == ("Model: t (m = 1)", "m^2")
    gen.formula(plan.model.quantities["u"].definition.expr)
    cells, held, _, _ = rows[1]
    assert cells[0] == "=(D$3+2)" and len(cells) == 8 and held == [float(v) for v in range(3, 11)]


def long_sum(n: int):
    text = "".join(f"v{i} = {i + 1}\n" for i in range(n)) + "t = " + " + ".join(f"v{i} * exp(v{i} / 1000)" for i in range(n))
    plan = loads_compiled(text + "\n")
    return plan, plan.model.quantities["t"].definition.expr


def test_too_long_without_helper_cells_is_not_written():
    plan, expr = long_sum(600)
    with pytest.raises(NotWritten):
        gen_for(plan).formula(expr)


def test_too_long_spills_into_helper_cells():
    plan, expr = long_sum(600)
    helpers: list[str] = []

    def spill(text: str, value) -> str:
        assert text.startswith("=") and len(text) <= 8192 and "Inputs!" in text
        helpers.append((text, value))
        return f"Helpers!$B${len(helpers)}"

    refs = {n: Piece(n, ATOM, Fraction(1)) for n in plan.model.quantities}
    qualified = {n: Piece(f"Inputs!$B${i + 1}", ATOM, Fraction(1)) for i, n in enumerate(plan.model.quantities)}
    values = {n: float(i + 1) for i, n in enumerate(plan.model.quantities)}
    text = Generator(plan.model, refs, spill=spill, row_refs=qualified, values=values).formula(expr)
    assert len(text) <= 8192 and helpers and f"Helpers!$B${len(helpers)}" in text
    everything = text + "".join(t for t, _ in helpers)  # every term is somewhere, once
    assert all(everything.count(f"Inputs!$B${i + 1}*") + everything.count(f"v{i}*") == 1 for i in range(600))
    first, value = helpers[0]
    assert isinstance(value, float) and value > 0  # the helper cell's cached value is planner's


def test_more_than_255_arguments_nest():
    plan = loads_compiled("".join(f"m{i} = {i}\n" for i in range(600)) + "t = max(" +
                          ", ".join(f"m{i}" for i in range(600)) + ")\n")
    text = gen_for(plan).formula(plan.model.quantities["t"].definition.expr)
    assert text.startswith("=MAX(MAX(m")
    assert all(part.count(",") <= 254 for part in re.findall(r"MAX\(([^()]*)\)", text))


def test_deep_nesting_spills_past_64_levels():
    expr_text = "y"
    for i in range(80):
        expr_text = f"if(x < {i}, {i}, {expr_text})"
    plan = loads_compiled(BASE + f"t = {expr_text}\n")
    expr = plan.model.quantities["t"].definition.expr
    with pytest.raises(NotWritten):
        gen_for(plan).formula(expr)
    helpers: list[str] = []

    def spill(text: str, value) -> str:
        helpers.append(text)
        return f"Helpers!$B${len(helpers)}"

    text = gen_for(plan, spill=spill).formula(expr)
    assert helpers and all(nesting(t) <= 64 for t in [text] + helpers)
    assert nesting("=IF(a>1,MAX(b,'x(y'!A1),(c+d))") == 2


def test_every_ir_node_has_a_method():
    from planner.language import ir
    from planner.outputs.excel import generator

    assert issubclass(generator.Generator, ir.Visitor)  # which refuses, at import, a walk lacking a node
    assert all(generator.Generator._visits[node].__name__ == "visit_" + node.__name__ for node in ir.NODES)


def test_the_generator_imports_no_sympy():
    import subprocess
    import sys

    code = ("import sys; import planner.outputs.excel.generator, planner.outputs.excel.book; "
            "print('sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_sum_up_to_an_end_that_moves_with_the_outer_range():
    """``sum(k^2 for k in 1..m)`` and ``.. m - 1`` inside a sum over ``m`` from 2: each inner sum's terms
    are one row (they do not use ``m``), and each outer term adds the part of it up to its end by the
    header row's numbers (SUMIF), not a block of rows."""
    plan = loads_compiled("n = 6 where integer, 1 <= n <= 6\n"
                          "t = sum(sum(k^2 for k in 1..m) - sum(k^2 for k in 1..m - 1) for m in 2..n)\n")
    rows, row = cash_flow_rows()
    gen = gen_for(plan, row=row, values={"n": 6.0, "t": 35.0}, where="Model: t")
    assert gen.formula(plan.model.quantities["t"].definition.expr) == "=SUM('Cash flows'!$D$6:$H$6)"
    (own, own_values, _), (moved, moved_values, _), (outer, outer_values, _) = rows
    assert own[0] == "=D$3^2" and own_values == [1.0, 4.0, 9.0, 16.0, 25.0, 36.0]  # k^2, one row
    assert moved[0] == "=D$3^2" and moved_values == own_values[:5]  # up to m - 1: at most 5 terms
    assert outer[0] == ("=IF((D$3+1)<=n,SUMIF('Cash flows'!$D$3:$I$3,\"<=\"&((D$3+1)),'Cash flows'!$D$4:$I$4)"
                        "-SUMIF('Cash flows'!$D$3:$H$3,\"<=\"&((D$3+1)-1),'Cash flows'!$D$5:$H$5),0)")
    assert outer_values == [4.0, 9.0, 16.0, 25.0, 36.0]  # cash(m) - cash(m - 1) is m^2


def test_a_function_of_the_month_that_sums_is_one_row_its_calls_read():
    """``cash(m) = sum(k^2 for k in 1..m)`` is one row, cash at 1, 2 ... 6 (the running total of its terms'
    row); ``cash(m)`` and ``cash(m - 1)`` for ``m`` from 2 read it (INDEX by the number), not a row each."""
    plan = loads_compiled("n = 6 where integer, 1 <= n <= 6\ncash(m) = sum(k^2 for k in 1..m)\n"
                          "t = sum(cash(m) - cash(m - 1) for m in 2..n)\nlast = cash(n)\n")
    rows, row = cash_flow_rows()
    gen = gen_for(plan, row=row, values={"n": 6.0, "t": 35.0, "last": 91.0}, where="Model: t")
    assert gen.formula(plan.model.quantities["t"].definition.expr) == "=SUM('Cash flows'!$D$6:$H$6)"
    assert gen.formula(plan.model.quantities["last"].definition.expr) == "=INDEX('Cash flows'!$D$5:$I$5,1,n)"
    (terms, term_values, _), (cash, cash_values, label), (outer, outer_values, _) = rows
    assert terms[0] == "=D$3^2" and term_values == [1.0, 4.0, 9.0, 16.0, 25.0, 36.0]
    assert label == "Model: cash(m) at each m" and cash[:2] == ["=SUM('Cash flows'!$D$4:D$4)", "=SUM('Cash flows'!$D$4:E$4)"]
    assert cash_values == [1.0, 5.0, 14.0, 30.0, 55.0, 91.0]  # 1 + 4 + ... + m^2
    assert outer[0] == ("=IF((D$3+1)<=n,INDEX('Cash flows'!$D$5:$I$5,1,(D$3+1))"
                        "-INDEX('Cash flows'!$D$5:$I$5,1,(D$3+1)-1),0)")
    assert outer_values == [4.0, 9.0, 16.0, 25.0, 36.0]  # cash(m) - cash(m - 1) is m^2


def test_a_windowed_sum_inside_a_range_is_sumifs_over_its_terms_row():
    """``sum(if(m - w < k and k != 3, k^2, 0) for k in 1..m)`` inside a sum over ``m``: the terms ``k^2``
    once as a row, added up where ``k`` keeps to each condition and to the range's end (SUMIFS over the
    header's numbers), not a block of rows. By hand, w = 2: m = 1..6 gives 1, 1 + 4, 4 (k = 2; 3 left
    out), 16, 16 + 25, 25 + 36."""
    plan = loads_compiled("n = 6 where integer, 1 <= n <= 6\nw = 2 where integer, 0 <= w <= 6\n"
                          "t = sum(sum(if(m - w < k and k != 3, k^2, 0) for k in 1..m) for m in 1..n)\n")
    rows, row = cash_flow_rows()
    gen = gen_for(plan, row=row, values={"n": 6.0, "w": 2.0, "t": 128.0}, where="Model: t")
    assert gen.formula(plan.model.quantities["t"].definition.expr) == "=SUM('Cash flows'!$D$5:$I$5)"
    (terms, term_values, _), (outer, outer_values, _) = rows
    assert terms[0] == "=D$3^2" and term_values == [1.0, 4.0, 9.0, 16.0, 25.0, 36.0]
    header = "'Cash flows'!$D$3:$I$3"
    assert outer[0] == (f"=IF(D$3<=n,SUMIFS('Cash flows'!$D$4:$I$4,{header},\">\"&(D$3-w),{header},\"<>\"&3,"
                        f"{header},\"<=\"&D$3),0)")
    assert outer_values == [1.0, 5.0, 4.0, 16.0, 41.0, 61.0]
