"""The command line's parser, and the one list of its commands.

A command lives in a module of this package that defines ``add_NAME(sub)`` (its parser, added to
argparse's subparsers, with ``set_defaults(handler=...)``) and the handler (``args -> exit code``).
It is registered by one line in :data:`REGISTRY`: the command's name and that module. Only the module
of the command being run is imported (start-up time: heavy modules are imported inside handlers).
"""

from __future__ import annotations

import argparse
import importlib

from .options import _Parser, _version

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional

# Every command, in the order `planner --help` lists them: (name, the module of planner.cli defining add_NAME).
REGISTRY = [
    ("eval", "evaluate"),
    ("check", "questions"),
    ("simulate", "simulate"),
    ("explain", "evaluate"),
    ("sweep", "questions"),
    ("solve", "questions"),
    ("sensitivity", "questions"),
    ("export", "files"),
    ("import", "files"),
    ("report", "files"),
    ("diff", "review"),
    ("build", "files"),
    ("serve", "review"),
    ("fmt", "tools"),
    ("lsp", "tools"),
    ("completion", "tools"),
    ("library", "tools"),
]

COMMANDS = frozenset(name for name, _ in REGISTRY)


def build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line's parser: every command, or with ``only`` that command alone (what
    :func:`main` parses with when it knows the command: building all of them was a tenth of a small
    ``planner eval``)."""
    parser = _Parser(
        prog="planner",
        description="Plan with numbers: evaluate, check and explain .plan files of named quantities with units.",
        epilog="Exit codes: 0 success, 1 a check failed, 2 a bad plan or bad arguments, 3 an internal error. "
               "See docs/language.md for the language.",
    )
    parser.add_argument("--version", action="version", version=f"planner {_version()}")
    parser.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                        help="colour in error messages and check results: auto (on a terminal, unless NO_COLOR "
                             "is set), always or never (default: auto)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the cache of compiled plans and drawn charts (in the user's "
                             "cache folder: $XDG_CACHE_HOME/planner, ~/.cache/planner by default)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar and no notes on stderr (errors are still shown); progress bars "
                             "appear only on a terminal, after about a second, and never with NO_COLOR set")
    # `planner completion` describes the whole parser: it is handed this function rather than importing
    # this module (which imports the command modules: a cycle)
    parser.set_defaults(whole_parser=build_parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module in REGISTRY:
        if only is None or only == name:  # the others are not built: a parser of argparse's costs about a millisecond
            getattr(importlib.import_module(f"{__package__}.{module}"), f"add_{name}")(sub)
    return parser
