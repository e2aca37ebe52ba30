"""The language server as a user typing meets it: a replayed typing session through the protocol.

``planner lsp`` is started as an editor starts it, initialised, and given
``sheets/llm_cost.plan`` (or ``--sheet``). Then a new statement is typed at
the end of the plan one character at a time (a ``didChange`` per keystroke,
``--gap`` seconds apart, as a quick typist types), with a syntax error, a
name error and a unit error on the way, then deleted again. For each
keystroke the time from sending the change to the first diagnostics of that
version is taken (the syntax, names and units); and a hover and a completion
are asked between keystrokes, timed too. Printed: initialize (the request's
round trip, and with the process start), first diagnostics of the clean file,
its last diagnostics (values and checks), the first diagnostics counted from the process
start too (what a user opening a file in a fresh editor waits for), and p50/p95/max of each per-keystroke
latency. Not a test: nothing fails; the goals of issue 27 are printed beside.

    python benchmarks/lsp_typing.py [--sheet llm_cost] [--gap 0.12]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from lsp_client import LspClient  # noqa: E402



def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sheet", default="llm_cost")
    ap.add_argument("--gap", type=float, default=0.12, help="seconds between keystrokes")
    args = ap.parse_args()
    path = ROOT / "sheets" / f"{args.sheet}.plan"
    text = path.read_text(encoding="utf-8")
    names = [line.split("=")[0].strip() for line in text.splitlines()
             if "=" in line and line[:1].isalpha() and line.split("=")[0].strip().isidentifier()]
    # a statement that uses the sheet's own names, typed with a typo on the way
    typed = f"\ncheck_total = {names[-1]} * 2 + {names[-2]}_typo\n"

    started = time.perf_counter()
    client = LspClient(cwd=ROOT)
    t = time.perf_counter()
    client.initialize(ROOT)
    init_rtt = time.perf_counter() - t
    init_all = time.perf_counter() - started
    t = time.perf_counter()
    client.open(path, text)
    client.diagnostics(path, 1, final=False)
    first = time.perf_counter() - t
    from_start = time.perf_counter() - started
    client.diagnostics(path, 1)
    last = time.perf_counter() - t

    check_lat, hover_lat, complete_lat = [], [], []
    version = 1
    steps = [text + typed[:i] for i in range(1, len(typed) + 1)]
    steps += [text + typed[:i] for i in range(len(typed) - 1, -1, -1)][:12]  # then backspaces
    for now in steps:
        version += 1
        sent = time.perf_counter()
        client.change(path, now, version)
        client.diagnostics(path, version, final=False, timeout=30)
        check_lat.append(time.perf_counter() - sent)
        line = now.count("\n", 0, len(text) // 2)
        t = time.perf_counter()
        client.request("textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                              "position": {"line": line, "character": 1}})
        hover_lat.append(time.perf_counter() - t)
        last_line = now.count("\n")
        col = len(now) - (now.rfind("\n") + 1)
        t = time.perf_counter()
        client.request("textDocument/completion", {"textDocument": {"uri": path.as_uri()},
                                                   "position": {"line": last_line, "character": col}})
        complete_lat.append(time.perf_counter() - t)
        left = args.gap - (time.perf_counter() - sent)
        if left > 0:
            time.sleep(left)
    client.close()

    print(f"sheet {args.sheet}: {len(text.splitlines())} lines, {len(steps)} keystrokes, {args.gap * 1000:.0f} ms apart")
    print(f"initialize: {init_rtt * 1000:.0f} ms request, {init_all * 1000:.0f} ms with the process start (goal < 300 ms)")
    print(f"open: first diagnostics {first * 1000:.0f} ms (goal < 500 ms; {from_start * 1000:.0f} ms after the process "
          f"start), last (values, checks) {last * 1000:.0f} ms")
    for label, values, goal in (("syntax/name diagnostics", check_lat, " (goal p95 < 100 ms)"),
                                ("hover", hover_lat, ""), ("completion", complete_lat, "")):
        print(f"{label}: p50 {_pct(values, .5) * 1000:.0f} ms, p95 {_pct(values, .95) * 1000:.0f} ms, "
              f"max {max(values) * 1000:.0f} ms, mean {statistics.mean(values) * 1000:.0f} ms{goal}")


if __name__ == "__main__":
    main()
