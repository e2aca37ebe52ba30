"""Closed forms back in the IR (planner.compute.closed.to_ir), and the LaTeX printed from it.

The round trip: the closed forms the shipped plans' questions derive, translated into the IR and run by
the numeric route (the same compiler as every formula of a plan), equal SymPy's own value of the form at
random points, to 1e-12 relative. The LaTeX printer reads only the IR: it imports nothing of SymPy.
"""

from __future__ import annotations

import ast
import random
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from conftest import ROOT, SHEETS

import planner
from planner.compute.closed import NoClosedForm, to_ir
from planner.compute.numeric import compile_program
from planner.language import ir
from planner.language.errors import PlanError
from planner.outputs.latex import formula_equation, formula_latex
from planner.questions.solve import Solver

PLANS = sorted(p for p in [*SHEETS.glob("*.plan"), *(ROOT / "examples").glob("*.plan")]
               if any(line.startswith(("solve ", "maximize ", "minimize ")) for line in p.read_text().splitlines()))


def _forms(path: Path) -> list:
    plan = planner.load(path)
    solver = Solver(plan)
    found = []
    for stmt in solver.questions():
        try:
            results = solver.run(stmt)
        except PlanError:
            continue
        for r in results:
            for form, shown in ((r.closed_form, False), (r.display_form, True)):
                if form is not None and (form, shown) not in found:
                    found.append((form, shown))
    return [(plan, f, shown) for f, shown in found]


FORMS = [pf for path in PLANS for pf in _forms(path)]


def test_the_shipped_plans_derive_closed_forms_to_translate():
    assert len(PLANS) >= 4 and len(FORMS) >= 6, (PLANS, len(FORMS))  # the round trip below has forms to try
    assert any(f.has(sp.Piecewise) for _, f, _ in FORMS)  # llm_cost.plan's tied embeddings: an `if`
    assert any(f.has(sp.ceiling) for _, f, _ in FORMS)  # token_cost.plan's integer batch


@pytest.mark.parametrize("plan, form, shown", FORMS,
                         ids=lambda x: str(x)[:60] if isinstance(x, sp.Basic) else None)
def test_the_ir_of_a_closed_form_has_its_value(plan, form, shown):
    """At points about the plan's own inputs (in base units, or as shown for a form over shown values)."""
    booleans = {n for n, q in plan.quantities.items() if q.is_bool}
    node = to_ir(form, booleans)
    symbols = sorted(form.free_symbols, key=str)
    names = [s.name for s in symbols]
    assert {n.name for n in ir.free_names(node)} <= set(names)  # no name the form does not use
    program = compile_program(plan.model, names, [("out", node)])
    inputs, _ = plan.input_values(None)
    rng = random.Random(38)
    compared = 0
    for _ in range(20):
        exact, floats = {}, []
        for s in symbols:
            if s.name in booleans:
                flag = rng.random() < 0.5
                exact[s], v = sp.Integer(int(flag)), np.bool_(flag)
            else:
                here = Fraction(inputs.get(s.name, 1)) or Fraction(1)
                if shown and s.name in plan.quantities:
                    here /= plan.quantities[s.name].display.scale
                x = float(here) * rng.uniform(0.7, 1.3)
                # the same double in both, to 50 digits in SymPy (a rational to a rational power is slow exactly)
                exact[s], v = sp.Float(repr(x), 50), np.float64(x)
            floats.append(v)
        want = form.xreplace(exact).evalf(30)
        if not (want.is_real and want.is_finite):
            continue  # outside the form's domain (a logarithm of a negative number)
        got = float(program(floats)[0])
        assert got == pytest.approx(float(want), rel=1e-12, abs=1e-300), (form, exact)
        compared += 1
    assert compared >= 10


