"""The command line: thin commands over the library.

Every command loads a plan, calls one library function and prints. User
errors (:class:`PlanError`) are caught here, in one place, and rendered
with file, line, column and a caret; exit codes: 0 ok, 1 a check failed,
2 a bad plan or bad arguments. argparse (standard library) keeps start-up
fast; heavy modules are imported inside the commands that need them.

One module per group of commands (``evaluate``, ``questions``, ``simulate``,
``files``, ``tools``), each defining ``add_NAME(sub)`` and its handler; the
commands are listed once, in :data:`planner.cli.parser.REGISTRY`.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import output
from .common import _color
from .options import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK, _version
from .parser import COMMANDS, build_parser
from .safety import _on_sigterm, _Terminated

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Callable, Optional, Sequence

__all__ = ["COMMANDS", "build_parser", "main", "run"]


def _command_of(argv: Sequence[str]) -> Optional[str]:
    """The command ``argv`` runs: its first word that is not an option of planner's own (nor
    ``--color``'s value), when that is a command; else None (every command's parser is built, to
    list them all: an unknown command, ``planner --help``)."""
    words = iter(argv)
    for word in words:
        if word in ("-h", "--help"):
            return None
        if word == "--color":
            next(words, None)
        elif word == "--" or not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:  # at once: no parser to build
        print(f"planner {_version()}")
        return 0
    parser = build_parser(_command_of(sys.argv[1:] if argv is None else argv))
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args, "command", None) == "sweep" and all("=" in e and not e.startswith("-") for e in extra):
        args.axes = list(args.axes) + extra  # `sweep FILE --show q alpha=...`: axes may follow options
    elif extra:
        parser.error("unrecognized arguments: " + " ".join(extra))
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    color = _color(args, sys.stderr)
    output._QUIET = args.quiet
    from ..compute import cache
    from ..outputs import progress

    progress.configure(quiet=args.quiet)
    cache.enable(not args.no_cache)
    handler: Callable[[argparse.Namespace], int] = args.handler
    from ..language.errors import PlanError, render
    from ..language.limits import RECURSION_LIMIT, deep, own_collector

    own_collector(True)  # this process is the command line's (see paused_gc)

    # Formulas are walked recursively (and SymPy recurses too): a sum of
    # thousands of terms needs more than Python's default 1,000 frames.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))

    default_sigterm = _on_sigterm()
    try:
        # On a thread with a big stack: deep formulas recurse in every stage (parser, SymPy, printers, Jinja)
        # and would overflow the C stack of the main thread before Python's recursion limit stops them.
        code = deep(handler, args)
        cache.flush()  # what the command derived and the cache keeps (closed forms)
        return code
    except PlanError as err:
        sys.stderr.write(render(err, color=color) + "\n")
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt as exc:
        built = sys.modules.get("planner.outputs.build")
        if built is not None:  # the write ran on another thread: its temporaries are removed here
            built.remove_staged()
        sys.stderr.write("terminated\n" if isinstance(exc, _Terminated) else "interrupted\n")
        return 143 if isinstance(exc, _Terminated) else 130
    except OSError as exc:  # a file that cannot be read or written
        sys.stderr.write(f"planner: error: {exc.strerror or exc}: {exc.filename or ''}\n".replace(": \n", "\n"))
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug in planner, not in the plan
        if os.environ.get("PLANNER_DEBUG"):
            raise
        sys.stderr.write(f"planner: internal error: {type(exc).__name__}: {exc}\n"
                         "  this is a bug in planner, not in your plan; rerun with PLANNER_DEBUG=1 to see the "
                         "traceback, and report it\n")
        return EXIT_INTERNAL
    finally:
        default_sigterm()
        cache.enable(False)  # the command line's choice, not the library's (main() may run in-process)
        own_collector(False)  # and what _load froze is the collector's again (main() may run in-process, many times)


def run() -> None:  # console script entry point
    sys.exit(main())

