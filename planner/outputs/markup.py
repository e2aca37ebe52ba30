"""The one escaping rule for text that reaches the report.

The report is Markdown, and Markdown is HTML too: a renderer passes raw HTML (``<script>``,
``<img onerror=...>``) through and makes a link of ``[click](javascript:...)``. GitHub strips
these; other renderers, and a web page built from the report, do not. So every text from a plan
(its title, notes, doc strings, a question's own sentence, sources, tags, scenario and axis docs)
reaches the report through one of two functions here, and templates through the filters of the
same name (:mod:`planner.outputs.report`):

* :func:`text`: plain text. Every character Markdown reads (``\\ * _ [ ] < > # ~ & $ ` ``; ``$``
  opens maths on GitHub) is escaped with a backslash, outside `code spans`, which are kept (doc strings write names as
  ```batch```). It shows exactly what was written; no HTML, link, image or entity survives.
* :func:`markdown`: the plan's sentences (notes and a question's own sentence) as limited
  Markdown: emphasis (``*``, ``_``), code spans, and links ``[words](URL)`` whose URL is
  ``http:``, ``https:``, ``mailto:`` or relative (no scheme and no ``:``, ``&`` at all, so no
  ``javascript:``, ``data:``, ``vbscript:``, however spelled or encoded). Everything else is escaped
  as :func:`text` escapes it: no raw HTML, no autolink ``<...>``, no image, no reference link,
  no entity; a link with any other URL is shown as text.

Code spans are kept only where CommonMark also reads one (a run of backticks closed by a run of
the same length on the same line; GitHub's maths ``$`...`$`` is one too); an unpaired backtick is escaped, so no span can open early and
carry the rest of the text past the escaping. Autoescaping in Jinja would write HTML entities
(``&lt;``), which Markdown shows literally inside code spans: the rule is Markdown's backslash.

:func:`prose` applies a rule to a text with live values (:mod:`planner.language.live`): the
plan's words are escaped, the figures planner writes (Markdown of its own: `scenario` names) are
put in afterwards.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

# a code span as CommonMark reads it: a backtick run, content on one line, the same run closing it
# (with GitHub's inline maths around it, $`x^2`$, as planner writes maths in its messages)
_CODE_SPAN = re.compile(r"(?<!`)(\$)?(`+)(?!`)([^\r\n]+?)(?<!`)\2(?!`)(?(1)\$|)")
_SPECIAL = re.compile(r"([\\`*_\[\]<>#~&$])")  # `|` is the business of a table cell (`cell`)
_SPECIAL_MARKDOWN = re.compile(r"([\\`\[\]<>#~&$])")  # emphasis (`*`, `_`) stays
_LINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\(([^\s()<>]*)\)")
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#@!$&*+,;=%]+")
_SCHEME = re.compile(r"(?:https?://|mailto:)", re.I)


def _outside_spans(value: str, escape: Callable[[str], str]) -> str:
    out, last = [], 0
    for m in _CODE_SPAN.finditer(value):
        out.append(escape(value[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(escape(value[last:]))
    return "".join(out)


def text(value: Any) -> str:
    """Plain text made safe for Markdown: special characters escaped outside `code spans`."""
    value = "" if value is None else str(value)
    return _outside_spans(value, lambda s: _SPECIAL.sub(r"\\\1", s))


def code(value: Any) -> str:
    """An inline code span of any text: a fence longer than any run of backticks in it, on one line
    (a blank line would end the span early and let the rest be read as Markdown)."""
    value = " ".join(("" if value is None else str(value)).splitlines())
    fence = "`"
    while fence in value:
        fence += "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def safe_url(url: str) -> bool:
    """An ``http:``, ``https:`` or ``mailto:`` URL, or a relative one with no ``:`` or ``&`` (an entity
    such as ``&#58;`` could make a scheme of it): nothing a browser runs."""
    if not url or _URL_CHARS.fullmatch(url) is None:
        return False
    if _SCHEME.match(url):
        return True
    return ":" not in url and "&" not in url


def _markdown_segment(segment: str) -> str:
    out, last = [], 0
    for m in _LINK.finditer(segment):
        if not safe_url(m.group(3)):
            continue
        out.append(_SPECIAL_MARKDOWN.sub(r"\\\1", segment[last:m.start()]))
        words = _SPECIAL_MARKDOWN.sub(r"\\\1", m.group(2))
        out.append(("\\!" if m.group(1) else "") + f"[{words}]({m.group(3)})")  # a link, never an image
        last = m.end()
    out.append(_SPECIAL_MARKDOWN.sub(r"\\\1", segment[last:]))
    return "".join(out)


def markdown(value: Any) -> str:
    """Limited Markdown (emphasis, code spans, links to safe URLs); everything else escaped."""
    value = "" if value is None else str(value)
    return _outside_spans(value, _markdown_segment)


def prose(value: Optional[str], figure: Optional[Callable[[Any], str]] = None, *,
          rule: Callable[[Any], str] = text) -> str:
    """A plan's text with live values as the report shows it: the plan's words through ``rule``
    (:func:`text` or :func:`markdown`), then each live value's ``figure(live)`` (planner's own
    Markdown) in its place. Without ``figure`` the live values are shown as written (``{x}``)."""
    from ..language.live import plain, scan

    if not value:
        return ""
    if figure is None:
        return rule(plain(value))
    parts = scan(value)[0]
    if all(isinstance(p, str) for p in parts):
        return rule("".join(parts))
    used = set(value)
    free = (chr(c) for c in range(0xE000, 0xF900) if chr(c) not in used)  # private-use marks
    marks: dict[tuple, str] = {}  # one mark per live value, however often the text says it
    shown: dict[str, str] = {}  # mark -> the figure
    joined = []
    for p in parts:
        if isinstance(p, str):
            joined.append(p)
            continue
        key = (p.name, p.unit)
        if key not in marks:
            mark = next(free, None)
            if mark is None:  # more distinct live values than marks: each piece on its own
                return "".join(rule(p) if isinstance(p, str) else figure(p) for p in parts)
            marks[key], shown[mark] = mark, figure(p)
        joined.append(marks[key])
    return rule("".join(joined)).translate({ord(mark): figure_text for mark, figure_text in shown.items()})
