"""Positions in a document's text as the protocol counts them, and the semantic tokens' legend.

Plain Python with nothing to import, so that the server can apply an edit and
answer ``initialize`` before the language is loaded. Positions are 0-based
(line, character), characters counted in the units of the encoding agreed
with the client: UTF-16 code units (the protocol's default), UTF-8 bytes or
code points (``utf-32``).
"""

from __future__ import annotations

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


def position(text: str, offset: int) -> tuple[int, int]:
    """0-based (line, character) of a character offset, characters in the agreed encoding's units."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return line, units(text[start:offset])


def offset(text: str, line: int, character: int) -> int:
    """The character offset of a 0-based (line, character); past a line's end is its end, past the
    last line the end of the text."""
    start = 0
    for _ in range(line):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
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
