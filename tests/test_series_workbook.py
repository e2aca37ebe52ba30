"""Series over periods in the workbook: the sheet of periods (a row of live formulas per series, a column
per period) and the Model sheet's reductions over its rows, recalculated by LibreOffice and Gnumeric
after every cached value is poisoned, as written and with an input typed in; each cell against
planner's own figure (tests/test_series.py checks those against month-by-month scripts)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import openpyxl
import pytest
from excel_recalc import POISON, gnumeric_recalculate, poison, recalculate, require_gnumeric, require_soffice

from planner.compute.evaluation import load, loads
from planner.outputs.excel.book import SELECTED, scale_of
from planner.outputs.excel.writer import Book, to_bytes

ROOT = Path(__file__).resolve().parent.parent
PLANS = [ROOT / "tests/plans/series_60_months.plan", ROOT / "examples/support_backlog.plan",
         ROOT / "examples/grain_silo.plan", ROOT / "tests/plans/series_gpu_cluster.plan"]


def doc_examples() -> list[str]:
    """The worked examples of docs/language.md's "Series over periods" (a loan, headcount, a warehouse...)."""
    text = (ROOT / "docs/language.md").read_text(encoding="utf-8")
    return [b for b in re.findall(r"```plan\n(.*?)```", text, re.S) if "periods" in b and "series" in b]


def export(plan, path: Path) -> Book:
    book = Book(plan)
    path.write_bytes(to_bytes(book.build()))
    return book


def close(got, want, what: str) -> None:
    if isinstance(want, bool):
        assert got in (want, int(want)), f"{what}: {got!r} != {want!r}"
        return
    assert isinstance(got, (int, float)) and got != POISON, f"{what}: {got!r} (want {want!r})"
    assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9), f"{what}: {got!r} != {want!r}"


def compare(plan, book: Book, wb, overrides=None, scenario=None) -> int:
    """Every series' cell and every reduction against planner's figures; how many were compared.
    ``scenario``: the one the Summary selects (its rows and the Model sheet's Selected column)."""
    ev = plan.evaluate(scenario, overrides or {})
    ws = wb[book.periods_sheet.title]
    p = book.periods if scenario is None else book.periods_selected
    column = 2 if scenario is None else SELECTED
    n = 0
    for name, row in p.rows.items():
        q = plan.model.quantities[name]
        values = ev.series[name]
        assert len(values) == p.count
        for j, v in enumerate(values.tolist()):
            want = bool(v) if q.is_bool else v / float(scale_of(q))
            close(ws.cell(row, p.first + j).value, want, f"{name} in period {j + 1}")
            n += 1
        for b in book.period_blocks if not q.is_bool else []:  # months: each whole quarter and year
            rule = ws.cell(row, p.first + p.count + 1).value
            assert rule in ("at the end", "total", "average")
            for k, label in enumerate(b.labels):
                assert ws.cell(p.header - 1, b.col + k).value == label
                months = values[b.size * k:b.size * (k + 1)] / float(scale_of(q))
                want = months[-1] if rule == "at the end" else months.mean() if rule == "average" else months.sum()
                close(ws.cell(row, b.col + k).value, float(want), f"{name} in {label} ({rule})")
                n += 1
    for name, row in book.model_rows.items():
        q = plan.model.quantities[name]
        got = wb["Model"].cell(row, column).value
        if ev.is_never(name):
            assert got == "#N/A", f"{name}: never is #N/A, got {got!r}"
        else:
            v = ev.values[name]
            close(got, bool(v) if q.is_bool else float(v) / float(scale_of(q)), name)
        n += 1
    return n


def books_path(books: dict, book: Book) -> Path:
    return next(path for _, b, path in books.values() if b is book)


