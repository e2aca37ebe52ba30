"""`--dask`: sweeps and simulations in chunks (planner.questions.chunked), against the in-memory runs.

The chunked route must give the in-memory route's figures (to 1e-12 relative) on the same grid or the
same samples, on a dask.distributed LocalCluster (in-process, two workers) as on Dask's threads, in many
chunks; its percentiles are exact, so hand-computed ones hold too. Skipped without the extra, except in
CI (CI=true), where the extra is installed and a missing one is a failure.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys

import numpy as np
import pytest

try:
    import dask  # noqa: F401
    import distributed
    import xarray  # noqa: F401
except ImportError:
    if os.environ.get("CI", "").lower() == "true":
        raise
    pytest.skip("the chunked route needs the extra: pip install '.[dask]'", allow_module_level=True)

import planner  # noqa: E402
from planner.language.errors import ConstraintError, PlanError, UsageError  # noqa: E402
from planner.language.lower import lower_expr  # noqa: E402
from planner.language.source import Source  # noqa: E402
from planner.questions import chunked, simulate, sweep  # noqa: E402
from planner.questions.ranges import parse_assignment  # noqa: E402

GRID = """title "A grid"
unit USD
price = 2 USD
units = 100
discount = 10%   where 0 <= discount <= 50%
cost = 150 USD
revenue = price * units * (1 - discount)
margin = revenue - cost
margin_share = margin / revenue
profitable = margin > 0 USD
"""

SIM = """title "A simulation"
unit USD
price = 2 USD ~ 1.5 USD to 3 USD
units = normal(100, 15)
discount = uniform(5%, 20%)   where 0 <= discount <= 50%
fee = triangular(10 USD, 20 USD, 40 USD)
cost = 150 USD
revenue = price * units * (1 - discount)
margin = revenue - cost - fee
correlate(price, units, -0.6)
scenario cheap { price = 1.8 USD }
"""

LEVELS = (0.1, 5.0, 50.0, 95.0, 99.9)


def close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


@pytest.fixture(scope="module")
def cluster():
    """A small dask.distributed cluster in this process: two workers of one thread each."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as c:
        yield c.scheduler_address


def condition(text: str):
    return (text, lower_expr(Source("--probability", text)))


def grid_run(plan_file, axes=("price=0.5 USD..3 USD count 40", "units=0..200 count 25", "discount=0..0.8 count 17")):
    plan = planner.load(plan_file(GRID))
    return plan, sweep.prepare(plan, [parse_assignment(plan, t) for t in axes],
                               ["revenue", "margin", "margin_share", "profitable"])


# ---- sweeps -------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["threads", "cluster"])
def test_a_chunked_sweep_gives_the_in_memory_figures(plan_file, cluster, where):
    plan, prepared = grid_run(plan_file)
    with chunked.scheduler(cluster if where == "cluster" else None) as run:
        r = chunked.sweep(run, prepared, [condition("margin > 0 USD"), condition("margin_share >= 25%")], LEVELS,
                          chunk_mb=0.05)  # 6,250 values a chunk, of 5 outputs: 17,000 points in 20 chunks
    assert r.blocks == 20
    full = prepared.block(0, prepared.size)
    ok = ~full.bad
    # points left out: discount above 50% (6 of its 17 values, in steps of 5%), and units = 0 (revenue 0:
    # margin_share not finite)
    assert r.left_out == int((~ok).sum()) == 40 * 25 * 17 - 40 * 24 * 11
    for name in ["revenue", "margin", "margin_share", "profitable"]:
        col = full.display(name)[ok].astype(float)
        s = r.stats[name]
        assert s["points"] == col.size
        assert close(s["mean"], float(np.mean(col)))
        assert close(s["sd"], float(np.std(col, ddof=1)))
        assert s["min"] == col.min() and s["max"] == col.max()
        for p, v in zip(LEVELS, np.percentile(col, LEVELS)):
            assert close(s[f"p{chunked._pct(p)}"], float(v)), (name, p)
    margin = full.columns["margin"][ok]
    share = full.columns["margin_share"][ok]
    assert r.probabilities[0] == ("margin > 0 USD", float(np.mean(margin > 0)))
    assert close(r.probabilities[1][1], float(np.mean(share >= 0.25)))


