"""The workbook's Trials sheet, recalculated by LibreOffice, gives planner's own trials.

The exported file is opened and saved with openpyxl after changing an input (`tokens`), which
drops every cached value: what LibreOffice reads back was computed by it. Each trial's inputs must
be planner's counter-generator draws (`planner simulate --method counter`) and each derived cell
planner's value with the changed input, to 1e-9; the live summary the statistics of those."""

from fractions import Fraction

import numpy as np
import openpyxl
import pytest

import planner
from planner.outputs.excel.writer import workbook_bytes
from planner.questions import simulate

from excel_recalc import gnumeric_recalculate, recalculate

PLAN = """\
title "trials"
util = 40% to 70% where 0 <= util <= 1
lat = 12 ms ~ normal(10 ms, 2 ms)
share = uniform(20%, 30%)
months = triangular(6, 9, 18)
tokens = 1000
rate = tokens * util / lat * (1 - share)
total = rate * months * 1 s
"""


def _column(ws, header_row: int, name: str) -> list:
    col = next(c.column for c in ws[header_row] if c.value == name)
    return [ws.cell(r, col).value for r in range(header_row + 2, header_row + 2 + 1000)]


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_trials_sheet_recalculates_to_planners_trials(plan_file, tmp_path, engine):
    path = plan_file(PLAN)
    plan = planner.load(path)
    book = tmp_path / "trials.xlsx"
    book.write_bytes(workbook_bytes(plan))
    wb = openpyxl.load_workbook(book)
    inputs = wb["Inputs"]
    row = next(r for r in range(1, inputs.max_row + 1) if inputs.cell(r, 1).value == "tokens")
    inputs.cell(row, 2).value = 2000  # an analyst's edit; saving drops every cached value
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    recalc = recalculate if engine == "libreoffice" else gnumeric_recalculate
    ws = openpyxl.load_workbook(recalc([edited], tmp_path)[edited], data_only=True)["Trials"]
    header = next(r for r in range(1, 30) if ws.cell(r, 1).value == "trial")
    (sim,) = simulate.run(plan, [None], 1000, 0, "counter", overrides={"tokens": Fraction(2000)})
    assert _column(ws, header, "trial") == list(range(1, 1001))
    for name in ("util", "lat", "share", "months", "rate", "total"):
        got = np.array(_column(ws, header, name), dtype=float)
        want = sim.display(name)
        if plan.model.quantities[name].unit_text.startswith("%"):
            want = want / 100  # a percentage's cell holds the fraction, as Excel stores a typed 60%
        assert np.allclose(got, want, rtol=1e-9, atol=0), name
    total = sim.display("total")
    col = next(c.column for c in ws[header] if c.value == "total")
    stats = {ws.cell(r, 1).value: ws.cell(r, col).value for r in range(1, header)}
    assert stats["mean"] == pytest.approx(total.mean(), rel=1e-9)
    assert stats["sd"] == pytest.approx(total.std(ddof=1), rel=1e-9)
    assert stats["P95"] == pytest.approx(np.percentile(total, 95), rel=1e-9)


def test_no_trials_sheet_without_uncertain_inputs(tmp_path):
    plan = planner.load("sheets/token_cost.plan")
    book = tmp_path / "t.xlsx"
    book.write_bytes(workbook_bytes(plan))
    assert "Trials" not in openpyxl.load_workbook(book).sheetnames


def test_trials_leave_out_what_a_cell_per_trial_cannot_hold():
    # the buy-vs-rent plan's 36-month sums spill out of one cell; printed again for each of 1,000
    # trials they would take minutes: the sheet leaves them out and says so
    from planner.outputs.excel import trials, writer

    plan = planner.load("tests/plans/gpu_buy_vs_rent_uncertain.plan")
    book = writer.Book(plan)
    trials.trials_sheet(book, 1000)
    shown = [o.label for o in book.trials_table.outputs]
    assert "capex" in shown and "npv_saving" not in shown
    ws = next(s for s in book.sheets if s.title == "Trials")
    note = next(c.value for (r, c_), c in ws.cells.items() if isinstance(c.value, str) and c.value.startswith("Not on"))
    assert "npv_saving" in note and "planner simulate" in note


