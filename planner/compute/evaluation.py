"""The Python API: load a plan, evaluate it per scenario, with overrides.

    >>> import planner
    >>> plan = planner.load("sheets/token_cost.plan")
    >>> plan.evaluate(scenario="int4_g128").display("batch_step_bound")
    19.26...
"""

from __future__ import annotations

import math
import os
from ..language.lazy import field  # dataclasses.field, for the classes made on first use
from fractions import Fraction
from functools import cached_property
from pathlib import Path

from ..language import ir
from ..language.errors import (
    ConstraintError,
    KindError,
    Label,
    NeverError,
    OverrideError,
    PlanError,
    ScenarioError,
    UnknownNameError,
    UsageError,
    suggest,
)
from ..language.lazy import lazy_dataclass as dataclass  # dataclasses.dataclass, made on first use
from ..language.limits import deep, paused_gc
from ..language.model import Model, Quantity
from ..language.source import Source, Span
from .runtime import Program

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Iterable, Mapping, Optional, Sequence, Union

Value = Fraction | bool
PERIODS = "__periods"  # the output of a compiled program that holds the periods' values


@dataclass(frozen=True)
class Origin:
    """Where an input's value came from (for constraint messages)."""

    description: str  # "the plan", "scenario `bf16`", "--set"
    span: Optional[Span]


@dataclass(repr=False)
class Evaluation:
    """Every quantity's value (base units) for one scenario and set of overrides."""

    plan: "Plan"
    scenario: Optional[str]
    inputs: dict[str, Value]
    values: dict[str, float | bool]
    origins: dict[str, Origin] = field(default_factory=dict)
    answers: dict[str, float] = field(default_factory=dict)  # question answers the formulas use, base units
    never: dict[str, PlanError] = field(default_factory=dict)  # quantities `first(...)` found no value for, why
    series: dict = field(default_factory=dict)  # each series' values (base units), one per period (numpy arrays)
    periods: object = None  # the periods' values (base units: a month is 2,629,800 s), where the plan has series

    def series_display(self, name: str):
        """A series' values in its display unit, one per period (a numpy array)."""
        return self.series[name] / float(self.plan.model.quantities[name].display.scale)

    def is_never(self, name: str) -> bool:
        """Whether ``name`` is a ``first(...)`` that found nothing (its value is nan; shown "never")."""
        return name in self.never

    def __getitem__(self, name: str) -> float | bool:
        if name in self.series:
            raise self._a_series(name)
        return self.values[name]

    def _a_series(self, name: str) -> PlanError:
        q = self.plan.model.quantities[name]
        return KindError(f"`{name}` is a series (a value per period), not one figure", q.definition.name_span,
                         label="a series",
                         hint=f"ask about a figure of it: `min({name})`, `last({name})`, `{name} at 12 month` (define "
                              f"it as a quantity); its values per period are in `planner eval`")

    def display(self, name: str) -> float | bool:
        """The value in the quantity's display unit."""
        if name in self.series:
            raise self._a_series(name)
        q = self.plan.model.quantities[name]
        v = self.values[name]
        if q.is_bool:
            return bool(v)
        exact = self.inputs.get(name)
        if isinstance(exact, Fraction):  # an input: exactly as written (49 USD/month is 49, not 49.00000000000001)
            return float(exact / q.display.scale)
        return float(v) / float(q.display.scale)

    @property
    def label(self) -> str:
        return self.scenario or "base"

    def __repr__(self) -> str:  # the values are many: `display(name)` shows one
        changed = sorted(n for n, o in self.origins.items() if o.description != "the plan")
        extra = f", overridden: {', '.join(changed)}" if changed else ""
        return f"<Evaluation of {self.plan.path} [{self.label}]: {len(self.values)} quantities{extra}>"


