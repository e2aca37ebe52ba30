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


# ---- a cache that can only be right or absent (issue: stale and foreign figures) -------------

def test_a_retargeted_symlinked_import_is_read_again(cache_dir, tmp_path):
    (tmp_path / "a.plan").write_text("rate = 2\n")
    (tmp_path / "b.plan").write_text("rate = 7\n")
    link = tmp_path / "lib.plan"
    link.symlink_to("a.plan")
    main = tmp_path / "main.plan"
    main.write_text('import "lib.plan" as lib\ncost = lib.rate * 3\n')
    assert load(main).evaluate()["cost"] == 6
    assert load(main).cached
    link.unlink()
    link.symlink_to("b.plan")  # a.plan is unchanged: only what the import resolves to moved
    again = load(main)
    assert not again.cached and again.evaluate()["cost"] == 21


def test_a_new_local_file_that_shadows_a_library_import(cache_dir, tmp_path):
    main = tmp_path / "main.plan"
    main.write_text('import "hardware/h100_sxm.plan" as gpu\nbw = gpu.hbm_bandwidth -> TB/s\n')
    library = load(main).evaluate().display("bw")
    assert load(main).cached
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "h100_sxm.plan").write_text("hbm_bandwidth = 1 TB/s\n")  # now first in the search
    again = load(main)
    assert not again.cached and again.evaluate().display("bw") == 1 != library


def test_an_import_saved_during_a_load_is_not_stored_with_the_new_digest(cache_dir, tmp_path, monkeypatch):
    lib = tmp_path / "lib.plan"
    lib.write_text("rate = 2\n")
    main = tmp_path / "main.plan"
    main.write_text('import "lib.plan" as lib\ncost = lib.rate * 3\n')
    from planner.language import lower as lowering

    original = lowering.lower

    def save_while_loading(source, *a, **k):
        out = original(source, *a, **k)
        if source.name.endswith("lib.plan"):
            lib.write_text("rate = 5\n")  # saved after the run read it, before it finished
        return out

    monkeypatch.setattr(lowering, "lower", save_while_loading)
    assert load(main).evaluate()["cost"] == 6  # the run saw rate = 2
    monkeypatch.setattr(lowering, "lower", original)
    again = load(main)
    assert again.evaluate()["cost"] == 15  # never 6 again from an entry that says lib.plan is the new file


def _private(folder):
    return os.stat(folder).st_mode & 0o777


def test_the_folder_is_private_even_under_umask_000(cache_dir):
    old = os.umask(0)
    try:
        load(SHEETS / "token_cost.plan")
    finally:
        os.umask(old)
    assert _private(cache_dir) == 0o700
    (entry,) = _entries(cache_dir)
    assert os.stat(entry).st_mode & 0o077 == 0


def test_a_shared_folder_or_a_planted_entry_is_not_trusted(cache_dir, tmp_path, capfd):
    main = tmp_path / "x.plan"
    main.write_text("x = 3\n")
    load(main)
    (entry,) = _entries(cache_dir)
    header, _ = cache._parse(entry.read_bytes())
    (tmp_path / "forge.plan").write_text("x = 100\n")  # an entry that says x = 100, under x.plan's key
    load(tmp_path / "forge.plan")
    (forged_entry,) = [p for p in _entries(cache_dir) if p != entry]
    fh, fp = cache._parse(forged_entry.read_bytes())
    fh = {**fh, "key": header["key"], "files": header["files"]}
    entry.write_bytes(cache._compose(fh, fp))
    assert load(main).evaluate()["x"] == 100  # the forgery works when it is the user's own file...
    entry.write_bytes(cache._compose(fh, fp))
    os.chown(entry, 12345, 12345)  # ...but not when another user wrote it
    assert load(main).evaluate()["x"] == 3
    entry.write_bytes(cache._compose(fh, fp))
    os.chown(entry, os.getuid(), os.getgid())
    os.chmod(entry, 0o666)  # nor when anyone could have
    assert load(main).evaluate()["x"] == 3
    os.chmod(entry, 0o600)
    entry.write_bytes(cache._compose(fh, fp))
    os.chmod(cache_dir, 0o777)  # a folder anyone can write: bypassed, with one warning
    capfd.readouterr()
    assert load(main).evaluate()["x"] == 3 and load(main).evaluate()["x"] == 3
    err = capfd.readouterr().err
    assert err.count("not used") == 1 and str(cache_dir) in err and "chmod 700" in err


def test_a_fifo_entry_does_not_hang(cache_dir, tmp_path):
    main = tmp_path / "x.plan"
    main.write_text("x = 3\n")
    load(main)
    (entry,) = _entries(cache_dir)
    entry.unlink()
    os.mkfifo(entry)
    code = ("import sys; sys.path.insert(0, %r)\nfrom planner.compute import cache\nfrom planner.compute.evaluation "
            "import load\ncache.enable()\nprint(load(%r).evaluate()['x'])\n" % (str(ROOT), str(main)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, XDG_CACHE_HOME=str(cache_dir.parent)))
    assert out.returncode == 0 and float(out.stdout) == 3, out.stderr


