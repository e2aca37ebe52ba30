"""The report's part on uncertain inputs: percentile table, statements in words, histograms with the
value as written marked, the tornado.

Golden numbers come from the distributions' theory: ``1 + alpha`` with ``alpha`` uniform on
85%..90% has P5 1.8525, P50 and mean 1.875, P95 1.8975; a Latin hypercube of 10,000 puts exactly
one sample in each 1/10,000 slice, so ``x < 0.3`` with ``x`` uniform on 0..1 holds in exactly 3,000.
"""

from pathlib import Path

import numpy as np
import pytest

import planner
from planner.outputs.build import build, report_outputs
from planner.outputs.viewmodel import analyse, view_model

ROOT = Path(__file__).resolve().parent.parent

SMALL = """title "A draw"
x = 0.5 ~ uniform(0, 1) "the draw" where 0 <= x <= 1
b = uniform(0, 1) "the other draw"
y = 3 * x - b "three of one less the other" [headline]
win = x < 0.3 "the draw comes in under 0.3" [headline]
check P(win) >= 29%
check P(y > 2) < 20%
"""


def _view(path) -> dict:
    return view_model(analyse(planner.load(path)))


def test_a_plan_without_uncertain_inputs_has_no_such_part(plan_file):
    view = _view(plan_file("x = 2\ny = 3 * x [headline]\n"))
    assert view["uncertainty"] is None
    text = report_outputs(analyse(planner.load(plan_file("x = 2\ny = 3 * x [headline]\n"))), "r.md", plots=False)[0]
    assert "Uncertain inputs" not in text[-1].data.decode()


def test_the_percentiles_of_a_uniform_range_are_its_theory():
    """llm_cost's DeepSeek-V3 MTP: tokens = 1 + alpha, alpha uniform on 85%..90%."""
    analysis = analyse(planner.load(ROOT / "sheets" / "llm_cost.plan"))
    assert "dsv3_mtp_tokens" in analysis.uncertain_figures
    sim = analysis.simulations[0]
    stats = sim.stats("dsv3_mtp_tokens", (5.0, 50.0, 95.0))
    for key, want in [("p5", 1.8525), ("p50", 1.875), ("p95", 1.8975), ("mean", 1.875), ("point", 1.875)]:
        assert stats[key] == pytest.approx(want, abs=1e-4), key
    view = view_model(analysis)["uncertainty"]
    (row,) = next(f for f in view["figures"] if f["name"] == "dsv3_mtp_tokens")["rows"]  # no scenario moves it
    assert row["scenario"] == "every scenario"
    # one style for the row, as `planner simulate` writes it: the theory's 1.8525 and 1.8975 in full
    assert (row["point"], row["p5"], row["p50"], row["p95"]) == ("1.8750", "1.8525", "1.8750", "1.8975")
    assert [i["name"] for i in view["inputs"]] == ["dsv3_mtp_alpha"]
    words = {(s["code"], s["words"]) for s in view["statements"]}
    assert ("dsv3_mtp_tokens >= 1.85 token", "in 100% of trials.") in words  # 1 + 85% is the lowest


def test_a_true_false_figure_is_a_share_of_trials_in_words(plan_file):
    view = _view(plan_file(SMALL))["uncertainty"]
    said = [s["words"] for s in view["statements"] if not s["code"]]
    assert said == ["The draw comes in under 0.3 in 30.00% of trials."]  # 3,000 of 10,000 slices, as `planner simulate` says it
    # P(y > 2): 3x - b > 2 is the triangle x > (2 + b) / 3 of the unit square, area 1/6 = 16.7%,
    # to three standard errors of 10,000 trials (0.37% each)
    (coded,) = [s for s in view["statements"] if s["code"]]
    assert coded["code"] == "y > 2" and coded["words"].startswith("in ") and coded["words"].endswith("% of trials.")
    assert float(coded["words"][3:-12]) == pytest.approx(100 / 6, abs=3 * 0.373)


def test_the_tornado_ranks_the_input_that_moves_a_figure_most_first(plan_file):
    """y = 3x - b: x moves y three times as much as b, in the other direction (Pearson's 3/sqrt(10)
    = 0.95 and -1/sqrt(10) = -0.32 for uniform inputs; Spearman's is close)."""
    view = _view(plan_file(SMALL))["uncertainty"]
    (t,) = view["tornado"]
    assert t["name"] == "y" and [r["input"] for r in t["top"]] == ["x", "b"]
    rx, rb = (float(r["rho"]) for r in t["top"])
    assert 0.9 < rx < 0.97 and -0.36 < rb < -0.27


