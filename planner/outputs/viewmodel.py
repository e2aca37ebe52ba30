"""The report's view model: everything a plan says and computes, as plain data.

Templates (the shipped ``report.md.j2`` and users' own) see only what
:func:`view_model` returns: dicts, lists, strings, floats, ints, bools and
``None``; no planner objects, so a template cannot call into the library.
Every key is documented in the README ("Reports and `planner build`"); keys
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..compute.evaluation import Evaluation, Plan, format_value
from ..compute.symbolic import latex
from ..questions.checks import CheckResult, run_checks

FORMAT = "planner.report/1"
MAX_SWEEP_ROWS = 200  # rows per sweep table in a report; `planner sweep` prints them all
HEADLINE_TAG = "headline"


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

    def solve_results(self) -> list:
        """Every solve answer (all statements, all scenarios), for the workbook."""
        from ..questions.solve import SolveResult

        return [r for _, answers in self.solves for _, r in answers if isinstance(r, SolveResult)]

    @property
    def checks_failed(self) -> int:
        return sum(1 for r in self.checks if not r.passed)


def analyse(plan: Plan) -> Analysis:
    """Evaluate every scenario, run the checks (and the questions, when the
    modules answering them are installed). Raises PlanError on a bad plan."""
    scenarios = plan.resolve_scenarios("all")
    evaluations = plan.evaluate_all(scenarios)
    base = next((ev for ev in evaluations if ev.scenario is None), None) or plan.evaluate(None)
    answers = None
    if plan.model.solves or plan.model.optimizes:
        from ..questions.solve import Answers

        answers = Answers(plan)  # one solver, shared by the checks and the Solves section
    analysis = Analysis(plan, evaluations, base, run_checks(plan, answers))
    if plan.model.sweeps:
        from ..questions.sweep import run_statement

        analysis.sweeps = [(stmt, run_statement(plan, stmt)) for stmt in plan.model.sweeps]
    if answers is not None:
        analysis.solves = _solve_all(plan, answers)
    from ..questions.sensitivity import sensitivity

    for name in headline_names(plan)[0]:
        if not plan.quantities[name].is_bool:
            analysis.sensitivity.append((name, [sensitivity(plan, name, ev.scenario) for ev in evaluations]))
    return analysis


def _solve_all(plan: Plan, answers) -> list[tuple[Any, list]]:
    """Every question in each of its scenarios; a question without an answer
    (no root, several, not monotone) keeps its error as the reason. Named
    questions come from ``answers``' cache when the checks already asked."""
    from ..compute.evaluation import scenarios_for
    from ..language.errors import SolveError

    out = []
    for stmt in answers.solver.questions():
        results = []
        for scenario in scenarios_for(plan, stmt.scenarios):
            try:
                if stmt.alias is not None:
                    results.append((scenario, answers.result(stmt.alias, scenario)))
                else:
                    results.append((scenario, answers.solver.answer(stmt, scenario)))
            except SolveError as err:
                results.append((scenario, err))
        out.append((stmt, results))
    return out


# ---- small helpers --------------------------------------------------------------

def number(v: Any) -> Optional[float | bool]:
    """A JSON-safe number: bools stay bools, non-finite floats become None."""
    if isinstance(v, bool) or v is None:
        return v
    f = float(v)
    return f if math.isfinite(f) else None


def show(v: Any, unit: str = "") -> str:
    if v is None:
        return ""
    return format_value(v if isinstance(v, bool) else float(v), unit)


def _tag_value(tag: str, key: str) -> Optional[str]:
    """``"source: spec sheet"`` -> ``"spec sheet"`` for key ``source``."""
    head, sep, rest = tag.partition(":")
    if head.strip() == key:
        return rest.strip() if sep else ""
    return None


def _own(plan: Plan, name: str) -> bool:
    """Defined in the plan's own file (not imported)."""
    return plan.quantities[name].definition.span.source.name == plan.source.name


def _order_key(plan: Plan, name: str) -> tuple:
    own = _own(plan, name)
    return (not own, "" if own else name.rpartition(".")[0], plan.quantities[name].definition.span.start)


def report_order(plan: Plan) -> list[str]:
    """The plan's own quantities in file order, then imported ones by namespace."""
    return sorted(plan.quantities, key=lambda n: _order_key(plan, n))


def _in_file_order(plan: Plan, names) -> list[str]:
    return sorted(names, key=lambda n: _order_key(plan, n))


def headline_names(plan: Plan) -> tuple[list[str], str]:
    """The headline quantities and the rule that picked them."""
    order = report_order(plan)
    tagged = [n for n in order if HEADLINE_TAG in plan.quantities[n].tags]
    if tagged:
        return tagged, "tagged [headline]"
    used = {d for q in plan.quantities.values() for d in q.deps}
    leaves = [n for n in order if not plan.quantities[n].is_input and n not in used and _own(plan, n)]
    return leaves, "derived quantities of the plan's own file that no other quantity uses"


# ---- sections -------------------------------------------------------------------

