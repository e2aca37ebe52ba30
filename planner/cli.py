"""The command line: thin commands over the library.

Every command loads a plan, calls one library function and prints. User
errors (:class:`PlanError`) are caught here, in one place, and rendered
with file, line, column and a caret; exit codes: 0 ok, 1 a check failed,
2 a bad plan or bad arguments. argparse (standard library) keeps start-up
fast; heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import argparse
import os
import sys

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Callable, Optional, Sequence

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def _columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` gives it (COLUMNS, else the terminal
    of stdout, else 80), without importing shutil (and the compression modules it brings)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Help(argparse.HelpFormatter):
    """argparse's help layout, told the width (its own way of finding it imports shutil)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # bad arguments: exit 2 with usage
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _positive(text: str) -> int:
    from .language.literals import whole_number

    try:
        return whole_number(text, 1)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _seed(text: str) -> int:
    from .language.literals import whole_number

    try:
        return whole_number(text, 0)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _percentiles(text: str) -> list[float]:
    try:
        out = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        out = []
    if not out or not all(0 < p < 100 for p in out):
        raise argparse.ArgumentTypeError(f"expected percentiles between 0 and 100, such as 5,50,95; got {text!r}")
    return out


def _sampling(p: argparse.ArgumentParser, dask: bool = False) -> None:
    p.add_argument("--samples", "-n", type=_positive, default=10_000, metavar="N",
                   help="samples of the uncertain inputs (default: 10,000)")
    p.add_argument("--seed", type=_seed, default=0, metavar="S",
                   help="the random seed: the same seed gives the same samples on every machine (default: 0)")
    p.add_argument("--method", choices=["lhs", "random", "counter"], default=None if dask else "lhs",
                   help="Latin hypercube (lhs, the default), plain random sampling, or counter: the workbook's "
                        "Trials generator, a formula of the trial number (the same numbers as its sheet)"
                        + ("; with --dask, random is the default and lhs is refused (it shuffles every sample at "
                           "once)" if dask else ""))


def _chunk_mb(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = 0.0
    if not 0.001 <= v <= 100_000:
        raise argparse.ArgumentTypeError(f"expected a size in MB from 0.001 to 100000, got {text!r}")
    return v


def _dask(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--dask", action="store_true",
                   help=f"run the {what} as chunked Dask arrays, reduced to figures without holding them: for runs "
                        "too large for memory (needs dask, distributed and xarray: pip install 'dask[array]' distributed xarray)")
    p.add_argument("--chunk-mb", type=_chunk_mb, default=100.0, metavar="MB",
                   help="with --dask, the size of a chunk: one task per chunk, holding about this many MB of "
                        "values (every quantity computed for it; default: 100)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --dask, run on the dask.distributed cluster at ADDRESS (tcp://host:8786; its workers "
                        "need planner installed); implies --dask. Default: this machine's cores")


def _names(text: str) -> list[str]:
    """`--only a,b` (one value per option, so it never swallows FILE)."""
    return [n.strip() for n in text.split(",") if n.strip()]


def _add_common(p: argparse.ArgumentParser, scenario: bool = True, sets: bool = True) -> None:
    p.add_argument("file", metavar="FILE", help="a .plan file")
    if scenario:
        p.add_argument("--scenario", "-s", action="append", metavar="NAME",
                       help="scenario to use: a name, a comma list, `base` (the plan as written) or `all` "
                            "(the plan as written, then every scenario); repeatable")
    _import_root(p)
    if sets:
        p.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE",
                       help="override an input, with plan syntax for the value (`--set 'hbm_bandwidth=3.35 TB/s'`); repeatable")


def _import_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--import-root", dest="import_roots", action="append", default=[], metavar="DIR",
                   help="a folder imports may also read from and are looked up in (a team's library); repeatable. "
                        "PLANNER_IMPORT_PATH adds more (separated by `" + os.pathsep + "`)")
    p.add_argument("--no-cache", action="store_true", default=argparse.SUPPRESS,  # after the command too
                   help="neither read nor write the compiled-plan cache (as `planner --no-cache COMMAND`)")


def _format(p: argparse.ArgumentParser, choices=("table", "json", "csv", "markdown", "jsonl")) -> None:
    p.add_argument("--format", "-f", choices=list(choices), default="table",
                   help="output format: " + ", ".join(choices) + " (default: table, fitted to the terminal's width)")


