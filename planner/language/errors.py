"""Errors are data: every user mistake is a ``PlanError`` with a span.

Rendering happens in one place (:func:`render`), so every family looks the
same: ``file:line:col: error[family]: message``, the source line with a
caret, secondary labels, then ``help:`` and ``note:`` lines.
"""

from __future__ import annotations

from .lazy import field  # dataclasses.field, for the classes made on first use

from .lazy import lazy_dataclass as dataclass  # dataclasses.dataclass, made on first use
from .source import Span, multi_snippet, snippet

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Iterable, Sequence


@dataclass
class Label:
    span: Span
    text: str = ""


class PlanError(Exception):
    """Base of every error a user can cause. ``family`` names it in output."""

    family = "plan"
    show_source = True  # False: the location only, no line of the source under the message

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        *,
        labels: Sequence[Label] = (),
        hint: str | None = None,
        notes: Sequence[str] = (),
        label: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.label = label
        self.labels = list(labels)
        self.hint = hint
        self.notes = list(notes)

    def __str__(self) -> str:
        return render(self, color=False)


class ParseError(PlanError):
    family = "syntax"


class NotPlanText(ParseError):
    """Text that is not a plan at all (not UTF-8, NUL or other control characters): the
    message gives the position only, never the line, which may be a secret or escape codes."""

    show_source = False


class UnknownNameError(PlanError):
    family = "unknown-name"


class DuplicateError(PlanError):
    family = "duplicate"


class CycleError(PlanError):
    family = "cycle"


class ArityError(PlanError):
    family = "arity"


class RecursionError_(PlanError):
    family = "recursion"


class UnitError(PlanError):
    """Dimension mismatch between operands."""

    family = "unit"


class UnknownUnitError(PlanError):
    family = "unknown-unit"


class DisplayUnitError(PlanError):
    family = "display-unit"


class KindError(PlanError):
    """A boolean where a number is needed, or the reverse."""

    family = "type"


class ConstraintError(PlanError):
    family = "constraint"


class EvaluationError(PlanError):
    """Division by zero, a domain error, a non-finite result."""

    family = "evaluation"


class NeverError(EvaluationError):
    """A ``first(...)`` that found no value where its condition holds: "never", a stated outcome.
    The quantity defined by it shows "never"; a formula or check that uses it fails with this."""

    family = "never"


class ScenarioError(PlanError):
    family = "scenario"


class OverrideError(PlanError):
    family = "override"


class RangeError(PlanError):
    """Bad sweep values: an empty range, a step of the wrong sign, too many points."""

    family = "range"


class DistributionError(ParseError):
    """An uncertain input's range or distribution that means nothing (low above high, a lognormal
    at or below 0), a probability check that cannot run, a simulation asked for 0 samples. (A
    kind of :class:`ParseError`: the bad ranges are found while lowering, as a plan is read.)"""

    family = "distribution"


class SolveError(PlanError):
    family = "solve"


class NoRootError(SolveError):
    family = "no-root"


class MultipleRootsError(SolveError):
    family = "multiple-roots"


class NotMonotoneError(SolveError):
    family = "not-monotone"


class ImportError_(PlanError):
    family = "import"


class LimitError(PlanError):
    """A plan (or template) past one of planner's documented limits (:mod:`planner.language.limits`)."""

    family = "limit"


class TemplateError(PlanError):
    family = "template"


class UsageError(PlanError):
    """Bad command-line arguments (often without a span)."""

    family = "usage"


class PlanWarning(PlanError):
    """Not an error: something the run did that the user should know of (a declaration of a unit
    that is built in now, a library name whose meaning changed). Rendered as ``warning[...]``; never
    raised."""

    family = "compat"
    severity = "warning"

    def __init__(self, message: str, span=None, *, family: str = "compat", **kwargs) -> None:
        super().__init__(message, span, **kwargs)
        self.family = family


class PlanErrors(PlanError):
    """Several errors found in one pass; rendered one after another."""

    family = "several"

    def __init__(self, errors: Iterable[PlanError]) -> None:
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.message, first.span)

    def __str__(self) -> str:
        return render(self, color=False)


