"""The compiled-plan cache: the same results warm as cold, and never a way to run code.

Each test points the cache at a folder of its own (``XDG_CACHE_HOME``).
"""

import io
import os
import pickle
import subprocess
import sys

import pytest
from conftest import ROOT, SHEETS

from planner.compute import cache
from planner.compute.evaluation import load


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PLANNER_NO_CACHE", raising=False)
    cache.enable(True)
    yield tmp_path / "xdg" / "planner"
    cache.enable(False)


def _entries(folder):
    return sorted(folder.glob("*.cache")) if folder.exists() else []


@pytest.mark.parametrize("sheet", sorted(p.name for p in SHEETS.glob("*.plan")))
def test_warm_results_are_the_cold_ones(cache_dir, sheet, cli):
    cache.enable(False)
    _, cold, _ = cli("--no-cache", "eval", SHEETS / sheet, "--scenario", "all", "-f", "json")
    _, first, _ = cli("eval", SHEETS / sheet, "--scenario", "all", "-f", "json")  # fills the cache
    assert len(_entries(cache_dir)) == 1
    _, warm, _ = cli("eval", SHEETS / sheet, "--scenario", "all", "-f", "json")
    assert cold == first == warm
    code_cold, check_cold, _ = cli("--no-cache", "check", SHEETS / sheet)
    code_warm, check_warm, _ = cli("check", SHEETS / sheet)
    assert (code_cold, check_cold) == (code_warm, check_warm)


def test_a_warm_plan_comes_from_the_cache_compiled(cache_dir):
    path = SHEETS / "token_cost.plan"
    cold = load(path)
    assert not cold.cached and _entries(cache_dir)
    warm = load(path)
    assert warm.cached and "compiled" in warm.__dict__  # no parse, no analysis, no compile
    for scenario in [None] + warm.scenario_names:
        assert warm.evaluate(scenario).values == cold.evaluate(scenario).values


def test_an_edited_import_is_not_served_stale(cache_dir, tmp_path):
    lib = tmp_path / "lib.plan"
    lib.write_text("rate = 2\n")
    main = tmp_path / "main.plan"
    main.write_text('import "lib.plan" as lib\ncost = lib.rate * 3\n')
    assert load(main).evaluate()["cost"] == 6
    assert load(main).cached
    lib.write_text("rate = 5\n")  # the plan's own text is unchanged
    again = load(main)
    assert not again.cached and again.evaluate()["cost"] == 15


def test_a_corrupt_or_foreign_entry_is_ignored(cache_dir):
    path = SHEETS / "gpu_compare.plan"
    load(path)
    (entry,) = _entries(cache_dir)
    data = entry.read_bytes()
    entry.write_bytes(data[:-100])  # torn: its checksum does not match
    assert not load(path).cached
    load(path)
    (entry,) = _entries(cache_dir)
    entry.write_bytes(b"garbage")
    assert not load(path).cached
    load(path)
    (entry,) = _entries(cache_dir)
    header, payload = cache._parse(entry.read_bytes())
    for bad in (cache.MAGIC + (10**9).to_bytes(8, "big") + b"\x80",  # a header longer than the file
                cache._compose(["not", "a", "header"], payload),
                cache._compose({**header, "files": [("/nonexistent", header["files"][0][1])]}, payload),
                cache.MAGIC + len(pickle.dumps(_Boom())).to_bytes(8, "big") + pickle.dumps(_Boom()) + payload):
        entry.write_bytes(bad)
        assert not load(path).cached
    entry.write_bytes(cache._compose(header, payload))
    assert load(path).cached


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_an_entry_cannot_run_code(cache_dir):
    with pytest.raises(pickle.UnpicklingError):
        cache._Unpickler(io.BytesIO(pickle.dumps(_Boom()))).load()
    with pytest.raises(pickle.UnpicklingError):
        cache._Unpickler(io.BytesIO(pickle.dumps(getattr))).load()
    # a compiled program is data: steps from a fixed table over numbered registers, checked
    plan = load(SHEETS / "token_cost.plan")
    assert plan.compiled.valid()


def test_a_tampered_compiled_function_is_not_run(cache_dir):
    path = SHEETS / "token_cost.plan"
    load(path)
    (entry,) = _entries(cache_dir)
    header, payload = cache._parse(entry.read_bytes())
    state = cache._Unpickler(io.BytesIO(payload)).load()
    compiled = state["compiled"]
    compiled.steps = (("print", 0, (0, 0)),) + compiled.steps[1:]  # a step no compiler makes
    buf = io.BytesIO()
    cache._Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    import hashlib

    header.update(length=len(buf.getvalue()), sha256=hashlib.sha256(buf.getvalue()).hexdigest())
    entry.write_bytes(cache._compose(header, buf.getvalue()))
    plan = load(path)
    assert plan.cached and "compiled" not in plan.__dict__  # the plan is kept, its program compiled again
    assert plan.evaluate().display("batch_step_bound") == pytest.approx(53.82494549333333)


def test_no_cache_neither_reads_nor_writes(cache_dir, cli):
    cli("--no-cache", "eval", SHEETS / "token_cost.plan")
    assert _entries(cache_dir) == []


def test_the_library_does_not_use_it_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.enable(False)
    load(SHEETS / "token_cost.plan")
    assert not (tmp_path / "planner").exists()


def test_concurrent_runs_share_the_cache(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    argv = [sys.executable, "-m", "planner", "eval", str(SHEETS / "llm_cost.plan"), "--scenario", "all", "-f", "json"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, env=env, cwd=ROOT) for _ in range(4)]
    outs = [p.communicate()[0] for p in procs]
    assert all(p.returncode == 0 for p in procs) and len(set(outs)) == 1
    assert len(list((tmp_path / "planner").glob("*.cache"))) == 1
    assert not list((tmp_path / "planner").glob(".entry-*"))  # no temporary file left
    warm = subprocess.run(argv, stdout=subprocess.PIPE, env=env, cwd=ROOT)
    assert warm.stdout == outs[0]


def test_where_it_lives(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert cache.directory() == tmp_path / "planner"
        monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
        assert cache.directory() == cache.Path.home() / ".cache" / "planner"
