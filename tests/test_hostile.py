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
