"""Plans keep working and keep meaning the same (issue: compatibility, one meaning per operator).

Golden numbers are computed by hand in each test's comment."""

import pytest

import planner
from planner.language.errors import PlanError

OLD_POWER = """\
unit W
unit kW = 1000 W
unit kWh = kW*h
unit USD
power = 700 W
hours = 720 h
energy = power * hours -> kWh
price = 0.12 USD/kWh
cost = energy * price
check energy == 504 kWh
check cost ~= 60.48 USD
"""


def test_a_plan_that_declared_w_kw_and_kwh_still_loads(cli, plan_file):
    # 700 W for 720 h is 504 kWh; at 0.12 USD/kWh, 60.48 USD
    plan = planner.loads(OLD_POWER, "old.plan")
    ev = plan.evaluate()
    assert ev.display("energy") == pytest.approx(504)
    assert ev.display("cost") == pytest.approx(60.48)
    assert [r.passed for r in plan.check()] == [True, True]
    # `unit W` is ignored with a warning; kW and kWh are exactly the built-ins: nothing said
    assert [w.message for w in plan.warnings] == ["`W` is a built-in unit now: this declaration is ignored"]
    code, out, err = cli("--no-cache", "check", plan_file(OLD_POWER))
    assert code == 0 and "2 passed" in out
    assert "warning[compat]: `W` is a built-in unit now" in err and "error" not in err


def test_a_plan_s_own_meaning_of_a_built_in_unit_wins_in_that_plan_only(tmp_path, cli):
    # A plan written before GB was built in, with GB = 1024 MB (1.024e9 B). Its own figures keep that
    # meaning; an imported file that writes GB keeps the built-in 1e9 B.
    (tmp_path / "disk.plan").write_text("capacity = 80 GB\n")
    (tmp_path / "old.plan").write_text(
        'import "disk.plan" as disk\n'
        "unit GB = 1024 MB\n"
        "unit TB = 1000 GB\n"  # waits for this plan's GB: 1.024e12 B, not the built-in 1e12
        "used = 2 GB\n"
        "in_tb = used -> TB\n"
        "free = disk.capacity - used -> GB\n"
        "check used == 2048 MB\n"            # 2 * 1024 MB
        "check in_tb == 0.002 TB\n"          # 2.048e9 B / 1.024e12 B
        "check free == 76.125 GB\n")         # (80e9 - 2.048e9) B / 1.024e9 B = 76.125
    plan = planner.load(tmp_path / "old.plan")
    ev = plan.evaluate()
    assert ev.display("used") == pytest.approx(2)
    assert ev["used"] == pytest.approx(2.048e9)
    assert ev["disk.capacity"] == pytest.approx(80e9)  # the import's GB is the built-in one
    assert ev.display("free") == pytest.approx(76.125)
    assert [r.passed for r in plan.check()] == [True, True, True]
    messages = [w.message for w in plan.warnings]
    assert messages[0] == ("`GB` is a built-in unit (1,000,000,000 B); this file declares it as 1,024,000,000 B, "
                           "and its own `GB` is used in this file (imports keep the built-in)")
    assert messages[1].startswith("`TB` is a built-in unit (1e+12 B); this file declares it as 1.024e+12 B")
    code, out, err = cli("--no-cache", "check", str(tmp_path / "old.plan"))
    assert code == 0 and "3 passed" in out
    assert "old.plan:2:6: warning[compat]: `GB` is a built-in unit" in err and "error" not in err


def test_a_set_value_is_read_in_the_plan_s_own_unit(tmp_path, cli):
    # `--set used=3 GB` on that plan means its own GB: 3 * 1.024e9 B, shown as 3 GB
    path = tmp_path / "own.plan"
    path.write_text("unit GB = 1024 MB\nused = 2 GB\nbytes = used -> MB\n")
    code, out, err = cli("--no-cache", "eval", str(path), "--set", "used=3 GB")
    assert code == 0, err
    assert "3,072" in out  # 3 * 1024 MB


# ---- `~=` means one thing wherever it is written ----------------------------------------------

APPROX = "x = 100.3\n"


@pytest.mark.parametrize("condition, holds", [
    ("x ~= 100", True),  # |100.3 - 100| <= 0.5 (half a unit of the last written digit of 100)
    ("not (x ~= 100)", False),
    ("x ~= 100 and x > 0", True),
    ("x ~= 100.0", False),  # 0.3 > 0.05
    ("x ~= 101", False),  # |100.3 - 101| = 0.7 > 0.5
])
def test_approx_is_the_same_inside_and_outside_a_check(condition, holds):
    plan = planner.loads(APPROX + f"ok = {condition}\ncheck {condition}\n", "a.plan")
    assert bool(plan.evaluate()["ok"]) is holds
    assert plan.check()[0].passed is holds


