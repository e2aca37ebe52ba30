"""Every shipped plan (sheets/ and planner's library) loads, evaluates in
every scenario, and passes its own checks."""


import pytest
from conftest import SHEETS

import planner
from planner.language.imports import library_dir
from planner.questions.checks import run_checks

PLANS = sorted(SHEETS.glob("*.plan")) + sorted(library_dir().rglob("*.plan"))


@pytest.mark.parametrize("path", PLANS, ids=[p.name for p in PLANS])
def test_shipped_plan(path):
    plan = planner.load(path)
    for scenario in plan.resolve_scenarios("all"):
        plan.evaluate(scenario)
    results = run_checks(plan)
    failed = [f"{r.location}: {r.text}: {r.describe()}" for r in results if not r.passed]
    assert not failed, "\n".join(failed)


def test_there_are_shipped_sheets():
    assert (SHEETS / "token_cost.plan") in PLANS
    assert len(PLANS) >= 8