def _command(sub, only: Optional[str], name: str, **kwargs):
    """A subcommand's parser, to add its arguments to; None when only the command ``only`` is being
    parsed (the others are not built: a parser of argparse's costs about a millisecond)."""
    return sub.add_parser(name, **kwargs) if only is None or only == name else None


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
                        help="neither read nor write the compiled-plan cache (in the user's cache folder: "
                             "$XDG_CACHE_HOME/planner, ~/.cache/planner by default)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar and no notes on stderr (errors are still shown); progress bars "
                             "appear only on a terminal, after about a second, and never with NO_COLOR set")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = _command(sub, only, "eval", help="evaluate every quantity (per scenario)",
                            description="Evaluate every quantity, as written or per scenario, with --set overrides.")
    if p is not None:
        _add_common(p)
        p.add_argument("--only", type=_names, action="extend", metavar="NAME[,NAME...]",
                       help="show only these quantities or answers (`as NAME` of a question); a comma list, repeatable")
        p.add_argument("--all", action="store_true", dest="all_imports",
                       help="also show the imported quantities the plan does not use")
        _format(p)
        p.set_defaults(handler=cmd_eval)

    p = _command(sub, only, "check", help="run every `check`; exit 1 if any fails",
                            description="Run every `check` statement. Exit 0 when all pass, 1 when any fails.")
    if p is not None:
        p.add_argument("file", metavar="FILE", help="a .plan file")
        p.add_argument("--verbose", "-v", action="store_true", help="list passing checks too")
        _sampling(p)
        _import_root(p)
        _format(p, ("table", "json", "markdown", "jsonl"))
        p.set_defaults(handler=cmd_check)

    p = _command(sub, only, "simulate", help="Monte Carlo over the uncertain inputs: mean, sd, percentiles",
                 description="Sample every uncertain input (`x = 40%% to 70%%`, `normal(mean, sd)` ...) once, "
                             "evaluate every quantity on those samples in each scenario, and print each "
                             "quantity's point value, mean, standard deviation and percentiles. One shared "
                             "sample set per run: every scenario sees the same samples.")
    if p is not None:
        _add_common(p)
        _sampling(p, dask=True)
        _dask(p, "simulation")
        p.add_argument("--show", type=_names, action="extend", metavar="NAME[,NAME...]",
                       help="quantities to show, a comma list; repeatable (default: the uncertain inputs and "
                            "every quantity they reach)")
        p.add_argument("--percentiles", type=_percentiles, metavar="P[,P...]", default=[5.0, 50.0, 95.0],
                       help="percentiles to show, a comma list (default: 5,50,95)")
        p.add_argument("--probability", "-p", action="append", default=[], metavar="CONDITION",
                       help='the probability of a condition, in plan syntax ("cost < 2 USD"); repeatable')
        p.add_argument("--sensitivity", action="store_true",
                       help="also show each quantity's rank correlation with each uncertain input (a tornado, "
                            "largest first); the JSON output always has them")
        p.add_argument("--solve", metavar="'INPUT where CONDITION'",
                       help="the value of INPUT at the edge of a probability condition, by bisection over the "
                            "fixed sample set: --solve 'rent_price where P(owning_is_cheaper) >= 80%%'")
        _format(p, ("table", "json", "csv", "markdown"))
        p.set_defaults(handler=cmd_simulate)

    p = _command(sub, only, "explain", help="show a quantity's formula, SymPy form, value and inputs",
                            description="The formula as written, its SymPy form, the same over inputs only, "
                                        "its value with unit, and the inputs it depends on.")
    if p is not None:
        _add_common(p)
        p.add_argument("name", metavar="NAME", help="the quantity to explain")
        p.set_defaults(handler=cmd_explain)

    p = _command(sub, only, "sweep", help="evaluate quantities over a grid of input values (vectorised)",
                            description="Without NAME=VALUES, run every `sweep` in the file; with them, sweep those "
                                        "inputs as a grid. VALUES as in a plan: 0.3,0.6,0.8 or [0.3, 0.6], 1..8, "
                                        "'1..8 step 2', '1..1024 times 2', '2 TB/s..4 TB/s count 5'. Points that break "
                                        "a constraint or give no finite value are reported, not printed as nan. With "
                                        "--dask, a grid too large for memory runs in chunks and is reduced to figures "
                                        "per quantity (mean, sd, min, max, percentiles) and the share of points where "
                                        "each --probability holds.")
    if p is not None:
        _add_common(p)
        p.add_argument("axes", nargs="*", metavar="NAME=VALUES", help="an input and its values; several make a grid")
        p.add_argument("--show", type=_names, action="extend", metavar="NAME[,NAME...]",
                       help="quantities to show, a comma list; repeatable (default: those that depend on the swept "
                            "inputs)")
        p.add_argument("--format", "-f", choices=["table", "json", "csv", "markdown", "jsonl"], default="table",
                       help="output format: table, json, csv, markdown, jsonl (one JSON object per point) (default: "
                            "table, fitted to the terminal's width). Big sweeps are computed and written block by "
                            "block, in bounded memory; from 100,000 points a second process formats half of the "
                            "numbers where there is a second core")
        p.add_argument("--limit", type=_positive, metavar="N",
                       help="only the first N points of each sweep (the others are not computed)")
        p.add_argument("--output", "-o", metavar="FILE",
                       help="write to FILE (all or nothing: nothing is written if the run fails) instead of stdout")
        _dask(p, "sweep")
        p.add_argument("--percentiles", type=_percentiles, metavar="P[,P...]",
                       help="with --dask, the percentiles of each quantity over the grid, a comma list (default: "
                            "5,50,95); exact, as numpy's percentile gives them")
        p.add_argument("--probability", "-p", action="append", default=[], metavar="CONDITION",
                       help='with --dask, the share of the grid\'s points where a condition holds, in plan syntax '
                            '("margin > 0 USD"); repeatable')
        p.set_defaults(handler=cmd_sweep)

    p = _command(sub, only, "solve", help="solve for an input: break-even roots, integer thresholds, optima",
                            description="Without --for/--where, answer every `solve`, `maximize` and `minimize` in "
                                        "the file (in its own scenarios, or --scenario). With them, solve "
                                        "`--for INPUT --where \"LHS = RHS\"`; --min/--max give the smallest/largest "
                                        "integer for which the condition holds.")
    if p is not None:
        _add_common(p)
        p.add_argument("--for", dest="target", metavar="INPUT", help="the input to solve for")
        p.add_argument("--where", metavar="CONDITION", help='the condition, in plan syntax: "speedup = 1"')
        extreme = p.add_mutually_exclusive_group()
        extreme.add_argument("--min", dest="mode", action="store_const", const="min",
                             help="the smallest integer INPUT for which CONDITION holds")
        extreme.add_argument("--max", dest="mode", action="store_const", const="max",
                             help="the largest integer INPUT for which CONDITION holds")
        p.add_argument("--closed-form", action="store_true",
                       help="derive each answer's closed form over the other inputs (SymPy; slower). Without it, "
                            "answers come from the numeric route where it can verify them")
        _format(p)
        p.set_defaults(handler=cmd_solve, mode="root")

    p = _command(sub, only, "sensitivity", help="elasticity of a quantity to each input it depends on",
                            description="For each input QUANTITY depends on: the elasticity (dy/dx * x/y) at the "
                                        "current values, from SymPy's derivative, sorted by magnitude.")
    if p is not None:
        _add_common(p)
        p.add_argument("name", metavar="QUANTITY", help="the quantity to analyse")
        _format(p)
        p.set_defaults(handler=cmd_sensitivity)

    p = _command(sub, only, "export", help="write a live Excel workbook (every figure a formula)",
                            description="Write an .xlsx workbook: inputs as named cells, every derived figure, "
                                        "scenario, sweep, solve and check as a live formula (Excel and LibreOffice).")
    if p is not None:
        _add_common(p)
        p.add_argument("--output", "-o", required=True, metavar="BOOK.xlsx", help="the workbook to write")
        p.add_argument("--trials", type=_positive, default=1000, metavar="N",
                       help="rows of the Trials sheet, for a plan with uncertain inputs (default: 1,000; at most "
                            "10,000)")
        p.set_defaults(handler=cmd_export)

    p = _command(sub, only, "import", help="read inputs edited in an exported workbook and evaluate the plan with them",
                            description="Read the Inputs sheet of a workbook written by `planner export`, list the "
                                        "inputs that differ from the plan, and evaluate the plan with them.")
    if p is not None:
        p.add_argument("workbook", metavar="BOOK.xlsx", help="a workbook written by `planner export`")
        p.add_argument("--plan", required=True, metavar="FILE", help="the .plan file the workbook was exported from")
        _import_root(p)
        p.add_argument("--scenario", "-s", action="append", metavar="NAME",
                       help="evaluate in these scenarios too (as for eval)")
        p.add_argument("--write", action="store_true",
                       help="write the edited inputs and scenario values back into FILE, changing only those "
                            "literals (their units and written decimals kept); refused when FILE changed since the "
                            "export, or a value breaks a constraint")
        p.add_argument("--dry-run", action="store_true", dest="dry_run",
                       help="with or without --write: print the change to FILE as a unified diff; write nothing")
        p.add_argument("--force", action="store_true",
                       help="with --write: write even when FILE changed since the workbook was exported")
        _format(p)
        p.set_defaults(handler=cmd_import)

    p = _command(sub, only, "report", help="render the Markdown report (default or your Jinja template)",
                            description="Render the Markdown report: inputs, formulas in LaTeX, scenarios, sweeps, "
                                        "solves, sensitivity, checks and the dependency graph. With -o, plots of the "
                                        "sweeps are written next to the report.")
    if p is not None:
        p.add_argument("file", metavar="FILE", help="a .plan file")
        p.add_argument("--template", "-t", metavar="TEMPLATE",
                       help="a Jinja template (default: the shipped report.md.j2)")
        p.add_argument("--output", "-o", metavar="FILE",
                       help="write the report here (default: print it; `-` prints it too)")
        _import_root(p)
        p.set_defaults(handler=cmd_report)

    p = _command(sub, only, "diff", help="what changed between two versions of a plan, which figures moved and why",
                 description="Compare OLD and NEW (each a file, or REV:PATH: the file at a git revision, as `git show` "
                             "reads it): changed statements, every headline figure and answer that moved per scenario, "
                             "and each one's bridge (the effect of each change alone, and their interaction). Exit 1 "
                             "when a check that passed in OLD fails in NEW.")
    if p is not None:
        p.add_argument("old", metavar="OLD", help="the old version: a .plan file or REV:PATH (HEAD~1:plan.plan)")
        p.add_argument("new", metavar="NEW", help="the new version: a .plan file or REV:PATH")
        p.add_argument("--details", action="store_true", help="every moved figure and its whole bridge, every check")
        p.add_argument("--output", "-o", metavar="DIR", help="write diff.md and its waterfall charts (PNG) into DIR")
        _import_root(p)
        _format(p, ("table", "json", "csv", "markdown"))
        p.set_defaults(handler=cmd_diff)

    p = _command(sub, only, "build", help="the main job: workbook, report and plots into a directory",
                            description="Evaluate every scenario, run the checks, sweeps and solves, and write the "
                                        "workbook, the report and its plots into OUTDIR (all or nothing). Exit 1 when "
                                   "a check fails (the files are still written), 2 on a bad plan (nothing written).")
    if p is not None:
        p.add_argument("file", metavar="FILE", help="a .plan file")
        p.add_argument("--output", "-o", metavar="OUTDIR", default="out", help="output directory (default: out)")
        p.add_argument("--template", "-t", metavar="TEMPLATE", help="a Jinja template for the report")
        _import_root(p)
        p.set_defaults(handler=cmd_build)

    p = _command(sub, only, "serve", help="a local web page for the plan: inputs as sliders, figures recomputed live",
                            description="Serve a page for FILE on this machine: its inputs as sliders and fields (units, "
                                        "bounds, docs), a scenario picker, the headline figures, answers and checks "
                                        "recomputed as an input moves, the sweeps' charts, a Monte Carlo view, and a "
                                        "button that writes the edited inputs back into FILE (as `planner import "
                                        "--write`). The page reloads when FILE changes. Needs Starlette and uvicorn: "
                                        "pip install starlette uvicorn (or '.[serve]' in a checkout).")
    if p is not None:
        p.add_argument("file", metavar="FILE", help="a .plan file")
        p.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (default: 127.0.0.1, this machine only; another address "
                            "lets others reach the page, and write into FILE)")
        p.add_argument("--port", type=int, default=8765, help="the port to listen on (default: 8765; 0: any free port)")
        _import_root(p)
        p.set_defaults(handler=cmd_serve)

    p = _command(sub, only, "fmt", help="format .plan files canonically (aligned definitions, normalised spacing)",
                            description="Rewrite each FILE in planner's canonical layout: one space around operators, "
                                   "the `=`, docs, tags and constraints of consecutive definitions aligned, comments "
                                   "and blank-line groups kept. The meaning never changes (the tokens are checked). "
                                   "Nothing is written when a file does not parse. FILE `-` formats standard input "
                                        "to standard output.")
    if p is not None:
        p.add_argument("files", nargs="+", metavar="FILE", help="the .plan files to format")
        p.add_argument("--check", action="store_true",
                       help="write nothing; exit 1 when a file would change (for CI), listing those files")
        p.add_argument("--diff", action="store_true", help="write nothing; print what would change as a unified diff")
        p.set_defaults(handler=cmd_fmt)

    p = _command(sub, only, "lsp", help="the language server for editors (Language Server Protocol on stdio)",
                            description="Start planner's language server on standard input and output, for an editor "
                                   "(diagnostics while the plan is half typed, hover, go to definition, completion, "
                                   "symbols, rename, quick fixes, inlay hints, formatting). "
                                   "editors/vscode is its VS Code extension.")
    if p is not None:
        p.set_defaults(handler=cmd_lsp)

    p = _command(sub, only, "completion", help="print a shell completion script (bash; zsh with bashcompinit)",
                            description="Print a completion script for planner's commands, options, choices and .plan "
                                   "files. Load it with: eval \"$(planner completion bash)\" (in ~/.bashrc; in zsh, "
                                        "after autoload -U bashcompinit && bashcompinit).")
    if p is not None:
        p.add_argument("shell", choices=["bash", "zsh"], help="the shell")
        p.set_defaults(handler=cmd_completion)

    p = _command(sub, only, "library", help="list the plans shipped with planner (hardware, formulas)",
                            description="List the plans in planner's library, to use with `import \"PATH\" as NAME`.")
    if p is not None:
        p.add_argument("path", nargs="?", metavar="PATH", help="print this library plan's text")
        p.set_defaults(handler=cmd_library)
    return parser


