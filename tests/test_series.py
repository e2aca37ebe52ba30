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


@pytest.mark.parametrize("ordered", ["orders", "if(period <= 2 month, orders, 0)", "5"])
def test_a_series_delayed_by_previous_from_a_bare_zero_keeps_its_unit_in_formulas(ordered):
    """`previous(x, 0)`: the 0 fits any unit, so the series x says which. A GPU order that arrives two months
    later, priced: the price times the arrivals is money, whether or not `ordered` uses an input (which
    sorted `transit` before `ordered` and left it without a unit: capex was a plain number, and
    `-> kUSD` an error)."""
    plan = loads("unit USD\nunit kUSD = 1000 USD\nperiods = 1 month..4 month\nprice = 32 kUSD\norders = 5\n"
                 f"series ordered = {ordered}\nseries transit = previous(ordered, 0)\n"
                 "series arriving = previous(transit, 0)\nseries capex = arriving * price -> kUSD\n"
                 "spent = sum(capex) -> kUSD\n")
    ev = plan.evaluate()
    assert plan.model.quantities["capex"].display.text == "kUSD"
    assert ev.series["capex"][2] == pytest.approx(160_000)  # 5 ordered in month 1 arrive in month 3: 5 * 32 kUSD
    assert ev["spent"] == pytest.approx(2 * 160_000)  # months 3 and 4


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
    (HEAD + "check period > 3 month\n", "a check needs one figure, not a value per period", "period >"),
    (HEAD + "periods = 1 month..6 month\n", "a plan declares its periods once", "periods = 1 month..6"),
    (HEAD + "series a = 1 then previous + 1\ncheck a > 0\n", "a check needs one figure", "a >"),
    (HEAD + "k = 1 where k >= 0\nseries a = k then previous + 1\nsolve min k where a > 3\n",
     "a solve's condition needs one figure", "a >"),  # it said "a check" of a solve
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
    from planner.language.format import format_text

    text = PLAN.read_text()
    assert format_text(text, str(PLAN)) == text
    squeezed = text.replace("staff at 24 month", "staff  at   24 month").replace(" then previous", "  then  previous")
    assert format_text(squeezed, str(PLAN)) == text


def test_series_and_periods_stay_free_names():
    plan = loads("series = 2\nperiods = 3\nat = 4\nthen = 5\nx = series * periods + at * then\n"
                 "annuity(rate, periods) = periods * rate\ny = annuity(0.5, 4)\n")
    ev = plan.evaluate()
    assert ev["x"] == 26 and ev["y"] == 2


def test_a_long_series_breaks_its_line_before_or_after_then(tmp_path):
    """`then` on a line of its own, or ending one, continues the series (it was `unexpected *`); a line
    `then = ...` or `then(x) = ...` still defines that name. The language server splits statements alike."""
    from planner.lsp.tolerant import Parts, parse_tolerant

    text = ("periods = 1 month..3 month\na = 2\nseries s = a * 10\n    then previous + a  # grows by a\n"
            "series u = a then\n    previous * 2\nthen = 5\ntwice(x) = x * 2\nb = twice(then)\n"
            "series w = 1\n    then previous + then\n")
    ev = loads(text).evaluate()
    assert [list(ev.series[n]) for n in "suw"] == [[20, 22, 24], [2, 4, 8], [1, 6, 11]] and ev["b"] == 10
    with pytest.raises(PlanError, match="defined twice"):  # its own statement, not a continuation of `a`'s
        loads("then(x) = x * 2\na = 3\nthen(y) = y\n")
    name = str(tmp_path / "t.plan")
    got = parse_tolerant(name, text, Parts())
    assert not got.errors and len(got.syntax.statements) == 8


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
    assert row.method == "numeric difference" and row.note == "", row.note  # smooth there: nothing to say


def test_the_workbook_shows_each_series_as_a_row_of_months(plan):
    """Once refused; now a sheet of months (tests/test_series_workbook.py recalculates it)."""
    import io

    import openpyxl

    from planner.outputs.excel.writer import workbook_bytes

    wb = openpyxl.load_workbook(io.BytesIO(workbook_bytes(plan)), data_only=True)
    ws = wb["Months"]
    assert [ws.cell(4, c).value for c in (3, 4, 62)] == ["Month 1", "Month 2", "Month 60"]


