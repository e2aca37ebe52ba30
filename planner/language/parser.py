"""Parsing: the grammar (LALR), a newline-aware post-lexer, and lark errors
mapped to :class:`ParseError` with a caret and a label. Lark stays here and
in :mod:`planner.language.lower`.

Two routes give the same IR: :func:`parse` (lark's parse tree, transformed by
:mod:`planner.language.lower`) and :func:`parse_transform` (the transformer's
methods run as the parser's reductions, no tree in between: lark cannot do
that itself where the methods take the meta). The second is the only place
lark's private names are imported (``Shift``, ``_vargs_meta``); without them
(another lark) it takes the first route. It earns its place in the editor:
measured on ``sheets/llm_cost.plan``, a parse costs 27-29 ms of CPU against
46-54 ms as a tree, and the language server's per-keystroke check of that
sheet 240-264 ms of CPU against 407-415 ms on the tree route (it lowers a text
2-4 times while it sets broken statements aside); it buys nothing on a warm
``planner eval`` (the compiled-plan cache reads no text) and 4% of a
``--no-cache`` one. The copy of lark's lexer that used to sit beside it
(saving 8 ms a parse, 1% of a ``--no-cache`` eval) is gone."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError
from lark.parse_tree_builder import PropagatePositions

try:  # lark's private names, for the one-pass parser only (parse_transform): without them, two passes
    from lark.parsers.lalr_analysis import Shift as _SHIFT
    from lark.visitors import _vargs_meta
except ImportError:  # pragma: no cover  (a lark that moved them: tests/test_one_pass.py runs this way too)
    _SHIFT = _vargs_meta = None

from .data import data_dir
from .errors import Label, LimitError, ParseError, PlanError
from .limits import LimitExceeded, TokenBudget, check_text
from .source import Source, Span
from . import speed

_OPEN = {"LPAR", "LSQB"}
_CLOSE = {"RPAR", "RSQB"}
_CONTINUES = {"_NL", "EQUAL", "ADD_OP", "MUL_OP", "POW_OP", "COMP_OP", "COMMA", "AND", "OR", "NOT", "MINUS", "PLUS",
              "__ANON_0", "LBRACE", "THEN"}


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
    return parser


# Words of the grammar that only follow a sweep's or an optimisation's values (`1..8 step 2`,
# `count 5`, `over gamma`, `show x`): the contextual lexer tells them from names, and `step`,
# `count` are good names for quantities, so they stay free.
CONTEXTUAL_WORDS = frozenset({"step", "times", "count", "over", "show", "to", "then", "at"})


@lru_cache(maxsize=None)
def keywords() -> frozenset[str]:
    """The grammar's reserved words (`and`, `true`, `where`, `scenario` ...): never names."""
    from lark.lexer import PatternStr

    # the one-pass parser's terminals (the tree route's are the same): lower builds only that one
    return frozenset(t.pattern.value for t in _inline_parser("start").terminals
                     if isinstance(t.pattern, PatternStr) and t.pattern.value.isidentifier()) - CONTEXTUAL_WORDS


# Human names for terminals in "expected ..." lists.
_TERMINAL_NAMES = {
    "NAME": "a name", "NUMBER": "a number", "QUANTITY": "a number with a unit",
    "STRING": 'a "string"', "_NL": "end of line", "$END": "end of file",
    "LPAR": "`(`", "RPAR": "`)`", "LSQB": "`[`", "RSQB": "`]`", "LBRACE": "`{`",
    "RBRACE": "`}`", "COMMA": "`,`", "EQUAL": "`=`", "COMP_OP": "a comparison",
    "ADD_OP": "`+` or `-`", "MUL_OP": "`*` or `/`", "POW_OP": "`^`", "MINUS": "`-`",
    "PLUS": "`+`", "COLON": "`:`", "DOT": "`.`", "AT": "`@`", "__ANON_0": "`->`", "PERCENT": "`%`",
    "TILDE": "`~`",
}


_TERMINAL_NAMES.update({
    "UNIT_OP": "`/` or `*` between units", "SIGNED_INT": "a whole number", "TAG_VALUE": "a tag's value",
    "COMMENT": "a comment",
})


@lru_cache(maxsize=None)
def _literals() -> dict[str, str]:
    """Each terminal written as a literal in the grammar (``CIRCUMFLEX`` is ``^``), by name."""
    from lark.lexer import PatternStr

    return {t.name: t.pattern.value for t in _parser("start").terminals if isinstance(t.pattern, PatternStr)}