def _version() -> str:
    from . import __version__

    return __version__


# ---- helpers -------------------------------------------------------------

def import_roots(args) -> list[str]:
    """Extra folders imports may read: ``--import-root`` options, then PLANNER_IMPORT_PATH."""
    env = [d for d in os.environ.get("PLANNER_IMPORT_PATH", "").split(os.pathsep) if d]
    return list(getattr(args, "import_roots", None) or []) + env


def warn(plan) -> None:
    """The plan's warnings (:class:`planner.language.errors.PlanWarning`) on stderr, once each."""
    from .language.errors import render

    for w in plan.warnings:
        sys.stderr.write(render(w, color=sys.stderr.isatty()) + "\n")


def _load(path: str, all_imports: bool = False, args=None):
    from .language.limits import freeze
    from .plan import load_compiled

    plan = load_compiled(path, all_imports=all_imports, import_roots=import_roots(args))
    warn(plan)
    # The loaded plan lives until the command ends: the cyclic collector need not walk it again at
    # every collection that what follows (compiling, evaluating, printing) sets off.
    freeze()
    return plan


def overrides_from(plan, sets: Sequence[str]):
    values, origins = {}, {}
    for text in sets or []:
        name, value, origin = plan.parse_override(text)
        values[name] = value
        origins[name] = origin
    return values, origins


