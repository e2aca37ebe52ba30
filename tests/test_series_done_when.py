"""Time as an axis, end to end, on a plan written from the docs (tests/plans/series_roastery.plan): sixty
months of a balance that earns interest on itself, a crew with attrition hired back towards a target and a
store room with a cap, with uncertain inputs. None of it has a closed form. Each figure is checked against
an independent month-by-month script (``_months``, plain Python floats written from the plan's words) to
1e-9; the least starting cash that keeps every month at or above zero against the script bisected on
itself; ``simulate``'s P(min(cash) < 0) and fan against the script run sample by sample; and the exported
workbook, every cached value poisoned first, recalculated by LibreOffice and Gnumeric to planner's figures.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from excel_recalc import gnumeric_recalculate, poison, recalculate, require_gnumeric, require_soffice
from test_series_workbook import compare, export

import planner
from planner.plan import load_compiled

PLAN = Path(__file__).parent / "plans" / "series_roastery.plan"
MONTH = 365 * 86400 / 12  # planner's month, in seconds
SERIES = ("orders", "on_hand", "sold", "shelf", "wasted", "quits", "hired", "crew", "income", "spend", "cash")


def _months(start=40_000.0, price=25.0, growth=0.02, quit=0.06):
    """The roastery month by month (USD, bags, people), from the plan's own words."""
    rate, orders0, roast, room = 0.004, 1500.0, 2200.0, 3000.0
    crew0, goal, hire_max, wage, rent, bean_cost = 6.0, 9.0, 1.0, 3200.0, 6000.0, 7.0
    out = {k: [] for k in SERIES}
    orders, shelf, crew, cash = None, 0.0, crew0, start
    for m in range(1, 61):
        orders = orders0 if m == 1 else orders * (1 + growth)
        on_hand = shelf + roast
        sold = min(orders, on_hand)
        shelf = min(room, on_hand - sold)
        wasted = on_hand - sold - shelf
        quits = crew * quit
        hired = min(hire_max, max(0.0, goal - (crew - quits)))
        crew = crew - quits + hired
        income = sold * price
        spend = crew * wage + rent + roast * bean_cost
        cash = cash * (1 + rate) + income - spend
        for k, v in zip(SERIES, (orders, on_hand, sold, shelf, wasted, quits, hired, crew, income, spend, cash)):
            out[k].append(v)
    return out


def _close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


@pytest.fixture(scope="module")
def plan():
    return load_compiled(PLAN)


@pytest.fixture(scope="module")
def ev(plan):
    return plan.evaluate()


@pytest.mark.parametrize("name", SERIES)
def test_every_month_matches_the_script(ev, name):
    got, want = list(ev.series[name]), _months()[name]
    assert len(got) == 60
    for month, (g, w) in enumerate(zip(got, want), start=1):
        assert _close(g, w), (name, month, g, w)


def test_the_figures_and_the_price_war_match_the_script(plan, ev):
    m = _months()
    assert _close(ev["low_cash"], min(m["cash"])) and _close(ev["end_cash"], m["cash"][-1])
    assert _close(ev["overdrawn"], (1 + next(i for i, c in enumerate(m["cash"]) if c < 0)) * MONTH)
    assert _close(ev["room_full"], (1 + next(i for i, s in enumerate(m["shelf"]) if s >= 3000)) * MONTH)
    assert _close(ev["thrown"], sum(m["wasted"]))
    war = plan.evaluate("price_war")
    assert _close(war["low_cash"], min(_months(price=21.0)["cash"]))


def test_the_least_starting_cash_that_keeps_every_month_at_or_above_zero():
    api = planner.load(PLAN)
    rows = api.solve().rows
    assert [(r.question, r.scenario) for r in rows] == [
        ("solve min start where min(cash) >= 0 USD as enough for all", s) for s in ("base", "price_war")]
    for row, price in zip(rows, (25.0, 21.0)):
        assert row.value.unit == "kUSD"
        needed = row.value.number * 1000
        lo, hi = 0.0, 1e7  # the script bisected on itself: the least start with no month below zero
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if min(_months(start=mid, price=price)["cash"]) >= 0 else (mid, hi)
        assert _close(needed, hi, rel=1e-12)
        above, below = (_months(start=needed * (1 + d), price=price)["cash"] for d in (1e-12, -1e-12))
        assert min(above) >= 0 > min(below)
    # the plan's own check with the answer, and the equation of the same boundary agrees
    assert all(r.passed for r in api.check())
    text = PLAN.read_text() + "solve start where min(cash) = 0 USD as boundary\n"
    got = {r.alias: r.value.number for r in planner.loads(text, str(PLAN)).solve().rows if r.scenario == "base"}
    assert _close(got["boundary"], got["enough"], rel=1e-12)


def test_simulate_the_probability_of_an_overdrawn_month_and_the_fan_of_cash(plan):
    from planner.language.lower import lower_expr
    from planner.language.source import Source
    from planner.questions import simulate

    (sim,) = simulate.run(plan, samples=300, seed=5)
    price, growth, quit = (sim.column(n) for n in ("price", "growth", "quit"))
    paths = [_months(price=p, growth=g, quit=q)["cash"] for p, g, q in zip(price, growth, quit)]
    lows = np.array([min(c) for c in paths])
    cond = lower_expr(Source("--probability", "min(cash) < 0 USD"))
    assert sim.probability(cond) == np.mean(lows < 0)
    assert 0 < sim.probability(cond) < 1  # the uncertain inputs matter
    assert np.allclose(sim.column("low_cash"), lows, rtol=1e-9)  # base units (USD)
    fan = simulate.fan(sim, "cash", (5.0, 50.0, 95.0))
    for month in (1, 12, 36, 60):
        kusd = np.array([c[month - 1] for c in paths]) / 1000
        for level in (5, 50, 95):
            assert fan[f"p{level}"][month - 1] == pytest.approx(np.percentile(kusd, level), rel=1e-9)


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_the_workbook_recalculates_to_planners_figures(plan, engine, tmp_path):
    require_soffice() if engine == "libreoffice" else require_gnumeric()
    path = tmp_path / "roastery.xlsx"
    book = export(plan, path)
    assert poison(path) > 600  # every cached value overwritten: only a recalculation brings them back
    done = (recalculate if engine == "libreoffice" else gnumeric_recalculate)([path], tmp_path)
    wb = openpyxl.load_workbook(done[path], data_only=True)
    assert compare(plan, book, wb) > 700  # every month of every series, each year, every figure
    cash = wb[book.periods_sheet.title]
    row = book.periods.rows["cash"]
    want = _months()["cash"]
    assert [cash.cell(row, book.periods.first + j).value * 1000 for j in (0, 59)] == pytest.approx(
        [want[0], want[59]], rel=1e-9)
    solve = wb["Solve"]
    got = {solve.cell(r, 2).value: solve.cell(r, 3).value for r in range(4, solve.max_row + 1)
           if str(solve.cell(r, 1).value).startswith("solve min start")}
    want = {r.scenario: r.value.number for r in planner.load(PLAN).solve().rows}
    assert len(got) == 2 and all(got[s] == pytest.approx(want[s], rel=1e-12) for s in want), (got, want)
