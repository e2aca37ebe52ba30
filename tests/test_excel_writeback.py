"""Edits in the workbook written back into the plan (`planner import BOOK.xlsx --plan FILE --write`).

An analyst edits three inputs and one scenario's value in an exported workbook; LibreOffice recalculates
it (every cached value poisoned first, so a cell it did not compute shows the poison) and saves it, as the
analyst's copy would be. The write-back must change the plan's text in exactly those four literals (units
and written decimals kept: 2.49 -> 2.25, 65% -> 70% from the cell's 0.7, 1.65 -> 1.80), and the new
plan must evaluate to what the recalculated workbook shows.
"""

from __future__ import annotations

from fractions import Fraction
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
                   .replace("= 2.49 USD/h   ", "= 2.125 USD/h  "))  # one digit more, one space of padding less


def test_a_longer_or_shorter_literal_keeps_the_columns_after_it_aligned(tmp_path):
    """`rep_target = 12` typed as 8 moved the doc and constraint after it one column left (`8                 "doc"`):
    the padding takes up the difference, down to one space (two before a comment); a unit's space stays."""
    text = PLAN.replace('lifetime      = 36 month     "depreciation period"',
                        'lifetime      = 36 month  # the depreciation period')
    plan_path, book = _export(tmp_path, text)
    edited = _edit(tmp_path / "exported.xlsx", book, tmp_path / "edited.xlsx",
                   [("Inputs", "gpus", 16), ("Inputs", "server_price", 99999), ("Inputs", "lifetime", 120)])
    assert main(["import", str(edited), "--plan", str(plan_path), "--write"]) == 0
    new = plan_path.read_text(encoding="utf-8")
    assert new == (text.replace('gpus          = 8            "GPUs', 'gpus          = 16           "GPUs')
                   .replace('server_price  = 250 kUSD     "purchase', 'server_price  = 99999 kUSD   "purchase')
                   .replace('lifetime      = 36 month  # the', 'lifetime      = 120 month  # the'))


# ---- hostile and mistaken workbooks: each is a clear error naming the cell, and the plan stays as it was ----

def _typed(tmp_path, cells, text: str = PLAN) -> tuple[Path, Path]:
    """An exported workbook with ``cells`` ({(where, name): value}) typed in, as openpyxl saves it."""
    plan_path, book = _export(tmp_path, text)
    return plan_path, _edit(tmp_path / "exported.xlsx", book, tmp_path / "edited.xlsx",
                            [(where, name, value) for (where, name), value in cells.items()])


def _refused(plan_path: Path, book: Path, capsys, before: str = PLAN) -> list[str]:
    """The error of `import` and of `import --write --dry-run` and `--write` (each exit 2, the plan unchanged)."""
    errors = []
    for extra in ([], ["--write", "--dry-run"], ["--write"]):
        assert main(["import", str(book), "--plan", str(plan_path), *extra]) == 2, extra
        err = capsys.readouterr().err
        assert "internal error" not in err and "Traceback" not in err, err
        assert plan_path.read_text(encoding="utf-8") == before
        errors.append(err)
    assert errors[0] == errors[1] == errors[2]
    return errors


@pytest.mark.parametrize("where, name, typed, unit", [
    ("Inputs", "rent_rate", "1e400", "USD/h"),
    ("Inputs", "utilization", "1e309%", "%"),
    ("Inputs", "rent_rate", "-1e400", "USD/h"),
    ("Inputs", "rent_rate", 1e-310, "USD/h"),  # a float the cell holds, too small for the arithmetic
    ("spot", "rent_rate", "1e400", "USD/h"),
])
def test_a_number_beyond_the_literal_range_is_refused_naming_the_cell(tmp_path, capsys, where, name, typed, unit):
    plan_path, book = _typed(tmp_path, {(where, name): typed})
    err = _refused(plan_path, book, capsys)[0]
    sheet = "Inputs" if where == "Inputs" else "Scenarios"
    assert f"{sheet}!" in err and f"`{name}`" in err, err
    assert "for double-precision arithmetic" in err and unit in err, err


