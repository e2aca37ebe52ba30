"""What the language server knows about one open plan, without any LSP library.

:class:`Document` analyses a plan's text as the command line would (parse,
check, evaluate every scenario, run the checks) and answers the editor's
questions in plain data: diagnostics, hover text, definitions, completions,
symbols, rename edits. Positions are 0-based (line, character) with
characters counted in UTF-16 code units, as the protocol counts them by
default; :mod:`planner.lsp.server` turns these into protocol messages.

While the text does not parse or check, the last plan that did is kept for
hover, completion and definitions, so help does not vanish at every keystroke.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from ..compute.evaluation import format_value
from ..language import ir
from ..language.data import data_dir
from ..language.functions import FUNCTIONS
from ..language.errors import PlanError, flatten
from ..language.lower import lower
from ..language.parser import grammar_words, keywords
from ..language.source import Source, Span
from ..language.units import BUILTIN_UNITS
from ..compute.evaluation import Plan as Compiled
from ..plan import Plan, loads_compiled
from .positions import ENCODING, TOKEN_MODIFIERS, TOKEN_TYPES, offset, position, units  # noqa: F401  (ENCODING: the server sets it)
from .tolerant import Parts, Recovered, parse_tolerant, recover, words_in

NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")
IDENTIFIER = re.compile(r"[^\W\d]\w*\Z")

ERROR, WARNING, INFORMATION = 1, 2, 3


@dataclass(frozen=True)
class Range:
    start: tuple[int, int]  # (line, character), 0-based, UTF-16
    end: tuple[int, int]


@dataclass(frozen=True)
class Location:
    path: Path
    range: Range


@dataclass(frozen=True)
class Diagnostic:
    range: Range
    message: str
    severity: int
    code: str
    related: tuple[tuple[Location, str], ...] = ()


@dataclass(frozen=True)
class Completion:
    label: str
    kind: str  # "quantity" | "input" | "function" | "unit" | "scenario" | "axis" | "keyword" | "file"
    detail: str = ""
    documentation: str = ""
    insert: Optional[str] = None  # a snippet (`max($1)`), when not the label
    sort: str = ""


# The words of a plan with periods (docs/language.md, "Series over periods"): (word, a call, what it is)
_SERIES_WORDS = (
    ("previous", True, "previous(x): the series x in the period before"),
    ("period", False, "the period being computed (3 month in the third month)"),
    ("first", True, "first(period where cash < 0 USD): the first period where a condition holds, or never"),
    ("last", True, "last(x): the series in the last period"),
    ("mean", True, "mean(x): the series' mean over the periods"),
    ("sum", True, "sum(x): the series added up over the periods"),
    ("never", False, "what first(...) gives where its condition holds in no period"),
)


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str  # "input" | "quantity" | "function" | "unit" | "scenario" | "axis" | "member" | "question" | "check"
    detail: str
    range: Range
    selection: Range
    children: tuple["Symbol", ...] = ()


class RenameError(Exception):
    """Why a name cannot be renamed (shown to the user)."""


# ---- positions ---------------------------------------------------------------------------------

def span_range(span: Span) -> Range:
    text = span.source.text
    return Range(position(text, span.start), position(text, span.end))


# ---- semantic tokens ---------------------------------------------------------------------------

_NUMBER = re.compile(r"\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][-+]?\d+)?%?")
_LEXEMES = re.compile(r'(?P<comment>#[^\n]*)|(?P<string>"(?:[^"\\\n]|\\.)*"?)'
                      r"|(?P<number>(?<![\w.])\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][-+]?\d+)?)|(?P<word>[^\W\d]\w*)")


# ---- values as hover and hints say them ---------------------------------------------------------

@dataclass(frozen=True)
class SeriesValues:
    """A series in one scenario, as a hover says it: its first and last values and its lowest, with
    the periods (display unit; ``month 15``)."""

    first: float
    first_period: str
    last: float
    last_period: str
    low: float
    low_period: str


NEVER = "never"  # a `first(...)` that found nothing


def _value(ev, name: str):
    """``name``'s value in ``ev`` in its display unit: a number, true/false, :data:`NEVER` or, for a
    series, its :class:`SeriesValues`."""
    if name not in ev.series:
        return NEVER if ev.is_never(name) else ev.display(name)
    from ..outputs.periods import series_values

    said = series_values(ev, name)
    return said if isinstance(said, str) else SeriesValues(*said)


def _say(v, unit: str, bold: bool = False, short: bool = False) -> str:
    """A value as the hover and the hints write it (a series: first, last and lowest, each with its
    period; ``short``, for a hint at the end of a line: ``92 … -380 kUSD, lowest -380 kUSD (month 60)``)."""
    if isinstance(v, SeriesValues) and short:
        return (f"{format_value(v.first, unit).removesuffix(' ' + unit)} … {format_value(v.last, unit)}, "
                f"lowest {format_value(v.low, unit)} ({v.low_period})")
    if isinstance(v, SeriesValues):
        b = "**" if bold else ""
        return (f"first {b}{format_value(v.first, unit)}{b} ({v.first_period}), last {b}{format_value(v.last, unit)}{b} "
                f"({v.last_period}), lowest {b}{format_value(v.low, unit)}{b} ({v.low_period})")
    if isinstance(v, str):
        return v.replace("**", "") if short else v  # a hint is plain text
    return format_value(v, unit)


# ---- the document ------------------------------------------------------------------------------

class Document:
    """One open plan: its text, its path and what the last analysis found."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text
        self.ir: Optional[ir.PlanIR] = None  # the current text's statements, when it parses
        self.ir_text = ""
        self.plan: Optional[Compiled] = None  # the last plan that loaded (maybe of an older text)
        self.plan_text: str = ""
        self.values: dict[str, dict[str, float | bool]] = {}  # scenario -> name -> value in display units
        self.values_text = ""  # the text the values are of (a keystroke's evaluation comes a pause later)
        self.diagnostics: list[Diagnostic] = []
        self.analysed = ""  # the text the diagnostics are about
        self.recovered = Recovered()  # what the last check set aside (broken and unknown names)
        self.parts = Parts()  # the statements parsed, kept by their text: a keystroke parses one again

    # ---- analysis ----------------------------------------------------------------------

    def update(self, text: str) -> list[Diagnostic]:
        """Analyse new text in full: :meth:`check` it, then :meth:`evaluate` it (values, checks)."""
        self.check(text)
        values, found = self.evaluate(self.plan, text)
        if values:
            self.values, self.values_text = values, text
        self.diagnostics = self.diagnostics + found
        return self.diagnostics

    def check(self, text: str) -> list[Diagnostic]:
        """The fast half of an analysis, on every keystroke: parse and check, each broken statement
        set aside as one diagnostic (:func:`planner.lsp.tolerant.recover`), so that the rest keeps
        its names, units and (last evaluated) values for hover, completion and definitions."""
        self.text = self.analysed = text
        name = str(self.path)
        got = recover(name, text, lambda masked: loads_compiled(masked, name, self.path.parent), self._import_of,
                      self.parts)
        self.recovered = got
        self.ir, self.ir_text = got.syntax, text
        if got.plan is not None:
            self.plan, self.plan_text = got.plan, text
        found: list[Diagnostic] = []
        for err in got.errors:
            found.extend(self._diagnostics(err))
        for warning in (getattr(got.plan, "warnings", None) or []) if got.plan is not None else []:
            found.extend(self._diagnostics(warning, severity=WARNING))  # (a unit built in now, a renamed figure)
        self.diagnostics = found
        return found

    def evaluate(self, plan: Optional[Compiled], text: str) -> tuple[dict, list[Diagnostic]]:
        """The slow half, after typing pauses: every scenario's values and the checks' failures of
        ``plan`` (the plan :meth:`check` made of ``text``). Changes nothing of the document (it runs
        beside the next keystroke's :meth:`check`): the caller keeps the values if the text is still ``text``."""
        from ..questions.every_check import run_every_check

        if plan is None:
            return {}, []
        found: list[Diagnostic] = []
        try:
            evaluations = plan.evaluate_all([None] + plan.scenario_names)
        except PlanError as err:
            return {}, self._diagnostics(err)
        values = {ev.label: {n: _value(ev, n) for n in plan.quantities} for ev in evaluations}
        try:
            results = run_every_check(plan)  # as `planner check` runs them, the probability checks too
        except PlanError as err:
            found.extend(self._diagnostics(err))
            results = []
        for r in results:
            if r.passed:
                continue
            if r.error is not None:
                found.extend(self._diagnostics(r.error, f"check failed{' in ' + r.scenario if r.scenario else ''}: "))
            else:
                found.append(Diagnostic(self._range(r.check.span), f"check fails: {r.describe()}", WARNING,
                                        "check"))
        return values, found

    @property
    def imported(self) -> set[Path]:
        """The files the last plan that loaded read besides its own text (its imports, theirs...)."""
        files = getattr(self.plan, "files", ()) if self.plan is not None else ()
        own = self.path.resolve()
        return {Path(f).resolve() for f in files} - {own}

    def imports_any(self, paths: set[Path]) -> bool:
        """Whether this plan imports one of ``paths`` (or tried to: an import that failed to load counts)."""
        if self.imported & paths:
            return True
        for s in (self.ir.statements if self.ir else ()):
            if isinstance(s, ir.Import):
                target = self.resolve_import(s.path)
                if target is None or target in paths:
                    return True
        return False

    def _range(self, span: Optional[Span]) -> Range:
        if span is not None and span.source.name == str(self.path):
            return span_range(span)
        if span is not None:  # in an imported plan: point at the import that brought it in
            at = self._import_of(span.source.name)
            if at is not None:
                return span_range(at)
        return Range((0, 0), (0, 0))

    def _import_of(self, name: str, statements=None) -> Optional[Span]:
        """The import statement (of ``statements``, else the current text's) that brings in the plan ``name``."""
        target = self._file_of(name)
        for s in (statements if statements is not None else self.ir.statements if self.ir else ()):
            if isinstance(s, ir.Import) and self.resolve_import(s.path) == target:
                return s.span
        return None

    def _diagnostics(self, err: PlanError, prefix: str = "", severity: int = ERROR) -> list[Diagnostic]:
        out = []
        for e in flatten(err):
            lines = [prefix + e.message + (f" ({e.label})" if e.label else "")]
            lines += [f"note: {n}" for n in e.notes]
            if e.hint:
                lines.append(f"help: {e.hint}")
            related = []
            if e.span is not None and e.span.source.name != str(self.path):  # in an imported plan
                lines[0] = f"in {self._file_of(e.span.source.name).name}: {lines[0]}"
                related.append((self._location(e.span), e.label or e.message))
            for label in e.labels:
                related.append((self._location(label.span), label.text or "see here"))
            out.append(Diagnostic(self._range(e.span), "\n".join(lines), severity, e.family, tuple(related)))
        return out

    # ---- files ----------------------------------------------------------------------------

    def _file_of(self, source_name: str) -> Path:
        """The file a span's source names: this document, a library plan or a path."""
        if source_name == str(self.path):
            return self.path
        if source_name.startswith("<library>/"):
            return (data_dir("library") / source_name[len("<library>/"):]).resolve()
        p = Path(source_name)
        return p.resolve() if p.is_absolute() or p.exists() else (self.path.parent / p).resolve()

    def _location(self, span: Span) -> Location:
        return Location(self._file_of(span.source.name), span_range(span))

    def resolve_import(self, name: str) -> Optional[Path]:
        """The file an import names, when it is one planner would read: inside the plan's own folder
        (or below) or the library; never a path outside them (``/etc/passwd``, ``../../x``), a symlink
        loop or something that is not a regular file."""
        lib = data_dir("library").resolve()
        try:
            here = self.path.parent.resolve()
        except (OSError, RuntimeError):
            return None
        for root in (here, lib):
            for c in (root / name, root / (name + ".plan")):
                try:
                    real = c.resolve(strict=True)
                    if real.is_file() and (real.is_relative_to(root) or real.is_relative_to(lib)):
                        return real
                except (OSError, RuntimeError, ValueError):  # missing, a loop of links, a bad name
                    continue
        return None

    # ---- what is under the cursor ------------------------------------------------------------

    def word_at(self, line: int, character: int) -> Optional[tuple[str, int, int]]:
        """The (dotted) name under a position, with its offsets; None in a comment or a string."""
        at = offset(self.text, line, character)
        start = self.text.rfind("\n", 0, at) + 1
        end = self.text.find("\n", at)
        end = len(self.text) if end < 0 else end
        row = self.text[start:end]
        col = at - start
        if _in_comment_or_string(row, col):
            return None
        for m in NAME.finditer(row):
            if m.start() <= col <= m.end():
                word = m.group()
                if m.start() > 0 and row[m.start() - 1].isdigit():
                    continue
                return word, start + m.start(), start + m.end()
        return None

    def _lookup(self, word: str) -> Optional[str]:
        """The quantity, function, scenario or unit a word names (trying a dotted name's prefixes)."""
        plan = self.plan
        if plan is None:
            return None
        parts = word.split(".")
        for n in range(len(parts), 0, -1):
            cand = ".".join(parts[:n])
            if cand in plan.quantities or cand in plan.model.functions or cand in plan.model.scenarios \
                    or cand in plan.model.axes or cand in self._answers():
                return cand
        return None

    def _answers(self) -> dict[str, ir.Statement]:
        out = {}
        if self.plan is not None:
            for s in self.plan.model.solves + self.plan.model.optimizes:
                if s.alias:
                    out[s.alias] = s
        return out

    # ---- hover ----------------------------------------------------------------------------------

    def hover(self, line: int, character: int) -> Optional[tuple[str, Range]]:
        """Markdown for the name under the cursor: values per scenario with unit, doc, tags, formula."""
        found = self.word_at(line, character)
        if found is None:
            return None
        word, a, b = found
        name = self._lookup(word)
        rng = Range(position(self.text, a), position(self.text, b))
        plan = self.plan
        if name is None and word in FUNCTIONS:
            f = FUNCTIONS[word]
            excel = f"; Excel's `{f.excel}`" if f.excel else ""
            return f"**{word}** (built-in function{excel})\n\n```plan\n{word}({f.signature})\n```\n\n{f.doc}", rng
        if name is None and plan is not None and plan.model.periods is not None and word in ("previous", "period"):
            detail = next(d for w, _, d in _SERIES_WORDS if w == word)  # a word of a plan with periods
            return f"**{word}** (series over periods)\n\n{detail}; the plan's periods are " \
                   f"`{plan.model.periods.values.span.flat}`", rng
        if name is None:
            unit = _unit_word(word, self.text, a)
            if unit:
                return self._hover_unit(unit), rng
            set_aside = self._hover_set_aside(word)
            return (set_aside, rng) if set_aside else None
        if name in plan.quantities:
            return self._hover_quantity(name), rng
        if name in plan.model.functions:
            f = plan.model.functions[name]
            head = f"{name}({', '.join(p.span.flat for p in f.params)})"
            text = f"```plan\n{head} = {f.body.span.flat}" + (f" -> {f.display.text}" if f.display else "") + "\n```"
            if f.doc:
                text += f"\n\n{f.doc}"
            return f"**{name}** (function)\n\n{text}" + self._where(f.span), rng
        if name in plan.model.scenarios:
            sm = plan.model.scenarios[name]
            rows = [f"| `{o.name}` | {o.expr.span.flat} |" for o in sm.scenario.overrides]
            axis = f" of axis `{sm.axis}`" if sm.axis else ""
            doc = f"\n\n{sm.scenario.doc}" if sm.scenario.doc else ""
            table = "\n\n| input | value |\n|---|---|\n" + "\n".join(rows) if rows else ""
            return f"**{name}** (scenario{axis}){doc}{table}" + self._where(sm.scenario.span), rng
        if name in plan.model.axes:
            return f"**{name}** (axis): " + ", ".join(f"`{m}`" for m in plan.model.axes[name]), rng
        stmt = self._answers()[name]
        return f"**{name}**: the answer of `{stmt.span.flat}`" + self._where(stmt.span), rng

    def _set_aside(self, word: str) -> Optional[ir.Statement]:
        """The statement of the current text that defines ``word`` but was set aside (broken, or using a broken name)."""
        if word not in self.recovered.broken and word not in self.recovered.unknown:
            return None
        return next((s for s in self._statements() if getattr(s, "name", None) == word), None)

    def _broken_line(self, word: str) -> Optional[int]:
        """The line (0-based) where a statement that does not parse would define ``word``."""
        if word not in self.recovered.broken:
            return None
        m = re.search(rf"(?m)^{re.escape(word)}[ \t]*(?:=|\()", self.text)
        return None if m is None else self.text.count("\n", 0, m.start())

    def _hover_set_aside(self, word: str) -> Optional[str]:
        s = self._set_aside(word)
        if s is None:  # a statement that does not parse: what is wrong with it, and where
            line = self._broken_line(word)
            if line is None:
                return None
            return (f"**{word}** (unknown: its definition has an error: {self.recovered.broken[word].message})"
                    f"\n\n*defined in this plan, line {line + 1}*")
        if word in self.recovered.broken:
            why = "its definition has an error: " + self.recovered.broken[word].message
        else:
            why = f"it depends on `{self.recovered.unknown[word]}`, whose definition has an error"
        formula = ""
        if isinstance(s, ir.Definition):
            display = f" -> {s.display.text}" if s.display else ""
            formula = f"\n\n```plan\n{word} = {s.expr.span.flat}{display}\n```"
            if s.doc:
                formula = f"\n\n{s.doc}" + formula
        return f"**{word}** (unknown: {why})" + formula + self._where(s.span)

    def _hover_quantity(self, name: str) -> str:
        plan = self.plan
        q = plan.quantities[name]
        kind = "input" if q.is_input else "series" if q.per_period else "derived"
        unit = f", {q.unit_text}" if q.unit_text else ""
        parts = [f"**{name}** ({kind}{unit})"]
        if q.doc:
            parts.append(q.doc)
        labels = self._shown_cases()
        if self.values and all(name in self.values.get(s, {}) for s in labels):
            shown = {s: _say(self.values[s][name], q.unit_text, bold=True) for s in labels}
            if len(set(shown.values())) == 1:
                every = " in every scenario" if len(labels) > 1 else ""
                value = shown[labels[0]]
                parts.append(f"{value}{every}" if q.per_period else f"= **{value}**{every}")
            else:
                rows = "\n".join(f"| {s} | {v} |" for s, v in shown.items())
                parts.append(f"| scenario | value |\n|---|--:|\n{rows}")
            if self.values_text != self.text:  # evaluated before the last edit: the new values follow a pause
                parts.append("*(as evaluated before the last edit: updating)*")
        display = f" -> {q.definition.display.text}" if q.definition.display else ""
        keyword = "series " if isinstance(q.definition.expr, ir.Series) else ""
        parts.append(f"```plan\n{keyword}{name} = {q.formula}{display}\n```")
        extra = []
        if q.tags:
            extra.append("tags: " + ", ".join(f"`{t}`" for t in q.tags))
        if q.definition.constraints:
            extra.append("where " + ", ".join(f"`{c.span.flat}`" for c in q.definition.constraints))
        if extra:
            parts.append("  \n".join(extra))
        return "\n\n".join(parts) + self._where(q.definition.span)

    def _shown_cases(self) -> list[str]:
        """The cases a hover lists, as `--scenario all` shows them: the plan as written, then each scenario;
        the plan as written left out where a scenario is that case already (or an axis grid has it)."""
        from ..questions.every_answer import written_is_own_case

        names = self.plan.scenario_names
        return (["base"] if not names or written_is_own_case(self.plan) else []) + names

    def _hover_unit(self, name: str) -> str:
        unit = self.plan.model.units.lookup(name) if self.plan is not None else BUILTIN_UNITS.get(name)
        if unit is None:
            return ""
        base = str(unit.dim) if not unit.dim.dimensionless else "1"
        scale = format(float(unit.scale), ".6g")
        what = unit.dim.describe()
        return f"**{name}** (unit): 1 {name} = {scale} {base}".rstrip() + f" ({what})"

    def _where(self, span: Span) -> str:
        path = self._file_of(span.source.name)
        where = path.name if path != self.path else "this plan"
        return f"\n\n*defined in {where}, line {span.line}*"

    # ---- definitions ------------------------------------------------------------------------------

    def definition(self, line: int, character: int) -> Optional[Location]:
        at = offset(self.text, line, character)
        target = self._import_target(at)
        if target is not None:
            return Location(target, Range((0, 0), (0, 0)))
        found = self.word_at(line, character)
        if found is None:
            return None
        name = self._lookup(found[0])
        plan = self.plan
        span = None
        if name is None:
            unit = _unit_word(found[0], self.text, found[1])
            span = self._unit_decls().get(unit) if unit else None
        elif name in plan.quantities:
            span = plan.quantities[name].definition.name_span
        elif name in plan.model.functions:
            span = plan.model.functions[name].name_span
        elif name in plan.model.scenarios:
            span = plan.model.scenarios[name].scenario.name_span
        elif name in plan.model.axes:
            span = next(s.name_span for s in plan.model.plan.statements if isinstance(s, ir.Axis) and s.name == name)
        elif name in self._answers():
            span = self._answers()[name].span
        if span is None:
            s = self._set_aside(found[0].split(".")[0]) if name is None else None
            span = getattr(s, "name_span", None)
        if span is None and name is None:  # a statement that does not parse: its name at the margin
            word = found[0].split(".")[0]
            line = self._broken_line(word)
            if line is not None:
                return Location(self._file_of(str(self.path)), Range((line, 0), (line, len(word))))
        if span is None:
            return None
        return self._current(span)

    def _current(self, span: Span) -> Location:
        """A location in this plan as it is now (the last plan that loaded may be of older text)."""
        if span.source.name == str(self.path) and self.ir is not None and span.source.text != self.text:
            fresh = {getattr(s, "name", None): s for s in self._statements()}
            name = span.text
            s = fresh.get(name)
            if s is not None and hasattr(s, "name_span"):
                span = s.name_span
        return self._location(span)

    def _statements(self) -> Iterator[ir.Statement]:
        for s in (self.ir.statements if self.ir else ()):
            yield s
            if isinstance(s, ir.Axis):
                yield from s.members

    def _unit_decls(self) -> dict[str, Span]:
        if self.plan is None:
            return {}
        return {s.name: s.name_span for s in self.plan.model.plan.statements if isinstance(s, ir.UnitDecl)}

    def _import_target(self, at: int) -> Optional[Path]:
        for s in (self.ir.statements if self.ir else ()):
            if isinstance(s, ir.Import) and s.span.start <= at <= s.span.end:
                quoted = s.span.text.find('"')
                start = s.span.start + quoted
                end = s.span.text.find('"', quoted + 1) + s.span.start
                if start <= at <= end:
                    return self.resolve_import(s.path)
        return None

    # ---- completion ----------------------------------------------------------------------------------

    def complete(self, line: int, character: int) -> list[Completion]:
        at = offset(self.text, line, character)
        start = self.text.rfind("\n", 0, at) + 1
        before = self.text[start:at]
        if _in_comment(before):
            return []
        m = re.search(r'^\s*(import|from)\s+"([^"]*)$', before)
        if m:
            return self._complete_paths(m.group(2))
        if _open_string(before):
            return []
        if re.search(r"@\"?[\w/]*$", before):
            return self._complete_scenarios(quoted='@"' in before[-40:])
        m = re.search(r"(?:^|[\s,])([^\W\d]\w*)=([\w]*)$", before)
        if m and self.plan is not None and m.group(1) in self.plan.model.axes:
            return [Completion(x, "scenario", f"member of axis {m.group(1)}") for x in
                    self.plan.model.axes[m.group(1)] + ["all"]]
        after_number = r"(?<![\w.])\d[\d_]*(\.\d+)?([eE][+-]?\d+)?[ \t]+[\w/*^]*$"
        if re.search(r"->\s*[\w/*^%·-]*$", before) or re.search(after_number, before):
            return self._complete_units()
        if re.search(r"^\s*(check|sweep|solve|maximize|minimize)\b.*\b(in|for)\s+(\S+,\s*)*[\w\"/]*$", before) \
                and not re.search(r"^\s*(sweep|maximize|minimize)\b.*\b\w+\s+in\s+[^,]*$", before):
            return self._complete_picks()
        m = re.search(r"([^\W\d]\w*(?:\.[^\W\d]\w*)*)\.(\w*)$", before)
        if m:
            return self._complete_members(m.group(1))
        own = re.match(r"\s*([^\W\d]\w*)\s*(?:\([^)]*\))?\s*=(?!=)", before)
        if own:  # in a definition's formula: not its own name (that would be a cycle)
            return [c for c in self._complete_names() if c.label != own.group(1)]
        return self._complete_names()

    def typed(self, line: int, character: int) -> Range:
        """What a completion at a position replaces: the path typed since the quote of an import, else
        the name (its last part, after a dot) typed before the cursor."""
        at = offset(self.text, line, character)
        start = self.text.rfind("\n", 0, at) + 1
        before = self.text[start:at]
        m = re.search(r'^\s*(?:import|from)\s+"([^"]*)$', before) or re.search(r"(\w*)$", before)
        return Range(position(self.text, at - len(m.group(1))), position(self.text, at))

    def _complete_paths(self, typed: str) -> list[Completion]:
        out = []
        lib = data_dir("library")
        for p in sorted(lib.rglob("*.plan")):
            rel = str(p.relative_to(lib))
            out.append(Completion(rel, "file", "planner's library", _first_title(p)))
        for p in sorted(self.path.parent.rglob("*.plan")):
            if p.resolve() == self.path.resolve() or len(p.relative_to(self.path.parent).parts) > 3:
                continue
            rel = str(p.relative_to(self.path.parent))
            out.append(Completion(rel, "file", "next to this plan", _first_title(p)))
        return out

    def _complete_scenarios(self, quoted: bool = False) -> list[Completion]:
        if self.plan is None:
            return []
        out = [Completion("base", "scenario", "the plan as written")]
        for name, sm in self.plan.model.scenarios.items():
            label = name if "/" not in name or quoted else f'"{name}"'
            out.append(Completion(label, "scenario", f"axis {sm.axis}" if sm.axis else "scenario",
                                  sm.scenario.doc or ""))
        return out

    def _complete_picks(self) -> list[Completion]:
        out = [Completion("all", "keyword", "every scenario")]
        out += [c for c in self._complete_scenarios() if "/" not in c.label]
        if self.plan is not None:
            out += [Completion(f"{a}=", "axis", "axis: " + ", ".join(ms)) for a, ms in self.plan.model.axes.items()]
        return out

    def _complete_units(self) -> list[Completion]:
        table = self.plan.model.units.units if self.plan is not None else BUILTIN_UNITS
        out = []
        for name, unit in table.items():
            base = str(unit.dim) if not unit.dim.dimensionless else "1"
            out.append(Completion(name, "unit", f"{format_value(float(unit.scale))} {base}".strip(),
                                  unit.dim.describe(), sort=f"{len(name):02d}{name}"))
        return out

    def _complete_members(self, prefix: str) -> list[Completion]:
        names = [c for c in self._complete_names() if c.label.startswith(prefix + ".")]
        out = [dataclasses.replace(c, label=c.label[len(prefix) + 1:], insert=None) for c in names]
        known = {c.label for c in out}
        for name, kind, doc, where in self._exported(prefix):  # what the plan does not use yet
            if name not in known:
                out.append(Completion(name, kind, f"in {where}", doc, sort=f"2{name}"))
        return out

    def _exported(self, alias: str) -> list[tuple[str, str, str, str]]:
        """Every quantity and function of the file ``import "..." as alias`` names (the plan holds only
        those it uses): (name, kind, doc, the file as the import writes it)."""
        path = next((s.path for s in self._statements() if isinstance(s, ir.Import) and s.alias == alias), None)
        real = self.resolve_import(path) if path is not None else None
        if real is None:
            return []
        try:
            stamp = real.stat().st_mtime_ns
            key = (real, stamp)
            if key not in _EXPORTED:
                parsed = lower(Source(str(real), real.read_text(encoding="utf-8")))
                if len(_EXPORTED) > 64:  # (files edited many times: keep the newest only)
                    _EXPORTED.clear()
                _EXPORTED[key] = [(s.name, "function" if isinstance(s, ir.FunctionDef) else
                                   "input" if s.is_input else "quantity", s.doc or "")
                                  for s in parsed.statements if isinstance(s, (ir.Definition, ir.FunctionDef))]
        except (OSError, UnicodeDecodeError, PlanError):
            return []
        return [(n, k, d, path) for n, k, d in _EXPORTED[key]]

    def _complete_names(self) -> list[Completion]:
        out = []
        plan = self.plan
        if plan is not None:
            for name in plan.display_order():
                q = plan.quantities[name]
                value = ""
                if self.values.get("base") and name in self.values["base"]:
                    value = " = " + _say(self.values["base"][name], q.unit_text)
                out.append(Completion(name, "input" if q.is_input else "quantity",
                                      ("input" if q.is_input else "derived") + value, q.doc or "",
                                      sort=f"1{name}"))
            for name in plan.series_order():
                value = self.values.get("base", {}).get(name)
                out.append(Completion(name, "quantity", "series" + (f" = {_say(value, plan.quantities[name].unit_text)}"
                                                                    if value is not None else ""),
                                      plan.quantities[name].doc or "", sort=f"1{name}"))
            for name, f in plan.model.functions.items():
                params = ", ".join(p.name for p in f.params)
                out.append(Completion(name, "function", f"{name}({params})", f.doc or "", f"{name}($1)",
                                      sort=f"2{name}"))
            for name in self._answers():
                out.append(Completion(name, "quantity", "an answer", sort=f"3{name}"))
        known = {c.label for c in out}
        for s in self._statements():  # what the current text defines that the plan does not have (yet)
            if isinstance(s, (ir.Definition, ir.FunctionDef)) and s.name not in known:
                kind = "function" if isinstance(s, ir.FunctionDef) else "quantity"
                detail = "unknown: its definition has an error" if s.name in self.recovered.broken else \
                    "unknown until the error it depends on is fixed" if s.name in self.recovered.unknown else "defined"
                out.append(Completion(s.name, kind, detail, sort=f"1{s.name}"))
                known.add(s.name)
        for name, f in FUNCTIONS.items():
            out.append(Completion(name, "function", f"{name}({f.signature})", f.doc, f"{name}($1)", sort=f"4{name}"))
        for word in grammar_words():
            out.append(Completion(word, "keyword", sort=f"5{word}"))
        periods = self.plan.model.periods is not None if self.plan is not None else \
            re.search(r"^\s*periods\s*=", self.text, re.M) is not None
        for word, call, detail in _SERIES_WORDS if periods else ():  # names, not reserved: no keyword lists them
            if word not in known:
                out.append(Completion(word, "keyword", detail, insert=f"{word}($1)" if call else None, sort=f"4{word}"))
        return out

    # ---- quick fixes and inlay hints --------------------------------------------------------------

    def code_actions(self, diagnostics: list[tuple[Range, str, str]]) -> list[tuple[str, list[tuple[Range, str]], int]]:
        """Quick fixes for the given diagnostics ((range, message, code) each, as the client sent them
        back): (title, edits, index of the diagnostic fixed). Each fix is what the message's help says."""
        out = []
        for i, (rng, message, code) in enumerate(diagnostics):
            a = offset(self.text, *rng.start)
            b = offset(self.text, *rng.end)
            m = re.search(r"help: did you mean `([^`]+)`\?", message)
            if m and code in ("unknown-name", "unknown-unit"):
                out.append((f"Change to `{m.group(1)}`", [(rng, m.group(1))], i))
            m = re.search(r"write `(\d[\d_]*(?:\.\d+)?)`", message)
            if m and code == "syntax" and "grouped with `_`" in message:
                start = a
                while start > 0 and (self.text[start - 1].isdigit() or self.text[start - 1] in "_."):
                    start -= 1
                end = start + len(m.group(1))
                grouped = self.text[start:end]
                if grouped.replace(",", "_") == m.group(1):
                    out.append((f"Write `{m.group(1)}`", [(Range(position(self.text, start),
                                                                   position(self.text, end)), m.group(1))], i))
            m = re.match(r"unknown unit `([^`]+)`", message)
            if m and code == "unknown-unit" and IDENTIFIER.match(m.group(1)):
                at = self._declaration_line()
                out.append((f"Declare `unit {m.group(1)}` (a new dimension)",
                            [(Range((at, 0), (at, 0)), f"unit {m.group(1)}\n")], i))
            if code in ("duplicate", "compat") and ("already a built-in unit" in message
                                                    or re.search(r"help: remove `unit \w+`|remove the declaration to use the built-in", message)):
                start = self.text.rfind("\n", 0, a) + 1
                end = self.text.find("\n", b)
                end = len(self.text) if end < 0 else end + 1
                if self.text[start:end].lstrip().startswith("unit "):
                    out.append(("Remove the declaration (use the built-in unit)",
                                [(Range(position(self.text, start), position(self.text, end)), "")], i))
            m = re.search(r"help: a unit of [\w ]+, such as `([^`]+)`", message)
            if m and code == "display-unit" and self.text[a:b].strip():
                out.append((f"Show it in `{m.group(1)}`", [(rng, m.group(1))], i))
        return out

    def unit_actions(self, first: int, last: int) -> list[tuple[str, list[tuple[Range, str]]]]:
        """``Add `-> unit``` for each formula on lines ``first``..``last`` that is shown in the unit
        planner chose for it (no ``-> unit`` written): the unit it is shown in now, written down, so
        that a change elsewhere cannot change how it is shown."""
        self._fresh()
        out = []
        plan = self.plan
        if plan is None or self.ir is None:
            return out
        for s in self.ir.statements:
            if not isinstance(s, ir.Definition) or s.display is not None:
                continue
            r = span_range(s.span)
            q = plan.quantities.get(s.name)
            if r.end[0] < first or r.start[0] > last or q is None or q.is_input or not q.unit_text \
                    or s.name in self.recovered.broken or s.name in self.recovered.unknown:
                continue
            end = s.expr.span.end
            while self.text[s.name_span.end:end].count("(") > self.text[s.name_span.end:end].count(")"):
                close = self.text.find(")", end)  # (a formula in brackets: its span is inside them)
                if close < 0:
                    break
                end = close + 1
            at = position(self.text, end)
            out.append((f"Add `-> {q.unit_text}` to `{s.name}`", [(Range(at, at), f" -> {q.unit_text}")]))
        return out

    def _declaration_line(self) -> int:
        """Where a new declaration goes: after the title, the notes and the imports at the top."""
        line = 0
        for s in (self.ir.statements if self.ir else ()):
            if isinstance(s, (ir.Import, ir.UnitDecl)):
                line = max(line, span_range(s.span).end[0] + 1)
            else:
                break
        if line == 0:
            for i, row in enumerate(self.text.split("\n")):
                if re.match(r"\s*(title|note)\b|\s*#|\s*$", row):
                    line = i + 1 if re.match(r"\s*(title|note)\b", row) else line
                else:
                    break
        return line

    def inlay_hints(self, first: int, last: int) -> list[tuple[tuple[int, int], str, str]]:
        """A hint at the end of each definition of lines ``first``..``last``: its value and unit in the
        plan as written (``= 41.79 ms``), or per scenario when they differ (the tooltip)."""
        if self.plan is None or not self.values or self.ir is None:
            return []
        base = self.values.get("base") or next(iter(self.values.values()))
        out = []
        for s in self.ir.statements:
            if not isinstance(s, ir.Definition) or s.name not in self.plan.quantities or s.name not in base:
                continue
            end = span_range(s.expr.span if s.display is None else s.display.span).end
            if end[0] < first or end[0] > last:
                continue
            q = self.plan.quantities[s.name]
            if isinstance(s.expr, ir.Number) and not q.definition.display:
                continue  # an input written as its value: the hint would repeat it
            text = _say(base[s.name], q.unit_text, short=True)
            labels = ["base"] + [lab for lab in self.plan.scenario_names if lab != "base"]
            per = [f"{lab}: {_say(self.values[lab][s.name], q.unit_text)}" for lab in labels
                   if lab in self.values and s.name in self.values[lab]]
            tooltip = "\n".join(per) if len({p.split(': ', 1)[1] for p in per}) > 1 else ""
            out.append((end, f" = {text}" + (" (varies by scenario)" if tooltip else ""), tooltip))
        return out

    # ---- signature help, highlights, folding ----------------------------------------------------------

    def signature(self, line: int, character: int) -> Optional[tuple[str, list[str], int, str]]:
        """The call the cursor is in: (label ``f(a, b)``, its parameters, the one being typed, doc)."""
        at = offset(self.text, line, character)
        depth, comma, i = 0, 0, at - 1
        start = max(0, self.text.rfind("\n", 0, max(0, at - 2000)))
        while True:  # the innermost open `(` that follows a name: a grouping `(` is passed out of
            while i >= start:
                ch = self.text[i]
                if ch == ")":
                    depth += 1
                elif ch == "(":
                    if depth == 0:
                        break
                    depth -= 1
                elif ch == "," and depth == 0:
                    comma += 1
                i -= 1
            else:
                return None
            m = re.search(r"([^\W\d]\w*(?:\.[^\W\d]\w*)*)\s*$", self.text[max(0, i - 200):i])
            if m is not None:
                break
            comma, i = 0, i - 1  # `max((a + b|`: the call around the parenthesis, at its own argument
        name = m.group(1)
        functions = self.plan.model.functions if self.plan is not None else {}
        own = {s.name: s for s in self._statements() if isinstance(s, ir.FunctionDef)}
        f = functions.get(name) or own.get(name)
        if f is not None:
            params = [p.span.flat for p in f.params]
            return f"{name}({', '.join(params)})", params, min(comma, max(0, len(params) - 1)), f.doc or ""
        if name in FUNCTIONS:
            f = FUNCTIONS[name]
            params = [p for p in f.params if p != "..."]
            return f"{name}({f.signature})", params, min(comma, max(0, len(params) - 1)), f.doc
        return None

    def highlights(self, line: int, character: int) -> list[tuple[Range, bool]]:
        """Every place the name under the cursor is written in this plan: (range, is it the definition)."""
        try:
            name = self._own_name(line, character)
        except RenameError:
            return []
        defined = {s.name_span.start for s in self._statements() if isinstance(s, (ir.Definition, ir.FunctionDef))
                   and s.name == name}
        return [(span_range(s), s.start in defined) for s in self._occurrences(name)]

    def folding(self) -> list[tuple[int, int]]:
        """Line ranges that fold: scenario and axis blocks, statements over several lines, comment runs."""
        out = []
        for s in (self.ir.statements if self.ir else ()):
            r = span_range(s.span)
            if r.end[0] > r.start[0]:
                out.append((r.start[0], r.end[0]))
        rows = self.text.split("\n")
        i = 0
        while i < len(rows):
            if rows[i].lstrip().startswith("#"):
                j = i
                while j + 1 < len(rows) and rows[j + 1].lstrip().startswith("#"):
                    j += 1
                if j > i:
                    out.append((i, j))
                i = j + 1
            else:
                i += 1
        return sorted(set(out))

    def semantic_tokens(self) -> list[int]:
        """The whole document's semantic tokens, encoded as LSP wants them (five numbers a token:
        line and start relative to the token before, length, type and modifiers as indices and bits of
        :data:`TOKEN_TYPES` and :data:`TOKEN_MODIFIERS`). Names, functions, parameters and units come from
        the statements that parse; comments, strings, numbers and the grammar's words from the text,
        so a broken statement is still coloured word by word."""
        self._fresh()
        found: dict[int, tuple[int, int, int]] = {}  # start -> (end, type, modifiers)

        def put(start: int, end: int, kind: str, *mods: str) -> None:
            if end > start and start not in found:
                found[start] = (end, TOKEN_TYPES.index(kind),
                                sum(1 << TOKEN_MODIFIERS.index(m) for m in mods))

        user_functions = {s.name for s in self._statements() if isinstance(s, ir.FunctionDef)}
        for statement in (self.ir.statements if self.ir else ()):
            params = {p.name for p in statement.params} if isinstance(statement, ir.FunctionDef) else set()
            for x in ir.nodes(statement):
                if isinstance(x, ir.Definition):
                    put(x.name_span.start, x.name_span.end, "variable", "declaration")
                elif isinstance(x, ir.FunctionDef):
                    put(x.name_span.start, x.name_span.end, "function", "declaration")
                    for p in x.params:
                        put(p.span.start, p.span.start + len(p.name), "parameter", "declaration")
                elif isinstance(x, ir.UnitDecl):
                    put(x.name_span.start, x.name_span.end, "type", "declaration")
                elif isinstance(x, (ir.Override, ir.SweepAxis)):
                    put(x.name_span.start, x.name_span.end, "variable")
                elif isinstance(x, ir.Name):
                    put(x.span.start, x.span.end, "parameter" if x.name in params else "variable")
                elif isinstance(x, ir.ScenarioRef):  # `step@bf16`: the quantity (the scenario is no token type)
                    put(x.span.start, x.span.start + len(x.name), "variable")
                elif isinstance(x, (ir.Solve, ir.Optimize)):  # the input solved for, and the answer's name
                    named = x.target_span if isinstance(x, ir.Solve) else x.over_span
                    put(named.start, named.end, "variable")
                    for _, alias, _ in ir.defines(x):
                        put(alias.start, alias.end, "variable", "declaration")
                elif isinstance(x, ir.Call):
                    mods = () if x.func in user_functions or x.func not in FUNCTIONS else ("defaultLibrary",)
                    put(x.name_span.start, x.name_span.end, "function", *mods)
                elif isinstance(x, ir.UnitFactor):
                    put(x.span.start, x.span.start + len(x.name), "type")
                elif isinstance(x, ir.Number):
                    m = _NUMBER.match(self.text, x.span.start)
                    if m:
                        put(m.start(), m.end(), "number")
        words = set(grammar_words())
        for m in _LEXEMES.finditer(self.text):
            kind = m.lastgroup
            if kind == "word":
                if m.group() in words:
                    put(m.start(), m.end(), "keyword")
            elif kind == "number":
                put(m.start(), m.end(), "number")
            else:
                put(m.start(), m.end(), kind)
        out: list[int] = []
        last_line = last_char = 0
        reached = 0
        line, line_start, counted = 0, 0, 0  # the lines counted up to offset `counted`
        for start in sorted(found):
            end, kind, mods = found[start]
            if start < reached:  # inside a token before (`count` in `gpu.count`)
                continue
            reached = end
            line += self.text.count("\n", counted, start)
            if line:
                line_start = self.text.rfind("\n", 0, start) + 1
            counted = start
            char = units(self.text[line_start:start])
            row = line
            for k, piece in enumerate(self.text[start:end].split("\n")):  # a token is on one line
                if k:
                    row, char = row + 1, 0
                if not piece:
                    continue
                out += [row - last_line, char - last_char if row == last_line else char, units(piece), kind, mods]
                last_line, last_char = row, char
        return out

    def format_range(self, start: tuple[int, int], end: tuple[int, int]) -> Optional[tuple[Range, str]]:
        """The edit that lays out the whole statements the range touches as ``planner fmt`` does:
        as in the whole plan formatted when it parses (the columns line up with the statements
        around), else those statements formatted on their own. None when they do not parse."""
        from ..language.format import format_text
        from .tolerant import statements

        original = self.text  # (read once: the server runs this off its loop, while typing goes on)
        text = original.replace("\r\n", "\n")
        a, b = offset(text, *start), offset(text, *end)
        found = statements(text)
        touched = [k for k, (s, e) in enumerate(found) if s < max(b, a + 1) and e > a]
        if not touched:
            return None
        first, last = touched[0], touched[-1]
        lo, hi = found[first][0], found[last][1]
        try:
            whole = format_text(text, str(self.path))
        except PlanError:
            whole = None
        new = None
        if whole is not None:
            formatted = statements(whole)
            if len(formatted) == len(found):
                new = whole[formatted[first][0]:formatted[last][1]]
        if new is None:
            try:
                new = format_text(text[lo:hi], str(self.path))
            except PlanError:
                return None
        if not text[lo:hi].endswith("\n"):
            new = new.rstrip("\n")
        if "\r\n" in original:
            new = new.replace("\n", "\r\n")
            lo, hi = lo + text.count("\n", 0, lo), hi + text.count("\n", 0, hi)  # (offsets of the CRLF text)
        return Range(position(original, lo), position(original, hi)), new

    def workspace_symbols(self) -> list[tuple[str, str, Location, str]]:
        """(name, kind, location, container) of this plan's definitions and those of every plan it imports."""
        out = [(s.name, s.kind, Location(self.path, s.selection), self.path.name) for s in self.symbols()
               if s.kind not in ("check", "question")]
        plan = self.plan
        if plan is not None:
            for name, q in plan.quantities.items():
                span = q.definition.name_span
                if span.source.name != str(self.path):
                    loc = self._location(span)
                    out.append((name, "input" if q.is_input else "quantity", loc, loc.path.name))
            for name, f in plan.model.functions.items():
                if f.name_span.source.name != str(self.path):
                    loc = self._location(f.name_span)
                    out.append((name, "function", loc, loc.path.name))
        return out

    def answers(self, plan: Optional[Compiled]) -> list[tuple[Range, str]]:
        """A code lens per question (``solve``, ``maximize``, ``minimize``): its answer in each scenario,
        or why it has none. Slow (it solves): the server runs it on the evaluation worker."""
        if plan is None:
            return []
        try:
            found = Plan(plan).solve()
        except PlanError as err:
            return [(Range((0, 0), (0, 0)), f"no answers: {err.message}")]
        by_question: dict[str, list[str]] = {}
        for r in found.rows:
            answer = str(r.value) + (f" ({r.optimum} at the optimum)" if r.optimum is not None else "")
            by_question.setdefault(r.question, []).append(answer if r.scenario == "base" else f"{r.scenario}: {answer}")
        out = []
        errors = list(found.errors)
        for s in (self.ir.statements if self.ir else ()):
            if not isinstance(s, (ir.Solve, ir.Optimize)):
                continue
            rng = span_range(s.span)
            if ir.question_text(s) in by_question:
                shown = by_question[ir.question_text(s)]
                text = ("= " if len(shown) == 1 else "") + ", ".join(shown[:6]) + (" ..." if len(shown) > 6 else "")
                out.append((Range(rng.start, rng.start), text))
            else:
                why = next((e.message for e in errors if e.span is not None and e.span.start == s.span.start), None)
                out.append((Range(rng.start, rng.start), f"no answer: {why}" if why else "no answer"))
        return out

    # ---- symbols ----------------------------------------------------------------------------------

    def symbols(self) -> list[Symbol]:
        if self.ir is None:
            return []
        out = []
        for s in self.ir.statements:
            sym = _symbol(s)
            if sym is not None:
                out.append(sym)
        return out

    # ---- rename and references ----------------------------------------------------------------------

    def references(self, line: int, character: int) -> list[Range]:
        name = self._own_name(line, character)
        return [span_range(s) for s in self._occurrences(name)]

    def prepare_rename(self, line: int, character: int) -> tuple[Range, str]:
        name = self._own_name(line, character)
        found = self.word_at(line, character)
        a = found[1]
        return Range(position(self.text, a), position(self.text, a + len(name))), name

    def rename(self, line: int, character: int, new: str) -> list[tuple[Range, str]]:
        old = self._own_name(line, character)
        if not IDENTIFIER.match(new):
            raise RenameError(f"`{new}` is not a name: a letter or `_`, then letters, digits or `_`")
        if new in keywords():
            raise RenameError(f"`{new}` is a keyword of the language")
        taken = self._defined_names()
        if new != old and new in taken:
            raise RenameError(f"`{new}` is already defined in this plan")
        for f in self.ir.statements:
            if isinstance(f, ir.FunctionDef) and any(p.name == new for p in f.params) and _mentions(f, old):
                raise RenameError(f"`{new}` is a parameter of `{f.name}`, whose body uses `{old}`: "
                                  "the body would mean the parameter")
        return [(span_range(s), new) for s in self._occurrences(old)]

    def _fresh(self) -> None:
        """The statements of the text as it is now (renames edit this text, not the last analysed one)."""
        if self.ir is None or self.ir_text != self.text:
            got = parse_tolerant(str(self.path), self.text, self.parts)
            self.ir, self.ir_text = got.syntax, self.text
            self.recovered = dataclasses.replace(self.recovered, blanked=got.blanked)

    def _own_name(self, line: int, character: int) -> str:
        self._fresh()
        if self.ir is None:
            raise RenameError("the plan does not parse: fix the syntax error first")
        found = self.word_at(line, character)
        if found is None:
            raise RenameError("no name here")
        word = found[0]
        own = {s.name: s for s in self.ir.statements if isinstance(s, (ir.Definition, ir.FunctionDef))}
        at = offset(self.text, line, character)
        head = word[:word.find(".", at - found[1])] if "." in word[at - found[1]:] else word
        if head in own:
            return head
        if word in own:
            return word
        if self.plan is not None and (word in self.plan.quantities or head in self.plan.quantities):
            name = word if word in self.plan.quantities else head
            where = self._file_of(self.plan.quantities[name].definition.span.source.name)
            raise RenameError(f"`{name}` is defined in {where.name}: rename it there")
        raise RenameError(f"`{word}` is not a quantity or function of this plan")

    def _defined_names(self) -> set[str]:
        names = {s.name for s in self._statements() if isinstance(s, (ir.Definition, ir.FunctionDef, ir.UnitDecl))}
        if self.plan is not None:
            names |= set(self.plan.quantities) | set(self.plan.model.functions) | set(self._answers())
        return names

    def _occurrences(self, name: str) -> list[Span]:
        """Every place the current text names ``name`` (a quantity or function of its own)."""
        out: list[Span] = []
        for s in self.ir.statements:
            if isinstance(s, ir.FunctionDef):
                if s.name == name:
                    out.append(s.name_span)
                if any(p.name == name for p in s.params):
                    continue  # a parameter of the same name hides it in this function
            out.extend(_mentions(s, name))
        source = self.ir.statements[0].span.source if self.ir.statements else Source(str(self.path), self.text)
        for a, b in self.recovered.blanked:  # statements that do not parse: their text, word by word
            out.extend(Span(Source(source.name, self.text), x, y) for x, y in words_in(self.text, a, b, name))
        return sorted(set(out), key=lambda sp: sp.start)


