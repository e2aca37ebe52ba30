"""The Cash flows sheet: a sum over months is a row of cells, a column per month, that the figure adds
up (``SUM`` over the row), and a function of the month that sums (``earned(n)``, read by a payback
month's ``first``) is one row, each cell the running total of its terms' row, ``SUM($C$9:H9)``, not a
row of terms per month. Recalculated by LibreOffice and
Gnumeric after every cached value is poisoned, as written and with inputs typed in.

Figures by hand: ``earned(n) = 60 n + 10 n (n - 1) / 2 = 5 n^2 + 55 n`` USD; it first reaches a price of
1,000 USD at n = 10 (1,050; n = 9 gives 900), 2,000 USD at n = 16 (2,160; n = 15 gives 1,950), and with a
horizon of 9 months never. The wide sum is 0.5 * 17,000 * 17,001 / 2 = 72,254,250.
"""

from __future__ import annotations

import re

import openpyxl
import pytest
from excel_recalc import POISON, in_both_engines, require_gnumeric
from test_excel_workbook import edit, export, require_soffice, verify

from planner.plan import loads

PAYBACK = """
unit USD
price   = 1_000 USD        "price of the machine"
gain    = 60 USD/month     "what it earns in its first month"
growth  = 10 USD/month     "what it earns more every month"
horizon = 24 month         "months the plan covers" where integer, 1 month <= horizon <= 36 month
earned(n) = sum((gain + growth * (m / 1 month - 1)) * 1 month for m in 1 month..n)
payback = first(n for n in 1 month..horizon where earned(n) >= price) -> month "first month the machine has paid for itself"
total   = earned(horizon) -> USD "earned over the horizon"
"""

WIDE = """
n = 17000 where integer, 1 <= n <= 17000
rate = 0.5
total = sum(rate * k for k in 1..n) "more terms than a sheet has columns"
"""

UNITS = """
unit USD
unit kUSD = 1000 USD
start  = 10 kUSD  "cash on day one"
income = 1500 USD "what month 1 brings; month m brings m times as much"
cost   = 100 USD  "paid at month 0"
back   = 60 USD   "earned in months 1 and 2"
flow(m) = income * (m / 1 month)
cash(m) = start + sum(flow(k) for k in 1 month..m)
lowest  = min(cash(m) for m in 1 month..12 month) -> kUSD
ret     = irr(if(k == 0 month, -cost, back) for k in 0 month..2 month) -> %
"""


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    require_soffice()
    require_gnumeric()
    work = tmp_path_factory.mktemp("cash_flows")
    items = {"payback": export(loads(PAYBACK, "payback.plan"), work / "payback.xlsx")}
    items["dearer"] = edit(items["payback"], work / "dearer.xlsx", {"price": 2000})
    items["short"] = edit(items["payback"], work / "short.xlsx", {"horizon": 9})
    items["wide"] = export(loads(WIDE, "wide.plan"), work / "wide.xlsx")
    items["units"] = export(loads(UNITS, "units.plan"), work / "units.xlsx")
    return in_both_engines(items, work, 30)


def _named(wb, item, name):
    sheet, coord = next(wb.defined_names[item.book.names[name]].destinations)
    return wb[sheet][coord.replace("$", "")].value


