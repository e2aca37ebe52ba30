"""``first(m for m in RANGE where CONDITION)``: the first period where a condition holds, with
"never" a stated outcome (not a sentinel number) on every route: evaluation, checks, the symbolic
route, the workbook (recalculated by LibreOffice and Gnumeric) and the command line.

The figures are worked by hand: owning costs 500 USD up front and gains 30 USD a month, so the
cumulative gain 30 k first reaches 500 at k = 17 (16 months give 480); within 10 months it never does.
"""

from __future__ import annotations

import json
import math

import openpyxl
import pytest

from planner.compute.evaluation import loads as compute_loads
from planner.language.errors import EvaluationError, NeverError, ParseError, PlanError
from planner.plan import loads_compiled as loads

PLAN = """
unit USD
horizon = 24 month where integer, 1 month <= horizon <= 36 month
gain    = 30 USD/month
upfront = 500 USD
cum_gain(k) = gain * k
breakeven = first(k for k in 1 month..horizon where cum_gain(k) >= upfront) -> month
pick = first(x for x in [3, 5, 7] where x > 4)
none = first(x for x in [3, 5, 7] where x > 9)
scenario short { horizon = 10 month }
scenario long  { horizon = 36 month }
"""

MONTH = 2_628_000  # seconds in planner's month (365 d / 12)


def test_the_first_period_where_a_condition_holds():
    plan = compute_loads(PLAN, "first.plan")
    ev = plan.evaluate(None)
    assert ev.display("breakeven") == 17
    assert ev.values["breakeven"] == 17 * MONTH
    assert ev.display("pick") == 5  # the first in the list's order
    assert not ev.is_never("breakeven") and ev.is_never("none")
    assert plan.evaluate("long").display("breakeven") == 17  # a longer range changes nothing


def test_never_is_a_stated_outcome_not_a_number():
    plan = compute_loads(PLAN, "first.plan")
    ev = plan.evaluate("short")
    assert ev.is_never("breakeven")
    assert math.isnan(ev.values["breakeven"])
    err = ev.never["breakeven"]
    assert isinstance(err, NeverError) and err.family == "never"
    assert "holds for no `k` in `1 month..horizon`" in err.message


@pytest.mark.parametrize("formula", [
    "after = breakeven + 1 month",
    "late = if(breakeven > 30 month, 1, 2)",  # nan > 30 is false: this would quietly be 2
    "ok = breakeven <= 12 month",
])
def test_a_formula_that_uses_a_never_fails_with_that_reason(formula):
    plan = compute_loads(PLAN + formula + "\n", "first.plan")
    plan.evaluate(None)  # a value in the base: fine
    with pytest.raises(NeverError) as info:
        plan.evaluate("short")
    err = info.value
    assert "never" in err.message and err.span.flat.startswith("first(")
    assert "`breakeven` is never, and a formula uses it" in err.notes
    assert "in scenario `short`" in err.notes


def test_a_formula_whose_if_does_not_take_the_never_keeps_its_value():
    plan = compute_loads(PLAN + "flag = true\nsafe = if(flag, 1, breakeven / 1 month)\n", "first.plan")
    assert plan.evaluate("short").display("safe") == 1


def test_a_check_that_uses_a_never_fails_with_that_reason():
    from planner.questions.checks import run_checks

    plan = compute_loads(PLAN + "check breakeven == 17 month\ncheck breakeven <= 20 month in short\n"
                         "check pick == 5\n", "first.plan")
    results = run_checks(plan)
    assert [r.passed for r in results] == [True, False, True]
    assert isinstance(results[1].error, NeverError)
    assert "could not evaluate in short: never:" in results[1].describe()


@pytest.mark.parametrize("text, message", [
    ("x = first(k for k in 1..5)\n", "`first` needs a condition"),
    ("x = first([1, 2])\n", "`first` needs a condition"),
    ("x = sum(k for k in 1..5 where k > 2)\n", "`where` inside `sum(...)` is not supported"),
    ("x = first(2 * k for k in 1..5 where k > 2)\n", "`first` gives the first value of its variable"),
    ("x = first(k for k in 1..5 where k)\n", "`first` finds where a condition holds"),
])
def test_first_written_wrong_is_a_located_error(text, message):
    with pytest.raises(PlanError) as info:
        compute_loads(text, "bad.plan")
    assert message in info.value.message
    assert info.value.span is not None