def scenarios_from(plan, spec: Optional[Sequence[str]]):
    return plan.resolve_scenarios(spec, written=True)


def _width() -> Optional[int]:
    """The width tables must fit: COLUMNS when set (0: no limit), else the terminal's; none for a pipe or a file."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit():
        return int(columns) or None
    if sys.stdout.isatty():
        return _columns()
    return None


def _color(args, stream) -> bool:
    """Colour on ``stream``: ``--color always``, or ``auto`` on a terminal when NO_COLOR is unset."""
    choice = getattr(args, "color", "auto")
    return choice == "always" or (choice == "auto" and stream.isatty() and "NO_COLOR" not in os.environ)


def write_output(text: str, path: Optional[str] = None) -> None:
    """Print, or write atomically (temp file then rename): never a partial file."""
    if path is None or path == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    atomic_write(path, text.encode("utf-8"))


def atomic_write(path: str, data: bytes, protect: Sequence = ()) -> None:
    """Write one file all or nothing, with normal permissions: staged next to its
    target, then moved in; a symlink's target is replaced, a device or pipe written
    to, and an input of the run (``protect``) refused (as for ``planner build``)."""
    from pathlib import Path

    from .outputs.build import Output, publish

    target = Path(path)
    publish([Output(target.name, data, "file")], target.parent, protect)


def refuse_inputs(output: str, *inputs) -> None:
    """Exit 2 before anything runs when ``-o`` names one of the run's inputs."""
    if output in (None, "-"):
        return
    from pathlib import Path

    from .outputs.build import refuse_inputs as refuse

    paths = [p for group in inputs if group for p in ([group] if isinstance(group, (str, Path)) else group)]
    refuse([Path(output)], [Path(p) for p in paths])


def stream_output(path: Optional[str], write, protect: Sequence = ()) -> None:
    """``write(text_stream)`` to stdout, or to ``path`` through the same all-or-nothing writing as
    :func:`atomic_write` (:func:`planner.outputs.build.publish`: staged next to its target, moved in
    when complete, a symlink's target replaced, a device or pipe written to, an input refused), for
    output too big to hold in memory: it is written as it is computed."""
    if path is None or path == "-":
        write(sys.stdout)
        return
    import io
    from pathlib import Path

    from .outputs.build import Output, publish

    def to_file(binary) -> None:
        text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        try:
            write(text)
        finally:
            text.flush()
            text.detach()  # the file stays open for publish to close

    target = Path(path)
    publish([Output(target.name, to_file, "file")], target.parent, protect)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (every temporary removed), with its own exit status (143)."""


def _on_sigterm():
    """Handle SIGTERM as Ctrl-C while the command runs; returns what puts the default back."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM") \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return lambda: None

    def terminated(signum, frame):
        raise _Terminated()

    signal.signal(signal.SIGTERM, terminated)
    return lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL)


def note(text: str) -> None:
    """An informational line on stderr (``wrote ...``), left out with ``--quiet``."""
    if not _QUIET:
        sys.stderr.write(text + "\n")


_QUIET = False


# ---- commands ---------------------------------------------------------------

def cmd_completion(args) -> int:
    write_output(completion_script(build_parser()))
    return EXIT_OK


def completion_script(parser: argparse.ArgumentParser) -> str:
    """A bash completion function built from the parser itself: commands, options, option choices, .plan files."""
    def options(p):
        return [f for a in p._actions for f in a.option_strings]

    def valued(p):  # options that take a value: their choices, or files
        for a in p._actions:
            flags = (argparse._StoreTrueAction, argparse._StoreConstAction, argparse._HelpAction,
                     argparse._VersionAction)
            if a.option_strings and a.nargs != 0 and not isinstance(a, flags):
                yield a

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = ["# planner completion (bash; zsh: autoload -U bashcompinit && bashcompinit first)", "_planner() {",
             '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i',
             "    for ((i = 1; i < COMP_CWORD; i++)); do",
             '        case "${COMP_WORDS[i]}" in',
             "            --color) ((i++)) ;;", "            -*) ;;",
             '            *) cmd="${COMP_WORDS[i]}"; break ;;', "        esac", "    done",
             '    case "$cmd:$prev" in']
    for name, p in [("", parser)] + list(sub.choices.items()):
        for a in valued(p):
            if a.choices:
                action = f'COMPREPLY=($(compgen -W "{" ".join(a.choices)}" -- "$cur"))'
            elif a.dest in ("output", "template", "plan"):
                action = 'COMPREPLY=($(compgen -f -- "$cur"))'
            else:  # a name, a value or a condition: nothing to offer
                action = "COMPREPLY=()"
            pattern = "|".join(f"{name}:{flag}" for flag in a.option_strings)
            lines.append(f"        {pattern}) {action}; return ;;")
    top = " ".join(list(sub.choices) + options(parser))
    lines += ["    esac", '    case "$cmd" in', f'        "") COMPREPLY=($(compgen -W "{top}" -- "$cur")) ;;']
    for name, p in sub.choices.items():
        lines.append(f'        {name}) if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "{" ".join(options(p))}" -- '
                     '"$cur")); else _planner_files; fi ;;')
    lines += ["    esac", "}",
              "_planner_files() {  # folders, .plan files and workbooks",
              '    local f; COMPREPLY=()',
              "    setopt localoptions nullglob 2>/dev/null  # zsh: a pattern that matches nothing is no error",
              '    for f in "${COMP_WORDS[COMP_CWORD]}"*; do',
              '        if [[ -d $f || ( -e $f && ( $f == *.plan || $f == *.xlsx ) ) ]]; then COMPREPLY+=("$f"); fi',
              "    done", "}",
              "complete -o filenames -F _planner planner"]
    return "\n".join(lines)


def cmd_lsp(args) -> int:
    from .lsp.server import main as serve

    return serve()  # 0 after the client's `shutdown` and `exit`, 1 when the input ended without them


