"""Series over periods (docs/language.md, "Series over periods").

The golden figures come from an independent month-by-month script (plain Python floats, written
from the plan's description, not from planner's code): ``_months`` below. Nothing here has a
closed form (a balance that earns interest on itself, staff that leave and are hired towards a
target, a warehouse with a cap), so the script is the reference.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import planner
from planner.compute.evaluation import load, loads
from planner.language.errors import PlanError

PLAN = Path(__file__).parent / "plans" / "series_60_months.plan"

MONTH = 365 * 86400 / 12  # planner's month (a twelfth of a 365-day year), in seconds


def _months(start_cash=60_000.0, horizon=60, growth=0.04):
    """The plan, month by month, in plain Python (USD, pallets, people)."""
    interest, price, demand0 = 0.005, 150.0, 200.0
    production, capacity, staff0, target = 500.0, 900.0, 10.0, 16.0
    attrition, hire_cap, salary, rent, unit_cost = 0.04, 2.0, 1500.0, 8000.0, 40.0
    out = {k: [] for k in ("demand", "sales", "stock", "staff", "hires", "cash")}
    stock, staff, cash, demand = 0.0, staff0, start_cash, None
    for m in range(1, horizon + 1):
        demand = demand0 if m == 1 else demand * (1 + growth)
        available = stock + production
        sales = min(demand, available)
        stock = min(capacity, available - sales)
        leavers = staff * attrition
        hires = min(hire_cap, max(0.0, target - (staff - leavers)))
        staff = staff - leavers + hires
        revenue = sales * price
        costs = staff * salary + rent + production * unit_cost
        cash = cash * (1 + interest) + revenue - costs
        for k, v in (("demand", demand), ("sales", sales), ("stock", stock), ("staff", staff), ("hires", hires),
                     ("cash", cash)):
            out[k].append(v)
    return out


def _close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


@pytest.fixture(scope="module")
def plan():
    return load(PLAN)


@pytest.fixture(scope="module")
def ev(plan):
    return plan.evaluate()


@pytest.mark.parametrize("name", ["demand", "sales", "stock", "staff", "hires", "cash"])
def test_every_month_matches_the_script(ev, name):
    want = _months()[name]
    got = list(ev.series[name])
    assert len(got) == 60
    for month, (g, w) in enumerate(zip(got, want), start=1):
        assert _close(g, w), (name, month, g, w)


def test_reductions_match_the_script(ev):
    m = _months()
    cash = m["cash"]
    assert _close(ev["low_cash"], min(cash))
    assert _close(ev["end_cash"], cash[-1])
    first = next(i for i, c in enumerate(cash, start=1) if c < 0)
    assert _close(ev["first_negative"], first * MONTH)
    assert ev["months_short"] == sum(c < 0 for c in cash)
    assert _close(ev["peak_stock"], max(m["stock"]))
    assert _close(ev["total_sales"], sum(m["sales"]))
    assert _close(ev["mean_staff"], sum(m["staff"]) / 60)
    assert _close(ev["staff_at_24"], m["staff"][23])
    assert _close(ev["sales_to_date"], sum(m["sales"]))


def test_periods_are_the_months(plan, ev):
    assert plan.period_unit == ("month", MONTH)
    assert [v / MONTH for v in ev.periods[:3]] == pytest.approx([1, 2, 3])


def test_a_shorter_horizon_has_fewer_months(plan):
    from fractions import Fraction

    ev = plan.evaluate(overrides={"horizon": Fraction(24) * Fraction(MONTH)})
    assert len(ev.series["cash"]) == 24
    assert _close(ev["end_cash"], _months(horizon=24)["cash"][-1])


def test_solve_the_starting_cash_that_keeps_every_month_at_or_above_zero():
    plan = planner.load(str(PLAN))
    result = plan.solve()
    (answer,) = [r for r in result]
    assert answer.value.unit == "kUSD"
    needed = answer.value.number * 1000

    # the script: the least start with no month below zero, by bisection on the script itself
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if min(_months(start_cash=mid)["cash"]) >= 0 else (mid, hi)
    assert _close(needed, hi, rel=1e-9)
    assert min(_months(start_cash=needed * (1 + 1e-9))["cash"]) >= 0


def test_checks_on_reductions_and_never():
    text = PLAN.read_text() + "\n".join([
        "",
        "check first(period where cash > 1e9 USD) == never",
        "check first_negative != never",
        "check count(cash < 0 USD) == months_short",
        "check cash at 1 month == 44900 USD within 1e-6 USD",
        "",
    ])
    plan = loads(text, name=str(PLAN))
    from planner.questions.checks import run_checks

    results = run_checks(plan)
    assert [r.passed for r in results] == [True] * len(results), [r.describe() for r in results if not r.passed]


def test_never_compares_with_the_value_first_gives():
    plan = loads(PLAN.read_text().replace("check months_short >= 0", "check first_negative == never"),
                 name=str(PLAN))
    from planner.questions.checks import run_checks

    (failed,) = [r for r in run_checks(plan) if not r.passed]
    assert "first_negative == never" in failed.text


# ---- plans written before series keep their meaning ------------------------------------------------

def test_period_and_previous_are_plain_names_without_periods():
    plan = loads("period = 3\nprevious = 4\nnever = 5\nx = period * previous + never\n")
    assert plan.evaluate()["x"] == 17


def test_a_plan_without_series_has_no_series():
    plan = loads("a = 2\nb = a * 3\n")
    ev = plan.evaluate()
    assert ev.series == {} and plan.model.series == [] and ev["b"] == 6


# ---- errors, located --------------------------------------------------------------------------------

HEAD = "periods = 1 month..12 month\n"


@pytest.mark.parametrize("text, message, where", [
    (HEAD + "series a = b + 1\nseries b = a * 2\n", "cycle", "b + 1"),
    (HEAD + "x = previous + 1\n", "`previous` alone", "previous"),
    (HEAD + "x = 5\ny = sum(x)\n", "reduces a series", "x)"),
    (HEAD + "series a = 1 then previous + 1\nseries b = a at period\n", "another period", "a at period"),
    ("series a = 1 then previous + 1\n", "needs the plan's periods", "a ="),
    (HEAD + "series a = 1 then previous + 1\nf = first(period where a > 3)\ncheck f < never\n", "compare with `==`",
     "<"),
    (HEAD + "series a = 1 then 2 s\n", "starts as", "2 s"),
    (HEAD + "series a = 1 then previous + 1\ncheck a > 0\n", "needs one figure", "a >"),
    (HEAD + "x = 5\nseries a = 1 then previous(x)\n", "not a series", "x)"),
    (HEAD + "series a = 1 then previous(nope) + 1\n", "unknown", "nope"),
])
def test_errors_point_at_the_source(text, message, where):
    with pytest.raises(PlanError) as info:
        loads(text, name="bad.plan")
    err = info.value
    errors = getattr(err, "errors", None) or [err]
    hit = [e for e in errors if message in str(e.message)]
    assert hit, [str(e.message) for e in errors]
    span = hit[0].span
    assert span is not None and text[span.start:].startswith(where), (text[span.start:span.end], where)


def test_fmt_keeps_series_plans_as_written():
    from planner.language.format import format_text, is_formatted

    text = PLAN.read_text()
    assert is_formatted(text, str(PLAN))
    squeezed = text.replace("staff at 24 month", "staff  at   24 month").replace(" then previous", "  then  previous")
    assert format_text(squeezed, str(PLAN)) == text


def test_series_and_periods_stay_free_names():
    plan = loads("series = 2\nperiods = 3\nat = 4\nthen = 5\nx = series * periods + at * then\n"
                 "annuity(rate, periods) = periods * rate\ny = annuity(0.5, 4)\n")
    ev = plan.evaluate()
    assert ev["x"] == 26 and ev["y"] == 2


# ---- a range that starts with a formula counts in its unit ------------------------------------------

def test_a_range_that_starts_with_a_formula_counts_in_months():
    plan = loads("horizon = 60 month where 1 month <= horizon <= 120 month\n"
                 "loan(m) = count(true for k in max(1 month, m - 47 month)..m)\n"
                 "last48 = loan(horizon)\nfirst10 = loan(10 month)\n"
                 "total = sum(k / 1 month for k in max(1 month, horizon - 2 month)..horizon)\n")
    ev = plan.evaluate()
    assert ev["last48"] == 48 and ev["first10"] == 10
    assert ev["total"] == 58 + 59 + 60


# ---- under uncertainty: a probability over the periods, a fan per period ------------------------------

def test_simulate_gives_the_probability_of_an_overdrawn_month_and_a_fan(tmp_path):
    import numpy as np

    from planner.questions import simulate

    text = PLAN.read_text().replace('growth     = 4%              "demand growth per month"',
                                    'growth     = 4% ~ 2% to 6%      "demand growth per month"')
    assert text != PLAN.read_text()
    text += "check P(min(cash) < 0 USD) > 50%\n"
    plan = loads(text, name=str(PLAN))
    (sim,) = simulate.run(plan, samples=400, seed=3)
    growth = sim.column("growth")
    paths = [_months(growth=g)["cash"] for g in growth]  # the script, sample by sample
    lows = np.array([min(p) for p in paths])
    from planner.language.lower import lower_expr
    from planner.language.source import Source

    cond = lower_expr(Source("--probability", "min(cash) < 0 USD"))
    assert sim.probability(cond) == np.mean(lows < 0)
    assert np.allclose(sim.column("low_cash"), lows, rtol=1e-9)
    fan = simulate.fan(sim, "cash", (5.0, 50.0, 95.0))
    month12 = np.array([p[11] for p in paths]) / 1000  # kUSD, the display unit
    assert fan["p50"][11] == pytest.approx(np.percentile(month12, 50), rel=1e-9)
    assert fan["p95"][59] == pytest.approx(np.percentile([p[59] / 1000 for p in paths], 95), rel=1e-9)


def test_sensitivity_of_the_lowest_balance_to_the_starting_cash(plan):
    from planner.questions.sensitivity import sensitivity

    got = sensitivity(plan, "low_cash")
    row = next(r for r in got.rows if r.input == "start_cash")
    m = _months()["cash"]
    k = m.index(min(m)) + 1  # the lowest month: the start has earned interest k times there
    assert row.derivative == pytest.approx(1.005 ** k, rel=1e-6)


def test_the_workbook_says_it_does_not_show_series_yet(plan):
    from planner.outputs.excel.writer import workbook_bytes

    for make in (workbook_bytes,):  # the report shows them (tests/test_series_report.py)
        with pytest.raises(PlanError) as info:
            make(plan)
        assert "does not show series over periods yet" in info.value.message
        assert info.value.span is not None and info.value.span.text == "demand"
