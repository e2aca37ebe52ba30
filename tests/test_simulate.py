"""Uncertain inputs and Monte Carlo: the language, the sampling, `planner simulate`, probability checks.

Golden numbers come from the distributions' theory (a uniform's mean is (a + b) / 2, half of a
normal lies below its mean, a lognormal range's 5th and 95th percentiles are its ends), with
tolerances of a few standard errors computed from the sample count."""

import json
import math
import re
import statistics

import numpy as np
import pytest

import planner
from planner.language import ir
from planner.language.errors import PlanError, flatten
from planner.questions import sampling, simulate

N = 10_000


def load(plan_file, text):
    return planner.load(plan_file(text))


# ---- the language -------------------------------------------------------------

@pytest.mark.parametrize("text,kind,point", [
    ("x = 40% to 70%", "range", math.sqrt(0.4 * 0.7)),             # a lognormal's median: sqrt(P5 * P95)
    ("x = 55% ~ 40% to 70%", "range", 0.55),                       # the written point value
    ("x = normal(10 ms, 2 ms)", "normal", 0.010),
    ("x = 12 ms ~ normal(10 ms, 2 ms)", "normal", 0.012),
    ("x = normal(mean=10 ms, sd=2 ms)", "normal", 0.010),
    ("x = lognormal(2, 0.5)", "lognormal", 2 / math.sqrt(1 + 0.25 ** 2)),  # mean / sqrt(1 + cv^2)
    ("x = uniform(20%, 30%)", "uniform", 0.25),
    ("x = uniform(0, 3 ms)", "uniform", 0.0015),                  # a bare 0 fits any unit
    ("x = triangular(6, 9, 18)", "triangular", 18 - math.sqrt(12 * 9 / 2)),  # mode below the middle
    ("x = triangular(0, 9, 10)", "triangular", math.sqrt(10 * 9 / 2)),       # mode above it
    ("x = normal(-5, 1)", "normal", -5.0),
])
def test_uncertain_input_point_value(plan_file, text, kind, point):
    plan = load(plan_file, text + "\n")
    q = plan.model.quantities["x"]
    assert q.is_input and q.definition.uncertain.kind == kind
    assert plan.evaluate().values["x"] == pytest.approx(point, rel=1e-12)


def test_point_value_keeps_its_unit(plan_file):
    plan = load(plan_file, "util = 40% to 70%\nlat = normal(10 ms, 2 ms)\n")
    assert plan.model.quantities["util"].unit_text == "%"
    assert plan.model.quantities["lat"].unit_text == "ms"


def test_existing_meanings_unchanged(plan_file):
    # `to` stays a name; a plan's own `normal` function keeps its meaning; a `check` without
    # statistics stays a deterministic check
    plan = load(plan_file, "to = 5\nnormal(a, b) = a + b\nx = normal(1, 2)\ny = to * 2\ncheck y == 10\n")
    assert plan.evaluate().values["x"] == 3 and plan.evaluate().values["y"] == 10
    assert plan.model.quantities["x"].definition.uncertain is None
    assert len(plan.model.checks) == 1


def test_the_shipped_sheets_uncertain_inputs_are_the_ranges_their_sources_give():
    # llm_cost: the DeepSeek-V3 technical report's 85-90% second-token acceptance of its MTP module (the
    # article); no other input of either sheet is uncertain, and every article figure keeps its point value.
    assert not simulate.uncertain_inputs(planner.load("sheets/token_cost.plan"))
    plan = planner.load("sheets/llm_cost.plan")
    assert set(simulate.uncertain_inputs(plan)) == {"dsv3_mtp_alpha"}
    assert plan.evaluate().display("dsv3_mtp_alpha") == pytest.approx(87.5)
    result = plan.check()
    assert result.ok and result.failed == 0 and result.passed == 360  # the probability checks too, as `planner check`
    assert any(r.check.startswith("check P(dsv3_mtp_tokens") and r.passed for r in result.rows)


@pytest.mark.parametrize("text,needle,column", [
    ("x = 70% to 40%", "is not below", 5),
    ("x = 40% to 40%", "is not below", 5),
    ("x = 0% to 40%", "low end must be above 0", 5),
    ("x = -1 to 4", "low end must be above 0", 5),
    ("x = 1 ms to 2 s", "written in one unit", 13),
    ("x = normal(1, 0)", "standard deviation must be above 0", 15),
    ("x = normal(1, -1)", "standard deviation must be above 0", 15),
    ("x = lognormal(0, 1)", "mean must be above 0", 15),
    ("x = uniform(3, 2)", "needs low below high", 5),
    ("x = triangular(1, 5, 3)", "mode must lie between", 19),
    ("x = triangular(3, 3, 3)", "needs low below high", 5),
    ("x = normal(1)", "needs `sd`", 5),
    ("x = normal(1, 2, 3)", "takes 2 parameters", 18),
    ("x = normal(1, spread=2)", "no parameter `spread`", 15),
    ("y = 1\nx = uniform(y, 2)", "must be a number", 13),
    ("x = 5 ~ 3", "after `~` comes a range or a distribution", 9),
])
def test_bad_distributions_are_located(plan_file, text, needle, column):
    with pytest.raises(PlanError) as info:
        planner.load(plan_file(text + "\n"))
    err = flatten(info.value)[0]
    assert err.family == "distribution"
    assert needle in err.message
    assert err.span.line == text.count("\n") + 1 and err.span.column == column
    assert err.hint


def test_point_in_another_dimension_is_refused(plan_file):
    with pytest.raises(PlanError) as info:
        planner.load(plan_file("x = 5 ms ~ 1 GB to 2 GB\n"))
    assert flatten(info.value)[0].family == "unit"