class Plan:
    files: tuple[Path, ...] = ()  # the files read: the plan's own and every imported one (outputs never replace them)
    cached = False  # True when it came from the compiled-plan cache (planner.compute.cache)
    cache_key: Optional[str] = None  # its entry in that cache, when it is kept there

    @property
    def closed_forms(self) -> dict:
        """Questions' closed forms as plain data (:func:`planner.compute.symbolic.to_data`), by question:
        kept in the compiled-plan cache, so a second export or report does not derive them again."""
        return self.__dict__.setdefault("_closed_forms", {})

    def keep_closed_forms(self, question: str, forms: list) -> None:
        if self.closed_forms.get(question) != forms:
            self.closed_forms[question] = forms
            if self.cache_key is not None:
                from . import cache

                cache.changed(self)
    analyzer_state = None  # a cached plan's analyzer, not rebuilt yet

    @property
    def analyzer(self):
        """The static analysis (:class:`planner.language.analysis.Analyzer`) that made the model: for
        typing expressions (``--set`` values, checks, questions)."""
        got = self.__dict__.get("_analyzer")
        if got is None and self.analyzer_state is not None:
            from .cache import analyzer

            got = self.__dict__["_analyzer"] = analyzer(self.analyzer_state)
            self.analyzer_state = None
        return got

    @analyzer.setter
    def analyzer(self, value) -> None:
        self.__dict__["_analyzer"] = value

    def __init__(self, source: Source, model: Model, analyzer, answers=None) -> None:
        """``answers``: a factory ``answers(plan)`` of the object that answers the plan's questions
        (:class:`planner.questions.fast.Answers`, which the API door passes), for formulas that use
        an answer (``solve ... as x`` then ``y = 2 * x``)."""
        self.source = source
        self.model = model
        self.analyzer = analyzer
        self._answers_factory = answers
        self._answer_source = None
        self._constraints = [
            (q.name, c) for q in model.quantities.values() for c in q.definition.constraints
            if c.kind == "condition"
        ]

    def __repr__(self) -> str:
        m = self.model
        parts = [f"{len(m.inputs)} inputs", f"{len(m.derived)} derived"]
        if m.scenarios:
            parts.append(f"{len(m.scenarios)} scenarios")
        if m.checks:
            parts.append(f"{len(m.checks)} checks")
        return f"<{type(self).__name__} {self.title!r} from {self.path}: {', '.join(parts)}>"

    # ---- basic facts --------------------------------------------------------
    @property
    def title(self) -> str:
        return self.model.plan.title or Path(self.source.name).stem

    @property
    def path(self) -> str:
        return self.source.name

    @property
    def quantities(self) -> dict[str, Quantity]:
        return self.model.quantities

    @property
    def scenario_names(self) -> list[str]:
        return list(self.model.scenarios)

    def definition_order(self, series: bool = False) -> list[str]:
        """Quantity names in the order they appear (imported ones where they are imported); the series (a
        value per period, shown as tables of their own: :meth:`series_order`) among them only with ``series``."""
        q = self.model.quantities
        return [n for n in self._definition_order if series or not q[n].per_period]

    def display_order(self) -> list[str]:
        """The plan's own quantities in file order, then the imported ones in the order they were imported."""
        own = self.source.name
        names = self.definition_order()
        return ([n for n in names if self.model.quantities[n].definition.span.source.name == own]
                + [n for n in names if self.model.quantities[n].definition.span.source.name != own])

    @cached_property
    def _definition_order(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.model.plan.statements
                     if isinstance(s, ir.Definition) and s.name in self.model.quantities)

    def series_order(self) -> list[str]:
        """The plan's series (quantities with a value per period) in file order."""
        return [n for n in self._definition_order if self.model.quantities[n].per_period]

    @cached_property
    def period_unit(self) -> tuple[str, float]:
        """The unit the plan's periods count in (``month``) and its size in base units."""
        from ..language.aggregates import Ranges
        from ..language.analysis import unit_of
        from .exact import constant

        ranges = Ranges(self.model.quantities, self.model.functions, lambda u: unit_of(u, self.model.units))
        step = ranges.step(self.model.periods.values, lambda e: constant(self.model, e))
        return step.unit, float(step.scale)

    # ---- the SymPy model: built on first use (questions, explain, the workbook's
    # closed forms, the report's LaTeX); evaluating a plan does not need it ----------------------
    @cached_property
    def _sympy(self):
        from .symbolic import build

        with paused_gc():
            return build(self.model)

    @property
    def symbols(self):
        """One SymPy symbol per quantity (:class:`planner.compute.symbolic.SymbolTable`)."""
        return self._sympy[0]

    @property
    def exprs(self):
        """Each derived quantity's SymPy expression over the symbols of the quantities it uses."""
        return self._sympy[1]

    @property
    def converter(self):
        """IR to SymPy (:class:`planner.compute.symbolic.Converter`)."""
        return self._sympy[2]

    @property
    def warnings(self) -> list:
        """What loading the plan accepted but the user should know of (:class:`PlanWarning`s:
        declarations of units that are built in now, deprecated library names)."""
        return list(self.model.warnings)

    @cached_property
    def compiled(self) -> Program:
        """Every derived quantity and constraint as one program (:mod:`planner.compute.numeric`)."""
        return self.compile_outputs(list(self.model.derived) + self.model.series, constraints=True)

    def compile_outputs(self, names, constraints: bool = True) -> Program:
        """The derived quantities ``names`` (in dependency order) and, with ``constraints``, every
        constraint (``__constraint0``...), as one program over :attr:`arguments`."""
        from .numeric import compile_program

        with paused_gc():
            outputs: list = [(n, self.model.quantities[n].definition.expr) for n in names]
            if self.model.periods is not None and any(self.model.quantities[n].per_period for n in names):
                outputs.append((PERIODS, ir.Period(self.model.periods.span)))
            if constraints:
                outputs += [(f"__constraint{i}", c.condition) for i, (_, c) in enumerate(self._constraints)]
            return compile_program(self.model, self.arguments, outputs)

    def compile_for(self, names) -> tuple[Program, list[str]]:
        """``names``, the derived quantities they use and every constraint as one program (a sweep's, a
        simulation's), compiled once per set of names: (the program, the derived quantities it computes)."""
        from ..language.graph import cone

        cache = self.__dict__.setdefault("_compiled_for", {})
        key = frozenset(names)
        if key not in cache:
            used = [n.name for _, c in self._constraints for n in ir.free_names(c.condition)]
            need = set(cone(self.model, list(names) + used))
            derived = [n for n in self.model.derived if n in need]
            cache[key] = (self.compile_outputs(derived, constraints=True), derived)
        return cache[key]

    # ---- answers used in formulas ---------------------------------------------------
    @property
    def arguments(self) -> list[str]:
        """What a compiled program of this plan takes: every input, then the answers formulas use."""
        return self.model.inputs + self.model.formula_answers

    def args(self, inputs: Mapping[str, object], answers: Optional[Mapping[str, object]] = None) -> list:
        """The argument list of :meth:`compile`'s functions: inputs (numbers or arrays) and answers
        (missing ones are nan: the quantities that use them have no value)."""
        import numpy as np

        out = [inputs[n] if isinstance(inputs[n], np.ndarray) else as_number(inputs[n]) for n in self.model.inputs]
        for a in self.model.formula_answers:
            v = (answers or {}).get(a, np.nan)
            out.append(v if isinstance(v, np.ndarray) else np.float64(v))
        return out

    @property
    def answer_source(self):
        """The object that answers this plan's questions (created on first use)."""
        if self._answer_source is None:
            if self._answers_factory is None:
                raise UsageError("this plan uses question answers in its formulas: load it with planner.load, "
                                 "which can answer questions")
            self._answer_source = self._answers_factory(self)
        return self._answer_source

    def formula_answer_values(self, scenario=None, overrides=None, origins=None) -> dict[str, float]:
        """The answers the formulas use, in this scenario with these overrides (base units)."""
        out: dict[str, float] = {}
        for a in self.model.formula_answers:
            try:
                out[a] = float(self.answer_source.value(a, scenario, overrides, origins))
            except PlanError as err:
                users = [n for n in self.model.derived if a in self.model.quantities[n].answer_deps]
                note = f"`{users[0]}` uses the answer `{a}`" if users else f"a formula uses the answer `{a}`"
                if note not in err.notes:
                    err.notes.append(note)
                raise
        return out

    # ---- scenarios and overrides ---------------------------------------------
    def resolve_scenarios(self, spec: Optional[Union[str, Sequence[str]]], written: bool = False
                          ) -> list[Optional[str]]:
        """Scenario names from a selection.

        ``None`` is the plan as written (``base``); ``all`` is every scenario
        (or the base when there is none); a name picks one scenario; with
        axes, ``gpu=h100,precision=fp8`` picks combinations (an axis left out
        takes all its members, ``gpu=all`` too). Each string is one selection.
        ``written``: the command line's and the API's ``all``, which shows the plan as written
        first, beside its scenarios (a plan's own ``for all`` runs a question per scenario).
        """
        if spec is None:
            return [None]
        specs = [spec] if isinstance(spec, str) else list(spec)
        out: list[Optional[str]] = []
        for raw in specs:
            picks: dict[str, set[str]] = {}
            for name in [n.strip() for n in raw.split(",") if n.strip()]:
                if "=" in name:
                    axis, _, member = (x.strip() for x in name.partition("="))
                    self._check_pick(axis, member)
                    picks.setdefault(axis, set()).add(member)
                elif name == "all":
                    out.extend(([None] if written else []) + self.scenario_names or [None])
                elif name == "base":
                    out.append(None)
                elif name in self.model.scenarios:
                    out.append(name)
                else:
                    guess = suggest(name, self.scenario_names)
                    listing = ["all", "base"] + self.scenario_names
                    if self.model.axes:
                        listing += [f"{a}=..." for a in self.model.axes]
                    raise ScenarioError(
                        f"unknown scenario `{name}`",
                        hint=(f"did you mean `{guess}`? " if guess else "") + "scenarios: " + ", ".join(listing),
                    )
            if picks:
                for name, sm in self.model.scenarios.items():
                    if sm.picks and all(sm.picks[a] in ms or "all" in ms for a, ms in picks.items()):
                        out.append(name)
        seen: list[Optional[str]] = []
        for s in out:
            if s not in seen:
                seen.append(s)
        return seen

    def _check_pick(self, axis: str, member: str) -> None:
        axes = self.model.axes
        if axis not in axes:
            guess = suggest(axis, axes)
            raise ScenarioError(f"unknown axis `{axis}`", hint=(f"did you mean `{guess}`? " if guess else "")
                                + ("axes: " + ", ".join(axes) if axes else "this plan has no axes"))
        if member != "all" and member not in axes[axis]:
            guess = suggest(member, axes[axis])
            raise ScenarioError(f"axis `{axis}` has no `{member}`",
                                hint=(f"did you mean `{guess}`? " if guess else "") + "choices: " + ", ".join(axes[axis]))

    def parse_override(self, text: str, origin: str = "--set") -> tuple[str, Value, Origin]:
        """``name=value`` from the command line; the value uses plan syntax (``3.35 TB/s``)."""
        if "=" not in text:
            raise UsageError(f"{origin} expects name=value, got `{text}`", hint="for example --set alpha=0.6")
        name, _, value = text.partition("=")
        name = name.strip()
        source = Source(f"{origin} {name}", value.strip())
        from ..language.lower import lower_expr  # lark: only when there is text to parse

        expr = lower_expr(source)
        override = ir.Override(name, expr, Span(source, 0, len(source.text)), Span(source, 0, len(source.text)))
        if name not in self.model.quantities:
            guess = suggest(name, self.model.inputs)
            raise OverrideError(f"{origin} names `{name}`, which is not defined in {self.source.name}",
                                hint=f"did you mean `{guess}`?" if guess else "inputs: " + ", ".join(self.model.inputs))
        v = self.analyzer.override_value(override, self.model.quantities, origin, report=False)
        return name, v, Origin(f"{origin} {name}={source.text}", Span(source, 0, len(source.text)))

    def input_values(
        self, scenario: Optional[str] = None, overrides: Optional[Mapping[str, Value]] = None,
        origins: Optional[Mapping[str, Origin]] = None,
    ) -> tuple[dict[str, Value], dict[str, Origin]]:
        written = self.__dict__.get("_written_inputs")
        if written is None:  # the plan's own values and origins, made once (an evaluation copies them)
            written = ({}, {})
            for name in self.model.inputs:
                q = self.model.quantities[name]
                written[0][name] = q.value
                written[1][name] = Origin("the plan", q.definition.expr.span)
            self.__dict__["_written_inputs"] = written
        values: dict[str, Value] = dict(written[0])
        where: dict[str, Origin] = dict(written[1])
        if scenario is not None:
            s = self.model.scenarios[scenario]
            for o in s.scenario.overrides:
                if o.name in s.overrides:
                    values[o.name] = s.overrides[o.name]
                    where[o.name] = Origin(f"scenario `{scenario}`", o.span)
        for name, v in (overrides or {}).items():
            if name not in values:
                raise OverrideError(f"`{name}` is not an input of {self.source.name}")
            values[name] = v
            where[name] = (origins or {}).get(name, Origin("an override", None))
        return values, where

    # ---- evaluation -----------------------------------------------------------------
    def evaluate(
        self, scenario: Optional[str] = None, overrides: Optional[Mapping[str, Value]] = None,
        origins: Optional[Mapping[str, Origin]] = None,
    ) -> Evaluation:
        """Evaluate every quantity; raise a located error on a violated
        constraint, a division by zero or a domain error.

        The lower-level call the questions use: ``overrides`` are exact values
        in base units (bytes, seconds, bytes per second), as ``parse_override``
        returns them. From Python, ``planner.Plan.eval`` takes values with
        units (``"4.8 TB/s"``) and refuses a bare number for an input with one."""
        inputs, where = self.input_values(scenario, overrides, origins)
        raw = self._run_floats(inputs) or self.run_compiled(inputs)
        values: dict[str, float | bool] = {}
        for name in self.model.inputs:
            values[name] = bool(inputs[name]) if self.model.quantities[name].is_bool else float(inputs[name])
        for name in self.model.derived:
            values[name] = _scalar(raw[name])
        ev = Evaluation(self, scenario, inputs, values, where)
        self._check_constraints(ev, raw)
        if self.model.formula_answers:
            ev.answers = self.formula_answer_values(scenario, overrides, origins)
            raw = self.run_compiled(inputs, ev.answers)
            for name in self.model.derived:
                values[name] = _scalar(raw[name])
        for name in self.model.series:
            ev.series[name] = raw[name]
        if self.model.series:
            ev.periods = raw[PERIODS]
        bad = [n for n in self.model.derived if not isinstance(values[n], bool) and not math.isfinite(values[n])]
        if bad:
            from .diagnose import diagnose, is_first

            for name in bad:  # a `first` that found nothing: "never", a stated outcome
                if is_first(self.model.quantities[name].definition.expr):
                    err = diagnose(self.model, name, {**values, **ev.answers}, ev.series, ev.periods)
                    if isinstance(err, NeverError):
                        ev.never[name] = err
        for name in self.model.derived:
            v = values[name]
            # what uses a "never" fails with that reason, even where its value came out finite (a comparison
            # of nan is false, so `if(breakeven > 24 month, a, b)` would quietly be b)
            uses_never = ev.never and name not in ev.never and \
                any(d in ev.never for d in self.model.quantities[name].deps)
            if uses_never or (name not in ev.never and not isinstance(v, bool) and not math.isfinite(v)):
                from .diagnose import diagnose

                err = diagnose(self.model, name, {**values, **ev.answers}, ev.series, ev.periods)
                if uses_never and math.isfinite(v) and not isinstance(err, NeverError):
                    continue  # its formula did not take the never value (the other branch of an `if`)
                if scenario is not None:
                    err.notes.append(f"in scenario `{scenario}`")
                for n, o in where.items():
                    if o.description.startswith("--set") or o.description == "an override":
                        err.notes.append(f"with {o.description}")
                raise err
        return ev

    def _run_floats(self, inputs: Mapping[str, object]) -> Optional[dict[str, object]]:
        """:meth:`run_compiled` on Python floats, without numpy, where they give numpy's values
        (:meth:`planner.compute.numeric.Program.scalar`); else ``None``."""
        if self.model.formula_answers:
            return None
        values = []
        for n in self.model.inputs:
            v = inputs[n]
            if v.__class__ is bool:
                values.append(v)
            elif v.__class__ in (Fraction, int, float):
                values.append(float(v))  # as np.float64(v): a Fraction's quotient, correctly rounded
            else:
                return None
        out = self.compiled.scalar(values)
        return None if out is None else dict(zip(self.compiled.outputs, out))

    def run_compiled(self, inputs: Mapping[str, object], answers: Optional[Mapping[str, object]] = None
                     ) -> dict[str, object]:
        """Raw evaluation (scalars or numpy arrays): no constraint or finiteness checks. Quantities
        that use an answer not given have no value (nan)."""
        out = self.compiled(self.args(inputs, answers))
        return dict(zip(self.compiled.outputs, out))

    def _check_constraints(self, ev: Evaluation, raw: Mapping[str, object]) -> None:
        errors: list[PlanError] = []
        for name in self.model.inputs:
            q = self.model.quantities[name]
            if q.integer:
                shown = float(Fraction(ev.inputs[name]) / q.display.scale)
                if shown != int(shown):
                    errors.append(self._violation(ev, q, "integer", f"`{name}` must be an integer",
                                                  next(c for c in q.definition.constraints if c.kind == "integer")))
        for i, (name, c) in enumerate(self._constraints):
            ok = raw[f"__constraint{i}"]
            if not (ok if ok.__class__ is bool else _all(ok)):
                q = self.model.quantities[name]
                errors.append(self._violation(ev, q, "condition", f"`{c.condition.span.flat}` does not hold", c))
        if errors:
            if len(errors) == 1:
                raise errors[0]
            from ..language.errors import PlanErrors
            raise PlanErrors(errors)

    def _violation(self, ev: Evaluation, q: Quantity, kind: str, what: str, c) -> ConstraintError:
        origin = ev.origins.get(q.name)
        shown = format_value(ev.display(q.name), q.unit_text)
        message = f"constraint violated: {what} (`{q.name}` = {shown}"
        message += f", from {origin.description})" if origin and origin.description != "the plan" else ")"
        labels = []
        if origin is not None and origin.span is not None and origin.description != "the plan":
            labels.append(Label(origin.span, f"`{q.name}` set to {shown} here"))
        err = ConstraintError(message, c.span, label="this constraint", labels=labels)
        if ev.scenario is not None:
            err.notes.append(f"in scenario `{ev.scenario}`")
        return err

    def evaluate_all(self, scenarios: Iterable[Optional[str]], overrides=None, origins=None) -> list[Evaluation]:
        return [self.evaluate(s, overrides, origins) for s in scenarios]


