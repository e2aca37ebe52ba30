"""Load + evaluate generated plans of 1,000 / 10,000 / 100,000 quantities.

Two shapes: a *chain* (each quantity uses the previous one and a shared input:
``x5 = x4 * 1.0001 + k / 5``) and *diamonds* (``d2 = d1 * 2``, ``d3 = d1 + 1``,
``d4 = d2 / d3``, repeated: every quantity is used twice downstream, which
would blow up exponentially if the plan were expanded into one expression).

Prints the time of each stage (parse to IR, check, SymPy, compile, evaluate),
the total, and the growth ratio from one size to the next (10x quantities:
10 means linear). Goal: 10,000 quantities under 2 s, growth close to linear.

    python benchmarks/plan_scale.py [--max 100000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import gc
import time


def chain(n: int) -> str:
    lines = ["k = 2 where k > 0", "x0 = 1.5"]
    lines += [f"x{i} = x{i - 1} * 1.0001 + k / {i}" for i in range(1, n - 1)]
    return "\n".join(lines) + "\n"


def diamonds(n: int) -> str:
    lines = ["d0 = 1.5"]
    i = 1
    while i < n:
        lines += [f"d{i} = d{i - 1} * 2", f"d{i + 1} = d{i - 1} + 1", f"d{i + 2} = d{i} / d{i + 1}"]
        i += 3
    return "\n".join(lines[:n]) + "\n"


def measure(text: str) -> dict[str, float]:
    from planner.compute.evaluation import Plan, paused_gc
    from planner.language.analysis import analyze
    from planner.language.lower import lower
    from planner.language.source import Source

    gc.collect()
    t = {}
    start = time.perf_counter()
    with paused_gc():  # as planner.compute.evaluation.loads does
        t0 = time.perf_counter()
        plan_ir = lower(Source("generated.plan", text))
        t1 = time.perf_counter()
        model, analyzer = analyze(plan_ir)
        t2 = time.perf_counter()
        plan = Plan(Source("generated.plan", text), model, analyzer)
        t3 = time.perf_counter()
    plan.compiled
    t4 = time.perf_counter()
    ev = plan.evaluate()
    t5 = time.perf_counter()
    assert len(ev.values) == len(model.quantities)
    t.update(parse=t1 - t0, check=t2 - t1, sympy=t3 - t2, compile=t4 - t3, evaluate=t5 - t4, total=t5 - start)
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=100_000, help="largest plan (default 100000)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size (the best is kept)")
    args = ap.parse_args()
    import planner  # noqa: F401  (imports are not part of the measurement)

    sizes = [n for n in (1_000, 10_000, 100_000) if n <= args.max]
    print(f"{'shape':9} {'quantities':>10} {'parse':>7} {'check':>7} {'sympy':>7} {'compile':>8} "
          f"{'eval':>7} {'total':>8} {'growth':>7}")
    summary = {}
    for name, gen in (("chain", chain), ("diamonds", diamonds)):
        previous = None
        for n in sizes:
            text = gen(n)
            best = min((measure(text) for _ in range(args.repeat)), key=lambda r: r["total"])
            growth = f"{best['total'] / previous:6.1f}x" if previous else "     -"
            print(f"{name:9} {n:>10,} {best['parse']:7.2f} {best['check']:7.2f} {best['sympy']:7.2f} "
                  f"{best['compile']:8.2f} {best['evaluate']:7.3f} {best['total']:8.2f} {growth:>7}")
            previous = best["total"]
            summary[(name, n)] = best["total"]
    for name in ("chain", "diamonds"):
        if (name, 10_000) in summary:
            t = summary[(name, 10_000)]
            print(f"{name}: 10,000 quantities in {t:.2f} s (goal < 2 s: {'met' if t < 2 else 'NOT met'})")


if __name__ == "__main__":
    main()
