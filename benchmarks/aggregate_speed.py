"""A sweep over a plan with a 120-period sum, against the same sum in numpy by hand.

The plan is a buy-vs-rent NPV over up to 120 months,
``npv = sum(saving / discount^(m / 1 month) for m in 1 month..lifetime) - price``.
planner sweeps the cost of capital (``rate``, every point a 120-term sum) and the
lifetime (every point its own range end), each including the grid, the constraints
and the finiteness checks, after loading (the compiled function is reused, as for
every sweep after the first). Baselines, in the same run:

* numpy by hand: the points times the periods as one 2-D array, summed along the periods;
* the same plan with the sum written out term by term (120 terms, masked by
  ``if(m <= lifetime, ...)``), which is how a plan had to say it before aggregates.

Prints the best and the median of interleaved runs and their ratios. Goal: at most 2x
numpy by hand, and no slower than the written-out sum.

    python benchmarks/aggregate_speed.py [--points 100000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from timing import interleaved  # benchmarks/timing.py, beside this script

PLAN = """
unit USD
price    = 30_000 USD
rent     = 1_100 USD/month
running  = 250 USD/month
rate     = 8%/year                  where 0%/year <= rate <= 100%/year
lifetime = 120 month                where integer, 1 month <= lifetime <= 120 month
saving   = (rent - running) * 1 month -> USD
discount = 1 + rate * 1 month
"""
SUM = "npv = sum(saving / discount^(m / 1 month) for m in 1 month..lifetime) - price -> USD\n"
WRITTEN_OUT = ("npv = " + " + ".join(f"if({m} month <= lifetime, saving / discount^{m}, 0 USD)" for m in range(1, 121))
               + " - price -> USD\n")


def report(title: str, names: list[str], times: list[list[float]]) -> None:
    print(title)
    for name, t in zip(names, times):
        print(f"  {name:26} {min(t) * 1e3:8.1f} ms {statistics.median(t) * 1e3:8.1f} ms")
    base = times[1]
    ratio = min(times[0]) / min(base)
    median_ratio = statistics.median(times[0]) / statistics.median(base)
    print(f"  {'ratio to numpy by hand':26} {ratio:8.2f}x {median_ratio:8.2f}x  (goal <= 2x: "
          f"{'met' if ratio <= 2 else 'NOT met'})")
    if len(times) > 2:
        print(f"  {'ratio to the written-out sum':26} {min(times[0]) / min(times[2]):8.2f}x "
              f"{statistics.median(times[0]) / statistics.median(times[2]):8.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()

    from planner.plan import loads_compiled  # the compiled plan the questions take (planner.loads wraps it)
    from planner.questions import sweep
    from planner.questions.ranges import parse_assignment

    plan = loads_compiled(PLAN + SUM)
    written = loads_compiled(PLAN + WRITTEN_OUT)
    n = args.points
    rates = [parse_assignment(plan, f"rate=0%/year..100%/year count {n}")]

    def swept(p, axes):
        r = sweep.run(p, axes, ["npv"])
        assert r.size == len(r.columns["npv"]) and r.issue_count == 0
        return r.columns["npv"]

    months = np.arange(1, 121, dtype=np.float64)

    def by_hand_rates():
        rate = np.linspace(0.0, 1.0, n) / 12  # per month
        return np.sum(850.0 / (1 + rate[:, None]) ** months[None, :], axis=1) - 30_000

    assert np.allclose(swept(plan, rates), by_hand_rates(), rtol=1e-12)
    assert np.allclose(swept(written, rates), by_hand_rates(), rtol=1e-12)
    times = interleaved([lambda: swept(plan, rates), by_hand_rates, lambda: swept(written, rates)], args.repeat)
    print(f"points {n:,} ({args.repeat} runs each, interleaved; best and median)")
    report("sweep rate (a 120-term sum at every point)", ["planner, sum(...)", "numpy by hand",
                                                         "planner, written out"], times)

    lifetimes = [parse_assignment(plan, "lifetime=1 month..120 month")]
    reps = max(1, n // 120)  # about as many terms as above, over the lifetimes 1..120 at several rates
    grid = lifetimes + [parse_assignment(plan, f"rate=1%/year..20%/year count {reps}")]

    def by_hand_lifetimes():
        life = np.repeat(np.arange(1, 121, dtype=np.float64), reps)
        rate = np.tile(np.linspace(0.01, 0.20, reps), 120) / 12
        terms = 850.0 / (1 + rate[:, None]) ** months[None, :]
        return np.sum(np.where(months[None, :] <= life[:, None], terms, 0.0), axis=1) - 30_000

    assert np.allclose(swept(plan, grid), by_hand_lifetimes(), rtol=1e-12)
    times = interleaved([lambda: swept(plan, grid), by_hand_lifetimes], args.repeat)
    report(f"sweep lifetime x rate ({120 * reps:,} points, each its own range end)",
           ["planner, sum(...)", "numpy by hand"], times)


if __name__ == "__main__":
    main()
