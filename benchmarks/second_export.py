"""A second `planner export` of the same plan: closed forms kept in the compiled-plan cache or not.

Both runs find the plan in the cache (no parse, no analysis, no compile); one finds its questions'
closed forms there too (kept by an earlier export), the other has to derive them again (its entry
was written by `planner eval`, which derives none; it is put back before each of its runs). The
two commands run in turn, as subprocesses, so that load on the machine hits both alike.

    python benchmarks/second_export.py [--plan sheets/llm_cost.plan] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", default=str(ROOT / "sheets" / "llm_cost.plan"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="second-export-"))
    planner = [sys.executable, "-m", "planner"]

    def run(cache: Path, *argv: str) -> float:
        env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        t = time.perf_counter()
        subprocess.run(planner + list(argv), env=env, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        return time.perf_counter() - t

    kept, bare = work / "kept", work / "bare"
    run(kept, "export", args.plan, "-o", str(work / "first.xlsx"))  # stores the plan, then its forms
    run(bare, "eval", args.plan)  # stores the plan only
    template = work / "bare-template"
    shutil.copytree(bare, template)
    with_forms, without = [], []
    for _ in range(args.repeat):
        with_forms.append(run(kept, "export", args.plan, "-o", str(work / "kept.xlsx")))
        shutil.rmtree(bare)
        shutil.copytree(template, bare)
        without.append(run(bare, "export", args.plan, "-o", str(work / "bare.xlsx")))
    shutil.rmtree(work)
    a, b = statistics.median(with_forms), statistics.median(without)
    print(f"{Path(args.plan).name}: second export, closed forms kept: median {a:.2f} s (best {min(with_forms):.2f}); "
          f"derived again: median {b:.2f} s (best {min(without):.2f}); saved {b - a:.2f} s ({b / a:.2f}x)")


if __name__ == "__main__":
    main()
