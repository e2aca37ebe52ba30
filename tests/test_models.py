"""The model catalog (planner/library/models/): each model's parameter count, from its config.json
figures through llm/architecture.plan, against the total its model card or release publishes.

Golden numbers come from the model cards and releases, never from planner's output:
Llama-3-8B 8.03B and Llama-3-70B 70.6B (Hugging Face; the reference article: 70.55B), Llama-3.1-405B
406B (Hugging Face model size; the name says 405B), Mixtral-8x7B 46.7B total / 12.9B per token (Mistral AI),
Qwen2.5 0.49B / 7.62B / 72.7B (model cards and Hugging Face; non-embedding 0.36B and 6.53B), DeepSeek-V3
671B total / 37B activated (technical report)."""

import pytest

import planner
from planner.language.imports import library_entries

# stem -> (published total, half a unit of its last digit)
PUBLISHED = {
    "llama3_8b": (8.03e9, 0.005e9),
    "llama3_70b": (70.55e9, 0.005e9),
    "llama3_1_405b": (406e9, 0.5e9),
    "mixtral_8x7b": (46.7e9, 0.05e9),
    "qwen2_5_0_5b": (0.49e9, 0.005e9),
    "qwen2_5_7b": (7.62e9, 0.005e9),
    "qwen2_5_72b": (72.7e9, 0.05e9),
    "deepseek_v3": (671e9, 0.5e9),
}
ACTIVE = {"mixtral_8x7b": (12.9e9, 0.05e9, "active_parameters"), "deepseek_v3": (37e9, 0.5e9, "matmul_parameters")}
NON_EMBEDDING = {"qwen2_5_0_5b": (0.36e9, 0.005e9), "qwen2_5_7b": (6.53e9, 0.005e9)}
CONFIG = ["hidden_size", "layers", "attention_heads", "kv_heads", "head_dim", "ffn_size", "vocab_size",
          "tied_embeddings", "experts", "experts_per_token", "context_length"]


def _model(stem):
    plan = planner.loads(f'import "models/{stem}.plan" as m\n', all_imports=True)
    return plan, plan.evaluate()


def test_the_catalog_has_the_models():
    entries = library_entries()
    for stem in PUBLISHED:
        assert f"models/{stem}.plan" in entries


@pytest.mark.parametrize("stem", sorted(PUBLISHED))
def test_parameter_count_matches_the_published_total(stem):
    _, ev = _model(stem)
    total, tol = PUBLISHED[stem]
    assert ev.values["m.parameters"] == pytest.approx(total, abs=tol)
    if stem in ACTIVE:
        active, tol, name = ACTIVE[stem]
        assert ev.values[f"m.{name}"] == pytest.approx(active, abs=tol)
    if stem in NON_EMBEDDING:
        value, tol = NON_EMBEDDING[stem]
        assert ev.values["m.non_embedding"] == pytest.approx(value, abs=tol)


@pytest.mark.parametrize("stem", sorted(PUBLISHED))
def test_config_figures_are_there_and_sourced(stem):
    plan, ev = _model(stem)
    q = plan.model.quantities
    for name in CONFIG:
        assert f"m.{name}" in q, name
    for name, quantity in q.items():
        if quantity.is_input:
            assert any(t.startswith("source:") and "config.json" in t or t.startswith("source:") and stem[:4] in t.lower()
                       or t.startswith("source:") for t in quantity.tags), name
    dense = ev.values["m.experts"] == 0
    assert (ev.values["m.active_parameters"] == ev.values["m.parameters"]) is dense


def test_exact_counts_of_the_reference_article():
    # llm_cost.py's param_count: 8,030,261,248 and 70,553,706,496 (the article prints 8.03B and 70.55B)
    assert _model("llama3_8b")[1].values["m.parameters"] == 8_030_261_248
    assert _model("llama3_70b")[1].values["m.parameters"] == 70_553_706_496


def test_kv_bytes_per_token_gqa_and_mla():
    # the reference article: 128 KiB (8B), 320 KiB (70B), 68.6 KiB for DeepSeek-V3's MLA
    assert _model("llama3_8b")[1].values["m.kv_per_token"] == 128 * 1024
    assert _model("llama3_70b")[1].values["m.kv_per_token"] == 320 * 1024
    assert _model("deepseek_v3")[1].values["m.kv_per_token"] == pytest.approx(68.6 * 1024, abs=0.05 * 1024)


def test_tied_embeddings_count_one_table():
    plan = planner.loads('from "llm/architecture.plan" import embedding_parameters, gemm_parameters\n'
                         'a = embedding_parameters(1000, 10)\nb = embedding_parameters(1000, 10, tied = true)\n'
                         'g = gemm_parameters(5000, 100, 10, true)\nh = gemm_parameters(5000, 100, 10)\n')
    ev = plan.evaluate()
    assert (ev.values["a"], ev.values["b"], ev.values["g"], ev.values["h"]) == (20000, 10000, 5000, 4000)
