"""Sensitivity: elasticities from differences of the compiled plan, active branches, kinks, the CLI.

Expected elasticities are derived by hand in each test from the article's
formulas (speedup = (1 - a^(g+1)) / (1 - a) / (g c + 1)). A difference measures a slope to about 1e-9 of
an elasticity (float rounding over a step of 1e-6 of the value): the figures are held to that (MEASURED),
far past the four decimals shown.
"""

import json
import math

import pytest
from conftest import TOKEN_COST

import planner
from planner.compute.evaluation import format_value
from planner.language.errors import PlanError
from planner.questions.sensitivity import sensitivity

A, G, C = 0.8, 4, 0.1
MEASURED = 1e-9  # of an elasticity (absolute)


def _speedup_elasticities():
    tokens = (1 - A ** (G + 1)) / (1 - A)
    s = tokens / (G * C + 1)
    d_tokens_d_a = sum(k * A ** (k - 1) for k in range(1, G + 1))  # d/da of 1 + a + ... + a^g
    d_a = d_tokens_d_a / (G * C + 1)
    d_c = -tokens * G / (G * C + 1) ** 2
    d_g = (-(A ** (G + 1)) * math.log(A) / (1 - A)) / (G * C + 1) - tokens * C / (G * C + 1) ** 2
    return {"alpha": d_a * A / s, "draft_cost": d_c * C / s, "gamma": d_g * G / s}


def test_speedup_elasticities(token_cost):
    s = sensitivity(token_cost, "speedup")
    got = {r.input: r.elasticity for r in s.rows}
    expected = _speedup_elasticities()
    assert set(got) == set(expected)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=MEASURED)
    assert [r.input for r in s.rows] == ["alpha", "draft_cost", "gamma"]  # sorted by magnitude
    assert got["draft_cost"] == pytest.approx(-0.4 / 1.4, abs=MEASURED)
    assert all(r.method == "numeric difference" for r in s.rows)
    assert [r.note for r in s.rows] == ["", "", "integer input, treated as continuous"]


def test_active_branch_of_max(token_cost):
    """bf16 at batch 32 is memory-bound: the step bound is (W + b K) / BW."""
    s = sensitivity(token_cost, "batch_step_bound", "bf16")
    got = {r.input: r for r in s.rows}
    assert got["hbm_bandwidth"].elasticity == pytest.approx(-1.0, abs=MEASURED)
    assert got["peak_dense_flops"].elasticity == 0  # the branch not taken: exactly flat
    W, KB = 140e9, 32 * 671088640
    assert got["bits_per_weight"].elasticity == pytest.approx(W / (W + KB), abs=MEASURED)
    assert got["batch"].elasticity == pytest.approx(KB / (W + KB), abs=MEASURED)
    assert got["batch"].derivative == pytest.approx(671088640 / 3e12 * 1e3, rel=MEASURED)  # ms per sequence
    assert got["hbm_bandwidth"].method == "numeric difference"
    assert s.rows[0].input == "hbm_bandwidth"


def test_compute_bound_branch(token_cost):
    s = sensitivity(token_cost, "verify_step_bound", "int4_g128")
    got = {r.input: r.elasticity for r in s.rows}
    assert got["peak_dense_flops"] == pytest.approx(-1.0, abs=MEASURED)
    assert got["hbm_bandwidth"] == 0
    assert got["gamma"] == pytest.approx(4 / 5, abs=MEASURED)  # positions = gamma + 1


def test_kink_gives_both_sides_never_their_average():
    """max(a, b) at a = b = 2: a rise of either moves y by as much (elasticity 1), a fall does not
    move it (0); the symmetric difference said 0.5, a slope y has on neither side."""
    plan = planner.loads("a = 2\nb = 2\ny = max(a, b)\n")
    s = sensitivity(plan, "y")
    for r in s.rows:
        assert r.method == "one-sided differences"
        assert "a kink: `max(a, b)` has equal arguments" in r.note
        assert r.elasticity == pytest.approx(1.0, rel=1e-9) and r.rise == r.elasticity
        assert r.fall == pytest.approx(0.0, abs=1e-9)


def test_a_kink_in_a_user_function_is_named_as_written():
    """y = f(a, b) + 1 with f(u, v) = max(u, 2 v), at a = 4, b = 2: y = 5, the two arguments equal. A rise
    of a moves y one for one (elasticity 1 * 4 / 5), a fall not at all; a rise of b moves it twice as fast
    (2 * 2 / 5), a fall not at all."""
    plan = planner.loads("f(u, v) = max(u, 2 * v)\na = 4\nb = 2\ny = f(a, b) + 1\n")
    got = {r.input: r for r in sensitivity(plan, "y").rows}
    for name, rise in (("a", 4 / 5), ("b", 4 / 5)):
        r = got[name]
        assert r.method == "one-sided differences"
        assert "a kink: `max(u, 2 * v)` (in `f`) has equal arguments" in r.note
        assert r.rise == pytest.approx(rise, abs=MEASURED) and r.fall == 0 and r.elasticity == r.rise