@dataclass
class ErrorSink:
    """Collects errors so a pass can report all of them at once."""

    errors: list[PlanError] = field(default_factory=list)

    def add(self, error: PlanError) -> None:
        """Keep ``error``; one that says again what an error kept says, at the same place (a function's
        body checked at each of its calls), adds its labels to that one instead (the other call sites)."""
        same = next((e for e in self.errors if type(e) is type(error) and e.message == error.message
                     and e.span is not None and error.span is not None and e.span.source is error.span.source
                     and (e.span.start, e.span.end) == (error.span.start, error.span.end)), None)
        if same is None:
            self.errors.append(error)
            return
        for label in error.labels:
            if all((x.span.start, x.span.end, x.text) != (label.span.start, label.span.end, label.text)
                   for x in same.labels):
                same.labels.append(label)

    def raise_if_any(self) -> None:
        self.errors.sort(key=lambda e: (e.span.source.name, e.span.start) if e.span is not None else ("", -1))
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise PlanErrors(self.errors)


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """``did you mean`` for unknown names (closest by similarity)."""
    import difflib

    pool = sorted(set(candidates))
    stems = [c for c in pool if name.startswith(c + "_")]  # a known name with a word added: kv_per_token_bf16
    if stems:
        return max(stems, key=len)
    matches = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not matches:
        lowered = {c.lower(): c for c in pool}
        if name.lower() in lowered:
            return lowered[name.lower()]
        return None
    return matches[0]


def did_you_mean(name: str, guess: str | None) -> str | None:
    """``did you mean `x`?``, saying which letters come from another script when the two look
    alike on screen (a Cyrillic `а` in `dаta` next to the Latin `data`)."""
    import unicodedata

    foreign = []
    for ch in dict.fromkeys(name):
        if ord(ch) > 127 and ch.isalpha():
            script = unicodedata.name(ch, "").split(" ")[0]
            if script and script != "LATIN" and (guess is None or ch not in guess):
                foreign.append(f"`{ch}` (U+{ord(ch):04X} {unicodedata.name(ch, '').lower()})")
    latin = any("a" <= ch.lower() <= "z" for ch in name)
    note = ""
    if foreign and (guess is not None or latin):
        note = f"`{name}` has {', '.join(foreign)}, from another script than the letters around it"
    if guess is None:
        return note or None
    if note:
        return f"did you mean `{guess}`? {note}, so the two look the same on screen but differ"
    return f"did you mean `{guess}`?"


def flatten(error: PlanError) -> list[PlanError]:
    if isinstance(error, PlanErrors):
        out: list[PlanError] = []
        for e in error.errors:
            out.extend(flatten(e))
        return out
    return [error]


def render(error: PlanError, color: bool = False) -> str:
    """The one place errors become text."""
    parts = [_render_one(e, color) for e in flatten(error)]
    text = "\n\n".join(parts)
    if len(parts) > 1:
        text += f"\n\n{len(parts)} errors"
    return text


def _render_one(error: PlanError, color: bool) -> str:
    red, bold, blue, reset = ("\x1b[31m", "\x1b[1m", "\x1b[34m", "\x1b[0m") if color else ("",) * 4
    where = f"{error.span.location()}: " if error.span is not None else ""
    kind = getattr(error, "severity", "error")
    if kind == "warning" and color:
        red = "\x1b[33m"
    lines = [f"{bold}{where}{red}{kind}[{error.family}]{reset}{bold}: {error.message}{reset}"]
    same_line = [lab for lab in error.labels if error.span is not None and lab.span.source is error.span.source
                 and lab.span.line == error.span.line]
    if error.span is not None and error.show_source:
        marks = [(error.span, error.label, "^")] + [(lab.span, lab.text, "-") for lab in same_line]
        lines.append(multi_snippet(marks) if same_line else snippet(error.span, error.label))
    for lab in error.labels:
        if lab in same_line:
            continue
        lines.append(f"  {blue}-->{reset} {lab.span.location()}")
        lines.append(snippet(lab.span, lab.text, marker="-"))
    for note in error.notes:
        lines.append(f"  {blue}note{reset}: {note}")
    if error.hint:
        lines.append(f"  {blue}help{reset}: {error.hint}")
    return "\n".join(lines)