def test_chunked_percentiles_are_exact_by_hand(plan_file, monkeypatch):
    """x = 1..1000 (each value once) repeated over a second axis of 7: the order statistics by hand.
    Gathering at most 10 values forces the histogram passes (a bin of 65,536 holds one value here)."""
    monkeypatch.setattr(chunked, "GATHER", 10)
    plan = planner.load(plan_file("x = 1\ny = 1\nz = x + 0 * y\n"))
    prepared = sweep.prepare(plan, [parse_assignment(plan, "x=1..1000"), parse_assignment(plan, "y=1..7")], ["z"])
    with chunked.scheduler() as run:
        r = chunked.sweep(run, prepared, [condition("z > 990")], (5.0, 50.0, 95.0, 100.0), chunk_mb=0.004)
    s = r.stats["z"]
    # 7,000 values, each of 1..1000 seven times: the k-th smallest (0-based) is floor(k / 7) + 1
    # p5: h = 6999 * 0.05 = 349.95, between values 50 (k=349) and 51 (k=350): 50 + 0.95
    assert s["p5"] == pytest.approx(50.95, rel=1e-12)
    assert s["p50"] == 500.5  # h = 3499.5: k = 3499 is 500, k = 3500 is 501
    assert s["p95"] == pytest.approx(950.05, rel=1e-12)  # h = 6649.05: 950 (k=6649) and 951
    assert s["p100"] == 1000.0
    assert s["mean"] == pytest.approx(500.5, rel=1e-12) and s["points"] == 7000
    assert r.probabilities == [("z > 990", 0.01)]


def test_percentiles_across_zero_and_ties(monkeypatch):
    """The floats' order keys: negative numbers, -0.0 and 0.0, and many equal values."""
    import dask.array as da
    import xarray as xr

    monkeypatch.setattr(chunked, "GATHER", 3)
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(0, 1e-300, 50), np.full(300, -2.5), [0.0, -0.0] * 40,
                             rng.normal(0, 1e6, 500)])
    rng.shuffle(values)
    arr = xr.DataArray(da.from_array(values, chunks=97), dims="i")
    levels = (0.0, 1.0, 12.5, 33.3, 50.0, 66.0, 99.0, 100.0)
    with chunked.scheduler() as run:
        got, _ = run.summaries({"v": arr}, levels)
    memory, _ = simulate.IN_MEMORY.summaries({"v": values}, levels)  # the other executor of the one reduction
    for p, want in zip(levels, np.percentile(values, levels)):
        key = f"p{chunked._pct(p)}"
        assert got["v"][key] == pytest.approx(float(want), rel=1e-12, abs=1e-310)
        assert got["v"][key] == memory["v"][key]  # the same order statistics, read the same way: to the bit


def test_chunks_are_about_the_size_asked_for():
    chunks = chunked.chunks_for((200, 200, 200, 50), 100)
    assert chunks == (6, 200, 200, 50)  # 12,000,000 float64 values: 96 MB
    assert 50e6 < math.prod(chunks) * 8 <= 100e6
    assert chunked.chunks_for((10,), 100) == (10,)
    assert chunked.chunks_for((3, 1000), 0.001) == (1, 125)


def test_a_chunked_sweep_allows_grids_past_the_in_memory_limit(plan_file):
    plan = planner.load(plan_file(GRID))
    axes = [parse_assignment(plan, t) for t in ("price=1 USD..3 USD count 5000", "units=1..10000 count 5000")]
    with pytest.raises(PlanError, match="too many points"):
        sweep.prepare(plan, axes, ["margin"])
    prepared = sweep.prepare(plan, axes, [], max_points=chunked.MAX_POINTS)
    with chunked.scheduler() as run:
        r = chunked.sweep(run, prepared, [condition("margin > 0 USD")], ())
    # margin > 0 where price * units * 0.9 > 150: counted per price value by hand
    prices = np.linspace(1, 3, 5000)
    units = np.linspace(1, 10000, 5000)
    want = sum(int(np.count_nonzero(p * units * (1 - 0.1) - 150 > 0)) for p in prices) / 25e6
    assert r.size == 25_000_000 and r.probabilities[0][1] == want


