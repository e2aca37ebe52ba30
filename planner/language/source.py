"""Source text and spans: where every IR node and every error points."""

from __future__ import annotations

import bisect
from .lazy import field  # dataclasses.field, for the classes made on first use

from .lazy import lazy_dataclass as dataclass  # dataclasses.dataclass, made on first use


@dataclass(frozen=True, eq=False)
class Source:
    """A named piece of plan text (a file, a ``--set`` value, a CLI condition)."""

    name: str
    text: str
    _line_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]  # where each line starts: after each "\n" (found by str.find, not a loop over characters)
        find, append = self.text.find, starts.append
        i = find("\n")
        while i >= 0:
            append(i + 1)
            i = find("\n", i + 1)
        object.__setattr__(self, "_line_starts", tuple(starts))

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]


@dataclass(frozen=True)
class Span:
    source: Source
    start: int
    end: int

    @property
    def line(self) -> int:
        return self.source.position(self.start)[0]

    @property
    def column(self) -> int:
        return self.source.position(self.start)[1]

    @property
    def text(self) -> str:
        return self.source.text[self.start:self.end]

    @property
    def flat(self) -> str:
        """The source text on one line, runs of white space as one space (for messages and tables)."""
        return " ".join(self.text.split())

    def location(self) -> str:
        line, col = self.source.position(self.start)
        return f"{self.source.name}:{line}:{col}"

    def __repr__(self) -> str:  # keep IR reprs short
        return f"Span({self.location()})"


MAX_SHOWN = 160  # characters of a source line shown under an error (a 10 MB line is not printed)


def _clip(text: str, col: int, width: int) -> tuple[str, int, int]:
    """A long line cut to a window around columns ``col``..``col + width`` (1-based), marked with `…`."""
    if len(text) <= MAX_SHOWN:
        return text, col, width
    width = min(width, MAX_SHOWN // 2)
    start = max(0, min(col - 1 - MAX_SHOWN // 4, len(text) - MAX_SHOWN))
    shown = text[start:start + MAX_SHOWN]
    head, tail = ("…" if start > 0 else ""), ("…" if start + MAX_SHOWN < len(text) else "")
    return head + shown + tail, col - start + len(head), width


def snippet(span: Span, label: str = "", marker: str = "^") -> str:
    """The source line of ``span`` with a caret line under it (first line only)."""
    line, col = span.source.position(span.start)
    text = span.source.line_text(line)
    end_line, end_col = span.source.position(max(span.start, span.end - 1))
    width = (end_col - col + 1) if end_line == line else len(text) - col + 1
    width = max(1, width)
    text, col, width = _clip(text, col, width)
    gutter = f"{line:>4} | "
    pad = " " * (len(gutter) - 2) + "| "
    # Expand tabs consistently so the caret lines up.
    prefix = text[: col - 1].expandtabs(4)
    shown = text.expandtabs(4)
    underline = " " * len(prefix) + marker * width
    if label:
        underline += " " + label
    return f"{gutter}{shown}\n{pad}{underline}"


def multi_snippet(marks: list[tuple[Span, str, str]]) -> str:
    """One source line with several underlined spans (``^`` primary, ``-``
    secondary): the rightmost label ends the underline, the others are
    written below at their column."""
    first = marks[0][0]
    line, _ = first.source.position(first.start)
    text = first.source.line_text(line).expandtabs(4)
    if len(text) > MAX_SHOWN:  # too long to draw several marks on: the first one alone
        return snippet(first, marks[0][1], marks[0][2])
    gutter = f"{line:>4} | "
    pad = " " * (len(gutter) - 2) + "| "
    under = [" "] * len(text)
    placed = []
    for span, label, marker in marks:
        _, col = span.source.position(span.start)
        end_line, end_col = span.source.position(max(span.start, span.end - 1))
        width = max(1, (end_col - col + 1) if end_line == line else len(text) - col + 1)
        for i in range(col - 1, col - 1 + width):
            while i >= len(under):
                under.append(" ")
            under[i] = marker
        placed.append((col - 1, label))
    placed.sort()
    rows = ["".join(under).rstrip()]
    labelled = [(c, t) for c, t in placed if t]
    if labelled:
        below = labelled
        if labelled[-1][0] == placed[-1][0]:  # the rightmost mark's label ends the underline
            rows[0] += " " + labelled[-1][1]
            below = labelled[:-1]
        for col, label in reversed(below):
            rows.append(" " * col + label)
    return gutter + text + "\n" + "\n".join(pad + r for r in rows)