def _describe(term: str) -> str:
    """A terminal of the grammar in words, as an "expected ..." list shows it (never its grammar name)."""
    if term in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[term]
    literal = _literals().get(term)
    if literal is not None:
        return f"`{literal}`"
    return "something else"  # a terminal without a name in words yet (tests/test_errors.py asks for one)


def _expected(exc: UnexpectedInput) -> str:
    expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or set()
    names = sorted({_describe(t) for t in expected if not t.startswith("__IGNORE")})
    if not names:
        return ""
    if len(names) > 6:
        names = names[:6] + ["..."]
    return "expected " + ", ".join(names)


def parse(source: Source, start: str = "start") -> Tree:
    return _run(_parser(start), source, start)


def _run(parser: Lark, source: Source, start: str):
    check_text(source)  # NUL bytes, escape codes, bidi overrides: refused before anything echoes a line
    text = source.text
    if start == "start" and not text.endswith("\n"):
        text += "\n"
    try:
        return parser.parse(text)
    except LimitExceeded as exc:
        end = min(max(exc.end, exc.start + 1), len(source.text))
        raise LimitError(exc.message, Span(source, min(exc.start, end - 1), end), hint=exc.hint or None) from None
    except UnexpectedInput as exc:
        err = _to_error(source, exc)
        unclosed = parser.options.postlex.open
        if unclosed and err.span is not None and source.text[err.span.start:err.span.start + 1] == "[" \
                and str(unclosed[-1]) == "(" and unclosed[-1].start_pos < err.span.start:
            # a list as a call's argument (`npv(r, [a, b])`): the `(` is not what is wrong
            called = re.search(r"([A-Za-z_]\w*)\s*$", source.text[:unclosed[-1].start_pos])
            f = called.group(1) if called else "f"
            err.hint = ("a list `[...]` is not an argument here (a list stands only as a series' values, "
                        f"`series price = [10 USD, 12 USD]`): write the values as arguments, `{f}(..., a, b, c)`, "
                        f"or over a range, `{f}(..., x(m) for m in 1 month..36 month)`"
                        + (f"; a series' periods as the cash flows: `{f}(..., net)`" if f in ("npv", "irr") else ""))
        elif unclosed and err.span is not None and source.text[err.span.start:err.span.start + 1] not in (")", "]"):
            tok = unclosed[-1]
            if tok.start_pos < err.span.start:
                err.labels.append(Label(Span(source, tok.start_pos, tok.end_pos), f"this `{tok}` is not closed"))
                err.hint = err.hint or f"close the `{tok}` before the end of the expression"
        raise err from None


# ---- parsing and transforming in one pass -------------------------------------------------

class _EmptyMeta:
    empty = True


_EMPTY = _EmptyMeta()  # the meta of a node without positions (nothing in it to change: one for all)


def _callback(call, state: list, direct=None):
    """One rule's reduction when the transformer runs inside the parser, as a function of (meta,
    children): the transformer's method itself for a rule lark filters nothing of (``direct``),
    else lark's own child filtering and one-child inlining, then the method (``call``), which
    reads the meta from ``state``."""
    if direct is not None:
        return direct

    def reduce(meta, children):
        state[0] = meta
        return call(children)

    return reduce


def _tables(parse_table, order: dict, shift):
    """lark's parse table with each action ready to use: ``(True, next state)`` for a shift,
    ``(False, size, name, rule number, hands its child up)`` for a reduction; the gotos; and,
    filled while parsing, where a run of child-handing reductions ends (:func:`_loop`). Lists
    indexed by state where lark's states are 0, 1, 2... (they are), else dicts."""
    table = {}
    for st, actions in parse_table.states.items():
        row = {}
        for ttype, (action, arg) in actions.items():
            row[ttype] = (True, arg) if action is shift else \
                (False, len(arg.expansion), arg.origin.name, order[arg], _single(arg))
        table[st] = row
    goto = {st: {k: v[1] for k, v in row.items() if v[0]} for st, row in table.items()}
    if sorted(table) == list(range(len(table))):
        table, goto = [table[i] for i in range(len(table))], [goto[i] for i in range(len(goto))]
    return table, goto, {}


