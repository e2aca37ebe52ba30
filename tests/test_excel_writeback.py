"""Edits in the workbook written back into the plan (`planner import BOOK.xlsx --plan FILE --write`).

An analyst edits three inputs and one scenario's value in an exported workbook; LibreOffice recalculates
it (every cached value poisoned first, so a cell it did not compute shows the poison) and saves it, as the
analyst's copy would be. The write-back must change the plan's text in exactly those four literals (units
and written decimals kept: 2.49 -> 2.25, 65% -> 70% from the cell's 0.7, 1.65 -> 1.80), and the new
plan must evaluate to what the recalculated workbook shows.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from excel_recalc import POISON, poison, recalculate, require_soffice

from planner.cli import main
from planner.outputs.excel.writer import Book, to_bytes
from planner.plan import load_compiled as load

ROOT = Path(__file__).resolve().parents[1]
PLAN = (ROOT / "tests" / "plans" / "buy_vs_rent.plan").read_text(encoding="utf-8")

# the four edits, and the plan's text as it must read after them (written by hand, not by the code)
EDITS = [("Inputs", "server_price", 240), ("Inputs", "rent_rate", 2.25), ("Inputs", "utilization", 0.7),
         ("spot", "rent_rate", 1.8)]
EXPECTED = (PLAN
            .replace("server_price  = 250 kUSD     ", "server_price  = 240 kUSD     ")
            .replace("rent_rate     = 2.49 USD/h   ", "rent_rate     = 2.25 USD/h   ")
            .replace("utilization   = 65%          ", "utilization   = 70%          ")
            .replace("{ rent_rate = 1.65 USD/h }", "{ rent_rate = 1.80 USD/h }"))


def _cell(wb, book: Book, where: str, name: str):
    if where == "Inputs":
        sheet, coord = next(wb.defined_names[book.names[name]].destinations)
        return wb[sheet][coord.replace("$", "")]
    ws = wb["Scenarios"]
    column = next(c.column for c in ws[4] if c.value == where)  # the scenario's name, under its doc string
    return ws.cell(row=book.rows[name], column=column)


def _export(folder: Path, text: str = PLAN) -> tuple[Path, Book]:
    plan_path = folder / "buy_vs_rent.plan"
    plan_path.write_text(text, encoding="utf-8")
    book = Book(load(plan_path))
    exported = folder / "exported.xlsx"
    exported.write_bytes(to_bytes(book.build()))
    return plan_path, book


def _edit(exported: Path, book: Book, target: Path, edits=EDITS) -> Path:
    wb = openpyxl.load_workbook(exported)
    for where, name, value in edits:
        _cell(wb, book, where, name).value = value
    wb.save(target)
    return target


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    require_soffice()
    work = tmp_path_factory.mktemp("writeback")
    plan_path, book = _export(work)
    edited = _edit(work / "exported.xlsx", book, work / "edited.xlsx")
    assert poison(edited) > 50
    saved = recalculate([edited], work)[edited]  # the analyst's copy, as LibreOffice saves it
    assert main(["import", str(saved), "--plan", str(plan_path), "--write"]) == 0
    return {"plan_path": plan_path, "book": book, "saved": saved,
            "recalculated": openpyxl.load_workbook(saved, data_only=True)}


def test_only_the_four_edited_literals_change(written):
    assert written["plan_path"].read_text(encoding="utf-8") == EXPECTED


def test_the_new_plan_evaluates_to_the_recalculated_workbook(written):
    wb, book = written["recalculated"], written["book"]
    leftover = [f"{ws.title}!{c.coordinate}" for ws in wb.worksheets for row in ws.iter_rows() for c in row
                if c.value == POISON]
    assert leftover == [], f"LibreOffice did not recalculate: {leftover[:5]}"
    plan = load(written["plan_path"])
    compared = 0
    for scenario in (None, "spot"):
        ev = plan.evaluate(scenario)
        for name, q in plan.model.quantities.items():
            if scenario is None:
                sheet, coord = next(wb.defined_names[book.names[name]].destinations)
                got = wb[sheet][coord.replace("$", "")].value
            else:
                got = _cell(wb, book, scenario, name).value
            want = ev.display(name)
            if q.is_bool:
                assert bool(got) is bool(want), (scenario, name)
                continue
            if q.unit_text.startswith("%"):
                want = want / 100  # the cell holds the fraction
            assert got == pytest.approx(want, rel=1e-9, abs=1e-300), (scenario, name)
            compared += 1
    assert compared >= 30
    # the hand figure: 8 GPUs * 2.25 USD/h * 70 % * 730 h = 9.198 kUSD/month
    assert plan.evaluate(None).display("rent_per_month") == pytest.approx(9.198, rel=1e-12)


def test_the_same_workbook_again_is_refused_as_stale_unless_forced(written, capsys):
    args = ["import", str(written["saved"]), "--plan", str(written["plan_path"]), "--write"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "changed since" in err and "nothing was written" in err and "--force" in err
    assert written["plan_path"].read_text(encoding="utf-8") == EXPECTED
    assert main(args + ["--force"]) == 0  # the plan already holds the edits: nothing left to change
    assert written["plan_path"].read_text(encoding="utf-8") == EXPECTED


def test_a_dry_run_prints_the_diff_and_writes_nothing(tmp_path, capsys):
    plan_path, book = _export(tmp_path)
    edited = _edit(tmp_path / "exported.xlsx", book, tmp_path / "edited.xlsx")
    assert main(["import", str(edited), "--plan", str(plan_path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert plan_path.read_text(encoding="utf-8") == PLAN
    removed = [line for line in out.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert len(removed) == len(added) == 4
    assert "+scenario spot        \"spot-price cloud\"          { rent_rate = 1.80 USD/h }" in added


def test_a_value_outside_a_constraint_is_refused_naming_the_cell_and_the_constraint(tmp_path, capsys):
    plan_path, book = _export(tmp_path)
    edited = _edit(tmp_path / "exported.xlsx", book, tmp_path / "edited.xlsx",
                   [("Inputs", "rent_rate", 2.25), ("Inputs", "utilization", 1.2)])
    cell = _cell(openpyxl.load_workbook(edited), book, "Inputs", "utilization").coordinate
    assert main(["import", str(edited), "--plan", str(plan_path), "--write"]) == 2
    err = capsys.readouterr().err
    assert f"Inputs!{cell}" in err and "0% < utilization <= 100%" in err
    assert plan_path.read_text(encoding="utf-8") == PLAN  # nothing written, not even the valid edit


def test_a_typed_value_over_a_formula_is_reported_as_not_an_input(tmp_path, capsys):
    plan_path, book = _export(tmp_path)
    wb = openpyxl.load_workbook(tmp_path / "exported.xlsx")
    sheet, coord = next(wb.defined_names[book.names["payback"]].destinations)
    wb[sheet][coord.replace("$", "")].value = 30
    wb.save(tmp_path / "edited.xlsx")
    assert main(["import", str(tmp_path / "edited.xlsx"), "--plan", str(plan_path), "--write"]) == 0
    err = capsys.readouterr().err
    assert f"not an input: {sheet}!{coord.replace('$', '')} (`payback`" in err
    assert plan_path.read_text(encoding="utf-8") == PLAN


def test_written_precision_grouping_and_sign(tmp_path):
    text = PLAN.replace("throughput    = 1800 token/s", "throughput    = 1_800 token/s").replace(
        "hosting       = 1.5 kUSD/month", "hosting       = 1.50 kUSD/month")
    plan_path, book = _export(tmp_path, text)
    edited = _edit(tmp_path / "exported.xlsx", book, tmp_path / "edited.xlsx",
                   [("Inputs", "throughput", 2400), ("Inputs", "hosting", 2), ("Inputs", "rent_rate", 2.125)])
    assert main(["import", str(edited), "--plan", str(plan_path), "--write"]) == 0
    new = plan_path.read_text(encoding="utf-8")
    assert new == (text.replace("= 1_800 token/s", "= 2_400 token/s").replace("= 1.50 kUSD/month", "= 2.00 kUSD/month")
                   .replace("= 2.49 USD/h", "= 2.125 USD/h"))
