"""``planner build``: all outputs or none, exit codes, a deterministic summary
and deterministic files (plots included when matplotlib is installed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import TOKEN_COST

from planner.outputs import plots

SWEEP_PLAN = """title "Speculative decoding"
alpha      = 0.8  where 0 <= alpha < 1
gamma      = 4    where integer, gamma >= 1
draft_cost = 0.1
expected_tokens = (1 - alpha^(gamma + 1)) / (1 - alpha) -> token
speedup = expected_tokens / (gamma * draft_cost + 1)
sweep alpha in [0.3, 0.6, 0.8, 0.9] show expected_tokens, speedup
check speedup ~= 2.4011
"""


def _snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under a directory (hidden ones too), with its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def previous_run(tmp_path, cli):
    """An output directory holding the files of a successful earlier build, plus a file of the user's."""
    out = tmp_path / "out"
    code, _, _ = cli("build", TOKEN_COST, "-o", out)
    assert code == 0
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    return out


def test_build_writes_workbook_and_report(tmp_path, cli):
    out = tmp_path / "out"
    code, stdout, err = cli("build", TOKEN_COST, "-o", out)
    assert code == 0, err
    plotted = (["token_cost-sensitivity.png", "token_cost-sweep-1.png", "token_cost-sweep-2.png"]
               if plots.available() is None else [])
    assert sorted(p.name for p in out.iterdir()) == sorted(plotted + ["token_cost-graph.md", "token_cost.md", "token_cost.xlsx"])
    assert (out / "token_cost.xlsx").read_bytes()[:2] == b"PK"
    report = (out / "token_cost.md").read_text(encoding="utf-8")
    assert report.startswith("# Per-token cost of a 70B dense model\n")
    # the summary: headline figures per scenario (the article's 46.667 / 23.333 / 12.104 ms), checks, files
    line = next(x for x in stdout.splitlines() if x.startswith("batch1_weight_bound"))
    assert line.split()[1:5] == ["46.6667", "23.3333", "12.1042", "ms"]
    assert ", 0 failed" in stdout
    # the answers: break-even alpha 0.2871, crossover batch 98 / 49 / 26, best gamma 6
    assert "solve alpha where speedup = 1 as breakeven_alpha: 0.287108" in stdout  # the question, not its sentence
    assert ": bf16 98, fp8_e4m3 49, int4_g128 26" in stdout
    assert "maximize speedup over gamma in 1..8 as best_gamma: 6 (optimum 2.46964)" in stdout
    assert f"wrote: {out / 'token_cost.xlsx'}, " in stdout and f"{out / 'token_cost.md'}" in stdout
    assert oct(out.stat().st_mode & 0o777) != oct(0o700)  # a normal directory, not mkdtemp's private one


def test_bad_plan_leaves_previous_outputs_untouched(tmp_path, cli, plan_file, previous_run):
    before = _snapshot(previous_run)
    bad = plan_file("title \"broken\"\nweight_bytes = parameters * 2\n", name="token_cost.plan")
    code, stdout, err = cli("build", bad, "-o", previous_run)
    assert code == 2 and "error[unknown-name]" in err and stdout == ""
    assert _snapshot(previous_run) == before  # byte for byte, no staging directory left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "token_cost.plan"]


def test_template_error_leaves_previous_outputs_untouched(tmp_path, cli, previous_run):
    before = _snapshot(previous_run)
    template = tmp_path / "t.md.j2"
    template.write_text("# {{ title }}\n{{ undefined_thing }}\n", encoding="utf-8")
    code, _, err = cli("build", TOKEN_COST, "-o", previous_run, "-t", template)
    assert code == 2 and "t.md.j2:2:4: error[template]" in err
    assert _snapshot(previous_run) == before


@pytest.mark.parametrize("failing_call", [1, 2, 3, 4])
def test_failure_while_writing_leaves_nothing(tmp_path, monkeypatch, previous_run, failing_call):
    """A failure between the first and the last file (here: any of the moves)."""
    from planner.outputs import build as build_mod

    before = _snapshot(previous_run)
    calls = []
    real_replace = os.replace

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == failing_call:
            raise OSError("disk on fire")
        real_replace(src, dst)

    monkeypatch.setattr(build_mod.os, "replace", flaky)
    from planner.language.errors import PlanError

    with pytest.raises(PlanError, match=f"cannot write {previous_run}: disk on fire"):  # the user's path
        build_mod.build(str(TOKEN_COST), str(previous_run))
    assert _snapshot(previous_run) == before


def test_failing_check_still_writes_and_exits_1(tmp_path, cli, plan_file):
    plan = plan_file(SWEEP_PLAN.replace("check speedup ~= 2.4011", "check speedup ~= 2.5"), name="spec.plan")
    out = tmp_path / "out"
    code, stdout, err = cli("build", plan, "-o", out)
    assert code == 1
    assert "checks: 0 passed, 1 failed" in stdout and "FAIL" in stdout and "expected 2.5" in stdout
    report = (out / "spec.md").read_text(encoding="utf-8")
    assert "**1 of 1 checks fail.**" in report and "| **FAIL** | `speedup ~= 2.5` | 2.50000<br>± 0.05 | 2.40114 |" in report


def test_output_path_that_is_a_file(tmp_path, cli):
    target = tmp_path / "taken"
    target.write_text("x", encoding="utf-8")
    code, _, err = cli("build", TOKEN_COST, "-o", target)
    assert code == 2 and "not a directory" in err and target.read_text(encoding="utf-8") == "x"


