"""One number rule for every output: each figure of every shipped and example plan is spelled the same way
in the terminal (`planner eval`), the build summary, the report's tables and the workbook's cells as
LibreOffice displays them (the cached value under its number format, exported with "save cell content as
shown"). JSON keeps full precision (it is data) and is not compared.

One build per plan (the analysis is shared by the summary, the report and the workbook, as `planner build`
shares it), one LibreOffice conversion per plan; plans are the test's parameters, so pytest-xdist spreads them.
"""

from __future__ import annotations

import csv
import re
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from excel_recalc import require_soffice

PLANS = (sorted((ROOT / "sheets").glob("*.plan")) + sorted((ROOT / "examples").glob("*.plan"))
         + [ROOT / "benchmarks" / "plans" / "fleet_60_months.plan"])
WIDE = "100000"  # columns: the terminal's tables unwrapped, one row a line


def _cells(line: str) -> list[str]:
    """A plain-text table row's cells (tabulate's "simple": two or more spaces between columns)."""
    return re.split(r"\s{2,}", line.strip())


def terminal_figures(cli, monkeypatch, path: Path) -> dict[tuple[str, str], str]:
    """(quantity, scenario) -> text, from `planner eval FILE -s all`."""
    monkeypatch.setenv("COLUMNS", WIDE)
    code, out, err = cli("eval", path, "-s", "all")
    assert code == 0, err
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("quantity "))
    labels = _cells(lines[at])[1:-2]  # quantity, the scenarios, unit, notes
    got = {}
    for line in lines[at + 2:]:
        cells = _cells(line)
        if len(cells) > len(labels):
            got.update({(cells[0], label): text for label, text in zip(labels, cells[1:])})
    return got