# ---- simulations ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["random", "counter"])
def test_a_chunked_simulation_gives_the_in_memory_figures(plan_file, cluster, method):
    plan = planner.load(plan_file(SIM))
    names = simulate.default_names(plan)
    conds = [condition("margin > 0 USD"), condition("price < 2 USD and units > 100")]
    with chunked.scheduler(cluster) as run:
        got = chunked.simulate_chunked(run, plan, [None, "cheap"], 30_000, 11, method, names=names,
                                       conditions=conds, levels=LEVELS, chunk_mb=0.1)
    want = simulate.run(plan, [None, "cheap"], 30_000, 11, method, names=names)
    # 0.1 MB (12,500 float64) of all its values: the program's 3 outputs and the 4 inputs; 17 chunks
    assert got[0].chunk == 12_500 // (3 + 4)
    for g, w in zip(got, want):
        assert g.scenario == w.scenario and set(g.uncertain) == set(w.uncertain)
        for n in names:
            a, b = g.stats(n, LEVELS), w.stats(n, LEVELS)
            assert a.keys() == b.keys()
            for k in b:  # (the sd of a constant is rounding in both: 0 to 1e-12 of its mean)
                assert close(a[k], b[k]) or (k == "sd" and abs(a[k] - b[k]) <= 1e-12 * abs(b["mean"])), \
                    (g.label, n, k, a[k], b[k])
            assert g.varies(n) == w.varies(n)
        for _, c in conds:
            assert g.probability(c) == w.probability(c)
    assert not got[1].varies("price") and got[1].stats("price", LEVELS)["p50"] == 1.8


def test_a_chunked_simulation_refuses_latin_hypercube(plan_file):
    plan = planner.load(plan_file(SIM))
    with chunked.scheduler() as run, pytest.raises(UsageError, match="Latin hypercube") as err:
        chunked.simulate_chunked(run, plan, [None], 1000, 0, "lhs")
    assert "--method random" in err.value.hint


def test_a_chunked_simulation_counts_a_broken_constraint_as_the_in_memory_run_does(plan_file):
    plan = planner.load(plan_file(SIM.replace("where 0 <= discount <= 50%", "").replace(
        "margin = revenue - cost - fee", "margin = revenue - cost - fee   where margin >= -60 USD")))
    with pytest.raises(ConstraintError) as memory:
        simulate.run(plan, [None], 20_000, 3, "random")
    with chunked.scheduler() as run, pytest.raises(ConstraintError) as chunks:
        chunked.simulate_chunked(run, plan, [None], 20_000, 3, "random", chunk_mb=0.05)
    assert chunks.value.message == memory.value.message
    assert "does not hold in" in chunks.value.message


def test_a_chunked_simulation_finds_a_quantity_not_finite_as_the_in_memory_run_does(plan_file):
    plan = planner.load(plan_file(SIM + "root = sqrt(units - 100)\n"))  # nan in about half the samples
    with pytest.raises(PlanError) as memory:
        simulate.run(plan, [None], 20_000, 3, "random")
    with chunked.scheduler() as run, pytest.raises(PlanError) as chunks:
        chunked.simulate_chunked(run, plan, [None], 20_000, 3, "random", chunk_mb=0.05)
    assert chunks.value.message == memory.value.message
    assert "`root` has no finite value in" in chunks.value.message and "the first at price = " in chunks.value.message


# ---- the command line ----------------------------------------------------------------------------

def test_sweep_dask_on_the_command_line(plan_file, cli, cluster):
    path = plan_file(GRID)
    code, out, err = cli("sweep", str(path), "price=1 USD..3 USD count 30", "units=50..200 count 30", "--dask",
                         "--scheduler", cluster, "--chunk-mb", "0.001", "-p", "margin > 0 USD", "--show", "margin",
                         "--percentiles", "50")
    assert code == 0, err
    assert "sweep of 30 price x 30 units = 900 points" in out
    plan = planner.load(path)
    full = sweep.run(plan, [parse_assignment(plan, "price=1 USD..3 USD count 30"),
                            parse_assignment(plan, "units=50..200 count 30")], ["margin"])
    from planner.outputs.numbers import share

    assert f"P(margin > 0 USD) = {share(np.mean(full.columns['margin'] > 0))} of the 900 points" in out  # 70.89%
    assert "on the cluster at" in err


def test_simulate_dask_on_the_command_line_matches_method_random(plan_file, cli):
    path = str(plan_file(SIM))
    code, chunks, err = cli("simulate", path, "--dask", "-n", "5000", "-p", "margin > 0 USD", "--format", "json")
    assert code == 0, err
    code, memory, _ = cli("simulate", path, "--method", "random", "-n", "5000", "-p", "margin > 0 USD",
                          "--format", "json")
    assert code == 0
    import json

    a, b = json.loads(chunks), json.loads(memory)
    assert a["method"] == b["method"] == "random"
    for sa, sb in zip(a["scenarios"], b["scenarios"]):
        assert sa["probabilities"] == sb["probabilities"]
        for n, q in sb["quantities"].items():
            for k, v in q.items():
                assert v == sa["quantities"][n][k] or close(sa["quantities"][n][k], v), (n, k)


