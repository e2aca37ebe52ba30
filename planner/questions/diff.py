"""Two versions of a plan compared (``planner diff OLD NEW``): what changed and which figures moved, and why.

The statements of the plan's own file are matched by kind and name (an input or formula by its
name, a function, a scenario, a question by its ``as NAME``, a check by its text); a statement whose
text (white space aside) differs is *changed*, one in a single version *added* or *removed*.

Every headline figure and every answer is compared in the plan as written and in each scenario of
both versions, with a **bridge**: the one-at-a-time effect of each change is the figure of a hybrid
plan, OLD's text with that one statement swapped in from NEW (appended when added, cut when removed),
loaded through the normal loader (every check of the language stays in force; nothing is evaluated
but plan text) minus OLD's figure; the *interaction* is the total change minus the sum of those
effects. A hybrid that does not load or evaluate (a formula that uses a quantity NEW added, say)
is tried once more with every statement NEW added appended; if it still fails, its effect is unknown
and folded into the interaction, with the reason.
"""

from __future__ import annotations

import math
import os
import subprocess
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..compute.evaluation import Plan, loads
from ..language import ir
from ..language.errors import PlanError, UsageError

BRIDGED = (ir.Definition, ir.FunctionDef, ir.Scenario, ir.Axis, ir.Solve, ir.Optimize, ir.UnitDecl, ir.Import)
KINDS = {ir.Definition: "formula", ir.FunctionDef: "function", ir.Scenario: "scenario", ir.Axis: "axis",
         ir.Solve: "question", ir.Optimize: "question", ir.UnitDecl: "unit", ir.Import: "import", ir.Check: "check",
         ir.ProbabilityCheck: "check", ir.Sweep: "sweep", ir.Correlation: "correlation"}


@dataclass
class Change:
    """One statement that differs between the versions."""

    kind: str  # input | formula | function | scenario | question | unit | check | sweep
    name: str
    status: str  # changed | added | removed
    old: Optional[str] = None  # the statement as written, on one line
    new: Optional[str] = None
    old_value: Optional[str] = None  # an input's value as written (`30 kUSD`)
    new_value: Optional[str] = None

    @property
    def key(self) -> str:
        return self.name if self.kind in ("input", "formula") else f"{self.kind} {self.name}"

    @property
    def summary(self) -> str:
        if self.status != "changed":
            return f"{'new' if self.status == 'added' else 'removed'} {self.kind} {self.name}"
        if self.kind == "input" and None not in (self.old_value, self.new_value) and self.old_value != self.new_value:
            return f"{self.name} {self.old_value} -> {self.new_value}"
        if self.kind == "input" and self.new_value is None:
            return f"input {self.name} now a formula"
        return f"{self.kind} {self.name}"


@dataclass
class Figure:
    """A headline figure or an answer in one scenario, in both versions, with its bridge."""

    name: str
    kind: str  # headline | answer
    scenario: Optional[str]  # None: the plan as written
    unit: str
    old: Optional[float | bool] = None  # display units; None: not in that version (or never/no answer)
    new: Optional[float | bool] = None
    old_note: str = ""  # "never", "no answer", "not in OLD" ...
    new_note: str = ""
    effects: list[tuple[str, Optional[float | bool]]] = field(default_factory=list)  # (change key, effect)
    unknown: dict[str, str] = field(default_factory=dict)  # change key -> why its effect is unknown

    @property
    def label(self) -> str:
        return self.scenario or "base"

    @property
    def numeric(self) -> bool:
        return isinstance(self.old, float) and isinstance(self.new, float)

    @property
    def change(self) -> Optional[float]:
        return self.new - self.old if self.numeric else None

    @property
    def in_both(self) -> bool:
        return self.old_note != "absent" and self.new_note != "absent"

    @property
    def moved(self) -> bool:
        """Changed between versions, both having it (a figure of an added scenario is new, not moved)."""
        if not self.in_both:
            return False
        if self.numeric:
            return not math.isclose(self.old, self.new, rel_tol=1e-9, abs_tol=1e-12)
        return (self.old, self.old_note) != (self.new, self.new_note)

    @property
    def interaction(self) -> Optional[float]:
        """Total change minus the sum of the one-at-a-time effects (unknown effects fall in here)."""
        if not self.numeric:
            return None
        return self.change - sum(e for _, e in self.effects if isinstance(e, float))

    @property
    def relative(self) -> float:
        """The size of the move, for ranking: relative to OLD, a flip (true/false, a value/never) first."""
        if not self.numeric:
            return math.inf if self.moved else 0.0
        return abs(self.change) / max(abs(self.old), 1e-300)


