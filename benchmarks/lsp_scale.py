"""The language server on big plans: first diagnostics against ``planner eval``, 1,000 to 50,000 statements.

A plan of ``n`` statements is generated as people write them (inputs with
units, docs, tags and bounds, formulas that use names defined above,
functions and their calls, a few scenarios, checks and questions), written to
a temporary folder, and

- ``planner eval --no-cache`` is run on it (a fresh process, wall time: the
  command line as a user meets it);
- ``planner lsp`` is started, initialised, and given the plan (``didOpen``);
  the time from sending it to its first diagnostics is taken (the syntax,
  names and units: what an editor shows first). The server's start (before
  ``initialize`` is answered) is not counted, as it is not in ``eval``'s ...
  it is: ``eval``'s import of the language is part of its time, so the
  server's first diagnostics are counted from the process start too;
- then one statement in the middle is edited (a keystroke: a digit of a
  number changed), and the time to that version's first diagnostics taken.

Printed per size: eval, first diagnostics (from the process start), their
ratio (goal <= 3), the first diagnostics per 1,000 statements (flat from
1,000 to 50,000 means linear), the keystroke. Nothing fails: a benchmark.

    python benchmarks/lsp_scale.py [--sizes 1000,5000,10000,20000,50000]
"""

from __future__ import annotations

import argparse
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


def eval_time(path: Path) -> float:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "planner", "eval", "--no-cache", "-f", "json", str(path)],
                          capture_output=True, cwd=path.parent)
    took = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"planner eval failed on {path}:\n{done.stderr.decode()[-2000:]}")
    return took


def lsp_times(path: Path, text: str) -> tuple[float, float, int]:
    """(first diagnostics from the process start, a keystroke's first diagnostics, diagnostics count)."""
    started = time.perf_counter()
    client = LspClient(cwd=path.parent)
    try:
        client.initialize(path.parent)
        client.open(path, text)
        found = client.diagnostics(path, 1, final=False, timeout=3600)
        first = time.perf_counter() - started
        middle = text.find("\nload", len(text) // 2) + 1
        digit = text.index(" ", middle) + 3  # `loadN = 1dd req/month`: a digit of the number
        edited = text[:digit] + str((int(text[digit]) + 1) % 10) + text[digit + 1:]
        t = time.perf_counter()
        client.change(path, edited, 2)
        client.diagnostics(path, 2, final=False, timeout=3600)
        keystroke = time.perf_counter() - t
    finally:
        client.close()
    return first, keystroke, len(found)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,5000,10000,20000,50000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'statements':>10} {'lines':>7} {'eval s':>7} {'first s':>8} {'ratio':>6} {'ms/1k':>7} "
          f"{'keystroke ms':>12}")
    per = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            text = generate(n)
            path = Path(tmp) / f"generated_{n}.plan"
            path.write_text(text, encoding="utf-8")
            ev = eval_time(path)
            first, keystroke, errors = lsp_times(path, text)
            if errors:
                print(f"  (the server reports {errors} diagnostics on the {n}-statement plan)")
            per.append(first / n * 1000)
            print(f"{n:>10,} {text.count(chr(10)):>7,} {ev:7.2f} {first:8.2f} {first / ev:6.2f} "
                  f"{first / n * 1e6:7.0f} {keystroke * 1000:12.0f}", flush=True)
    print(f"first diagnostics per statement, largest over smallest size: {per[-1] / per[0]:.2f}x "
          "(1 is linear)")


if __name__ == "__main__":
    main()