@pytest.mark.parametrize("expr, tex", [
    (sp.Symbol("a") + sp.Symbol("b") - sp.Symbol("c"), "a + b - c"),
    (sp.Rational(97, 100) * sp.Symbol("price"), r"0.97 \cdot \mathrm{price}"),  # as written, not 97 price / 100
    (sp.Symbol("x") / 3, r"\frac{x}{3}"),
    (sp.Symbol("x") / 16, r"\frac{x}{16}"),  # not 0.0625 x: no plan writes that
    (sp.Rational(1, 3), r"\frac{1}{3}"),
    (-sp.Symbol("a") * sp.Symbol("b") / (2 * sp.Symbol("c")), r"-\frac{a \cdot b}{2 \cdot c}"),
    (sp.Symbol("a") * (sp.Symbol("b") + sp.Symbol("c")), r"a \cdot (b + c)"),
    (sp.sqrt(sp.Symbol("a")), r"\sqrt{a}"),
    (sp.exp(-sp.Symbol("a")), "e^{-a}"),
    (sp.log(sp.Symbol("a")), r"\ln(a)"),
    (sp.floor(sp.Symbol("a") / 7), r"\left\lfloor \frac{a}{7} \right\rfloor"),
    (sp.ceiling(sp.Symbol("a")), r"\left\lceil a \right\rceil"),
    (sp.Max(sp.Symbol("a"), sp.Symbol("b") - 1), r"\max(a, b - 1)"),
    (sp.Abs(sp.Symbol("a") - 1), r"\left|a - 1\right|"),
    (sp.Symbol("alpha") ** 2, r"\alpha^{2}"),
    (sp.Integer(70_000_000_000) * sp.Symbol("n"), r"70{,}000{,}000{,}000 \cdot n"),
])
def test_closed_forms_print_as_the_plan_would_write_them(expr, tex):
    assert formula_latex(to_ir(expr)) == tex


def test_numbers_stay_exact():
    node = to_ir(sp.Rational(1, 3) * sp.Symbol("a") + sp.Rational(-2, 7))
    numbers = [n for n in ir.walk(node) if isinstance(n, ir.Number)]
    assert {n.value for n in numbers} == {Fraction(3), Fraction(2, 7)}  # a / 3 - 2 / 7
    assert all(isinstance(n.value, Fraction) and n.unit is None for n in numbers)


def test_a_piecewise_is_the_if_call_and_a_flag_its_name():
    tied, a, b = sp.symbols("tied a b", real=True)
    form = sp.Piecewise((a / b, sp.Eq(tied, 1)), (a * b, sp.Gt(a, 2)), (a, True))
    node = to_ir(form, {"tied"})
    assert isinstance(node, ir.Call) and node.func == "if"
    assert node.args[0].value == ir.Name("tied", node.args[0].value.span)
    assert formula_latex(node) == (r"\begin{cases} \frac{a}{b} & \text{if } \mathrm{tied} \\ a \cdot b & "
                                   r"\text{if } a > 2 \\ a & \text{otherwise} \end{cases}")
    assert formula_latex(to_ir(sp.Ne(tied, 1), {"tied"})) == r"\text{not}\; \mathrm{tied}"
    assert formula_latex(to_ir(sp.Eq(tied, 1))) == r"\mathrm{tied} = 1"  # not a true/false quantity


@pytest.mark.parametrize("expr, what", [
    (sp.LambertW(sp.Symbol("a")), "the Lambert W function"),
    (sp.pi * sp.Symbol("r") ** 2, "the number pi"),
    (sp.Piecewise((sp.Symbol("a"), sp.Symbol("a") > 0)), "an undefined value"),  # no value where a <= 0
])
def test_a_function_the_language_has_not_is_no_closed_form_to_show(expr, what):
    with pytest.raises(NoClosedForm) as caught:
        to_ir(expr)
    assert caught.value.what == what
    assert str(caught.value).startswith(f"no closed form to show: it uses {what}")


