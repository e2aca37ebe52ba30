"""Evaluation compiled from the IR gives the numbers the SymPy route gives, to the last bit.

The SymPy route (``compute/symbolic`` + ``compute/compiled``) is what
planner evaluated with before; the IR route (``compute/canonical`` +
``compute/ircompile``) must generate the same code for every formula it
mirrors: compared here over every shipped plan, every library plan, every
plan written in the tests, and generated formulas, in every scenario.
"""

import ast
import math
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SHEETS

import planner
from planner.compute import canonical as C
from planner.compute.ircompile import compile_outputs
from planner.language.errors import EvaluationError, PlanError

TESTS = Path(__file__).resolve().parent


def _test_plans() -> list[tuple[str, str]]:
    """Every string constant in the tests that loads as a plan (name, text)."""
    found: dict[str, str] = {}
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "=" in node.value \
                    and ("\n" in node.value.strip() or node.value.count("=") == 1):
                found.setdefault(node.value, f"{path.name}:{node.lineno}")
    out = []
    for text, where in found.items():
        try:
            planner.loads(text, where, ROOT)
        except (PlanError, RecursionError, ValueError, TypeError):
            continue
        out.append((where, text))
    return out


def _shipped() -> list[Path]:
    return sorted(SHEETS.glob("*.plan")) + sorted((ROOT / "planner" / "library").rglob("*.plan"))


def _routes(plan):
    """The plan compiled both ways: (SymPy route, IR route without fallback, outputs)."""
    outputs_ir = [(n, plan.model.quantities[n].definition.expr) for n in plan.model.derived]
    outputs_ir += [(f"__constraint{i}", c.condition) for i, (_, c) in enumerate(plan._constraints)]
    outputs_sp = [(n, plan.exprs[n]) for n in plan.model.derived]
    outputs_sp += [(f"__constraint{i}", plan.converter.expr(c.condition)) for i, (_, c) in enumerate(plan._constraints)]
    sympy_route = plan.compile(outputs_sp)  # over the inputs, then the answers formulas use
    answers = [(a, ("s", a)) for a in plan.model.formula_answers]
    ir_route = compile_outputs(plan.model, plan.model.inputs, outputs_ir, answers, sympy_fallback=lambda *a: "None")
    return sympy_route, ir_route


def _blocks(source: str) -> list[list[str]]:
    """The lines of each output: its hoisted subtrees (``_hN = ...``), then its own ``_vN = ...``."""
    blocks, pending = [], []
    for line in source.splitlines()[1:]:
        text = line.strip()
        if text.startswith("_h"):
            pending.append(text)
        elif text.startswith("_v") and " = " in text and not text.endswith("= _in"):
            blocks.append(pending + [text])
            pending = []
    return blocks


def _same_code(plan, where):
    sympy_route, ir_route = _routes(plan)
    fallback = {name for name, _ in ir_route.fallbacks}
    a, b = _blocks(sympy_route.source), _blocks(ir_route.source)
    assert len(a) == len(b) == len(ir_route.outputs)
    for name, x, y in zip(ir_route.outputs, a, b):
        if name in fallback:
            continue
        assert x == y, f"{where}: {name}"
    return sympy_route, ir_route


def _bits(x) -> tuple:
    a = np.asarray(x)
    if a.dtype == bool:
        return ("bool", a.tolist())
    a = a.astype(float)
    return ("float", a.tobytes())


