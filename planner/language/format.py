"""``planner fmt``: one canonical layout for plan text, the same meaning.

Text to text over the parser's own tokens (:func:`planner.language.parser.tokens`),
so the formatter follows the grammar: a ``-`` is spaced as a binary operator
or a sign according to how the parser read it. Comments and white space lie
between tokens and are read from the gaps.

The layout:

- one space around binary operators, comparisons, ``=``, ``->`` and keywords;
  none around ``^``/``**``, ``..``, ``@`` and ``.``, after a sign, inside
  ``( )`` and ``[ ]``, before ``,`` and ``:``; ``{ a = 1 }`` inside braces;
  a unit is written without spaces (``-> TB/s``), a number and its unit with
  one (``3 TB/s``, ``5%``); axis picks as ``gpu=h100``;
- the line breaks as written: statements are never joined or split. A line
  continued inside brackets lines up after the bracket (or, when the bracket
  ends its line, is indented four more); other continuation lines are
  indented four; a closing bracket on its own line goes back to its opener;
- comments kept where they are; runs of blank lines become one blank line;
- consecutive one-line statements of one kind (definitions, unit
  declarations, scenarios, others) form an alignment block, ended by a blank
  line or a statement of another kind (comment lines do not end it): the
  ``=`` of definitions lines up, and so do the docs, tags, constraints and
  trailing comments after them (elastic tabstops: a column lines up over the
  consecutive lines that have something after it). A cell that would need
  more than ``MAX_PAD`` spaces of padding starts a new block for its column,
  so one long formula does not push a whole block to the right.

It never changes meaning: the tokens of the result are checked to be the
tokens of the input (the text of each, and the newlines that end statements),
and a difference is an internal error, never a silently different plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from . import ir
from .errors import PlanError
from .lower import lower
from .parser import Lexeme, _split_quantity, parse_with_tokens, tokens
from .source import Source

INDENT = 4
MAX_PAD = 24  # at most this many spaces of padding in one aligned column

_OPEN = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_CLOSE = {"RPAR", "RSQB", "RBRACE"}
_TIGHT = {"POW_OP", "CIRCUMFLEX", "AT", "DOT"}  # no space on either side
_KEYWORD_SPACED = {"WHERE", "IN", "SHOW", "STEP", "TIMES", "COUNT", "OVER", "AS", "WITHIN", "WITH", "FOR",
                   "IMPORT", "FROM", "OR", "AND", "NOT", "INTEGER", "BOOLEAN", "TRUE", "FALSE",
                   "THEN", "_AT_WORD"}


class FormatError(PlanError):
    """The formatter would have changed the plan's tokens (a bug in planner, never written)."""

    family = "format"


@dataclass
class _Item:
    """A token or a comment on a physical line."""

    type: str
    text: str
    start: int
    end: int
    stmt: int = -1  # statement index (tokens only)
    space: bool = True  # a space before it, when not first on its line


@dataclass
class _Line:
    items: list[_Item]
    blank_before: int  # blank lines before it in the input
    stmt: int  # statement index, or -1 for a comment-only line between statements


@dataclass
class _Statement:
    index: int
    tokens: list[_Item]
    kind: str  # "def" | "unit" | "scenario" | "other"
    node: Optional[ir.Statement]
    lines: list[_Line] = field(default_factory=list)


def format_text(text: str, name: str = "<plan>") -> str:
    """The canonical layout of a plan. Raises the plan's :class:`ParseError` when it does not parse."""
    source = Source(name, text)
    tree, lexemes = parse_with_tokens(source)  # a plan that does not parse is reported, not formatted
    plan = lower(source, tree)
    out = _Formatter(source, lexemes, plan).run()
    _verify(source, lexemes, out)
    return out


# ---- reading: tokens, comments and lines ------------------------------------

