"""A progress bar on stderr, for commands whose work takes more than about a second.

Shown only when stderr is a terminal, ``NO_COLOR`` is not set and ``--quiet``
was not given (:func:`configure`); never in pipes, logs or tests. It appears
after :data:`DELAY` seconds, is redrawn at most every :data:`INTERVAL`
seconds and is erased when the work ends, so fast runs look exactly as
before. Work with a known size (the points of a sweep) gets a bar and a
count; work in steps (a build) gets the step's name.
"""

from __future__ import annotations

import os
import sys
import time

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional, TextIO

DELAY = 1.0  # seconds before anything is drawn
INTERVAL = 0.1  # seconds between redraws
WIDTH = 24  # characters of the bar

_enabled: Optional[bool] = None  # decided by the command line; None: from the terminal alone


def configure(quiet: bool = False, stream: Optional[TextIO] = None) -> None:
    """Whether progress is shown in this process: ``--quiet`` and ``NO_COLOR`` turn it off, and
    so does a stderr that is not a terminal."""
    global _enabled
    stream = stream or sys.stderr
    _enabled = not quiet and "NO_COLOR" not in os.environ and _isatty(stream)


def enabled() -> bool:
    if _enabled is None:
        return False  # the library (API, tests) never draws unless the command line asked
    return _enabled


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """``with Progress("sweep", total=n, unit="points") as p: ... p.advance(k)``; or, for steps,
    ``p.step("workbook")``."""

    def __init__(self, label: str, total: Optional[int] = None, unit: str = "", stream: Optional[TextIO] = None,
                 clock=time.monotonic) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.done = 0
        self.what = ""
        self.stream = stream or sys.stderr
        self.clock = clock
        self.start = clock()
        self.last = -1.0
        self.shown = 0  # characters on the line now
        self.active = enabled()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def step(self, what: str) -> None:
        self.what = what
        self._draw()

    def _draw(self) -> None:
        if not self.active:
            return
        now = self.clock()
        if now - self.start < DELAY or now - self.last < INTERVAL:
            return
        self.last = now
        text = self.text(now - self.start)
        pad = max(0, self.shown - len(text))
        try:
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
        except (OSError, ValueError):
            self.active = False
            return
        self.shown = len(text)

    def text(self, elapsed: float) -> str:
        parts = [self.label]
        if self.total:
            frac = min(1.0, self.done / self.total)
            filled = int(frac * WIDTH)
            parts.append("[" + "#" * filled + "." * (WIDTH - filled) + f"] {frac * 100:3.0f}%")
            parts.append(f"{self.done:,}/{self.total:,}" + (f" {self.unit}" if self.unit else ""))
        if self.what:
            parts.append(self.what)
        parts.append(f"{elapsed:.0f} s")
        return " ".join(parts)

    def close(self) -> None:
        if self.active and self.shown:
            try:
                self.stream.write("\r" + " " * self.shown + "\r")
                self.stream.flush()
            except (OSError, ValueError):
                pass
        self.shown = 0
        self.active = False