def test_an_if_on_its_edge_is_named_and_both_sides_given():
    """y = if(x > 2, x, 2 x - 2) at x = 2: y = 2 either way; a rise follows x (elasticity 1 * 2 / 2), a
    fall follows 2 x - 2 (2 * 2 / 2). A 1% change does what each side says, so the row stays one-sided."""
    r, = sensitivity(planner.loads("x = 2\ny = if(x > 2, x, 2 * x - 2)\n"), "y").rows
    assert r.method == "one-sided differences" and "an `if` on its edge: `x > 2`" in r.note
    assert r.rise == pytest.approx(1.0, abs=MEASURED) and r.fall == pytest.approx(2.0, abs=MEASURED)


def test_a_step_at_the_value_is_a_jump_named_as_written():
    """floor(c) at c = 4 steps there (3.999... is 3): no slope; at z = 0 the row stays as it is."""
    r, = sensitivity(planner.loads("c = 4\nz = floor(c) - 4\n"), "z").rows
    assert r.method == "none" and r.elasticity is None and r.derivative is None
    assert r.note == "a jump: `floor(c)` steps at this value (flat on either side)"


def test_a_branch_not_taken_is_no_break():
    """`side` turns at n = 9, but y reads it only where `use` holds, which it does not: n's slope is the
    continuous one, 2 n * n / n^2 = 2, not one step's (81 - 64) * 8 / 64 = 2.125. Where `use` holds, y = 10 +
    64 = 74 and one step up drops `side` to 1: (1 + 81 - 74) * 8 / 74, one step down (74 - 10 - 49) * 8 / 74."""
    text = ("n = 8 where integer, 1 <= n <= 16\nk = 8\nuse = false\nside = if(n < k + 1, 10, 1)\n"
            "y = if(use, side, 0) + n ^ 2\n")
    r = {r.input: r for r in sensitivity(planner.loads(text), "y").rows}["n"]
    assert r.method == "numeric difference" and r.note == "integer input, treated as continuous"
    assert r.elasticity == pytest.approx(2.0, abs=MEASURED)
    assert r.rise == pytest.approx(17 * 8 / 64) and r.fall == pytest.approx(15 * 8 / 64)  # one step each way
    taken = {r.input: r for r in sensitivity(planner.loads(text.replace("use = false", "use = true")), "y").rows}["n"]
    assert taken.method == "one-sided differences" and "a branch or step changes within one step" in taken.note
    assert taken.rise == pytest.approx(8 * 8 / 74) and taken.fall == pytest.approx(15 * 8 / 74)


def test_a_step_function_flat_within_the_change_says_where_its_next_step_is():
    """floor(c) at c = 3.7 is flat within 1% either way: the row says so and where the next step is,
    a rise of 4/3.7 - 1 = 8.108% that takes z from 6 to 8 (+33.3%)."""
    plan = planner.loads("a = 2\nc = 3.7\nz = floor(c) * a\n")
    got = {r.input: r for r in sensitivity(plan, "z").rows}
    assert got["c"].elasticity == 0 and got["c"].derivative == 0
    assert got["c"].method == "effect of a 1% change" and (got["c"].rise, got["c"].fall) == (0.0, 0.0)
    assert "a 1% rise or fall leaves `z` as it is" in got["c"].note
    assert "the nearest step is a 8.11% rise (to 4), where `z` moves by +33.3%" in got["c"].note
    assert got["a"].method == "numeric difference" and got["a"].elasticity == pytest.approx(1.0, abs=MEASURED)


VANS = """unit USD
unit parcel
demand = 1250 parcel/day
capacity = 140 parcel/day
van_cost = 2400 USD/month
overhead = 3000 USD/month
vans = ceil(demand / capacity)
cost = vans * van_cost + overhead -> USD/month
"""