@dataclass
class CheckChange:
    text: str
    scenario: Optional[str]
    old: Optional[bool]  # passed in OLD; None: not in OLD
    new: Optional[bool]

    @property
    def regression(self) -> bool:
        return self.old is True and self.new is False


@dataclass
class PlanDiff:
    old: Plan
    new: Plan
    changes: list[Change]
    scenarios: list[tuple[Optional[str], str]]  # (scenario, "both" | "added" | "removed")
    figures: list[Figure]
    checks: list[CheckChange]

    @property
    def regressions(self) -> list[CheckChange]:
        return [c for c in self.checks if c.regression]

    @property
    def moved(self) -> list[Figure]:
        """The figures that moved, the largest relative move first (flips first of all)."""
        return sorted((f for f in self.figures if f.moved), key=lambda f: -f.relative)


# ---- reading a version ---------------------------------------------------------------

def load_version(spec: str, import_roots: Sequence = ()) -> tuple[Plan, Path]:
    """The plan ``spec`` names (see :func:`read_version`), and the folder its imports are relative to."""
    from .fast import Answers

    text, name, base = read_version(spec)
    return loads(text, name, base, answers=Answers, import_roots=import_roots), base


def read_version(spec: str) -> tuple[str, str, Path]:
    """(plan text, name, folder its imports are relative to) of ``spec``: a file, or ``REV:PATH``, the
    file at a git revision (``HEAD~1:examples/x.plan``; PATH as from the current folder), read with
    ``git show`` (no shell) and refused outside the repository the current folder is in."""
    from ..language.imports import read_plan

    p = Path(spec)
    if p.exists() or ":" not in spec or (len(spec) > 1 and spec[1] == ":" and os.name == "nt"):
        return read_plan(p), spec, p.resolve().parent
    rev, _, path = spec.partition(":")
    if not rev or rev.startswith("-") or not path:
        raise UsageError(f"`{spec}` is neither a file nor REV:PATH",
                         hint="a file, or a git revision and a path: HEAD~1:examples/plan.plan")
    root = _git(["rev-parse", "--show-toplevel"], Path.cwd(), spec).strip()
    top = Path(root).resolve()
    full = (Path.cwd() / path).resolve()
    try:
        rel = full.relative_to(top)
    except ValueError:
        raise UsageError(f"`{path}` is outside the git repository at {top}",
                         hint="name a file inside the repository") from None
    text = _git(["show", f"{rev}:{rel.as_posix()}"], top, spec)
    return text, spec, full.parent


def _git(argv: list[str], cwd: Path, spec: str) -> str:
    try:
        done = subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"cannot read `{spec}`: git did not run ({exc})",
                         hint="install git, or compare two files") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        raise UsageError(f"cannot read `{spec}` from git: {why}",
                         hint="REV:PATH as `git show` takes it, e.g. HEAD~1:examples/plan.plan")
    return done.stdout


# ---- matching statements ----------------------------------------------------------------

def _own(plan: Plan) -> dict[tuple[str, str], ir.Statement]:
    """The statements of the plan's own file by (kind, name)."""
    out: dict[tuple[str, str], ir.Statement] = {}
    for s in plan.model.plan.statements:
        if s.span.source is not plan.source and s.span.source.name != plan.source.name:
            continue  # an imported file's
        kind = KINDS.get(type(s))
        if kind is None:
            continue
        if isinstance(s, (ir.Definition, ir.FunctionDef, ir.Scenario, ir.Axis, ir.UnitDecl)):
            name = s.name
        elif isinstance(s, ir.Import):
            name = s.alias or s.path
        elif isinstance(s, ir.Correlation):
            name = f"{s.a}, {s.b}"
        elif isinstance(s, (ir.Solve, ir.Optimize)):
            name = s.alias or s.span.flat
        else:
            name = s.span.flat
        out[(kind, name)] = s
    return out


def _value_text(plan: Plan, name: str) -> Optional[str]:
    q = plan.model.quantities.get(name)
    if q is None or not q.is_input:
        return None
    return q.definition.expr.span.flat


