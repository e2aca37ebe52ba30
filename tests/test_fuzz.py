"""Mutated plans never crash: every failure is a PlanError with a location.

A seeded, bounded fuzz run over the shipped plan (random deletions and
insertions of plan tokens). Each case either loads and evaluates, or fails
with a rendered PlanError; any other exception is a bug.
"""

import random

import pytest
from conftest import TOKEN_COST

import planner
from planner.language.errors import PlanError, render
from planner.questions.checks import run_checks

TOKENS = ['(', ')', '[', ']', '{', '}', '=', '==', '~=', '->', ',', '*', '/', '^', '-', '+', 'GB', 'ms', '"x"',
          'where', 'integer', 'true', 'if(', 'max(', '0', '1e400', '1/0', 'alpha', 'scenario', 'check', 'in',
          'with', '@bf16', '@in', '.', '..', 'solve', 'sweep', 'axis', 'import "x"', '\n', ' ', '#', 'unit',
          'sqrt(-1)', '%', 'bit/s', 'B/token', 'for all', 'as x']


@pytest.mark.parametrize("seed", range(6))
def test_mutations_fail_cleanly(seed):
    text = TOKEN_COST.read_text(encoding="utf-8")
    rng = random.Random(seed)
    for _ in range(25):
        chars = list(text)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(chars))
            if rng.random() < 0.4:
                del chars[pos:pos + rng.randint(1, 8)]
            else:
                chars.insert(pos, rng.choice(TOKENS))
        mutated = "".join(chars)
        try:
            plan = planner.loads(mutated, "fuzz.plan")
            for scenario in plan.resolve_scenarios("all"):
                try:
                    plan.evaluate(scenario)
                except PlanError as err:
                    assert render(err)
            run_checks(plan)
        except PlanError as err:
            assert "fuzz.plan:" in render(err) or err.span is None
