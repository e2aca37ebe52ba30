"""Solving: break-even roots, integer thresholds, optimisation, closed forms, named errors, checks by alias.

Golden numbers: the article (break-even alpha about 0.287, exactly
0.287107752303907; crossover batch 98 / 49 / 26; best gamma 6 at 2.4696), or
arithmetic written out here, independent of planner.
"""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from conftest import TOKEN_COST

import planner
from planner.language.errors import MultipleRootsError, NoRootError, NotMonotoneError, PlanError, SolveError
from planner.questions.fast import Answers
from planner.questions.solve import Solver, adhoc


def _question(plan, text):
    return next(s for s in Solver(plan).questions() if text in s.span.text)


@pytest.fixture(scope="module")
def solver(token_cost):
    return Solver(token_cost)


# ---- the article's answers ------------------------------------------------------

def test_breakeven_alpha(token_cost, solver):
    (r,) = solver.run(_question(token_cost, "speedup = 1"))
    assert r.mode == "root" and r.target == "alpha" and r.alias == "breakeven_alpha"
    assert r.value == pytest.approx(0.287107752303907, abs=1e-15)
    assert r.verification.relative < 1e-30
    assert r.roots == (r.value,)  # one root in [0, 1): the others (1 and about -1.15) are outside
    # No closed form over gamma and draft_cost; the exact root is algebraic.
    assert r.closed_form is None
    assert isinstance(r.exact, sp.CRootOf)
    # (1 - a^5) / (1 - a) = 1.4: 1 + a + a^2 + a^3 + a^4 = 1.4, times 5; in plan syntax
    assert "alpha is the real root of 5 * alpha^4 + 5 * alpha^3 + 5 * alpha^2 + 5 * alpha - 2 = 0 in [0, 1)" in r.notes


def test_breakeven_matches_an_independent_root():
    # (1 - a^5) / (1 - a) = 1.4  <=>  a^4 + a^3 + a^2 + a - 0.4 = 0
    roots = [z.real for z in np.roots([1, 1, 1, 1, -0.4]) if abs(z.imag) < 1e-12 and 0 <= z.real < 1]
    assert roots == [pytest.approx(0.287107752303907, abs=1e-12)]


CROSSOVER = {"bf16": 98, "fp8_e4m3": 49, "int4_g128": 26}


def test_crossover_batch_per_format(token_cost, solver):
    results = solver.run(_question(token_cost, "verify_is_compute_bound"))
    assert {r.scenario: r.display_value for r in results} == CROSSOVER
    for r in results:
        assert r.mode == "min" and r.alias == "crossover_batch"
        assert r.verification.holds is True and r.verification.neighbor_holds is False
        assert r.verification.neighbor == r.display_value - 1


def test_crossover_closed_form_is_live_over_the_inputs(token_cost, solver):
    results = solver.run(_question(token_cost, "verify_is_compute_bound"))
    form = results[0].closed_form
    assert all(r.closed_form == form for r in results)  # one formula, the inputs differ
    names = {s.name for s in form.free_symbols}
    assert "batch" not in names
    assert {"bits_per_weight", "parameters", "hbm_bandwidth", "peak_dense_flops", "gamma"} <= names
    assert form.has(sp.ceiling)
    # boundary = F*W / (2*BW*P*(gamma+1) - F*K), written out by hand
    F, BW, P, K = 1e15, 3e12, 70e9, 2 * 80 * 8 * 128 * 2 * 2048
    for r, bits in zip(results, (16, 8, 4.15)):
        W = P * bits / 8
        boundary = F * W / (2 * BW * P * 5 - F * K)
        assert float(r.boundary.xreplace(_values(token_cost, r.scenario))) == pytest.approx(boundary, rel=1e-12)
        assert r.closed_form.xreplace(_values(token_cost, r.scenario)) == math.ceil(boundary)
    from planner.outputs.terminal import closed_form_latex

    assert results[0].closed_form_text.startswith("ceil(") and "\\left\\lceil" in closed_form_latex(results[0])


def _values(plan, scenario):
    inputs, _ = plan.input_values(scenario)
    return {plan.symbols[n]: sp.Rational(v.numerator, v.denominator) for n, v in inputs.items()
            if not isinstance(v, bool)}


def test_best_gamma(token_cost, solver):
    (r,) = solver.run(_question(token_cost, "maximize speedup"))
    assert (r.mode, r.target, r.display_value) == ("maximize", "gamma", 6)
    assert r.optimum == pytest.approx(2.4696, abs=0.00005)
    # speedup at gamma = 6 by hand: (1 - 0.8^7) / 0.2 / 1.6
    assert r.optimum == pytest.approx((1 - 0.8 ** 7) / 0.2 / 1.6, rel=1e-12)


def test_solve_result_json_shape(token_cost, solver):
    (r,) = solver.run(_question(token_cost, "speedup = 1"))
    from planner.outputs.terminal import answer_json

    data = answer_json(r)
    for key in ("question", "alias", "target", "mode", "scenario", "value", "unit", "closed_form", "closed_form_latex",
                "method", "roots", "verification", "notes"):
        assert key in data
    json.dumps(data)


# ---- ad hoc questions and other shapes -----------------------------------------------

