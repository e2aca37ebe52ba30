"""The commands for reviewing and presenting a plan: `planner diff` (what changed between two versions,
and why the figures moved) and `planner serve` (a local page with the inputs as sliders)."""

from __future__ import annotations

import sys

from .common import _width, import_roots, warn
from .options import EXIT_CHECK_FAILED, EXIT_OK, _format, _import_root
from .output import note, write_output


def add_diff(sub) -> None:
    p = sub.add_parser("diff", help="what changed between two versions of a plan, which figures moved and why",
                       description="Compare OLD and NEW (each a file, or REV:PATH: the file at a git revision, as "
                                   "`git show` reads it): changed statements, every headline figure and answer that "
                                   "moved per scenario, and each one's bridge (the effect of each change alone, and "
                                   "their interaction). Exit 1 when a check that passed in OLD fails in NEW.")
    p.add_argument("old", metavar="OLD", help="the old version: a .plan file or REV:PATH (HEAD~1:plan.plan)")
    p.add_argument("new", metavar="NEW", help="the new version: a .plan file or REV:PATH")
    p.add_argument("--details", action="store_true", help="every moved figure and its whole bridge, every check")
    p.add_argument("--output", "-o", metavar="DIR", help="write diff.md and its waterfall charts (PNG) into DIR")
    _import_root(p)
    _format(p, ("table", "json", "csv", "markdown"))
    p.set_defaults(handler=cmd_diff)


def cmd_diff(args) -> int:
    from ..outputs import diff

    d = diff.run(args.old, args.new, import_roots(args))
    if args.output:
        note("wrote " + ", ".join(diff.write(d, args.output)))
    else:
        write_output({"json": diff.json_text, "csv": diff.as_csv, "markdown": diff.markdown}.get(
            args.format, lambda d: diff.text(d, args.details, _width()))(d))
    return EXIT_CHECK_FAILED if d.regressions else EXIT_OK


def add_serve(sub) -> None:
    p = sub.add_parser("serve", help="a local web page for the plan: inputs as sliders, figures recomputed live",
                       description="Serve a page for FILE on this machine: its inputs as sliders and fields (units, "
                                   "bounds, docs), a scenario picker, the headline figures, answers and checks "
                                   "recomputed as an input moves, the sweeps' charts, a Monte Carlo view, and a "
                                   "button that writes the edited inputs back into FILE (as `planner import "
                                   "--write`). The page reloads when FILE changes. Needs Starlette and uvicorn: "
                                   "pip install starlette uvicorn (or '.[serve]' in a checkout).")
    p.add_argument("file", metavar="FILE", help="a .plan file")
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (default: 127.0.0.1, this machine only; another address "
                        "lets others reach the page, and write into FILE)")
    p.add_argument("--port", type=int, default=8765, help="the port to listen on (default: 8765; 0: any free port)")
    _import_root(p)
    p.set_defaults(handler=cmd_serve)


def cmd_serve(args) -> int:
    from ..language.errors import UsageError

    try:
        from ..outputs.serve.app import LOOPBACK, serve
    except ImportError as exc:
        raise UsageError(f"planner serve needs the web server the `serve` extra installs ({exc.name} is missing)",
                         hint="pip install starlette uvicorn (or pip install '.[serve]' in a checkout of planner)"
                         ) from None
    from ..outputs.serve.live import Session

    session = Session(args.file, import_roots(args))
    warn(session.plan)
    if args.host not in LOOPBACK:
        sys.stderr.write(f"warning: --host {args.host}: anyone who can reach this address can see the plan and write "
                         f"edits into {args.file}\n")
    try:
        serve(session, args.host, args.port, ready=lambda url: note(f"serving {args.file} at {url} (Ctrl-C stops)"))
    except OSError as exc:  # the port is taken, the address is not this machine's
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
                         hint="pick another --port (0: any free one)") from None
    return EXIT_OK