def test_approx_in_an_if_picks_the_same_branch_in_the_workbook_formula():
    plan = planner.loads(APPROX + "y = if(x ~= 100, 1, 2)\n", "a.plan")
    assert plan.evaluate()["y"] == 1.0
    # the symbolic route (closed forms, the workbook) says the same
    import sympy as sp

    assert plan.exprs["y"].subs(plan.symbols["x"], sp.Rational(1003, 10)) == 1


def test_exact_equality_is_exact_for_big_numbers():
    # 1e16 + 1 is 10000000000000001, not 1e16: the check fails although both print as 1e16 in floats
    plan = planner.loads("a = 1e16 + 1\ncheck a == 1e16\ncheck a == 10000000000000001\n", "e.plan")
    first, second = plan.check()
    assert not first.passed and second.passed
    assert "apart in exact arithmetic" in first.describe


def test_a_tolerance_prints_as_the_plan_writes_numbers():
    # 1e26 written: half a unit of its last digit is 5e25, printed so (not 50000000000000002382364672)
    plan = planner.loads("a = 3e26\ncheck a ~= 1e26\n", "t.plan")
    (result,) = plan.check()
    assert not result.passed
    text = result.describe
    assert "± 5e25" in text and "50000000000000002382364672" not in text


# ---- questions that finish: each scenario answers for itself ------------------------------------

PER_SCENARIO = """\
unit USD
price = 10 USD
cost = 6 USD
units = 100 where integer, 1 <= units <= 1000
fixed = 500 USD
profit = units * (price - cost) - fixed
solve min units where profit >= 0 for all as breakeven_units
scenario cheap { price = 7 USD }
scenario loss { price = 5 USD }
scenario rich { price = 16 USD }
check breakeven_units <= 500 for all
"""


def test_a_question_over_scenarios_answers_each_and_says_where_there_is_none(cli, plan_file):
    # break-even units = fixed / (price - cost): cheap 500 / 1 = 500, rich 500 / 10 = 50; at a price of
    # 5 USD every unit loses money: no answer in 1..1000
    path = plan_file(PER_SCENARIO)
    code, out, err = cli("--no-cache", "solve", path)
    assert code == 0, err
    assert "[cheap] units = 500" in out and "[rich] units = 50" in out
    assert "[base] units = 125" in out  # `for all` is the plan as written too: 500 / (10 - 6)
    assert "breakeven_units [loss]: no answer in the domain: no integer `units` in [1; 1,000]" in out
    code, out, _ = cli("--no-cache", "solve", path, "-f", "json")
    import json

    data = json.loads(out)
    assert [r["scenario"] for r in data["results"]] == ["base", "cheap", "rich"]
    assert [(m["alias"], m["scenario"]) for m in data["no_answer"]] == [("breakeven_units", "loss")]
    # a check that uses the missing answer fails there, with the reason; the others pass
    code, out, _ = cli("--no-cache", "check", path)
    assert code == 1 and "2 passed, 1 failed" in out and "no integer `units`" in out  # (the check's `for all`: its scenarios)


def test_a_question_with_no_answer_anywhere_exits_2_and_a_check_of_it_fails_naming_it(cli, plan_file):
    # at 5 and 6 USD a unit earns nothing or loses money: no scenario breaks even. A no-answer beside
    # answers is a finding (exit 0, above); nothing answered at all is what one unanswerable question
    # already was, exit 2, each scenario's reason said
    path = plan_file(PER_SCENARIO.replace("scenario cheap { price = 7 USD }", "scenario cheap { price = 6 USD }")
                     .replace("scenario rich { price = 16 USD }\n", "")
                     .replace("solve min units where profit >= 0 for all", "solve min units where profit >= 0 for cheap, loss"))
    code, out, err = cli("--no-cache", "solve", path)
    assert code == 2, (out, err)
    assert "breakeven_units [cheap]: no answer in the domain" in out
    assert "breakeven_units [loss]: no answer in the domain" in out
    code, out, _ = cli("--no-cache", "check", path)
    assert code == 1
    assert "`breakeven_units` has no answer in loss: no integer `units` in [1; 1,000]" in out


