"""Whole commands on every shipped sheet, as a user runs them, against plain Python.

For each ``sheets/*.plan``: ``planner eval --scenario all``, ``check``,
``solve`` (when it has questions), ``export``, ``report -o`` and ``build``, each a fresh
process (start-up and imports included), timed by wall clock and by CPU
(user + system, from the child's resource usage; the machine may be shared,
and CPU time is what load on it disturbs least). ``eval`` runs in the same
loop as the plain-Python script under ``benchmarks/baselines/`` that computes
what the sheet's article computes (constants, a loop, ``json.dumps``), and the
ratio of the two is printed; with the compiled-plan cache, cold (``--no-cache``)
and warm. Then a 1,000,000-point sweep to CSV from the command line (wall time
and peak memory) and ``planner --version``.

Python's bytecode is cached as for an installed package (``PYTHONPYCACHEPREFIX`` in a
temporary folder, written by a warm-up run). Runs are interleaved (planner, baseline, planner, ...) so that load on the
machine hits both alike; the best of ``--repeat`` runs is compared, medians
are shown too. The goals of issues 11 and 26 are checked at the end (ratios and
times measured in this run; not a test: nothing fails).

    python benchmarks/real_plans.py [--repeat 5] [--sheet token_cost] [--skip build,export]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINES = ROOT / "benchmarks" / "baselines"
COMMANDS = ("eval", "check", "solve", "export", "report", "build")


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)  # peak resident memory, KiB
    codes: set[int] = field(default_factory=set)

    @property
    def best(self) -> float:
        return min(self.wall)

    @property
    def best_cpu(self) -> float:
        return min(self.cpu)

    def text(self) -> str:
        return (f"wall {self.best:6.3f} s (median {statistics.median(self.wall):6.3f})  "
                f"cpu {self.best_cpu:6.3f} s  peak {max(self.rss) / 1024:5.0f} MB")


def planner_command() -> list[str]:
    script = Path(sys.executable).parent / "planner"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from planner.cli import run; run()"]


def run(argv: list[str], timing: Timing, env: dict, stdout=subprocess.DEVNULL, cwd: Path = ROOT) -> None:
    """One process, timed with its own resource usage (``os.wait4``)."""
    import time

    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    timing.wall.append(time.perf_counter() - start)
    timing.cpu.append(usage.ru_utime + usage.ru_stime)
    timing.rss.append(usage.ru_maxrss)
    timing.codes.add(os.waitstatus_to_exitcode(status))
    proc.returncode = os.waitstatus_to_exitcode(status)


def interleaved(jobs: dict[str, list[str]], repeat: int, env: dict) -> dict[str, Timing]:
    out = {name: Timing() for name in jobs}
    for name, argv in jobs.items():  # warm the OS file cache (and planner's cache, where a job uses it)
        run(argv, Timing(), env)
    for _ in range(repeat):
        for name, argv in jobs.items():
            run(argv, out[name], env)
    return out


def supports(option: str, planner: list[str], env: dict) -> bool:
    text = subprocess.run(planner + ["--help"], capture_output=True, text=True, env=env).stdout
    return option in text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each command (default 5)")
    ap.add_argument("--sheet", action="append", help="only this sheet (name without .plan); repeatable")
    ap.add_argument("--skip", default="", help="commands to leave out, a comma list (eval,check,solve,export,report,build,sweep)")
    ap.add_argument("--points", type=int, default=1_000_000, help="points of the command-line sweep (default 1000000)")
    args = ap.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}

    planner = planner_command()
    work = Path(tempfile.mkdtemp(prefix="planner-bench-"))
    # Bytecode as an installed package has it (pip compiles it): kept under the work folder, written
    # by the warm-up run, even where PYTHONDONTWRITEBYTECODE is set (else every run compiles planner).
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"), NO_COLOR="1", PYTHONPYCACHEPREFIX=str(work / "pyc"))
    env.pop("PLANNER_DEBUG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cache = supports("--no-cache", planner, env)
    sheets = sorted(p for p in (ROOT / "sheets").glob("*.plan") if not args.sheet or p.stem in args.sheet)
    results: dict[tuple[str, str], Timing] = {}
    ratios: dict[str, tuple[float, float, float, float]] = {}
    try:
        print(f"planner: {' '.join(planner)}   python {sys.version.split()[0]}   best of {args.repeat} runs")
        for sheet in sheets:
            rel = str(sheet.relative_to(ROOT))
            print(f"\n{rel}")
            baseline = BASELINES / f"{sheet.stem}.py"
            for command in COMMANDS:
                if command in skip:
                    continue
                argv = planner + [command, rel]
                if command == "eval":
                    jobs = {"planner": planner + (["--no-cache"] if cache else []) + [command, rel, "--scenario", "all"]}
                    if cache:
                        jobs["planner (cache warm)"] = argv + ["--scenario", "all"]
                    if baseline.exists():
                        jobs[f"python {baseline.relative_to(ROOT)}"] = [sys.executable, str(baseline)]
                    timings = interleaved(jobs, args.repeat, env)
                    base = timings.get(f"python {baseline.relative_to(ROOT)}")
                    for name, t in timings.items():
                        ratio = ""
                        if base and name.startswith("planner"):
                            ratio = f"  {t.best / base.best:5.1f}x the script ({t.best_cpu / base.best_cpu:.1f}x in cpu)"
                        print(f"  {'eval ' + name:38} {t.text()}{ratio}")
                    results[(sheet.stem, "eval")] = timings["planner"]
                    if base:
                        warm = timings.get("planner (cache warm)")
                        ratios[sheet.stem] = (timings["planner"].best / base.best,
                                              warm.best / base.best if warm else float("nan"),
                                              timings["planner"].best_cpu / base.best_cpu,
                                              warm.best_cpu / base.best_cpu if warm else float("nan"))
                    continue
                if command == "solve" and "solve " not in sheet.read_text(encoding="utf-8") \
                        and "maximize " not in sheet.read_text(encoding="utf-8"):
                    continue
                if command == "export":
                    argv = argv + ["-o", str(work / f"{sheet.stem}.xlsx")]
                elif command == "report":  # the Markdown and its plots, written to files
                    argv = argv + ["-o", str(work / f"{sheet.stem}-report" / f"{sheet.stem}.md")]
                elif command == "build":
                    argv = argv + ["-o", str(work / f"{sheet.stem}-out")]
                t = interleaved({command: argv}, args.repeat, env)[command]
                results[(sheet.stem, command)] = t
                bad = sorted(c for c in t.codes if c not in (0, 1))
                print(f"  {command:38} {t.text()}" + (f"  EXIT {bad}" if bad else ""))

        sweep = None
        if "sweep" not in skip:
            n = args.points
            print(f"\nplanner sweep sheets/token_cost.plan 'alpha=0..0.99 count {n}' -f csv > file")
            sweep = Timing()
            for _ in range(max(1, args.repeat // 2)):
                with open(work / "sweep.csv", "wb") as out:
                    run(planner + ["sweep", "sheets/token_cost.plan", f"alpha=0..0.99 count {n}", "-f", "csv"],
                        sweep, env, stdout=out)
            size = (work / "sweep.csv").stat().st_size
            print(f"  {'sweep to CSV':38} {sweep.text()}  ({size / 1e6:.0f} MB written)")
        version = interleaved({"--version": planner + ["--version"]}, args.repeat, env)["--version"]
        print(f"\n  {'planner --version':38} {version.text()}")

        print("\ngoals (issues 11 and 26)")

        def goal(text: str, ok: bool, value: str) -> None:
            print(f"  {'met    ' if ok else 'NOT met'}  {text:62} {value}")

        if ("llm_cost", "check") in results:
            t = results[("llm_cost", "check")]
            goal("planner check sheets/llm_cost.plan under 1.5 s", t.best < 1.5, f"{t.best:.2f} s wall, {t.best_cpu:.2f} s cpu")
        if ("llm_cost", "report") in results:
            t = results[("llm_cost", "report")]
            goal("planner report sheets/llm_cost.plan -o FILE within 4 s (issue 26)", t.best < 4,
                 f"{t.best:.2f} s wall, {t.best_cpu:.2f} s cpu")
        if "token_cost" in ratios:
            cold, warm, cold_cpu, warm_cpu = ratios["token_cost"]
            goal("eval token_cost --scenario all within 5x token_cost.py", cold <= 5,
                 f"{cold:.1f}x wall, {cold_cpu:.1f}x cpu")
            if cache:
                goal("  ... with the cache warm, within 2x", warm <= 2, f"{warm:.1f}x wall, {warm_cpu:.1f}x cpu")
        if sweep is not None:
            goal(f"{args.points:,}-point sweep to CSV under 5 s, under 200 MB", sweep.best < 5 and max(sweep.rss) < 200 * 1024,
                 f"{sweep.best:.2f} s, {max(sweep.rss) / 1024:.0f} MB")
        print("  (each question under 0.2 s per answer: python benchmarks/solve_speed.py; "
              "chains of 10,000 and 100,000 quantities: python benchmarks/plan_scale.py)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
