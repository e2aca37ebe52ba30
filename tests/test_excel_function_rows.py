"""A user function of the month is one row of the Cash flows sheet, its value in each month (a column per
month, up to the largest month the plan's ranges reach), written once; a call reads its cell (the column
being printed, a constant's column, ``INDEX(row,1,m)``), a sum over ``k in 1 month..m`` of it is a SUM over
the row, and a windowed sum (``if(k > m - term, ..., 0)``) a SUMIFS over its row of terms. Recalculated by
LibreOffice and Gnumeric after every cached value is poisoned, as written and with inputs typed in.

The plan is ``benchmarks/plans/fleet_60_months.plan`` (vans bought as demand needs them, each on a 48-month
loan). Its figures by hand, month by month as a bookkeeper would (:func:`fleet`): demand 9,000 deliveries
growing 6% a month, a van per 1,500 deliveries (rounded up), each van bought paid off in ``term`` equal
monthly payments of 45,000 USD * r / (1 - (1 + r)^-term), r = 7% / 12.
"""

from __future__ import annotations

import math

import openpyxl
import pytest
from excel_recalc import in_both_engines, require_gnumeric
from test_excel_workbook import ROOT, edit, export, require_soffice

from planner.outputs.excel.generator import FLOW_FIRST
from planner.plan import load_compiled as load

PLAN = ROOT / "benchmarks" / "plans" / "fleet_60_months.plan"
HORIZON = 84  # months' declared upper bound: the rows' width
# Cash flows rows: the 4 functions of the month that sum over months (loans, and costs, flow and cash that
# use it) and the loan payments loans adds up, in the base case and in the check's context; the terms of
# lowest cash and of the payback month (its months, from 2, in a row above it), in both; each solve trial's cash
# and lowest cash (3 trials): 22.
FLOW_ROWS = 22


def fleet(months: int = 60, term: int = 48, start: float = 600.0):
    """Cash (kUSD) at the end of each month, the loan payments of the last month (kUSD) and the vans then."""
    r = 0.07 / 12
    payment = 45.0 * r / (1 - (1 + r) ** -term)  # kUSD a van a month
    vans = [math.ceil(9000 * 1.06 ** (m - 1) / 1500) for m in range(1, months + 1)]
    bought = [vans[0]] + [vans[m] - vans[m - 1] for m in range(1, months)]
    cash, balance, loans = [], start, 0.0
    for m in range(1, months + 1):
        loans = sum(bought[k - 1] * payment for k in range(1, m + 1) if k > m - term)
        flow = 9000 * 1.06 ** (m - 1) * 6 / 1000 - loans - vans[m - 1] * (0.9 + 0.4 + 3.6) - 25
        balance += flow
        cash.append(balance)
    return cash, loans, vans[-1]


def payback(cash: list, start: float = 600.0):
    return next((m for m in range(2, len(cash) + 1) if cash[m - 1] >= start and cash[m - 2] < start), None)


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    require_soffice()
    require_gnumeric()
    work = tmp_path_factory.mktemp("function_rows")
    items = {"as_written": export(load(PLAN), work / "fleet.xlsx")}
    items["edited"] = edit(items["as_written"], work / "fleet_edited.xlsx", {"months": 36, "term": 24})
    return in_both_engines(items, work, 1000)


def _named(wb, item, name):
    sheet, coord = next(wb.defined_names[item.book.names[name]].destinations)
    return wb[sheet][coord.replace("$", "")].value


def _row(ws, label: str):
    return next(r for r in ws.iter_rows(min_row=4) if r[0].value == label)


