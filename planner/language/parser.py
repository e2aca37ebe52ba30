"""Parsing: the grammar (LALR), a newline-aware post-lexer, and lark errors
mapped to :class:`ParseError` with a caret and a label. Lark stays here and
in :mod:`planner.language.lower`."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.parse_tree_builder import PropagatePositions
from lark.parsers.lalr_analysis import Shift as _SHIFT
from lark.visitors import _vargs_meta

from .data import data_dir
from .errors import Label, LimitError, ParseError, PlanError
from .limits import BREAKS, MAX_STATEMENT_TOKENS, MAX_TOKENS, NESTING, LimitExceeded, TokenBudget, check_text
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


# Words of the grammar that only follow a sweep's or an optimisation's values (`1..8 step 2`,
# `count 5`, `over gamma`, `show x`): the contextual lexer tells them from names, and `step`,
# `count` are good names for quantities, so they stay free.
CONTEXTUAL_WORDS = frozenset({"step", "times", "count", "over", "show", "to"})


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
        if unclosed and err.span is not None and source.text[err.span.start:err.span.start + 1] not in (")", "]"):
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
    if f is not None and getattr(f, "visit_wrapper", None) is _vargs_meta and hasattr(f, "base_func"):
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


OWN_PATTERN_AFTER = 64  # tokens a state reads with every terminal's pattern before its own is compiled


class _FusedLexer:
    """lark's contextual lexer and :class:`_NewlinePostLex` as one loop, for the one-pass parser.

    The same tokens: each is the token lark's lexer for the parser's current state would match
    (and lark's keyword callback would type), white space and comments skipped, and the newlines
    the post-lexer drops dropped; but without a generator and three method calls per token (or
    per run of white space). A token has its offsets (``start_pos``, ``end_pos``) but no line or
    column: nothing reads them (a span works them out from its source). What does not match is
    handed to lark's own lexer, which raises lark's error.

    One pattern of every terminal is tried first: lark orders a state's terminals as it orders
    all of them, so where all of them match a terminal the state accepts, the state's own
    pattern matches the same (its earlier terminals are earlier ones of all, which did not
    match); only then (a keyword where the state takes a name, or a state without names) is the
    state's own pattern compiled and used. Compiling a pattern per state, as lark does, was most
    of a small plan's parse; but a state's own pattern, with only its terminals, matches faster,
    so a state met :data:`OWN_PATTERN_AFTER` times (a big plan's) takes its own from then on."""

    def __init__(self, contextual, postlex: _NewlinePostLex) -> None:
        self.contextual = contextual
        self.postlex = postlex
        self.info: dict = {}  # lark's lexer of a state -> what _state gives
        self.root = None  # the patterns of every terminal, and the terminals keywords stand in
        self.reads = None  # a pattern terminal -> the string terminals it reads whole (lark's `unless`)

    SPACE = "[\t \f]*"  # the grammar's `%ignore /[\t \f]+/`: nothing else starts with these (TAG_VALUE,
    # which may, comes after an ignore in lark's order: lark would skip the spaces first too)

    @staticmethod
    def plain(lexer) -> bool:
        """Terminals :meth:`_patterns` lays out as lark would (no flags, no user callbacks, fewer
        than ``re``'s hundred groups); a grammar with others keeps lark's own lexer."""
        return not (lexer.user_callbacks or lexer.use_bytes or len(lexer.terminals) > 90
                    or any(t.pattern.flags for t in lexer.terminals))

    def _unless(self, lexer):
        """lark's _create_unless without its scanners: for each pattern terminal, the keywords it
        would read (`where` read by NAME is WHERE), and the string terminals so embedded. Whether a
        pattern reads a string whole is the same in every state: worked out once, over all terminals."""
        if self.reads is None:
            from lark.lexer import PatternRE, PatternStr, _get_match

            every = getattr(self.contextual, "root_lexer", lexer).terminals
            strings = [t for t in every if type(t.pattern) is PatternStr]
            self.reads = {}
            for retok in every:
                if type(retok.pattern) is PatternRE:
                    regexp = retok.pattern.to_regexp()
                    self.reads[retok.name] = [(t.pattern.value, t.name) for t in strings if t.priority == retok.priority
                                              and t.pattern.value == _get_match(re, regexp, t.pattern.value,
                                                                                lexer.g_regex_flags)]
        names = {t.name for t in lexer.terminals}
        embedded: set = set()
        keywords: dict = {}
        for t in lexer.terminals:
            table: dict = {}
            for value, name in self.reads.get(t.name, ()):
                if name in names:
                    table.setdefault(value, name)
                    embedded.add(name)
            if table:
                keywords[t.name] = table
        return keywords, embedded

    def _patterns(self, lexer):
        """A state's lexer as one compiled pattern (white space, then its terminals in lark's
        order), its ignored and newline types and its keyword table: what lark's ``_build_scanner``
        makes, made without it (lark compiles two patterns per state: its scanner and the keyword
        check)."""
        keywords, embedded = self._unless(lexer)
        body = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in lexer.terminals if t.name not in embedded)
        spaced = _compiled(self.SPACE + "(?:" + body + ")", lexer.g_regex_flags)
        return spaced, lexer.ignore_types, lexer.newline_types, keywords

    def _root(self):
        if self.root is None:
            lexer = self.contextual.root_lexer
            rank = {t.name: i for i, t in enumerate(lexer.terminals)}  # lark's order, every state's too
            self.root = (self._patterns(lexer), self._unless(lexer)[1], rank)
        return self.root

    def _state(self, lexer) -> list:
        """[the names of the state's terminals, whether every terminal's pattern may go first, None,
        the strings to look for first, the tokens left before its own pattern, the lexer]: the third, the
        state's own patterns, made when needed; the fourth, the strings the state reads alone that
        a pattern terminal of all reads as keywords (MINUS where a unary minus is expected, not
        ADD_OP), each with its place in lark's order."""
        _, embedded, rank = self._root()
        own = self._unless(lexer)[1]
        alone = tuple(sorted((rank[t.name], t.pattern.value) for t in lexer.terminals
                             if t.name in embedded and t.name not in own))
        return [frozenset(t.name for t in lexer.terminals), True, None, alone, OWN_PATTERN_AFTER, lexer]

    def lex(self, lexer_state, parser_state):
        text_slice = lexer_state.text
        text, end = text_slice.text, text_slice.end
        line_ctr = lexer_state.line_ctr
        pos = line_ctr.char_pos  # (kept here, and given back to lark's counter only if lark's lexer takes over)
        lexers = self.contextual.lexers
        stack = parser_state.state_stack
        info = self.info
        by_state: dict = {}  # the parser's state -> its lexer's entry in info (states share lexers)
        own: dict = {}  # the parser's state -> its lexer's own patterns, once it reads with them
        root, _, root_rank = self._root()
        root_spaced, root_keywords = root[0], root[3]
        opened: list = []
        self.postlex.open = opened
        budget = TokenBudget()  # the post-lexer's size and nesting limits
        see = budget.see
        make = str.__new__
        depth = 0
        previous = None
        t = None
        while pos < end:
            got = own.get(stack[-1])
            if got is not None:  # the common case: a state read often, with its own patterns
                m = got[0].match(text, pos, end)  # white space, then a token, in one match
            else:
                state = by_state.get(stack[-1])
                if state is None:
                    lexer = lexers[stack[-1]]
                    state = info.get(id(lexer))
                    if state is None:
                        state = info[id(lexer)] = self._state(lexer)
                    by_state[stack[-1]] = state
                m = None
                if state[1] and state[2] is None:  # every terminal's pattern first (see the class)
                    state[4] -= 1
                    if not state[4]:  # a state met often: its own pattern, shorter, from its next token on
                        state[1] = False
                    m = root_spaced.match(text, pos, end)
                    if m is not None:
                        type_ = m.lastgroup
                        names = state[0]
                        table = root_keywords.get(type_)
                        if type_ not in names or (table and table.get(m.group(type_), type_) not in names):
                            m = None  # a terminal the state does not take, or a keyword it does not
                        elif state[3]:  # a string the state reads alone, earlier in lark's order, here?
                            at, place = m.start(type_), root_rank[type_]
                            for earlier, string in state[3]:
                                if earlier < place and text.startswith(string, at, end):
                                    m = None
                                    break
                if m is not None:
                    got = root
                else:
                    got = state[2]
                    if got is None:
                        got = state[2] = self._patterns(state[5])
                    own[stack[-1]] = got  # (from now on: the root pattern is not tried again here)
                    m = got[0].match(text, pos, end)  # white space, then a token, in one match
            if m is None:  # lark's lexer takes over from here, and raises its error
                line_ctr.char_pos = pos
                line_ctr.line = text.count("\n", 0, pos) + 1
                line_ctr.line_start_pos = text.rfind("\n", 0, pos) + 1
                line_ctr.column = pos - line_ctr.line_start_pos + 1
                lexer_state.last_token = t
                yield from self.contextual.lex(lexer_state, parser_state)
                return
            type_ = m.lastgroup
            start, pos = m.span(type_)  # (after the white space lark's pattern skips as a token of its own)
            if type_ in got[1]:  # ignored: comments, a newline before a continuation
                continue
            value = text[start:pos]
            keywords = got[3]
            if keywords and type_ in keywords:
                type_ = keywords[type_].get(value, type_)
            # lark's Token, made directly; planner reads only offsets (a line and a column are
            # worked out from the source where a message needs them)
            t = make(Token, value)
            t.type = type_
            t.value = value
            t.start_pos = start
            t.end_pos = pos
            t.line = t.column = t.end_line = t.end_column = None
            if (type_ not in NESTING or (type_ in BREAKS and not budget.levels[-1])) \
                    and 0 < budget.in_statement < MAX_STATEMENT_TOKENS and budget.total < MAX_TOKENS:
                budget.in_statement += 1  # TokenBudget.see for a token inside a statement that changes no nesting
                budget.total += 1
            else:
                see(t)
            if type_ in _OPEN:  # the post-lexer (_NewlinePostLex.process)
                depth += 1
                opened.append(t)
            elif type_ in _CLOSE:
                depth = max(0, depth - 1)
                if opened:
                    opened.pop()
            elif type_ == "_NL":
                if depth > 0 or previous is None or previous in _CONTINUES:
                    continue
                budget.end_statement()
            previous = type_
            yield t
        line_ctr.char_pos = pos


@lru_cache(maxsize=None)
def _compiled(pattern: str, flags: int):
    return re.compile(pattern, flags)


def _fused(parser: Lark) -> bool:
    frontend = parser.parser
    connector = getattr(frontend, "lexer", None)
    contextual = getattr(connector, "lexer", None)
    lexers = getattr(contextual, "lexers", None)
    if not isinstance(lexers, dict):
        return False
    root = getattr(contextual, "root_lexer", None)
    for lx in {root, *lexers.values()}:  # lark 1.x's basic lexers, asked without building their scanners
        if not all(hasattr(lx, a) for a in ("terminals", "user_callbacks", "g_regex_flags", "use_bytes",
                                             "ignore_types", "newline_types", "_build_scanner")):
            return False
    if not _FusedLexer.plain(root):  # every state's terminals are some of these
        return False
    frontend.lexer = _FusedLexer(contextual, parser.options.postlex)
    return True


@lru_cache(maxsize=None)
def _inline_parser(start: str) -> Lark:
    """A second parser per start rule, whose callbacks :func:`parse_transform` sets for each parse."""
    parser = Lark(
        (data_dir("grammar") / "plan.lark").read_text(encoding="utf-8"),
        parser="lalr", lexer="contextual", postlex=_NewlinePostLex(), propagate_positions=True,
        maybe_placeholders=False, start=start, cache=True)
    parser._planner_lock = threading.Lock()
    _fused(parser)
    return parser


def parse_transform(source: Source, transformer, start: str = "start"):
    """``transformer.transform(parse(source, start))`` without the tree in between: its methods
    are the parser's callbacks, each reduction handing them the children and the meta it would
    have had. The same result, in about half the time (no parse tree to build and walk again).
    Exceptions the methods raise reach the caller as they are."""
    parser = _inline_parser(start)
    callbacks = getattr(getattr(getattr(parser.parser, "parser", None), "parser", None), "callbacks", None)
    builders = getattr(getattr(parser, "_parse_tree_builder", None), "rule_builders", None)
    if not isinstance(callbacks, dict) or builders is None:  # lark laid out otherwise: two passes
        return transformer.transform(parse(source, start))
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