@pytest.mark.parametrize("where", ["Inputs", "spot"])
@pytest.mark.parametrize("typed, says", [
    (None, "is empty"),
    ("=1+", "formula with no saved value"),
    ("=2*A1", "formula with no saved value"),
    ("cheap", "the text 'cheap'"),
    (__import__("datetime").datetime(2024, 1, 5), "a date (2024-01-05)"),
    (True, "TRUE"),
    ("#DIV/0!", "the error #DIV/0!"),
])
def test_every_sheet_refuses_what_is_not_a_number_alike(tmp_path, capsys, where, typed, says):
    """The Inputs sheet and a scenario's own cell on the Scenarios sheet go through one validation:
    an emptied cell or a formula never calculated is not 'every input matches the plan'."""
    plan_path, book = _typed(tmp_path, {(where, "rent_rate"): typed})
    err = _refused(plan_path, book, capsys)[0]
    sheet = "Inputs" if where == "Inputs" else "Scenarios"
    assert f"{sheet}!" in err and "`rent_rate`" in err and says in err, err
    assert "datetime.datetime" not in err
    assert "USD/h" in err, err  # what to type instead, in the input's own unit


def test_a_workbook_of_another_plan_with_the_same_inputs_says_so(tmp_path, capsys):
    """Not "p.plan changed since book.xlsx was exported from it": the workbook records its plan."""
    other = tmp_path / "other"
    other.mkdir()
    _, book = _typed(other, {("Inputs", "rent_rate"): 2.25},
                     PLAN.replace('title "Buy or rent an 8-GPU inference server"', 'title "Another server"'))
    (other / "buy_vs_rent.plan").rename(other / "fleet.plan")
    plan_path = tmp_path / "buy_vs_rent.plan"
    plan_path.write_text(PLAN, encoding="utf-8")
    assert main(["import", str(book), "--plan", str(plan_path), "--write"]) == 2
    err = capsys.readouterr().err
    assert "exported from" in err and "Another server" in err and "another plan" in err, err
    assert "changed since" not in err
    assert plan_path.read_text(encoding="utf-8") == PLAN


def test_the_plan_changed_since_is_still_said_as_such(tmp_path, capsys):
    plan_path, book = _typed(tmp_path, {("Inputs", "rent_rate"): 2.25})
    changed = PLAN + "\n# a comment added since\n"
    plan_path.write_text(changed, encoding="utf-8")
    assert main(["import", str(book), "--plan", str(plan_path), "--write"]) == 2
    err = capsys.readouterr().err
    assert "changed since" in err and "another plan" not in err, err
    assert plan_path.read_text(encoding="utf-8") == changed


# ---- the zip container: its size is checked before openpyxl reads a byte of it ------------------------------

def _rezip(source: Path, target: Path, extra: dict | None = None, drop=()) -> Path:
    """``source``'s parts (``extra`` added or replaced, ``drop`` left out), deflated."""
    import zipfile

    with zipfile.ZipFile(source) as z, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in z.infolist():
            if info.filename not in (extra or {}) and info.filename not in drop:
                out.writestr(info.filename, z.read(info.filename))
        for name, data in (extra or {}).items():
            out.writestr(name, data)
    return target


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path, capsys):
    """A part of 20 MB of one repeated byte deflates to about 20 KB: a ratio no workbook has."""
    from planner.outputs.excel import reader

    plan_path, _ = _export(tmp_path)
    bomb = _rezip(tmp_path / "exported.xlsx", tmp_path / "bomb.xlsx",
                  {"xl/media/padding.xml": b"<a>" + b" " * 20_000_000 + b"</a>"})
    assert bomb.stat().st_size < 200_000
    err = _refused(plan_path, bomb, capsys)[0]
    assert "xl/media/padding.xml" in err and f"{reader.MAX_RATIO}" in err and "compress" in err, err


