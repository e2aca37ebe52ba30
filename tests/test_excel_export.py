"""The workbook's structure without a spreadsheet engine: determinism, text that
stays text, validation, names, portable formulas, and the export/import commands.
(Values computed by a real engine are tested in test_excel_workbook.py.)"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest

from planner.outputs.excel.names import is_valid
from planner.outputs.excel.writer import workbook_bytes
from planner.plan import load_compiled as load, loads_compiled as loads

ROOT = Path(__file__).resolve().parent.parent
TOKEN_COST = ROOT / "sheets" / "token_cost.plan"

SMALL = '''title "=cmd|' /C calc'!A0"
note "@SUM(1+1)"
speed = 3 TB/s        "=2+3 looks like a formula"      ["+tag", "-tag"]   where speed > 0 TB/s
share = 0.8           "-share"                          where 0 <= share < 1
count = 4             "@count"                          where integer, 1 <= count <= 10
on = true             "+a switch"
r = 2                 "R is a cell in R1C1 notation"
a1 = 5
total = speed * share * count * r * a1 -> GB/s
ok = on and share < 0.9
scenario fast "=fast scenario" { speed = 6 TB/s }
scenario slow { speed = 1 TB/s }
sweep share in 0..0.9 count 2000 show total
check total ~= 96000 GB/s
'''


@pytest.fixture(scope="module")
def small_book():
    data = workbook_bytes(loads(SMALL, "small.plan"))
    return data, openpyxl.load_workbook(io.BytesIO(data))


@pytest.fixture(scope="module")
def token_book():
    data = workbook_bytes(load(TOKEN_COST))
    return data, openpyxl.load_workbook(io.BytesIO(data))


def formulas(wb):
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.data_type == "f":
                    yield ws.title, c.coordinate, c.value


def named_cell(wb, name):
    sheet, coord = next(wb.defined_names[name].destinations)
    return wb[sheet][coord.replace("$", "")]


def test_same_plan_same_bytes(small_book, token_book):
    assert workbook_bytes(loads(SMALL, "small.plan")) == small_book[0]
    assert workbook_bytes(load(TOKEN_COST)) == token_book[0]
    with zipfile.ZipFile(io.BytesIO(token_book[0])) as z:
        assert {i.date_time for i in z.infolist()} == {(2000, 1, 1, 0, 0, 0)}
        core = z.read("docProps/core.xml").decode()
        assert "2000-01-01T00:00:00Z" in core


def test_text_from_the_plan_is_never_a_formula(small_book):
    _, wb = small_book
    texts = {}
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value[:1] in "=+-@":
                    texts[c.value] = c.data_type
    for text in ["=cmd|' /C calc'!A0", "@SUM(1+1)", "=2+3 looks like a formula", "+tag, -tag", "-share",
                 "@count", "+a switch", "=fast scenario"]:
        assert texts.get(text) == "s", (text, texts.get(text))
    # and no formula anywhere contains plan text
    assert not any("calc" in f or "SUM" in f for _, _, f in formulas(wb))


def test_inputs_are_named_styled_validated_and_commented(small_book):
    _, wb = small_book
    speed = named_cell(wb, "speed")
    assert speed.value == 3 and speed.parent.title == "Inputs"
    assert named_cell(wb, "share").fill.fgColor.rgb.endswith("FFCC99")  # the orange of an input cell
    # both scenarios set speed: only the base case reads this cell, so it is grey, not marked editable
    assert speed.fill.fgColor.rgb.endswith("F2F2F2") and "Every scenario sets its own value" in speed.comment.text
    assert "=2+3 looks like a formula" in speed.comment.text and "+tag" in speed.comment.text
    assert named_cell(wb, "on").value is True
    validations = {str(dv.sqref): dv for dv in wb["Inputs"].data_validations.dataValidation}

    def dv(name):
        return validations[named_cell(wb, name).coordinate]

    assert (dv("count").type, dv("count").operator or "between", dv("count").formula1, dv("count").formula2) == \
        ("whole", "between", "1", "10")  # "between" is the default operator, which XlsxWriter leaves out
    assert dv("share").type == "custom"  # 0 <= share < 1: mixed bounds
    cell = named_cell(wb, "share").coordinate
    assert dv("share").formula1 == f"AND(0<={cell},{cell}<1)"
    assert (dv("speed").type, dv("speed").operator, dv("speed").formula1) == ("decimal", "greaterThan", "0")
    assert (dv("on").type, dv("on").formula1) == ("list", '"TRUE,FALSE"')
    assert all(d.showErrorMessage and d.errorStyle in (None, "stop") for d in validations.values())  # "stop": the default


def test_excel_forbidden_names_are_mangled(small_book):
    _, wb = small_book
    names = set(wb.defined_names.keys())
    assert {"r_", "a1_", "speed", "total"} <= names and not {"r", "a1"} & names
    assert all(is_valid(n) for n in names)
    assert named_cell(wb, "r_").value == 2 and named_cell(wb, "a1_").value == 5
    model = {c.value: c.offset(column=-2).value for c in wb["Model"]["D"] if c.value}  # by identifier (column D)
    # speed is typed in TB/s and total shown in GB/s: the two factors cancel to one (1E+12 / 1E+9)
    assert model["total"] == "=speed*share*count*r_*a1_*1000"  # the plan's own order


PORTABLE = {"MAX", "MIN", "IF", "AND", "OR", "NOT", "INT", "LN", "EXP", "SQRT", "ABS", "SIGN", "MOD", "PI",
            "INDEX", "MATCH", "IFERROR", "NA", "ISNUMBER", "COUNTIF",
            "CHOOSE",  # the scenario switch: Excel, LibreOffice 7.4 and Gnumeric all have it
            "TEXT"}  # an answer as a statement on the Summary ("Breakeven utilisation: 45.4%"): all three have it


def test_formulas_are_portable_and_fit(small_book, token_book):
    for _, wb in (small_book, token_book):
        found = list(formulas(wb))
        assert len(found) > 100
        for sheet, coord, text in found:
            assert len(text) <= 8192
            called = set(re.findall(r"([A-Z][A-Z0-9.]*)\(", re.sub(r"'[^']*'!", "", text)))
            assert called <= PORTABLE, (sheet, coord, text)
            assert "_xlfn" not in text and "LET(" not in text and "LAMBDA(" not in text
    assert wb.calculation.fullCalcOnLoad is True


def test_units_are_converted_in_formulas(token_book):
    _, wb = token_book
    model = {c.value: c.offset(column=-2).value for c in wb["Model"]["D"] if c.value}  # by identifier (column D)
    # weight_bytes is shown in GB, hbm_bandwidth typed in TB/s and the bound shown in ms: the factors
    # (1E+9 / 1E+12 * 1000) cancel, so the formula is the plan's own; the recalculation tests check the value
    assert model["batch1_weight_bound"] == "=weight_bytes/hbm_bandwidth"
    assert model["weight_bytes"] == "=parameters*bits_per_weight/8E+9"  # bits to bytes (8) to GB (1E+9)


def test_sweeps_are_capped_and_charted(small_book):
    data, wb = small_book
    ws = wb["Sweep 1 share"]
    assert "2,000 points; the first 1,000 are shown" in ws["A2"].value
    rows = [r for r in ws.iter_rows(min_row=7, values_only=True) if r[0] is not None]
    assert len(rows) == 1000
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert any(n.startswith("xl/charts/chart") for n in z.namelist())


def test_scenario_columns_hold_their_own_values_and_follow_the_rest(small_book):
    _, wb = small_book
    ws = wb["Scenarios"]
    header = [c.value for c in ws[4]]  # the scenarios' names, under their doc strings
    fast = header.index("fast") + 1
    rows = {ws.cell(row=r, column=2).value: r for r in range(5, ws.max_row + 1)}  # by identifier (column B)
    assert ws.cell(row=rows["speed"], column=fast).value == 6  # the scenario's value
    assert ws.cell(row=rows["share"], column=fast).value == "=share"  # the Inputs sheet's
    col = openpyxl.utils.get_column_letter(fast)
    total = ws.cell(row=rows["total"], column=fast).value
    assert f"{col}{rows['speed']}" in re.findall(r"[A-Z]+\d+", total)  # its own speed


# ---- the commands ----------------------------------------------------------------

def test_export_command_writes_the_workbook(tmp_path, cli):
    out = tmp_path / "book.xlsx"
    code, _, err = cli("export", TOKEN_COST, "-o", out, "--set", "alpha=0.6")
    assert code == 0, err
    wb = openpyxl.load_workbook(out)
    assert named_cell(wb, "alpha").value == 0.6


def test_a_failed_export_writes_nothing(tmp_path, cli):
    out = tmp_path / "book.xlsx"
    code, _, err = cli("export", TOKEN_COST, "-o", out, "--set", "alpha=1.5")
    assert code == 2 and "constraint violated" in err and not out.exists()
    out.write_bytes(b"previous")
    code, _, _ = cli("export", TOKEN_COST, "-o", out, "--set", "alpha=1.5")
    assert code == 2 and out.read_bytes() == b"previous"
    assert not [p for p in tmp_path.iterdir() if p.name != "book.xlsx"]  # no temp file left


def test_export_scenario_selection(tmp_path, cli, plan_file):
    plan = plan_file("x = 1\ny = x * 2\nscenario a { x = 2 }\nscenario b { x = 3 }\nscenario c { x = 4 }\n")
    out = tmp_path / "book.xlsx"
    assert cli("export", plan, "-o", out, "--scenario", "c,a")[0] == 0
    header = [c.value for c in openpyxl.load_workbook(out)["Scenarios"][3] if c.value is not None]
    assert header == ["Quantity", "Name", "Unit", "c", "a"]  # no doc strings: the names


def edited(tmp_path, values: dict) -> Path:
    path = tmp_path / "book.xlsx"
    path.write_bytes(workbook_bytes(load(TOKEN_COST)))
    wb = openpyxl.load_workbook(path)
    for name, value in values.items():
        named_cell(wb, name).value = value
    wb.save(path)
    return path


def test_import_lists_the_changes_and_evaluates_with_them(tmp_path, cli):
    book = edited(tmp_path, {"alpha": 0.6, "hbm_bandwidth": 3.35})
    code, out, err = cli("import", book, "--plan", TOKEN_COST)
    assert code == 0, err
    assert "2 inputs in" in out and "alpha: 0.8 -> 0.6" in out and "hbm_bandwidth: 3 TB/s -> 3.35 TB/s" in out
    speedup = next(line for line in out.splitlines() if line.startswith("speedup "))
    assert "1.64686" in speedup  # the article's 1.6469 at alpha = 0.6


def test_import_json_and_unchanged(tmp_path, cli):
    import json

    book = edited(tmp_path, {"gamma": 6})
    code, out, _ = cli("import", book, "--plan", TOKEN_COST, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["workbook"]["changes"] == [
        {"name": "gamma", "cell": data["workbook"]["changes"][0]["cell"], "plan": 4.0, "workbook": 6.0, "unit": "",
         "scenario": None}]
    assert data["values"]["base"]["speedup"] == pytest.approx(2.4696, abs=5e-5)
    untouched = tmp_path / "same.xlsx"
    untouched.write_bytes(workbook_bytes(load(TOKEN_COST)))
    code, out, _ = cli("import", untouched, "--plan", TOKEN_COST)
    assert code == 0 and "every input in" in out and "matches the plan" in out


def test_import_keeps_scenario_values(tmp_path, cli):
    """The Inputs sheet holds the plan's own values; a scenario that sets the input keeps its own."""
    book = edited(tmp_path, {"bits_per_weight": 8})
    code, out, _ = cli("import", book, "--plan", TOKEN_COST, "--scenario", "base,bf16", "--format", "json")
    import json

    values = json.loads(out)["values"]
    assert values["base"]["weight_bytes"] == pytest.approx(70) and values["bf16"]["weight_bytes"] == pytest.approx(140)


