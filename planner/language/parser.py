"""Parsing: the grammar (LALR), a newline-aware post-lexer, and lark errors
mapped to :class:`ParseError` with a caret and a label. Lark stays here and
in :mod:`planner.language.lower`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.parse_tree_builder import PropagatePositions

from .data import data_dir
from .errors import Label, ParseError
from .source import Source, Span

_OPEN = {"LPAR", "LSQB"}
_CLOSE = {"RPAR", "RSQB"}
_CONTINUES = {"_NL", "EQUAL", "ADD_OP", "MUL_OP", "POW_OP", "COMP_OP", "COMMA", "AND", "OR", "NOT", "MINUS", "PLUS",
              "__ANON_0", "LBRACE"}


class _NewlinePostLex:
    """Drops newlines inside ( ) and [ ], and collapses leading newlines.

    Braces ``{ }`` are not counted: a newline separates overrides there.
    """

    always_accept = ("_NL",)

    def __init__(self) -> None:
        self.open: list[Token] = []  # unclosed brackets, for error messages

    def process(self, stream):
        depth = 0
        previous = None
        self.open = []
        for tok in stream:
            if tok.type in _OPEN:
                depth += 1
                self.open.append(tok)
            elif tok.type in _CLOSE:
                depth = max(0, depth - 1)
                if self.open:
                    self.open.pop()
            if tok.type == "_NL":
                # Inside ( ) and [ ], after an operator or `=`, and at the
                # start of the file a newline does not end a statement.
                if depth > 0 or previous is None or previous in _CONTINUES:
                    continue
            previous = tok.type
            yield tok


class _Positions(PropagatePositions):
    """lark's position propagation, without its work where there is none to do.

    Most reductions of an expression are the precedence chain's one-child rules
    (``?sum: product``, ``?product: unary``...) handing their child up as it is:
    its positions are already right, and lark would only copy them onto
    themselves (as ``container_*``, equal to its own, which readers take as
    the default anyway). Skipping that gives the same tree, positions and
    all. Other reductions run lark's own rule (the body below is lark 1.3's
    ``PropagatePositions.__call__``)."""

    def __call__(self, children):
        res = self.node_builder(children)
        if len(children) == 1 and children[0] is res:
            return res
        if isinstance(res, Tree):
            res_meta = res.meta
            first_meta = self._pp_get_meta(children)
            if first_meta is not None:
                if not hasattr(res_meta, "line"):
                    res_meta.line = getattr(first_meta, "container_line", first_meta.line)
                    res_meta.column = getattr(first_meta, "container_column", first_meta.column)
                    res_meta.start_pos = getattr(first_meta, "container_start_pos", first_meta.start_pos)
                    res_meta.empty = False
                res_meta.container_line = getattr(first_meta, "container_line", first_meta.line)
                res_meta.container_column = getattr(first_meta, "container_column", first_meta.column)
                res_meta.container_start_pos = getattr(first_meta, "container_start_pos", first_meta.start_pos)
            last_meta = self._pp_get_meta(reversed(children))
            if last_meta is not None:
                if not hasattr(res_meta, "end_line"):
                    res_meta.end_line = getattr(last_meta, "container_end_line", last_meta.end_line)
                    res_meta.end_column = getattr(last_meta, "container_end_column", last_meta.end_column)
                    res_meta.end_pos = getattr(last_meta, "container_end_pos", last_meta.end_pos)
                    res_meta.empty = False
                res_meta.container_end_line = getattr(last_meta, "container_end_line", last_meta.end_line)
                res_meta.container_end_column = getattr(last_meta, "container_end_column", last_meta.end_column)
                res_meta.container_end_pos = getattr(last_meta, "container_end_pos", last_meta.end_pos)
        return res


def _fast_positions(parser: Lark) -> None:
    """Swap lark's position wrapper for :class:`_Positions` in a parser's callbacks (when the
    parser is laid out as lark 1.x lays it out; otherwise lark's own stays)."""
    callbacks = getattr(getattr(getattr(parser.parser, "parser", None), "parser", None), "callbacks", None)
    if not isinstance(callbacks, dict):
        return
    for rule, callback in list(callbacks.items()):
        if type(callback) is PropagatePositions and callback.node_filter is None:
            callbacks[rule] = _Positions(callback.node_builder)


@lru_cache(maxsize=None)
def _parser(start: str) -> Lark:
    text = (data_dir("grammar") / "plan.lark").read_text(encoding="utf-8")
    parser = Lark(
        text,
        parser="lalr",
        lexer="contextual",
        postlex=_NewlinePostLex(),
        propagate_positions=True,
        maybe_placeholders=False,
        start=start,
        cache=True,  # lark keeps the LALR tables in the temp folder: ~3x faster start
    )
    _fast_positions(parser)
    return parser


# Human names for terminals in "expected ..." lists.
_TERMINAL_NAMES = {
    "NAME": "a name", "NUMBER": "a number", "QUANTITY": "a number with a unit",
    "STRING": 'a "string"', "_NL": "end of line", "$END": "end of file",
    "LPAR": "`(`", "RPAR": "`)`", "LSQB": "`[`", "RSQB": "`]`", "LBRACE": "`{`",
    "RBRACE": "`}`", "COMMA": "`,`", "EQUAL": "`=`", "COMP_OP": "a comparison",
    "ADD_OP": "`+` or `-`", "MUL_OP": "`*` or `/`", "POW_OP": "`^`", "MINUS": "`-`",
    "PLUS": "`+`", "COLON": "`:`", "DOT": "`.`", "AT": "`@`", "__ANON_0": "`->`", "PERCENT": "`%`",
}


def _describe(term: str) -> str:
    if term in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[term]
    if term.isupper() and term.isalpha():
        return f"`{term.lower()}`"
    return term


def _expected(exc: UnexpectedInput) -> str:
    expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or set()
    names = sorted({_describe(t) for t in expected if not t.startswith("__ANON") or t in _TERMINAL_NAMES})
    if not names:
        return ""
    if len(names) > 6:
        names = names[:6] + ["..."]
    return "expected " + ", ".join(names)


def parse(source: Source, start: str = "start") -> Tree:
    text = source.text
    if start == "start" and not text.endswith("\n"):
        text += "\n"
    try:
        return _parser(start).parse(text)
    except UnexpectedInput as exc:
        err = _to_error(source, exc)
        unclosed = _parser(start).options.postlex.open
        if unclosed and err.span is not None and source.text[err.span.start:err.span.start + 1] not in (")", "]"):
            tok = unclosed[-1]
            if tok.start_pos < err.span.start:
                err.labels.append(Label(Span(source, tok.start_pos, tok.end_pos), f"this `{tok}` is not closed"))
                err.hint = err.hint or f"close the `{tok}` before the end of the expression"
        raise err from None


@dataclass(frozen=True)
class Lexeme:
    """A token as the parser reads it: its terminal (``NAME``, ``QUANTITY``,
    ``MINUS`` for a unary minus, ``ADD_OP`` for a binary one, ``_NL`` for a
    newline that ends a statement), its text and offsets in the source."""

    type: str
    text: str
    start: int
    end: int


def tokens(source: Source) -> list[Lexeme]:
    """Every token of a plan in order, typed by the parser's state (the
    contextual lexer), with the post-lexer's statement-ending newlines.
    White space and comments are not tokens: they lie between them. Raises
    :class:`ParseError` like :func:`parse` when the text does not parse. For
    the formatter and the editor support, which need the tokens themselves."""
    return parse_with_tokens(source)[1]


def parse_with_tokens(source: Source) -> tuple[Tree, list[Lexeme]]:
    """:func:`parse` and :func:`tokens` in one pass (the tree goes to :func:`planner.language.lower.lower`)."""
    text = source.text if source.text.endswith("\n") else source.text + "\n"
    try:
        interactive = _parser("start").parse_interactive(text)
        out = [Lexeme(t.type, str(t), t.start_pos, t.end_pos) for t in interactive.iter_parse()]
        tree = interactive.feed_eof()
    except UnexpectedInput:
        parse(source)  # the same error as a plain parse, with its labels and hints
        raise
    return tree, out


def keywords() -> list[str]:
    """The language's reserved words, read from the grammar (``where``, ``scenario``, ``true`` ...)."""
    return sorted(str(t.pattern.value) for t in _parser("start").terminals
                  if type(t.pattern).__name__ == "PatternStr" and str(t.pattern.value).isalpha())


def _offset(source: Source, exc: UnexpectedInput) -> int:
    pos = getattr(exc, "pos_in_stream", None)
    if pos is None and isinstance(exc, UnexpectedToken) and exc.token is not None:
        pos = getattr(exc.token, "start_pos", None)
    if pos is None:
        pos = len(source.text)
    return min(pos, len(source.text))


def _to_error(source: Source, exc: UnexpectedInput) -> ParseError:
    offset = _offset(source, exc)
    span = Span(source, offset, offset + 1)
    hint = None
    if isinstance(exc, UnexpectedCharacters):
        ch = source.text[offset:offset + 1]
        message = f"unexpected character {ch!r}"
        if ch == "'":
            hint = 'strings use double quotes: "..."'
        elif ch == "$" or ch == "€":
            hint = "declare a currency as a unit (`unit USD`) and write `3 USD`"
        return ParseError(message, span, label=_expected(exc) or "not valid here", hint=hint)
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        expected = set(getattr(exc, "expected", None) or ())
        hint = "the expression is incomplete" if expected & {"NAME", "NUMBER", "LPAR"} else None
        return ParseError("unexpected end of file", Span(source, max(0, len(source.text) - 1), len(source.text)),
                          label=_expected(exc), hint=hint)
    assert isinstance(exc, UnexpectedToken)
    tok: Token = exc.token
    end = getattr(tok, "end_pos", None) or offset + max(1, len(str(tok)))
    span = Span(source, offset, max(offset + 1, min(end, len(source.text))))
    expected = set(exc.expected or ())
    value = str(tok)
    if tok.type == "_NL":
        message = "unexpected end of line"
        span = Span(source, offset, offset + 1) if offset < len(source.text) else span
        if "RPAR" in expected:
            hint = "a `(` is not closed"
        elif expected & {"NAME", "NUMBER", "QUANTITY", "LPAR"}:
            hint = "the expression is incomplete"
    else:
        message = f"unexpected {_token_text(tok)}"
        if value.startswith("'"):
            hint = 'strings use double quotes: "..."'
        elif tok.type == "QUANTITY":
            number, _, unit = _split_quantity(value)
            hint = f"`{unit}` after a number is read as a unit; write `{number} * {unit}` to multiply"
        elif tok.type == "EQUAL" and "COMP_OP" not in expected:
            hint = "compare with `==`; `=` defines a quantity at the start of a line"
        elif tok.type == "NAME" and expected & {"_NL"}:
            hint = "two names next to each other: an operator such as `*` may be missing"
        elif tok.type == "RSQB" and source.text[:offset].rstrip().endswith("["):
            hint = "a list needs at least one value: `[1, 2, 4]`"
        elif tok.type == "RPAR":
            hint = "a `)` without a matching `(`, or an argument is missing"
        elif value == "/" and _combination(source.text, offset):
            combo = _combination(source.text, offset)
            hint = f'a combination of axes is quoted: `"{combo}"`'
        elif tok.type == "COMMA" and _digit_group(source.text, offset):
            number = _grouped_number(source.text, offset)
            hint = f"digits are grouped with `_`, not `,`: write `{number.replace(',', '_')}`"
    return ParseError(message, span, label=_expected(exc), hint=hint)


def _combination(text: str, offset: int) -> str | None:
    """``in llama3_8b/h100``: the combination of axes being written, when a `/` follows a scenario name."""
    line_start = text.rfind("\n", 0, offset) + 1
    before = text[line_start:offset]
    m = re.search(r"(?:^|\s)(?:in|for)\s+(?:(?:\w+\s*=\s*)?[\w\"/]+\s*,\s*)*([\w/]+)$", before)
    if m is None:
        return None
    after = re.match(r"[\w/]*", text[offset:]).group(0)
    return m.group(1) + after


def _digit_group(text: str, offset: int) -> bool:
    """A `,` between a digit and three more digits: `30,000` meant as thirty thousand."""
    return offset > 0 and text[offset - 1].isdigit() and bool(re.match(r",\d{3}(?!\d)", text[offset:]))


def _grouped_number(text: str, offset: int) -> str:
    start = offset
    while start > 0 and (text[start - 1].isdigit() or text[start - 1] in "_."):
        start -= 1
    end = re.match(r"(,\d{3})+(\.\d+)?", text[offset:]).end() + offset
    return text[start:end]


def _token_text(tok: Token) -> str:
    if any(not ch.isprintable() for ch in str(tok)):
        return f"character {str(tok)[:20]!r}"  # a NUL or another control character, shown escaped
    return _token_name(tok)


def _token_name(tok: Token) -> str:
    if tok.type == "NAME":
        return f"name `{tok}`"
    if tok.type in ("NUMBER", "QUANTITY"):
        return f"number `{tok}`"
    if tok.type == "STRING":
        return f"string {tok}"
    return f"`{tok}`"


def _split_quantity(text: str) -> tuple[str, str, str]:
    """Split a QUANTITY token into (number, spacing, unit)."""
    i = 0
    while i < len(text) and (text[i].isdigit() or text[i] in "._"):
        i += 1
    if i < len(text) and text[i] in "eE" and i + 1 < len(text) and (text[i + 1].isdigit() or text[i + 1] in "+-"):
        j = i + 1
        if text[j] in "+-":
            j += 1
        while j < len(text) and text[j].isdigit():
            j += 1
        i = j
    number = text[:i]
    rest = text[i:]
    unit = rest.lstrip(" \t")
    return number, rest[: len(rest) - len(unit)], unit