def test_a_step_within_the_stated_change_is_its_effect_not_a_slope_of_zero():
    """vans = ceil(1250 / 140) = ceil(8.93) = 9: a 1% more demand (1262.5 / 140 = 9.02) takes a tenth
    van, 24,600 -> 27,000 USD/month (+9.756%); 1% less capacity likewise. The local slope is 0 for
    both, and ranked them below van_cost (+0.878): the reader's question is what a 1% change does."""
    rows = sensitivity(planner.loads(VANS), "cost").rows
    got = {r.input: r for r in rows}
    effect = 2400 / 24600 * 100  # one more van, in % of the cost
    assert got["demand"].rise == pytest.approx(effect, rel=1e-9) and got["demand"].fall == 0
    assert got["capacity"].rise == 0 and got["capacity"].fall == pytest.approx(-effect, rel=1e-9)
    for n in ("demand", "capacity"):
        assert got[n].method == "effect of a 1% change" and abs(got[n].elasticity) == pytest.approx(effect)
        assert "a step or kink lies within 1% of the value" not in got[n].note  # a step, said as such
        assert "a step lies within 1% of the value" in got[n].note and "the local slope gives +0.0000" in got[n].note
    assert [r.input for r in rows][:2] == ["capacity", "demand"] or [r.input for r in rows][:2] == ["demand", "capacity"]
    assert got["van_cost"].method == "numeric difference"  # smooth inputs keep their slope
    assert got["van_cost"].elasticity == pytest.approx(9 * 2400 / 24600, abs=MEASURED)


def test_a_smooth_curve_keeps_its_slope():
    """y = x^2 at x = 3: a 1% rise gives +2.01%, a fall -1.99%: within 10% of the slope's 2, so the
    row keeps the elasticity 2 (a quadratic: the slope over the 1% change is the same, to float rounding)."""
    r, = sensitivity(planner.loads("x = 3\ny = x ^ 2\n"), "y").rows
    assert r.method == "numeric difference" and r.elasticity == pytest.approx(2.0, rel=1e-12)


def test_zero_quantity_has_no_elasticity():
    plan = planner.loads("a = 2\nb = 2\nd = a - b\n")
    rows = sensitivity(plan, "d").rows
    assert all(r.elasticity is None for r in rows)
    assert {r.input: r.derivative for r in rows} == {"a": 1.0, "b": -1.0}


def test_no_finite_derivative_is_said_not_nan(cli, plan_file):
    """sqrt(a) at a = 0: the slope is infinite; no nan in the table, valid JSON (was exit 3)."""
    plan = planner.loads("a = 0 where a >= 0\nb = 2\ny = sqrt(a) + b\n")
    got = {r.input: r for r in sensitivity(plan, "y").rows}
    assert got["a"].derivative is None and got["a"].elasticity is None
    assert got["a"].method == "none" and "not finite" in got["a"].note and "floor" not in got["a"].note
    assert got["b"].elasticity == pytest.approx(1.0)
    path = plan_file("a = 0 where a >= 0\nb = 2\ny = sqrt(a) + b\n")
    code, out, err = cli("sensitivity", path, "y", "--format", "json")
    assert code == 0, err
    (row,) = [r for r in json.loads(out)["results"][0]["inputs"] if r["input"] == "a"]
    assert row["derivative"] is None and row["elasticity"] is None
    code, out, _ = cli("sensitivity", path, "y")
    assert code == 0 and "nan" not in out


def test_errors(token_cost):
    with pytest.raises(PlanError, match="did you mean `speedup`"):
        sensitivity(token_cost, "spedup")
    with pytest.raises(PlanError, match="true/false"):
        sensitivity(token_cost, "verify_is_compute_bound")