def test_probability_check_names_are_checked_at_load(plan_file):
    with pytest.raises(PlanError) as info:
        planner.load(plan_file("x = 1 to 2\ncheck P(y > 1) >= 50%\n"))
    assert "unknown name `y`" in flatten(info.value)[0].message


def test_probability_check_is_its_own_statement(plan_file):
    plan = load(plan_file, "x = 1 to 2\ncheck P(x > 1) >= 50%\ncheck p95(x) <= 3\ncheck x > 0\n")
    stmts = [s for s in plan.model.plan.statements if isinstance(s, ir.ProbabilityCheck)]
    assert len(stmts) == 2 and len(plan.model.checks) == 1


# ---- sampling ----------------------------------------------------------------------

def test_ndtri_matches_python_statistics():
    p = np.concatenate([np.linspace(1e-12, 1 - 1e-12, 2001), [1e-300, 1e-50, 0.02425, 0.075, 0.925, 0.5]])
    want = np.array([statistics.NormalDist().inv_cdf(float(x)) for x in p])
    assert np.allclose(sampling.ndtri(p), want, rtol=1e-14, atol=1e-15)


def test_latin_hypercube_puts_one_sample_per_slice():
    u = sampling.uniforms(N, 7, "x")
    assert np.array_equal(np.sort(np.floor(u * N)), np.arange(N))


def _stats(plan_file, text, samples=N, method="lhs", seed=0):
    plan = load(plan_file, text)
    (sim,) = simulate.run(plan, [None], samples, seed, method)
    return sim


@pytest.mark.parametrize("method", ["lhs", "random"])
def test_uniform_mean_and_sd(plan_file, method):
    sim = _stats(plan_file, "x = uniform(2, 5)\n", method=method)
    x = sim.column("x")
    sd = 3 / math.sqrt(12)
    assert abs(x.mean() - 3.5) < 4 * sd / math.sqrt(N)
    assert x.std(ddof=1) == pytest.approx(sd, rel=0.03)
    assert x.min() >= 2 and x.max() <= 5


@pytest.mark.parametrize("method", ["lhs", "random"])
def test_half_a_normal_lies_below_its_mean(plan_file, method):
    sim = _stats(plan_file, "x = normal(10 ms, 2 ms)\n", method=method)
    p = sim.probability(planner.language.lower.lower_expr(planner.language.source.Source("c", "x < 10 ms")))
    assert abs(p - 0.5) < 4 * math.sqrt(0.25 / N)
    assert sim.column("x").std(ddof=1) == pytest.approx(0.002, rel=0.03)


def test_range_has_its_ends_as_p5_and_p95(plan_file):
    sim = _stats(plan_file, "x = 40% to 70%\n", samples=100_000)
    s = sim.stats("x")
    # the sampling error of a percentile: sqrt(p(1-p)/n) / density there; a few in 1e-3 of the value
    assert s["p5"] == pytest.approx(40, rel=3e-3)
    assert s["p95"] == pytest.approx(70, rel=3e-3)
    assert s["p50"] == pytest.approx(100 * math.sqrt(0.28), rel=3e-3)
    mu, sigma = math.log(0.4 * 0.7) / 2, math.log(0.7 / 0.4) / 2 / statistics.NormalDist().inv_cdf(0.95)
    mean = math.exp(mu + sigma * sigma / 2)  # a lognormal's mean and sd
    sd = mean * math.sqrt(math.expm1(sigma * sigma))
    assert s["mean"] == pytest.approx(100 * mean, rel=4 * sd / mean / math.sqrt(100_000))


def test_lognormal_has_its_mean_and_sd(plan_file):
    sim = _stats(plan_file, "x = lognormal(2, 0.5)\n", samples=100_000)
    x = sim.column("x")
    assert abs(x.mean() - 2) < 4 * 0.5 / math.sqrt(100_000)
    assert x.std(ddof=1) == pytest.approx(0.5, rel=0.02)
    assert x.min() > 0


def test_triangular_mean_and_mode(plan_file):
    sim = _stats(plan_file, "x = triangular(6, 9, 18)\n")
    x = sim.column("x")
    mean, sd = (6 + 9 + 18) / 3, math.sqrt((6 * 6 + 9 * 9 + 18 * 18 - 6 * 9 - 6 * 18 - 9 * 18) / 18)
    assert abs(x.mean() - mean) < 4 * sd / math.sqrt(N)
    assert np.mean(x < 9) == pytest.approx((9 - 6) / (18 - 6), abs=4 * math.sqrt(0.25 / N))  # F(mode)


def test_samples_are_shared_seeded_and_per_input(plan_file):
    text = "a = 1 to 2\nb = normal(0, 1)\nd = a - a\ne = a * 2\nf = a + b\nscenario s { b = 1 }\n"
    plan = load(plan_file, text)
    base, s = simulate.run(plan, [None, "s"])
    assert np.all(base.column("d") == 0)                      # one sample set: x - x is exactly 0
    assert np.corrcoef(base.column("a"), base.column("e"))[0, 1] == pytest.approx(1)
    assert np.array_equal(base.column("a"), s.column("a"))    # the same samples in every scenario
    assert not s.varies("b") and np.all(s.column("b") == 1)   # set by the scenario: a constant there
    again = simulate.run(load(plan_file, text), [None])[0]
    assert np.array_equal(again.column("f"), base.column("f"))  # the same seed, the same numbers
    other = simulate.run(plan, [None], seed=1)[0]
    assert not np.array_equal(other.column("a"), base.column("a"))
    more = simulate.run(load(plan_file, "z = uniform(0, 1)\n" + text), [None])[0]
    assert np.array_equal(more.column("a"), base.column("a"))  # another input leaves `a`'s samples alone