def test_build_writes_a_histogram_per_figure_with_the_value_as_written_and_a_tornado(tmp_path):
    from planner.outputs.uncertainty import plot_data

    plan = ROOT / "examples" / "gpu_buy_vs_rent.plan"
    result = build(str(plan), str(tmp_path / "out"))
    names = {p.name for p in result.written}
    assert {"gpu_buy_vs_rent-uncertain-1.png", "gpu_buy_vs_rent-tornado.png"} <= names
    report = (tmp_path / "out" / "gpu_buy_vs_rent.md").read_text(encoding="utf-8")
    part = report[report.index("## Uncertain inputs"):]
    assert "](gpu_buy_vs_rent-uncertain-1.png)" in part and "](gpu_buy_vs_rent-tornado.png)" in part
    assert "| figure | as written | mean | P5 | P50 | P95 |" in part
    assert "Owning costs less than renting over the horizon in" in part
    # the value as written marked on the histogram is the figure every other part of the report shows
    data = {d.name: d for d in plot_data(result.analysis, {})}
    base = next(ev for ev in result.analysis.evaluations if ev.scenario is None)  # the plan as written
    label, samples, point = data["npv_saving"].series[0]
    assert label == "base" and point == pytest.approx(float(base.display("npv_saving")), rel=1e-12)
    assert len(samples) == 10_000 and np.all(np.isfinite(samples))
    months = data["breakeven_month"].series[0][1]  # nan where owning never catches up: no bar, not dropped
    assert len(months) == 10_000 and 0.5 < np.mean(np.isnan(months)) < 0.75
    png = (tmp_path / "out" / "gpu_buy_vs_rent-uncertain-1.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_examples_probability_checks_pass():
    from planner.questions.every_check import run_every_check

    plan = planner.load(ROOT / "examples" / "gpu_buy_vs_rent.plan")
    results = run_every_check(plan)
    probability = [r for r in results if type(r).__name__ == "ProbabilityResult"]
    assert len(probability) == 5 and all(r.passed for r in results)


def test_the_terminal_says_a_true_false_figure_as_a_share_of_samples(plan_file, cli):
    code, out, err = cli("simulate", plan_file(SMALL))
    assert code == 0, err
    assert "The draw comes in under 0.3 in 30.00% of samples (win)" in out  # 3,000 of 10,000 slices
    code, out, _ = cli("simulate", plan_file(SMALL), "--show", "y")
    assert code == 0 and "of samples (win)" not in out  # --show says what to show


def test_a_count_whole_in_every_trial_is_written_whole_as_planner_simulate_writes_it(plan_file):
    """`n = round(x)` with x uniform on 0..10 is a whole number in every trial: its point 5 and its
    percentiles whole, as the terminal writes them (not 5.00, 0.50)."""
    view = _view(plan_file('x = 5 ~ uniform(0, 10) "the draw"\nn = round(x) "a count" [headline]\n'))
    (row,) = next(f for f in view["uncertainty"]["figures"] if f["name"] == "n")["rows"]
    assert row["point"] == "5" and all(row[k].isdigit() for k in ("p5", "p50", "p95")), row
    assert row["mean"] == "5", row  # the draws are symmetric about 5: their mean is 5, to three significant digits


def test_a_first_that_is_never_in_some_trials_says_its_figures_are_of_the_others(plan_file):
    """The percentile table showed a median runway of a month where most trials never run out (the mean and
    percentiles are over the trials with a month): the row says so. By hand: cash 100 kUSD less the burn each
    month runs out within 36 months only for a burn above 100 / 36 kUSD, so a burn uniform on 1..3 kUSD is
    never in (2.78 - 1) / 2 = 88.89% of trials; at a fixed 4 kUSD it runs out in month 26, at 1 kUSD never."""
    plan = ('unit USD\nunit kUSD = 1000 USD\nperiods = 1 month..36 month\nstart = 100 kUSD\n'
            'burn = uniform(1 kUSD, 3 kUSD)\nseries cash = previous(cash, start) - burn -> kUSD\n'
            'runway = first(period where cash < 0 USD) [headline]\n'
            'scenario price_war { burn = 4 kUSD }\nscenario frugal { burn = 1 kUSD }\n')
    path = plan_file(plan)
    (runway,) = [f for f in _view(path)["uncertainty"]["figures"] if f["name"] == "runway"]
    assert [(r["never"], r["others"]) for r in runway["rows"]] == [("88.89%", True), ("", False), ("100%", False)]
    text = report_outputs(analyse(planner.load(path)), "r.md", plots=False)[0][-1].data.decode()
    assert text.count("the figures are of the others") == 1
    assert "base; never in 88.89% of trials, the figures are of the others</sub>" in text