def working_rows_held_as_computed(book: Book, held, computed) -> None:
    """The working rows (what a count, a first ... where, a reduction of an expression reduces): the values
    the file stores before any recalculation are the engine's (a preview shows them, never blanks)."""
    p = book.periods
    title = book.periods_sheet.title
    last = max(p.rows.values())
    rows = [r for r in range(last + 3, held[title].max_row + 1) if held[title].cell(r, 1).value]  # labelled
    assert rows or book.periods_selected is not None or last + 3 > held[title].max_row
    for r in rows:
        for col in range(p.first, p.first + p.count):
            a, b = held[title].cell(r, col).value, computed[title].cell(r, col).value
            a, b = (None if a == "" else a), (None if b == "" else b)
            if a is None or b is None:
                assert a is None and b is None, f"row {r}, column {col}: held {a!r}, computed {b!r}"
            else:
                close(b, float(a), f"row {r}, column {col}")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    require_soffice()
    tmp = tmp_path_factory.mktemp("seriesbook")
    out = {}
    for path in PLANS:
        plan = load(path)
        target = tmp / (path.stem + ".xlsx")
        out[path.stem] = (plan, export(plan, target), target)
    for k, text in enumerate(doc_examples(), start=1):
        plan = loads(text, name=str(tmp / f"language_{k}.plan"))
        target = tmp / f"language_{k}.xlsx"
        out[f"language_{k}"] = (plan, export(plan, target), target)
    assert len(out) >= 7
    return tmp, out


def test_the_cached_values_are_planners(exported):
    _, books = exported
    for plan, book, path in books.values():
        assert compare(plan, book, openpyxl.load_workbook(path, data_only=True)) > 10


def test_months_have_a_column_per_quarter_and_per_year(exported):
    """60 months: twenty quarters, then five years; cash (a balance) at each one's end, revenue (a flow)
    its total, each a formula over the months' cells."""
    _, books = exported
    plan, book, path = books["series_60_months"]
    quarters, years = book.period_blocks
    assert (quarters.word, len(quarters.labels), years.word, len(years.labels)) == ("quarter", 20, "year", 5)
    ws = openpyxl.load_workbook(path)["Months"]
    p = book.periods
    end = p.first + p.count  # months in C..BJ, an empty column (BK), the rule's (BL), then the quarters
    assert ws.cell(4, end + 1).value == "Per quarter, year"
    assert [ws.cell(4, end + 2 + k).value for k in (0, 1, 4, 19)] == ["Y1 Q1", "Y1 Q2", "Y2 Q1", "Y5 Q4"]
    assert ws.cell(4, end + 22).value is None and ws.cell(4, end + 23).value == "Year 1"
    cash, revenue = p.rows["cash"], p.rows["revenue"]
    assert (ws.cell(cash, end + 1).value, ws.cell(revenue, end + 1).value) == ("at the end", "total")
    assert ws.cell(cash, end + 2).value == f"=E{cash}"  # month 3 (column E)
    assert ws.cell(revenue, end + 3).value == f"=SUM(F{revenue}:H{revenue})"  # months 4 to 6
    assert ws.cell(cash, end + 24).value == f"=Z{cash}"  # month 24 (column Z)
    assert ws.cell(revenue, end + 23).value == f"=SUM(C{revenue}:N{revenue})"  # months 1 to 12


def test_twelve_months_have_quarters(exported):
    """The backlog plan's 12 months: four quarters (Q1..Q4), no year column (it would be the total)."""
    _, books = exported
    plan, book, path = books["support_backlog"]
    (quarters,) = book.period_blocks
    assert quarters.labels == ("Q1", "Q2", "Q3", "Q4")
    ws = openpyxl.load_workbook(path)["Months"]
    backlog, payroll = book.periods.rows["backlog"], book.periods.rows["payroll"]
    assert [ws.cell(backlog, quarters.col + k).value for k in range(4)] == [f"={c}{backlog}" for c in "EHKN"]
    assert ws.cell(payroll, quarters.col + 3).value == f"=SUM(L{payroll}:N{payroll})"


