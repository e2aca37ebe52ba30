"""The bad input of uncertain inputs, one row each: a located error with a hint, exit 2, nothing written.

Each plan goes through `planner build` (the workbook, the report with its simulation, the
probability checks) into a folder that must not appear; the command-line limits go through the
command that takes them."""

import pytest

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
