"""The table of built-in functions (planner.language.functions), held to every generator.

One row per record and route: every record has every field each generator reads; each published
example comes out of the float runtime, the numpy runtime, the exact route, the symbolic route
(its value and its compiled program), the report's LaTeX and the workbook's formula; a missing
piece fails here, not in a user's plan. The finance functions' figures are Microsoft's documented
examples of Excel's PMT, PV and FV (support.microsoft.com), never planner's own output.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy as sp

from planner.compute import runtime
from planner.compute.exact import ExactEvaluator, NotRational
from planner.compute.symbolic import program
from planner.language import ir
from planner.language.errors import PlanError
from planner.language.functions import BUILTINS, FUNCTIONS, fill
from planner.outputs.excel.generator import Generator, Piece
from planner.outputs.latex import formula_latex
from planner.plan import loads_compiled

RECORDS = list(FUNCTIONS.values())
EXAMPLES = [(f, args, value) for f in RECORDS for args, value in f.examples]


def _literal(v) -> str:
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, Fraction) and v.denominator != 1:
        return f"{v.numerator}/{v.denominator}"
    return repr(v) if isinstance(v, float) else str(v)


def _plan(f, args):
    return loads_compiled(f"x = {f.name}({', '.join(_literal(a) for a in args)})\n")


def _close(got, want) -> bool:
    """Published figures have two decimals (Excel's display); planner's must round to them."""
    if isinstance(want, bool):
        return got == want
    return abs(float(got) - want) <= 0.005 + 1e-12 * abs(want)


@pytest.mark.parametrize("f", RECORDS, ids=lambda f: f.name)
def test_every_record_has_every_field(f):
    assert f.doc and f.params and callable(f.dims) and callable(f.latex) and callable(f.domain)
    assert callable(f.floats) and callable(f.numpy), "every function is a runtime step"
    assert (f.sympy is None) == f.opaque, "a SymPy builder, or an Excel function and its formula"
    assert (f.sheet is None) == f.opaque, "the workbook's spelling, or Excel's own function"
    assert f.sheet_keeps in ("all", "rest") or all(0 <= i < len(f.params) for i in f.sheet_keeps)
    if f.opaque:
        assert f.excel.isupper() and (callable(f.expand) or callable(f.derivative)), "its value and slope"
    assert len(f.defaults) <= len(f.params) and f.examples, "published examples, tested on every route"
    assert BUILTINS[f.name] == (f.lo, f.hi, f.signature)
    assert f.step in runtime.STEPS and f.step in runtime.FLOATS
    assert f.step in runtime.numpy_table()[0]


@pytest.mark.parametrize("f, args, value", EXAMPLES, ids=lambda x: getattr(x, "name", None))
def test_examples_on_the_runtimes(f, args, value):
    import numpy as np

    values = [float(a) if not isinstance(a, bool) else a for a in fill(f, list(args), float)]
    op = runtime.FLOATS[f.step]
    regs = list(range(len(values)))
    if f.fold:
        got = values[0]
        for v in values[1:]:
            got = op([got, v], (0, 1))
    else:
        got = op(values, tuple(regs))
    assert _close(got, value)
    np_op = runtime.numpy_table()[0][f.step]
    arrays = [np.asarray(v) for v in values]
    got = arrays[0] if f.fold else np_op(arrays, tuple(regs))
    if f.fold:
        for v in arrays[1:]:
            got = np_op([got, v], (0, 1))
    assert _close(got, value)


@pytest.mark.parametrize("f, args, value", EXAMPLES, ids=lambda x: getattr(x, "name", None))
def test_examples_through_a_plan(f, args, value):
    plan = _plan(f, args)
    assert _close(plan.evaluate().values["x"], value)  # the compiled numeric route
    model = plan.model
    expr = model.quantities["x"].definition.expr
    exact = ExactEvaluator(model, {})
    if f.exact is not None:
        assert _close(exact.expr(expr), value)
    tree = plan.exprs["x"]
    assert _close(sp.N(tree), value)  # the symbolic route's value
    compiled = program([], [tree])
    assert _close(runtime.run_numpy(compiled, ())[0], value)  # ... and its program
    tex = formula_latex(expr)
    assert tex and "\\operatorname{x}" not in tex
    excel = Generator(model, {}).formula(expr)  # the workbook's formula, from the record's spelling
    assert excel.startswith("=")
    if f.opaque:
        assert excel.startswith(f"={f.excel}(")
    elif isinstance(f.sheet, str):
        assert excel.startswith(f"={f.sheet}(")


def test_every_generator_reads_the_table():
    """No generator names a built-in: adding one is one record (and this test finds a straggler)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "planner"
    generators = ["language/dims.py", "compute/numeric.py", "compute/runtime.py", "compute/exact.py",
                  "compute/diagnose.py", "language/aggregates.py", "outputs/latex.py", "lsp/analysis.py",
                  "outputs/excel/generator.py"]
    for path in generators:
        text = (root / path).read_text(encoding="utf-8")
        for name in ("sqrt", "ceil", "floor", "pmt"):
            assert f'"{name}"' not in text, f"{path} names `{name}`: read planner.language.functions instead"


# ---- finance: Excel's functions, Excel's conventions -------------------------------------------

def _value(text: str, name: str = "x"):
    return loads_compiled(text).evaluate().values[name]


def test_pmt_of_the_car_loan_is_excels():
    assert round(_value("x = pmt(7% / 12, 48, 55000)\n"), 2) == -1317.04


@pytest.mark.parametrize("call, want", [
    ("pmt(8%/12, 10, 10000)", -1037.03),              # Microsoft: monthly payment of a 10-month loan
    ("pmt(6%/12, 18*12, 0, 50000)", -129.08),         # Microsoft: saving 50,000 in 18 years
    ("pv(0.08/12, 12*20, 500, 0, 0)", -59777.15),     # Microsoft: an annuity of 500 a month for 20 years
    ("fv(0.06/12, 10, -200, -500, 1)", 2581.40),      # Microsoft: FV with payments at the start
    ("fv(0.12/12, 12, -1000)", 12682.50),             # Microsoft
    ("fv(0.11/12, 35, -2000, 0, 1)", 82846.25),       # Microsoft
    ("pmt(0, 10, 1000)", -100.0),                     # rate 0: the principal in equal parts
    ("pv(0, 10, -100)", 1000.0),
    ("fv(0, 10, -100, -1000)", 2000.0),
    ("pmt(8%/12, 10, 10000, 0, 1)", -1030.16),        # Microsoft: payments due at the start
    ("npv(10%, -10000, 3000, 4200, 6800)", 1188.44),  # Microsoft: NPV, a cost one year from today
    ("npv(8%, 8000, 9200, 10000, 12000, 14500) - 40000", 1922.06),      # Microsoft: a cost today
    ("npv(8%, 8000, 9200, 10000, 12000, 14500, -9000) - 40000", -3749.47),  # ... and a loss in year 6
])
def test_finance_goldens(call, want):
    assert round(_value(f"x = {call}\n"), 2) == want


@pytest.mark.parametrize("flows, want", [
    ("-70000, 12000, 15000, 18000, 21000", -0.021),           # Microsoft: IRR after four years, -2.1%
    ("-70000, 12000, 15000, 18000, 21000, 26000", 0.087),     # Microsoft: after five years, 8.7%
    ("-70000, 12000, 15000", -0.444),                         # Microsoft: after two years, -44.4%
])
def test_irr_goldens(flows, want):
    got = _value(f"x = irr({flows})\n")
    assert round(got, 3) == want
    assert abs(_value(f"x = npv({got!r}, {flows.split(', ', 1)[1]}) + ({flows.split(',')[0]})\n")) < 1e-6


@pytest.mark.parametrize("flows, message", [
    ("1, 2, 3", "no rate makes the net present value of these cash flows 0"),
    ("-100, 230, -132", "several rates make the net present value of these cash flows 0: 10%, 20%"),
])
def test_irr_reports_no_root_or_several_never_a_guess(flows, message):
    with pytest.raises(PlanError) as err:
        loads_compiled(f"x = irr({flows})\n").evaluate()
    assert message in str(err.value)


NO_RATE = "no rate makes the net present value of these cash flows 0"
SEVERAL = "several rates make the net present value of these cash flows 0: 10%, 20%"
TODAY = "irr(if(m == 0 month, -100, flow at m) for m in 0 month..3 month)"  # -100 today, then the series


@pytest.mark.parametrize("irr, flows, message", [
    ("irr(flow)", "5, 1, 1", NO_RATE), ("irr(flow)", "-100, 230, -132", SEVERAL),
    (TODAY, "-5, -1, -1", NO_RATE), (TODAY, "230, -132, 0", SEVERAL),
])
def test_irr_of_a_series_reports_no_root_or_several_as_of_listed_flows(irr, flows, message):
    """The flows of a series (`irr(net)`, or read `at` each period) without one rate: the error said that
    a series it uses has no value in some period, a division by zero perhaps, of a series with a value in
    every one."""
    with pytest.raises(PlanError) as err:
        loads_compiled(f"periods = 1 month..3 month\nseries flow = [{flows}]\nx = {irr}\n").evaluate()
    assert message in str(err.value) and "has none in some period" not in str(err.value)
    assert err.value.span.line == 3


def test_irr_over_many_points_is_the_same_root():
    import numpy as np

    op = runtime.numpy_table()[0]["irr"]
    rng = np.random.default_rng(1)
    flows = [np.full(300, -70000.0)] + [rng.uniform(10000, 30000, 300) for _ in range(5)]
    got = op(flows, tuple(range(6)))
    want = [FUNCTIONS["irr"].floats(*[float(v[i]) for v in flows]) for i in range(300)]
    assert np.allclose(got, want, rtol=1e-12, atol=1e-15)
    assert np.isnan(op([np.array([-100.0]), np.array([230.0]), np.array([-132.0])], (0, 1, 2))).all()


def test_irr_over_samples_is_the_scalar_irr_on_every_sample():
    """Flows whose signs change once (a price, then savings) have one rate at most: every 25th rate of the
    grid brackets it, Newton's steps refine it. Every sample, with one change or several (two roots, none), zeros among
    the flows and a root of exactly 0, is the scalar irr's root or, where that has none or several, nan."""
    import numpy as np

    op = runtime.numpy_table()[0]["irr"]
    rng = np.random.default_rng(2)
    n = 1500
    flows = [-rng.uniform(100, 400, n)] + [rng.uniform(-2, 12, n) for _ in range(36)]
    flows[1:] = [np.where(np.arange(n) < 700, np.abs(v), v) for v in flows[1:]]  # 700 samples change sign once
    flows[5][:50] = 0.0
    flows[-1][700:800] = -300.0  # a second change at the end: two roots, or none
    flows[0][800:810] = -sum(v[800:810] for v in flows[1:])  # a rate of exactly 0
    got = op(flows, tuple(range(37)))
    want = []
    for i in range(n):
        try:
            want.append(FUNCTIONS["irr"].floats(*[float(v[i]) for v in flows]))
        except ValueError:
            want.append(np.nan)
    assert 50 < np.isnan(want).sum() < 700  # the cases are there
    assert np.allclose(got, want, rtol=1e-12, atol=1e-15, equal_nan=True)


def test_finance_round_trip_and_exact_check():
    plan = loads_compiled("p = pmt(7%/12, 48, 55000)\nback = pv(7%/12, 48, p)\nend = fv(7%/12, 48, p, 55000)\n"
                          "check back == 55000\n")
    v = plan.evaluate().values
    assert math.isclose(v["back"], 55000, rel_tol=1e-12)  # the payments are worth the loan (Excel: PV(r, n, PMT(r, n, L)) = L)
    assert abs(v["end"]) < 1e-6
    exact = ExactEvaluator(plan.model, {})
    assert exact.expr(plan.model.quantities["back"].definition.expr) == 55000  # exactly, in rationals


@pytest.mark.parametrize("text, message", [
    ("unit USD\nx = pmt(7%/12, 48 month, 55000 USD)\n", "`pmt` needs a plain number"),
    ("unit USD\nx = pmt(7%/12, 48, 55000 USD, 10 s)\n", "`pmt` of"),
    ("x = pmt(7%/12, 48)\n", "`pmt` takes 3 to 5 arguments"),
    ("x = fv(1, 2, 3, 4, 5, 6)\n", "`fv` takes 3 to 5 arguments"),
    ("unit USD\nx = irr(-100 USD, 230 s)\n", "`irr` of USD and s"),
    ("unit USD\nx = npv(10 USD, 1 USD, 2 USD)\n", "`npv` needs a plain number, got USD"),
    ("x = irr(-100)\n", "`irr` takes at least 2 arguments"),
])
def test_finance_units_and_arity_are_checked(text, message):
    with pytest.raises(PlanError) as err:
        loads_compiled(text).evaluate()
    assert message in str(err.value)


def test_finance_result_is_in_the_money_unit():
    plan = loads_compiled("unit USD\nloan = 55000 USD\nx = -pmt(7%/12, 48, loan) -> USD\n")
    q = plan.model.quantities["x"]
    assert q.unit_text == "USD"
    assert round(plan.evaluate().values["x"], 2) == 1317.04


def test_finance_domain_errors_point_at_the_argument():
    with pytest.raises(PlanError) as err:
        loads_compiled("n = 0\nx = pmt(5%, n, 1000)\n").evaluate()
    assert "zero periods" in str(err.value)
    with pytest.raises(PlanError) as err:
        loads_compiled("r = -2\nx = pmt(r, 12, 1000)\n").evaluate()
    assert "-100%" in str(err.value)


def test_pmt_derivative_is_the_formulas():
    from planner.compute.symbolic import opaque

    r, n, p = sp.symbols("r n p", positive=True)
    node = opaque(FUNCTIONS["pmt"])(r, n, p, sp.Integer(0), sp.Integer(0))
    d = sp.diff(node, p).subs({r: sp.Rational(7, 1200), n: 48})
    assert math.isclose(float(d), -1317.0406 / 55000, rel_tol=1e-5)  # PMT is linear in the present value


def test_optional_arguments_at_their_defaults_are_left_out_of_excel():
    plan = loads_compiled("rate = 7%\nx = pmt(rate/12, 48, 55000)\ny = fv(rate, 10, -200, -500, 1)\n")
    gen = Generator(plan.model, {"rate": Piece("rate", 60, Fraction(1))})
    assert gen.formula(plan.model.quantities["x"].definition.expr) == "=PMT(rate/12,48,55000)"
    assert gen.formula(plan.model.quantities["y"].definition.expr) == "=FV(rate,10,-200,-500,1)"


def test_call_nodes_are_built_ins_or_user_functions():
    """Every call in the IR is a record or a user function: the analysis refuses the rest."""
    with pytest.raises(PlanError) as err:
        loads_compiled("x = pmtt(1, 2, 3)\n")
    assert "pmt" in str(err.value)
    assert isinstance(loads_compiled("x = pmt(1%, 2, 3)\n").model.quantities["x"].definition.expr, ir.Call)


def test_the_language_page_lists_every_built_in_as_the_table_says():
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "language.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `") and "(" in line.split("|")[1]]
    want = [f"| `{f.name}({f.signature})` | {f.doc} | {f'`{f.excel}`' if f.excel else ''} |" for f in RECORDS]
    assert [r for r in rows if r.split("`")[1].split("(")[0] in FUNCTIONS] == want


