"""Live values in prose: ``{name}`` and ``{name -> unit}`` in titles, notes and doc strings
(planner/language/live.py), checked like references and filled by the one number rule."""

from __future__ import annotations

import pytest

from planner.compute.evaluation import loads
from planner.language.errors import PlanError, flatten, render
from planner.language.live import Live, fill, pieces, plain, scan


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
    ("open {x", "no `}` after it"),
    ("{x -> }", "is not a live value"),
    ("{npv saving}", "is not a live value"),
    ("{x -> kUSD/}", "is not a live value"),
])
def test_a_brace_shaped_like_a_live_value_is_an_error(text, message):
    # a typo in a live value is never shown as text
    with pytest.raises(ValueError) as exc:
        pieces(text)
    assert message in exc.value.args[0]


@pytest.mark.parametrize("text", ["{1, 2}", "{}", "{ }", "close }", "{,_w4a16e16}", "open {a, b", "{a, b}",
                                  '{"k": 1}', "{2x}"])
def test_a_brace_that_cannot_be_a_live_value_is_text_as_written(text):
    # braces from plans written before live values (a shell pattern, a set, a dict): shown as written
    assert pieces(text) == [text]
    assert plain(text) == text and fill(text, lambda live: "?") == text
    found, strays = scan(text)
    assert [s.kind for s in strays] and {s.kind for s in strays} == {"text"}


def test_doubled_braces_are_one_brace_with_or_without_a_live_value():
    assert plain("a {{b}} c") == "a {b} c"
    assert fill("a {{b}} c", lambda live: "?") == "a {b} c"
    assert plain("{{{x}}}") == "{{x}}" and fill("{{{x}}}", lambda live: "7") == "{7}"
    assert plain("{{a, b}} and {a, b}") == "{a, b} and {a, b}"


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


def test_a_typo_in_a_live_value_in_a_plan_is_a_located_syntax_error():
    err = flatten(_error('title "sets {a b}"\nx = 1\n'))[0]
    assert err.family == "syntax" and err.span.line == 1 and err.span.text == "{a b}"
    assert "{{" in err.hint


def test_old_braces_in_a_plan_load_with_a_located_warning_and_show_as_written():
    # a plan from before live values: a shell-style pattern in a note, a set in the title
    plan = loads('title "sets {a, b}"\nx = 2 s "runs of model{,_w4a16e16}"\n'
                 'note "files run{,_w4a16e16}.csv; x is {x -> ms}; {{literal}}"\n', "old.plan")
    warned = [(w.family, w.span.line, w.span.text) for w in plan.warnings]
    assert warned == [("compat", 1, "{a, b}"), ("compat", 2, "{,_w4a16e16}"), ("compat", 3, "{,_w4a16e16}")]
    assert all("shown as written" in w.message and "{{" in w.hint for w in plan.warnings)
    assert plain(plan.title) == "sets {a, b}"
    assert fill(plan.model.plan.notes[0], lambda live: "2,000 ms") == "files run{,_w4a16e16}.csv; x is 2,000 ms; {literal}"


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
