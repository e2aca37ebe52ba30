"""A series plan's workbook edited and read back (`planner import BOOK.xlsx --plan FILE [--write]`).

An analyst changes a price in the table of values on the Quarters sheet (a series written as
`[10.00 USD, 10.00 USD, 2 * 6.25 USD, 13.00 USD]` is a row of orange input cells) and an input on the Inputs sheet,
with openpyxl as with any spreadsheet program. The import lists both edits and evaluates the plan with
them; `--write` changes exactly those literals of the plan (units and written decimals kept). Figures
by hand: units sold grow 10% a quarter from `base`; sales are price times units, summed over 8 quarters.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import openpyxl
import pytest

from planner.cli import main

PLAN = """title "Price by quarter"
unit USD
unit quarter = 3 month
periods = 1 quarter..8 quarter
base = 100 "units sold in the first quarter"
series price = [10.00 USD, 10.00 USD, 2 * 6.25 USD, 13.00 USD] "the price each quarter (the last holds on)"
series sold  = base then previous * 1.1
series sales = price * sold
total        = sum(sales)
"""


def total_by_hand(prices: list[float], base: float = 100) -> float:
    """The total for the prices of the first quarters (the last holding on) and ``base`` units at first."""
    prices = prices + [prices[-1]] * (8 - len(prices))
    return sum(p * base * 1.1 ** k for k, p in enumerate(prices))


@pytest.fixture
def book(tmp_path):
    plan = tmp_path / "price.plan"
    plan.write_text(PLAN, encoding="utf-8")
    exported = tmp_path / "exported.xlsx"
    assert main(["export", str(plan), "-o", str(exported)]) == 0
    return plan, exported


def edit(exported: Path, target: Path, cells: dict) -> Path:
    wb = openpyxl.load_workbook(exported)
    for (sheet, coord), value in cells.items():
        wb[sheet][coord].value = value
    wb.save(target)
    return target


def test_the_table_is_a_named_row_of_input_cells(book):
    _, exported = book
    wb = openpyxl.load_workbook(exported)
    assert wb.defined_names["price"].attr_text == "Quarters!$C$6:$F$6"
    assert [wb["Quarters"][c].value for c in ("C6", "D6", "E6", "F6", "G6")] == [10, 10, 12.5, 13, "=F6"]


def test_an_edited_price_and_input_are_read_and_evaluated(book, tmp_path, capsys):
    """Quarter 2's price typed as 11 and `base` as 120: both listed with their cells, and the total is the
    plan's with them (by hand), not the plan's as written."""
    plan, exported = book
    edited = edit(exported, tmp_path / "edited.xlsx", {("Quarters", "D6"): 11, ("Inputs", "B5"): 120})
    assert main(["import", str(edited), "--plan", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "price (quarter 2): 10.00 USD -> 11.00 USD  (Quarters!D6)" in out
    assert "base: 100 -> 120  (Inputs!B5)" in out
    assert main(["import", str(edited), "--plan", str(plan), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"name": "price", "cell": "Quarters!D6", "plan": 10, "workbook": 11, "unit": "USD",
            "scenario": None} in data["workbook"]["changes"]
    total = data["values"]["base"]["total"]
    assert math.isclose(total, total_by_hand([10, 11, 12.5, 13], base=120), rel_tol=1e-12)
    assert plan.read_text(encoding="utf-8") == PLAN  # no --write: the plan is untouched


def test_write_back_changes_only_the_edited_literals(book, tmp_path, capsys):
    plan, exported = book
    edited = edit(exported, tmp_path / "edited.xlsx", {("Quarters", "D6"): 11, ("Quarters", "F6"): 13.5,
                                                       ("Inputs", "B5"): 120})
    assert main(["import", str(edited), "--plan", str(plan), "--write"]) == 0
    want = (PLAN.replace("[10.00 USD, 10.00 USD, 2 * 6.25 USD, 13.00 USD]",
                         "[10.00 USD, 11.00 USD, 2 * 6.25 USD, 13.50 USD]").replace("base = 100 ", "base = 120 "))
    assert plan.read_text(encoding="utf-8") == want
    capsys.readouterr()
    assert main(["eval", str(plan), "--format", "json"]) == 0
    total = json.loads(capsys.readouterr().out)["values"]["base"]["total"]
    assert math.isclose(total, total_by_hand([10, 11, 12.5, 13.5], base=120), rel_tol=1e-12)


def test_an_item_that_is_a_formula_is_refused_naming_the_cell(book, tmp_path, capsys):
    """`2 * 6.25 USD` is an input cell (a constant) but not a number to replace: --write refuses, naming the
    cell and the formula, and writes nothing."""
    plan, exported = book
    edited = edit(exported, tmp_path / "edited.xlsx", {("Quarters", "E6"): 14, ("Quarters", "D6"): 11})
    assert main(["import", str(edited), "--plan", str(plan), "--write"]) == 2
    err = capsys.readouterr().err
    assert "Quarters!E6" in err and "`2 * 6.25 USD`" in err and "not a number to replace" in err
    assert plan.read_text(encoding="utf-8") == PLAN


def test_a_typed_value_over_a_formula_of_a_series_is_reported_as_not_an_input(book, tmp_path, capsys):
    """A figure typed over a computed quarter (sales): said, neither read nor written back."""
    plan, exported = book
    edited = edit(exported, tmp_path / "edited.xlsx", {("Quarters", "C8"): 5000})
    assert main(["import", str(edited), "--plan", str(plan), "--write"]) == 0
    err = capsys.readouterr().err
    assert "not an input: Quarters!C8 (`sales`, quarter 1) holds the typed value 5000" in err
    assert plan.read_text(encoding="utf-8") == PLAN


def test_text_in_a_table_cell_is_refused_naming_the_cell(book, tmp_path, capsys):
    plan, exported = book
    edited = edit(exported, tmp_path / "edited.xlsx", {("Quarters", "D6"): "eleven"})
    assert main(["import", str(edited), "--plan", str(plan)]) == 2
    err = capsys.readouterr().err
    assert "Quarters!D6 (`price`" in err and "must be a number" in err and "USD" in err



def test_a_price_typed_where_the_last_one_held_on_extends_the_table(book, tmp_path, capsys):
    """Quarter 6's price typed as 15 (the table has four quarters; 13.00 held on): the sheet computes 13 in
    quarter 5 and 15 from quarter 6 on, and so does the plan after --write, its table two items longer."""
    plan, exported = book
    edited = edit(exported, tmp_path / "edited.xlsx", {("Quarters", "H6"): 15})
    assert main(["import", str(edited), "--plan", str(plan), "--write"]) == 0
    assert "price (quarter 6): 13.00 USD -> 15.00 USD  (Quarters!H6)" in capsys.readouterr().err
    want = PLAN.replace("2 * 6.25 USD, 13.00 USD]", "2 * 6.25 USD, 13.00 USD, 13.00 USD, 15.00 USD]")
    assert plan.read_text(encoding="utf-8") == want
    assert main(["eval", str(plan), "--format", "json"]) == 0
    total = json.loads(capsys.readouterr().out)["values"]["base"]["total"]
    assert math.isclose(total, total_by_hand([10, 10, 12.5, 13, 13, 15]), rel_tol=1e-12)


def test_with_scenarios_the_table_is_the_base_cases_cells_and_nothing_is_reported_typed(tmp_path, capsys):
    """A scenario: the table's input cells are the base case's rows (the selected scenario's rows read them);
    the Scenarios sheet's figure that reduces a series is planner's value at export, which the import does not
    take for a typed one."""
    plan = tmp_path / "price.plan"
    plan.write_text(PLAN + 'scenario more "twice the units" { base = 200 }\n', encoding="utf-8")
    exported = tmp_path / "exported.xlsx"
    assert main(["export", str(plan), "-o", str(exported)]) == 0
    wb = openpyxl.load_workbook(exported)
    sheet, coord = next(wb.defined_names["price"].destinations)
    row = int(coord.split(":")[0].split("$")[2])
    assert wb[sheet].cell(row, 3).value == 10 and wb[sheet].cell(row - 4, 3).value == f"=C{row}"
    wb[sheet].cell(row, 4).value = 11
    wb.save(tmp_path / "edited.xlsx")
    capsys.readouterr()
    assert main(["import", str(tmp_path / "edited.xlsx"), "--plan", str(plan), "-s", "more"]) == 0
    out = capsys.readouterr().out
    assert "price (quarter 2): 10.00 USD -> 11.00 USD" in out and "not an input" not in out
    assert main(["import", str(tmp_path / "edited.xlsx"), "--plan", str(plan), "-s", "more", "--format", "json"]) == 0
    values = json.loads(capsys.readouterr().out)["values"]
    assert math.isclose(values["more"]["total"], total_by_hand([10, 11, 12.5, 13], base=200), rel_tol=1e-12)


def test_the_analysts_copy_saved_by_libreoffice_writes_back_to_its_own_figures(book, tmp_path, capsys):
    """The edited workbook recalculated and saved by LibreOffice (every cached value poisoned first): the
    name over the table survives the save, and the plan written back evaluates to the total LibreOffice
    computed from the edited cells."""
    from excel_recalc import poison, recalculate, require_soffice

    require_soffice()
    plan, exported = book
    edited = edit(exported, tmp_path / "edited.xlsx", {("Quarters", "D6"): 11, ("Quarters", "I6"): 14.25})
    assert poison(edited) > 10
    saved = recalculate([edited], tmp_path / "work")[edited]
    wb = openpyxl.load_workbook(saved, data_only=True)
    sheet, coord = next(wb.defined_names["total"].destinations)
    computed = wb[sheet][coord.replace("$", "")].value
    assert math.isclose(computed, total_by_hand([10, 11, 12.5, 13, 13, 13, 14.25]), rel_tol=1e-12)
    assert main(["import", str(saved), "--plan", str(plan), "--write"]) == 0
    assert "[10.00 USD, 11.00 USD, 2 * 6.25 USD, 13.00 USD, 13.00 USD, 13.00 USD, 14.25 USD]" in plan.read_text()
    capsys.readouterr()
    assert main(["eval", str(plan), "--format", "json"]) == 0
    assert math.isclose(json.loads(capsys.readouterr().out)["values"]["base"]["total"], computed, rel_tol=1e-12)


def test_a_typed_value_over_a_series_is_reported_in_a_plan_without_tables(tmp_path, capsys):
    plan = tmp_path / "grow.plan"
    plan.write_text("periods = 1 month..12 month\nstart = 100\nseries sold = start then previous * 1.1\n"
                    "total = sum(sold)\n", encoding="utf-8")
    exported = tmp_path / "exported.xlsx"
    assert main(["export", str(plan), "-o", str(exported)]) == 0
    edited = edit(exported, tmp_path / "edited.xlsx", {("Months", "E6"): 5})
    capsys.readouterr()
    assert main(["import", str(edited), "--plan", str(plan)]) == 0
    assert "not an input: Months!E6 (`sold`, month 3) holds the typed value 5" in capsys.readouterr().out


def test_a_workbook_without_the_tables_name_says_its_table_is_not_read(book, tmp_path, capsys):
    """A workbook exported before tables were named (or with the name deleted): a warning that the table is
    not read, and its cells are not taken for numbers typed over formulas."""
    plan, exported = book
    wb = openpyxl.load_workbook(exported)
    del wb.defined_names["price"]
    wb.save(tmp_path / "older.xlsx")
    assert main(["import", str(tmp_path / "older.xlsx"), "--plan", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "not an input" not in out
    assert "warning: the workbook does not name the cells of `price`'s table of values" in out


def test_a_value_typed_over_an_item_that_reads_an_input_is_reported(tmp_path, capsys):
    """`series price = [p0, 12 USD]`: the first item is `=p0`'s cell, not an input cell of the table."""
    plan = tmp_path / "items.plan"
    plan.write_text("unit USD\nperiods = 1 month..6 month\np0 = 10 USD\nseries price = [p0, 12 USD]\n"
                    "total = sum(price)\n", encoding="utf-8")
    exported = tmp_path / "exported.xlsx"
    assert main(["export", str(plan), "-o", str(exported)]) == 0
    edited = edit(exported, tmp_path / "edited.xlsx", {("Months", "C6"): 11})
    capsys.readouterr()
    assert main(["import", str(edited), "--plan", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "every input in" in out and "matches the plan" in out
    assert "not an input: Months!C6 (`price`, month 1) holds the typed value 11: the table's item there is the " \
           "formula `p0`" in out
