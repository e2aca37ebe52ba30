"""Cash flows given by a range: ``npv(rate, flow(m) for m in 1 month..36 month)`` and
``irr(flow(m) for m in 0..n)`` are the calls with the flows listed (the records' ``flows``), so
every route (numeric, exact, dimensions, the workbook's NPV and IRR) reads them as it reads a list.
Figures: Microsoft's documented examples of NPV and IRR, and sums worked by hand."""

from fractions import Fraction

import pytest

import planner
from planner.language.errors import PlanError

EXCEL = """
rate = 10%
flow(m) = if(m == 1, -10000, if(m == 2, 3000, if(m == 3, 4200, 6800)))
ranged = npv(rate, flow(m) for m in 1..4)
listed = npv(rate, -10000, 3000, 4200, 6800)
cash(k) = if(k == 0, -70000, if(k == 1, 12000, if(k == 2, 15000, if(k == 3, 18000, if(k == 4, 21000, 26000)))))
rate_of_return = irr(cash(k) for k in 0..5)
pay(m) = 100 * m / (1 month)
monthly = npv(1%, pay(m) for m in 1 month..36 month)
stepped = npv(rate, k for k in 2..8 step 3)
shadowed = npv(rate, sum(m for m in 1..2) + m for m in 1..3)
check ranged == listed
check ranged ~= 1188.44
"""


def _values():
    return planner.loads(EXCEL, "flows.plan").eval()


def test_npv_over_a_range_is_excels_documented_example():
    # Microsoft's NPV: rate 10%, flows -10,000, 3,000, 4,200, 6,800 -> 1,188.44
    values = _values()
    assert float(values["ranged"]) == pytest.approx(1188.4434123352207, rel=1e-12)
    assert float(values["ranged"]) == float(values["listed"])


def test_irr_over_a_range_is_excels_documented_example():
    # Microsoft's IRR: -70,000, 12,000, 15,000, 18,000, 21,000, 26,000 -> 8.66%
    assert float(_values()["rate_of_return"]) == pytest.approx(0.0866309480365316, rel=1e-9)


def test_a_range_in_months_a_step_and_an_inner_sum_worked_by_hand():
    values = _values()
    by_hand = sum(Fraction(100 * m) / Fraction(101, 100) ** m for m in range(1, 37))
    assert float(values["monthly"]) == pytest.approx(float(by_hand), rel=1e-12)
    # 2..8 step 3 is 2, 5, 8
    assert float(values["stepped"]) == pytest.approx(2 / 1.1 + 5 / 1.1 ** 2 + 8 / 1.1 ** 3, rel=1e-12)
    # the inner sum's own `m` is its own (1 + 2 = 3); the outer one runs 1..3: flows 4, 5, 6
    assert float(values["shadowed"]) == pytest.approx(4 / 1.1 + 5 / 1.1 ** 2 + 6 / 1.1 ** 3, rel=1e-12)


def test_the_exact_route_and_the_checks_read_the_flows():
    results = planner.loads(EXCEL, "flows.plan").check()
    assert [r.passed for r in results] == [True, True]


@pytest.mark.parametrize("text, needle", [
    ("n = 12\nv = npv(10%, m for m in n..20)\n", "come from a range of constants, in one unit"),
    ("n = 12\nv = irr(m - 2 for m in 0..n)\n", "come from a range of constants, in one unit"),
    ("v = npv(10%, m for m in 1 month..3 year)\n", "come from a range of constants, in one unit"),
    ("v = npv(10%, m for m in 1..300)\n", "takes 1 to 254 cash flows (as Excel's); this range has 300"),
    ("v = npv(10%, m for m in 3..1)\n", "this range has 0"),
    ("v = npv(10%, m for m in [1, 2])\n", "over a list: list the flows as arguments"),
    ("v = pv(10%, m for m in 1..3)\n", "`pv` takes no range of values here"),
    ("v = irr(0, m for m in 1..3)\n", "`irr` takes no range of values here: `irr(flow(m) for m in 1..n)`"),
    # it said `npv(...)` "is not an aggregate: not sum, product, min, max, count or first"
    ("v = npv(m for m in 1..3)\n", "`npv` takes no range of values here: `npv(rate, flow(m) for m in 1..n)`"),
])
def test_a_range_it_cannot_list_is_a_located_error(text, needle):
    with pytest.raises(PlanError) as err:
        planner.loads(text, "bad.plan")
    assert needle in err.value.message
    assert err.value.span is not None and err.value.span.line == text.count("\n")


