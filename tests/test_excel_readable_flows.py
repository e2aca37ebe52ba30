"""The Cash flows sheet as a finance reader reads it: each row's term in the unit of the figure that adds
it up, over the input cells as they hold their figures (months, % per year), without unit conversions
that cancel (``(horizon*2628000)/2628000``). Recalculated by LibreOffice and Gnumeric, as exported and
with inputs typed in.

Figures by hand, from the plan's inputs (``examples/gpu_buy_vs_rent.plan``):

* ``own_monthly`` = 64 * (1.1 kW * 1.3 * 0.12 USD/kWh * 730 h + 150 USD) = 17,617.152 USD = 17.617152 kUSD a
  month; its discounted term in month m is 17.617152 * 1.1^(-m/12) kUSD;
* renting in month m: 64 GPUs * 60% * min(1, m/6) * 3.50 USD/h * 0.99^(m-1) * 730 h, discounted alike; in
  kUSD.
"""

from __future__ import annotations

import re

import openpyxl
import pytest
from excel_recalc import in_both_engines, require_gnumeric
from test_excel_workbook import ROOT, edit, export, require_soffice

from planner.outputs.excel.generator import FLOW_FIRST
from planner.plan import load_compiled as load

OWN_MONTHLY = 64 * (1.1 * 1.3 * 0.12 * 730 + 150) / 1000  # kUSD a month


def own_term(m: int) -> float:
    return OWN_MONTHLY * 1.1 ** (-m / 12)


def rent_term(m: int, ramp: int = 6) -> float:
    return 64 * 0.6 * min(1, m / ramp) * 3.5 * 0.99 ** (m - 1) * 730 * 1.1 ** (-m / 12) / 1000


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    require_soffice()
    require_gnumeric()
    work = tmp_path_factory.mktemp("readable_flows")
    items = {"as_written": export(load(ROOT / "examples" / "gpu_buy_vs_rent.plan"), work / "gpu.xlsx")}
    items["edited"] = edit(items["as_written"], work / "gpu_edited.xlsx", {"horizon": 24, "ramp": 3})
    return in_both_engines(items, work, 30)


def _row(ws, label: str):
    return next(r for r in ws.iter_rows(min_row=4) if r[0].value == label)


def test_a_terms_formula_has_no_unit_conversions_that_cancel(books):
    flows = openpyxl.load_workbook(books["as_written"].path)["Cash flows"]
    for label in ("Model: npv_own (m = 1 month)", "Model: npv_rent (m = 1 month)"):
        for cell in _row(flows, label)[FLOW_FIRST - 1:]:
            if cell.value is None:
                continue
            text = cell.value
            assert "2628000" not in text and "31536000" not in text and "3600" not in text, (label, text)
            assert "horizon" in text and "1+cost_of_capital" in text, (label, text)  # the cells, as the plan writes them
    own = _row(flows, "Model: npv_own (m = 1 month)")[FLOW_FIRST - 1].value
    assert "own_monthly*" in own and "/2628" not in own  # kUSD a month, as its cell holds it


def test_the_figure_adds_up_its_row_in_its_own_unit(books):
    model = openpyxl.load_workbook(books["as_written"].path)["Model"]
    rent = next(r for r in model.iter_rows(min_row=4) if r[3].value == "npv_rent")[1].value
    assert rent.startswith("=SUM('Cash flows'!$D$") and "/1000" not in rent  # the row is in kUSD already
    saving = next(r for r in model.iter_rows(min_row=4) if r[3].value == "npv_saving")[1].value
    assert saving == "=npv_rent-npv_own"


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_the_terms_recalculate_to_the_figures_by_hand(books, engine):
    flows = books["as_written"].engines[engine]["Cash flows"]
    own = [c.value for c in _row(flows, "Model: npv_own (m = 1 month)")[3:63]]
    rent = [c.value for c in _row(flows, "Model: npv_rent (m = 1 month)")[3:63]]
    assert own[:36] == pytest.approx([own_term(m) for m in range(1, 37)], rel=1e-12)
    assert rent[:36] == pytest.approx([rent_term(m) for m in range(1, 37)], rel=1e-12)
    assert own[36:] == [0] * 24 and rent[36:] == [0] * 24  # beyond the horizon: 0


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_typed_in_inputs_move_the_terms(books, engine):
    flows = books["edited"].engines[engine]["Cash flows"]
    rent = [c.value for c in _row(flows, "Model: npv_rent (m = 1 month)")[3:63]]
    assert rent[:24] == pytest.approx([rent_term(m, ramp=3) for m in range(1, 25)], rel=1e-12)
    assert rent[24:] == [0] * 36


def _relative(cell) -> str:
    """A cell's formula with its own column's relative references (``F$3``, ``SUM($C$7:F$7)``) as ``#``."""
    return re.sub(rf"(?<![$A-Z]){cell.column_letter}\$", "#$", cell.value)


def test_every_cell_of_a_row_is_one_formula_over_its_columns_month(books):
    wb = openpyxl.load_workbook(books["as_written"].path)
    flows = wb["Cash flows"]
    header = [c.value for c in flows[3][FLOW_FIRST - 1:]]
    assert header == list(range(1, 61))  # numbers, not text: the terms' index (horizon's bound: 60 months)
    rows = [r for r in flows.iter_rows(min_row=4) if r[0].value]
    assert len(rows) > 10
    for r in rows:
        cells = [c for c in r[FLOW_FIRST - 1:] if c.value is not None]
        assert len(cells) == 60, r[0].value
        assert len({_relative(c) for c in cells}) == 1, (r[0].value, cells[0].value, cells[1].value)
    rent = _row(flows, "Model: npv_rent (m = 1 month)")
    assert "(1-1)" not in rent[3].value and "(D$3-1)" in rent[3].value and "MIN(1,D$3/ramp)" in rent[3].value
    payback = _row(flows, "Model: breakeven_month (n = 1 month)")
    assert payback[6].value.startswith("=IF(AND(G$3<=horizon,") and payback[6].value.endswith(',G$3,"")')


def test_the_term_column_writes_each_term_as_the_plan_writes_it(books):
    flows = openpyxl.load_workbook(books["as_written"].path)["Cash flows"]
    assert flows["B3"].value == "Term"
    assert _row(flows, "Model: npv_own (m = 1 month)")[1].value == "own_monthly * 1 month * discount(m)"
    assert _row(flows, "Model: busy_hours (m = 1 month)")[1].value == "gpus * utilisation(m) * 730 h"
    payback = _row(flows, "Model: breakeven_month (n = 1 month)")[1].value
    assert payback == "n where cash_own(n) <= cash_rent(n)"
    assert all(r[1].value for r in flows.iter_rows(min_row=4) if r[0].value)  # no row without its term
