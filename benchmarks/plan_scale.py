"""Load + evaluate generated plans of 1,000 / 10,000 / 100,000 quantities.

Two shapes: a *chain* (each quantity uses the previous one and a shared input:
``x5 = x4 * 1.0001 + k / 5``) and *diamonds* (``d2 = d1 * 2``, ``d3 = d1 + 1``,
``d4 = d2 / d3``, repeated: every quantity is used twice downstream, which
would blow up exponentially if the plan were expanded into one expression).

Prints the time of each stage of loading and evaluating, as ``planner eval``
runs them (parse to IR, check, compile from the IR, evaluate; SymPy is not
involved; the cyclic collector paused while the plan is built and the loaded
plan frozen for it afterwards, as the command line does), the total, and the growth ratio from one size to the next (10x
quantities: 10 means linear). CPU time (the machine may be shared). Goals:
10,000 quantities under 2 s, 100,000 under 20 s, growth close to linear.

Then the parse alone against the way planner parsed before issue 11 (lark's
parse tree with its own position propagation, then the transformer over the
tree), on the 10,000-line chain, interleaved: goal at least 2x faster.

    python benchmarks/plan_scale.py [--max 100000] [--repeat 3]

Each size up to 10,000 quantities runs ``--repeat`` times and the best is kept (the machine is
shared: one run varies by 30%); 100,000 runs once.
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
    from planner.compute.evaluation import Plan
    from planner.language.limits import freeze, own_collector, paused_gc
    from planner.language.analysis import analyze
    from planner.language.lower import lower
    from planner.language.source import Source

    clock = time.process_time
    gc.collect()
    own_collector(True)  # as the command line's process (planner/cli/__init__.py, main; see limits.paused_gc)
    t = {}
    start = clock()
    with paused_gc():  # as planner.compute.evaluation.loads does
        t0 = clock()
        plan_ir = lower(Source("generated.plan", text))
        t1 = clock()
        model, analyzer = analyze(plan_ir)
        t2 = clock()
        plan = Plan(Source("generated.plan", text), model, analyzer)
        plan.compiled
        t3 = clock()
    freeze()  # as the command line does once the plan is loaded (planner/cli/common.py, _load)
    try:
        ev = plan.evaluate()
        t4 = clock()
    finally:
        own_collector(False)  # (which unfreezes)
    assert len(ev.values) == len(model.quantities)
    t.update(parse=t1 - t0, check=t2 - t1, compile=t3 - t2, evaluate=t4 - t3, total=t4 - start)
    return t


def parse_speed(text: str, repeat: int = 3) -> tuple[float, float]:
    """(the one-pass parse, lark's tree then the transformer as before), best CPU times."""
    from lark import Lark

    from planner.language.limits import paused_gc
    from planner.language.data import data_dir
    from planner.language.lower import _transform, lower
    from planner.language.parser import _NewlinePostLex
    from planner.language.source import Source

    before = Lark((data_dir("grammar") / "plan.lark").read_text(encoding="utf-8"), parser="lalr",
                  lexer="contextual", postlex=_NewlinePostLex(), propagate_positions=True,
                  maybe_placeholders=False, start="start", cache=True)
    src = Source("chain.plan", text)
    now, then = [], []
    with paused_gc():
        for _ in range(repeat):
            t = time.process_time()
            lower(src)
            now.append(time.process_time() - t)
            t = time.process_time()
            _transform(src, before.parse(text))
            then.append(time.process_time() - t)
    return min(now), min(then)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=100_000, help="largest plan (default 100000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per size up to 10,000 (the best is kept; 100,000 runs once)")
    args = ap.parse_args()
    import planner  # noqa: F401  (imports are not part of the measurement)

    sizes = [n for n in (1_000, 10_000, 100_000) if n <= args.max]
    print(f"{'shape':9} {'quantities':>10} {'parse':>7} {'check':>7} {'compile':>8} "
          f"{'eval':>7} {'total':>8} {'growth':>7}")
    summary = {}
    for name, gen in (("chain", chain), ("diamonds", diamonds)):
        previous = None
        for n in sizes:
            text = gen(n)
            best = min((measure(text) for _ in range(args.repeat if n < 100_000 else 1)), key=lambda r: r["total"])
            growth = f"{best['total'] / previous:6.1f}x" if previous else "     -"
            print(f"{name:9} {n:>10,} {best['parse']:7.2f} {best['check']:7.2f} "
                  f"{best['compile']:8.2f} {best['evaluate']:7.3f} {best['total']:8.2f} {growth:>7}")
            previous = best["total"]
            summary[(name, n)] = best["total"]
    for name in ("chain", "diamonds"):
        if (name, 10_000) in summary:
            t = summary[(name, 10_000)]
            print(f"{name}: 10,000 quantities in {t:.2f} s (goal < 2 s: {'met' if t < 2 else 'NOT met'})")
        if (name, 100_000) in summary:
            t = summary[(name, 100_000)]
            print(f"{name}: 100,000 quantities in {t:.2f} s (goal < 20 s: {'met' if t < 20 else 'NOT met'})")
    if 10_000 <= args.max:
        now, then = parse_speed(chain(10_000))
        print(f"parse of the 10,000-line chain: {now:.2f} s, {then:.2f} s as before (lark's tree, then the "
              f"transformer): {then / now:.2f}x faster (goal at least 2x: {'met' if then / now >= 2 else 'NOT met'})")


if __name__ == "__main__":
    main()