def changes(old: Plan, new: Plan) -> tuple[list[Change], dict[str, tuple]]:
    """The changed statements, and per change key its (OLD statement or None, NEW statement or None)."""
    a, b = _own(old), _own(new)
    out: list[Change] = []
    pairs: dict[str, tuple] = {}
    for key in list(a) + [k for k in b if k not in a]:
        s, t = a.get(key), b.get(key)
        if s is not None and t is not None and s.span.flat == t.span.flat:
            continue
        kind, name = key
        if kind == "formula" and name in (old.model.quantities if s is not None else new.model.quantities) \
                and (old if s is not None else new).model.quantities[name].is_input:
            kind = "input"
        c = Change(kind, name, "changed" if s is not None and t is not None else ("removed" if t is None else "added"),
                   s.span.flat if s is not None else None, t.span.flat if t is not None else None,
                   _value_text(old, name) if kind == "input" and s is not None else None,
                   _value_text(new, name) if kind == "input" and t is not None else None)
        out.append(c)
        if isinstance(s or t, BRIDGED):
            pairs[c.key] = (s, t)
    return out, pairs


def _hybrid_text(old: Plan, s, t, extra: Sequence = ()) -> str:
    text = old.source.text
    if s is not None:
        text = text[:s.span.start] + (t.span.text if t is not None else "") + text[s.span.end:]
    elif t is not None:
        text = text.rstrip("\n") + "\n" + t.span.text + "\n"
    for e in extra:
        text = text.rstrip("\n") + "\n" + e.span.text + "\n"
    return text


# ---- figures ---------------------------------------------------------------------------------

class _Version:
    """One plan's figures by (name, scenario), computed when first asked (display units of ``units``)."""

    def __init__(self, plan: Plan, headlines: Sequence[str], units: Plan) -> None:
        from .fast import Answers

        self.plan = plan
        self.headlines = [h for h in headlines if h in plan.model.quantities]
        self.units = units
        self.answers = Answers(plan)
        self._evals: dict = {}

    def _evaluation(self, scenario):
        if scenario not in self._evals:
            try:
                self._evals[scenario] = self.plan.evaluate(scenario)
            except PlanError as err:
                self._evals[scenario] = err
        return self._evals[scenario]

    def headline(self, name: str, scenario) -> tuple[Optional[float | bool], str]:
        model = self.plan.model
        if name not in model.quantities or (scenario is not None and scenario not in model.scenarios):
            return None, "absent"
        ev = self._evaluation(scenario)
        if isinstance(ev, PlanError):
            return None, f"error: {ev.message}"
        q = self.plan.model.quantities[name]
        if q.per_period:  # a value per period: its headline figures are its reductions
            return None, "a series"
        if q.is_bool:
            return bool(ev[name]), ""
        if ev.is_never(name):
            return None, "never"
        mine = self.units.model.quantities.get(name, q)
        if mine.dim != q.dim:
            return None, f"in {q.unit_text}"
        return float(ev[name]) / float(mine.display.scale), ""

    def answer_scenarios(self, alias: str) -> list:
        stmt = self.answers.statements.get(alias)
        from .every_answer import question_scenarios

        return [] if stmt is None else question_scenarios(self.plan, stmt)

    def answer(self, alias: str, scenario) -> tuple[Optional[float], str]:
        if alias not in self.answers.statements or scenario not in self.answer_scenarios(alias):
            return None, "absent"
        try:
            value = self.answers.value(alias, scenario)
        except PlanError:
            return None, "no answer"
        scale = _answer_scale(self.units, alias) or self.answers.unit(alias)[0]
        return float(Fraction(value) / scale), ""


def _answer_scale(plan: Plan, alias: str) -> Optional[Fraction]:
    from .fast import Answers

    try:
        return Answers(plan).unit(alias)[0]
    except (PlanError, KeyError):
        return None


def _unit(plan: Plan, name: str, kind: str) -> str:
    if kind == "headline":
        q = plan.model.quantities.get(name)
        return q.unit_text if q is not None else ""
    from .fast import Answers

    try:
        return Answers(plan).unit(name)[1]
    except (PlanError, KeyError):
        return ""