@pytest.mark.parametrize("value, message", [
    (1.5, "constraint violated"),
    ("=0.5+0.1", "holds a formula with no saved value"),
    ("fast", "must be a number"),
    ("1/0", "must be a number"),  # text Fraction() would divide by zero
    (None, "is empty"),
])
def test_import_refuses_bad_cells(tmp_path, cli, value, message):
    book = edited(tmp_path, {"alpha": value})
    code, _, err = cli("import", book, "--plan", TOKEN_COST)
    assert code == 2 and message in err
    assert "Inputs!B" in err  # the cell is named


@pytest.mark.parametrize("target", [
    "Inputs!$B${row}:$B${next}",   # a range
    "Inputs!$B:$B",                # a whole column
    "Inputs!$B${row}*2",           # a formula over the cell
    "other_name",                  # another defined name
    "0.5",                         # a constant
    "'No such sheet'!$A$1",        # a sheet the workbook lacks
    "Inputs!$B${row})",            # text Excel would refuse, from another tool
    '"text',
    "Inputs!$B$0",                 # no row 0
])
def test_import_of_a_name_not_on_one_cell(tmp_path, cli, target):
    """A defined name edited to point anywhere but one cell is a clear error, not a crash."""
    book = edited(tmp_path, {})
    wb = openpyxl.load_workbook(book)
    _, coord = next(wb.defined_names["alpha"].destinations)
    row = int(coord.split("$")[-1])
    wb.defined_names["alpha"].attr_text = target.format(row=row, next=row + 1)
    wb.save(book)
    code, _, err = cli("import", book, "--plan", TOKEN_COST)
    assert code == 2 and "`alpha`" in err and "not one cell" in err, err


