"""`planner fmt`: the canonical layout, idempotent, and never a change of meaning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SHEETS

import planner
from planner.language import format as fmt
from planner.language.errors import ParseError, PlanError, flatten
from planner.language.format import FormatError, format_text
from planner.questions.checks import run_checks

LIBRARY = ROOT / "planner" / "library"
BAD = ROOT / "tests" / "bad_plans"

SHIPPED = sorted(SHEETS.glob("*.plan")) + sorted(LIBRARY.rglob("*.plan"))
TEST_PLANS = sorted(BAD.rglob("*.plan"))


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("source, expected", [
    # spacing around operators; signs, powers and calls stay tight
    ("x=1+2*3\n", "x = 1 + 2 * 3\n"),
    ("x = -a^2 - ( b-1 )\n", "x = -a^2 - (b - 1)\n"),
    ("x = a ** 2 / max( a , b )\n", "x = a**2 / max(a, b)\n"),
    ("x = f(- 1, positions=2)\n", "x = f(-1, positions = 2)\n"),
    ("x = not(a) and b<=c\n", "x = not (a) and b <= c\n"),
    # a number and its unit: one space, `%` attached; display units without spaces
    ("x = 3.0   TB/s\n", "x = 3.0 TB/s\n"),
    ("x = 5 %\n", "x = 5%\n"),
    ("x = a -> TB / s\n", "x = a -> TB/s\n"),
    ("x = a ->s^ -1\n", "x = a -> s^-1\n"),
    # docs, tags, constraints
    ('x = 1   "doc"   [ lower bound ,assumption :  free  verification ]  where 0<=x ,integer\n',
     'x = 1 "doc" [lower bound, assumption: free verification] where 0 <= x, integer\n'),
    # functions, scenarios, axes, references
    ("f( a,b = 2 ) = a*b\n", "f(a, b = 2) = a * b\n"),
    ("scenario s {a=1,b=2}\n", "scenario s { a = 1, b = 2 }\n"),
    ("check x @ s ~= 2 in p = q , r = t with a=1\n", "check x@s ~= 2 in p=q, r=t with a = 1\n"),
    ('check x@"a/b" == 1 for a=all\n', 'check x@"a/b" == 1 for a=all\n'),
    ("sweep a in 1 .. 8 step 2 , b in [ 1,2 ] show x , y for all\n",
     "sweep a in 1..8 step 2, b in [1, 2] show x, y for all\n"),
    ("solve  min batch where x>=y for all as z\n", "solve min batch where x >= y for all as z\n"),
    ("solve  min batch where x>=y as z  for all\n", "solve min batch where x >= y as z for all\n"),
    ("maximize s over g in 1..8 as best\ncheck best.value ~= 2\n",
     "maximize s over g in 1..8 as best\ncheck best.value ~= 2\n"),
    ('import "hardware/h100_sxm.plan"   as h100\nx = h100 . hbm_bandwidth\n',
     'import "hardware/h100_sxm.plan" as h100\nx = h100.hbm_bandwidth\n'),
    # comments kept, trailing comments two spaces after; blank lines: at most one, none at the ends
    ("\n\n# top\nx = 1 # one\n\n\n\ny = 2\n\n", "# top\nx = 1  # one\n\ny = 2\n"),
])
def test_layout(source, expected):
    assert format_text(source) == expected


def test_consecutive_definitions_align_their_equals_docs_tags_and_constraints():
    source = ('a = 1 "first" [assumption] where a > 0\n'
              'long_name = 20 TB/s "second" where long_name > 0 TB/s\n'
              'c = a * 2  # a comment\n'
              '\n'
              'after_blank = 1\n')
    assert format_text(source) == (
        'a         = 1       "first"  [assumption] where a > 0\n'
        'long_name = 20 TB/s "second"              where long_name > 0 TB/s\n'
        'c         = a * 2    # a comment\n'
        '\n'
        'after_blank = 1\n')


def test_comment_lines_do_not_end_an_alignment_block_but_other_statements_do():
    source = "a = 1\n# note\nbbb = 2\ncheck a == 1\ncc = 3\n"
    assert format_text(source) == "a   = 1\n# note\nbbb = 2\ncheck a == 1\ncc = 3\n"


def test_one_long_cell_does_not_push_the_whole_block():
    short = 'a = 1 "x"\nb = 2 "y"\n'
    long = f'c = {" + ".join(["a"] * 20)} "z"\n'
    lines = format_text(short + long).splitlines()
    assert lines[0] == 'a = 1 "x"'  # the docs of a and b line up with each other, not after c's formula
    assert lines[2].startswith("c = a + a")


def test_continuation_lines_line_up_inside_brackets():
    source = ("step(w, b) =\n"
              "  max((w + b) / bw,\n"
              "           2 * b / peak)\n"
              '      "a step"\n'
              "scenario s {\n"
              "  a = 1\n"
              "      b = 2\n"
              "    }\n")
    assert format_text(source) == ("step(w, b) =\n"
                                   "    max((w + b) / bw,\n"
                                   "        2 * b / peak)\n"
                                   '    "a step"\n'
                                   "scenario s {\n"
                                   "    a = 1\n"
                                   "    b = 2\n"
                                   "}\n")


def test_a_definition_whose_body_starts_below_does_not_join_the_alignment():
    source = ("long_function(a, b, c) =\n    a + b + c\nf(x) = x * 2\n    \"doubled\"\ng(y) = y\n")
    assert format_text(source) == ("long_function(a, b, c) =\n    a + b + c\nf(x) = x * 2\n    \"doubled\"\n"
                                   "g(y) = y\n")


def test_axis_members_line_up():
    source = "axis p {\n  bf16 { b = 16 bit }\n  fp8 { b = 8 bit,\n  m = true }\n}\n"
    assert format_text(source) == ("axis p {\n    bf16 { b = 16 bit }\n    fp8  { b = 8 bit,\n"
                                   "           m = true }\n}\n")


def test_a_plan_that_does_not_parse_is_an_error_not_a_layout():
    with pytest.raises(ParseError):
        format_text("x = (1 +\n")


def test_the_safety_net_fires_when_the_tokens_would_change(monkeypatch):
    monkeypatch.setattr(fmt, "_space", lambda *args: False)  # `a and b` would become the name `aandb`
    with pytest.raises(FormatError):
        format_text("x = a and b\n")


def test_doc_plan_blocks_are_formatted():
    """Every ```plan block of the README and docs/ is as `planner fmt` writes it."""
    from doc_pages import plan_blocks

    blocks = plan_blocks()
    assert len(blocks) >= 16
    for where, block, _ in blocks:
        assert format_text(block) == block, where


@pytest.mark.parametrize("path", SHIPPED + TEST_PLANS, ids=_id)
def test_formatting_is_idempotent(path):
    text = path.read_text(encoding="utf-8")
    try:
        once = format_text(text, str(path))
    except ParseError:
        assert path.is_relative_to(BAD)  # only the syntax-error examples do not parse
        return
    assert format_text(once, str(path)) == once


@pytest.mark.parametrize("path", SHIPPED, ids=_id)
def test_the_shipped_sheets_and_library_are_formatted(path):
    text = path.read_text(encoding="utf-8")
    assert format_text(text, str(path)) == text, f"run: planner fmt {_id(path)}"


def _outcome(text: str, path: Path):
    """Everything a plan computes: every quantity in every scenario, and every check; or its errors."""
    try:
        plan = planner.loads(text, str(path), path.parent)
        scenarios = [None] + plan.scenario_names
        values = {ev.label: ev.values for ev in plan.evaluate_all(scenarios)}
        checks = [(r.text, r.scenario, r.passed, r.lhs, r.rhs) for r in run_checks(plan)]
        return values, checks
    except PlanError as err:
        return [(e.family, e.message, e.span.line if e.span else None) for e in flatten(err)]


@pytest.mark.parametrize("path", SHIPPED + TEST_PLANS, ids=_id)
def test_formatting_never_changes_what_a_plan_computes(path):
    text = path.read_text(encoding="utf-8")
    try:
        formatted = format_text(text, str(path))
    except ParseError:
        return
    assert _outcome(formatted, path) == _outcome(text, path)


def _fmt(*args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "planner", "fmt", *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd)


def test_fmt_rewrites_files_and_check_exits_1_without_writing(tmp_path):
    messy = tmp_path / "messy.plan"
    messy.write_text("a=1\nbb = a*2\n", encoding="utf-8")
    tidy = tmp_path / "tidy.plan"
    tidy.write_text("a = 1\n", encoding="utf-8")
    proc = _fmt("--check", str(messy), str(tidy))
    assert proc.returncode == 1
    assert f"would reformat {messy}" in proc.stderr and str(tidy) not in proc.stderr
    assert messy.read_text() == "a=1\nbb = a*2\n"
    proc = _fmt("--diff", str(messy))
    assert proc.returncode == 0 and "-a=1\n-bb = a*2\n+a  = 1\n+bb = a * 2\n" in proc.stdout
    assert _fmt(str(messy), str(tidy)).returncode == 0
    assert messy.read_text() == "a  = 1\nbb = a * 2\n"
    assert _fmt("--check", str(messy), str(tidy)).returncode == 0


def test_fmt_writes_nothing_when_any_file_does_not_parse(tmp_path):
    good = tmp_path / "good.plan"
    good.write_text("a=1\n", encoding="utf-8")
    bad = tmp_path / "bad.plan"
    bad.write_text("a = (1 +\n", encoding="utf-8")
    proc = _fmt(str(good), str(bad))
    assert proc.returncode == 2
    assert "bad.plan:1:" in proc.stderr and "error[syntax]" in proc.stderr
    assert good.read_text() == "a=1\n"


def test_fmt_reads_standard_input_and_keeps_windows_line_endings(tmp_path):
    assert _fmt("-", stdin="a=1\n").stdout == "a = 1\n"
    crlf = tmp_path / "crlf.plan"
    crlf.write_bytes(b"a=1\r\nb = a\r\n")
    assert _fmt(str(crlf)).returncode == 0
    assert crlf.read_bytes() == b"a = 1\r\nb = a\r\n"


# ---- hostile input: limits, comments, files that are not plans ---------------------------------

def test_comments_and_blank_lines_are_no_terms_of_a_statement(tmp_path, cli):
    """26,000 comment lines at the top counted as one statement of more than 25,000 tokens: eval
    refused the plan, fmt --check crashed (internal error: LimitExceeded)."""
    path = tmp_path / "notes.plan"
    path.write_text("".join(f"# note {i}\n\n" for i in range(26_000)) + "x = 1\n")
    code, out, err = cli("eval", path)
    assert code == 0 and "x" in out, err
    code, _, err = cli("fmt", "--check", path)
    assert code in (0, 1) and "internal error" not in err


def test_a_statement_past_the_limit_is_a_located_error_in_fmt(tmp_path, cli):
    path = tmp_path / "big.plan"
    path.write_text("x = " + " + ".join(["1"] * 13_000) + "\n")
    for args in (("fmt", "--check", path), ("fmt", path)):
        code, _, err = cli(*args)
        assert code == 2 and "big.plan:1:1" in err and "more than 25,000 tokens" in err
        assert "internal error" not in err


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom"])
def test_fmt_refuses_what_is_not_a_regular_file_at_once(tmp_path, kind):
    """A FIFO and /dev/urandom hung fmt; /dev/zero ended in an internal MemoryError."""
    path = tmp_path / "pipe.plan"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path(kind)
    out = subprocess.run([sys.executable, "-m", "planner", "fmt", "--check", str(path)], capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and "not a .plan file" in out.stderr and "internal error" not in out.stderr


def test_fmt_keeps_hard_links(tmp_path, cli):
    a = tmp_path / "a.plan"
    a.write_text("x=1\n")
    b = tmp_path / "b.plan"
    os.link(a, b)
    code, _, err = cli("fmt", a)
    assert code == 0, err
    assert a.read_text() == "x = 1\n" == b.read_text() and os.path.samefile(a, b)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.plan", "b.plan"]  # no staged copy left


def test_fmt_names_its_own_way_out_when_it_may_not_write(tmp_path, cli, monkeypatch):
    a = tmp_path / "a.plan"
    a.write_text("x=1\n")
    from planner.outputs import build

    def denied(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")  # as an immutable file (chattr +i) answers

    monkeypatch.setattr(build, "_replace_files", denied)
    code, _, err = cli("fmt", a)
    assert code == 2 and "another -o" not in err and "planner fmt - <" in err and a.read_text() == "x=1\n"
