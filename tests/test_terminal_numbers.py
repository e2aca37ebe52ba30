"""The terminal follows the workbook's number rule (issue 25): money to cents with grouped digits, never
in scientific notation; a failed check prints the digits that differ, never two equal numbers."""

from planner.outputs.terminal import sweep_table
from planner.outputs.views import CheckView, EvalView
from planner.plan import loads_compiled as loads
from planner.questions.checks import run_checks
from planner.questions.sweep import run_statement

PLAN = """
unit USD
unit kUSD = 1000 USD
price   = 3298035.2049 USD   "a price"
revenue = 6527500 USD        "a year's revenue"
fee     = 0.0042 USD/token   "per token"
tokens  = 1000 token
cost    = fee * tokens -> USD
months  = 12
check price == 3298035.2 USD within 0.004 USD
sweep months in [6, 12] show revenue
"""


def test_money_prints_to_cents_and_never_in_scientific_notation():
    plan = loads(PLAN, "money.plan")
    text = EvalView(plan, [plan.evaluate()], ["price", "revenue", "fee", "cost", "months"]).quantities_table()
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "6,527,500.00" in lines["revenue"] and "e+06" not in text
    assert "3,298,035.20" in lines["price"]
    assert "0.0042" in lines["fee"] and "4.20" in lines["cost"]
    assert lines["months"].split()[1] == "12"  # a plain number as before


def test_a_failed_check_shows_the_digits_that_differ():
    plan = loads(PLAN, "money.plan")
    text = CheckView(plan, run_checks(plan)).table(None)
    assert "expected 3,298,035.200 USD (± 0.004 USD), got 3,298,035.205 USD" in text


def test_a_check_decided_exactly_says_how_far_apart_where_the_floats_are_equal():
    # 1e16 + 1 and 1e16 are one float, but `==` is exact: the message must not read as two equal numbers only
    plan = loads("big = 1e16\ncheck big + 1 == 1e16\n", "big.plan")
    text = CheckView(plan, run_checks(plan)).table(None)
    assert "1 apart in exact arithmetic" in text and "0 passed, 1 failed" in text


def test_a_sweep_column_of_money_is_to_cents():
    plan = loads(PLAN, "money.plan")
    result = run_statement(plan, plan.model.sweeps[0])[0]
    assert "6,527,500.00" in sweep_table(result)
