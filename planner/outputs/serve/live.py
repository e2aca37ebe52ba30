"""``planner serve``'s model of the page, without the web framework: the plan, its inputs as
sliders, and what the page shows recomputed for the inputs moved (:class:`Session`).

Everything here takes and returns plain data (the JSON the page reads). Figures come from the
compiled plan's evaluation, answers from :class:`planner.questions.fast.Answers` (the numeric route
first, as the report's checks), checks from :func:`planner.questions.checks.run_checks` (only those
an edited input reaches run again: the others keep the plan's own results), charts from
:mod:`planner.outputs.plots`, the Monte Carlo view from :mod:`planner.questions.simulate`, and the
write-back goes through :func:`planner.outputs.excel.writeback.write_back`, as
``planner import --write``: only the edited literals change.
"""

from __future__ import annotations

import base64
import math
import os
import threading
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ...compute.evaluation import Origin, Plan, display_value
from ...language import ir
from ...language.errors import PlanError, UsageError, render
from ..numbers import plan_styles
from ..viewmodel import headline_names, show

SLIDER_SPAN = 10  # an unbounded side of a slider reaches 10x (or 0.1x) the value as written
SLIDER_STEPS = 1000  # steps of a slider over a real number's range
SAMPLES = 2000  # trials of the Monte Carlo view
ORIGIN = Origin("the page (planner serve)", None)


def inputs_reaching(model, names) -> set[str]:
    """The inputs ``names`` (quantities and question answers) depend on, directly or not (through the
    model's own walk, :meth:`planner.language.model.Model.answer_cone`)."""
    reached = set(names).union(*(model.answer_cone(n) for n in names))
    return {n for n in reached if n in model.quantities and model.quantities[n].is_input}


def _check_names(check: ir.Check) -> set[str]:
    names = {n.name for n in ir.walk(check.condition) if isinstance(n, (ir.Name, ir.ScenarioRef))}
    for o in check.overrides:
        names |= {n.name for n in ir.walk(o.expr) if isinstance(n, ir.Name)}
    return names


