"""The report's part on series over periods: each headline series as a line per scenario, its fan
under uncertainty, a short table by period and the ``first(period where ...)`` answers in words.

A plan with ``periods = 1 month..60 month`` has series (a value per period). The report shows its
*headline series*: those tagged ``[headline]``; where none is, the series the headline figures
reduce (``low_cash = min(cash)`` makes ``cash`` one). This module makes the plain data of the report's
``periods`` key (the template ``periods.md.j2`` lays it out) and the data of each series' plots
(:func:`plot_data`, :func:`fan_data`, drawn by :mod:`planner.outputs.plots`). It lives apart from
:mod:`planner.outputs.viewmodel`, which calls it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ..language import ir
from .markup import code
from .numbers import period_number, prose_style, style_for

MAX_SERIES = 6  # headline series shown (charts and tables), the first ones in file order
MAX_COLUMNS = 5  # scenarios a table of a series shows side by side (the report's SCENARIO_COLUMNS); more: tables
MAX_ROWS = 24  # rows of a series' table: past it, a row every quarter, half year, year...
NAMED_PERIODS = ("month", "week", "day", "year", "quarter", "hour")  # `month 4`; other units: `4 d`
FAN_LEVELS = (5.0, 25.0, 50.0, 75.0, 95.0)


def headline_series(plan, headline_figures: Sequence[str] = ()) -> list[str]:
    """The series the report shows: those tagged [headline], else those the headline figures reduce,
    else those no other quantity uses, in file order (the first :data:`MAX_SERIES`)."""
    model = plan.model
    order = plan.series_order() if model.periods is not None else []
    tagged = [n for n in order if "headline" in model.quantities[n].tags]
    if tagged:
        return tagged[:MAX_SERIES]
    reduced = {n for h in headline_figures for n in _series_in(model, model.quantities[h].definition.expr)}
    if reduced:
        return [n for n in order if n in reduced][:MAX_SERIES]
    used = {d for q in model.quantities.values() for d in q.deps}  # no figure reduces one: the last of each chain
    return [n for n in order if n not in used][:MAX_SERIES]


def _series_in(model, expr: ir.Expr) -> set[str]:
    return {n.name for n in ir.walk(expr)
            if isinstance(n, ir.Name) and n.name in model.quantities and model.quantities[n.name].per_period}


def period_words(plan, value: float) -> str:
    """A period as a reader says it: ``month 4`` (``4 d`` for a unit without a word)."""
    unit, size = plan.period_unit
    k_text = _number(value / size)
    return f"{unit} {k_text}" if unit in NAMED_PERIODS else f"{k_text} {unit}"


def series_values(ev, name: str):
    """A series in one evaluation as the editor's hover and `planner explain` say it: its first and last
    values and its lowest (display unit, the first period of the lowest), each with its period in words,
    ``(first, "month 1", last, "month 60", low, "month 14")``; a true/false series in words (when it
    first holds, in bold)."""
    periods = [float(p) for p in ev.periods]
    if ev.plan.model.quantities[name].is_bool:  # true or false: when it first holds
        flags = [bool(v) for v in ev.series[name]]
        when = next((i for i, v in enumerate(flags) if v), None)
        return ("**never** true" if when is None else f"true first in **{period_words(ev.plan, periods[when])}**") + \
            f" (of {period_words(ev.plan, periods[0])} to {period_words(ev.plan, periods[-1])})"
    values = [float(v) for v in ev.series_display(name)]
    finite = [i for i, v in enumerate(values) if not math.isnan(v)] or [0]
    low = min(finite, key=lambda i: values[i])  # the first period of the lowest value
    say = lambda i: period_words(ev.plan, periods[i])  # noqa: E731
    return values[0], say(0), values[-1], say(len(values) - 1), values[low], say(low)


def _periods(plan, ev) -> np.ndarray:
    """The periods as numbers of the period unit (1, 2, ... 60 for months)."""
    return np.asarray(ev.periods, dtype=float) / plan.period_unit[1]


# ---- first(period where ...): the period an answer names ------------------------------------------------

@dataclass(frozen=True)
class First:
    """A ``first(period where condition)`` figure of the plan: its name, condition and the series it
    watches."""

    name: str
    condition: ir.Expr
    series: frozenset


def firsts(plan) -> list[First]:
    """The plan's own figures defined as ``first(period where ...)``, in file order."""
    model = plan.model
    out = []
    for name, q in model.quantities.items():
        e = q.definition.expr
        if q.per_period or not isinstance(e, ir.Reduce) or e.op != "first" or not isinstance(e.body, ir.Period) \
                or e.cond is None or e.span.source.name != plan.source.name:
            continue
        out.append(First(name, e.cond, frozenset(_series_in(model, e.cond))))
    return out


