"""Series over periods in the report, in `planner build` and in the language server's hover.

The golden figures are worked by hand from the plans' own words, not read from planner's output:
``tests/plans/series_runway.plan`` ends month k with ``start - k * burn`` (100 kUSD less 8 kUSD a
month), so cash is first below zero in month ``floor(100 / burn) + 1``: month 13 as written, month
9 in ``price_war`` (12 kUSD a month) and never in ``frugal`` (1 kUSD a month: 40 kUSD left after
60 months). The sixty-month plan's figures come from the independent month-by-month script of
tests/test_series.py.
"""

from __future__ import annotations

import io
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from planner.compute.evaluation import load, loads
from planner.outputs import periods
from planner.outputs.build import report_outputs
from planner.outputs.viewmodel import analyse, view_model

PLANS = Path(__file__).parent / "plans"
RUNWAY = PLANS / "series_runway.plan"
SIXTY = PLANS / "series_60_months.plan"
START, BURN = 100.0, {"base": 8.0, "price_war": 12.0, "frugal": 1.0}  # kUSD, from the plan's text


def _cash(burn: float, months: int = 60) -> list[float]:
    """The runway plan by hand: cash at the end of month k is start - k * burn (kUSD)."""
    return [START - k * burn for k in range(1, months + 1)]


def _runs_out(burn: float, months: int = 60):
    k = math.floor(START / burn) + 1  # the first k with START - k * burn < 0
    return k if k <= months else None


@pytest.fixture(scope="module")
def runway():
    return analyse(load(RUNWAY))


@pytest.fixture(scope="module")
def runway_view(runway):
    return view_model(runway)


@pytest.fixture(scope="module")
def runway_outputs(runway):
    outputs, notes = report_outputs(runway, "runway.md")
    return {o.name: o.data for o in outputs}, notes


def test_the_hand_worked_months():
    assert {k: _runs_out(b) for k, b in BURN.items()} == {"base": 13, "price_war": 9, "frugal": None}


# ---- findings: the month each scenario runs out, and never as a finding -------------------------------

def test_the_sentence_names_the_month_cash_runs_out_in_each_scenario(runway_view, runway_outputs):
    (sentence,) = runway_view["periods"]["findings"]
    assert sentence == ("`runway`: `cash < 0 USD` first holds in **month 9** in `price_war` and in **month 13** "
                        "in `base`; it **never** holds in `frugal`.")
    text = runway_outputs[0]["runway.md"].decode()
    findings = text[text.index("## Findings"):text.index("## About this plan")]
    assert f"- {sentence}" in findings


@pytest.mark.parametrize("scenarios, want", [
    ("", "`runway`: `cash < 0 USD` first holds in **month 13**."),
    ("scenario price_war { burn = 12 kUSD }\n",
     "`runway`: `cash < 0 USD` first holds in **month 9** in `price_war` and in **month 13** in `base`."),
    ("scenario price_war { burn = 12 kUSD }\nscenario frugal { burn = 1 kUSD }\nscenario lean { burn = 1.5 kUSD }\n",
     "`runway`: `cash < 0 USD` first holds in **month 9** in `price_war` and in **month 13** in `base`; "
     "it **never** holds in `frugal` and `lean`."),
    ("scenario price_war { burn = 12 kUSD }\nscenario frugal { burn = 1 kUSD }\nscenario late { burn = 13 kUSD }\n",
     "`runway`: `cash < 0 USD` first holds in **month 8** in `late`, in **month 9** in `price_war` and in "
     "**month 13** in `base`; it **never** holds in `frugal`."),
    ("scenario price_war { burn = 12 kUSD }\nscenario also { burn = 12.5 kUSD }\n",  # 100 - 8 * 12.5 = 0: month 9
     "`runway`: `cash < 0 USD` first holds in **month 9** in `price_war` and `also`, and in **month 13** in `base`."),
])
def test_the_sentence_per_scenario(scenarios, want):
    text = RUNWAY.read_text().split("scenario price_war")[0] + scenarios
    assert view_model(analyse(loads(text, name=str(RUNWAY))))["periods"]["findings"] == [want]


