"""The Checks sheet shows a check's numbers in the unit of the figure it checks, as the Summary shows that
figure (`budget` in kUSD), not in the unit written on the literal (`2,500 USD`): Unit, Actual, Expected and
the tolerance all in kUSD. LibreOffice recalculates the book, its cached values poisoned first."""

from __future__ import annotations

import openpyxl
import pytest
from excel_recalc import poison, recalculate, require_soffice

from planner.outputs.excel.writer import Book, to_bytes
from planner.plan import loads_compiled as loads

PLAN = """unit USD
unit kUSD = 1000 USD

budget = 2.5 kUSD

check budget == 2500 USD
check budget ~= 2500.4 USD
check budget > 100 USD
"""


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    require_soffice()
    work = tmp_path_factory.mktemp("check_units")
    exported = work / "budget.xlsx"
    exported.write_bytes(to_bytes(Book(loads(PLAN, str(work / "budget.plan"))).build()))
    formulas = openpyxl.load_workbook(exported)
    assert poison(exported) > 5
    out = recalculate([exported], work)
    return formulas, openpyxl.load_workbook(out[exported], data_only=True)


def _rows(wb):
    return {r[0].value: r for r in wb["Checks"].iter_rows(min_row=4) if str(r[0].value or "").startswith("check")}


def test_the_unit_is_the_figures_and_expected_is_in_it(books):
    formulas, values = books
    rows = _rows(values)
    equal, approx, above = (rows[f"check budget {t}"] for t in ("== 2500 USD", "~= 2500.4 USD", "> 100 USD"))
    assert [r[4].value for r in (equal, approx, above)] == ["kUSD"] * 3  # was USD, the literal's
    assert equal[2].value == pytest.approx(2.5, rel=1e-12) and equal[3].value == pytest.approx(2.5, rel=1e-12)
    assert approx[3].value == pytest.approx(2.5004, rel=1e-12)  # 2,500.4 USD in kUSD
    # half a unit of the literal's last digit, 0.05 USD, said in kUSD
    assert approx[5].value == "± 0.00005 kUSD"
    assert [r[6].value for r in (equal, approx, above)] == [True, False, True]  # 2,500 is 0.4 USD off 2,500.4


def test_the_cached_sides_are_in_the_figures_unit(books):
    formulas, _ = books
    wb = formulas
    (row,) = [r for r in wb["Checks"].iter_rows(min_row=4) if r[0].value == "check budget == 2500 USD"]
    assert row[3].value == "=2.5"  # Expected written in kUSD
