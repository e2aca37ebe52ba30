"""Positions in a document's text as the protocol counts them, and the semantic tokens' legend.

Plain Python with nothing to import, so that the server can apply an edit and
answer ``initialize`` before the language is loaded. Positions are 0-based
(line, character), characters counted in the units of the encoding agreed
with the client: UTF-16 code units (the protocol's default), UTF-8 bytes or
code points (``utf-32``).
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right

ENCODING = {"unit": "utf-16"}  # the position encoding agreed with the client: utf-16 (the default), utf-8, utf-32
SUPPORTED = ("utf-16", "utf-8", "utf-32")

# the semantic tokens' legend: indices into these are what `textDocument/semanticTokens` sends
TOKEN_TYPES = ["keyword", "variable", "function", "parameter", "type", "number", "string", "comment"]
TOKEN_MODIFIERS = ["declaration", "defaultLibrary"]  # a name where it is defined; a built-in function


def _width(ch: str) -> int:
    kind = ENCODING["unit"]
    if kind == "utf-8":
        return len(ch.encode("utf-8"))
    if kind == "utf-32":
        return 1
    return 2 if ord(ch) > 0xFFFF else 1


def units(text: str) -> int:
    """The length of ``text`` in the agreed encoding's units."""
    return sum(_width(ch) for ch in text) if not text.isascii() else len(text)


_INDEXED = 4096  # texts at least this long get an index of their lines (a shorter one is counted through)
_LINES: dict = {}  # id(text) -> (text, the offset each line starts at): the few long texts lately asked of
_NEWLINE = re.compile("\n")
_LOCK = threading.Lock()  # (the checking worker and the requests both ask)


def line_starts(text: str) -> list[int]:
    """The offset each line of ``text`` starts at, built once per text (the few latest are kept: the
    document, the text a check masked, the text a run of statements was parsed in). Every position of
    a big plan is then a bisect, not a count from the top (quadratic over a plan's statements)."""
    found = _LINES.get(id(text))
    if found is not None and found[0] is text:
        return found[1]
    starts = [0]
    starts.extend(m.end() for m in _NEWLINE.finditer(text))
    if len(text) >= _INDEXED:
        with _LOCK:
            if len(_LINES) >= 8:
                _LINES.pop(next(iter(_LINES)), None)  # (the oldest)
            _LINES[id(text)] = (text, starts)  # (the text kept with it: its id stays its own)
    return starts


def line_of(text: str, offset: int) -> int:
    """The 0-based line of a character offset (the number of newlines before it)."""
    if len(text) < _INDEXED:
        return text.count("\n", 0, max(0, offset))
    return bisect_right(line_starts(text), max(0, offset)) - 1


def position(text: str, offset: int) -> tuple[int, int]:
    """0-based (line, character) of a character offset, characters in the agreed encoding's units."""
    offset = max(0, min(offset, len(text)))
    if len(text) < _INDEXED:
        line = text.count("\n", 0, offset)
        start = text.rfind("\n", 0, offset) + 1
    else:
        starts = line_starts(text)
        line = bisect_right(starts, offset) - 1
        start = starts[line]
    return line, units(text[start:offset])


def offset(text: str, line: int, character: int) -> int:
    """The character offset of a 0-based (line, character); past a line's end is its end, past the
    last line the end of the text."""
    if len(text) < _INDEXED:
        start = 0
        for _ in range(line):
            nl = text.find("\n", start)
            if nl < 0:
                return len(text)
            start = nl + 1
    else:
        starts = line_starts(text)
        if line >= len(starts):
            return len(text)
        start = starts[max(0, line)]
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if end > start and text[end - 1] == "\r":
        end -= 1  # (a CRLF line ends before its \r)
    count = 0
    for i, ch in enumerate(text[start:end]):
        if count >= character:
            return start + i
        count += _width(ch)
    return end


def edit(text: str, change: dict) -> str:
    """``text`` after one of ``didChange``'s content changes: a range replaced, or (no range) the whole text."""
    if "range" not in change or change["range"] is None:
        return change["text"]
    r = change["range"]
    start = offset(text, r["start"]["line"], r["start"]["character"])
    end = offset(text, r["end"]["line"], r["end"]["character"])
    return text[:start] + change["text"] + text[max(start, end):]