def test_the_symbolic_route_agrees_and_says_never_as_nan():
    from planner.compute import symbolic

    plan = compute_loads(PLAN, "first.plan")
    expr = symbolic.inline_inputs(plan.model, plan.symbols, plan.exprs, "breakeven")
    inputs = sorted(expr.free_symbols, key=str)
    prog = symbolic.program(inputs, [expr])
    values = {"horizon": 24 * MONTH, "gain": 30 / MONTH, "upfront": 500.0}
    assert float(prog([values[str(s)] for s in inputs])[0]) == 17 * MONTH
    values["horizon"] = 10 * MONTH
    assert math.isnan(float(prog([values[str(s)] for s in inputs])[0]))
    # written out term by term (a range with numbers at both ends): the first value whose condition holds
    done = symbolic.expand_aggregates(expr.xreplace({s: 10 * MONTH for s in inputs if str(s) == "horizon"}))
    assert "never" in str(done)


def test_the_command_line_shows_never(tmp_path, capsys):
    from planner.cli import main

    path = tmp_path / "first.plan"
    path.write_text(PLAN)
    assert main(["eval", str(path), "--scenario", "short", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["values"]["short"]["breakeven"] == "never"
    assert data["values"]["short"]["pick"] == 5
    assert main(["eval", str(path), "--scenario", "short"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("breakeven"))
    assert row.split()[1:3] == ["never", "month"]
    assert main(["eval", str(path), "--scenario", "short", "--format", "csv"]) == 0
    assert "breakeven,month,never" in capsys.readouterr().out


def test_a_sweep_says_never_where_the_first_finds_nothing(tmp_path, capsys):
    """Swept over the horizon, breakeven is 17 months from a horizon of 17 on and never below it (16
    months gain 480 of the 500 USD): "never" in every output, and not counted as an issue of the point,
    so the other figures of those points are not set aside (a plot drew them as gaps)."""
    from planner.cli import main
    from planner.questions import sweep

    path = tmp_path / "first.plan"
    path.write_text(PLAN + "sweep horizon in [12 month, 16 month, 17 month, 24 month] show breakeven, pick\n")
    plan = loads(path.read_text(), str(path))
    (r,) = sweep.run_statement(plan, plan.model.sweeps[0])
    assert list(r.never["breakeven"]) == [True, True, False, False]
    assert r.issue_count == 0 and not r.bad.any()
    assert main(["sweep", str(path)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.strip()[:2] in ("12", "16", "17", "24")]
    assert [row[1] for row in rows] == ["never", "never", "17", "17"]
    assert main(["sweep", str(path), "--format", "csv"]) == 0
    assert capsys.readouterr().out.count(",never,") == 2
    assert main(["sweep", str(path), "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert [p["breakeven"] for p in points] == ["never", "never", 17, 17]
    # a plain nan (a division by zero) is still an issue, with its reason
    broken = loads(PLAN + "z = 0\nratio = gain / z * 1 month\nsweep horizon in [12 month] show ratio\n", "z.plan")
    (r,) = sweep.run_statement(broken, broken.model.sweeps[0])
    assert r.issue_count == 1 and not r.never


def test_the_example_has_no_sentinel(tmp_path):
    from pathlib import Path

    from planner.compute.evaluation import load

    source = Path(__file__).parent.parent / "examples" / "gpu_buy_vs_rent.plan"
    assert "999" not in source.read_text()
    plan = load(source)
    ev = plan.evaluate(None)
    assert not ev.is_never("breakeven_month") and 1 <= ev.display("breakeven_month") <= 36


# ---- the workbook: live, recalculated by both engines after every cached value is poisoned ----

@pytest.fixture(scope="module")
def recalculated(tmp_path_factory):
    from excel_recalc import (POISON, gnumeric_recalculate, poison, recalculate, require_gnumeric,
                              require_soffice)
    from test_excel_workbook import edit, export

    require_soffice()
    require_gnumeric()
    work = tmp_path_factory.mktemp("first")
    item = export(loads(PLAN, "first.plan"), work / "first.xlsx")
    edited = edit(item, work / "first_edited.xlsx", {"horizon": 12})
    checked = export(loads(PLAN + CHECKS, "checked.plan"), work / "checked.xlsx")
    for it in (item, edited, checked):
        assert poison(it.path) > 10
    paths = [item.path, edited.path, checked.path]
    return item, POISON, {"libreoffice": recalculate(paths, work), "gnumeric": gnumeric_recalculate(paths, work),
                          "checked": checked}


# the checks hold in planner (never in short, 17 in long); the later ones hold because the first finds nothing
# (a comparison with never is no value, which fails: `not` of it holds)
CHECKS = """check breakeven == never in short
check breakeven != never in long
check breakeven == 17 month in long
later = max(breakeven, 1 month) -> month
"""


def _cell(wb, item, name):
    sheet, coord = next(wb.defined_names[item.book.names[name]].destinations)
    return wb[sheet][coord.replace("$", "")].value


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_the_workbook_finds_the_first_period_live(recalculated, engine):
    item, poisoned, outs = recalculated
    written = openpyxl.load_workbook(item.path)
    formula = _cell(written, item, "breakeven")
    assert "MIN('Cash flows'!" in formula and "NA()" in formula  # live over its row of terms, not a number
    # as written, 17; with 12 months typed in as the horizon (360 USD gained < 500), never: #N/A
    for path, want in ((item.path, 17), (item.path.with_name("first_edited.xlsx"), "#N/A")):
        wb = openpyxl.load_workbook(outs[engine][path], data_only=True)
        assert _cell(wb, item, "breakeven") == (pytest.approx(want) if want == 17 else want)
        assert _cell(wb, item, "pick") == 5 and _cell(wb, item, "none") == "#N/A"
    wb = openpyxl.load_workbook(outs[engine][item.path], data_only=True)
    rows = {c.value: c.row for c in wb["Scenarios"]["B"]}
    header = [c.value for c in wb["Scenarios"][1]] + [c.value for c in wb["Scenarios"][2]]
    assert poisoned not in [c.value for row in wb["Scenarios"].iter_rows() for c in row]
    columns = {c.value: c.column_letter for row in wb["Scenarios"].iter_rows(max_row=4) for c in row if c.value}
    assert "short" in columns and "long" in columns, header
    assert wb["Scenarios"][f"{columns['short']}{rows['breakeven']}"].value == "never"  # as the Summary says it
    assert wb["Scenarios"][f"{columns['long']}{rows['breakeven']}"].value == pytest.approx(17)
    assert wb["Scenarios"][f"{columns['short']}{rows['none']}"].value == "never"
    formulas = openpyxl.load_workbook(item.path)["Scenarios"]
    live = formulas[f"{columns['short']}{rows['breakeven']}"].value
    inner = live[len("=IF(ISNA("):live.index('),"never",')]  # live: the first over its row of terms, or "never"
    assert live == f'=IF(ISNA({inner}),"never",{inner})' and "MIN('Cash flows'!" in inner


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_formulas_over_a_never_on_the_scenarios_sheet_still_read_no_value(recalculated, engine):
    """The Scenarios sheet's "never" is a word for the reader: a check reads it as no value (`== never` holds,
    `!= never` does not) and MAX does not skip it (`later` has no value in short, as planner says, not 1)."""
    item, _, outs = recalculated
    checked = outs["checked"]
    wb = openpyxl.load_workbook(outs[engine][checked.path], data_only=True)
    assert [wb["Checks"][cell].value for _, _, cell in checked.book.check_cells] == [True, True, True]
    rows = {c.value: c.row for c in wb["Scenarios"]["B"]}
    columns = {c.value: c.column_letter for row in wb["Scenarios"].iter_rows(max_row=4) for c in row if c.value}
    assert wb["Scenarios"][f"{columns['short']}{rows['later']}"].value == "#N/A"
    assert wb["Scenarios"][f"{columns['long']}{rows['later']}"].value == pytest.approx(17)


def test_simulate_counts_never_as_a_share_and_leaves_it_out_of_the_mean():
    """The upfront cost uniform over 300..900 USD: 30 USD a month over 24 months gains 720, so the
    break-even month is ceil(upfront / 30) where upfront <= 720 (a share of (720 - 300) / 600 = 70%)
    and never above it (30%)."""
    from planner.outputs import simulation
    from planner.questions import simulate

    plan = compute_loads(PLAN.replace("upfront = 500 USD", "upfront = uniform(300 USD, 900 USD)"), "first.plan")
    sim, = simulate.run(plan, [None], samples=20_000, seed=1)
    assert sim.never("breakeven") == pytest.approx(0.30, abs=0.01)
    assert sim.never("pick") == 0.0 and sim.never("gain") is None
    stats = sim.stats("breakeven")
    assert stats["never"] == sim.never("breakeven")
    # the mean over the samples that break even: upfront uniform on 300..720, months ceil(u / 30), 10..24
    months = [math.ceil((300 + 420 * (i + 0.5) / 42_000) / 30) for i in range(42_000)]
    assert stats["mean"] == pytest.approx(sum(months) / len(months), rel=0.01)
    assert 10 <= stats["p5"] and stats["p95"] <= 24
    text = simulation.SimulationView([sim], ["breakeven", "pick"], [5, 50, 95], flags=None).table()
    assert "breakeven: never in 30" in text and "mean, sd and percentiles over the other 70" in text