def _when(plan, ev, name: str) -> Optional[float]:
    """The period a ``first(...)`` found in ``ev`` (in base units), None for never."""
    if ev.is_never(name):
        return None
    v = float(ev.values[name])
    return v if math.isfinite(v) else None


def finding(plan, f: First, evaluations: Sequence) -> str:
    """``first(...)`` in words, each scenario's answer: ```runway`: `cash < 0 USD` first holds in
    **month 30** in `price_war`, and **never** otherwise.`` Never is a finding, said as such."""
    cond = code(f.condition.span.flat)
    groups: dict[Optional[float], list[str]] = {}
    for ev in evaluations:
        groups.setdefault(_when(plan, ev, f.name), []).append(ev.label)
    lead = f"`{f.name}`: {cond}"
    never = groups.pop(None, None)
    if not groups:
        n = len(evaluations[0].periods) if evaluations and evaluations[0].periods is not None else 0
        unit = plan.period_unit[0]
        over = f"in none of the {n} {unit}s" if unit in NAMED_PERIODS else "in none of the periods"
        return f"{lead} holds {over}: **never**{' in any scenario' if len(evaluations) > 1 else ''}."
    if never is None and len(groups) == 1:
        (v,) = groups
        every = " in every scenario" if len(evaluations) > 1 else ""
        return f"{lead} first holds in **{period_words(plan, v)}**{every}."
    parts = [f"in **{period_words(plan, v)}** in {_names(labels)}" for v, labels in sorted(groups.items())]
    last = ", and " if any(len(labels) > 1 for labels in groups.values()) else " and "  # `a` and `b`, and ...
    text = f"{lead} first holds " + (parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + last + parts[-1])
    if never is not None:
        text += ", and **never** otherwise" if len(parts) == 1 else f"; it **never** holds in {_names(never)}"
    return text + "."


def findings(plan, evaluations: Sequence) -> list[str]:
    """Every ``first(period where ...)`` figure's answer per scenario, a sentence each (Markdown, bold on
    the period): the report's Findings and ``planner build``'s summary."""
    return [finding(plan, f, evaluations) for f in firsts(plan)] if plan.model.periods is not None else []


def _names(labels: Sequence[str]) -> str:
    labels = [f"`{x}`" for x in labels]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


# ---- the table: a row per period, or per quarter / year when there are many ----------------------------

