"""What a finance reader sees without recalculating anything: cached values, number formats, the
Summary sheet, charts, print setup, the Solve sheet's labels and the names. (Engines recalculating
the same workbooks: test_excel_workbook.py.)"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest

from planner.outputs.excel.names import is_cell_like, is_valid
from planner.outputs.excel.writer import workbook_bytes
from planner.plan import load_compiled as load

ROOT = Path(__file__).resolve().parent.parent
PLANS = {"token_cost": ROOT / "sheets" / "token_cost.plan", "gpu_compare": ROOT / "sheets" / "gpu_compare.plan",
         "buy_vs_rent": ROOT / "tests" / "plans" / "buy_vs_rent.plan"}


@pytest.fixture(scope="module")
def books():
    out = {}
    for name, path in PLANS.items():
        data = workbook_bytes(load(path))
        out[name] = (data, openpyxl.load_workbook(io.BytesIO(data)),
                     openpyxl.load_workbook(io.BytesIO(data), data_only=True))
    return out


def formula_cells(wb):
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.data_type == "f":
                    yield ws, c


@pytest.mark.parametrize("name", PLANS)
def test_every_formula_cell_carries_a_cached_value(books, name):
    _, formulas, values = books[name]
    missing = [f"{ws.title}!{c.coordinate}" for ws, c in formula_cells(formulas)
               if values[ws.title][c.coordinate].value is None and ',"")' not in c.value]
    assert missing == []
    assert formulas.calculation.fullCalcOnLoad is True  # and every engine recalculates on opening


def test_cached_values_read_without_recalculating(books):
    """pandas-style reading (openpyxl data_only) sees the article's figures and the answers."""
    _, _, wb = books["token_cost"]
    model = {r[3].value: r[1].value for r in wb["Model"].iter_rows(min_row=4) if r[0].value}  # by identifier
    assert model["weight_bytes"] == 140 and model["batch1_weight_bound"] == pytest.approx(46.667, abs=5e-4)
    solve = {(r[0].value, r[1].value): r[2].value for r in wb["Solve"].iter_rows(min_row=4) if r[0].value}
    assert solve[("solve min batch where verify_is_compute_bound for all as crossover_batch", "bf16")] == 98
    _, _, bvr = books["buy_vs_rent"]
    model = {r[3].value: r[1].value for r in bvr["Model"].iter_rows(min_row=4) if r[0].value}
    assert model["payback"] == pytest.approx(31.438, abs=5e-4)  # 250 kUSD / 7.95204 kUSD a month


@pytest.mark.parametrize("name", PLANS)
def test_every_number_has_a_format_and_one_per_quantity_across_a_row(books, name):
    _, formulas, values = books[name]
    general = []
    for ws in formulas.worksheets:
        for row in ws.iter_rows():
            for c in row:
                v = values[ws.title][c.coordinate].value
                if isinstance(v, (int, float)) and not isinstance(v, bool) and c.number_format == "General":
                    general.append(f"{ws.title}!{c.coordinate}")
    assert general == []
    ws = formulas["Scenarios"]
    for row in ws.iter_rows(min_row=5):
        kinds = {c.number_format for c in row[3:] if c.value is not None}  # the scenario columns, from D
        assert len(kinds) <= 1, (row[0].value, kinds)


def test_a_percent_input_holds_the_fraction_as_excel_stores_a_typed_percentage(books):
    _, wb, _ = books["buy_vs_rent"]
    row = next(r for r in wb["Inputs"].iter_rows() if r[3].value == "utilization")  # by identifier (column D)
    cell = row[1]
    # 65 % is the cell 0.65 in Excel's own percent format: typing 65% there stores 0.65 again
    assert cell.value == 0.65 and cell.number_format == "#,##0.0#####%"  # 65.0%, and a typed 65.25% shows so
    assert row[2].value is None  # the format shows the %, the unit column does not repeat it
    rate = next(r for r in wb["Inputs"].iter_rows() if r[3].value == "discount_rate")
    assert rate[1].value == 0.08 and rate[1].number_format == "#,##0.0#####%" and rate[2].value == "/year"
    rent = next(r[1] for r in wb["Inputs"].iter_rows() if r[3].value == "rent_rate")
    assert rent.number_format == "#,##0.00####;[Red]-#,##0.00####"  # as written (2.49), and an edit's digits


