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
