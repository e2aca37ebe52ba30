"""Parsing and lowering in one pass gives what the parse tree and the transformer give.

``lower(source)`` runs the transformer's methods as the parser's callbacks
(:func:`planner.language.parser.parse_transform`); ``lower(source, parse(source))``
builds lark's tree first and transforms it, as before. Same IR (spans included),
same errors, over every plan the tests and the shipped files hold.
"""

import sys

import pytest
from conftest import ROOT
from test_numeric import _test_plans

import planner
from planner.language.errors import ParseError, PlanError
from planner.language.lower import lower, lower_expr, lower_values
from planner.language.parser import parse, parse_transform
from planner.language.source import Source

sys.path.insert(0, str(ROOT / "benchmarks"))
from plan_scale import chain, diamonds  # noqa: E402


def _texts() -> list[tuple[str, str]]:
    files = sorted((ROOT / "sheets").glob("*.plan")) + sorted((ROOT / "planner" / "library").rglob("*.plan")) \
        + sorted((ROOT / "tests" / "bad_plans").rglob("*.plan"))
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in files]


def _outcome(fn):
    try:
        return ("ok", repr(fn()))
    except PlanError as err:
        return ("error", type(err).__name__, err.message, repr(err.span), [repr(lb.span) for lb in err.labels],
                err.hint)


def _same(name: str, text: str) -> None:
    src = Source(name, text)
    assert _outcome(lambda: lower(src)) == _outcome(lambda: lower(src, parse(src))), name


@pytest.mark.parametrize("name, text", _texts(), ids=lambda v: v if "/" in str(v) else None)
def test_shipped_library_and_bad_plans(name, text):
    _same(name, text)


def test_the_test_plans():
    for where, text in _test_plans():
        _same(where, text)


def test_generated_plans():
    _same("chain", chain(2000))
    _same("diamonds", diamonds(2000))


@pytest.mark.parametrize("text", [
    "a = (1 + 2) * -b\nb = 3\n",  # parentheses and a unary minus: the spans include them
    "a = 1\nb = a = 2\n",  # a lowering error
    "a = 1\nb = a = 2\nc = (1\n",  # and a syntax error further down: the syntax error wins, as before
    'x = 3 TB/s "doc" [assumption: free verification] where x > 0 TB/s\n',
    "f(a, b = 2) = a * b\ny = f(1)\ncheck y == 2 with b = 1\n",
    "s = sum(k for k in 1..10)\n",
    "a = 01\n",
])
def test_edge_cases(text):
    _same("edge.plan", text)


def test_syntax_errors_come_before_lowering_errors():
    src = Source("e.plan", "a = 1\nb = a = 2\nc = (1\n")
    with pytest.raises(ParseError) as err:
        lower(src)
    assert err.value.span.line == 3


def test_expressions_and_values():
    from planner.language.lower import _Lower

    for text in ["3.35 TB/s", "-(a + b) * 2", "a == b and not c", "max(x, 2 ms) / (1 - y)"]:
        src = Source("--set", text)
        assert repr(parse_transform(src, _Lower(src), "expr")) == repr(lower_expr(src))
    for text in ["1..1024 times 2", "0.3, 0.6", "[1, 2, 4]", "2 TB/s..4 TB/s count 5"]:
        src = Source("values", text)
        assert repr(parse_transform(src, _Lower(src), "cli_values")) == repr(lower_values(src))


# The one-pass parser and the tree route read the same tokens (lark's contextual lexer): words
# that are keywords in some states and names in others, unary and binary signs, and random soups of
# the grammar's words give the same tokens (hence the same IR, or the same error at the same place).
_WORDS = ["step", "count", "times", "over", "show", "in", "as", "for", "with", "within", "where", "and", "or",
          "not", "true", "false", "integer", "sweep", "solve", "check", "scenario", "axis", "unit", "import",
          "from", "note", "title", "min", "max", "maximize", "minimize", "x", "y2", "-", "+", "*", "/", "^", "=",
          "==", "~=", "<=", ">", "(", ")", "[", "]", "{", "}", ",", ".", "..", "@", ":", "%", "->", "1", "2.5",
          "3 ms", "4 TB/s", "1_000", '"doc"', "[tag]", "# c", "\n", "\n", "\n"]


@pytest.mark.parametrize("text", [
    "step = 1\ncount = step - -step\nsweep step in 1..8 step 2 show count\n",
    "over = 2\nshow = over * -over\nmaximize show over over in 1..3 as times\n",
    "x = -1 - -2 + +3 * -(4 - -5)\ny = x ^ -2\n",
    "a = 2\nb = a -1\nc = -a\ncheck c == -2 within 1%\n",
    "n = 3\nsweep n in 1..9 count 3, n in [1, 2] show n\n",
])
def test_words_that_are_keywords_only_somewhere(text):
    _same("words.plan", text)


def test_soups_of_the_grammars_words():
    import random

    rng = random.Random(11)
    for i in range(400):
        text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 25))) + "\n"
        if rng.random() < 0.5:  # mostly well formed heads, so the parse gets deep into states
            text = rng.choice(["a = ", "check a ", "sweep a in ", "solve a where ", "f(x) = ", "scenario s { a = "]) + text
        _same(f"soup{i}.plan", text)


def test_without_larks_private_names_the_tree_route_gives_the_same(monkeypatch):
    """Another lark without ``Shift`` or ``_vargs_meta`` where planner looks for them: two passes, the same IR."""
    from planner.language import parser

    monkeypatch.setattr(parser, "_SHIFT", None)
    monkeypatch.setattr(parser, "_vargs_meta", None)
    from planner.language import lower as lowering

    calls = []
    monkeypatch.setattr(parser, "_loop", lambda *a: calls.append(a))  # (the one-pass loop: never reached)
    for name, text in _texts()[:20]:
        lowering._RECENT.clear()  # (not a text lowered before, remembered)
        _same(name, text)
    assert not calls
    with pytest.raises(ParseError):
        lower(Source("bad.plan", "a = (1\n"))


@pytest.mark.parametrize("text", ["a = 1\nb = a * 2\n", "a = (1\n", "a = 1\nb = a = 2\n"])
def test_the_parser_keeps_nothing_of_a_parse(text):
    """After a parse (or its error) the shared parser holds neither the transformer nor what it
    built: a 100,000-line plan's stacks and methods are not kept alive until the next parse."""
    import gc
    import weakref

    from planner.language.lower import _Lower

    transformer = _Lower(Source("kept.plan", text))
    ref = weakref.ref(transformer)
    try:
        transformer.transform_text()
    except PlanError:
        pass
    del transformer
    gc.collect()
    assert ref() is None


def test_syntax_errors_name_what_is_expected_in_words():
    """Every terminal of the grammar an "expected ..." list may name is said in words, never as the
    grammar's own name (`UNIT_OP`, `SIGNED_INT`, `CIRCUMFLEX`, `__ANON_1`)."""
    from planner.language.parser import _describe, _parser

    for terminal in _parser("start").terminals:
        if terminal.name.startswith("__IGNORE"):
            continue
        words = _describe(terminal.name)
        assert words != "something else" and terminal.name not in words, terminal.name
    with pytest.raises(PlanError) as err:
        planner.loads("x = 3 -> GB s\n")
    assert "expected `/` or `*` between units, `[`, `^`, `where`" in str(err.value)
    with pytest.raises(PlanError) as err:
        planner.loads("x = 3 -> GB^\n")
    assert "expected a whole number" in str(err.value)