def test_the_summary_links_each_headline_series_to_its_row(exported):
    _, books = exported
    plan, book, path = books["series_60_months"]
    ws = openpyxl.load_workbook(path)["Summary"]
    links = {c.value: c.hyperlink.location for row in ws.iter_rows() for c in row if c.hyperlink is not None}
    assert links["Cash, month by month"] == f"Months!A{book.periods.rows['cash']}"  # cash is [headline]


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_every_period_recalculates_to_planners_figure(exported, engine):
    tmp, books = exported
    work = tmp / engine
    work.mkdir(exist_ok=True)
    poisoned = []
    for plan, book, path in books.values():
        copy = work / path.name
        copy.write_bytes(path.read_bytes())
        assert poison(copy) > 10
        poisoned.append(copy)
    if engine == "gnumeric":
        require_gnumeric()
        done = gnumeric_recalculate(poisoned, work)
    else:
        done = recalculate(poisoned, work)
    for (plan, book, _), copy in zip(books.values(), poisoned):
        wb = openpyxl.load_workbook(done[copy], data_only=True)
        assert compare(plan, book, wb) > 10
        working_rows_held_as_computed(book, openpyxl.load_workbook(books_path(books, book), data_only=True), wb)
        status = [c.value for row in wb["Checks"].iter_rows() for c in row if c.value in ("holds", "FAILS")]
        assert status and set(status) == {"holds"}, f"{copy.name}: every check of the plan holds in the sheet"
        if "Charts" in book.sheetnames:  # the engine read each chart and saved it again, over the same rows
            drawn = chart_xml(books_path(books, book)).get("Charts", [])
            kept = " ".join(chart_xml(done[copy]).get("Charts", [])).replace("'", "")
            refs = [r for xml in drawn for r in re.findall(r"<c:f>([^<]+)</c:f>", xml)]
            assert drawn and all(r in kept for r in refs), f"{copy.name}: the charts' rows after {engine}"


def test_an_edited_input_moves_every_month(exported):
    """Starting cash typed into the Inputs sheet: every month and every figure as `planner eval --set`."""
    tmp, books = exported
    plan, book, path = books["series_60_months"]
    wb = openpyxl.load_workbook(path)
    sheet, coord = next(wb.defined_names[book.names["start_cash"]].destinations)
    wb[sheet][coord.replace("$", "")].value = 20  # kUSD: the bank is overdrawn in some months now
    edited = tmp / "edited.xlsx"
    wb.save(edited)
    poison(edited)
    work = tmp / "edited"
    work.mkdir(exist_ok=True)
    done = recalculate([edited], work)
    overrides = {"start_cash": plan.parse_override("start_cash=20 kUSD")[1]}
    ev = plan.evaluate(None, overrides)
    assert not ev.is_never("first_negative")  # the edit matters: a month is overdrawn
    assert compare(plan, book, openpyxl.load_workbook(done[edited], data_only=True), overrides) > 50


def test_the_selected_scenario_drives_its_rows(tmp_path):
    """A scenario picked on the Summary: the reader's rows and the Model sheet's Selected column follow it;
    the base case's rows (which the Value column reduces) stay as the Inputs sheet has them."""
    require_soffice()
    text = (ROOT / "tests/plans/series_60_months.plan").read_text(encoding="utf-8")
    text += '\nscenario lean "less cash at the start" { start_cash = 20 kUSD }\n'
    path = tmp_path / "scenario.plan"
    path.write_text(text, encoding="utf-8")
    plan = load(path)
    book = export(plan, tmp_path / "exported.xlsx")
    assert book.periods_selected is not None
    wb = openpyxl.load_workbook(tmp_path / "exported.xlsx")
    sheet, coord = next(wb.defined_names["SelectedScenario"].destinations)
    wb[sheet][coord.replace("$", "")].value = "lean"
    picked = tmp_path / "lean.xlsx"
    wb.save(picked)
    poison(picked)
    done = recalculate([picked], tmp_path / "work")
    got = openpyxl.load_workbook(done[picked], data_only=True)
    assert plan.evaluate("lean").values["low_cash"] != plan.evaluate(None).values["low_cash"]  # it matters
    assert compare(plan, book, got, scenario="lean") > 50
    assert compare(plan, book, got) > 50


QUARTERS = """
unit USD
unit quarter = 3 month
periods = 1 quarter..8 quarter
series price = [10 USD, 10 USD, 12 USD] "the price each quarter (the last holds on)"
series sold  = 100 then previous * 1.1
series sales = price * sold
total        = sum(sales)
"""


