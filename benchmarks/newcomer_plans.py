"""Plans written from the docs by a new user, every command as a user runs it, as ratios in one run.

For each plan named below (``benchmarks/plans/``, else ``examples/``): ``planner check`` against the
same figures from a plain Python script (``benchmarks/baselines/``, month-by-month code written apart from
the plan), cold (``--no-cache``) and warm; then ``export``, ``report`` and ``build`` against the plan's own
``check``, and ``report`` and ``build`` cold against the cold ``check``. Each command is a fresh process
(its bytecode written and read as an installed planner's is, whatever ``PYTHONDONTWRITEBYTECODE`` says),
timed by CPU (user + system of the child: the machine may be shared); runs are interleaved and the best
of ``--repeat`` is compared. The goals (issue 38): check at most 10x the script warm and 15x cold; export
under 3 s of CPU and at most 3x check; report and build within 3x check, cold and warm. Not a test:
nothing fails, the ratios are printed.

    python benchmarks/newcomer_plans.py [--repeat 3] [--plan cash_60_months] [--skip build]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
PLANS = {  # plan -> its plain script (None: no script, the plan's own commands only)
    "article2_user": "article2_user",  # the 214-line plan of benchmarks/answers_speed.py (every answer numeric)
    "article2_one_sided": "article2_user",
    "cash_60_months": "cash_60_months",
    "fleet_60_months": "fleet_60_months",
    "lease_or_buy_36": "lease_or_buy_36",  # series with pmt, npv, irr, first and an uncertain lease price
    "saas_growth": "saas_growth",  # 36 months of sales hiring with a ramp, churn, a loan; four questions
    "inference_capacity": "inference_capacity",  # 30 months of GPUs ordered 3 months ahead, roofline throughput
    "gpu_buy_vs_rent": None,  # examples/: the shipped 36-month plan with monthly sums
    "support_backlog": None,  # examples/: series over the periods (a recurrence per month)
    "grain_silo": None,
}
COMMANDS = ("check", "export", "report", "build")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # without .pyc files every
# command compiles planner's modules again: a fifth of a check's CPU that no installed planner spends
if ENV.get("PYTHONPATH"):  # the commands run in a temporary folder: `PYTHONPATH=.` is this checkout, not that folder
    ENV["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in ENV["PYTHONPATH"].split(os.pathsep) if p)


def cpu(argv: list[str], cwd: Path, limit: float) -> float:
    """CPU seconds of one process (inf when it runs past ``limit`` seconds of wall time, nan when it fails)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=ENV)
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return float("inf")
    spent = _children_cpu()  # a reaped child's resource usage is added to RUSAGE_CHILDREN
    return float("nan") if proc.returncode != 0 else spent


_LAST = [0.0]


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = r.ru_utime + r.ru_stime
    spent, _LAST[0] = total - _LAST[0], total
    return spent


def plan_path(name: str) -> Path:
    here = ROOT / "plans" / f"{name}.plan"
    return here if here.exists() else ROOT.parent / "examples" / f"{name}.plan"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plan", action="append", choices=sorted(PLANS))
    ap.add_argument("--skip", default="", help="commands to leave out, comma-separated")
    ap.add_argument("--limit", type=float, default=180.0, help="wall seconds before a command counts as not finishing")
    args = ap.parse_args()
    planner = [str(Path(sys.executable).parent / "planner")]
    skip = set(filter(None, args.skip.split(",")))
    _children_cpu()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for name in args.plan or list(PLANS):
            path = plan_path(name)
            runs = {"check (cold)": planner + ["--no-cache", "check", str(path)],
                    "check": planner + ["check", str(path)]}
            if "export" not in skip:
                runs["export"] = planner + ["export", str(path), "-o", str(out / f"{name}.xlsx")]
            for command in ("report", "build"):
                if command not in skip:
                    target = str(out / (f"{name}.md" if command == "report" else f"{name}-build"))
                    runs[command] = planner + [command, str(path), "-o", target]
                    runs[f"{command} (cold)"] = planner + ["--no-cache", command, str(path), "-o", target]
            script = PLANS[name]
            if script is not None:
                runs["script"] = [sys.executable, str(ROOT / "baselines" / f"{script}.py")]
            best = {k: float("inf") for k in runs}
            for argv in runs.values():  # warm the file cache and the compiled-plan cache
                cpu(argv, out, args.limit)
            _children_cpu()
            for _ in range(args.repeat):  # interleaved: a busy machine slows all alike
                for key, argv in runs.items():
                    t = cpu(argv, out, args.limit)
                    best[key] = t if t != t or best[key] != best[key] else min(best[key], t)
            print(f"\n{path.relative_to(ROOT.parent)}")
            for key, t in best.items():
                extra = ""
                if key.split()[0] in ("export", "report", "build"):
                    check = best["check (cold)" if "cold" in key else "check"]
                    extra = f"  {t / check:5.1f}x its check{' (cold)' if 'cold' in key else ''} (goal <= 3x)"
                elif key.startswith("check") and "script" in best:
                    goal = 15 if "cold" in key else 10
                    extra = f"  {t / best['script']:5.1f}x the script (goal <= {goal}x)"
                shown = "did not finish" if t == float("inf") else "failed" if t != t else f"{t:6.3f} s"
                print(f"  {key:14} cpu {shown}{extra}")


if __name__ == "__main__":
    main()
