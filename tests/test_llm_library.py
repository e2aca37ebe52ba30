"""The serving formulas of the library (llm/kv_cache.plan, llm/serving.plan, llm/parallel.plan,
llm/moe.plan) against published worked numbers.

Each golden is a `check` in a small plan that imports the library, with its source beside it. The
numbers are the papers', reports', docs' and configs' own, typed from the text, never planner's output;
where a source gives only the inputs (a config.json), the expected value is worked by hand in the comment.
"""

import pytest
from conftest import ROOT

import planner

LIBRARY = ROOT / "planner" / "library"

IMPORTS = """\
unit USD
from "llm/kv_cache.plan" import mha_kv_bytes_per_token, gqa_kv_bytes_per_token, mqa_kv_bytes_per_token,
    mla_kv_bytes_per_token, mla_kv_bytes_per_token_split, cross_layer_kv_bytes_per_token, kv_bytes_per_sequence,
    hybrid_kv_bytes_per_sequence, sliding_window_kv_bytes_per_sequence, global_layer_count, kv_budget, kv_blocks,
    max_sequences, max_batch, effective_bits
from "llm/serving.plan" import prefill_flops, mla_decode_attention_flops, time_to_first_token, decode_step_time, decode_throughput,
    compute_bound_batch, time_per_output_token, chunked_prefill_step_time, gpu_hours_cost, cost_per_million_tokens,
    energy_per_token
from "llm/parallel.plan" import one_way_bandwidth, allreduce_factor, ring_allreduce_time, tp_allreduce_bytes_per_token,
    pipeline_bubble_overhead, pipeline_bubble_fraction, ep_all_to_all_bytes_per_token, kv_transfer_time,
    prefill_decode_ratio, overlapped_time, serial_time, context_parallel_kv_share
from "llm/moe.plan" import moe_total_parameters, moe_active_parameters, experts_touched, mtp_tokens_per_step
from "llm/architecture.plan" import attention_parameters, mla_attention_parameters
from "llm/quantization.plan" import quantized_weight_bytes
"""

