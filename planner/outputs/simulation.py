"""``planner simulate``'s output: per scenario, a table of each quantity's point value, mean,
standard deviation and percentiles (display units), then the probabilities asked for; or the
same as JSON or CSV."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from ..questions.simulate import Figures, Simulation
from ..questions.simulate import _pct_text as _pct
from .numbers import NumberStyle, differing, period_number, prose_style, row_texts, style_for
from .numbers import share as share_text
from .terminal import csv_rows, dumps, fit, json_number, markdown_table

Run = Union[Simulation, Figures]  # in memory, reduced here; or reduced already, as a --dask run is


def _reduced(sims: Sequence[Run], names: Sequence[str], percentiles: Sequence[float],
             probabilities: Sequence[tuple[str, Any]] = (), flags: Optional[Sequence[str]] = None,
             correlations: bool = False) -> list[Figures]:
    """Each run's figures, through the one reduction (:func:`planner.questions.simulate.reduce`): what
    every output below reads, whichever executor ran the simulation."""
    return [sim.figures(names, flags, probabilities, percentiles, correlations) for sim in sims]


def _stat_names(percentiles: Sequence[float]) -> list[str]:
    return ["point", "mean", "sd"] + [f"p{_pct(p)}" for p in percentiles]


# how each sampling method is named in a simulation's heading (`--method`)
METHODS = {"lhs": "Latin hypercube", "random": "plain random", "counter": "counter-based (as the workbook's Trials)"}


def _header(sim: Figures) -> str:
    return (f"[{sim.label}] {sim.samples:,} samples, seed {sim.seed}, "
            f"{METHODS.get(sim.method, sim.method)}")


def _headers(percentiles: Sequence[float]) -> list[str]:
    return ["quantity", "point", "mean", "sd"] + [f"p{p:g}" for p in percentiles] + ["unit"]


def _rows(sim: Figures, names: Sequence[str], percentiles: Sequence[float]):
    """One row a quantity, its figures in one style (:func:`.numbers.row_texts`: chosen from the point,
    mean and percentiles, the sd written in it, so float noise such as the sd of a constant is 0); a
    ``first(...)`` with no value is "never"."""
    rows = []
    for n in names:
        q = sim.plan.model.quantities[n]
        s = sim.stats(n, percentiles)
        keys = _stat_names(percentiles)
        shown = row_texts({k: s[k] for k in keys}, q.unit_text, whole=sim.whole(n))
        if sim.never(n) is not None:
            shown = ["never" if s[k] != s[k] else t for k, t in zip(keys, shown)]
        rows.append([n] + shown + [q.unit_text])
    return rows


def _never_lines(sim: Figures, names: Sequence[str]) -> list[str]:
    """A ``first(...)`` that finds nothing in some samples, in words: how often, and what the figures are over."""
    out = []
    for n in names:
        share = sim.never(n)
        if share:
            rest = "no sample finds one" if share == 1 else f"mean, sd and percentiles over the other {share_text(1 - share)}"
            out.append(f"{n}: never in {share_text(share)} of samples ({rest})")
    return out


def _flag_lines(sim: Figures, words_as=lambda words: words) -> list[str]:
    """Each true/false quantity as a share of samples, in its doc string's words (``words_as``: how the
    output writes the plan's text; Markdown escapes it, :func:`planner.outputs.markup.text`)."""
    out = []
    for n, share in sim.flags.items():
        q = sim.plan.model.quantities[n]
        from ..language.live import plain

        words = (plain(q.doc) or "").strip().split("\n")[0] or n
        out.append(f"{words_as(words[:1].upper() + words[1:])} in {share_text(share)} of samples ({n})")
    return out


def tornado(sim: Figures, names: Sequence[str], width: Optional[int] = None) -> str:
    """Per quantity that varies and is not a sampled input: each input's rank correlation with it."""
    rows = []
    for n in names:
        if n in sim.uncertain:
            continue
        for i, (inp, rho) in enumerate(sim.rank_correlations(n).items()):
            bar = ("+" if rho >= 0 else "-") * int(round(abs(rho) * 20))
            rows.append([n if i == 0 else "", inp, f"{rho:+.3f}", bar])
    if not rows:
        return ""
    return "rank correlation with each uncertain input (Spearman), largest first\n" + fit(
        rows, ["quantity", "input", "rho", ""], ["left", "left", "right", "left"], width, keep=1)