def test_cli(cli):
    code, out, _ = cli("sensitivity", TOKEN_COST, "speedup")
    assert code == 0
    assert out.index("alpha") < out.index("draft_cost") < out.index("gamma")
    assert "+1.5631" in out
    code, out, _ = cli("sensitivity", TOKEN_COST, "batch_step_bound", "-s", "all", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [r["scenario"] for r in data["results"]] == ["base", "bf16", "fp8_e4m3", "int4_g128"]
    code, out, _ = cli("sensitivity", TOKEN_COST, "speedup", "--set", "alpha=0.6", "--format", "csv")
    assert code == 0 and out.startswith("quantity,scenario,input")
    code, _, err = cli("sensitivity", TOKEN_COST, "spedup")
    assert code == 2 and "did you mean `speedup`?" in err


# ---- a long chain of formulas: written over its inputs without recursion ---------------------

def test_chain_of_2000_formulas_explain_solve_sensitivity():
    import sys

    from planner.compute.symbolic import inline_inputs
    from planner.questions.explain import explain
    from planner.questions.solve import Solver, adhoc

    n = 2000
    text = "x0 = 1\n" + "".join(f"x{i} = x{i - 1} + 1\n" for i in range(1, n))
    plan = planner.loads(text, "chain.plan")
    last = f"x{n - 1}"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default; the CLI raises it, a library caller may not
    try:
        x0 = plan.symbols["x0"]
        assert inline_inputs(plan.model, plan.symbols, plan.exprs, last) == x0 + (n - 1)
        e = explain(plan, last)
        # written over its inputs, x0 + 1 + 1 + ... is too long to show: explain says so, and which formula to read
        assert e.in_inputs == f"(too long over its inputs, over 2,000 terms: see `x{n - 2}`)" and e.value == f"{n:,}"
        r = Solver(plan).answer(adhoc(plan, "x0", f"{last} = 5000"))
        assert r.value == 5000 - (n - 1)
        (row,) = sensitivity(plan, last).rows
        assert row.input == "x0" and row.elasticity == pytest.approx(1 / n, abs=MEASURED)  # d/dx0 = 1, x0 = 1
    finally:
        sys.setrecursionlimit(limit)


def test_boolean_formulas_are_inlined_as_their_conditions():
    from planner.compute.symbolic import inline_inputs

    plan = planner.loads("a = 2\nbig = a > 3\ny = if(big, 10, 20)\n", "flag.plan")
    y = inline_inputs(plan.model, plan.symbols, plan.exprs, "y")
    a = plan.symbols["a"]
    assert y.xreplace({a: 5}) == 10 and y.xreplace({a: 1}) == 20


def test_a_rounding_step_is_flat_or_a_jump_never_a_huge_slope():
    """round(1.005, 2): 100.5 + 0.5 = 101 sits exactly on the step; the symmetric difference said +4950."""
    # a 1% rise: round(1.01505, 2) = 1.02, +0.990%; a fall: round(0.99495, 2) = 0.99, -1.98%
    on_step = sensitivity(planner.loads("a = 1.005\nb = round(a, 2)\n"), "b").rows[0]
    assert on_step.method == "effect of a 1% change" and "a step lies within 1% of the value" in on_step.note
    assert on_step.rise == pytest.approx((1.02 - 1.01) / 1.01 * 100, rel=1e-9)
    assert on_step.fall == pytest.approx((0.99 - 1.01) / 1.01 * -100, rel=1e-9)
    assert on_step.elasticity == on_step.fall  # the larger side
    # d/da (1.00 * a) = 1 here, but the step at 1.005 lies within 1%: a rise to 1.01404 rounds to 1.01
    flat = sensitivity(planner.loads("a = 1.004\nb = round(a, 2) * a\n"), "b").rows[0]
    assert flat.method == "effect of a 1% change" and "the local slope gives +1.0000" in flat.note
    assert flat.rise == pytest.approx((1.01 * 1.01404 - 1.004) / 1.004 * 100, rel=1e-9)
    far = sensitivity(planner.loads("a = 1.1\nb = round(a, 1) * a\n"), "b").rows[0]
    assert far.method == "numeric difference" and far.derivative == pytest.approx(1.1)  # no step within 1%: the slope
    assert "flat" in far.note


def test_long_growth_chain():
    """a_k = a_{k-1} (1 + g) + 1: a_n = a0 (1+g)^n + ((1+g)^n - 1)/g (geometric series); 2,000 lines
    took minutes when the inlined expression was differentiated (about the cube of the length). So convex
    in g that a 1% change is not what the slope says: the row gives the change's effect, the slope in its note."""
    n = 2000
    text = "unit USD\na0 = 1 USD\ng = 2%\n" + "".join(f"a{i} = a{i - 1} * (1 + g) + 1 USD\n" for i in range(1, n))
    got = {r.input: r for r in sensitivity(planner.loads(text, "big.plan"), f"a{n - 1}").rows}
    k, g = n - 1, 0.02

    def a(g):
        return (1 + g) ** k + ((1 + g) ** k - 1) / g

    da_dg = k * (1 + g) ** (k - 1) + (k * (1 + g) ** (k - 1) * g - ((1 + g) ** k - 1)) / g ** 2
    assert got["a0"].elasticity == pytest.approx((1 + g) ** k / a(g), abs=MEASURED)
    assert f"the local slope gives {da_dg * g / a(g):+.4f}" in got["g"].note  # +38.2157
    # no call on the way breaks within 1%: a strong curve, said as such, not "a step or kink"
    assert got["g"].note.startswith("the effect is not linear over 1%: a 1% rise moves `a1999` by +46.5%, "
                                    "a 1% fall moves it by -31.8%; ")
    assert "step" not in got["g"].note and "kink" not in got["g"].note
    assert got["g"].method == "effect of a 1% change"
    assert got["g"].rise == pytest.approx((a(1.01 * g) / a(g) - 1) * 100, rel=1e-9)  # +46.5%
    assert got["g"].fall == pytest.approx((a(0.99 * g) / a(g) - 1) * -100, rel=1e-9)  # -31.8%
    assert got["g"].elasticity == got["g"].rise


def test_a_diamond_graph():
    # c uses a and b, and b uses a too: a must come before b (dependencies first)
    lines = ["k = 3", "x0 = k * 2"] + [f"x{i} = x{i-1} * 1.01 + k" for i in range(1, 70)]
    lines += ["a = x69 * 2", "b = a * 3 + k", "c = a + b"]
    plan = planner.loads("\n".join(lines) + "\n")
    (row,) = sensitivity(plan, "c").rows
    h = 1e-6
    up = plan.evaluate(None, {"k": plan.parse_override(f"k={3 + h}")[1]}).values["c"]
    down = plan.evaluate(None, {"k": plan.parse_override(f"k={3 - h}")[1]}).values["c"]
    y = plan.evaluate().values["c"]
    assert row.elasticity == pytest.approx((up - down) / (2 * h) * 3 / y, rel=1e-6)


# ---- aggregates with branches: the derivative of the plan as planner evaluates it -------------
# n = 12, cap = 5: total = 1 + 2 + 3 + 4 + 5 * 8 = 50 (terms k = 5..12 are cap).
# A rise of cap moves the terms k = 6..12 (k = 5 switches to k): slope 7, elasticity 7 * 5 / 50 = 0.7.
# A fall of cap moves the terms k = 5..12: slope 8, elasticity 0.8. Not differentiable at cap = 5.
# n is an integer: one step up adds min(13, 5) = 5, one step down removes min(12, 5) = 5:
# elasticity 5 * 12 / 50 = 1.2 (the symmetric difference of +-1e-6 said +50000).
CAPPED = "n = 12 where integer, 1 <= n <= 24\ncap = 5\ntotal = sum({body} for k in 1..n)\n"


@pytest.mark.parametrize("body", ["if(k < cap, k, cap)", "min(cap, k)", "min(k, cap)"])
def test_a_branch_inside_a_sum(body):
    s = sensitivity(planner.loads(CAPPED.format(body=body)), "total")
    assert s.value == 50
    got = {r.input: r for r in s.rows}
    assert got["cap"].rise == pytest.approx(0.7, rel=1e-6) and got["cap"].fall == pytest.approx(0.8, rel=1e-6)
    assert got["cap"].elasticity == pytest.approx(0.7, rel=1e-6)  # the column's "a 1% rise"
    assert "not differentiable" in got["cap"].note and "+0.8000" in got["cap"].note
    assert got["n"].elasticity == pytest.approx(1.2, rel=1e-12) and got["n"].derivative == pytest.approx(5)
    assert got["n"].method == "one-step differences"
    assert [r.input for r in s.rows] == ["n", "cap"]


def test_abs_inside_a_sum_and_a_step_that_differs():
    """sum(|k - cap|) for k = 1..12, cap = 5: 10 + 28 = 38. Rise of cap: +1 for k = 1..5, -1 for
    k = 6..12: slope -2. Fall: +1 for k = 1..4, -1 for k = 5..12: slope -4. One step of n up adds
    |13 - 5| = 8, one step down removes |12 - 5| = 7."""
    s = sensitivity(planner.loads(CAPPED.format(body="abs(k - cap)")), "total")
    got = {r.input: r for r in s.rows}
    assert s.value == 38
    assert got["cap"].rise == pytest.approx(-2 * 5 / 38, rel=1e-6)
    assert got["cap"].fall == pytest.approx(-4 * 5 / 38, rel=1e-6)
    assert got["n"].rise == pytest.approx(8 * 12 / 38, rel=1e-12)
    assert got["n"].fall == pytest.approx(7 * 12 / 38, rel=1e-12)
    assert got["n"].method == "one-sided differences" and "one step down" in got["n"].note


def test_a_step_at_the_bound_uses_the_other_side():
    s = sensitivity(planner.loads(CAPPED.format(body="min(cap, k)").replace("n = 12", "n = 24")), "total")
    got = {r.input: r for r in s.rows}
    # total = 10 + 5 * 20 = 110; n = 24 is the upper bound: only the step down (removes 5)
    assert got["n"].elasticity == pytest.approx(5 * 24 / 110, rel=1e-12) and got["n"].rise is None
    assert "one side only" in got["n"].note


def test_the_buy_vs_rent_plan(cli):
    """examples/gpu_buy_vs_rent.plan: a ramp with min() inside monthly sums (was an internal error:
    TypeError in the sensitivity of min()). npv_rent is exactly linear in rent_price and in
    target_utilisation: elasticity 1."""
    from conftest import ROOT

    plan = planner.load(ROOT / "examples" / "gpu_buy_vs_rent.plan")
    got = {r.input: r for r in sensitivity(plan, "npv_rent").rows}
    assert got["rent_price"].elasticity == pytest.approx(1.0, rel=1e-7)
    assert got["target_utilisation"].elasticity == pytest.approx(1.0, rel=1e-7)
    assert got["gpus"].elasticity == pytest.approx(1.0, rel=1e-12)  # linear in gpus: a step each way agrees
    code, out, err = cli("sensitivity", ROOT / "examples" / "gpu_buy_vs_rent.plan", "npv_saving", "-s", "all")
    assert code == 0, err
    assert "internal error" not in err


def _plans():
    from conftest import ROOT

    return sorted([*ROOT.glob("sheets/*.plan"), *ROOT.glob("tests/plans/*.plan"), *ROOT.glob("examples/*.plan")])


@pytest.mark.parametrize("path", _plans(), ids=lambda p: p.name)
def test_every_elasticity_agrees_with_a_finite_difference(path):
    """Every quantity of every shipped sheet, example and test plan, in every scenario: each row's
    slope matches a difference of whole evaluations (planner's own public route), taken here
    independently: central for a smooth row, the rise for a one-sided row; integers by one step."""
    from fractions import Fraction

    plan = planner.load(path)
    model = plan.model
    checked = 0
    for scenario in [None, *model.scenarios][:3]:
        base = plan.evaluate(scenario)
        for name, q in model.quantities.items():
            if q.is_input or q.is_bool or q.answer_deps or q.per_period:  # (a series: its reductions are asked)
                continue
            s = sensitivity(plan, name, scenario)
            for r in s.rows:
                if r.derivative is None:
                    continue
                xq = model.quantities[r.input]
                x = base.inputs[r.input]
                h = xq.display.scale if xq.integer else (abs(x) or xq.display.scale) * Fraction(1, 10**5)

                def at(v):
                    try:
                        return float(plan.evaluate(scenario, {r.input: v}).values[name])
                    except PlanError:
                        return None

                y0 = float(base.values[name])
                if xq.integer and "treated as continuous" in r.note:  # a derivative: the compiled plan off the integers
                    h = abs(x) * Fraction(1, 10**6)
                    inputs = {n: (v if isinstance(v, bool) else float(v)) for n, v in base.inputs.items()}
                    at = lambda v: float(plan.run_compiled({**inputs, r.input: float(v)})[name])  # noqa: E731
                if r.method == "effect of a 1% change":  # a step or kink within 1%: the change itself
                    h = abs(x) / 100
                up, down = at(x + h), at(x - h)
                if r.method == "effect of a 1% change":
                    fd = (up - y0) / float(h) if r.elasticity == r.rise else (y0 - down) / float(h)
                elif r.method == "one-sided differences":  # the rise where shown (at 0: where it has a value)
                    rising = r.elasticity == r.rise if r.rise is not None else up is not None
                    one = (up - y0) if rising else (y0 - down)
                    fd = one / float(h)
                elif up is not None and down is not None:
                    fd = (up - down) / float(2 * h)
                else:
                    continue
                slope = r.derivative * float(q.display.scale) / float(xq.display.scale)
                assert slope == pytest.approx(fd, rel=1e-4, abs=1e-9 * (abs(y0) / float(h) + 1)), (
                    f"{path.name} [{scenario or 'base'}] d {name} / d {r.input}: {r.method} {r.note}")
                checked += 1
    assert checked > 0


def test_rows_are_ranked_by_the_elasticity_they_show():
    """An integer input's one-step sides (here n: one more of 3 adds a third) once ranked it above an
    input with a larger elasticity shown (a new user's `sensitivity` listed 0.50 above 0.53, by its fall of 0.55)."""
    plan = planner.loads("n = 3 where integer, n >= 1\nw = 10\ny = n ^ 0.5 * w ^ 0.53\n")
    rows = sensitivity(plan, "y").rows
    shown = [abs(r.elasticity) for r in rows]
    assert shown == sorted(shown, reverse=True) and rows[0].input == "w"


def test_equal_elasticities_rank_by_name():
    """y = b * a * c^-1: every elasticity is 1 in size; measured, they differ past the 9th decimal, which
    must not decide the order: they read the same, so they rank by name."""
    rows = sensitivity(planner.loads("c = 0.3\nb = 7.1\na = 3.3\ny = b * a / c\n"), "y").rows
    assert [r.input for r in rows] == ["a", "b", "c"]
    assert [round(r.elasticity, 4) for r in rows] == [1.0, 1.0, -1.0]


def test_float_residue_is_not_a_step():
    """A term that cancels exactly moved the figure by +3.33e-13% for a 1% change, and the row said a
    step lay within 1%: residue is no change, and a smooth row keeps its slope."""
    plan = planner.loads("a = 12\nb = 1100\nc = 950\nk = 3\ny = a * (b - c) - a * b + a * c + k\n")
    got = {r.input: r for r in sensitivity(plan, "y").rows}
    assert got["b"].method == "numeric difference" and "step" not in got["b"].note
    assert got["k"].elasticity == pytest.approx(1.0)


@pytest.mark.parametrize("text, name, x, rise, fall", [
    # ep = 1 sits on the edge of `ep > 1`: one step up takes the other branch, y from 4 to 2 * 10 = 20
    # (elasticity 16 / 4 * 1 = 4), and ep = 0 is outside its bounds; the branch's slope said 1 (and 0 for
    # a plain `if(ep > 1, a, b)`)
    ("ep = 1 where integer, ep >= 1\na = 10\nb = 4\ny = if(ep > 1, a, b) * ep\n", "y", "ep", 4.0, None),
    ("ep = 1 where integer, ep >= 1\na = 10\nb = 4\ny = if(ep > 1, a, b)\n", "y", "ep", 1.5, None),
    # gpus = 8 on the edge of `gpus <= nvlink_domain`: 9 GPUs fall to 50 GB/s each, 450 against 7200
    # (elasticity (450 - 7200) / 7200 * 8 = -7.5); 7 GPUs give 6300 (a fall of 1/8: elasticity 1)
    ("gpus = 8 where integer, gpus >= 1\nnvlink_domain = 8\nbw = if(gpus <= nvlink_domain, 900, 50) * gpus\n",
     "bw", "gpus", -7.5, 1.0),
])
def test_an_integer_input_on_a_branch_edge_gives_one_step_each_way(text, name, x, rise, fall):
    row = {r.input: r for r in sensitivity(planner.loads(text), name).rows}[x]
    assert row.method == "one-sided differences" and "treated as continuous" not in row.note
    assert row.rise == pytest.approx(rise) and (row.fall == pytest.approx(fall) if fall is not None else row.fall is None)
    assert row.elasticity == pytest.approx(rise)


def test_an_integer_input_whose_slope_tells_the_step_keeps_it():
    # n^0.5 at 3: one step up gives 0.464, one down 0.551, the slope 0.5 (each within 10%)
    row = {r.input: r for r in sensitivity(planner.loads("n = 3 where integer, n >= 1\ny = n ^ 0.5\n"), "y").rows}["n"]
    assert row.method == "numeric difference" and row.elasticity == pytest.approx(0.5)
    assert row.note == "integer input, treated as continuous"


def test_the_reports_analysis_reuses_each_scenarios_evaluation(monkeypatch):
    """The report's analysis hands each scenario's evaluation to sensitivity, which then evaluates
    nothing again (gpu_buy_vs_rent's `first(...)` finds nothing in a scenario, and saying why is
    most of an evaluation); the rows are the ones sensitivity finds evaluating for itself."""
    from conftest import ROOT

    from planner.compute.evaluation import Plan, load
    from planner.outputs.viewmodel import headline_names

    plan = load(ROOT / "examples" / "gpu_buy_vs_rent.plan")
    names = [n for n in headline_names(plan)[0] if not plan.quantities[n].is_bool]
    scenarios = [None] + plan.scenario_names
    alone = [sensitivity(plan, n, s) for n in names for s in scenarios]
    evaluations = {s: plan.evaluate(s) for s in scenarios}
    assert any(ev.never for ev in evaluations.values())
    evaluate = Plan.evaluate
    asked = []
    monkeypatch.setattr(Plan, "evaluate", lambda self, s=None, *a, **k: asked.append(s) or evaluate(self, s, *a, **k))
    shared = [sensitivity(plan, n, s, evaluation=evaluations[s]) for n in names for s in scenarios]
    assert repr(shared) == repr(alone) and len(names) * len(scenarios) >= 8  # (repr: a never is nan)
    assert asked == []


def test_a_large_slope_shows_every_digit_right():
    """The number rule prints a slope of 8 to 13 digits in full: each must be right. By hand, with h = 8192,
    L = 80, V = 128,256, w = 1.5: d params/dL = 12 h^2 + 13 h = 805,306,368 + 106,496 = 805,412,864;
    d params/dh = L (24 h + 13) + V = 80 * 196,621 + 128,256 = 15,857,936; `rest`, a difference of terms
    a hundred times its size, d/dL = 13 h = 106,496; d flops/dw of 2 (w h)^3 = 6 w^2 h^3 = 13.5 * 8192^3
    = 7,421,703,487,488 (a central difference over 1e-6 of the value read 7,421,703,487,500)."""
    text = ("layers = 80 where integer\nhidden = 8192 where integer\nvocab = 128256\nwidth = 1.5\n"
            "params = layers * (12 * hidden^2 + 13 * hidden) + vocab * hidden\n"
            "rest = params - layers * 12 * hidden^2\n"
            "flops = 2 * (width * hidden)^3 + params\n")
    plan = planner.loads(text)
    shown = {(q, r.input): format_value(r.derivative) for q in ("params", "rest", "flops")
             for r in sensitivity(plan, q).rows}
    assert shown[("params", "layers")] == "805,412,864"
    assert shown[("params", "hidden")] == "15,857,936"
    assert shown[("rest", "layers")] == "106,496"
    assert shown[("flops", "width")] == "7,421,703,487,488"
    assert shown[("flops", "hidden")] == format_value(6 * 1.5**3 * 8192**2 + 15_857_936) == "1,374,812,432"


def test_a_slope_on_one_side_only_is_not_off_by_its_step():
    """At its bound `k = 1` has a fall only: d/dk of 0.048108491 / k is -0.048108491, shown to six decimals
    -0.048108. A difference over a fall of h reads -c / (1 - h) = -0.04810853..., shown -0.048109."""
    r, = sensitivity(planner.loads("k = 1 where 0 < k <= 1\ny = 0.048108491 / k\n"), "y").rows
    assert r.method == "one-sided differences" and r.rise is None
    assert format_value(r.derivative) == "-0.048108"
    assert r.elasticity == pytest.approx(-1.0, abs=MEASURED)


def test_a_kink_within_the_stated_change_is_named_a_kink():
    """max(a, b) at a = 2, b = 2.01: b's slope is 1, but a 1% fall (to 1.9899) leaves max at a = 2, a move of
    (2 - 2.01) / 2.01 = -0.498%, not -1%: the row gives each side's effect and says a kink lies within 1%."""
    got = {r.input: r for r in sensitivity(planner.loads("a = 2\nb = 2.01\ny = max(a, b)\n"), "y").rows}
    b = got["b"]
    assert b.method == "effect of a 1% change"
    assert b.note == ("a kink lies within 1% of the value: a 1% rise moves `y` by +1%, a 1% fall moves it by -0.498%; "
                      "the local slope gives +1.0000")
    assert b.rise == pytest.approx(1.0, rel=1e-9) and b.fall == pytest.approx(0.01 / 2.01 / 0.01, rel=1e-9)


def test_a_step_inside_a_sum_is_not_named_but_said_to_be_through_one():
    """sum(ceil(k a) for k in 1..4) at a = 1.005 is 2 + 3 + 4 + 5 = 14; a 1% rise (1.01505: 1.015, 2.03, 3.045,
    4.06) leaves it, a 1% fall (0.99495: 0.995, 1.99, 2.985, 3.98) gives 1 + 2 + 3 + 4 = 10, -28.6%. The walk of
    the formulas does not enter a sum: the note says the effect is not linear, through a sum, never "a kink"."""
    r, = sensitivity(planner.loads("a = 1.005\ny = sum(ceil(k * a) for k in 1..4)\n"), "y").rows
    assert r.method == "effect of a 1% change"
    assert r.note == ("the effect is not linear over 1% (through a sum or series, whose steps and kinks are not "
                      "named): "
                      "a 1% rise leaves `y` as it is, a 1% fall moves it by -28.6%; the local slope gives +0.0000")
    assert r.rise == 0 and r.fall == pytest.approx(4 / 14 * 100, rel=1e-12)


def test_a_step_the_quantity_does_not_follow_is_no_jump():
    """y = max(0, 10 - 10 floor(a)) at a = 2: `floor(a)` steps at 2 (to 1 on a fall), but 10 - 10 * 1 = 0 and
    10 - 10 * 2 = -10 both lose to 0: y is 0 on both sides, a slope of exactly 0, not "a jump" with none."""
    r, = sensitivity(planner.loads("a = 2\ny = max(0, 10 - 10 * floor(a))\n"), "y").rows
    assert (r.method, r.derivative) == ("numeric difference", 0.0)
    assert r.note == "floor/ceil/round are flat here (derivative 0)"


def test_a_slope_near_a_rounding_tie_is_not_rounded_across_it():
    """A slope is shortened to the digits it has before the number rule rounds it again. 209.34549992 known
    to 2e-7 could read 209.3455 and show 209.346 where the slope is 209.345499976 (209.345): it is kept as
    measured. 0.00781249999998579 known to 6e-14 is 1/128 = 0.0078125, a tie known to nine digits more."""
    from planner.questions.sensitivity import _measured

    assert format_value(_measured(209.3454999168521, 2.0234915512433656e-07)) == "209.345"
    assert _measured(0.007812499999985789, 5.6704640982730583e-14) == 0.0078125
    assert _measured(-0.19531249998915798, 2.7105054312862816e-11) == -0.1953125  # -25/128, four digits more
    assert _measured(15_990_784.3, 0.5) == 15_990_784