# ---- the examples built on series, against independent month-by-month scripts -------------------------

ROOT = Path(__file__).resolve().parent.parent


def _support(target=40.0, horizon=12, backlog0=8000.0, arrivals0=9500.0, growth=0.01, agents0=30.0,
             attrition=0.05, hire_cap=4.0, per_agent=300.0, cost=4500.0):
    """examples/support_backlog.plan, month by month (tickets, agents, USD)."""
    out = {k: [] for k in ("arrivals", "agents", "closed", "backlog", "payroll")}
    arrivals, agents, backlog = None, agents0, backlog0
    for m in range(1, horizon + 1):
        arrivals = arrivals0 if m == 1 else arrivals * (1 + growth)
        leavers = agents * attrition
        hires = min(hire_cap, max(0.0, target - (agents - leavers)))
        agents = agents - leavers + hires
        closed = min(agents * per_agent, backlog + arrivals)
        backlog = backlog + arrivals - closed
        for k, v in (("arrivals", arrivals), ("agents", agents), ("closed", closed), ("backlog", backlog),
                     ("payroll", agents * cost)):
            out[k].append(v)
    return out


def _silo(capacity=2500.0, opening=600.0, harvest=5400.0, offtake=450.0, contract=230.0, discount=0.18,
          storage=1.5, rate=0.004, cash0=40_000.0):
    """examples/grain_silo.plan, month by month (tonnes, USD)."""
    out = {k: [] for k in ("sold", "overflow", "stock", "cash")}
    stock, cash = opening, cash0
    for m in range(1, 13):
        arriving = harvest / 3 if 8 <= m <= 10 else 0.0
        sold = min(offtake, stock + arriving)
        overflow = max(0.0, stock + arriving - sold - capacity)
        stock = stock + arriving - sold - overflow
        cash = cash * (1 + rate) + sold * contract + overflow * contract * (1 - discount) - stock * storage
        for k, v in (("sold", sold), ("overflow", overflow), ("stock", stock), ("cash", cash)):
            out[k].append(v)
    return out


def test_support_backlog_matches_the_script():
    ev = load(ROOT / "examples" / "support_backlog.plan").evaluate()
    want = _support()
    for name in want:
        assert all(_close(g, w) for g, w in zip(ev.series[name], want[name])), name
    backlog = want["backlog"]
    assert _close(ev["cleared"], (next(i for i, b in enumerate(backlog, 1) if b <= 0)) * MONTH)
    assert ev["months_open"] == sum(b > 0 for b in backlog) == 5
    assert _close(ev["spend"], sum(want["payroll"]))
    least = next(t for t in range(30, 81) if sum(b > 0 for b in _support(target=t)["backlog"]) <= 6)
    plan = planner.load(str(ROOT / "examples" / "support_backlog.plan"))
    (answer,) = list(plan.solve())
    assert answer.value.number == least == 38


def test_grain_silo_matches_the_script():
    ev = load(ROOT / "examples" / "grain_silo.plan").evaluate()
    want = _silo()
    for name in want:
        assert all(_close(g, w) for g, w in zip(ev.series[name], want[name])), name
    assert _close(ev["spot_tonnes"], sum(want["overflow"]))
    assert ev["empty_months"] == sum(s <= 0 for s in want["stock"]) == 6
    assert _close(ev["year_end_cash"], want["cash"][-1])
    least = next(c for c in range(0, 10_001, 1) if sum(_silo(capacity=float(c))["overflow"]) <= 0)
    plan = planner.load(str(ROOT / "examples" / "grain_silo.plan"))
    (answer,) = list(plan.solve())
    assert answer.value.number == least == 4050