def test_vectorised_formulas_match_the_point_evaluation(plan_file):
    # every sample evaluated through the compiled program equals the plan evaluated at that sample's inputs
    text = "a = 1 to 2\nb = uniform(3, 4)\nc = max(a * b, 5) / (1 + a)^2\n"
    plan = load(plan_file, text)
    sim = simulate.run(plan, [None], samples=50)[0]
    for i in range(0, 50, 7):
        ev = plan.evaluate(None, {"a": sim.column("a")[i], "b": sim.column("b")[i]})
        assert sim.column("c")[i] == pytest.approx(ev.values["c"], rel=1e-14)


def test_constraint_truncates_an_unbounded_distribution(plan_file):
    sim = _stats(plan_file, "u = 40% to 70% where 0 <= u <= 1\n", samples=100_000)
    assert sim.column("u").max() <= 1


def test_constraint_refuses_a_distribution_mostly_outside(plan_file):
    with pytest.raises(PlanError) as info:
        _stats(plan_file, "u = normal(90%, 20%) where 0 <= u <= 1\n")
    assert info.value.family == "constraint" and "outside what its constraint allows" in info.value.message
    with pytest.raises(PlanError) as info:
        _stats(plan_file, "u = uniform(-10%, 50%) where u >= 0\n")
    assert info.value.family == "constraint"


def test_derived_constraint_broken_in_some_samples(plan_file):
    with pytest.raises(PlanError) as info:
        _stats(plan_file, "a = uniform(0, 10)\nb = a - 5 where b >= -4\n")
    assert "does not hold in" in info.value.message and "of 10,000 samples" in info.value.message


def test_no_uncertain_inputs_says_so(plan_file):
    with pytest.raises(PlanError) as info:
        _stats(plan_file, "a = 1\n")
    assert "no uncertain inputs" in info.value.message


@pytest.mark.parametrize("n", [0, 1, simulate.MAX_SAMPLES + 1])
def test_sample_count_limits(plan_file, n):
    with pytest.raises(PlanError) as info:
        _stats(plan_file, "a = 1 to 2\n", samples=n)
    assert info.value.family == "distribution"


# ---- probability checks -------------------------------------------------------------

PROB = """\
unit USD
cost = 1 USD to 3 USD
fee = 0.5 USD
total = cost + fee
check P(total < 4 USD) >= 90%
check P(total < 2 USD) >= 90%
check p95(total) <= 3.6 USD
check mean(cost) > 1.5 USD
check sd(cost) < 1 USD
"""


def test_probability_checks_pass_and_fail(plan_file):
    plan = load(plan_file, PROB)
    got = {r.text: r for r in simulate.run_probability_checks(plan)}
    # P(cost < 3.5): z = (ln 3.5 - ln sqrt(3)) / sigma with sigma = ln 3 / (2 * 1.645)
    sigma = math.log(3) / (2 * sampling.Z95)
    p35 = statistics.NormalDist().cdf((math.log(3.5) - math.log(math.sqrt(3))) / sigma)
    assert got["check P(total < 4 USD) >= 90%"].passed
    se = math.sqrt(p35 * (1 - p35) / N)
    assert got["check P(total < 4 USD) >= 90%"].lhs == pytest.approx(100 * p35, abs=100 * 4 * se)
    assert not got["check P(total < 2 USD) >= 90%"].passed
    assert got["check p95(total) <= 3.6 USD"].passed  # 3 USD + 0.5 USD
    assert got["check p95(total) <= 3.6 USD"].lhs == pytest.approx(3.5, rel=3e-3)
    assert got["check mean(cost) > 1.5 USD"].passed
    assert got["check sd(cost) < 1 USD"].passed


def test_percentile_of_a_certain_quantity_is_refused(plan_file):
    plan = load(plan_file, "a = 1 to 2\nb = 3\ncheck p95(b) <= 4\n")
    with pytest.raises(PlanError) as info:
        simulate.run_probability_checks(plan)
    assert "depends on no uncertain input" in info.value.message and info.value.span.line == 3


def test_planner_check_runs_probability_checks(plan_file, cli):
    path = plan_file(PROB)
    code, out, err = cli("check", str(path), "-v")
    assert code == 1
    assert "FAIL" in out and "check P(total < 2 USD) >= 90%" in out
    assert "5 passed, 1 failed" not in out and "4 passed, 1 failed" in out


def test_planner_check_without_probability_checks_is_unchanged(cli):
    code, out, err = cli("check", "sheets/token_cost.plan")
    assert code == 0 and "failed" in out


# ---- the command ----------------------------------------------------------------------