def test_a_wide_piecewise_closed_form_is_one_row_per_case_each_fitting_the_column():
    """issue 39: llm_cost.plan's crossover, a `cases` of two branches, was one 240-character line."""
    peak, bandwidth, tied, layers, ffn, heads, vocab = sp.symbols("peak bandwidth tied layers ffn_size heads vocab")
    inner = layers * (3 * ffn + 2 * heads + 2) + 2 * vocab + 1
    form = sp.Piecewise((peak / bandwidth, sp.Eq(tied, 1)),
                        (peak * inner / (bandwidth * (inner - vocab)), True))
    tex = formula_equation(r"\mathrm{rows}", to_ir(form, {"tied"}))
    assert tex.startswith(r"\mathrm{rows} = \begin{cases} \displaystyle \frac{\mathrm{peak}}{\mathrm{bandwidth}} & \text{if } "
                          r"\mathrm{tied} \\[6pt] \begin{aligned} & ")
    assert tex.endswith(r"\end{aligned} & \text{otherwise} \end{cases}")
    from planner.outputs.latex import visible

    body = tex[tex.index(r"\begin{aligned}"):tex.index(r"\end{aligned}")]
    lines = body.split(r"\\")
    assert len(lines) >= 2 and all(visible(line) <= 55 for line in lines), [visible(x) for x in lines]


# the modules of outputs/ that still import SymPy: the workbook's printer of closed forms and the sheets
# that call it (until they take the IR)
SYMPY_IN_OUTPUTS: set = set()  # none: the report, the terminal and the workbook print from the IR


def test_no_module_under_outputs_imports_sympy_but_the_listed_ones():
    outputs = ROOT / "planner" / "outputs"
    found = set()
    for path in outputs.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(n.split(".")[0] == "sympy" for n in names):
                found.add(path.relative_to(outputs).as_posix())
    assert not found & {"latex.py", "viewmodel.py", "terminal.py", "results.py", "report.py"}, found
    assert found <= SYMPY_IN_OUTPUTS, sorted(found - SYMPY_IN_OUTPUTS)


@pytest.mark.parametrize("path", [ROOT / "examples" / "gpu_buy_vs_rent.plan", ROOT / "examples" / "cloud_queueing.plan"])
def test_every_formula_over_inputs_in_the_ir_has_the_plans_value(path):
    """Each formula over inputs as SymPy holds it (sums, `first` over a month range, a condition chosen by a
    condition), translated into the IR and compiled anew, gives each quantity the value the plan gives it."""
    from planner.compute.evaluation import load
    from planner.compute.symbolic import inline_inputs

    plan = load(path)
    booleans = {n for n, q in plan.quantities.items() if q.is_bool}
    inputs, _ = plan.input_values(None)
    ev = plan.evaluate()
    checked = 0
    for name, q in plan.model.quantities.items():
        if q.is_input:
            continue
        node = to_ir(inline_inputs(plan.model, plan.symbols, plan.exprs, name), booleans)
        names = sorted({n.name for n in ir.free_names(node)})
        assert all(plan.model.quantities[n].is_input for n in names), name
        program = compile_program(plan.model, names, [("out", node)])
        got = program([np.bool_(inputs[n]) if n in booleans else np.float64(float(inputs[n])) for n in names])[0]
        want = ev.values[name]
        if q.is_bool:
            assert bool(got) == bool(want), name
        else:
            assert float(got) == pytest.approx(float(want), rel=1e-12), name
        checked += 1
    assert checked >= 10


READ_BACK = [("examples/saas_unit_economics.plan", "churn_limit"), ("examples/training_run.plan", None),
             ("sheets/token_cost.plan", "crossover_batch"), ("sheets/llm_cost.plan", None),
             ("benchmarks/plans/article2_user.plan", None), ("tests/plans/buy_vs_rent.plan", None)]


