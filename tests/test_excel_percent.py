"""Percentages in the workbook mean what Excel means by them (issue 25, part 1).

An analyst who types ``65%`` into a cell stores 0.65 with a percent format. The workbook holds a plan's
``60%`` as the fraction 0.6 in Excel's own percent format, so that typing ``65%`` (0.65) gives the plan's
figures for 65 %, in LibreOffice and in Gnumeric, and ``planner import`` reads 65 % back.

The recalculation is proven: every formula cell's cached value is overwritten with a poison number before
the engines run, and no cell may still hold it afterwards.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import openpyxl
import pytest
from excel_recalc import POISON, gnumeric_recalculate, poison, recalculate, require_gnumeric, require_soffice

from planner.outputs.excel.reader import read_inputs
from planner.outputs.excel.writer import Book, to_bytes
from planner.plan import loads_compiled as loads

ROOT = Path(__file__).resolve().parents[1]
# the frozen buy-vs-rent plan of tests/plans, with the utilisation written as 60 %
PLAN = (ROOT / "tests" / "plans" / "buy_vs_rent.plan").read_text(encoding="utf-8").replace(
    "utilization   = 65%", "utilization   = 60%")
assert "utilization   = 60%" in PLAN

# Hand-computed figures at 65 % (the plan's own check comments): 8 GPUs * 2.49 USD/h * 65 % * 730 h/month.
RENT_PER_MONTH_65 = 8 * 2.49 * 0.65 * 730 / 1000  # kUSD/month: 9.45204
PAYBACK_65 = 250 / (RENT_PER_MONTH_65 - 1.5)  # months: 31.438


def _value(wb, name: str, book: Book):
    sheet, coord = next(wb.defined_names[book.names[name]].destinations)
    return wb[sheet][coord.replace("$", "")].value


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    require_soffice()
    require_gnumeric()
    work = tmp_path_factory.mktemp("percent")
    plan = loads(PLAN, str(work / "buy_vs_rent.plan"))
    book = Book(plan)
    exported = work / "exported.xlsx"
    exported.write_bytes(to_bytes(book.build()))
    wb = openpyxl.load_workbook(exported)
    sheet, coord = next(wb.defined_names[book.names["utilization"]].destinations)
    cell = wb[sheet][coord.replace("$", "")]
    before = (cell.value, cell.number_format)
    cell.value = 0.65  # what Excel stores when the analyst types 65%
    edited = work / "typed_65.xlsx"
    wb.save(edited)
    poisoned = poison(edited)
    libre = recalculate([edited], work)[edited]
    gnumeric = gnumeric_recalculate([edited], work)[edited]
    return {"plan": plan, "book": book, "before": before, "poisoned": poisoned, "edited": edited,
            "engines": {"libreoffice": openpyxl.load_workbook(libre, data_only=True),
                        "gnumeric": openpyxl.load_workbook(gnumeric, data_only=True)},
            "libre_path": libre}


def test_the_percent_input_is_the_fraction_in_a_percent_format(typed):
    value, number_format = typed["before"]
    assert value == 0.6 and number_format.endswith("%") and '"%"' not in number_format


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_typing_65_percent_gives_planners_figures_for_65_percent(typed, engine):
    plan, book, wb = typed["plan"], typed["book"], typed["engines"][engine]
    assert typed["poisoned"] > 50
    leftover = [f"{ws.title}!{c.coordinate}" for ws in wb.worksheets for row in ws.iter_rows() for c in row
                if c.value == POISON]
    assert leftover == [], f"{engine} did not recalculate: {leftover[:5]}"
    assert _value(wb, "rent_per_month", book) == pytest.approx(RENT_PER_MONTH_65, rel=1e-12)
    assert _value(wb, "payback", book) == pytest.approx(PAYBACK_65, rel=1e-12)
    ev = plan.evaluate(None, {"utilization": Fraction(65, 100)})
    for name, q in plan.model.quantities.items():
        got, want = _value(wb, name, book), ev.display(name)
        if q.is_bool:
            assert bool(got) is bool(want), name
            continue
        if q.unit_text.startswith("%"):
            want = want / 100  # the cell holds the fraction
        assert got == pytest.approx(want, rel=1e-9, abs=1e-300), name
    # a formula an analyst adds on top of the cell uses it as the fraction: 65% of 730 h is 474.5 h
    assert _value(wb, "utilization", book) * 730 == pytest.approx(474.5)


def test_the_scenario_columns_follow_the_typed_percentage_where_no_scenario_sets_it(typed):
    plan, book, wb = typed["plan"], typed["book"], typed["engines"]["libreoffice"]
    ws = wb["Scenarios"]
    header = {c.value: c.column_letter for c in ws[4] if isinstance(c.value, str)}  # the scenarios' names
    row = book.rows["rent_per_month"]
    assert ws[f"{header['spot']}{row}"].value == pytest.approx(8 * 1.65 * 0.65 * 730 / 1000, rel=1e-12)
    assert ws[f"{header['low_use']}{row}"].value == pytest.approx(8 * 2.49 * 0.40 * 730 / 1000, rel=1e-12)


def test_import_reads_65_percent_back(typed):
    imported = read_inputs(str(typed["libre_path"]), typed["plan"])
    assert imported.overrides == {"utilization": Fraction(65, 100)}
    change, = imported.changes
    assert (change.name, change.plan_value, change.book_value, change.unit) == ("utilization", 60, 65, "%")


def test_import_reads_a_percentage_typed_as_text(typed, tmp_path):
    wb = openpyxl.load_workbook(typed["edited"])
    sheet, coord = next(wb.defined_names[typed["book"].names["utilization"]].destinations)
    wb[sheet][coord.replace("$", "")].value = "72.5%"
    path = tmp_path / "text.xlsx"
    wb.save(path)
    imported = read_inputs(str(path), typed["plan"])
    assert imported.overrides["utilization"] == Fraction(725, 1000)


def test_the_validation_is_in_the_cells_own_terms(typed):
    wb = openpyxl.load_workbook(typed["edited"])
    sheet, coord = next(wb.defined_names[typed["book"].names["utilization"]].destinations)
    rules = [dv for dv in wb[sheet].data_validations.dataValidation if coord.replace("$", "") in str(dv.sqref)]
    rule, = rules
    # 0% < utilization <= 100%: the rule bounds the fraction the cell holds (0.65 passes, 65 does not), and
    # the message says it in the percentages the analyst types
    at = coord.replace("$", "")
    assert rule.type == "custom" and rule.formula1 == f"AND(0<{at},{at}<=1)"  # as the plan writes it
    assert rule.error == "utilization: 0% < utilization <= 100%"
