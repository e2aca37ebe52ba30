"""Shared test helpers: paths, loading plans from text, running the CLI."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# The compiled-plan cache of the command line (planner.compute.cache) lives in a folder of the test
# run's own, never the user's; subprocesses inherit it.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="planner-test-cache-")
# pytest-xdist's workers run with COLUMNS=80, which the command line reads as the table width: the tests
# see what a pipe sees (no width) unless a test sets one, as in a single process.
os.environ.pop("COLUMNS", None)



def pytest_addoption(parser):
    parser.addoption("--no-tricks", action="store_true",
                     help="run with planner's speed tricks off (PLANNER_NO_TRICKS=1; planner/language/speed.py)")


def pytest_configure(config):
    config.addinivalue_line("markers", "trick(name): tests that trick itself (skipped when it is switched off)")
    if config.getoption("--no-tricks"):
        import sys

        if "planner.language.speed" in sys.modules:  # read once, at import: too late to switch
            raise pytest.UsageError("--no-tricks: planner was imported before the tests were configured")
        os.environ["PLANNER_NO_TRICKS"] = "1"  # (the subprocesses the tests start inherit it)


def pytest_collection_modifyitems(config, items):
    from planner.language import speed

    for item in items:
        for mark in item.iter_markers("trick"):
            if not speed.on(mark.args[0]):
                item.add_marker(pytest.mark.skip(reason=f"the `{mark.args[0]}` trick is switched off"))


ROOT = Path(__file__).resolve().parent.parent
SHEETS = ROOT / "sheets"
TOKEN_COST = SHEETS / "token_cost.plan"

# Two axes with two members each: the plan the `for a=a1, b=b1` selection tests share.
TWO_AXES = """
p = 1
q = 1 where integer, q >= 1
x = p * q
axis a {
  a1 { p = 2 }
  a2 { p = 3 }
}
axis b {
  b1 { q = 5 }
  b2 { q = 7 }
}
"""


@pytest.fixture
def plan_file(tmp_path):
    """Write plan text to a file and return its path."""

    def make(text: str, name: str = "test.plan") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return make


@pytest.fixture
def cli(capsys):
    """Run ``planner`` in-process; returns (exit code, stdout, stderr)."""
    from planner.cli import main

    def run(*args: str):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="session")
def token_cost():
    """The reference plan compiled, as the commands and the outputs take it (``planner.load`` wraps it)."""
    from planner.plan import load_compiled

    return load_compiled(TOKEN_COST)