# ---- the workbook: Excel's own functions, recalculated by LibreOffice ------------------------------

LOAN = """title "Car loan"
unit USD
rate     = 7%          "yearly interest"          where 0 <= rate <= 30%
loan     = 55000 USD   "amount borrowed"          where loan > 0 USD
months   = 48          "months to pay"            where integer, 1 <= months <= 120
deposit  = 0 USD
payment  = pmt(rate / 12, months, loan) -> USD
owed     = pv(rate / 12, months, payment, deposit) -> USD
saved    = fv(rate / 12, months, -200 USD, -500 USD, 1) -> USD
free     = pmt(0, months, loan) -> USD
cost     = 70000 USD
year1    = 12000 USD
growth   = 3000 USD
worth    = npv(rate, year1, year1 + growth, year1 + 2 * growth, 21000 USD, 26000 USD) - cost -> USD
return   = irr(-cost, year1, year1 + growth, year1 + 2 * growth, 21000 USD, 26000 USD)
scenario cheap { rate = 0% }
solve loan where payment = -1000 USD
"""


def _named(wb, book, name):
    sheet, coord = next(wb.defined_names[book.names[name]].destinations)
    return wb[sheet][coord.replace("$", "")]


def test_the_workbook_writes_excels_own_functions_and_libreoffice_agrees(tmp_path):
    import openpyxl
    from excel_recalc import POISON, poison, recalculate, require_soffice

    from planner.outputs.excel.writer import Book, to_bytes

    require_soffice()
    plan = loads_compiled(LOAN, str(tmp_path / "loan.plan"))
    book = Book(plan)
    exported = tmp_path / "loan.xlsx"
    exported.write_bytes(to_bytes(book.build()))
    wb = openpyxl.load_workbook(exported)
    texts = {n: _named(wb, book, n).value for n in ("payment", "owed", "saved", "free", "worth", "return")}
    assert texts["payment"].startswith("=PMT(") and texts["owed"].startswith("=PV(")
    assert texts["saved"].startswith("=FV(") and "PMT(" in texts["free"]
    assert texts["worth"].startswith("=NPV(rate,year1,") and texts["return"].startswith("=IRR('Cash flows'!$D$")  # its values a row of cells
    _named(wb, book, "loan").value = 30000  # an analyst's edit: every figure follows
    _named(wb, book, "year1").value = 15000
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    files = [exported, edited]
    assert poison(exported) and poison(edited)  # cached values that only a recalculation replaces
    got = recalculate(files, tmp_path)
    base = plan.evaluate().values
    moved = plan.evaluate(overrides={"loan": 30000, "year1": 15000}).values
    for path, want in zip(files, (base, moved)):
        out = openpyxl.load_workbook(got[path], data_only=True)
        for name in ("payment", "owed", "saved", "free", "worth", "return"):
            value = _named(out, book, name).value
            assert value != POISON and math.isclose(value, want[name], rel_tol=1e-9), (path.name, name, value)
    assert round(base["payment"], 2) == -1317.04 and round(moved["payment"], 2) == round(-1317.0406 * 30 / 55, 2)
    assert round(base["return"], 3) == 0.087  # Microsoft's IRR example


