"""The language server on big plans: first diagnostics against ``planner eval``, 1,000 to 50,000 statements.

A plan of ``n`` statements is generated as people write them (inputs with
units, docs, tags and bounds, formulas that use names defined above,
functions and their calls, a few scenarios, checks and questions), written to
a temporary folder, and

- ``planner eval --no-cache`` is run on it (a fresh process, wall time: the
  command line as a user meets it, its start and imports included);
- ``planner lsp`` is started, initialised and given the plan (``didOpen``);
  the time from the process start to the plan's first diagnostics is taken
  (the syntax, names and units: what an editor shows first);
- then one statement in the middle is edited (a digit of a number changed,
  a keystroke), and the time to that version's first diagnostics taken: the
  statement parsed again and the whole plan checked again;
- and, in this process, that keystroke's parse alone (CPU time: the
  statements the keystroke did not touch are kept, only the edited one is
  parsed again).

Printed per size: eval, first diagnostics, their ratio (goal at most 3), the
first diagnostics per 1,000 statements (flat from 1,000 to 50,000 means
linear), the keystroke, its parse. Nothing fails: a benchmark.

    python benchmarks/lsp_scale.py [--sizes 1000,5000,10000,20000,50000]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from lsp_client import LspClient  # noqa: E402


def generate(n: int) -> str:
    """A plan of ``n`` statements (titles and notes count), every one of which evaluates: a block of
    inputs, formulas over them and over the block before, a function and its use, repeated; five
    scenarios, a few checks and questions at the end."""
    out = ['title "A generated plan"', "unit USD", "unit req"]
    blocks = 0
    tail = 12  # the scenarios, checks and questions at the end
    while len(out) < n - tail:
        b = blocks
        prev = f"total{b - 1}" if b else "0 USD/month"
        block = [
            f'price{b} = {1 + b % 7}.{b % 10}5 USD/req "price of one request, line {b}" [assumption]'
            f" where price{b} > 0 USD/req",
            f'load{b} = {100 + b % 13} req/month "requests a month" [assumption]',
            f'share{b} = {10 + b % 50}% "the share that pays" where 0% <= share{b} <= 100%',
            f"revenue{b} = price{b} * load{b} * share{b} -> USD/month",
            f"cost{b} = revenue{b} * 0.4 + {b % 9} USD/month -> USD/month \"what it costs\"",
            f"fee{b}(x) = x * share{b} + price{b} * 1 req/month",
            f"margin{b} = fee{b}(revenue{b} - cost{b}) [headline]",
            f"total{b} = {prev} + margin{b} -> USD/month",
        ]
        out += block[:max(0, n - tail - len(out))]
        blocks += 1
    last = blocks - 1
    while not any(line.startswith(f"total{last} =") for line in out):
        last -= 1  # (the last block cut short)
    out += [f'scenario cheap{k} "prices {k + 1}0% lower" {{ price0 = {k + 1}.0 USD/req }}' for k in range(5)]
    out += ["check price0 == 1.05 USD/req", "check load0 == 100 req/month", "check total0 > 0 USD/month",
            f"check total{last} > total0", "solve share0 where margin0 = 100 USD/month as share_needed",
            f"sweep share0 in 10%..50% step 10% show total{last}", "check price0 < 2 USD/req in cheap0"]
    return "\n".join(out[:n]) + "\n"


def broken(text: str, errors: int) -> str:
    """``text`` with ``errors`` of its ``cost`` formulas broken, spread over the plan, in turn: a syntax
    error, an unknown name, a unit error (everything after each uses it: the running totals)."""
    lines = text.split("\n")
    costs = [k for k, line in enumerate(lines) if line.startswith("cost")]
    for e in range(errors):
        k = costs[(2 * e + 1) * len(costs) // (2 * errors)]
        lines[k] = lines[k].replace("* 0.4 +", ("* 0.4 + (", "* 0.4 * nosuch +", "* 0.4 + 1 req +")[e % 3])
    return "\n".join(lines)


def count(text: str) -> int:
    from planner.lsp.tolerant import statements

    return len(statements(text))


def _cpu(pid: int) -> float:
    """CPU seconds (user and system) a running process has used so far (Linux's /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def eval_time(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of ``planner eval --no-cache`` on ``path``, a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "planner", "eval", "--no-cache", "-f", "json", str(path)],
                          capture_output=True, cwd=path.parent)
    took = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"planner eval failed on {path}:\n{done.stderr.decode()[-2000:]}")
    return took, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def lsp_times(path: Path, text: str) -> dict:
    """Wall and CPU seconds of the server: to the first diagnostics from the process start, and of a
    keystroke (sent once the plan is evaluated, as a user types after opening) to its first diagnostics."""
    started = time.perf_counter()
    client = LspClient(cwd=path.parent)
    pid = client.proc.pid
    try:
        client.initialize(path.parent)
        client.open(path, text)
        found = client.diagnostics(path, 1, final=False, timeout=3600)
        out = {"first": time.perf_counter() - started, "first_cpu": _cpu(pid), "errors": len(found)}
        client.diagnostics(path, 1, timeout=3600)  # (the values and the checks: the evaluation done)
        t, cpu = time.perf_counter(), _cpu(pid)
        client.change(path, keystroke(text), 2)
        client.diagnostics(path, 2, final=False, timeout=3600)
        out.update(typed=time.perf_counter() - t, typed_cpu=_cpu(pid) - cpu)
    finally:
        client.close()
    return out