def _scenarios(analysis: Analysis) -> list[dict]:
    plan = analysis.plan
    out = []
    for ev in analysis.evaluations:
        s = plan.model.scenarios.get(ev.scenario) if ev.scenario else None
        overrides = []
        if s is not None:
            for o in s.scenario.overrides:
                q = plan.quantities[o.name]
                overrides.append({"name": o.name, "value": show(ev.display(o.name), q.unit_text),
                                  "number": number(ev.display(o.name)), "unit": q.unit_text,
                                  "written": o.expr.span.flat})
        out.append({
            "name": ev.label,
            "doc": s.scenario.doc if s is not None else None,
            "axis": s.axis if s is not None else None,
            "overrides": overrides,
        })
    return out


def _quantity(analysis: Analysis, name: str, headlines: Sequence[str], overridden: set[str],
              used_by: Mapping[str, list[str]]) -> dict:
    plan = analysis.plan
    q = plan.quantities[name]
    unit = q.unit_text
    tags = list(q.tags)
    d = {
        "name": name,
        "kind": "input" if q.is_input else "derived",
        "type": "boolean" if q.is_bool else "number",
        "unit": unit,
        "doc": q.doc,
        "tags": tags,
        "lower_bound": "lower bound" in tags,
        "assumption": any(_tag_value(t, "assumption") is not None for t in tags),
        "headline": name in headlines,
        "line": q.definition.span.line,
        "formula": q.formula,
        "depends_on": _in_file_order(plan, q.deps),
        "used_by": used_by.get(name, []),
        "value": show(analysis.base.display(name), unit),
        "number": number(analysis.base.display(name)),
        "scenario_values": [show(ev.display(name)) for ev in analysis.evaluations],  # no unit: tables have a column
        "scenario_numbers": [number(ev.display(name)) for ev in analysis.evaluations],
        "varies": len({repr(ev.values[name]) for ev in analysis.evaluations}) > 1,
    }
    if q.is_input:
        d["latex"] = latex(plan.symbols[name])
        d["constraints"] = [c.span.flat for c in q.definition.constraints]
        d["overridden"] = name in overridden
    else:
        d["latex"] = latex(plan.exprs[name])
        d["constraints"] = []
        d["overridden"] = False
    return d


def _assumptions(quantities: Sequence[dict]) -> tuple[list[dict], list[dict]]:
    assumptions, sources = [], []
    for q in quantities:
        found = [v for t in q["tags"] if (v := _tag_value(t, "source")) is not None]
        source = "; ".join(v for v in found if v) or None
        if source:
            sources.append({"name": q["name"], "source": source, "doc": q["doc"]})
        details = [v for t in q["tags"] if (v := _tag_value(t, "assumption")) is not None]
        if details:
            assumptions.append({
                "name": q["name"], "kind": q["kind"], "value": q["value"], "doc": q["doc"],
                "detail": "; ".join(v for v in details if v) or None, "source": source,
            })
    return assumptions, sources


def _checks(results: Sequence[CheckResult]) -> dict:
    items = []
    for r in results:
        items.append({
            "text": r.text,
            "line": r.check.span.line,
            "scenario": r.scenario,
            "passed": r.passed,
            "expected": r.expected,
            "actual": r.actual,
            "tolerance": r.tolerance,
            "error": r.error.message if r.error is not None else None,
            "with": ", ".join(f"{k} = {v}" for k, v in r.overrides.items()),
            "describe": r.describe(),
        })
    failed = sum(1 for r in results if not r.passed)
    return {"total": len(results), "passed": len(results) - failed, "failed": failed,
            "all_passed": failed == 0, "results": items}