@pytest.mark.parametrize("args,message", [
    (["simulate", "--dask", "--method", "lhs"], "Latin hypercube"),
    (["simulate", "--dask", "--sensitivity"], "--sensitivity"),
    (["simulate", "--dask", "--solve", "price where P(margin > 0 USD) >= 50%"], "--solve"),
    (["sweep", "price=1 USD..2 USD", "-p", "margin > 0 USD"], "summarise a --dask sweep"),
    (["sweep", "price=1 USD..2 USD", "--dask", "--limit", "3"], "--limit"),
    (["sweep", "price=1 USD..2 USD", "--dask", "--format", "jsonl"], "jsonl"),
])
def test_what_a_chunked_run_cannot_do_is_a_usage_error(plan_file, cli, args, message):
    path = str(plan_file(SIM))
    code, out, err = cli(args[0], path, *args[1:])
    assert code == 2 and message in err and "Traceback" not in err and out == ""


def test_without_the_extra_planner_says_what_to_install(plan_file, cli, monkeypatch, tmp_path):
    for name in ("dask", "dask.array", "xarray"):
        monkeypatch.setitem(sys.modules, name, None)  # `import dask` raises ImportError
    out_file = tmp_path / "out.txt"
    for args in (["simulate", str(plan_file(SIM)), "--dask"],
                 ["sweep", str(plan_file(GRID, "g.plan")), "price=1 USD..2 USD", "--dask", "-o", str(out_file)]):
        code, out, err = cli(*args)
        assert code == 2 and "pip install 'dask[array]' distributed xarray" in err and "Traceback" not in err
    assert not out_file.exists()


def test_the_in_memory_limits_say_that_dask_runs_past_them(plan_file, cli):
    code, out, err = cli("simulate", str(plan_file(SIM)), "-n", "20000000")
    assert code == 2 and "from 2 to 10,000,000" in err and "--dask runs more samples in chunks" in err
    code, out, err = cli("sweep", str(plan_file(GRID, "g.plan")), "price=1 USD..3 USD count 5000",
                         "units=1..100 count 5000")
    assert code == 2 and "too many points" in err and "--dask runs a grid past the limit" in err


def test_sweep_dask_summary_as_json_csv_and_markdown(plan_file, cli):
    path = str(plan_file(GRID))
    args = ("sweep", path, "price=1 USD..3 USD count 3", "--dask", "--show", "margin", "--percentiles", "50",
            "-p", "margin > 0 USD")
    # margin = price * 100 * 90% - 150 USD: -60, 30 and 120 USD
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format"] == "planner.sweep-summary/1" and doc["file"] == path
    (s,) = doc["sweeps"]
    assert (s["points"], s["left_out"], s["axes"]) == (3, 0, [{"name": "price", "points": 3, "unit": "USD"}])
    m = s["quantities"]["margin"]
    assert m["unit"] == "USD" and m["points"] == 3
    assert (m["mean"], m["min"], m["max"], m["p50"]) == pytest.approx((30, -60, 120, 30))
    assert m["sd"] == pytest.approx(90)  # sqrt((90^2 + 0 + 90^2) / 2)
    assert s["probabilities"] == {"margin > 0 USD": pytest.approx(2 / 3)}
    code, out, err = cli(*args, "--format", "csv")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["scenario", "quantity", "unit", "points", "mean", "sd", "min", "max", "p50"]
    assert rows[1][:3] == ["base", "margin", "USD"] and [float(v) for v in rows[1][3:]] == pytest.approx(
        [3, 30, 90, -60, 120, 30])
    code, out, err = cli(*args, "--format", "markdown")
    assert code == 0, err
    assert out.startswith("## [base] sweep of 3 price = 3 points, in ")
    table = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines() if line.startswith("|")]
    assert table[0] == ["quantity", "points", "mean", "sd", "min", "max", "p50", "unit"]
    assert table[2] == ["margin", "3", "30", "90", "-60", "120", "30", "USD"]
    assert "P(margin > 0 USD) = 66.67% of the 3 points" in out