def test_simulate_command_json(plan_file, cli):
    path = plan_file("util = 40% to 70%\nlat = normal(10 ms, 2 ms)\nrate = util / lat\nscenario busy { util = 90% }\n")
    code, out, err = cli("simulate", str(path), "-s", "all", "-s", "base", "--samples", "2000", "--seed", "3",
                         "-p", "util > 60%", "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["samples"] == 2000 and data["seed"] == 3 and data["method"] == "lhs"
    base, busy = data["scenarios"]  # `-s all` is the plan as written and then each scenario
    assert busy["scenario"] == "busy" and busy["quantities"]["util"]["sd"] == 0
    assert base["quantities"]["util"]["point"] == pytest.approx(100 * math.sqrt(0.28))
    assert base["quantities"]["lat"]["unit"] == "ms"
    assert busy["probabilities"]["util > 60%"] == 1.0


def test_simulate_command_table_and_errors(plan_file, cli):
    path = plan_file("util = 40% to 70%\nrate = util * 2\n")
    code, out, err = cli("simulate", str(path), "--percentiles", "10,99.5")
    assert code == 0 and "p99.5" in out and "Latin hypercube" in out
    code, out, err = cli("simulate", str(path), "-p", "rate > 1 ms")
    assert code == 2 and "error[unit]" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as info:  # a bad argument: argparse's usage message, exit 2
        cli("simulate", str(path), "--samples", "0")
    assert info.value.code == 2


# ---- a finance plan with ranges ------------------------------------------------------

FINANCE = "tests/plans/gpu_buy_vs_rent_uncertain.plan"


def test_point_values_keep_every_figure_of_the_plan_as_written():
    # the same plan with ranges beside six of its inputs: every deterministic figure unchanged
    certain, uncertain = planner.load("examples/gpu_buy_vs_rent.plan"), planner.load(FINANCE)
    assert len(simulate.uncertain_inputs(uncertain)) == 6
    for s in [None] + certain.scenario_names:
        a, b = uncertain.evaluate(s), certain.evaluate(s)
        assert a.never.keys() == b.never.keys()  # "never" (nan) in the same places; nan != nan
        assert {k: v for k, v in a.values.items() if k not in a.never} == \
            {k: v for k, v in b.values.items() if k not in b.never}


def test_finance_plan_checks_pass_with_its_probability_checks(cli):
    code, out, err = cli("check", FINANCE, "-v")
    assert code == 0, out + err
    assert "check P(owning_is_cheaper) < 50% in base_case" in out and "11 passed, 0 failed" in out


def test_probabilities_move_with_the_scenario():
    plan = planner.load(FINANCE)
    got = {(r.text, r.scenario): r.lhs for r in simulate.run_probability_checks(plan)}
    base = got[("check P(owning_is_cheaper) < 50% in base_case", "base_case")]
    low = got[("check P(owning_is_cheaper) < 5% in low_use, cheap_cloud", "low_use")]
    assert low < base  # less traffic: owning pays off less often


def test_rank_correlations_of_a_tornado(plan_file):
    sim = _stats(plan_file, "a = 1 to 2\nb = uniform(0, 1)\nup = exp(a)\ndown = 1 / a\nmix = a + b / 1000\n")
    assert sim.rank_correlations("up")["a"] == pytest.approx(1)      # monotone: rank correlation 1
    assert sim.rank_correlations("down")["a"] == pytest.approx(-1)
    assert abs(sim.rank_correlations("up")["b"]) < 4 / math.sqrt(N)  # independent: 0 within sampling error
    assert list(sim.rank_correlations("mix")) == ["a", "b"]          # largest first


def test_simulate_sensitivity_option(cli):
    code, out, err = cli("simulate", FINANCE, "-s", "base_case", "--show", "npv_saving", "--sensitivity", "-n", "2000")
    assert code == 0, err
    assert "rank correlation" in out and "rent_price" in out


def test_uncertain_range_end_is_refused(plan_file):
    with pytest.raises(PlanError) as info:
        _stats(plan_file, "n = 5 ~ uniform(3, 8) where 1 <= n <= 10\ns = sum(m for m in 1..n)\n")
    assert info.value.family == "distribution" and "number of terms would change" in info.value.message
    assert info.value.span.line == 2


def test_counter_generator_is_uniform_and_independent():
    t = np.arange(1, N + 1)
    u, v = sampling.counter_uniforms(t, 0, "a"), sampling.counter_uniforms(t, 0, "b")
    assert 0 < u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 4 * math.sqrt(1 / 12 / N)
    assert abs(np.corrcoef(u, v)[0, 1]) < 4 / math.sqrt(N)          # inputs independent
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 4 / math.sqrt(N)  # trials independent
    counts = np.histogram(u, bins=10, range=(0, 1))[0]
    chi2 = float(((counts - N / 10) ** 2 / (N / 10)).sum())
    assert chi2 < 27.9  # 9 degrees of freedom: the 99.9th percentile
    assert not np.array_equal(sampling.counter_uniforms(t, 1, "a"), u)  # the seed changes the stream


def test_export_trials_option(plan_file, cli, tmp_path):
    import openpyxl

    path = plan_file("util = 40% to 70%\nrate = util * 2\n")
    out = tmp_path / "b.xlsx"
    code, _, err = cli("export", str(path), "-o", str(out), "--trials", "50")
    assert code == 0, err
    ws = openpyxl.load_workbook(out)["Trials"]
    assert [c.value for c in ws["A"] if isinstance(c.value, int)] == list(range(1, 51))
    code, _, err = cli("export", str(path), "-o", str(tmp_path / "c.xlsx"), "--trials", "20000")
    assert code == 2 and "Trials sheet takes 1 to 10,000 rows" in err and not (tmp_path / "c.xlsx").exists()


def test_probability_check_bound_in_another_unit(plan_file):
    for check, needle in [("check p95(cost) <= 3 ms", "`3 ms`"), ("check P(cost < 2 USD) >= 2 USD", "`2 USD`"),
                          ("check mean(cost) ~= 1.5 USD", "compares a statistic with a bound")]:
        plan = load(plan_file, f"unit USD\ncost = 1 USD to 2 USD\n{check}\n")
        with pytest.raises(PlanError) as info:
            simulate.run_probability_checks(plan)
        assert needle in info.value.message and info.value.span is not None


def test_planner_check_refuses_a_meaningless_probability_check(plan_file, cli):
    code, out, err = cli("check", str(plan_file("unit USD\ncost = 1 USD to 2 USD\ncheck p95(cost) <= 3 ms\n")))
    assert code == 2 and "error[unit]" in err and "^" in err


# ---- declared correlation ------------------------------------------------------------

CORRELATED = """\
a = 10 to 20
b = uniform(0, 1)
c = normal(5, 1)
correlate(a, b, 0.8)
correlate(b, c, -50%)
s = a + b + c
"""


def _spearman(sim, x, y):
    return float(np.corrcoef(simulate._ranks(sim.column(x)), simulate._ranks(sim.column(y)))[0, 1])


def test_correlate_gives_the_declared_rank_correlation(plan_file):
    # a Gaussian copula with normals correlated 2 sin(pi rho / 6) has Spearman's rho exactly rho
    # (Pearson 1907); over 100,000 samples the sample rank correlation's error is about
    # (1 - rho^2) / sqrt(n) < 0.003
    sim = _stats(plan_file, CORRELATED, samples=100_000)
    assert _spearman(sim, "a", "b") == pytest.approx(0.8, abs=0.01)
    assert _spearman(sim, "b", "c") == pytest.approx(-0.5, abs=0.01)
    # a and c are not declared: the factor gives the normals 0 correlation, so independent
    assert abs(_spearman(sim, "a", "c")) < 0.01
    # each marginal is as declared: the range's ends are P5 and P95, the uniform's mean 1/2 and
    # sd 1/sqrt(12), the normal's mean 5
    p5, p95 = np.percentile(sim.column("a"), [5, 95])
    assert p5 == pytest.approx(10, rel=0.01) and p95 == pytest.approx(20, rel=0.01)
    b = sim.column("b")
    assert 0 < b.min() and b.max() < 1
    assert b.mean() == pytest.approx(0.5, abs=0.005) and b.std() == pytest.approx(1 / math.sqrt(12), abs=0.005)
    assert sim.column("c").mean() == pytest.approx(5, abs=0.02)


def test_correlation_of_one_moves_inputs_together(plan_file):
    sim = _stats(plan_file, "a = 10 to 20\nb = 1 to 2\ncorrelate(a, b, 1)\ns = a / b\n")
    # a rank correlation of 1 makes b a rising function of a: both at the same quantile, a / b = 10
    assert np.allclose(sim.column("s"), 10, rtol=1e-12)


def test_correlation_keeps_independent_inputs_as_they_were(plan_file):
    plain = _stats(plan_file, "a = 10 to 20\nb = uniform(0, 1)\nd = uniform(0, 1)\ns = a + b + d\n")
    corr = _stats(plan_file, "a = 10 to 20\nb = uniform(0, 1)\nd = uniform(0, 1)\ncorrelate(a, b, 0.5)\n"
                             "s = a + b + d\n")
    # the first input of the copula keeps its own score, and an input in no correlation its samples
    assert np.array_equal(plain.column("a"), corr.column("a"))
    assert np.array_equal(plain.column("d"), corr.column("d"))
    assert not np.array_equal(plain.column("b"), corr.column("b"))


@pytest.mark.parametrize("line,needle,column", [
    ("correlate(a, b, 1.5)", "runs from -1 to 1", 17),
    ("correlate(a, b, -101%)", "runs from -1 to 1", 17),
    ("correlate(a, b, 2 ms)", "a plain number from -1 to 1", 17),
    ("correlate(a, s, 0.5)", "`s` is not an uncertain input", 14),
    ("correlate(k, a, 0.5)", "`k` is not an uncertain input", 11),
    ("correlate(a, a, 0.5)", "correlated with itself", 14),
    ("correlate(a, q, 0.5)", "unknown name `q`", 14),
    ("correlate(a, b, 0.5)\ncorrelate(b, a, 0.2)", "correlated twice", 1),
    ("correlate(a, b, 0.9)\ncorrelate(b, c, 0.9)", "not positive semi-definite", 1),
    ("correlate(a, b, 0.9)\ncorrelate(b, c, 0.9)\ncorrelate(a, c, -0.5)", "not positive semi-definite", 1),
])
def test_bad_correlations_are_located(plan_file, line, needle, column):
    text = "a = 10 to 20\nb = uniform(0, 1)\nc = normal(5, 1)\nk = 3\ns = a + b + k\n" + line + "\n"
    with pytest.raises(PlanError) as info:
        planner.load(plan_file(text))
    err = flatten(info.value)[0]
    assert needle in err.message
    assert err.span.line == text.count("\n") and err.span.column == column
    if err.family == "distribution":
        assert err.hint


def test_a_correlation_that_can_hold_loads(plan_file):
    # 0.9 and 0.9 need a-c above 2 * 0.9^2 - 1 in the normals: 0.7 rank correlation is enough
    plan = load(plan_file, "a = 10 to 20\nb = uniform(0, 1)\nc = normal(5, 1)\ncorrelate(a, b, 0.9)\n"
                           "correlate(b, c, 0.9)\ncorrelate(a, c, 0.7)\ns = a + b + c\n")
    (sim,) = simulate.run(plan, [None], 20_000, 0)
    assert _spearman(sim, "a", "c") == pytest.approx(0.7, abs=0.02)


def test_nothing_is_written_when_a_correlation_is_bad(plan_file, cli, tmp_path):
    path = plan_file("a = 10 to 20\nb = 1 to 2\ncorrelate(a, b, 3)\ns = a + b\n")
    out = tmp_path / "out.xlsx"
    code, _, err = cli("export", path, "-o", str(out))
    assert code == 2 and "runs from -1 to 1" in err and not out.exists()


# ---- pert and discrete -------------------------------------------------------------

def test_pert_has_its_mean_and_sd(plan_file):
    # PERT(6, 9, 18): Beta(1 + 4*3/12, 1 + 4*9/12) = Beta(2, 4) on [6, 18]; mean (6 + 4*9 + 18) / 6 = 10, sd sqrt((10-6)(18-10)/7)
    sim = _stats(plan_file, "x = pert(6, 9, 18)\ny = 2 * x\n", samples=20_000)
    x = sim.column("x")
    assert 6 < x.min() and x.max() < 18
    assert x.mean() == pytest.approx(10, abs=0.01)
    assert x.std() == pytest.approx(math.sqrt(32 / 7), rel=0.01)
    # the median of Beta(2, 4) solves (1 - m)^4 (1 + 4m) = 1/2 (its CDF is 1 - (1 - x)^4 (1 + 4x)):
    # m = 0.3138101704557 (bisection on that polynomial)
    assert np.median(x) == pytest.approx(6 + 12 * 0.3138101704557, abs=0.01)
    # the point value is that median, found as the plan is read
    assert float(sim.plan.model.quantities["x"].value) == pytest.approx(6 + 12 * 0.3138101704557, rel=1e-9)


def test_beta_inverse_inverts_the_incomplete_beta():
    # Beta(1, 5): I_x = 1 - (1 - x)^5, so x = 1 - (1 - u)^(1/5) exactly
    # (to 1 - 1e-6: past it a double's u holds too few digits of 1 - u for 1e-12 in x)
    u = np.linspace(1e-9, 1 - 1e-6, 5001)
    assert np.allclose(sampling.beta_inverse(1.0, 5.0, u), -np.expm1(np.log1p(-u) / 5), rtol=1e-12, atol=1e-15)
    # Beta(2, 2): I_x = 3x^2 - 2x^3
    x = sampling.beta_inverse(2.0, 2.0, u)
    assert np.allclose(3 * x ** 2 - 2 * x ** 3, u, rtol=1e-12, atol=1e-15)


def test_discrete_takes_its_values_with_their_weights(plan_file):
    sim = _stats(plan_file, "g = discrete(8, 30%, 32, 20%, 16, 50%) where integer\ny = 2 * g\n", samples=10_000)
    g = sim.column("g")
    # a Latin hypercube puts exactly 3,000, 5,000 and 2,000 of 10,000 samples on the values
    assert [int(np.sum(g == v)) for v in (8, 16, 32)] == [3000, 5000, 2000]
    assert float(sim.plan.model.quantities["g"].value) == 16  # the median: 30% + 50% reaches one half at 16


@pytest.mark.parametrize("text,needle,column", [
    ("x = pert(18, 9, 6)", "needs low below high", 5),
    ("x = pert(6, 19, 18)", "mode must lie between", 13),
    ("x = discrete(8, 30%, 16)", "the last value has none", 22),
    ("x = discrete(8, 100%)", "two or more values", 5),
    ("x = discrete(8, 30%, 16, 60%)", "add to 0.9, not 100%", 5),
    ("x = discrete(8, 0%, 16, 100%)", "must be above 0", 17),
    ("x = discrete(8, 30%, 8, 70%)", "listed twice", 22),
    ("x = discrete(8, 3 ms, 16, 70%)", "is a share", 17),
    ("x = discrete(8 ms, 30%, 16 s, 70%)", "written in one unit", 25),
])
def test_bad_pert_and_discrete_are_located(plan_file, text, needle, column):
    with pytest.raises(PlanError) as info:
        planner.load(plan_file(text + "\n"))
    err = flatten(info.value)[0]
    assert err.family == "distribution"
    assert needle in err.message
    assert err.span.line == 1 and err.span.column == column
    assert err.hint


# ---- solving at a probability ------------------------------------------------------------

SOLVE_PLAN = """\
unit USD
r = 3 USD ~ 2 USD to 4 USD
c = normal(100 USD, 10 USD)
h = 40
cheaper = c < r * h
"""


def _p_cheaper(h):
    # P(c < r h) = E_r[Phi((r h - 100) / 10)], r lognormal with P5 = 2 and P95 = 4: a quadrature over
    # the lognormal's normal score (midpoints of 4,000 slices of probability), by hand
    nd = statistics.NormalDist()
    mu, sigma = (math.log(2) + math.log(4)) / 2, (math.log(4) - math.log(2)) / (2 * 1.6448536269514722)
    n = 4000
    return sum(nd.cdf((math.exp(mu + sigma * nd.inv_cdf((i + 0.5) / n)) * h - 100) / 10) for i in range(n)) / n


def test_solve_at_a_probability(plan_file, cli):
    plan = load(plan_file, SOLVE_PLAN)
    from planner.language.lower import lower_expr
    from planner.language.source import Source

    answer = simulate.solve_probability(plan, "h", lower_expr(Source("t", "P(cheaper) >= 80%")), samples=20_000)
    lo, hi = 30.0, 80.0  # the h with exactly 80% by the quadrature, bisected
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _p_cheaper(mid) < 0.8 else (lo, mid)
    assert answer.value == pytest.approx(lo, rel=0.01)
    # the answer meets the condition, the value just past it does not: the edge of a step function
    assert answer.result.passed and answer.result.lhs >= 80
    assert abs(answer.value - answer.other) <= 1e-9 * answer.value
    code, out, _ = cli("simulate", plan_file(SOLVE_PLAN), "--solve", "h where P(cheaper) >= 80%")
    assert code == 0 and "h = 42." in out and "P(cheaper) = 80.0" in out
    # both edges to the digits that tell them apart (the same six digits twice before)
    at = out.split("h = ")[1].split()[0]
    past = out.split("just past it, ")[1].split()[0].rstrip(",")
    assert at != past and at[:5] == past[:5], out


def test_solve_at_a_probability_keeps_to_the_inputs_bounds_and_whole_numbers(plan_file, cli):
    """An integer input is searched over its whole numbers, a bounded one inside its bounds (it tried 2.5
    hires and a 130% share, and failed with a constraint error the user never typed)."""
    text = SOLVE_PLAN.replace("h = 40", "h = 40 where integer, 10 <= h <= 60")
    plan = load(plan_file, text)
    from planner.language.lower import lower_expr
    from planner.language.source import Source

    answer = simulate.solve_probability(plan, "h", lower_expr(Source("t", "P(cheaper) >= 80%")), samples=20_000)
    edge = next(h for h in range(10, 61) if _p_cheaper(h) >= 0.8)  # the smallest whole h, by the quadrature
    assert answer.value == edge and answer.other == edge - 1
    code, out, _ = cli("simulate", plan_file(text), "--solve", "h where P(cheaper) >= 80%")
    assert code == 0 and f"h = {edge}:" in out
    share = SOLVE_PLAN.replace("h = 40", "h = 40\ns = 50% where 0% <= s < 100%\nok = s * h > c * 1 / 1 USD")
    code, _, err = cli("simulate", plan_file(share), "--solve", "s where P(ok) >= 99.9%")
    assert code == 2 and "within `0% <= s < 100%`" in err and "constraint violated" not in err


def test_solve_at_a_probability_refuses_what_it_cannot_mean(plan_file, cli):
    path = plan_file(SOLVE_PLAN)
    code, _, err = cli("simulate", path, "--solve", "cheaper where P(cheaper) >= 80%")
    assert code == 2 and "not an input" in err
    code, _, err = cli("simulate", path, "--solve", "h P(cheaper) >= 80%")
    assert code == 2 and "INPUT where CONDITION" in err
    code, _, err = cli("simulate", path, "--solve", "h where P(cheaper) >= 120%")
    assert code == 2 and "`120%` is not a probability" in err  # at once (it bisected, then said "for every value")
    code, _, err = cli("simulate", path, "--solve", "h where P(cheaper) >= 0%")
    assert code == 2 and "for every value" in err  # holds everywhere: no edge to find


NEVER_PLAN = """\
unit USD
price   = 1000 USD
saving  = 50 USD/month ~ uniform(-10 USD/month, 110 USD/month)
horizon = 36 month where horizon <= 120 month
cum(m)  = saving * m
payback = first(m for m in 1 month..horizon where cum(m) >= price) -> month
early   = payback <= 24 month
late    = payback > 24 month
check P(early) >= 50%
check P(late) >= 10%
check p50(payback) <= 30 month
"""


def test_a_never_in_some_samples_is_said_not_quietly_false(plan_file, cli):
    # payback is within 36 months when saving >= 1000/36 = 27.78 USD/month: P = (110 - 27.78) / 120 = 68.52%,
    # never in 31.48%. late (payback > 24 months) is saving < 1000/24 = 41.67: (41.67 - 27.78) / 120 = 11.57%;
    # early is (110 - 41.67) / 120 = 56.94%. early or late is 68.52%, not 100%: never is neither, and says so.
    path = plan_file(NEVER_PLAN)
    plan = planner.load(path)
    sim = simulate.run(plan, [None], 10_000, 0, "lhs")[0]
    assert sim.never("payback") == pytest.approx(1 - (110 - 1000 / 36) / 120, abs=2e-3)
    late = plan.model.quantities["late"].definition.expr
    assert sim.probability(late) == pytest.approx((1000 / 24 - 1000 / 36) / 120, abs=2e-3)
    assert "`payback` is never in 31.48% of samples" in sim.never_note(late)
    assert sim.never_note(plan.model.quantities["saving"].definition.expr) == ""
    code, out, err = cli("--no-cache", "check", path, "-v")
    assert code == 0, out + err
    assert out.count("note: `payback` is never in 31.48% of samples") == 3
    # the median of payback is over the samples with a value (it was nan, and the check failed unexplained):
    # saving uniform on 27.78..110, its median 68.89 USD/month, ceil(1000 / 68.89) = 15 months
    assert "p50(payback) <= 30 month = 15" in out
    code, out, err = cli("--no-cache", "simulate", path, "-p", "early or late")
    assert "P(early or late) = 68.5" in out and "counts as not holding" in out


def test_the_table_writes_figures_as_every_table_does(plan_file, cli):
    """A new user's simulate printed the sd of a constant as 3.55289e-15, money as 1.97469e+06 USD and
    nan for a first(...) that never holds: one style per quantity, as eval's table (digits grouped,
    money to cents, float noise 0), and "never"."""
    path = plan_file("unit USD\nprice = 1000000 USD to 3000000 USD\nratio = (price * 0.1) / price * 30\n"
                     "cost = price * 1\nlate = first(m for m in 1..12 where m * 1 USD > price)\n")
    code, out, err = cli("simulate", str(path), "--samples", "500", "--seed", "1")
    assert code == 0, err
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[3:] if line and line[0].isalpha()}
    assert rows["ratio"][:3] == ["3", "3", "0"]  # point, mean, sd: no 1.4e-16 residue
    assert rows["cost"][0] == "1,732,050.81" and all("e+" not in t for t in rows["cost"])
    assert rows["late"][:3] == ["never", "never", "never"]
    assert "nan" not in out


