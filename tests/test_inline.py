"""User functions are inlined in one place (:func:`planner.language.ir.inline`): every route — the
numeric program, exact rationals, SymPy, the diagnosis, intervals, dimensions — expands a call
through it. The figures are worked by hand; the numeric and symbolic routes are compared on these
plans by tests/test_numeric.py too."""

from fractions import Fraction

import pytest

import planner
from planner.language import ir

FUNCTIONS_PLAN = '''
n = 10
rate = 0.5
scale(x, by = 2, plus = by + 1) = x * by + plus
square(x) = x * x
twice(x) = square(x) + square(x)
terms(k) = sum(k * m for m in 1..3)
late(x, k = n) = x + k
a = scale(3)
b = scale(3, 4)
c = scale(3, plus = 0)
d = twice(square(3))
e = sum(terms(m) for m in 1..2)
f = sum(late(m) for m in 1..2)
g = scale(x = rate, by = rate)
'''


def _hand():
    # scale(3) = 3*2 + (2+1); scale(3, 4) = 3*4 + 5; scale(3, plus=0) = 6; twice(9) = 81 + 81
    # e: terms(m) = 6m, over m = 1, 2: 18 (the body's `m` is its own, not the caller's)
    # f: late(m) = m + n (n the plan's 10), over m = 1, 2: 23
    # g: 0.5 * 0.5 + (0.5 + 1) = 1.75
    return {"a": 9, "b": 17, "c": 6, "d": 162, "e": 18, "f": 23, "g": 1.75}


def test_every_call_form_gives_the_hand_worked_figure():
    values = planner.loads(FUNCTIONS_PLAN).eval()
    for name, want in _hand().items():
        assert float(values[name]) == pytest.approx(want, rel=1e-15), name


def test_the_exact_route_inlines_the_same_way():
    from planner.compute.exact import ExactEvaluator

    plan = planner.loads(FUNCTIONS_PLAN)
    model = plan._plan.model if hasattr(plan, "_plan") else plan.model
    inputs = {"n": Fraction(10), "rate": Fraction(1, 2)}
    exact = ExactEvaluator(model, inputs)
    for name, want in _hand().items():
        if name in ("e", "f"):
            continue  # sums over ranges: not the exact evaluator's
        assert exact.expr(model.quantities[name].definition.expr) == Fraction(want), name


def test_the_inliner_reads_each_argument_once_and_a_default_over_the_earlier_parameters():
    plan = planner.loads(FUNCTIONS_PLAN)
    model = plan._plan.model if hasattr(plan, "_plan") else plan.model
    call = model.quantities["a"].definition.expr
    f = model.functions[call.func]
    read: list[str] = []

    def given(arg):
        read.append(arg.span.flat)
        return arg.span.flat

    defaults: list[tuple[str, dict]] = []

    def default(expr, bound):
        defaults.append((expr.span.flat, bound))
        return expr.span.flat

    body, env = ir.inline(f, call, given, default)
    assert body is f.body
    assert read == ["3"]
    assert env == {"x": "3", "by": "2", "plus": "by + 1"}
    assert defaults == [("2", {"x": "3"}), ("by + 1", {"x": "3", "by": "2"})]


def test_a_unit_error_inside_a_function_points_at_the_body_and_names_the_call():
    text = "size = 3 GB\nslow(x) = x + 1 s\nbad = slow(size)\n"
    with pytest.raises(planner.PlanError) as err:
        planner.loads(text)
    shown = str(err.value)
    assert "in this call of `slow`" in shown
    assert "x + 1 s" in shown


def test_a_parameter_read_twice_by_one_step_keeps_the_later_figures_right():
    # `sq(a + 1)` is one register read twice by `x * x`; it was freed twice, so two later steps shared
    # a register and y read 6 (z's value) instead of (3 + 1)^2 + 1 = 17
    values = planner.loads("a = 3\nsq(x) = x * x\ny = sq(a + 1) + 1\nz = a * 2\nw = a * 5\n").eval()
    assert [float(values[n]) for n in ("y", "z", "w")] == [17, 6, 15]