class Session:
    """One plan file, served: reloaded when the file changes (``version`` counts the loads)."""

    def __init__(self, path: str, import_roots: Sequence[str] = ()) -> None:
        self.path = Path(path)
        self.import_roots = list(import_roots)
        self.lock = threading.RLock()
        self.version = 0
        self.error: Optional[str] = None  # the plan file no longer loads: why (the last good plan is kept)
        self.plan: Optional[Plan] = None
        self._mtime: Optional[int] = None
        self._load()
        if self.plan is None:
            raise self._first_error

    # ---- loading -------------------------------------------------------------------------------

    def _load(self) -> None:
        from ...compute.evaluation import load
        from ...questions.fast import Answers

        try:
            self._mtime = os.stat(self.path).st_mtime_ns
        except OSError:
            self._mtime = None
        try:
            plan = load(self.path, answers=Answers, import_roots=self.import_roots)
        except PlanError as err:
            self._first_error = err
            self.error = render(err)
            return
        self.plan = plan
        self.error = None
        self.version += 1
        self._slow = None
        self._baseline = None  # the plan's own check results
        self._answer_base: dict = {}  # (question, scenario) -> the plan's own answer row
        model = plan.model
        self._check_inputs = {id(c): inputs_reaching(model, _check_names(c)) for c in model.checks}
        self._answer_inputs = {a: model.answer_inputs(a) for a in model.answers}
        own = plan.source.name
        self.inputs = [n for n in plan.definition_order()
                       if model.quantities[n].is_input and model.quantities[n].definition.span.source.name == own]

    def refresh(self) -> int:
        """Load the plan again when its file changed since; return the version."""
        with self.lock:
            try:
                mtime = os.stat(self.path).st_mtime_ns
            except OSError:
                mtime = None
            if mtime != self._mtime:
                self._load()
            return self.version

    # ---- what the page shows -------------------------------------------------------------------

    def describe(self) -> dict:
        """The plan's title, scenarios and inputs (with units, bounds, slider ranges and docs)."""
        from ..uncertainty import has_uncertain

        with self.lock:
            self.refresh()
            plan = self.plan
            return {"version": self.version, "error": self.error, "title": plan.title,
                    "file": self.path.name, "scenarios": list(plan.scenario_names),
                    "inputs": [self._input(n) for n in self.inputs],
                    "sweeps": len(plan.model.sweeps), "uncertain": has_uncertain(plan)}

    def _input(self, name: str) -> dict:
        q = self.plan.model.quantities[name]
        out = {"name": name, "doc": q.doc, "unit": q.unit_text, "tags": list(q.tags),
               "kind": "bool" if q.is_bool else "number", "integer": bool(q.integer),
               "value": display_value(q, q.value)}
        if q.is_bool:
            return out
        scale = q.display.scale
        lo = None if q.lower is None else float(q.lower.value / scale)
        hi = None if q.upper is None else float(q.upper.value / scale)
        out["lower"] = None if lo is None else {"value": lo, "inclusive": q.lower.inclusive}
        out["upper"] = None if hi is None else {"value": hi, "inclusive": q.upper.inclusive}
        v = out["value"]
        # a bound where the plan gives one; else 0.1x..10x the value as written (-1..1 around zero)
        low, high = (v / SLIDER_SPAN, v * SLIDER_SPAN) if v > 0 else (v * SLIDER_SPAN, v / SLIDER_SPAN) \
            if v < 0 else (-1.0, 1.0)
        low = low if lo is None else max(low, lo) if v != 0 else lo
        high = high if hi is None else min(high, hi) if v != 0 else hi
        if q.integer:
            low, high = float(-(-low // 1)), float(high // 1)
        if high <= low:
            high = low + (SLIDER_SPAN if q.integer else max(abs(low), 1.0))
        out["min"], out["max"] = low, high
        out["step"] = 1 if q.integer else (high - low) / SLIDER_STEPS
        return out

    def overrides(self, edits: Mapping[str, Any]) -> dict:
        """The page's edits (display units) as exact overrides in base units; UsageError on a name that
        is not one of the plan's own inputs or a value of the wrong kind."""
        model = self.plan.model
        out = {}
        for name, value in (edits or {}).items():
            if name not in self.inputs:
                raise UsageError(f"`{name}` is not an input of {self.path.name}")
            q = model.quantities[name]
            if q.is_bool:
                if not isinstance(value, bool):
                    raise UsageError(f"`{name}` is true or false, not {value!r}")
                out[name] = value
            else:
                if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                    raise UsageError(f"`{name}` takes a number, not {value!r}")
                try:
                    exact = Fraction(str(value))
                except (ValueError, ZeroDivisionError):
                    raise UsageError(f"`{name}` takes a number, not {value!r}") from None
                out[name] = exact * q.display.scale
        return out

    def _scenario(self, scenario: Optional[str]) -> Optional[str]:
        if scenario in (None, "", "base"):
            return None
        if scenario not in self.plan.model.scenarios:
            raise UsageError(f"no scenario `{scenario}` in {self.path.name}")
        return scenario

    def _answers(self):
        from ...questions.fast import Answers

        if self._slow is None:
            self._slow = Answers(self.plan)  # the one door, made once per load: it keeps what it derives
        return self._slow

    def compute(self, scenario: Optional[str], edits: Mapping[str, Any]) -> dict:
        """The headline figures, every input's value, the answers and the checks, for ``edits`` (display
        units) in ``scenario``; a plan error (a value outside a constraint) comes back as ``error``."""
        with self.lock:
            version = self.refresh()
            plan = self.plan
            try:
                scenario = self._scenario(scenario)
                overrides = self.overrides(edits)
                origins = {n: ORIGIN for n in overrides}
                ev = plan.evaluate(scenario, overrides, origins)
            except PlanError as err:
                return {"version": version, "error": render(err), "plan_error": self.error}
            answers = self._answers()
            out = {"version": version, "error": None, "plan_error": self.error, "scenario": scenario,
                   "inputs": {n: ev.display(n) for n in self.inputs},
                   "headlines": [self._figure(ev, n) for n in headline_names(plan)[0]],
                   "answers": self._answer_rows(answers, overrides, origins),
                   "checks": self._checks(answers, overrides)}
            return out

    def _figure(self, ev, name: str) -> dict:
        q = self.plan.model.quantities[name]
        v = ev.display(name)
        number = v if isinstance(v, bool) else (float(v) if math.isfinite(v) else None)
        if "_styles" not in self.__dict__:  # each quantity's one style, as the report and the workbook write it
            self.__dict__["_styles"] = plan_styles(self.plan)
        return {"name": name, "doc": q.doc, "unit": q.unit_text, "number": number,
                "text": "never" if ev.is_never(name) else show(v, q.unit_text, self._styles.get(name))}

    def _answer_rows(self, answers, overrides, origins) -> list[dict]:
        from ...questions.every_answer import question_scenarios
        from ...questions import fast

        rows = []
        model = self.plan.model
        for stmt in fast.questions(self.plan):
            # an answer no edited input reaches is the plan's own: asked once (bisections cost milliseconds)
            reached = self._answer_inputs[stmt.alias] & set(overrides) if stmt.alias in model.answers else True
            for s in question_scenarios(self.plan, stmt):  # `for all`: the plan as written too
                key = (id(stmt), s)
                if not reached and key in self._answer_base:
                    rows.append(self._answer_base[key])
                    continue
                row = {"question": ir.question_text(stmt), "name": stmt.alias, "scenario": s, "text": "",
                       "error": None}
                try:
                    if stmt.alias is not None:
                        value = answers.value(stmt.alias, s, overrides, origins)
                        scale, unit = answers.unit(stmt.alias)
                    else:
                        r = answers.answer(stmt, s, overrides, origins)
                        value, scale, unit = Fraction(r.value), Fraction(1), ""
                        q = self.plan.model.quantities.get(r.target)
                        if q is not None:
                            scale, unit = q.display.scale, q.unit_text
                    v = getattr(value, "value", value)  # an optimum's best value
                    row["number"] = float(Fraction(v) / scale)
                    row["text"] = show(row["number"], unit)
                except PlanError as err:
                    row["error"] = err.message if hasattr(err, "message") else str(err)
                except TypeError as err:  # an answer of a kind the page cannot show
                    row["error"] = str(err)
                if not reached:
                    self._answer_base[key] = row
                rows.append(row)
        return rows

    def _checks(self, answers, overrides) -> dict:
        from ...questions.checks import run_checks

        model = self.plan.model
        if self._baseline is None:
            self._baseline = [(r, _check_row(r)) for r in run_checks(self.plan, self._answers())]
        edited = set(overrides)
        again = [c for c in model.checks if self._check_inputs[id(c)] & edited]
        fresh = iter(run_checks(self.plan, answers, overrides, checks=again) if again else ())
        ran = {id(c) for c in again}
        rows = [_check_row(next(fresh)) if id(r.check) in ran else row for r, row in self._baseline]
        return {"passed": sum(r["passed"] for r in rows), "failed": sum(not r["passed"] for r in rows),
                "rows": rows, "ran": len(again)}

    # ---- on request: charts, Monte Carlo, write-back ---------------------------------------------

    def charts(self, edits: Mapping[str, Any]) -> dict:
        """Each sweep statement's chart (PNG, as a data: URL) for the edits, drawn as the report draws it."""
        from ...questions.sweep import run_statement
        from .. import plots

        with self.lock:
            version = self.refresh()
            plan = self.plan
            out = []
            try:
                overrides = self.overrides(edits)
                origins = {n: ORIGIN for n in overrides}
                for stmt in plan.model.sweeps:
                    results = run_statement(plan, stmt, overrides=overrides, origins=origins)
                    out.append({"title": stmt.span.flat, "png": _data_url(plots.sweep_png(results, keep=False))})
            except PlanError as err:
                return {"version": version, "error": render(err), "charts": out}
            return {"version": version, "error": None, "charts": out}

    def simulate(self, scenario: Optional[str], edits: Mapping[str, Any], samples: int = SAMPLES) -> dict:
        """Histograms of the headline figures an uncertain input reaches (as ``planner simulate``)."""
        from ...questions import simulate
        from .. import plots, uncertainty

        with self.lock:
            version = self.refresh()
            plan = self.plan
            try:
                scenario = self._scenario(scenario)
                overrides = self.overrides(edits)
                if not uncertainty.has_uncertain(plan):
                    return {"version": version, "error": f"{self.path.name} has no uncertain inputs to simulate",
                            "figures": []}
                names = uncertainty.figures(plan, headline_names(plan)[0]) or simulate.default_names(plan)
                names = [n for n in names if not plan.model.quantities[n].is_bool]
                (sim,) = simulate.run(plan, [scenario], samples=samples, overrides=overrides,
                                      origins={n: ORIGIN for n in overrides}, names=names)
            except PlanError as err:
                return {"version": version, "error": render(err), "figures": []}
            figures = []
            for name in names:
                if not sim.varies(name):
                    continue
                q = plan.model.quantities[name]
                stats = sim.stats(name, ())
                data = uncertainty.PlotData(name, q.doc or name, q.unit_text,
                                            (("", sim.display(name).astype(float), float(stats["point"])),))
                figures.append({"name": name, "png": _data_url(plots.distribution_png(data, keep=False))})
            return {"version": version, "error": None, "samples": samples, "figures": figures}

    def write(self, scenario: Optional[str], edits: Mapping[str, Any]) -> dict:
        """Write the edits into the plan's file through ``planner import --write``'s path: each edited
        literal, and nothing else, changes (in ``scenario``'s block where that scenario sets the input)."""
        from ..excel.book import plan_hash
        from ..excel.reader import Change, Imported
        from ..excel.writeback import write_back

        with self.lock:
            self.refresh()
            plan = self.plan
            try:
                scenario = self._scenario(scenario)
                overrides = self.overrides(edits)
                imported = Imported(path="the page", overrides={}, origins={}, changes=[], missing=[],
                                    plan_hash=plan_hash(plan.source.text))
                own = plan.model.scenarios[scenario].overrides if scenario is not None else {}
                for name, value in overrides.items():
                    q = plan.model.quantities[name]
                    where = scenario if name in own else None
                    was = own[name] if where is not None else q.value
                    if value == was:
                        continue
                    cell = f"the page's `{name}`"
                    if where is None:
                        imported.overrides[name] = value
                        imported.origins[name] = Origin(cell, None)
                    else:
                        imported.scenario_overrides.setdefault(where, {})[name] = value
                        imported.scenario_origins.setdefault(where, {})[name] = Origin(cell, None)
                    imported.changes.append(Change(name, cell, display_value(q, was), display_value(q, value),
                                                   q.unit_text, where))
                # every edit meets the constraints where it applies, as `planner import` checks the cells it reads
                imported.evaluate(plan, [None, *plan.model.scenarios])
                changes, diff, warnings = write_back("the page", plan, imported, import_roots=self.import_roots)
            except PlanError as err:
                return {"version": self.version, "error": render(err), "written": 0}
            self.refresh()
            return {"version": self.version, "error": None, "written": len(changes), "diff": diff,
                    "warnings": warnings}


def _check_row(r) -> dict:
    return {"text": r.text, "scenario": r.scenario, "passed": bool(r.passed), "line": r.check.span.line,
            "why": "" if r.passed else r.describe()}


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