def test_a_quantity_using_a_first_that_is_never_in_some_samples_says_so(plan_file, cli):
    # price 100..400 USD at 10 USD a month over 24 months: a price past 240 USD never pays back; `years`
    # has no value there for that reason (as eval says for one sample), not a division by zero
    path = plan_file("unit USD\nprice = 100 USD to 400 USD\nsaving = 10 USD/month\n"
                     "horizon = 24 month where horizon <= 240 month\n"
                     "payback = first(m for m in 1 month..horizon where saving * m >= price) -> month\n"
                     "years = payback / (12 month)\n", "never.plan")
    code, out, err = cli("simulate", path, "--samples", "200")
    assert code == 2, out + err
    assert "never.plan:6:1: error[never]: `years` has no value in " in err, err
    assert "it uses `payback` (never in " in err and "divides by zero" not in err, err
    assert "`saving * m >= price` holds for no `m` there" in err and "Traceback" not in err
    # the chunked run (--dask) says the same, over the same samples as the in-memory --method random
    pytest.importorskip("dask")
    memory = cli("simulate", path, "--samples", "200", "--method", "random")[2]
    chunked = cli("simulate", path, "--samples", "200", "--dask")[2]
    assert "error[never]: `years` has no value in " in chunked and chunked == memory, (chunked, memory)