def test_adhoc_with_set_changes_the_answer(token_cost):
    q = adhoc(token_cost, "alpha", "speedup = 1")
    (r,) = Solver(token_cost).run(q, overrides={"draft_cost": Fraction(1, 2)})
    # (1 - a^5)/(1 - a) = 3  <=>  a^4 + a^3 + a^2 + a - 2 = 0
    (expected,) = [z.real for z in np.roots([1, 1, 1, 1, -2]) if abs(z.imag) < 1e-12 and 0 <= z.real < 1]
    assert r.value == pytest.approx(expected, rel=1e-12)


def test_root_with_units_has_closed_form(token_cost):
    q = adhoc(token_cost, "hbm_bandwidth", "memory_time = 20 ms")
    r = {x.scenario: x for x in Solver(token_cost).run(q, "all")}
    # (140 GB + 32 * 671088640 B) / 20 ms, in TB/s
    assert r["bf16"].display_value == pytest.approx((140e9 + 32 * 671088640) / 0.02 / 1e12, rel=1e-15)
    assert r["bf16"].unit == "TB/s"
    assert r["bf16"].verification.residual == 0 and r["bf16"].verification.exact
    assert r["bf16"].closed_form is not None
    assert float(r["int4_g128"].closed_form.xreplace(_values(token_cost, "int4_g128"))) == r["int4_g128"].value


def test_root_on_the_active_branch_of_max(token_cost):
    # memory-bound branch: (140e9 + b * K) / 3e12 = 0.069036288 s at b = 100 exactly (K = 671088640 B)
    r = Solver(token_cost).answer(adhoc(token_cost, "batch", "batch_step_bound = 69.036288 ms"))
    assert r.value == 100 and r.exact == 100


def test_an_integer_input_is_never_answered_with_a_fraction(token_cost):
    """`batch` is declared integer: a root between two integers is refused (planner solve, planner check,
    the workbook and the report alike), with the thresholds around it in the hint."""
    with pytest.raises(NoRootError) as info:
        Solver(token_cost).answer(adhoc(token_cost, "batch", "batch_step_bound = 60 ms"))
    err = info.value
    want = (0.06 * 3e12 - 140e9) / 671088640  # 59.6...
    assert err.roots == [pytest.approx(want, rel=1e-14)]
    assert "no integer `batch`" in err.message and "not an integer" in err.message
    assert "solve min batch where batch_step_bound >= 60 ms` (60)" in err.hint
    assert "solve max batch where batch_step_bound <= 60 ms` (59)" in err.hint


SMALL = """
x = 2   where x >= 0, x <= 10
n = 3   where integer, n >= 0
m = 3   where integer
y = x^2 - 6*x + 8
z = exp(x) - 3*x
k = sqrt(x) + x
w = (n - 5)^2
"""


@pytest.fixture(scope="module")
def small():
    return planner.loads(SMALL, "small.plan")


@pytest.mark.parametrize("target,where,mode,expected", [
    ("x", "k = 4", "root", ((-1 + math.sqrt(17)) / 2) ** 2),          # numeric path (sqrt)
    ("x", "y = 0 and x > 3", None, None),                             # not an equation: error below
    ("x", "max(x, 3) = 4", "root", 4.0),
    ("x", "y = -1", "root", 3.0),                                    # a double root: no sign change
    ("n", "2^n >= 1000", "min", 10),                                  # numeric integer path
    ("n", "n*n <= 50", "max", 7),
    ("n", "w >= 4 and n >= 5", "min", 7),
    ("m", "m >= -1000", "min", -1000),                                # no lower bound: searched downward
])
def test_small_questions(small, target, where, mode, expected):
    if mode is None:
        with pytest.raises(SolveError, match="needs an equation"):
            Solver(small).answer(adhoc(small, target, where))
        return
    r = Solver(small).answer(adhoc(small, target, where, mode))
    assert r.value == pytest.approx(expected, rel=1e-12)


def test_numeric_root_is_verified(small):
    r = Solver(small).answer(adhoc(small, "x", "k = 4"))
    assert r.method.startswith("numeric")
    assert abs(r.verification.residual) < 1e-12


# ---- errors: named, located, with the values that show why ------------------------------

def test_no_root_reports_both_ends(token_cost, cli):
    with pytest.raises(NoRootError) as info:
        Solver(token_cost).answer(adhoc(token_cost, "alpha", "speedup = 10"))
    err = info.value
    assert err.span.source.name == "--where" and err.span.column == 1
    assert len(err.ends) == 2
    assert err.ends[0][1] == pytest.approx(1 / 1.4 - 10)  # alpha = 0: speedup 1/1.4
    assert any("at alpha = 0" in n for n in err.notes)


def test_several_roots_are_an_error_with_the_roots(small):
    with pytest.raises(MultipleRootsError) as info:
        Solver(small).answer(adhoc(small, "x", "y = 0"))
    assert info.value.roots == [2.0, 4.0]
    assert "2 roots" in info.value.message and "2, 4" in info.value.message


def test_several_numeric_roots(small):
    with pytest.raises(MultipleRootsError) as info:
        Solver(small).answer(adhoc(small, "x", "z = 0"))
    r1, r2 = info.value.roots
    assert math.exp(r1) == pytest.approx(3 * r1) and math.exp(r2) == pytest.approx(3 * r2)