def _same_values(plan, where):
    """Every scenario, evaluated through both routes: the same bits (NaN and the sign of zero too)."""
    sympy_route, _ = _routes(plan)
    for scenario in [None] + plan.scenario_names:
        inputs, _ = plan.input_values(scenario)
        old = dict(zip(sympy_route.outputs, sympy_route(plan.args(inputs))))
        bare = plan.compile_outputs(list(plan.model.derived), divisors=False)  # the same code, no guards
        new = dict(zip(bare.outputs, bare(plan.args(inputs))))
        guarded = plan.run_compiled(inputs)  # the route planner evaluates with
        floats = plan._run_floats(inputs)  # and its numpy-free run, where it runs
        for name in sympy_route.outputs:
            assert _bits(new[name]) == _bits(old[name]), f"{where} [{scenario or 'base'}] {name}"
            for got in (guarded, floats) if floats is not None else (guarded,):
                if _bits(got[name]) != _bits(old[name]):  # only a division by zero SymPy's algebra hid
                    assert math.isnan(got[name]) and math.isfinite(old[name]), f"{where} {name}"
                    from planner.compute.diagnose import diagnose

                    values = {**{n: float(v) for n, v in inputs.items()}, **{n: old[n] for n in plan.model.derived}}
                    assert diagnose(plan.model, name, values).message == "division by zero", f"{where} {name}"


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_plans_compile_to_the_same_code_and_bits(path):
    plan = planner.load(path)
    _, ir_route = _same_code(plan, path.name)
    assert ir_route.fallbacks == []  # every shipped formula is compiled without SymPy
    _same_values(plan, path.name)


def test_the_test_plans_compile_to_the_same_code_and_bits():
    plans = _test_plans()
    assert len(plans) > 100  # the string constants of the tests that are plans
    fallbacks = 0
    for where, text in plans:
        plan = planner.loads(text, where, ROOT)
        _, ir_route = _same_code(plan, where)
        fallbacks += bool(ir_route.fallbacks)
        _same_values(plan, where)
    assert fallbacks <= len(plans) // 20  # the few exotic formulas (sqrt(16), ln(exp(2))) go through SymPy


# ---- generated formulas ---------------------------------------------------------------------

NAMES = ["a", "b", "c", "d", "x1", "y2"]
LITERALS = ["0", "1", "2", "3", "0.1", "0.5", "2.5", "10", "1e3", "0.25", "7", "4.15"]


def _formula(r: random.Random, depth: int) -> str:
    if depth <= 0 or r.random() < 0.25:
        return r.choice(NAMES) if r.random() < 0.6 else r.choice(LITERALS)
    k = r.random()
    sub = lambda: _formula(r, depth - 1)  # noqa: E731
    if k < 0.5:
        return f"({sub()} {r.choice(['+', '-', '*', '/', '*', '+'])} {sub()})"
    if k < 0.58:
        return f"({sub()} ^ {r.choice(['2', '3', '-1', '0.5', '2', 'a'])})"
    if k < 0.63:
        return f"-{sub()}"
    if k < 0.75:
        return f"{r.choice(['max', 'min'])}(" + ", ".join(sub() for _ in range(r.choice([2, 2, 3]))) + ")"
    if k < 0.85:
        f = r.choice(["abs", "sqrt", "exp", "ln", "floor", "ceil", "round"])
        if f == "round" and r.random() < 0.5:
            return f"round({sub()}, {r.choice(['0', '1', '2'])})"
        return f"{f}({sub()})"
    if k < 0.9:
        return f"log({sub()}, {r.choice(['2', '10', 'b'])})"
    cond = r.choice(["flag", "not flag", f"{_formula(r, 1)} > {_formula(r, 1)}",
                     f"{_formula(r, 1)} <= {r.choice(LITERALS)}", f"flag and {_formula(r, 1)} < {_formula(r, 1)}"])
    return f"if({cond}, {sub()}, {sub()})"


def test_generated_formulas_compile_to_the_same_code():
    compared = 0
    for seed in range(150):
        r = random.Random(seed)
        lines = ["a = 1.5", "b = 2", "c = 0.3 where c > 0", "d = 4", "x1 = 3", "y2 = 0.7", "flag = true"]
        lines += [f"q{i} = {_formula(r, 3)}" for i in range(3)]
        lines.append(f"z = {_formula(r, 2)} + q0 * q1 - q2")
        try:
            plan = planner.loads("\n".join(lines) + "\n", f"generated-{seed}.plan")
            _routes(plan)
        except (PlanError, TypeError, ValueError, NotImplementedError):  # not a valid plan, or one SymPy cannot build
            continue
        _same_code(plan, f"seed {seed}")
        compared += 1
    assert compared > 100


