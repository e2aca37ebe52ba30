"""Live values in prose: ``{name}`` and ``{name -> unit}`` inside a title, a note or a doc string.

A plan's prose can say what it found in its own figures::

    note "Owning saves {npv_saving -> MUSD} over three years."
    solve target_utilisation where npv_own = npv_rent as breakeven_utilisation
        "Owning is cheaper than renting above {breakeven_utilisation} utilisation."

The syntax, in full:

* ``{name}``: the value of a quantity or a question's answer (``as NAME``, ``NAME.value``) in its
  display unit, written by the one number rule (:mod:`planner.outputs.numbers`) with its unit;
* ``{name -> unit}``: the same value in another unit of the same dimension (``-> MUSD``, ``-> %``);
* ``{{`` and ``}}``: a literal ``{`` and ``}``.

White space inside the braces is free (``{ npv_saving -> MUSD }``). One rule reads every brace,
wherever prose goes (terminal, report, workbook, with or without a live value in the text):

* a brace group made only of what a live value is made of (a name first, then letters, digits,
  white space, ``.``, ``->``, ``/``, ``*``, ``^``, ``%``) that is not a valid live value is an
  error: a typo in a live value (``{npv_saving -> }``, ``{npv saving}``, ``{x`` with no ``}``)
  is never shown as text;
* any other brace (``{,_w4a16e16}``, ``{1, 2}``, ``{}``, a ``}`` with no ``{``) cannot be a live
  value: plans written before live values existed used such braces as text, so it is shown as
  written, with a located ``warning[compat]`` that says to write ``{{``/``}}``.

The analysis checks every live value as it checks a reference in a formula (:func:`check`): an
unknown name is a located error with a suggestion, a unit of another dimension is a located error
naming both. The outputs fill them per scenario (:func:`fill`). Parsing and checking live here so
the evaluator, the language server and the report agree; plain Python and the standard library.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Union

from . import ir
from .errors import DisplayUnitError, Label, ParseError, PlanError, UnknownNameError, did_you_mean, suggest
from .lazy import lazy_dataclass as dataclass
from .source import Span

if TYPE_CHECKING:
    from .model import Model

_NAME = r"[^\W\d]\w*(?:\.[^\W\d]\w*)*"
_FACTOR = r"(?:%|[^\W\d]\w*(?:\^-?\d+)?)"
_LIVE = re.compile(r"\{(\s*)(" + _NAME + r")(\s*)(?:->(\s*)(" + _FACTOR + r"(?:[/*]" + _FACTOR + r")*)\s*)?\}")
_BRACE = re.compile(r"[{}]")
_LIVE_SHAPED = re.compile(r"\s*[^\W\d][\w\s.\->/*^%]*")  # what a live value is made of (fullmatch)
BRACE_HINT = "a live value is `{name}` or `{name -> unit}`; write `{{` and `}}` for braces in text"


@dataclass(frozen=True)
class Live:
    """One ``{name}`` or ``{name -> unit}``: offsets into the text it came from."""

    name: str
    unit: Optional[str]  # as written after `->`, None for the quantity's own display unit
    start: int  # the `{`
    end: int  # after the `}`
    name_start: int
    unit_start: Optional[int]


@dataclass(frozen=True)
class Stray:
    """A brace that starts no live value: ``error`` (shaped like a live value: a typo) or ``text``
    (shown as written, with a warning: braces in plans written before live values)."""

    kind: str  # "error" or "text"
    message: str
    start: int
    end: int


Piece = Union[str, Live]


class LiveSyntaxError(ParseError):
    """A brace group shaped like a live value that is not one (``{x -> }``, ``{x`` with no ``}``)."""


def scan(text: str) -> tuple[list[Piece], list[Stray]]:
    """The text as literal pieces and live values, in order, and every brace that starts no live
    value (see the module's rule). A stray brace's text stays in the pieces as written."""
    out: list[Piece] = []
    literal: list[str] = []
    strays: list[Stray] = []
    i = 0
    while True:
        m = _BRACE.search(text, i)
        if m is None:
            literal.append(text[i:])
            break
        k = m.start()
        literal.append(text[i:k])
        brace = text[k]
        if text.startswith(brace * 2, k):  # `{{` or `}}`: one brace
            literal.append(brace)
            i = k + 2
            continue
        if brace == "}":
            strays.append(Stray("text", "a `}` with no `{` before it is shown as written", k, k + 1))
            literal.append(brace)
            i = k + 1
            continue
        live = _LIVE.match(text, k)
        if live is not None:
            if "".join(literal):
                out.append("".join(literal))
            literal = []
            unit = live.group(5)
            out.append(Live(live.group(2), unit, live.start(), live.end(), live.start(2),
                            live.start(5) if unit else None))
            i = live.end()
            continue
        nxt = _BRACE.search(text, k + 1)
        closed = nxt is not None and nxt.group() == "}"
        inside = text[k + 1:nxt.start() if nxt is not None else len(text)]
        end = nxt.end() if closed else (nxt.start() if nxt is not None else len(text))
        if _LIVE_SHAPED.fullmatch(inside):
            message = f"`{{{inside}}}` is not a live value" if closed else "a `{` with no `}` after it"
            strays.append(Stray("error", message, k, end))
        else:
            strays.append(Stray("text", f"`{text[k:end]}` is not a live value: it is shown as written", k, end))
        literal.append(text[k:end])
        i = end
    if "".join(literal):
        out.append("".join(literal))
    return out, strays


def pieces(text: str) -> list[Piece]:
    """The text as literal pieces and live values, in order. Raises :class:`ValueError` with
    ``(message, position, hint)`` for a brace group shaped like a live value that is not one (see
    :func:`check` for a located error); other stray braces are text, as written."""
    found, strays = scan(text)
    for stray in strays:
        if stray.kind == "error":
            raise ValueError(stray.message, stray.start, BRACE_HINT)
    return found


def has_live(text: Optional[str]) -> bool:
    return bool(text) and "{" in text and any(isinstance(p, Live) for p in scan(text)[0])


def plain(text: Optional[str]) -> Optional[str]:
    """The text with each live value as its source (``{npv_saving}``), ``{{``/``}}`` as single braces
    and other braces as written: prose read where no values are known (the terminal, an imported
    doc, a hover)."""
    return fill(text, lambda p: "{" + p.name + (f" -> {p.unit}" if p.unit else "") + "}")


def fill(text: Optional[str], value: Callable[[Live], str]) -> Optional[str]:
    """The text with every live value replaced by ``value(live)`` (the outputs' formatted figure),
    ``{{``/``}}`` as single braces and other braces as written."""
    if not text or ("{" not in text and "}" not in text):
        return text
    return "".join(p if isinstance(p, str) else value(p) for p in scan(text)[0])


# ---- checking ----------------------------------------------------------------------

def _raw_offsets(prose: ir.Prose) -> tuple[str, Callable[[int], int]]:
    """The string's raw text between its quotes, and a map from an offset in it to the plan's."""
    raw = prose.span.text
    base = prose.span.start
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        return raw[1:-1], lambda k: base + 1 + k
    return raw, lambda k: base + k


def check(texts: Iterable[ir.Prose], model: "Model", units, sink, warnings: Optional[list] = None) -> None:
    """Every live value of the plan's prose: a known name, a unit of its dimension. Errors go to ``sink``;
    a brace kept as text (see the module's rule) is a ``warning[compat]`` in ``warnings``.

    The raw string (escapes as written) is parsed, so each error points into the plan's text;
    escapes never make or hide a brace, so it reads the same live values as :func:`pieces` of the text."""
    from .errors import PlanWarning

    for prose in texts:
        if "{" not in prose.span.text and "}" not in prose.span.text:
            continue
        raw, at = _raw_offsets(prose)
        source = prose.span.source
        found, strays = scan(raw)
        errors = [s for s in strays if s.kind == "error"]
        if errors:
            s = errors[0]
            sink.add(LiveSyntaxError(s.message, Span(source, at(s.start), at(max(s.end, s.start + 1))),
                                     label="in this text", hint=BRACE_HINT))
            continue
        if warnings is not None:
            for s in strays:
                warnings.append(PlanWarning(s.message, Span(source, at(s.start), at(s.end)),
                                            label="not a live value: shown as written",
                                            hint="write `{{` and `}}` for a brace in text (then nothing is said); "
                                                 "a live value is `{name}` or `{name -> unit}`"))
        for live in found:
            if not isinstance(live, Live):
                continue
            err = check_one(live, model, units, Span(source, at(live.name_start), at(live.name_start) + len(live.name)),
                            None if live.unit_start is None else
                            Span(source, at(live.unit_start), at(live.unit_start) + len(live.unit)))
            if err is not None:
                sink.add(err)


def names(model: "Model") -> list[str]:
    """The names a live value may use: quantities and question answers."""
    return list(model.quantities) + [a for a in model.answers]


def type_of(name: str, model: "Model"):
    """The type of a quantity or an answer (None when it has none: an unknown name)."""
    if name in model.quantities:
        return model.quantities[name].type
    if name in model.answers:
        return model.answers[name].type
    return None


def check_one(live: Live, model: "Model", units, name_span: Span, unit_span: Optional[Span]) -> Optional[PlanError]:
    from .dims import unit_of

    t = type_of(live.name, model)
    if t is None:
        guess = suggest(live.name, names(model))
        return UnknownNameError(f"unknown name `{live.name}` in a live value", name_span,
                                label="not a quantity or an answer of this plan",
                                hint=did_you_mean(live.name, guess)
                                or "a live value names a quantity or a question's answer (`as NAME`)")
    if live.unit is None:
        return None
    if t.is_bool:
        return DisplayUnitError(f"`{live.name}` is true/false and has no unit", unit_span,
                                hint=f"write `{{{live.name}}}`")
    from .errors import ErrorSink

    expr = unit_expr(live.unit, unit_span)

    local = ErrorSink()
    unit = unit_of(expr, units, local)
    if unit is None:
        return local.errors[0]
    dim = t.dim
    if dim is not None and unit.dim != dim:
        from .units import canonical_text

        return DisplayUnitError(
            f"cannot show `{live.name}` in {unit.text}: it is {dim.describe()}, {unit.text} is {unit.dim.describe()}",
            unit_span, labels=[Label(name_span, canonical_text(dim) or "a plain number")],
            hint="a unit of the same dimension, or `{" + live.name + "}` for its own unit")
    return None


def unit_expr(text: str, span: Span) -> ir.UnitExpr:
    """``kUSD/month`` as the IR's unit (factors with signed powers), each factor's span in the plan."""
    return ir.unit_from_text(text, span.source, span.start)