def test_for_all_answers_for_the_plan_as_written_too_everywhere(cli, plan_file, tmp_path):
    """`solve ... for all` is the plan as written and then each scenario, as `planner eval --scenario all`
    shows them: in the API, the report and the workbook's Solve sheet alike (the command line: above).
    500 USD / (10 - 6) USD = 125 units as written."""
    import io

    import openpyxl

    import planner
    from planner.outputs.excel.writer import workbook_bytes
    from planner.plan import load_compiled

    path = plan_file(PER_SCENARIO)
    got = planner.load(path).solve(closed_form=False)
    assert {k: float(v) for k, v in got["breakeven_units"].items()} == {"base": 125, "cheap": 500, "rich": 50}
    code, out, _ = cli("--no-cache", "report", path)
    assert "is **125** in `base`, **500** in `cheap`, **50** in `rich`" in out
    # the check of the missing answer fails with its reason, not with empty figures
    assert ("Failing: `breakeven_units <= 500` in `loss` (no value: no integer `units` in \\[1; 1,000\\] makes "
            "`profit >= 0` hold).") in out
    book = openpyxl.load_workbook(io.BytesIO(workbook_bytes(load_compiled(path))), data_only=True)
    rows = [(r[1].value, r[2].value) for r in book["Solve"].iter_rows(min_row=4) if r[0].value]
    assert rows == [("base", 125), ("cheap", 500), ("loss", "#N/A"), ("rich", 50)]
    # a scenario that sets every input to its value as written is that case already: no second row
    same = plan_file(PER_SCENARIO.replace("scenario rich { price = 16 USD }", "scenario usual { price = 10 USD }"))
    assert list(planner.load(same).solve(closed_form=False)["breakeven_units"]) == ["cheap", "usual"]


def test_answers_show_where_quantities_show(cli, plan_file):
    # break-even units = 500 USD / (10 - 6) USD = 125; margin there 125 * 4 - 500 = 0
    path = plan_file(PER_SCENARIO.replace("for all ", "").replace("check breakeven_units <= 500 for all\n", "")
                     + "margin = breakeven_units * (price - cost) - fixed\n")
    code, out, _ = cli("--no-cache", "eval", path, "--only", "breakeven_units")
    assert code == 0 and "breakeven_units" in out and "125" in out and "solve min units" in out
    code, out, _ = cli("--no-cache", "eval", path, "--only", "breakeven_units", "-f", "json")
    import json

    data = json.loads(out)
    assert data["answers"]["base"]["breakeven_units"] == 125
    code, out, _ = cli("--no-cache", "eval", path)  # an answer a formula uses is shown with the quantities
    assert "margin" in out and "breakeven_units" in out
    code, _, err = cli("--no-cache", "eval", path, "--only", "breakeven_unit")
    assert code == 2 and "did you mean `breakeven_units`?" in err


def test_approx_in_a_formula_is_live_in_the_workbook(tmp_path):
    # ok = x ~= 100 holds for x = 100.3 (within 0.5) and not for 100.7; near follows it: 1, then 2
    import openpyxl
    from excel_recalc import gnumeric_recalculate, recalculate

    from planner.outputs.excel.writer import Book, to_bytes

    plan = planner.loads(APPROX + "ok = x ~= 100\nnear = if(x ~= 100, 1, 2)\n", "a.plan")
    book = tmp_path / "approx.xlsx"
    book.write_bytes(to_bytes(Book(plan).build()))
    wb = openpyxl.load_workbook(book)

    def cell(name):
        sheet, ref = wb.defined_names[name].attr_text.split("!")
        return wb[sheet][ref.replace("$", "")]

    assert cell("ok").value == "=ABS(x-100)<=0.5"
    cell("x").value = 100.7  # an analyst's edit: the engine must recompute both
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    for out in (recalculate([edited], tmp_path / "lo")[edited], gnumeric_recalculate([edited], tmp_path / "gn")[edited]):
        values = openpyxl.load_workbook(out, data_only=True)

        def value(name):
            sheet, ref = values.defined_names[name].attr_text.split("!")
            return values[sheet][ref.replace("$", "")].value

        assert value("ok") in (False, 0) and value("near") == 2, out


OLD_BRACES = """\
title "Weights of model{,_w4a16e16}"
note "Files: llama3{,_w4a16e16}.safetensors; {1, 2} and {} are text too."
unit USD
price = 2 USD "price per {run #1}"
check price == 2 USD
"""


def test_a_plan_with_braces_from_before_live_values_still_loads(cli, plan_file):
    # written before live values: braces that cannot be one are shown as written, each with a located warning
    # (a brace group shaped like a live value, `{GB}`, is read as one: an unknown name is an error)
    path = plan_file(OLD_BRACES)
    code, out, err = cli("--no-cache", "check", path)
    assert code == 0 and "1 passed" in out
    assert err.count("warning[compat]") == 5 and "error" not in err
    assert f"{path}:1:24: warning[compat]: `{{,_w4a16e16}}` is not a live value: it is shown as written" in err
    code, out, err = cli("--no-cache", "report", path)
    assert code == 0
    assert out.startswith("# Weights of model{,\\_w4a16e16}\n")
    assert "Files: llama3{,_w4a16e16}.safetensors; {1, 2} and {} are text too." in out  # a note: Markdown


def test_a_typo_in_a_live_value_is_still_an_error(cli, plan_file):
    code, out, err = cli("--no-cache", "check", plan_file('x = 2 "x is {x -> }"\nnote "{x"\n'))
    assert code == 2 and "error[syntax]: `{x -> }` is not a live value" in err and "write `{{`" in err