def test_one_scenario_that_runs_out_and_the_rest_never():
    text = RUNWAY.read_text().replace("scenario frugal    { burn = 1 kUSD }", "").replace(
        "burn  = 8 kUSD ", "burn  = 1 kUSD ")  # as written: 1 kUSD a month, never out; price_war: month 9
    (sentence,) = view_model(analyse(loads(text, name=str(RUNWAY))))["periods"]["findings"]
    assert sentence == "`runway`: `cash < 0 USD` first holds in **month 9** in `price_war`, and **never** otherwise."


def test_never_everywhere_is_a_finding_not_a_failure():
    text = RUNWAY.read_text().split("scenario price_war")[0].replace("burn  = 8 kUSD ", "burn  = 1 kUSD ")
    vm = view_model(analyse(loads(text, name=str(RUNWAY))))
    assert vm["periods"]["findings"] == ["`runway`: `cash < 0 USD` holds in none of the 60 months: **never**."]
    assert vm["quantities"]["runway"]["value"] == "never"


# ---- the line chart: a line per scenario, the month marked ----------------------------------------------

def test_the_chart_data_has_a_line_per_scenario_with_the_hand_values(runway):
    (data,) = periods.plot_data(runway, ["cash"], {"cash": "cash"})
    assert [label for label, _, _ in data.lines] == ["base", "price_war", "frugal"]
    for label, x, y in data.lines:
        assert list(x) == list(range(1, 61))
        assert np.allclose(y, _cash(BURN[label]), rtol=1e-12)
    # the months the plan's first(...) found, on the line of their scenario; frugal has none
    assert sorted((data.lines[i][0], x, t) for i, x, t in data.marks) == [
        ("base", 13.0, "month 13"), ("price_war", 9.0, "month 9")]


COLOURS = {"C0": (31, 119, 180), "C1": (255, 127, 14), "C2": (44, 160, 44), "C3": (214, 39, 40)}


def _pixels(png: bytes) -> dict[str, int]:
    from PIL import Image

    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).reshape(-1, 3)
    return {name: int(np.all(image == rgb, axis=1).sum()) for name, rgb in COLOURS.items()}


def test_the_chart_png_shows_three_lines(runway_outputs):
    files, _ = runway_outputs
    text = files["runway.md"].decode()
    assert "a line per scenario](runway-series-1.png)" in text
    seen = _pixels(files["runway-series-1.png"])
    # three scenarios: matplotlib's first three colours drawn (each a 60-month line), the fourth nowhere
    assert seen["C0"] > 500 and seen["C1"] > 500 and seen["C2"] > 500, seen
    assert seen["C3"] == 0, seen


def test_without_scenarios_the_chart_has_one_line():
    text = RUNWAY.read_text().split("scenario price_war")[0]
    analysis = analyse(loads(text, name=str(RUNWAY)))
    outputs, _ = report_outputs(analysis, "one.md")
    files = {o.name: o.data for o in outputs}
    seen = _pixels(files["one-series-1.png"])
    assert seen["C0"] > 500 and seen["C1"] == 0 and seen["C2"] == 0, seen


# ---- the table: quarterly past 24 months ----------------------------------------------------------------

def test_the_table_has_a_row_per_quarter_with_the_hand_values(runway_view):
    (s,) = runway_view["periods"]["series"]
    assert s["every"] == "at the end of every quarter" and s["columns"] == ["base", "price_war", "frugal"]
    assert [r["period"] for r in s["rows"]] == [f"month {k}" for k in range(3, 61, 3)]
    for r in s["rows"]:
        k = int(r["period"].split()[1])
        assert r["cells"] == [f"{START - k * BURN[x]:,.2f}" for x in ("base", "price_war", "frugal")]


@pytest.mark.parametrize("months, every, rows", [(12, "every month", 12), (24, "every month", 24),
                                                  (36, "at the end of every quarter", 12),
                                                  (120, "at the end of every half year", 20)])
def test_the_table_fits_a_page(months, every, rows):
    text = RUNWAY.read_text().replace("1 month..60 month", f"1 month..{months} month")
    (s,) = view_model(analyse(loads(text, name=str(RUNWAY))))["periods"]["series"]
    assert s["every"] == every and len(s["rows"]) == rows and s["rows"][-1]["period"] == f"month {months}"


