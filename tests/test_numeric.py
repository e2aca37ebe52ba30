"""The one numeric route (:mod:`planner.compute.numeric`) against the symbolic one.

Every formula of every shipped plan, library plan, plan written in the tests and generated plan is
computed twice: by the program compiled from the IR (what planner reports), and by the program
compiled from its SymPy expression (:func:`planner.compute.symbolic.program`: SymPy's algebra
first, then the same runtime). They agree to 1e-12 relative in every scenario, except where the
formula as written divides by zero and SymPy's algebra cancelled the division (``z / z`` is 1 for
SymPy): there the numeric route reports the division, as a Python script would. Where terms
cancel (``0.1 + 0.2 - 0.3``), what is left is compared within 1e-12 of the inputs' size.
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
import sympy as sp
from conftest import ROOT, SHEETS

import planner
from planner.compute import cache
from planner.compute.numeric import compile_program
from planner.compute.runtime import Body, Program
from planner.compute.symbolic import inline_inputs, program as sympy_program
from planner.language.errors import EvaluationError, PlanError

TESTS = Path(__file__).resolve().parent
REL = 1e-12


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


def _shipped() -> list[Path]:
    return sorted(SHEETS.glob("*.plan")) + sorted((ROOT / "planner" / "library").rglob("*.plan"))


def _bits(x) -> tuple:
    a = np.asarray(x)
    if a.dtype == bool:
        return ("bool", a.tolist())
    return ("float", a.astype(float).tobytes())


def _close(x, y, floor: float = 0.0) -> bool:
    """Equal to 1e-12 relative, or within ``floor`` (what cancelling terms of that size leaves)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype == bool or y.dtype == bool:
        return bool(np.all(x.astype(bool) == y.astype(bool)))
    x, y = x.astype(float), y.astype(float)
    same = (x == y) | (np.isnan(x) & np.isnan(y))
    with np.errstate(invalid="ignore"):
        return bool(np.all(same | (np.abs(x - y) <= REL * np.maximum(np.abs(x), np.abs(y)) + floor)))


def _agree(plan, where) -> int:
    """Every derived quantity of ``plan``, every scenario: the IR's program against SymPy's."""
    from planner.compute.diagnose import diagnose

    names = list(plan.model.derived)
    try:
        symbols = plan.symbols.all()
        inputs_sym = [symbols[n] for n in plan.model.inputs]
        answers_sym = [plan.symbols.answers[a] for a in plan.model.formula_answers]
        exprs = [inline_inputs(plan.model, plan.symbols, plan.exprs, n) for n in names]
        # SymPy's zoo (`y / 0`: an infinity of no sign) runs as nan; the plan's float has a sign
        names, exprs = [n for n, e in zip(names, exprs) if not e.has(sp.zoo)], [e for e in exprs if not e.has(sp.zoo)]
        via_sympy = sympy_program(inputs_sym + answers_sym, exprs)
    except (NotImplementedError, TypeError):  # a formula SymPy cannot build (a comparison with zoo)
        return 0
    compared = 0
    for scenario in [None] + plan.scenario_names:
        try:
            inputs, _ = plan.input_values(scenario)
        except PlanError:
            continue
        args = plan.args(inputs)
        size = [abs(float(v)) for v in inputs.values() if not isinstance(v, bool) and math.isfinite(float(v))]
        floor = REL * max(size + [1.0])  # `a + b - 0.3` is 5.6e-17 in floats, 0 in SymPy's rationals
        got = plan.run_compiled(inputs)
        want = dict(zip(names, via_sympy(args)))
        for name in names:
            if _close(got[name], want[name], floor):
                compared += 1
                continue
            # only a division by zero that SymPy's algebra cancelled
            assert math.isnan(got[name]) or math.isinf(got[name]), f"{where} [{scenario or 'base'}] {name}"
            values = {**{n: float(v) for n, v in inputs.items()}, **{n: float(got[n]) for n in names}}
            assert diagnose(plan.model, name, values).message == "division by zero", f"{where} {name}"
    return compared


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_plans_agree_with_sympy(path):
    plan = planner.load(path)
    assert _agree(plan, path.name) >= len(plan.model.derived) or not plan.model.derived


def test_the_test_plans_agree_with_sympy():
    plans = _test_plans()
    assert len(plans) > 100  # the string constants of the tests that are plans
    compared = 0
    for where, text in plans:
        compared += _agree(planner.loads(text, where, ROOT), where)
    assert compared > 400


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