CORRELATED = """\
title "correlated trials"
unit USD
util = 40% to 70% where 0 <= util <= 1
lat = 12 ms ~ normal(10 ms, 2 ms)
share = uniform(20%, 30%)
months = triangular(6, 9, 18)
price = 2 USD to 4 USD
weeks = pert(6, 9, 18)
gpus = discrete(8, 30%, 32, 20%, 16, 50%)
correlate(weeks, gpus, 0.6)
correlate(util, lat, 0.8)
correlate(share, months, -0.6)
correlate(price, share, 0.5)
tokens = 1000
rate = tokens * util / lat * (1 - share)
total = rate * months * 1 s * price
work = weeks * gpus
"""


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_correlated_trials_recalculate_to_planners_trials(plan_file, tmp_path, engine):
    # the Gaussian copula in formulas: each correlated input's score is the Cholesky row (constants)
    # times NORMSINV of the counter uniforms; a uniform, a triangular and a truncated range go
    # through NORMSDIST, a normal and a lognormal range straight from the score
    path = plan_file(CORRELATED)
    plan = planner.load(path)
    book = tmp_path / "trials.xlsx"
    book.write_bytes(workbook_bytes(plan))
    wb = openpyxl.load_workbook(book)
    trials_ws = wb["Trials"]
    header = next(r for r in range(1, 30) if trials_ws.cell(r, 1).value == "trial")
    col = next(c.column for c in trials_ws[header] if c.value == "share")
    assert "NORMSDIST" in trials_ws.cell(header + 2, col).value
    for row in trials_ws.iter_rows(min_row=header + 2):  # poison every cached value
        for cell in row[1:]:
            if isinstance(cell.value, (int, float)):
                cell.value = -999.0
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    recalc = recalculate if engine == "libreoffice" else gnumeric_recalculate
    ws = openpyxl.load_workbook(recalc([edited], tmp_path)[edited], data_only=True)["Trials"]
    (sim,) = simulate.run(plan, [None], 1000, 0, "counter")
    for name in ("util", "lat", "share", "months", "price", "weeks", "gpus", "rate", "total", "work"):
        got = np.array(_column(ws, header, name), dtype=float)
        want = sim.display(name)
        if plan.model.quantities[name].unit_text.startswith("%"):
            want = want / 100
        assert np.allclose(got, want, rtol=1e-9, atol=0), name
    # a pert's cell is BETAINV of the engine, a discrete's nested IFs over the cumulative weights
    assert set(np.unique(_column(ws, header, "gpus"))) == {8, 16, 32}
    # and the copula does what it says: rank correlations near the declared ones over 1,000 trials
    rho = lambda a, b: np.corrcoef(simulate._ranks(sim.column(a)), simulate._ranks(sim.column(b)))[0, 1]
    assert rho("util", "lat") == pytest.approx(0.8, abs=0.04)
    assert rho("share", "months") == pytest.approx(-0.6, abs=0.05)
    assert rho("price", "share") == pytest.approx(0.5, abs=0.06)
    assert abs(rho("util", "share")) < 0.08


def test_the_trials_summary_shows_a_percentage_as_one():
    """The summary headed "util (%)" showed 0.550000: the cell holds the fraction, as every percentage
    cell does, and its format must be a percent format."""
    from planner.outputs.excel import trials, writer

    book = writer.Book(planner.loads(CORRELATED, "c.plan"))
    trials.trials_sheet(book, 200)
    ws = next(s for s in book.sheets if s.title == "Trials")
    head = next((r, c) for (r, c), cell in ws.cells.items() if cell.value == "util (%)")
    stats = [ws.cells[(head[0] + 1 + j, head[1])] for j in range(len(trials.STATS))]
    assert all(cell.num is not None and cell.num.percent for cell in stats), [cell.num for cell in stats]
    assert "%" in stats[0].num.excel()
