"""Live values in prose: ``{name}`` and ``{name -> unit}`` in titles, notes and doc strings
(planner/language/live.py), checked like references and filled by the one number rule."""

from __future__ import annotations

import pytest

from planner.compute.evaluation import loads
from planner.language.errors import PlanError, flatten, render
from planner.language.live import Live, fill, pieces, plain


@pytest.mark.parametrize("text, expected", [
    ("no braces", ["no braces"]),
    ("{x}", [("x", None)]),
    ("a {x -> ms} b", ["a ", ("x", "ms"), " b"]),
    ("{ h100.hbm_bandwidth  ->  TB/s }", [("h100.hbm_bandwidth", "TB/s")]),
    ("{{literal}} {y}", ["{literal} ", ("y", None)]),
    ("{rate -> %/year}", [("rate", "%/year")]),
    ("{best.value}", [("best.value", None)]),
])
def test_pieces(text, expected):
    got = [p if isinstance(p, str) else (p.name, p.unit) for p in pieces(text)]
    assert got == expected


@pytest.mark.parametrize("text, message", [
    ("{1, 2}", "is not a live value"),
    ("{}", "holds no name"),
    ("open {x", "no `}` after it"),
    ("close }", "no `{` before it"),
    ("{x -> }", "is not a live value"),
])
def test_a_stray_brace_is_an_error(text, message):
    with pytest.raises(ValueError) as exc:
        pieces(text)
    assert message in exc.value.args[0]


def test_fill_and_plain():
    assert fill("x is {x -> ms}; {{x}}", lambda live: f"<{live.name}:{live.unit}>") == "x is <x:ms>; {x}"
    assert plain("x is {x -> ms}; {{x}}") == "x is {x -> ms}; {x}"
    assert fill(None, str) is None


def _error(text: str) -> PlanError:
    with pytest.raises(PlanError) as exc:
        loads(text, "live.plan")
    return exc.value


def test_an_unknown_name_is_located_with_a_suggestion():
    err = flatten(_error('x = 2 s\nnote "x is {xx} now"\n'))[0]
    assert err.family == "unknown-name"
    assert (err.span.line, err.span.column, err.span.text) == (2, 13, "xx")
    assert "did you mean `x`?" in render(err)


def test_a_unit_of_another_dimension_is_located():
    err = flatten(_error('x = 2 s "two seconds, {x -> GB}"\n'))[0]
    assert err.family == "display-unit"
    assert err.span.text == "GB" and "it is time, GB is bytes" in err.message


def test_an_unknown_unit_and_a_true_false_with_a_unit():
    errors = flatten(_error('x = 2 s\nok = x > 1 s\nnote "{x -> fortnights} {ok -> s}"\n'))
    assert [e.family for e in errors] == ["unknown-unit", "display-unit"]
    assert errors[1].message == "`ok` is true/false and has no unit"


def test_a_stray_brace_in_a_plan_is_a_located_syntax_error():
    err = flatten(_error('title "sets {a, b}"\nx = 1\n'))[0]
    assert err.family == "syntax" and err.span.line == 1 and err.span.text == "{a, b}"
    assert "{{" in err.hint


def test_escapes_in_the_string_do_not_move_the_location():
    err = flatten(_error('x = 1 "say \\"hi\\" {y}"\n'))[0]
    assert err.span.text == "y"


def test_answers_and_their_sentences_are_names():
    plan = loads('x = 2 s\ny = x * 3\nsolve x where y = 9 s as x9 "x must be {x9 -> ms}"\n'
                 'note "{x9} and {y -> ms}"\n', "live.plan")
    assert plan.model.plan.statements[-1].doc == "x must be {x9 -> ms}"
    assert plan.model.plan.statements[-1].alias == "x9"


def test_a_question_sentence_is_checked_too():
    err = flatten(_error('x = 2 s\ny = x * 3\nsolve x where y = 9 s as breakeven "x must be {breakevn}"\n'))[0]
    assert err.span.text == "breakevn" and "did you mean `breakeven`?" in render(err)


def test_live_is_a_value_object():
    (live,) = pieces("{a -> ms}")
    assert isinstance(live, Live) and (live.start, live.end) == (0, 9)
