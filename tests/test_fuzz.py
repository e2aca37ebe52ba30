"""Fuzzing: broken and hostile input never crashes planner.

Mutations of every shipped plan (at the token, character and line level),
plans generated from the grammar (hypothesis), ``--set`` and sweep values
on the command line, templates, and the compiled-plan cache (corrupt,
truncated, swapped and concurrently written entries: the warm figures are
the cold ones), and the language server's framing (`planner lsp` fed bad headers, huge lengths,
invalid JSON, early requests and random bytes: JSON-RPC errors only, no traceback, the good
session after them answered), uncertain inputs of every family with parameters across the float
range (hypothesis: 0, negatives, 1e-320, 1e400, nan-like text), loaded, evaluated and simulated:
what eval accepts, simulate accepts; and workbooks given to `planner import` (cells typed with text, dates,
TRUE/FALSE, errors, formulas, huge and tiny numbers; zip containers truncated, flipped, with duplicate
or dropped parts, lying sizes, DTDs and small bombs of a huge ratio: exit 0 or a clear error, and the
plan unchanged by a failed or dry run); and hostile prose (HTML, event handlers, `javascript:`/`data:` links,
entities, backticks, `$`, braces, Unicode in titles, notes, doc strings and question sentences)
through `planner report`, whose Markdown is rendered to HTML by markdown-it-py and audited as a
sanitizer would: no script, event handler or dangerous URL. Each case loads and evaluates (checks,
sometimes the workbook and the report too) or fails with a ``PlanError``;
an internal error, a crash or a case slower than 20 s is a finding, and the
bar is zero findings. The cases run in a child process
(tests/fuzz_runner.py), so a segmentation fault is seen, with the input
that caused it.

The budget is fixed (the same inputs every run, about 2,400 in CI, about a
minute); ``PLANNER_FUZZ=N`` multiplies it and draws new inputs
(``PLANNER_FUZZ=20 pytest tests/test_fuzz.py`` runs about 48,000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).with_name("fuzz_runner.py")
SCALE = max(1, int(os.environ.get("PLANNER_FUZZ", "1") or 1))
BUDGET = {"tokens": 400, "chars": 350, "lines": 350, "grammar": 400, "hypothesis": 20, "cli": 100, "template": 250, "cache": 120,
          "framing": 40, "distribution": 300, "workbook": 60, "prose": 40}
SEEDS = 2  # each kind in two child processes: the machine has two cores


@pytest.mark.parametrize("kind", list(BUDGET))
def test_fuzz(kind, tmp_path):
    count = BUDGET[kind] * SCALE // SEEDS
    first = 0 if SCALE == 1 else int.from_bytes(os.urandom(3), "big")
    procs = []
    for seed in range(first, first + SEEDS):
        state = tmp_path / f"case-{seed}.json"
        procs.append((seed, state, subprocess.Popen(
            [sys.executable, str(RUNNER), kind, str(seed), str(count), str(state)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)))
    problems = []
    ran = 0
    for seed, state, proc in procs:
        try:
            out, err = proc.communicate(timeout=600 * SCALE)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            problems.append(f"seed {seed}: hung on {state.read_text(encoding='utf-8')[:2000]}")
            continue
        if proc.returncode != 0:  # -11 is a segmentation fault
            last = state.read_text(encoding="utf-8")[:2000] if state.exists() else "?"
            problems.append(f"seed {seed}: exit {proc.returncode} on {last}\n{err.decode()[-2000:]}")
            continue
        summary = json.loads(out.decode().strip().splitlines()[-1])
        ran += summary["ran"]
        for f in summary["findings"][:5]:
            problems.append(f"seed {seed}: {f['error']}\n  input: {json.dumps(f['case'])[:1500]}\n"
                            f"{f.get('traceback', '')}")
    assert not problems, "\n\n".join(problems)
    assert ran >= count * SEEDS * 0.9  # the runner really ran the budget (hypothesis may stop a little short)


def test_the_fuzzer_finds_a_crash(tmp_path, monkeypatch):
    """A test that cannot fail is a defect: a case that kills the process is reported with its input."""
    state = tmp_path / "case.json"
    code = ("import sys, runpy; sys.argv = ['fuzz_runner.py', 'cli', '0', '1', sys.argv[1]]; "
            "import planner.cli as cli; cli.main = lambda args: __import__('os').kill(__import__('os').getpid(), 11); "
            f"runpy.run_path({str(RUNNER)!r}, run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code, str(state)], capture_output=True, timeout=120)
    assert proc.returncode == -11
    assert json.loads(state.read_text())["cli"][0] in ("eval", "sweep", "solve")
