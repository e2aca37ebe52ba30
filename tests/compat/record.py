"""Record the compatibility corpus: the plans of an earlier commit and that commit's own figures.

    python tests/compat/record.py COMMIT [EXTRA.plan ...]

Checks COMMIT out in a throwaway worktree (``git worktree add``), collects every ``.plan`` under
sheets/, tests/plans/ and examples/ and the plan blocks of its README (a block counts when that
commit loads it), and runs that commit's own planner on each, with PYTHONPATH pointing at the
checkout: ``planner eval FILE --scenario all -f json`` (and without ``--scenario`` where the plan
has scenarios) and ``planner check FILE -f json``
(``--no-cache`` where the commit has a cache). The plans are stored under
tests/compat/<short-sha>/ with their relative paths, each beside FILE.json holding the figures
that tests/test_compat_corpus.py compares (the values per scenario, in the display unit and the
base unit, each quantity's units, and every check's verdict). A plan text already recorded with
the same figures at an older commit is not stored again. EXTRA plans (written for the corpus)
are recorded the same way under extra/.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PLAN_FOLDERS = ("sheets", "tests/plans", "examples")
FENCE = re.compile(r"^```(\w*)\s*$")


def readme_blocks(text: str) -> list[str]:
    """The README's fenced blocks that may be plans: ```plan, or bare ``` before plan blocks had a tag."""
    blocks, lines, inside, tag = [], [], False, ""
    for line in text.splitlines():
        fence = FENCE.match(line)
        if fence and not inside:
            inside, tag, lines = True, fence.group(1), []
        elif line.strip() == "```" and inside:
            inside = False
            if tag in ("plan", ""):
                blocks.append("\n".join(lines) + "\n")
        elif inside:
            lines.append(line)
    return blocks


def run(checkout: Path, args: list[str]) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(checkout), NO_COLOR="1", COLUMNS="200")
    done = subprocess.run([sys.executable, "-m", "planner", *args], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=900)
    return done.returncode, done.stdout, done.stderr


def figures(checkout: Path, plan: Path, no_cache: list[str]) -> dict | None:
    """What the corpus test compares, from the commit's own JSON; None when the plan does not load."""
    code, out, err = run(checkout, [*no_cache, "eval", str(plan), "--scenario", "all", "-f", "json"])
    if code != 0:
        print(f"  skip {plan.name}: eval exit {code}: {err.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    ev = json.loads(out)
    code, out, err = run(checkout, [*no_cache, "check", str(plan), "-f", "json"])
    if code not in (0, 1):
        print(f"  skip {plan.name}: check exit {code}: {err.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    ck = json.loads(out)
    base = None
    if ev["scenarios"]:  # `--scenario all` is every declared scenario; the figures without one too
        code, out, err = run(checkout, [*no_cache, "eval", str(plan), "-f", "json"])
        if code != 0:
            print(f"  skip {plan.name}: eval exit {code}: {err.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
        base = {key: json.loads(out)[key] for key in ("values", "base_values")}
    return {
        "base_eval": base,
        "eval": {
            "format": ev["format"],
            "scenarios": ev["scenarios"],
            "units": {name: [q.get("unit", ""), q.get("base_unit", "")]
                      for name, q in ev["quantities"].items() if "unit" in q},
            "values": ev["values"],
            "base_values": ev["base_values"],
        },
        "check": {
            "format": ck["format"],
            "passed": ck["passed"],
            "failed": ck["failed"],
            "checks": [{key: c.get(key) for key in ("check", "line", "scenario", "passed", "actual",
                                                   "expected", "unit", "with")}
                       for c in ck["checks"]],
        },
    }


def recorded() -> set[str]:
    """Digests of (plan text, figures) already in the corpus."""
    seen = set()
    for js in HERE.glob("*/**/*.plan.json"):
        plan = js.with_suffix("")
        seen.add(digest(plan.read_text(), json.loads(js.read_text())))
    return seen


def digest(text: str, figs: dict) -> str:
    return hashlib.sha256((text + json.dumps(figs, sort_keys=True)).encode()).hexdigest()


def main(commit: str, extras: list[str]) -> None:
    short = subprocess.run(["git", "rev-parse", "--short=7", commit], cwd=REPO, check=True,
                           capture_output=True, text=True).stdout.strip()
    checkout = Path(tempfile.gettempdir()) / f"compat-{short}"
    if not checkout.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(checkout), short], cwd=REPO,
                       check=True, capture_output=True)
    _, helptext, _ = run(checkout, ["--help"])
    no_cache = ["--no-cache"] if "--no-cache" in helptext else []
    plans: list[tuple[str, str]] = []
    for folder in PLAN_FOLDERS:
        for path in sorted((checkout / folder).glob("*.plan")):
            plans.append((str(path.relative_to(checkout)), path.read_text()))
    readme = checkout / "README.md"
    for n, block in enumerate(readme_blocks(readme.read_text()) if readme.exists() else [], 1):
        plans.append((f"README/block-{n:02d}.plan", block))
    for extra in extras:
        plans.append((f"extra/{Path(extra).name}", Path(extra).read_text()))
    seen = recorded()
    scratch = checkout / "_compat"
    scratch.mkdir(exist_ok=True)
    kept = 0
    for rel, text in plans:
        where = checkout / rel if not rel.startswith(("README/", "extra/")) else scratch / Path(rel).name
        if rel.startswith(("README/", "extra/")):
            where.write_text(text)
        figs = figures(checkout, where, no_cache)
        if figs is None:
            continue
        key = digest(text, figs)
        if key in seen:
            print(f"  same as recorded: {rel}", file=sys.stderr)
            continue
        seen.add(key)
        out = HERE / short / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        Path(str(out) + ".json").write_text(json.dumps(figs, indent=1, sort_keys=True) + "\n")
        kept += 1
        print(f"  recorded {short}/{rel}", file=sys.stderr)
    print(f"{short}: {kept} plans recorded", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
