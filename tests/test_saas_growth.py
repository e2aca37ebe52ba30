"""benchmarks/plans/saas_growth.plan, a 36-month SaaS growth plan written from the docs (account executives
hired towards a target with a three-month ramp, churn and expansion, support agents by the customer count,
a loan repaid by `pmt`, `npv` and `irr` of a series, `first`, four questions, two sweeps, an uncertain
churn): its checks pass, and its figures are those of benchmarks/baselines/saas_growth.py (a plain
month-by-month script: the IRR and the questions' answers by bisection or counting), written here as
numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from excel_recalc import named_cell, typed_in_both_engines

import planner

PLAN = Path(__file__).resolve().parent.parent / "benchmarks" / "plans" / "saas_growth.plan"

# per scenario (the script's output): kUSD for money, a fraction for the returns, months for `first`
GOLDEN = {
    "base": dict(lowest_cash=639.611023959843, ending_arr=11870.295364633193, breakeven=14, runway="never",
                 sales_cost=5656.0, signed=1329.655665600534, cac=4253.732862068082,
                 cac_payback=6.484348875103783, plan_npv=2664.150005761857, plan_irr=0.04316874709906682,
                 yearly_irr=0.6605608996795584, funding_needed=160.3889760401569),
    "no_loan": dict(lowest_cash=-152.35865457160293, ending_arr=11870.295364633193, breakeven=14, runway=10,
                    sales_cost=5656.0, signed=1329.655665600534, cac=4253.732862068082,
                    cac_payback=6.484348875103783, plan_npv=2664.150005761857, plan_irr=0.04316874709906682,
                    yearly_irr=0.6605608996795584, funding_needed=952.358654571603),
    "slow_hiring": dict(lowest_cash=1032.1374378284947, ending_arr=9507.051028862144, breakeven=12, runway="never",
                        sales_cost=3948.0, signed=1054.655665600534, cac=3743.401878708877,
                        cac_payback=5.706405302909873, plan_npv=2432.225148307002, plan_irr=0.043944092279869396,
                        yearly_irr=0.6754323290110194, funding_needed=0.0),
    "high_churn": dict(lowest_cash=358.2009233703724, ending_arr=9518.94806748207, breakeven=16, runway="never",
                       sales_cost=5656.0, signed=1329.655665600534, cac=4253.732862068082,
                       cac_payback=6.484348875103783, plan_npv=1199.7347957363454, plan_irr=0.020466664739333784,
                       yearly_irr=0.27522220954890053, funding_needed=441.79907662962785),
}
ANSWERS = dict(reps_for_12m=13, churn_limit=0.054719152358079726, least_loan=268.13605782914057)  # base
SWEEP_CHURN = {1: (860.4093682827397, 15152.976439058075), 2: (710.4709360496659, 12842.852750099016),
               3: (539.4184130129777, 11000.021729406005), 4: (358.2009233703724, 9518.94806748207),
               5: (132.79322992779245, 8319.240138522824)}  # churn in % -> lowest cash, ending ARR (kUSD)
PERCENT = {"plan_irr", "yearly_irr", "churn_limit"}  # shown in %


@pytest.fixture(scope="module")
def plan():
    return planner.load(PLAN)


def _number(name, got):
    return float(got) / (100 if name in PERCENT else 1)


def test_its_checks_pass(plan):
    checks = plan.check()
    assert checks.ok and checks.passed == 19 and checks.failed == 0


@pytest.mark.parametrize("scenario", sorted(GOLDEN))
def test_its_figures_are_the_scripts(plan, scenario):
    result = plan.eval(scenario="all")
    answers = {(row.alias, row.scenario): row.value for row in plan.solve()}
    for name, want in GOLDEN[scenario].items():
        got = answers[name, scenario] if name == "funding_needed" else result[name, scenario]
        if want == "never":
            assert got.is_never, (name, scenario, got)
        else:
            assert _number(name, got) == pytest.approx(want, rel=1e-9, abs=1e-9), (name, scenario, got)


def test_its_answers_and_sweep_are_the_scripts(plan):
    answers = {row.alias: row.value for row in plan.solve() if row.scenario == "base"}
    for name, want in ANSWERS.items():
        assert _number(name, answers[name]) == pytest.approx(want, rel=1e-9), name
    rows = [r for r in plan.sweep().to_records() if "churn" in r]
    assert {round(r["churn"]): (r["lowest_cash"], r["ending_arr"]) for r in rows} == \
        {k: pytest.approx(v, rel=1e-9) for k, v in SWEEP_CHURN.items()}


# kUSD or USD/customer as the Model sheet holds them (its display units), a fraction for the returns
IN_THE_BOOK = ("lowest_cash", "ending_arr", "sales_cost", "signed", "cac", "plan_npv", "plan_irr", "yearly_irr",
               "breakeven")


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    # an analyst types the slow-hiring target and the high churn into the Inputs sheet: the script's scenarios
    return typed_in_both_engines(PLAN, tmp_path_factory.mktemp("saas_growth"), {
        "slow_hiring": {"rep_target": 8}, "high_churn": {"churn": 0.04}, "dear_money": {"discount_rate": 0.25}})


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
@pytest.mark.parametrize("case", ["base", "slow_hiring", "high_churn"])
def test_the_workbook_recalculated_with_an_input_typed_in_gives_the_scripts_figures(books, engine, case):
    """Every cached value poisoned, then recalculated by each engine, with the input typed over the orange cell:
    the Model's figures are the script's for that input (the script's scenario of the same name)."""
    wb = books[case].engines[engine]
    for name in IN_THE_BOOK:
        got = named_cell(wb, name)
        assert got == pytest.approx(GOLDEN[case][name], rel=1e-9), (case, engine, name, got)


# the script's plan_npv with discount_rate = 25% (its model(p) at that rate; `planner eval --set
# discount_rate=25%` says 1,972.64 kUSD): the operating cash flows do not move, their discounting does
NPV_AT_25 = 1972.6427110888064


def test_npv_of_a_series_is_excels_npv_over_its_row(books):
    """`npv(discount_rate / 12, operating)`: NPV over the series' row on the Months sheet, as an analyst writes
    it (it was 36 INDEX/MATCH arguments, 2,137 characters)."""
    import openpyxl

    row = books["base"].book.periods.rows["operating"]
    wb = openpyxl.load_workbook(books["base"].path)
    assert named_cell(wb, "plan_npv") == f"=NPV(discount_rate/12,Months!$C${row}:$AL${row})"


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_a_discount_rate_typed_in_moves_the_npv_as_the_script_says(books, engine):
    assert named_cell(books["dear_money"].engines[engine], "plan_npv") == pytest.approx(NPV_AT_25, rel=1e-9), engine