def _wide_plan(plan_file, quantities=81):
    return plan_file("x0 = 1 to 2\n" + "".join(f"q{i} = x0 * {i + 1}\n" for i in range(quantities)), "wide.plan")


def test_a_simulation_past_the_memory_budget_is_refused_before_anything_is_drawn(plan_file, cli, monkeypatch):
    # 10,000,000 samples of 82 quantities: 8 bytes x 10^7 x (2 columns for the input + 81 + 1) = 6.3 GiB
    from planner.questions import sampling

    def no_draw(*args, **kwargs):
        raise AssertionError("drew samples before refusing")

    monkeypatch.setattr(sampling, "uniforms", no_draw)
    path = _wide_plan(plan_file)
    code, out, err = cli("simulate", path, "--samples", "10000000")
    assert code == 2, out + err
    assert ("error[limit]: 10,000,000 samples of 1 uncertain input and 81 quantities would hold 6.3 GB in memory "
            "(the limit is 2.0 GB)") in err, err
    # 2 GiB / (84 columns x 8 bytes) = 3,195,660 samples, rounded down to two digits
    assert "--samples 3100000 fits" in err and "--dask" in err and "Traceback" not in err


def test_the_suggested_sample_count_fits_the_budget(plan_file, cli, monkeypatch):
    monkeypatch.setattr(simulate, "MAX_SAMPLE_BYTES", 84 * 8 * 1000)  # room for 1,000 samples of wide.plan
    path = _wide_plan(plan_file)
    code, out, err = cli("simulate", path, "--samples", "1001")
    assert code == 2 and "--samples 1000 fits" in err, err
    code, out, err = cli("simulate", path, "--samples", "1000")
    assert code == 0, err
    code, out, err = cli("simulate", path, "--samples", "1000", "--show", "q0")  # fewer quantities: more samples
    assert code == 0, err
    code, out, err = cli("simulate", path, "--samples", "20000", "--show", "q0")
    assert code == 0, err


