"""A 400-million-point grid reduced to one probability with ``--dask``, against the in-memory sweep.

Plan: ``benchmarks/plans/buy_or_rent_grid.plan``. The grid: 200 purchase prices x 200 rental prices x
200 utilisations x 50 months (400,000,000 points), reduced to the share of points where owning is
cheaper, on this machine's cores (``planner.questions.chunked``, chunks of 100 MB, Dask's threads),
the constraints checked at every point. Baseline: the in-memory sweep (``sweep.run``, every point's
values held, then ``numpy.mean``) of a grid that fits, 200 x 200 x 50 x 5 (10,000,000 points); the
chunked route runs that grid too. Each run is its own process, after loading the plan; time is wall
time, memory the process's peak resident set (``resource.getrusage``, max RSS: numpy, Dask and the
interpreter). Ratios are per point. Goal: peak under 2 GB for the big grid.

    python benchmarks/dask_grid.py [--months 50] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "benchmarks" / "plans" / "buy_or_rent_grid.plan"


def _axes(plan, months: int, shrink: bool):
    from planner.questions.ranges import parse_assignment

    n, first, last = (50, 32, 36) if shrink else (200, 1, months)
    return [parse_assignment(plan, t) for t in (
        "purchase_price=20000 USD..40000 USD count 200", "rent_per_hour=1 USD..4 USD count 200",
        f"utilisation=0..1 count {n}", f"months={first}..{last}")]


def one(which: str, months: int) -> dict:
    """One run in this process: (points, share, seconds, peak MB)."""
    import resource
    import time

    import numpy as np

    from planner.plan import load_compiled  # the compiled plan the questions take (planner.load wraps it)
    from planner.language.lower import lower_expr
    from planner.language.source import Source
    from planner.questions import chunked, sweep

    plan = load_compiled(PLAN)
    axes = _axes(plan, months, shrink=which != "dask")
    t = time.perf_counter()
    if which == "memory":
        r = sweep.run(plan, axes, ["owning_is_cheaper"])
        share = float(np.mean(r.columns["owning_is_cheaper"][~r.bad]))
        points = r.size
    else:
        prepared = sweep.prepare(plan, axes, [], max_points=chunked.MAX_POINTS)
        cond = lower_expr(Source("--probability", "owning_is_cheaper"))
        with chunked.scheduler() as run:
            r = chunked.sweep(run, prepared, [("owning_is_cheaper", cond)], levels=())
        share = r.probabilities[0][1]
        points = r.size
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return {"which": which, "points": points, "share": share, "seconds": seconds, "peak_mb": peak}


def _run(which: str, months: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", which, "--months", str(months)],
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--months", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--one", choices=["memory", "dask-small", "dask"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.months)))
        return
    runs: dict[str, dict] = {}
    for _ in range(args.repeat):  # interleaved; the best time of each is kept
        for which in ("memory", "dask-small", "dask"):
            got = _run(which, args.months)
            if which not in runs or got["seconds"] < runs[which]["seconds"]:
                runs[which] = got
    base = runs["memory"]["seconds"] / runs["memory"]["points"]
    for which in ("memory", "dask-small", "dask"):
        r = runs[which]
        per = r["seconds"] / r["points"]
        print(f"{which:10}  {r['points']:>12,} points  {r['seconds']:7.2f} s  {per * 1e9:6.2f} ns/point "
              f"({per / base:4.2f}x in-memory)  peak {r['peak_mb']:7.0f} MB  P(owning is cheaper) = {r['share']:.6f}")
    assert abs(runs["memory"]["share"] - runs["dask-small"]["share"]) < 1e-12, "the two routes disagree"


if __name__ == "__main__":
    main()
