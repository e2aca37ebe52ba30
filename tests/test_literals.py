"""The one range rule for numbers a user writes (planner.language.literals)."""

from fractions import Fraction

import pytest

from planner.language import literals
from planner.language.errors import EvaluationError
from planner.language.literals import magnitude_problem

LARGE = "too large for double-precision arithmetic"
SMALL = "too small for double-precision arithmetic"


@pytest.mark.parametrize("value", [0, 0.0, -0.0, 1, -1, 1e300, -1e300, 1e-300, -1e-300, 10 ** 300,
                                   Fraction(10) ** 300, Fraction(1, 10 ** 300), Fraction(-7, 3), True, 2 ** 900])
def test_usable_numbers_have_no_problem(value):
    assert magnitude_problem(value) is None


@pytest.mark.parametrize("value, problem", [
    (1e301, LARGE), (-1e308, LARGE), (10 ** 300 + 1, LARGE), (-(10 ** 400), LARGE), (Fraction(10) ** 400, LARGE),
    (Fraction(10) ** 300 + Fraction(1, 10), LARGE),
    (1e-301, SMALL), (5e-324, SMALL), (Fraction(1, 10 ** 300) - Fraction(1, 10 ** 400), SMALL),
    (Fraction(-1, 10 ** 320), SMALL),
    (float("inf"), "not a finite number"), (float("-inf"), "not a finite number"),
    (float("nan"), "not a finite number"),
])
def test_numbers_beyond_double_precision_are_named(value, problem):
    assert magnitude_problem(value) == problem


def test_check_raises_one_located_error_with_the_hint():
    from planner.language.source import Source, Span
    span = Span(Source("p.plan", "x = 1e400\n"), 4, 9)
    with pytest.raises(EvaluationError) as err:
        literals.check(Fraction(10) ** 400, span)
    assert err.value.message == "1e400 is too large for double-precision arithmetic"
    assert err.value.hint == literals.HINT
    literals.check(Fraction(1), span)  # nothing raised


def test_a_plan_literal_goes_through_the_same_rule():
    import planner
    from planner.language.errors import PlanError
    with pytest.raises(PlanError, match=r"1e400 is too large for double-precision arithmetic"):
        planner.loads("x = 1e400\n")
    with pytest.raises(PlanError, match=r"1e-400 is too small for double-precision arithmetic"):
        planner.loads("x = 1e-400\n")
