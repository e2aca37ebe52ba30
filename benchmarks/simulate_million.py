"""1,000,000 samples of every quantity of a finance plan, in blocks, against the same in numpy by hand.

planner: ``simulate.run`` on ``tests/plans/gpu_buy_vs_rent_uncertain.plan`` in scenario ``base_case``
keeping every quantity ``planner simulate`` shows by default (15), with the progress callback the
command line's bar uses, then the table of statistics. Baseline: ``simulate_speed.by_hand`` (the
same uniforms, inverse CDFs and the three 36-month discounted sums written in numpy) at the same
sample count. Time: best of ``--repeat`` interleaved runs; memory: tracemalloc's peak (numpy's
buffers included) of one run each, in its own process so neither run's arrays count for the other.
Goal: under 5 s and 200 MB.

    python benchmarks/simulate_million.py [--samples 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from timing import interleaved  # benchmarks/timing.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "tests" / "plans" / "gpu_buy_vs_rent_uncertain.plan"


def with_planner(n: int):
    from planner.outputs import simulation
    from planner.plan import load_compiled  # the compiled plan the questions take (planner.load wraps it)
    from planner.questions import simulate

    plan = load_compiled(PLAN)
    names = simulate.default_names(plan)
    done = [0]
    sims = simulate.run(plan, ["base_case"], n, 0, "lhs", names=names,
                        progress=lambda k: done.__setitem__(0, done[0] + k))
    assert done[0] == n
    return simulation.SimulationView(sims, names, [5.0, 50.0, 95.0]).table()  # (the flags were not simulated)


def numpy_by_hand(n: int):
    from simulate_speed import by_hand

    return by_hand(n)


def _peak(which: str, n: int) -> float:
    """tracemalloc's peak (MB) of one run, in a fresh process."""
    code = (f"import sys, tracemalloc; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            "import simulate_million as m; tracemalloc.start(); "
            f"m.{which}({n}); print(tracemalloc.get_traced_memory()[1] / 1e6)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = args.samples
    planner_times, numpy_times = interleaved([lambda: with_planner(n), lambda: numpy_by_hand(n)], args.repeat)
    planner_mb, numpy_mb = _peak("with_planner", n), _peak("numpy_by_hand", n)
    best_p, best_n = min(planner_times), min(numpy_times)
    print(f"samples          {n:,}  ({args.repeat} runs each, interleaved; best)")
    print(f"planner simulate {best_p:8.2f} s  peak {planner_mb:7.1f} MB  (15 quantities, blocks, progress, table)")
    print(f"numpy by hand    {best_n:8.2f} s  peak {numpy_mb:7.1f} MB  (3 headlines)")
    print(f"ratio            {best_p / best_n:8.2f}x       {planner_mb / numpy_mb:7.2f}x  (goal < 5 s and 200 MB: "
          f"{'met' if best_p < 5 and planner_mb < 200 else 'NOT met'})")


if __name__ == "__main__":
    main()
