"""Every broken plan fails with its error family and a located message.

Each file under tests/bad_plans/<family>/ must fail with that family. The
rendered message is compared with the snapshot next to it
(<name>.expected); run with PLANNER_UPDATE_SNAPSHOTS=1 to rewrite them.
"""

import os
from pathlib import Path

import pytest

import planner
from planner.language.errors import PlanError, flatten, render

BAD = Path(__file__).parent / "bad_plans"
CASES = sorted(BAD.glob("*/*.plan"))


def _fail(path: Path) -> PlanError:
    try:
        plan = planner.load(path)
        for scenario in [None] + plan.scenario_names:
            plan.evaluate(scenario)
    except PlanError as err:
        return err
    pytest.fail(f"{path} did not fail")


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_bad_plan(path, monkeypatch):
    monkeypatch.chdir(BAD)
    err = _fail(path.relative_to(BAD))
    families = {e.family for e in flatten(err)}
    assert path.parent.name in families
    text = render(err)
    first = flatten(err)[0]
    assert first.span is not None, "every plan error points at the source"
    assert f"{path.parent.name}/{path.name}:{first.span.line}:{first.span.column}:" in text
    assert "^" in text or not first.show_source  # text that is not a plan: the position only
    snapshot = path.with_suffix(".expected")
    if os.environ.get("PLANNER_UPDATE_SNAPSHOTS") or not snapshot.exists():
        snapshot.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == snapshot.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", CASES[::3], ids=[f"{p.parent.name}/{p.stem}" for p in CASES[::3]])
def test_cli_reports_without_traceback(path, cli):
    code, out, err = cli("eval", path, "--scenario", "all")
    assert code == 2
    assert "Traceback" not in err and "Traceback" not in out
    assert "error[" in err


def test_several_errors_are_reported_at_once(plan_file):
    path = plan_file("a = bb + 1\nc = dd * 2\n")
    with pytest.raises(PlanError) as info:
        planner.load(path)
    errors = flatten(info.value)
    assert [e.message for e in errors] == ["unknown name `bb`", "unknown name `dd`"]
    assert "2 errors" in render(info.value)


def test_errors_in_one_definition_do_not_cascade(plan_file):
    path = plan_file("size = 3 GBB\ndouble = size * 2\nquad = double * 2\n")
    with pytest.raises(PlanError) as info:
        planner.load(path)
    assert [e.family for e in flatten(info.value)] == ["unknown-unit"]


@pytest.mark.parametrize("args,needle", [
    (["eval", "{plan}", "--scenario", "bf61"], "unknown scenario `bf61`"),
    (["eval", "{plan}", "--set", "alpah=0.5"], "did you mean `alpha`?"),
    (["eval", "{plan}", "--set", "alpha=1.5"], "constraint violated"),
    (["eval", "{plan}", "--set", "alpha=0.5 GB"], "error[unit]"),
    (["eval", "{plan}", "--set", "alpha"], "expects name=value"),
    (["eval", "{plan}", "--set", "alpha=(0.5"], "error[syntax]"),
    (["eval", "{plan}", "--set", "alpha='a'"], 'unexpected character "\'"'),  # a value's own lexer meets it
    (["eval", "{plan}", "--set", "alpha='a'"], 'help: strings use double quotes: "..."'),
    (["eval", "{plan}", "--set", "alpha=$3"], "help: declare a currency as a unit (`unit USD`) and write `3 USD`"),
    (["eval", "{plan}", "--set", "speedup=2"], "not an input"),
    (["eval", "{plan}", "--only", "speedupp"], "did you mean `speedup`?"),
    (["explain", "{plan}", "speedupp"], "did you mean `speedup`?"),
    (["eval", "no/such/file.plan"], "no such file"),
])
def test_bad_arguments_exit_2(cli, plan_file, args, needle):
    path = plan_file("alpha = 0.8 where 0 <= alpha < 1\nspeedup = 1 / (1 - alpha)\n")
    code, out, err = cli(*[a.format(plan=path) for a in args])
    assert code == 2
    assert needle in err
    assert "Traceback" not in err


def test_constraint_violated_by_set_names_the_override(cli, plan_file):
    path = plan_file("alpha = 0.8 where 0 <= alpha < 1\n")
    code, _, err = cli("eval", path, "--set", "alpha=1.5")
    assert code == 2
    assert "`0 <= alpha < 1` does not hold (`alpha` = 1.5, from --set alpha=1.5)" in err