@pytest.mark.parametrize("text,where,first,last", [
    ("y = max(x, 3)", "y = 3", 0, 3),                  # exact path: the branch `3` is active on [0, 3]
    ("y = abs(x - 3) + abs(x - 5)", "y = 2", 3, 5),    # exact path: the sum is 2 all the way from 3 to 5
    ("y = max(sqrt(x), 2)", "y = 2", 0, 4),            # numeric path (sqrt): 2 on [0, 4]
])
def test_a_whole_interval_of_roots_is_an_error_not_a_picked_root(text, where, first, last):
    plan = planner.loads(f"x = 2 where x >= 0, x <= 10\n{text}\n", "interval.plan")
    with pytest.raises(MultipleRootsError) as info:
        Solver(plan).answer(adhoc(plan, "x", where))
    err = info.value
    assert "every `x`" in err.message
    a, b = err.interval
    assert a == pytest.approx(first, abs=0.01) and b == pytest.approx(last, abs=0.01)
    assert err.span is not None


def test_integer_condition_without_a_value_is_a_located_error(cli, plan_file):
    """1 / (n - 3) at n = 3 has no value: the threshold cannot be verified there (was a TypeError)."""
    plan = planner.loads("n = 5 where integer, n >= 0, n <= 10\ny = 1 / (n - 3)\n", "pole.plan")
    with pytest.raises(SolveError) as info:
        Solver(plan).answer(adhoc(plan, "n", "y >= 0", "min"))
    assert "no value at n = 3" in info.value.message
    assert info.value.span is not None and info.value.span.source.name == "--where"
    code, _, err = cli("solve", plan_file("n = 5 where integer, n >= 0\ny = 1 / (n - 3)\nsolve min n where y >= 0\n"))
    assert code == 2 and "no value at n = 3" in err and "internal error" not in err


def test_maximize_with_a_pole_at_the_fixed_inputs_skips_every_value():
    """1 / (a - 2) with a = 2 kept fixed, in the objective itself (was a ZeroDivisionError)."""
    plan = planner.loads("a = 2\nb = 3 where integer\nmaximize b + 1 / (a - 2) over b in 1..3\n", "pole.plan")
    with pytest.raises(SolveError, match="no value of `b`"):
        Solver(plan).run(plan.model.optimizes[0])


def test_maximize_decides_a_float_plateau_exactly():
    """expected_tokens = (1 - a^(g + 1)) / (1 - a) rises with g for every g (each step adds a^(g+1) > 0),
    but past g = 160 floats stop changing: the answer is the last value, said so, not a tie at 162."""
    plan = planner.loads("a = 0.8 where 0 <= a < 1\ng = 4 where integer, g >= 1\n"
                         "e = (1 - a^(g + 1)) / (1 - a)\nmaximize e over g in 1..200\n")
    (r,) = Solver(plan).run(plan.model.optimizes[0])
    assert r.display_value == 200
    notes = " ".join(r.notes)
    assert "tie" not in notes
    assert "keeps rising to the last value of 1..200" in notes
    assert "exact arithmetic tells them apart" in notes


@pytest.mark.parametrize("objective,values,best,ties", [
    ("abs(x - 2.5)", "1..4", 2, "2, 3"),            # minimize: 0.5 at 2 and at 3, exactly
    ("(x - 3)^2", "[1, 5, 2, 4]", 2, "2, 4"),        # 1 at 2 and 4, listed in the values' order
])
def test_minimize_reports_exact_ties(objective, values, best, ties):
    plan = planner.loads(f"x = 1\ny = {objective}\nminimize y over x in {values}\n")
    (r,) = Solver(plan).run(plan.model.optimizes[0])
    assert r.display_value == best
    assert f"tie (exact): the same optimum at {ties}; the first is reported" in r.notes


def test_an_interior_optimum_has_no_edge_note(token_cost):
    (r,) = Solver(token_cost).run(token_cost.model.optimizes[0])
    assert r.display_value == 6 and not any("keeps" in n or "tie" in n for n in r.notes)


def test_not_monotone(small):
    with pytest.raises(NotMonotoneError) as info:
        Solver(small).answer(adhoc(small, "n", "w >= 4", "min"))
    notes = " ".join(info.value.notes)
    assert "0..3" in notes and "7..inf" in notes and "4..6" in notes


def test_no_integer_satisfies(small):
    with pytest.raises(NoRootError, match="no integer `n`"):
        Solver(small).answer(adhoc(small, "n", "n < 0", "min"))


def test_condition_that_does_not_depend_on_the_target(small):
    with pytest.raises(SolveError, match="does not depend on `x`"):
        Solver(small).answer(adhoc(small, "x", "n = 3"))


@pytest.mark.parametrize("target,where,mode,family,fragment,column", [
    ("alpha", "spedup = 1", "root", "unknown-name", "did you mean `speedup`?", 1),
    ("alpha", "speedup = 1 + foo(2)", "root", "unknown-name", "unknown function `foo`", 15),
    ("alpha", "speedup = 1 ms", "root", "unit", "cannot compare", 9),
    ("alpha", "speedup + 1", "root", "type", "needs a condition", 1),
    ("alpha", "speedup = ", "root", "syntax", "unexpected", None),
    ("speedup", "speedup = 1", "root", "override", "formula, not an input", 1),
    ("alhpa", "speedup = 1", "root", "unknown-name", "did you mean `alpha`?", 1),
])
def test_adhoc_errors_are_located(token_cost, target, where, mode, family, fragment, column):
    with pytest.raises(PlanError) as info:
        Solver(token_cost).answer(adhoc(token_cost, target, where, mode))
    err = info.value
    assert err.family == family
    assert fragment in str(err)
    if column is not None:
        assert err.span.column == column


