"""The article's own calculator (降低每個 Token 的生成成本, its `token_cost.py`), unchanged.

The baseline for `planner eval sheets/token_cost.plan --scenario all` in
benchmarks/real_plans.py: the same figures, for the same three weight
formats, from a plain Python script. Run it as the article does:
`python token_cost.py > token-cost.json`.
"""

import json

PARAMETERS = 70_000_000_000
LAYERS, KV_HEADS, HEAD_DIM, KV_BYTES_PER_ELEMENT = 80, 8, 128, 2
HBM_BYTES_PER_SECOND = 3.0e12
PEAK_DENSE_FLOPS = 1.0e15
CONTEXT_TOKENS, BATCH = 2048, 32
BITS_PER_WEIGHT = {"bf16": 16.0, "fp8_e4m3": 8.0, "int4_g128": 4.15}
ALPHA, GAMMA, DRAFT_COST = 0.8, 4, 0.1
PLAIN_STEP_MS = 25.0

if not (0 <= ALPHA < 1 and GAMMA >= 1 and DRAFT_COST >= 0 and BATCH >= 1):
    raise ValueError("invalid speculation or batch setting")

kv_bytes_per_sequence = (2 * LAYERS * KV_HEADS * HEAD_DIM
                         * KV_BYTES_PER_ELEMENT * CONTEXT_TOKENS)

def step_bound_ms(weight_bytes, batch, positions_per_sequence):
    memory = (weight_bytes + batch * kv_bytes_per_sequence) / HBM_BYTES_PER_SECOND
    compute = 2 * PARAMETERS * batch * positions_per_sequence / PEAK_DENSE_FLOPS
    return 1000 * max(memory, compute)

expected_tokens = (1 - ALPHA ** (GAMMA + 1)) / (1 - ALPHA)
speedup = expected_tokens / (GAMMA * DRAFT_COST + 1)
formats = {}
for name, bits in BITS_PER_WEIGHT.items():
    weight_bytes = PARAMETERS * bits / 8
    plain_ms = step_bound_ms(weight_bytes, BATCH, 1)
    verify_ratio = step_bound_ms(weight_bytes, BATCH, GAMMA + 1) / plain_ms
    formats[name] = {
        "bits_per_weight": bits,
        "weight_gb": weight_bytes / 1e9,
        "weight_gib": weight_bytes / 2**30,
        "batch1_weight_bound_ms": 1000 * weight_bytes / HBM_BYTES_PER_SECOND,
        "batch_step_bound_ms": plain_ms,
        "verify_cost_ratio": verify_ratio,
        "speculative_speedup_at_batch": expected_tokens / (GAMMA * DRAFT_COST + verify_ratio),
    }

artifact = {
    "scope": "lower bounds from peak figures; not measurements",
    "parameters": PARAMETERS,
    "hbm_bytes_per_second": HBM_BYTES_PER_SECOND,
    "peak_dense_flops": PEAK_DENSE_FLOPS,
    "batch": BATCH,
    "context_tokens": CONTEXT_TOKENS,
    "kv_bytes_per_sequence": kv_bytes_per_sequence,
    "formats": formats,
    "speculation": {
        "alpha": ALPHA,
        "gamma": GAMMA,
        "draft_cost": DRAFT_COST,
        "expected_tokens_per_target_step": expected_tokens,
        "speedup_free_verification": speedup,
        "iteration_ms": PLAIN_STEP_MS * (GAMMA * DRAFT_COST + 1),
        "average_tpot_ms": PLAIN_STEP_MS / speedup,
    },
}
print(json.dumps(artifact, indent=2))