GOLDENS = {
    # DeepSeek-V3: MLA caches kv_lora_rank 512 + qk_rope_head_dim 64 elements per layer (DeepSeek-V2 paper,
    # Table 1: (d_c + d_h^R) * l); 61 layers (config.json) in BF16 = 61 * 576 * 2 = 70,272 B, the "70 KB per
    # token" DeepSeek's ISCA 2025 paper gives for DeepSeek-V3.
    "deepseek_v3_mla_kv": ["check mla_kv_bytes_per_token(61, 512, 64) == 70272 B",
                           "check mla_kv_bytes_per_token(61, 512, 64) ~= 70 kB"],
    # DeepSeek-V2 paper: with d_c = 4 d_h and d_h^R = d_h / 2, MLA's cache equals GQA's with 2.25 groups.
    "deepseek_v2_mla_equals_gqa_2_25_groups": ["check mla_kv_bytes_per_token(60, 512, 64) == gqa_kv_bytes_per_token(60, 2.25, 128)"],
    # Llama-3-70B: 2 * 80 layers * 8 KV heads * 128 * 2 B = 327,680 B = 320 KiB (config.json; the reference article).
    "llama3_70b_gqa_kv": ["check gqa_kv_bytes_per_token(80, 8, 128) == 327680 B",
                          "check gqa_kv_bytes_per_token(80, 8, 128) == 320 KiB"],
    # MHA and MQA are GQA's ends (Ainslie et al. 2023): 64 heads for Llama-3-70B's shape is 8x its GQA cache,
    # one head is 1/8 of it.
    "mha_mqa_are_gqa_ends": ["check mha_kv_bytes_per_token(80, 64, 128) == 8 * 327680 B",
                             "check mqa_kv_bytes_per_token(80, 128) == 327680 B / 8"],
    # Cross-layer attention (Brandon et al. 2024): CLA2 halves the KV cache.
    "cla2_halves": ["check cross_layer_kv_bytes_per_token(80, 8, 128, 2) == 327680 B / 2"],
    # FP8 KV cache is half of BF16; FlashMLA-style FP8 latent with a BF16 RoPE key per layer: 512 + 128 = 640 B.
    "kv_quantization": ["check gqa_kv_bytes_per_token(80, 8, 128, 1 B) == 163840 B",
                        "check mla_kv_bytes_per_token_split(1, 512, 64, 1 B, 2 B) == 640 B"],
    # Gemma 2 (report; config: 2B has 26 layers, 4 KV heads, head_dim 256): local layers with a 4096-token window
    # alternate with global ones over an 8192 context. At 8192 tokens: 2*4*256*2 * (13*4096 + 13*8192)
    # = 4096 * 159,744 = 654,311,424 B, 3/4 of the all-global 872,415,232 B.
    "gemma2_hybrid": ["check hybrid_kv_bytes_per_sequence(8192, 13, 13, 4096, 4, 256) == 654311424 B",
                      "check hybrid_kv_bytes_per_sequence(8192, 13, 13, 4096, 4, 256) / kv_bytes_per_sequence(gqa_kv_bytes_per_token(26, 4, 256), 8192) == 0.75",
                      # below the window a sliding layer keeps every token
                      "check sliding_window_kv_bytes_per_sequence(1000, 26, 4096, 4, 256) == kv_bytes_per_sequence(gqa_kv_bytes_per_token(26, 4, 256), 1000)"],
    # Gemma 3 (report: 5 local layers with a 1024-token window per global layer): with layer i global when i + 1 is
    # a multiple of 6, the 48-layer 12B has global layers 5, 11, ..., 47 (8 of them), the 26-layer 1B 5, 11, 17, 23.
    # 27B (62 layers, 16 KV heads, head_dim 128) at 32,768 tokens: 8192 B per token-layer * (52 * 1024 + 10 * 32768)
    # = 8192 * 380,928 = 3,120,562,176 B.
    "gemma3_hybrid": ["check global_layer_count(48) == 8",
                      "check global_layer_count(26) == 4",
                      "check hybrid_kv_bytes_per_sequence(32768, 62 - global_layer_count(62), global_layer_count(62), 1024, 16, 128) == 3120562176 B"],
    # Llama 3.1 405B: 405e9 parameters * 2 B = 810 GB of BF16 weights (the figure quoted for it at BF16/FP16).
    "llama3_1_405b_bf16_weights": ["check quantized_weight_bytes(405e9, 16 bit) == 810 GB"],
    # vLLM: gpu_memory_utilization 0.9 by default; the KV cache gets what is left after the weights.
    # 80 GB * 0.9 - 16.06 GB (Llama-3-8B BF16) = 55.94 GB; at 128 KiB per token, 8192-token sequences (1 GiB each):
    # floor(55.94e9 / 2^30) = 52.
    "kv_budget_and_batch": ["check kv_budget(80 GB, 16.06 GB) == 55.94 GB",
                            "check max_batch(80 GB, 16.06 GB, 128 KiB * 8192) == 52",
                            "check kv_blocks(1 GiB, 128 KiB) == 512",
                            "check max_batch(80 GB, 141 GB, 1 GiB) == 0"],
    # nccl-tests doc/PERFORMANCE.md: an all-reduce moves 2(n-1)/n of the array per rank: t = (S/B) * 2(n-1)/n.
    "ring_allreduce": ["check allreduce_factor(8) == 1.75",
                       "check allreduce_factor(2) == 1",
                       "check ring_allreduce_time(1 GB, 8, 100 GB/s) == 17.5 ms"],
    # NVLink is quoted as both directions together: A100's 600 GB/s is 300 GB/s TX and 300 GB/s RX.
    "nvlink_one_way": ["check one_way_bandwidth(600 GB/s) == 300 GB/s"],
    # Megatron-LM (Shoeybi et al. 2019, Figure 4): two all-reduces of the hidden state per layer in the forward pass.
    # GPT-3 175B shape (96 layers, hidden 12288) in BF16: 2 * 96 * 12288 * 2 B = 4,718,592 B per token.
    "megatron_tp_allreduce": ["check tp_allreduce_bytes_per_token(12288, 96) == 4718592 B"],
    # Narayanan et al. 2021 (arXiv 2104.04473, section 2.2.1): the bubble's time over the ideal time is
    # (p-1)/m, (1/v)(p-1)/m with v interleaved stages. At p = 4 stages, m = 8 micro-batches of 0.5 s: the
    # ideal 4 s, the bubble (p-1) * 0.5 s = 1.5 s, 37.5% of the ideal and 1.5 / 5.5 = 27.3% of the run.
    "pipeline_bubble": ["check pipeline_bubble_overhead(4, 8) == 1.5 / 4",
                        "check pipeline_bubble_fraction(4, 8) ~= 27.3%",
                        "check pipeline_bubble_overhead(4, 8, 2) == 1.5 / 4 / 2"],
    # Mixtral-8x7B: 46.7B total, 12.9B active (Mistral AI's announcement); config.json shapes.
    "mixtral_total_active": [
        "check moe_total_parameters(4096, 32, attention_parameters(4096, 32, 8, 128), 14336, 8, 32000) ~= 46.7e9",
        "check moe_active_parameters(4096, 32, attention_parameters(4096, 32, 8, 128), 14336, 8, 2, 32000) ~= 12.9e9"],
    # DeepSeek-V3: 671B total, 37B activated (technical report); config.json shapes (3 dense layers, 1 shared and
    # 256 routed experts, 8 per token, router bias). The 37B leaves out the input embedding (129280 * 7168), a lookup.
    "deepseek_v3_total_active": [
        "mla = mla_attention_parameters(7168, 128, 1536, 512, 128, 64, 128)",
        "check moe_total_parameters(7168, 61, mla, 2048, 256, 129280, 1, 3, 18432, false, true) ~= 671e9",
        "check moe_active_parameters(7168, 61, mla, 2048, 256, 8, 129280, 1, 3, 18432, false, true) - 129280 * 7168 ~= 37e9"],
    # DeepSeek-V3 technical report, Table 1: 2.788M H800 GPU hours at $2 per GPU hour = $5.576M.
    "deepseek_v3_training_cost": ["check gpu_hours_cost(2.788e6 h, 2 USD/h) == 5.576e6 USD"],
    # DeepSeek-V3/R1 inference system overview (open-infra-index, day 6): 226.75 nodes on average over 24 hours,
    # 8 H800 per node, $2 per GPU hour: $87,072 per day.
    "deepseek_inference_day_cost": ["check gpu_hours_cost(226.75 * 8 * 24 h, 2 USD/h) == 87072 USD"],
    # DeepSeek-V3 report: the MTP module's second token is accepted 85-90% of the time, for 1.8x tokens per second;
    # one draft token yields 1 + a tokens a step, 1.85-1.9, an upper bound on the measured 1.8x.
    "deepseek_v3_mtp": ["check mtp_tokens_per_step(0.85) == 1.85",
                        "check mtp_tokens_per_step(0.9) == 1.9",
                        "check mtp_tokens_per_step(0.85) >= 1.8"],
    # NVIDIA DGX BasePOD reference architecture: DGX H100/H200 and DGX B200 hold eight GPUs on one NVSwitch fabric,
    # each with a single-port ConnectX-7 of up to 400 Gb/s (50 GB/s each direction); GB200 NVL72 joins 72.
    # An all-reduce over the 8 GPUs of 1 GB at H200's 450 GB/s each way: 1.75 * 1e9 / 450e9 = 3.889 ms.
    "dgx_interconnect": ['import "hardware/h200.plan" as h200', 'import "hardware/gb200.plan" as gb200',
                         "check h200.nvlink_domain_gpus == 8",
                         "check h200.scaleout_bandwidth == 50 GB/s",
                         "check gb200.nvlink_domain_gpus == 72",
                         "check ring_allreduce_time(1 GB, h200.nvlink_domain_gpus, one_way_bandwidth(h200.interconnect_bandwidth)) ~= 3.889 ms"],
    # DeepSeek-V2's absorbed MLA: each of 128 heads scores 512 + 64 elements and sums 512 per cached token, 61 layers:
    # 2 * 61 * 128 * 1088 = 16,990,208 FLOPs per token of context.
    "mla_absorbed_attention": ["check mla_decode_attention_flops(61, 128, 512, 64, 1) == 16990208"],
    # PaLM (Appendix B): 6N + 12LHQT training FLOPs per token, a third of it the forward: 2N + 4LHQT with every
    # token seeing all T. A causal prompt sees 1..T: the attention term is (T+1)/(2T) of that.
    # Llama-3-70B shape (80 layers, 64 heads of 128), T = 2048: 4*80*64*128*2048^2 * 2049/4096.
    "prefill_attention_palm": [
        "check prefill_flops(0, 2048, 80, 64, 128, 128) == 4 * 80 * 64 * 128 * 2048^2 * 2049 / 4096",
        "check prefill_flops(70e9, 1, 80, 64, 128, 128, 2047) == 2 * 70e9 + 4 * 80 * 64 * 128 * 2048"],
}


