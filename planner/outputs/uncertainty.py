"""The report's part on uncertain inputs: what a simulation of the headline figures found.

For a plan with uncertain inputs (``x = 40% to 70%``, ``x ~ normal(...)``) the report simulates,
once per scenario on one shared sample set (:mod:`planner.questions.simulate`, 10,000 Latin
hypercube samples, seed 0: what ``planner simulate`` and ``planner check`` draw by default), the
headline figures that depend on an uncertain input and the quantities the probability checks
name. This module makes the plain data the report's ``uncertainty`` key holds (the template
``uncertainty.md.j2`` lays it out) and the data of one plot per figure (:func:`plot_data`, drawn by
:mod:`planner.outputs.plots`). It lives apart from :mod:`planner.outputs.viewmodel`, which calls it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..compute.evaluation import Plan
from ..compute.numbers import figure, row_texts, style_for
from ..compute.numbers import share as share_text
from ..language import ir
from ..language.graph import cone
from .periods import label  # noqa: F401 - a figure's words for a plot's title, as a series' (its doc's first line)

SAMPLES = 10_000
SEED = 0
PERCENTILES = (5.0, 50.0, 95.0)
TOP = 3  # inputs named per figure in the tornado's sentence
MAX_PLOTS = 8  # one plot per figure, for the first ones


def has_uncertain(plan: Plan) -> bool:
    return any(plan.model.quantities[n].definition.uncertain is not None for n in plan.model.inputs)


def figures(plan: Plan, headlines: Sequence[str]) -> list[str]:
    """What the report simulates: the headline figures an uncertain input reaches, then the
    quantities the probability checks name (in check order), each once."""
    from ..questions.simulate import default_names

    reached = set(default_names(plan))
    reached |= {n for n in plan.model.derived if plan.model.quantities[n].is_bool
                and any(d in reached or plan.model.quantities[d].definition.uncertain is not None
                        for d in plan.model.quantities[n].deps if d in plan.model.quantities)}
    out = [n for n in headlines if n in reached]
    for s in plan.model.plan.statements:
        if isinstance(s, ir.ProbabilityCheck):
            for node in ir.walk(s.condition):
                if isinstance(node, ir.Name) and node.name in reached and node.name not in out \
                        and not plan.model.quantities[node.name].is_input:
                    out.append(node.name)
    return out


def simulated(plan: Plan, shown: Sequence[str]) -> list[str]:
    """What the report simulates: the figures it shows and every derived quantity a probability
    check names (the checks run on the same trials)."""
    out = list(shown)
    for stmt in plan.model.plan.statements:
        if isinstance(stmt, ir.ProbabilityCheck):
            out += [n.name for n in ir.free_names(stmt.condition) if n.name in plan.model.quantities
                    and not plan.model.quantities[n.name].is_input and n.name not in out]
    return out


def checked_scenarios(plan: Plan) -> list[Optional[str]]:
    """The scenarios the plan's probability checks run in, in order."""
    from ..compute.evaluation import scenarios_for

    out: list[Optional[str]] = []
    for stmt in plan.model.plan.statements:
        if isinstance(stmt, ir.ProbabilityCheck):
            out += [s for s in scenarios_for(plan, stmt.scenarios) if s not in out]
    return out


def simulations(plan: Plan, names: Sequence[str], scenarios: Sequence[Optional[str]]) -> list:
    """One simulation per scenario of ``names`` (what :func:`figures` picks)."""
    from ..questions.simulate import run

    if not names:
        return []
    return run(plan, list(scenarios), SAMPLES, SEED, "lhs", names=list(names))


@dataclass(frozen=True)
class PlotData:
    """One figure's samples per scenario (display units) and its point values, for one plot."""

    name: str
    title: str
    unit: str
    series: tuple[tuple[str, Any, float], ...]  # (scenario label, every trial (nan: never), point value)
    written: tuple[str, ...] = ()  # each series' point value as every other output spells it (the number rule)


def _groups(sims: Sequence, name: str) -> list[tuple[Any, str]]:
    """The scenarios whose samples and point value of ``name`` differ, each with the names of the
    scenarios that share them (``base_case, fast_decline``; "" without scenarios, "every scenario"
    when none moves it)."""
    import numpy as np

    kept: list[tuple[Any, list[str]]] = []
    for sim in sims:
        col = sim.display(name)
        for k, labels in kept:
            if _same(col, k.display(name)) and _same(sim.point.get(name, np.nan), k.point.get(name, np.nan)):
                labels.append(sim.label)
                break
        else:
            kept.append((sim, [sim.label]))
    if len(sims) == 1 and sims[0].scenario is None:
        return [(kept[0][0], "")]
    if len(kept) == 1:
        return [(kept[0][0], "every scenario" if len(sims) > 1 else kept[0][1][0])]
    return [(sim, ", ".join(labels)) for sim, labels in kept]