def test_the_summary_comes_first_and_is_live(books):
    _, wb, values = books["token_cost"]
    assert wb.sheetnames[0] == "Summary"
    ws, cached = wb["Summary"], values["Summary"]
    assert ws["A1"].value == "Per-token cost of a 70B dense model"
    rows = {r[0].value: r for r in ws.iter_rows() if r[0].value}
    header = [c.value for c in rows["Figure"] if c.value]
    # the plan as written, then three scenarios: columns headed by their doc strings, their names below; then
    # the one the selector picks
    assert header == ["Figure", "Unit", "As written", "BF16 weights", "FP8 E4M3, per-row scales ignored",
                      "INT4 weight-only, group 128 (GPTQ/AWQ): 4 bits + 0.15 bit of scales", "Selected scenario"]
    names = [c.value for c in ws[rows["Figure"][0].row + 1] if c.value]
    assert names == ["bf16", "fp8_e4m3", "int4_g128"]
    weight = rows["Weights read once per step"]  # words first: the doc string, the name in its comment
    assert weight[0].comment.text == "weight_bytes"
    assert weight[2].value == "=weight_bytes" and cached[weight[2].coordinate].value == 140  # as written
    assert weight[3].value.startswith("=Scenarios!$D$") and cached[weight[3].coordinate].value == 140
    alpha = next(r for r in ws.iter_rows() if r[1].value == "alpha")
    # the value the selected scenario uses (the Inputs sheet's Selected column); the name links to the input
    assert alpha[2].value.startswith("=Inputs!$G$") and alpha[1].hyperlink.location.startswith("Inputs!B")
    # the answer as a statement, live over its Solve cell
    crossover = [r for r in ws.iter_rows() if str(cached[r[0].coordinate].value).startswith("Crossover batch: ")]
    assert [cached[r[0].coordinate].value for r in crossover] == [f"Crossover batch: {n}" for n in (98, 49, 26)]
    assert crossover[0][0].value.startswith('="Crossover batch: "&TEXT(Solve!$C$')
    assert crossover[0][0].comment.text.startswith("In the plan: solve min batch where")
    assert [cached[r[2].coordinate].value for r in crossover] == [98, 49, 26]
    assert all(r[2].value.startswith("=Solve!$C$") for r in crossover)
    status = next(r for r in ws.iter_rows() if r[0].value == "status")
    assert "COUNTIF(Checks!$G$4:" in status[1].value and cached[status[1].coordinate].value == "all hold"


def test_many_scenarios_are_rows_of_the_summary(books):
    _, wb, values = books["gpu_compare"]
    ws = wb["Summary"]
    header = next(r for r in ws.iter_rows() if r[0].value == "Scenario")
    labels = [ws.cell(r, 1).value for r in range(header[0].row + 2, header[0].row + 15)]
    # the plan as written, then twelve scenarios: one row each
    assert labels[0] == "as written" and labels[1] == "small/h100/bf16" and labels[-1] == "large/mi300x/int4"
    assert ws.cell(header[0].row + 15, 1).value is None
    # words first: the doc strings head the columns, the identifiers in their comments
    assert [c.comment.text if c.comment else c.value for c in header[1:5]] == [
        "step_time", "throughput", "memory_needed", "fits_one_gpu"]
    assert header[1].value == "Decode step at batch"  # the doc string without the report's code marks


def test_check_contexts_live_on_a_work_sheet_of_their_own(books):
    _, wb, _ = books["token_cost"]
    header = [c.value for c in wb["Scenarios"][3] if c.value]
    assert header[:3] == ["Quantity", "Name", "Unit"] and header[3].startswith("BF16")  # the scenario's doc string
    scenarios = [c.value for c in wb["Scenarios"][4][3:] if c.value]  # its name below, as the plan has it
    assert scenarios == ["bf16", "fp8_e4m3", "int4_g128"]
    contexts = [c.value for c in wb["Check contexts"][3][3:] if c.value]
    assert "base with alpha = 0.6" in contexts and all(" with " in c for c in contexts)


