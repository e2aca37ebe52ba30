"""Every answer from the numeric route (planner/questions/fast.py): `planner check` answers the
questions its checks use without SymPy, agrees with the Solver, and says why there is no answer (no
root, several, not monotone, no smallest) as located errors rather than guessing; SymPy derives a
closed form only where one is shown, and its failure leaves the numeric answer."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import planner
from planner.language.errors import PlanError
from planner.questions import fast
from planner.questions.solve import Solver

ROOT = Path(__file__).resolve().parent.parent
USER_PLAN = ROOT / "benchmarks" / "plans" / "article2_user.plan"
PLANS = sorted((ROOT / "sheets").glob("*.plan")) + sorted((ROOT / "examples").glob("*.plan")) + [USER_PLAN]


def _without_sympy(*argv: str, timeout=None, more=()) -> subprocess.CompletedProcess:
    """``planner --no-cache ARGV`` (then each of ``more``) in one fresh interpreter, which fails if a
    command imported SymPy or did not succeed."""
    code = ("import sys\nfrom planner.cli import main\nfor argv in %r:\n    code = main(['--no-cache', *argv])\n"
            "    assert 'sympy' not in sys.modules, ('sympy imported', argv)\n    assert code == 0, argv\n"
            % ([list(argv), *map(list, more)],))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_check_of_a_plan_nobody_tuned_does_not_import_sympy():
    proc = _without_sympy("check", str(USER_PLAN))
    assert "53 passed, 0 failed" in proc.stdout


def test_solve_of_that_plan_does_not_import_sympy_and_closed_form_does():
    code = ("import sys\nfrom planner.cli import main\ncode = main(['--no-cache', 'solve', %r%s])\n"
            "print('sympy' in sys.modules)\nsys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", code % (str(USER_PLAN), "")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("False") and "[base] context = 8,109" in proc.stdout
    assert "closed form not derived" in proc.stdout
    proc = subprocess.run([sys.executable, "-c", code % (str(USER_PLAN), ", '--closed-form'")], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("True") and "[base] context = 8,109" in proc.stdout
    assert "closed form  group_size = " in proc.stdout


def test_the_plans_answers_come_from_the_fast_route():
    plan = planner.load(USER_PLAN)
    for stmt in plan.model.solves:
        for scenario in ["llama3_70b/h100", "llama3_8b/a100"]:
            assert fast.answer(plan, stmt, scenario) is not None, (stmt.alias, scenario)


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.name)
def test_fast_answers_agree_with_the_solver(path):
    plan = planner.load(path)
    solver = Solver(plan)
    seen = 0
    for stmt in plan.model.solves:
        for scenario in [None] + list(plan.model.scenarios):
            got = fast.answer(plan, stmt, scenario)
            if got is None:
                continue
            seen += 1
            want = solver.answer(stmt, scenario)  # the Solver answers too, and the same
            if stmt.mode == "root":
                assert float(got) == pytest.approx(want.value, rel=1e-12, abs=1e-300), (stmt.alias, scenario)
            else:
                assert got == Fraction(str(want.exact)), (stmt.alias, scenario)  # (a Fraction, or SymPy's Rational)
    if path == USER_PLAN:
        assert seen == 8 * 5  # eight questions, in the plan as written and four combinations


@pytest.mark.parametrize("text, family, said", [
    ("x = 1 where -3 <= x <= 3\ny = x^2\nsolve x where y = 4 as r\n", "multiple-roots", "has 2 roots for `x` in [-3, 3]: -2, 2"),
    ("x = 1\ny = x^2\nsolve x where y = 4 as r\n", "multiple-roots", "has 2 roots for `x` in all real numbers: -2, 2"),
    ("x = 1 where 0 < x < 10\ny = (x - 1.2345)^2 + 0.001\nsolve x where y = 0 as r\n", "no-root", "no `x` in (0, 10)"),
    ("x = 1 where 0 < x < 10\ny = (x - 1.2345)^2 + 1e-9\nsolve x where y = 0 as r\n", "no-root", "no `x` in (0, 10)"),
    ("x = 1 where 0 < x < 10\ny = (x - 1.2345) * (x - 1.2346)\nsolve x where y = 0 as r\n", "multiple-roots",
     "has 2 roots for `x` in (0, 10): 1.2345, 1.2346"),  # both between two points of the grid (0.005 apart)
    ("n = 1 where integer, 1 <= n <= 100\nsolve min n where n < 10 or n > 50 as t\n", "not-monotone",
     "holds for n in 1..9, 51..100"),
    ("n = 1 where integer, 1 <= n <= 100\nsolve min n where n < 10 as t\n", "not-monotone", "holds for n in 1..9"),
    ("n = 1 where integer, n <= 10\nsolve min n where n >= 3 or n < -100 as t\n", "not-monotone", "3..10"),
    ("n = 1 where integer, n <= 10\nsolve min n where n <= 10 as t\n", "solve", "down to -inf: there is no smallest"),
    ("n = 1 where integer, n >= 1\nsolve max n where n >= 1 as t\n", "solve", "up to inf: there is no largest"),
    # the galloping search samples 4097 then 8193: the runs said are the bisected ones (by hand: 10..4999)
    ("n = 1 where integer, 1 <= n\nsolve min n where n >= 10 and n < 5000 as t\n", "not-monotone",
     "holds for n in 10..4999 fails for n in 1..9, 5000..inf"),
    # n / 10 < 4367.2 exactly below n = 43672 (decided in exact arithmetic)
    ("n = 1 where integer, 1 <= n\nsolve min n where n >= 10 and n * 0.1 < 4367.2 as t\n", "not-monotone",
     "holds for n in 10..43671 fails for n in 1..9, 43672..inf"),
    ("n = 1 where integer, n <= 10\nsolve min n where n >= 3 or n < -100 as t\n", "not-monotone",
     "holds for n in -inf..-101, 3..10 fails for n in -100..2"),
    ("n = 1 where integer, 1 <= n <= 100\nsolve n where 2 * n = 5 as t\n", "no-root", "the root is n = 2.5, not an integer"),
    ("x = 1 where 0 <= x <= 10\nsolve x where 3 = 4 as r\n", "solve", "`3 = 4` does not depend on `x`"),
    ("x = 1 where 0 <= x <= 10\nsolve x where x > 4 as r\n", "solve", "needs an equation `lhs = rhs`"),
])
def test_the_numeric_route_says_why_there_is_no_answer(text, family, said):
    # what the Solver said: several roots, none, not monotone, no smallest; the numeric route says it too,
    # located, with the values that show it (no SymPy)
    plan = planner.loads(text, "q.plan")
    (stmt,) = plan.model.solves
    with pytest.raises(PlanError) as info:
        fast.answer(plan, stmt)
    assert info.value.family == family
    assert said in info.value.message + " ".join(info.value.notes)
    assert info.value.span.line == text.count("\n")


@pytest.mark.parametrize("text, want", [
    ("x = 1 where 0 < x < 10\ny = (x - 1)^2\nsolve x where y = 0 as r\n", 1),  # a double root on the grid
    ("x = 1 where 0 < x < 10\ny = (x - 1.2345)^2\nsolve x where y = 0 as r\n", 1.2345),  # between its points
    ("x = 1 where 0 < x < 10\ny = x^2 - 2.469 * x + 1.52399025\nsolve x where y = 0 as r\n", 1.2345),
    ("n = 1 where integer, 1 <= n <= 100\nsolve n where 2 * n = 6 as t\n", 3),  # an integer root
    ("x = 1 where -10.3 <= x <= 10\ny = 1 / x\nsolve x where y = 1 as r\n", 1),  # the pole at 0 is no root
])
def test_roots_that_do_not_cross_and_integer_roots_are_found(text, want):
    # (x - 1.2345)^2 = 0 touches zero without a sign change: the least |lhs - rhs| near the grid's minimum
    plan = planner.loads(text, "q.plan")
    (stmt,) = plan.model.solves
    r = fast.result(plan, stmt)
    assert r.value == pytest.approx(want, rel=1e-7)
    assert ("a jump" in r.notes[0]) == ("1 / x" in text)


@pytest.mark.parametrize("text, want", [
    ("n = 1 where integer, n <= 10\nsolve min n where n >= 5 as t\n", 5),  # no lower bound for a min
    ("n = 1 where integer, n >= 1\nsolve min n where n * n >= 10^10 as t\n", 100_000),  # far from n's value
    ("n = 7 where integer, n >= 1\nsolve max n where 3 * n <= 1234567 as t\n", 411_522),
    ("n = 0 where integer\nsolve min n where n >= -98765 as t\n", -98_765),  # unbounded both ways
    ("n = 3 where integer, n > 2\nsolve min n where n >= 1 as t\n", 3),  # holds from the bound on
])
def test_a_threshold_on_a_one_sided_domain_is_found_by_doubling_then_bisection(text, want):
    plan = planner.loads(text, "q.plan")
    (stmt,) = plan.model.solves
    assert fast.answer(plan, stmt) == want
    assert Solver(plan).answer(stmt).value == want  # the Solver agrees


def test_every_shipped_and_benchmark_plan_checks_without_sympy():
    # `planner check` never waits on SymPy: every sheet, example and benchmark plan (their questions too)
    plans = PLANS + sorted(p for p in (ROOT / "benchmarks" / "plans").glob("*.plan") if p not in PLANS)
    _without_sympy("check", str(plans[0]), more=[("check", str(p)) for p in plans[1:]], timeout=600)


def test_the_one_sided_plan_checks_without_sympy():
    path = ROOT / "benchmarks" / "plans" / "article2_one_sided.plan"
    proc = _without_sympy("check", str(path))
    assert "53 passed, 0 failed" in proc.stdout


def test_a_threshold_that_floats_get_wrong_is_settled_exactly():
    # 0.1 * n >= 0.3 holds at n = 3 exactly; floats say 0.1 * 3 = 0.30000000000000004 (also >= 0.3)
    # while 0.1 * n > 0.3 does not hold at 3 exactly (floats say it does)
    plan = planner.loads("n = 1 where integer, 1 <= n <= 10\nsolve min n where 0.1 * n > 0.3 as t\n", "q.plan")
    (stmt,) = plan.model.solves
    assert fast.answer(plan, stmt) == 4  # floats say 3; exact arithmetic moves the edge to 4
    assert Solver(plan).answer(stmt).value == 4
    plan = planner.loads("n = 1 where integer, 1 <= n <= 10\nsolve min n where 0.1 * n >= 0.3 as t\n", "q.plan")
    (stmt,) = plan.model.solves
    assert fast.answer(plan, stmt) == 3


def test_a_half_bounded_root_is_searched_as_the_solver_does():
    plan = planner.loads("x = 1 where x > 0\ny = x^3\nsolve x where y = 8 as r\n", "q.plan")
    (root,) = plan.model.solves
    assert float(fast.answer(plan, root)) == pytest.approx(2, rel=1e-15)
    assert Solver(plan).answer(root).value == 2


def test_an_answer_that_breaks_a_constraint_is_a_located_error():
    text = ("x = 1 where 0 <= x <= 10\nratio = x / (11 - x) where ratio < 1\nsolve x where x = 8 as r\n")
    plan = planner.loads(text, "q.plan")
    (stmt,) = plan.model.solves
    with pytest.raises(PlanError) as info:
        fast.answer(plan, stmt)
    assert info.value.family == "constraint" and info.value.span.line == 2
    assert "`ratio < 1` does not hold at `x` = 8 (`ratio` = 2.66667)" in info.value.message  # 8 / 3


def test_a_root_that_breaks_a_constraint_is_left_out():
    plan = planner.loads("x = 1 where -10 <= x <= 10\nratio = x where ratio > 0\nsolve x where x^2 = 4 as r\n", "q.plan")
    (stmt,) = plan.model.solves
    r = fast.result(plan, stmt)
    assert r.value == 2 and "x = -2 is left out" in r.notes[0]


def test_a_threshold_decided_in_floats_is_not_reported_exact(tmp_path, cli):
    # sqrt(31) = 5.5678 >= 5.5 > sqrt(30) = 5.4772: no rational value, so floats decide (by a clear
    # margin) and the answer must say so; 3 * 17 = 51 >= 50 > 48 = 3 * 16 is decided exactly.
    path = tmp_path / "t.plan"
    path.write_text("n = 5 where integer, 1 <= n <= 100\ny = sqrt(n)\nz = 3 * n\n"
                    "solve min n where y >= 5.5 as a\nsolve min n where z >= 50 as b\n")
    code, out, err = cli("solve", path, "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    rows = {r["question"].split()[-1]: r for r in (data["results"] if "results" in data else data)}
    assert rows["a"]["value"] == 31 and rows["a"]["verification"]["exact"] is False
    assert "decided in floats" in rows["a"]["verification"]["text"]
    assert rows["b"]["value"] == 17 and rows["b"]["verification"]["exact"] is True


OVER_RANGES = """x = 1 where 0 <= x <= 10
n = 1 where integer, 1 <= n <= 100
y(t) = (x - 3) * (x - 7) * t
total = sum(y(t) for t in 1..3)
"""


@pytest.mark.parametrize("question, family, said", [
    ("solve x where total = 0 as r", "multiple-roots", "has 2 roots for `x` in [0, 10]: 3, 7"),
    ("solve x where total = -100 as r", "no-root", "no `x` in [0, 10] makes `total = -100` hold"),
    ("solve min n where sum(k for k in 1..n) >= 10000 as t", "no-root",
     "no integer `n` in [1, 100] makes `sum(k for k in 1..n) >= 10000` hold"),
    ("solve min n where sum(30 - k for k in 1..n) > 100 as t", "not-monotone", "holds for n in 4..55"),
])
def test_over_ranges_the_numeric_route_reports_what_it_finds(question, family, said):
    # SymPy has no closed form of a sum over a range and checks it term by term (minutes on a monthly
    # plan): the numeric route's own findings are the answer, errors included, each located
    plan = planner.loads(OVER_RANGES + question + "\n", "q.plan")
    (stmt,) = plan.model.solves
    with pytest.raises(PlanError) as info:
        fast.answer(plan, stmt)
    err = info.value
    assert err.family == family
    assert said in err.message + " ".join(err.notes)
    assert err.span.line == 5


def test_over_ranges_the_one_root_is_the_numeric_routes():
    plan = planner.loads(OVER_RANGES + "solve x where total = 6 * (8 - 3) * (8 - 7) as r\n", "q.plan")
    (stmt,) = plan.model.solves  # 6 (x - 3)(x - 7) = 30: x = 5 +- sqrt(9) ... x = 8 in [0, 10] and x = 2
    with pytest.raises(PlanError) as info:
        fast.answer(plan, stmt)
    assert info.value.family == "multiple-roots" and info.value.roots == pytest.approx([2, 8])
    plan = planner.loads(OVER_RANGES.replace("0 <= x <= 10", "5 <= x <= 10")
                         + "solve x where total = 30 as r\n", "q.plan")
    (stmt,) = plan.model.solves
    assert float(fast.answer(plan, stmt)) == pytest.approx(8, rel=1e-15)


def test_the_cash_plan_reports_without_the_solver(tmp_path):
    # `solve start where low = 0 USD` over a 60-month cumulative sum with a `ceil`: the report took over
    # two minutes in SymPy's evalf; its answer is the numeric route's, and it says there is no closed form
    path = ROOT / "benchmarks" / "plans" / "cash_60_months.plan"
    code = ("import sys\nfrom planner.cli import main\n"
            "code = main(['--no-cache', 'report', %r, '-o', %r])\nsys.exit(code)\n"
            % (str(path), str(tmp_path / "r.md")))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (tmp_path / "r.md").read_text()
    assert "no closed form: the condition goes through a sum" in text


@pytest.mark.parametrize("name", ["cash_60_months", "fleet_60_months"])
def test_the_reports_analysis_of_a_monthly_plan_does_not_import_sympy(name):
    # what the report asks of its analysis (viewmodel.analyse: every scenario, the checks, the answers
    # with their numeric route, each headline's sensitivity) without the LaTeX of its formulas
    path = ROOT / "benchmarks" / "plans" / f"{name}.plan"
    code = ("import sys\nfrom planner.plan import load_compiled\n"
            "from planner.questions.checks import run_checks\nfrom planner.questions.fast import Answers\n"
            "from planner.questions.sensitivity import sensitivity\n"
            "plan = load_compiled(%r)\nplan.evaluate_all(plan.resolve_scenarios('all'))\n"
            "results = run_checks(plan, Answers(plan))\n"
            "heads = [n for n, q in plan.quantities.items() if 'headline' in q.tags and not q.is_bool]\n"
            "rows = [sensitivity(plan, n).rows for n in heads]\n"
            "assert heads and all(rows) and results, (heads, rows)\n"
            "assert 'sympy' not in sys.modules, 'sympy imported'\n" % str(path))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_sensitivity_does_not_import_sympy():
    # every slope is a difference of the compiled plan, and the kinks and steps are found on the IR
    _without_sympy("sensitivity", str(USER_PLAN), "speedup", "-s", "all",
                   more=[("sensitivity", str(ROOT / "sheets" / "token_cost.plan"), "batch_step_bound", "-s", "all"),
                         ("sensitivity", str(ROOT / "sheets" / "moe_serving.plan"), "serves")])


@pytest.mark.parametrize("command, path", [
    ("report", "benchmarks/plans/cash_60_months.plan"), ("report", "benchmarks/plans/fleet_60_months.plan"),
    ("report", "examples/support_backlog.plan"), ("report", "examples/grain_silo.plan"),
    ("report", "sheets/gpu_compare.plan"), ("report", "examples/cloud_queueing.plan"),  # (their sensitivity was SymPy's)
    ("build", "benchmarks/plans/cash_60_months.plan"), ("build", "examples/grain_silo.plan")])
def test_the_report_and_build_of_a_plan_without_a_closed_form_do_not_import_sympy(command, path, tmp_path):
    # the whole report (its LaTeX, sentences, sensitivity chart and series charts) and the workbook (its
    # Solve sheet bisects in the sheet): none has a closed form to show, so nothing needs SymPy (issue 38)
    out = tmp_path / ("r.md" if command == "report" else "out")
    _without_sympy(command, str(ROOT / path), "-o", str(out), timeout=120)
    report = out if command == "report" else out / (Path(path).stem + ".md")
    assert "sensitivity" in report.read_text()
    assert command == "report" or (out / (Path(path).stem + ".xlsx")).stat().st_size > 0


ANSWERS_OF_ANSWERS = """
price = 10 where price > 0
cost = 4
volume = 100 where volume > 0
seats = 1 where integer, seats >= 1
profit = (price - cost) * 100
solve price where profit = 1000 as target_price
margin = target_price - cost
solve volume where margin * volume = 1200 as needed_volume
solve min seats where margin * seats >= 1201 as enough_seats
check margin == 10
check needed_volume == 120
check enough_seats == 121
"""


def test_a_question_over_a_formula_that_uses_an_answer_is_answered_without_sympy(tmp_path):
    # (price - 4) * 100 = 1000: price 14, margin 10; 10 * volume = 1200: 120; the least whole seats with
    # 10 * seats >= 1201: 121
    text = ANSWERS_OF_ANSWERS
    path = tmp_path / "answers.plan"
    path.write_text(text)
    proc = _without_sympy("check", str(path))
    assert "3 passed, 0 failed" in proc.stdout
    plan = planner.loads(text, "answers.plan")
    answers = fast.Answers(plan._plan if hasattr(plan, "_plan") else plan)
    for stmt, want in zip(fast.questions(answers.plan), (14, 120, 121), strict=True):
        assert answers.answer(stmt).value == pytest.approx(want, rel=1e-12)
        assert Solver(answers.plan).answer(stmt).value == pytest.approx(want, rel=1e-12)  # the Solver agrees


def test_an_answer_that_moves_with_the_questions_own_input_is_a_located_error():
    text = ("price = 10 where price > 0\ncost = 4\nvolume = 100 where volume > 0\nprofit = (price - cost) * volume\n"
            "solve price where profit = 1000 as target_price\n"
            "solve volume where (target_price - cost) * volume = 1200 as needed_volume\n")
    plan = planner.loads(text, "q.plan")
    plan = plan._plan if hasattr(plan, "_plan") else plan
    stmt = fast.questions(plan)[1]
    with pytest.raises(PlanError, match="uses the answer `target_price`, which changes with `volume` itself"):
        fast.answer(plan, stmt)  # target_price would be solved again at each volume


def test_a_condition_that_names_another_answer_is_answered(tmp_path, capsys):
    # `planner check` stopped with an internal error: the program of the condition had no argument for
    # the answer it names (no formula uses it). (14 - 4) * volume = 1200: 120
    from planner.cli import main

    path = tmp_path / "direct.plan"
    path.write_text("price = 10 where price > 0\ncost = 4\nvolume = 100 where volume > 0\n"
                    "profit = (price - cost) * 100\nsolve price where profit = 1000 as target_price\n"
                    "solve volume where (target_price - cost) * volume = 1200 as needed_volume\n"
                    "check needed_volume == 120\n")
    assert main(["--no-cache", "check", str(path)]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out


def test_a_closed_form_asked_for_and_not_found_says_why_and_keeps_the_numeric_answer():
    # `planner solve --closed-form`, the report and the workbook ask for a closed form; where the Solver
    # fails for a reason of its own, the numeric answer stands and its note says why there is no form
    # (it said "closed form not derived (planner solve --closed-form derives it)", which had been asked)
    plan = planner.loads("alpha = 0.5 where 0 < alpha < 1\ny = alpha ^ 3 + alpha\nsolve alpha where y = 1 as a\n",
                         "q.plan")
    plan = plan._plan if hasattr(plan, "_plan") else plan

    class Failing:
        def answer(self, *args):
            raise PlanError("its search stopped at its budget")

    answers = fast.Answers(plan)
    answers._solver = Failing()
    (stmt,) = plan.model.solves
    got = answers.answer(stmt, closed_form=True)
    assert got.value == pytest.approx(0.6823278038280193, rel=1e-12)  # the real root of a^3 + a - 1
    assert got.closed_form is None
    assert got.notes == ("no closed form: its search stopped at its budget; the answer is the numeric route's",)


def test_a_maximize_is_answered_by_the_numeric_route_and_check_does_not_import_sympy():
    # token_cost.plan: `maximize speedup over gamma in 1..8 as best_gamma`, checked by `best_gamma == 6`
    # and `best_gamma.value ~= 2.4696` (降低每個 Token 的生成成本: gamma = 6 is best, about 2.47x)
    path = ROOT / "sheets" / "token_cost.plan"
    _without_sympy("check", str(path))
    plan = planner.load(path)
    plan = plan._plan if hasattr(plan, "_plan") else plan
    (stmt,) = plan.model.optimizes
    fast_one = fast.Answers(plan).answer(stmt)
    solver_one = Solver(plan).answer(stmt)
    assert fast_one.value == solver_one.value == 6
    assert fast_one.optimum == solver_one.optimum == pytest.approx(2.4696, abs=5e-5)
    assert fast_one.notes == solver_one.notes and fast_one.verification.text == solver_one.verification.text


def test_a_near_tie_is_decided_in_exact_arithmetic_without_sympy():
    # 1 + (x - 5)^2 * 1e-20 over x = 4, 5, 6 is 1.0 at each in floats (the first would win); exactly, 5
    text = "x = 1 where 0 <= x <= 10\nf = 1 + (x - 5)^2 * 1e-20\nminimize f over x in 4..6 as best\n"
    plan = planner.loads(text, "t.plan")
    plan = plan._plan if hasattr(plan, "_plan") else plan
    (stmt,) = plan.model.optimizes
    got = fast.Answers(plan).answer(stmt)
    assert got.exact == Fraction(5) and got.value == 5
    assert "3 values give the same objective in floating point; exact arithmetic tells them apart" in got.notes[0]
    assert Solver(plan).answer(stmt).value == 5


def test_a_threshold_over_a_conjunction_without_rational_value_is_decided_by_its_comparisons_margins():
    # examples/cloud_queueing.plan: `solve min servers where stable and latency <= target` (Erlang C, exp
    # and ln: no rational value). By hand (M/M/c, 120 req/s, 50 ms each, so 6 Erlangs): 7 servers give
    # 80.69 ms, 8 give 58.92 ms; the target is 60 ms: 8. Each comparison (`utilisation < 100%` through
    # `stable`, and `latency <= target`) is far from a tie at 7 and 8, so floats decide, without SymPy.
    path = ROOT / "examples" / "cloud_queueing.plan"
    _without_sympy("check", str(path))
    plan = planner.load(path)
    plan = plan._plan if hasattr(plan, "_plan") else plan
    (stmt,) = plan.model.solves
    assert fast.answer(plan, stmt) == 8


def test_a_condition_with_or_is_not_decided_by_margins():
    plan = planner.loads("x = 1 where integer, 0 <= x <= 100\ny = sqrt(x)\n"
                         "solve min x where y >= 3 or y >= 5 as t\n", "q.plan")
    plan = plan._plan if hasattr(plan, "_plan") else plan
    (stmt,) = plan.model.solves
    assert fast._sides(plan, stmt.condition) is None
    assert fast._sides(plan, plan.model.solves[0].condition.left) is not None


@pytest.mark.parametrize("failure, said", [
    ("raise", "no closed form: SymPy could not derive one (ValueError)"),
    ("wait", "no closed form: its derivation took more than 0.2 s"),
])
def test_a_closed_form_that_fails_leaves_the_numeric_answer(failure, said, tmp_path, cli, monkeypatch):
    # a closed form is decoration: SymPy raising, or past its budget, never stops the command
    import threading

    from planner.questions import solve

    release = threading.Event()

    def broken(self, *args, **kwargs):
        if failure == "raise":
            raise ValueError("The argument 'first(...)' is not comparable.")
        release.wait(30)  # (the abandoned thread ends when the test does)
        raise ValueError("too late")

    monkeypatch.setattr(solve.Solver, "answer", broken)
    monkeypatch.setattr(fast, "FORM_WAIT", 0.2)
    path = tmp_path / "q.plan"
    path.write_text("x = 1 where 0 <= x <= 10\ny = x^2 + 1\nsolve x where y = 5 as r\n")
    try:
        code, out, err = cli("--no-cache", "solve", path, "--closed-form")
    finally:
        release.set()
    assert code == 0, err
    assert "x = 2" in out and said in out and "internal error" not in err


def test_a_closed_form_that_is_not_the_numeric_answer_is_not_shown(tmp_path, cli, monkeypatch):
    # x^2 + 1 = 5 on [0, 10]: x = 2 by hand; a closed form giving 3 there is wrong and is not shown
    import sympy as sp

    from planner.questions import solve

    monkeypatch.setattr(solve.Solver, "_match_form", lambda self, prep, values, target: sp.Integer(3))
    path = tmp_path / "q.plan"
    path.write_text("x = 1 where 0 <= x <= 10\ny = x^2 + 1\nsolve x where y = 5 as r\n")
    code, out, err = cli("--no-cache", "solve", path, "--closed-form")
    assert code == 0, err
    assert "x = 2" in out and "closed form   3" not in out
    assert "no closed form shown: its closed form gives x = 3, the numeric route 2" in out


@pytest.mark.parametrize("text", [
    "y = if(sum(if(k > b, k, 0) for k in 1..10) > 20, x * 2, x)\n",
    "s = sum(if(k > b, k, 0) for k in 1..10)\ny = if(s > 20, x * 2, x)\n",
])
def test_sympy_folding_a_range_variable_out_of_its_sum_gives_no_closed_form(text):
    # SymPy folds `if(k > b, ...)` out of the sum in the outer `if`'s condition: Piecewise((2*x, k > b), ...),
    # `k` unbound (a wrong formula), so no closed form is made of it; explain prints the plan's IR, where the
    # sum keeps its body. By hand at b = 9: the sum is 10, not > 20, so y = x = 1.
    from planner.compute.closed import NoClosedForm, to_ir
    from planner.compute.symbolic import inline_inputs
    from planner.plan import loads_compiled

    text = "b = 9 where integer, 0 <= b <= 10\nx = 1 where 0 <= x <= 100\n" + text
    plan = planner.loads(text, "q.plan")
    assert plan.explain("y").in_inputs == "if(sum(if(k > b, k, 0) for k in 1..10) > 20, x * 2, x)"
    assert float(plan.evaluate().values["y"]) == 1
    compiled = loads_compiled(text, "q.plan")
    full = inline_inputs(compiled.model, compiled.symbols, compiled.exprs, "y")
    with pytest.raises(NoClosedForm, match="took the range variable `k` out of the sum"):
        to_ir(full, frozenset())


def test_roots_closer_than_floats_tell_apart_are_one_answer_on_every_route(tmp_path, cli):
    # (x - 1.2345)(x - 1.2345000000000000001) = 0: two rational roots 1e-19 apart, one float (by hand);
    # the numeric route finds one touching root, the exact analysis two: every route answers 1.2345, and
    # the closed-form route says what the exact analysis found (it was a multiple-roots error there alone)
    path = tmp_path / "q.plan"
    path.write_text("x = 1 where 0 < x < 10\ny = (x - 1.2345) * (x - 1.2345000000000000001)\n"
                    "solve x where y = 0 as r\n")
    for flags in ((), ("--closed-form",)):
        code, out, err = cli("--no-cache", "solve", path, *flags)
        assert code == 0, err
        assert "x = 1.2345" in out
    assert "the exact analysis disagrees (`y = 0` has 2 roots for `x` in (0, 10)" in out


def test_the_bisection_ends_on_adjacent_floats_and_counts_runs():
    """The sign change is narrowed to adjacent floats by runs of 63 points each: a root, a step (its two
    sides a float apart), a zero hit exactly, and a point without a value (None: ask the Solver)."""
    import numpy as np

    from planner.questions.fast import _bisect

    runs = []

    def counted(g):
        def f(xs):
            runs.append(len(xs))
            return g(xs)
        return f

    x, fx = _bisect(counted(lambda xs: xs * xs - 2.0), 1.0, 2.0, -1.0)
    assert abs(x - 2 ** 0.5) <= 2 * np.spacing(2 ** 0.5) and len(runs) < 15
    x, fx = _bisect(counted(lambda xs: np.where(xs < 0.3, -1.0, 1.0)), 0.0, 1.0, -1.0)
    assert x in (0.3, np.nextafter(0.3, 0)) and abs(fx) == 1.0
    assert _bisect(lambda xs: xs - 0.5, 0.0, 1.0, -0.5) == (0.5, 0.0)
    assert _bisect(lambda xs: np.where(xs < 0.5, -1.0, np.nan), 0.0, 1.0, -1.0)[0] is None


def test_a_closed_form_past_its_budget_is_stopped_not_left_running(tmp_path, cli, monkeypatch):
    """The derivation's thread is stopped when its budget runs out (under `planner serve` it burned a core
    for as long as SymPy took): a derivation that never ends on its own (a Python loop) ends within a
    second of the command's answer, and counts no further."""
    import threading
    import time

    from planner.questions import solve

    ended, ticks = threading.Event(), [0]

    def endless(self, *args, **kwargs):
        try:
            while True:
                ticks[0] += 1
        finally:
            ended.set()

    monkeypatch.setattr(solve.Solver, "answer", endless)
    monkeypatch.setattr(fast, "FORM_WAIT", 0.2)
    path = tmp_path / "q.plan"
    path.write_text("x = 1 where 0 <= x <= 10\ny = x^2 + 1\nsolve x where y = 5 as r\n")
    code, out, err = cli("--no-cache", "solve", path, "--closed-form")
    assert code == 0 and "x = 2" in out and "its derivation took more than 0.2 s" in out, err
    assert ended.wait(1.0)
    counted = ticks[0]
    time.sleep(0.2)
    assert ticks[0] == counted > 0