def test_the_lowest_month_of_the_sixty_month_plan():
    from test_series import _months

    cash = _months()["cash"]
    low = min(range(60), key=lambda i: cash[i])
    (s,) = view_model(analyse(load(SIXTY)))["periods"]["series"]
    (facts,) = s["facts"]
    assert facts["low_period"] == f"month {low + 1}"
    assert float(facts["low"].split()[0].replace(",", "")) == pytest.approx(cash[low] / 1000, abs=0.005)


def test_untagged_series_are_those_the_headline_figures_reduce():
    text = RUNWAY.read_text().replace('"cash at the month\'s end" [headline]', '"cash at the month\'s end"')
    text = text.replace("series cash", "series spent = burn * (period / 1 month)\nseries cash")
    plan = loads(text, name=str(RUNWAY))
    assert periods.headline_series(plan, ["low_cash"]) == ["cash"]
    vm = view_model(analyse(plan))
    assert [s["name"] for s in vm["periods"]["series"]] == ["cash"] and [o["name"] for o in vm["periods"]["others"]] == ["spent"]
    assert vm["periods"]["others"][0]["formula"] == "burn * (period / 1 month)"


# ---- under uncertainty: the fan -------------------------------------------------------------------------

UNCERTAIN = RUNWAY.read_text().replace("burn  = 8 kUSD ", "burn  = 8 kUSD ~ 6 kUSD to 10 kUSD ")


@pytest.fixture(scope="module")
def uncertain():
    return analyse(loads(UNCERTAIN, name=str(RUNWAY)))


def test_the_fan_is_the_percentiles_of_the_hand_formula_over_the_trials(uncertain):
    assert UNCERTAIN != RUNWAY.read_text()
    (data,) = periods.fan_data(uncertain, ["cash"], {"cash": "cash"})
    (fan,) = data.fans  # price_war and frugal set the burn: nothing uncertain moves their cash
    label, x, f, point = fan
    assert data.title == "cash (base)" and label == ""
    base = next(s for s in uncertain.simulations if s.scenario is None)
    burns = base.column("burn") / 1000  # kUSD
    for k in (1, 12, 60):
        cash = START - k * burns
        assert f["p50"][k - 1] == pytest.approx(np.percentile(cash, 50), rel=1e-9)
        assert f["p5"][k - 1] == pytest.approx(np.percentile(cash, 5), rel=1e-9)
        assert f["p95"][k - 1] == pytest.approx(START - k * np.percentile(burns, 5), rel=1e-9)
    assert np.allclose(point, _cash(8.0))


def test_the_report_shows_the_fan_under_uncertainty(uncertain):
    outputs, _ = report_outputs(uncertain, "u.md")
    files = {o.name: o.data for o in outputs}
    text = files["u.md"].decode()
    assert "](u-fan-1.png)" in text and "u-fan-1.png" in files and "## Uncertain inputs" in text
    assert text.index("](u-fan-1.png)") < text.index("## Uncertain inputs")
    seen = _pixels(files["u-fan-1.png"])
    assert seen["C0"] > 500  # the median line of the one fan


# ---- the build: the report, and a note for the workbook -------------------------------------------------

def test_build_writes_the_report_its_charts_and_the_workbook_of_a_plan_with_series(tmp_path):
    from planner.outputs.build import build, summary

    result = build(str(RUNWAY), str(tmp_path / "out"))
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["series_runway-sensitivity.png", "series_runway-series-1.png", "series_runway.md",
                     "series_runway.xlsx"]
    assert not any("skipped" in n for n in result.notes) and "skipped" not in summary(result)


def test_the_build_summary_says_the_reports_sentence(tmp_path):
    """`planner build`'s summary said the headline figures but not when cash runs out: it now says the
    report's sentence (months by hand: 9, 13, never), from the same source, in plain text."""
    from planner.outputs.build import build, summary

    text = summary(build(str(RUNWAY), str(tmp_path / "out")))
    assert ("`runway`: `cash < 0 USD` first holds in month 9 in `price_war` and in month 13 in `base`; it never "
            "holds in `frugal`.") in text.splitlines()
    assert "**" not in text


def test_build_of_a_plan_without_series_still_writes_the_workbook(tmp_path):
    from planner.outputs.build import build

    plan = tmp_path / "p.plan"
    plan.write_text("a = 2\nb = a * 3 [headline]\n", encoding="utf-8")
    build(str(plan), str(tmp_path / "out"))
    assert (tmp_path / "out" / "p.xlsx").is_file()