def _check(lines):
    plan = planner.loads(IMPORTS + "\n".join(lines) + "\n")
    return plan.check()


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_published_figure(name):
    rows = _check(GOLDENS[name]).rows
    assert len(rows) == sum(line.startswith("check") for line in GOLDENS[name])
    failed = [f"{r.check}: {r.describe or r.error}" for r in rows if not r.passed]
    assert not failed, failed


def test_at_least_twelve_goldens():
    assert sum(line.startswith("check") for lines in GOLDENS.values() for line in lines) >= 12


def test_a_wrong_golden_fails():
    # the harness can fail: Llama-3-70B's cache is not 128 KiB a token (that is Llama-3-8B's)
    rows = _check(["check gqa_kv_bytes_per_token(80, 8, 128) == 128 KiB"]).rows
    assert [r.passed for r in rows] == [False]


def test_decode_is_memory_bound_until_the_compute_bound_batch():
    # Pope et al. 2022: below the ridge point a step is the weights' (and KV's) read time; past it, compute.
    # 140 GB of weights, 3.35 TB/s, 989.4 TFLOP/s, 140 GFLOP a token, no KV, efficiencies 1:
    # batch* = (140e9 / 3.35e12) / (140e9 / 989.4e12) = 989.4 / 3.35 = 295.3 (the H100 BF16 ridge, FLOP/B * 2 B / 2 FLOP)
    plan = planner.loads(IMPORTS + """
b = compute_bound_batch(140 GB, 0 B, 140e9, 3.35 TB/s, 989.4 TFLOP/s, 1, 1)
small = decode_step_time(140 GB, 8, 0 B, 140e9, 3.35 TB/s, 989.4 TFLOP/s, 1, 1) -> ms
large = decode_step_time(140 GB, 1024, 0 B, 140e9, 3.35 TB/s, 989.4 TFLOP/s, 1, 1) -> ms
never = compute_bound_batch(140 GB, 10 GB, 140e9, 3.35 TB/s, 989.4 TFLOP/s, 1, 1)
""")
    ev = plan.evaluate()
    assert ev.values["b"] == pytest.approx(989.4 / 3.35)
    assert ev.values["small"] == pytest.approx(140e9 / 3.35e12)
    assert ev.values["large"] == pytest.approx(1024 * 140e9 / 989.4e12)
    assert ev.values["never"] == 0


