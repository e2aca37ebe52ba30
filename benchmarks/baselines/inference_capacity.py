"""benchmarks/plans/inference_capacity.plan as a plain Python script: an LLM serving fleet month by month for
30 months. A GPU's throughput from the decode roofline (one Llama-3-8B replica per H100 SXM in FP8: the
weights and every sequence's KV cache read once per step at 80% of HBM bandwidth, or the step's FLOPs at 50%
of the FP8 peak, whichever is longer); token demand growing by a rate per month; GPUs ordered every month
up to month 27, in service three months later, depreciated straight-line over 36 months; a cloud reservation;
on-demand GPUs for whatever the fleet cannot serve at the target utilisation; an on-call rota of one engineer
per 24 GPUs (at least 2). The peak utilisation, the first month above the target, the costs, and the
questions' answers by counting or bisection, in the plan as written and each scenario."""

import json
import math

MONTH_S = 365 * 86400 / 12  # a month is a twelfth of a 365-day year
H100 = dict(bandwidth=3.35e12, peak_fp8=1978.9e12, tdp=700.0, hbm_driver=81559 * 2**20)
BASE = dict(parameters=8e9, bytes_per_param=1.0, layers=32, kv_heads=8, head_dim=128, context=4096, batch=64,
            demand0=300e9, growth=0.06, target=0.85, owned0=40, orders=4, last_order=27, gpu_price=32e3,
            useful_life=36, hosting=250.0, pue=1.3, power_price=0.11, reserved_gpus=8, reserved_rate=2.10,
            on_demand_rate=3.90, gpus_per_engineer=24, min_engineers=2, engineer_cost=18e3)
SCENARIOS = {"base": {}, "fast_growth": {"growth": 0.10}, "model_14b": {"parameters": 14e9},
             "no_reserve": {"reserved_gpus": 0}}
MONTHS = 30
HOURS = MONTH_S / 3600  # 730 hours a month


def gpu_tokens_per_month(p):
    weights = p["parameters"] * p["bytes_per_param"]
    kv_sequence = 2 * p["layers"] * p["kv_heads"] * p["head_dim"] * 2 * p["context"]  # K and V, BF16
    memory = (weights + p["batch"] * kv_sequence) / (H100["bandwidth"] * 0.8)
    compute = 2 * p["parameters"] * p["batch"] / (H100["peak_fp8"] * 0.5)
    step = max(memory, compute)
    return p["batch"] / step * MONTH_S, step, weights + p["batch"] * kv_sequence


def model(p):
    per_gpu, step, held = gpu_tokens_per_month(p)
    pipeline = [0, 0, 0]  # GPUs ordered 1, 2 and 3 months ago
    owned, demand, book = p["owned0"], p["demand0"], p["owned0"] * p["gpu_price"]
    rows = []
    for month in range(1, MONTHS + 1):
        ordered = p["orders"] if month <= p["last_order"] else 0
        arriving = pipeline[2]
        pipeline = [ordered, pipeline[0], pipeline[1]]
        owned += arriving
        if month > 1:
            demand *= 1 + p["growth"]
        fleet = owned + p["reserved_gpus"]
        utilisation = demand / (fleet * per_gpu)
        on_demand = math.ceil(max(0.0, demand / (p["target"] * per_gpu) - fleet))
        engineers = max(p["min_engineers"], math.ceil((fleet + on_demand) / p["gpus_per_engineer"]))
        depreciation = owned * p["gpu_price"] / p["useful_life"]
        running = owned * (p["hosting"] + H100["tdp"] / 1000 * p["pue"] * HOURS * p["power_price"])
        reserved = p["reserved_gpus"] * p["reserved_rate"] * HOURS
        od_cost = on_demand * p["on_demand_rate"] * HOURS
        oncall = engineers * p["engineer_cost"]
        cost = depreciation + running + reserved + od_cost + oncall
        book += arriving * p["gpu_price"] - depreciation
        rows.append(dict(month=month, owned=owned, demand=demand, utilisation=utilisation, on_demand=on_demand,
                         engineers=engineers, cost=cost, on_demand_cost=od_cost, book=book))
    over = [r["month"] for r in rows if r["utilisation"] > p["target"]]
    total = sum(r["cost"] for r in rows)
    return dict(step_ms=step * 1e3, gpu_month=per_gpu, fits=held <= 0.9 * H100["hbm_driver"],
                peak_utilisation=max(r["utilisation"] for r in rows), first_overload=over[0] if over else "never",
                on_demand_spend=sum(r["on_demand_cost"] for r in rows), total_cost=total,
                unit_cost=total / sum(r["demand"] for r in rows) * 1e6, ending_fleet=rows[-1]["owned"],
                peak_engineers=max(r["engineers"] for r in rows), ending_book=rows[-1]["book"],
                month1=rows[0], month4=rows[3], month30=rows[-1])


def below_target(f, p):
    return f["peak_utilisation"] <= p["target"]


def least_integer(p, name, lo, hi):
    return next(n for n in range(lo, hi + 1) if below_target(model({**p, name: n}), p))


def greatest(p, name, lo, hi):
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if below_target(model({**p, name: mid}), p) else (lo, mid)
    return lo


figures = {name: model({**BASE, **o}) for name, o in SCENARIOS.items()}
for name, o in SCENARIOS.items():
    figures[name]["fewest_orders"] = least_integer({**BASE, **o}, "orders", 0, 60)
base = figures["base"]
base["growth_limit"] = greatest(BASE, "growth", 0.0, 0.30)
base["reserve_needed"] = least_integer(BASE, "reserved_gpus", 0, 64)
base["sweep_parameters"] = {f"{n:g}": [model({**BASE, "parameters": n})[k] for k in ("gpu_month", "peak_utilisation",
                                                                                      "unit_cost")]
                            for n in (8e9, 14e9, 32e9)}
base["sweep_orders"] = {n: [model({**BASE, "orders": n})[k] for k in ("peak_utilisation", "on_demand_spend", "total_cost")]
                        for n in (3, 5, 7, 9)}
print(json.dumps(figures, indent=1))