class SimulationView:
    """`planner simulate`: each quantity's figures over the samples, per scenario (in memory, or reduced
    already by a --dask run), rendering itself in every format the command offers (as
    :mod:`planner.outputs.views`' views do). ``flags``: the true/false quantities said as shares
    (None: as :func:`planner.questions.simulate.flags_for` gives them)."""

    def __init__(self, sims: Sequence[Run], names: Sequence[str], percentiles: Sequence[float],
                 probabilities: Sequence[tuple[str, Any]] = (), sensitivity: bool = False,
                 flags: Optional[Sequence[str]] = (), fans: Optional[Sequence[str]] = None) -> None:
        self.sims, self.names, self.percentiles = sims, names, percentiles
        self.probabilities, self.sensitivity, self.flags = probabilities, sensitivity, flags
        self.fans = fan_names(sims[0].plan) if fans is None else fans  # the series drawn as fans

    def table(self, width: Optional[int] = None) -> str:
        names, percentiles, probabilities = self.names, self.percentiles, self.probabilities
        headers = _headers(percentiles)
        align = ["left"] + ["right"] * (len(headers) - 2) + ["left"]
        parts = []
        for sim in _reduced(self.sims, names, percentiles, probabilities, self.flags, self.sensitivity):
            block = [_header(sim), names and fit(_rows(sim, names, percentiles), headers, align, width, keep=1)]
            block += _never_lines(sim, names)
            block += _flag_lines(sim)
            for label, cond in probabilities:
                block.append(f"P({label}) = {share_text(sim.probability(cond))}{sim.never_note(cond)}")
            if self.sensitivity:
                block.append(tornado(sim, names, width))
            run = self.sims[len(parts)]
            if isinstance(run, Simulation):
                block += [fan_table(run, n, percentiles, width) for n in self.fans]
            elif self.fans:  # a chunked run keeps no samples
                block.append(f"fan of {', '.join(self.fans)}: not computed with --dask, which keeps no "
                             "samples (run without --dask for the percentiles in each period)")
            parts.append("\n".join(b for b in block if b))
        return "\n\n".join(parts)

    def markdown(self) -> str:
        names, percentiles, probabilities = self.names, self.percentiles, self.probabilities
        headers = _headers(percentiles)
        align = ["left"] + ["right"] * (len(headers) - 2) + ["left"]
        parts = []
        for sim in _reduced(self.sims, names, percentiles, probabilities, self.flags):
            block = [f"## {_header(sim)}", "", markdown_table(_rows(sim, names, percentiles), headers, align)]
            from .markup import text as escaped

            block += ["\n" + line for line in _never_lines(sim, names) + _flag_lines(sim, escaped)]
            block += [f"\nP({label}) = {share_text(sim.probability(cond))}{sim.never_note(cond)}"
                      for label, cond in probabilities]
            parts.append("\n".join(block))
        return "\n\n".join(parts)

    def json(self) -> str:
        names, percentiles, probabilities = self.names, self.percentiles, self.probabilities
        runs = list(self.sims)
        sims = _reduced(runs, names, percentiles, probabilities, (), correlations=True)
        first = sims[0]
        fans = [_fans_json(run, self.fans, percentiles) for run in runs]
        return dumps({
            "format": "planner.simulate/1",
            "file": first.plan.path,
            "samples": first.samples,
            "seed": first.seed,
            "method": first.method,
            "uncertain": {n: u.text for n, u in first.uncertain.items()},
            "scenarios": [{
                "scenario": sim.label,
                "quantities": {n: {"unit": sim.plan.model.quantities[n].unit_text,
                                   **{k: _point_or_never(sim, n, k, v, json_number)
                                      for k, v in sim.stats(n, percentiles).items()}}
                               for n in names},
                "probabilities": {label: sim.probability(cond) for label, cond in probabilities},
                "rank_correlations": {n: sim.rank_correlations(n) for n in names if n not in sim.uncertain},
                **({"series": fan} if fan else {}),
            } for sim, fan in zip(sims, fans)],
        })

    def csv(self) -> str:
        """One row a scenario and quantity; a plan with a ``first(...)`` adds the ``never`` column (the share
        of samples where it finds nothing, as in the JSON; empty for other quantities)."""
        names, percentiles = self.names, self.percentiles
        stats = _stat_names(percentiles)
        rows = []
        figures = _reduced(self.sims, names, percentiles, (), ())
        with_never = any(sim.never(n) is not None for sim in figures for n in names)
        for sim in figures:
            for n in names:
                s = sim.stats(n, percentiles)
                never = [("" if sim.never(n) is None else sim.never(n))] if with_never else []
                rows.append([sim.label, n, sim.plan.model.quantities[n].unit_text]
                            + [_point_or_never(sim, n, k, s[k]) for k in stats] + never)
        return csv_rows(["scenario", "quantity", "unit"] + stats + (["never"] if with_never else []), rows)


