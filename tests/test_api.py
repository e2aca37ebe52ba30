"""The Python API: the examples of docs/python.md, overrides with units, result objects, reprs."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, TOKEN_COST

import planner
import planner.plan
from planner.language.errors import OverrideError, PlanError, UnknownNameError

PYTHON_PAGE = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def plan():
    return planner.load(TOKEN_COST)


def _python_section() -> str:
    return "\n".join(re.findall(r"```python\n(.*?)```", PYTHON_PAGE, flags=re.S))


def test_the_python_page_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    text = _python_section()
    assert text.count(">>>") >= 15
    test = doctest.DocTestParser().get_doctest(text, {}, "docs/python.md", "docs/python.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_figures_match_the_article(plan):
    # 降低每個 Token 的生成成本: 19.262 ms per int4 step at batch 32; break-even alpha about 0.287;
    # the crossover batches 98, 49, 26
    assert float(plan.eval(scenario="int4_g128")["batch_step_bound"]) == pytest.approx(19.262, abs=5e-4)
    answers = plan.solve()
    assert float(answers["breakeven_alpha"]) == pytest.approx(0.2871, abs=5e-5)
    assert {k: float(v) for k, v in answers["crossover_batch"].items()} == {"bf16": 98, "fp8_e4m3": 49,
                                                                            "int4_g128": 26}
    assert float(answers["best_gamma"]) == 6


# ---- overrides with units -------------------------------------------------------------------

@pytest.mark.parametrize("value", ["4.8 TB/s", "4800 GB/s", planner.Value(4.8, "TB/s"), planner.Value(4800, "GB/s")])
def test_overrides_take_units(plan, value):
    # 140 GB of weights at 4.8 TB/s: 29.1667 ms
    got = plan.eval(overrides={"hbm_bandwidth": value})["batch1_weight_bound"]
    assert got.unit == "ms" and float(got) == pytest.approx(140 / 4.8)


def test_a_bare_number_for_an_input_with_a_unit_is_an_error_naming_the_unit(plan):
    with pytest.raises(OverrideError) as info:
        plan.eval(overrides={"hbm_bandwidth": 4.8})
    assert "TB/s" in str(info.value) and '"4.8 TB/s"' in str(info.value)
    with pytest.raises(OverrideError, match="token"):
        plan.eval(overrides={"context_tokens": 4096})  # a count with a unit needs it too


def test_bare_numbers_and_booleans_for_inputs_without_units(plan):
    import numpy as np

    assert float(plan.eval(overrides={"alpha": 0.6})["speedup"]) == pytest.approx(1.6469, abs=5e-5)
    assert float(plan.eval(overrides={"alpha": np.float64(0.6)})["speedup"]) == pytest.approx(1.6469, abs=5e-5)
    flags = planner.loads("fp8 = false\nbits = if(fp8, 8, 16)\n")
    assert float(flags.eval(overrides={"fp8": True})["bits"]) == 8


def test_override_errors_are_located_plan_errors(plan):
    with pytest.raises(PlanError, match="dimension|unit|information"):
        plan.eval(overrides={"hbm_bandwidth": "4.8 GB"})  # bytes, not bytes per second
    with pytest.raises(OverrideError, match="hbm_bandwith") as info:
        plan.eval(overrides={"hbm_bandwith": "4.8 TB/s"})
    assert "did you mean `hbm_bandwidth`" in str(info.value)
    with pytest.raises(PlanError, match="constraint"):
        plan.eval(overrides={"alpha": 1.5})
    with pytest.raises(OverrideError, match="list"):
        plan.eval(overrides={"alpha": [0.5]})


# ---- result objects ---------------------------------------------------------------------------

def test_eval_result(plan):
    one = plan.eval()
    assert one.scenarios == ["base"]
    assert one["weight_bytes"] == planner.Value(140, "GB")
    assert one.names[0] == "parameters"  # file order
    row = one.row("weight_bytes")
    assert row.kind == "derived" and row.doc == "weights read once per step" and row.tags == ("headline",)
    assert row.formula == "parameters * bits_per_weight"
    every = plan.eval(scenario="all")
    assert every.scenarios == ["base", "bf16", "fp8_e4m3", "int4_g128"]  # the plan as written first
    assert every["weight_bytes", "fp8_e4m3"] == planner.Value(70, "GB")
    with pytest.raises(PlanError, match="4 scenarios"):
        every.value("weight_bytes")
    with pytest.raises(UnknownNameError, match="did you mean `weight_bytes`"):
        every.value("weight_byte", "bf16")
    records = every.to_records()
    assert {"quantity": "weight_bytes", "scenario": "int4_g128", "value": 36.3125, "unit": "GB", "kind": "derived",
            "doc": "weights read once per step", "tags": ["headline"]} in records
    html = every._repr_html_()
    assert html.startswith("<div>") and "<table" in html and "36.3125" in html and "fp8_e4m3" in html


def test_results_escape_html():
    p = planner.loads('x = 1 "<script>alert(1)</script>" [source "a&b"]\n')
    html = p.eval()._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "a&amp;b" in html


def test_check_results_colour_failures_in_html():
    p = planner.loads("x = 2\ncheck x == 2\ncheck x == 3\n")
    checks = p.check()
    assert (checks.passed, checks.failed, checks.ok) == (1, 1, False)
    (fail,) = checks.failures
    assert fail.check == "check x == 3" and fail.actual == planner.Value(2) and fail.expected == planner.Value(3)
    assert "expected 3, got 2" in fail.describe
    html = checks._repr_html_()
    assert ">FAIL<" in html and "color:#cf222e" in html and ">pass<" in html
    assert "1 passed, 1 failed" in repr(checks)


def test_solve_and_sweep_results(plan):
    adhoc = plan.solve("alpha", where="speedup = 1")
    assert float(adhoc["alpha"]) == pytest.approx(0.287107752303907, rel=1e-12)
    assert adhoc[0].method.startswith("exact")
    with pytest.raises(KeyError, match="answers: alpha"):
        adhoc["beta"]
    sweep = plan.sweep({"hbm_bandwidth": ["2 TB/s", planner.Value(4, "TB/s")]}, show=["batch1_weight_bound"])
    table = sweep[0]
    assert table.columns == ["hbm_bandwidth", "batch1_weight_bound"]
    assert table.units == {"hbm_bandwidth": "TB/s", "batch1_weight_bound": "ms"}
    assert table.column("batch1_weight_bound") == pytest.approx([70, 35])  # 140 GB at 2 and 4 TB/s
    with pytest.raises(OverrideError, match="TB/s"):
        plan.sweep({"hbm_bandwidth": [2, 4]})
    own = plan.sweep()
    assert [t.sweep for t in own] == ["sweep alpha in [0.3, 0.6, 0.8, 0.9] show expected_tokens, speedup",
                                      "sweep gamma in 1..8 show expected_tokens, speedup"]


def test_to_pandas(plan):
    pandas = pytest.importorskip("pandas")
    frame = plan.eval(scenario="all").to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert frame.loc["weight_bytes", "int4_g128"] == 36.3125 and frame.loc["weight_bytes", "unit"] == "GB"
    assert list(plan.check().to_pandas().columns)[:4] == ["check", "line", "scenario", "passed"]
    sweep = plan.sweep({"alpha": [0.3, 0.6]}, show=["speedup"])
    assert list(sweep[0].to_pandas()["alpha"]) == [0.3, 0.6]
    assert list(sweep.to_pandas().columns) == ["sweep", "scenario", "alpha", "speedup"]
    assert plan.sensitivity("speedup").to_pandas().iloc[0]["input"] == "alpha"


def test_to_pandas_without_pandas_says_how_to_get_it(plan, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install pandas"):
        plan.eval().to_pandas()


def test_short_reprs(plan):
    assert repr(plan) == ("<Plan 'Per-token cost of a 70B dense model' from " + str(TOKEN_COST)
                          + ": 14 inputs, 20 derived, 3 scenarios, 57 checks (60 runs across scenarios)>")
    assert len(plan.check().rows) == 60 and "57 checks (60 runs across scenarios)" in plan._repr_markdown_()
    ev = plan.evaluate("bf16")
    assert repr(ev) == f"<Evaluation of {TOKEN_COST} [bf16]: 34 quantities, overridden: bits_per_weight>"
    lines = repr(plan.eval(scenario="all")).splitlines()  # the table itself, not a dump of the objects
    assert lines[0] == plan.title and len(lines) == 2 + 2 + 34


def test_help_and_dir_show_the_api():
    names = dir(planner)
    for name in ("load", "loads", "Plan", "Value", "PlanError", "EvalResult", "CheckResults", "SolveResults"):
        assert name in names
    assert "_LAZY" not in names
    assert "plan.eval(" in planner.__doc__ and "to_pandas" in planner.__doc__
    for method in ("eval", "check", "solve", "sweep", "sensitivity", "explain"):
        assert getattr(planner.Plan, method).__doc__
    assert (ROOT / "planner" / "py.typed").exists()


def test_importing_planner_is_light_until_the_api_is_used():
    code = ("import sys, planner; planner.__version__; heavy = {'sympy', 'numpy', 'lark'} & set(sys.modules);"
            "assert not heavy, heavy; plan = planner.load('sheets/token_cost.plan'); plan.eval();"
            "assert 'sympy' not in sys.modules, 'loading and evaluating need no SymPy'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode == 0, proc.stderr


def test_python_m_planner():
    proc = subprocess.run([sys.executable, "-m", "planner", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("planner ")


def test_values_convert_and_do_unit_checked_arithmetic():
    v = planner.Value(4.8, "TB/s")
    assert v.to("GB/ms") == planner.Value(4.8, "GB/ms") and v.to("GB/s").number == pytest.approx(4800)
    assert (planner.Value(1, "GB") + planner.Value(500, "MB")).number == pytest.approx(1.5)
    assert str(planner.Value(6, "GB") / planner.Value(2, "s")) == "3 GB/s"
    assert str(planner.Value(3, "s") * planner.Value(2, "GB/s")) == "6 GB"  # s cancels
    assert str(1 / planner.Value(2, "s")) == "0.5 s^-1" and str(planner.Value(2, "m") ** 2) == "4 m^2"
    assert planner.Value(1, "GB") > planner.Value(999, "MB") and planner.Value(1, "ms") < planner.Value(1, "s")
    assert planner.Value(3, "USD/month").to("USD/year").number == pytest.approx(36)  # a declared unit, by name
    assert planner.Value(2, "") + 1 == planner.Value(3.0, "") and float(planner.Value(46.5, "ms")) == 46.5
    for wrong, message in [(lambda: planner.Value(1, "GB") + planner.Value(1, "s"), "time is not bytes"),
                           (lambda: planner.Value(1, "GB") + 1, "give it a unit"),
                           (lambda: planner.Value(1, "GB").to("s"), "cannot convert GB to s"),
                           (lambda: planner.Value(1, "USD").to("EUR"), "cannot convert USD to EUR"),
                           (lambda: planner.Value(1, "GB").to("G B!"), "is not a unit")]:
        with pytest.raises(PlanError, match=message):
            wrong()
    with pytest.raises(TypeError, match="truth value"):
        planner.Value(True) + 1


def test_a_result_converts_to_the_unit_asked(plan):
    t = plan.eval()["batch1_weight_bound"]  # 140 GB / 3 TB/s = 46.6667 ms, by hand
    assert t.unit == "ms" and t.to("s").number == pytest.approx(140e9 / 3e12)


def test_every_result_and_the_plan_render_in_a_notebook(plan):
    """What Jupyter shows: each object through IPython's display formatter, HTML and Markdown."""
    formatter = pytest.importorskip("IPython.core.formatters").DisplayFormatter()
    shown = {"plan": plan, "eval": plan.eval(scenario="all"), "check": plan.check(), "solve": plan.solve(),
             "sweep": plan.sweep(), "sensitivity": plan.sensitivity("batch1_weight_bound"),
             "explain": plan.explain("batch1_weight_bound"), "value": plan.eval()["batch1_weight_bound"]}
    for what, obj in shown.items():
        data, _ = formatter.format(obj)
        assert "text/html" in data, what
        assert "Traceback" not in data["text/html"] and "Error" not in data["text/plain"], what
        if what != "value":
            assert "text/markdown" in data, what
    data, _ = formatter.format(shown["plan"])
    assert "<code>batch1_weight_bound</code>" in data["text/html"] and "60 runs" in data["text/markdown"]
    data, _ = formatter.format(shown["eval"])
    assert "| batch1\\_weight\\_bound | 46.6667 |" in data["text/markdown"]  # cells escaped as the report's text
    data, _ = formatter.format(shown["explain"])
    assert data["text/html"].startswith("<pre>batch1_weight_bound = weight_bytes / hbm_bandwidth")