def test_the_editor_reads_the_table(tmp_path):
    from planner.lsp.analysis import Document

    text = "loan = 55000\npayment = pmt(7% / 12, 48, loan)\nx = p\n"
    doc = Document(tmp_path / "t.plan", text)
    doc.update(text)
    hover, _ = doc.hover(1, 11)
    assert "**pmt** (built-in function; Excel's `PMT`)" in hover and FUNCTIONS["pmt"].doc in hover
    assert "pmt(rate, nper, pv, [fv], [type])" in hover
    items = {c.label: c for c in doc.complete(2, 5)}
    for f in RECORDS:
        assert items[f.name].detail == f"{f.name}({f.signature})" and items[f.name].documentation == f.doc
    sig = doc.signature(1, 27)
    assert sig is not None and sig[0] == "pmt(rate, nper, pv, [fv], [type])" and sig[1][:3] == ["rate", "nper", "pv"]


def test_solve_sensitivity_simulate_and_report_reach_through_pmt(tmp_path, cli):
    import planner

    text = LOAN.replace('rate     = 7%          "yearly interest"',
                        'rate     = 7% ~ uniform(5%, 9%) "yearly interest"')
    plan = planner.loads(text)
    # the loan 1,000 a month repays: 55,000 * 1,000 / 1,317.0406 (Excel: PV(7%/12, 48, -1000) = 41,760.20)
    assert "loan = 41,760.20 USD" in str(plan.solve("loan", "payment = -1000 USD"))
    rows = {r.input: r for r in plan.sensitivity("payment").rows}
    # the payment is negative (Excel's sign: money out); a 1% larger loan makes it 1% more negative: a fall
    assert rows["loan"].method == "numeric difference" and math.isclose(rows["loan"].elasticity, -1.0, rel_tol=1e-9)
    path = tmp_path / "loan.plan"
    path.write_text(text, encoding="utf-8")
    code, out, err = cli("simulate", path)
    assert code == 0, err
    # the annuity formula at the rate's 95% and 5% (a larger rate, a more negative payment)
    p5, p95 = (-(55000 * r / 12) / (1 - (1 + r / 12) ** -48) for r in (0.088, 0.052))
    line = next(row for row in out.splitlines() if row.startswith("payment"))
    figures = [float(x.replace(",", "")) for x in line.split()[1:7]]
    assert math.isclose(figures[3], p5, rel_tol=2e-3) and math.isclose(figures[5], p95, rel_tol=2e-3)
    code, out, err = cli("report", path, "-o", tmp_path / "loan.md")
    assert code == 0, err
    assert r"\operatorname{PMT}" in (tmp_path / "loan.md").read_text(encoding="utf-8")


