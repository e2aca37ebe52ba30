"""benchmarks/plans/inference_capacity.plan, a 30-month LLM serving capacity plan written from the docs (GPU
throughput from the shipped llm/serving.plan roofline on the H100 library figures, token demand growing by an
uncertain rate, GPUs ordered every month and in service three months later through a `previous` delay line,
straight-line depreciation, a cloud reservation, on-demand overflow by `ceil`, an on-call rota by `ceil`,
three questions, two sweeps): its checks pass, and its figures are those of
benchmarks/baselines/inference_capacity.py (a plain month-by-month script: the answers by counting or
bisection), written here as numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from excel_recalc import named_cell, typed_in_both_engines

import planner

PLAN = Path(__file__).resolve().parent.parent / "benchmarks" / "plans" / "inference_capacity.plan"

# per scenario (the script's output): kUSD for the totals, USD/Mtoken, a fraction for utilisation, months
GOLDEN = {
    "base": dict(peak_utilisation=0.9792191298797206, first_overload=26, on_demand_spend=182.208,
                 total_cost=6320.968642666667, unit_cost=0.2665112429748487, ending_fleet=148, peak_engineers=8,
                 ending_book=2325.3333333333335, fewest_orders=5),
    "fast_growth": dict(peak_utilisation=2.8668017843283167, first_overload=10, on_demand_spend=7345.26,
                        total_cost=15356.020642666668, unit_cost=0.3111768721978048, ending_fleet=148,
                        peak_engineers=22, ending_book=2325.3333333333335, fewest_orders=18),
    "model_14b": dict(peak_utilisation=1.117919580015568, first_overload=21, on_demand_spend=643.422,
                      total_cost=6926.182642666667, unit_cost=0.2920289040366401, ending_fleet=148,
                      peak_engineers=9, ending_book=2325.3333333333335, fewest_orders=6),
    "no_reserve": dict(peak_utilisation=1.0321498936570028, first_overload=24, on_demand_spend=324.558,
                       total_cost=5951.398642666667, unit_cost=0.25092904891025947, ending_fleet=148,
                       peak_engineers=8, ending_book=2325.3333333333335, fewest_orders=6),
}
ANSWERS = dict(growth_limit=0.05483983392348823, reserve_needed=32)  # base
SWEEP_PARAMETERS = {8e9: (10.641108216582268, 0.9792191298797206, 0.2665112429748487),
                    14e9: (9.320864322505674, 1.117919580015568, 0.2920289040366401),
                    32e9: (6.792590975876465, 1.5340209304231098, 0.4357023241310309)}  # Gtoken, fraction, USD/Mtoken
SWEEP_ORDERS = {3: (1.1841719710173366, 720.291, 6256.930048666666), 5: (0.8347441762909095, 0.0, 6848.882236666667),
                7: (0.659940661918717, 0.0, 8323.125424666666), 9: (0.659940661918717, 0.0, 9797.368612666667)}
PERCENT = {"peak_utilisation", "growth_limit"}  # shown in %


@pytest.fixture(scope="module")
def plan():
    return planner.load(PLAN)


def _number(name, got):
    return float(got) / (100 if name in PERCENT else 1)


def test_its_checks_pass(plan):
    checks = plan.check()
    assert checks.ok and checks.passed == 20 and checks.failed == 0


@pytest.mark.parametrize("scenario", sorted(GOLDEN))
def test_its_figures_are_the_scripts(plan, scenario):
    result = plan.eval(scenario="all")
    answers = {(row.alias, row.scenario): row.value for row in plan.solve()}
    for name, want in GOLDEN[scenario].items():
        got = answers[name, scenario] if name == "fewest_orders" else result[name, scenario]
        assert _number(name, got) == pytest.approx(want, rel=1e-9, abs=1e-9), (name, scenario, got)


def test_its_answers_and_sweeps_are_the_scripts(plan):
    answers = {row.alias: row.value for row in plan.solve() if row.scenario == "base"}
    for name, want in ANSWERS.items():
        assert _number(name, answers[name]) == pytest.approx(want, rel=1e-9), name
    records = plan.sweep().to_records()
    by_size = {r["parameters"]: (r["gpu_month"], r["peak_utilisation"] / 100, r["unit_cost"])
               for r in records if "gpu_month" in r}
    by_orders = {r["orders"]: (r["peak_utilisation"] / 100, r["on_demand_spend"], r["total_cost"])
                 for r in records if "on_demand_spend" in r}
    assert by_size == {k: pytest.approx(v, rel=1e-9) for k, v in SWEEP_PARAMETERS.items()}
    assert by_orders == {k: pytest.approx(v, rel=1e-9, abs=1e-9) for k, v in SWEEP_ORDERS.items()}


# kUSD, USD/Mtoken, a fraction, counts and months as the Model sheet holds them (its display units)
IN_THE_BOOK = ("peak_utilisation", "first_overload", "on_demand_spend", "total_cost", "unit_cost", "ending_fleet",
               "peak_engineers", "ending_book")


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    # a capacity planner types the faster growth, then no reservation, into the Inputs sheet: the script's scenarios
    return typed_in_both_engines(PLAN, tmp_path_factory.mktemp("inference_capacity"), {
        "fast_growth": {"growth": 0.10}, "no_reserve": {"reserved_gpus": 0}})


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
@pytest.mark.parametrize("case", ["base", "fast_growth", "no_reserve"])
def test_the_workbook_recalculated_with_an_input_typed_in_gives_the_scripts_figures(books, engine, case):
    """Every cached value poisoned, then recalculated by each engine, with the input typed over the orange cell:
    the Model's figures are the script's for that input (the script's scenario of the same name)."""
    wb = books[case].engines[engine]
    for name in IN_THE_BOOK:
        got = named_cell(wb, name)
        assert got == pytest.approx(GOLDEN[case][name], rel=1e-9), (case, engine, name, got)