def test_a_table_of_values_is_a_row_of_input_cells(tmp_path):
    """`series price = [...]`: input cells an analyst edits; the last one holds on. Quarter 3's price typed
    as 20 USD: quarters 3 to 8 sell at 20, the total by hand is 10 (100 + 110) + 20 (121 + ... + 100 * 1.1^7)."""
    require_soffice()
    plan = loads(QUARTERS, name=str(tmp_path / "quarters.plan"))
    book = export(plan, tmp_path / "quarters.xlsx")
    assert book.periods_sheet.title == "Quarters"
    row = book.periods.rows["price"]
    cells = [book.periods_sheet.at(row, book.periods.first + j) for j in range(8)]
    assert [c.kind for c in cells[:3]] == ["number"] * 3 and [c.value for c in cells[:3]] == [10, 10, 12]
    assert all(c.kind == "formula" for c in cells[3:])  # =E6, =F6 ...: the last value holds on
    wb = openpyxl.load_workbook(tmp_path / "quarters.xlsx")
    wb["Quarters"].cell(row, book.periods.first + 2).value = 20
    wb.save(tmp_path / "edited.xlsx")
    poison(tmp_path / "edited.xlsx")
    done = recalculate([tmp_path / "edited.xlsx"], tmp_path / "work")
    got = openpyxl.load_workbook(done[tmp_path / "edited.xlsx"], data_only=True)
    sold = [100 * 1.1 ** k for k in range(8)]
    want = 10 * (sold[0] + sold[1]) + 20 * sum(sold[2:])
    assert math.isclose(got["Model"].cell(book.model_rows["total"], 2).value, want, rel_tol=1e-12)
    assert [got["Quarters"].cell(row, book.periods.first + j).value for j in range(8)] == [10, 10] + [20] * 6


def test_a_question_over_a_series_is_planners_answer_said_so(tmp_path):
    """A solve's condition or a maximize's objective that reduces a series: planner's answer, said so (the
    rows compute the inputs as they are, not a trial value); the workbook is written."""
    text = (ROOT / "tests/plans/series_60_months.plan").read_text(encoding="utf-8")
    text += "maximize end_cash over production in 300 pallet..900 pallet step 50 pallet\n"
    plan = loads(text, name=str(tmp_path / "opt.plan"))
    export(plan, tmp_path / "opt.xlsx")
    ws = openpyxl.load_workbook(tmp_path / "opt.xlsx")["Solve"]
    rows = {ws.cell(r, 1).value: r for r in range(4, ws.max_row + 1) if ws.cell(r, 1).value}
    for question in ("solve start_cash where low_cash = 0 USD as needed_start",
                     "maximize end_cash over production in 300 pallet..900 pallet step 50 pallet"):
        r = rows[question]
        assert "planner's answer, not live" in ws.cell(r, 10).value
        assert isinstance(ws.cell(r, 3).value, (int, float))