def test_the_goldens_are_the_plans_figures():
    cash, loans, vans = fleet()
    assert vans == 187  # the plan's own check: ceil(9000 * 1.06^59 / 1500)
    figures = load(PLAN).evaluate().display
    assert figures("lowest_cash") == pytest.approx(min(cash), rel=1e-9)
    assert figures("final_cash") == pytest.approx(cash[-1], rel=1e-9)
    assert figures("loans_end") == pytest.approx(loans, rel=1e-9)
    assert figures("payback_month") == payback(cash)


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
@pytest.mark.parametrize("case, months, term", [("as_written", 60, 48), ("edited", 36, 24)])
def test_the_workbook_recalculates_to_the_figures_by_hand(books, engine, case, months, term):
    item = books[case]
    wb = item.engines[engine]
    cash, loans, vans = fleet(months, term)
    assert _named(wb, item, "lowest_cash") == pytest.approx(min(cash), rel=1e-9)
    assert _named(wb, item, "final_cash") == pytest.approx(cash[-1], rel=1e-9)
    assert _named(wb, item, "loans_end") == pytest.approx(loans, rel=1e-9)
    assert _named(wb, item, "fleet_end") == vans
    assert _named(wb, item, "payback_month") == payback(cash)
    row = _row(wb["Cash flows"], "Model: cash(m) at each m")
    assert [c.value for c in row[FLOW_FIRST - 1:FLOW_FIRST - 1 + months]] == pytest.approx(cash, rel=1e-9)


def test_each_function_of_the_month_is_one_row_its_calls_read(books):
    flows = openpyxl.load_workbook(books["as_written"].path)["Cash flows"]
    rows = [r for r in flows.iter_rows(min_row=4) if r[0].value]
    assert len(rows) == FLOW_ROWS
    for r in rows:  # a function's row: a cell per month up to the horizon (the payback's terms: from month 2)
        cells = len([c for c in r[FLOW_FIRST - 1:] if c.value is not None])
        assert cells == (HORIZON - 1 if "payback_month" in r[0].value else HORIZON), r[0].value
    assert [c.value for c in flows[3][FLOW_FIRST - 1:]] == list(range(1, HORIZON + 1))
    cash = _row(flows, "Model: cash(m) at each m")
    flow = _row(flows, "Model: flow(m) at each m")[0].row
    assert cash[8].value == f"=start_cash+SUM('Cash flows'!$D${flow}:I${flow})/1000"  # the running total of flow's row
    loans = _row(flows, "Model: loans(m) at each m")[8].value
    payments = int(loans.split("!$D$")[1].split(":")[0])
    assert flows.cell(payments, 2).value == "bought(k) * payment"  # the Term column: the row of loan payments
    assert loans == (f"=SUMIFS('Cash flows'!$D${payments}:$CI${payments},'Cash flows'!$D$3:$CI$3,\">\"&(I$3-term),"
                     "'Cash flows'!$D$3:$CI$3,\"<=\"&I$3)")  # the window: k > m - term and k <= m
    model = openpyxl.load_workbook(books["as_written"].path)["Model"]
    formulas = {r[3].value: r[1].value for r in model.iter_rows(min_row=4) if r[3].value}
    assert formulas["final_cash"].startswith("=INDEX('Cash flows'!$D$") and formulas["final_cash"].endswith(",1,months)")


def test_the_workbook_writes_a_few_thousand_formulas(books):
    # each Cash flows row is one formula a month up to the horizon; every other sheet holds under 200
    wb = openpyxl.load_workbook(books["as_written"].path)
    counts = {ws.title: sum(1 for row in ws.iter_rows() for c in row if isinstance(c.value, str)
                            and c.value.startswith("=")) for ws in wb.worksheets}
    assert counts["Cash flows"] <= FLOW_ROWS * HORIZON  # 1,680 (a cell per term before: 93,238)
    assert sum(counts.values()) - counts["Cash flows"] < 200


def test_a_function_row_says_whose_figures_read_it(tmp_path):
    """The model's rows, the Solve work's (cash over the bisection's trial start_cash) and the check's context's
    are each labelled with the sheet or case that reads them, not all alike as `cash(m) at each m`."""
    item = export(load(PLAN), tmp_path / "fleet.xlsx")
    flows = openpyxl.load_workbook(item.path)["Cash flows"]
    cash = {r[0].value: r for r in flows.iter_rows(min_row=4) if (r[0].value or "").endswith("cash(m) at each m")}
    for label, row in cash.items():
        first = row[FLOW_FIRST - 1].value
        reads = "'Solve work'!" if label.startswith("Solve work: ") else \
            "'Check contexts'!" if label.startswith("base with start_cash = cash_needed: ") else "=start_cash+"
        assert label.startswith(("Model: ", "Solve work: ", "base with start_cash = cash_needed: ")), label
        assert first.startswith(reads if reads.startswith("=") else "=" + reads), (label, first)
    assert "Model: cash(m) at each m" in cash and len(cash) == 3  # (the Solve work's three share one label)

