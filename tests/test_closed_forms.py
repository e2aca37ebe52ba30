"""Closed forms: derived once per question over the symbols, cheaply, within a budget.

The roots are checked against arithmetic written out here: a linear crossover
``k * m / F = W / B`` has the root ``m = F * W / (k * B)``, whichever branch of an
``if`` sets ``k``.
"""

import importlib
from fractions import Fraction

import sympy as sp

import planner
from planner.questions import roots
from planner.questions.solve import Solver

# The crossover of a linear cost with a fixed one, its slope chosen by a true/false input
# (as llm_cost.plan's tied embeddings choose the FLOPs per token).
CROSSOVER = """
tied   = false
W      = 16 "bytes read per step"
B      = 2  where B > 0
F      = 8  where F > 0
slope  = if(tied, 3, 5)
m      = 1 where m > 0
compute = slope * m / F
memory  = W / B
solve m where compute = memory as balance
scenario untied { tied = false }
scenario shared { tied = true }
"""


def _solve(text, scenarios=None):
    plan = planner.loads(text, "t.plan")
    solver = Solver(plan)
    stmt = solver.questions()[0]
    return plan, solver, solver.run(stmt, scenarios)


def _values(plan, scenario):
    inputs, _ = plan.input_values(scenario)
    return {plan.symbols[n]: sp.Integer(int(v)) if isinstance(v, bool) else sp.Rational(v.numerator, v.denominator)
            for n, v in inputs.items()}


def test_one_formula_over_both_branches_of_an_if():
    plan, _, results = _solve(CROSSOVER, ["untied", "shared"])
    by = {r.scenario: r for r in results}
    # m = F * W / (slope * B): 8 * 16 / (5 * 2) untied, 8 * 16 / (3 * 2) shared
    assert by["untied"].exact == sp.Rational(64, 5)
    assert by["shared"].exact == sp.Rational(64, 3)
    form = by["untied"].closed_form
    assert form == by["shared"].closed_form  # the same formula: the scenario changes numbers, not the formula
    assert isinstance(form, sp.Piecewise)
    for name, r in by.items():
        assert form.xreplace(_values(plan, name)) == r.exact


def test_the_search_never_calls_simplify(monkeypatch):
    """``roots_linear`` simplifies its coefficient (2.9 s for one Piecewise on a real plan): a linear
    equation is solved directly instead, and nothing else reaches ``simplify``."""

    def refuse(*args, **kwargs):
        raise AssertionError("simplify called")

    monkeypatch.setattr(sp, "simplify", refuse)
    monkeypatch.setattr(importlib.import_module("sympy.simplify.simplify"), "simplify", refuse)
    monkeypatch.setattr(importlib.import_module("sympy.functions.elementary.piecewise"), "piecewise_simplify", refuse)
    _, _, results = _solve(CROSSOVER, ["untied", "shared"])
    assert all(r.closed_form is not None for r in results)


def test_a_branch_no_declared_value_reaches_is_left_out():
    # alpha < 1 by its constraint, so the `alpha == 1` branch never applies
    text = """
    alpha = 0.5 where 0 <= alpha < 1
    g = 4 where integer, g >= 1
    e = if(alpha == 1, g + 1, 2 * g)
    x = 1 where x > 0
    solve x where e * x = 10
    """
    _, _, (r,) = _solve(text)
    assert r.exact == sp.Rational(10, 8)
    assert not r.closed_form.has(sp.Piecewise)
    g = sp.Symbol("g", real=True)
    assert sp.simplify(r.closed_form - 5 / g) == 0


def test_a_reachable_branch_is_kept():
    text = """
    alpha = 0.5 where 0 <= alpha <= 1
    g = 4 where integer, g >= 1
    e = if(alpha == 1, g + 1, 2 * g)
    x = 1 where x > 0
    solve x where e * x = 10
    """
    plan, _, (r,) = _solve(text)
    assert r.closed_form.has(sp.Piecewise)
    at_one = dict(_values(plan, None))
    at_one[plan.symbols["alpha"]] = sp.Integer(1)
    assert r.closed_form.xreplace(at_one) == sp.Rational(10, 5)


def test_too_many_branches_spend_the_budget_and_the_notes_say_so():
    flags = "\n".join(f"f{i} = false" for i in range(4))
    slope = " + ".join(f"if(f{i}, {i + 2}, 1)" for i in range(4))  # 2^4 = 16 combinations
    text = f"{flags}\nW = 16\nm = 1 where m > 0\nslope = {slope}\nsolve m where slope * m = W\n"
    _, _, (r,) = _solve(text)
    assert r.exact == 4  # 16 / (1 + 1 + 1 + 1)
    assert r.closed_form is None
    assert any("budget" in n and "combinations" in n and "bisects" in n for n in r.notes)
    assert r.verification.residual == 0


def test_the_time_budget_stops_the_search(monkeypatch):
    monkeypatch.setattr(roots, "FORM_SECONDS", -1.0)  # spent before it starts
    _, _, results = _solve(CROSSOVER, ["untied"])
    (r,) = results
    assert r.closed_form is None and r.exact == sp.Rational(64, 5)
    assert any("stopped at its budget" in n for n in r.notes)


def test_closed_forms_are_derived_once_per_question(monkeypatch):
    calls = []
    real = roots.root_forms

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr("planner.questions.solve.root_forms", counting)
    plan = planner.loads(CROSSOVER, "t.plan")
    solver = Solver(plan)
    stmt = solver.questions()[0]
    solver.run(stmt, ["untied", "shared", "untied"])
    Solver(plan).run(stmt, ["shared"])  # another solver on the same plan (build has several) shares it
    assert len(calls) == 1


def test_reachable_reads_the_declared_domain():
    plan = planner.loads("a = 0.5 where 0 <= a < 1\nn = 3 where integer, n >= 1\nflag = true\n", "d.plan")
    s = Solver(plan)
    a, n, flag = (plan.symbols[k] for k in ("a", "n", "flag"))
    half = sp.Rational(1, 2)
    assert s._reachable(sp.Eq(a, 1)) is False
    assert s._reachable(sp.Ne(a, 1)) is True
    assert s._reachable(sp.Eq(a, half)) is None
    assert s._reachable(sp.Lt(a, 1)) is True
    assert s._reachable(sp.Ge(a, 1)) is False
    assert s._reachable(sp.Ge(a, 0)) is True
    assert s._reachable(sp.Gt(a, half)) is None
    assert s._reachable(sp.Eq(n, half)) is False  # an integer input is never 1/2
    assert s._reachable(sp.Ge(n, 1)) is True  # n >= 1 by its constraint
    assert s._reachable(sp.Gt(n, 5)) is None  # unbounded above
    assert s._reachable(sp.Eq(flag, 1)) is None
    assert Fraction(1, 2) == half