def test_generated_formulas_agree_with_sympy():
    compared = 0
    for seed, _, plan in _generated_plans():
        compared += _agree(plan, f"seed {seed}") > 0
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
    """The numpy-free run of one evaluation (Program.scalar) against numpy scalars, over
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


def test_a_program_is_data_the_cache_checks():
    plan = planner.loads("x = 2\ny = x * 3 + 1\nz = sum(k for k in 1..5) * y\n", "d.plan")
    program = plan.compiled
    assert program.valid() and program.aggregates
    assert program([np.float64(2.0)])[-1] == 105.0
    import pickle

    again = pickle.loads(pickle.dumps(program))
    assert again.valid() and again([np.float64(2.0)])[-1] == 105.0
    # what a cache entry written by someone else could hold: refused, never run
    bad = [
        Program(program.inputs, program.outputs, program.size, program.consts,
                (("__import__", 0, (0, 0)),) + program.steps, program.results, True),
        Program(program.inputs, program.outputs, program.size, program.consts,
                (("+", 10**6, (0, 0)),), program.results, False),
        Program(program.inputs, program.outputs, program.size, [(0, "os.system")], program.steps,
                program.results, True),
        Program(program.inputs, program.outputs, program.size, program.consts,
                (("agg", 1, ("sum", 0, 0, 1.0, 5, "code")),), program.results, True),
    ]
    for p in bad:
        assert not p.valid()
    assert cache._Unpickler.find_class(cache._Unpickler(__import__("io").BytesIO(b"")),
                                       "planner.compute.runtime", "Body") is Body
    with pytest.raises(Exception):
        cache._Unpickler(__import__("io").BytesIO(b"")).find_class("planner.compute.numeric", "compile_program")


def test_an_output_named_like_a_quantity_is_that_quantity_from_then_on():
    plan = planner.loads("x = 2\ny = x * 3\n", "o.plan")
    program = compile_program(plan.model, ["x"], [("y", plan.model.quantities["y"].definition.expr),
                                                  ("twice", planner.loads("x = 1\nt = y + y\ny = 1\n", "t.plan")
                                                   .model.quantities["t"].definition.expr)])
    assert [float(v) for v in program([np.float64(2.0)])] == [6.0, 12.0]


NEGATIVE_BASES = "x = 2\nn = 3\nr = (-2.5) ^ x\ns = -2.5 ^ x\nt = (-2) ^ n\nu = (-2) ^ x\n"


def test_a_negative_constant_to_a_fractional_power_is_a_domain_error():
    # as a Python float, (-8.0)**(1/3) is a complex number; numpy's nan is the located error it should be
    plan = planner.loads(NEGATIVE_BASES + "z = (-8) ^ (1/3)\n", "d.plan")
    with pytest.raises(EvaluationError) as err:
        plan.evaluate()
    assert err.value.span.line == 7 and "a negative number to a fractional power" in str(err.value)
    assert planner.loads("v = (-8) ^ 3\nu = (-2) ^ (2 / 2 + 1)\n", "e.plan").evaluate()["u"] == 4.0


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


def test_located_evaluation_errors_are_the_same():
    plan = planner.loads("x = 0\nd = 1 / x\ny = -1\nr = sqrt(y) + 1\n", "e.plan")
    with pytest.raises(EvaluationError) as err:
        plan.evaluate()
    assert err.value.message == "division by zero" and err.value.span.text == "x"
    with pytest.raises(EvaluationError) as err:
        plan.evaluate(overrides={"x": Fraction(2)})
    assert "square root of a negative number" in err.value.message and err.value.span.text == "y"


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
def test_deep_formulas_agree_with_sympy(text):
    plan = planner.loads(text, "deep.plan")
    assert _agree(plan, "deep.plan") > 0


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


def test_a_sweep_reports_the_hidden_division_at_its_point(cli, tmp_path):
    path = tmp_path / "h.plan"
    path.write_text("z = 1\ns = z / z\nw = 1 / z\n", encoding="utf-8")
    code, out, _ = cli("--no-cache", "sweep", path, "z=0..2", "-f", "csv")
    rows = out.strip().splitlines()
    assert rows[1].startswith("sweep z in 0..2,base,0.0,nan,inf,")  # s: nan, w: inf as before
    assert "s: nan: division by zero at `z` (`z` is 0)" in rows[1]
    assert rows[2] == "sweep z in 0..2,base,1.0,1.0,1.0," and rows[3] == "sweep z in 0..2,base,2.0,1.0,0.5,"


def test_a_solve_over_a_product_whose_closed_form_is_a_factorial(cli, plan_file):
    # product(6 / i for i in 1..n) is 6^n / n!: 2.10 at n = 13, 0.899 at n = 14, so the least n below 1 is 14
    path = plan_file("a = 6\nn = 8 where integer, 1 <= n <= 64\nt = product(a / i for i in 1..n)\n"
                     "solve min n where t < 1 as small\ncheck small == 14\n")
    code, out, err = cli("--no-cache", "check", path)
    assert code == 0 and "1 passed" in out, out + err



PREFIX_PLAN = """x = 0.5
horizon = 30 where integer, 1 <= horizon <= 40
cash(n) = sum(2 * (1 - x)^(m - 1) for m in 1..n)
first_over = first(n for n in 1..horizon where cash(n) >= 1.9 / x)
peak = max(cash(n) - 0.1 * n for n in 1..horizon)
tilted(n) = sum(x^(m / n) for m in 1..n)
peak_tilted = max(tilted(n) - 0.1 * n for n in 1..horizon)
"""


def test_an_inner_sum_resumes_from_the_outer_terms_before_to_the_last_bit(monkeypatch):
    """``cash(n)`` inside ``first(n ...)`` reads ``n`` only as its end: run over many points (one
    term per block), each outer term resumes the inner sum where the one before stopped (a prefix
    sum, not a triangle of terms). Its figures are the same bits as running every inner sum from its
    start, and what a hand loop gives; ``tilted(n)`` reads ``n`` in its terms and never resumes."""
    from planner.compute import runtime

    plan = planner.loads(PREFIX_PLAN, "prefix.plan")
    xs = np.linspace(0.05, 0.95, runtime.BLOCK + 7)  # wider than a block: one term at a time
    names = ["first_over", "peak", "peak_tilted"]
    real = runtime._resumable

    def run(resume: bool, only=names):
        resumed = []

        def spy(saved, reads, step):
            ok = real(saved, reads, step) and resume
            resumed.append(ok)
            return ok

        monkeypatch.setattr(runtime, "_resumable", spy)
        program = plan.compile_outputs(only, constraints=False)
        return dict(zip(program.outputs, program(plan.args({"x": xs, "horizon": 30.0})))), sum(resumed)

    got, resumed = run(True)
    fresh, none = run(False)
    assert resumed >= 2 * 28 and none == 0  # outer terms 2..30 of `first_over` and `peak` each resumed `cash`
    assert run(True, ["peak_tilted"])[1] == 0
    for name in names:
        assert _bits(got[name]) == _bits(fresh[name]), name

    def by_hand(x: float) -> tuple[float, float, float]:
        over, peak, tilted = math.nan, -math.inf, -math.inf
        for n in range(1, 31):
            cash = sum(2 * (1 - x) ** (m - 1) for m in range(1, n + 1))
            if math.isnan(over) and cash >= 1.9 / x:
                over = float(n)
            peak = max(peak, cash - 0.1 * n)
            tilted = max(tilted, sum(x ** (m / n) for m in range(1, n + 1)) - 0.1 * n)
        return over, peak, tilted

    assert by_hand(0.1)[0] == 29.0  # 1 - 0.9^n >= 0.95 first at n = 29 (0.9^28 = 0.0523, 0.9^29 = 0.0471)
    assert math.isnan(by_hand(0.05)[0])  # 0.95^30 = 0.215: never within 30 terms
    found = 0
    for i in range(0, len(xs), 997):
        want = by_hand(float(xs[i]))
        assert _bits(got["first_over"][i]) == _bits(want[0]), xs[i]
        found += not math.isnan(want[0])
        assert _close(got["peak"][i], want[1]) and _close(got["peak_tilted"][i], want[2]), xs[i]
    assert found > 30


# ---- a condition that compares a branch ----------------------------------------------------------

BRANCHED_CONDITION = """a = 2
b = 3
y = if(if(a > 1, a, b) > 2, 1, 0)
z = if(max(a, b) > 2 and if(b > a, b, a) < 3, 5, 7)
scenario low { a = 0.5 }
scenario high { a = 4 }
"""


def test_a_condition_comparing_a_branch_agrees_with_sympy():
    # SymPy folds `if(a > 1, a, b) > 2` into ITE(a > 1, a > 2, b > 2), a boolean the program compiles too
    plan = planner.loads(BRANCHED_CONDITION, "branched.plan")
    assert [plan.evaluate(scenario=s)["y"] for s in (None, "low", "high")] == [0.0, 1.0, 1.0]
    assert _agree(plan, "branched.plan") == 2 * 3


def test_a_division_by_zero_sympy_kept_in_a_branch_is_nan_there():
    # `x / if(x > 0, 1, 0)`: SymPy's Piecewise((x, x > 0), (zoo, True)); zoo is no sp.Number
    x = sp.Symbol("x")
    run = sympy_program([x], [sp.Piecewise((x, x > 0), (sp.zoo, True))])
    assert run([2.0])[0] == 2.0 and math.isnan(run([-1.0])[0])
