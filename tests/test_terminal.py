"""The terminal: tables that fit the width, the plan's own quantities first, colour on a
terminal only, and the Markdown and JSON Lines formats."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
from conftest import SHEETS, TOKEN_COST

GPU = SHEETS / "gpu_compare.plan"


class _Run:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture(autouse=True)
def _cli(monkeypatch, capsys):
    global run

    def run(*args, columns=None):
        """The CLI in this process (stdout is not a terminal), COLUMNS set or not."""
        from planner.cli import main

        monkeypatch.delenv("NO_COLOR", raising=False)
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", str(columns))
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return _Run(code, out, err)

    yield


@pytest.mark.parametrize("args", [
    (TOKEN_COST,), (TOKEN_COST, "-s", "all"), (GPU,), (GPU, "-s", "all"),
])
@pytest.mark.parametrize("columns", [80, 60])
def test_eval_tables_fit_the_width_and_keep_every_value(args, columns):
    proc = run("eval", *args, columns=columns)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    full = run("eval", *args, "--format", "json")
    data = json.loads(full.stdout)
    for scenario, values in data["values"].items():
        assert scenario.split("/")[-1] in proc.stdout
    from planner.outputs.numbers import plan_styles
    from planner.outputs.terminal import figures
    from planner.plan import load_compiled

    styles = plan_styles(load_compiled(args[0]))  # a quantity's one style: its figures in every scenario
    for name, q in data["quantities"].items():  # every value is printed, as the number rule writes it
        values = [data["values"][s][name] for s in data["values"]]
        for v, text in zip(values, figures(values, q["unit"], style=styles.get(name))):
            assert text in proc.stdout, (name, v, text)
    assert "70,000,000,000" in proc.stdout or "8,000,000,000" in proc.stdout  # digits grouped
    for name in data["quantities"]:
        assert any(line.startswith(name + " ") for line in lines), name


def test_a_split_table_says_so_and_columns_0_gives_one_table():
    split = run("eval", GPU, "-s", "all", columns=80).stdout
    assert "scenarios 1-2 of 13 (split to fit the terminal; --format csv for one table)" in split
    whole = run("eval", GPU, "-s", "all", columns=0).stdout
    assert "split" not in whole and max(len(line) for line in whole.splitlines()) > 300
    piped = run("eval", GPU, "-s", "all").stdout  # not a terminal, no COLUMNS: one table, for grep and files
    assert piped == whole


def test_the_hand_calculations_are_in_the_split_table():
    # tests/test_reuse.py's hand arithmetic for the gpu_compare step times
    out = run("eval", GPU, "-s", "all", columns=80).stdout
    for figure in ("48.20144", "27.30592", "30.46695", "7.34028"):  # one style for the column: 5 decimals
        assert figure in out


def test_the_plans_own_quantities_come_first():
    out = run("eval", GPU, columns=0).stdout.splitlines()
    names = [line.split()[0] for line in out[4:] if line.strip()]
    own = names.index("fits_one_gpu")
    assert names[0] == "parameters" and all("." in n for n in names[own + 1:])
    assert names.index("h100.hbm_bandwidth") > own
    csv = run("eval", GPU, "--format", "csv").stdout.splitlines()
    assert csv[1].startswith("parameters,")


def test_answer_and_explanation_lines_fold_at_the_width():
    for args in (("solve", TOKEN_COST), ("check", "-v", TOKEN_COST), ("explain", TOKEN_COST, "speedup"),
                 ("sensitivity", TOKEN_COST, "speedup"), ("sweep", TOKEN_COST)):
        out = run(*args, columns=80).stdout
        assert max(len(line) for line in out.splitlines()) <= 80, args
    solve = run("solve", TOKEN_COST, "--closed-form", columns=80).stdout
    assert "      method       exact: real roots of polynomials in alpha (degree 4), checked\n" \
           "                   in the domain" in solve


def _on_a_terminal(*args, env=None):
    """Run with stdout on a pseudo-terminal, as in an interactive shell."""
    master, slave = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    environ.update(env or {})
    proc = subprocess.Popen([sys.executable, "-m", "planner", *map(str, args)], stdout=slave, stderr=slave,
                            env=environ)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(master)
    return proc.returncode, b"".join(chunks).decode()


@pytest.fixture
def failing(plan_file):
    return plan_file("x = 1\ncheck x == 2\ncheck x == 1\n")


def test_pass_and_fail_are_coloured_on_a_terminal_only(failing):
    code, out = _on_a_terminal("check", "-v", failing)
    assert code == 1
    assert "\x1b[31mFAIL\x1b[0m" in out and "\x1b[32mok\x1b[0m" in out and "\x1b[31m1 passed, 1 failed" in out
    code, out = _on_a_terminal("check", "-v", failing, env={"NO_COLOR": "1"})
    assert "\x1b[" not in out and "FAIL" in out
    piped = run("check", "-v", failing)
    assert "\x1b[" not in piped.stdout and piped.stdout.startswith("FAIL ")
    forced = run("--color", "always", "check", failing)
    assert "\x1b[31mFAIL" in forced.stdout
    assert "\x1b[" not in run("--color", "never", "check", failing).stdout


def test_markdown_formats(plan_file):
    plan = plan_file('title "T"\nx = 2 GB [source "a|b"]\ny = x * 2\ncheck y == 4 GB\ncheck y == 5 GB\n'
                     'sweep x in [1 GB, 2 GB] show y\nsolve x where y = 6 GB\n')
    def md(*args):
        return " ".join(run(*args, "--format", "markdown").stdout.split())  # spacing aside

    out = md("eval", plan)
    assert out.startswith("# T | quantity | base | unit | notes |")
    assert "| x | 2 | GB | input, source: a\\|b |" in out and "| y | 4,000,000,000 | B | |" in out
    out = md("check", plan)
    assert "| **FAIL** | check y == 5 GB | | 4 GB | 5 GB | | 5 |" in out
    assert out.endswith("1 passed, 1 failed")
    out = md("sweep", plan)
    assert out.startswith("**sweep x in [1 GB, 2 GB] show y") and "| 1 | 2,000,000,000 |" in out
    assert "| solve x where y = 6 GB | base | 3 GB |" in md("solve", plan)
    assert "| x | 2 GB | +1.0000 |" in md("sensitivity", plan, "y")


def test_json_lines_formats(plan_file):
    plan = plan_file("a = 2\nb = a * 3 -> %\nscenario s { a = 4 }\ncheck b == 600% for all\ncheck b == 12 in s\n"
                     "solve a where b = 900%\n")
    rows = [json.loads(line) for line in run("eval", plan, "-s", "all", "--format", "jsonl").stdout.splitlines()]
    assert {"quantity": "b", "scenario": "s", "value": 1200.0, "unit": "%", "base_value": 12.0, "kind": "derived",
            "input_from": None} in rows
    assert {"quantity": "a", "scenario": "s", "value": 4.0, "unit": "", "base_value": 4.0, "kind": "input",
            "input_from": "scenario `s`"} in rows
    assert {"quantity": "b", "scenario": "base", "value": 600.0, "unit": "%", "base_value": 6.0, "kind": "derived",
            "input_from": None} in rows  # `-s all`: the plan as written, then each scenario
    assert len(rows) == 4
    rows = [json.loads(line) for line in run("check", plan, "--format", "jsonl").stdout.splitlines()]
    assert [(r["check"], r["scenario"], r["passed"]) for r in rows] == [
        ("check b == 600% for all", "s", False), ("check b == 12 in s", "s", True)]
    (row,) = [json.loads(line) for line in run("solve", plan, "--format", "jsonl").stdout.splitlines()]
    assert row["target"] == "a" and row["value"] == 3
    rows = [json.loads(line) for line in run("sensitivity", plan, "b", "--format", "jsonl").stdout.splitlines()]
    assert rows[0]["input"] == "a" and rows[0]["elasticity"] == pytest.approx(1)


def _complete(script: str, *words: str) -> list[str]:
    """What bash offers for the words typed (the last is the one being completed)."""
    import shlex

    line = " ".join(shlex.quote(w) for w in words)
    code = (f"{script}\nCOMP_WORDS=({line}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _planner; "
            'printf "%s\\n" "${COMPREPLY[@]}"')
    proc = subprocess.run(["bash", "-c", code], capture_output=True, text=True, cwd=SHEETS.parent)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


def test_bash_completion():
    import shutil

    if shutil.which("bash") is None:
        pytest.skip("no bash")
    script = run("completion", "bash").stdout
    assert _complete(script, "planner", "ev") == ["eval"]
    assert set(_complete(script, "planner", "")) >= {"eval", "check", "fmt", "lsp", "--version", "--color"}
    assert _complete(script, "planner", "--color", "always", "ch") == ["check"]
    assert _complete(script, "planner", "check", "--format", "") == ["table", "json", "markdown", "jsonl"]
    assert _complete(script, "planner", "sweep", "-f", "") == ["table", "json", "csv", "markdown", "jsonl"]
    assert _complete(script, "planner", "eval", "--o") == ["--only"]
    assert _complete(script, "planner", "eval", "sheets/tok") == ["sheets/token_cost.plan"]
    assert _complete(script, "planner", "eval", "--set", "") == []


def test_zsh_completion_through_bashcompinit():
    import shutil

    if shutil.which("zsh") is None:
        pytest.skip("no zsh")
    script = run("completion", "zsh").stdout
    code = ("autoload -U compinit && compinit -u; autoload -U bashcompinit && bashcompinit\n" + script + "\n"
            "t() { setopt localoptions ksharrays; COMP_WORDS=(\"$@\"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ));"
            " COMPREPLY=(); _planner; print -l -- \"${COMPREPLY[@]}\"; }\n"
            "t planner eval sheets/tok; t planner check --format ''")
    proc = subprocess.run(["zsh", "-f", "-c", code], capture_output=True, text=True, cwd=SHEETS.parent)
    assert proc.stdout.split() == ["sheets/token_cost.plan", "table", "json", "markdown", "jsonl"], proc.stderr


def test_simple_tables_are_tabulates_to_the_character():
    """terminal.table lays out the common case itself (tabulate's import is a fifth of a small eval):
    the same text as tabulate's "simple" format, over random tables; anything else goes to tabulate."""
    import random
    import string

    from tabulate import tabulate

    from planner.outputs.terminal import _simple_table, table

    r = random.Random(11)
    alphabet = string.ascii_letters + string.digits + " .,-_/()%*"

    def cell():
        k = r.random()
        return None if k < 0.05 else "" if k < 0.1 else "  " if k < 0.15 else \
            "".join(r.choice(alphabet) for _ in range(r.randint(0, 14)))

    laid_out = 0
    for _ in range(3000):
        n = r.randint(1, 6)
        headers = ["".join(r.choice(alphabet) for _ in range(r.randint(0, 10))) for _ in range(n)]
        rows = [[cell() for _ in range(n)] for _ in range(r.randint(0, 6))]
        align = r.choice([None, [r.choice(["left", "right", "center"]) for _ in range(n)]])
        ours = _simple_table(rows, headers, align)
        laid_out += ours is not None
        assert table(rows, headers, align) == tabulate(rows, headers=headers, tablefmt="simple",
                                                       disable_numparse=True, colalign=align)
    assert laid_out > 2000
    assert _simple_table([["模型", "1"]], ["a", "b"], None) is None  # wide characters: tabulate's
    assert _simple_table([["a\nb", "1"]], ["a", "b"], None) is None  # lines in a cell: tabulate's