def _loop(tables, callbacks: list, owner, source: Source, errors: list):
    """lark's LALR loop (``_Parser.parse_from_state`` and ``ParserState.feed_token``) for the
    one-pass parser, over :func:`_tables` (each action ready to use, instead of looked up through
    its rule on every step); ``callbacks`` by rule number, each given the meta and the children.

    Where each value on the stack lies is kept beside it, on a stack of its own: the token itself
    for a token, a :class:`Span` of ``source`` for a reduction (from the first and last child that
    has a place, as lark's ``propagate_positions`` takes them; a child handed up through ``(expr)``
    lies where its parentheses do, as lark's *container* positions say), None where there is none.
    That span is the meta a method is given (its ``start`` and ``end`` are lark's ``start_pos`` and
    ``end_pos``). The first :class:`PlanError` a method raises goes to ``errors``, and no method
    runs after it: the parse goes on, so that a syntax error anywhere is reported first. What the
    loop cannot decide (an unexpected token) it hands to lark's own ``feed_token``, which raises
    lark's errors."""
    table, goto, singles = tables

    def parse_from_state(state, last_token=None):
        state_stack, value_stack = state.state_stack, state.value_stack
        places = [None] * len(value_stack)  # where each value lies (see above)
        end_state = state.parse_conf.end_state
        token = last_token
        at_end = False
        try:
            tokens = state.lexer.lex(state)
            while True:
                for token in tokens:
                    ttype = token.type
                    while True:
                        act = table[state_stack[-1]].get(ttype)
                        if act is None:
                            state.feed_token(token)  # raises UnexpectedToken
                        if act[0]:  # shift (no terminal has a callback: the transformer visits no tokens)
                            state_stack.append(act[1])
                            value_stack.append(token)
                            places.append(token)
                            break
                        _, size, origin, index, single = act
                        if single and not at_end:  # `?rule: child` handing its child up: only the state changes
                            # A run of these (an atom handed up through the precedence levels) replaces
                            # only the top state, so where it ends depends on the state below, the top
                            # and the token alone: worked out once, then looked up.
                            key = (state_stack[-2], state_stack[-1], ttype)
                            end = singles.get(key)
                            if end is None:
                                below, end = state_stack[-2], state_stack[-1]
                                while True:
                                    step = table[end].get(ttype)
                                    if step is None or step[0] or not step[4]:
                                        break
                                    end = goto[below][step[2]]
                                singles[key] = end
                            state_stack[-1] = end
                            continue
                        if single:  # (at the end, one at a time: lark stops the moment it reaches its end state)
                            state_stack[-1] = goto[state_stack[-2]][origin]
                        else:
                            if size == 1:  # (the commonest: the stacks are changed in place below)
                                children = [value_stack[-1]]
                                meta = places[-1]
                                if type(meta) is Token:
                                    meta = Span(source, meta.start_pos, meta.end_pos)
                                # else: the child's span, or None (a span is a value: shared)
                            elif size:
                                children = value_stack[-size:]
                                kids = places[-size:]
                                del state_stack[-size:]
                                del value_stack[-size:]
                                del places[-size:]
                                first, last = kids[0], kids[-1]
                                if first is None or last is None:  # a child without a place: the next one's
                                    first = next((k for k in kids if k is not None), None)
                                    last = next((k for k in reversed(kids) if k is not None), None)
                                if first is None:
                                    meta = None
                                else:
                                    meta = Span(source, first.start_pos if type(first) is Token else first.start,
                                                last.end_pos if type(last) is Token else last.end)
                            else:
                                children = []
                                meta = None
                            if errors:  # a method failed: only the syntax is checked from here on
                                value = None
                            else:
                                try:
                                    value = callbacks[index](meta if meta is not None else _EMPTY, children)
                                except PlanError as err:
                                    errors.append(err)
                                    value = None
                            place = value if type(value) is Token else meta  # a token lies where it is
                            if size == 1:
                                state_stack[-1] = goto[state_stack[-2]][origin]
                                value_stack[-1] = value
                                places[-1] = place
                            else:
                                state_stack.append(goto[state_stack[-1]][origin])
                                value_stack.append(value)
                                places.append(place)
                        if at_end and state_stack[-1] == end_state:
                            return value_stack[-1]
                if at_end:  # (not reached: at the end every action is a reduction, up to the end state)
                    raise AssertionError("the parser did not reach its end state")
                at_end = True
                tokens = (Token.new_borrow_pos("$END", "", token) if token else Token("$END", "", 0, 1, 1),)
        except UnexpectedInput as e:
            try:
                from lark.parsers.lalr_interactive_parser import InteractiveParser

                e.interactive_parser = InteractiveParser(owner, state, state.lexer)
            except Exception:  # noqa: BLE001  (only for lark's error reporting tools, which we do not use)
                pass
            raise

    return parse_from_state