# ---- scenario picking: which scenarios a statement runs in, which input it varies ----

def input_quantity(plan, name: str, span: Optional[Span], what: str) -> Quantity:
    """The input ``name``, or a located error (unknown, a formula, true/false)."""
    q = plan.model.quantities.get(name)
    if q is None:
        guess = suggest(name, plan.model.inputs)
        raise UnknownNameError(f"unknown input `{name}`", span, label="not defined in this plan",
                               hint=f"did you mean `{guess}`?" if guess else "inputs: " + ", ".join(plan.model.inputs))
    if not q.is_input:
        guess = suggest(name, plan.model.inputs)
        raise OverrideError(f"{what} `{name}`, which is a formula, not an input", span,
                         hint=f"did you mean `{guess}`?" if guess else "only inputs can be varied or solved for")
    if q.is_bool:
        raise KindError(f"`{name}` is true/false; {what} numbers only", span)
    return q


def scenarios_for(plan, picks: tuple[ir.ScenarioPick, ...], override=None) -> list[Optional[str]]:
    """The scenarios a statement runs in: ``--scenario`` if given, else its ``for`` list, else the base.

    ``for all`` is every scenario and ``for fast`` names one; the axis picks of
    one statement form one selection, as on the command line:
    ``for a=a1, b=b1`` is the one combination a1 with b1, ``for a=a1`` every
    scenario with a1, ``for a=a1, a=a2, b=b2`` a1 or a2, each with b2. Checks
    (:func:`planner.questions.checks.check_scenarios`) and questions both resolve here.
    """
    if override:
        return plan.resolve_scenarios(override)
    if not picks:
        return [None]
    names: list[Optional[str]] = []
    for p in picks:
        if p.axis is None:
            names.extend(plan.resolve_scenarios(p.name))
    axis_picks = [f"{p.axis}={p.name}" for p in picks if p.axis is not None]
    if axis_picks:
        names.extend(plan.resolve_scenarios(",".join(axis_picks)))
    return list(dict.fromkeys(names))