def chart_xml(path: Path) -> dict[str, list[str]]:
    """Sheet title -> the XML of each chart drawn on it (read from the file's parts, as Excel reads them)."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        titles = re.findall(r'<sheet name="([^"]+)"', z.read("xl/workbook.xml").decode())
        out = {}
        for i, title in enumerate(titles, start=1):
            rels = f"xl/worksheets/_rels/sheet{i}.xml.rels"
            drawing = re.search(r'Target="../drawings/(drawing\d+\.xml)"', z.read(rels).decode()) \
                if rels in names else None
            if drawing:
                drels = z.read(f"xl/drawings/_rels/{drawing.group(1)}.rels").decode()
                out[title] = [z.read("xl/charts/" + c).decode()
                              for c in re.findall(r'Target="../charts/(chart\d+\.xml)"', drels)]
        return out


def test_a_line_chart_per_headline_series_reads_its_row(exported):
    """`cash` is [headline]: one line chart on the Charts sheet after Months, its values cash's row over the
    60 months (C to BJ), its categories the periods' row, its axes titled with the units: live, so an edited
    input redraws it."""
    _, books = exported
    plan, book, path = books["series_60_months"]
    names = openpyxl.load_workbook(path).sheetnames
    assert names.index("Charts") == names.index("Months") + 1
    (xml,) = chart_xml(path)["Charts"]
    row = book.periods.rows["cash"]
    assert "<c:scatterChart>" in xml  # the periods on a value axis: a label every 6 months, 0 to 60
    assert re.search(r'<c:majorUnit val="6"/>', xml) and '<c:max val="60"/>' in xml and '<c:min val="0"/>' in xml
    assert "tickLblSkip" not in xml  # LibreOffice ignores it: 60 labels ran together
    assert '<c:crosses val="min"/>' in xml  # the months along the bottom, below a negative balance, in every engine
    assert re.findall(r"<c:f>([^<]+)</c:f>", xml) == ["Months!$C$5:$BJ$5", f"Months!${'C'}${row}:$BJ${row}"]
    assert ">Cash, month by month<" in xml and ">kUSD<" in xml and ">Month<" in xml
    # the backlog plan's headline series: the open tickets, in tickets, over its 12 months
    plan, book, path = books["support_backlog"]
    (xml,) = chart_xml(path)["Charts"]
    row = book.periods.rows["backlog"]
    assert re.findall(r"<c:f>([^<]+)</c:f>", xml) == ["Months!$C$5:$N$5", f"Months!$C${row}:$N${row}"]
    assert ">Open tickets at the month's end, month by month<" in xml and ">ticket<" in xml
    assert '<c:majorUnit val="1"/>' in xml and '<c:min val="1"/>' in xml and '<c:max val="12"/>' in xml


def test_with_scenarios_the_chart_draws_the_selected_and_the_base_case(tmp_path):
    text = (ROOT / "tests/plans/series_60_months.plan").read_text(encoding="utf-8")
    text += '\nscenario lean "less cash at the start" { start_cash = 20 kUSD }\n'
    plan = loads(text, name=str(tmp_path / "scenario.plan"))
    book = export(plan, tmp_path / "scenario.xlsx")
    (xml,) = chart_xml(tmp_path / "scenario.xlsx")["Charts"]
    selected, base = book.periods_selected.rows["cash"], book.periods.rows["cash"]
    assert re.findall(r"<c:f>([^<]+)</c:f>", xml)[1::2] == [f"Months!$C${selected}:$BJ${selected}",
                                                             f"Months!$C${base}:$BJ${base}"]
    assert "(the selected scenario)" in xml and "(base case)" in xml
    assert "plotVisOnly" not in xml  # not visible cells only: the base case's rows are folded (hidden)


def test_the_months_print_in_full_with_their_labels_on_every_page(exported):
    """Printed by LibreOffice: 60 months, 20 quarters and 5 years on pages side by side, each page headed
    by the periods and the series' names and units (repeated), every period on some page; the charts on
    their own page."""
    from excel_recalc import pdf_pages

    tmp, books = exported
    plan, book, path = books["series_60_months"]
    pages = pdf_pages([path], tmp / "print")[path]
    months = [page for page in pages if page[0].endswith("Months")]
    assert 2 <= len(months) <= 10
    assert all(any(re.match(r"Series\s+Unit\s", line) for line in page) for page in months)  # names, units
    heads = " ".join(" ".join(page) for page in months)
    for label in [f"Month {k}" for k in range(1, 61)] + ["Y1 Q1", "Y5 Q4", "Year 1", "Year 5"]:
        assert re.search(re.escape(label) + r"(?!\d)", heads), label
    assert sum(page[0].endswith("Charts") for page in pages) == 1


def test_a_share_per_quarter_is_its_average_not_its_total(tmp_path):
    """`utilisation = used / gpus -> %` added up over a quarter read 229% (78% + 82% + 69%): a series shown in
    percent is averaged over each quarter and year; a flow is still added up and a level read at the end.
    A count of GPUs busy (`min(demand, gpus)`) and a price list were added up too: averaged now."""
    text = ("periods = 1 month..12 month\nseries demand = 50 then previous * 1.1\nseries gpus = 64 then previous + 8\n"
            "series used = min(demand, gpus)\nseries utilisation = used / gpus -> %\n"
            "series price = [2 USD, 2 USD, 2.5 USD] \"a price list\"\nseries bought = if(used > 60, 8, 0)\n"
            "unit USD\nunit bag\nseries sold = used * 3 bag\nseries rent = 600 USD/month\nseries fee = 2 USD/bag\n")
    plan = loads(text, name=str(tmp_path / "share.plan"))
    book = export(plan, tmp_path / "share.xlsx")
    ws = openpyxl.load_workbook(tmp_path / "share.xlsx")["Months"]
    p, quarters = book.periods, book.period_blocks[0]
    share, used, gpus = p.rows["utilisation"], p.rows["used"], p.rows["gpus"]
    rule = p.first + p.count + 1
    rules = {n: ws.cell(r, rule).value for n, r in p.rows.items()}
    # a count of GPUs busy (a stock's value), a price list, a price per bag: averaged, as a share is; what
    # accumulates (GPUs bought, bags sold, money a month) added up; a level at the end
    assert rules == {"demand": "at the end", "gpus": "at the end", "used": "average", "utilisation": "average",
                     "price": "average", "bought": "total", "sold": "total", "rent": "total", "fee": "average"}
    assert ws.cell(p.rows["used"], quarters.col).value == f"=AVERAGE(C{used}:E{used})"
    assert ws.cell(share, quarters.col).value == f"=AVERAGE(C{share}:E{share})"
    held = openpyxl.load_workbook(tmp_path / "share.xlsx", data_only=True)["Months"]  # the value the file holds
    want = (50 / 64 + 55 / 72 + 60.5 / 80) / 3  # months 1 to 3, by hand
    assert math.isclose(held.cell(share, quarters.col).value, want, rel_tol=1e-12)  # a percent cell holds 0.78


def test_a_percentage_shows_two_decimals_on_the_months_sheet_and_holds_every_digit(exported):
    """The GPU cluster's utilisation (used / gpus) in month 1 is 50 / 64 = 78.125 %: its cell holds 0.78125 and
    shows 78.13% (two decimals, where six significant digits of its 48 months gave 78.1250%); its quarters
    likewise; a series in GPUs keeps its own style."""
    _, books = exported
    plan, book, path = books["series_gpu_cluster"]
    ws = openpyxl.load_workbook(path, data_only=True)["Months"]
    p = book.periods
    row = p.rows["utilisation"]
    first, quarter = ws.cell(row, p.first), ws.cell(row, book.period_blocks[0].col)
    assert first.value == 50 / 64 and first.number_format == "#,##0.00%"
    assert math.isclose(quarter.value, (50 / 64 + 52.5 / 64 + 55.125 / 80) / 3, rel_tol=1e-12)
    assert quarter.number_format == "#,##0.00%"
    assert ws.cell(p.rows["demand"], p.first).number_format == "#,##0.0000"  # 52.5, 55.125, 57.88125 ...


def test_a_stock_carried_over_through_another_series_is_read_at_the_quarters_end(tmp_path):
    """The roastery's shelf does not read its own month before: `on_hand = previous(shelf) + roast` does. It is
    still a stock (what the month before left on the shelf), so its quarter is the quarter's last month, not the
    sum of three months' shelves. Sales read a month late stay a flow; a flow per month by its unit is added up
    even where it grows from its month before. By hand: roast 100, sales 80 a month, so the shelf holds 20, 40,
    60 bags; receipts are 0, 80, 80 (160 a quarter); orders 50, 75, 112.5 bag/month (237.5)."""
    text = ("unit bag\nperiods = 1 month..6 month\nroast = 100 bag\nroom = 150 bag\ndemand = 80 bag\n"
            "series on_hand = previous(shelf, 0 bag) + roast\nseries sold = min(demand, on_hand)\n"
            "series shelf = min(room, on_hand - sold)\nseries receipts = previous(sold, 0 bag)\n"
            "series orders = 50 bag/month then previous * 1.5\n")
    plan = loads(text, name=str(tmp_path / "shelf.plan"))
    book = export(plan, tmp_path / "shelf.xlsx")
    ws = openpyxl.load_workbook(tmp_path / "shelf.xlsx")["Months"]
    held = openpyxl.load_workbook(tmp_path / "shelf.xlsx", data_only=True)["Months"]
    p, q1 = book.periods, book.period_blocks[0].col
    rules = {n: ws.cell(r, p.first + p.count + 1).value for n, r in p.rows.items()}
    assert {n: rules[n] for n in ("shelf", "sold", "receipts", "orders")} == {
        "shelf": "at the end", "sold": "total", "receipts": "total", "orders": "total"}
    shelf = p.rows["shelf"]
    assert ws.cell(shelf, q1).value == f"=E{shelf}"
    got = {n: held.cell(p.rows[n], q1).value for n in ("shelf", "sold", "receipts", "orders")}
    assert got == pytest.approx({"shelf": 60, "sold": 240, "receipts": 160, "orders": 237.5}, rel=1e-12)


FLOWS = ("unit USD\nunit kUSD = 1000 USD\nperiods = 1 month..4 month\nrate = 12%\nfee = 50 USD\n"
         "series flow = -1000 USD then 200 USD + 100 USD * period / 1 month -> kUSD\n"
         "worth = npv(rate / 12, flow)\nkept_npv = npv(rate / 12, flow - fee)\nret = irr(flow) -> %\n")


def _flows_by_hand(rate: float) -> dict:
    """The flows are -1000, 400, 500, 600 USD: NPV discounts month m by (1 + rate/12)^m; the IRR is the root of
    -1000 + 400/(1+r) + 500/(1+r)^2 + 600/(1+r)^3 (by bisection, to the last digit)."""
    flows = [-1000, 400, 500, 600]
    d = 1 + rate / 12
    return {"worth": sum(v / d ** m for m, v in enumerate(flows, 1)),
            "kept_npv": sum((v - 50) / d ** m for m, v in enumerate(flows, 1)), "ret": 0.2164778541842899}


@pytest.fixture(scope="module")
def flows_books(tmp_path_factory):
    from excel_recalc import in_both_engines
    from test_excel_workbook import edit
    from test_excel_workbook import export as export_item

    require_soffice()
    require_gnumeric()
    work = tmp_path_factory.mktemp("series_flows")
    items = {"as_written": export_item(loads(FLOWS, name=str(work / "flows.plan")), work / "flows.xlsx")}
    items["rate_24"] = edit(items["as_written"], work / "flows_24.xlsx", {"rate": 0.24})
    return in_both_engines(items, work, 10)


def test_npv_and_irr_of_a_series_are_excels_over_its_row(flows_books):
    """`npv(rate, flow)`, `irr(flow)`: Excel's NPV and IRR over the series' row on the Months sheet (the row in
    kUSD, the figure in USD); over an expression of series, a working row of it (its cells each month's flow)."""
    item = flows_books["as_written"]
    wb = openpyxl.load_workbook(item.path)
    p = item.book.periods
    flow = f"Months!$C${p.rows['flow']}:$F${p.rows['flow']}"
    texts = {}
    for name in ("worth", "kept_npv", "ret"):
        sheet, coord = next(wb.defined_names[name].destinations)
        texts[name] = wb[sheet][coord.replace("$", "")].value
    assert texts["worth"] == f"=NPV(rate/12,{flow})*1000"
    assert texts["ret"] == f"=IRR({flow},0.216478)"  # planner's root, where the engine's search starts
    kept = re.fullmatch(r"=NPV\(rate/12,Months!\$C\$(\d+):\$F\$\1\)", texts["kept_npv"])
    assert kept, texts["kept_npv"]
    assert wb["Months"].cell(int(kept.group(1)), p.first + 1).value == f"=D{p.rows['flow']}*1000-fee"


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
@pytest.mark.parametrize("case, rate", [("as_written", 0.12), ("rate_24", 0.24)])
def test_npv_and_irr_over_a_row_recalculate_to_the_figures_by_hand(flows_books, engine, case, rate):
    wb = flows_books[case].engines[engine]
    for name, want in _flows_by_hand(rate).items():
        sheet, coord = next(wb.defined_names[name].destinations)
        close(wb[sheet][coord.replace("$", "")].value, want, f"{name} ({case}, {engine})")