def test_exact_arithmetic_agrees_with_the_numeric_route(plan, ev):
    from planner.compute.exact import ExactEvaluator

    inputs, _ = plan.input_values(None)
    exact = ExactEvaluator(plan.model, inputs)
    for name in ("low_cash", "end_cash", "first_negative", "months_short", "total_sales", "mean_staff",
                 "staff_at_24", "sales_to_date", "peak_stock"):
        assert _close(float(exact.quantity(name)), ev[name]), name


def test_a_series_program_is_data_the_cache_reads_back_and_checks(plan):
    import io
    import pickle

    import numpy as np

    from planner.compute import cache

    program = plan.compiled
    back = cache._Unpickler(io.BytesIO(pickle.dumps(program))).load()
    assert back.valid()
    args = plan.args(plan.input_values(None)[0])
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(back(args), program(args)))
    scan = next(args for op, _, args in back.steps if op == "scan")
    body = scan[3]
    body.outputs = body.outputs + (body.size + 5,)  # a register past the body's: refused
    assert not back.valid()


def test_a_sweep_shows_figures_not_series(plan):
    from planner.language.lower import lower_values
    from planner.language.source import Source
    from planner.questions.sweep import run

    axes = [("growth", lower_values(Source("--sweep", "2%, 4%")), None)]
    with pytest.raises(PlanError) as info:
        run(plan, axes, show=["cash"])
    assert "it is a series" in info.value.message and info.value.span.text == "cash"
    got = run(plan, axes, show=["low_cash"])
    assert got.display("low_cash") == pytest.approx([min(_months(growth=g)["cash"]) / 1000 for g in (0.02, 0.04)],
                                                    rel=1e-9)


def test_solve_the_price_at_which_cash_breaks_even_by_month_36_and_maximize_over_a_series():
    plan = planner.load(str(PLAN))
    (row,) = list(plan.solve("price", where="cash at 36 month = 0 USD"))
    price = row.value.number  # USD/pallet
    m = _months()
    # cash at 36 is linear in the price: cash36(p) = cash36(150) + (p - 150) * sum of sales(m) * 1.005^(36 - m)
    weight = sum(s * 1.005 ** (36 - k) for k, s in enumerate(m["sales"][:36], start=1))
    want = 150.0 - m["cash"][35] / weight
    assert price == pytest.approx(want, rel=1e-9)

    text = PLAN.read_text() + "maximize end_cash over production in 300 pallet..900 pallet step 50 pallet\n"
    solved = list(planner.loads(text, str(PLAN)).solve())
    best = next(r for r in solved if r.target == "production")
    assert best.value.number == 900


def test_a_sweep_over_the_horizon_reduces_each_point_over_its_own_months(plan):
    from planner.language.lower import lower_values
    from planner.language.source import Source
    from planner.questions.sweep import run

    axes = [("horizon", lower_values(Source("--sweep", "24 month, 36 month, 60 month")), None)]
    got = run(plan, axes, show=["end_cash", "total_sales", "months_short", "low_cash"])
    for i, months in enumerate((24, 36, 60)):
        m = _months(horizon=months)
        assert got.display("end_cash")[i] == pytest.approx(m["cash"][-1] / 1000, rel=1e-9)
        assert got.display("total_sales")[i] == pytest.approx(sum(m["sales"]), rel=1e-9)
        assert got.display("months_short")[i] == sum(c < 0 for c in m["cash"])
        assert got.display("low_cash")[i] == pytest.approx(min(m["cash"]) / 1000, rel=1e-9)


def test_the_api_gives_the_series_as_a_frame_indexed_by_period():
    pandas = pytest.importorskip("pandas")
    result = planner.load(str(PLAN)).eval()
    frame = result.series.to_pandas()
    assert frame.index.name == "month" and list(frame.index[:3]) == [1, 2, 3] and len(frame) == 60
    assert frame["cash"].tolist() == pytest.approx([c / 1000 for c in _months()["cash"]], rel=1e-9)
    assert frame.attrs["units"]["cash"] == "kUSD"
    assert result["low_cash"].number == pytest.approx(min(_months()["cash"]) / 1000, rel=1e-9)
    assert isinstance(frame, pandas.DataFrame)
    records = result.series.to_records()
    assert records[0] == {"scenario": "base", "series": "demand", "period": 1, "value": 200.0, "unit": "pallet"}
    only = planner.load(str(PLAN)).eval(only=["cash", "low_cash"])
    assert only.names == ["low_cash"] and only.series.names == ["cash"]


