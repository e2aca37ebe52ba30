"""What the commands share while they run: loading the plan, its overrides and scenarios, the
width tables fit, colour."""

from __future__ import annotations

import contextlib
import os
import sys

from .options import _columns

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional, Sequence


def import_roots(args) -> list[str]:
    """Extra folders imports may read: ``--import-root`` options, then PLANNER_IMPORT_PATH."""
    env = [d for d in os.environ.get("PLANNER_IMPORT_PATH", "").split(os.pathsep) if d]
    return list(getattr(args, "import_roots", None) or []) + env


def warn(plan) -> None:
    """The plan's warnings (:class:`planner.language.errors.PlanWarning`) on stderr, once each."""
    from ..language.errors import render

    for w in plan.warnings:
        sys.stderr.write(render(w, color=sys.stderr.isatty()) + "\n")


def _load(path: str, all_imports: bool = False, args=None):
    from ..language.limits import freeze
    from ..plan import load_compiled

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


@contextlib.contextmanager
def _past_memory(what: str, match: str = "", on: bool = True):
    """Adds to the error of an in-memory limit (``match``: how its message starts) that ``--dask``
    runs past it."""
    from ..language.errors import PlanError

    try:
        yield
    except PlanError as err:
        if on and err.message.startswith(match):
            err.notes.append(f"--dask runs {what} in chunks, reduced to figures "
                             "(pip install 'dask[array]' distributed xarray)")
        raise