def test_solve_sensitivity_and_simulate_reach_through_npv_and_irr(tmp_path, cli):
    import planner

    text = LOAN.replace('year1    = 12000 USD', 'year1    = 12000 USD ~ uniform(10000 USD, 14000 USD)') + \
        "solve cost where return = 7%\n"
    plan = planner.loads(text)
    # the cost at which the flows return 7% is the one at which their NPV at 7% is 0: two routes, one answer,
    # the flows discounted by hand
    want = sum(v / 1.07 ** i for i, v in enumerate([12000, 15000, 18000, 21000, 26000], 1))
    for question in ("return = 7%", "worth = 0 USD"):
        assert f"cost = {want:,.2f} USD" in str(plan.solve("cost", question)), question
    rows = {r.input: r for r in plan.sensitivity("return").rows}
    step = 1.0  # the slope against a wider difference of the plan's own figures
    up = planner.loads(text).eval(overrides={"year1": f"{12000 + step} USD"})
    base = planner.loads(text).eval()
    assert rows["year1"].method == "numeric difference"
    assert math.isclose(rows["year1"].derivative, (up["return"] - base["return"]) / step, rel_tol=1e-3)
    path = tmp_path / "flows.plan"
    path.write_text(text, encoding="utf-8")
    code, out, err = cli("simulate", path)
    assert code == 0, err
    line = next(row for row in out.splitlines() if row.startswith("return"))
    p50 = float(line.split()[5])
    assert abs(p50 - 0.0866) < 0.002  # the middle of year1's range is the point value