class _Formatter:
    def __init__(self, source: Source, lexemes: list[Lexeme], plan: ir.PlanIR) -> None:
        self.source = source
        self.text = source.text
        self.lexemes = lexemes
        self.nodes = {s.span.start: s for s in plan.statements}
        for s in plan.statements:  # axis members are scenarios too
            if isinstance(s, ir.Axis):
                for m in s.members:
                    self.nodes.setdefault(m.span.start, m)

    def run(self) -> str:
        items, statements = self._items()
        lines = self._lines(items)
        for line in lines:
            if line.stmt >= 0:
                statements[line.stmt].lines.append(line)
        for s in statements:
            self._spacing(s)
        return self._emit(lines, statements)

    def _items(self) -> tuple[list[_Item], list[_Statement]]:
        """Tokens (with their statement) and comments, in order."""
        items: list[_Item] = []
        statements: list[_Statement] = []
        current: list[_Item] = []
        depth = 0  # braces: a newline inside { } separates overrides, it does not end the statement
        pos = 0
        for lx in self.lexemes:
            if lx.type == "_NL":
                if depth == 0 and current:
                    statements.append(self._statement(len(statements), current))
                    current = []
                continue
            items.extend(self._comments(pos, lx.start))
            item = _Item(lx.type, lx.text, lx.start, lx.end, stmt=len(statements))
            if lx.type == "LBRACE":
                depth += 1
            elif lx.type == "RBRACE":
                depth = max(0, depth - 1)
            items.append(item)
            current.append(item)
            pos = lx.end
        if current:
            statements.append(self._statement(len(statements), current))
        items.extend(self._comments(pos, len(self.text)))
        return items, statements

    def _comments(self, start: int, end: int) -> list[_Item]:
        """Comments and line continuations (``\\`` at a line's end) in the gap between two tokens."""
        out = []
        gap = self.text[start:end]
        i = 0
        while i < len(gap):
            ch = gap[i]
            if ch == "#":
                j = gap.find("\n", i)
                j = len(gap) if j < 0 else j
                out.append(_Item("COMMENT", gap[i:j].rstrip(), start + i, start + j))
                i = j
            elif ch == "\\":
                out.append(_Item("BACKSLASH", "\\", start + i, start + i + 1))
                i += 1
            else:
                i += 1
        return out

    def _statement(self, index: int, toks: list[_Item]) -> _Statement:
        node = self.nodes.get(toks[0].start)
        first = toks[0].type
        if isinstance(node, (ir.Definition, ir.FunctionDef)):
            kind = "def"
        elif isinstance(node, ir.UnitDecl):
            kind = "unit"
        elif isinstance(node, ir.Scenario) and first == "SCENARIO":
            kind = "scenario"
        else:
            kind = "other"
        return _Statement(index, toks, kind, node)

    def _lines(self, items: list[_Item]) -> list[_Line]:
        lines: list[_Line] = []
        current: list[_Item] = []
        blank = 0
        prev_end = 0
        for item in items:
            gap = self.text[prev_end:item.start]
            if current and "\n" in gap:
                lines.append(_Line(current, blank, -1))
                current = []
            if not current:
                blank = max(0, gap.count("\n") - 1) if lines else 0
            current.append(item)
            prev_end = item.end
        if current:
            lines.append(_Line(current, blank, -1))
        # each line belongs to the statement of its first token; a comment-only line
        # belongs to a statement when the tokens around it do
        following = -2  # the statement of the next token, for each line, from the end
        next_stmt = [0] * len(lines)
        for i in range(len(lines) - 1, -1, -1):
            next_stmt[i] = following
            toks = [x for x in lines[i].items if x.type not in ("COMMENT", "BACKSLASH")]
            if toks:
                following = toks[0].stmt
        last_stmt = -1
        for i, line in enumerate(lines):
            toks = [x for x in line.items if x.type not in ("COMMENT", "BACKSLASH")]
            if toks:
                line.stmt = toks[0].stmt
                last_stmt = toks[-1].stmt
            else:
                line.stmt = last_stmt if last_stmt == next_stmt[i] and last_stmt >= 0 else -1
        return lines

    # ---- spacing -----------------------------------------------------------

    def _spacing(self, s: _Statement) -> None:
        """Whether each token of a statement has a space before it (when not first on its line)."""
        unit_spans = _unit_spans(s.node)
        picks = False  # inside a scenario list (`for a=x`, `in bf16`): `=` without spaces
        check = s.tokens[0].type == "CHECK"
        prev: Optional[_Item] = None
        for tok in s.tokens:
            in_unit = any(a <= tok.start and tok.end <= b for a, b in unit_spans)
            if tok.type == "FOR" or (tok.type == "IN" and check):
                picks = True
            elif tok.type in ("WITH", "WITHIN", "AS"):
                picks = False
            tok.space = _space(prev, tok, in_unit, picks)
            if tok.type == "QUANTITY":
                tok.text = _quantity_text(tok.text)
            elif tok.type == "TAG_VALUE":
                tok.text = " ".join(tok.text.split())
            prev = tok

    # ---- writing -------------------------------------------------------------

    def _emit(self, lines: list[_Line], statements: list[_Statement]) -> str:
        out: list[str] = []
        # pending rows of an alignment block: (index in out, cells, the statement when it spans lines)
        block: list[tuple[int, list[str], Optional[_Statement]]] = []
        kind = None

        def flush() -> None:
            nonlocal block, kind
            texts, pads = _layout([cells for _, cells, _ in block])
            for (at, _, s), text, pad in zip(block, texts, pads):
                if s is None:
                    out[at] = text
                else:  # a definition over several lines: its `=` lines up with the block's
                    items = s.lines[0].items
                    eq = next(i for i, x in enumerate(items) if x.type == "EQUAL" and _depth(items, i) == 0)
                    out[at] = "\n".join(_multiline(s, {eq: pad[0]}))
            block = []
            kind = None

        done: set[int] = set()
        for line in lines:
            if line.stmt >= 0 and line.stmt in done:
                continue  # a later line of a statement already written
            if line.blank_before and out:
                flush()
                out.append("")
            if line.stmt < 0:  # a comment line between statements
                out.append(" ".join(x.text for x in line.items))
                continue
            s = statements[line.stmt]
            done.add(s.index)
            if len(s.lines) == 1 and not any(x.type == "BACKSLASH" for x in line.items):
                cells = _cells(s, line.items)
                if cells is None or s.kind != kind:
                    flush()
                if cells is None:
                    out.append(_join(line.items))
                else:
                    kind = s.kind
                    block.append((len(out), cells, None))
                    out.append("")
                continue
            head = _multiline_head(s)
            if head is not None:
                if s.kind != kind:
                    flush()
                kind = s.kind
                block.append((len(out), [head, "="], s))
                out.append("")
                continue
            flush()
            out.extend(_multiline(s))
        flush()
        text = "\n".join(out).split("\n")
        while text and text[-1] == "":
            text.pop()
        return "\n".join(line.rstrip() for line in text) + "\n" if text else ""


