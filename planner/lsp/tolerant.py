"""Analysis that survives errors: a plan with a broken statement is still a plan.

While a plan is being typed it is broken most of the time. :func:`recover`
takes its text and gives back what can be known of it anyway: each statement
that does not parse, or does not check, becomes one error and is set aside
(its characters blanked, so every offset of the rest stays where it was);
the statements that use a name a set-aside statement defines are set aside
too, as *unknown* (with no error of their own: the first error is the one to
fix); and what is left is parsed and checked as the command line would.

Statements are found from the text's layout, as the grammar reads it: a
statement starts at the beginning of a line that is not indented, unless the
line before it ends in an operator or an open bracket (the statement goes on).
"""

from __future__ import annotations

import dataclasses
import re
import threading
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..language import ir
from ..language.errors import ParseError, PlanError, flatten
from ..language.lower import remember
from ..language.source import Source, Span
from .positions import line_of

MAX_PASSES = 40  # set-asides before the analysis gives up on the rest (a file of nothing but errors)

_CONTINUES = re.compile(r"(?:[-+*/^=,(\[{<>]|->|\band|\bor|\bnot)[ \t]*(?:#.*)?$")
_DEFINES = re.compile(r"(?:([^\W\d]\w*)[ \t]*(?:=|\()|(?:unit|scenario|axis)[ \t]+([^\W\d]\w*))")
_CLOSES = re.compile(r"[ \t]*[)\]}]")
_STARTS = re.compile(r"(?:[^\W\d]\w*[ \t]*(?:=|\()|(?:scenario|axis|sweep|solve|maximize|minimize|check|unit|import"
                     r"|from|title|note)\b)")


@dataclass
class Recovered:
    """What :func:`recover` found.

    ``syntax``: the statements that parse (of the text with the ones that do not blanked);
    ``plan``: the checked plan of what is left, or None when even that fails (``errors`` says why);
    ``errors``: one error per broken statement, in the order of the text;
    ``broken``: name -> the error of the statement that defines it;
    ``unknown``: name -> the broken name it depends on (directly or through others);
    ``blanked``: the (start, end) offsets set aside."""

    syntax: Optional[ir.PlanIR] = None
    plan: object = None
    errors: list[PlanError] = field(default_factory=list)
    broken: dict[str, PlanError] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)
    blanked: list[tuple[int, int]] = field(default_factory=list)
    uses: dict = field(default_factory=dict, repr=False)  # id(statement) -> (it, the names it uses)


_NOT_NEWLINE = re.compile(r"[^\n]")


def blank(text: str, start: int, end: int) -> str:
    """``text`` with ``[start, end)`` made spaces (newlines kept: every offset stays)."""
    return blank_all(text, [(start, end)])


def blank_all(text: str, ranges) -> str:
    """``text`` with each of the (start, end) ``ranges`` made spaces, in one pass over the text (a range
    at a time would copy the whole text once for each)."""
    pieces, at = [], 0
    for start, end in sorted(ranges):
        start = max(start, at)
        if end <= start:
            continue
        pieces += [text[at:start], _NOT_NEWLINE.sub(" ", text[start:end])]
        at = end
    if not pieces:
        return text
    pieces.append(text[at:])
    return "".join(pieces)


class Extents:
    """(start, end) offsets, asked which one holds an offset (a bisect; overlapping ones are merged)."""

    def __init__(self, ranges) -> None:
        merged: list[tuple[int, int]] = []
        for a, b in sorted(ranges):
            if merged and a < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        self.ranges = merged
        self.starts = [a for a, _ in merged]

    def holding(self, at: int) -> Optional[tuple[int, int]]:
        k = bisect_right(self.starts, at) - 1
        if k >= 0 and at < self.ranges[k][1]:
            return self.ranges[k]
        return None


