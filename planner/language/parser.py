"""Parsing: the grammar (LALR), a newline-aware post-lexer, and lark errors
mapped to :class:`ParseError` with a caret and a label. Lark stays here and
in :mod:`planner.language.lower`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .data import data_dir
from .errors import Label, LimitError, ParseError
from .limits import LimitExceeded, TokenBudget, check_text
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
        budget = TokenBudget()  # size and nesting limits, counted as the tokens stream by
        for tok in stream:
            budget.see(tok)
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
                budget.end_statement()
            previous = tok.type
            yield tok


@lru_cache(maxsize=None)
def _parser(start: str) -> Lark:
    text = (data_dir("grammar") / "plan.lark").read_text(encoding="utf-8")
    return Lark(
        text,
        parser="lalr",
        lexer="contextual",
        postlex=_NewlinePostLex(),
        propagate_positions=True,
        maybe_placeholders=False,
        start=start,
        cache=True,  # lark keeps the LALR tables in the temp folder: ~3x faster start
    )


# Words of the grammar that only follow a sweep's or an optimisation's values (`1..8 step 2`,
# `count 5`, `over gamma`, `show x`): the contextual lexer tells them from names, and `step`,
# `count` are good names for quantities, so they stay free.
CONTEXTUAL_WORDS = frozenset({"step", "times", "count", "over", "show"})


@lru_cache(maxsize=None)
def keywords() -> frozenset[str]:
    """The grammar's reserved words (`and`, `true`, `where`, `scenario` ...): never names."""
    from lark.lexer import PatternStr

    return frozenset(t.pattern.value for t in _parser("start").terminals
                     if isinstance(t.pattern, PatternStr) and t.pattern.value.isidentifier()) - CONTEXTUAL_WORDS


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
    check_text(source)  # NUL bytes, escape codes, bidi overrides: refused before anything echoes a line
    text = source.text
    if start == "start" and not text.endswith("\n"):
        text += "\n"
    try:
        return _parser(start).parse(text)
    except LimitExceeded as exc:
        end = min(max(exc.end, exc.start + 1), len(source.text))
        raise LimitError(exc.message, Span(source, min(exc.start, end - 1), end), hint=exc.hint or None) from None
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


def grammar_words() -> list[str]:
    """Every word of the grammar (``where``, ``scenario``, ``true`` ... and the contextual ``step``,
    ``count`` ...), for highlighting and completion; :func:`keywords` are the reserved ones."""
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
    if source.text[offset:offset + 1] == '"' and _unterminated(source, offset):
        line_end = source.text.find("\n", offset)
        line_end = len(source.text) if line_end < 0 else line_end
        return ParseError("unterminated string: this `\"` is not closed on its line", Span(source, offset, line_end),
                          label="the string starts here", hint='close it with `"` before the end of the line '
                          '(write `\\"` for a quote inside it)')
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
        elif tok.type == "EQUAL" and _reserved_before(source, offset):
            word, start = _reserved_before(source, offset)
            return ParseError(f"`{word}` is a reserved word and cannot name a quantity",
                              Span(source, start, start + len(word)), label="reserved",
                              hint=f"pick another name, such as `{word}_` or `my_{word}`")
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


def _unterminated(source: Source, offset: int) -> bool:
    """Whether the `"` at ``offset`` opens a string that does not close on its line."""
    i = offset + 1
    while i < len(source.text) and source.text[i] != "\n":
        if source.text[i] == "\\":
            i += 2
            continue
        if source.text[i] == '"':
            return False
        i += 1
    return True


def _reserved_before(source: Source, offset: int):
    """(word, offset) when a reserved word starts the line and an `=` follows it: `where = 3`."""
    import re

    line_start = source.text.rfind("\n", 0, offset) + 1
    m = re.fullmatch(r"[ \t]*(\w+)[ \t]*", source.text[line_start:offset])
    if m and m.group(1) in keywords():
        return m.group(1), line_start + m.start(1)
    return None


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
