"""Hostile and broken input: nothing clobbered, nothing leaked, no crash.

Each test checks one promise of the README's "Hostile plans and templates"
section: imports stay home and never echo a file that is not a plan; outputs
never replace their own inputs, links or devices; size and depth are bounded
with located errors; values that are not finite never pass a check.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import planner
from planner.language.errors import PlanError, flatten, render

ROOT = Path(__file__).resolve().parent.parent
SECRET = "SECRET_TOKEN=hunter2"


def _error(text: str, path: Path, name: str = "main.plan", **kwargs) -> PlanError:
    (path / name).write_text(text, encoding="utf-8")
    with pytest.raises(PlanError) as info:
        planner.load(path / name, **kwargs)
    return info.value


# ---- imports stay home ------------------------------------------------------------------

@pytest.fixture
def outside(tmp_path):
    """A folder tree: home/ holds the plan, secret/ a file that must not leak."""
    home, secret = tmp_path / "home", tmp_path / "secret"
    home.mkdir()
    secret.mkdir()
    (secret / "keys.plan").write_text(f"{SECRET}\n", encoding="utf-8")
    (secret / "lib.plan").write_text("bw = 2 TB/s\n", encoding="utf-8")
    return home, secret


@pytest.mark.parametrize("spec", ['"../secret/keys.plan"', '"{secret}/keys.plan"', '"/etc/passwd"',
                                  '"/proc/self/environ"', '"/dev/zero"', '"link.plan"'])
def test_an_import_outside_the_plans_folder_is_refused_unread(outside, spec):
    home, secret = outside
    (home / "link.plan").symlink_to(secret / "keys.plan")
    err = _error(f"import {spec.format(secret=secret)} as x\n", home)
    text = render(err)
    assert err.family == "import"
    assert "outside the folders imports may read" in text
    assert "--import-root" in text  # the rule and the way out
    assert SECRET not in text and "root:x:" not in text and "PATH=" not in text


def test_an_import_root_lets_a_team_library_in(outside):
    home, secret = outside
    (home / "main.plan").write_text('import "lib.plan" as team\nt = 1 TB / team.bw -> s\n', encoding="utf-8")
    with pytest.raises(PlanError, match="cannot find"):
        planner.load(home / "main.plan")
    plan = planner.load(home / "main.plan", import_roots=[secret])
    assert plan.evaluate()["t"] == pytest.approx(0.5)
    relative = planner.load(home / "main.plan", import_roots=[secret]).evaluate()["t"]
    assert relative == pytest.approx(0.5)


def test_import_root_on_the_command_line_and_in_the_environment(outside, cli, monkeypatch):
    home, secret = outside
    (home / "main.plan").write_text('import "../secret/lib.plan" as team\nt = 1 TB / team.bw -> s\n')
    code, _, err = cli("eval", home / "main.plan")
    assert code == 2 and "outside the folders" in err
    code, out, _ = cli("eval", home / "main.plan", "--import-root", secret)
    assert code == 0 and "0.5" in out
    monkeypatch.setenv("PLANNER_IMPORT_PATH", str(secret))
    code, out, _ = cli("check", home / "main.plan")
    assert code == 0


def test_nested_imports_are_judged_from_their_own_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "common.plan").write_text("k = 3\n")
    (tmp_path / "sub" / "a.plan").write_text('import "../common.plan" as c\ny = c.k * 2\n')
    (tmp_path / "main.plan").write_text('import "sub/a.plan" as a\nz = a.y\n')
    err = _error('import "sub/a.plan" as a\nz = a.y\n', tmp_path)  # sub/a.plan may not climb out of sub/
    assert "outside the folders" in render(err) and "sub/a.plan:1:" in render(err)


def test_importing_a_fifo_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "pipe.plan")
    err = _error('import "pipe.plan" as p\n', tmp_path)  # would block forever if it were opened for reading
    assert "is a FIFO" in err.message and "cannot find" not in err.message


def test_an_import_of_a_symlink_loop_is_a_located_error(tmp_path, cli):
    """Was `internal error: RuntimeError: Symlink loop` on the command line and in the server."""
    (tmp_path / "a.plan").symlink_to("b.plan")
    (tmp_path / "b.plan").symlink_to("a.plan")
    err = _error('import "a.plan" as a\nx = 1\n', tmp_path)
    assert "symlink loop" in err.message and err.span is not None and err.span.line == 1
    (tmp_path / "main.plan").write_text('import "a.plan" as a\nx = 1\n')
    code, _, out = cli("eval", tmp_path / "main.plan")
    assert code == 2 and "symlink loop" in out and "internal error" not in out


def test_a_plan_that_is_a_fifo_is_refused_at_once(tmp_path, cli):
    os.mkfifo(tmp_path / "pipe.plan")
    code, _, err = cli("eval", tmp_path / "pipe.plan")
    assert code == 2 and "is a FIFO (named pipe), not a .plan file" in err


def test_an_import_must_be_a_plan_file(tmp_path):
    (tmp_path / "notes.txt").write_text(f"{SECRET}\n")
    err = _error('import "notes.txt" as n\n', tmp_path)
    assert "is not a .plan file" in err.message and SECRET not in render(err)


@pytest.mark.parametrize("data,what", [
    (b"x = 1\n" + SECRET.encode() + b"\x00\n", "a NUL byte (U+0000)"),
    (b"x = 1\n" + SECRET.encode() + b"\xff\xfe\n", "not UTF-8 text"),
    (b"x = 1 \x1b]0;pwned\x07\n" + SECRET.encode() + b"\n", "U+001B (escape)"),
    ("x = 1 # \u202e gnp.exe\n".encode(), "bidirectional control"),
])
@pytest.mark.parametrize("imported", [False, True])
def test_text_that_is_not_a_plan_shows_the_position_only(tmp_path, data, what, imported):
    (tmp_path / "odd.plan").write_bytes(data)
    if imported:
        err = _error('import "odd.plan" as o\n', tmp_path)
    else:
        with pytest.raises(PlanError) as info:
            planner.load(tmp_path / "odd.plan")
        err = info.value
    text = render(err)
    assert what in text
    assert "odd.plan:" in text and ":1:" in text or ":2:" in text  # where, but not what
    assert SECRET not in text and "pwned" not in text and "gnp" not in text


def test_a_file_past_the_size_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    from planner.language import imports

    monkeypatch.setattr(imports, "MAX_FILE_BYTES", 1000)
    (tmp_path / "big.plan").write_text("x = 1\n" * 200)
    with pytest.raises(PlanError, match="at most 1,000") as info:
        planner.load(tmp_path / "big.plan")
    assert info.value.family == "limit"


# ---- outputs never clobber ---------------------------------------------------------------

PLAN = 'import "lib.plan" as lib\na = 1\ny = lib.x * a\nsweep a in [1, 2] show y\n'


@pytest.fixture
def project(tmp_path):
    (tmp_path / "lib.plan").write_text("x = 3\n")
    (tmp_path / "p.plan").write_text(PLAN)
    (tmp_path / "t.md.j2").write_text("# {{ title }}\n")
    return tmp_path


def _unchanged(project):
    assert (project / "p.plan").read_text() == PLAN
    assert (project / "lib.plan").read_text() == "x = 3\n"
    assert (project / "t.md.j2").read_text() == "# {{ title }}\n"


@pytest.mark.parametrize("args", [
    ["export", "p.plan", "-o", "p.plan"],
    ["export", "p.plan", "-o", "lib.plan"],  # an imported plan
    ["export", "p.plan", "-o", "hard.xlsx"],  # a hard link to the plan
    ["export", "p.plan", "-o", "soft.xlsx"],  # a symlink to the plan
    ["report", "p.plan", "-o", "p.plan"],
    ["report", "p.plan", "-o", "lib.plan"],
    ["report", "p.plan", "-t", "t.md.j2", "-o", "t.md.j2"],  # its own template
    ["build", "p.plan", "-t", "t.md.j2", "-o", "out"],  # out/p.md is a link to the template
    ["build", "p.plan", "-o", "."],  # ./p.md ... is fine, but out2/p.xlsx is a link to lib.plan
])
def test_an_output_never_replaces_an_input(project, cli, monkeypatch, args):
    monkeypatch.chdir(project)
    os.link("p.plan", "hard.xlsx")
    os.symlink("p.plan", "soft.xlsx")
    (project / "out").mkdir()
    os.symlink("../t.md.j2", "out/p.md")
    if args[-1] == ".":
        os.symlink("lib.plan", "p.xlsx")
    code, out, err = cli(*args)
    assert code == 2, err
    assert "an input of this run" in err and out == ""
    _unchanged(project)
    assert not list(project.glob("*.png")) and not list(project.glob(".*planner*"))


def test_a_symlink_is_followed_and_its_target_replaced(project, cli, monkeypatch):
    monkeypatch.chdir(project)
    (project / "books").mkdir()
    (project / "books" / "real.xlsx").write_bytes(b"old")
    os.symlink("books/real.xlsx", "link.xlsx")
    os.symlink("books/new.xlsx", "dangling.xlsx")
    for name in ("link.xlsx", "dangling.xlsx"):
        code, _, err = cli("export", "p.plan", "-o", name)
        assert code == 0, err
        assert os.path.islink(name)  # still a link
    assert (project / "books" / "real.xlsx").read_bytes()[:2] == b"PK"
    assert (project / "books" / "new.xlsx").read_bytes()[:2] == b"PK"
    os.symlink("books", "outlink")
    code, _, err = cli("build", "p.plan", "-o", "outlink")
    assert code == 0, err
    assert os.path.islink("outlink") and (project / "books" / "p.md").is_file()


def test_a_device_or_a_pipe_is_written_to_not_replaced(project, cli, monkeypatch):
    import stat
    import threading

    monkeypatch.chdir(project)
    code, _, err = cli("export", "p.plan", "-o", "/dev/null")
    assert code == 0, err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    os.mkfifo("pipe.md")
    got = []
    reader = threading.Thread(target=lambda: got.append(open("pipe.md", "rb").read()))
    reader.start()
    code, _, err = cli("report", "p.plan", "-o", "pipe.md")
    reader.join(10)
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat("pipe.md").st_mode)
    assert got and got[0].startswith(b"# ")
    assert not list(project.glob("pipe-sweep-*.png"))  # plots are not written next to a pipe


PLANNER = [sys.executable, "-c", "from planner.cli import run; run()"]


def planner_process(*args, cwd, timeout=120, **kwargs) -> subprocess.CompletedProcess:
    """planner in a process of its own, so a crash (a signal) is seen as one."""
    return subprocess.run(PLANNER + [str(a) for a in args], cwd=cwd, capture_output=True, timeout=timeout, **kwargs)


@pytest.mark.parametrize("output", ["-", "/dev/stdout"])
def test_standard_output(project, output):
    run = planner_process("export", "p.plan", "-o", output, cwd=project)
    assert run.returncode == 0, run.stderr
    assert run.stdout[:2] == b"PK" and len(run.stdout) > 1000
    run = planner_process("report", "p.plan", "-o", output, cwd=project)
    assert run.returncode == 0 and run.stdout.startswith(b"# ")
    run = planner_process("build", "p.plan", "-o", "-", cwd=project)
    assert run.returncode == 2 and b"cannot be standard output" in run.stderr


def test_an_unwritable_folder_names_the_users_path(project, cli, monkeypatch):
    import tempfile

    monkeypatch.chdir(project)

    def refused(*args, dir=None, **kwargs):
        raise PermissionError(13, "Permission denied", os.path.join(dir, ".book.xlsx.planner-1i5rg7fb"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    code, _, err = cli("export", "p.plan", "-o", "book.xlsx")
    assert code == 2
    assert "cannot write book.xlsx: Permission denied" in err and ".planner-" not in err
    assert "not writable" in err


# ---- values that are not finite never pass ----------------------------------------------

@pytest.mark.parametrize("text,reason", [
    ("check ln(0) == ln(0)\n", "logarithm of zero"),
    ("x = -1\ncheck sqrt(x) == sqrt(x)\n", "square root of a negative number"),
    ("z = 1\ny = 1 / z\ncheck y == y with z = 0\n", "division by zero"),
    ("z = 0\ncheck 1 / z == 5\n", "division by zero"),
    ("z = 0\ncheck 1 / z > 3\n", "division by zero"),  # inf > 3 is true, but not a finding
    ("z = 0\ncheck 0 / z ~= 1\n", "division by zero"),  # SymPy folds 0 / z to 0: not "got 0"
    ("x = 2\ncheck x ^ 1000000000 == 5\n", "overflow"),
    ("speedup = 2.5\ncheck speedup ^ 99999 ~= 1.5\n", "overflow"),
    ("x = 1000\ncheck exp(x) > 1\n", "overflow in `exp`"),
    ("x = 0\ncheck ln(x) < 5\n", "logarithm of zero"),  # -inf < 5 is true, but not a finding
])
def test_a_check_that_is_not_finite_fails_with_the_reason(plan_file, cli, text, reason):
    from planner.questions.checks import run_checks

    plan = planner.load(plan_file(text))
    results = run_checks(plan)
    assert results and not any(r.passed for r in results)
    assert all(r.error is not None and r.error.span is not None for r in results)
    assert reason in results[0].describe() and ".plan:" in results[0].describe()
    code, out, err = cli("check", plan_file(text))
    assert code == 1 and "internal error" not in err
    assert reason in out


def test_an_exact_check_of_a_huge_power_is_decided_quickly(plan_file):
    import time

    from planner.questions.checks import run_checks

    plan = planner.load(plan_file("x = 1\ncheck x ^ 1000000000 == 1\ncheck (x + 0.1) ^ 100000 > 1e300\n"))
    start = time.perf_counter()
    results = run_checks(plan)
    assert time.perf_counter() - start < 5
    assert results[0].passed
    assert not results[1].passed and "overflow" in results[1].describe()


# ---- size, depth and time are bounded ----------------------------------------------------

def _plan_error(text: str) -> PlanError:
    with pytest.raises(PlanError) as info:
        planner.loads(text, "big.plan")
    return flatten(info.value)[0]


@pytest.mark.parametrize("text,needle", [
    ("x = 1\ny = " + "exp(" * 10_000 + "x" + ")" * 10_000 + "\n", "nests deeper than 500 levels"),
    ("x = 1\ny = " + "(" * 10_000 + "x" + ")" * 10_000 + "\n", "nests deeper than 500 levels"),
    ("x = 1\ny = x" + " ^ x" * 10_000 + "\n", "nests deeper than 500 levels"),
    ("x = 1\ny = " + "- " * 10_000 + "x\n", "nests deeper than 500 levels"),
    ("a = 1\ny = " + " + ".join(["a"] * 100_000) + "\n", "more than 25,000 tokens"),
    ("f0(x) = x\n" + "".join(f"f{k}(x) = f{k - 1}(x) + f{k - 1}(x)\n" for k in range(1, 41)) + "y = f40(1)\n",
     "expands to 2,199,023,255,551 nodes"),
    ("y = 10 ^ 1000000000\n", "too large for double-precision"),
    ("y = 1.0001 ^ 100000000\n", "too large for double-precision"),
    ("y = 2 ^ 2 ^ 2 ^ 2 ^ 2 ^ 2\n", "too large for double-precision"),
    ("y = 1.0000001 ^ 100000000\n", "to compute exactly (the limit is 100,000)"),
])
def test_size_and_depth_are_refused_quickly_with_a_located_error(text, needle):
    import time

    start = time.perf_counter()
    err = _plan_error(text)
    assert time.perf_counter() - start < 20
    assert needle in err.message
    assert err.span is not None and err.span.source.name == "big.plan"
    assert len(render(err)) < 2000  # a 200 KB line is not printed whole


@pytest.mark.parametrize("text", [
    "x = 1\ny = " + "exp(" * 300 + "x / 1000000" + ")" * 300 + "\n",  # 300 nested exp
    "x = 1\ny = " + "".join(f"if(x > {i}, {i}, " for i in range(250)) + "0" + ")" * 250 + "\n",  # 250 tiers
    "x = 1\ny = x" + " ^ x" * 450 + "\n",
    "a = 1\ny = " + " + ".join(["a"] * 10_000) + "\n",  # 10,000 terms
    "x = 1\nf0(x) = x\n" + "".join(f"f{k}(x) = -f{k - 1}(x)\n" for k in range(1, 3000)) + "y = f2999(x)\n",
    "x = sqrt(2) ^ 1000000000\n",  # an overflow, in floating point, not an exact 150-million-digit integer
])
def test_deep_and_wide_plans_load_in_a_process_without_crashing(tmp_path, text):
    (tmp_path / "deep.plan").write_text(text)
    run = planner_process("eval", "deep.plan", cwd=tmp_path, timeout=300)
    assert run.returncode in (0, 2), run.stderr  # a segfault is -11, an internal error 3
    assert b"internal error" not in run.stderr
    if run.returncode == 2:
        assert b"error[" in run.stderr


def test_reserved_words_name_nothing():
    for text in ["and = 1\n", "true = 2\n", "x = 1\nwhere = 3\n", "f(where) = 1\n", "x = 1\nscenario and { x = 2 }\n",
                 "x = 1\naxis in { a { x = 2 } }\n", "x = 1\naxis a { or { x = 2 } }\n",
                 "x = 1\nsolve x where x = 1 as not\n", "unit with\n", "f = 1\n" + 'import "lib.plan" as for\n']:
        err = _plan_error(text)
        assert "is a reserved word" in err.message, text


@pytest.mark.parametrize("text,message,not_in", [
    ("x = 1e\n", "`1e` is an incomplete number", "unknown unit"),
    ("x = 100 Mbps\n", "write `Mbit/s`", "did you mean `ps`"),
    ('x = 1 "hello\n', "unterminated string", "unexpected"),
    ("data = 1\ny = d\u0430ta + 1\n", "U+0430 cyrillic small letter a", None),
])
def test_messages_say_what_is_really_wrong(text, message, not_in):
    err = _plan_error(text)
    text = render(err)
    assert message in text
    if not_in:
        assert not_in not in text


# ---- templates ------------------------------------------------------------------------------

@pytest.mark.parametrize("template,needle", [
    ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}\n", b"calls nested deeper than 200 levels"),
    ("{% for x in [1] recursive %}{{ loop([x]) }}{% endfor %}\n", b"calls nested deeper than 200 levels"),
    ("{{ ((10 ** 1000) ** 1000) ** 1000 }}\n", b"would make an integer of about 3,322,000 bits"),
    ("{% set x = 10 ** 1000 %}{{ x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x"
     " * x * x * x * x * x * x * x * x * x * x * x * x * x }}\n", b"would make an integer"),
    ('{% include "t.md.j2" %}\n', b"`t.md.j2` includes or extends itself"),
    ('{% extends "t.md.j2" %}\n', b"`t.md.j2` includes or extends itself"),
])
def test_a_hostile_template_is_stopped_with_a_located_error(project, template, needle):
    (project / "t.md.j2").write_text(template)
    run = planner_process("report", "p.plan", "-t", "t.md.j2", cwd=project, timeout=120)
    assert run.returncode == 2, run.stderr  # not -11 (a segfault), not 3, not a hang
    assert b"t.md.j2:1:" in run.stderr and b"error[template]" in run.stderr and needle in run.stderr


def test_the_render_time_limit_holds_on_the_worker_thread(project, monkeypatch):
    """The CLI renders on a thread with a big stack, where no SIGALRM can reach: the clock is checked in loops."""
    import planner.outputs.report as report
    from planner.language.errors import TemplateError
    from planner.language.limits import deep

    monkeypatch.setattr(report, "RENDER_SECONDS", 0.5)
    path = project / "slow.j2"
    path.write_text("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n")
    with pytest.raises(TemplateError, match="ran for more than 0.5 s"):
        deep(report.render, {}, str(path))


# ---- the promise: no code runs, nothing is written outside -o -----------------------------

@pytest.mark.parametrize("text", [
    'x = __import__("os").system("touch pwned")\n',
    'x = exec("open(\'pwned\', \'w\')")\n',
    'x = 1\ny = x.__class__\n',
    'x = 1 "{{ lipsum.__globals__ }}"\ncheck x == eval("1")\n',
    'title "=cmd|\' /C calc\'!A0"\nnote "@SUM(1)"\nx = 1 "+1"\n',  # spreadsheet formulas stay text
])
def test_no_code_runs(tmp_path, cli, text):
    (tmp_path / "p.plan").write_text(text)
    for args in (["eval", "p.plan"], ["export", "p.plan", "-o", "p.xlsx"], ["report", "p.plan", "-o", "p.md"]):
        code, out, err = cli(*[str(tmp_path / a) if a.startswith("p.") else a for a in args])
        assert code in (0, 2) and "internal error" not in err
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    if (tmp_path / "p.xlsx").exists():
        from openpyxl import load_workbook

        book = load_workbook(tmp_path / "p.xlsx")
        cells = [c for ws in book for row in ws.iter_rows() for c in row
                 if isinstance(c.value, str) and ("cmd|" in c.value or "@SUM" in c.value)]
        assert cells and all(c.data_type == "s" for c in cells)  # text cells, never formulas


def test_nothing_is_written_outside_o(project, cli, monkeypatch):
    monkeypatch.chdir(project)

    def tree():
        return {str(p.relative_to(project)): p.stat().st_mtime_ns for p in project.rglob("*")}

    before = tree()
    assert cli("export", "p.plan", "-o", "out/book.xlsx")[0] == 0
    assert cli("report", "p.plan", "-o", "rep/r.md")[0] == 0
    assert cli("build", "p.plan", "-o", "b")[0] == 0
    assert cli("check", "p.plan")[0] == 0
    after = tree()
    changed = {p for p in after if before.get(p) != after[p]}
    assert changed == {"out", "out/book.xlsx", "rep", "rep/r.md", "rep/r-sweep-1.png", "rep/r-sensitivity.png",
                       "b", "b/p.xlsx", "b/p.md", "b/p-sweep-1.png", "b/p-sensitivity.png"}


# ---- aggregates: sizing agrees with evaluation, and nested work is bounded ----------------------

def test_a_range_sized_through_round_rounds_half_away_from_zero(plan_file, cli):
    """round(-1.5) is -2 (half away from zero); the range was sized with -1 (half up), one value short,
    and the sum failed as "not a finite number". By hand: -2 + -1 + 0 + 1 + ... + 5 = 12."""
    code, out, err = cli("eval", plan_file("x = -1.5 where -1.5 <= x <= 0\ny = sum(m for m in round(x)..5)\n"),
                         "-f", "json")
    assert code == 0, err
    assert '"y"' in out and "12" in out and "not a finite" not in err
    plan = planner.loads("x = -2.5 where -2.5 <= x <= 2.5\ny = sum(m for m in round(x)..3)\n")
    assert plan.evaluate().values["y"] == -3 - 2 - 1 + 0 + 1 + 2 + 3


def test_nested_aggregates_have_a_limit_on_their_total_terms(tmp_path):
    """Three nested sums of 20,000 terms each ran past 90 s; now a located error at once that marks
    every range. 100 x 100 x 100 is within the limit: (5050)^3 by hand."""
    text = ("n = 20000 where integer, 1 <= n <= 20000\n"
            "t = sum(sum(sum(i * j * k for k in 1..n) for j in 1..n) for i in 1..n)\n")
    err = _error(text, tmp_path)
    shown = render(err)
    assert "nested aggregates can take 400,000,000 terms in all (20,000 x 20,000" in err.message
    assert shown.count("20,000 values") == 1 and "inside the ranges marked" in shown
    small = planner.loads(text.replace("20000", "100"))
    assert small.evaluate().values["t"] == 5050 ** 3


def test_a_workbook_that_would_need_a_million_helper_cells_is_refused_at_once(cli, tmp_path):
    """1,000 x 1,000 nested terms are within the plan's limit (1,000,000) but would write a block of
    1,000,000 cells on the Cash flows sheet (a row per inner term, a column per outer one): hours of
    export. Refused before any is written, naming the figure and the count; nothing is written. 30 x 30
    exports."""
    text = ("n = 1000 where integer, 1 <= n <= 1000\n"
            "total = sum(sum(i * j for j in 1..n) for i in 1..n)\n")
    path = tmp_path / "nested.plan"
    path.write_text(text)
    code, out, err = cli("--no-cache", "export", str(path), "-o", str(tmp_path / "nested.xlsx"))
    assert code == 2
    assert "Model: total: `sum` over ranges would write 1,000,000 cells" in err, err
    assert f"{path}:2:1: error[excel]" in err  # located: the figure's definition, with a caret
    assert "internal error" not in err and not (tmp_path / "nested.xlsx").exists()
    path.write_text(text.replace("1000", "30"))
    code, out, err = cli("--no-cache", "export", str(path), "-o", str(tmp_path / "nested.xlsx"))
    assert code == 0 and (tmp_path / "nested.xlsx").exists(), err


# ---- interrupted and concurrent writes -------------------------------------------------------------

@pytest.mark.parametrize("signame, code, said", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_an_interrupted_sweep_leaves_no_temporary(tmp_path, signame, code, said):
    """Ctrl-C (or SIGTERM) during `sweep -o out.csv` left a 40-57 MB `.out.csv.planner-*` beside the
    target: the write runs on another thread, whose cleanup never ran before the process ended."""
    import signal
    import time

    (tmp_path / "sw.plan").write_text("a = 1\nb = 1\nc = 1\ny = a * b + c\n")
    (tmp_path / "out.csv").write_text("the old file\n")
    proc = subprocess.Popen([sys.executable, "-m", "planner", "sweep", "sw.plan", "a=0..1 count 1000",
                             "b=0..1 count 1000", "c=1..5", "-f", "csv", "-o", "out.csv"],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    while not list(tmp_path.glob(".out.csv.planner-*")) and time.monotonic() - start < 60:
        time.sleep(0.02)
    assert list(tmp_path.glob(".out.csv.planner-*")), "the sweep never started writing"
    proc.send_signal(getattr(signal, signame))
    _, err = proc.communicate(timeout=60)
    time.sleep(0.5)  # nothing is left behind after the process is gone, either
    assert proc.returncode == code and said in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "sw.plan"]
    assert (tmp_path / "out.csv").read_text() == "the old file\n"  # the target: the old file, untouched


def test_two_builds_into_one_new_folder(tmp_path):
    """Started together into a folder that does not exist yet: one failed with "Directory not empty".
    Now each succeeds, or one says clearly that the other made the folder; the folder is one run's."""
    plan = ROOT / "sheets" / "token_cost.plan"
    argv = [sys.executable, "-m", "planner", "build", str(plan), "-o", str(tmp_path / "out")]
    procs = [subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    for code, err in results:
        assert code in (0, 2) and "Directory not empty" not in err and "internal error" not in err, err
        if code == 2:
            assert "was created by another run while this one was writing it" in err
    assert any(code == 0 for code, _ in results)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staged folder left
    assert (tmp_path / "out").is_dir()



def test_a_folder_made_by_another_run_meanwhile_is_a_clear_error(tmp_path, monkeypatch):
    from planner.language.errors import UsageError
    from planner.outputs import build

    real_rename = os.rename

    def other_run_first(src, dst):  # the other build renamed its staged folder in a moment earlier
        os.makedirs(dst)
        (Path(dst) / "report.md").write_text("the other run's report\n")
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", other_run_first)
    with pytest.raises(UsageError, match="was created by another run while this one was writing it"):
        build.publish([build.Output("report.md", b"this run's report\n", "file")], tmp_path / "out")
    monkeypatch.setattr(os, "rename", real_rename)
    assert (tmp_path / "out" / "report.md").read_text() == "the other run's report\n"  # one run's folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and not build._STAGED