def test_a_monthly_sum_is_a_row_of_months_and_a_payback_its_running_total(books):
    item = books["payback"]
    wb = openpyxl.load_workbook(item.path)
    flows = wb["Cash flows"]
    assert wb.sheetnames[-1] == "Cash flows" and "Helpers" not in wb.sheetnames
    payback = _named(wb, item, "payback")
    assert payback.startswith("=IF(COUNT('Cash flows'!$D$") and "MIN('Cash flows'!$D$" in payback
    rows = {r[0].value: r for r in flows.iter_rows(min_row=4) if r[0].value}
    terms = next(r for label, r in rows.items() if label.startswith("Model: earned(n) (m = 1 month)"))
    first = next(r for label, r in rows.items() if label.startswith("Model: payback (n = 1 month)"))
    months = [c for c in terms[3:] if c.value is not None]
    assert len(months) == 36  # a column per month the horizon's declared bound allows
    line, earned = terms[0].row, rows["Model: earned(n) at each n"]
    # month 4's cell: its condition over earned's row (the running total of months 1..4), and its month
    assert earned[6].value == f"=SUM('Cash flows'!$D${line}:G${line})"
    assert first[6].value == f"=IF(AND(G$3<=horizon,'Cash flows'!G${earned[0].row}>=price),G$3,\"\")"
    assert [flows.cell(3, c).value for c in (4, 39)] == [1, 36]  # the months as numbers: the terms' index


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
@pytest.mark.parametrize("name, price, months", [("payback", 1000, 10), ("dearer", 2000, 16), ("short", 1000, None)])
def test_the_payback_month_is_live_in_both_engines(books, engine, name, price, months):
    item = books[name]
    wb = item.engines[engine]
    got = _named(wb, item, "payback")
    assert got == (months if months is not None else "#N/A")
    horizon = 9 if name == "short" else 24
    assert _named(wb, item, "total") == pytest.approx(5 * horizon**2 + 55 * horizon, rel=1e-12)
    flows = wb["Cash flows"]
    row = next(r for r in flows.iter_rows(min_row=4) if (r[0].value or "").startswith("Model: earned(n) (m = 1 month)"))
    assert row[2].value == "USD" and [c.value for c in row[3:7]] == [60, 70, 80, 90]  # each month's earnings
    cells = [c.value for r in flows.iter_rows(min_row=4) for c in r[3:]]
    assert POISON not in cells
    assert verify(item, wb) >= 6  # every Inputs and Model cell is planner's value for these inputs


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_more_terms_than_a_sheet_has_columns_go_down_a_column(books, engine):
    item = books["wide"]
    formulas = openpyxl.load_workbook(item.path)
    assert _named(formulas, item, "total").startswith("=SUM(Helpers!$B$3:$B$17002)")
    assert _named(item.engines[engine], item, "total") == 72_254_250
    assert verify(item, item.engines[engine]) >= 3


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_the_summary_says_never_where_the_model_keeps_na(books, engine):
    """A `first` that finds nothing reads "never" on the Summary (planner's word); the Model cell keeps #N/A,
    which the formulas over it need."""
    for name, want in (("payback", 10), ("short", "never")):
        item = books[name]
        wb = item.engines[engine]
        row = next(r for r in wb["Summary"].iter_rows() if r[0].value == "First month the machine has paid for itself")
        assert row[2].value == want, name
    assert _named(books["short"].engines[engine], books["short"], "payback") == "#N/A"
    formulas = openpyxl.load_workbook(books["payback"].path)
    row = next(r for r in formulas["Summary"].iter_rows() if r[0].value == "First month the machine has paid for itself")
    assert row[2].value.startswith('=IF(ISNA(payback),"never",payback)')


def _rows(wb) -> dict:
    return {r[0].value: r for r in wb["Cash flows"].iter_rows(min_row=4) if r[0].value}


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_every_row_of_the_cash_flows_sheet_says_its_unit_and_holds_figures_in_it(books, engine):
    """A month's flow in USD beside the cash in kUSD: each row's Unit column (C) names the unit its cells
    hold, as the Model sheet's does. By hand: month m's flow is 1,500 m USD; cash(m) is 10 kUSD plus
    1.5 m (m + 1) / 2 kUSD (11.5, 14.5, 19 kUSD)."""
    item = books["units"]
    wb = item.engines[engine]
    assert [wb["Cash flows"].cell(3, c).value for c in (1, 2, 3)] == ["Used by", "Term", "Unit"]
    rows = _rows(wb)
    terms = next(r for label, r in rows.items() if label.startswith("Model: cash(m) (k = 1 month)"))
    cash = rows["Model: cash(m) at each m"]
    assert terms[2].value == "USD" and [c.value for c in terms[3:6]] == [1500, 3000, 4500]
    assert cash[2].value == "kUSD" and [c.value for c in cash[3:6]] == pytest.approx([11.5, 14.5, 19], rel=1e-12)
    assert all(r[2].value in ("USD", "kUSD", "month") for r in rows.values())


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_the_flows_of_irr_from_month_0_sit_under_their_months(books, engine):
    """``irr(... for k in 0 month..2 month)``: the header numbers the columns 1, 2, 3 (the terms' index);
    the row above the flows says which month each column holds, so month 0's flow (-cost) is under 0."""
    item = books["units"]
    rows = _rows(item.engines[engine])
    months = rows["Model: ret (irr: its values): k (month)"]
    flows = rows["Model: ret (irr: its values)"]
    assert months[2].value == "month" and [c.value for c in months[3:6]] == [0, 1, 2]
    assert flows[0].row == months[0].row + 1 and flows[2].value == "USD"
    assert [c.value for c in flows[3:6]] == [-100, 60, 60]


def test_a_row_of_money_is_shown_to_cents_as_the_model_sheet_shows_money(books):
    """The Unit column's unit sets the row's number format by the one number rule: USD and kUSD rows to
    cents (1,500.00 USD, 11.50 kUSD), as the Model sheet shows ``lowest`` in kUSD, not to six significant
    digits as a plain number (fleet_60_months' cash row read 593.135 kUSD, its flow row -6,865.486 USD)."""
    wb = openpyxl.load_workbook(books["units"].path)
    rows = _rows(wb)
    money = [r for r in rows.values() if r[2].value in ("USD", "kUSD")]
    assert len(money) >= 3
    for r in money:
        formats = {c.number_format for c in r[3:] if c.value is not None}
        assert formats and all(re.fullmatch(r"#,##0\.00(;.*)?", f) for f in formats), (r[0].value, formats)
    model = next(r for r in wb["Model"].iter_rows(min_row=4) if r[3].value == "lowest")
    assert re.fullmatch(r"#,##0\.00(;.*)?", model[1].number_format)