# Each node that names a quantity or function: the field of the name and that of the span it is written at.
_NAMED_AT = {ir.Definition: ("name", "name_span"), ir.Name: ("name", "span"), ir.Call: ("func", "name_span"),
             ir.Override: ("name", "name_span"), ir.SweepAxis: ("name", "name_span"),
             ir.Solve: ("target", "target_span"), ir.Optimize: ("over", "over_span")}


def _mentions(node, name: str) -> list[Span]:
    out: list[Span] = []
    for x in ir.nodes(node):
        if isinstance(x, ir.ScenarioRef) and x.name == name:  # `name@scenario`: the name only
            out.append(Span(x.span.source, x.span.start, x.span.start + len(name)))
        elif x.__class__ in _NAMED_AT and getattr(x, _NAMED_AT[x.__class__][0]) == name:
            out.append(getattr(x, _NAMED_AT[x.__class__][1]))
    return out


def _symbol(s) -> Optional[Symbol]:
    full = span_range(s.span)
    if isinstance(s, ir.Definition):
        kind = "input" if s.is_input else "quantity"
        detail = s.expr.span.flat + (f" -> {s.display.text}" if s.display else "")
        return Symbol(s.name, kind, detail, full, span_range(s.name_span))
    if isinstance(s, ir.FunctionDef):
        return Symbol(s.name, "function", "(" + ", ".join(p.name for p in s.params) + ")", full,
                      span_range(s.name_span))
    if isinstance(s, ir.UnitDecl):
        return Symbol(s.name, "unit", s.definition.span.flat if s.definition else "a new dimension", full,
                      span_range(s.name_span))
    if isinstance(s, ir.Scenario):
        return Symbol(s.name, "scenario", ", ".join(o.name for o in s.overrides), full, span_range(s.name_span))
    if isinstance(s, ir.Axis):
        members = tuple(Symbol(m.name, "member", ", ".join(o.name for o in m.overrides), span_range(m.span),
                               span_range(m.name_span)) for m in s.members)
        return Symbol(s.name, "axis", s.doc or "", full, span_range(s.name_span), members)
    if isinstance(s, ir.Check):
        return Symbol(s.span.flat, "check", "", full, full)
    if isinstance(s, (ir.Sweep, ir.Solve, ir.Optimize)):
        return Symbol(s.span.flat, "question", "", full, full)
    return None


