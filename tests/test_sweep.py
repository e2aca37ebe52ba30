"""Sweeps and sweep values: exact expansion, located errors, grids, per-point issues, the CLI.

Golden numbers come from the article (speedups 1.0179, 1.6469, 2.4011, 2.9251
at gamma = 4, c = 0.1) or from arithmetic written out in the test.
"""

import csv
import io
import json
from fractions import Fraction as F

import numpy as np
import pytest
from conftest import TOKEN_COST

import planner
from planner.language.errors import PlanError
from planner.outputs.terminal import sweep_table
from planner.questions import sweep
from planner.questions.ranges import expand, parse_assignment

UNITS_PLAN = """
mem   = 4 GB  where mem > 0 GB
rate  = 3 TB/s
count = 8     where integer, count >= 1
x     = 0.5   where 0 <= x < 1
ratio = x / (1 - x)
per_gb = mem / 1 GB * count
"""

# text -> exact values in base units
VALUES = [
    ("x=0.3,0.6,0.8", [F(3, 10), F(3, 5), F(4, 5)]),
    ("x=[0.3, 0.6]", [F(3, 10), F(3, 5)]),
    ("x=0.5", [F(1, 2)]),
    ("count=1..8", [F(i) for i in range(1, 9)]),
    ("count=8..2 step -3", [F(8), F(5), F(2)]),
    ("count=1..1024 times 2", [F(2) ** i for i in range(11)]),
    ("count=1..1000 times 10", [F(1), F(10), F(100), F(1000)]),
    ("x=0..1 step 0.1", [F(i, 10) for i in range(11)]),
    ("x=0..1 count 5", [F(0), F(1, 4), F(1, 2), F(3, 4), F(1)]),
    ("mem=1 GB..4 GB", [F(i * 10**9) for i in range(1, 5)]),  # steps by the written unit
    ("mem=1 GB..8 GB step 2 GB", [F(i * 10**9) for i in (1, 3, 5, 7)]),
    ("mem=512 MB..2 GB times 2", [F(512 * 10**6), F(1024 * 10**6)]),
    ("rate=2 TB/s..4 TB/s count 5", [F(2 * 10**12), F(25 * 10**11), F(3 * 10**12), F(35 * 10**11), F(4 * 10**12)]),
]


@pytest.fixture(scope="module")
def units_plan():
    return planner.loads(UNITS_PLAN, "units.plan")


@pytest.mark.parametrize("text,expected", VALUES)
def test_values_expand_exactly_in_base_units(units_plan, text, expected):
    name, values, span = parse_assignment(units_plan, text)
    points = expand(units_plan, name, values, span)
    assert points.exact_values() == expected
    assert list(points.array()) == [float(v) for v in expected]


def test_float_array_is_correctly_rounded():
    """0..1 step 0.1 in floats: each point is the nearest double of i/10 (no accumulated error)."""
    plan = planner.loads(UNITS_PLAN)
    name, values, span = parse_assignment(plan, "x=0..1 step 0.1")
    assert list(expand(plan, name, values, span).array()) == [i / 10 for i in range(11)]


def test_geometric_range_over_a_ratio_beyond_floats(units_plan):
    """1e-300..1e300 times 1e10: the ratio 1e600 overflows a float (was an OverflowError)."""
    name, values, span = parse_assignment(units_plan, "x=1e-300..1e300 times 1e10")
    points = expand(units_plan, name, values, span)
    assert points.count == 61
    assert points.exact(60) == F(10) ** 300


