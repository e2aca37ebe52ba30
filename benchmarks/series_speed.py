"""Series over periods: 120 months of 20 series, evaluated warm and over 10,000 Monte Carlo samples,
against the same recurrences in plain numpy by hand.

The plan is a chain of 20 series, each with a recurrence (a balance earning interest, a stock with a cap,
a headcount that loses a share and hires towards a target) and each reading the one before it in the same
month, with reductions of the last (``min``, ``last``, ``first(period where ...)``). planner runs it:

* warm, one evaluation (``Plan.evaluate``: the compiled program, constraints and the finiteness checks);
* over 10,000 samples of two inputs at once (the compiled program on arrays, as ``planner simulate``);
* the workbook (``planner export``: the sheet of months, a row of live formulas per series, and the rest).

Baselines, in the same run: the same recurrences by hand in numpy, one Python loop over the months, the
values scalars (one evaluation) or arrays over the samples; for the workbook, XlsxWriter writing the same
number of formula cells (a row per series, a column per month) by hand. Prints the best and the median of
interleaved runs and their ratios. Goals (issue 41): under 50 ms warm, under 1 s for 10,000 samples, the
workbook under 5 s.

    python benchmarks/series_speed.py [--periods 120] [--series 20] [--samples 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from timing import interleaved  # benchmarks/timing.py, beside this script


def plan_text(periods: int, count: int) -> str:
    lines = [
        "unit USD",
        f"periods = 1 month..{periods} month",
        "growth = 2% where -50% <= growth <= 50%",
        "rate = 0.5% where 0% <= rate <= 10%",
        "cap = 5000 USD",
        "share = 3%",
        "series s0 = 100 USD then previous * (1 + growth)",
    ]
    for k in range(1, count):
        kind = k % 3
        if kind == 0:  # a balance that earns interest on itself
            lines.append(f"series s{k} = s{k - 1} then previous * (1 + rate) + s{k - 1} * 0.1")
        elif kind == 1:  # a stock with a cap
            lines.append(f"series s{k} = min(cap, previous(s{k}, 0 USD) + s{k - 1} * 0.5 - 20 USD)")
        else:  # a share leaves, hire towards a target
            lines.append(f"series s{k} = previous(s{k}, 50 USD) * (1 - share) + "
                         f"max(0 USD, s{k - 1} - previous(s{k}, 50 USD)) * 0.2")
    last = f"s{count - 1}"
    lines += [f"low = min({last})", f"end = last({last})", f"total = sum({last})",
              f"first_big = first(period where {last} > 1000 USD)"]
    return "\n".join(lines) + "\n"


def by_hand(periods: int, count: int, growth, rate):
    """The plan's recurrences in numpy, month by month (scalars or arrays over the samples)."""
    cap, share = 5000.0, 0.03
    prev = [None] * count
    out = [[] for _ in range(count)]
    for t in range(periods):
        cur = [None] * count
        cur[0] = 100.0 if t == 0 else prev[0] * (1 + growth)
        for k in range(1, count):
            kind = k % 3
            if kind == 0:
                cur[k] = cur[k - 1] if t == 0 else prev[k] * (1 + rate) + cur[k - 1] * 0.1
            elif kind == 1:
                before = 0.0 if t == 0 else prev[k]
                cur[k] = np.minimum(cap, before + cur[k - 1] * 0.5 - 20.0)
            else:
                before = 50.0 if t == 0 else prev[k]
                cur[k] = before * (1 - share) + np.maximum(0.0, cur[k - 1] - before) * 0.2
        for k in range(count):
            out[k].append(cur[k])
        prev = cur
    last = np.stack(np.broadcast_arrays(*out[count - 1]), axis=-1)
    return last.min(axis=-1), last[..., -1], last.sum(axis=-1)


def grid_by_hand(periods: int, count: int) -> bytes:
    """The same number of formula cells written with XlsxWriter directly: a row per series, a column per month."""
    import io

    import xlsxwriter

    out = io.BytesIO()
    wb = xlsxwriter.Workbook(out, {"in_memory": True})
    ws = wb.add_worksheet("Months")
    for k in range(count):
        ws.write_number(k, 0, 100.0)
        for t in range(1, periods):
            ws.write_formula(k, t, f"={xlsxwriter.utility.xl_rowcol_to_cell(k, t - 1)}*1.02", None, 100.0)
    wb.close()
    return out.getvalue()


def report(title: str, names: list[str], times: list[list[float]], goal: float, baseline: str = "numpy by hand"
           ) -> None:
    print(title)
    for name, t in zip(names, times):
        print(f"  {name:28} {min(t) * 1e3:9.1f} ms {statistics.median(t) * 1e3:9.1f} ms")
    ratio = min(times[0]) / min(times[1])
    median_ratio = statistics.median(times[0]) / statistics.median(times[1])
    print(f"  {'ratio to ' + baseline:28} {ratio:9.2f}x {median_ratio:9.2f}x")
    print(f"  {'goal':28} {goal * 1e3:9.0f} ms: {'met' if min(times[0]) <= goal else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--periods", type=int, default=120)
    ap.add_argument("--series", type=int, default=20)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from planner.compute.evaluation import loads

    plan = loads(plan_text(args.periods, args.series), name="series_speed.plan")
    ev = plan.evaluate()
    low, end, total = by_hand(args.periods, args.series, 0.02, 0.005)
    assert np.isclose(ev["low"], low, rtol=1e-12) and np.isclose(ev["end"], end, rtol=1e-12), (ev["low"], low)
    assert np.isclose(ev["total"], total, rtol=1e-12)

    times = interleaved([plan.evaluate, lambda: by_hand(args.periods, args.series, 0.02, 0.005)], args.repeat)
    report(f"one evaluation, {args.periods} periods x {args.series} series (warm)",
           ["planner (Plan.evaluate)", "numpy by hand (scalars)"], times, 0.050)

    rng = np.random.default_rng(0)
    growth = rng.uniform(0.0, 0.04, args.samples)
    rate = rng.uniform(0.0, 0.01, args.samples)
    inputs, _ = plan.input_values(None)
    inputs = dict(inputs)
    inputs.update(growth=growth, rate=rate)

    def planner_samples():
        return plan.run_compiled(inputs)

    got = planner_samples()
    low, end, _ = by_hand(args.periods, args.series, growth, rate)
    assert np.allclose(got["low"], low, rtol=1e-12) and np.allclose(got["end"], end, rtol=1e-12)
    times = interleaved([planner_samples, lambda: by_hand(args.periods, args.series, growth, rate)], args.repeat)
    report(f"{args.samples:,} samples, {args.periods} periods x {args.series} series",
           ["planner (compiled program)", "numpy by hand (arrays)"], times, 1.0)

    from planner.outputs.excel.writer import workbook_bytes

    times = interleaved([lambda: workbook_bytes(plan), lambda: grid_by_hand(args.periods, args.series)],
                        min(args.repeat, 3))
    report(f"the workbook, {args.periods} periods x {args.series} series",
           ["planner export (workbook_bytes)", "XlsxWriter by hand (the grid)"], times, 5.0, "XlsxWriter by hand")


if __name__ == "__main__":
    main()
