"""The figures of benchmarks/plans/article2_user.plan computed as a plain Python
script would (the second reference article's constants and formulas; a
bisection for the acceptance-rate roots, a loop for the integer thresholds).

The baseline of benchmarks/answers_speed.py: `planner --no-cache check` of the
plan against `python` of this file, both cold.
"""

import json

MODELS = {
    "llama3_70b": dict(hidden=8192, layers=80, n_heads=64, n_kv_heads=8, head_dim=128, d_ff=28672, vocab=128256),
    "llama3_8b": dict(hidden=4096, layers=32, n_heads=32, n_kv_heads=8, head_dim=128, d_ff=14336, vocab=128256),
}
GPUS = {
    "h100": dict(hbm=80e9, bandwidth=3.35e12, peak=989e12),
    "a100": dict(hbm=80e9, bandwidth=2.0e12, peak=312e12),
}


def params(m, tied=False):
    d, q, kv = m["hidden"], m["n_heads"] * m["head_dim"], m["n_kv_heads"] * m["head_dim"]
    per_layer = d * q + 2 * d * kv + q * d + 3 * d * m["d_ff"] + 2 * d
    lm_head = 0 if tied else m["vocab"] * d
    return per_layer, per_layer * m["layers"] + m["vocab"] * d + lm_head + d, lm_head


def eff_bits(bits=4, group=128, scale_bits=16, zero_bits=16):
    return bits + (scale_bits + zero_bits) / group


def bisect(f, lo, hi, tol=1e-12):
    flo = f(lo)
    for _ in range(200):
        mid = (lo + hi) / 2
        fm = f(mid)
        if (fm > 0) == (flo > 0):
            lo, flo = mid, fm
        else:
            hi = mid
        if hi - lo < tol:
            break
    return (lo + hi) / 2


def first(cond, lo, hi):
    for n in range(lo, hi + 1):
        if cond(n):
            return n
    return None


def last(cond, lo, hi):
    for n in range(hi, lo - 1, -1):
        if cond(n):
            return n
    return None


def figures(m, g, alpha=0.8, gamma=4, c=0.1, batch=32, context=8192, mfu=1.0):
    per_layer, n, lm_head = params(m)
    flops = 2 * (n - lm_head)
    embed_like = 2 * m["vocab"] * m["hidden"]
    eb = eff_bits()
    w16 = n * 2
    w4 = n * eb / 8
    w4_keep = (n - embed_like) * eb / 8 + embed_like * 2
    kv_token = 2 * m["layers"] * m["n_kv_heads"] * m["head_dim"]
    t_mem = w16 / g["bandwidth"]
    t_cmp = lambda rows: flops * rows / (g["peak"] * mfu)
    roof = lambda rows, w: max(w / g["bandwidth"], t_cmp(rows))

    def spec(a):
        return (1 - a ** (gamma + 1)) / (1 - a) / (gamma * c + 1)

    def speedup(a, b):
        e = (1 - a ** (gamma + 1)) / (1 - a)
        return e * roof(b, w16) / (gamma * c * roof(b, w16) + roof(b * (gamma + 1), w16))

    q, kv = m["n_heads"] * m["head_dim"], m["n_kv_heads"] * m["head_dim"]
    d, ff = m["hidden"], m["d_ff"]
    widths_attn = [d + q, d + kv, d + kv, q + d]
    widths_all = widths_attn + [d + ff, d + ff, ff + d]
    lora = lambda r, ws: m["layers"] * sum(r * w for w in ws)
    return {
        "per_layer": per_layer, "parameters": n, "eff_bits": eb, "eff_bits_zero4": eff_bits(zero_bits=4),
        "weights_bf16_gb": w16 / 1e9, "weights_int4_gb": w4 / 1e9, "weights_int4_keep_gb": w4_keep / 1e9,
        "fits_bf16": w16 <= g["hbm"], "fits_int4": w4 <= g["hbm"],
        "decode_bf16_ms": w16 / g["bandwidth"] * 1e3, "decode_int4_ms": w4 / g["bandwidth"] * 1e3,
        "kv_token_bf16_kib": kv_token * 2 / 1024, "kv_token_fp8_kib": kv_token / 1024,
        "forward_gflop": flops / 1e9,
        "expected_tokens": (1 - alpha ** (gamma + 1)) / (1 - alpha), "spec_small_batch": spec(alpha),
        "speedup_batch1": speedup(alpha, 1),
        "breakeven_alpha": bisect(lambda a: spec(a) - 1, 0.0, 1 - 1e-12),
        "alpha_for_2x": bisect(lambda a: spec(a) - 2, 0.0, 1 - 1e-12),
        "verify_crossover": first(lambda b: t_cmp(b * (gamma + 1)) >= t_mem, 1, 4096),
        "compute_bound_batch": first(lambda b: t_cmp(b) >= t_mem, 1, 4096),
        "max_batch": last(lambda b: w4 + b * kv_token * 2 * context <= g["hbm"], 1, 4096),
        "rank_for_1pct": first(lambda r: lora(r, widths_all) / n >= 0.01, 1, 4096),
        "group_for_4p1": first(lambda gs: eff_bits(group=gs) <= 4.1, 1, 4096),
        "context_16": last(lambda ctx: w4 + 16 * kv_token * 2 * ctx <= g["hbm"], 1, 131072),
        "lora_attention": lora(16, widths_attn), "lora_all": lora(16, widths_all),
        "lora_share_pct": lora(16, widths_all) / n * 100,
    }


if __name__ == "__main__":
    table = {f"{mn}/{gn}": figures(m, g) for mn, m in MODELS.items() for gn, g in GPUS.items()}
    print(json.dumps(table, indent=1))