def test_plan_errors_for_questions(plan_file):
    # `solve min` of a real input is the least value where the condition holds (tests/test_least_value.py)
    (row,) = planner.load(plan_file("x = 1 where x >= 0\ny = x * 2\nsolve min x where y >= 3\n")).solve().rows
    assert row.value.number == 1.5
    with pytest.raises(PlanError) as info:
        planner.load(plan_file("x = 1\ny = x * 2\nsolve x where y = 3 as y\n"))
    assert info.value.family == "duplicate"


# ---- checks use question results ---------------------------------------------------------

def test_answers_by_alias(token_cost):
    a = Answers(token_cost)
    assert a.value("crossover_batch", "fp8_e4m3") == 49
    assert float(a.value("best_gamma.value")) == pytest.approx(2.4696, abs=0.00005)
    assert a.unit("best_gamma") == (1, "")


def test_token_cost_checks_pass_including_answers(cli):
    code, out, err = cli("check", TOKEN_COST, "-v")
    assert code == 0, out + err
    assert "crossover_batch == 26 in int4_g128 [int4_g128] = 26" in out


def test_with_override_from_an_answer(cli, plan_file):
    text = TOKEN_COST.read_text(encoding="utf-8") + (
        "check speedup == 1 with alpha = breakeven_alpha\n"
        "check verify_is_compute_bound with batch = crossover_batch for all\n"
        "check speedup ~= 2.4696 with gamma = best_gamma\n")
    code, out, err = cli("check", plan_file(text), "-v")
    assert code == 0, out + err
    assert "speedup == 1 with alpha = breakeven_alpha = 1" in out
    assert out.count("with batch = crossover_batch") == 3


def test_with_override_from_an_answer_of_the_wrong_unit(cli, plan_file):
    text = TOKEN_COST.read_text(encoding="utf-8") + "check speedup > 0 with hbm_bandwidth = crossover_batch\n"
    code, _, err = cli("check", plan_file(text))
    assert code == 2 and "error[unit]" in err


def test_wrong_answer_fails_the_check(cli, plan_file):
    text = TOKEN_COST.read_text(encoding="utf-8") + "check crossover_batch == 97 in bf16\n"
    code, out, _ = cli("check", plan_file(text))
    assert code == 1
    assert "expected 97, got 98" in out


def test_unknown_alias_in_check(plan_file, cli):
    code, _, err = cli("check", plan_file("x = 1\ny = x * 2\nsolve x where y = 3 as root\ncheck rot == 1.5\n"))
    assert code == 2 and "did you mean `root`?" in err


def test_alias_check_with_a_failed_solve(plan_file, cli):
    code, out, _ = cli("check", plan_file("x = 1 where x >= 0\ny = x * 2\nsolve x where y = -3 as root\n"
                                          "check root == 1\n"))
    assert code == 1 and "no `x`" in out


# ---- CLI ------------------------------------------------------------------------------------

def test_cli_solves_every_question(cli):
    code, out, err = cli("solve", TOKEN_COST, "--closed-form")
    assert code == 0, err
    assert "alpha = 0.287108" in out  # as eval, the report and the workbook write it (JSON: every digit)
    assert "[int4_g128] batch = 26" in out and "[bf16] batch = 98" in out
    assert "gamma = 6" in out
    # batch >= F W / (2 BW P (gamma + 1) - F K), W = P bits / 8, K = 2 context head_dim kv_bytes kv_heads layers:
    # worked by hand in test_crossover_closed_form_is_live_over_the_inputs; in plan syntax, over the figures shown
    assert ("closed form  batch = ceil(bits_per_weight * parameters * peak_dense_flops / (16 * (gamma * hbm_bandwidth * "
            "parameters + hbm_bandwidth * parameters - context_tokens * head_dim * kv_bytes_per_element * kv_heads * "
            "layers * peak_dense_flops)))\n") in out  # the terms added, then the one taken away


def test_cli_answers_from_the_numeric_route_without_closed_form(cli):
    code, out, err = cli("solve", TOKEN_COST)
    assert code == 0, err
    assert "alpha = 0.287108" in out  # the same answers as with --closed-form
    assert "[int4_g128] batch = 26" in out and "[bf16] batch = 98" in out
    assert "gamma = 6" in out
    # every answer from the numeric route (`batch >= 1` has no upper bound: found by doubling, then bisection)
    for question in out.split("\n\n")[1:]:  # (the first is a maximize: every value of its range)
        assert "numeric route" in question and "closed form not derived" in question, question
    assert "holds at batch = 98, fails at 97" in out