def charts(data: bytes) -> dict[str, list[str]]:
    """Sheet title -> the XML of each chart drawn on it."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
        workbook = z.read("xl/workbook.xml").decode()
        titles = re.findall(r'<sheet name="([^"]+)"', workbook)
        out = {}
        for i, title in enumerate(titles, start=1):
            rels = f"xl/worksheets/_rels/sheet{i}.xml.rels"
            if rels not in names:
                continue
            drawing = re.search(r'Target="../drawings/(drawing\d+\.xml)"', z.read(rels).decode())
            if not drawing:
                continue
            drels = z.read(f"xl/drawings/_rels/{drawing.group(1)}.rels").decode()
            out[title.replace("&amp;", "&")] = [z.read("xl/charts/" + c).decode()
                                                for c in re.findall(r'Target="../charts/(chart\d+\.xml)"', drels)]
        return out


def test_charts_a_person_can_read(books):
    data, _, _ = books["buy_vs_rent"]
    drawn = charts(data)
    one = drawn["Sweep 1 utilization"]
    assert len(one) == 3  # npv, payback, cost_buy: one chart each (a price near 1 beside NPVs in thousands)
    for xml in one:
        assert '<c:scatterStyle val="lineMarker"/>' in xml and "<c:marker>" in xml
        # words first: the x axis is the input's doc string; it shows 20%..100% (its column's format), so its
        # title does not repeat the %; the scenario
        assert ">share of hours the GPUs are busy<" in xml
        assert 'formatCode="#,##0%"' in xml and " — base" in xml
    assert ">Net present value of buying by share of hours the GPUs are busy — base<" in one[0]
    assert "net present value of buying (kUSD)" in one[0] and "months until the server has paid for itself (month)" \
        in one[1] and "owned, per million tokens (USD/Mtoken)" in one[2]
    # the break-even utilisation solves for the swept input in the base case: a dashed line on each chart
    for xml in one:
        assert xml.count("<c:ser>") == 2 and "Breakeven utilization (base)" in xml and 'val="dash"' in xml
    (grid,) = drawn["Sweep 2 utilization, rent_rate"]
    assert grid.count("<c:ser>") == 3  # one line per value of the second axis
    for value in ("1.65", "2.49", "3.5"):
        assert f"rent_rate = {value} USD/h" in grid


def test_charts_do_not_overlap(books):
    # A chart's box runs from its <from> to its <to> anchor, each a cell plus an offset into it; charts
    # in a row share their rows and sit side by side, so two boxes overlap only when both spans do.
    point = r"<xdr:col>(\d+)</xdr:col><xdr:colOff>(\d+)</xdr:colOff><xdr:row>(\d+)</xdr:row><xdr:rowOff>(\d+)</xdr:rowOff>"
    data, _, _ = books["buy_vs_rent"]
    seen = 0
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in z.namelist():
            if not name.startswith("xl/drawings/drawing"):
                continue
            xml = z.read(name).decode()
            boxes = []
            anchors = re.findall(rf"<xdr:from>{point}</xdr:from>\s*<xdr:to>{point}</xdr:to>", re.sub(r">\s+<", "><", xml))
            for a in anchors:
                c0, co0, r0, ro0, c1, co1, r1, ro1 = map(int, a)
                boxes.append((((c0, co0), (c1, co1)), ((r0, ro0), (r1, ro1))))
            assert boxes, name
            seen += len(boxes)
            for i, (xs, ys) in enumerate(boxes):
                for xs2, ys2 in boxes[i + 1:]:
                    apart = xs[1] <= xs2[0] or xs2[1] <= xs[0] or ys[1] <= ys2[0] or ys2[1] <= ys[0]
                    assert apart, (name, (xs, ys), (xs2, ys2))
    assert seen >= 4  # three sweep charts in a row and one more: the test looked at them


@pytest.mark.parametrize("name", PLANS)
def test_every_sheet_has_a_print_setup(books, name):
    _, wb, _ = books[name]
    for ws in wb.worksheets:
        setup = ws.page_setup
        if ws.sheet_properties.pageSetUpPr.fitToPage:  # one page wide, as many pages tall as it takes (or
            # one fewer, shrunk a little more)
            assert setup.fitToWidth in (1, None), ws.title  # (fitToHeight None: one page)
        else:  # too wide to print legibly on one page: at 60% or more on pages side by side, labels repeated
            assert int(setup.scale) >= 60 and ws.print_title_cols == "$A:$A", (ws.title, setup.scale)
        assert ws.print_area, ws.title
        assert "&A" in ws.oddHeader.right.text and ws.oddFooter.center.text, ws.title
    for title in ("Inputs", "Model", "Scenarios", "Solve", "Checks"):
        if title in wb.sheetnames:
            assert wb[title].print_title_rows, title  # the header row repeats on every page
    if name == "token_cost":
        assert wb["Checks"].page_setup.orientation == "landscape"


def test_headline_rows_are_highlighted_and_columns_fit(books):
    _, wb, _ = books["token_cost"]
    ws = wb["Model"]
    fills = {r[3].value: r[1].fill.fgColor.rgb for r in ws.iter_rows(min_row=4) if r[0].value}
    assert fills["batch_step_bound"].endswith("FFF2CC") and not str(fills["memory_time"]).endswith("FFF2CC")
    inputs = wb["Inputs"]
    labels = [r[0] for r in inputs.iter_rows(min_row=7) if r[0].value and r[1].value is not None]
    width = inputs.column_dimensions["A"].width  # fitted to the labels, narrowed (not below 18) to print
    assert width >= min(max(len(c.value) for c in labels), 18)  # legibly on one page: longer labels wrap
    assert all(c.alignment.wrap_text for c in labels if len(c.value) + 2 > width)
    units = max(len(r[2].value or "") for r in inputs.iter_rows(min_row=7))
    assert inputs.column_dimensions["C"].width >= units


def test_the_solve_sheet_labels_its_checks_and_keeps_notes_short(books):
    _, wb, values = books["token_cost"]
    ws, cached = wb["Solve"], values["Solve"]
    header = [c.value for c in ws[3]]
    check, value = header.index("Check") + 1, header.index("Check value") + 1
    labels = {cached.cell(r, 2).value: (cached.cell(r, check).value, cached.cell(r, value).value)
              for r in range(4, ws.max_row + 1) if str(ws.cell(r, 1).value).startswith("solve min batch")}
    assert labels["bf16"] == ("batch - 1 = 97 fails", True)  # n - 1 = 97 fails: TRUE
    assert ws.cell(6, check).value.startswith('="batch - 1 = "&')  # live: it follows the answer
    notes = [ws.cell(r, header.index("Notes") + 1).value for r in range(4, ws.max_row + 1)]
    for note in filter(None, notes):
        assert "\n" not in note and all(len(part) <= 110 for part in note.split("; ")), note


def test_closed_forms_are_in_display_units_and_split_into_named_parts(books):
    _, wb, _ = books["buy_vs_rent"]
    work = wb["Solve work"]
    parts = {n: d.attr_text for n, d in wb.defined_names.items() if ".part" in n}
    answers = [wb["Solve"].cell(r, 3).value for r in range(4, wb["Solve"].max_row + 1)]
    raw = [work[m.group(1)].value for a in answers if a for m in [re.search(r"'Solve work'!\$(A\$\d+)", a)] if m]
    texts = answers + raw + [work[t.split("!")[1].replace("$", "")].value for t in parts.values()]
    assert not any("31536000" in t or "2628000" in t for t in texts)  # no seconds per year or per month
    assert max(len(t) for t in texts) <= 600
    assert "gpus_for_100k.base.part1" in parts and all(t.startswith("'Solve work'!$B$") for t in parts.values())
    # the percent cell holds the fraction (8%/year is 0.08): the closed form uses it as it is
    assert any("discount_rate+1" in t for t in texts) and not any("discount_rate/100" in t for t in texts)


@pytest.mark.parametrize("name", PLANS)
def test_no_defined_name_begins_with_a_cell(books, name):
    _, wb, _ = books[name]
    for defined in wb.defined_names:
        assert is_valid(defined) and not any(is_cell_like(p) for p in defined.split(".")[:-1]), defined
    if name == "gpu_compare":
        assert "h100_.hbm_bandwidth" in wb.defined_names and "mi300x.hbm_bandwidth" in wb.defined_names


CROSSING = """
unit USD
unit kUSD = 1000 USD
use = 60% "share of hours in use" where 0% < use <= 100%
own = 2000 kUSD + 0 kUSD * use "present cost of owning"
rent = 4000 kUSD * use "present cost of renting"
sweep use in 20%..100% step 20% show own, rent
solve use where own = rent as breakeven_use
"""


def test_a_sweep_of_two_figures_in_one_unit_is_one_chart_where_they_cross():
    from planner.outputs.excel.writer import Book, to_bytes
    from planner.plan import loads_compiled as loads

    data = to_bytes(Book(loads(CROSSING, "crossing.plan")).build())
    (chart,) = charts(data)["Sweep 1 use"]
    assert chart.count("<c:ser>") == 3  # own and rent, on one chart, and the break-even where they cross
    assert "Breakeven use (base)" in chart and 'val="dash"' in chart
    assert "present cost of owning" in chart and "present cost of renting" in chart  # the legend: doc strings
    assert 'formatCode="#,##0"' in chart  # money axis with thousands separators


def test_working_sheets_come_last_and_print_only_their_first_rows(books):
    data, wb, _ = books["buy_vs_rent"]
    work = [ws.title for ws in wb.worksheets if ws.sheet_properties.tabColor is not None]
    assert work and wb.sheetnames[-len(work):] == work  # after every reader's sheet
    for title in work:
        area = wb[title].print_area
        last = int(str(area).rsplit("$", 1)[-1])
        assert last <= 12, (title, area)


@pytest.mark.parametrize("name", PLANS)
def test_each_header_sits_over_its_own_figures(books, name):
    """A header over a column of figures is aligned right, as the figures are (a left header over a right
    figure reads as the next column's); a header over words stays left."""
    _, wb, values = books[name]
    ws = wb["Summary"]
    headers = [c for row in ws.iter_rows() for c in row if c.value in ("Value", "Holds", "Unit", "Scenario",
                                                                         "Selected scenario", "Answer")]
    assert headers
    for c in headers:
        below = values["Summary"].cell(c.row + 1, c.column).value
        if below is None or ws.cell(c.row + 1, 1).value is None:  # past the scenarios' names under their doc strings
            below = values["Summary"].cell(c.row + 2, c.column).value
        figure = isinstance(below, (int, float))  # TRUE/FALSE and numbers alike
        assert (c.alignment.horizontal == "right") == figure, (c.coordinate, c.value, below)
    if name != "gpu_compare":  # a plan with questions: the Answers table's Value and Holds over their figures
        value = next(c for c in headers if c.value == "Value")
        holds = next(c for c in headers if c.value == "Holds")
        assert value.alignment.horizontal == holds.alignment.horizontal == "right"


def test_rows_read_in_words_with_the_identifier_beside(books):
    """Words first: a row's label is the quantity's doc string (capitalised), its identifier in a small grey
    column beside it (Inputs and Model: D; Scenarios: B), where import and the write-back find the row."""
    _, wb, _ = books["token_cost"]
    inputs = {r[3].value: r for r in wb["Inputs"].iter_rows() if r[3].value}
    assert inputs["Name"][0].value == "Input"  # the header row
    assert inputs["hbm_bandwidth"][0].value == "Peak HBM bandwidth"
    assert inputs["hbm_bandwidth"][3].font.color.rgb.endswith("7F7F7F")
    model = {r[3].value: r for r in wb["Model"].iter_rows() if r[3].value}
    assert model["weight_bytes"][0].value == "Weights read once per step"
    # the report's code marks are not a reader's words: "plain decode step at `batch`" reads without them
    assert model["batch_step_bound"][0].value == "Plain decode step at batch"
    summary = [c.value for row in wb["Summary"].iter_rows() for c in row if isinstance(c.value, str)]
    assert "Plain decode step at batch" in summary and not any("`" in t for t in summary)
    scenarios = {r[1].value: r for r in wb["Scenarios"].iter_rows(min_row=5) if r[1].value}
    assert scenarios["context_tokens"][0].value == "Tokens of context per sequence"
    assert scenarios["context_tokens"][2].value == "token"  # the unit in C
    assert wb["Scenarios"]["D3"].value == "BF16 weights" and wb["Scenarios"]["D4"].value == "bf16"


def test_a_question_with_no_answer_is_a_finding_not_a_failure(tmp_path):
    """A scenario where a solve has no root showed `Holds 0` and a red FAILS on the Summary and the Solve
    sheet, the reason cut off in the Unit column: it reads "no answer", the reason on the Solve row."""
    from planner.cli import main

    plan = tmp_path / "p.plan"
    plan.write_text('x = 2 where 0 <= x <= 10\nk = 5\ny = x * 3\nscenario s2 { k = 100 }\n'
                    'solve x where y = k for base, all as reach\n', encoding="utf-8")
    book = tmp_path / "p.xlsx"
    assert main(["export", str(plan), "-o", str(book)]) == 0
    wb = openpyxl.load_workbook(book)
    solve = [r for r in wb["Solve"].iter_rows(values_only=True) if r[0] and str(r[0]).startswith("solve x")]
    s2 = next(r for r in solve if r[1] == "s2")
    assert s2[4] is None and s2[5] == "no answer" and "no `x` in [0, 10] makes `y = k` hold" in s2[9]
    summary = [r for r in wb["Summary"].iter_rows() if r[1].value == "s2"]
    assert summary[0][5].value == "no answer" and "makes `y = k` hold" in summary[0][5].comment.text
    assert summary[0][3].value is None and summary[0][4].value is None  # no reason cut off, no Holds 0
    assert not any("FAILS" in str(c.value) for r in summary for c in r)


def test_the_summary_says_which_figures_are_live(books):
    """Its first sentence is true: every answer of token_cost is a live formula; gpu_buy_vs_rent's
    break-evens are planner's values at export (a `first` over a range of months), and it says so."""
    def sentence(wb):
        return next(c.value for r in wb["Summary"].iter_rows(max_row=6) for c in r
                    if isinstance(c.value, str) and c.value.startswith("Every figure"))

    _, wb, _ = books["token_cost"]
    assert sentence(wb).startswith("Every figure here is live: edit the orange cells")
    rent = openpyxl.load_workbook(io.BytesIO(workbook_bytes(load(ROOT / "examples" / "gpu_buy_vs_rent.plan"))))
    said = sentence(rent)
    assert said.startswith("Every figure here is live except the 5 answers planner found at export") \
        and "re-run planner" in said, said
    solve = rent["Solve"]
    fixed = [r for r in rent["Summary"].iter_rows() if str(r[2].value).startswith("=Solve!$C$")
             and solve["C" + r[2].value.split("$")[-1]].data_type == "n"]
    assert fixed  # the answers it means are on the Summary


def test_the_summary_says_a_scenarios_figure_that_reduces_a_series_is_planners(tmp_path):
    """A scenario's column of a figure that reduces a series holds planner's figure at export (the Months
    sheet computes the base case and the selected scenario only); the Summary read "Every figure here is live"
    above such a column (saas_growth's no_loan, slow_hiring and high_churn headlines). Without a series, every
    figure is live and it says so."""
    from planner.plan import loads_compiled

    text = ("unit USD\nperiods = 1 month..12 month\nstart = 100 USD\nburn = 10 USD\n"
            "series cash = previous(cash, start) - burn -> USD\nlowest = {} -> USD \"lowest cash\" [headline]\n"
            "scenario dear {{ burn = 20 USD }}\n")

    def summary(plan_text):
        wb = openpyxl.load_workbook(io.BytesIO(workbook_bytes(loads_compiled(plan_text, name="s.plan"))))
        said = next(c.value for r in wb["Summary"].iter_rows(max_row=6) for c in r
                    if isinstance(c.value, str) and c.value.startswith("Every figure"))
        return wb, said

    wb, said = summary(text.format("min(cash)"))
    dear = next(r for r in wb["Summary"].iter_rows() if r[0].value == "Lowest cash")[3].value
    sheet, cell = dear[1:].split("!")
    assert wb[sheet][cell.replace("$", "")].data_type == "n"  # planner's figure, not a formula
    assert said.startswith("Every figure here is live except, in the scenarios' columns, the figures that "
                           "reduce a series"), said
    assert "Selected scenario" in said, said
    _, said = summary(text.format("start - 12 * burn"))
    assert said.startswith("Every figure here is live: edit the orange cells"), said