def test_dataframes_carry_their_units(plan):
    pytest.importorskip("pandas")
    frame = plan.eval().to_pandas()
    assert frame.attrs["units"]["batch1_weight_bound"] == "ms" and frame.attrs["units"]["weight_bytes"] == "GB"
    table = plan.sweep()[0]
    frame = table.to_pandas()
    assert frame.attrs["units"] == table.units and set(frame.attrs["units"]) == set(frame.columns)


def test_the_plans_public_attributes_are_the_documented_api_and_nothing_else(plan):
    """planner.Plan's public names (the class's, the instance's, what dir() shows) are exactly the members
    docs/api.md documents; the compiled plan's machinery is behind `_plan`, reachable for one release
    with a DeprecationWarning, and a name that is neither is an AttributeError."""
    import re
    import warnings

    documented = re.search(r"::: planner\.plan\.Plan\n\s+options:\n\s+members: \[([^\]]*)\]",
                           (ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    documented = {n.strip() for n in documented.group(1).split(",")}
    assert {n for n in vars(planner.Plan) if not n.startswith("_")} == documented
    assert {n for n in vars(plan) if not n.startswith("_")} == set()
    assert {n for n in dir(plan) if not n.startswith("_")} == documented == set(planner.plan.API)
    for name in ("analyzer", "converter", "run_compiled", "formula_answer_values", "model", "resolve_scenarios"):
        assert not hasattr(planner.Plan, name), name
        with pytest.warns(DeprecationWarning, match=f"planner.Plan.{name} is the compiled plan's machinery"):
            assert getattr(plan, name) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
            plan.no_such_thing  # noqa: B018
        for name in documented:  # the API itself does not warn
            getattr(plan, name)
    assert plan.evaluate("bf16").display("weight_bytes") == 140  # 70e9 parameters * 16 bit = 140 GB


def test_the_example_notebook_runs_and_shows_tables_and_a_plot():
    """examples/planner.ipynb, executed as Jupyter would (nbclient, a real kernel)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.read(ROOT / "examples" / "planner.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "examples")}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("<code>batch1_weight_bound</code>" in h for h in html)  # the plan
    assert any("60 passed, 0 failed" in h for h in html)  # the checks
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the plot
    texts = "".join(o["data"].get("text/plain", "") for o in outputs if "data" in o)
    assert "0.019262 s" in texts and "'speedup': ''" in texts  # a Value converted; a DataFrame's units


BREAKEVEN = ("price = 10\ncost = 4\nvolume = 100   where volume >= 0\nprofit = (price - cost) * volume - 300\n"
             "scenario cheap { price = 3 }\nscenario dear { price = 20 }\n"
             "solve volume where profit = 0 for all as breakeven\n")


def test_solve_answers_each_scenario_for_itself_as_the_command_line_does():
    """`Plan.solve` and `planner solve` go through one door: a scenario with no answer (selling under
    cost never breaks even) is a finding beside the others' answers, not the end of the question."""
    got = planner.loads(BREAKEVEN).solve()
    # (p - 4) * v = 300: as written (p = 10) v = 50, dear (p = 20) v = 18.75
    assert [(r.scenario, float(r.value)) for r in got.rows] == [("base", 50), ("dear", 18.75)]
    (err,) = got.errors
    assert "no `volume` in [0, inf) makes `profit = 0` hold" in err.message
    with pytest.raises(planner.PlanError, match="no `volume`"):
        planner.loads(BREAKEVEN).solve("volume", where="profit = 0", scenario="cheap")
    assert {k: float(v) for k, v in planner.loads(BREAKEVEN).solve(closed_form=False)["breakeven"].items()} == \
        {"base": 50, "dear": 18.75}


def test_explain_and_build_print_through_their_views(plan, cli, monkeypatch, tmp_path):
    """One renderer per question: `planner explain` prints the text `Plan.explain` returns, and `planner
    build` the summary of its view, each through the command line's one `emit`."""
    monkeypatch.setenv("COLUMNS", "0")  # no folding: the API's text is not fitted to a terminal
    code, out, _ = cli("explain", TOKEN_COST, "weight_bytes", "--scenario", "all")
    assert code == 0 and out == repr(plan.explain("weight_bytes", scenario="all")) + "\n"
    assert "140.0000 GB" in out  # 70e9 parameters at 16 bit (four decimals: int4_g128 is 36.3125 GB)
    code, out, _ = cli("build", TOKEN_COST, "-o", tmp_path / "out")
    assert code == 0 and out.startswith("Per-token cost of a 70B dense model") and "\nwrote: " in out


def test_simulate_gives_the_figures_planner_simulate_prints(cli):
    """`Plan.simulate` is `planner simulate`'s door: the same samples (seed, method), the same figures."""
    import json

    path = "examples/gpu_buy_vs_rent.plan"
    got = planner.load(path).simulate(["npv_saving", "owning_is_cheaper"], samples=1000, seed=3, scenario="all")
    code, out, err = cli("simulate", path, "--show", "npv_saving,owning_is_cheaper", "-n", "1000", "--seed", "3",
                         "--scenario", "all", "-f", "json")
    assert code == 0, err
    printed = {s["scenario"]: s["quantities"] for s in json.loads(out)["scenarios"]}
    assert list(printed) == list(got["npv_saving"]) == ["base", "low_use", "cheap_cloud", "fast_decline"]
    for scenario, row in got["npv_saving"].items():
        figures = printed[scenario]["npv_saving"]
        assert (row.point, row.mean, row.sd, row.percentiles["p95"]) == pytest.approx(
            (figures["point"], figures["mean"], figures["sd"], figures["p95"]), rel=1e-12)
    # a true/false shown is 1 or 0 as written, its mean the share of samples where it holds (it was an
    # internal error in `planner simulate --show owning_is_cheaper`); owning is cheaper as written
    flag = got["owning_is_cheaper"]["base"]
    assert flag.point == printed["base"]["owning_is_cheaper"]["point"] == 1
    assert 0 < flag.mean < 1 and flag.mean == pytest.approx(printed["base"]["owning_is_cheaper"]["mean"], rel=1e-12)
    # the plan as written: 64 * 30 kUSD of GPUs against 36 months of rent; npv_saving 183.93 kUSD (as eval)
    assert got["npv_saving"]["base"].point == pytest.approx(float(planner.load(path).eval()["npv_saving"]), rel=1e-12)
    assert got["npv_saving"]["base"].unit == "kUSD"
    with pytest.raises(planner.PlanError, match="no quantity `npv_savings`"):
        planner.load(path).simulate(["npv_savings"])