def cmd_fmt(args) -> int:
    from .language.errors import PlanError, PlanErrors, UsageError
    from pathlib import Path

    from .language.format import format_text

    results, errors = [], []
    for name in args.files:
        if name == "-":
            text = sys.stdin.read()
        else:
            from .language.imports import read_plan

            try:  # a regular file within the size limit, never waited on (a FIFO, /dev/zero: refused)
                text = read_plan(Path(name))
            except PlanError as err:
                errors.append(err)
                continue
        crlf = "\r\n" in text
        try:
            new = format_text(text.replace("\r\n", "\n"), "<stdin>" if name == "-" else name)
        except PlanError as err:
            errors.append(err)
            continue
        results.append((name, text, new.replace("\n", "\r\n") if crlf else new))
    if errors:  # nothing is written when any file fails
        raise errors[0] if len(errors) == 1 else PlanErrors(errors)
    changed = [(name, old, new) for name, old, new in results if old != new]
    if args.diff:
        import difflib

        for name, old, new in changed:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), name, name))
    if args.check or args.diff:
        for name, _, _ in changed:
            sys.stderr.write(f"would reformat {name}\n")
        return EXIT_CHECK_FAILED if changed and args.check else EXIT_OK
    for name, old, new in results:
        if name == "-":
            sys.stdout.write(new)
        elif old != new:
            from .outputs.build import rewrite

            rewrite(Path(name), new.encode("utf-8"),  # hard links kept
                    f"fmt rewrites {name} in place: make it (and its folder) writable, or print the result "
                    f"with `planner fmt - < {name}`")
            sys.stderr.write(f"reformatted {name}\n")
    return EXIT_OK


def cmd_library(args) -> int:
    from .language.errors import UsageError
    from .language.imports import did_you_mean, library_dir, library_entries, suggest_entries

    entries = library_entries()
    if args.path:
        name = args.path if args.path.endswith(".plan") else args.path + ".plan"
        if name not in entries:
            guesses = suggest_entries(args.path)
            raise UsageError(f"no library plan `{args.path}`", hint=did_you_mean(guesses, "`") if guesses else
                             "entries: " + ", ".join(entries))
        write_output((library_dir() / name).read_text(encoding="utf-8"))
        return EXIT_OK
    from .compute.evaluation import load

    rows = []
    for entry in entries:
        plan = load(library_dir() / entry)
        rows.append(f"{entry:<28} {plan.title}")
    write_output("\n".join(rows) + '\n\nuse: import "PATH" as NAME   (e.g. import "hardware/h100_sxm.plan" as h100)')
    return EXIT_OK


def cmd_eval(args) -> int:
    plan = _load(args.file, args.all_imports, args)
    overrides, origins = overrides_from(plan, args.sets)
    scenarios = scenarios_from(plan, args.scenario)
    names = plan.display_order()  # the plan's own quantities first, then the imported ones
    answers = list(plan.model.formula_answers)  # computed anyway: shown beside the quantities
    if args.only:
        from .language.errors import UnknownNameError, suggest

        for n in args.only:
            if n not in plan.model.quantities and n not in plan.model.answers:
                guess = suggest(n, names + list(plan.model.answers))
                raise UnknownNameError(f"--only names `{n}`, which is not in {plan.path}",
                                       hint=f"did you mean `{guess}`?" if guess else None)
        names = [n for n in args.only if n in plan.model.quantities]
        answers = [n for n in args.only if n not in plan.model.quantities]
    evaluations = plan.evaluate_all(scenarios, overrides, origins)
    text = _eval_output(args.format, plan, evaluations, names) if names or not answers else ""
    if answers and args.format in ("table", "json"):
        text = _with_answers(args.format, plan, evaluations, answers, text, overrides, origins)
    write_output(text)
    return EXIT_OK


def _with_answers(fmt: str, plan, evaluations, answers, text: str, overrides, origins) -> str:
    """The questions' answers beside the quantities: a table under the text's, or ``answers`` (display
    units), ``answer_units`` and ``answer_questions`` in the JSON. A scenario without an answer says so."""
    from .compute.evaluation import format_value
    from .language.errors import PlanError

    source = plan.answer_source
    values: dict = {}
    for ev in evaluations:
        for a in answers:
            scale, unit = source.unit(a)
            try:
                values[(a, ev.label)] = float(source.value(a, ev.scenario, overrides, origins) / scale)
            except PlanError as err:
                values[(a, ev.label)] = err
    question = {a: " ".join(source.statements[a.removesuffix(".value")].span.flat.split()) for a in answers}
    if fmt == "json":
        import json

        from .outputs.terminal import dumps, json_number

        data = json.loads(text) if text else {"format": "planner.eval/1", "file": plan.path,
                                              "scenarios": [ev.label for ev in evaluations]}
        data["answers"] = {ev.label: {a: (json_number(v) if not isinstance(v, PlanError) else None)
                                      for a in answers for v in [values[(a, ev.label)]]} for ev in evaluations}
        data["answer_units"] = {a: source.unit(a)[1] for a in answers}
        data["answer_questions"] = question
        return dumps(data)
    from .outputs.terminal import fit

    rows = []
    for a in answers:
        unit = source.unit(a)[1]
        cells = [a] + [("no answer" if isinstance(v, PlanError) else format_value(v, ""))
                       for ev in evaluations for v in [values[(a, ev.label)]]]
        rows.append(cells + [unit, question[a]])
    headers = ["answer"] + [ev.label for ev in evaluations] + ["unit", "question"]
    table = fit(rows, headers, ["left"] + ["right"] * len(evaluations) + ["left", "left"], _width(), keep=1,
                tail=2, wrap=len(headers) - 1, what="scenarios")
    return (text.rstrip("\n") + "\n\n" if text else "") + table + "\n"


def _eval_output(fmt: str, plan, evaluations, names) -> str:
    from .language.live import plain
    from .outputs.terminal import dumps, eval_csv, eval_json, eval_jsonl, eval_markdown, eval_table

    if fmt == "json":
        return dumps(eval_json(plan, evaluations, names))
    if fmt == "csv":
        return eval_csv(plan, evaluations, names)
    if fmt == "jsonl":
        return eval_jsonl(plan, evaluations, names)
    if fmt == "markdown":
        from .outputs.markup import text

        return f"# {text(plain(plan.title))}\n\n{eval_markdown(plan, evaluations, names)}"
    from .outputs.terminal import wrap_text

    width = _width()
    return f"{wrap_text(plain(plan.title), width)}\n\n{eval_table(plan, evaluations, names, width)}"


def cmd_check(args) -> int:
    from .outputs.terminal import check_json, check_jsonl, check_markdown, check_text, dumps, wrap_text
    from .questions.every_check import run_every_check

    plan = _load(args.file, args=args)
    # A plan that cannot be evaluated (a violated constraint, a division by
    # zero) is a bad plan (exit 2), not a failed check.
    plan.evaluate_all([None] + [s for s in plan.resolve_scenarios("all") if s is not None])
    results = run_every_check(plan, args.samples, args.seed, args.method)
    failed = [r for r in results if not r.passed]
    if args.format == "json":
        write_output(dumps(check_json(plan, results)))
    elif args.format == "jsonl":
        write_output(check_jsonl(results))
    elif args.format == "markdown":
        write_output(check_markdown(results))
    else:
        write_output(wrap_text(check_text(results, args.verbose, _color(args, sys.stdout)), _width()))
    return EXIT_CHECK_FAILED if failed else EXIT_OK