# text -> (family, message fragment, column of the caret in the values text)
BAD_VALUES = [
    ("count=8..1", "range", "empty range", 1),
    ("count=1..8 step -1", "range", "step of the wrong sign", 11),
    ("count=8..1 step 2", "range", "step of the wrong sign", 11),
    ("count=1..8 step 0", "range", "step of zero", 11),
    ("count=1..8 times 1", "range", "factor above 1", 12),
    ("count=1..8 times 0.5", "range", "factor above 1", 12),
    ("count=0..8 times 2", "range", "must start above zero", 1),
    ("count=1..8 count 1", "range", "at least 2", 12),
    ("count=1..8 count 2.5", "range", "at least 2", 12),
    ("count=1..1e9", "range", "too many points", 1),
    ("x=1 GB..2 GB", "unit", "plain number", 1),
    ("mem=1..2", "unit", "is in GB", 1),
    ("count=1..8 times 2 GB", "unit", "plain number", 12),
    ("x=count..2", "type", "constants", 1),
]


@pytest.mark.parametrize("text,family,fragment,column", BAD_VALUES)
def test_bad_values_are_located_errors(units_plan, text, family, fragment, column):
    name, values, span = parse_assignment(units_plan, text)
    with pytest.raises(PlanError) as info:
        expand(units_plan, name, values, span)
    err = info.value
    assert err.family == family
    assert fragment in err.message
    assert err.span is not None and err.span.column == column
    assert "^" in str(err)


@pytest.mark.parametrize("text,family,fragment", [
    ("ratio=1..2", "override", "formula, not an input"),
    ("xx=1..2", "unknown-name", "unknown input `xx`"),
    ("x", "usage", "name=VALUES"),
    ("x=", "usage", "no values"),
    ("x=1..", "syntax", "unexpected"),
])
def test_bad_assignments(units_plan, text, family, fragment):
    with pytest.raises(PlanError) as info:
        name, values, span = parse_assignment(units_plan, text)
        expand(units_plan, name, values, span)
    assert info.value.family == family
    assert fragment in info.value.message


def test_unknown_input_suggests(units_plan):
    name, values, span = parse_assignment(units_plan, "cont=1..2")
    with pytest.raises(PlanError) as info:
        expand(units_plan, name, values, span)
    assert "did you mean `count`?" in str(info.value)


# ---- sweeps ---------------------------------------------------------------------

ARTICLE_SPEEDUPS = {0.3: 1.0179, 0.6: 1.6469, 0.8: 2.4011, 0.9: 2.9251}


def _axes(plan, *texts):
    return [parse_assignment(plan, t) for t in texts]


def test_alpha_sweep_matches_article(token_cost):
    r = sweep.run(token_cost, _axes(token_cost, "alpha=0.3,0.6,0.8,0.9"), ["speedup"])
    got = dict(zip(r.display("alpha"), r.display("speedup")))
    for alpha, speedup in ARTICLE_SPEEDUPS.items():
        assert got[alpha] == pytest.approx(speedup, abs=0.00005)
    assert r.issue_count == 0


def test_sweep_statement_in_the_plan(token_cost):
    stmt = token_cost.model.sweeps[0]
    (r,) = sweep.run_statement(token_cost, stmt)
    assert r.show == ["expected_tokens", "speedup"]
    assert list(r.display("speedup").round(4)) == list(ARTICLE_SPEEDUPS.values())


def test_grid_is_cartesian_first_axis_slowest(token_cost):
    r = sweep.run(token_cost, _axes(token_cost, "alpha=0.6,0.8", "gamma=1..8"), ["speedup"])
    assert r.size == 16
    assert list(r.display("alpha")) == [0.6] * 8 + [0.8] * 8
    assert list(r.display("gamma")) == list(range(1, 9)) * 2
    best = int(np.argmax(r.display("speedup")))
    assert (r.display("alpha")[best], r.display("gamma")[best]) == (0.8, 6)
    assert r.display("speedup")[best] == pytest.approx(2.4696, abs=0.00005)  # the article's best gamma