def test_pruning_deletes_only_planners_own_entries(cache_dir, tmp_path, monkeypatch):
    photos = tmp_path / "photos"
    photos.mkdir()
    for i in range(9):
        (photos / f"photo-{i}.cache").write_bytes(b"\xff\xd8 a photo")
    cache_dir.parent.mkdir(parents=True)
    cache_dir.symlink_to(photos)  # the cache folder is a link to a user's folder
    monkeypatch.setattr(cache, "MAX_ENTRIES", 1)
    main = tmp_path / "x.plan"
    main.write_text("x = 3\n")
    load(main)
    load(main)
    assert len(list(photos.glob("photo-*.cache"))) == 9
    cache_dir.unlink()
    load(main)  # a real folder now
    for i in range(9):
        (cache_dir / f"photo-{i}.cache").write_bytes(b"\xff\xd8 a photo")
    (tmp_path / "y.plan").write_text("y = 4\n")
    load(tmp_path / "y.plan")  # two entries of planner's own: the older goes, the photos stay
    assert len(list(cache_dir.glob("photo-*.cache"))) == 9
    assert len([p for p in _entries(cache_dir) if not p.name.startswith("photo-")]) == 1


def test_a_second_export_does_not_derive_closed_forms_again(cache_dir, tmp_path, cli, monkeypatch):
    """The first export derives each question's closed forms and the cache keeps them; the second
    finds them there (its search is made to fail here: it must not run) and writes the same Solve sheet."""
    import openpyxl

    from planner.questions import solve

    plan = SHEETS / "llm_cost.plan"
    assert cli("export", plan, "-o", tmp_path / "first.xlsx")[0] == 0
    cache.enable(True)  # (the command line turns it off as it returns)
    warm = load(plan)
    assert warm.cached and warm.closed_forms and all(isinstance(v, list) for v in warm.closed_forms.values())

    def no_search(*args, **kwargs):
        raise AssertionError("closed forms derived again")

    monkeypatch.setattr(solve, "root_forms", no_search)
    assert cli("export", plan, "-o", tmp_path / "second.xlsx")[0] == 0
    sheets = [openpyxl.load_workbook(tmp_path / f"{n}.xlsx")["Solve"] for n in ("first", "second")]
    cells = [[c.value for row in ws.iter_rows() for c in row] for ws in sheets]
    assert cells[0] == cells[1] and any(isinstance(v, str) and v.startswith("=") for v in cells[0])


def test_closed_forms_are_kept_as_data_and_rebuilt_from_a_fixed_table():
    import sympy as sp

    from planner.compute.symbolic import NotData, from_data, to_data
    from planner.plan import loads_compiled as loads

    plan = loads("a = 2\nb = 3\nx = 1 where x > 0\ny = a * x^2 - b\n", "forms.plan")
    a, b = plan.symbols["a"], plan.symbols["b"]
    for form in [sp.sqrt(b / a), sp.log(a) / sp.log(b) + sp.pi, sp.ceiling(a * b - sp.Rational(1, 3)),
                 sp.Piecewise((a, sp.Lt(a, b)), (b, True)), sp.Max(a, b) ** -2, sp.LambertW(a * sp.E)]:
        data = to_data(form, plan.symbols)
        assert from_data(data, plan.symbols) == form
        assert "sympify" not in repr(data)
    for bad in [sp.Float(1.5) * a, sp.Dummy("k") + a, sp.Symbol("stranger")]:
        with pytest.raises(NotData):
            to_data(bad, plan.symbols)
    for planted in [("__import__", ("q", 1, 1)), ("s", "os"), ("q", 1, 0), ("Add", "1"), "a + b", ()]:
        with pytest.raises(ValueError):
            from_data(planted, plan.symbols)