def _same(a, b) -> bool:
    """Equal to 1e-12 (a figure two scenarios share may differ in the last bit of a division)."""
    import numpy as np

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-12, atol=0.0, equal_nan=True))


def plot_data(analysis, labels: dict[str, str]) -> list[PlotData]:
    """The numeric figures that vary, one plot each (the first :data:`MAX_PLOTS`)."""
    plan, sims = analysis.plan, getattr(analysis, "simulations", None) or []
    out = []
    for name in _shown(analysis):
        q = plan.model.quantities[name]
        if q.is_bool:
            continue
        groups = [(sim, where) for sim, where in _groups(sims, name) if sim.varies(name)]
        if not groups:
            continue
        series = []
        for sim, where in groups:
            col = sim.display(name).astype(float)
            series.append((where if len(groups) > 1 else "", col, float(sim.stats(name, ())["point"])))
        style = _style(analysis, name, [s[2] for s in series], q.unit_text)
        out.append(PlotData(name, labels.get(name, name), q.unit_text, tuple(series),
                            tuple(style.text(s[2]) for s in series)))
    return out[:MAX_PLOTS]


def tornado_data(analysis, labels: dict[str, str]) -> list[tuple[str, list[tuple[str, float]]]]:
    """Per numeric figure that varies (the first :data:`MAX_PLOTS`), in the first scenario that
    moves it: its title and each uncertain input's rank correlation with it, largest first."""
    sims = getattr(analysis, "simulations", None) or []
    out = []
    for name in _shown(analysis):
        if analysis.plan.model.quantities[name].is_bool:
            continue
        for sim, where in _groups(sims, name):
            if sim.varies(name):
                uses = set(cone(analysis.plan.model, [name]))
                rows = [(i, r) for i, r in sim.rank_correlations(name).items() if i in uses]
                if rows:
                    title = labels.get(name, name) + (f" ({where})" if where and where != "every scenario" else "")
                    out.append((title, rows))
                break
    return out[:MAX_PLOTS]


def _style(analysis, name: str, values: list, unit: str):
    """``name``'s one style (the analysis's, every output's), else one chosen from ``values``."""
    styles = getattr(analysis, "styles", None) or {}
    return styles.get(name) or style_for(values, unit)


def _shown(analysis) -> list[str]:
    return list(getattr(analysis, "uncertain_figures", None) or [])


def _row(stats: dict, unit: str, whole: bool = False) -> dict[str, str]:
    """A figure's point, mean and percentiles as `planner simulate` writes its row (:func:`.numbers.row_texts`):
    the same digits in the report as in the terminal; "never" where a ``first(...)`` has no value."""
    keys = ("point", "mean", "sd", "p5", "p50", "p95")
    values = {k: stats.get(k) for k in keys}
    shown = dict(zip(keys, row_texts(values, unit, whole)))
    return {k: "never" if values[k] is None or values[k] != values[k] else shown[k] for k in keys if k != "sd"}


