"""The bad input of uncertain inputs, one row each: a located error with a hint, exit 2, nothing written.

Each plan goes through `planner build` (the workbook, the report with its simulation, the
probability checks) into a folder that must not appear; the command-line limits go through the
command that takes them."""

import pytest

import planner
from planner.language.errors import PlanError
from planner.questions import simulate

CASES = {
    "a uniform with low >= high": ("x = uniform(3, 2)\ny = x * 2\n", 1, "needs low below high"),
    "a range with its ends reversed": ("x = 70% to 40%\n", 1, "is not below"),
    "a lognormal range from 0": ("x = 0% to 40%\n", 1, "low end must be above 0"),
    "a probability above 100%": ("x = 1 to 2\ncheck P(x > 1) >= 120%\n", 2, "is not a probability"),
    "a probability below 0%": ("x = 1 to 2\ncheck P(x > 1) >= -5%\n", 2, "is not a probability"),
    "a correlation outside -1..1": ("a = 1 to 2\nb = 1 to 3\ncorrelate(a, b, 1.5)\n", 3, "from -1 to 1"),
    "a set of correlations that cannot hold": (
        "a = 1 to 2\nb = 1 to 3\nc = 2 to 4\ncorrelate(a, b, 0.9)\ncorrelate(b, c, 0.9)\ncorrelate(a, c, -0.9)\n",
        None, "positive semi-definite"),
    "a percentile of a quantity with no uncertain input": (
        "x = 1 to 2\ny = 3\ncheck p95(y) <= 4\n", 3, "depends on no uncertain input"),
    "an uncertain exponent of a quantity with a unit": (
        "k = 2 s\nx = 3 ~ uniform(1, 4)\nz = k ^ x\n", 3, "constant power"),
    "an uncertain end of a range": (
        "n = 5 ~ uniform(3, 8) where 1 <= n <= 10\ns = sum(m for m in 1..n)\n", 2, "number of terms would change"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_uncertain_input_is_located_and_writes_nothing(name, plan_file, cli, tmp_path):
    text, line, needle = CASES[name]
    path = plan_file(text, "bad.plan")
    out = tmp_path / "out"
    code, stdout, err = cli("build", path, "-o", out)
    assert code == 2, (stdout, err)
    assert needle in err, err
    assert "Traceback" not in err and "help:" in err and "^" in err
    if line is not None:
        assert f"bad.plan:{line}:" in err
    else:
        assert "bad.plan:" in err
    assert not out.exists()


def test_sample_and_trial_counts_past_their_limits_are_refused(plan_file, cli, tmp_path, capsys):
    path = plan_file("x = 1 to 2\ny = x * 2\n")
    with pytest.raises(SystemExit) as info:  # argparse's own refusal, with the usage
        cli("simulate", path, "--samples", "0")
    assert info.value.code == 2 and "at least 1" in capsys.readouterr().err
    code, _, err = cli("simulate", path, "--samples", str(simulate.MAX_SAMPLES + 1))
    assert code == 2 and "10,000,000" in err and "help:" in err and "Traceback" not in err
    book = tmp_path / "book.xlsx"
    with pytest.raises(SystemExit) as info:
        cli("export", path, "--trials", "0", "-o", book)
    assert info.value.code == 2 and "at least 1" in capsys.readouterr().err
    code, _, err = cli("export", path, "--trials", "10001", "-o", book)
    assert code == 2 and "10,000" in err and "Traceback" not in err, err
    assert not book.exists()


def test_a_solve_at_a_probability_past_100_percent_is_refused_before_sampling(plan_file, cli):
    # no value of x can make a share of trials 120%: said at once, not after a bisection that never ends
    path = plan_file("x = 5 where x > 0\ny = 2 ~ uniform(1, 3)\nz = x * y\n")
    code, out, err = cli("simulate", path, "--solve", "x where P(z > 10) >= 120%")
    assert code == 2, out + err
    assert "`120%` is not a probability" in err and "help:" in err and "Traceback" not in err


# A parameter beyond double precision: the one located error of any literal (planner.language.literals),
# from eval and from simulate alike, at the parameter (issue 40).
OUT_OF_RANGE = {
    "normal(1e400, 1)": ("x = normal(1e400, 1)\n", 12, "1e400 is too large"),
    "1 to 1e400": ("x = 1 to 1e400\n", 10, "1e400 is too large"),
    "pert(0, 1, 1e400)": ("x = pert(0, 1, 1e400)\n", 16, "1e400 is too large"),
    "uniform(0, 1e400)": ("x = uniform(0, 1e400)\n", 16, "1e400 is too large"),
    "discrete(1e400, 50%, 2, 50%)": ("x = discrete(1e400, 50%, 2, 50%)\n", 14, "1e400 is too large"),
    "1e-320 to 1": ("x = 1e-320 to 1\n", 5, "1e-320 is too small"),
    "normal(0, 1e-320)": ("x = normal(0, 1e-320)\n", 15, "1e-320 is too small"),
    "uniform(1e299 GB, 2e299 GB)": ("x = uniform(1e299 GB, 2e299 GB)\n", 13, "1e299 GB is too large"),
    "a value of discrete of 1e-320": ("x = discrete(1, 50%, 1e-320, 50%)\n", 22, "1e-320 is too small"),
    "a tiny sd in a big unit": ("x = 1 TB ~ normal(1 TB, 1e-320 TB)\n", 25, "1e-320 TB is too small"),
}


@pytest.mark.parametrize("command", ["eval", "simulate"])
@pytest.mark.parametrize("name", list(OUT_OF_RANGE))
def test_a_parameter_beyond_double_precision_is_located_by_eval_and_simulate(name, command, plan_file, cli):
    text, column, needle = OUT_OF_RANGE[name]
    path = plan_file(text + "y = x * 2\n", "bad.plan")
    code, out, err = cli(command, path, *(["--samples", "50"] if command == "simulate" else []))
    assert code == 2, (out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert f"bad.plan:1:{column}: error[evaluation]: {needle} for double-precision arithmetic" in err, err
    assert "help: numbers (in base units B, s) must lie between 1e-300 and 1e300" in err


@pytest.mark.parametrize("text", [
    "x = 1e-305 GB to 1e-295 GB\n",      # tiny in the unit written, fine in bytes
    "x = uniform(1e-310 TB, 1e-300 TB)\n",  # under 1e-300 as written, 1e-298 B and more in bytes
    "x = lognormal(1e-300, 1e300)\n",     # an sd 1e600 times the mean
    "x = 1e-300 to 1e300\n",
    "x = pert(-1e300, 1e300, 1e300)\n",
    "x = triangular(-1e300, -1e300, 1e300)\n",
])
def test_parameters_inside_the_range_are_usable_whatever_their_spread(text, plan_file, cli):
    path = plan_file(text, "ok.plan")
    for command in ("eval", "simulate"):
        code, out, err = cli(command, path, *(["--samples", "50"] if command == "simulate" else []))
        assert "Traceback" not in err and "internal error" not in err, err
        assert code == 0, (command, out, err)
        assert "nan" not in out, out


@pytest.mark.parametrize("method", ["lhs", "random", "counter"])
def test_a_negative_seed_is_refused_alike_by_every_sampler(method, plan_file, cli, capsys):
    path = plan_file("x = 1 to 2\ny = x * 2\n")
    with pytest.raises(SystemExit) as info:  # argparse's own refusal, with the usage
        cli("simulate", path, "--seed", "-1", "--method", method)
    err = capsys.readouterr().err
    assert info.value.code == 2 and "--seed: expected a whole number of at least 0, got '-1'" in err, err
    with pytest.raises(PlanError, match="the seed must be a whole number of at least 0"):  # and from Python
        simulate.run(planner.load(path), seed=-1, method=method, samples=10)


@pytest.mark.parametrize("option, text, needle", [
    ("--samples", "1e400", "1e400 is too large for double-precision arithmetic"),
    ("--samples", "nan", "expected a whole number of at least 1, got 'nan'"),
    ("--samples", "2.5", "expected a whole number of at least 1, got '2.5'"),
    ("--seed", "1e99999", "1e99999 is too large for double-precision arithmetic"),
    ("--seed", "inf", "expected a whole number of at least 0, got 'inf'"),
])
def test_sample_counts_and_seeds_pass_the_literal_rule(option, text, needle, plan_file, cli, capsys):
    path = plan_file("x = 1 to 2\n")
    with pytest.raises(SystemExit) as info:
        cli("simulate", path, option, text)
    err = capsys.readouterr().err
    assert info.value.code == 2 and needle in err and "Traceback" not in err, err


def test_sample_counts_and_seeds_may_be_written_as_plan_numbers_are(plan_file, cli):
    path = plan_file("x = 1 to 2\n")
    assert cli("simulate", path, "--samples", "2e3", "--seed", "1e3", "--format", "json")[1] == \
        cli("simulate", path, "--samples", "2000", "--seed", "1000", "--format", "json")[1]


# What a distribution may be, given its input's constraints: one check as the plan loads, so eval refuses
# what simulate refuses (eval used to print the point value of each of these).
AGAINST_CONSTRAINTS = {
    "an integer input that is uncertain": ("x = 1 to 2 where integer\n", "1:5: error[distribution]",
                                           "`x` is an integer, and an uncertain input takes any value"),
    "a uniform past its constraint": ("x = 2 ~ uniform(1, 4) where x <= 3\n", "1:29: error[constraint]",
                                      "`x` = uniform(1, 4) reaches 4, outside what its constraint allows"),
    "a normal mostly outside": ("x = 2 ~ normal(0, 1) where x >= 0\n", "1:28: error[constraint]",
                                "`x` = normal(0, 1) puts 50.0% of its values outside what its constraint allows"),
    "a discrete value past its constraint": ("x = discrete(8, 30%, 16, 70%) where x <= 10\n",
                                             "1:37: error[constraint]", "reaches 16, outside"),
}


@pytest.mark.parametrize("command", ["eval", "simulate"])
@pytest.mark.parametrize("name", list(AGAINST_CONSTRAINTS))
def test_eval_and_simulate_refuse_a_distribution_its_constraints_do_not_allow(name, command, plan_file, cli):
    text, where, needle = AGAINST_CONSTRAINTS[name]
    path = plan_file(text + "y = x * 2\n", "bad.plan")
    code, out, err = cli(command, path, *(["--samples", "50"] if command == "simulate" else []))
    assert code == 2, (out, err)
    assert f"bad.plan:{where}: " in err and needle in err and "help:" in err and "Traceback" not in err, err


def test_a_discrete_integer_input_and_a_truncated_range_still_load(plan_file, cli):
    path = plan_file("g = discrete(8, 30%, 16, 70%) where integer, g <= 16\nu = 40% to 70% where 0 <= u <= 1\n")
    for command in ("eval", "simulate"):
        code, out, err = cli(command, path)
        assert code == 0, err
