"""The plans in examples/: at least six, from different domains, each stating the decision it informs, each
formatted, and each passing its own checks (golden figures worked by hand or from a published source) in
every scenario, with its questions answered and its sweeps free of issues."""

from __future__ import annotations

import pytest
from conftest import ROOT
from doc_pages import page, run_everything

import planner
from planner.language.format import format_text

EXAMPLES = sorted((ROOT / "examples").glob("*.plan"))


def test_there_are_six_examples_and_the_page_lists_each():
    assert len(EXAMPLES) >= 6
    listed = page("docs/examples.md")
    for path in EXAMPLES:
        assert f"examples/{path.name}" in listed, path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_states_its_decision_and_is_formatted(path):
    text = path.read_text(encoding="utf-8")
    assert format_text(text, str(path)) == text, f"run: planner fmt examples/{path.name}"
    plan = planner.load(path)
    assert plan.title
    assert any(note.startswith("Decision: ") for note in plan.model.plan.notes), path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_passes_its_checks(path):
    results = run_everything(planner.load(path))
    assert len(results) >= 6
    failed = [f"{r.text}: {r.describe()}" for r in results if not r.passed]
    assert not failed, "\n".join(failed)
