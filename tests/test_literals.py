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


@pytest.mark.parametrize("text, low, high, value", [
    ("10000", 1, None, 10_000), ("10_000", 1, None, 10_000), ("1e6", 1, None, 1_000_000), (" 7 ", 0, None, 7),
    ("2.0", 0, None, 2), ("0", 0, None, 0), ("1e3", 0, 1000, 1000),
])
def test_a_command_line_whole_number_reads_as_a_plan_number(text, low, high, value):
    assert literals.whole_number(text, low, high) == value


@pytest.mark.parametrize("text, message", [
    ("1e400", "1e400 is too large for double-precision arithmetic: expected a whole number of at least 1"),
    ("1e-99999", "1e-99999 is too small for double-precision arithmetic"),
    ("0", "expected a whole number of at least 1, got '0'"),
    ("-3", "expected a whole number of at least 1, got '-3'"),
    ("2.5", "expected a whole number of at least 1, got '2.5'"),
    ("nan", "expected a whole number of at least 1, got 'nan'"),
    ("inf", "expected a whole number of at least 1, got 'inf'"),
    ("0x10", "expected a whole number of at least 1, got '0x10'"),
    ("1e9999999999", "expected a whole number of at least 1, got '1e9999999999'"),  # an exponent past 5 digits
    ("9" * 5000, "expected a whole number of at least 1, got '9999999999999999999999999999999999999...'"),
])
def test_a_command_line_whole_number_out_of_range_says_why(text, message):
    with pytest.raises(ValueError) as err:
        literals.whole_number(text, 1)
    assert message in str(err.value)


def test_a_set_value_goes_through_the_same_rule(plan_file, cli):
    path = plan_file("x = 2\ny = x * 3\n")
    code, _, err = cli("eval", path, "--set", "x=1e400")
    assert code == 2 and "--set x:1:1: error[evaluation]: 1e400 is too large for double-precision arithmetic" in err
    assert "help: numbers (in base units B, s) must lie between 1e-300 and 1e300" in err
