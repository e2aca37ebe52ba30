"""The report's view model: everything a plan says and computes, as plain data.

Templates (the shipped ``report.md.j2`` and users' own) see only what
:func:`view_model` returns: dicts, lists, strings, floats, ints, bools and
``None``; no planner objects, so a template cannot call into the library.
Every key is documented in docs/report.md ("The view model"); keys
may be added, existing ones keep their meaning (``format`` names the shape).

Numbers come twice: ``value``/``scenario_values`` are display strings (6
significant digits, with the unit), ``number``/``scenario_numbers`` the
full-precision value in the display unit (``None`` when not finite). Lists
that run "per scenario" are aligned with the top-level ``scenarios`` list. No
key is named like a dict method (``values``, ``items``, ``keys``...), since
Jinja's ``a.b`` finds the method first. Everything is in definition
order, so the same plan always gives the same view.

**Headline quantities** are the ones tagged ``[headline]``; when no quantity
is, they are the derived quantities of the plan's own file (not imported)
that no other quantity uses (the leaves of the dependency graph): the
figures a plan exists to produce.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from ..compute.evaluation import Evaluation, Plan
from ..questions.checks import CheckResult, never_side
from ..questions.every_check import run_every_check
from .latex import FormulaPrinter, formula_latex, visible, formula_equation, function_head, layout, name_latex
from ..language.live import plain
from .markup import code, markdown, prose as said, text
from .numbers import NumberStyle, answer_style, figure, plan_styles, prose_style, style_for, texts, written_decimals

FORMAT = "planner.report/1"
MAX_SWEEP_ROWS = 200  # rows per sweep table in a report; `planner sweep` prints them all
HEADLINE_TAG = "headline"
# GitHub's column is about 900 px wide; a table wider than that scrolls and hides its right side.
SCENARIO_COLUMNS = 5  # up to this many scenarios side by side; past it, scenarios are rows
TABLE_COLUMNS = 7  # columns of a table whose rows are scenarios: their labels, then quantities
DISPLAY_MATH_AFTER = 60  # characters of LaTeX past which a formula is set in display math
# The dependency graph: past these sizes GitHub's Mermaid draws labels too small to read
# (and at 500 edges it refuses to draw), so the report draws the summary graph instead.
GRAPH_NODES = 30
GRAPH_EDGES = 50
SUMMARY_EDGES = 150  # the summary graph keeps the first headlines whose edges fit
TOP_MOVERS = 3  # inputs named per headline figure in "What moves the headline figures"
CLOSED_FORM_CHARACTERS = 4 * 70  # a closed form of more than four lines of the column is not printed
DISPLAY_FORM_LONGER = 1.25  # a closed form in display units this much longer (+ 10 characters) than in base units is not used
FOLD_AFTER = 30  # rows past which a table (or list) is folded in a <details> block


@dataclass
class Analysis:
    """What a report shows, computed once (``planner build`` reuses it for the
    summary and the workbook)."""

    plan: Plan
    evaluations: list[Evaluation]  # one per scenario, or the base plan when there are none
    base: Evaluation  # the plan as written
    checks: list[CheckResult]
    sweeps: list[tuple[Any, list]] = field(default_factory=list)  # (ir.Sweep, SweepResult per scenario)
    # (statement, [(scenario, SolveResult or SolveError)]) per solve / maximize / minimize, in file order
    solves: list[tuple[Any, list]] = field(default_factory=list)
    sensitivity: list[tuple[str, list]] = field(default_factory=list)  # (headline quantity, Sensitivity per scenario)
    # a plan with uncertain inputs: what the report simulates, and a Simulation per scenario (.uncertainty)
    uncertain_figures: list[str] = field(default_factory=list)
    simulations: list = field(default_factory=list)
    check_simulations: list = field(default_factory=list)  # scenarios only probability checks name
    answers: Any = None  # the questions' one door (fast.Answers) the checks and solves shared; the workbook's too

    def solve_results(self) -> list:
        """Every solve answer (all statements, all scenarios), for the workbook."""
        from ..questions.answer import SolveResult

        return [r for _, answers in self.solves for _, r in answers if isinstance(r, SolveResult)]

    @property
    def styles(self) -> dict:
        """Each quantity's number style, the one every output uses (:func:`.numbers.plan_styles`)."""
        if "_styles" not in self.__dict__:
            self.__dict__["_styles"] = plan_styles(self.plan, [*self.evaluations, self.base])
        return self.__dict__["_styles"]

    @property
    def checks_failed(self) -> int:
        return sum(1 for r in self.checks if not r.passed)


def _base_is_its_own_case(plan: Plan, base, evaluations) -> bool:
    """Whether the plan as written is a case the scenarios leave out: declared scenarios (not axes'
    combinations), none of which sets exactly the plan's own inputs (`scenario base_case "as written"`)."""
    if plan.model.axes or not evaluations or any(ev.scenario is None for ev in evaluations):
        return False
    for ev in evaluations:
        if all(ev.inputs.get(n) == base.inputs.get(n) for n in base.inputs):
            return False  # this scenario is the plan as written
    return True


def analyse(plan: Plan) -> Analysis:
    """Evaluate every scenario, run the checks (and the questions, when the
    modules answering them are installed). Raises PlanError on a bad plan."""
    scenarios = plan.resolve_scenarios("all")
    evaluations = plan.evaluate_all(scenarios)
    base = next((ev for ev in evaluations if ev.scenario is None), None) or plan.evaluate(None)
    if _base_is_its_own_case(plan, base, evaluations):  # `scenario viral { ... }` is read against the plan
        evaluations = [base, *evaluations]  # as written: the report shows both (`--scenario all` is the variants)
    answers = None
    if plan.model.solves or plan.model.optimizes:
        from ..questions.fast import Answers

        answers = Answers(plan)  # one door, shared by the checks and the Solves section
    from . import uncertainty

    figures, simulations, check_simulations = [], [], []
    if uncertainty.has_uncertain(plan):
        figures = uncertainty.figures(plan, headline_names(plan)[0])
        shown = [ev.scenario for ev in evaluations]
        names = uncertainty.simulated(plan, figures)
        if not names and plan.model.series:  # no figure to simulate, only series: their fans need the trials
            from .periods import headline_series

            names = headline_series(plan, headline_names(plan)[0])
        simulations = uncertainty.simulations(plan, names, shown)
        checked = [s for s in uncertainty.checked_scenarios(plan) if s not in shown]  # a check's own scenario
        check_simulations = uncertainty.simulations(plan, names, checked)
    sims = {sim.scenario: sim for sim in simulations + check_simulations}
    # the one check door, as `planner check` runs it (the probability checks over the report's simulations)
    analysis = Analysis(plan, evaluations, base, run_every_check(plan, answers=answers, sims=sims),
                        uncertain_figures=figures, simulations=simulations, check_simulations=check_simulations,
                        answers=answers)
    if plan.model.sweeps:
        from ..questions.sweep import run_statement

        analysis.sweeps = [(stmt, run_statement(plan, stmt)) for stmt in plan.model.sweeps]
    if answers is not None:
        analysis.solves = _solve_all(plan, answers)
    from ..questions.sensitivity import sensitivity

    for name in headline_names(plan)[0]:
        if not plan.quantities[name].is_bool:
            analysis.sensitivity.append((name, [sensitivity(plan, name, ev.scenario, evaluation=ev)
                                                for ev in evaluations]))
    return analysis