# ---- rendered as its receiver reads it ------------------------------------------------------------------

def test_the_report_renders(tmp_path, runway_outputs):
    node = shutil.which("node")
    render = Path(__file__).parent / "render"
    if node is None or not (render / "node_modules" / "katex").is_dir():
        import os

        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node and the npm packages of tests/render are needed (npm ci --prefix tests/render)")
        pytest.skip("node or the npm packages of tests/render are missing (npm ci --prefix tests/render)")
    import json

    files = [tmp_path / "runway.md", tmp_path / "sixty.md"]
    files[0].write_bytes(runway_outputs[0]["runway.md"])
    files[1].write_bytes(report_outputs(analyse(load(SIXTY)), "sixty.md", plots=False)[0][-1].data)
    run = subprocess.run([node, str(render / "render.mjs"), "check", *map(str, files)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    for f in files:
        assert found[str(f)]["errors"] == [] and found[str(f)]["math"] > 0, found[str(f)]
    sixty = files[1].read_text()
    for tex in (r"\min(\mathrm{cash})", r"\operatorname{first}(\text{period} \;\text{where}\;",
                r"\mathrm{staff}\;\text{at}\; 24\,\mathrm{month}"):
        assert tex in sixty, tex


# ---- the language server's hover ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lsp():
    from conftest import ROOT
    from lsp_client import LspClient

    client = LspClient(cwd=ROOT)
    client.initialize(ROOT)
    yield client
    assert client.close() == 0


def _hover(lsp, path: Path, text: str, needle: str) -> str:
    i = text.index(needle)
    line = text.count("\n", 0, i)
    pos = {"line": line, "character": i - (text.rfind("\n", 0, i) + 1)}
    got = lsp.request("textDocument/hover", {"textDocument": {"uri": path.as_uri()}, "position": pos})
    return got["result"]["contents"]["value"]


def _figures(text: str) -> list[float]:
    return [float(v.replace(",", "")) for v in re.findall(r"\*\*(-?[\d,.]+) kUSD\*\*", text)]


def test_hover_on_a_series_shows_first_last_and_lowest_with_its_month(lsp):
    from test_series import _months

    text = SIXTY.read_text()
    lsp.open(SIXTY, text)
    assert lsp.diagnostics(SIXTY) == []  # a plan with series evaluates: no error to show
    hover = _hover(lsp, SIXTY, text, "cash             =")
    cash = [c / 1000 for c in _months()["cash"]]  # kUSD, the plan's display unit
    low = min(range(60), key=lambda i: cash[i])
    assert hover.startswith("**cash** (series, kUSD)")
    first, last, lowest = _figures(hover)
    # money to the cent of its display unit, as every output writes it (the one number rule)
    assert first == pytest.approx(cash[0], abs=0.005) and last == pytest.approx(cash[-1], abs=0.005)
    assert lowest == pytest.approx(cash[low], abs=0.005)
    assert "(month 1), last" in hover and "(month 60), lowest" in hover and f"(month {low + 1})" in hover
    assert "```plan\nseries cash = previous(cash, start_cash)" in hover


def test_hover_on_a_reduction_shows_its_value(lsp):
    from test_series import _months

    text = SIXTY.read_text()
    lsp.open(SIXTY, text)
    lsp.diagnostics(SIXTY)
    cash = _months()["cash"]
    first = next(k for k, c in enumerate(cash, start=1) if c < 0)
    assert f"= **{first} month**" in _hover(lsp, SIXTY, text, "first_negative =")
    low = _hover(lsp, SIXTY, text, "low_cash       =")
    assert _figures(low) == [pytest.approx(min(cash) / 1000, abs=0.005)]


def test_hover_per_scenario_and_never(lsp):
    text = RUNWAY.read_text()
    lsp.open(RUNWAY, text)
    assert lsp.diagnostics(RUNWAY) == []
    hover = _hover(lsp, RUNWAY, text, "runway   =")
    assert "| price_war | 9 month |" in hover and "| frugal | never |" in hover
    cash = _hover(lsp, RUNWAY, text, "cash = previous")
    row = next(line for line in cash.splitlines() if line.startswith("| price_war |"))
    first, last, lowest = _figures(row)
    assert (first, last, lowest) == (START - 12, START - 60 * 12, START - 60 * 12)


def test_a_true_false_series_reads_true_and_false():
    text = ("periods = 1 week..30 week\nstart = 10\nseries level = previous(level, start) - 1\n"
            "series short = level < 0 [headline]\nfirst_short = first(period where short)\n")
    vm = view_model(analyse(loads(text, name="flags.plan")))
    (s,) = vm["periods"]["series"]
    # level ends week k at 10 - k: below zero from week 11
    assert s["every"] == "every 4 weeks" and [r["at"] for r in s["rows"]] == ["4", "8", "12", "16", "20", "24", "28", "30"]
    assert [r["cells"] for r in s["rows"][:3]] == [["false"], ["false"], ["true"]]
    (facts,) = s["facts"]
    assert (facts["first"], facts["last"], facts["low"]) == ("false", "true", None)
    assert vm["periods"]["findings"] == ["`first_short`: `short` first holds in **week 11**."]


def test_the_hint_at_the_end_of_a_series_is_short(lsp):
    text = RUNWAY.read_text()
    lsp.open(RUNWAY, text)
    lsp.diagnostics(RUNWAY)
    hints = lsp.request("textDocument/inlayHint", {"textDocument": {"uri": RUNWAY.as_uri()}, "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}})["result"]
    line = text[:text.index("series cash")].count("\n")
    (hint,) = [h for h in hints if h["position"]["line"] == line]
    # as written: 100 - 8 = 92 kUSD after month 1, 100 - 60 * 8 = -380 kUSD after month 60, the lowest
    assert hint["label"] == " = 92.00 … -380.00 kUSD, lowest -380.00 kUSD (month 60) (varies by scenario)"
    assert "frugal: first 99.00 kUSD (month 1), last 40.00 kUSD (month 60)" in hint["tooltip"]
    (runway,) = [h for h in hints if h["position"]["line"] == line + 3]
    assert "frugal: never" in runway["tooltip"]


def test_a_scenario_with_a_shorter_horizon():
    text = RUNWAY.read_text().replace("periods = 1 month..60 month", "horizon = 60 month\nperiods = 1 month..horizon")
    text += "scenario short { horizon = 24 month }\n"
    vm = view_model(analyse(loads(text, name=str(RUNWAY))))
    p = vm["periods"]
    assert p["span"] == "24 to 60 months by scenario, month 1 to month 60 at the longest"
    (s,) = p["series"]
    assert s["columns"] == ["base", "price_war", "frugal", "short"]
    rows = {r["at"]: r["cells"] for r in s["rows"]}
    assert rows["24"] == ["-92.00", "-188.00", "76.00", "-92.00"]  # 100 - 24 * burn
    assert rows["27"] == ["-116.00", "-224.00", "73.00", "–"]  # short has no month 27
    assert s["facts"][3]["last_period"] == "month 24" and s["facts"][3]["last"] == "-92.00 kUSD"
    assert p["findings"] == ["`runway`: `cash < 0 USD` first holds in **month 9** in `price_war`, and in **month 13** "
                             "in `base` and `short`; it **never** holds in `frugal`."]


def test_scenarios_that_share_a_fan_draw_it_once():
    text = UNCERTAIN.replace("periods = 1 month..60 month", "horizon = 60 month\nperiods = 1 month..horizon")
    text += "scenario short { horizon = 24 month }\nscenario lean { start = 50 kUSD }\n"
    analysis = analyse(loads(text, name=str(RUNWAY)))
    (data,) = periods.fan_data(analysis, ["cash"], {"cash": "cash"})
    # base and short draw the same trials (short stops at month 24); lean starts 50 kUSD lower
    assert [(label, len(x)) for label, x, _, _ in data.fans] == [("base, short", 60), ("lean", 60)]
    (base, _, f_base, _), (_, _, f_lean, _) = data.fans
    assert np.allclose(f_base["p50"] - f_lean["p50"], 50.0)


def test_a_scenarios_fan_has_its_line_colour():
    """A fan is drawn in its scenario's colour on the line chart: scenarios without a fan (every uncertain
    input set) do not shift the colours of those after them."""
    text = UNCERTAIN.replace("periods = 1 month..60 month", "horizon = 60 month\nperiods = 1 month..horizon")
    text += "scenario fixed { burn = 8 kUSD }\nscenario lean { start = 50 kUSD }\n"
    analysis = analyse(loads(text, name=str(RUNWAY)))
    labels = [ev.label for ev in analysis.evaluations]
    (data,) = periods.fan_data(analysis, ["cash"], {"cash": "cash"})
    # price_war, frugal and fixed set the one uncertain input (burn): lean's is the one fan, named in the title
    assert labels == ["price_war", "frugal", "fixed", "lean"] and data.title == "cash (lean)"
    assert data.colours == (3,)  # lean's line is the fourth (C3), and so is its fan, not the first colour


def test_many_scenarios_split_the_table():
    text = RUNWAY.read_text().split("scenario price_war")[0]
    text += "".join(f"scenario b{k} {{ burn = {k} kUSD }}\n" for k in range(1, 8))  # seven scenarios, and base
    vm = view_model(analyse(loads(text, name=str(RUNWAY))))
    (s,) = vm["periods"]["series"]
    assert [t["columns"] for t in s["tables"]] == [["base", "b1", "b2", "b3", "b4"], ["b5", "b6", "b7"]]
    month_3 = s["tables"][1]["rows"][0]
    assert month_3["at"] == "3" and month_3["cells"] == [f"{100 - 3 * k:.2f}" for k in (5, 6, 7)]


def test_hover_on_a_true_false_series_says_when_it_first_holds(lsp, tmp_path):
    path = tmp_path / "flags.plan"
    text = ("periods = 1 week..30 week\nstart = 10\nseries level = previous(level, start) - 1\n"
            "series short = level < 0\nseries never_short = level < -100\n")
    lsp.open(path, text)
    assert lsp.diagnostics(path) == []
    # level ends week k at 10 - k: below zero from week 11, never below -100 in 30 weeks
    assert "true first in **week 11** (of week 1 to week 30)" in _hover(lsp, path, text, "short =")
    assert "**never** true (of week 1 to week 30)" in _hover(lsp, path, text, "never_short =")


def test_a_plan_of_series_alone_shows_the_last_of_each_chain():
    text = ("periods = 1 month..12 month\nseries a = 1 then previous + 1\nseries b = a * 2\n"
            "series c = previous(c, 0) + a\n")
    vm = view_model(analyse(loads(text, name="chain.plan")))
    assert [s["name"] for s in vm["periods"]["series"]] == ["b", "c"]
    (b, c) = vm["periods"]["series"]
    assert [r["cells"][0] for r in b["rows"]] == [str(2 * k) for k in range(1, 13)]  # b = 2k, every month
    assert c["rows"][-1]["cells"] == ["78"]  # c = 1 + 2 + ... + 12


def test_a_fan_without_any_figure_to_simulate():
    text = UNCERTAIN.split("low_cash")[0]  # the series alone: no figure an uncertain input reaches
    analysis = analyse(loads(text, name=str(RUNWAY)))
    (data,) = periods.fan_data(analysis, ["cash"], {"cash": "cash"})
    (sim,) = analysis.simulations
    burns = sim.column("burn") / 1000
    assert data.fans[0][2]["p50"][59] == pytest.approx(np.percentile(START - 60 * burns, 50), rel=1e-9)
    outputs, _ = report_outputs(analysis, "alone.md")
    assert "](alone-fan-1.png)" in outputs[-1].data.decode()


def test_a_scenario_whose_line_is_another_ones_says_so_and_both_lines_show():
    """A scenario that changes nothing the series uses drew its line exactly over the plan as written's:
    the legend named both and the chart showed one. Its label says whose line it is, and it is dashed over it."""
    text = RUNWAY.read_text() + "other = 1\nscenario cheap { other = 2 }\n"
    analysis = analyse(loads(text, name=str(RUNWAY)))
    (data,) = periods.plot_data(analysis, ["cash"], {"cash": "cash"})
    assert [label for label, _, _ in data.lines] == ["base", "price_war", "frugal", "cheap (same as base)"]
    outputs, _ = report_outputs(analysis, "same.md")
    seen = _pixels({o.name: o.data for o in outputs}["same-series-1.png"])
    assert seen["C0"] > 300 and seen["C3"] > 300, seen