@pytest.mark.parametrize("path, alias", READ_BACK)
def test_a_closed_form_read_back_as_a_formula_is_the_answer(path, alias):
    """`planner solve --closed-form`'s text is plan syntax: written into a plan whose inputs are the
    figures as shown (the `in units` line), the formula evaluates to the answer as shown, in every
    scenario (a ceiling's answer exactly)."""
    plan = planner.load(ROOT / path)
    rows = [r for r in plan.solve() if r.closed_form is not None and alias in (None, r.alias)]
    assert rows
    for r in rows:
        figures = plan.eval(None if r.scenario == "base" else r.scenario)
        used = sorted({n for n in re.findall(r"[A-Za-z_][\w.]*", r.closed_form) if n in plan.quantities})
        plain = {n: n.replace(".", "_") for n in used}  # `llama.layers`: an imported quantity, here a plain input
        text = "".join(f"{plain[n]} = {_literal(figures[n])}\n" for n in used)
        text += "answer = " + re.sub(r"[A-Za-z_][\w.]*", lambda m: plain.get(m[0], m[0]), r.closed_form) + "\n"
        got = planner.loads(text, "read_back.plan").eval()["answer"].number
        assert got == pytest.approx(r.value.number, rel=1e-9), (r.question, r.scenario, text)


def _literal(value) -> str:
    v = value.number if hasattr(value, "number") else value
    return ("true" if v else "false") if isinstance(v, bool) else repr(float(v))


def test_a_closed_form_the_plan_language_cannot_write_has_no_text_and_says_why():
    """A closed form through the Lambert W function: no plan text (JSON null), and `planner solve` notes why
    rather than printing SymPy's `LambertW(gamma)`."""
    import dataclasses

    from planner.outputs.views import SolveView

    plan = planner.load(SHEETS / "token_cost.plan")._plan
    stmt = next(s for s in plan.model.solves if s.alias == "crossover_batch")
    real = Solver(plan).answer(stmt, "bf16")
    assert real.closed_form_text.startswith("ceil(") and real.closed_form_unwritten is None
    odd = dataclasses.replace(real, closed_form=sp.LambertW(plan.symbols["gamma"]), display_form=None)
    assert odd.closed_form_text is None and odd.closed_form_ir is None and odd.to_json()["closed_form"] is None
    assert odd.closed_form_unwritten == ("no closed form to show: it uses the Lambert W function, which the plan "
                                         "language has no function for")
    shown = SolveView(plan, [odd]).table(None)
    assert "LambertW" not in shown and "closed form  " not in shown
    assert "      note         no closed form to show: it uses the Lambert W function" in shown


EXACT = """
a = 3
b = 7
x = 1 where x > 0
y = 2 where integer, 0 <= y <= 100
w = 1 where w > 0
solve x where a * x - b = 0 as third
solve min y where 7 * y^2 >= 300 as least
solve w where w^5 - w - 1 = 0 as quintic
"""


def test_the_exact_answer_and_boundary_are_plan_text_that_reads_back():
    """JSON's `exact` and `boundary` are printed from the IR, as `closed_form` is: 3x = 7 gives 7 / 3 (a
    rational stays exact), the least integer y with 7 y^2 >= 300 is 7 (6.547 = sqrt(300 / 7) its boundary,
    10 sqrt(21) / 7 written in plan syntax); a root of a quintic the plan language cannot write is null
    (its polynomial is in the notes), never SymPy's `CRootOf(...)`. Each text read back by planner is the
    value by hand."""
    from planner.outputs.viewmodel import analyse, view_model

    plan = planner.loads(EXACT, "exact.plan")._plan
    rows = {r.alias: r for r in (Solver(plan).answer(s, None) for s in plan.model.solves)}
    got = {alias: (r.to_json()["exact"], r.to_json()["boundary"]) for alias, r in rows.items()}
    assert got == {"third": ("7 / 3", None), "least": ("7", "10 * sqrt(21) / 7"), "quintic": (None, None)}
    assert any("w^5 - w - 1" in n for n in rows["quintic"].notes)
    back = planner.loads(f"t = {got['third'][0]}\nb = {got['least'][1]}\n", "back.plan").eval()
    assert back["t"].number == 7 / 3 and back["b"].number == pytest.approx((300 / 7) ** 0.5, rel=1e-15)
    view = view_model(analyse(plan))
    assert {s["alias"]: s["answers"][0]["exact"] for s in view["solves"]} == {"third": "7 / 3", "least": "7",
                                                                              "quintic": None}