def _solve_all(plan: Plan, answers) -> list[tuple[Any, list]]:
    """Every question in each of its scenarios, through the one door
    (:func:`planner.questions.every_answer.answer_all`); a question without an answer
    (no root, several, not monotone) keeps its error as the reason. Named
    questions come from ``answers``' cache when the checks already asked."""
    from ..language.errors import SolveError
    from ..questions.every_answer import answer_all

    questions = answers.questions()
    got = answer_all(plan, questions, closed_form=True, answers=answers, strict=False)
    for err in got.failed:
        if not isinstance(err, SolveError):
            raise err  # a broken plan, not a question without an answer
    return [(stmt, [(s, r) for q, s, r in got.entries if q is stmt]) for stmt in questions]


# ---- small helpers --------------------------------------------------------------

def number(v: Any) -> Optional[float | bool]:
    """A JSON-safe number: bools stay bools, non-finite floats become None."""
    if isinstance(v, bool) or v is None:
        return v
    f = float(v)
    return f if math.isfinite(f) else None


def _plain(v: Any) -> Optional[float | bool]:
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    return float(v)


def figures(values: Sequence[Any], unit: str = "") -> list[str]:
    """One quantity's figures in one number style, the workbook's (``70,000,000,000``; ``16 | 8 | 4.15``)."""
    return texts([_plain(v) for v in values], unit)


def show(v: Any, unit: str = "", style: Optional[NumberStyle] = None) -> str:
    """One figure with its unit, digits grouped (``70,000,000,000``); nothing for None."""
    return "" if v is None else figure(_plain(v), unit, style)


