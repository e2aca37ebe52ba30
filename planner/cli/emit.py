"""The one way a command prints its result: :func:`emit`."""

from __future__ import annotations

from .common import _width
from .output import stream_output, write_output

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Optional, Sequence


def emit(result: Any, fmt: str, path: Optional[str] = None, protect: Sequence = ()) -> None:
    """Write ``result`` (a view of :mod:`planner.outputs.views`) as ``fmt``: ``table``, fitted to the
    terminal's width, or ``json``, ``jsonl``, ``csv``, ``markdown``; to stdout, or all or nothing to
    ``path`` (never over one of ``protect``, the run's inputs). The formats a command accepts are its
    parser's choices. A view too big to hold as one text (a sweep's points) writes itself onto the
    stream as it is computed (its ``write(fmt, out, width)``)."""
    if hasattr(result, "write"):
        stream_output(path, lambda out: result.write(fmt, out, _width()), protect)
        return
    text = result.table(_width()) if fmt == "table" else getattr(result, fmt)()
    write_output(text, path)
