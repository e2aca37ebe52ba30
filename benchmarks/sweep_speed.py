"""A 1,000,000-point sweep of the speedup formula against the same formula in numpy.

planner: ``sweep alpha in 0..0.999999 count 1000000 show speedup`` on
``sheets/token_cost.plan`` (after loading; the compiled function is reused,
as for every sweep after the first), including building the grid, checking
every constraint per point and looking for non-finite values.
Baseline: the same points and formula written by hand in numpy,
``(1 - a**(gamma + 1)) / (1 - a) / (gamma * c + 1)``.

Prints the best and the median of interleaved runs and their ratios. Goal: at most 1.5x.

    python benchmarks/sweep_speed.py [--points 1000000] [--repeat 30]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import numpy as np

from timing import interleaved  # benchmarks/timing.py, beside this script

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()

    from planner.plan import load_compiled  # the compiled plan the questions take (planner.load wraps it)
    from planner.questions import sweep
    from planner.questions.ranges import parse_assignment

    plan = load_compiled(ROOT / "sheets" / "token_cost.plan")
    n = args.points
    axes = [parse_assignment(plan, f"alpha=0..{1 - 1 / n} count {n}")]

    def with_planner():
        r = sweep.run(plan, axes, ["speedup"])
        assert r.size == n and r.issue_count == 0
        return r.columns["speedup"]

    gamma, c = 4.0, 0.1

    def by_hand():
        a = np.linspace(0.0, 1 - 1 / n, n)
        return (1 - a ** (gamma + 1)) / (1 - a) / (gamma * c + 1)

    assert np.allclose(with_planner(), by_hand(), rtol=1e-12)
    planner_times, numpy_times = interleaved([with_planner, by_hand], args.repeat)
    print(f"points            {n:,}  ({args.repeat} runs each, interleaved; best and median)")
    print(f"planner sweep     {min(planner_times) * 1e3:8.1f} ms {statistics.median(planner_times) * 1e3:8.1f} ms"
          "  (grid, compiled plan, constraints, finiteness)")
    print(f"numpy by hand     {min(numpy_times) * 1e3:8.1f} ms {statistics.median(numpy_times) * 1e3:8.1f} ms")
    ratio = min(planner_times) / min(numpy_times)
    median_ratio = statistics.median(planner_times) / statistics.median(numpy_times)
    print(f"ratio             {ratio:8.2f}x {median_ratio:8.2f}x  (goal <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")


if __name__ == "__main__":
    main()