_PYTHON_EXPONENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([-+]?\d+)\b")  # 1.56e-61, 1.14E-13
_CODE = re.compile(r"(`+).+?\1", re.S)
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def prose(text: Optional[str]) -> Optional[str]:
    """planner's messages for a reader: ``1.56e-61`` becomes ``1.56 × 10⁻⁶¹`` (code spans, the plan's
    own text, are left as written)."""
    if not text:
        return text

    def exponent(m: re.Match) -> str:
        return f"{m.group(1)} × 10{str(int(m.group(2))).translate(_SUPERSCRIPT)}"

    out, last = [], 0
    for m in _CODE.finditer(text):
        out.append(_PYTHON_EXPONENT.sub(exponent, text[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_PYTHON_EXPONENT.sub(exponent, text[last:]))
    return "".join(out)


def _tag_value(tag: str, key: str) -> Optional[str]:
    """``"source: spec sheet"`` -> ``"spec sheet"`` for key ``source``."""
    head, sep, rest = tag.partition(":")
    if head.strip() == key:
        return rest.strip() if sep else ""
    return None


def _own(plan: Plan, name: str) -> bool:
    """Defined in the plan's own file (not imported)."""
    return plan.quantities[name].definition.span.source.name == plan.source.name


def report_order(plan: Plan, names: Optional[Iterable[str]] = None) -> list[str]:
    """``names`` (default: every quantity): the plan's own in file order, then imported ones by namespace."""
    def key(name: str) -> tuple:
        own = _own(plan, name)
        return (not own, "" if own else name.rpartition(".")[0], plan.quantities[name].definition.span.start)
    return sorted(plan.quantities if names is None else names, key=key)


def headline_names(plan: Plan) -> tuple[list[str], str]:
    """The headline quantities and the rule that picked them."""
    order = [n for n in report_order(plan) if not plan.quantities[n].per_period]  # series: :mod:`.periods`
    tagged = [n for n in order if HEADLINE_TAG in plan.quantities[n].tags]
    if tagged:
        return tagged, "tagged [headline]"
    used = {d for q in plan.quantities.values() for d in q.deps}
    leaves = [n for n in order if not plan.quantities[n].is_input and n not in used and _own(plan, n)]
    return leaves, "derived quantities of the plan's own file that no other quantity uses"


# ---- live values in prose ---------------------------------------------------------

class LiveValues:
    """Fills ``{name}`` and ``{name -> unit}`` in the plan's prose (:mod:`planner.language.live`) with
    figures by the one number rule, per scenario. Across scenarios a value that is the same everywhere
    is written once; one that differs is written per scenario (``16.06 GB (`8b`) or 141.11 GB (`70b`)``)."""

    def __init__(self, analysis: "Analysis") -> None:
        from ..questions.answer import SolveResult

        self.analysis = analysis
        self.plan = analysis.plan
        # answer name -> {scenario label: (value in base units, in its display unit, that unit)}
        self.answers: dict[str, dict[str, tuple]] = {}
        for stmt, results in analysis.solves:
            if stmt.alias is None:
                continue
            for _, r in results:
                if isinstance(r, SolveResult):
                    self.answers.setdefault(stmt.alias, {})[r.label] = (r.value, r.display_value, r.unit)
                    if r.optimum is not None:
                        self.answers.setdefault(stmt.alias + ".value", {})[r.label] = (
                            r.optimum, r.optimum_display, r.optimum_unit)
        self._units: dict[str, Any] = {}

    def _scale(self, unit: str) -> float:
        if unit not in self._units:
            from ..language.dims import unit_of
            from ..language.live import unit_expr
            from ..language.source import Source, Span

            src = Source("<live>", unit)
            self._units[unit] = float(unit_of(unit_expr(unit, Span(src, 0, len(unit))), self.plan.model.units).scale)
        return self._units[unit]

    def _values(self, live) -> tuple[list[tuple[str, Any]], str]:
        """(scenario label, value in the unit shown) for every scenario that has it, and that unit."""
        name = live.name
        out: list[tuple[str, Any]] = []
        if name in self.plan.quantities:
            q = self.plan.quantities[name]
            unit = "" if q.is_bool else (live.unit if live.unit is not None else q.unit_text)
            for ev in self.analysis.evaluations:
                if q.is_bool:
                    out.append((ev.label, bool(ev[name])))
                elif live.unit is None:
                    out.append((ev.label, ev.display(name)))
                else:
                    out.append((ev.label, float(ev[name]) / self._scale(live.unit)))
            return out, unit
        unit = live.unit or ""
        for label, (base, shown, own) in self.answers.get(name, {}).items():
            if live.unit is None:
                out.append((label, shown))
                unit = own
            else:
                out.append((label, float(base) / self._scale(live.unit)))
        return out, unit

    def figure(self, live, scenario: Optional[str] = None, across: bool = False) -> str:
        """A live value's figure: in ``scenario``, or said across the scenarios; ``across``: in the
        number style of every scenario's figure (a sentence said once per scenario reads as a table)."""
        values, unit = self._values(live)
        every = values
        if scenario is not None:
            values = [(label, v) for label, v in values if label == scenario] or values
        if not values:
            return "n/a"
        style = prose_style([_plain(v) for _, v in (every if across else values)], unit)  # three significant digits
        texts = [(label, _unbroken(figure(_plain(v), unit, style), unit)) for label, v in values]
        distinct = list(dict.fromkeys(t for _, t in texts))
        if len(distinct) == 1:
            return distinct[0]
        groups = [(t, [label for label, u in texts if u == t]) for t in distinct]
        if len(groups) == 2 and all(isinstance(_plain(v), bool) for _, v in values):  # true, except in a few
            (common, most), (rare, few) = sorted(groups, key=lambda g: -len(g[1]))
            return f"{common}, except in " + _listed(few) + f" ({rare})"
        if len(groups) > MANY_VALUES:  # a range: from the least (where) to the most (where)
            numbers = [(float(_plain(v)), label, t) for (label, v), (_, t) in zip(values, texts)]
            low, high = min(numbers), max(numbers)
            return f"from {low[2]} (`{low[1]}`) to {high[2]} (`{high[1]}`)"
        parts = [f"{t} (" + ", ".join(f"`{label}`" for label in labels) + ")" for t, labels in groups]
        return ", ".join(parts[:-1]) + " or " + parts[-1]  # the sentence reads on: "above 55.3 % (`a`) or 77.5 % (`b`) utilisation"

    def __call__(self, text: Optional[str], scenario: Optional[str] = None) -> Optional[str]:
        from ..language.live import fill

        if scenario is None:
            paired = self.paired(text, lambda t, f: fill(t, f or (lambda live: "")))
            if paired is not None:
                return paired
        return fill(text, lambda live: self.figure(live, scenario))

    def said(self, text: Optional[str], rule: Callable[[Any], str]) -> str:
        """The plan's prose as the report says it (:func:`planner.outputs.markup.prose`, the words
        through ``rule``), its live values filled; in pairs per scenario where two of them vary."""
        paired = self.paired(text, lambda t, f: said(t, f, rule=rule))
        return paired if paired is not None else said(text, self.figure, rule=rule)

    def paired(self, text: Optional[str], render: Callable[[str, Any], str]) -> Optional[str]:
        """Where two or more live values of ``text`` differ between scenarios, the part from the first
        live value to the last said once per scenario, each scenario's figures together
        (``at `a`: 12,499 token/s for 0.62 USD; `b`: 8,723 token/s for 0.89 USD``; scenarios that read
        the same share one part); None where at most one varies (:meth:`figure` says it alone).
        ``render(raw, figure)`` renders a piece of the raw text with that figure function (None: none
        in it)."""
        from ..language.live import Live, scan

        if not text or "{" not in text:
            return None
        lives = [p for p in scan(text)[0] if isinstance(p, Live)]
        varying = {(p.name, p.unit) for p in lives
                   if len({repr(_plain(v)) for _, v in self._values(p)[0]}) > 1}
        if len(varying) < 2:
            return None
        first, last = lives[0], lives[-1]
        middles: dict[str, list[str]] = {}
        for ev in self.analysis.evaluations:
            middle = render(text[first.start:last.end],
                            lambda live, label=ev.label: self.figure(live, label, across=True))
            middles.setdefault(middle, []).append(ev.label)
        listed = "; ".join(", ".join(f"`{label}`" for label in labels) + f": {middle}"
                           for middle, labels in middles.items())
        return render(text[:first.start], None) + listed + render(text[last.end:], None)


MANY_VALUES = 4  # a live value with more distinct figures across the scenarios is said as a range


def _listed(labels: Sequence[str]) -> str:
    names = [f"`{label}`" for label in labels]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _unbroken(text: str, unit: str) -> str:
    """A figure and its unit kept on one line in a sentence (``76.8 %`` never breaks before the ``%``)."""
    if unit and text.endswith(" " + unit):
        return text[:-len(unit) - 1] + "\u00a0" + unit
    return text


# ---- sections -------------------------------------------------------------------

def _axes(analysis: Analysis) -> list[dict]:
    """Each ``axis`` once, with its members and what each sets (valued in a scenario that picks it)."""
    from ..language import ir

    plan = analysis.plan
    out = []
    for stmt in plan.model.plan.statements:
        if not isinstance(stmt, ir.Axis):
            continue
        names: list[str] = []
        members = []
        for m in stmt.members:
            for o in m.overrides:
                if o.name not in names:
                    names.append(o.name)
            ev = next((ev for ev in analysis.evaluations if ev.scenario is not None
                       and plan.model.scenarios[ev.scenario].picks.get(stmt.name) == m.name), None)
            members.append({"name": m.name, "doc": plain(m.doc),
                            "overrides": [_override(plan, o, ev) for o in m.overrides]})
        rows = []  # one per input the axis sets: its value in each member (`None` where a member leaves it)
        for name in names:
            cells = []
            for m in members:
                o = next((o for o in m["overrides"] if o["name"] == name), None)
                cells.append(None if o is None else {"figure": o["figure"], "written": o["written"],
                                                     "literal": o["literal"]})
            rows.append({"name": name, "unit": plan.quantities[name].unit_text, "cells": cells})
        out.append({"name": stmt.name, "doc": plain(stmt.doc), "members": members, "inputs": names, "rows": rows})
    return out


def _override(plan: Plan, o, ev: Optional[Evaluation]) -> dict:
    """One ``name = expr`` of a scenario or an axis member; its value when evaluated in ``ev``."""
    from ..language import ir

    q = plan.quantities[o.name]
    written = o.expr.span.flat
    literal = not any(isinstance(n, ir.Name) for n in ir.walk(o.expr))
    d = {"name": o.name, "unit": q.unit_text, "written": written, "literal": literal,
         "value": None, "figure": None, "number": None}
    if ev is not None:
        v = ev.display(o.name)
        d["value"], d["figure"], d["number"] = show(v, q.unit_text), show(v), number(v)
    return d


def _scenarios(analysis: Analysis, axes: Sequence[dict]) -> list[dict]:
    plan = analysis.plan
    out = []
    for ev in analysis.evaluations:
        s = plan.model.scenarios.get(ev.scenario) if ev.scenario else None
        overrides = [_override(plan, o, ev) for o in s.scenario.overrides] if s is not None else []
        out.append({
            "name": ev.label,
            "doc": plain(s.scenario.doc) if s is not None else None,
            "axis": s.axis if s is not None else None,
            # the member of each axis (aligned with `axes`) for a combination of axes, else empty
            "members": [s.picks.get(a["name"], "") for a in axes] if s is not None and s.picks else [],
            "overrides": overrides,
        })
    return out


def _quantity(analysis: Analysis, name: str, headlines: Sequence[str], overridden: set[str],
              used_by: Mapping[str, list[str]], booleans: set[str]) -> dict:
    plan = analysis.plan
    q = plan.quantities[name]
    unit = q.unit_text
    tags = list(q.tags)
    per_scenario = [ev.display(name) for ev in analysis.evaluations]
    base = analysis.base.display(name)
    style = analysis.styles.get(name) or style_for([], unit)
    d = {
        "name": name,
        "kind": "input" if q.is_input else "derived",
        "type": "boolean" if q.is_bool else "number",
        "unit": unit,
        "doc": q.doc,
        "tags": tags,
        "lower_bound": "lower bound" in tags,
        "assumption": any(_tag_value(t, "assumption") is not None for t in tags),
        "source": "; ".join(v for t in tags if (v := _tag_value(t, "source"))) or None,
        "headline": name in headlines,
        "line": q.definition.span.line,
        "formula": q.formula,
        "depends_on": report_order(plan, q.deps),
        "used_by": used_by.get(name, []),
        "value": show(base, unit, style),
        "figure": style.text(_plain(base)),  # the value without its unit: the digits the workbook's cell shows
        "number": number(base),
        # a `first(...)` that found nothing says "never", not nan
        "scenario_values": ["never" if ev.is_never(name) else style.text(_plain(v))
                            for ev, v in zip(analysis.evaluations, per_scenario)],  # no unit: tables have a column
        "scenario_numbers": [number(v) for v in per_scenario],
        "varies": len({repr(ev.values[name]) for ev in analysis.evaluations}) > 1,
    }
    d["said_values"] = d["scenario_values"]  # the Findings' table's, once in three digits: one spelling now
    # per scenario, whether it reads other than the first scenario's (the plan as written): the Results' bold
    d["changed"] = [v != d["scenario_values"][0] for v in d["scenario_values"]]
    if analysis.base.is_never(name):
        d["value"] = d["figure"] = "never"
    if q.is_input:
        d["latex"] = name_latex(name)
        d["equation_latex"] = None
        d["constraints"] = [c.span.flat for c in q.definition.constraints]
        d["overridden"] = name in overridden
    else:
        # as written: a call stays a call, a literal keeps its unit (the functions are listed once)
        d["latex"] = formula_latex(q.definition.expr)
        d["equation_latex"] = formula_equation(name_latex(name), q.definition.expr)
        d["constraints"] = []
        d["overridden"] = False
    d["display_math"] = d["equation_latex"] is not None and (
        len(d["equation_latex"]) > DISPLAY_MATH_AFTER or "\\frac" in d["equation_latex"]
        or "\\begin" in d["equation_latex"])
    return d


def _functions(plan: Plan) -> list[dict]:
    """The user functions the plan's formulas call (directly or through other functions), in file
    order, each with its formula once: the Definitions print a call as the call."""
    from ..language import ir

    functions = plan.model.functions
    called: set[str] = set()
    todo = [q.definition.expr for q in plan.quantities.values()]
    while todo:
        for node in ir.walk(todo.pop()):
            if isinstance(node, ir.Call) and node.func in functions and node.func not in called:
                called.add(node.func)
                todo.append(functions[node.func].body)
                todo.extend(p.default for p in functions[node.func].params if p.default is not None)
    out = []
    for name, f in functions.items():
        if name not in called:
            continue
        tex = layout(function_head(f), FormulaPrinter().p(f.body)[0])
        out.append({
            "name": name,
            "params": [p.name for p in f.params],
            "doc": plain(f.doc),
            "label": _label(plain(f.doc), name),
            "unit": f.display.text if f.display is not None else "",
            "line": f.span.line,
            "formula": f.body.span.flat,
            "equation_latex": tex,
            "display_math": len(tex) > DISPLAY_MATH_AFTER or "\\frac" in tex or "\\begin" in tex,
        })
    return out


def _assumptions(quantities: Sequence[dict]) -> tuple[list[dict], list[dict]]:
    assumptions, sources = [], []
    for q in quantities:
        source = q["source"]
        if source:
            sources.append({"name": q["name"], "source": source, "doc": q["doc"], "kind": q["kind"],
                            "value": q["value"]})
        details = [v for t in q["tags"] if (v := _tag_value(t, "assumption")) is not None]
        if details:
            assumptions.append({
                "name": q["name"], "kind": q["kind"], "value": q["value"], "doc": q["doc"],
                "detail": "; ".join(v for v in details if v) or None, "source": source,
            })
    return assumptions, sources


def _check_figures(condition: bool, r: CheckResult) -> dict:
    """A check's expected and actual figures by the one number rule (one style for the pair), with more
    decimals only where the two would otherwise look equal and are not."""
    never = never_side(r.check)
    if never is not None:  # `runway == never`: the figure's value, or never
        return {"expected": r.expected, "actual": r.actual if r.lhs is None else show(r.lhs, r.unit)}
    if condition:
        return {"expected": "true", "actual": "true" if r.passed else "false"}
    lhs, rhs = (r.flags[0], r.flags[1]) if r.flags else (r.lhs, r.rhs)
    a, b = _plain(lhs), _plain(rhs)
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return {"expected": show(b, r.unit), "actual": show(a, r.unit)}
    style = style_for([a, b], r.unit)
    operands = getattr(r.check.condition, "operands", ())
    written = written_decimals(operands[1].span.flat) if len(operands) == 2 else None
    if written is not None and written > style.decimals and not style.scientific:  # as precise as written
        style = NumberStyle(written, False, style.percent, money=style.money)
    if a != b and not r.passed and not style.scientific:  # a failure never shows two equal figures
        for extra in range(0, 10):
            more = NumberStyle(style.decimals + extra, False, style.percent, money=style.money)
            if more.text(a) != more.text(b) or extra == 9:
                style = more if extra else style
                break
    out = {"expected": show(b, r.unit, style), "actual": show(a, r.unit, answer_style(a, r.unit, r.answer_mode, style))}
    if r.passed and written is not None and written < style.decimals and not (style.scientific or style.money):
        out["expected"] = show(b, r.unit, NumberStyle(written, False, style.percent))  # `~= 12` reads 12
    ops = getattr(r.check.condition, "ops", ())
    if getattr(r, "stat_text", "") and len(ops) == 1 and ops[0].value in _BOUND:  # `P(x) >= 30%`: a bound
        out["expected"] = f"{_BOUND[ops[0].value]} {out['expected']}"
        m = re.search(r"\(sampling error about ([^)]*)\)", r.stat_text)
        if m:
            out["actual"] += f" (± {m.group(1)})"
    return out


_BOUND = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}  # a probability check's comparison, before its bound


def _checks(results: Sequence[CheckResult]) -> dict:
    items = []
    for r in results:
        # a condition (`check a > b`, `check flag`) is expected to be true; its actual value is whether it held
        condition = r.rhs is None and r.error is None and r.flags is None
        items.append({
            "text": r.text,
            "condition": r.check.condition.span.flat,  # without `check`, `in ...`, `with ...`, `within ...`
            "line": r.check.span.line,
            "scenario": r.scenario,
            "passed": r.passed,
            **_check_figures(condition, r),
            "tolerance": prose(r.tolerance),
            "error": prose(r.error.message) if r.error is not None else None,
            "with": ", ".join(f"{k} = {v}" for k, v in r.overrides.items()),
            "with_items": [f"{k} = {v}" for k, v in r.overrides.items()],
            "describe": r.describe(),
        })
    failed = sum(1 for r in results if not r.passed)
    total = len(results)
    if not total:
        sentence = "The plan has no checks."
    elif not failed:
        sentence = f"{total:,} of {total:,} checks pass." if total > 1 else "Its one check passes."
    else:
        sentence = f"{failed:,} of {total:,} checks fail."
    return {"total": total, "passed": total - failed, "failed": failed, "sentence": sentence,
            "all_passed": failed == 0, "results": items}


def _graph_parts(analysis: Analysis) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """Every quantity in report order, the dependency edges and the scenarios' override edges."""
    from ..language import ir

    plan = analysis.plan
    order = report_order(plan)
    edges = [[d, n] for n in order for d in report_order(plan, plan.quantities[n].deps)]
    overrides: list[list[str]] = []
    for s in plan.model.scenarios.values():
        for o in s.scenario.overrides:
            for m in ir.walk(o.expr):
                if isinstance(m, ir.Name) and m.name in plan.quantities and [m.name, o.name] not in overrides:
                    overrides.append([m.name, o.name])
    return order, edges, overrides


def _graph(analysis: Analysis, headlines: Sequence[str], full_file: Optional[str] = None) -> dict:
    """The dependency graph as Mermaid: every quantity, with the scenarios' overrides as dotted edges
    (``h100.hbm_bandwidth -.-> hbm_bandwidth``), clustered by import. Past GRAPH_NODES nodes or
    GRAPH_EDGES edges it is the summary: the headlines and the inputs they depend on, directly or
    not, at most GRAPH_NODES nodes (the inputs that feed the most headlines first); ``full_file`` names
    the file with the whole graph, written next to the report."""
    from ..language.graph import cone

    plan = analysis.plan
    order, edges, overrides = _graph_parts(analysis)
    full = len(order) <= GRAPH_NODES and len(edges) + len(overrides) <= GRAPH_EDGES
    note = ""
    if full:
        nodes, drawn, dotted = order, edges, overrides
        full_file = None
        merged = {}
    else:
        feeds: dict[str, list[str]] = {}  # input -> the headlines it moves
        shown: list[str] = []
        for h in headlines[:GRAPH_NODES // 2]:
            shown.append(h)
            for n in cone(plan.model, [h]):
                if plan.quantities[n].is_input:
                    feeds.setdefault(n, []).append(h)
        # inputs that feed the same headlines are one node (`hidden, layers, heads + 5 more`): a few
        # arrows where every input had one to every headline it moves
        groups: dict[tuple, list[str]] = {}
        for n in report_order(plan, list(feeds)):
            groups.setdefault(tuple(feeds[n]), []).append(n)
        ranked = sorted(groups.items(), key=lambda g: (-len(g[0]), -len(g[1])))[:GRAPH_NODES - len(shown)]
        kept = [n for _, members in ranked for n in members]
        merged = {members[0]: members for _, members in ranked}
        drawn = [[members[0], h] for feeds_of, members in ranked for h in feeds_of][:SUMMARY_EDGES]
        nodes = report_order(plan, list(merged) + shown)
        dotted = [e for e in overrides if e[0] in nodes and e[1] in nodes]
        inputs_left = len(feeds) - len(kept)
        heads_left = len(headlines) - len([n for n in nodes if n in headlines])
        left = []
        if heads_left:
            left.append(f"{heads_left} more headline quantit{'y' if heads_left == 1 else 'ies'}")
        if inputs_left:
            left.append(f"{inputs_left} more input{'s' if inputs_left != 1 else ''}")
        note = (f"The plan has {len(order):,} quantities and {len(edges) + len(overrides):,} dependencies, "
                f"too many to draw legibly; this summary shows the headline quantities and the inputs "
                f"each depends on, directly or through other quantities"
                + (f" (not drawn: {' and '.join(left)})" if left else "")
                + (f"; [the whole graph]({full_file}) is in a file of its own" if full_file else "")
                + f" (`planner explain {Path(plan.path).name} {headlines[0] if headlines else order[-1]}` shows "
                  "one quantity's whole chain).")
    return {"mermaid": mermaid(plan, nodes, drawn, dotted, headlines, merged), "edges": drawn, "override_edges": dotted,
            "summary": not full, "note": note, "nodes": len(nodes), "quantities": len(order), "full_file": full_file}


def full_graph(analysis: Analysis) -> Optional[tuple[str, list[list[str]]]]:
    """The whole dependency graph, for the file beside a report whose graph is a summary: its Mermaid
    and its edges; None when the report draws the whole graph itself."""
    order, edges, overrides = _graph_parts(analysis)
    if len(order) <= GRAPH_NODES and len(edges) + len(overrides) <= GRAPH_EDGES:
        return None
    headlines, _ = headline_names(analysis.plan)
    return mermaid(analysis.plan, order, edges, overrides, headlines), edges + overrides


def mermaid(plan: Plan, nodes: Sequence[str], drawn, dotted, headlines: Sequence[str],
            merged: Optional[Mapping[str, list[str]]] = None) -> str:
    """A Mermaid flowchart of ``nodes``: each import's quantities in a subgraph of their own, the plan's
    own inputs in one, its headline figures in another. ``merged``: a node that stands for several
    inputs (its name -> all their names)."""
    merged = merged or {}
    ids = {n: f"q{i}" for i, n in enumerate(nodes)}
    clusters: dict[str, list[str]] = {}
    for n in nodes:
        q = plan.quantities[n]
        if not _own(plan, n) and "." in n:
            key = n.split(".")[0]
        elif q.is_input:
            key = "inputs"
        elif n in headlines:
            key = "headline figures"
        else:
            key = ""
        clusters.setdefault(key, []).append(n)

    def node(n: str) -> str:
        cls = "input" if plan.quantities[n].is_input else ("headline" if n in headlines else "derived")
        if len(merged.get(n, ())) > 1:
            names = merged[n]
            label = "<br>".join(names[:3]) + (f"<br>+ {len(names) - 3} more" if len(names) > 3 else "")
            return f'{ids[n]}["{label}"]:::{cls}'
        return f'{ids[n]}["{_node_label(n)}"]:::{cls}'

    lines = ["flowchart LR"]
    for k, (key, members) in enumerate(clusters.items()):
        if not key or len(clusters) == 1:
            lines += [f"  {node(n)}" for n in members]
            continue
        lines.append(f'  subgraph c{k}["{key}"]')
        lines += [f"    {node(n)}" for n in members]
        lines.append("  end")
    lines += [f"  {ids[a]} --> {ids[b]}" for a, b in drawn]
    lines += [f"  {ids[a]} -.-> {ids[b]}" for a, b in dotted]
    lines += [
        "  classDef input fill:#e8f0fe,stroke:#4a6fa5",
        "  classDef derived fill:#ffffff,stroke:#888888",
        "  classDef headline fill:#fff4d6,stroke:#b07d00,stroke-width:2px",
    ]
    return "\n".join(lines)


def _node_label(name: str, width: int = 14) -> str:
    """A name broken after underscores or dots into lines of about ``width`` characters
    (narrow nodes keep a left-to-right graph inside GitHub's column at a readable size)."""
    parts = re.split(r"(?<=[_.])", name)
    lines, line = [], ""
    for p in parts:
        if line and len(line) + len(p) > width:
            lines.append(line)
            line = ""
        line += p
    lines.append(line)
    return "<br>".join(lines)


def _sweeps(analysis: Analysis, plot_files: Mapping) -> list[dict]:
    plan = analysis.plan
    out = []
    for i, (stmt, results) in enumerate(analysis.sweeps, start=1):
        first = results[0]
        names = first.names
        columns = [{"name": n, "unit": plan.quantities[n].unit_text,
                    "axis": n in {a.name for a in first.axes}} for n in names]
        tables = []
        for r in results:
            cols = {n: r.display(n) for n in names}
            notes = r.notes()
            shown = min(r.size, MAX_SWEEP_ROWS)
            texts = {n: r.with_never(n, figures([_item(cols[n][k]) for k in range(shown)], plan.quantities[n].unit_text))
                     for n in names}  # one number style per column; "never" where a `first(...)` finds nothing
            rows = [[texts[n][k] for n in names] for k in range(shown)]
            tables.append({
                "scenario": r.label,
                "rows": rows,
                "row_numbers": [[number(_item(cols[n][k])) for n in names] for k in range(shown)],
                "row_notes": [prose("; ".join(notes.get(k, []))) for k in range(shown)],
                "points": r.size,
                "omitted": r.size - shown,
                "points_with_issues": int(r.bad.sum()),
                "issues": [prose(s.describe(plan)) for s in r.issues],
            })
        out.append({
            "index": i,
            "text": stmt.span.flat,
            "line": stmt.span.line,
            "axes": [{"name": a.name, "unit": a.unit, "count": a.count, "written": a.text} for a in first.axes],
            "columns": columns,
            "tables": tables,
            "plot": plot_files.get(i),
        })
    return out


_QUESTION_DOC = re.compile(r'\s*"(?:[^"\\\n]|\\.)*"\s*$')  # a question's closing sentence


def _solves(analysis: Analysis, optimize: bool) -> list[dict]:
    from ..language import ir
    from ..language.errors import PlanError

    plan = analysis.plan
    booleans = {n for n, q in plan.quantities.items() if q.is_bool}
    out = []
    for stmt, answers in analysis.solves:
        if isinstance(stmt, ir.Optimize) != optimize:
            continue
        target = stmt.over if optimize else stmt.target
        q = plan.quantities[target]
        forms: dict = {}  # closed form -> its LaTeX over the plan's quantities (computed once per form)
        items = []
        for scenario, r in answers:
            if isinstance(r, PlanError):
                items.append({
                    "scenario": scenario or "base", "ok": False, "value": "", "number": None,
                    "exact": None, "closed_form": None, "closed_form_latex": None, "closed_form_units": None,
                    "closed_form_unshown": None,
                    "boundary": None,
                    "method": "", "verification": "", "roots": [], "optimum": None, "notes": [],
                    "error": prose(r.message), "error_kind": r.family,
                    "error_details": [prose(n) for n in list(r.notes) + ([r.hint] if r.hint else [])],
                })
                continue
            if r.closed_form is not None and r.closed_form not in forms:  # once per form, not per scenario
                from ..compute.closed import NoClosedForm, in_display_units, through_quantities  # SymPy's: only here

                # over each quantity's value in its display unit, as the report shows them (no
                # 2,628,000 s/month in every term), unless that is much longer than over values in
                # base units (1e21 from TFLOP/s against GB); too long to follow, not printed
                base = through_quantities(plan, stmt, target, r.closed_form)
                try:  # printed from the IR, as the plan's own formulas are (compute/closed.py translates it)
                    (tex, wide), units = _closed_form_equation(target, in_display_units(plan, target, base),
                                                               booleans), "display"
                    in_base = _closed_form_equation(target, base, booleans)
                    if wide > DISPLAY_FORM_LONGER * in_base[1] + 10:
                        (tex, wide), units = in_base, "base"
                except NoClosedForm as exc:
                    forms[r.closed_form] = (None, None, str(exc))
                else:
                    forms[r.closed_form] = (tex, units, None) if wide <= CLOSED_FORM_CHARACTERS else (None, None, None)
            items.append({
                "scenario": r.label, "ok": True,
                "value": show(r.display_value, r.unit, answer_style(r.display_value, r.unit, r.mode)),
                "number": number(r.display_value),
                "exact": r.exact_text,
                "closed_form": r.closed_form_text,
                "closed_form_latex": None if r.closed_form is None else forms[r.closed_form][0],
                "closed_form_units": None if r.closed_form is None else forms[r.closed_form][1],
                "closed_form_unshown": None if r.closed_form is None else forms[r.closed_form][2],
                "boundary": r.boundary_text,
                "method": prose(r.method),
                "verification": prose(r.verification.text),
                "roots": [show(v / float(q.display.scale), r.unit) for v in r.roots],
                "optimum": None if r.optimum_display is None else show(r.optimum_display, r.optimum_unit),
                "notes": _answer_notes(r, target, booleans),
                "error": None, "error_kind": None, "error_details": [],
            })
        ok = [a for a in items if a["ok"]]
        out.append({
            "statement": stmt,  # taken out before the view model is returned (templates see plain data)
            "text": _QUESTION_DOC.sub("", stmt.span.text).strip().replace("\n", " "),
            "line": stmt.span.line,
            "alias": stmt.alias,
            "doc": stmt.doc,
            "target": target,
            "unit": q.unit_text,
            "mode": (stmt.sense + "imize") if optimize else stmt.mode,
            "answers": items,
            "answered": len(ok),
            # shown once when every answer shares it, else None
            "closed_form_latex": _shared(a["closed_form_latex"] for a in ok),
            "closed_form_units": _shared(a["closed_form_units"] for a in ok),
            # a closed form derived but longer than a reader can follow (`planner solve --closed-form` prints it)
            "closed_form_omitted": any(a["closed_form"] and not a["closed_form_latex"] and not a["closed_form_unshown"]
                                       for a in ok),
            # a closed form with a function the plan language has not (Lambert W): why it is not shown
            "closed_form_unshown": _shared(a["closed_form_unshown"] for a in ok if a["closed_form_unshown"]),
            "method": _shared(a["method"] for a in ok) if len(ok) > 1 else None,
        })
    return out


def _closed_form_equation(target: str, form, booleans) -> tuple[str, int]:
    """``target = form`` in LaTeX (the closed form translated into the IR, printed as any formula) and
    how wide it is on one line, in characters."""
    from ..compute.closed import to_ir

    head, node = name_latex(target), to_ir(form, booleans)
    return formula_equation(head, node), visible(f"{head} = {formula_latex(node)}")


def _shared(values) -> Optional[str]:
    found = set(values)
    return found.pop() if len(found) == 1 else None


def _answer_notes(r, target: str, booleans: set[str]) -> list[str]:
    """The solver's notes, the polynomial an algebraic root solves in LaTeX (not SymPy's ``5*x**4``)."""
    notes = [prose(n) for n in r.notes]
    prefix = f"{target} is the real root of "
    if not any(note.startswith(prefix) for note in notes):  # only the symbolic route says so (SymPy not imported)
        return notes
    from ..compute.closed import root_polynomial

    poly = root_polynomial(r.exact, target, booleans)
    if poly is not None:
        for i, note in enumerate(notes):
            if note.startswith(prefix):
                domain = note[note.rindex(" = 0 in ") + len(" = 0 in "):] if " = 0 in " in note else ""
                notes[i] = (f"`{target}` is the real root of $`{formula_latex(poly)} = 0`$"
                            + (f" in {domain}" if domain else ""))
    return notes


def _sensitivity(analysis: Analysis) -> list[dict]:
    """Per headline quantity: one row per input it depends on, elasticities per scenario."""
    from ..questions.sensitivity import rank

    plan = analysis.plan
    out = []
    for name, per_scenario in analysis.sensitivity:
        inputs: dict[str, dict] = {}
        for k, sens in enumerate(per_scenario):
            for r in sens.rows:
                row = inputs.setdefault(r.input, {"input": r.input, "unit": r.unit,
                                                  "elasticity_numbers": [None] * len(per_scenario),
                                                  "methods": [], "notes": []})
                row["elasticity_numbers"][k] = number(r.elasticity)
                if r.method not in row["methods"]:
                    row["methods"].append(r.method)
                if r.note and r.note not in row["notes"]:
                    row["notes"].append(r.note)
        rows = sorted(inputs.values(), key=lambda r: (-rank(max(abs(e or 0.0) for e in r["elasticity_numbers"])),
                                                      plan.quantities[r["input"]].definition.span.start))
        labels = [s.label for s in per_scenario]
        footnotes: list[str] = []  # each distinct remark once, rows point at it by number
        for r in rows:
            r["elasticities"] = [_elasticity(e) for e in r["elasticity_numbers"]]
            known = [(e, labels[k]) for k, e in enumerate(r["elasticity_numbers"]) if e is not None]
            low, high = (min(known), max(known)) if known else ((None, ""), (None, ""))
            r["lowest"], r["lowest_in"] = _elasticity(low[0]), low[1]
            r["highest"], r["highest_in"] = _elasticity(high[0]), high[1]
            remarks = [m for m in r["methods"] if m != "numeric difference"] + r["notes"]
            r["remarks"] = []
            for m in remarks:
                if m not in footnotes:
                    footnotes.append(m)
                r["remarks"].append(footnotes.index(m) + 1)
        q = plan.quantities[name]
        top = [{"input": r["input"], "text": _elasticity_range(r["elasticity_numbers"]),
                "low": r["lowest"], "high": r["highest"]}
               for r in rows[:TOP_MOVERS] if any(e for e in r["elasticity_numbers"])]
        still = sum(1 for r in rows if r["elasticity_numbers"] and all(e == 0 for e in r["elasticity_numbers"]))
        out.append({"quantity": name, "unit": q.unit_text, "scenarios": labels, "rows": rows,
                    "remarks": footnotes, "top": top, "still": still,  # inputs that do not move it here
                    "caveats": _caveats(plan, per_scenario, [t["input"] for t in top])})
    return out


def _caveats(plan, per_scenario: Sequence, shown: Sequence[str]) -> list[str]:
    """What a reader of the top movers ``shown`` should know, in words: where a figure is not smooth in
    an input (a kink, a whole-number input whose steps up and down differ) the two one-sided figures,
    and where it has no slope at all. How each elasticity was measured is left to the rows' methods."""
    several = len(per_scenario) > 1
    out: list[str] = []
    for name in shown:
        whole = plan.quantities[name].integer
        for sens in per_scenario:
            row = next((r for r in sens.rows if r.input == name), None)
            if row is None:
                continue
            where = f" in `{sens.label}`" if several else ""
            if row.method == "none":
                out.append(f"`{name}`: no slope at these values{where}")
                break
            if row.method == "effect of a 1% change" and row.rise is not None and row.fall is not None:
                out.append(f"`{name}`: its effect is not linear over 1% of its value{where}: a 1% rise moves the "
                           f"figure by {_signed(row.rise)}%, a 1% fall by {_signed(-row.fall)}%")
                break
            if row.rise is not None and row.fall is not None and _signed(row.rise) != _signed(row.fall):
                if whole:
                    out.append(f"`{name}` is a whole number{where}: one more gives {_signed(row.rise)}, "
                               f"one fewer {_signed(row.fall)}")
                else:
                    out.append(f"`{name}` sits at a kink{where} (a `max`, `min` or `if` changes branch there): "
                               f"a rise gives {_signed(row.rise)}, a fall {_signed(row.fall)}")
                break
    return out


def sensitivity_bars(analysis: Analysis) -> list[tuple[str, list[tuple[str, float, float]]]]:
    """For the tornado chart: each headline figure's words and its top movers, each (input, lowest,
    highest elasticity over the scenarios), from the same rows as "What moves the headline figures"."""
    out = []
    for s in _sensitivity(analysis):
        q = analysis.plan.quantities[s["quantity"]]
        movers = []
        for r in s["rows"][:TOP_MOVERS]:
            known = [e for e in r["elasticity_numbers"] if e is not None]
            if any(known):
                movers.append((r["input"], min(known), max(known)))
        if movers:
            out.append((_label(q.doc and plain(q.doc), s["quantity"]), movers))
    return out


def _elasticity_range(numbers: Sequence[Optional[float]]) -> str:
    """``+1.00`` when every scenario agrees (to two decimals), else ``+0.95 to +1.00``."""
    known = [e for e in numbers if e is not None]
    if not known:
        return "n/a"
    low, high = _signed(min(known)), _signed(max(known))
    return low if low == high else f"{low} to {high}"


def _signed(e: float) -> str:
    text = NumberStyle(2).text(round(e, 2) + 0.0)  # never -0.00
    return text if text.startswith("-") else "+" + text


def _elasticity(e: Optional[float]) -> str:
    return "n/a" if e is None else f"{e + 0.0:+.4f}"


def _item(v: Any) -> float | bool:
    return bool(v) if isinstance(v, (bool, np.bool_)) else float(v)


def _findings(analysis: Analysis, live: LiveValues, solves: Sequence[dict], checks: dict,
              headlines: Sequence[dict]) -> dict:
    """What the plan found, in sentences: the notes (live values filled), each question's answer,
    the headline figures with their doc strings, and the checks in one line."""
    answers = []
    for s in solves:
        stmt = s["statement"]
        ok = [a for a in s["answers"] if a["ok"]]
        failed = [a for a in s["answers"] if not a["ok"]]
        if stmt.doc:
            sentence = live.said(stmt.doc, markdown)  # the plan's words escaped, its figures put in
        else:
            sentence = _answer_sentence(s, ok)
        answers.append({"alias": s["alias"], "question": s["text"], "sentence": sentence, "written": stmt.doc is not None,
                        "unanswered": [{"scenario": a["scenario"], "reason": _sentence(a["error"])} for a in failed]})
    from ..language.live import has_live

    notes = analysis.plan.model.plan.notes
    return {
        # the plan's own sentences about what it found, as limited Markdown (docs/hostile.md, "Report text")
        "notes": [live.said(n, markdown) for n in notes if has_live(n)],
        "about": [said(n, rule=markdown) for n in notes if not has_live(n)],  # what the plan is, its caveats
        "answers": answers,
        "headlines": list(headlines),
        "checks": checks["sentence"],
        "failing": [c for c in checks["results"] if not c["passed"]],
    }


def _label(doc: Optional[str], name: str) -> str:
    """A row's words: the doc string's first line (its first sentence when that is long), else the name."""
    if not doc:
        return name
    first = doc.strip().split("\n")[0]
    if len(first) > 90 and ". " in first[:90]:
        first = first[: first.index(". ") + 1]
    return first[0].upper() + first[1:] if first else name


def _answer_sentence(s: dict, ok: Sequence[dict]) -> str:
    """A question's answer said plainly when the plan gives no sentence of its own."""
    values = _per_scenario([(a["scenario"], a["value"]) for a in ok])
    stmt = s["statement"]
    if len(ok) == 1 and stmt.scenarios and ok[0]["scenario"] != "base":  # a question asked in one scenario
        values += f" in `{ok[0]['scenario']}`"
    target = f"`{s['target']}`"
    if s["mode"] == "root":
        what = f"{code(stmt.condition.span.flat)} when {target} is"  # as written: a comment may hold a backtick
    elif s["mode"] in ("min", "max"):
        what = f"the {'smallest' if s['mode'] == 'min' else 'largest'} {target} for which {code(stmt.condition.span.flat)} is"
    else:
        what = f"{target} that {s['mode']}s {code(stmt.objective.span.flat)} is"
    lead = f"`{s['alias']}`: " if s["alias"] else ""
    if not lead:
        what = what[0].upper() + what[1:]
    return f"{lead}{what} {values or 'not found'}."


def _per_scenario(pairs: Sequence[tuple[str, str]]) -> str:
    """``55.33 %`` once when every scenario agrees, else each figure with the scenarios that have it."""
    distinct = list(dict.fromkeys(v for _, v in pairs))
    if len(distinct) <= 1:
        return f"**{distinct[0]}**" if distinct else ""
    return ", ".join(f"**{v}** in " + " and ".join(f"`{k}`" for k, u in pairs if u == v) for v in distinct)


# ---- the view model ------------------------------------------------------------------

def view_model(analysis: Analysis, plots: Optional[Mapping[str, Any]] = None) -> dict:
    """The plain-data view of an analysis. ``plots``: ``{"enabled": bool,
    "note": str, "files": {sweep index: file name}, "skipped": [...]}`` from the plot writer."""
    plan = analysis.plan
    headlines, rule = headline_names(plan)
    overridden = {o.name for s in plan.model.scenarios.values() for o in s.scenario.overrides}
    booleans = {n for n, q in plan.quantities.items() if q.is_bool}
    order = report_order(plan)
    used_by: dict[str, list[str]] = {}  # computed once: the plan's reverse dependencies, in report order
    for n in order:
        for d in plan.quantities[n].deps:
            used_by.setdefault(d, []).append(n)
    live = LiveValues(analysis)
    quantities = [_quantity(analysis, n, headlines, overridden, used_by, booleans) for n in order
                  if not plan.quantities[n].per_period]  # a series is a value per period: the `periods` key
    for q in quantities:
        own = _own(plan, q["name"])
        q["doc"] = live(q["doc"]) if own else plain(q["doc"])
        q["label"] = _label(q["doc"], q["name"])
    by_name = {q["name"]: q for q in quantities}
    assumptions, sources = _assumptions(quantities)
    plots = dict(plots or {"enabled": False, "note": "plots not requested", "files": {}})
    plot_files = {int(k): v for k, v in (plots.get("files") or {}).items()}
    axes = _axes(analysis)
    scenarios = _scenarios(analysis, axes)
    axis_columns = bool(axes) and all(s["members"] for s in scenarios)
    from .. import __version__

    solves, optimizations = _solves(analysis, optimize=False), _solves(analysis, optimize=True)
    checks = _checks(analysis.checks)
    findings = _findings(analysis, live, solves + optimizations, checks, [by_name[n] for n in headlines])
    for s in solves + optimizations:
        del s["statement"]
    sensitivity = _sensitivity(analysis)
    remarks: dict[str, list[str]] = {}  # each caveat once, with the headline figures it applies to
    for s in sensitivity:
        s["label"] = by_name[s["quantity"]]["label"]
        for m in s["caveats"]:
            remarks.setdefault(m, []).append(s["quantity"])
    return {
        "format": FORMAT,
        "generator": f"planner {__version__}",
        # one line: it is the report's heading; the file's name (no title) has no live values
        "title": said(" ".join(plan.model.plan.title.split()), live.figure, rule=text) if plan.model.plan.title
        else text(plan.title),
        "file": Path(plan.path).name,
        "notes": [said(n, live.figure, rule=markdown) for n in plan.model.plan.notes],  # every note, live values filled
        "findings": findings,
        "scenarios": scenarios,
        "has_scenarios": bool(plan.model.scenarios),
        "axes": axes,
        "layout": {
            # few scenarios are columns side by side; past SCENARIO_COLUMNS each scenario is a row
            "scenario_columns": len(scenarios) <= SCENARIO_COLUMNS,
            # quantities per table when scenarios are rows (after the columns that name the scenario)
            "columns_per_table": max(2, TABLE_COLUMNS - (len(axes) if axis_columns else 1)),
            # scenarios as rows name their axis members in columns of their own
            "axis_columns": axis_columns,
            # tables and lists longer than this are folded (<details>): a reader opens what they need
            "fold_after": FOLD_AFTER,
        },
        "inputs": [q for q in quantities if q["kind"] == "input"],
        "derived": [q for q in quantities if q["kind"] == "derived"],
        "functions": _functions(plan),
        "quantities": by_name,
        "assumptions": assumptions,
        "sources": sources,
        "headline": {"rule": rule, "names": headlines, "quantities": [by_name[n] for n in headlines]},
        "checks": checks,
        "graph": _graph(analysis, headlines, plots.get("graph")),
        "sweeps": _sweeps(analysis, plot_files),
        "solves": solves,
        "optimizations": optimizations,
        "sensitivity": sensitivity,
        "sensitivity_plot": plots.get("sensitivity"),
        "sensitivity_remarks": [{"text": prose(m[:1].upper() + m[1:]), "quantities": qs} for m, qs in remarks.items()],
        "plots": {"enabled": bool(plots.get("enabled")), "note": plots.get("note", ""),
                  "skipped": list(plots.get("skipped") or [])},
        "uncertainty": _uncertainty(analysis, by_name, plots),
        "periods": _periods(analysis, headlines, plots),
    }


def _periods(analysis: Analysis, headlines: Sequence[str], plots: Mapping[str, Any]) -> Optional[dict]:
    """The report's part on series over periods (:mod:`.periods`), or None without any."""
    from . import periods

    plan = analysis.plan
    labels = {n: periods.label(plan, n) for n in plan.model.series}
    return periods.view(analysis, headlines, labels, plots.get("periods"))


def _uncertainty(analysis: Analysis, by_name: dict, plots: Mapping[str, Any]) -> Optional[dict]:
    """The report's part on uncertain inputs (:mod:`.uncertainty`), or None without any."""
    from .uncertainty import view

    labels = {n: q["label"] for n, q in by_name.items()}
    return view(analysis, labels, plots.get("uncertainty"))


def _sentence(text: str) -> str:
    """``text`` ending as a sentence ends (a reason run on into the next sentence read "... hold No answer")."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?" else text + "."