def _simulate_solve(plan, args, scenarios, overrides, origins) -> int:
    from .language.errors import UsageError
    from .language.lower import lower_expr
    from .language.source import Source
    from .outputs.simulation import solve_text
    from .questions import simulate

    target, sep, condition = args.solve.partition(" where ")
    if not sep:
        raise UsageError(f"--solve {args.solve!r}: write 'INPUT where CONDITION'",
                         hint="--solve 'rent_price where P(owning_is_cheaper) >= 80%'")
    cond = lower_expr(Source("--solve", condition))
    answers = [simulate.solve_probability(plan, target.strip(), cond, s, args.samples, args.seed, args.method,
                                          overrides, origins) for s in scenarios]
    write_output(solve_text(plan, answers, scenarios))
    return EXIT_OK


def _simulate_chunked(plan, args, scenarios, overrides, origins, names, probabilities) -> int:
    """``planner simulate --dask``: the simulation in chunks of samples, reduced to figures."""
    from .language.errors import UsageError
    from .outputs import simulation
    from .questions import chunked

    chunked.libraries()
    if args.solve:
        raise UsageError("--solve bisects over samples held in memory: it does not run with --dask",
                         hint="leave out --dask")
    if args.sensitivity:
        raise UsageError("--sensitivity ranks every sample, and a --dask run keeps none", hint="leave out --dask")
    from .outputs.progress import Progress

    with Progress("simulate --dask") as progress, chunked.scheduler(args.scheduler, progress.step) as run:
        sims = chunked.simulate_chunked(run, plan, scenarios, args.samples, args.seed, args.method, overrides,
                                        origins, names, probabilities, args.percentiles, args.chunk_mb)
    if args.format == "json":
        out = simulation.as_json(sims, names, args.percentiles, probabilities)
    elif args.format == "csv":
        out = simulation.as_csv(sims, names, args.percentiles)
    elif args.format == "markdown":
        out = simulation.markdown(sims, names, args.percentiles, probabilities)
    else:
        out = simulation.text(sims, names, args.percentiles, probabilities, _width())
    write_output(out)
    note(f"{sims[0].samples:,} samples in chunks of {sims[0].chunk:,}, on {sims[0].where}")
    return EXIT_OK


def cmd_simulate(args) -> int:
    from .language.errors import UnknownNameError, suggest
    from .language.lower import lower_expr
    from .language.source import Source
    from .outputs import simulation
    from .questions import simulate

    plan = _load(args.file, args=args)
    overrides, origins = overrides_from(plan, args.sets)
    scenarios = scenarios_from(plan, args.scenario)
    names = list(args.show) if args.show else simulate.default_names(plan)
    for n in names:
        if n not in plan.model.quantities:
            guess = suggest(n, plan.model.quantities)
            raise UnknownNameError(f"--show names `{n}`, which is not in {plan.path}",
                                   hint=f"did you mean `{guess}`?" if guess else None)
    probabilities = [(text, lower_expr(Source("--probability", text))) for text in args.probability]
    chunked = args.dask or args.scheduler is not None
    args.method = args.method or ("random" if chunked else "lhs")
    if chunked:
        return _simulate_chunked(plan, args, scenarios, overrides, origins, names, probabilities)
    if args.solve:
        return _simulate_solve(plan, args, scenarios, overrides, origins)
    from .language import ir
    from .outputs.progress import Progress

    flags = [] if args.show else simulate.default_flags(plan)  # said in words: true in 38.8% of samples
    keep = names + flags + [n.name for _, c in probabilities for n in ir.free_names(c) if n.name in plan.model.quantities]
    if args.samples > simulate.MAX_SAMPLES:
        with _past_memory("more samples"):
            simulate.check_samples(args.samples)
    with Progress("simulate", args.samples * len(scenarios), "samples") as progress:
        sims = simulate.run(plan, scenarios, args.samples, args.seed, args.method, overrides, origins, keep,
                            progress=progress.advance)
    for sim in sims:  # a condition that cannot be evaluated fails before anything is written
        for _, cond in probabilities:
            sim.probability(cond)
    if args.format == "json":
        out = simulation.as_json(sims, names, args.percentiles, probabilities)
    elif args.format == "csv":
        out = simulation.as_csv(sims, names, args.percentiles)
    elif args.format == "markdown":
        out = simulation.markdown(sims, names, args.percentiles, probabilities, flags)
    else:
        out = simulation.text(sims, names, args.percentiles, probabilities, _width(), args.sensitivity, flags)
    write_output(out)
    return EXIT_OK


def cmd_explain(args) -> int:
    from .outputs.terminal import explain_text, wrap_text
    from .questions.explain import explain

    plan = _load(args.file, all_imports=True, args=args)  # any quantity can be explained, used or not
    overrides, origins = overrides_from(plan, args.sets)
    scenarios = scenarios_from(plan, args.scenario)
    parts = [explain_text(explain(plan, args.name, s, overrides, origins)) for s in scenarios]
    write_output(wrap_text("\n\n".join(parts), _width()))
    return EXIT_OK


def _prepare_sweeps(plan, args, overrides, origins, limit, runs) -> None:
    from .language.errors import UsageError
    from .questions import sweep
    from .questions.ranges import parse_assignment

    if args.axes:
        axes = [parse_assignment(plan, text) for text in args.axes]
        for s in plan.resolve_scenarios(args.scenario):
            runs.append(sweep.prepare(plan, axes, args.show, s, overrides, origins, **limit))
    else:
        if not plan.model.sweeps:
            example = next((n for n in plan.model.inputs if not plan.model.quantities[n].is_bool), "x")
            raise UsageError(f"{plan.path} has no `sweep` statements",
                             hint=f"give the values on the command line: planner sweep FILE {example}=1..8")
        for stmt in plan.model.sweeps:
            runs.extend(sweep.prepare_statement(plan, stmt, args.scenario, overrides, origins, show=args.show,
                                                **limit))


class _past_memory:
    """Adds to the error of an in-memory limit (``match``: how its message starts) that ``--dask``
    runs past it."""

    def __init__(self, what: str, match: str = "", on: bool = True) -> None:
        self.what, self.match, self.on = what, match, on

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, err, tb) -> bool:
        from .language.errors import PlanError

        if self.on and isinstance(err, PlanError) and err.message.startswith(self.match):
            err.notes.append(f"--dask runs {self.what} in chunks, reduced to figures "
                             "(pip install 'dask[array]' distributed xarray)")
        return False