def _unit_spans(node) -> list[tuple[int, int]]:
    """Display units and unit declarations: written without spaces."""
    out = []
    if isinstance(node, (ir.Definition, ir.FunctionDef)) and node.display is not None:
        out.append((node.display.span.start, node.display.span.end))
    return out


def _space(prev: Optional[_Item], tok: _Item, in_unit: bool, picks: bool) -> bool:
    if prev is None:
        return False
    a, b = prev.type, tok.type
    if in_unit and a != "__ANON_0":
        return False
    if b in ("COMMA", "COLON", "RPAR", "RSQB"):
        return False
    if b == "RBRACE":
        return a != "LBRACE"
    if a in ("LPAR", "LSQB"):
        return False
    if a == "LBRACE":
        return True
    if a in _TIGHT or b in _TIGHT or a == "__ANON_1" or b == "__ANON_1":
        return False
    if a in ("MINUS", "PLUS"):  # a sign
        return False
    if b == "LPAR" and (a == "NAME" or prev.text == "correlate"):  # a call, a function's parameters, a correlate
        return False
    if b == "EQUAL" or a == "EQUAL":
        return not picks
    return True


def _quantity_text(text: str) -> str:
    number, _, unit = _split_quantity(text)
    return f"{number}{unit}" if unit.startswith("%") else f"{number} {unit}"


def _join(items: list[_Item], pads: Optional[dict[int, int]] = None) -> str:
    """One line's tokens with their spacing (``pads``: extra spaces before the item at an index,
    for alignment); a trailing comment two spaces after."""
    return "".join(_gap(items, i, pads) + x.text for i, x in enumerate(items))


def _gap(items: list[_Item], i: int, pads: Optional[dict[int, int]] = None) -> str:
    x = items[i]
    if x.type == "COMMENT":
        return "  " if i else ""
    if x.type == "BACKSLASH":
        return " "
    return " " * ((pads or {}).get(i, 0) + (1 if x.space and i else 0))


# ---- one-line statements: cells to align ---------------------------------------

