"""Where a command's output goes: stdout, or a file written all or nothing; notes on stderr."""

from __future__ import annotations

import sys

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional, Sequence


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

    from ..outputs.build import Output, publish

    target = Path(path)
    publish([Output(target.name, data, "file")], target.parent, protect)


def refuse_inputs(output: str, *inputs) -> None:
    """Exit 2 before anything runs when ``-o`` names one of the run's inputs."""
    if output in (None, "-"):
        return
    from pathlib import Path

    from ..outputs.build import refuse_inputs as refuse

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

    from ..outputs.build import Output, publish

    def to_file(binary) -> None:
        text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        try:
            write(text)
        finally:
            text.flush()
            text.detach()  # the file stays open for publish to close

    target = Path(path)
    publish([Output(target.name, to_file, "file")], target.parent, protect)


def note(text: str) -> None:
    """An informational line on stderr (``wrote ...``), left out with ``--quiet``."""
    if not _QUIET:
        sys.stderr.write(text + "\n")


_QUIET = False  # --quiet: set by main()