_EXPORTED: dict = {}  # (an imported file, its mtime) -> its quantities and functions, for completion


def _first_title(path: Path) -> str:
    try:
        for line in path.read_text(encoding="utf-8").splitlines()[:5]:
            m = re.match(r'\s*title\s+"(.*)"', line)
            if m:
                return m.group(1)
    except (OSError, UnicodeDecodeError):
        pass
    return ""


def _in_comment(before: str) -> bool:
    return _in_comment_or_string(before, len(before), strings=False)


def _open_string(before: str) -> bool:
    quotes = 0
    for ch in before:
        if ch == "#" and quotes % 2 == 0:
            return False
        if ch == '"':
            quotes += 1
    return quotes % 2 == 1


def _in_comment_or_string(row: str, col: int, strings: bool = True) -> bool:
    inside = False
    for i, ch in enumerate(row[:col]):
        if ch == '"':
            inside = not inside
        elif ch == "#" and not inside:
            return True
    return inside and strings


def _unit_word(word: str, text: str, at: int) -> Optional[str]:
    """A unit name: after a number (``3 TB/s``), after ``->``, or after ``/``/``*`` inside a unit."""
    before = text[max(0, at - 40, text.rfind("\n", 0, at) + 1):at]  # on its own line (a name at the margin
    return word if re.search(r"(\d[ \t]*|->[ \t]*|\w[/*·])\Z", before) else None  # after `... 128` is no unit)
