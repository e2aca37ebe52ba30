"""A GPU cluster over 48 months, written from the docs alone (tests/plans/series_gpu_cluster.plan): demand
grows, a batch of GPUs is bought at the start of a month when last month's demand over last month's GPUs was
above a threshold, and cash pays for them. Every month of every series, in each scenario, is checked against
an independent month-by-month script (``_months``, plain Python floats written from the plan's words), and
the least starting cash that keeps every month at or above zero against the script's own lowest month.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import planner
from planner.plan import load_compiled

PLAN = Path(__file__).parent / "plans" / "series_gpu_cluster.plan"
MONTH = 365 * 86400 / 12  # planner's month, in seconds
SERIES = ("demand", "bought", "gpus", "used", "revenue", "costs", "cash")
SCENARIOS = {None: {}, "slow": {"growth": 0.02}, "cheap_gpus": {"gpu_price": 22_000.0}}


def _months(start_cash=2e6, growth=0.05, gpu_price=30_000.0):
    """The cluster month by month (USD, GPUs), from the plan's own words."""
    gpus0, demand0, threshold, batch, power, price, hours = 64, 50.0, 0.8, 16, 350.0, 2.0, 720.0
    out = {k: [] for k in SERIES}
    demand, gpus, cash = None, gpus0, start_cash
    for m in range(1, 49):
        before = demand0 if m == 1 else demand  # last month's demand (month 1: the demand before)
        demand = demand0 if m == 1 else demand * (1 + growth)
        bought = batch if before / gpus > threshold else 0
        gpus += bought
        used = min(demand, gpus)
        revenue = used * hours * price
        costs = gpus * power + bought * gpu_price
        cash += revenue - costs
        for k, v in zip(SERIES, (demand, bought, gpus, used, revenue, costs, cash)):
            out[k].append(v)
    return out


def _close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-6)


@pytest.fixture(scope="module")
def plan():
    return load_compiled(PLAN)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_month_of_every_scenario_matches_the_script(plan, scenario):
    ev, want = plan.evaluate(scenario), _months(**SCENARIOS[scenario])
    for name in SERIES:
        got = list(ev.series[name])
        assert len(got) == 48
        for month, (g, w) in enumerate(zip(got, want[name]), start=1):
            assert _close(g, w), (scenario, name, month, g, w)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_figures_match_the_script(plan, scenario):
    ev, m = plan.evaluate(scenario), _months(**SCENARIOS[scenario])
    assert _close(ev["lowest"], min(m["cash"])) and _close(ev["ending"], m["cash"][-1])
    assert ev["purchases"] == sum(1 for b in m["bought"] if b)
    assert _close(ev["sold_hours"], sum(m["used"]) * 720)
    short = [i for i, c in enumerate(m["cash"], start=1) if c < 0]
    if short:
        assert _close(ev["runway"], short[0] * MONTH) and not ev.is_never("runway")
    else:
        assert ev.is_never("runway")


def test_the_least_start_keeps_every_month_at_or_above_zero():
    # cash moves one for one with the start: the least start lifts the script's lowest month to zero
    rows = planner.load(PLAN).solve().rows
    assert [r.scenario for r in rows] == ["base", "slow", "cheap_gpus"]
    for row, scenario in zip(rows, SCENARIOS):
        assert row.value.unit == "MUSD"
        want = 2e6 - min(_months(**SCENARIOS[scenario])["cash"])
        assert _close(row.value.number * 1e6, want, rel=1e-12), (scenario, row.value.number, want)


def test_the_plan_checks_its_own_figures():
    results = planner.load(PLAN).check()
    assert len(results) == 11 and all(r.passed for r in results)


def test_the_workbook_follows_an_edited_growth_to_the_scripts_figures(tmp_path):
    """The exported workbook, growth typed as 2% on the Inputs sheet, every cached value poisoned, recalculated
    by LibreOffice: the purchases (an IF over last month's cells), the cash and the figures that reduce it are the
    script's at 2% a month."""
    import openpyxl
    from excel_recalc import poison, recalculate, require_soffice

    from planner.outputs.excel.writer import Book, to_bytes

    require_soffice()
    book = tmp_path / "gpu.xlsx"
    book.write_bytes(to_bytes(Book(load_compiled(PLAN)).build()))
    wb = openpyxl.load_workbook(book)
    sheet, ref = wb.defined_names["growth"].attr_text.split("!")
    wb[sheet.strip("'")][ref.replace("$", "")].value = 0.02
    wb.save(book)
    assert poison(book) > 1000
    got = openpyxl.load_workbook(recalculate([book], tmp_path / "out")[book], data_only=True)

    def named(name):
        s, r = got.defined_names[name].attr_text.split("!")
        return got[s.strip("'")][r.replace("$", "")].value

    m = _months(growth=0.02)
    assert _close(named("lowest") * 1000, min(m["cash"])) and _close(named("ending") * 1000, m["cash"][-1])
    assert named("purchases") == sum(1 for b in m["bought"] if b) == 6 and named("runway") == "#N/A"
