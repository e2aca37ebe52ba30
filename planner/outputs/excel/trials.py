"""The Trials sheet: a Monte Carlo that stays live in the workbook.

One row per trial (1,000 by default). Column A is the trial number; each uncertain input's cell
is a formula of that number and the input's id, a counter-based generator
(:func:`planner.questions.sampling.counter_formula`: no ``RAND()``, no data table, no macro),
turned into the input's value by its inverse CDF (``NORMSINV`` for the normal family). The plan's
formulas follow per row, as in a sweep's live table (helper columns for the cone). Above the table,
per quantity: ``AVERAGE``, ``STDEV``, ``PERCENTILE`` at 5%, 50% and 95%.

planner draws the same numbers for the same trial (``planner simulate --method counter --samples
1000``): the cached values written here are planner's, and a spreadsheet engine that recalculates
gets the same to about 1e-9.
"""

from __future__ import annotations

import math

import numpy as np

from ...language import ir
from ...language.uncertain import log_params
from ...questions import sampling, simulate
from .book import HEADER, TITLE, Book, cached, scale_of, sheet_title
from .tables import ROW, Live, LiveTable, output_for

DEFAULT_TRIALS = 1000
MAX_TRIALS = 10_000
SEED = 0
# each figure's formula and its cached value: the simulation's own reduction's figure (Excel's
# PERCENTILE is numpy's linear one)
STATS = (("mean", "AVERAGE({r})", "mean"), ("sd", "STDEV({r})", "sd"), ("P5", "PERCENTILE({r},0.05)", "p5"),
         ("P50", "PERCENTILE({r},0.5)", "p50"), ("P95", "PERCENTILE({r},0.95)", "p95"))
LEVELS = (5.0, 50.0, 95.0)


def _num(x: float) -> str:
    return repr(float(x))


def score_formula(names: list[str], row: list[float], trial: str) -> str:
    """A correlated input's normal score in a Gaussian copula: ``L_j1*z1+L_j2*z2+...`` over the scores
    ``NORMSINV(u)`` of the inputs it is correlated with, ``L`` the factor planner computes
    (:func:`planner.questions.simulate.copula`) written as constants."""
    return "+".join(f"{_num(c)}*NORMSINV({sampling.counter_formula(trial, SEED, n)})"
                    for n, c in zip(names, row) if c != 0)


def value_formula(u: simulate.UncertainInput, scale: float, trial: str, score: str | None = None) -> str:
    """The input's value (display units) for the trial in cell ``trial``, as a formula (no ``=``);
    ``score``: its normal score in a copula (:func:`score_formula`), for a correlated input."""
    lo, hi = u.within
    if score is not None and (lo, hi) == (0.0, 1.0) and u.kind in sampling.NORMAL_FAMILY:
        if u.kind == "normal":
            return f"({_num(u.params[0] / scale)}+{_num(u.params[1] / scale)}*({score}))"
        mu, sigma = log_params(u.kind, u.params)
        return f"EXP({_num(mu - math.log(scale))}+{_num(sigma)}*({score}))"
    p = sampling.counter_formula(trial, SEED, u.name) if score is None else f"NORMSDIST({score})"
    if (lo, hi) != (0.0, 1.0):
        p = f"({_num(lo)}+({p})*{_num(hi - lo)})"
    params = [v / scale for v in u.params]
    if u.kind in ("range", "lognormal"):
        mu, sigma = log_params(u.kind, u.params)
        return f"EXP({_num(mu - math.log(scale))}+{_num(sigma)}*NORMSINV({p}))"
    if u.kind == "normal":
        return f"({_num(params[0])}+{_num(params[1])}*NORMSINV({p}))"
    if u.kind == "uniform":
        return f"({_num(params[0])}+{_num(params[1] - params[0])}*{p})"
    if u.kind == "pert":
        low, _, high = params
        a, b = sampling.pert_shape(u.params)
        return f"BETAINV({p},{_num(a)},{_num(b)},{_num(low)},{_num(high)})"
    if u.kind == "discrete":
        values, cum = sampling.discrete_table(u.params)
        out = _num(values[-1] / scale)
        for v, c in zip(reversed(values[:-1]), reversed(cum)):
            out = f"IF({p}<{_num(c)},{_num(v / scale)},{out})"
        return out
    low, mode, high = params
    w = high - low
    return (f"IF({p}<{_num((mode - low) / w)},{_num(low)}+SQRT({p}*{_num(w * (mode - low))}),"
            f"{_num(high)}-SQRT((1-{p})*{_num(w * (high - mode))}))")