def test_a_period_table_gives_each_period_its_value_and_the_last_after_it():
    text = ("unit USD\nunit quarter = 3 month\nperiods = 1 quarter..6 quarter\n"
            "series price = [10 USD, 10 USD, 12 USD, 13 USD]\n"
            "series sold = [100, 120, 130, 150, 150, 160]\n"
            "series revenue = price * sold\n"
            "total = sum(revenue)\nlast_price = last(price)\n"
            "check total == 1000 USD + 1200 USD + 1560 USD + 1950 USD + 1950 USD + 2080 USD\n"
            "check last_price == 13 USD\n")
    plan = loads(text, name="table.plan")
    ev = plan.evaluate()
    assert list(ev.series["price"]) == [10, 10, 12, 13, 13, 13]
    from planner.questions.checks import run_checks

    assert all(r.passed for r in run_checks(plan))
    with pytest.raises(PlanError) as info:
        loads("unit USD\nperiods = 1 month..3 month\nseries p = [10 USD, 2 s]\n", name="bad.plan")
    assert "period table differ" in info.value.message


def test_build_writes_the_report_its_charts_and_the_workbook(tmp_path):
    pytest.importorskip("matplotlib")
    from planner.outputs.build import build

    result = build(str(ROOT / "examples" / "grain_silo.plan"), str(tmp_path / "out"))
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert "grain_silo.md" in written and "grain_silo-series-1.png" in written
    assert "grain_silo.xlsx" in written  # once skipped: the workbook shows series now
    assert not any("workbook skipped" in n for n in result.notes)


def test_simulate_json_gives_each_headline_series_fan(tmp_path, capsys):
    import json

    from planner.cli import main

    text = PLAN.read_text().replace('growth     = 4%              "demand growth per month"',
                                    'growth     = 4% ~ 2% to 6%      "demand growth per month"')
    path = tmp_path / "u.plan"
    path.write_text(text)
    assert main(["simulate", str(path), "--format", "json", "--samples", "300"]) == 0
    data = json.loads(capsys.readouterr().out)
    fan = data["scenarios"][0]["series"]["cash"]
    assert fan["period_unit"] == "month" and fan["periods"][:2] == [1, 2] and type(fan["periods"][0]) is int and fan["unit"] == "kUSD"
    assert fan["p5"][0] == fan["p95"][0] == pytest.approx(44.9)  # month 1 does not depend on growth
    assert all(a <= b for a, b in zip(fan["p5"], fan["p95"]))


