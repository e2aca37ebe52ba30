"""The model catalog (planner/library/models/): each model's parameter count, from its config.json
figures through llm/architecture.plan, against the total its model card or release publishes.

Golden numbers come from the model cards and releases, never from planner's output:
Llama-3-8B 8.03B and Llama-3-70B 70.6B (Hugging Face; the reference article: 70.55B), Llama-3.1-405B
406B (Hugging Face model size; the name says 405B), Mixtral-8x7B 46.7B total / 12.9B per token (Mistral AI),
Qwen2.5 0.49B / 7.62B / 72.7B (model cards and Hugging Face; non-embedding 0.36B and 6.53B), DeepSeek-V3
671B total / 37B activated (technical report); the newer models' goldens sit beside them in the tables below,
each with the card, report or announcement it comes from."""

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
    # model cards: Qwen3-30B-A3B 30.5B, Qwen3-235B-A22B 235B; OpenAI's gpt-oss model card, Table 1: 116.83B
    "qwen3_30b_a3b": (30.5e9, 0.05e9),
    "qwen3_235b_a22b": (235e9, 0.5e9),
    "gpt_oss_120b": (116.83e9, 0.005e9),
    # Hugging Face model sizes: Llama-3.2 1.24B / 3.21B, Llama-3.3-70B 70.6B, Gemma-2 9.24B / 27.2B; model cards:
    # Qwen3-8B 8.2B, Qwen3-32B 32.8B, DeepSeek-R1 671B; gpt-oss model card, Table 1: 20.91B; Mistral AI:
    # Mixtral-8x22B 141B, Mistral Large 2 123B
    "llama3_2_1b": (1.24e9, 0.005e9),
    "llama3_2_3b": (3.21e9, 0.005e9),
    "llama3_3_70b": (70.6e9, 0.05e9),
    "qwen3_8b": (8.2e9, 0.05e9),
    "qwen3_32b": (32.8e9, 0.05e9),
    "gemma2_9b": (9.24e9, 0.005e9),
    "gemma2_27b": (27.2e9, 0.05e9),
    "gpt_oss_20b": (20.91e9, 0.005e9),
    "mixtral_8x22b": (141e9, 0.5e9),
    "mistral_large_2": (123e9, 0.5e9),
    "deepseek_r1": (671e9, 0.5e9),
}
ACTIVE = {"mixtral_8x7b": (12.9e9, 0.05e9, "active_parameters"), "deepseek_v3": (37e9, 0.5e9, "matmul_parameters"),
          # Qwen's cards cut off rather than round (Qwen2.5-7B's 7.62B reads 7.61B): "3.3B" is [3.3B, 3.4B)
          "qwen3_30b_a3b": (3.35e9, 0.05e9, "active_parameters"),
          "qwen3_235b_a22b": (22e9, 0.5e9, "active_parameters"),
          # gpt-oss model card, Table 1: 5.13B active, the unembedding counted and the embedding not
          "gpt_oss_120b": (5.13e9, 0.005e9, "matmul_parameters"),
          "gpt_oss_20b": (3.61e9, 0.005e9, "matmul_parameters"),
          "mixtral_8x22b": (39e9, 0.5e9, "active_parameters"),
          "deepseek_r1": (37e9, 0.5e9, "matmul_parameters")}
NON_EMBEDDING = {"qwen2_5_0_5b": (0.36e9, 0.005e9), "qwen2_5_7b": (6.53e9, 0.005e9),
                 "qwen3_30b_a3b": (29.9e9, 0.05e9), "qwen3_235b_a22b": (234e9, 0.5e9),
                 "qwen3_8b": (6.95e9, 0.005e9), "qwen3_32b": (31.2e9, 0.05e9),
                 # the Gemma 2 report, Table 2, to the parameter; the Gemma 3 report, Table 1, in millions
                 "gemma2_9b": (8_324_201_984, 0), "gemma2_27b": (26_047_480_320, 0),
                 "gemma3_12b": (10_759e6, 0.5e6), "gemma3_27b": (25_600e6, 0.5e6)}
CONFIG = ["hidden_size", "layers", "attention_heads", "kv_heads", "head_dim", "ffn_size", "vocab_size",
          "tied_embeddings", "experts", "experts_per_token", "context_length"]


def _model(stem):
    plan = planner.loads(f'import "models/{stem}.plan" as m\n', all_imports=True)
    return plan, plan.evaluate()


def test_the_catalog_has_the_models():
    entries = library_entries()
    for stem in PUBLISHED:
        assert f"models/{stem}.plan" in entries