def _cells(s: _Statement, items: list[_Item]) -> Optional[list[str]]:
    """The alignment cells of a one-line statement, or None when it is laid out as is.

    def:      [head, "= formula -> unit", docs, tags, constraints, comment]
    unit:     [head, "= definition", docs, comment]
    scenario: [head, docs, tags, "{ ... }", comment]
    other:    [statement, comment]
    Empty cells stand for missing parts before the last one present."""
    comment = items[-1].text if items[-1].type == "COMMENT" else None
    toks = [x for x in items if x.type != "COMMENT"]
    if any(x.type == "COMMENT" for x in items[:-1]):
        return None
    if s.kind == "other":
        cells = [_join(toks)]
        return cells + [comment] if comment else cells
    node = s.node
    if s.kind == "def" or s.kind == "unit":
        eq = next((i for i, x in enumerate(toks) if x.type == "EQUAL" and _depth(toks, i) == 0), None)
        if s.kind == "def":
            assert isinstance(node, (ir.Definition, ir.FunctionDef)) and eq is not None
            body = node.expr if isinstance(node, ir.Definition) else node.body
            end = node.display.span.end if node.display is not None else body.span.end
        else:
            assert isinstance(node, ir.UnitDecl)
            end = node.definition.span.end if node.definition is not None else toks[1].end
        rest_at = next((i for i, x in enumerate(toks) if x.start >= end), len(toks))
        if eq is None:  # `unit USD "doc"`
            head, formula = toks[:rest_at], ""
        else:
            head, formula = toks[:eq], _join(toks[eq:rest_at])
        cells = [_join(head), formula]
        slots = ["doc", "tags", "where"] if s.kind == "def" else ["doc"]
    else:  # a one-line scenario: scenario NAME docs tags { ... }
        cells = [_join(toks[:2])]
        rest_at = 2
        slots = ["doc", "tags", "block"]
    groups = _annotation_groups(toks[rest_at:])
    if groups is None or any(slot not in slots for slot, _ in groups):
        return None
    ranks = [slots.index(slot) for slot, _ in groups]
    if ranks != sorted(ranks):  # written in another order (tags before the doc): laid out as is
        return None
    filled: dict[str, str] = {}
    for slot, group in groups:
        text = _join(group)
        filled[slot] = f"{filled[slot]} {text}" if slot in filled else text
    last = max(ranks, default=-1)
    cells += [filled.get(o, "") for o in slots[:last + 1]]
    while len(cells) > 1 and cells[-1] == "":  # `unit USD`: no empty cells at the end
        cells.pop()
    return cells + [comment] if comment else cells


def _annotation_groups(toks: list[_Item]) -> Optional[list[tuple[str, list[_Item]]]]:
    """Docs, tag groups, constraints and a scenario's block, in the order written."""
    out: list[tuple[str, list[_Item]]] = []
    i = 0
    while i < len(toks):
        x = toks[i]
        if x.type == "STRING":
            out.append(("doc", [x]))
            i += 1
        elif x.type in ("LSQB", "LBRACE"):
            j = _closing(toks, i)
            out.append(("tags" if x.type == "LSQB" else "block", toks[i:j + 1]))
            i = j + 1
        elif x.type == "WHERE":
            out.append(("where", toks[i:]))
            break
        else:
            return None
    return out


def _closing(toks: list[_Item], i: int) -> int:
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].type in _OPEN:
            depth += 1
        elif toks[j].type in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def _depth(toks: list[_Item], i: int) -> int:
    depth = 0
    for x in toks[:i]:
        if x.type in _OPEN:
            depth += 1
        elif x.type in _CLOSE:
            depth -= 1
    return depth


def _layout(rows: list[list[str]]) -> tuple[list[str], list[list[int]]]:
    """Elastic tabstops: each column lines up over consecutive rows that have a cell after it.
    The aligned rows, and each row's padding after each of its cells."""
    n = len(rows)
    widths = [[len(c) for c in r] for r in rows]
    pads: list[list[int]] = [[0] * len(r) for r in rows]
    boundaries: set[int] = set()
    columns = max((len(r) for r in rows), default=0)
    for c in range(columns - 1):
        start = None
        new_boundaries: set[int] = set()
        i = 0
        while i <= n:
            inside = i < n and len(rows[i]) > c + 1
            if inside and start is not None and i in boundaries:
                _pad_block(rows, widths, pads, c, start, i, new_boundaries)
                start = i
            elif inside and start is None:
                start = i
            elif not inside and start is not None:
                _pad_block(rows, widths, pads, c, start, i, new_boundaries)
                start = None
            i += 1
        boundaries |= new_boundaries
    out = []
    for r, p in zip(rows, pads):
        text = ""
        for c, cell in enumerate(r):
            if c == 0:
                text = cell
                continue
            sep = "  " if c == len(r) - 1 and cell.startswith("#") else " "
            if r[c - 1] == "" and p[c - 1] == 0 and c - 1 > 0:
                sep = ""  # an empty column no row fills
            text += " " * p[c - 1] + sep + cell
        out.append(text)
    return out, pads


def _pad_block(rows, widths, pads, c: int, start: int, end: int, boundaries: set[int]) -> None:
    """Pad column ``c`` over rows start..end-1, split where padding would pass MAX_PAD."""
    group: list[int] = []
    low = high = 0

    def close() -> None:
        for j in group:
            pads[j][c] = high - widths[j][c]
        if group and group[0] != start:
            boundaries.add(group[0])

    for i in range(start, end):
        w = widths[i][c]
        if group and max(high, w) - min(low, w) <= MAX_PAD:
            group.append(i)
            low, high = min(low, w), max(high, w)
            continue
        close()
        group, low, high = [i], w, w
    close()


