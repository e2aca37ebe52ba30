"""Aggregates and answers used in formulas, live in the exported workbook: recalculated by
LibreOffice, every cell equals planner's own value, as written and after inputs are edited.

The comparison is :func:`test_excel_workbook.verify` (every Inputs, Model, Scenarios, sweep,
Solve and Checks cell); the plans here exercise sums over ranges whose end is an input (one
helper cell per value the range can hold, live through ``IF(k <= end, term, 0)``).
"""

from __future__ import annotations

import openpyxl
import pytest
from excel_recalc import gnumeric_recalculate, require_gnumeric
from test_excel_workbook import edit, export, recalculate, require_soffice, verify

from planner.plan import loads_compiled as loads

AGGREGATES = """
unit USD
price    = 30_000 USD         "purchase price of the server"
rent     = 1_100 USD/month    "renting the same capacity"
running  = 250 USD/month      "power, space and support when owned"
rate     = 8%/year            "cost of capital"             where rate >= 0%/year
lifetime = 36 month           "how long the server is used" where integer, 1 month <= lifetime <= 120 month
saving   = (rent - running) * 1 month -> USD
discount = 1 + rate * 1 month
npv = sum(saving / discount^(m / 1 month) for m in 1 month..lifetime) - price -> USD

n = 5 where integer, 1 <= n <= 8
worst = min(m^2 - 6*m for m in 1..n)
best = max(m^2 - 6*m for m in 1..n)
over = count(m^2 > 10 for m in 1..n)
nested = sum(sum(i * j for j in 1..i) for i in 1..n)
growth = product(1 + 1 / m for m in 1..n)
odd = sum(m for m in 1..n step 2)
lora = 32 * sum(16 * w for w in [8192, 5120, 5120, 8192])
widest = max([rent, running, 2_000 USD/month]) -> USD/month

scenario long { lifetime = 60 month }
scenario small { n = 2 }
solve min lifetime where npv >= 0 as payback
sweep n in 1..8 show worst, over, nested
check payback == 41 month
check nested == 140 in base
cap = 30 where cap >= sum(m for m in 1..4)       # in a constraint (no validation rule: planner checks it)
check sum(m for m in 1..n) == 15                 # in a check
check count(m > 2 for m in 1..n) == 3
"""

# Answers used in formulas: live references to their Solve cells, per scenario column; a question
# that uses another's answer; a sweep that changes an answer (those columns hold planner's values).
ANSWERS = """
budget = 1e21            "training compute, FLOP"
tokens_per_param = 20
price = 2                "USD per 1e18 FLOP"
n = 1e9                  where n > 0
flops = 6 * n * (tokens_per_param * n)
solve n where flops = budget as optimal_N
D_opt = tokens_per_param * optimal_N
cost_per_token = price * budget / 1e18 / D_opt
scenario big { budget = 1e23 }
b = 32 where integer, 1 <= b <= 4096
solve min b where b * 0.2 >= 10 + b * 0.05 as crossover
solve min b where b >= crossover * 2 as double
maximize -(b - crossover)^2 over b in 1..200 as near
gap = near.value + near - crossover
sweep price in [1, 2, 3] show cost_per_token
check double == 134
check D_opt ~= 5.7735e10
"""

# A windowed sum inside a range min (a loan paid for `term` months after each purchase): SymPy folded
# the `if` that uses the outer month out of the inner sum, leaving `k` unbound ("no cell or name for k")
WINDOWED = """
unit USD
n = 12 month where integer, 1 month <= n <= 24 month
term = 4 month where integer, 1 month <= term <= 12 month
bought(m) = 2 * (m / 1 month)
loans(m) = sum(if(k > m - term, bought(k) * 10 USD, 0 USD) for k in 1 month..m)
total = sum(loans(m) for m in 1 month..n) -> USD
lowest = min(loans(m) + 5 USD * (m / 1 month - 6)^2 for m in 1 month..n) -> USD
twice = sum(2 * loans(m) for m in 1 month..n) -> USD
"""


def _windowed(n=12, term=4):
    loans = [sum(20 * k for k in range(1, m + 1) if k > m - term) for m in range(1, n + 1)]
    return sum(loans), min(v + 5 * (m - 6) ** 2 for m, v in enumerate(loans, 1)), 2 * sum(loans)


def test_a_windowed_sum_inside_a_range_keeps_its_variable_bound():
    plan = loads(WINDOWED, "windowed.plan")
    ev = plan.evaluate()
    total, lowest, twice = _windowed()
    assert (ev.values["total"], ev.values["lowest"], ev.values["twice"]) == (total, lowest, twice)
    for name in ("total", "lowest", "twice"):  # the symbolic form: every index inside the sum binding it
        expr = plan.exprs[name]
        assert not any(getattr(s, "terms", None) for s in expr.free_symbols), (name, expr)