def compare(old: Plan, new: Plan, headlines: Callable[[Plan], Sequence[str]], base: Optional[Path] = None,
            import_roots: Sequence = (), check_samples: Optional[int] = None) -> PlanDiff:
    """OLD and NEW compared: their changes, every headline figure (``headlines(plan)``, the report's rule)
    and answer in the plan as written and each scenario, with each figure's bridge, and the checks.
    ``base``: the folder OLD's imports are relative to (hybrids are loaded as OLD was)."""
    from .every_check import run_every_check
    from .fast import Answers

    def load_text(text: str) -> Plan:
        return loads(text, old.path, base, answers=Answers, import_roots=import_roots)

    found, pairs = changes(old, new)
    names = list(dict.fromkeys(list(headlines(new)) + list(headlines(old))))
    v_old, v_new = _Version(old, names, new), _Version(new, names, new)
    aliases = list(dict.fromkeys(list(v_new.answers.statements) + list(v_old.answers.statements)))
    scenarios = [(None, "both")] \
        + [(s, "both" if s in new.model.scenarios else "removed") for s in old.scenario_names] \
        + [(s, "added") for s in new.scenario_names if s not in old.model.scenarios]

    figures: list[Figure] = []
    for name in names:
        kind_plan = new if name in new.model.quantities else old
        for s, _ in scenarios:
            f = Figure(name, "headline", s, _unit(kind_plan, name, "headline"))
            f.old, f.old_note = v_old.headline(name, s)
            f.new, f.new_note = v_new.headline(name, s)
            figures.append(f)
    for alias in aliases:
        where = list(dict.fromkeys(v_old.answer_scenarios(alias) + v_new.answer_scenarios(alias)))
        for s in where:
            f = Figure(alias, "answer", s, _unit(new if alias in v_new.answers.statements else old, alias, "answer"))
            f.old, f.old_note = v_old.answer(alias, s)
            f.new, f.new_note = v_new.answer(alias, s)
            figures.append(f)

    names_only = (ir.Definition, ir.FunctionDef, ir.UnitDecl)
    added = [t for (s, t) in pairs.values() if s is None and isinstance(t, names_only)]
    for key, (s, t) in pairs.items():
        if s is None and isinstance(t, names_only):
            continue  # added alone, it moves nothing: OLD uses no name it did not have
        if not any(f.moved and _may_move(old, key, s, t, f.scenario) for f in figures):
            continue
        hybrid, why = None, ""
        others = [e for e in added if e is not t]
        for extra in ([], others) if others else ([],):
            try:
                hybrid = load_text(_hybrid_text(old, s, t, extra))
                break
            except PlanError as err:
                why = err.message
        v_mid = _Version(hybrid, names, new) if hybrid is not None else None
        for f in figures:
            if not (f.moved and isinstance(f.old, (float, bool)) and f.old_note == "" and f.new_note == ""):
                continue
            if not _may_move(old, key, s, t, f.scenario):
                continue
            if v_mid is None:
                f.unknown[key] = f"the plan with only this change does not load: {why}"
                f.effects.append((key, None))
                continue
            mid, note = v_mid.headline(f.name, f.scenario) if f.kind == "headline" else v_mid.answer(f.name, f.scenario)
            if mid is None:
                f.unknown[key] = f"with only this change: {note}"
                f.effects.append((key, None))
            elif isinstance(f.old, bool):
                if mid != f.old:
                    f.effects.append((key, mid))
            elif not math.isclose(mid, f.old, rel_tol=1e-12, abs_tol=1e-12):
                f.effects.append((key, mid - f.old))
    for f in figures:
        if f.numeric:
            f.effects.sort(key=lambda e: -abs(e[1]) if isinstance(e[1], float) else 0.0)

    checks = _checks(run_every_check(old, check_samples), run_every_check(new, check_samples))
    return PlanDiff(old, new, found, scenarios, figures, checks)


def _may_move(old: Plan, key: str, s, t, scenario: Optional[str]) -> bool:
    """Whether the change of ``s`` to ``t`` can move a figure of ``scenario`` (False where its effect is zero
    for certain: a scenario's statement outside that scenario, an input the scenario sets itself)."""
    refs = "@" in old.source.text  # `x@scenario` reads another scenario's value: no shortcut then
    if isinstance(s or t, ir.Scenario):
        return refs or (s or t).name == scenario
    if scenario is not None and isinstance(s, ir.Definition) and isinstance(t, ir.Definition) and not refs:
        sm = old.model.scenarios.get(scenario)
        q = old.model.quantities.get(s.name)
        if sm is not None and q is not None and q.is_input and s.name in sm.overrides:
            return False  # the scenario sets the input: its value as written is not used there
    return True


def _checks(old: list, new: list) -> list[CheckChange]:
    a = {(r.text, r.scenario): r.passed for r in old}
    b = {(r.text, r.scenario): r.passed for r in new}
    keys = list(a) + [k for k in b if k not in a]
    return [CheckChange(text, s, a.get((text, s)), b.get((text, s))) for (text, s) in keys]
