"""Every solve/maximize/minimize of every shipped sheet, after loading.

Each question is answered on a freshly loaded plan (so its symbolic preparation,
the closed-form search included, is counted: a plan derives each question's
closed forms once), in every scenario it names; the time per answer is
compared with one plain evaluation of the plan (``plan.evaluate()``) measured
in the same run. CPU time (the machine may be shared). Goal: every question
under 0.2 s per answer.

    python benchmarks/solve_speed.py [--repeat 5] [FILE ...]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=[str(p) for p in sorted((ROOT / "sheets").glob("*.plan"))])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from planner.plan import load_compiled  # the compiled plan the questions take (planner.load wraps it)
    from planner.questions.solve import Solver

    clock = time.process_time
    worst = 0.0
    for path in args.files:
        t = clock()
        plan = load_compiled(path)
        load = clock() - t
        questions = Solver(plan).questions()
        if not questions:
            continue
        plan.evaluate()  # compile once, as any command does
        evals = []
        for _ in range(50):
            t = clock()
            plan.evaluate()
            evals.append(clock() - t)
        evaluation = statistics.median(evals)
        print(f"\n{Path(path).name}: load {load * 1e3:.0f} ms; one evaluation {evaluation * 1e3:.2f} ms (median of 50)")
        print(f"{'question':70} {'answers':>7} {'first':>9} {'median':>9} {'x eval':>8}")
        for i in range(len(questions)):
            times = []
            for _ in range(args.repeat):
                fresh = load_compiled(path)  # nothing derived yet
                fresh.evaluate()
                stmt = Solver(fresh).questions()[i]
                t = clock()
                results = Solver(fresh).run(stmt)
                times.append((clock() - t) / len(results))
            text = " ".join(stmt.span.text.split())
            text = text if len(text) <= 70 else text[:67] + "..."
            med = statistics.median(times)
            worst = max(worst, med)
            print(f"{text:70} {len(results):>7} {times[0] * 1e3:7.1f}ms {med * 1e3:7.1f}ms {med / evaluation:7.0f}x")
    print(f"\nslowest question: {worst * 1e3:.0f} ms per answer (goal < 200 ms: {'met' if worst < 0.2 else 'NOT met'})")


if __name__ == "__main__":
    main()