def _all(v) -> bool:
    import numpy as np

    return bool(np.all(v))


def _scalar(v) -> float | bool:
    if v.__class__ is float or v.__class__ is bool:
        return v
    import numpy as np

    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    arr = np.asarray(v)
    if arr.dtype == bool:
        return bool(arr)
    return float(arr)


def display_value(q: Quantity, value) -> float | bool:
    """An exact base value as ``q``'s figure in its display unit (60 for 60 %, as the outputs show it)."""
    if q.is_bool:
        return bool(value)
    return float(Fraction(value) / q.display.scale)


def as_number(v: Value):
    # numpy scalars, so that 1/0 gives inf (reported by ``diagnose``), not a ZeroDivisionError
    import numpy as np

    if isinstance(v, (bool, np.bool_)):
        return np.bool_(v)
    return np.float64(v)


def format_value(v: float | bool, unit: str = "", digits: int = 6, mode: str = "root") -> str:
    """One figure alone, with its unit, by the one number rule (:mod:`planner.compute.numbers`): digits
    grouped, money to cents, six significant digits (``digits`` for a figure that needs more or fewer); the
    answer of a ``solve min``/``max`` (``mode``) never past itself."""
    from .numbers import SIGNIFICANT, answer_style, figure, significant

    if isinstance(v, bool) or v != v:
        return "true" if v is True else "false" if v is False else "nan"
    if digits == SIGNIFICANT:
        return figure(v, unit, answer_style(v, unit, mode))
    return f"{significant(v, digits, mode)} {unit}".strip()


