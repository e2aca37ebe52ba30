"""`planner serve`: how long the page waits for an input it moved, on the shipped sheets/llm_cost.plan.

The real server (uvicorn on 127.0.0.1, one kept-alive connection, as a browser's) answers
``POST /api/compute`` for each move: every numeric input of the plan set to points across its slider
(a quarter, half and three quarters of the way) and every true/false input flipped, one input moved
at a time, in the scenario ``llama3_8b/h100``. A move's time is from sending the request to having
read the whole response: the evaluation, the headline figures, the three answers (the fast route),
the checks the input reaches (run again; the others keep the plan's results) and the JSON.

The moves run ``--rounds`` times (each round every move once, in order). Also timed, each move after
its request: the same compute in the process (``Session.compute``, no HTTP), to tell the server's
share from the plan's, in wall time and in the CPU time of its thread (on a shared machine the wall
time is mostly waiting for a core). Baseline, in the same run: the bare evaluation of the plan with the same edit
(``Plan.evaluate``), the least any page could do. Goal: the 95th percentile under 100 ms.

    python benchmarks/serve_speed.py [--plan sheets/llm_cost.plan] [--scenario llama3_8b/h100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the server on a thread the tests use (serve_server.Running)
GOAL_MS = 100.0


def moves(plan_data: dict) -> list[dict]:
    out = []
    for inp in plan_data["inputs"]:
        if inp["kind"] == "bool":
            out.append({inp["name"]: not inp["value"]})
            continue
        lo, hi = inp["min"], inp["max"]
        for k in (1, 2, 3):
            v = lo + (hi - lo) * k / 4
            out.append({inp["name"]: round(v) if inp["integer"] else v})
    return out


def percentile(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", default=str(ROOT / "sheets" / "llm_cost.plan"))
    ap.add_argument("--scenario", default="llama3_8b/h100")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from planner import PlanError
    from planner.outputs.serve.live import Session
    from serve_server import Running

    session = Session(args.plan)
    server = Running(session)
    host, port = server.url.split("//")[1].rstrip("/").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)

    def post(edits: dict) -> tuple[float, dict]:
        body = json.dumps({"scenario": args.scenario, "edits": edits})
        start = time.perf_counter()
        conn.request("POST", "/api/compute", body, {"Content-Type": "application/json"})
        data = conn.getresponse().read()
        return time.perf_counter() - start, json.loads(data)

    try:
        conn.request("GET", "/api/plan")
        plan_data = json.loads(conn.getresponse().read())
        post({})  # the page's first load: the plan's own check results, made once
        served, computed, cpus, bare, errors, reran = [], [], [], [], 0, []
        for _ in range(args.rounds):
            for edits in moves(plan_data):
                took, data = post(edits)
                served.append(took)
                if data["error"]:
                    errors += 1
                else:
                    reran.append(data["checks"]["ran"])
                start, cpu = time.perf_counter(), time.thread_time()
                session.compute(args.scenario, edits)
                computed.append(time.perf_counter() - start)
                cpus.append(time.thread_time() - cpu)
                overrides = session.overrides(edits)
                start = time.perf_counter()
                try:
                    session.plan.evaluate(args.scenario, overrides)
                except PlanError:  # a point outside a constraint: the page shows the error too
                    pass
                bare.append(time.perf_counter() - start)
    finally:
        conn.close()
        server.stop()

    ms = [t * 1e3 for t in served]
    p95 = percentile(ms, 95)
    print(f"{Path(args.plan).name}, scenario {args.scenario}: {len(ms)} moves ({args.rounds} rounds) of "
          f"{len(plan_data['inputs'])} inputs "
          f"({errors} answered with a constraint's error); checks run again per move: median "
          f"{statistics.median(reran) if reran else 0:.0f}, most {max(reran) if reran else 0} of "
          f"{len(session.plan.model.checks)}")
    print(f"  served (POST /api/compute)   median {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms   "
          f"max {max(ms):7.1f} ms")
    done = [t * 1e3 for t in computed]
    print(f"  computed in the process      median {statistics.median(done):7.1f} ms   "
          f"p95 {percentile(done, 95):7.1f} ms   max {max(done):7.1f} ms")
    cpu_ms = [t * 1e3 for t in cpus]
    print(f"  its CPU time (this thread)   median {statistics.median(cpu_ms):7.1f} ms   "
          f"p95 {percentile(cpu_ms, 95):7.1f} ms   max {max(cpu_ms):7.1f} ms   (what a machine to itself waits)")
    bare_ms = [t * 1e3 for t in bare]
    print(f"  bare evaluation (baseline)   median {statistics.median(bare_ms):7.1f} ms   "
          f"p95 {percentile(bare_ms, 95):7.1f} ms")
    print(f"  ratio p95 served / p95 bare  {p95 / percentile(bare_ms, 95):7.1f}x")
    print(f"  goal: p95 under {GOAL_MS:.0f} ms: {'met' if p95 < GOAL_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