def test_the_editor_grammar_colours_every_built_in():
    import json
    import re
    from pathlib import Path

    syntax = Path(__file__).resolve().parent.parent / "editors" / "vscode" / "syntaxes" / "plan.tmLanguage.json"
    text = syntax.read_text(encoding="utf-8")
    json.loads(text)
    names = re.search(r'\\\\b\(([a-z|]+)\)\\\\s\*\(\?=\\\\\(\)', text).group(1).split("|")
    assert names == sorted(FUNCTIONS)


def test_a_quantity_may_keep_a_finance_functions_name():
    """Plans written before these functions name their own figures `npv`, `pv`, `fv`: they keep working,
    and the call is the function (`max` and the older built-ins stay reserved)."""
    plan = loads_compiled("rate = 10%\npv = 100\nnpv = npv(rate, -10000, 3000, 4200, 6800) + pv\n")
    assert round(plan.evaluate().values["npv"], 2) == 1288.44
    with pytest.raises(PlanError) as err:
        loads_compiled("max = 4\n")
    assert "`max` is a built-in function and cannot be redefined" in str(err.value)
    with pytest.raises(PlanError) as err:
        loads_compiled("npv(x) = x\n")
    assert "`npv` is a built-in function and cannot be redefined" in str(err.value)


# ---- every node of the IR, through every generator ---------------------------------------------

