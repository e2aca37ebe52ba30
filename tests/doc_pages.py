"""The documentation's pages as the tests read them: README.md and every page under docs/, their code
blocks, and their sections.

A ```plan block runs on its own, unless the line before it (blank lines aside) is the comment
``<!-- continues the plan above -->``: then it is the plan of the page's previous ```plan block with
these lines added (the tutorial builds one plan in steps this way)."""

from __future__ import annotations

import re

from conftest import ROOT

DOCS = ROOT / "docs"
CONTINUES = "<!-- continues the plan above -->"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
# Written by docs/generate.py from the parser and the library: checked against their sources instead.
GENERATED = {"docs/cli-reference.md", "docs/library/hardware.md", "docs/library/models.md",
             "docs/library/formulas.md"}


def pages() -> dict[str, str]:
    """Every page, by its path from the repository root: README.md first, then docs/ in order."""
    found = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    for path in sorted(DOCS.rglob("*.md")):
        found[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    return found


def page(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The section under a heading (any level, the heading line itself included) up to the next heading
    of the same or a higher level."""
    match = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, re.M)
    if match is None:
        raise KeyError(heading)
    level = len(match.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, match.end())
    return text[match.start():end.start() if end else None]


def blocks(text: str) -> list[tuple[int, str, str]]:
    """(line, language, body) of every fenced block of a page."""
    return [(text[: m.start()].count("\n") + 1, m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def plan_blocks() -> list[tuple[str, str, str]]:
    """(where, block, plan) for every ```plan block of every page: where is `page:line`, block the lines
    the page shows, plan the text that runs (the block, after the page's earlier block it continues)."""
    out = []
    for name, text in pages().items():
        previous = None
        for m in FENCE.finditer(text):
            if m.group(1) != "plan":
                continue
            body = m.group(2)
            continues = text[: m.start()].rstrip().endswith(CONTINUES)
            if continues:
                assert previous is not None, f"{name}: a block continues a plan but none comes before it"
                plan = previous + "\n" + body
            else:
                plan = body
            out.append((f"{name}:{text[: m.start()].count(chr(10)) + 1}", body, plan))
            previous = plan
    return out


def run_everything(plan) -> list:
    """Everything a plan asks, as a reader running it would: every scenario evaluated, every question
    answered, every sweep without an issue (asserted); the results of its checks."""
    from planner.questions.checks import run_checks
    from planner.questions.solve import Solver
    from planner.questions.sweep import run_statement

    for scenario in [None] + plan.scenario_names:
        plan.evaluate(scenario)
    solver = Solver(plan)
    for stmt in solver.questions():
        assert solver.run(stmt), stmt.span.flat
    for stmt in plan.model.sweeps:
        for result in run_statement(plan, stmt):
            assert result.issue_count == 0, stmt.span.flat
    return run_checks(plan)