def test_import_of_a_workbook_without_a_name(tmp_path, cli):
    """An input the workbook does not name keeps the plan's value, and the output says so."""
    book = edited(tmp_path, {"gamma": 6})
    wb = openpyxl.load_workbook(book)
    del wb.defined_names["alpha"]
    wb.save(book)
    code, out, _ = cli("import", book, "--plan", TOKEN_COST)
    assert code == 0 and "gamma: 4 -> 6" in out
    assert "not in the workbook (the plan's values are used): alpha" in out


def test_import_of_something_else(tmp_path, cli):
    bad = tmp_path / "notes.xlsx"
    bad.write_text("not a workbook")
    code, _, err = cli("import", bad, "--plan", TOKEN_COST)
    assert code == 2 and "not an .xlsx workbook" in err


def test_a_closed_form_excel_cannot_express_falls_back_to_the_sheet(token_book):
    """A closed form with no Excel formula (here a LambertW) is solved in the sheet instead."""
    import dataclasses

    import sympy as sp

    from planner.outputs.excel.writer import Book, to_bytes
    from planner.questions.solve import Solver

    plan = load(TOKEN_COST)
    stmt = next(s for s in plan.model.solves if s.alias == "crossover_batch")
    real = Solver(plan).answer(stmt, "bf16")
    assert real.closed_form is not None
    odd = dataclasses.replace(real, closed_form=sp.LambertW(plan.symbols["gamma"]))
    book = Book(plan, solve_results=[odd])
    wb = openpyxl.load_workbook(io.BytesIO(to_bytes(book.build())))
    row = book.solve_index[(id(stmt), book.context("bf16").key)]

    def before_domain_check(cell: str) -> str:
        """The answer's formula: the Solve cell shows it only inside the target's domain."""
        guarded = wb["Solve"][cell].value
        ref = re.match(r"=IF\(IFERROR\(AND\((?:'Solve work'|Solve_work)!\$A\$(\d+)", guarded)
        assert ref is not None, guarded
        return wb["Solve work"][f"A{ref.group(1)}"].value

    assert before_domain_check(f"C{row}").startswith("=IF(") and "NA()" in before_domain_check(f"C{row}")
    assert "no Excel formula" in wb["Solve"][f"J{row}"].value
    # the other scenarios keep the closed form (a ceiling, written -INT(-(...)))
    other = book.solve_index[(id(stmt), book.context("int4_g128").key)]
    assert before_domain_check(f"C{other}").startswith("=-INT(-(")
    assert "#N/A outside the domain of batch" in wb["Solve"][f"J{other}"].value