def loads(text: str, name: str = "<plan>", base: Union[str, os.PathLike, None] = None,
          all_imports: bool = False, answers=None, cls: type = Plan,
          import_roots: Sequence[Union[str, os.PathLike]] = ()) -> Plan:
    """Load plan text; ``base`` is the folder its imports are relative to (default: the current one).

    Imported plans contribute only the quantities this plan uses (directly, through overrides,
    questions and checks, or through what those use); ``all_imports=True`` keeps all of them.
    ``answers``: a factory of what answers the plan's questions (for formulas that use answers);
    ``cls`` is the class of the result (the API's :class:`planner.Plan` adds the questions);
    ``import_roots`` are folders imports may read besides the plan's own folder and the library."""
    return deep(_loads, text, name, base, all_imports, tuple(Path(r) for r in import_roots), answers, cls)


def _loads(text: str, name: str, base, all_imports: bool, roots: tuple[Path, ...], answers, cls) -> Plan:
    from ..language.imports import resolve_imports
    from ..language.lower import lower

    with paused_gc():
        source = Source(name, text)
        plan_ir = lower(source)
        files: list[Path] = [Path(name).resolve()] if base is not None else []
        if any(isinstance(s, ir.Import) for s in plan_ir.statements):
            plan_ir = resolve_imports(plan_ir, Path(base) if base is not None else Path.cwd(),
                                      (Path(name).resolve(),) if base is not None else (), all_imports, roots,
                                      files)
        from ..language.analysis import analyze

        model, analyzer = analyze(plan_ir)
        plan = cls(source, model, analyzer, answers)
        plan.files = tuple(files)
        return plan