STALE = ANSWERS + "sweep budget in [1e21, 1e22] show D_opt, cost_per_token\n"


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    require_soffice()
    work = tmp_path_factory.mktemp("aggregates")
    items = {"aggregates": export(loads(AGGREGATES, "aggregates.plan"), work / "aggregates.xlsx")}
    # the range ends edited in the workbook: more terms (up to the declared maximum) and fewer
    items["edited"] = edit(items["aggregates"], work / "aggregates_edited.xlsx", {"lifetime": 120, "n": 8})
    items["fewer"] = edit(items["aggregates"], work / "aggregates_fewer.xlsx", {"lifetime": 2, "n": 1, "rate": 0.02})  # 2%/year typed: 0.02
    items["answers"] = export(loads(ANSWERS, "answers.plan"), work / "answers.xlsx")
    items["answers_edited"] = edit(items["answers"], work / "answers_edited.xlsx", {"budget": 1e22, "price": 3})
    items["stale"] = export(loads(STALE, "stale.plan"), work / "stale.xlsx")
    items["windowed"] = export(loads(WINDOWED, "windowed.plan"), work / "windowed.xlsx")
    require_gnumeric()
    out = recalculate([i.path for i in items.values()], work)
    gnumeric = gnumeric_recalculate([i.path for i in items.values()], work)
    for item in items.values():
        item.values = openpyxl.load_workbook(out[item.path], data_only=True)
        item.engines = {"libreoffice": item.values,
                        "gnumeric": openpyxl.load_workbook(gnumeric[item.path], data_only=True)}
        item.cached = openpyxl.load_workbook(item.path, data_only=True)
    return items


EXPORTED = ["aggregates", "answers", "stale", "windowed"]  # as planner wrote them: their cached values are planner's
EDITED = ["edited", "fewer", "answers_edited"]  # inputs typed in: only a recalculation shows the new values


@pytest.mark.parametrize("name, engine", [(n, e) for n in EXPORTED + EDITED for e in ("libreoffice", "gnumeric")]
                         + [(n, "cached") for n in EXPORTED])
def test_aggregates_recalculate_to_planners_values(books, name, engine):
    """Both engines agree with planner on every live cell; so do the cached values of an exported file."""
    item = books[name]
    wb = item.cached if engine == "cached" else item.engines[engine]
    assert verify(item, wb) > (4 if name == "windowed" else 20)  # every cell compared; the windowed plan has few


def test_an_answer_in_a_formula_is_its_solve_cell(books):
    item = books["answers"]
    wb = openpyxl.load_workbook(item.path)
    sheet, coord = next(wb.defined_names[item.book.names["D_opt"]].destinations)
    assert wb[sheet][coord.replace("$", "")].value == "=tokens_per_param*Solve!$C$4"  # as written
    rows = {c.value: c.row for c in wb["Scenarios"]["B"]}
    assert wb["Solve"]["B5"].value == "big"  # the question answered in the scenario's own column
    assert wb["Scenarios"][f"D{rows['D_opt']}"].value.endswith("*Solve!$C$5")
    # the sweep over budget moves optimal_N: its rows are planner's values, said so
    stale = openpyxl.load_workbook(books["stale"].path)
    sweep = next(ws for ws in stale.worksheets if ws.title.startswith("Sweep 2"))
    notes = [c.value for row in sweep.iter_rows(max_row=8) for c in row if isinstance(c.value, str)]
    assert any(n.startswith("not live: planner's values for D_opt, cost_per_token") for n in notes)


def test_a_sum_over_a_range_is_live_over_a_row_of_cash_flows(books):
    item = books["aggregates"]
    wb = openpyxl.load_workbook(item.path)
    sheet, coord = next(wb.defined_names[item.book.names["npv"]].destinations)
    text = wb[sheet][coord.replace("$", "")].value
    assert "SUM('Cash flows'!$D$" in text and "price" in text  # the sum over its row, not every term written out
    flows = wb["Cash flows"]
    row = next(r for r in flows.iter_rows(min_row=4) if r[0].value.startswith("Model: npv"))
    terms = [c.value for c in row[3:] if c.value is not None]
    assert len(terms) == 120  # a column per month the declared bound allows
    # every term is one formula over its column's number in row 3 (the month), which a reader can follow
    assert terms[0].startswith("=IF(D$3<=") and terms[-1].startswith("=IF(DS$3<=")
    assert {t.replace(f"{col}$3", "D$3") for t, col in zip(terms, [openpyxl.utils.get_column_letter(c)
                                                                    for c in range(4, 124)])} == {terms[0]}
    assert [flows.cell(3, 4).value, flows.cell(3, 123).value] == [1, 120]
    edited = books["edited"].values
    sheet, coord = next(edited.defined_names[item.book.names["npv"]].destinations)
    assert edited[sheet][coord.replace("$", "")].value == pytest.approx(
        850 * (1 - (1 + 0.08 / 12) ** -120) / (0.08 / 12) - 30_000, rel=1e-9)