def test_a_workbook_beyond_the_inflated_size_limit_is_refused_naming_it(tmp_path, capsys, monkeypatch):
    from planner.outputs.excel import reader

    plan_path, _ = _export(tmp_path)
    monkeypatch.setattr(reader, "MAX_INFLATED", 150_000)  # the real limit in a test of reasonable size
    err = _refused(plan_path, tmp_path / "exported.xlsx", capsys)[0]
    assert "150,000 bytes" in err and "inflate" in err, err


def test_a_part_that_inflates_beyond_its_declared_size_is_refused_early(tmp_path, capsys):
    """A lying header: the central directory says 100 bytes, the part inflates to 5 MB. Reading stops at
    byte 101, not at the end."""
    import struct
    import zipfile

    plan_path, _ = _export(tmp_path)
    liar = _rezip(tmp_path / "exported.xlsx", tmp_path / "liar.xlsx",
                  {"xl/sharedStrings.xml": b"<sst>" + b"x" * 5_000_000 + b"</sst>"})
    data = bytearray(liar.read_bytes())
    with zipfile.ZipFile(liar) as z:
        info = z.getinfo("xl/sharedStrings.xml")
    at = data.rfind(b"PK\x01\x02" + data[info.header_offset + 4:info.header_offset + 8])  # its central entry
    while data[at + 46:at + 46 + len(info.filename)] != info.filename.encode():
        at = data.rfind(b"PK\x01\x02", 0, at)
    struct.pack_into("<I", data, at + 24, 100)  # uncompressed size in the central directory
    struct.pack_into("<I", data, info.header_offset + 22, 100)  # and in the local header
    liar.write_bytes(bytes(data))
    err = _refused(plan_path, liar, capsys)[0]
    assert "xl/sharedStrings.xml" in err and "declares 100 bytes" in err, err


@pytest.mark.parametrize("damage", ["truncated", "duplicate", "not a zip", "doctype"])
def test_a_broken_container_is_a_clear_error(tmp_path, capsys, damage):
    import zipfile

    plan_path, _ = _export(tmp_path)
    exported = tmp_path / "exported.xlsx"
    target = tmp_path / "broken.xlsx"
    if damage == "truncated":
        target.write_bytes(exported.read_bytes()[:20_000])
    elif damage == "duplicate":
        import warnings

        _rezip(exported, target)
        with warnings.catch_warnings(), zipfile.ZipFile(target, "a") as z:
            warnings.simplefilter("ignore")
            z.writestr("xl/workbook.xml", b"<workbook/>")
    elif damage == "not a zip":
        target.write_bytes(b"name,value\nrent_rate,2.25\n")
    else:  # an XML entity bomb (billion laughs) in a part: no workbook part declares a DTD
        laughs = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
                  + b"".join(b'<!ENTITY %s "%s">' % (bytes([98 + i]), bytes([97 + i]) * 10) for i in range(8))
                  + b']><sst>&i;</sst>')
        _rezip(exported, target, {"xl/sharedStrings.xml": laughs})
    err = _refused(plan_path, target, capsys)[0]
    assert "broken.xlsx" in err, err
    want = {"truncated": "not an .xlsx", "duplicate": "twice", "not a zip": "not an .xlsx", "doctype": "DTD"}[damage]
    assert want in err, err


def test_every_shipped_workbook_passes_the_container_limits_with_a_wide_margin(tmp_path):
    """The limits refuse bombs, not workbooks: each shipped sheet's export holds a quarter of each limit at
    most (the largest export of all, a plan with uncertain inputs at 10,000 trials, holds 23 MB inflated in
    38 parts at 13 to 1, and 25 MB at 14 to 1 once LibreOffice saves it)."""
    import io
    import zipfile

    from planner.outputs.excel import reader

    sheets = sorted((ROOT / "sheets").glob("*.plan")) + [ROOT / "tests" / "plans" / "gpu_buy_vs_rent_uncertain.plan"]
    for path in sheets:
        data = to_bytes(Book(load(path)).build())
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            infos = z.infolist()
        assert len(data) * 4 < reader.MAX_FILE and len(infos) * 4 < reader.MAX_PARTS, path.name
        assert sum(i.file_size for i in infos) * 4 < reader.MAX_INFLATED, path.name
        assert all(i.file_size <= reader.RATIO_FLOOR or i.file_size < i.compress_size * reader.MAX_RATIO / 4
                   for i in infos), path.name
        book = tmp_path / f"{path.stem}.xlsx"
        book.write_bytes(data)
        assert reader.checked_bytes(str(book)) == data