def view(analysis, labels: dict[str, str], plots: Optional[dict[str, str]] = None) -> Optional[dict]:
    """The ``uncertainty`` key of the report's view model (None for a plan with no uncertain input):

    * ``samples``, ``seed``, ``method``: how the trials were drawn;
    * ``inputs``: each uncertain input's ``name``, ``label``, ``distribution`` (its text), ``point``
      (the value every other part of the report uses);
    * ``figures``: per numeric figure ``name``, ``label``, ``unit``, ``plot`` (its histogram's file
      name, or None) and ``rows``, one per group of scenarios with the same trials (``scenario``: their
      names, "every scenario", or "" without scenarios; ``point``, ``mean``, ``p5``, ``p50``, ``p95``:
      figures in the display unit, without it; ``never``: the share of trials a ``first(...)`` finds nothing, or "";
      ``others``: whether the mean and percentiles are of the other trials, some of each);
    * ``statements``: each ``code`` (a condition, or "") and ``words``: a true/false figure's share of
      trials ("Owning costs less than renting over the horizon in 38.8% of trials (base_case)."), a
      ``first(...)``'s share of never, each ``P(...)`` check's condition's share;
    * ``tornado``: per numeric figure, in the first scenarios that move it, ``label``, ``name``,
      ``scenario`` and ``top``: the inputs it uses with the largest rank correlations, each ``input``
      and ``rho`` text (``+0.71``); ``tornado_plot``: the chart's file name, or None."""
    sims = getattr(analysis, "simulations", None) or []
    plan = analysis.plan
    if not has_uncertain(plan):
        return None
    plots = plots or {}
    first = sims[0] if sims else None
    inputs = []
    from ..questions.simulate import uncertain_inputs

    for name, u in uncertain_inputs(plan).items():
        q = plan.model.quantities[name]
        ev = analysis.base
        style = _style(analysis, name, [float(ev.display(name))], q.unit_text)
        inputs.append({"name": name, "label": labels.get(name, name), "distribution": u.text,
                       "point": figure(float(ev.display(name)), q.unit_text, style)})
    out: dict[str, Any] = {"samples": f"{SAMPLES:,}", "seed": SEED, "method": "Latin hypercube", "inputs": inputs,
                           "figures": [], "statements": [], "tornado": [], "tornado_plot": plots.get("tornado")}
    if first is None:
        return out
    for name in _shown(analysis):
        q = plan.model.quantities[name]
        groups = _groups(sims, name)
        if q.is_bool:
            for sim, where in groups:
                share = sim.figures((), [name], (), ()).flag(name)
                out["statements"].append({"code": "", "words": f"{labels.get(name, name)} in {share_text(share)} of trials"
                                          + (f" ({where})" if where and where != "every scenario" else "") + "."})
            continue
        rows = []
        tornado = None
        for sim, where in groups:
            reduced = sim.figures([name], [], levels=PERCENTILES)
            s = reduced.stats(name, PERCENTILES)
            never = sim.never(name)
            rows.append({"scenario": where,
                         **_row(s, q.unit_text, reduced.whole(name)),
                         "never": share_text(never) if never else "",
                         "others": bool(never) and never < 1})  # (the mean and percentiles are theirs)
            if never:
                out["statements"].append({"code": "", "words": f"{labels.get(name, name)}: never in {share_text(never)} of "
                                          "trials" + (f" ({where})" if where and where != "every scenario" else "") + "."})
            if tornado is None and sim.varies(name):
                uses = set(cone(plan.model, [name]))
                top = [(inp, rho) for inp, rho in sim.rank_correlations(name).items()
                       if inp in uses and abs(rho) >= 0.05][:TOP]
                if top:
                    tornado = {"label": labels.get(name, name), "name": name, "scenario": where,
                               "top": [{"input": i, "rho": f"{r:+.2f}"} for i, r in top]}
        if tornado is not None:
            out["tornado"].append(tornado)
        out["figures"].append({"name": name, "label": labels.get(name, name), "unit": q.unit_text,
                               "plot": plots.get(name), "rows": rows})
    out["statements"] += _checked(plan, sims + list(getattr(analysis, "check_simulations", None) or []),
                                  {n for n in _shown(analysis) if plan.model.quantities[n].is_bool})
    return out


def _checked(plan: Plan, sims: Sequence, said: set) -> list[dict]:
    """The conditions of the plan's ``P(...)`` checks in words, each once: ``dsv3_mtp_tokens >= 1.85
    token`` in 100% of trials (a bare true/false figure is said already)."""
    from ..compute.evaluation import scenarios_for

    by_scenario = {sim.scenario: sim for sim in sims}
    out, seen = [], set()
    for stmt in plan.model.plan.statements:
        if not isinstance(stmt, ir.ProbabilityCheck):
            continue
        for o in getattr(stmt.condition, "operands", []):
            if not (isinstance(o, ir.Call) and o.func == "P" and len(o.args) == 1):
                continue
            cond = o.args[0].value
            text = " ".join(cond.span.flat.split())
            if isinstance(cond, ir.Name) and cond.name in said:
                continue
            for scenario in scenarios_for(plan, stmt.scenarios):
                sim = by_scenario.get(scenario)
                if sim is None or (text, scenario) in seen:
                    continue
                seen.add((text, scenario))
                try:
                    share = sim.probability(cond)
                except Exception:  # noqa: BLE001 - the check's own run reports a bad condition
                    continue
                where = f" ({sim.label})" if sim.scenario is not None else ""
                out.append({"code": text, "words": f"in {share_text(share)} of trials{where}."})
    return out