@pytest.mark.parametrize("method, said", [("lhs", "Latin hypercube"), ("random", "plain random"),
                                          ("counter", "counter-based")])
def test_the_heading_names_the_method_used(plan_file, cli, method, said):
    """--method counter was headed 'plain random'."""
    code, out, err = cli("simulate", plan_file("x = 1 to 2\ny = x * 2\n"), "--samples", "100",
                         "--method", method)
    assert code == 0, err
    assert out.splitlines()[0].endswith(said) or said in out.splitlines()[0], out


def test_a_quantity_no_probability_check_uses_does_not_stop_the_checks(plan_file, cli):
    """A new user's plan widened one range, and `project_irr` (used by no check) had no rate in some
    samples: every check, the report and the build stopped. The checks simulate only what they read."""
    path = plan_file("x = 2 ~ uniform(1, 3)\ny = x * 2\nodd = sqrt(x - 1.5)\n"
                     "check P(y > 3) >= 50%\ncheck y == 4\n")
    code, out, err = cli("check", path)
    assert code == 0, out + err
    assert "2 passed, 0 failed" in out, out
    code, out, err = cli("simulate", path, "--show", "odd")
    assert code == 2 and "`odd` has no finite value" in err  # asked for, it is still said


def test_a_probability_written_with_its_p_says_to_give_the_condition_alone(plan_file, cli):
    # the docs and the output write `P(min(cash) < 0 USD)`; typed so, it said only "expected a condition"
    path = plan_file("util = 40% to 70%\nrate = util * 2\n")
    code, out, err = cli("simulate", str(path), "-p", "P(rate > 100%)")
    assert code == 2 and "Traceback" not in err
    assert "help: give the condition alone: `-p 'rate > 100%'`" in err, err


def test_a_count_or_a_month_that_is_whole_in_every_sample_is_written_whole(capsys):
    """`planner simulate` wrote `purchases` (a count of months) as 29.00 and `runway` as 27.0000 month: a
    figure whole in every sample has whole point and percentiles (a percentile between two whole samples is
    rounded to one), its mean and sd to three significant digits. The plan says purchases == 29, runway == 27
    month; growth, a rate, keeps its digits."""
    from pathlib import Path

    from planner.cli import main

    plan = Path(__file__).parent / "plans" / "series_gpu_cluster.plan"
    assert main(["simulate", str(plan), "--samples", "200", "--show", "runway,purchases,growth"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line.strip()}
    point, mean, sd, p5, p50, p95 = rows["runway"][1:7]
    assert point == "27" and rows["runway"][7] == "month"
    assert all(p.isdigit() for p in (p5, p50, p95)), rows["runway"]
    assert re.fullmatch(r"\d\d\.\d", mean) and re.fullmatch(r"\d+\.\d+", sd), rows["runway"]
    assert rows["purchases"][1] == "29" and all(p.isdigit() for p in rows["purchases"][4:7]), rows["purchases"]
    assert rows["growth"][1] == "5.00000", rows["growth"]