def test_plots_skipped_without_matplotlib(tmp_path, cli, plan_file, monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: "matplotlib is not installed (pip install matplotlib)")
    out = tmp_path / "out"
    code, stdout, _ = cli("build", plan_file(SWEEP_PLAN, name="spec.plan"), "-o", out)
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["spec.md", "spec.xlsx"]
    report = (out / "spec.md").read_text(encoding="utf-8")
    assert "*Plots skipped: matplotlib is not installed (pip install matplotlib).*" in report
    # the sweep table is complete without the plot: the article's speedups 1.0179, 1.6469, 2.4011, 2.9251
    rows = [line for line in report.splitlines() if line.startswith("| 0.")]
    assert [round(float(r.split("|")[3]), 4) for r in rows] == [1.0179, 1.6469, 2.4011, 2.9251]
    assert "plots skipped" in stdout


def test_plots_are_written_and_deterministic(tmp_path, cli, plan_file):
    pytest.importorskip("matplotlib")
    plan = plan_file(SWEEP_PLAN, name="spec.plan")
    first, second = tmp_path / "a", tmp_path / "b"
    assert cli("build", plan, "-o", first)[0] == 0
    assert cli("build", plan, "-o", second)[0] == 0
    files = _snapshot(first)
    assert sorted(files) == ["spec-sensitivity.png", "spec-sweep-1.png", "spec.md", "spec.xlsx"]  # the tornado chart too
    assert files["spec-sweep-1.png"][:8] == b"\x89PNG\r\n\x1a\n"
    assert b"Software" not in files["spec-sweep-1.png"] and b"tIME" not in files["spec-sweep-1.png"]
    assert "![Sweep 1](spec-sweep-1.png)" in files["spec.md"].decode("utf-8")
    assert files == _snapshot(second)  # byte-identical builds


def test_build_is_deterministic(tmp_path, cli):
    a, b = tmp_path / "a", tmp_path / "b"
    out_a, out_b = cli("build", TOKEN_COST, "-o", a), cli("build", TOKEN_COST, "-o", b)
    assert out_a[0] == out_b[0] == 0
    assert _snapshot(a) == _snapshot(b)
    assert out_a[1].replace(str(a), "OUT") == out_b[1].replace(str(b), "OUT")


def test_report_onto_a_directory_is_refused(tmp_path, cli):
    """`-o NAME` where NAME is a directory: an error, never the directory moved aside and deleted."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keep.txt").write_text("mine\n", encoding="utf-8")
    code, _, err = cli("report", TOKEN_COST, "-o", docs)
    assert code == 2 and "is a directory" in err
    assert (docs / "keep.txt").read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_build_never_replaces_a_directory_named_like_an_output(tmp_path, cli, previous_run):
    (previous_run / "token_cost.md").unlink()
    (previous_run / "token_cost.md").mkdir()
    (previous_run / "token_cost.md" / "keep.txt").write_text("mine\n", encoding="utf-8")
    before = _snapshot(previous_run)
    code, _, err = cli("build", TOKEN_COST, "-o", previous_run)
    assert code == 2 and "is a directory" in err
    assert _snapshot(previous_run) == before


def test_plan_without_sweeps_does_not_load_matplotlib(tmp_path, cli, plan_file, monkeypatch):
    """Whether plots can be drawn is asked only when there is a sweep or a tornado chart (two movers or more)
    to plot (importing matplotlib costs ~0.1 s)."""
    asked = []
    monkeypatch.setattr(plots, "available", lambda: asked.append(1))
    code, _, _ = cli("build", plan_file("a = 2\nb = a * 3\n"), "-o", tmp_path / "out")
    assert code == 0 and asked == []
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["test.md", "test.xlsx"]


def test_build_runs_the_checks_and_asks_the_questions_once(tmp_path, plan_file, monkeypatch):
    """The workbook writes the results the report's analysis found: every check (the probability ones
    too) is run once and every question asked through one door, not again for the Checks and Solve sheets."""
    from planner.outputs.build import build
    from planner.outputs.excel import checking
    from planner.questions import every_check, fast, simulate

    runs = []
    for module, name in ((every_check, "run_checks"), (checking, "run_checks"), (simulate, "run_probability_checks")):
        def counted(*args, _original=getattr(module, name), _name=name, **kwargs):
            runs.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    doors = []
    init = fast.Answers.__init__
    monkeypatch.setattr(fast.Answers, "__init__", lambda self, *a, **k: (doors.append(1), init(self, *a, **k))[1])
    plan = plan_file("unit USD\nprice = 10 USD ~ 8 USD to 12 USD where price > 0 USD\nvolume = 100\n"
                     "revenue = price * volume\nsolve price where revenue = 1500 USD as fair_price\n"
                     "check revenue == 1000 USD\ncheck revenue == 1500 USD with price = fair_price\n"
                     "check P(revenue > 900 USD) >= 50%\n")
    result = build(plan, str(tmp_path / "out"))
    assert result.checks_failed == 0 and len(result.analysis.checks) == 3
    assert sorted(runs) == ["run_checks", "run_probability_checks"] and len(doors) == 1


def test_summary_has_one_row_per_scenario_when_there_are_many(tmp_path):
    from conftest import SHEETS

    from planner.outputs.build import build, summary

    text = summary(build(str(SHEETS / "gpu_compare.plan"), str(tmp_path / "out")))
    header = next(line for line in text.splitlines() if line.startswith("scenario"))
    assert "step_time (ms)" in header and "fits_one_gpu" in header
    row = next(line for line in text.splitlines() if line.startswith("large/h100/bf16"))
    # tests/test_reuse.py has the arithmetic; each column in its quantity's one style, as the workbook's cells
    assert row.split()[1:] == ["48.20144", "331.940", "161.4748", "false"]
