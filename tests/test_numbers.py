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


# ---- money, inputs as written, text with units (issue 25, part 3) ----------------------

def test_money_is_shown_to_cents_in_every_currency_unit():
    from planner.outputs.numbers import is_money

    assert all(is_money(u) for u in ("USD", "kUSD", "MUSD", "EUR/month", "USD/GPU/h", "GBP", "USD/Mtoken"))
    assert not any(is_money(u) for u in ("GB", "ms", "token/s", "", "%", "MB/s", "h"))
    # -13,124.736 USD/month: never a fraction of a cent
    assert style_for([13124.736], "USD/month").text(-13124.736) == "-13,124.74"
    # one format for a quantity whatever its figures: kUSD 1,920 and 2,886.077 both to cents
    assert style_for([1920], "kUSD").text(1920) == "1,920.00"
    assert style_for([2886.077], "kUSD").text(2886.077) == "2,886.08"


def test_a_price_too_small_for_cents_keeps_its_digits():
    assert style_for([0.53], "USD/Mtoken").text(0.53) == "0.53"
    assert style_for([0.0042], "USD/token").text(0.0042) == "0.0042"


def test_money_negatives_are_a_red_minus_and_never_scientific():
    assert style_for([-250.5], "kUSD").excel() == "#,##0.00;[Red]-#,##0.00"
    assert style_for([6.5275e6], "USD").text(6.5275e6) == "6,527,500.00"
    assert not style_for([1e-5], "USD").scientific


def test_an_input_shows_the_decimals_written_and_an_edits_own():
    from planner.outputs.numbers import written_decimals

    assert [written_decimals(t) for t in ("2.50 USD/h", "1_920 kUSD", "0.8", "36 month", "7e10")] == [2, 0, 1, 0, None]
    price = style_for([2.5], "USD/h", written=2)
    assert price.excel().startswith("#,##0.00####;") and price.text(2.5) == "2.50" and price.text(2.255) == "2.255"
    pue = style_for([1.3], "", written=1)
    assert pue.excel() == "#,##0.0#####" and pue.text(1.3) == "1.3" and pue.text(1.25) == "1.25"
    assert style_for([2048], "", written=0).excel() == "#,##0"  # never "2,048." with a bare point
    assert style_for([60], "%", written=0).excel() == "#,##0.0#####%"  # 60.0%; a typed 65.25% shows so


def test_a_figure_and_its_unit_are_apart():
    from planner.outputs.numbers import figure

    assert figure(140.0, "GB") == "140 GB"
    assert figure(6.5275e6, "USD") == "6,527,500.00 USD"
    assert figure(45.5, "%") == "45.5 %"
    assert figure(True) == "true"


def test_a_failed_comparison_shows_the_digits_that_differ():
    from planner.outputs.numbers import differing

    got, want = differing(3298035.2, 3298035.2049, "USD")
    assert got != want and got == "3,298,035.200 USD" and want == "3,298,035.205 USD"
    a, b = differing(1.0, 1.0 + 1e-12)
    assert a != b and b == "1.000000000001"
    assert differing(46.6, 46.66666) == ("46.6", "46.66666")  # as written where eight digits tell them apart
    assert differing(97.0, 98.0) == ("97", "98")
    assert differing(2.0, 2.0) == ("2", "2")


# ---- one rule for every output (issue 39) --------------------------------------------------------------

@pytest.mark.parametrize("value, digits, text", [
    (40000000, 6, "40,000,000"),  # explain printed 40000000
    (20000000.5, 6, "20,000,001"),  # a sweep printed 2e+07: six significant digits, grouped
    (15.915494309189533, 6, "15.9155"),  # 100 / (2 pi) %
    (1.2573e-11, 6, "1.257E-11"),  # the workbook's scientific notation
    (0.30000000000000004, 4, "0.3"),  # float noise is not a digit
    (-0.5, 6, "-0.5"),
    (2.401142857142857, 10, "2.401142857"),
])
def test_a_figure_alone(value, digits, text):
    from planner.outputs.numbers import significant

    assert significant(value, digits) == text


@pytest.mark.parametrize("p, text", [
    (0.3877, "38.77%"), (0.25, "25.00%"), (1, "100%"), (0, "0%"),
    (0.99999, "> 99.99%"), (0.00001, "< 0.01%"),  # never rounded to every or no sample
])
def test_a_share_of_samples(p, text):
    from planner.outputs.numbers import share

    assert share(p) == text


def test_an_interval_with_grouped_ends_is_not_three_numbers():
    from planner.outputs.numbers import interval

    assert interval("1", "1,000") == "1; 1,000" and interval("0 %", "100 %") == "0 %, 100 %"


def test_a_distribution_row_takes_its_style_from_all_but_the_sd():
    from planner.outputs.numbers import row_texts

    # the sd of a constant is float residue: 0.00, never 3.55e-15
    assert row_texts({"point": 7, "mean": 7, "sd": 3.55e-15, "p5": 7}, "USD") == ["7.00", "7.00", "0.00", "7.00"]
    # tokens = 1 + alpha, alpha uniform on 85%..90%: P5 1.8525, P95 1.8975 (the sd does not ask for more digits)
    row = {"point": 1.875, "mean": 1.875, "sd": 0.014434, "p5": 1.8525, "p50": 1.875, "p95": 1.8975}
    assert row_texts(row) == ["1.8750", "1.8750", "0.0144", "1.8525", "1.8750", "1.8975"]


def test_a_quantitys_style_comes_from_every_scenario_and_skips_one_that_fails():
    from planner.outputs.numbers import plan_styles
    from planner.plan import loads_compiled

    plan = loads_compiled("""
a = 140 "a" where a >= 0
b = a / 4
scenario small { a = 145.25 }
scenario broken { a = -1 }
""", "styles.plan")
    styles = plan_styles(plan)  # `broken` violates the constraint: it chooses nothing and raises nothing
    assert styles["a"].text(140) == "140.00" and styles["b"].text(35) == "35.0000"