def test_throughput_cost_and_energy_chain():
    # 32 sequences, a 20 ms step: 1600 token/s; $2 per GPU hour over 1600 token/s = $0.347 per million tokens;
    # 700 W over 1600 token/s = 0.4375 J a token.
    plan = planner.loads(IMPORTS + """
tput = decode_throughput(32, 20 ms) -> token/s
cost = cost_per_million_tokens(2 USD/h, tput) -> USD
joules = energy_per_token(700 W, tput) -> J
tpot = time_per_output_token(20 ms, mtp_tokens_per_step(0.85)) -> ms
""")
    ev = plan.evaluate()
    assert ev.values["tput"] == pytest.approx(1600)
    assert ev.values["cost"] == pytest.approx(2 / 3600 / 1600 * 1e6)
    assert ev.values["joules"] == pytest.approx(700 / 1600)
    assert ev.values["tpot"] == pytest.approx(0.020 / 1.85)


def test_expert_parallel_and_disaggregation():
    # DeepSeek-V3 shape: hidden 7168, top-8, EP over 64 GPUs, FP8 dispatch and BF16 combine, 58 MoE layers:
    # 58 * 8 * 7168 * 3 B * 63/64 per token. Disaggregation: 2000-token prompts at 9000 token/s per GPU against
    # 500 output tokens at 1850 token/s per GPU: (2000/9000) / (500/1850) = 0.8222 prefill GPUs per decode GPU.
    plan = planner.loads(IMPORTS + """
ep = ep_all_to_all_bytes_per_token(7168, 8, 64, 1 B, 2 B, 58) -> B
ratio = prefill_decode_ratio(2000, 500, 9000, 1850)
move = kv_transfer_time(mla_kv_bytes_per_token(61, 512, 64), 4096, 50 GB/s) -> ms
one = ep_all_to_all_bytes_per_token(7168, 8, 1) -> B
""")
    ev = plan.evaluate()
    assert ev.values["ep"] == pytest.approx(58 * 8 * 7168 * 3 * 63 / 64)
    assert ev.values["ratio"] == pytest.approx((2000 / 9000) / (500 / 1850))
    assert ev.values["move"] == pytest.approx(70272 * 4096 / 50e9)
    assert ev.values["one"] == 0  # one GPU holds every expert: nothing leaves it