def test_simulate_show_names_a_series_for_its_fan_and_shows_only_what_it_names(tmp_path, capsys):
    """`--show stock` (a series) stopped with an internal error (KeyError), and `--show low_cash` printed
    every series' fan under its one row; a series named is its fan, and only what --show names is shown."""
    import json

    from planner.cli import main

    text = PLAN.read_text().replace('growth     = 4%              "demand growth per month"',
                                    'growth     = 4% ~ 2% to 6%      "demand growth per month"')
    path = tmp_path / "u.plan"
    path.write_text(text)
    run = ["simulate", str(path), "--samples", "300"]
    assert main(run + ["--show", "stock,low_cash"]) == 0
    out = capsys.readouterr().out
    assert "fan of stock (pallet): percentiles over the samples" in out and "\nlow_cash " in out
    assert out.count("fan of") == 1 and "\nstock " not in out  # a fan, not a row of the table
    assert main(run + ["--show", "low_cash"]) == 0
    out = capsys.readouterr().out
    assert "\nlow_cash " in out and "fan of" not in out
    assert main(run + ["--show", "stock", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)["scenarios"][0]
    assert main(run + ["--format", "json"]) == 0  # the same samples: the same fan as the default run's
    every = json.loads(capsys.readouterr().out)["scenarios"][0]
    assert shown["quantities"] == {} and list(shown["series"]) == ["stock"]
    assert list(every["series"]) == ["cash"]  # without --show: the headline series
    stock = shown["series"]["stock"]
    assert stock["p5"][0] == stock["p95"][0] == 300  # month 1: 500 made, 200 sold, whatever the growth
    assert stock["p5"][-1] < stock["p95"][-1]
    result = planner.load(path).simulate(["stock", "low_cash"], samples=300)  # the API, alike
    assert [r.quantity for r in result.rows] == ["low_cash"] and "fan of stock" in repr(result)


def test_importing_a_plan_with_series_says_it_cannot_yet(tmp_path):
    (tmp_path / "lib.plan").write_text("periods = 1 month..3 month\nseries cash = 10 then previous - 4\n"
                                       "low = min(cash)\n")
    (tmp_path / "main.plan").write_text('import "lib.plan" as lib\nx = lib.low * 2\n')
    with pytest.raises(PlanError) as info:
        load(tmp_path / "main.plan")
    assert "cannot be imported yet" in info.value.message and info.value.span.line == 1


def test_the_fan_of_a_scenario_that_fixes_every_uncertain_input_a_series_uses():
    """A scenario that sets the one uncertain input: its cash is the same in every trial, a value per
    month and no trial axis; its fan is that path in every percentile (it crashed: (60,) to (samples,))."""
    from planner.questions.simulate import fan, run

    text = PLAN.read_text().replace('growth     = 4%              "demand growth per month"',
                                    'growth     = 4% ~ 2% to 6%      "demand growth per month"')
    plan = loads(text + "scenario steady { growth = 3% }\n", name=str(PLAN))
    sims = run(plan, [None, "steady"], samples=200)
    steady = fan(sims[1], "cash", (5.0, 50.0, 95.0))
    want = [c / 1000 for c in _months(growth=0.03)["cash"]]
    for p in ("p5", "p50", "p95", "mean"):
        assert steady[p].tolist() == pytest.approx(want, rel=1e-9), p
    varied = fan(sims[0], "cash", (5.0, 95.0))
    assert varied["p5"][0] == varied["p95"][0] == pytest.approx(44.9) and varied["p5"][-1] < varied["p95"][-1]


@pytest.mark.parametrize("text, message, where, hint", [
    # a period past the horizon said "a series it uses has none in some period ... a division by zero?"
    (HEAD + "series a = 1 then previous + 1\nx = a at 13 month\n", "after the last period (12 month)", "13 month",
     "1 month..12 month"),
    (HEAD + "series a = 1 then previous + 1\nx = a at 0 month\n", "before the first period (1 month)", "0 month",
     "1 month..12 month"),
    (HEAD + "series a = 1 then previous + 1\nx = a at 2.5 month\n", "not one of the plan's periods", "2.5 month",
     "1 month..12 month"),
])
def test_a_period_outside_the_plans_periods_says_so(text, message, where, hint):
    with pytest.raises(PlanError) as info:
        loads(text, name="bad.plan").evaluate()
    err = info.value
    assert message in err.message and hint in (err.hint or ""), (err.message, err.hint)
    assert text[err.span.start:].startswith(where), text[err.span.start:err.span.end]


def test_a_misspelt_previous_or_period_gets_a_suggestion():
    # `previus` said "unknown name" with no suggestion: the words of a plan with periods are suggested too
    for text, want in ((HEAD + "series a = 1 then previus + 1\n", "did you mean `previous`?"),
                       (HEAD + "series a = if(perod > 3 month, 1, 2)\n", "did you mean `period`?")):
        with pytest.raises(PlanError) as info:
            loads(text, name="bad.plan")
        errors = getattr(info.value, "errors", None) or [info.value]
        assert any(want in (e.hint or "") for e in errors), [(e.message, e.hint) for e in errors]
    with pytest.raises(PlanError) as info:  # without periods they are not words of the plan
        loads("a = previus + 1\n", name="bad.plan")
    errors = getattr(info.value, "errors", None) or [info.value]
    assert not any("previous" in (e.hint or "") for e in errors)


def test_adding_a_flow_per_month_to_an_amount_suggests_one_month():
    # the help said "multiply the USD/month operand by a quantity in s (`... * 1 s`)": the plan's own unit is month
    text = "unit USD\n" + HEAD + "series cash = 100 USD then previous + 5 USD/month\n"
    with pytest.raises(PlanError) as info:
        loads(text, name="bad.plan")
    errors = getattr(info.value, "errors", None) or [info.value]
    assert any("USD/month operand by a quantity in month (`... * 1 month`)" in (e.hint or "") for e in errors), \
        [e.hint for e in errors]
    with pytest.raises(PlanError) as info:  # a unit of another dimension keeps the base unit: B/s and B
        loads("size = 2 GB + 3 GB/s\n", name="bad.plan")
    errors = getattr(info.value, "errors", None) or [info.value]
    assert any("GB/s operand by a quantity in s (`... * 1 s`)" in (e.hint or "") for e in errors), \
        [e.hint for e in errors]


@pytest.mark.parametrize("text", [
    HEAD + "series cash = 100 then previous + cash at 3 month\n",
    HEAD + "series cash = 100 then previous + 5 + b\nseries b = cash at 3 month\n",
])
def test_a_series_that_reads_itself_at_another_period_is_told_to_use_previous(text):
    # it said "dependency cycle: cash -> cash ... make one of them an input", not that `at` reads another period
    with pytest.raises(PlanError) as info:
        loads(text, name="bad.plan")
    errors = getattr(info.value, "errors", None) or [info.value]
    assert [e.family for e in errors] == ["type"], [(e.family, e.message) for e in errors]
    assert "`at` would read another period" in errors[0].message and "previous(x)" in errors[0].hint
    assert text[errors[0].span.start:].startswith("cash at 3 month")


def test_explain_of_a_figure_that_reduces_a_series_writes_it_over_inputs_with_the_series_by_name():
    # it printed SymPy's stand-in `runway_over_periods(burn, start)` in base units, then "no closed form"
    from planner.outputs.views import _explain_text as explain_text
    from planner.questions.explain import explain

    text = ("unit USD\n" + HEAD + "start = 100 USD\nburn = 30 USD\nseries cash = start - burn then previous - burn\n"
            "runway = first(period where cash < 0 USD)\ntwice = runway * 2\nlast = cash at 3 month + start\n")
    plan = loads(text, name="runway.plan")
    for name, over in (("runway", "first(period where cash < 0 USD)"), ("twice", "first(period where cash < 0 USD) * 2"),
                       ("last", "cash at 3 month + start")):
        shown = explain_text(explain(plan, name))
        assert "_over_periods" not in shown and "no closed form" not in shown, shown
        assert f"  in inputs    {over}\n" in shown, shown
        assert "    start  100.00 USD\n    burn   30.00 USD" in shown, shown  # what the series is computed from
    assert "value        110.00 USD" in explain_text(explain(plan, "last"))  # 100 - 30 * 3 + 100
    assert "value        4 month" in explain_text(explain(plan, "runway"))


@pytest.mark.parametrize("text, hint", [
    # periods counted as plain numbers: the help said to write `cash at 36 month`
    ("periods = 1..12\nseries a = 1 then previous + 1\nx = a at 3 month\n", "as a plain number: `a at 3`"),
    (HEAD + "series a = 1 then previous + 1\nx = a at 3\n", "with its unit: `a at 3 month`"),
    (HEAD + "series a = if(period >= 6, 1, 0)\n", "`period` counts in month: `6 month`"),
])
def test_a_period_in_the_wrong_unit_is_shown_in_the_periods_own(text, hint):
    with pytest.raises(PlanError) as info:
        loads(text, name="bad.plan")
    errors = getattr(info.value, "errors", None) or [info.value]
    assert any(hint in (e.hint or "") for e in errors), [e.hint for e in errors]


@pytest.mark.parametrize("args", [("--where", "min(cash) = 0 USD"), ("--max", "--where", "min(cash) >= 0 USD")])
def test_solve_on_the_command_line_reads_a_reduction_of_a_series(tmp_path, cli, args):
    """`planner solve --for burn --where 'min(cash) = 0 USD'` was an internal error (and `--max` found no value):
    the condition typed on the command line did not read `min(cash)` as the reduction the plan's own would."""
    path = tmp_path / "burn.plan"
    path.write_text("unit USD\n" + HEAD + "start = 120 USD\nburn = 5 USD where burn >= 0 USD\n"
                    "series cash = start - burn then previous - burn\n")
    code, out, err = cli("solve", str(path), "--for", "burn", *args, "--format", "json")
    assert code == 0 and "internal error" not in err, err
    import json

    (row,) = json.loads(out)["results"]
    assert math.isclose(row["value"], 10.0, rel_tol=1e-9), row  # 12 months of 10 USD spend the 120 USD


def test_explain_of_a_series_shows_its_first_last_and_lowest_values_its_formula_and_inputs(tmp_path, capsys):
    # `planner explain PLAN cash` refused a series ("ask about a figure of it"); it shows what the hover shows.
    # 100 USD less 30 USD a month: 70, 40, 10, ... 100 - 12 * 30 = -260 USD in month 12 (worked by hand)
    from planner.cli import main

    text = ("unit USD\n" + HEAD + "start = 100 USD\nburn = 30 USD\nseries cash = start - burn then previous - burn\n"
            "runway = first(period where cash < 0 USD)\n")
    path = tmp_path / "cash.plan"
    path.write_text(text)
    assert main(["explain", str(path), "cash"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cash = start - burn then previous - burn"), out
    assert "value        first 70.00 USD (month 1), last -260.00 USD (month 12), lowest -260.00 USD (month 12)" in out, out
    inputs = out.split("  inputs\n")[1].splitlines()
    assert [line.split()[0] for line in inputs[:2]] == ["start", "burn"], out
    assert "used by      runway" in out, out
    assert "(a series: computed period by period" in out and "_over_periods" not in out, out


@pytest.mark.parametrize("bound", ["", " where 1 month <= horizon <= 60 month"])
def test_npv_of_a_series_to_an_input_help_is_the_plans_range_and_works(bound):
    """The help says the plan's own range (`1 month..horizon`, not `1 month..36 month`), with the bound
    its end needs when it has none; written as said, the figure is the annuity 10 * (1 - 1.01^-24) / 0.01."""
    text = f"horizon = 24 month{bound}\nperiods = 1 month..horizon\nrate = 1%\nseries net = 10\n"
    with pytest.raises(PlanError) as info:
        loads(text + "value = npv(rate, net)\n", name="bad.plan")
    hint = info.value.hint or info.value.errors[0].hint
    written = "`npv(rate, net at m for m in 1 month..horizon)`"
    assert written in hint and "36" not in hint
    if not bound:
        assert "after `where horizon <= 240 month` on `horizon`" in hint  # ten times its 24 months
        text = text.replace("24 month", "24 month where horizon <= 240 month", 1)
    plan = loads(text + f"value = {written.strip('`')}\n", name="good.plan")
    assert plan.evaluate()["value"] == pytest.approx(212.433872576, rel=1e-9)


def test_a_series_read_at_one_period_for_every_point_is_that_column():
    """`at_period` with one period for every point (`net at m` in a range of flows) takes that column; the
    same as one period per point gives, including a period outside the plan or between two (no value)."""
    import numpy as np

    from planner.compute import runtime

    at = runtime.numpy_table()[0]["at_period"]
    month = 2_628_000.0
    stack = np.arange(12.0).reshape(3, 4) * 10  # 3 points, 4 periods from month 1
    for when in (1, 2, 4, 0, 5, 2.5):
        one = at([stack, when * month, month, month], (0, 1, 2, 3))
        each = at([stack, np.full(3, when * month), month, month], (0, 1, 2, 3))
        assert one.shape == each.shape == (3,) and np.array_equal(one, each, equal_nan=True), when
    assert list(at([stack, 2 * month, month, month], (0, 1, 2, 3))) == [10, 50, 90]
    assert np.isnan(at([stack, 5 * month, month, month], (0, 1, 2, 3))).all()