@pytest.mark.parametrize("stem", sorted(set(PUBLISHED) | set(NON_EMBEDDING)))
def test_parameter_count_matches_the_published_total(stem):
    _, ev = _model(stem)
    if stem in PUBLISHED:  # Gemma 3's report gives no text-only total (its 27.4B counts the vision encoder)
        total, tol = PUBLISHED[stem]
        assert ev.values["m.parameters"] == pytest.approx(total, abs=tol)
    if stem in ACTIVE:
        active, tol, name = ACTIVE[stem]
        assert ev.values[f"m.{name}"] == pytest.approx(active, abs=tol)
    if stem in NON_EMBEDDING:
        value, tol = NON_EMBEDDING[stem]
        assert ev.values["m.non_embedding"] == pytest.approx(value, abs=tol)


@pytest.mark.parametrize("stem", sorted(set(PUBLISHED) | set(NON_EMBEDDING)))
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


def test_gpt_oss_breakdown_and_checkpoint_match_the_model_card():
    # OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", Table 1: MLP 114.71B, attention 0.96B,
    # embed + unembed 1.16B; checkpoint 60.8 GiB (experts in MXFP4 at 4.25 bits, the rest BF16)
    _, ev = _model("gpt_oss_120b")
    v = ev.values
    layers = v["m.layers"]
    assert layers * v["m.attention_per_layer"] == pytest.approx(0.96e9, abs=0.005e9)
    assert v["m.embeddings"] == pytest.approx(1.16e9, abs=0.005e9)
    mlp = v["m.parameters"] - layers * v["m.attention_per_layer"] - v["m.embeddings"] - (2 * layers + 1) * 2880
    assert mlp == pytest.approx(114.71e9, abs=0.005e9)
    assert v["m.checkpoint_bytes"] == pytest.approx(60.8 * 2**30, abs=0.05 * 2**30)


def test_sliding_window_layers_keep_only_their_window():
    # gpt-oss-120b config.json: 36 layers alternating a 128-token window and full attention, 8 KV heads of 64:
    # every token costs 2 * 36 * 8 * 64 * 2 B = 72 KiB while the context is within the window, and each token
    # beyond it only the full layers' 36 KiB
    _, ev = _model("gpt_oss_120b")
    v = ev.values
    assert v["m.kv_per_token"] == 72 * 1024 and v["m.kv_per_token_global"] == 36 * 1024
    assert v["m.kv_per_sequence"] == 36 * 1024 * 131072 + 18 * 128 * 2 * 8 * 64 * 2


@pytest.mark.parametrize("stem, local, glob, window", [("gemma2_9b", 21, 21, 4096), ("gemma2_27b", 23, 23, 4096),
                                                        ("gemma3_12b", 40, 8, 1024), ("gemma3_27b", 52, 10, 1024),
                                                        ("gpt_oss_20b", 12, 12, 128)])
def test_local_and_global_layers_follow_the_published_pattern(stem, local, glob, window):
    # Gemma 2 report: local and global layers alternate, 4096-token window; Gemma 3 report: 5 local per global,
    # 1024-token window; gpt-oss model card: alternating, 128-token bands
    _, ev = _model(stem)
    v = ev.values
    assert (v["m.local_layers"], v["m.global_layers"], v["m.sliding_window"]) == (local, glob, window)
    per_layer = 2 * v["m.kv_heads"] * v["m.head_dim"] * 2
    assert v["m.kv_per_token_global"] == glob * per_layer
    assert v["m.kv_per_sequence"] == per_layer * (local * min(window, v["m.context_length"]) + glob * v["m.context_length"])


@pytest.mark.parametrize("stem", ["qwen3_30b_a3b", "qwen3_235b_a22b", "gpt_oss_120b", "gpt_oss_20b", "mixtral_8x22b",
                                  "deepseek_v3", "deepseek_r1"])
def test_moe_models_share_the_names_a_moe_plan_imports(stem):
    # one set of names, so a serving plan can swap one MoE model for another
    plan, ev = _model(stem)
    for name in ("hidden_size", "layers", "dense_layers", "experts", "shared_experts", "experts_per_token", "moe_ffn_size",
                 "router_bias", "parameters", "active_parameters", "matmul_parameters", "kv_per_token"):
        assert f"m.{name}" in plan.model.quantities, name
    v = ev.values
    assert 0 < v["m.experts_per_token"] < v["m.experts"] and v["m.active_parameters"] < v["m.parameters"]