# ---- which plan a workbook belongs to ---------------------------------------------------

def test_export_records_the_plan_it_came_from(small_book, token_book):
    props = {p.name: p.value for p in token_book[1].custom_doc_props}
    assert props["planner plan file"] == "token_cost.plan"
    assert props["planner plan title"] == "Per-token cost of a 70B dense model"
    assert re.fullmatch(r"sha256:[0-9a-f]{16}", props["planner inputs"])
    other = {p.name: p.value for p in small_book[1].custom_doc_props}
    assert other["planner plan file"] == "small.plan" and other["planner inputs"] != props["planner inputs"]


def test_import_refuses_a_workbook_exported_from_another_plan(tmp_path, cli):
    book = tmp_path / "small.xlsx"
    book.write_bytes(workbook_bytes(loads(SMALL, "small.plan")))
    code, out, err = cli("import", book, "--plan", TOKEN_COST)
    assert code == 2 and out == ""
    assert "small.plan" in err and "token_cost.plan" in err
    assert "`speed`" in err  # an input of the workbook the plan does not have
    assert "matches the plan" not in out + err


def test_import_refuses_a_workbook_that_names_none_of_the_plans_inputs(tmp_path, cli):
    book = tmp_path / "blank.xlsx"
    wb = openpyxl.Workbook()
    wb.active["A1"] = 1
    wb.save(book)
    code, out, err = cli("import", book, "--plan", TOKEN_COST)
    assert code == 2 and "none of the plan's" in err and "matches the plan" not in out