def test_irr_beside_a_series_or_a_range_says_what_to_write_and_that_works():
    """`irr(-price, saving)` said "not supported yet" and offered the twelve flows written out; `irr(-500, ...
    for m in 1..3)` said `irr` "takes its arguments one by one" though it takes a range. Each hint now puts
    today's flow first in a range, and the plan that follows it gives the rate (by bisection here)."""
    import re

    text = "unit USD\nperiods = 1 month..12 month\nprice = 500 USD\nseries saving = 60 USD\nr = irr(-price, saving)\n"
    with pytest.raises(PlanError) as err:
        planner.loads(text, "bad.plan")
    assert "`irr` of a series beside other flows" in err.value.message and err.value.span.column == 17
    (written,) = re.findall(r"`(irr\(.*\))`", err.value.hint)
    assert written == "irr(if(m == 0 month, -price, saving at m) for m in 0 month..12 month)"
    lo, hi = 0.0, 1.0  # -500 today, then 60 a month for 12 months
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if -500 + sum(60 / (1 + mid) ** k for k in range(1, 13)) > 0 else (lo, mid)
    rate = planner.loads(text.replace("irr(-price, saving)", written), "ok.plan").eval()["r"]
    assert float(rate) == pytest.approx(lo, rel=1e-9)
    with pytest.raises(PlanError) as err:
        planner.loads("v = irr(-500, 60 for m in 1..12)\n", "bad.plan")
    assert err.value.label == "the range of flows is its only argument"
    assert "put today's flow first in the range: `irr(if(m == 0, -500, flow(m)) for m in 0..5)`" in err.value.hint
    ranged = planner.loads("v = irr(if(m == 0, -500, 60) for m in 0..12)\n", "ok.plan").eval()["v"]
    assert float(ranged) == pytest.approx(lo, rel=1e-9)


def test_npv_over_a_range_to_a_quantity_is_the_sum_excel_computes():
    """`npv(rate, flow(m) for m in 1 month..horizon)`: the flows are not known as the plan is read (it was an
    error saying to write the sum out); the first value of the range is discounted one period, as Excel's NPV."""
    text = ("horizon = 36 month where horizon <= 360 month\n"
            "v = npv(1%, m / (1 month) for m in 1 month..horizon)\n"
            "w = npv(1%, m / (1 month) for m in 3 month..horizon step 3 month)\n")
    values = planner.loads(text, "ok.plan").eval()
    by_hand = sum(Fraction(m) / Fraction(101, 100) ** m for m in range(1, 37))
    assert float(values["v"]) == pytest.approx(float(by_hand), rel=1e-12)
    stepped = sum(Fraction(m) / Fraction(101, 100) ** k for k, m in enumerate(range(3, 37, 3), 1))
    assert float(values["w"]) == pytest.approx(float(stepped), rel=1e-12)
    shorter = planner.loads(text.replace("horizon = 36 month", "horizon = 12 month"), "ok.plan").eval()
    twelve = sum(Fraction(m) / Fraction(101, 100) ** m for m in range(1, 13))
    assert float(shorter["v"]) == pytest.approx(float(twelve), rel=1e-12)
    with pytest.raises(PlanError) as err:  # a range sized from the input's declared bound, as any sum's
        planner.loads(text.replace(" where horizon <= 360 month", ""), "bad.plan").eval()
    assert "`horizon` has no upper bound" in err.value.message


def test_the_report_prints_a_range_of_flows_as_the_range():
    """`irr(... for k in 0 month..36 month)` is lowered to its 37 flows; the report's formula listed each
    (37 `cases` blocks, 2,300 px of the page): it prints the range as written, once."""
    from planner.outputs.latex import formula_equation, name_latex

    text = ("v = npv(10%, m for m in 1..7 step 2)\n"
            "w = irr(if(m == 0, -5, 2) for m in 0..3)\n")
    model = planner.loads(text, "flows.plan")._plan.model
    tex = {n: formula_equation(name_latex(n), model.quantities[n].definition.expr) for n in "vw"}
    assert tex["v"] == r"v = \operatorname{NPV}\left(10\%, m \;\text{for}\; m \in \{1, 1 + 2, \ldots, 7\}\right)"
    assert tex["w"] == (r"w = \operatorname{IRR}\left(\begin{cases} -5 & \text{if } m = 0 \\ 2 & \text{otherwise} "
                        r"\end{cases} \;\text{for}\; m \in \{0, \ldots, 3\}\right)")
    values = planner.loads(text, "flows.plan").eval()  # the flows are still each one's: 1, 3, 5, 7
    assert float(values["v"]) == pytest.approx(1 / 1.1 + 3 / 1.1 ** 2 + 5 / 1.1 ** 3 + 7 / 1.1 ** 4, rel=1e-12)


def test_the_flows_of_a_series_and_of_a_range_print_as_written_in_explain_and_the_report():
    """`npv(rate, net)` of a series is lowered to `net at 1 month`, ... `net at 36 month`: the report's formula
    listed every one (36 of them over 19 lines) and `explain` printed them too, also those of a range
    (`irr(... for m in 0..5)`, whose LaTeX printed the range). Each prints as written; over inputs, the
    range's formula goes over inputs too."""
    from planner.language.text import formula_text
    from planner.outputs.latex import formula_equation, name_latex
    from planner.questions.explain import over_inputs

    text = ("periods = 1 month..36 month\nx = 5\ny = x * 2\nseries net = if(period == 1 month, -100, y)\n"
            "r = npv(0.1, y * k for k in 1..3)\ns = irr(net)\nt = npv(1%, net) + y\n")
    plan = planner.loads(text, "flows.plan")
    model = plan._plan.model
    assert [formula_text(over_inputs(model, n)) for n in "rst"] == [
        "npv(0.1, x * 2 * k for k in 1..3)", "irr(net)", "npv(1%, net) + x * 2"]
    assert formula_equation(name_latex("t"), model.quantities["t"].definition.expr) == \
        r"t = \operatorname{NPV}\left(1\%, \mathrm{net}\right) + y"
    values = plan.eval()  # the flows are still each period's: -100, then 10 for 35 months
    assert float(values["t"]) == pytest.approx(-100 / 1.01 + sum(10 / 1.01 ** m for m in range(2, 37)) + 10, rel=1e-12)