def _meta(state: list):
    return state[0] if state[0] is not None else _EMPTY


def _meta_method(transformer, name: str):
    """The transformer's ``v_args(meta=True)`` method for ``name`` as a plain function of (meta,
    children), or None for any other kind (no lambda in between: one call less per node)."""
    f = getattr(transformer, name, None)
    if f is not None and _vargs_meta is not None and getattr(f, "visit_wrapper", None) is _vargs_meta \
            and hasattr(f, "base_func"):
        return f.base_func.__get__(transformer)
    return None


def _method(transformer, name: str, state: list):
    f = getattr(transformer, name, None)
    if f is None:  # no method for this rule: a tree, as Transformer.__default__ makes
        return lambda children: Tree(name, children, _meta(state))
    base = _meta_method(transformer, name)
    if base is not None:  # v_args(meta=True): the function itself
        return lambda children: base(_meta(state), children)
    wrapper = getattr(f, "visit_wrapper", None)
    if wrapper is not None:
        return lambda children: wrapper(f, name, children, _meta(state))
    return f


def _single(rule) -> bool:
    """``?rule: child``: one kept child, handed up when it is alone (lark's ExpandSingleChild)."""
    if not rule.options.expand1 or rule.alias or len(rule.expansion) != 1:
        return False
    sym = rule.expansion[0]
    return not (sym.is_term and sym.filter_out) and not (not sym.is_term and sym.name.startswith("_"))


def _two_passes(source: Source, transformer, start: str):
    """lark's parse tree, then the transformer: the plain route. An error a method raises reaches the
    caller as itself, as on the one-pass route (lark wraps it in a VisitError)."""
    try:
        return transformer.transform(parse(source, start))
    except VisitError as exc:
        if isinstance(exc.orig_exc, PlanError):
            raise exc.orig_exc from None
        raise


@lru_cache(maxsize=None)
def _inline_parser(start: str) -> Lark:
    """A second parser per start rule, whose callbacks :func:`parse_transform` sets for each parse."""
    parser = Lark(
        (data_dir("grammar") / "plan.lark").read_text(encoding="utf-8"),
        parser="lalr", lexer="contextual", postlex=_NewlinePostLex(), propagate_positions=True,
        maybe_placeholders=False, start=start, cache=True)
    parser._planner_lock = threading.Lock()
    return parser


def parse_transform(source: Source, transformer, start: str = "start"):
    """``transformer.transform(parse(source, start))`` without the tree in between: its methods
    are the parser's callbacks, each reduction handing them the children and the meta it would
    have had. The same result, in about half the time (no parse tree to build and walk again).
    Exceptions the methods raise reach the caller as they are."""
    if not speed.on("one-pass"):  # the plain route (planner.language.speed)
        return _two_passes(source, transformer, start)
    parser = _inline_parser(start)
    callbacks = getattr(getattr(getattr(parser.parser, "parser", None), "parser", None), "callbacks", None)
    builders = getattr(getattr(parser, "_parse_tree_builder", None), "rule_builders", None)
    if not isinstance(callbacks, dict) or builders is None or _SHIFT is None:  # lark laid out otherwise: two passes
        return _two_passes(source, transformer, start)
    state: list = [None]  # the meta of the node being reduced, for the methods lark's wrappers call
    errors: list = []  # the first error a method raised
    table = {}
    for rule, chain in builders:
        name = rule.alias or rule.options.template_source or rule.origin.name
        call = _method(transformer, name, state)
        wrappers = [wrap for wrap in chain if wrap is not PropagatePositions]
        for wrap in wrappers:
            call = wrap(call)
        table[rule] = _callback(call, state, None if wrappers else _meta_method(transformer, name))
    inner = parser.parser.parser.parser
    if not hasattr(parser, "_planner_tables"):
        parser._planner_order = {rule: i for i, (rule, _) in enumerate(builders)}
        parser._planner_tables = _tables(inner.parse_table, parser._planner_order, _SHIFT)
    by_number = [table[rule] for rule in parser._planner_order]
    with parser._planner_lock:
        # this parser's own, not lark's class
        inner.parse_from_state = _loop(parser._planner_tables, by_number, inner, source, errors)
        try:
            result = _run(parser, source, start)
        finally:
            del inner.parse_from_state  # (lark's again; and the transformer is not kept)
    if errors:
        raise errors[0]
    return result


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
    except (UnexpectedInput, LimitExceeded):
        parse(source)  # the same error as a plain parse (a located LimitError), with its labels and hints
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