def fan_names(plan) -> list[str]:
    """The series whose fan a simulation shows: those tagged [headline], else every series; of them, those
    the uncertain inputs reach (another's fan is its one path in every percentile)."""
    from ..questions.simulate import _reached

    series = plan.series_order() if hasattr(plan, "series_order") else []
    headline = [n for n in series if "headline" in plan.model.quantities[n].tags]
    reached = _reached(plan)
    return [n for n in headline or series if n in reached]


def shown(plan, show: Optional[Sequence[str]]) -> tuple[list[str], list[str]]:
    """What a simulation shows (``planner simulate --show``, ``Plan.simulate(show)``): the figures in its
    table and the series drawn as fans. A series named is its fan (it has no one value to table); without
    names, the uncertain inputs and every figure they reach, and :func:`fan_names`."""
    from ..questions.simulate import default_names

    if show is None:
        return default_names(plan), fan_names(plan)
    series = set(plan.series_order())
    return [n for n in show if n not in series], [n for n in show if n in series]


def fan_table(sim, name: str, percentiles: Sequence[float], width: Optional[int] = None) -> str:
    """A series' fan: its percentiles over the samples in each period (a row per period)."""
    from ..questions.simulate import fan
    from .terminal import NEVER, period_labels

    plan = sim.plan
    q = plan.model.quantities[name]
    got = fan(sim, name, percentiles, whole=True)
    ev = plan.evaluate(sim.scenario)
    labels = period_labels(plan, ev)
    cols = ["mean"] + [f"p{p:g}" for p in percentiles]
    # one style for the whole fan, as a row of `simulate` (:func:`.numbers.row_texts`): a series whole in
    # every sample (a count) has whole percentiles and its mean to three significant digits
    every = [float(v) for c in cols for v in got[c] if v == v]
    style = spread = style_for(every, q.unit_text)
    if got["whole"] and not style.money and not style.scientific:
        style, spread = NumberStyle(0, False, style.percent), prose_style([float(v) for v in got["mean"] if v == v],
                                                                          q.unit_text)
    shown = {c: [NEVER if v != v else (spread if c == "mean" else style).text(float(v)) for v in got[c]] for c in cols}
    rows = [[labels[i]] + [shown[c][i] for c in cols] for i in range(len(labels))]
    unit = plan.period_unit[0] or "period"
    title = f"fan of {name}" + (f" ({q.unit_text})" if q.unit_text else "") + ": percentiles over the samples"
    return title + "\n" + fit(rows, [unit] + cols, ["right"] * (len(cols) + 1), width, keep=1)


def _fans_json(run, names: Sequence[str], percentiles: Sequence[float]) -> dict:
    """Each series' fan (``names``): per period, its mean and percentiles over the samples."""
    if not isinstance(run, Simulation) or not run.plan.model.series:  # (a chunked run keeps no samples)
        return {}
    from ..questions.simulate import fan

    plan = run.plan
    unit, scale = plan.period_unit
    periods = [period_number(float(p) / scale) for p in plan.evaluate(run.scenario).periods]
    out = {}
    for n in names:
        got = fan(run, n, percentiles)
        out[n] = {"unit": plan.model.quantities[n].unit_text, "period_unit": unit, "periods": periods,
                  **{k: [json_number(float(v)) for v in values] for k, values in got.items()}}
    return out


def _point_or_never(sim: Figures, name: str, key: str, value: float, shown=lambda v: v):
    """A ``first(...)``'s point value when it finds nothing is "never", as ``planner eval`` shows it."""
    if key == "point" and value != value and sim.never(name) is not None:
        return "never"
    return shown(value)


def solve_text(plan, answers, scenarios) -> str:
    """``planner simulate --solve``: per scenario, the input's value at the condition's edge and the
    probability reached there."""
    lines = []
    for answer, scenario in zip(answers, scenarios):
        q = plan.model.quantities[answer.target]
        scale = float(q.display.scale)
        r = answer.result
        # both edges to the digits that tell them apart (6 significant digits printed 3.90883 twice)
        at, past = differing(answer.value / scale, answer.other / scale, q.unit_text, digits=6)
        lines.append(f"[{scenario or 'base'}] {answer.target} = {at}"
                     f": {r.stat_text} over {r.samples:,} samples ({answer.steps} simulations; just past it, "
                     f"{past}, the condition fails)")
    return "\n".join(lines)
