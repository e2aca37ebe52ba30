"""benchmarks/plans/lease_or_buy_36.plan, a 36-month lease-or-buy decision written from the docs: its checks
pass, and its figures are those of benchmarks/baselines/lease_or_buy_36.py (a plain month-by-month script:
the loan payment by the annuity formula, the IRR and the break-even lease price by bisection), written
here as numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from excel_recalc import named_cell, typed_in_both_engines

import planner

PLAN = Path(__file__).resolve().parent.parent / "benchmarks" / "plans" / "lease_or_buy_36.plan"

# per scenario: kUSD for money, a fraction for the returns, months for payback (the script's output)
GOLDEN = {
    "base": dict(payment=8.140731560944755, total_buy=-541.6663361940111, total_lease=-706.2,
                 npv_buy=122.54629822232304, irr_buy=0.025348795464623763, irr_yearly=0.35039091278914825,
                 payback=22, peak_gpus=20, breakeven_lease=1.5722020234100892),
    "slow_growth": dict(payment=8.140731560944755, total_buy=-345.86633619401115, total_lease=-391.6,
                        npv_buy=22.296055853464386, irr_buy=0.011196479328211217, irr_yearly=0.142948300897215,
                        payback=36, peak_gpus=8, breakeven_lease=2.0509939869253494),
    "cheap_lease": dict(payment=8.140731560944755, total_buy=-488.2663361940111, total_lease=-513.6,
                        npv_buy=5.426170927896463, irr_buy=0.008602227566867238, irr_yearly=0.10825340912767056,
                        payback=36, peak_gpus=20, breakeven_lease=1.5722020234100892),
    "dear_money": dict(payment=8.749473218054532, total_buy=-563.581035849963, total_lease=-706.2,
                       npv_buy=90.90065301742141, irr_buy=0.025348795464623763, irr_yearly=0.35039091278914825,
                       payback=24, peak_gpus=20, breakeven_lease=1.7020986172158196),
}
PERCENT = {"irr_buy", "irr_yearly"}  # shown in %


@pytest.fixture(scope="module")
def plan():
    return planner.load(PLAN)


def test_its_checks_pass(plan):
    checks = plan.check()
    assert checks.ok and checks.passed == 7 and checks.failed == 0


@pytest.mark.parametrize("scenario", sorted(GOLDEN))
def test_its_figures_are_the_scripts(plan, scenario):
    result = plan.eval(scenario="all")
    answers = {row.scenario: row for row in plan.solve()}
    for name, want in GOLDEN[scenario].items():
        got = answers[scenario].value if name == "breakeven_lease" else result[name, scenario]
        number = float(got) / (100 if name in PERCENT else 1)
        assert number == pytest.approx(want, rel=1e-9), (name, scenario, got)


def test_simulate_draws_the_fans_the_uncertain_lease_price_moves(capsys):
    """Without --show, `planner simulate` drew all nine series' fans, three of them (demand, GPUs needed and
    leased) one path in every percentile: no uncertain input reaches them. The six the lease price moves."""
    import json

    from planner.cli import main

    assert main(["simulate", str(PLAN), "--samples", "500", "--format", "json"]) == 0
    (base,) = json.loads(capsys.readouterr().out)["scenarios"]
    assert list(base["series"]) == ["buy_cash", "lease_cash", "cum_buy", "cum_lease", "advantage", "unlevered"]
    month1 = base["series"]["lease_cash"]
    assert month1["p5"][0] < month1["p95"][0] < 0  # 3 GPUs leased in month 1 at a price between 1.8 and 2.8 kUSD
    assert -3 * 2.8 < month1["p5"][0] and month1["p95"][0] < -3 * 1.8


# the script's npv with discount = 20% (its model(p) at that rate; `planner eval --set discount_rate=20%` says
# 90.58 kUSD): the advantage month by month does not move, its discounting does
NPV_AT_20 = 90.57775818884635


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    return typed_in_both_engines(PLAN, tmp_path_factory.mktemp("lease_or_buy_36"),
                                 {"discount_20": {"discount_rate": 0.20}})


def test_the_npv_of_the_advantage_is_excels_npv_over_its_row(books):
    """`npv(discount_rate / 12, advantage)`: NPV over the series' row on the Months sheet (it was 36
    INDEX/MATCH arguments, 2,137 characters)."""
    import openpyxl

    row = books["base"].book.periods.rows["advantage"]
    wb = openpyxl.load_workbook(books["base"].path)
    assert named_cell(wb, "npv_buy") == f"=NPV(discount_rate/12,Months!$C${row}:$AL${row})"


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
@pytest.mark.parametrize("case, want", [("base", GOLDEN["base"]["npv_buy"]), ("discount_20", NPV_AT_20)])
def test_the_npv_recalculated_with_a_discount_rate_typed_in_is_the_scripts(books, engine, case, want):
    assert named_cell(books[case].engines[engine], "npv_buy") == pytest.approx(want, rel=1e-9), (case, engine)
