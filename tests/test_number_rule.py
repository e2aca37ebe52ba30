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
