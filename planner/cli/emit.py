"""The one way a command prints its result: :func:`emit`."""

from __future__ import annotations

from .common import _width
from .output import write_output

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Optional


def emit(result: Any, fmt: str, path: Optional[str] = None) -> None:
    """Write ``result`` (a view of :mod:`planner.outputs.views`) as ``fmt``: ``table``, fitted to the
    terminal's width, or ``json``, ``jsonl``, ``csv``, ``markdown``; to stdout, or all or nothing to
    ``path``. The formats a command accepts are its parser's choices."""
    text = result.table(_width()) if fmt == "table" else getattr(result, fmt)()
    write_output(text, path)
