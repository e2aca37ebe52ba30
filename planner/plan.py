"""The Python API: load a plan, then ask it what the command line asks.

    >>> import planner
    >>> plan = planner.load("sheets/token_cost.plan")
    >>> plan.eval(scenario="int4_g128")["batch_step_bound"]
    19.2624 ms
    >>> plan.eval(overrides={"hbm_bandwidth": "4.8 TB/s"})["batch1_weight_bound"]
    29.1667 ms
    >>> plan.check().ok
    True
    >>> plan.solve()["breakeven_alpha"]
    0.287108

Methods mirror the commands: :meth:`Plan.eval`, :meth:`Plan.check`,
:meth:`Plan.solve`, :meth:`Plan.sweep`, :meth:`Plan.sensitivity` and
:meth:`Plan.explain` return plain result objects
(:mod:`planner.outputs.results`) that print as the terminal prints them,
show as tables in notebooks and become DataFrames with ``to_pandas()``.

Overrides take units: ``{"hbm_bandwidth": "4.8 TB/s"}`` (the text is read
by the plan grammar's own rule for values, as ``--set`` is) or
``{"hbm_bandwidth": planner.Value(4.8, "TB/s")}``. A bare number is accepted
only for an input written without a unit; for one with a unit it is an
error naming the unit, never silently bytes or seconds.

The door on top of the stages: loading reads and checks a plan
(:mod:`planner.language`) and compiles it (:mod:`planner.compute`); the
questions (:mod:`planner.questions`) answer; the results are shaped by
:mod:`planner.outputs`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from fractions import Fraction
from numbers import Number as _Number

from .compute import evaluation as _evaluation
from .compute.evaluation import Evaluation, Origin
from .compute.numbers import period_number
from .language.errors import OverrideError, PlanError, UsageError, suggest
from .language.live import plain
from .outputs.results import (
    CheckResults,
    CheckRow,
    EvalResult,
    Explanation,
    QuantityRow,
    SensitivityResults,
    SensitivityRow,
    SimulationResults,
    SimulationRow,
    SolveResults,
    SolveRow,
    SweepResults,
    SweepTable,
    Value,
    number_text,
)

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Optional, Union

__all__ = [
    "CheckResults", "EvalResult", "Evaluation", "Explanation", "Origin", "Plan", "PlanError", "SensitivityResults",
    "SimulationResults", "SolveResults", "SweepResults", "SweepTable", "Value", "load", "loads",
]

Overrides = Mapping[str, str | Value | float | int | bool | Fraction] | None
Scenarios = None | str | Sequence[str]


class Plan:
    """A loaded, checked and compiled plan.

    ``title``, ``path``, ``quantities`` (name -> the checked quantity: ``doc``,
    ``tags``, ``formula``, ``unit_text``, ``is_input``), ``scenario_names``,
    ``files`` (the plan's file and every file it imports); the question
    methods below. ``scenario`` arguments take what ``--scenario`` takes:
    ``None`` (the plan as written), a name, ``"all"``, an axis pick such as
    ``"gpu=h100,precision=fp8"``, or a list of those. ``overrides`` set
    inputs (with units) in every scenario evaluated.

    :meth:`evaluate` is the lower-level evaluation the questions use: one
    scenario, overrides as exact values in base units (bytes, seconds).

    These are all its public attributes (:data:`API`). It wraps the compiled
    plan the commands work on (:class:`planner.compute.evaluation.Plan`, kept
    as ``_plan``); the compiled plan's own machinery (``model``, ``analyzer``,
    ``run_compiled`` ...) is not part of the API: reaching it through a
    ``Plan`` still works in this release, with a :class:`DeprecationWarning`."""

    def __init__(self, compiled: _evaluation.Plan) -> None:
        self._plan = compiled

    # ---- what it is ------------------------------------------------------------------------------

    @property
    def title(self) -> str:
        """The plan's ``title`` (else its file's name), as text: ``{{`` is one brace, a live value as written."""
        return plain(self._plan.title)

    @property
    def path(self) -> str:
        """The file (or the name) the plan was loaded from."""
        return self._plan.path

    @property
    def quantities(self) -> dict:
        """Name -> the checked quantity (``doc``, ``tags``, ``formula``, ``unit_text``, ``is_input``)."""
        return self._plan.quantities

    @property
    def scenario_names(self) -> list[str]:
        """The plan's scenarios, in the order written (axis scenarios by their picks)."""
        return self._plan.scenario_names

    @property
    def files(self) -> tuple:
        """The files read: the plan's own and every imported one."""
        return self._plan.files

    def display_order(self) -> list[str]:
        """The quantities in the order ``eval`` shows them."""
        return self._plan.display_order()

    def evaluate(self, scenario: Optional[str] = None, overrides: Optional[Mapping[str, Any]] = None,
                 origins: Optional[Mapping[str, Origin]] = None) -> Evaluation:
        """One scenario's every quantity (an :class:`Evaluation`); ``overrides`` are exact values in base
        units (bytes, seconds), as the questions use them (:meth:`eval` takes values with units)."""
        return self._plan.evaluate(scenario, overrides, origins)

    def evaluate_all(self, scenarios, overrides: Optional[Mapping[str, Any]] = None,
                     origins: Optional[Mapping[str, Origin]] = None) -> list[Evaluation]:
        """:meth:`evaluate` for each of ``scenarios`` (names, ``None`` for the plan as written)."""
        return self._plan.evaluate_all(scenarios, overrides, origins)

    def __getattr__(self, name: str):
        """The compiled plan's machinery, for code written against the release before: with a warning."""
        if name.startswith("__") or name == "_plan":
            raise AttributeError(name)
        try:
            found = getattr(self.__dict__["_plan"], name)
        except (KeyError, AttributeError):
            raise AttributeError(f"'Plan' object has no attribute {name!r}") from None
        import warnings

        warnings.warn(f"planner.Plan.{name} is the compiled plan's machinery, not the API, and goes in the next "
                      f"release (planner.Plan's attributes: {', '.join(API)})", DeprecationWarning, stacklevel=2)
        return found

    # ---- how it shows ---------------------------------------------------------------------

    def __repr__(self) -> str:
        m = self._plan.model
        parts = [f"{len(m.inputs)} inputs", f"{len(m.derived)} derived"]
        if m.scenarios:
            parts.append(f"{len(m.scenarios)} scenarios")
        if m.checks:  # the statements, and how many results check() gives where that differs
            runs = self._check_runs()
            parts.append(f"{len(m.checks)} checks" + (f" ({runs} runs across scenarios)"
                                                        if runs != len(m.checks) else ""))
        return f"<Plan {self.title!r} from {self.path}: {', '.join(parts)}>"

    def _facts(self) -> str:
        """The repr's facts (for the notebook views)."""
        return repr(self)[1:-1]

    def _check_runs(self) -> int:
        """How many results :meth:`check` gives: each check once per scenario it names."""
        from .questions.checks import check_scenarios

        try:
            return sum(len(check_scenarios(self._plan, c)) for c in self._plan.model.checks)
        except PlanError:
            return len(self._plan.model.checks)

    def _repr_markdown_(self) -> str:
        return _plan_markdown(self)

    def _repr_html_(self) -> str:
        import html

        m = self._plan.model
        rows = "".join(
            f"<tr><td><code>{html.escape(n)}</code></td><td>{'input' if q.is_input else 'derived'}</td>"
            f"<td>{html.escape(q.unit_text)}</td><td>{html.escape(q.doc or '')}</td></tr>"
            for n, q in ((n, self.quantities[n]) for n in self.display_order()))
        facts = html.escape(self._facts())
        scen = f"<p>scenarios: {html.escape(', '.join(self.scenario_names))}</p>" if m.scenarios else ""
        return (f"<p><b>{html.escape(self.title)}</b> <small>({html.escape(str(self.path))})</small></p>"
                f"<p>{facts}</p>{scen}<table><thead><tr><th>quantity</th><th>kind</th><th>unit</th>"
                f"<th>description</th></tr></thead><tbody>{rows}</tbody></table>")

    def __dir__(self) -> list[str]:
        """The documented API and the object's own (underscored) names."""
        return sorted(set(API) | {n for n in object.__dir__(self) if n.startswith("_")})

    # ---- the questions -------------------------------------------------------------------

    def eval(self, scenario: Scenarios = None, overrides: Overrides = None, *,
             only: Optional[Sequence[str]] = None) -> EvalResult:
        """Every quantity (or ``only`` these) per scenario, in display units."""
        from .outputs.numbers import plan_styles
        from .outputs.views import EvalView

        plan = self._plan
        values, origins = self._overrides(overrides)
        evaluations = plan.evaluate_all(plan.resolve_scenarios(scenario, written=True), values, origins)
        names = plan.display_order()
        series = plan.series_order()
        if only is not None:
            only = [only] if isinstance(only, str) else list(only)
            for n in only:
                self._quantity(n)
            names = [n for n in only if not self.quantities[n].per_period]
            series = [n for n in only if self.quantities[n].per_period]
        rows = []
        for n in names:
            q = self.quantities[n]
            rows.append(QuantityRow(
                name=n, kind="input" if q.is_input else "derived", unit=q.unit_text,
                values={ev.label: ev.display(n) for ev in evaluations}, doc=plain(q.doc), tags=q.tags,
                formula=q.formula,
                overridden=q.is_input and any(ev.origins[n].description != "the plan" for ev in evaluations),
                never=frozenset(ev.label for ev in evaluations if ev.is_never(n))))
        view = EvalView(plan, evaluations, names, series=series)
        text = f"{self.title}\n\n{view.quantities_table()}"
        found = None
        if series:  # a value per period: a table of periods (SeriesResult)
            from .outputs.results import SeriesResult

            unit, scale = plan.period_unit
            found = SeriesResult(
                unit, {ev.label: [period_number(float(p) / scale) for p in ev.periods] for ev in evaluations},
                {ev.label: {n: [bool(v) for v in ev.series[n]] if self.quantities[n].is_bool else
                            [float(v) for v in ev.series_display(n)] for n in series} for ev in evaluations},
                {n: self.quantities[n].unit_text for n in series})
            text += "\n\n" + view.series_table()
        return EvalResult(self.title, self.path, [ev.label for ev in evaluations], rows, text, found,
                          styles=plan_styles(plan, evaluations, names))

    def check(self) -> CheckResults:
        """Run every ``check`` of the plan (each in the scenarios it names), the probability checks too
        (10,000 samples, seed 0, as ``planner check``)."""
        from .outputs.views import CheckView
        from .questions.every_check import run_every_check

        results = run_every_check(self._plan)
        rows = [CheckRow(
            check=r.text, line=r.check.span.line, scenario=r.scenario, passed=r.passed,
            actual=None if r.lhs is None else Value(r.lhs, r.unit),
            expected=None if r.rhs is None else Value(r.rhs, r.unit),
            tolerance=r.tolerance, error=r.error.message if r.error else None, overrides=dict(r.overrides),
            describe="" if r.passed else r.describe()) for r in results]
        return CheckResults(self.path, rows, CheckView(self._plan, results).table(None))

    def solve(self, target: Optional[str] = None, where: Optional[str] = None, *, mode: str = "root",
              scenario: Scenarios = None, overrides: Overrides = None, closed_form: bool = True) -> SolveResults:
        """Answer the plan's ``solve``, ``maximize`` and ``minimize`` questions, or one of your own:
        ``plan.solve("alpha", where="speedup = 1")``; ``mode="min"``/``"max"`` for the smallest/largest
        integer for which the condition holds. ``scenario`` overrides the questions' own ``for``.
        ``closed_form=False`` skips deriving each answer's closed form (SymPy), as ``planner solve``
        does without ``--closed-form``: the same answers, sooner."""
        from .outputs.terminal import closed_form_latex
        from .outputs.views import SolveView
        from .questions.every_answer import answer_all
        from .questions.fast import questions as plan_questions
        from .questions.solve import adhoc

        if (target is None) != (where is None):
            raise UsageError("target and where go together", hint='plan.solve("alpha", where="speedup = 1")')
        if mode not in ("root", "min", "max"):
            raise UsageError(f"mode is `root`, `min` or `max`, not `{mode}`")
        values, origins = self._overrides(overrides)
        spec = None if scenario is None else ([scenario] if isinstance(scenario, str) else list(scenario))
        if target is not None:
            questions = [adhoc(self._plan, target, where, mode)]
        else:
            questions = plan_questions(self._plan)
        got = answer_all(self._plan, questions, spec, values, origins, closed_form=closed_form,
                         strict=target is not None)
        results, errors = got.results, got.failed + [e for _, _, e in got.missing]
        if target is not None and errors:
            raise errors[0]  # the question asked has no answer in a scenario asked
        rows = [SolveRow(
            question=r.question, alias=r.alias, scenario=r.label, target=r.target, mode=r.mode,
            value=Value(r.display_value, r.unit),
            optimum=None if r.optimum_display is None else Value(r.optimum_display, r.optimum_unit),
            closed_form=r.closed_form_text, closed_form_latex=closed_form_latex(r), method=r.method,
            verification=r.verification.text, notes=tuple(r.notes)) for r in results]
        return SolveResults(self.path, rows, errors, SolveView(self._plan, results).table(None) or "no answers")

    def sweep(self, axes: Optional[Mapping[str, Any]] = None, *, show: Optional[Sequence[str]] = None,
              scenario: Scenarios = None, overrides: Overrides = None) -> SweepResults:
        """Run the plan's ``sweep`` statements, or sweep ``axes`` as a grid:
        ``plan.sweep({"alpha": [0.3, 0.6, 0.9], "gamma": "1..8"}, show=["speedup"])``. Values are a list
        (numbers, texts such as ``"2 TB/s"``, :class:`Value`) or a text in plan syntax (``"1..1024 times 2"``)."""
        from .outputs.terminal import sweep_table
        from .questions import sweep as sweeps
        from .questions.ranges import parse_assignment

        plan = self._plan
        values, origins = self._overrides(overrides)
        show = [show] if isinstance(show, str) else (list(show) if show is not None else None)
        results = []
        if axes:
            parsed = [parse_assignment(plan, f"{name}={self._values_text(name, v)}") for name, v in axes.items()]
            for s in plan.resolve_scenarios(scenario, written=True):
                results.append(sweeps.run(plan, parsed, show, s, values, origins))
        else:
            if not plan.model.sweeps:
                raise UsageError(f"{self.path} has no `sweep` statements",
                                 hint='give the values: plan.sweep({"alpha": [0.3, 0.6, 0.9]})')
            spec = None if scenario is None else ([scenario] if isinstance(scenario, str) else list(scenario))
            for stmt in plan.model.sweeps:
                results.extend(sweeps.run_statement(plan, stmt, spec, values, origins, show=show))
        texts = [sweep_table(r) for r in results]
        return SweepResults([_sweep_table(r, text) for r, text in zip(results, texts)], "\n\n".join(texts))

    def sensitivity(self, quantity: str, *, scenario: Scenarios = None,
                    overrides: Overrides = None) -> SensitivityResults:
        """The elasticity of ``quantity`` to each input it depends on (a 1% rise in the input moves it
        by about that many %), largest first, per scenario."""
        from .outputs.views import SensitivityView
        from .questions.sensitivity import sensitivity

        values, origins = self._overrides(overrides)
        found = [sensitivity(self._plan, quantity, s, values, origins)
                 for s in self._plan.resolve_scenarios(scenario, written=True)]
        rows = [SensitivityRow(quantity=s.quantity, scenario=s.label, input=r.input, value=Value(r.value, r.unit),
                               elasticity=r.elasticity, derivative=r.derivative, method=r.method, note=r.note)
                for s in found for r in s.rows]
        return SensitivityResults(quantity, rows, SensitivityView(self._plan, found).table(None))

    def simulate(self, show: Optional[Sequence[str]] = None, *, samples: int = 10_000, seed: int = 0,
                 method: str = "lhs", scenario: Scenarios = None, overrides: Overrides = None,
                 percentiles: Sequence[float] = (5.0, 50.0, 95.0)) -> SimulationResults:
        """Monte Carlo over the uncertain inputs (``x = 40% to 70%``, ``normal(mean, sd)`` ...), as
        ``planner simulate`` runs it (one shared sample set; ``method`` ``lhs``, ``random`` or
        ``counter``): each quantity of ``show`` (default: the uncertain inputs and what they reach) with
        its value as written, mean, sd and ``percentiles``, per scenario."""
        from .outputs.simulation import SimulationView, shown
        from .questions import simulate

        plan = self._plan
        values, origins = self._overrides(overrides)
        show = [show] if isinstance(show, str) else show
        for n in show or ():
            self._quantity(n)
        names, fans = shown(plan, show)
        if method not in simulate.METHODS:
            raise UsageError(f"method is one of {', '.join(simulate.METHODS)}, not `{method}`")
        simulate.check_samples(samples)
        sims = simulate.run(plan, plan.resolve_scenarios(scenario, written=True), samples, seed, method, values,
                            origins, names)
        rows = []
        for sim in sims:
            for n in names:
                st = sim.stats(n, percentiles)
                rows.append(SimulationRow(
                    quantity=n, scenario=sim.label, unit=self.quantities[n].unit_text, point=st.get("point"),
                    mean=st.get("mean"), sd=st.get("sd"), never=st.get("never"),
                    percentiles={k: v for k, v in st.items() if k.startswith("p") and k != "point"}))
        return SimulationResults(rows, SimulationView(sims, names, list(percentiles), fans=fans).table(None))

    def explain(self, quantity: str, *, scenario: Scenarios = None, overrides: Overrides = None) -> Explanation:
        """A quantity's formula as written, the same over inputs only (plan text in the plan's units, and
        LaTeX), its value, the inputs it depends on and the quantities that use it."""
        from .outputs.views import ExplainView
        from .questions.explain import explain

        values, origins = self._overrides(overrides)
        parts = [explain(self._plan, quantity, s, values, origins)
                 for s in self._plan.resolve_scenarios(scenario, written=True)]
        return Explanation(parts, ExplainView(parts).table(None))  # as `planner explain` prints it

    # ---- overrides with units ------------------------------------------------------------------

    def _quantity(self, name: str):
        if name not in self.quantities:
            from .language.errors import UnknownNameError

            guess = suggest(name, self.quantities)
            raise UnknownNameError(f"no quantity `{name}` in {self.path}",
                                   hint=f"did you mean `{guess}`?" if guess else None)
        return self.quantities[name]

    def _literal(self, name: str, value: Any, what: str) -> str:
        """A Python value as plan text for input ``name``: texts as they are, a :class:`Value` with its unit,
        a bare number only for an input written without a unit."""
        if isinstance(value, str):
            return value
        if isinstance(value, Value):
            return value.plan_text()
        q = self.quantities.get(name)
        if isinstance(value, bool) or (hasattr(value, "dtype") and value.dtype == bool):
            return "true" if value else "false"
        if isinstance(value, (_Number, Fraction)) or hasattr(value, "item"):
            number = number_text(_item(value))
            if q is not None and not q.is_bool and q.unit_text:
                raise OverrideError(
                    f"{what} `{name}` is a bare number, but `{name}` is in {q.unit_text}",
                    hint=f'give the unit: "{number} {q.unit_text}" or planner.Value({number}, "{q.unit_text}")')
            return number
        raise OverrideError(f"{what} `{name}` must be a text such as \"4.8 TB/s\", a planner.Value or a number, "
                            f"not {type(value).__name__}")

    def _overrides(self, overrides: Overrides) -> tuple[dict, dict[str, Origin]]:
        values, origins = {}, {}
        for name, value in (overrides or {}).items():
            text = self._literal(name, value, "override")
            parsed, exact, origin = self._plan.parse_override(f"{name}={text}", origin="override")
            values[parsed] = exact
            origins[parsed] = origin
        return values, origins

    def _values_text(self, name: str, values: Any) -> str:
        if isinstance(values, str):
            return values
        if isinstance(values, (Value, _Number)):
            values = [values]
        return "[" + ", ".join(self._literal(name, v, "a sweep value of") for v in values) + "]"


API = ("title", "path", "quantities", "scenario_names", "files", "eval", "check", "solve", "sweep", "sensitivity",
       "simulate", "explain", "evaluate", "evaluate_all", "display_order")  # planner.Plan's public attributes: all of them


def _plan_markdown(plan) -> str:
    from .outputs.markup import text  # the report's escaping rule: a notebook renders raw HTML too

    lines = [f"**{text(plan.title)}** ({text(plan.path)})", "", text(plan._facts()), "",
             "| quantity | kind | unit | description |", "|---|---|---|---|"]
    for n in plan.display_order():
        q = plan.quantities[n]
        doc = text(" ".join((plain(q.doc) or "").split())).replace("|", "\\|")
        lines.append(f"| `{n}` | {'input' if q.is_input else 'derived'} | {q.unit_text} | {doc} |")
    return "\n".join(lines)


def _sweep_table(r, text: str) -> SweepTable:
    from .outputs.terminal import NEVER, json_number, sweep_title

    names = r.names
    cols = {n: r.display(n) for n in names}
    shown = {n: r.with_never(n, [json_number(_item(v)) for v in cols[n]], NEVER) for n in names}
    rows = [{n: shown[n][i] for n in names} for i in range(r.size)]
    issues = [s.describe(r.plan) for s in r.issues]
    written = r.statement.span.flat if r.statement is not None else sweep_title(r).rsplit("  [", 1)[0]
    return SweepTable(sweep=written, scenario=r.label, columns=names,
                      units={n: r.plan.quantities[n].unit_text for n in names}, rows=rows, issues=issues,
                      points_with_issues=int(r.bad.sum()), _text=text)


def _item(v):
    return v.item() if hasattr(v, "item") else v


def _answers(plan):
    """What answers the plan's questions when a formula uses an answer (imported then, not at start-up)."""
    from .questions.fast import Answers

    return Answers(plan)


def loads(text: str, name: str = "<plan>", base: Union[str, os.PathLike, None] = None,
          all_imports: bool = False, import_roots: Sequence[Union[str, os.PathLike]] = ()) -> Plan:
    """Load plan text (``base``: the folder its imports are relative to, default the current one).
    Raises :class:`planner.PlanError` with file, line and column."""
    return Plan(loads_compiled(text, name, base, all_imports, import_roots))


def load(path: Union[str, os.PathLike], all_imports: bool = False,
         import_roots: Sequence[Union[str, os.PathLike]] = ()) -> Plan:
    """Read, check and compile a ``.plan`` file. Raises :class:`planner.PlanError`.

    Imported plans bring only the quantities the plan uses; ``all_imports=True`` keeps all of them.
    Imports read only the plan's own folder (and below), the shipped library and ``import_roots``."""
    return Plan(load_compiled(path, all_imports, import_roots))


def loads_compiled(text: str, name: str = "<plan>", base: Union[str, os.PathLike, None] = None,
                   all_imports: bool = False,
                   import_roots: Sequence[Union[str, os.PathLike]] = ()) -> _evaluation.Plan:
    """:func:`loads`' compiled plan itself (:class:`planner.compute.evaluation.Plan`), as the command line,
    the language server, the workbook and the report use it."""
    return _evaluation.loads(text, name, base, all_imports, answers=_answers, import_roots=import_roots)


def load_compiled(path: Union[str, os.PathLike], all_imports: bool = False,
                  import_roots: Sequence[Union[str, os.PathLike]] = ()) -> _evaluation.Plan:
    """:func:`load`'s compiled plan itself (see :func:`loads_compiled`)."""
    return _evaluation.load(path, all_imports, answers=_answers, import_roots=import_roots)