# ---- multi-line statements ---------------------------------------------------------

def _multiline_head(s: _Statement) -> Optional[str]:
    """The name (and parameters) of a definition that spans lines, when its first line has the top-level `=`."""
    if s.kind != "def":
        return None
    items = s.lines[0].items
    eq = next((i for i, x in enumerate(items) if x.type == "EQUAL" and _depth(items, i) == 0), None)
    if eq is None or all(x.type in ("COMMENT", "BACKSLASH") for x in items[eq + 1:]):
        return None  # `f(x) =` with the body below: no `=` column to line up
    return _join(items[:eq])


def _members(s: _Statement) -> dict[int, int]:
    """Axis members that start a line: line index -> padding after the member's name, so that
    the `{` of consecutive members lines up."""
    if not isinstance(s.node, ir.Axis):
        return {}
    starts = {m.span.start: m for m in s.node.members}
    rows: list[list[int]] = [[]]
    names: dict[int, str] = {}
    for n, line in enumerate(s.lines):
        first = line.items[0]
        if first.start in starts:
            names[n] = first.text
            rows[-1].append(n)
        elif line.blank_before or first.type == "COMMENT" or first.type == "RBRACE":
            rows.append([])
        if line.blank_before and first.start in starts:
            rows[-1:] = [rows[-1][:-1], [n]]
    out: dict[int, int] = {}
    for group in rows:
        if group:
            _, pads = _layout([[names[n], "{"] for n in group])
            out.update({n: p[0] for n, p in zip(group, pads)})
    return out


def _multiline(s: _Statement, first_pads: Optional[dict[int, int]] = None) -> list[str]:
    """A statement over several lines: each line's spacing, continuation lines indented."""
    out: list[str] = []
    stack: list[tuple[str, int, int]] = []  # open brackets: (closing type, column inside, indent of its line)
    base = 0
    members = _members(s)
    for n, line in enumerate(s.lines):
        if n and line.blank_before:
            out.append("")
        pads = first_pads if n == 0 else ({1: members[n]} if n in members else None)
        first = next((x for x in line.items if x.type not in ("COMMENT", "BACKSLASH")), None)
        if n == 0:
            indent = base
        elif not stack:
            indent = base + INDENT
        elif first is not None and first.type == stack[-1][0]:
            indent = stack[-1][2]
        else:
            indent = stack[-1][1]
        out.append(" " * indent + _join(line.items, pads))
        # the brackets this line leaves open, for the lines that follow
        col = indent
        for i, x in enumerate(line.items):
            col += len(_gap(line.items, i, pads))
            if x.type in ("COMMENT", "BACKSLASH"):
                continue
            if x.type in _OPEN:
                later = [y for y in line.items[i + 1:] if y.type not in ("COMMENT", "BACKSLASH")]
                if later:
                    inside = col + len(x.text) + (1 if later[0].space else 0)
                else:
                    inside = indent + INDENT
                stack.append((_OPEN[x.type], inside, indent))
            elif x.type in _CLOSE and stack:
                stack.pop()
            col += len(x.text)
    return out


# ---- the safety net ---------------------------------------------------------------

def _signature(lexemes: list[Lexeme]) -> list[tuple[str, str]]:
    out = []
    for lx in lexemes:
        if lx.type == "QUANTITY":
            out.append((lx.type, _quantity_text(lx.text)))
        elif lx.type == "TAG_VALUE":
            out.append((lx.type, " ".join(lx.text.split())))
        elif lx.type == "_NL":
            out.append((lx.type, ""))
        else:
            out.append((lx.type, lx.text))
    return out


def _comments_of(text: str, lexemes: list[Lexeme]) -> list[str]:
    out, pos = [], 0
    for lx in lexemes + [Lexeme("$END", "", len(text), len(text))]:
        gap = text[pos:lx.start]
        for part in gap.split("\n"):
            if "#" in part:
                out.append(part[part.index("#"):].rstrip())
        pos = max(pos, lx.end)
    return out


def _verify(source: Source, lexemes: list[Lexeme], result: str) -> None:
    after = tokens(Source(source.name, result))
    if _signature(lexemes) != _signature(after) or \
            _comments_of(source.text, lexemes) != _comments_of(result, after):
        raise FormatError(f"formatting {source.name} would change its tokens; it was left unchanged",
                          hint="this is a bug in planner's formatter: please report it with the file")
