"""The reference problem: the article's token_cost.py and its expected values.

Golden numbers are copied from the article's text, not from planner's output.
"""

import json

import pytest
from conftest import TOKEN_COST

# scenario -> {quantity: (article value, tolerance)} in display units
ARTICLE = {
    "bf16": {"weight_bytes": (140.0, 1e-9), "weight_gib": (130.39, 0.005), "batch1_weight_bound": (46.667, 0.0005),
             "batch_step_bound": (53.825, 0.0005), "verify_cost_ratio": (1.0, 1e-12),
             "speculative_speedup_at_batch": (2.4011, 0.00005)},
    "fp8_e4m3": {"weight_bytes": (70.0, 1e-9), "weight_gib": (65.19, 0.005), "batch1_weight_bound": (23.333, 0.0005),
                 "batch_step_bound": (30.492, 0.0005), "verify_cost_ratio": (1.0, 1e-12),
                 "speculative_speedup_at_batch": (2.4011, 0.00005)},
    "int4_g128": {"weight_bytes": (36.3125, 1e-9), "weight_gib": (33.82, 0.005),
                  "batch1_weight_bound": (12.104, 0.0005), "batch_step_bound": (19.262, 0.0005),
                  "verify_cost_ratio": (1.1629, 0.00005), "speculative_speedup_at_batch": (2.1509, 0.00005)},
}
SPECULATION = {"expected_tokens": (3.3616, 0.00005), "speedup": (2.4011, 0.00005), "iteration_time": (35.0, 1e-9),
               "average_tpot": (10.4117, 0.00005)}


@pytest.mark.parametrize("scenario,name", [(s, n) for s, qs in ARTICLE.items() for n in qs])
def test_format_figures_match_article(token_cost, scenario, name):
    value, tol = ARTICLE[scenario][name]
    assert token_cost.evaluate(scenario).display(name) == pytest.approx(value, abs=tol)


@pytest.mark.parametrize("name", SPECULATION)
def test_speculation_figures_match_article(token_cost, name):
    value, tol = SPECULATION[name]
    assert token_cost.evaluate().display(name) == pytest.approx(value, abs=tol)


def test_kv_bytes_per_sequence_exact(token_cost):
    assert token_cost.evaluate().values["kv_bytes_per_sequence"] == 671_088_640


def test_int4_batch32_with_one_byte_kv(token_cost):
    one_byte = token_cost.parse_override("kv_bytes_per_element=1 B")[1]
    ev = token_cost.evaluate("int4_g128", {"kv_bytes_per_element": one_byte})
    assert ev.display("batch_step_bound") == pytest.approx(15.683, abs=0.0005)


def test_bf16_over_int4_batch32_improvement_is_2_79_not_4(token_cost):
    ratio = (token_cost.evaluate("bf16").values["batch_step_bound"]
             / token_cost.evaluate("int4_g128").values["batch_step_bound"])
    assert ratio == pytest.approx(2.79, abs=0.005)


def test_exact_literals(token_cost):
    from fractions import Fraction

    scenario = token_cost.model.scenarios["int4_g128"]
    assert scenario.overrides["bits_per_weight"] == Fraction(83, 20) / 8  # 4.15 bit in bytes, exactly


def test_every_check_in_the_plan_passes(cli):
    code, out, _ = cli("check", TOKEN_COST)
    assert code == 0, out
    assert " 0 failed" in out


def test_hardware_is_tagged_as_assumption_and_times_as_lower_bounds(token_cost):
    q = token_cost.model.quantities
    assert "assumption" in q["hbm_bandwidth"].tags
    assert "assumption" in q["peak_dense_flops"].tags
    for name, quantity in q.items():
        if not quantity.is_input and quantity.unit_text == "ms":
            assert "lower bound" in quantity.tags, name


def test_json_has_everything_token_cost_py_prints(cli):
    code, out, _ = cli("eval", TOKEN_COST, "--scenario", "all", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["format"] == "planner.eval/1"
    assert data["scenarios"] == ["base", "bf16", "fp8_e4m3", "int4_g128"]
    int4 = data["values"]["int4_g128"]
    # token_cost.py's artifact, key by key (its names -> the plan's names)
    assert data["base_values"]["bf16"]["parameters"] == 70e9
    assert data["base_values"]["bf16"]["hbm_bandwidth"] == 3.0e12
    assert data["base_values"]["bf16"]["peak_dense_flops"] == 1.0e15
    assert int4["batch"] == 32 and int4["context_tokens"] == 2048
    assert int4["kv_bytes_per_sequence"] == 671088640
    assert int4["bits_per_weight"] == 4.15
    assert int4["weight_bytes"] == pytest.approx(36.3125)
    assert int4["weight_gib"] == pytest.approx(36.3125e9 / 2**30)
    assert int4["batch1_weight_bound"] == pytest.approx(12.104, abs=5e-4)
    assert int4["batch_step_bound"] == pytest.approx(19.262, abs=5e-4)
    assert int4["verify_cost_ratio"] == pytest.approx(1.1629, abs=5e-5)
    assert int4["speculative_speedup_at_batch"] == pytest.approx(2.1509, abs=5e-5)
    assert int4["alpha"] == 0.8 and int4["gamma"] == 4 and int4["draft_cost"] == 0.1
    assert int4["expected_tokens"] == pytest.approx(3.3616)
    assert int4["speedup"] == pytest.approx(2.4011, abs=5e-5)
    assert int4["iteration_time"] == pytest.approx(35.0)
    assert int4["average_tpot"] == pytest.approx(10.4117, abs=5e-5)
    assert data["quantities"]["batch_step_bound"]["unit"] == "ms"
    assert "lower bound" in data["quantities"]["batch_step_bound"]["tags"]
    assert data["overrides"]["int4_g128"]["bits_per_weight"]["from"] == "scenario `int4_g128`"
