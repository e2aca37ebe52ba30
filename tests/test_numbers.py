"""One number style per quantity (outputs/numbers.py), shared by the workbook and the report."""

import pytest

from planner.outputs.numbers import NumberStyle, style_for


@pytest.mark.parametrize("values, excel, texts", [
    ([70e9], "#,##0", ["70,000,000,000"]),
    ([16, 8, 4.15], "#,##0.00", ["16.00", "8.00", "4.15"]),  # one format across the row
    ([2251.9666928], "#,##0.00", ["2,251.97"]),  # six significant digits
    ([891.264000000002], "#,##0.000", ["891.264"]),  # float noise is not a digit
    ([989.4, 1978.9], "#,##0.0", ["989.4", "1,978.9"]),
    ([0.287107752303907], "#,##0.000000", ["0.287108"]),
    ([-1.2572854757309e-11], "0.000E+00", ["-1.257E-11"]),  # residue around zero
    ([1e16], "0.000E+00", ["1.000E+16"]),
    ([0, 0], "#,##0", ["0", "0"]),
    ([-0.001, 12.5], "#,##0.000", ["-0.001", "12.500"]),
    ([140, 70, 36.3125], "#,##0.0000", ["140.0000", "70.0000", "36.3125"]),  # the smallest keeps its digits
    ([1e6, 0.5], "#,##0.0", ["1,000,000.0", "0.5"]),
    ([140, 1e-12], "#,##0", ["140", "0"]),  # rounding residue does not ask for decimals
])
def test_style_for(values, excel, texts):
    style = style_for(values)
    assert style.excel() == excel
    assert [style.text(v) for v in values] == texts


def test_not_finite_and_booleans_do_not_choose_the_style():
    style = style_for([float("nan"), float("inf"), True, None, 2.5])
    assert style == NumberStyle(1)
    assert [style.text(v) for v in (float("nan"), float("-inf"), True, None)] == ["nan", "-inf", "true", "n/a"]


@pytest.mark.parametrize("style, value, text", [
    (NumberStyle(3), 36.3125, "36.313"),  # half away from zero, as Excel shows it (Python: 36.312)
    (NumberStyle(2), 2.675, "2.68"),  # on the figure's 15 digits (the double is 2.67499999...)
    (NumberStyle(2), -2.675, "-2.68"),
    (NumberStyle(1, True), 12345.0, "1.2E+04"),
    (NumberStyle(1, True), 1.25e-5, "1.3E-05"),
])
def test_rounding_is_the_spreadsheets(style, value, text):
    assert style.text(value) == text


def test_no_negative_zero():
    assert NumberStyle(2).text(-0.001) == "0.00"


def test_percent_is_excels_own_percent_format_chosen_from_the_figures():
    """45.5 % is chosen from the figure 45.5 (one decimal, never "46") and written as Excel's own percent
    format, for a cell that holds the fraction 0.455 (what Excel stores when one types 45.5%)."""
    style = style_for([45.5], "%")
    assert style.excel() == "#,##0.0%" and style.text(45.5) == "45.5"
    assert style_for([8, 12.25], "%").excel() == "#,##0.00%"
    assert style_for([10], "%/year").excel() == "#,##0%"
    assert style_for([1e-9], "%").excel() == "0.000E+00%"