@pytest.mark.parametrize("where, name, typed, constraint", [
    ("Inputs", "gpus", 2.5, "`gpus` must be an integer"),
    ("spot", "rent_rate", -1, "rent_rate > 0 USD/h"),
])
def test_a_value_outside_a_constraint_says_which_cell_and_what_to_type(tmp_path, capsys, where, name, typed,
                                                                       constraint):
    plan_path, book = _typed(tmp_path, {(where, name): typed})
    err = _refused(plan_path, book, capsys)[0]
    sheet = "Inputs" if where == "Inputs" else "Scenarios"
    assert constraint in err and f"from {book} {sheet}!" in err, err
    assert "help: type a value that meets the constraint in that cell" in err, err


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_what_is_not_a_regular_file_is_refused_without_waiting(tmp_path, capsys, kind):
    import os
    import threading

    plan_path, _ = _export(tmp_path)
    target = {"fifo": tmp_path / "book.xlsx", "folder": tmp_path, "device": Path("/dev/zero")}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    codes = []
    worker = threading.Thread(target=lambda: codes.append(main(["import", str(target), "--plan", str(plan_path)])),
                              daemon=True)
    worker.start()
    worker.join(30)
    assert codes == [2], "import waited on it"
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("typed, says", [
    ("6,5", "a decimal comma"),      # 6.5 typed in a comma locale: never 65
    ("1,80", "a decimal comma"),
    ("12,34,567", "a decimal comma"),  # commas that group nothing
])
def test_a_decimal_comma_is_refused_never_read_as_a_larger_number(tmp_path, capsys, typed, says):
    """A new user typed `6,5%` (a decimal comma) and import read 65 %: a comma counts only between
    groups of three digits (`1,800`); anything else is refused, saying how to write it."""
    plan_path, book = _typed(tmp_path, {("Inputs", "rent_rate"): typed})
    err = _refused(plan_path, book, capsys)[0]
    assert "Inputs!" in err and "`rent_rate`" in err and says in err and "6.5, not 6,5" in err, err


def test_grouping_commas_still_read(tmp_path, capsys):
    from planner.outputs.excel.reader import _typed_number

    assert _typed_number("1,800", False) == 1800 and _typed_number("-12,345.5", False) == Fraction(-24691, 2)
    assert _typed_number("6,5%", True) is None and _typed_number("65%", True) == Fraction(65, 100)


def test_a_figure_an_edit_breaks_says_which_edits_it_was_evaluated_with(tmp_path, capsys):
    """An edit that leaves a formula without a value (a cost typed with the wrong sign, so every cash flow
    is positive and no rate makes their npv 0) was reported at the formula alone: the reader could not
    tell their typing caused it."""
    plan_path = tmp_path / "p.plan"
    plan_path.write_text("cost = 100\nyield = 10\nrate = irr(-cost, yield * 12, yield * 12)\n", encoding="utf-8")
    book = tmp_path / "p.xlsx"
    assert main(["export", str(plan_path), "-o", str(book)]) == 0
    wb = openpyxl.load_workbook(book)
    ws = wb["Inputs"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 4).value == "cost" or ws.cell(r, 1).value == "cost")
    ws.cell(row, 2).value = -5  # every flow positive: no rate
    wb.save(book)
    capsys.readouterr()
    assert main(["import", str(book), "--plan", str(plan_path)]) == 2
    err = capsys.readouterr().err
    assert "no rate makes" in err and "with the workbook's edits: cost: 100 -> -5" in err, err