def summary_figures(text: str, labels: list[str]) -> dict[tuple[str, str], str]:
    """(quantity, scenario) -> text, from the build summary's headline table (one row a headline, or with
    many scenarios one row a scenario)."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(("headline ", "scenario ")))
    head = _cells(lines[at])
    got = {}
    for line in lines[at + 2:]:
        if not line.strip():
            break
        cells = _cells(line)
        if head[0] == "headline":
            got.update({(cells[0], label): t for label, t in zip(head[1:-1], cells[1:])})
        else:
            got.update({(h.split(" (")[0], cells[0]): t for h, t in zip(head[1:], cells[1:])})
    return {k: v for k, v in got.items() if k[1] in labels}


_CODE = re.compile(r"<code>(.*?)</code>|`([^`]+)`")


def _names_in(cell: str) -> list[str]:
    return [(a or b).replace("<wbr>", "") for a, b in _CODE.findall(cell)]


def report_figures(markdown: str, labels: list[str], quantities) -> dict[tuple[str, str], set[str]]:
    """(quantity, scenario) -> the texts of every table of the report that shows that figure: tables whose
    rows are quantities and columns scenarios, and tables whose rows are scenarios (an axes plan's members,
    joined as its labels are) and columns quantities."""
    got: dict[tuple[str, str], set[str]] = {}
    lines = markdown.splitlines()
    for line in lines:  # a plan without scenarios: its headline figures as a list, `- Label: **value unit**`
        m = re.match(r"- .*: \*\*(.+?)\*\*.*<sub>(?:<code>|`)(.+?)(?:</code>|`)</sub>$", line)
        if m and m.group(2).replace("<wbr>", "") in quantities:
            name = m.group(2).replace("<wbr>", "")
            unit = quantities[name].unit_text
            got.setdefault((name, "base"), set()).add(m.group(1).removesuffix(" " + unit) if unit else m.group(1))
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---")):
            i += 1
            continue
        table = []
        j = i
        while j < len(lines) and lines[j].startswith("|"):
            table.append([c.strip().replace("**", "") for c in lines[j].strip().strip("|").split(" | ")])
            j += 1
        head, rows = table[0], table[2:]
        columns = [(_names_in(h) or [h])[0] for h in head]
        for row in rows:
            names = [n for n in _names_in(row[0]) if n in quantities]
            if names and len(_names_in(row[0])) == 1:  # a quantity's row: its figure per scenario column
                for label, text in zip(columns[1:], row[1:]):
                    if label in labels:
                        got.setdefault((names[0], label), set()).add(text)
                continue
            members = [c for c, h in zip(row, head) if not _names_in(h)]
            label = "/".join(members)
            if label in labels:  # a scenario's row: its figure per quantity column
                for name, text in zip(columns, row):
                    if name in quantities:
                        got.setdefault((name, label), set()).add(text)
        i = j
    return got


def workbook_figures(book: Path, workdir: Path, labels: list[str]) -> dict[tuple[str, str], str]:
    """(quantity, scenario) -> the text LibreOffice displays: the Inputs and Model sheets' values (the
    base case) and the Scenarios sheet's columns."""
    exe = require_soffice()
    profile = workdir / "lo-profile"
    out = workdir / "shown"
    out.mkdir()
    # "save cell contents as shown" (the 9th token) and every sheet (-1), each to BOOK-SHEET.csv
    proc = subprocess.run([exe, f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless", "--norestore",
                           "--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1",
                           "--outdir", str(out), str(book)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr

    def sheet(name: str) -> list[list[str]]:
        path = out / f"{book.stem}-{name}.csv"
        return list(csv.reader(path.read_text(encoding="utf-8").splitlines())) if path.exists() else []

    got = {}
    for name in ("Inputs", "Model"):  # Value in B, the identifier in D
        for row in sheet(name):
            if len(row) > 3 and row[3] and row[1]:
                got[(row[3], "base")] = row[1]
    rows = sheet("Scenarios")
    named = next((r for r in rows if r and r[0] == "Scenario as the plan names it"), None)
    if named is not None:
        columns = {c: label for c, label in enumerate(named) if c >= 3 and label in labels}
        for row in rows:
            if len(row) > 1 and row[1]:
                got.update({(row[1], label): row[c] for c, label in columns.items() if c < len(row) and row[c]})
    return got


@pytest.mark.parametrize("path", PLANS, ids=[p.stem for p in PLANS])
def test_every_output_spells_each_figure_one_way(path, cli, monkeypatch, tmp_path):
    from planner.compute.evaluation import load
    from planner.language.errors import PlanError
    from planner.outputs.build import BuildResult, report_outputs, summary, workbook_output
    from planner.outputs.numbers import is_percent
    from planner.outputs.viewmodel import analyse, headline_names
    from planner.questions.fast import Answers

    plan = load(str(path), answers=Answers)
    analysis = analyse(plan)
    labels = [ev.label for ev in analysis.evaluations]
    quantities = plan.quantities
    headlines = headline_names(plan)[0]
    book = tmp_path / f"{path.stem}.xlsx"
    try:
        book.write_bytes(workbook_output(analysis, book.name).data)
    except PlanError:  # a plan the workbook refuses (a range too long for helper cells): the other outputs
        book = None
    report = next(o.data for o in report_outputs(analysis, f"{path.stem}.md", plots=False)[0] if o.kind == "report")
    report = report.decode() if isinstance(report, bytes) else report

    outputs = {
        "terminal": terminal_figures(cli, monkeypatch, path),
        "build summary": summary_figures(summary(BuildResult(analysis, [])), labels),
    }
    if book is not None:
        outputs["workbook"] = workbook_figures(book, tmp_path, labels)
    in_report = report_figures(report, labels, quantities)
    wrong, compared = [], 0
    for name in quantities:
        if quantities[name].is_bool:
            continue
        for label in labels:
            said: dict[str, str] = {}
            for where, got in outputs.items():
                if (name, label) in got:
                    text = got[(name, label)]
                    if where == "workbook" and is_percent(quantities[name].unit_text):
                        text = text.removesuffix("%")  # Excel's percent format writes the sign the others put in the unit
                    said[where] = text
            for n, text in enumerate(sorted(in_report.get((name, label), ()))):
                said[f"report table {n + 1}"] = text
            if "never" in said.values() or len(said) < 2:
                continue
            compared += 1
            if len(set(said.values())) > 1:
                wrong.append(f"{name} [{label}]: " + ", ".join(f"{w} {t!r}" for w, t in said.items()))
            if name in headlines:  # every headline figure is in the terminal, the summary and the workbook
                missing = set(outputs) - set(said)
                assert not missing, f"{name} [{label}] not found in {missing}"
    assert compared >= len(headlines)
    assert not wrong, f"{len(wrong)} of {compared} figures are spelled differently:\n" + "\n".join(wrong)


# ---- the symptoms users met, one each ------------------------------------------------------------------

SYMPTOMS = """
title "Figures users met"
unit USD
price    = 1000 USD ~ uniform(900 USD, 1100 USD) "price"
cost     = 500 USD   "cost"
rate_in  = 40000000 "requests a day"
loss     = cost - 2 * price -> USD "the loss" [headline]
yield    = irr(-100, 20, 30, 40, 50) -> % "the return" [headline]
constant = price - price + 7 USD -> USD "a constant the samples do not move"
count    = price / 1 USD * 12500 "a count" [headline]
small    = price / 1 USD * 8.723 "a smaller count" [headline]
units    = cost / 1 USD "cost as a plain number"
sweep cost in [1 USD, 20000000.5 USD, 140000000 USD] show loss, units
"""


@pytest.fixture
def symptoms(plan_file):
    return plan_file(SYMPTOMS, "symptoms.plan")


def test_explain_groups_digits_and_writes_the_figure_as_eval_does(cli, symptoms):
    code, out, _ = cli("explain", symptoms, "rate_in")
    assert code == 0 and "40,000,000" in out and "40000000" not in out.replace("= 40000000", "")
    _, evaluated, _ = cli("eval", symptoms, "--only", "yield")
    _, explained, _ = cli("explain", symptoms, "yield")
    shown = re.search(r"yield\s+(\S+)\s+%", evaluated).group(1)
    assert shown == "12.8257"  # irr(-100, 20, 30, 40, 50) = 12.825727 % (NPV at it: 0 to 1e-9)
    assert re.search(r"value\s+(\S+) %", explained).group(1) == shown


def test_a_sweep_column_is_one_style_never_scientific(cli, symptoms):
    code, out, _ = cli("sweep", symptoms)
    assert code == 0 and "e+" not in out and "E+" not in out
    rows = [_cells(line) for line in out.splitlines()[3:] if line.strip()]
    assert [r[0] for r in rows] == ["1.00", "20,000,000.50", "140,000,000.00"]
    assert [r[1] for r in rows] == ["-1,999.00", "19,998,000.50", "139,998,000.00"]
    assert [r[2] for r in rows] == ["1", "20,000,001", "140,000,000"]  # six significant digits, never 2e+07


def test_simulate_writes_the_sd_of_a_constant_as_0_and_a_row_as_the_report_does(cli, symptoms):
    from planner.outputs.viewmodel import analyse, view_model
    from planner.plan import load

    code, out, _ = cli("simulate", symptoms, "--show", "constant,count,small")
    assert code == 0 and "e-" not in out.lower()
    rows = {r[0]: r for r in map(_cells, out.splitlines()) if r and r[0] in ("constant", "count", "small")}
    assert rows["constant"][3] == "0.00"  # its sd: float residue of price - price, never 3.55e-15
    view = view_model(analyse(load(symptoms)))["uncertainty"]
    for name in ("count", "small"):  # the report's uncertainty table: point, mean, p5, p50, p95 as the terminal's
        (row,) = next(f for f in view["figures"] if f["name"] == name)["rows"]
        terminal = rows[name]
        assert [row[k] for k in ("point", "mean", "p5", "p50", "p95")] == terminal[1:3] + terminal[4:7]


def test_a_histogram_legend_spells_the_value_as_written_as_the_tables_do(symptoms):
    from planner.outputs.uncertainty import plot_data
    from planner.outputs.viewmodel import analyse
    from planner.plan import load

    analysis = analyse(load(symptoms))
    written = {d.name: d.written for d in plot_data(analysis, {})}
    assert written["count"] == ("12,500,000",) and written["small"] == ("8,723",)


def test_an_elasticity_says_which_way_a_negative_figure_moves(cli, symptoms):
    """loss = cost - 2 * price = -1,500 USD: a 1% rise of price (10 USD) deepens it by 20 USD, 1.33% of its
    size, so the elasticity is -1.3333 (a fall), not +1.3333; a rise of cost makes it shallower: +0.3333."""
    code, out, _ = cli("sensitivity", symptoms, "loss")
    assert code == 0
    rows = {r[0]: r for r in map(_cells, out.splitlines()) if r and r[0] in ("price", "cost")}
    assert rows["price"][2] == "-1.3333" and rows["cost"][2] == "+0.3333"


def test_the_build_summary_groups_digits_as_solve_does(tmp_path, symptoms, cli):
    code, out, err = cli("build", symptoms, "-o", tmp_path / "out")
    assert code == 0, err
    lines = {r[0]: r for r in map(_cells, out.splitlines()) if r}
    assert lines["count"][1] == "12,500,000" and lines["loss"][1] == "-1,500.00" and lines["yield"][1] == "12.8257"


IRR = """
title "A project's internal rate of return"
unit USD
rate   = 10% "discount rate" where 0% <= rate <= 100%
invest = 1000 USD "investment"
inflow = 300 USD "yearly inflow"
npv_value = -invest + inflow / (1 + rate) + inflow / (1 + rate)^2 + inflow / (1 + rate)^3
    + inflow / (1 + rate)^4 + inflow / (1 + rate)^5 -> USD "net present value" [headline]
solve rate where npv_value = 0 USD as irr_rate
"""


def test_an_answer_is_spelled_one_way_in_solve_eval_the_build_summary_and_the_report(cli, plan_file, tmp_path):
    """A new user's IRR printed as 15.9155 % in one output, 15.91555 % in another, 15.92 % in a third. Five
    inflows of 300 on 1,000 return 15.2382 % (Excel: =RATE(5, 300, -1000) is 15.2382 %)."""
    path = plan_file(IRR, "irr.plan")
    _, solved, _ = cli("solve", path)
    _, evaluated, _ = cli("eval", path, "--only", "irr_rate")
    _, built, _ = cli("build", path, "-o", tmp_path / "out")
    report = (tmp_path / "out" / "irr.md").read_text(encoding="utf-8")
    assert "rate = 15.2382 %" in solved
    assert re.search(r"^irr_rate\s+15\.2382\s+%", evaluated, re.M)
    assert "as irr_rate: 15.2382 %" in built
    assert "`rate` = **15.2382 %**" in report