def step_of(plan, count: int) -> int:
    """Periods per row so that ``count`` periods fit in :data:`MAX_ROWS` rows: 1, then a quarter, half
    a year, a year... for months (2, 5, 10... for other units)."""
    unit = plan.period_unit[0]
    steps = (1, 3, 6, 12, 24, 60, 120) if unit == "month" else (1, 4, 13, 26, 52) if unit == "week" \
        else (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
    for s in steps:
        if math.ceil(count / s) <= MAX_ROWS:
            return s
    return math.ceil(count / MAX_ROWS)


def _every(plan, step: int) -> str:
    unit = plan.period_unit[0]
    if step == 1:
        return f"every {unit}" if unit in NAMED_PERIODS else "every period"
    if unit == "month" and step in (3, 6, 12):
        return {3: "at the end of every quarter", 6: "at the end of every half year", 12: "at the end of every year"}[step]
    return f"every {step} {unit}s" if unit in NAMED_PERIODS else f"every {step} periods"


def _longest(evaluations):
    """The evaluation with the most periods (a scenario may set a shorter horizon)."""
    return max(evaluations, key=lambda ev: len(ev.periods))


def _rows(plan, evaluations, name: str, step: int) -> tuple[list[dict], bool]:
    """A row every ``step`` periods (and the last), a cell per scenario: its value in that period,
    ``–`` where its periods end sooner."""
    x = _periods(plan, _longest(evaluations))
    count = len(x)
    picked = list(range(step - 1, count, step))
    if not picked or picked[-1] != count - 1:
        picked.append(count - 1)  # the last period always
    by_period = [dict(zip(np.round(_periods(plan, ev), 9), np.asarray(ev.series_display(name), dtype=float)))
                 for ev in evaluations]
    keys = np.round(x, 9)
    unit = plan.quantities[name].unit_text
    style = style_for([float(v[keys[i]]) for v in by_period for i in picked if keys[i] in v] or [0.0], unit)
    say = (lambda a: "true" if a else "false") if plan.quantities[name].is_bool else (lambda a: _figure(style, a))
    rows = [{"period": period_words(plan, x[i] * plan.period_unit[1]), "at": _number(x[i]),
             "cells": [say(float(v[keys[i]])) if keys[i] in v else "–" for v in by_period]} for i in picked]
    varies = any(len({repr(v.get(k)) for v in by_period}) > 1 for k in keys)
    return rows, varies


def _tables(columns: Sequence[str], rows: Sequence[dict]) -> list[dict]:
    """The table split by scenarios, at most :data:`MAX_COLUMNS` to a table, so that it fits the column."""
    out = []
    for start in range(0, len(columns), MAX_COLUMNS):
        stop = start + MAX_COLUMNS
        out.append({"columns": list(columns[start:stop]),
                    "rows": [{"at": r["at"], "period": r["period"], "cells": r["cells"][start:stop]} for r in rows]})
    return out


def _number(k: float) -> str:
    """A period's number in its unit: ``3`` (month 3), ``2.5``."""
    return format(period_number(k), "g")


def _figure(style, v: float) -> str:
    return style.text(v) if math.isfinite(v) else "–"


def _facts(plan, ev, name: str) -> dict:
    """First, last and lowest value of a series in one evaluation, in words (the plan's unit)."""
    v = np.asarray(ev.series_display(name), dtype=float)
    x = np.asarray(ev.periods, dtype=float)
    unit = plan.quantities[name].unit_text
    style = prose_style([float(a) for a in v if math.isfinite(a)] or [0.0], unit)
    k = int(np.nanargmin(v)) if np.isfinite(v).any() else 0

    def say(a: float) -> str:
        if plan.quantities[name].is_bool:
            return "true" if a else "false"
        return (style.text(a) + (f" {unit}" if unit else "")) if math.isfinite(a) else "–"

    facts = {"first": say(float(v[0])), "first_period": period_words(plan, x[0]),
             "last": say(float(v[-1])), "last_period": period_words(plan, x[-1]),
             "low": say(float(v[k])), "low_period": period_words(plan, x[k])}
    if plan.quantities[name].is_bool:  # true or false: no lowest
        facts["low"] = facts["low_period"] = None
    return facts


# ---- the plots' data ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LinePlot:
    """One series over the periods, a line per scenario, the periods a ``first(...)`` found marked."""

    name: str
    title: str
    unit: str
    period_unit: str
    lines: tuple  # (scenario label, periods (numbers of the period unit), values (display unit))
    marks: tuple  # (line index, period, text)


@dataclass(frozen=True)
class FanPlot:
    """One series' percentiles per period over a simulation's trials, a band per scenario."""

    name: str
    title: str
    unit: str
    period_unit: str
    fans: tuple  # (scenario label, periods, {"p5": ..., "p25": ..., "p50": ..., "p75": ..., "p95": ...}, as written)
    colours: tuple = ()  # per fan, the index of its scenario's line on the series' chart (one colour per scenario)


def plot_data(analysis, names: Sequence[str], labels: dict[str, str]) -> list[LinePlot]:
    plan, evs = analysis.plan, analysis.evaluations
    found = firsts(plan)
    out = []
    for name in names:
        lines = tuple((ev.label if len(evs) > 1 else "", _periods(plan, ev),
                       np.asarray(ev.series_display(name), dtype=float)) for ev in evs)
        lines = tuple((_same_as(lines, k), x, y) for k, (_, x, y) in enumerate(lines))
        marks = []
        for f in found:
            if name not in f.series:
                continue
            for i, ev in enumerate(evs):
                when = _when(plan, ev, f.name)
                if when is not None:
                    marks.append((i, when / plan.period_unit[1], period_words(plan, when)))
        out.append(LinePlot(name, labels.get(name, name), plan.quantities[name].unit_text, plan.period_unit[0],
                            lines, tuple(marks)))
    return out


def _same_as(lines: tuple, k: int) -> str:
    """The label of line ``k``, saying whose line it is when an earlier one has the same values (a scenario
    that changes nothing the series uses is drawn over it: the chart shows it dashed)."""
    label, x, y = lines[k]
    same = next((other for other, x2, y2 in lines[:k]
                 if np.array_equal(x, x2) and np.array_equal(y, y2, equal_nan=True)), None)
    return f"{label} (same as {same})" if label and same else label


def fan_data(analysis, names: Sequence[str], labels: dict[str, str]) -> list[FanPlot]:
    """A fan per series whose trials vary (the simulations the report already ran, one per scenario;
    scenarios with the same fan drawn once)."""
    from ..questions.simulate import fan

    sims = list(getattr(analysis, "simulations", None) or [])
    if not sims:
        return []
    from ..language.graph import cone

    plan = analysis.plan
    by_label = {ev.label: ev for ev in analysis.evaluations}
    order = {ev.label: k for k, ev in enumerate(analysis.evaluations)}  # the line chart's colours
    out = []
    for name in names:
        fans: list = []
        colours: list = []
        reach = set(cone(plan.model, [name]))
        for sim in sims:
            if not any(n in reach for n in sim.uncertain):  # a scenario that sets every uncertain input it uses
                continue
            f = fan(sim, name, FAN_LEVELS)
            ev = by_label.get(sim.label) or analysis.base
            drawn = (sim.label if len(sims) > 1 else "", _periods(plan, ev), f,
                     np.asarray(ev.series_display(name), dtype=float))
            same = next((k for k, g in enumerate(fans) if _same_start(f, g[2])), None)
            if same is None:
                fans.append(drawn)
                colours.append(order.get(sim.label, len(colours)))
                continue
            label = f"{fans[same][0]}, {drawn[0]}" if drawn[0] else ""  # scenarios that share the fan, named
            if len(f["p50"]) > len(fans[same][2]["p50"]):  # the same trials over more periods: the longer one
                fans[same] = (label,) + drawn[1:]
            else:
                fans[same] = (label,) + fans[same][1:]
        title = labels.get(name, name)
        if len(fans) == 1 and fans[0][0]:  # one scenario's fan: named in the title, not in every legend entry
            title += f" ({fans[0][0]})"
            fans = [("",) + tuple(fans[0][1:])]
        if any(np.nanmax(g[2]["p95"] - g[2]["p5"]) > 0 for g in fans):
            out.append(FanPlot(name, title, plan.quantities[name].unit_text, plan.period_unit[0], tuple(fans),
                               tuple(colours)))
    return out


def _same_start(a: dict, b: dict) -> bool:
    """Two fans that agree over the periods both have (a scenario that only shortens the horizon)."""
    n = min(len(a["p50"]), len(b["p50"]))
    return all(np.allclose(a[k][:n], b[k][:n], equal_nan=True) for k in ("p5", "p50", "p95"))


# ---- the view ------------------------------------------------------------------------------------------

def view(analysis, headline_figures: Sequence[str], labels: dict[str, str],
         plots: Optional[dict[str, str]] = None) -> Optional[dict]:
    """The ``periods`` key of the report's view model (None for a plan without series):

    * ``unit``, ``count``, ``span``, ``first``, ``last``: the periods (``month``, 60, ``60 months, month 1
      to month 60``, ``month 1``, ``month 60``; the longest where scenarios differ); ``column``: the
      heading of the tables' period column;
    * ``findings``: each ``first(period where ...)`` figure's answer per scenario, a sentence;
    * ``series``: per headline series ``name``, ``label``, ``unit``, ``formula`` (as written),
      ``plot`` and ``fan_plot`` (file names, or None), ``every`` (how often the table has a row:
      "at the end of every quarter"), ``columns`` (scenario labels), ``rows`` (``period`` in
      words, ``at`` its number, ``cells`` a figure per scenario), ``tables`` (the same split into
      tables of at most :data:`MAX_COLUMNS` scenarios, each ``columns`` and ``rows``), ``facts`` (per scenario: ``first``, ``last``, ``low`` and
      their periods, in words);
    * ``others``: the plan's other series, each ``name``, ``label``, ``unit`` and ``formula``.
    """
    plan = analysis.plan
    if plan.model.periods is None or not plan.model.series:
        return None
    evs = analysis.evaluations
    plots = plots or {}
    names = headline_series(plan, headline_figures)
    x = _longest(evs).periods
    count = len(x)
    counts = sorted({len(ev.periods) for ev in evs})
    step = step_of(plan, count)
    series = []
    for name in names:
        q = plan.quantities[name]
        rows, varies = _rows(plan, evs, name, step)
        columns = [ev.label for ev in evs] if len(evs) > 1 else [q.unit_text or name]
        series.append({
            "name": name, "label": labels.get(name, name), "unit": q.unit_text,
            "formula": q.definition.expr.span.flat,
            "plot": plots.get(name), "fan_plot": plots.get(f"fan:{name}"),
            "every": _every(plan, step),
            "columns": columns, "rows": rows, "varies": varies, "tables": _tables(columns, rows),
            "facts": [dict(_facts(plan, ev, name), scenario=ev.label if len(evs) > 1 else "") for ev in evs],
        })
    unit = plan.period_unit[0]
    return {
        "unit": unit, "count": count,
        "span": _span(plan, counts, first=period_words(plan, float(x[0])), last=period_words(plan, float(x[-1]))),
        "column": unit if unit in NAMED_PERIODS else f"period ({unit})",
        "first": period_words(plan, float(x[0])), "last": period_words(plan, float(x[-1])),
        "findings": findings(plan, evs),
        "series": series,
        "others": [{"name": n, "label": labels.get(n, n), "unit": plan.quantities[n].unit_text,
                    "formula": plan.quantities[n].definition.expr.span.flat}
                   for n in plan.series_order() if n not in names],
    }


def _span(plan, counts: Sequence[int], first: str, last: str) -> str:
    """The periods in words: ``60 months, month 1 to month 60``; ``24 to 60 months by scenario, month 1
    to month 60 at the longest`` where a scenario sets a shorter horizon."""
    unit = plan.period_unit[0]
    many = f"{unit}s" if unit in NAMED_PERIODS else f"periods of 1 {unit}"
    if len(counts) == 1:
        return f"{counts[0]} {many}, {first} to {last}"
    return f"{counts[0]} to {counts[-1]} {many} by scenario, {first} to {last} at the longest"


def label(plan, name: str) -> str:
    """A quantity's words for a plot's title (a series', an uncertain figure's): its doc string's first line
    (live values as written), else its name."""
    from ..language.live import plain

    doc = plain(plan.quantities[name].doc)
    first = doc.strip().split("\n")[0] if doc else ""
    return first[:1].upper() + first[1:] if first else name


__all__ = ["headline_series", "firsts", "finding", "plot_data", "fan_data", "view", "label", "period_words",
           "step_of"]