def cmd_sweep(args) -> int:
    from .language.errors import UsageError
    from .outputs import stream
    from .outputs.progress import Progress

    chunked = args.dask or args.scheduler is not None
    if chunked:
        from .questions.chunked import MAX_POINTS, libraries

        libraries()  # without the extra: say what to install, before anything runs
        if args.limit is not None:
            raise UsageError("--limit shows the first points, and a --dask sweep shows figures over all of them",
                             hint="leave out --limit or --dask")
        if args.format == "jsonl":
            raise UsageError("--format jsonl writes every point, and a --dask sweep writes figures",
                             hint="use --format table, json, csv or markdown")
    elif args.probability or args.percentiles:
        raise UsageError("--probability and --percentiles summarise a --dask sweep",
                         hint="add --dask (the figures over the whole grid), or leave them out (every point)")
    plan = _load(args.file, args=args)
    overrides, origins = overrides_from(plan, args.sets)
    limit = {"max_points": MAX_POINTS} if chunked else {}
    runs = []
    with _past_memory("a grid past the limit", "too many points", on=not chunked):
        _prepare_sweeps(plan, args, overrides, origins, limit, runs)
    for run in runs:  # what can fail (a fixed input breaking its constraint) fails before anything is written
        run.block(0, 1)
        run.diagnosed = 0
    if chunked:
        return _sweep_chunked(plan, runs, args)
    total = sum(stream.shown(r, args.limit) for r in runs)
    refuse_inputs(args.output, args.file, plan.files)
    got = {}

    def write(out) -> None:
        with Progress("sweep", total, "points") as progress:
            got["totals"] = stream.write(runs, args.format, out, args.limit, progress, width=_width())

    stream_output(args.output, write, plan.files)
    totals = got["totals"]
    if args.output not in (None, "-"):
        note(f"wrote {args.output}")
    if totals.left_out and args.format not in ("table", "markdown"):
        note("; ".join(f"{stream.shown(r, args.limit):,} of {r.size:,} points of `{stream._label(r)}` "
                       f"[{r.label}] (--limit {args.limit})" for r, _ in totals.left_out))
    return EXIT_OK


def _sweep_chunked(plan, runs, args) -> int:
    """``planner sweep --dask``: each sweep as a chunked grid, reduced to figures."""
    from .language.lower import lower_expr
    from .language.source import Source
    from .outputs import summary
    from .questions import chunked

    conditions = [(text, lower_expr(Source("--probability", text))) for text in args.probability]
    refuse_inputs(args.output, args.file, plan.files)
    from .outputs.progress import Progress

    with Progress("sweep --dask") as progress, chunked.scheduler(args.scheduler, progress.step) as where:
        results = [chunked.sweep(where, r, conditions, args.percentiles or [5.0, 50.0, 95.0], args.chunk_mb)
                   for r in runs]
    if args.format == "json":
        out = summary.as_json(results)
    elif args.format == "csv":
        out = summary.as_csv(results)
    elif args.format == "markdown":
        out = summary.markdown(results)
    else:
        out = summary.text(results, _width())
    write_output(out, args.output)
    if args.output not in (None, "-"):
        note(f"wrote {args.output}")
    if results:
        note(f"{sum(r.size for r in results):,} points in {sum(r.blocks for r in results):,} chunks, "
             f"on {results[0].where}")
    return EXIT_OK


def cmd_solve(args) -> int:
    from .language.errors import PlanError, UsageError, render
    from .outputs.terminal import dumps, solve_csv, solve_json, solve_jsonl, solve_markdown, solve_text, wrap_text
    from .questions import fast

    plan = _load(args.file, args=args)
    overrides, origins = overrides_from(plan, args.sets)
    answers = fast.Answers(plan)  # SymPy only for what the numeric route does not answer, or with --closed-form
    if (args.target is None) != (args.where is None):
        raise UsageError("--for and --where go together", hint='planner solve FILE --for alpha --where "speedup = 1"')
    if args.target is not None:
        from .questions.solve import adhoc

        questions = [adhoc(plan, args.target, args.where, args.mode)]
    else:
        if args.mode != "root":
            raise UsageError(f"--{args.mode} needs --for and --where")
        questions = fast.questions(plan)
        if not questions:
            raise UsageError(f"{plan.path} has no `solve`, `maximize` or `minimize` statements",
                             hint='ask one from the shell: planner solve FILE --for INPUT --where "LHS = RHS"')
    results, errors, missing = [], [], []
    from .compute.evaluation import scenarios_for
    from .language.errors import NoRootError
    from .outputs.progress import Progress

    with Progress("solve", len(questions), "questions") as progress:
        for q in questions:
            progress.step(" ".join(q.span.flat.split())[:60])
            try:
                scenarios = scenarios_for(plan, q.scenarios, args.scenario)
            except PlanError as err:
                if len(questions) == 1:
                    raise
                errors.append(err)
                continue
            for scenario in scenarios:  # each scenario answers for itself
                try:
                    results.append(answers.answer(q, scenario, overrides, origins, closed_form=args.closed_form))
                except NoRootError as err:
                    if len(questions) == 1 and len(scenarios) == 1:
                        raise
                    missing.append((q, scenario, err))  # a stated outcome: no answer there
                except PlanError as err:
                    if len(questions) == 1 and len(scenarios) == 1:
                        raise
                    errors.append(err)
            progress.advance()
    no_answer = [f"{q.span.location()}: {q.alias or ' '.join(q.span.flat.split())[:60]} [{scenario or 'base'}]: "
                 f"no answer in the domain: {err.message}" for q, scenario, err in missing]
    if args.format == "json":
        write_output(dumps(solve_json(plan, results, errors, missing)))
    elif args.format == "csv":
        write_output(solve_csv(results))
    elif args.format == "jsonl":
        write_output(solve_jsonl(results))
    elif args.format == "markdown":
        write_output(solve_markdown(results))
    elif results or no_answer:
        text = solve_text(results) if results else ""
        if no_answer:
            text = (text.rstrip("\n") + "\n\n" if text else "") + "\n".join(no_answer) + "\n"
        write_output(wrap_text(text, _width()))
        no_answer = []
    for line in no_answer:  # (JSON says it in `no_answer`; CSV and JSONL rows are answers only)
        sys.stderr.write(line + "\n")
    for err in errors:
        sys.stderr.write(render(err) + "\n")
    return EXIT_BAD_INPUT if errors else EXIT_OK


