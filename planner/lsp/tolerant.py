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
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Callable, Optional

from ..language import ir
from ..language.errors import ParseError, PlanError, flatten
from ..language.lower import lower
from ..language.source import Source, Span

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
    uses: dict = field(default_factory=dict, repr=False)  # id(statement) -> the names it uses (while recovering)


def blank(text: str, start: int, end: int) -> str:
    """``text`` with ``[start, end)`` made spaces (newlines kept: every offset stays)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def _lines(text: str) -> list[int]:
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def _blank_line(text: str, a: int, b: int) -> bool:
    row = text[a:b].strip()
    return not row or row.startswith("#")


def statement_at(text: str, at: int) -> tuple[int, int]:
    """The (start, end) offsets of the statement around offset ``at``, found from the layout."""
    starts = _lines(text)
    ends = starts[1:] + [len(text)]
    line = max(0, min(len(starts) - 1, text.count("\n", 0, min(at, len(text)))))

    def opens(i: int) -> bool:  # line i starts a statement
        a, b = starts[i], ends[i]
        row = text[a:b]
        if _blank_line(text, a, b) or row[:1] in (" ", "\t") or _CLOSES.match(row):
            return False
        if _STARTS.match(row):  # `name =`, `f(`, a keyword, at the margin: a statement, even after a
            return True  # line that asks for more (that one is broken then: see _syntax_pass)
        j = i - 1
        while j >= 0 and _blank_line(text, starts[j], ends[j]):
            j -= 1
        return j < 0 or not _CONTINUES.search(text[starts[j]:ends[j]].rstrip("\r\n"))

    first = line
    while first > 0 and not opens(first):
        first -= 1
    last = line + 1
    while last < len(starts) and not opens(last):
        last += 1
    end = starts[last] if last < len(starts) else len(text)
    return starts[first], end


def _syntax_pass(name: str, text: str, out: Recovered) -> tuple[str, Optional[ir.PlanIR]]:
    """Parse, setting aside each statement that does not parse; the text left and its statements."""
    for _ in range(MAX_PASSES):
        try:
            return text, lower(Source(name, text))
        except ParseError as err:
            if err.span is None or err.span.source.name != name:
                out.errors.append(err)
                return text, None
            at = err.span.start
            start, end = statement_at(text, at)
            unclosed = [lab.span.start for lab in err.labels if lab.text.endswith("is not closed")]
            if unclosed and unclosed[0] < start:
                # a bracket opened in an earlier statement and never closed: the parser read on from there
                start, end = statement_at(text, unclosed[0])
                err = _unfinished(err, text, start, end)
            elif start > 0:
                before = statement_at(text, start - 1)
                if _unfinished_text(text[before[0]:before[1]]):
                    # the statement before this one stops halfway (`f = 1 +`, `h = (1,`): that one is broken,
                    # and the parser read on into this one
                    start, end = before
                    err = _unfinished(err, text, start, end)
            if end <= start:
                end = min(len(text), at + 1)
            out.errors.append(err)
            out.blanked.append((start, end))
            m = _DEFINES.match(text, start)
            if m:  # what the broken statement would define is broken too
                out.broken.setdefault(m.group(1) or m.group(2), err)
            text = blank(text, start, end)
    return text, None


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
    out = ParseError(f"this statement is not finished: it stops after `{last}`", span,
                     label="the statement goes on from here", hint=err.hint or "finish the expression")
    out.labels.extend(x for x in err.labels if x.span.start >= start)
    return out


def parse_tolerant(name: str, text: str) -> Recovered:
    """The syntax half of :func:`recover`: the statements that parse, the others set aside."""
    out = Recovered()
    out.syntax = _syntax_pass(name, text, out)[1]
    return out


def _defines(s) -> list[str]:
    if isinstance(s, (ir.Definition, ir.FunctionDef, ir.UnitDecl, ir.Scenario, ir.Axis)):
        return [s.name]
    if isinstance(s, ir.Import):
        return [s.alias] if s.alias else list(s.names or ())
    if isinstance(s, (ir.Solve, ir.Optimize)) and s.alias:
        return [s.alias]
    return []


def used_names(node) -> set[str]:
    """Every name a statement uses: quantities, functions, scenarios, units (dotted names whole)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if isinstance(x, (ir.Name, ir.Override, ir.SweepAxis, ir.UnitFactor)):
            out.add(x.name)
        elif isinstance(x, ir.ScenarioRef):
            out.update((x.name, x.scenario))
        elif isinstance(x, ir.Call):
            out.add(x.func)
        elif isinstance(x, ir.Solve):
            out.add(x.target)
        elif isinstance(x, ir.Optimize):
            out.add(x.over)
        if dataclasses.is_dataclass(x) and not isinstance(x, (type, Span, Source)):
            stack.extend(v for v in (getattr(x, f.name) for f in dataclasses.fields(x))
                         if not isinstance(v, (str, int, float, Fraction, Enum, Span, type(None))))
    return out


def _uses(names: set[str], dead: set[str]) -> Optional[str]:
    for n in names:
        parts = n.split(".")
        for k in range(len(parts), 0, -1):
            head = ".".join(parts[:k])
            if head in dead:
                return head
    return None


def recover(name: str, text: str, load: Callable[[str], object],
            import_of: Callable[[str, list], Optional[Span]] = lambda *_: None) -> Recovered:
    """Parse and check ``text`` (the plan ``name``) with every broken statement set aside.

    ``load`` checks a text and returns the plan (raising :class:`PlanError`); ``import_of`` gives
    the import statement that brings in a plan of another source name (its errors set it aside)."""
    out = Recovered()
    text, syntax = _syntax_pass(name, text, out)
    out.syntax = syntax
    if syntax is None:
        return out
    statements = list(syntax.statements)
    text = _set_aside(text, statements, [], out)  # what uses a name a broken statement defines
    for _ in range(MAX_PASSES):
        try:
            out.plan = load(text)
            break
        except PlanError as err:
            found = flatten(err)
        removed: list = []
        for e in found:
            span = e.span
            if span is not None and span.source.name != name:
                span = import_of(span.source.name, statements)
            s = None if span is None else next(
                (s for s in statements if s.span.start <= span.start < max(s.span.end, s.span.start + 1)), None)
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


def _set_aside(text: str, statements: list, removed: list, out: Recovered) -> str:
    """Blank the ``removed`` statements and every statement that uses a broken or unknown name
    (marked unknown); both leave ``statements``."""
    dead = set(out.broken) | set(out.unknown)
    grew = bool(dead)  # (nothing broken: nothing depends on it)
    uses = out.uses
    while grew:
        grew = False
        for s in statements:
            if s in removed:
                continue
            if id(s) not in uses:
                uses[id(s)] = used_names(s)
            hit = _uses(uses[id(s)], dead)
            if hit is not None:
                removed.append(s)
                for n in _defines(s):
                    if n not in out.broken:
                        out.unknown.setdefault(n, out.unknown.get(hit, hit))
                    dead.add(n)
                grew = True
    for s in removed:
        statements.remove(s)
        out.blanked.append((s.span.start, s.span.end))
        text = blank(text, s.span.start, s.span.end)
    return text


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