def test_sweep_per_scenario(token_cost):
    axes = _axes(token_cost, "batch=16,32,64")
    by = {s: sweep.run(token_cost, axes, ["verify_is_compute_bound", "batch_step_bound"], s)
          for s in token_cost.resolve_scenarios("all")}
    assert list(by["int4_g128"].columns["verify_is_compute_bound"]) == [False, True, True]
    assert list(by["bf16"].columns["verify_is_compute_bound"]) == [False, False, False]
    assert by["int4_g128"].display("batch_step_bound")[1] == pytest.approx(19.262, abs=0.0005)
    assert by["bf16"].display("batch_step_bound")[1] == pytest.approx(53.825, abs=0.0005)


def test_sweep_with_units(token_cost):
    r = sweep.run(token_cost, _axes(token_cost, "hbm_bandwidth=1.5 TB/s..3 TB/s count 2"), ["batch1_weight_bound"],
                  "bf16")
    # 140 GB / 1.5 TB/s = 93.333 ms, / 3 TB/s = 46.667 ms
    assert list(r.display("batch1_weight_bound")) == pytest.approx([280 / 3, 140 / 3])


def test_default_show_is_what_depends_on_the_axes(token_cost):
    r = sweep.run(token_cost, _axes(token_cost, "draft_cost=0.1,0.5"))
    assert "speedup" in r.show and "weight_bytes" not in r.show
    assert r.display("speedup")[1] == pytest.approx(1.1205, abs=0.00005)  # the article, c = 0.5


def test_points_outside_the_domain_are_reported_not_silent(token_cost):
    r = sweep.run(token_cost, _axes(token_cost, "alpha=0.8..1 step 0.1", "gamma=1..2"), ["speedup"])
    assert r.size == 6
    assert list(r.bad) == [False, False, False, False, True, True]
    kinds = {(i.index, i.quantity, i.kind) for i in r.issues}
    assert (4, "alpha", "constraint") in kinds and (4, "speedup", "not finite") in kinds
    why = next(i.reason for i in r.issues if i.kind == "not finite")
    assert "division by zero" in why and "1 - alpha" in why
    assert all(i.point["alpha"] == 1.0 for i in r.issues)
    table = sweep_table(r)
    assert "division by zero" in table and "2 of 6 points have issues" in table


def test_integer_input_swept_to_a_fraction_is_an_issue(token_cost):
    r = sweep.run(token_cost, _axes(token_cost, "gamma=1..2 step 0.5"), ["speedup"])
    assert [i.index for i in r.issues if i.kind == "integer"] == [1]


POLE_PLAN = "a = 2\nb = 3 where integer\ny = 1 / (a - 2)\nz = b + 1 / (a - 2)\n"


def test_quantity_not_finite_at_the_fixed_inputs_is_an_issue_not_a_crash():
    """1 / (a - 2) with a = 2 kept fixed: inf at every point, explained (was a ZeroDivisionError)."""
    plan = planner.loads(POLE_PLAN, "pole.plan")
    r = sweep.run(plan, _axes(plan, "b=1..3"), ["y", "z"])
    assert list(r.bad) == [True, True, True]
    assert all(v == np.inf for v in r.columns["y"])
    assert any(i.quantity == "y" and "division by zero" in i.reason for i in r.issues)


def test_fixed_input_violating_a_constraint_is_an_error(token_cost):
    from planner.language.errors import ConstraintError

    with pytest.raises(ConstraintError):
        sweep.run(token_cost, _axes(token_cost, "gamma=1..2"), ["speedup"], overrides={"alpha": F(3, 2)})


def test_grid_too_large(token_cost):
    with pytest.raises(PlanError, match="too many points"):
        sweep.run(token_cost, _axes(token_cost, "alpha=0..0.9 count 10000", "gamma=1..10000"), ["speedup"])


def test_large_grid_is_one_vectorised_call(token_cost):
    r = sweep.run(token_cost, _axes(token_cost, "alpha=0..0.999 count 1000", "gamma=1..1000"), ["speedup"])
    assert r.size == 1_000_000
    a, g = r.columns["alpha"], r.columns["gamma"]
    expected = (1 - a ** (g + 1)) / (1 - a) / (g * 0.1 + 1)
    assert np.allclose(r.columns["speedup"], expected, rtol=1e-12)


