"""Exporting finance plans of monthly sums to a workbook, against loading and evaluating them.

Two plans nobody tuned the export for:

* ``examples/gpu_buy_vs_rent.plan``: 36 months, four scenarios, discounted monthly sums for the NPVs,
  a ramp written with ``min()``, a break-even month as a ``min`` over ``n`` of nested cumulative sums,
  a sweep and two solves (one per scenario);
* the same plan over 120 months (``horizon = 120 month``, its bound raised to match);
* one 20,000-term sum (``sum(rate * k^2 for k in 1..n)``, ``n`` up to 20,000);
* ``benchmarks/plans/support_team.plan``, written from the docs by a new user: 24 months, a sum over the
  hiring waves inside each month of a ``min`` and a ``first``, four scenarios, two sweeps over them, an
  integer threshold (``solve min hires ... for all``) and a root over those sums.

Each is loaded once; the export (``Book(plan).build()`` and the XlsxWriter bytes) is timed against
two baselines of the same run: the plan's load and evaluation (``planner check``'s own work), and the
same export with every term of a sum printed apart into a helper cell of its own (the route before
the Cash flows sheet, which prints a term once per row and fills in each column; ``--old-repeat``
runs of it, 0 to skip). Prints the best and the median of the runs and the ratios of the bests. Goal:
each export under 10 s of CPU.

    python benchmarks/export_speed.py [--repeat 3] [--old-repeat 1]
"""

from __future__ import annotations

import argparse
import re
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
    parser.add_argument("--old-repeat", type=int, default=1)
    args = parser.parse_args()

    from planner.outputs.excel.writer import Book, to_bytes
    from planner.plan import load_compiled as load, loads_compiled as loads  # the plan the Book takes

    example = ROOT / "examples" / "gpu_buy_vs_rent.plan"
    months_120, n = re.subn(r"(?m)^(horizon\s*=\s*)36 month(.*<= horizon <= )60 month",
                            r"\g<1>120 month\g<2>120 month", example.read_text(encoding="utf-8"))
    assert n == 1, "the example's horizon line changed: update this benchmark"
    cases = {"gpu_buy_vs_rent (36 months, 4 scenarios)": lambda: load(example),
             "gpu_buy_vs_rent over 120 months": lambda: loads(months_120, str(example)),
             "one 20,000-term sum": lambda: loads(BIG_SUM, "big_sum.plan"),
             "support_team (24 months, sums in sums, 2 sweeps, 2 solves)":
                 lambda: load(ROOT / "benchmarks" / "plans" / "support_team.plan")}
    for label, make in cases.items():
        def baseline(make=make):
            make().evaluate()

        plan = make()

        def export(plan=plan):
            to_bytes(Book(plan).build())

        base = _timed(baseline, args.repeat)
        runs = _timed(export, args.repeat)
        line = (f"{label}: export best {min(runs):.2f} s CPU, median {statistics.median(runs):.2f} s; "
                f"load+evaluate best {min(base):.2f} s ({min(runs) / max(min(base), 1e-9):.0f}x)")
        if args.old_repeat:
            Book.flow_writer = lambda self, where, env: None  # every term in a helper cell of its own
            try:
                old = _timed(export, args.old_repeat)
            finally:
                del Book.flow_writer
            line += f"; terms one by one best {min(old):.2f} s ({min(old) / min(runs):.1f}x the export)"
        print(line, flush=True)


if __name__ == "__main__":
    threading.stack_size(512 * 1024 * 1024)  # deep plans: as the command line runs them
    worker = threading.Thread(target=main)
    worker.start()
    worker.join()
