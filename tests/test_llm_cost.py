"""The second reference article (Transformer 与 LLM 07: quantization, speculative decoding, LoRA) as
sheets/llm_cost.plan. Its own checks (run by test_sheets) assert every printed figure; here the
script's output block is checked again through the API, and the alpha = 1 limit through planner,
the report and the workbook. Golden numbers are copied from the article, not from planner."""

import math

import pytest
from conftest import SHEETS

import planner

LLM_COST = SHEETS / "llm_cost.plan"

# llm_cost.py's printed output: model -> {quantity: (value, half a unit of the last printed digit)}
OUTPUT = {
    "llama3_8b/h100": {"weights_bf16": (16.1, 0.05), "bits_per_weight": (4.25, 0.005), "weights_int4": (4.27, 0.005),
                       "decode_bf16": (4.79, 0.005), "decode_w4a16": (1.27, 0.005)},
    "llama3_70b/h100": {"weights_bf16": (141.1, 0.05), "bits_per_weight": (4.25, 0.005),
                        "weights_int4": (37.48, 0.005), "decode_bf16": (42.12, 0.005), "decode_w4a16": (11.19, 0.005)},
}
LORA = {"llama3_8b/h100": (13.63e6, 41.94e6, 0.52), "llama3_70b/h100": (65.54e6, 207.09e6, 0.29)}
SPECULATIVE = {1: (2.40, 2.40), 8: (2.40, 2.40), 32: (2.40, 2.40), 64: (2.38, 1.61), 128: (1.39, 0.89),
               256: (0.76, 0.62)}


@pytest.fixture(scope="module")
def sheet():
    return planner.load(LLM_COST)


@pytest.mark.parametrize("scenario,name", [(s, n) for s, qs in OUTPUT.items() for n in qs])
def test_printed_output(sheet, scenario, name):
    value, tol = OUTPUT[scenario][name]
    assert sheet.evaluate(scenario).display(name) == pytest.approx(value, abs=tol)


@pytest.mark.parametrize("scenario", LORA)
def test_printed_lora(sheet, scenario):
    attn, everything, share = LORA[scenario]
    ev = sheet.evaluate(scenario)
    assert ev.values["lora_attn"] == pytest.approx(attn, abs=0.005e6)
    assert ev.values["lora_all"] == pytest.approx(everything, abs=0.005e6)
    assert ev.display("lora_all_share") == pytest.approx(share, abs=0.005)


@pytest.mark.parametrize("batch", SPECULATIVE)
def test_printed_speculative_table(sheet, batch):
    peak, mfu60 = SPECULATIVE[batch]
    at = lambda mfu: sheet.evaluate("llama3_8b/h100", {"batch": batch, "mfu": mfu})  # noqa: E731
    assert at(1).values["spec_speedup"] == pytest.approx(peak, abs=0.005)
    assert at(0.6).values["spec_speedup"] == pytest.approx(mfu60, abs=0.005)
    assert at(1).display("e_tokens") == pytest.approx(3.36, abs=0.005)


def test_models_and_gpus_are_axes(sheet):
    assert sheet.resolve_scenarios("all") == ["llama3_8b/h100", "llama3_8b/a100", "llama3_70b/h100", "llama3_70b/a100"]


def test_alpha_one_gives_gamma_plus_one_without_division_by_zero(sheet):
    for gamma in (1, 4, 8):
        ev = sheet.evaluate(None, {"alpha": 1, "gamma": gamma})
        assert ev.values["e_tokens"] == gamma + 1
        assert math.isfinite(ev.values["spec_free"]) and math.isfinite(ev.values["spec_speedup"])


def test_alpha_one_in_the_report(cli, tmp_path):
    out = tmp_path / "report.md"
    code, _, err = cli("report", str(LLM_COST), "-o", str(out))
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if "`e_tokens == 5 token`<br>with `alpha = 1`" in line)
    assert row.startswith("| pass |") and row.endswith("| 5 token | 5 token |")
    assert "nan" not in text.lower().replace("nano", "")


def test_alpha_one_in_the_workbook_formula(tmp_path):
    import openpyxl

    from planner.cli import main

    book = tmp_path / "llm_cost.xlsx"
    assert main(["export", str(LLM_COST), "-o", str(book)]) == 0
    wb = openpyxl.load_workbook(book)
    formulas = [c.value for ws in wb.worksheets for row in ws.iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=") and "IF(" in c.value and "alpha" in c.value]
    assert formulas, "e_tokens is an IF on alpha = 1 in the workbook"
