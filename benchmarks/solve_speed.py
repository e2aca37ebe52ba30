"""Every solve/maximize/minimize in sheets/token_cost.plan, after loading.

Each question is answered with a fresh :class:`planner.questions.solve.Solver` (so its
symbolic preparation, the closed-form search included, is counted), in every
scenario it names; the time is compared with one plain evaluation of the plan
(``plan.evaluate()``) measured in the same run. Goal: each under 0.2 s.

    python benchmarks/solve_speed.py [--repeat 5] [FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "sheets" / "token_cost.plan"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import planner
    from planner.questions.solve import Solver

    t = time.perf_counter()
    plan = planner.load(args.file)
    load = time.perf_counter() - t
    plan.evaluate()  # compile once, as any command does
    evals = []
    for _ in range(50):
        t = time.perf_counter()
        plan.evaluate()
        evals.append(time.perf_counter() - t)
    evaluation = statistics.median(evals)
    print(f"load {load * 1e3:.0f} ms; one evaluation {evaluation * 1e3:.2f} ms (median of 50)")
    print(f"{'question':70} {'answers':>7} {'first':>9} {'median':>9} {'x eval':>8}")
    worst = 0.0
    for stmt in Solver(plan).questions():
        times = []
        for _ in range(args.repeat):
            solver = Solver(plan)
            t = time.perf_counter()
            results = solver.run(stmt)
            times.append(time.perf_counter() - t)
        text = " ".join(stmt.span.text.split())
        text = text if len(text) <= 70 else text[:67] + "..."
        med = statistics.median(times)
        worst = max(worst, med)
        print(f"{text:70} {len(results):>7} {times[0] * 1e3:7.1f}ms {med * 1e3:7.1f}ms {med / evaluation:7.0f}x")
    print(f"slowest question: {worst * 1e3:.0f} ms (goal < 200 ms: {'met' if worst < 0.2 else 'NOT met'})")


if __name__ == "__main__":
    main()
