"""Exporting finance plans of monthly sums to a workbook, against loading and evaluating them.

Two plans nobody tuned the export for:

* ``examples/gpu_buy_vs_rent.plan``: 36 months, four scenarios, discounted monthly sums for the NPVs,
  a ramp written with ``min()``, a break-even month as a ``min`` over ``n`` of nested cumulative sums,
  a sweep and two solves (one per scenario);
* one 20,000-term sum (``sum(rate * k^2 for k in 1..n)``, ``n`` up to 20,000).

Each is loaded once; the export (``Book(plan).build()`` and the XlsxWriter bytes) is timed against
the baseline of the same run, the plan's load and evaluation (``planner check``'s own work). Prints
the best and the median of the runs and the ratio of the bests. Goal: each export under 10 s of CPU.

    python benchmarks/export_speed.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIG_SUM = """
n = 20000 where integer, 1 <= n <= 20000
rate = 0.5
total = sum(rate * k^2 for k in 1..n) "a 20,000-term sum"
"""


def _timed(fn, repeat: int) -> list[float]:
    """CPU seconds of each run (the machine is shared: wall time measures the neighbours too)."""
    out = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        out.append(time.process_time() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from planner.outputs.excel.writer import Book, to_bytes
    from planner.plan import load, loads

    cases = {"gpu_buy_vs_rent (36 months, 4 scenarios)": lambda: load(ROOT / "examples" / "gpu_buy_vs_rent.plan"),
             "one 20,000-term sum": lambda: loads(BIG_SUM, "big_sum.plan")}
    for label, make in cases.items():
        def baseline(make=make):
            make().evaluate()

        plan = make()

        def export(plan=plan):
            to_bytes(Book(plan).build())

        base = _timed(baseline, args.repeat)
        runs = _timed(export, args.repeat)
        print(f"{label}: export best {min(runs):.2f} s CPU, median {statistics.median(runs):.2f} s; "
              f"load+evaluate best {min(base):.2f} s; ratio {min(runs) / min(base):.1f}x")


if __name__ == "__main__":
    threading.stack_size(512 * 1024 * 1024)  # deep plans: as the command line runs them
    worker = threading.Thread(target=main)
    worker.start()
    worker.join()