def test_experts_touched_by_a_decode_batch():
    # one token touches exactly its top_k experts; a huge batch touches them all
    plan = planner.loads(IMPORTS + """
one = experts_touched(256, 8, 1)
many = experts_touched(256, 8, 100000)
""")
    ev = plan.evaluate()
    assert ev.values["one"] == pytest.approx(8)
    assert ev.values["many"] == pytest.approx(256)


@pytest.mark.parametrize("stem", ["kv_cache", "serving", "parallel", "moe"])
def test_every_function_has_a_doc_string_and_the_file_its_sources(stem):
    from planner.language.imports import library_entries

    assert f"llm/{stem}.plan" in library_entries()
    plan = planner.load(LIBRARY / "llm" / f"{stem}.plan")
    own = [f for f in plan.model.functions.values() if f.span.source.name == plan.source.name]
    assert own
    assert [f.name for f in own if not f.doc] == []
    assert "# source:" in (LIBRARY / "llm" / f"{stem}.plan").read_text(encoding="utf-8")


def test_moe_counts_agree_with_the_model_plans():
    # llm/moe.plan builds on llm/architecture.plan's layer functions, as models/*.plan do: the same counts
    plan = planner.loads(IMPORTS + """
import "models/deepseek_v3.plan" as ds
import "models/mixtral_8x7b.plan" as mx
ds_total = moe_total_parameters(ds.hidden_size, ds.layers, ds.attention_per_layer, ds.moe_ffn_size, ds.experts,
    ds.vocab_size, ds.shared_experts, ds.dense_layers, ds.ffn_size, ds.tied_embeddings, ds.router_bias)
ds_active = moe_active_parameters(ds.hidden_size, ds.layers, ds.attention_per_layer, ds.moe_ffn_size, ds.experts,
    ds.experts_per_token, ds.vocab_size, ds.shared_experts, ds.dense_layers, ds.ffn_size, ds.tied_embeddings,
    ds.router_bias)
mx_total = moe_total_parameters(mx.hidden_size, mx.layers, mx.attention_per_layer, mx.ffn_size, mx.experts,
    mx.vocab_size)
mx_active = moe_active_parameters(mx.hidden_size, mx.layers, mx.attention_per_layer, mx.ffn_size, mx.experts,
    mx.experts_per_token, mx.vocab_size)
""", all_imports=True)
    ev = plan.evaluate()
    assert ev.values["ds_total"] == ev.values["ds.parameters"]
    assert ev.values["ds_active"] == ev.values["ds.active_parameters"]
    assert ev.values["mx_total"] == ev.values["mx.parameters"]
    assert ev.values["mx_active"] == ev.values["mx.active_parameters"]


def test_moe_counts_agree_with_the_new_moe_models():
    # the same names in every MoE model: moe.plan's whole-model counts give each model's own; gpt-oss's experts carry
    # biases that moe.plan does not count (gate and up 2 x 2880, down 2880 per expert: 8,640)
    names = ["qwen3_30b_a3b", "qwen3_235b_a22b", "mixtral_8x22b", "gpt_oss_120b"]
    lines = [f'import "models/{n}.plan" as {n}' for n in names]
    for n in names:
        lines.append(f"{n}_total = moe_total_parameters({n}.hidden_size, {n}.layers, {n}.attention_per_layer, "
                     f"{n}.moe_ffn_size, {n}.experts, {n}.vocab_size, {n}.shared_experts, {n}.dense_layers, 0, "
                     f"{n}.tied_embeddings, {n}.router_bias)")
        lines.append(f"{n}_active = moe_active_parameters({n}.hidden_size, {n}.layers, {n}.attention_per_layer, "
                     f"{n}.moe_ffn_size, {n}.experts, {n}.experts_per_token, {n}.vocab_size, {n}.shared_experts, "
                     f"{n}.dense_layers, 0, {n}.tied_embeddings, {n}.router_bias)")
    ev = planner.loads(IMPORTS + "\n".join(lines) + "\n", all_imports=True).evaluate()
    v = ev.values
    for n in names[:3]:
        assert v[f"{n}_total"] == v[f"{n}.parameters"] and v[f"{n}_active"] == v[f"{n}.active_parameters"], n
    assert v["gpt_oss_120b.parameters"] - v["gpt_oss_120b_total"] == 36 * 128 * 8640
    assert v["gpt_oss_120b.active_parameters"] - v["gpt_oss_120b_active"] == 36 * 4 * 8640