EVERY_NODE = """a = 3  where integer, 1 <= a <= 10
b = 2.5
on = true
f(x, y = 2) = x * y
s1 = a + b - a * b / a ^ 2 + -b
s2 = if(on and not (a > b or a < b), 1, 0) + if(a == b or a != b, 1, 0) + if(a <= b and a >= b, 1, 0)
s3 = f(a) + f(a, y = b) + max(a, b) + round(b) + pmt(1%, a, 1000) + irr(-10, 4, 4, 4)
s4 = sum(m for m in 1..a) + product(m for m in [a, b]) + max(m for m in 1..a) + min(m for m in 1..a)
s5 = count(m > 1 for m in 1..a) + first(m for m in 1..a where m >= 2)
scenario big { a = 4 }
check s1@big != s1
check s4 ~= 17.5  # 6 + 7.5 + 3 + 1
"""


# the nodes of series over periods; by hand: cash 119, 141, 162, 182, 201, 219 (each month 2 * price less the
# month's number in USD, price 10 then 12 USD), their sum 1024 USD, month 3's 162 USD, never below zero
EVERY_SERIES_NODE = """unit USD
periods = 1 month..6 month
start = 100 USD
series price = [10 USD, 12 USD]
series cash = start + price * 2 - 1 USD then previous + price * 2 - period / 1 month * 1 USD
series before = previous(cash, start) - 1 USD
total = sum(cash)
at3 = cash at 3 month
first_negative = first(period where cash < 0 USD)
never_negative = if(first_negative == never, 1, 0)
check total == 1024 USD
check at3 == 162 USD
check never_negative == 1
"""