def test_constraint_violated_by_scenario_names_it(cli, plan_file):
    path = plan_file("batch = 32 where batch >= 1\nscenario tiny { batch = 0 }\n")
    code, _, err = cli("eval", path, "--scenario", "tiny")
    assert code == 2
    assert "from scenario `tiny`" in err
    assert "note: in scenario `tiny`" in err


def test_internal_errors_are_reported_without_traceback(cli, monkeypatch):
    from conftest import TOKEN_COST

    import planner.compute.evaluation

    def broken(*args, **kwargs):
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(planner.compute.evaluation.Plan, "evaluate_all", broken)
    code, out, err = cli("eval", TOKEN_COST)
    assert code == 3
    assert "internal error: ZeroDivisionError: simulated bug" in err
    assert "Traceback" not in err
    monkeypatch.setenv("PLANNER_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli("eval", TOKEN_COST)


def test_unwritable_output_is_a_clean_error(cli, tmp_path):
    from conftest import TOKEN_COST

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code, _, err = cli("export", TOKEN_COST, "-o", blocker / "sub" / "book.xlsx")
    assert code == 2
    assert "Traceback" not in err and "error" in err


@pytest.mark.parametrize("text", [
    "batch = 0 where batch >= 1\n",
    "x = 0\ny = 1 / x\n",
    "x = 0\ny = 1 / x\ncheck x == 0\n",
    "a = 1 where a <= 2\nscenario big { a = 3 }\ncheck a == 1\n",
])
def test_check_on_a_plan_that_cannot_be_evaluated_exits_2(cli, plan_file, text):
    code, out, err = cli("check", plan_file(text))
    assert code == 2
    assert "error[" in err and "passed" not in out


def test_exported_files_get_normal_permissions(cli, tmp_path):
    import os

    from conftest import TOKEN_COST

    umask = os.umask(0)
    os.umask(umask)
    code, _, _ = cli("export", TOKEN_COST, "-o", tmp_path / "book.xlsx")
    assert code == 0
    assert (tmp_path / "book.xlsx").stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["book.xlsx"]  # no temporary files left behind


def test_list_options_do_not_swallow_the_file(cli):
    from conftest import TOKEN_COST

    code, out, _ = cli("eval", "--only", "weight_bytes", TOKEN_COST)
    assert code == 0 and "weight_bytes" in out and "speedup" not in out
    code, out, _ = cli("sweep", TOKEN_COST, "--show", "speedup", "alpha=0.3,0.9")
    assert code == 0 and "1.01793" in out


def test_the_two_solve_refusals_do_not_send_the_user_in_a_circle(tmp_path, cli):
    # `solve x where y >= 20` needs an equation: the message says what to write for the least x where it
    # holds, `solve min x where y >= 20`, which answers (once refused: it needed an integer x)
    path = tmp_path / "t.plan"
    path.write_text("x = 3 where 0 <= x <= 10\ny = ceil(x * 7)\nsolve x where y >= 20 as a\n")
    code, out, err = cli("solve", path)
    assert code != 0 and "write `solve min x where y >= 20`" in err
    path.write_text("x = 3 where 0 <= x <= 10\ny = ceil(x * 7)\nsolve min x where y >= 20 as a\n")
    code, out, err = cli("solve", path)
    assert code == 0 and "[base] x = 2.71429" in out, out + err


def test_explain_of_an_answer_says_which_question_finds_it(cli, plan_file):
    """`planner explain FILE breakeven` said "no quantity `breakeven`" though the docs call answers
    quantities: it names the question and the commands that show the answer."""
    path = plan_file("x = 2\ny = x * 3\nsolve x where y = 12 as four\n")
    code, out, err = cli("explain", path, "four")
    assert code == 2 and "`four` is the answer of `solve x where y = 12 as four`" in err, err
    assert "planner solve" in err and "--only four" in err and "Traceback" not in err


def test_a_known_name_with_a_word_added_is_suggested_over_a_look_alike(tmp_path):
    """`ds.kv_per_token_bf16` (a word added to a library name) suggested `ds.flops_per_token`, which
    difflib finds closer; the name the user started from is the one they meant."""
    from planner.language.errors import suggest

    assert suggest("ds.kv_per_token_bf16", ["ds.flops_per_token", "ds.kv_per_token", "ds.layers"]) == "ds.kv_per_token"
    assert suggest("ds.flops_per_tokn", ["ds.flops_per_token", "ds.kv_per_token"]) == "ds.flops_per_token"
