"""Every plan in the documentation runs: each ```plan block of README.md and of every page under docs/
loads, evaluates in every scenario, answers its questions, sweeps without issues and passes its own checks
(a block marked as continuing the page's previous one runs as that plan with its lines added)."""

from __future__ import annotations

import pytest
from conftest import ROOT
from doc_pages import CONTINUES, blocks, pages, plan_blocks, run_everything

import planner

PLANS = plan_blocks()
# Pages whose code blocks are plans or commands: a block without a language there would escape the run.
TAGGED = ["README.md", "docs/index.md", "docs/tutorial.md", "docs/language.md", "docs/questions.md",
          "docs/library/index.md", "docs/examples.md"]


def test_the_docs_have_their_plans():
    assert len(PLANS) >= 16
    text = "\n".join(plan for _, _, plan in PLANS)
    for construct in ("sum(", "for m in 1 month..lifetime", "for w in [q, k, v, o]", "as payback",
                      "crossover_batch * expected_tokens", "scenario", "axis", "import", "solve", "sweep"):
        assert construct in text, construct
    names = {where.split(":")[0] for where, _, _ in PLANS}
    assert {"README.md", "docs/tutorial.md", "docs/language.md", "docs/questions.md"} <= names


@pytest.mark.parametrize("name", TAGGED)
def test_code_in_these_pages_is_fenced_with_a_language(name):
    """A code block without a language would escape the test below."""
    for line, language, body in blocks(pages()[name]):
        assert language, f"a ``` block without a language at {name}:{line}: {body[:60]!r}"


def test_continued_blocks_follow_a_plan():
    for name, text in pages().items():
        for chunk in text.split(CONTINUES)[1:]:
            assert chunk.lstrip().startswith("```plan\n"), f"{name}: {CONTINUES} not followed by a plan block"


@pytest.mark.parametrize("where,block,text", PLANS, ids=[where for where, _, _ in PLANS])
def test_doc_plan_runs(where, block, text):
    results = run_everything(planner.loads(text, where, ROOT))
    failed = [f"{r.text}: {r.describe()}" for r in results if not r.passed]
    assert not failed, "\n".join(failed)