def _nodes(plan, ops) -> set:
    seen = set()
    for q in plan.model.quantities.values():
        stack = [q.definition.expr]
        while stack:
            e = stack.pop()
            seen.add(type(e))
            for x in vars(e).values():
                seen.update(o for o in (x if isinstance(x, tuple) else (x,)) if isinstance(o, ops))
            stack.extend(ir.children(e))
    return seen


def test_every_node_and_operator_of_the_ir_reaches_every_generator():
    """A plan holding every expression node, operator and aggregate: a node a generator misses fails here."""
    import typing

    import planner
    from planner.compute.diagnose import diagnose_expr
    from planner.outputs.excel.writer import workbook_bytes

    plan = loads_compiled(EVERY_NODE)
    series = loads_compiled(EVERY_SERIES_NODE)
    ops = (ir.BinOp, ir.CmpOp, ir.BoolOp, ir.AggOp)
    seen: set = {ir.ScenarioRef, ir.CmpOp.APPROX}  # in the checks (`s1@big`, `~=`), run below
    seen |= _nodes(plan, ops) | _nodes(series, ops)
    want = set(typing.get_args(ir.Expr)).union(*(set(o) for o in ops))
    assert want <= seen, want - seen
    for q in series.model.quantities.values():  # the series' own nodes: LaTeX, the checks, the workbook
        assert formula_latex(q.definition.expr)
    assert all(r.passed for r in planner.loads(EVERY_SERIES_NODE).check().rows)
    assert workbook_bytes(series)
    values = plan.evaluate().values
    exact = ExactEvaluator(plan.model, {})
    for name, q in plan.model.quantities.items():
        if q.is_input:
            continue
        expr = q.definition.expr
        assert formula_latex(expr)
        assert diagnose_expr(plan.model, expr, values) is None
        try:  # the exact route answers, or says it has no rational value (the float route's then)
            got = exact.expr(expr)
        except NotRational:
            assert name in ("s3", "s4", "s5")  # irr (a root), and aggregates over ranges
        else:
            assert float(got) == pytest.approx(values[name], rel=1e-12)
    assert all(r.passed for r in planner.loads(EVERY_NODE).check().rows)
    assert workbook_bytes(plan)  # the printer is strict: a node without a method raises


def test_a_record_missing_a_field_fails_at_import():
    from planner.language.functions import Builtin

    with pytest.raises(TypeError, match="lacks numpy"):
        Builtin("half", ("x",), "x / 2", FUNCTIONS["exp"].dims, lambda sp, a: a[0] / 2, FUNCTIONS["exp"].latex,
                floats=lambda x: x / 2, numpy=None)
    with pytest.raises(TypeError, match="excel with expand or derivative"):
        Builtin("half", ("x",), "x / 2", FUNCTIONS["exp"].dims, None, FUNCTIONS["exp"].latex,
                floats=lambda x: x / 2, numpy=lambda np, _: np.exp)


def test_a_sweep_point_where_irr_of_a_series_has_no_rate_says_so(plan_file, cli):
    """The sweep's issue at such a point said the series had no value in some period, as eval once did."""
    path = plan_file("periods = 1 month..4 month\na = -5\nseries flow = if(period == 1 month, a, 1)\n"
                     "r = irr(flow)\nsweep a in [-5, 5] show r\n")
    code, out, err = cli("sweep", path)
    assert "no rate makes the net present value of these cash flows 0 at `irr(flow)`" in out, out
    assert "has none in some period" not in out and "1 of 2 points have issues" in out