def trials_sheet(book: Book, trials: int = DEFAULT_TRIALS) -> None:
    """The Trials sheet, when the plan has uncertain inputs."""
    from ...language.errors import PlanError, UsageError

    plan = book.plan
    inputs = simulate.uncertain_inputs(plan)
    if not inputs:
        return
    if not 1 <= trials <= MAX_TRIALS:
        raise UsageError(f"--trials {trials:,}: the Trials sheet takes 1 to {MAX_TRIALS:,} rows",
                         hint="for more samples run `planner simulate --samples N`")
    try:
        simulate._refuse_uncertain_bounds(plan, inputs)
    except PlanError as err:  # the deterministic sheets stand; the Trials sheet says why it has no trials
        ws = book.create_sheet(sheet_title(book, "Trials"))
        ws.text(1, 1, "Trials", TITLE)
        ws.note(2, 1, f"No trials: {err.message}.")
        return
    names = list(inputs)
    drawn = simulate.draw(plan, trials, SEED, "counter", inputs)
    shown = [n for n in simulate.default_names(plan) if n not in inputs]
    # a working sheet (grey tab, after the reader's sheets, only its first rows print): its percentiles are
    # on the Summary; a thousand rows of draws are for recalculating, not for reading on paper
    ws = book.create_sheet(sheet_title(book, "Trials"), work=True)
    ws.text(1, 1, f"Trials: {trials:,} draws of the uncertain inputs", TITLE, overflow=True)
    ws.note(2, 1, "Each row is one trial. Each uncertain input is a formula of the trial number (no RAND(): the "
                  "same numbers on every recalculation and in every engine), through its distribution's inverse; "
                  "the plan's formulas follow per row. `planner simulate --method counter --samples "
                  f"{trials}` draws the same trials. Inputs not listed keep their Inputs-sheet values.")
    pairs = [s for s in plan.model.plan.statements if isinstance(s, ir.Correlation)]
    ws.note(3, 1, "; ".join(f"{n}: {u.text}" for n, u in inputs.items())
            + ("; rank correlations (Gaussian copula): " + ", ".join(f"{c.a} and {c.b} {c.rho:g}" for c in pairs)
               if pairs else ""))
    stats_top = 7
    top = stats_top + len(STATS) + 3
    outputs = [output_for(book, n) for n in shown]
    table, left_out = _fitting_table(book, ws, names, outputs, top)
    outputs = table.outputs
    if left_out:
        ws.note(4, 1, "Not on this sheet (a formula too long to repeat in a cell per trial; `planner simulate` "
                      "has them): " + ", ".join(left_out))
    ws.text(top, 1, "trial", HEADER)
    rows = []
    correlated = simulate.copula(plan)
    scores = {} if correlated is None else {
        n: score_formula(correlated[0], row, f"$A{ROW}") for n, row in zip(*correlated)}
    for k in range(trials):
        row = []
        for n in names:
            q = book.q[n]
            scale = float(scale_of(q))  # a percentage cell holds the fraction
            row.append(Live("=" + value_formula(inputs[n], scale, f"$A{ROW}", scores.get(n)),
                            float(drawn[n][k] / scale)))
        rows.append(row)
    table.header()
    table.fill(rows)
    for k in range(trials):
        ws.number(table.first + k, 1, k + 1)
    # the summary: per input and output column, live statistics over the trials
    ws.label(stats_top - 2, 1, f"Summary of the {trials:,} trials (live)")
    columns = [("in:" + n, n) for n in names] + [(f"out:{i}", o.label) for i, o in enumerate(outputs)]
    for j, (label, _, _) in enumerate(STATS):
        ws.text(stats_top + j, 1, label, HEADER)
    for key, label in columns:
        c = table.col[key]
        values = [v for v in table.values[key] if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not values:
            continue
        rng = table.range(key)
        unit = book.q[label].unit_text if label in book.q else ""
        ws.text(stats_top - 1, c, f"{label} ({unit})" if unit else label, HEADER)
        column = np.asarray(values, dtype=float)
        figures = simulate.IN_MEMORY.summaries({key: column}, LEVELS)[0][key]
        stats = [math.nan if np.isnan(column).any() else figures[figure] for _, _, figure in STATS]
        # the cells hold what the trials' cells hold (a percentage's fraction): the same number format,
        # so "resale (%)" reads 23.2%, not 0.232362
        num = book.number_style(stats, unit)
        for j, ((_, text, _), value) in enumerate(zip(STATS, stats)):
            # a trial with no value (nan) has none in Excel either: the figure over the column has none
            ws.formula(stats_top + j, c, "=" + text.format(r=rng), cached(value), num)
    ws.freeze = (top + 2, 2)
    book.trials_table = table


def _fitting_table(book: Book, ws, names, outputs, top: int) -> tuple[LiveTable, list[str]]:
    """The live table of the trials without the outputs whose formula (or a helper's it needs) does not
    fit one cell printed once per column: those would be printed again for every trial."""
    from .generator import Generator, NotWritten

    left_out: list[str] = []
    while True:
        table = LiveTable(book, ws, book.base_context, names, outputs, top, left=2)
        gen = Generator(book.model, table._refs(ROW))
        bad = None
        for o in table.outputs:
            try:
                gen.formula(o.expr, None if o.is_bool else o.scale)
            except NotWritten:
                bad = {o.label}
                break
        if bad is None:
            for n in table.helpers:
                q = book.q[n]
                try:
                    gen.formula(q.definition.expr, None if q.is_bool else scale_of(q))
                except NotWritten:
                    bad = {o.label for o in table.outputs if o.quantity is not None
                           and n in set(cone_of(book, o.quantity))}
                    break
        if not bad:
            return table, left_out
        left_out += sorted(bad)
        outputs = [o for o in outputs if o.label not in bad]


def cone_of(book: Book, name: str) -> list[str]:
    from ...language.graph import cone

    return list(cone(book.model, [name]))
