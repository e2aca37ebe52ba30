"""The options several commands share, and the parser class every command's is (its width, its exit
code for bad arguments). argparse only: nothing heavy is imported here."""

from __future__ import annotations

import argparse
import os
import sys

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


def _whole(least: int):
    """An option's value: a whole number from ``least`` up, by the one range rule of what a user writes."""
    def parse(text: str) -> int:
        from ..language.literals import whole_number

        try:
            return whole_number(text, least)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return parse


_positive, _seed = _whole(1), _whole(0)  # --samples, --limit, --trials; --seed


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


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a .plan file")
    p.add_argument("--scenario", "-s", action="append", metavar="NAME",
                   help="scenario to use: a name, a comma list, `base` (the plan as written) or `all` "
                        "(the plan as written, then every scenario); repeatable")
    _import_root(p)
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE",
                   help="override an input, with plan syntax for the value (`--set 'hbm_bandwidth=3.35 TB/s'`); repeatable")


def _import_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--import-root", dest="import_roots", action="append", default=[], metavar="DIR",
                   help="a folder imports may also read from and are looked up in (a team's library); repeatable. "
                        "PLANNER_IMPORT_PATH adds more (separated by `" + os.pathsep + "`)")
    p.add_argument("--no-cache", action="store_true", default=argparse.SUPPRESS,  # after the command too
                   help="neither read nor write the cache of compiled plans and drawn charts "
                        "(as `planner --no-cache COMMAND`)")


def _format(p: argparse.ArgumentParser, choices=("table", "json", "csv", "markdown", "jsonl")) -> None:
    p.add_argument("--format", "-f", choices=list(choices), default="table",
                   help="output format: " + ", ".join(choices) + " (default: table, fitted to the terminal's width)")


def _version() -> str:
    from .. import __version__

    return __version__