# ---- CLI ----------------------------------------------------------------------------

def test_cli_sweeps_in_file(cli):
    code, out, err = cli("sweep", TOKEN_COST)
    assert code == 0, err
    assert "2.92507" in out and "2.46964" in out


def test_cli_adhoc_json(cli):
    code, out, _ = cli("sweep", TOKEN_COST, "alpha=0.3,0.9", "--show", "speedup", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["format"] == "planner.sweep/1"
    points = data["sweeps"][0]["points"]
    assert [round(p["speedup"], 4) for p in points] == [1.0179, 2.9251]


def test_cli_adhoc_csv_per_scenario(cli):
    code, out, _ = cli("sweep", TOKEN_COST, "batch=1..1024 times 32", "--show", "verify_cost_ratio",
                       "-s", "all", "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))[1:]
    assert [r[1] for r in rows] == ["bf16"] * 3 + ["fp8_e4m3"] * 3 + ["int4_g128"] * 3
    assert float(rows[7][3]) == pytest.approx(1.1629, abs=0.00005)  # INT4 at batch 32 (the article)


def test_cli_json_reports_issues(cli):
    code, out, _ = cli("sweep", TOKEN_COST, "alpha=0.9..1 step 0.1", "--show", "speedup", "--format", "json")
    assert code == 0
    s = json.loads(out)["sweeps"][0]
    assert s["points"][1]["speedup"] is None
    assert s["points_with_issues"] == 1
    assert {i["kind"] for i in s["issues"]} == {"constraint", "not finite"}


@pytest.mark.parametrize("args,fragment", [
    (["gamma=8..1"], "empty range"),
    (["gama=1..8"], "did you mean `gamma`?"),
    (["gamma=1..8", "--show", "sped"], "did you mean `speedup`?"),
    (["gamma=1..8", "--set", "alpha=2"], "constraint violated"),
    (["gamma=1..8", "-s", "bf61"], "unknown scenario"),
])
def test_cli_errors_exit_2(cli, args, fragment):
    code, out, err = cli("sweep", TOKEN_COST, *args)
    assert code == 2
    assert fragment in err
    assert "Traceback" not in err and out == ""


def test_cli_plan_without_sweeps(cli, plan_file):
    code, _, err = cli("sweep", plan_file("x = 1\n"))
    assert code == 2 and "no `sweep` statements" in err


# ---- `for` picks: one selection per statement, as for checks -------------------------------

from conftest import TWO_AXES as PICKS  # noqa: E402


@pytest.mark.parametrize("picks,expected", [
    ("a=a1, b=b1", ["a1/b1"]),           # both picks: the one combination (was a1/b1, a1/b2, a2/b1)
    ("a=a1", ["a1/b1", "a1/b2"]),        # an axis left out takes all its members
    ("a=a1, a=a2, b=b2", ["a1/b2", "a2/b2"]),
    ("all", ["a1/b1", "a1/b2", "a2/b1", "a2/b2"]),
])
def test_sweep_for_picks_select_like_check(picks, expected):
    from planner.questions.checks import check_scenarios

    plan = planner.loads(PICKS + f"sweep q in [1, 2] show x for {picks}\ncheck x > 0 for {picks}\n", "picks.plan")
    (stmt,) = plan.model.sweeps
    names = [r.scenario for r in sweep.run_statement(plan, stmt)]
    assert names == expected
    assert names == check_scenarios(plan, plan.model.checks[0])


def test_sweeping_a_boolean_input_says_booleans_cannot_be_swept():
    """Was "sweep values must be constants" on `true`, which is a constant."""
    with pytest.raises(PlanError, match="true/false; a sweep varies numbers only"):
        planner.loads("flag = true\nx = if(flag, 1, 2)\nsweep flag in [true, false] show x\n", "b.plan")