def _generated_plans():
    """(seed, its random generator, plan) for 150 generated plans that load and compile (the generator
    goes on to pick the values the test runs them at)."""
    for seed in range(150):
        r = random.Random(seed)
        lines = ["a = 1.5", "b = 2", "c = 0.3", "d = 4", "x1 = 3", "y2 = 0.7", "flag = true"]
        lines += [f"q{i} = {_formula(r, 3)}" for i in range(3)]
        lines.append(f"z = {_formula(r, 2)} + q0 * q1 - q2")
        try:
            plan = planner.loads("\n".join(lines) + "\n", f"generated-{seed}.plan")
            plan.compiled  # noqa: B018
        except (PlanError, TypeError, ValueError, NotImplementedError):
            continue
        yield seed, r, plan


def test_python_floats_give_numpys_bits_or_give_up():
    """The numpy-free run of one evaluation (CompiledPlan.scalar) against numpy scalars, over
    generated formulas and awkward inputs: zeros of both signs, negatives, huge and tiny values."""
    awkward = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-300, 1e300, -1e300, 7.25, 1e-9, 2.0 ** 0.5]
    ran = gave_up = 0
    for seed, r, plan in _generated_plans():
        compiled = plan.compiled
        for _ in range(8):
            values = [r.choice(awkward) if q != "flag" else r.random() < 0.5 for q in plan.model.inputs]
            got = compiled.scalar(values)
            if got is None:
                gave_up += 1
                continue
            want = compiled([np.bool_(v) if isinstance(v, bool) else np.float64(v) for v in values])
            for name, x, y in zip(compiled.outputs, got, want):
                assert _bits(x) == _bits(y), f"seed {seed} {name} {values}"
            ran += 1
    assert ran > 200 and gave_up > 50, (ran, gave_up)  # many run without numpy; 1/0, overflow, nan go to numpy


def _code_run(compiled, values):
    """The generated code's own scalar run (exec'd with the scalar namespace): outputs or the exception."""
    from planner.compute.program import SCALAR, _give_up

    namespace = {"_np": SCALAR, "_approx": _give_up, "_agg": _give_up, "_x": _give_up}
    exec(compiled.code, namespace)  # noqa: S102  (planner's generated code)
    try:
        return namespace["_plan"](tuple(values))
    except Exception as exc:  # noqa: BLE001
        return type(exc)


def _steps_run(compiled, values):
    try:
        return compiled.steps.run(tuple(values))
    except Exception as exc:  # noqa: BLE001
        return type(exc)


def _same_run(a, b) -> bool:
    if isinstance(a, type) or isinstance(b, type):
        return a is b
    return [(type(x), repr(x)) for x in a] == [(type(x), repr(x)) for x in b]


def test_the_steps_run_as_the_code_does_bit_for_bit():
    """One evaluation runs the compiler's steps instead of compiling the code: the same outputs to
    the bit, or the same exception, as the code run with the same scalar namespace, over every
    shipped plan and test plan in every scenario, and generated formulas at awkward inputs."""
    awkward = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-300, 1e300, -1e300, 7.25, 1e-9, 2.0 ** 0.5, True, False]
    compared = 0
    plans = [(str(p), planner.load(p)) for p in _shipped()] + [(w, planner.loads(t, w, ROOT)) for w, t in _test_plans()]
    for where, plan in plans:
        compiled = plan.compiled
        if getattr(compiled, "steps", None) is None:
            assert compiled.fallbacks, where  # no steps only where SymPy printed a formula
            continue
        for scenario in [None] + plan.scenario_names:
            try:
                inputs, _ = plan.input_values(scenario)
            except PlanError:
                continue
            values = [v if isinstance(v, bool) else float(v) for v in (inputs[n] for n in plan.model.inputs)]
            values += [1.0] * (len(compiled.inputs) - len(values))  # answers the formulas use
            assert _same_run(_steps_run(compiled, values), _code_run(compiled, values)), (where, scenario)
            compared += 1
    for seed, r, plan in _generated_plans():
        compiled = plan.compiled
        if getattr(compiled, "steps", None) is None:
            continue
        for _ in range(8):
            values = [r.choice(awkward) if q != "flag" else r.random() < 0.5 for q in plan.model.inputs]
            assert _same_run(_steps_run(compiled, values), _code_run(compiled, values)), (seed, values)
            compared += 1
    assert compared > 1000