def test_cli_adhoc(cli):
    code, out, _ = cli("solve", TOKEN_COST, "--for", "batch", "--where", "verify_is_compute_bound", "--min",
                       "-s", "all", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [(r["scenario"], r["value"]) for r in data["results"]] == list(CROSSOVER.items())


def test_cli_csv(cli):
    code, out, _ = cli("solve", TOKEN_COST, "--for", "alpha", "--where", "speedup = 1", "--format", "csv")
    assert code == 0
    assert out.splitlines()[0].startswith("question,alias,scenario,target,mode,value")
    assert "0.28710775230390" in out


@pytest.mark.parametrize("args,fragment", [
    (["--for", "alpha"], "--for and --where go together"),
    (["--for", "alpha", "--where", "spedup = 1"], "did you mean `speedup`?"),
    (["--for", "alpha", "--where", "speedup = 10"], "error[no-root]"),
    (["--min"], "--min needs --for and --where"),
])
def test_cli_errors(cli, args, fragment):
    code, out, err = cli("solve", TOKEN_COST, *args)
    assert code == 2
    assert fragment in err and "Traceback" not in err


def test_cli_failed_question_among_others(cli, plan_file):
    path = plan_file("x = 2 where x >= 0, x <= 10\ny = x^2 - 6*x + 8\nsolve x where y = 0\nsolve x where y = -1\n")
    code, out, err = cli("solve", path)
    assert code == 2
    assert "error[multiple-roots]" in err
    assert "x = 3" in out  # the other question is still answered


# ---- roots that are not integers (radicals, RootOf): every genuine root is kept ----------------
# Each case is a quadratic a*t^2 + b*t + c = 0 in disguise; the true roots come from the
# quadratic formula here, not from planner. The residual of such a root at 60 digits is
# about 1e-57 of the terms' size while both sides are about zero at the root.

BREAKEVEN = """
price = 10
unit_cost = 4
fixed = 1000
congestion = 0.001
volume = 500 where volume >= 0
profit = (price - unit_cost) * volume - fixed - congestion * volume^2
"""


def _quadratic(a, b, c):
    d = math.sqrt(b * b - 4 * a * c)
    return sorted([(-b - d) / (2 * a), (-b + d) / (2 * a)])


@pytest.mark.parametrize("text,target,where,overrides,coefficients", [
    (BREAKEVEN, "volume", "profit = 0", {}, (-0.001, 6, -1000)),        # 171.57 and 5828.43
    (BREAKEVEN, "volume", "profit = 0", {"fixed": 900}, (-0.001, 6, -900)),
    (BREAKEVEN, "volume", "profit = 0", {"fixed": 1100}, (-0.001, 6, -1100)),
    (BREAKEVEN, "volume", "profit = 0", {"fixed": 2000}, (-0.001, 6, -2000)),
    ("p = 5 where p > 0\ny = (p - 4) * (p - 6) - 1\n", "p", "y = 0", {}, (1, -10, 23)),  # 5 +- sqrt(2)
    ("p = 5 where p > 0\ny = 600*p^2 - 6080*p + 15000\n", "p", "y = 0", {}, (600, -6080, 15000)),
    ("p = 5 where p > 0\ny = -600*p^2 + 6080*p - 15000\n", "p", "y = 0", {}, (-600, 6080, -15000)),
    ("p = 5 where p > 0\ny = 600*p^2 - 6080*p\n", "p", "y = -15000", {}, (600, -6080, 15000)),
], ids=["breakeven", "fixed=900", "fixed=1100", "fixed=2000", "5+-sqrt2", "600p^2", "sign-flipped", "rhs"])
def test_irrational_roots_are_all_found(text, target, where, overrides, coefficients):
    plan = planner.loads(text, "quadratic.plan")
    with pytest.raises(MultipleRootsError) as info:
        Solver(plan).answer(adhoc(plan, target, where), None, {k: Fraction(v) for k, v in overrides.items()})
    assert info.value.roots == pytest.approx(_quadratic(*coefficients), rel=1e-12)


@pytest.mark.parametrize("domain,expected", [("p > 5", 5 + math.sqrt(2)), ("p < 5", 5 - math.sqrt(2))])
def test_one_irrational_root_in_the_domain(domain, expected):
    plan = planner.loads(f"p = 5 where {domain}\ny = (p - 4) * (p - 6) - 1\n", "quadratic.plan")
    r = Solver(plan).answer(adhoc(plan, "p", "y = 0"))
    assert r.value == pytest.approx(expected, rel=1e-15)
    assert r.roots == (r.value,)
    assert r.verification.relative < 1e-40  # relative to the size of the terms, not of y (which is 0)


def test_breakeven_cli_lists_both_roots(cli, plan_file):
    code, out, err = cli("solve", plan_file(BREAKEVEN + "solve volume where profit = 0 as breakeven\n"))
    assert code == 2
    assert "2 roots" in err and "171.573" in err and "5,828.43" in err.replace("5828", "5,828")


def test_method_reports_the_degree_of_the_polynomial_solved(token_cost, solver):
    # speedup = 1 has the numerator (1 - a) * (5a^4 + 5a^3 + 5a^2 + 5a - 2): the root solves the quartic
    (r,) = solver.run(_question(token_cost, "speedup = 1"))
    assert "degree 4" in r.method and "degree 5" not in r.method


# ---- `for` picks: one selection per statement, as for checks -------------------------------

def test_question_for_picks_select_like_check():
    from conftest import TWO_AXES

    from planner.questions.checks import check_scenarios

    text = TWO_AXES + """check x == 10 for a=a1, b=b1
solve min q where x >= 4 for a=a1, b=b1 as qq
maximize x over q in [1, 2] for a=a1, b=b1 as mm
solve p where x = 21 for a=a2, b=b2
"""
    plan = planner.loads(text, "picks.plan")
    assert check_scenarios(plan, plan.model.checks[0]) == ["a1/b1"]
    solver = Solver(plan)
    runs = {s.span.text.split()[0] + " " + s.span.text.split()[1]: solver.run(s) for s in solver.questions()}
    assert [r.scenario for r in runs["solve min"]] == ["a1/b1"] and runs["solve min"][0].display_value == 2
    assert [r.scenario for r in runs["maximize x"]] == ["a1/b1"] and runs["maximize x"][0].display_value == 2
    (r,) = runs["solve p"]
    assert r.scenario == "a2/b2" and r.value == 3  # 3 * 7 = 21


# ---- constraints on formulas that depend on the target: skipped before, checked at the answer ----

RATIO = "x = {x} where 0 <= x < 1\nratio = x / (1 - x) where ratio < 10\n"


def test_answer_that_breaks_a_formula_constraint_is_a_located_error():
    from planner.language.errors import ConstraintError

    plan = planner.loads(RATIO.format(x=0.5), "ratio.plan")
    with pytest.raises(ConstraintError) as info:
        Solver(plan).answer(adhoc(plan, "x", "ratio = 15"))  # x = 15/16 makes ratio 15
    err = info.value
    assert err.span.text == "ratio < 10" and err.span.line == 2
    assert "0.9375" in err.message and "15" in err.message


def test_current_value_of_the_target_may_break_a_constraint_that_depends_on_it():
    plan = planner.loads(RATIO.format(x=0.95), "ratio.plan")  # ratio = 19 as written
    r = Solver(plan).answer(adhoc(plan, "x", "ratio = 3"))
    assert r.value == 0.75  # 0.75 / 0.25 = 3


def test_roots_that_break_a_constraint_are_left_out_and_named():
    plan = planner.loads("p = 3 where p > 0\nbig = 10 * p where big < 40\ny = (p - 2) * (p - 6)\n", "p.plan")
    r = Solver(plan).answer(adhoc(plan, "p", "y = 0"))
    assert r.value == 2 and r.roots == (2.0,)
    assert any("p = 6" in n and "big < 40" in n for n in r.notes)


def test_own_condition_of_the_target_is_checked_at_the_answer():
    from planner.language.errors import ConstraintError

    plan = planner.loads("x = 3 where x * x < 10\ny = 2 * x\n", "own.plan")
    with pytest.raises(ConstraintError):
        Solver(plan).answer(adhoc(plan, "x", "y = 8"))  # x = 4: 16 < 10 fails
    assert Solver(plan).answer(adhoc(plan, "x", "y = 6")).value == 3


def test_integer_threshold_checks_constraints_at_the_answer():
    from planner.language.errors import ConstraintError

    text = "n = {n} where integer, n >= 0\ncost = 10 * n where cost <= 50\n"
    plan = planner.loads(text.format(n=3), "n.plan")
    with pytest.raises(ConstraintError) as info:
        Solver(plan).answer(adhoc(plan, "n", "n * n >= 49", "min"))  # 7: cost 70
    assert info.value.span.text == "cost <= 50"
    plan = planner.loads(text.format(n=6), "n.plan")  # cost 60 as written: the question still runs
    assert Solver(plan).answer(adhoc(plan, "n", "n * n >= 4", "min")).value == 2


def test_constraint_broken_by_another_input_still_refuses():
    from planner.language.errors import ConstraintError

    plan = planner.loads("a = 5\nx = 0.5\nr = a * x where a < 3\n", "other.plan")
    with pytest.raises(ConstraintError):
        Solver(plan).answer(adhoc(plan, "x", "r = 1"))


# ---- a long chain compiled without deep nesting (acceptance: SyntaxError "too many nested parentheses") ----

def _growth_chain(n: int) -> str:
    return "unit USD\na0 = 1 USD\ng = 2%\n" + "".join(f"a{i} = a{i - 1} * (1 + g) + 1 USD\n" for i in range(1, n))


def _growth_root(n: int, target: float) -> float:
    """g with a_{n-1} = target, where a_k = (1+g)^k + ((1+g)^k - 1)/g (geometric series), by bisection."""
    k = n - 1
    f = lambda g: (1 + g) ** k + ((1 + g) ** k - 1) / g - target  # noqa: E731
    lo, hi = 1e-9, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("n, target", [(200, 1000)])  # 2,000 lines: correct path, but minutes (left open)
def test_solve_through_a_long_chain(n, target):
    import sys

    from planner.language.limits import RECURSION_LIMIT
    from planner.compute.symbolic import program

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(RECURSION_LIMIT)  # as the CLI does (SymPy's passes recurse once per operator)
    try:
        plan = planner.loads(_growth_chain(n), "big.plan")
        r = Solver(plan).answer(adhoc(plan, "g", f"a{n - 1} = {target} USD"))
        assert r.value == pytest.approx(_growth_root(n, target), rel=1e-9)
        # a 500-deep expression evaluates (the program has no nesting limit)
        x = sp.Symbol("x")
        e = x
        for _ in range(500):
            e = e * (1 + x) + 1
        assert program([x], [e])([np.array([0.0])])[0] == 500.0
    finally:
        sys.setrecursionlimit(limit)


def test_solving_for_a_boolean_input_is_a_located_error():
    plan = planner.loads("flag = true\nx = if(flag, 1, 2)\nsolve flag where x = 2\n", "b.plan")
    (stmt,) = Solver(plan).questions()
    with pytest.raises(PlanError, match="true/false") as info:
        Solver(plan).run(stmt)
    assert "multiple" not in str(info.value) and info.value.span.text == "flag"


# ---- sums over ranges: closed forms for solving -------------------------------------------------

PAYBACK = """
unit USD
price    = 30_000 USD
rent     = 1_100 USD/month
running  = 250 USD/month
rate     = 8%/year            where rate >= 0%/year
lifetime = 36 month           where integer, 1 month <= lifetime <= 120 month
saving   = (rent - running) * 1 month
discount = 1 + rate * 1 month
npv = sum(saving / discount^(m / 1 month) for m in 1 month..lifetime) - price -> USD
solve min lifetime where npv >= 0 as payback
"""


def test_the_smallest_lifetime_at_which_owning_pays_back_has_a_closed_form():
    """A geometric sum: owning pays back once S * (1 - q^n) / r >= P with q = 1/(1 + r), that is
    n >= -ln(1 - P r / S) / ln(1 + r) = 40.37 months at S = 850 USD, P = 30,000 USD, r = 8%/12."""
    plan = planner.loads(PAYBACK, "payback.plan")
    (r,) = Solver(plan).run(plan.model.solves[0])
    rate = 0.08 / 12
    assert r.display_value == math.ceil(-math.log(1 - 30_000 * rate / 850) / math.log(1 + rate)) == 41
    assert r.closed_form is not None and r.closed_form.has(sp.log) and r.closed_form.has(sp.ceiling)
    assert not r.closed_form.has(sp.Sum)
    # written in display units: rate in %/year is a monthly rate of rate/1200, the answer in months
    # n >= -ln(1 - P r / S) / ln(1 + r), r = rate / 1200 (rate in %/year), S = rent - running: in plan syntax
    assert r.closed_form_text == ("ceil(ln((1200 * rent - price * rate - 1200 * running) / (1200 * (rent - running))) "
                                  "/ ln(1 / (rate / 1200 + 1)))")
    values = {plan.symbols[n]: v for n, v in [("price", 30_000), ("rent", 1_100), ("running", 250), ("rate", 8)]}
    assert r.display_form.xreplace(values) == 41
    assert "fails at 40" in r.verification.text
    with_rate = Solver(plan).answer(plan.model.solves[0], overrides={"rate": Fraction(0)})
    assert with_rate.display_value == 36  # no discounting: 30,000 / 850 = 35.3 months


def test_a_polynomial_sum_has_a_closed_form():
    """1 + 2 + ... + n = n(n + 1)/2 >= 5050 first at n = 100 (Gauss)."""
    plan = planner.loads("n = 1 where integer, 1 <= n <= 1000\ngoal = 5050\ntotal = sum(m for m in 1..n)\n"
                         "solve min n where total >= goal\n", "gauss.plan")
    (r,) = Solver(plan).run(plan.model.solves[0])
    assert r.display_value == 100
    assert r.closed_form is not None  # ceiling((sqrt(8 goal + 1) - 1)/2)
    assert r.closed_form.xreplace({plan.symbols["goal"]: 5051}) == 101
    assert "exact" in r.method


def test_a_root_through_a_sum():
    """sum of m * x for m in 1..4 = 10 x = 25 at x = 2.5, exactly."""
    plan = planner.loads("x = 1 where 0 <= x <= 10\ny = sum(m * x for m in 1..4)\n", "root.plan")
    r = Solver(plan).answer(adhoc(plan, "x", "y = 25"))
    assert r.exact == sp.Rational(5, 2)


# ---- answers used in formulas -----------------------------------------------------------------

CHINCHILLA = """
budget = 1e21            "training compute, FLOP"
tokens_per_param = 20
n = 1e9                  where n > 0
flops = 6 * n * (tokens_per_param * n)
solve n where flops = budget as optimal_N
D_opt = tokens_per_param * optimal_N   "training tokens at the compute-optimal size"
scenario big { budget = 1e23 }
"""


def test_an_answer_is_a_quantity_in_formulas_per_scenario():
    """C = 6 N D with D = 20 N: N = sqrt(C / 120), D = 20 N (1e21 FLOP: N = 2.887e9, D = 5.774e10)."""
    plan = planner.loads(CHINCHILLA, "chinchilla.plan")
    assert plan.model.quantities["D_opt"].answer_deps == ("optimal_N",)
    ev = plan.evaluate()
    assert ev.display("D_opt") == pytest.approx(20 * math.sqrt(1e21 / 120), rel=1e-12)
    assert ev.answers["optimal_N"] == pytest.approx(math.sqrt(1e21 / 120), rel=1e-12)
    assert plan.evaluate("big").display("D_opt") == pytest.approx(20 * math.sqrt(1e23 / 120), rel=1e-12)
    name, v, origin = plan.parse_override("tokens_per_param=10")  # --set flows into the question too
    assert plan.evaluate(None, {name: v}, {name: origin}).display("D_opt") == \
        pytest.approx(10 * math.sqrt(1e21 / 60), rel=1e-12)


def test_answers_feed_other_questions_and_checks(cli, plan_file):
    path = plan_file("b = 32 where integer, 1 <= b <= 4096\n"
                     "solve min b where b * 0.2 >= 10 + b * 0.05 as crossover\n"   # 0.15 b >= 10: b >= 66.7
                     "solve min b where b >= crossover * 2 as double\n"
                     "maximize -(b - crossover)^2 over b in 1..200 as near\n"
                     "gap = near.value + near - crossover\n"
                     "check crossover == 67\ncheck double == 134\ncheck near == 67\ncheck gap == 0\n")
    code, out, err = cli("check", path)
    assert code == 0 and "4 passed" in out, err


def test_a_sweep_solves_again_where_it_changes_an_answer():
    from planner.language.lower import lower_values
    from planner.language.source import Source
    from planner.questions.sweep import run

    plan = planner.loads(CHINCHILLA, "chinchilla.plan")
    values = lower_values(Source("v", "[1e21, 1e22, 1e23]"))
    res = run(plan, [("budget", values, None)], ["D_opt"])
    assert list(res.display("D_opt")) == pytest.approx([20 * math.sqrt(c / 120) for c in (1e21, 1e22, 1e23)])
    other = run(plan, [("n", lower_values(Source("v", "[1, 2]")), None)], ["D_opt"])  # n is the question's own
    assert list(other.display("D_opt")) == pytest.approx([20 * math.sqrt(1e21 / 120)] * 2)


def test_a_sweep_point_without_an_answer_is_an_issue():
    from planner.language.lower import lower_values
    from planner.language.source import Source
    from planner.questions.sweep import run

    plan = planner.loads("c = 1\nx = 1 where x >= 0\nsolve x where x^2 = c as r\ny = 2 * r\n", "r.plan")
    res = run(plan, [("c", lower_values(Source("v", "[4, -1]")), None)], ["y"])
    assert res.display("y")[0] == 4 and bool(res.bad[1]) and not res.bad[0]
    assert "the answer `r`: no `x`" in res.issues[0].reason


def test_a_question_through_an_answer_that_moves_with_its_own_input_is_an_error():
    plan = planner.loads("x = 1 where 0 <= x <= 10\ny = 1 where 0 <= y <= 10\n"
                         "solve y where y = 2 * x as a\nsolve x where x + a = 6\n", "loop.plan")
    with pytest.raises(SolveError, match="uses the answer `a`, which changes with `x` itself"):
        Solver(plan).run(plan.model.solves[1])


def test_sensitivity_goes_through_an_answer():
    """D = 20 N = sqrt(20 C / 6): a 1% larger budget or ratio moves D by 0.5%."""
    from planner.questions.sensitivity import sensitivity

    plan = planner.loads(CHINCHILLA, "chinchilla.plan")
    rows = {r.input: r for r in sensitivity(plan, "D_opt").rows}
    assert rows["budget"].elasticity == pytest.approx(0.5, abs=1e-6)
    assert rows["tokens_per_param"].elasticity == pytest.approx(0.5, abs=1e-6)
    assert "n" not in rows  # the question's own input does not move its answer


@pytest.mark.parametrize("tail", ["for all as four", "as four for all", "in s2 as four", "as four in s2"])
def test_as_and_for_in_either_order(tail):
    # A new user wrote `solve ... as NAME for all` and met a syntax error: both orders read the same.
    plan = planner.loads(f"x = 2\ny = x * 3\nscenario s2 {{ x = 5 }}\nsolve x where y = 12 {tail}\n"
                         "check four == 4\n")
    (solve,) = plan.model.solves
    assert solve.alias == "four"
    assert [p.name for p in solve.scenarios] == ["all" if "all" in tail else "s2"]


def test_a_closed_form_says_the_units_it_is_written_in(plan_file, cli):
    """requests_per_day = 2592 * headroom * per_server / peak_ratio holds over the figures as shown
    (op/day, %, op/s: 86,400 s/day * 3 / 100 % = 2,592), not base units: the output says so."""
    path = plan_file("requests_per_day = 40e6 op/day\npeak_ratio = 3\nper_server = 900 op/s\nheadroom = 70%\n"
                     "peak_rate = requests_per_day * peak_ratio -> op/s\n"
                     "solve requests_per_day where peak_rate = 3 * per_server * headroom\n")
    code, out, err = cli("solve", path, "--closed-form")
    assert code == 0, err
    assert "closed form  requests_per_day = 2592 * headroom * per_server / peak_ratio\n" in out
    assert "in units     requests_per_day in op/day; headroom in %; per_server in op/s" in out
    code, out, err = cli("solve", path, "--closed-form", "--format", "json")
    (r,) = json.loads(out)["results"]
    assert r["closed_form_units"] == {"requests_per_day": "op/day", "headroom": "%", "per_server": "op/s"}


def test_a_domain_reads_fractions_and_sympy_numbers_alike():
    # the workbook's Solve sheet asks with fractions (no SymPy imported), the Solver with SymPy's numbers
    import sympy as sp

    from planner.questions.ranges import Domain

    dom = Domain(Fraction(0), True, Fraction(1, 2), False, Fraction(1), "", "x")
    for inside, values in ((True, [Fraction(0), 0, Fraction(49, 100), sp.Integer(0), sp.sqrt(2) / 3]),
                           (False, [Fraction(1, 2), Fraction(-1, 10), 1, sp.Rational(1, 2), sp.sqrt(2) / 2])):
        assert [bool(dom.contains(v)) for v in values] == [inside] * len(values), values
