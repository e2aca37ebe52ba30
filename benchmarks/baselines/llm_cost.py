"""The article's `llm_cost.py` (Transformer 与 LLM（07）: quantization, speculative
decoding and LoRA), with its `__main__` turned into the JSON artifact of the
whole cost table: the article's functions and constants unchanged, a loop over
its two models on its two GPUs, `json.dumps` at the end.

The baseline for `planner eval sheets/llm_cost.plan --scenario all` in
benchmarks/real_plans.py (the plan's two axes are these models and GPUs).
"""

import json
from dataclasses import dataclass


@dataclass
class ModelConfig:
    name: str
    hidden: int
    layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    vocab: int
    tie_embeddings: bool = False


LLAMA3_8B = ModelConfig("Llama-3-8B", 4096, 32, 32, 8, 128, 14336, 128256)
LLAMA3_70B = ModelConfig("Llama-3-70B", 8192, 80, 64, 8, 128, 28672, 128256)


@dataclass
class GPU:
    name: str
    hbm_bytes: float
    bandwidth: float   # bytes/s
    bf16_flops: float  # FLOP/s


H100 = GPU("H100 SXM", 80e9, 3.35e12, 989e12)
A100 = GPU("A100 80GB", 80e9, 2.0e12, 312e12)


def embedding_params(cfg):
    return cfg.vocab * cfg.hidden * (1 if cfg.tie_embeddings else 2)


def param_count(cfg):
    d = cfg.hidden
    q, kv = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    attn = d * q + d * kv + d * kv + q * d
    ffn = 3 * d * cfg.d_ff
    per_layer = attn + ffn + 2 * d
    embed = cfg.vocab * d
    lm_head = 0 if cfg.tie_embeddings else cfg.vocab * d
    total = per_layer * cfg.layers + embed + lm_head + d
    return {"per_layer": per_layer, "embedding": embed, "lm_head": lm_head, "total": total}


def forward_flops_per_token(cfg, ctx=0):
    gemm_params = param_count(cfg)["total"] - (0 if cfg.tie_embeddings else cfg.vocab * cfg.hidden)
    return 2 * gemm_params + 4 * cfg.hidden * ctx * cfg.layers


def kv_bytes_per_token(cfg, dtype_bytes=2):
    return 2 * cfg.layers * cfg.n_kv_heads * cfg.head_dim * dtype_bytes


def quantized_weight_bytes(cfg, bits=4, group_size=128, scale_bits=16,
                           zero_bits=16, keep_embed_bf16=False):
    eff_bits = bits + (scale_bits + zero_bits) / group_size
    n = param_count(cfg)["total"]
    if keep_embed_bf16:
        e = embedding_params(cfg)
        return (n - e) * eff_bits / 8 + e * 2, eff_bits
    return n * eff_bits / 8, eff_bits


def roofline_step_time(cfg, gpu, rows, weight_bytes, mfu=1.0):
    t_mem = weight_bytes / gpu.bandwidth
    t_cmp = forward_flops_per_token(cfg) * rows / (gpu.bf16_flops * mfu)
    return max(t_mem, t_cmp)


def speculative_speedup(alpha, gamma, c, batch, cfg, gpu, mfu=1.0):
    assert 0.0 <= alpha <= 1.0
    exp_tokens = gamma + 1 if alpha == 1.0 else (1 - alpha ** (gamma + 1)) / (1 - alpha)
    w = param_count(cfg)["total"] * 2
    t_base = roofline_step_time(cfg, gpu, batch, w, mfu)
    t_verify = roofline_step_time(cfg, gpu, batch * (gamma + 1), w, mfu)
    t_round = gamma * c * t_base + t_verify
    return exp_tokens * t_base / t_round, exp_tokens


LORA_TARGETS_ATTN = ("q", "k", "v", "o")
LORA_TARGETS_ALL = ("q", "k", "v", "o", "gate", "up", "down")


def lora_params(cfg, rank=16, targets=LORA_TARGETS_ALL):
    d = cfg.hidden
    q, kv = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    shapes = {"q": (d, q), "k": (d, kv), "v": (d, kv), "o": (q, d),
              "gate": (d, cfg.d_ff), "up": (d, cfg.d_ff), "down": (cfg.d_ff, d)}
    per_layer = sum(rank * (din + dout)
                    for t in targets for din, dout in [shapes[t]])
    return per_layer * cfg.layers


if __name__ == "__main__":
    table = {}
    for cfg in (LLAMA3_8B, LLAMA3_70B):
        for gpu in (H100, A100):
            n = param_count(cfg)["total"]
            b4, eb = quantized_weight_bytes(cfg)
            b4_keep, _ = quantized_weight_bytes(cfg, keep_embed_bf16=True)
            _, eb_zero4 = quantized_weight_bytes(cfg, zero_bits=4)
            speculative = {}
            for B in (1, 8, 32, 64, 128, 256):
                s, e = speculative_speedup(0.8, 4, 0.1, B, cfg, gpu)
                s60, _ = speculative_speedup(0.8, 4, 0.1, B, cfg, gpu, mfu=0.6)
                speculative[B] = {"peak": s, "mfu_60": s60, "expected_tokens": e}
            table[f"{cfg.name}/{gpu.name}"] = {
                "parameters": n,
                "weights_bf16_gb": n * 2 / 1e9,
                "bits_per_weight_int4": eb,
                "bits_per_weight_zero4": eb_zero4,
                "weights_int4_gb": b4 / 1e9,
                "weights_int4_keep_embed_gb": b4_keep / 1e9,
                "decode_bf16_ms": n * 2 / gpu.bandwidth * 1e3,
                "decode_w4a16_ms": b4 / gpu.bandwidth * 1e3,
                "kv_bytes_per_token_bf16": kv_bytes_per_token(cfg),
                "kv_bytes_per_token_fp8": kv_bytes_per_token(cfg, 1),
                "flops_per_token": forward_flops_per_token(cfg),
                "lora_attn_r16": lora_params(cfg, 16, LORA_TARGETS_ATTN),
                "lora_all_r16": lora_params(cfg, 16),
                "lora_all_share": lora_params(cfg, 16) / n,
                "speculative": speculative,
            }
    print(json.dumps(table, indent=2))