def reparse_time(path: Path, text: str, edited: str) -> float:
    """CPU seconds of the keystroke's parse (the plan parsed once before, as the server had)."""
    from planner.language.limits import own_collector
    from planner.lsp.tolerant import Parts, parse_tolerant

    own_collector(True)  # as in the server's process (the command line's: see limits.paused_gc)
    try:
        parts = Parts()
        parse_tolerant(str(path), text, parts)
        t = time.process_time()
        got = parse_tolerant(str(path), edited, parts)
        took = time.process_time() - t
    finally:
        own_collector(False)
    assert got.syntax is not None and not got.errors
    return took


def keystroke(text: str) -> str:
    """``text`` with a digit of a number in the middle of the plan changed (``loadN = 1dd req/month``)."""
    middle = text.find("\nload", len(text) // 2) + 1
    digit = text.index(" ", middle) + 3
    return text[:digit] + str((int(text[digit]) + 1) % 10) + text[digit + 1:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,5000,10000,20000,50000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print("seconds, wall / CPU (the CPU of the process measured: steadier on a shared machine)")
    print(f"{'statements':>10} {'eval':>13} {'first diagnostics':>18} {'ratio':>11} {'CPU ms/1k':>9} "
          f"{'keystroke':>13} {'its parse':>9}")
    per = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            text = generate(n)
            path = Path(tmp) / f"generated_{n}.plan"
            path.write_text(text, encoding="utf-8")
            ev, ev_cpu = eval_time(path)
            got = lsp_times(path, text)
            if got["errors"]:
                print(f"  (the server reports {got['errors']} diagnostics on the {n}-statement plan)")
            parse = reparse_time(path, text, keystroke(text))
            per.append(got["first_cpu"] / n)
            print(f"{n:>10,} {ev:6.2f} /{ev_cpu:6.2f} {got['first']:9.2f} /{got['first_cpu']:6.2f} "
                  f"{got['first'] / ev:5.2f} /{got['first_cpu'] / ev_cpu:5.2f} {got['first_cpu'] / n * 1e6:9.0f} "
                  f"{got['typed']:6.2f} /{got['typed_cpu']:6.2f} {parse:9.3f}", flush=True)
    print(f"first diagnostics, CPU per statement, largest over smallest size: {per[-1] / per[0]:.2f}x "
          "(1 is linear; below 1: the fixed start-up shared by more statements)")


if __name__ == "__main__":
    main()
