"""The scenario switch (issue 25, part 2): the Summary's selector picks a scenario, and the Selected
scenario columns of the Model and Inputs sheets compute it live, in LibreOffice and in Gnumeric.

Every formula's cached value is poisoned before the engines run, so a figure read back was computed.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from excel_recalc import POISON, gnumeric_recalculate, poison, recalculate, require_gnumeric, require_soffice

from planner.outputs.excel.book import SELECTED
from planner.outputs.excel.writer import Book, to_bytes
from planner.outputs.numbers import is_percent
from planner.plan import loads_compiled as loads

ROOT = Path(__file__).resolve().parents[1]
PLAN = (ROOT / "tests" / "plans" / "buy_vs_rent.plan").read_text(encoding="utf-8")
CHOICES = ["base", "low_use", "busy", "spot"]


@pytest.fixture(scope="module")
def switched(tmp_path_factory):
    require_soffice()
    require_gnumeric()
    work = tmp_path_factory.mktemp("switch")
    plan = loads(PLAN, str(work / "buy_vs_rent.plan"))
    book = Book(plan)
    exported = work / "exported.xlsx"
    exported.write_bytes(to_bytes(book.build()))
    paths = {}
    for choice in CHOICES:
        wb = openpyxl.load_workbook(exported)
        sheet, coord = next(wb.defined_names["SelectedScenario"].destinations)
        wb[sheet][coord.replace("$", "")].value = choice  # what picking it from the list stores
        paths[choice] = work / f"selected_{choice}.xlsx"
        wb.save(paths[choice])
        assert poison(paths[choice]) > 50
    libre = recalculate(list(paths.values()), work)
    gnumeric = gnumeric_recalculate(list(paths.values()), work)
    return {"plan": plan, "book": book, "exported": exported,
            "engines": {"libreoffice": {c: openpyxl.load_workbook(libre[p], data_only=True) for c, p in paths.items()},
                        "gnumeric": {c: openpyxl.load_workbook(gnumeric[p], data_only=True) for c, p in paths.items()}}}


def _want(q, value):
    if q.is_bool:
        return bool(value)
    return value / 100 if is_percent(q.unit_text) else value


def test_the_selector_lists_base_and_every_scenario(switched):
    wb = openpyxl.load_workbook(switched["exported"])
    sheet, coord = next(wb.defined_names["SelectedScenario"].destinations)
    cell = wb[sheet][coord.replace("$", "")]
    assert sheet == "Summary" and cell.value == "base"
    rule, = [dv for dv in wb[sheet].data_validations.dataValidation if coord.replace("$", "") in str(dv.sqref)]
    assert rule.type == "list"
    choices_sheet, area = next(wb.defined_names["ScenarioChoices"].destinations)
    assert [c.value for row in wb[choices_sheet][area.replace("$", "")] for c in row] == CHOICES


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
@pytest.mark.parametrize("choice", CHOICES)
def test_the_model_follows_the_selected_scenario(switched, engine, choice):
    plan, book = switched["plan"], switched["book"]
    wb = switched["engines"][engine][choice]
    ev = plan.evaluate(None if choice == "base" else choice)
    compared = 0
    for ws_name, rows in (("Model", book.model_rows), ("Inputs", book.input_rows)):
        ws = wb[ws_name]
        for name, row in rows.items():
            q = plan.model.quantities[name]
            got = ws.cell(row, SELECTED).value
            assert got != POISON, f"{engine} did not recalculate {ws_name}!G{row}"
            want = _want(q, ev.display(name))
            if q.is_bool:
                assert bool(got) is want, (name, choice)
            else:
                assert got == pytest.approx(want, rel=1e-9, abs=1e-300), (ws_name, name, choice)
            compared += 1
    assert compared == len(plan.model.quantities)
    # the Summary's headline table follows the selection in its last column
    summary = wb["Summary"]
    header = next(r for r in summary.iter_rows() if r[0].value == "Figure")
    col = next(c.column for c in header if c.value == "Selected scenario")
    doc = plan.model.quantities["npv"].doc
    npv_row = next(r[0].row for r in summary.iter_rows() if r[0].value == doc[:1].upper() + doc[1:])
    assert summary.cell(npv_row, col).value == pytest.approx(ev.display("npv"), rel=1e-9)
    # the named cells (column B) stay the plan as written, whatever is selected
    base = plan.evaluate(None)
    row = book.model_rows["rent_per_month"]
    assert wb["Model"].cell(row, 2).value == pytest.approx(base.display("rent_per_month"), rel=1e-12)


def test_the_inputs_sheet_says_which_scenario_cell_to_edit(switched):
    wb = openpyxl.load_workbook(switched["exported"])
    row = switched["book"].input_rows["utilization"]
    text = wb["Inputs"].cell(row, SELECTED + 1).value
    rows = switched["book"].rows
    at = rows["utilization"]
    assert text == f"edit Scenarios!D{at} (low_use), E{at} (busy)"
    link = wb["Inputs"].cell(row, SELECTED + 1).hyperlink
    assert link.location == f"Scenarios!D{rows['utilization']}"
    # the spot scenario does not set it: the base value is still read, and still the orange input cell
    assert wb["Inputs"].cell(row, 2).fill.fgColor.rgb.endswith("FFCC99")


# every scenario sets the utilisation: the Inputs cell feeds the base case only
EVERY = PLAN.replace("{ rent_rate = 1.65 USD/h }", "{ utilization = 55% }")
BUSY_EDITED = 0.95  # typed into the busy scenario's own cell: 95 %


@pytest.fixture(scope="module")
def every(tmp_path_factory):
    require_soffice()
    work = tmp_path_factory.mktemp("every")
    plan = loads(EVERY, str(work / "every.plan"))
    book = Book(plan)
    exported = work / "exported.xlsx"
    exported.write_bytes(to_bytes(book.build()))
    wb = openpyxl.load_workbook(exported)
    sheet, coord = next(wb.defined_names["SelectedScenario"].destinations)
    wb[sheet][coord.replace("$", "")].value = "busy"
    busy = next(c.column for c in wb["Scenarios"][4] if c.value == "busy")
    wb["Scenarios"].cell(book.rows["utilization"], busy).value = BUSY_EDITED
    edited = work / "edited.xlsx"
    wb.save(edited)
    assert poison(edited) > 50
    libre = recalculate([edited], work)[edited]
    return {"plan": plan, "book": book, "exported": openpyxl.load_workbook(exported), "busy": busy,
            "recalculated": openpyxl.load_workbook(libre, data_only=True)}


def test_an_input_every_scenario_sets_is_edited_in_the_scenario_cells(every):
    wb, book = every["exported"], every["book"]
    row, at = book.input_rows["utilization"], book.rows["utilization"]
    value = wb["Inputs"].cell(row, 2)
    assert not value.fill.fgColor.rgb.endswith("FFCC99")  # not marked editable: only the base case reads it
    assert "Every scenario sets its own value" in value.comment.text
    where = wb["Inputs"].cell(row, SELECTED + 1)
    assert where.value == f"every scenario sets it: edit Scenarios!D{at} (low_use), E{at} (busy), F{at} (spot)"
    assert where.hyperlink.location == f"Scenarios!D{at}"
    for column in ("D", "E", "F"):  # the cells the scenarios read are the orange ones
        assert wb["Scenarios"][f"{column}{at}"].fill.fgColor.rgb.endswith("FFCC99")


def test_editing_the_scenario_cell_moves_what_the_summary_shows(every):
    wb, plan, book = every["recalculated"], every["plan"], every["book"]
    leftover = [f"{ws.title}!{c.coordinate}" for ws in wb.worksheets for row in ws.iter_rows() for c in row
                if c.value == POISON]
    assert leftover == [], leftover[:5]
    ev = plan.evaluate("busy", {"utilization": plan.parse_override("utilization=95%")[1]})
    summary = wb["Summary"]
    header = next(r for r in summary.iter_rows() if r[0].value == "Figure")
    columns = {c.value: c.column for row in (header, summary[header[0].row + 1]) for c in row if c.value}
    doc = plan.model.quantities["npv"].doc
    npv_row = next(r[0].row for r in summary.iter_rows() if r[0].value == doc[:1].upper() + doc[1:])
    for column in ("busy", "Selected scenario"):
        assert summary.cell(npv_row, columns[column]).value == pytest.approx(ev.display("npv"), rel=1e-9)
    # hand figure: 8 GPUs * 2.49 USD/h * 95 % * 730 h = 13.81452 kUSD/month
    assert wb["Model"].cell(book.model_rows["rent_per_month"], SELECTED).value == pytest.approx(13.81452, rel=1e-12)
    key = next(r for r in summary.iter_rows() if r[1].value == "utilization")
    assert key[2].value == pytest.approx(BUSY_EDITED)  # the key input shows the selected scenario's value


def test_the_model_note_names_the_selected_scenario_column_only_where_there_is_one(tmp_path):
    lone = "unit USD\nprice = 3 USD\ncount = 4\ntotal = price * count\n"
    notes = {}
    for name, text in {"switch": PLAN, "lone": lone}.items():
        path = tmp_path / f"{name}.xlsx"
        path.write_bytes(to_bytes(Book(loads(text, str(tmp_path / f"{name}.plan"))).build()))
        ws = openpyxl.load_workbook(path)["Model"]
        notes[name] = (ws["A2"].value, ws.cell(3, SELECTED).value)
    assert notes["switch"][1] == "Selected scenario" and "Selected scenario column" in notes["switch"][0]
    assert notes["lone"][1] is None and "Selected scenario" not in notes["lone"][0]
    assert notes["lone"][0].startswith("Every figure is a live formula")