def cmd_sensitivity(args) -> int:
    from .outputs.terminal import (
        dumps,
        sensitivity_csv,
        sensitivity_json,
        sensitivity_jsonl,
        sensitivity_markdown,
        sensitivity_table,
    )
    from .questions.sensitivity import sensitivity

    plan = _load(args.file, args=args)
    overrides, origins = overrides_from(plan, args.sets)
    results = [sensitivity(plan, args.name, s, overrides, origins) for s in scenarios_from(plan, args.scenario)]
    if args.format == "json":
        write_output(dumps(sensitivity_json(plan, results)))
    elif args.format == "csv":
        write_output(sensitivity_csv(results))
    elif args.format == "jsonl":
        write_output(sensitivity_jsonl(results))
    elif args.format == "markdown":
        write_output("\n\n".join(sensitivity_markdown(r) for r in results))
    else:
        write_output("\n\n".join(sensitivity_table(r, _width()) for r in results))
    return EXIT_OK


def cmd_export(args) -> int:
    from .language.errors import UsageError
    from .outputs.excel.writer import workbook_bytes

    if args.output == "-" and sys.stdout.isatty():
        raise UsageError("-o -: a workbook is binary and standard output is a terminal",
                         hint="redirect it: planner export FILE -o - > book.xlsx")
    refuse_inputs(args.output, args.file)
    from .outputs.progress import Progress

    with Progress("export") as progress:
        progress.step("loading")
        plan = _load(args.file, args=args)
        refuse_inputs(args.output, plan.files)
        overrides, origins = overrides_from(plan, args.sets)
        scenarios = [s for s in scenarios_from(plan, args.scenario) if s is not None] if args.scenario else None
        progress.step("the workbook")
        data = workbook_bytes(plan, scenarios, overrides, origins, trials=args.trials)
        progress.step("writing")
    if args.output == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return EXIT_OK
    atomic_write(args.output, data, plan.files)
    note(f"wrote {args.output}")
    return EXIT_OK


def cmd_import(args) -> int:
    from .outputs.excel.reader import describe, read_inputs
    from .outputs.terminal import dumps, eval_json

    plan = _load(args.plan, args=args)
    imported = read_inputs(args.workbook, plan)
    if args.write or args.dry_run:
        return _write_back(args, plan, imported)
    evaluations = imported.evaluate(plan, scenarios_from(plan, args.scenario))
    names = plan.display_order()
    if args.format == "json":
        data = eval_json(plan, evaluations, names)
        data["workbook"] = {"file": args.workbook, "warnings": imported.warnings, "missing": imported.missing,
                            "changes": [{"name": c.name, "cell": c.cell, "plan": c.plan_value,
                                         "workbook": c.book_value, "unit": c.unit, "scenario": c.scenario}
                                        for c in imported.changes]}
        write_output(dumps(data))
    elif args.format in ("csv", "jsonl"):
        sys.stderr.write(describe(imported) + "\n")
        write_output(_eval_output(args.format, plan, evaluations, names))
    else:
        write_output(f"{describe(imported)}\n\n{_eval_output(args.format, plan, evaluations, names)}")
    return EXIT_OK


def _write_back(args, plan, imported) -> int:
    from .outputs.excel.reader import describe
    from .outputs.excel.writeback import write_back

    changes, shown, warnings = write_back(args.workbook, plan, imported, force=args.force, dry_run=args.dry_run,
                                          import_roots=import_roots(args))
    for text in warnings:
        sys.stderr.write(f"warning: {text}\n")
    sys.stderr.write(describe(imported) + "\n")
    if args.dry_run:
        sys.stdout.write(shown)
        note(f"nothing written (--dry-run): {len(changes)} literal{'s' if len(changes) != 1 else ''} of "
             f"{plan.path} would change")
    elif changes:
        note(f"wrote {plan.path}: {len(changes)} literal{'s' if len(changes) != 1 else ''} changed")
    else:
        note(f"{plan.path} is unchanged: the workbook has no edits to write back")
    return EXIT_OK


def cmd_report(args) -> int:
    from .outputs.build import publish, report_outputs
    from .outputs.viewmodel import analyse

    refuse_inputs(args.output, args.file, args.template)
    plan = _load(args.file, args=args)
    refuse_inputs(args.output, plan.files)
    analysis = analyse(plan)
    if args.output is None or args.output == "-":
        outputs, _ = report_outputs(analysis, "report.md", args.template, plots=False)
        write_output(outputs[-1].data.decode("utf-8"))
    else:
        from pathlib import Path

        target = Path(args.output)
        if args.output.endswith(("/", os.sep)):  # `-o reports/`: a folder, the file named after the plan
            target = target / f"{Path(plan.path).stem}.md"
        outputs, notes = report_outputs(analysis, target.name, args.template, plots=_regular(target))
        written = publish(outputs, target.parent, list(plan.files) + ([Path(args.template)] if args.template else []))
        for text in notes:
            note(text)
        note("wrote: " + ", ".join(str(p) for p in written))
    return EXIT_CHECK_FAILED if analysis.checks_failed else EXIT_OK


def _regular(path) -> bool:
    """A regular file or a new one (plots go next to it), not a device or a pipe (`-o /dev/stdout`)."""
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def cmd_serve(args) -> int:
    from .language.errors import UsageError

    try:
        from .outputs.serve.app import LOOPBACK, serve
    except ImportError as exc:
        raise UsageError(f"planner serve needs the web server the `serve` extra installs ({exc.name} is missing)",
                         hint="pip install starlette uvicorn (or pip install '.[serve]' in a checkout of planner)") from None
    from .outputs.serve.live import Session

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


def cmd_build(args) -> int:
    from .outputs.build import build, summary
    from .outputs.progress import Progress

    with Progress("build") as progress:
        result = build(args.file, args.output, args.template, import_roots(args), progress=progress)
    warn(result.analysis.plan)
    write_output(summary(result))
    return EXIT_CHECK_FAILED if result.checks_failed else EXIT_OK


def cmd_diff(args) -> int:
    from .outputs import diff

    d = diff.run(args.old, args.new, import_roots(args))
    if args.output:
        note("wrote " + ", ".join(diff.write(d, args.output)))
    else:
        write_output({"json": diff.json_text, "csv": diff.as_csv, "markdown": diff.markdown}.get(
            args.format, lambda d: diff.text(d, args.details, _width()))(d))
    return EXIT_CHECK_FAILED if d.regressions else EXIT_OK


# ---- entry point --------------------------------------------------------------

COMMANDS = frozenset({"eval", "check", "simulate", "explain", "sweep", "solve", "sensitivity", "export", "import", "report",
                      "build", "fmt", "lsp", "completion", "library", "diff", "serve"})


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
    global _QUIET
    _QUIET = args.quiet
    from .compute import cache
    from .outputs import progress

    progress.configure(quiet=args.quiet)
    cache.enable(not args.no_cache)
    handler: Callable[[argparse.Namespace], int] = args.handler
    from .language.errors import PlanError, render
    from .language.limits import RECURSION_LIMIT, deep, own_collector

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


if __name__ == "__main__":
    run()
