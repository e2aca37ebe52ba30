"""Every plan in the README runs: each ```plan block of the language tour and of the reusable-plans
section loads, evaluates in every scenario, answers its questions, and passes its own checks."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

import planner
from planner.questions.checks import run_checks
from planner.questions.solve import Solver
from planner.questions.sweep import run_statement

README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
BLOCKS = [(README[: m.start()].count("\n") + 1, m.group(2)) for m in FENCE.finditer(README) if m.group(1) == "plan"]


def _section(title: str) -> str:
    start = README.index(f"\n## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def test_the_readme_has_its_plans():
    assert len(BLOCKS) >= 10
    text = "\n".join(b for _, b in BLOCKS)
    for construct in ("sum(", "for m in 1 month..lifetime", "for w in [q, k, v, o]", "as payback",
                      "crossover_batch * expected_tokens", "scenario", "axis", "import"):
        assert construct in text, construct


@pytest.mark.parametrize("title", ["A tour of the language", "Reusable plans: imports, axes and the hardware library"])
def test_plan_code_in_the_tour_is_fenced_as_plan(title):
    """A code block without a language in these sections would escape the test below."""
    for m in FENCE.finditer(_section(title)):
        assert m.group(1), f"a ``` block without a language in '{title}': {m.group(2)[:60]!r}"


@pytest.mark.parametrize("line,text", BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_readme_plan_runs(line, text):
    plan = planner.loads(text, f"README.md:{line}", ROOT)
    for scenario in [None] + plan.scenario_names:
        plan.evaluate(scenario)
    solver = Solver(plan)
    for stmt in solver.questions():
        assert solver.run(stmt), stmt.span.flat
    for stmt in plan.model.sweeps:
        for result in run_statement(plan, stmt):
            assert result.issue_count == 0, stmt.span.flat
    failed = [f"{r.text}: {r.describe()}" for r in run_checks(plan) if not r.passed]
    assert not failed, "\n".join(failed)
