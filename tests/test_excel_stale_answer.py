"""An answer the Solve sheet cannot recompute (a bisection over a long sum would write thousands of
cells) is planner's figure, written at export. After an edit its check no longer holds; the status says
the answer is out of date ("re-run planner"), not that it FAILS. LibreOffice recalculates each book, its
cached values poisoned first, so the statuses read back were computed."""

from __future__ import annotations

import openpyxl
import pytest
from excel_recalc import POISON, poison, recalculate, require_soffice

from planner.outputs.excel.book import STALE
from planner.outputs.excel.writer import Book, to_bytes
from planner.plan import loads_compiled as loads

PLAN = """title "Rent or buy a machine"
unit USD
horizon  = 48 month    "how long the machine is used" where 1 month <= horizon <= 120 month
price    = 10000 USD   "purchase price" [assumption] where price > 0 USD
rent     = 300 USD/month "monthly rent" [assumption]
rate     = 1%          "discount rate per month" [assumption] where 0% < rate < 50%
npv_rent = sum(rent * 1 month * (1 + rate)^(-(m / 1 month)) for m in 1 month..horizon) -> USD
    "present cost of renting" [headline]
solve rate where npv_rent = price as breakeven_rate
"""


@pytest.fixture(scope="module")
def recalculated(tmp_path_factory):
    require_soffice()
    work = tmp_path_factory.mktemp("stale")
    book = Book(loads(PLAN, str(work / "machine.plan")))
    exported = work / "exported.xlsx"
    exported.write_bytes(to_bytes(book.build()))
    wb = openpyxl.load_workbook(exported)
    sheet, coord = next(wb.defined_names[book.names["price"]].destinations)  # the input cell named price
    coord = coord.replace("$", "")
    wb[sheet.strip("'")][coord].value = 12000  # the analyst's edit: the machine costs more
    edited = work / "edited.xlsx"
    wb.save(edited)
    unedited = work / "unedited.xlsx"
    unedited.write_bytes(exported.read_bytes())
    for path in (edited, unedited):
        assert poison(path) > 20
    out = recalculate([edited, unedited], work)
    return {p.stem: openpyxl.load_workbook(out[p], data_only=True) for p in (edited, unedited)}, \
        openpyxl.load_workbook(exported)


def _rows(wb, sheet: str):
    return [r for r in wb[sheet].iter_rows() if str(r[0].value or "").lower().startswith(("solve rate", "breakeven"))]


def test_the_answer_is_planners_figure_not_a_formula(recalculated):
    _, formulas = recalculated
    (row,) = _rows(formulas, "Solve")
    # 48 months at 1%: the rate where renting's present cost is 10,000 USD, from the annuity formula
    # 300 * (1 - 1.01^-48) / 0.01 = 11,392 > 10,000, so the break-even rate is above 1% (about 1.6% a month)
    assert not str(row[2].value).startswith("=") and 0.015 < row[2].value < 0.017


@pytest.mark.parametrize("sheet", ["Solve", "Summary"])
def test_an_edit_makes_a_written_answer_say_re_run_not_fails(recalculated, sheet):
    books, _ = recalculated
    (before,) = _rows(books["unedited"], sheet)
    (after,) = _rows(books["edited"], sheet)
    assert before[5].value == "holds" and before[4].value == 1  # TRUE (LibreOffice writes it as 1) as exported, LibreOffice agrees
    assert after[4].value == 0 and after[5].value == STALE  # after the edit: out of date, said so
    assert after[5].value != POISON and "FAILS" not in str(after[5].value)
