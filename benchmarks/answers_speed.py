"""`planner check` of a plan nobody tuned, against the same figures from a
plain Python script, both cold; and each answer's time after loading.

The plan (benchmarks/plans/article2_user.plan) was written from the docs as a
new user would: the second article's model, every function inline, no
imports, eight solve answers that its checks use. Its script
(benchmarks/baselines/article2_user.py) computes the same figures with a
bisection and loops. Both run in fresh processes, interleaved, `--repeat`
times; the ratio is of medians of wall time. Goal: at most 10x the script,
each answer under 0.2 s.

    python benchmarks/answers_speed.py [--repeat 5] [--plan P --script S]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
PLAN = ROOT / "plans" / "article2_user.plan"
SCRIPT = ROOT / "baselines" / "article2_user.py"


def cold(cmd: list[str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout}{done.stderr}")
    return elapsed


def answers(plan_path: Path, repeat: int) -> float:
    """Each answer as a check asks for it, after loading (a fresh plan each time, so nothing is
    derived yet): the answers object `planner check` uses (the fast route first where it exists)."""
    from planner.plan import load_compiled  # the compiled plan the questions take (planner.load wraps it)

    from planner.questions.fast import Answers

    clock = time.perf_counter
    aliases = list(Answers(load_compiled(plan_path)).statements)
    worst = 0.0
    print(f"\n{'answer (plan as written)':64} {'first':>9} {'median':>9}")
    for alias in aliases:
        times = []
        for _ in range(repeat):
            fresh = load_compiled(plan_path)
            fresh.evaluate()
            answers = Answers(fresh)
            t = clock()
            answers.value(alias)
            times.append(clock() - t)
        text = " ".join(answers.statements[alias].span.text.split())
        text = text if len(text) <= 64 else text[:61] + "..."
        med = statistics.median(times)
        worst = max(worst, med)
        print(f"{text:64} {times[0] * 1e3:7.1f}ms {med * 1e3:7.1f}ms")
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--plan", type=Path, default=PLAN)
    ap.add_argument("--script", type=Path, default=SCRIPT)
    ap.add_argument("--planner", default="planner",
                    help="the planner command, e.g. 'env PYTHONPATH=../old python -m planner' for another checkout")
    ap.add_argument("--against", help="another planner command, timed in the same run (the commit before a change)")
    ap.add_argument("--no-answers", action="store_true", help="only the cold ratio")
    args = ap.parse_args()

    check_cmd = shlex.split(args.planner) + ["--no-cache", "check", str(args.plan)]
    script_cmd = [sys.executable, str(args.script)]
    other_cmd = shlex.split(args.against) + ["--no-cache", "check", str(args.plan)] if args.against else None
    cold(check_cmd)  # warm the file cache, not the plan cache (--no-cache)
    cold(script_cmd)
    checks, scripts, others = [], [], []
    for _ in range(args.repeat):  # interleaved, so a busy machine slows all
        checks.append(cold(check_cmd))
        scripts.append(cold(script_cmd))
        if other_cmd:
            others.append(cold(other_cmd))
    c, s = statistics.median(checks), statistics.median(scripts)
    print(f"planner --no-cache check {args.plan.name}: median {c:.3f} s (min {min(checks):.3f})")
    print(f"python {args.script.name}: median {s:.3f} s (min {min(scripts):.3f})")
    print(f"ratio: {c / s:.1f}x the script (goal <= 10x: {'met' if c / s <= 10 else 'NOT met'})")
    if others:
        o = statistics.median(others)
        print(f"{args.against}: median {o:.3f} s (min {min(others):.3f}), {o / s:.1f}x the script")
    if args.no_answers:
        return
    worst = answers(args.plan, args.repeat)
    print(f"\nslowest answer: {worst * 1e3:.0f} ms (goal < 200 ms: {'met' if worst < 0.2 else 'NOT met'})")


if __name__ == "__main__":
    main()