def _pngs(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.png"))}


def test_a_warm_report_draws_no_chart_and_writes_the_cold_pngs(cache_dir, tmp_path, cli, monkeypatch):
    """grain_silo's report has a sweep, two series charts and a tornado: the second run finds every PNG
    in the cache (drawing is made to fail: it must not run) and writes the bytes a run without the
    cache draws."""
    from planner.outputs import plots

    plan = ROOT / "examples" / "grain_silo.plan"
    assert cli("--no-cache", "report", plan, "-o", tmp_path / "cold" / "r.md")[0] == 0
    assert not _entries(cache_dir)
    assert cli("report", plan, "-o", tmp_path / "first" / "r.md")[0] == 0
    cold = _pngs(tmp_path / "cold")
    assert len(cold) == 4 and len(_entries(cache_dir)) == 1 + 4  # the plan's entry and a chart's each

    def no_drawing(*args, **kwargs):
        raise AssertionError("a chart drawn again")

    monkeypatch.setattr(plots, "_figure", no_drawing)
    assert cli("report", plan, "-o", tmp_path / "warm" / "r.md")[0] == 0
    assert _pngs(tmp_path / "first") == _pngs(tmp_path / "warm") == cold
    assert (tmp_path / "cold" / "r.md").read_text() == (tmp_path / "warm" / "r.md").read_text()


def test_a_chart_is_drawn_again_for_other_data_other_code_or_a_bad_entry(cache_dir, monkeypatch):
    import planner
    from planner.outputs import plots

    drawn = []
    draw = plots._png
    monkeypatch.setattr(plots, "_png", lambda fig: drawn.append(1) or draw(fig))
    bars = [("cost per month", [("price", 0.5, 0.75), ("volume", -0.25, -0.25)])]
    first = plots.tornado_png(bars)
    assert first.startswith(cache.PNG) and len(drawn) == 1
    assert plots.tornado_png(bars) == first and len(drawn) == 1  # kept
    other = plots.tornado_png([("cost per month", [("price", 0.5, 0.76), ("volume", -0.25, -0.25)])])
    assert other != first and len(drawn) == 2  # one number changed: another chart
    assert plots.tornado_png(bars) == first and len(drawn) == 2
    monkeypatch.setattr(planner, "__version__", "99.0")  # another release
    assert plots.tornado_png(bars) == first and len(drawn) == 3
    monkeypatch.setattr(cache, "_CODE", ["an edited checkout"])
    assert plots.tornado_png(bars) == first and len(drawn) == 4
    (entry,) = [p for p in _entries(cache_dir)
                if p.name == cache.chart_key("tornado_png", cache.fingerprint(((bars,), []))) + ".cache"]
    header, png = cache._parse(entry.read_bytes())
    for bad in (b"garbage", entry.read_bytes()[:-100],  # torn
                cache._compose({**header, "length": 7, "sha256": cache._digest(b"a photo")}, b"a photo"),  # no PNG
                cache._compose(header, png[:-1] + b"\0"),  # its checksum does not match
                cache._compose({**header, "key": "0" * 64}, png)):  # another chart's entry
        entry.write_bytes(bad)
        n = len(drawn)
        assert plots.tornado_png(bars) == first and len(drawn) == n + 1  # drawn again, and kept again
        assert cache._parse(entry.read_bytes()) == (header, png)
    kept = _entries(cache_dir)
    fresh = [("cost per month", [("price", 0.25, 0.5)])]
    assert plots.tornado_png(fresh, keep=False) == plots.tornado_png(fresh, keep=False) != first
    assert len(drawn) == n + 3 and _entries(cache_dir) == kept  # planner serve's charts: drawn, not kept
    cache.enable(False)
    assert plots.tornado_png(bars) == first and len(drawn) == n + 4  # --no-cache: drawn


def test_a_warm_report_imports_no_matplotlib(tmp_path):
    """The promise the cache makes a report: the second run, in a fresh interpreter, finds its charts
    and never imports matplotlib (the first did)."""
    code = ("import sys\nfrom planner.cli import main\ncode = main(['report', %r, '-o', sys.argv[1]])\n"
            "print('matplotlib' in sys.modules)\nsys.exit(code)\n" % str(ROOT / "examples" / "support_backlog.plan"))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("PLANNER_NO_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", code, str(tmp_path / name / "r.md")], cwd=ROOT, env=env,
                           capture_output=True, text=True) for name in ("cold", "warm")]
    assert [(p.returncode, p.stdout.split()[-1]) for p in runs] == [(0, "True"), (0, "False")], runs[1].stderr
    assert _pngs(tmp_path / "cold") == _pngs(tmp_path / "warm") and len(_pngs(tmp_path / "warm")) == 2


def test_the_code_stamp_covers_the_grammar_where_a_checkout_keeps_it(tmp_path, monkeypatch):
    """In a checkout the grammar is beside the package (`grammar/plan.lark`), outside the folder the stamp
    walked: a plan cached before the grammar was edited was read back as the old grammar parsed it."""
    from planner.language import data

    grammar = tmp_path / "grammar"
    grammar.mkdir()
    (grammar / "plan.lark").write_text("start: NAME\n", encoding="utf-8")
    shipped = data.data_dir
    monkeypatch.setattr(data, "data_dir", lambda name: grammar if name == "grammar" else shipped(name))
    monkeypatch.setattr(cache, "_CODE", [])
    before = cache._code()
    (grammar / "plan.lark").write_text("start: NAME NAME\n", encoding="utf-8")  # the grammar edited
    monkeypatch.setattr(cache, "_CODE", [])
    assert cache._code() != before
