"""100,000 samples of a finance plan's and of llm_cost's headline cones against the same in numpy.

planner: ``simulate.run`` on ``tests/plans/gpu_buy_vs_rent_uncertain.plan`` (six uncertain inputs:
two lognormal ranges, a triangular, two uniforms, one range fixed by the scenario) in scenario
``base_case``, showing ``npv_own``, ``npv_rent`` and ``npv_saving`` (36-month discounted sums),
after loading: drawing the Latin hypercube, the point evaluation, the compiled formulas on the
sample arrays, every constraint and the finiteness of every value.
Baseline: the same uniforms (the same generator calls), the inverse CDFs and the three formulas
written by hand in numpy, the months as a (samples x 36) matrix.

Then the same for ``sheets/llm_cost.plan``'s one range (DeepSeek-V3's MTP acceptance, uniform on
85%..90%) and the figures it moves, ``dsv3_mtp_tokens`` (1 + alpha) and ``dsv3_mtp_speedup``
(its tokens over 1 + 1/61): planner's run includes the point evaluation of the whole 520-line sheet.

Prints the best and the median of interleaved runs and their ratios. Goal: under 0.5 s and at
most 2x.

    python benchmarks/simulate_speed.py [--samples 100000] [--repeat 15]
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

import numpy as np

from timing import interleaved  # benchmarks/timing.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "tests" / "plans" / "gpu_buy_vs_rent_uncertain.plan"
SHOW = ["npv_own", "npv_rent", "npv_saving"]


def by_hand(n: int, seed: int = 0):
    """The plan's base_case, written in numpy: kUSD in, USD out."""
    from planner.questions.sampling import Z95, ndtri, uniforms

    def lognormal_range(u, low, high):
        mu, sigma = (math.log(low) + math.log(high)) / 2, (math.log(high) - math.log(low)) / (2 * Z95)
        return np.exp(mu + sigma * ndtri(u))

    u = uniforms(n, seed, "gpu_price")
    low, mode, high = 27_000.0, 30_000.0, 36_000.0
    split = (mode - low) / (high - low)
    gpu_price = np.where(u < split, low + np.sqrt(u * (high - low) * (mode - low)),
                         high - np.sqrt((1 - u) * (high - low) * (high - mode)))
    power_price = lognormal_range(uniforms(n, seed, "power_price"), 0.08, 0.18)  # USD/kWh
    resale = 0.10 + 0.20 * uniforms(n, seed, "resale")
    rent_price = lognormal_range(uniforms(n, seed, "rent_price"), 2.5, 4.5)  # USD/h
    rent_decline = 0.03 * uniforms(n, seed, "rent_decline")
    gpus, utilisation_target, ramp, horizon = 64, 0.60, 6, 36

    months = np.arange(1, horizon + 1, dtype=float)
    discount = 1.1 ** (-(months / 12))
    utilisation = utilisation_target * np.minimum(1, months / ramp)
    capex = gpus * gpu_price
    own_monthly = gpus * (1.1 * 1.3 * power_price * 730 + 150)  # USD a month
    npv_own = capex + own_monthly * discount.sum() - resale * capex * discount[-1]
    rent = (gpus * rent_price[:, None] * utilisation * (1 - rent_decline[:, None]) ** (months - 1) * 730)
    npv_rent = rent @ discount
    return npv_own, npv_rent, npv_rent - npv_own


LLM_COST = ROOT / "sheets" / "llm_cost.plan"
LLM_SHOW = ["dsv3_mtp_tokens", "dsv3_mtp_speedup"]


def llm_by_hand(n: int, seed: int = 0):
    """llm_cost's MTP figures, written in numpy: alpha uniform on 85%..90%, gamma = 1, c = 1/61."""
    from planner.questions.sampling import uniforms

    alpha = 0.85 + 0.05 * uniforms(n, seed, "dsv3_mtp_alpha")
    tokens = (1 - alpha ** 2) / (1 - alpha)
    return tokens, tokens / (1 * (1 / 61) + 1)


def _compare(label: str, with_planner, numpy_by_hand, repeat: int) -> None:
    for got, want in zip(with_planner(), numpy_by_hand()):
        assert np.allclose(got, want, rtol=1e-9), (got[:3], want[:3])
    planner_times, numpy_times = interleaved([with_planner, numpy_by_hand], repeat)
    print(label)
    print(f"planner simulate  {min(planner_times) * 1e3:8.1f} ms {statistics.median(planner_times) * 1e3:8.1f} ms"
          "  (sampling, point evaluation, compiled plan, constraints, finiteness)")
    print(f"numpy by hand     {min(numpy_times) * 1e3:8.1f} ms {statistics.median(numpy_times) * 1e3:8.1f} ms")
    ratio = min(planner_times) / min(numpy_times)
    median_ratio = statistics.median(planner_times) / statistics.median(numpy_times)
    fast = min(planner_times) < 0.5
    print(f"ratio             {ratio:8.2f}x {median_ratio:8.2f}x  (goal <= 2x and < 0.5 s: "
          f"{'met' if ratio <= 2 and fast else 'NOT met'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()

    from planner.plan import load_compiled  # the compiled plan the questions take (planner.load wraps it)
    from planner.questions import simulate

    n = args.samples
    plan = load_compiled(PLAN)

    def with_planner():
        (sim,) = simulate.run(plan, ["base_case"], n, 0, "lhs", names=SHOW)
        return [sim.column(name) for name in SHOW]

    print(f"samples           {n:,}  ({args.repeat} runs each, interleaved; best and median)")
    _compare(f"{PLAN.name} ({', '.join(SHOW)})", with_planner, lambda: by_hand(n), args.repeat)

    llm = load_compiled(LLM_COST)

    def llm_planner():
        (sim,) = simulate.run(llm, [None], n, 0, "lhs", names=LLM_SHOW)
        return [sim.column(name) for name in LLM_SHOW]

    _compare(f"{LLM_COST.name} ({', '.join(LLM_SHOW)})", llm_planner, lambda: llm_by_hand(n), args.repeat)


if __name__ == "__main__":
    main()