def _graph(analysis: Analysis, headlines: Sequence[str]) -> dict:
    plan = analysis.plan
    order = report_order(plan)
    ids = {n: f"q{i}" for i, n in enumerate(order)}
    edges = [[d, n] for n in order for d in _in_file_order(plan, plan.quantities[n].deps)]
    lines = ["flowchart LR"]
    for n in order:
        cls = "input" if plan.quantities[n].is_input else ("headline" if n in headlines else "derived")
        lines.append(f'  {ids[n]}["{n}"]:::{cls}')
    lines += [f"  {ids[a]} --> {ids[b]}" for a, b in edges]
    lines += [
        "  classDef input fill:#e8f0fe,stroke:#4a6fa5",
        "  classDef derived fill:#ffffff,stroke:#888888",
        "  classDef headline fill:#fff4d6,stroke:#b07d00,stroke-width:2px",
    ]
    return {"mermaid": "\n".join(lines), "edges": edges}


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
            rows = [[show(_item(cols[n][k])) for n in names] for k in range(shown)]
            tables.append({
                "scenario": r.label,
                "rows": rows,
                "row_numbers": [[number(_item(cols[n][k])) for n in names] for k in range(shown)],
                "row_notes": ["; ".join(notes.get(k, [])) for k in range(shown)],
                "points": r.size,
                "omitted": r.size - shown,
                "points_with_issues": int(r.bad.sum()),
                "issues": [s.describe(plan) for s in r.issues],
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


def _solves(analysis: Analysis, optimize: bool) -> list[dict]:
    from ..language import ir
    from ..language.errors import PlanError

    plan = analysis.plan
    out = []
    for stmt, answers in analysis.solves:
        if isinstance(stmt, ir.Optimize) != optimize:
            continue
        target = stmt.over if optimize else stmt.target
        q = plan.quantities[target]
        items = []
        for scenario, r in answers:
            if isinstance(r, PlanError):
                items.append({
                    "scenario": scenario or "base", "ok": False, "value": "", "number": None,
                    "exact": None, "closed_form": None, "closed_form_latex": None, "boundary": None,
                    "method": "", "verification": "", "roots": [], "optimum": None, "notes": [],
                    "error": r.message, "error_kind": r.family,
                    "error_details": list(r.notes) + ([r.hint] if r.hint else []),
                })
                continue
            closed = r.closed_form_latex
            items.append({
                "scenario": r.label, "ok": True,
                "value": show(r.display_value, r.unit), "number": number(r.display_value),
                "exact": None if r.exact is None else str(r.exact),
                "closed_form": r.closed_form_text,
                "closed_form_latex": None if closed is None else f"{latex(plan.symbols[target])} = {closed}",
                "boundary": None if r.boundary is None else str(r.boundary),
                "method": r.method,
                "verification": r.verification.text,
                "roots": [show(v / float(q.display.scale), r.unit) for v in r.roots],
                "optimum": None if r.optimum_display is None else show(r.optimum_display, r.optimum_unit),
                "notes": list(r.notes),
                "error": None, "error_kind": None, "error_details": [],
            })
        out.append({
            "text": stmt.span.flat,
            "line": stmt.span.line,
            "alias": stmt.alias,
            "target": target,
            "unit": q.unit_text,
            "mode": (stmt.sense + "imize") if optimize else stmt.mode,
            "answers": items,
            "answered": sum(1 for a in items if a["ok"]),
            # the closed form when every answer shares it (shown once), else None
            "closed_form_latex": forms.pop() if len(forms := {a["closed_form_latex"] for a in items
                                                               if a["ok"]}) == 1 else None,
        })
    return out


def _sensitivity(analysis: Analysis) -> list[dict]:
    """Per headline quantity: one row per input it depends on, elasticities per scenario."""
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
        rows = sorted(inputs.values(), key=lambda r: (-max(abs(e or 0.0) for e in r["elasticity_numbers"]),
                                                      plan.quantities[r["input"]].definition.span.start))
        for r in rows:
            r["elasticities"] = ["n/a" if e is None else f"{e + 0.0:+.4f}" for e in r["elasticity_numbers"]]
        q = plan.quantities[name]
        out.append({"quantity": name, "unit": q.unit_text, "scenarios": [s.label for s in per_scenario],
                    "rows": rows})
    return out


def _item(v: Any) -> float | bool:
    return bool(v) if isinstance(v, (bool, np.bool_)) else float(v)


# ---- the view model ------------------------------------------------------------------

def view_model(analysis: Analysis, plots: Optional[Mapping[str, Any]] = None) -> dict:
    """The plain-data view of an analysis. ``plots``: ``{"enabled": bool,
    "note": str, "files": {sweep index: file name}}`` from the plot writer."""
    plan = analysis.plan
    headlines, rule = headline_names(plan)
    overridden = {o.name for s in plan.model.scenarios.values() for o in s.scenario.overrides}
    order = report_order(plan)
    used_by: dict[str, list[str]] = {}  # computed once: the plan's reverse dependencies, in report order
    for n in order:
        for d in plan.quantities[n].deps:
            used_by.setdefault(d, []).append(n)
    quantities = [_quantity(analysis, n, headlines, overridden, used_by) for n in order]
    by_name = {q["name"]: q for q in quantities}
    assumptions, sources = _assumptions(quantities)
    plots = dict(plots or {"enabled": False, "note": "plots not requested", "files": {}})
    plot_files = {int(k): v for k, v in (plots.get("files") or {}).items()}
    from .. import __version__

    return {
        "format": FORMAT,
        "generator": f"planner {__version__}",
        "title": " ".join(plan.title.split()),  # one line: it is the report's heading
        "file": Path(plan.path).name,
        "notes": list(plan.model.plan.notes),
        "scenarios": _scenarios(analysis),
        "has_scenarios": bool(plan.model.scenarios),
        "inputs": [q for q in quantities if q["kind"] == "input"],
        "derived": [q for q in quantities if q["kind"] == "derived"],
        "quantities": by_name,
        "assumptions": assumptions,
        "sources": sources,
        "headline": {"rule": rule, "names": headlines, "quantities": [by_name[n] for n in headlines]},
        "checks": _checks(analysis.checks),
        "graph": _graph(analysis, headlines),
        "sweeps": _sweeps(analysis, plot_files),
        "solves": _solves(analysis, optimize=False),
        "optimizations": _solves(analysis, optimize=True),
        "sensitivity": _sensitivity(analysis),
        "plots": {"enabled": bool(plots.get("enabled")), "note": plots.get("note", "")},
    }