def load(path: Union[str, os.PathLike], all_imports: bool = False, answers=None, cls: type = Plan,
         import_roots: Sequence[Union[str, os.PathLike]] = ()) -> Plan:
    """Parse, check and prepare a ``.plan`` file. Raises :class:`PlanError`.

    ``all_imports=True`` keeps every quantity of the imported plans, used or not;
    ``import_roots`` are folders imports may read besides the plan's own folder and the library.
    With the compiled-plan cache on (:mod:`planner.compute.cache`, the command line's default), a
    plan loaded before and unchanged since, imports included, comes from the cache, compiled."""
    from ..language.imports import read_plan
    from . import cache

    p = Path(path)
    text = read_plan(p)  # a regular file of plan text, within the size limit (a FIFO is refused, not waited on)
    key = None
    if cache.enabled():
        key = cache.key(p, str(path) + "\0" + text, all_imports, import_roots)
        with paused_gc():  # unpickling builds the whole plan at once
            cached = cache.fetch(key, cls or Plan, answers)
        if cached is not None:
            cached.cache_key = key
            return cached
    plan = loads(text, str(path), p.resolve().parent, all_imports, answers, cls, import_roots)
    if key is not None:
        try:
            plan.compiled  # noqa: B018  (compiled now, to be kept with it)
        except Exception:  # noqa: BLE001  (the run reports it where it evaluates)
            return plan
        with paused_gc():
            cache.store(key, plan)
        plan.cache_key = key
    return plan
