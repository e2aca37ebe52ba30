"""The README documents every command and every option of the CLI
(in the spirit of sqlite-utils' tests/test_docs.py)."""

import argparse
import re

import pytest
from conftest import ROOT

from planner.cli import build_parser

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _subcommands():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, action.choices


def _options(parser):
    for action in parser._actions:
        for flag in action.option_strings:
            if flag not in ("-h", "--help"):
                yield flag


def test_every_command_is_documented():
    _, commands = _subcommands()
    for name in commands:
        assert f"planner {name}" in README, f"`planner {name}` is not in README.md"


@pytest.mark.parametrize("command", sorted(_subcommands()[1]))
def test_every_option_is_documented(command):
    sub = _subcommands()[1][command]
    for flag in _options(sub):
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", README), \
            f"`planner {command} {flag}` is not in README.md"


def test_global_options_are_documented():
    parser, _ = _subcommands()
    for flag in _options(parser):
        assert flag in README, f"`planner {flag}` is not in README.md"


def test_the_parser_of_one_command_parses_as_the_whole_one():
    """main() builds only the command it runs: the same names, defaults and handler as the full parser;
    every command is built where they are listed (`planner --help`, an unknown command)."""
    from planner.cli import COMMANDS, _command_of

    full = build_parser()
    commands = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == COMMANDS
    cases = [["eval", "x.plan", "-s", "all", "--set", "a=1"], ["--color", "never", "check", "x.plan", "-v"],
             ["-q", "sweep", "x.plan", "alpha=0..1", "--limit", "3"], ["--no-cache", "solve", "x.plan", "--for", "a",
                                                                      "--where", "b = 1", "--min"],
             ["export", "x.plan", "-o", "b.xlsx"], ["fmt", "--check", "a.plan", "b.plan"], ["library"]]
    for argv in cases:
        only = _command_of(argv)
        assert only in COMMANDS, argv
        one = build_parser(only)
        assert vars(one.parse_args(argv)) == vars(full.parse_args(argv)), argv
    assert _command_of(["--color", "eval"]) is None  # `eval` is the colour here, not the command
    assert _command_of(["evaluate", "x.plan"]) is None and _command_of(["--version"]) is None
    assert _command_of(["-h", "eval"]) is None and _command_of(["eval", "-h"]) == "eval"