def test_import_warns_for_a_workbook_of_another_version_of_the_plan(tmp_path, cli):
    """Same input names, another file and title: accepted, with a warning naming both."""
    text = TOKEN_COST.read_text(encoding="utf-8").replace(
        'title "Per-token cost of a 70B dense model"', 'title "Token cost, draft 2"')
    book = tmp_path / "draft.xlsx"
    book.write_bytes(workbook_bytes(loads(text, str(tmp_path / "token_cost_draft.plan"), TOKEN_COST.parent)))
    code, out, err = cli("import", book, "--plan", TOKEN_COST)
    assert code == 0, err
    assert "warning" in out and "token_cost_draft.plan" in out and "Token cost, draft 2" in out
    assert "every input in" in out  # the values are still the plan's own
    import json

    code, out, _ = cli("import", book, "--plan", TOKEN_COST, "--format", "json")
    assert code == 0 and "token_cost_draft.plan" in json.loads(out)["workbook"]["warnings"][0]


def test_import_of_a_workbook_from_a_plan_with_fewer_inputs(tmp_path, cli, plan_file):
    """The plan gained an input since the export: the workbook's inputs all belong to it."""
    book = tmp_path / "small.xlsx"
    book.write_bytes(workbook_bytes(loads(SMALL, "small.plan")))
    grown = plan_file(SMALL + "extra = 1\n", "small.plan")
    code, out, err = cli("import", book, "--plan", grown)
    assert code == 0, err
    assert "not in the workbook (the plan's values are used): extra" in out
    shrunk = plan_file(SMALL.replace("a1 = 5\n", "").replace(" * a1", ""), "small.plan")
    code, _, err = cli("import", book, "--plan", shrunk)
    assert code == 2 and "`a1`" in err


SAAS = """unit USD
unit kUSD = 1000 USD
cac = {cac}
gp = 400 USD
payback = cac / gp
"""


def saas_book(tmp_path, cac: str, unit_cell=None) -> Path:
    book = tmp_path / "saas.xlsx"
    book.write_bytes(workbook_bytes(loads(SAAS.format(cac=cac), str(tmp_path / "saas.plan"))))
    if unit_cell is not None:
        wb = openpyxl.load_workbook(book)
        cell = named_cell(wb, "cac")
        wb["Inputs"].cell(row=cell.row, column=cell.column + 1).value = unit_cell
        wb.save(book)
    return book


def test_import_converts_a_value_in_another_unit_of_the_plan(tmp_path, cli):
    """Exported with cac = 6 kUSD; the plan now says 6000 USD: the workbook's 6 is 6 kUSD, not 6 USD."""
    book = saas_book(tmp_path, "6 kUSD")
    plan = tmp_path / "saas.plan"
    plan.write_text(SAAS.format(cac="6000 USD"), encoding="utf-8")
    code, out, err = cli("import", book, "--plan", plan)
    assert code == 0, err
    assert "every input in" in out and "matches the plan" in out
    assert "kUSD" in out and "Inputs!C" in out  # the conversion is reported, with the cell
    payback = next(line for line in out.splitlines() if line.startswith("payback "))
    assert " 15" in payback and "0.015" not in payback


def test_import_refuses_a_unit_of_another_dimension(tmp_path, cli):
    book = saas_book(tmp_path, "6 kUSD", unit_cell="s")
    (tmp_path / "saas.plan").write_text(SAAS.format(cac="6 kUSD"), encoding="utf-8")
    code, _, err = cli("import", book, "--plan", tmp_path / "saas.plan")
    assert code == 2 and "Inputs!C" in err and "`cac`" in err


def test_import_reads_edits_in_a_scenarios_column(tmp_path, cli):
    """fp8_e4m3 sets bits_per_weight = 8 on the Scenarios sheet; typing 4 there moves fp8_e4m3 only."""
    import json

    book = tmp_path / "book.xlsx"
    book.write_bytes(workbook_bytes(load(TOKEN_COST)))
    wb = openpyxl.load_workbook(book)
    ws = wb["Scenarios"]
    col = next(c.column for c in ws[4] if c.value == "fp8_e4m3")
    row = next(c.row for c in ws["B"] if c.value == "bits_per_weight")
    assert ws.cell(row=row, column=col).value == 8
    ws.cell(row=row, column=col).value = 4
    wb.save(book)
    code, out, err = cli("import", book, "--plan", TOKEN_COST, "--scenario", "base,fp8_e4m3", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["values"]["fp8_e4m3"]["weight_bytes"] == pytest.approx(35)  # 70B parameters at 4 bits
    assert data["values"]["base"]["weight_bytes"] == pytest.approx(140)  # the plan's own 16 bits
    (change,) = data["workbook"]["changes"]
    assert change["cell"].startswith("Scenarios!") and change["plan"] == 8 and change["workbook"] == 4
    code, out, _ = cli("import", book, "--plan", TOKEN_COST)
    assert "bits_per_weight (scenario fp8_e4m3): 8 bit -> 4 bit" in out