NEGATIVE_BASES = "x = 2\nn = 3\nr = (-2.5) ^ x\ns = -2.5 ^ x\nt = (-2) ^ n\nu = (-2) ^ x\n"


def test_a_negative_constant_to_a_fractional_power_is_a_domain_error():
    # as a Python float, (-8.0)**(1/3) is a complex number; numpy's nan is the located error it should be
    plan = planner.loads(NEGATIVE_BASES + "z = (-8) ^ (1/3)\n", "d.plan")
    with pytest.raises(EvaluationError) as err:
        plan.evaluate()
    assert err.value.span.line == 7 and "a negative number to a fractional power" in str(err.value)
    assert planner.loads("v = (-8) ^ 3\nu = (-2) ^ (2 / 2 + 1)\n", "e.plan").evaluate()["u"] == 4.0


def test_a_formula_sympy_prints_leaves_no_steps():
    plan = planner.loads(NEGATIVE_BASES, "n.plan")
    assert plan.compiled.fallbacks and getattr(plan.compiled, "steps", None) is None
    assert plan.evaluate()["r"] == 6.25
    steps = planner.loads("x = 2\ns = x * 3\n", "n.plan").compiled.steps
    assert steps.run((2.0,)) == (6.0,)


def test_eval_of_a_plain_plan_does_not_import_numpy():
    plan = planner.load(SHEETS / "token_cost.plan")
    for scenario in [None] + plan.scenario_names:
        inputs, _ = plan.input_values(scenario)
        assert plan._run_floats(inputs) is not None, scenario
    code = ("import sys\nfrom planner.cli import main\ncode = main(['--no-cache', 'eval', "
            "'sheets/token_cost.plan', '--scenario', 'all'])\n"
            "assert 'numpy' not in sys.modules, 'numpy imported'\nsys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# ---- what SymPy's canonical forms change, reproduced ---------------------------------------------

@pytest.mark.parametrize("formula, code", [
    ("0.1 * x * 3", "(0.3*_v0)"),  # numbers folded exactly: 3/10, not 0.1 * 3 in floats
    ("x * 0.1 * 3 + x", "(1.3*_v0)"),  # like terms collected
    ("(x + 1) / 3", "(1/3 + (1.0*_v0/(3.0)))"),  # a number distributed over a sum
    ("x / x", "1.0"),
    ("x * x", "(_v0**2.0)"),
    ("-(x - y)", "(_v1 - _v0)"),
    ("floor(x + 2)", "(2.0 + _np.floor(_approx(_v0)))"),
    ("max(x, x + 1)", "(1.0 + _v0)"),  # SymPy decides it
    ("max(y, x)", "_np.maximum(_v0, _v1)"),  # sorted
    ("-2.5 ^ x", "(-(2.5**_v0))"),
])
def test_sympys_rewrites(formula, code):
    plan = planner.loads(f"x = 2\ny = 3\nq = {formula}\n", "r.plan")
    compiled = plan.compile_outputs(["q"], constraints=False, divisors=False)
    assert compiled.fallbacks == []
    line = compiled.source.splitlines()[-2].split(" = ", 1)[1]
    expected = code.replace("1/3", repr(1 / 3))
    assert line == expected
    _same_code(plan, formula)


def test_a_negative_base_is_raised_as_written():
    # (-2.5)^2 is 6.25 and -2.5^2 is -(2.5^2), as in the workbook (where -2.5^2 would be 6.25)
    plan = planner.loads(NEGATIVE_BASES, "p.plan")
    ev = plan.evaluate()
    assert (ev["r"], ev["s"], ev["t"], ev["u"]) == (6.25, -6.25, -8.0, 4.0)
    compiled = plan.compiled  # (through SymPy's printer: the mirror leaves negative bases to it)
    assert "(_np.float64(-2.5)**_v0)" in compiled.source and "(_np.float64(-2.0)**_v1)" in compiled.source
    by_name = dict(zip(compiled.outputs, compiled([np.array([2.0, 3.0]), np.array([3.0, 3.0])])))
    assert by_name["r"].tolist() == [6.25, -15.625] and by_name["t"].tolist() == [-8.0, -8.0]


def test_exact_decimals_reach_the_threshold_exactly():
    # 70e9 * 4.15 / 8 is 36312500000 exactly (4.15 is 83/20): the literal folds before any float is made
    plan = planner.loads("p = 70e9\nw = p * 4.15 / 8\nv = 70e9 * 4.15 / 8\n", "e.plan")
    ev = plan.evaluate()
    assert ev["v"] == 36312500000.0
    assert Fraction(ev["v"]) == Fraction(70 * 10**9) * Fraction(83, 20) / 8


def test_what_is_not_mirrored_goes_through_sympy_with_the_same_result():
    plan = planner.loads("x = 2\nr = sqrt(16) + x\ns = x * 2\n", "f.plan")
    compiled = plan.compiled
    assert [name for name, _ in compiled.fallbacks] == ["r"]
    assert plan.evaluate()["r"] == 6.0
    _same_values(plan, "f.plan")


def test_located_evaluation_errors_are_the_same():
    plan = planner.loads("x = 0\nd = 1 / x\ny = -1\nr = sqrt(y) + 1\n", "e.plan")
    with pytest.raises(EvaluationError) as err:
        plan.evaluate()
    assert err.value.message == "division by zero" and err.value.span.text == "x"
    with pytest.raises(EvaluationError) as err:
        plan.evaluate(overrides={"x": Fraction(2)})
    assert "square root of a negative number" in err.value.message and err.value.span.text == "y"


def test_canonical_order_is_sympys():
    x, y = C.sym("x"), C.sym("y")
    two = C.num(2)
    assert C.add(y, x) == ("+", (x, y))
    assert C.mul(y, two, x) == ("*", (two, x, y))
    assert C.mul(x, x) == ("^", x, two)
    assert C.add(C.mul(two, x), x) == C.mul(C.num(3), x)
    assert C.power(C.mul(two, x), C.NEG_ONE) == ("*", (C.num(Fraction(1, 2)), ("^", x, C.NEG_ONE)))
    with pytest.raises(C.Unsupported):
        C.power(two, C.HALF)  # sqrt(2): SymPy keeps it symbolic; left to SymPy
    assert math.isclose(float(Fraction(1, 3)), 1 / 3)


@pytest.mark.parametrize("argv", [
    ["eval", "sheets/token_cost.plan", "--scenario", "all"],
    ["eval", "sheets/llm_cost.plan", "--scenario", "all", "-f", "json"],
    ["sweep", "sheets/token_cost.plan", "alpha=0..0.9 count 10"],
    ["check", "sheets/gpu_compare.plan"],
])
def test_evaluating_commands_do_not_import_sympy(argv):
    code = ("import sys\nfrom planner.cli import main\ncode = main(%r)\n"
            "assert 'sympy' not in sys.modules, 'sympy imported'\nsys.exit(code)\n" % (argv,))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("text", [
    "x = 1\ny = " + "".join(f"if(x > {i}, {i}, " for i in range(120)) + "0" + ")" * 120 + "\n",  # 120 tiers
    "x = 1.5\ny = x" + " ^ x" * 60 + "\n",  # x^(x^(x^...)) 60 deep
])
def test_deep_formulas_are_hoisted_as_the_sympy_route_hoists(text):
    plan = planner.loads(text, "deep.plan")
    _same_code(plan, "deep.plan")
    _same_values(plan, "deep.plan")
    assert "_h1 = " in plan.compiled.source and plan.compiled.fallbacks == []


# ---- divisions SymPy's algebra hides -------------------------------------------------------------

HIDDEN = "z = 2\ny = 3\nq = 0 / z\nr = y * 0 / z\ns = z / z\nm = y * z / z\nf(a, b) = a * b / b\ng = f(y, z)\n"


@pytest.mark.parametrize("name, at", [("q", "z"), ("r", "z"), ("s", "z"), ("m", "z"), ("g", "b")])
def test_a_division_by_zero_that_sympy_cancels_is_still_an_error(name, at):
    # A Python script raises ZeroDivisionError on each of these at z = 0; SymPy's Mul(0, 1/z) is 0,
    # z/z is 1 and y*z/z is y for every z, so the canonical forms alone would print 0, 1 and 3.
    lines = [ln for ln in HIDDEN.splitlines() if ln.split(" ")[0] not in {"q", "r", "s", "m", "g"} - {name}]
    plan = planner.loads("\n".join(lines) + "\n", "hidden.plan")
    assert plan.evaluate()[name] == {"q": 0.0, "r": 0.0, "s": 1.0, "m": 3.0, "g": 3.0}[name]  # z = 2: as before
    with pytest.raises(EvaluationError) as err:
        plan.evaluate(overrides={"z": Fraction(0)})
    assert err.value.message == "division by zero" and err.value.span.text == at
    assert f"`{at}` is 0" in err.value.label


def test_a_division_in_a_branch_not_taken_is_no_error():
    plan = planner.loads("z = 0\ny = 3\nt = if(z > 0, y * z / z, 0)\nu = if(z == 0, 1, 0 / z)\n", "b.plan")
    assert (plan.evaluate()["t"], plan.evaluate()["u"]) == (0.0, 1.0)
    assert plan.evaluate(overrides={"z": Fraction(4)})["t"] == 3.0
    with pytest.raises(EvaluationError):  # taken: the same division is an error
        planner.loads("z = 0\ny = 3\nt = if(z >= 0, y * z / z, 0)\n", "b.plan").evaluate()


def test_hidden_divisions_keep_every_other_value_to_the_bit(tmp_path):
    # the guard only turns a value whose division divides by zero into nan; elsewhere the compiled
    # code returns the same floats with and without it
    plan = planner.loads(HIDDEN + "w = (y + 0.1) / (z + 0.3) * z / z\n", "h.plan")
    bare = plan.compile_outputs(list(plan.model.derived), constraints=False, divisors=False)
    guarded = plan.compile_outputs(list(plan.model.derived), constraints=False)
    for z in (2.0, 0.5, -3.0, 1e-300):
        args = [np.float64(z) if n == "z" else np.float64(3.0) for n in plan.model.inputs]
        assert [_bits(x) for x in bare(args)] == [_bits(x) for x in guarded(args)]


def test_a_sweep_reports_the_hidden_division_at_its_point(cli, tmp_path):
    path = tmp_path / "h.plan"
    path.write_text("z = 1\ns = z / z\nw = 1 / z\n", encoding="utf-8")
    code, out, _ = cli("--no-cache", "sweep", path, "z=0..2", "-f", "csv")
    rows = out.strip().splitlines()
    assert rows[1].startswith("sweep z in 0..2,base,0.0,nan,inf,")  # s: nan, w: inf as before
    assert "s: nan: division by zero at `z` (`z` is 0)" in rows[1]
    assert rows[2] == "sweep z in 0..2,base,1.0,1.0,1.0," and rows[3] == "sweep z in 0..2,base,2.0,1.0,0.5,"


def test_only_divisions_the_value_hides_are_guarded():
    # `y / z` is inf at z = 0 by itself: no guard, no cost (a sweep's inner loop stays as it was);
    # `max(-y / z, 1 / z - y)` is 1 there (max(-inf, 1)), so it is guarded, once for its two divisions by z
    plan = planner.loads("z = 2\ny = 3\nw = y / z + y\nm = max(-y / z, 1)\nn = max(-y / z, y - y / z)\n"
                         "d = 0 / z\n", "g.plan")
    lines = plan.compiled.source.splitlines()
    guarded = [ln.split(" = ")[0].strip() for ln in lines if "_np.where(" in ln]
    ids = {n: f"_v{i}" for i, n in enumerate(plan.model.inputs + plan.compiled.outputs)}
    assert sorted(guarded) == sorted([ids["m"], ids["n"], ids["d"]])
    assert sum(ln.count("== 0.0") for ln in lines if ln.strip().startswith(ids["n"] + " = _np.where")) == 1
    with pytest.raises(EvaluationError) as err:
        plan.evaluate(overrides={"z": Fraction(0)})
    assert err.value.span.text == "z"
    assert plan.evaluate(overrides={"z": Fraction(-1)})["m"] == 3.0  # max(3, 1)