def statements(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of each statement of ``text``, found from its layout as the grammar
    reads it: a statement starts on a line, at a line with code (not a blank or comment line) where the
    statement before is complete: no `(` or `[` or `{` left open, no operator or `=` or `,` (or a backslash) at
    the end of the line before, and the line does not go on with it (a doc string, tags, `where`, an
    operator). A line at the margin that starts a statement (`name =`, `f(`, a keyword) starts one
    even after a line left open: the statement before is broken then (``f = 1 +``, ``h = (1,``).
    A statement ends with its last line of code (the blank lines and comments after it are no one's)."""
    out: list[tuple[int, int]] = []
    start, end = -1, 0
    depth = braces = 0  # ( and [ open; { open
    goes_on = block = False  # block: the statement is a scenario or an axis
    at = 0
    size = len(text)
    while at < size:
        nl = text.find("\n", at)
        stop = size if nl < 0 else nl + 1
        line = text[at:stop]
        code = _STRING.sub('""', line).split("#", 1)[0].rstrip()
        if code.strip():
            margin = line[:1] not in (" ", "\t")
            if start < 0:
                new = True
            elif depth == 0 and braces == 0 and not goes_on:
                new = not _GOES_ON.match(line)
            elif braces > 0 and block:  # a scenario's overrides may stand at the margin too, unless the
                # block is never closed: then a definition at the margin starts the next statement
                new = margin and (bool(_KEYWORD.match(line))
                                  or (bool(_STARTS.match(line)) and not _closes_later(text, at)))
            else:
                new = margin and bool(_STARTS.match(line))
            if new:
                if start >= 0:
                    out.append((start, end))
                start, depth, braces = at, 0, 0
                block = bool(_BLOCK.match(line))
            depth = max(0, depth + code.count("(") + code.count("[") - code.count(")") - code.count("]"))
            braces = max(0, braces + code.count("{") - code.count("}"))
            goes_on = bool(_CONTINUES.search(code)) or code.endswith("\\")
            end = stop
        at = stop
    if start >= 0:
        out.append((start, end))
    return out


def _closes_later(text: str, at: int) -> bool:
    """Whether an open block (``scenario x {``) is closed by a `}` at or after offset ``at``, before a
    line at the margin that starts a statement of its own (a keyword: ``scenario``, ``check`` ...)."""
    for line in text[at:].splitlines():
        code = _STRING.sub('""', line).split("#", 1)[0]
        if "}" in code:
            return True
        if line[:1] not in (" ", "\t") and _KEYWORD.match(line):
            return False
    return False


_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"?')
_GOES_ON = re.compile(r'[ \t]*(?:["\[*/^+×·-]|(?:where|and|or)\b|then\b(?![^\n#"]*(?<![=<>!])=(?!=))|[)\]}])')  # a
# line that continues the one before (as grammar/plan.lark's newline says)
_BLOCK = re.compile(r"[ \t]*(?:scenario|axis)\b")
_TITLE = re.compile(r"[ \t]*(?:title|note)\b")
_KEYWORD = re.compile(r"(?:scenario|axis|sweep|solve|maximize|minimize|check|unit|import|from|title|note)\b")


class Parts:
    """The statements of the texts lately parsed, each lowered on its own and kept by its text and
    place (:func:`planner.language.lower.lower_part`): while a plan is typed, one statement changes at
    a time and only that one is parsed again. A statement that moves (a line added above it) is parsed
    again at its new place (its spans are offsets into the text)."""

    def __init__(self) -> None:
        self.kept: dict = {}  # (text, start, lines before) -> the part's IR, or its PlanError
        self.used: dict = {}
        self.lock = threading.Lock()  # (the checking worker and the requests both parse)
        self.uses: dict = {}  # id(statement) -> (it, the names it uses), for recover's set-asides

    def lower(self, name: str, text: str, start: int, end: int):
        """The IR of ``text[start:end]`` (whole statements), or the :class:`PlanError` it raises."""
        body = text[start:end]
        lines = line_of(text, start)
        key = (body, start, lines)
        found = self.kept.get(key)
        if found is None:
            from ..language.lower import lower_part

            pad = " " * (start - lines) + "\n" * lines  # every offset, line and column stays
            try:
                found = lower_part(Source(name, pad + body + ("" if body.endswith("\n") else "\n")))
            except PlanError as err:
                found = err
        with self.lock:
            self.used[key] = found
        return found

    def prime(self, name: str, text: str, found: list[tuple[int, int]]) -> None:
        """Lower each run of statements not kept yet in one parse (one parse of a whole plan is
        about ten times quicker than one per statement: opening a file), and keep each statement's
        part by its own text. A run that does not parse is parsed again without the statement the parse
        stopped in (the statements before it, then those after), one whose statements do not fall one to
        a place in halves: a broken statement costs a parse or two, not a parse of each statement. A
        single statement is left to :meth:`lower`."""
        run: list[tuple[int, int]] = []
        for start, end in found + [(-1, -1)]:
            fresh = start >= 0 and (text[start:end], start, line_of(text, start)) not in self.kept \
                and not _TITLE.match(text, start)  # (a title or note has no span to place it by)
            if fresh:
                run.append((start, end))
                continue
            runs = [run]
            while runs:
                part = runs.pop()
                if len(part) < 2:
                    continue
                failed = self._keep_run(name, text, part)
                if failed is None:
                    continue
                starts = [a for a, _ in part]
                k = bisect_right(starts, failed) - 1 if failed >= 0 else -1
                if 0 <= k and failed < part[k][1]:  # the statement the parse stopped in goes on its own
                    runs += [part[k + 1:], part[:k]]
                else:
                    half = len(part) // 2
                    runs += [part[half:], part[:half]]
            run = []

    def _keep_run(self, name: str, text: str, run: list[tuple[int, int]]) -> Optional[int]:
        """Parse the statements ``run`` in one go and keep each one's part. None when they parsed, one
        to a place; else the offset the parse stopped at (-1: none, or they did not fall one to a place)."""
        from ..language.lower import lower_part

        first, last = run[0][0], run[-1][1]
        lines = line_of(text, first)
        body = text[first:last]
        pad = " " * (first - lines) + "\n" * lines
        try:
            got = lower_part(Source(name, pad + body + ("" if body.endswith("\n") else "\n")))
        except PlanError as err:
            return err.span.start if err.span is not None and first <= err.span.start < last else -1
        if got.title is not None or got.notes:
            return -1
        starts = [a for a, _ in run]
        placed: list[list] = [[] for _ in run]
        for s in got.statements:
            k = bisect_right(starts, s.span.start) - 1  # the statement of the text it starts in
            if k < 0 or s.span.start >= run[k][1] or s.span.end > run[k][1]:
                return -1
            placed[k].append(s)
        if not all(placed):
            return -1
        for (a, b), stmts in zip(run, placed):
            self.kept[(text[a:b], a, line_of(text, a))] = ir.PlanIR(name, None, (), tuple(stmts))
        return None

    def forget(self) -> None:
        """Keep what the texts parsed since the last call used (the typing goes back and forth)."""
        with self.lock:
            self.kept, self.used = {**self.kept, **self.used} if len(self.kept) < 4 * len(self.used) else self.used, {}
            if len(self.uses) > 8 * len(self.kept) + 1000:
                self.uses = {}


def _syntax_pass(name: str, text: str, out: Recovered, parts: Optional[Parts] = None
                 ) -> tuple[str, Optional[ir.PlanIR]]:
    """Parse statement by statement, setting aside each one that does not parse; the text left (the
    broken statements blanked) and its statements."""
    from ..language.limits import MAX_TOKENS, paused_gc
    from ..language.lower import join, lower

    parts = parts if parts is not None else Parts()
    if _tokens_at_most(text) > MAX_TOKENS:  # the file may have more tokens than a plan may: as the command line says
        try:
            lower(Source(name, text))
        except PlanError as err:
            if not isinstance(err, ParseError):
                out.errors.append(err)
                return text, None
    found = statements(text)
    with paused_gc():  # (as the command line parses: the collector would walk what the parse builds, over and over)
        good = _parse_statements(name, text, found, out, parts)
    text = blank_all(text, out.blanked)
    parts.forget()
    for _ in range(MAX_PASSES):
        try:
            return text, join(name, [g for _, g in good], text)
        except ParseError as err:  # a plan-wide rule (a probability check's form): that statement is broken
            at = err.span.start if err.span is not None else -1
            hit = next((k for k, (s, g) in enumerate(good) if g.statements
                        and g.statements[0].span.start <= at < g.statements[-1].span.end), None)
            out.errors.append(err)
            if hit is None:
                return text, None
            s, g = good.pop(hit)
            stop = g.statements[-1].span.end
            out.blanked.append((s, stop))
            text = blank(text, s, stop)
    return text, None


_TOKENISH = re.compile(r"\w+|[^\w\s]|\n")


def _tokens_at_most(text: str) -> int:
    """At least as many as the tokens of ``text`` (every token holds a run of word characters, another
    character that is not a space, or is a newline): counted without parsing the whole text (each
    keystroke would, on a big plan)."""
    from ..language.limits import MAX_TOKENS

    cheap = len(text) - text.count(" ") - text.count("\t") - text.count("\r")  # (a character a token at most)
    return cheap if cheap <= MAX_TOKENS else sum(1 for _ in _TOKENISH.finditer(text))


def _parse_statements(name: str, text: str, found: list[tuple[int, int]], out: Recovered, parts: Parts) -> list:
    """(start, IR) of each statement of ``found`` that parses; each one that does not goes to ``out``."""
    parts.prime(name, text, found)
    good: list = []
    i = 0
    while i < len(found):
        start, end = found[i]
        got = parts.lower(name, text, start, end)
        j = i
        while isinstance(got, PlanError) and _at_end(got, text, start, found[j][1]) and j + 1 < len(found) \
                and j - i < 8:
            j += 1  # it stops at its end: maybe the statement goes on below (`f = max(` then `g(x), 1)`)
            joined = parts.lower(name, text, start, found[j][1])
            if not isinstance(joined, PlanError):
                got, i = joined, j
                break
        if isinstance(got, PlanError):
            out.errors.append(_unfinished(got, text, start, end) if _at_end(got, text, start, end)
                              and _unfinished_text(text[start:end]) else got)
            out.blanked.append((start, end))
            m = _DEFINES.match(text, start)
            if m:  # what the broken statement would define is broken too
                out.broken.setdefault(m.group(1) or m.group(2), got)
        else:
            good.append((start, got))
        i += 1
    return good


def _at_end(err: PlanError, text: str, start: int, end: int) -> bool:
    """Whether a statement's error is that it stops before its end (the parser read to its last character)."""
    last = start + len(text[start:end].rstrip())
    return err.span is not None and err.span.start >= last


def _unfinished_text(body: str) -> bool:
    """Whether a statement's text stops halfway: an operator at its end, or a bracket left open."""
    code = re.sub(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*', "", body)
    opened = sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
    return opened > 0 or bool(_CONTINUES.search(code.rstrip()))


def _unfinished(err: ParseError, text: str, start: int, end: int) -> ParseError:
    """The error of a statement that stops before its end (``f = 1 +``, ``h = (1 +``), at its last character."""
    body = text[start:end].rstrip()
    last = body.split()[-1] if body.split() else body
    span = Span(err.span.source, start + len(body) - 1, start + len(body))
    code = re.sub(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*', "", body)
    hint = "close the block with `}`" if code.count("{") > code.count("}") else err.hint or "finish the expression"
    out = ParseError(f"this statement is not finished: it stops after `{last}`", span,
                     label="the statement goes on from here", hint=hint)
    out.labels.extend(x for x in err.labels if x.span.start >= start)
    return out


def parse_tolerant(name: str, text: str, parts: Optional[Parts] = None) -> Recovered:
    """The syntax half of :func:`recover`: the statements that parse, the others set aside."""
    out = Recovered()
    out.syntax = _syntax_pass(name, text, out, parts)[1]
    return out


def _defines(s) -> list[str]:
    return [name for name, _, _ in ir.defines(s)]


_USES = {**ir.MENTIONS, ir.ScenarioRef: ("name", "scenario"), ir.UnitFactor: ("name",)}


def used_names(node) -> set[str]:
    """Every name a statement uses: quantities, functions, scenarios, units (dotted names whole)."""
    return ir.mentions(node, _USES)


def _uses(names: set[str], dead: set[str]) -> Optional[str]:
    for n in names:
        parts = n.split(".")
        for k in range(len(parts), 0, -1):
            head = ".".join(parts[:k])
            if head in dead:
                return head
    return None


def recover(name: str, text: str, load: Callable[[str], object],
            import_of: Callable[[str, list], Optional[Span]] = lambda *_: None,
            parts: Optional[Parts] = None) -> Recovered:
    """Parse and check ``text`` (the plan ``name``) with every broken statement set aside.

    ``load`` checks a text and returns the plan (raising :class:`PlanError`); ``import_of`` gives
    the import statement that brings in a plan of another source name (its errors set it aside);
    ``parts``: the statements parsed for the texts before (:class:`Parts`), to parse only what changed.
    The cyclic collector waits meanwhile, as it does while the command line loads a plan (on a big plan
    it would walk everything the checks so far kept, again and again)."""
    from ..language.limits import paused_gc

    with paused_gc():
        return _recover(name, text, load, import_of, parts)


def _recover(name: str, text: str, load: Callable[[str], object],
             import_of: Callable[[str, list], Optional[Span]], parts: Optional[Parts]) -> Recovered:
    out = Recovered(uses=parts.uses if parts is not None else {})
    text, syntax = _syntax_pass(name, text, out, parts)
    out.syntax = syntax
    if syntax is None:
        return out
    statements = list(syntax.statements)
    text = _set_aside(text, statements, [], out)  # what uses a name a broken statement defines
    unread: list = []  # a title, note or doc string whose live value names what was set aside
    for _ in range(MAX_PASSES):
        # (parsed already); the doc strings of statements set aside go with them (a live value in one
        # may name what they defined)
        blanked = Extents(out.blanked)
        prose = tuple(p for p in syntax.prose if p not in unread and blanked.holding(p.span.start) is None)
        remember(name, text, dataclasses.replace(syntax, statements=tuple(statements), prose=prose))
        try:
            out.plan = load(text)
            break
        except PlanError as err:
            found = flatten(err)
        removed: list = []
        owners = _Owners(statements, text)
        for e in found:
            span = e.span
            if span is not None and span.source.name != name:
                span = import_of(span.source.name, statements)
            s = None if span is None else owners.of(span.start)
            words = None if s is not None or span is None else next(
                (p for p in prose if p.span.start <= span.start < p.span.end), None)
            if words is not None:  # prose is read, not run: its live values wait, the plan goes on
                unread.append(words)
                dead = set(out.broken) | set(out.unknown)
                if not any("{" + n in words.text for n in dead):  # else the set-aside statement's error says it
                    out.errors.append(e)
                continue
            if s is None:
                out.errors.append(e)  # nowhere to set aside: the plan as a whole fails
                out.errors.sort(key=lambda x: x.span.start if x.span is not None and x.span.source.name == name
                                else -1)
                return out
            if s not in removed:
                removed.append(s)
                out.errors.append(e)
                for n in _defines(s):
                    out.broken.setdefault(n, e)
        text = _set_aside(text, statements, removed, out)
    out.errors.sort(key=lambda x: x.span.start if x.span is not None and x.span.source.name == name else -1)
    return out


class _Owners:
    """Which statement of ``statements`` (in the order of the text) an offset of ``text`` belongs to
    (:meth:`of`), by bisects: built once per pass of :func:`recover`, however many errors it places."""

    def __init__(self, statements: list, text: str) -> None:
        self.text = text
        self.order = sorted(statements, key=lambda s: s.span.start)  # (stable: the list's order on a tie)
        self.starts = [s.span.start for s in self.order]
        self.layout: Optional[Extents] = None

    def of(self, at: int):
        """The statement offset ``at`` belongs to: the one whose span holds it, else the one that starts in
        the same statement of the text's layout (a question's doc string on the line below its span)."""
        k = bisect_right(self.starts, at) - 1
        while k > 0 and self.starts[k - 1] == self.starts[k]:
            k -= 1  # (the first of those starting there)
        for s in self.order[max(0, k):k + 2] if k >= 0 else ():
            if s.span.start <= at < max(s.span.end, s.span.start + 1):
                return s
        if self.layout is None:
            self.layout = Extents(statements(self.text))
        extent = self.layout.holding(at)
        if extent is None:
            return None
        k = bisect_left(self.starts, extent[0])
        return self.order[k] if k < len(self.order) and self.starts[k] < extent[1] else None


def _set_aside(text: str, parsed: list, removed: list, out: Recovered) -> str:
    """Blank the ``removed`` statements and every statement that uses a broken or unknown name
    (marked unknown); both leave ``parsed`` (the IR statements). Linear in the statements: one pass in the order of
    the text (what uses a name defined above it), then an index of who uses which name for what uses
    a name defined below it."""
    dead = set(out.broken) | set(out.unknown)
    uses = out.uses
    gone = {id(s) for s in removed}

    def names_of(s) -> set[str]:
        known = uses.get(id(s))
        if known is None or known[0] is not s:
            known = uses[id(s)] = (s, used_names(s))  # (the statement kept: its id stays its own)
        return known[1]

    def drop(s, hit: str) -> list[str]:
        removed.append(s)
        gone.add(id(s))
        for n in _defines(s):
            if n not in out.broken:
                out.unknown.setdefault(n, out.unknown.get(hit, hit))
            dead.add(n)
        return _defines(s)

    fresh: list[str] = []  # names found dead on the way
    if dead:  # (nothing broken: nothing depends on it)
        for s in parsed:
            if id(s) not in gone:
                hit = _uses(names_of(s), dead)
                if hit is not None:
                    fresh += drop(s, hit)
    if fresh:
        users: dict[str, list] = {}  # a name (or a dotted name's head) -> the statements left that use it
        for s in parsed:
            if id(s) not in gone:
                for n in names_of(s):
                    parts = n.split(".")
                    for k in range(len(parts), 0, -1):
                        users.setdefault(".".join(parts[:k]), []).append(s)
        while fresh:
            for s in users.get(fresh.pop(), ()):
                if id(s) not in gone:
                    fresh += drop(s, _uses(names_of(s), dead))
    if not removed:
        return text
    extents = Extents(statements(text))
    order = sorted(parsed, key=lambda s: s.span.start)
    starts = [s.span.start for s in order]
    done: set[int] = set()
    ranges = []
    for s in removed:
        done.add(id(s))
        # the whole statement as the text lays it out: a question's doc string on the line below its
        # span goes with it (left alone, it would be a stray string, or a live value of a name set aside)
        start, end = extents.holding(s.span.start) or (s.span.start, s.span.end)
        start, end = min(start, s.span.start), max(end, s.span.end)
        if any(id(o) not in done for o in order[bisect_left(starts, start):bisect_left(starts, end)]):
            start, end = s.span.start, s.span.end  # the layout holds another statement too: the span only
        out.blanked.append((start, end))
        ranges.append((start, end))
    parsed[:] = [s for s in parsed if id(s) not in gone]
    return blank_all(text, ranges)


def words_in(text: str, start: int, end: int, word: str) -> list[tuple[int, int]]:
    """The places ``word`` is written as a whole name in ``text[start:end]`` (not in a comment or a string)."""
    out = []
    pattern = re.compile(r"(?<![\w.])" + re.escape(word) + r"(?![\w])")
    for m in pattern.finditer(text, start, end):
        row_start = text.rfind("\n", 0, m.start()) + 1
        row = text[row_start:m.start()]
        if row.count('"') % 2 == 0 and "#" not in row.replace('"#', ""):
            out.append((m.start(), m.end()))
    return out

