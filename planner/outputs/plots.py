"""One PNG per sweep, one histogram per uncertain figure, and a line chart (and a fan under
uncertainty) per headline series over the periods, next to the report (matplotlib, imported only
when plotting).

The only home of matplotlib. Plots are deterministic: no pyplot and no
global backend (a :class:`~matplotlib.figure.Figure` drawn by the Agg
canvas), matplotlib's default style whatever the user's matplotlibrc says,
a fixed ``svg.hashsalt``, and no ``Software``/date metadata in the PNG; the
same plan gives the same bytes with the same matplotlib.

Layout: one panel per shown quantity (stacked, sharing the x axis; a
true/false quantity is a step plot between "false" and "true"), x the
sweep's longest axis (log scale for a ``times`` range, with plain tick
labels: 1, 2, 4 ... 1024, never 2⁰ ... 2¹⁰), one line per scenario and per
value of the other axes (at most ``MAX_LINES``). Points with issues are
gaps, never values. Drawn at ``DPI`` (twice the usual 100, sharp on HiDPI
screens), titled from the names and units, with the plan's own marks where
it has them (:class:`Mark`: the value as written, a break-even, an optimum).
"""

from __future__ import annotations

import functools
import io
import itertools
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .numbers import significant
from .terminal import column_header

MAX_LINES = 12  # lines per panel; grids with more combinations are plotted for the first ones
MAX_PANELS = 6
DPI = 200
WIDTH_INCHES = 6.4


@dataclass(frozen=True)
class Mark:
    """Something the plan says about the sweep's x axis, drawn on the plot.

    ``x`` in the axis' display unit. With ``panel`` and ``y`` (display units) it is a point
    on that panel (an optimum); without, a vertical line across every panel (the value
    as written, a break-even or a threshold)."""

    x: float
    label: str
    kind: str = "line"  # "current" | "line" | "point"
    panel: Optional[str] = None
    y: Optional[float] = None


def available() -> Optional[str]:
    """None when plots can be drawn, else the reason they cannot (found, not imported: a report whose
    charts are all in the cache imports no matplotlib)."""
    from importlib.util import find_spec

    try:
        if find_spec("matplotlib") is not None:
            return None
    except (ImportError, ValueError):  # ValueError: matplotlib set to None in sys.modules (refused)
        pass
    return "matplotlib is not installed (pip install matplotlib)"


def _kept(draw):
    """A chart drawn at most once for the same data: its PNG kept in planner's cache under the data
    it is drawn from (:func:`planner.compute.cache.chart_key`), the key taken before matplotlib is
    imported; drawn (and kept) when the cache has no whole PNG under that key. ``keep=False``: drawn, not
    kept (``planner serve``'s charts, one per position of a slider, would push the plans out of the cache)."""
    @functools.wraps(draw)
    def chart(*args, keep: bool = True, **kwargs) -> bytes:
        from ..compute import cache

        key = None
        if keep and cache.enabled():
            try:
                key = cache.chart_key(draw.__name__, cache.fingerprint((args, sorted(kwargs.items()))))
            except Exception:  # noqa: BLE001  (data that is not plain, no matplotlib: drawn as usual)
                key = None
        png = cache.drawn(key) if key else None
        if png is None:
            png = draw(*args, **kwargs)
            if key:
                cache.keep(key, png)
        return png
    return chart


@contextmanager
def _figure(height: float, font_size: float):
    """Every chart's figure: ``WIDTH_INCHES`` by ``height`` at ``DPI`` on the Agg canvas (no pyplot, no
    global backend), drawn in matplotlib's default style whatever the user's matplotlibrc says, with
    every text literal: a plan's words label the plots, and mathtext would read a ``$`` in a doc
    string as maths (an unbalanced one is an error). With ``text.parse_math`` off, ``$``, ``^``, ``_``
    and ``\\`` are drawn as written in every title, label, legend and annotation (usetex stays off)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # without `backend`: setting it (even to its default) resolves the default backend, which imports pyplot
    style = {k: v for k, v in matplotlib.rcParamsDefault.items() if k != "backend"}
    style.update({"svg.hashsalt": "planner", "path.simplify": False, "font.size": font_size,
                  "text.parse_math": False, "text.usetex": False})
    with matplotlib.rc_context(style):
        fig = Figure(figsize=(WIDTH_INCHES, height), dpi=DPI)
        FigureCanvasAgg(fig)
        yield fig


def panels_of(results: Sequence) -> tuple[list[str], list[str]]:
    """(the quantities plotted, one panel each; the quantities left out, with the reason)."""
    first = results[0]
    axes = {a.name for a in first.axes}
    shown = [n for n in first.show if n not in axes]
    skipped = [f"`{n}`: only {MAX_PANELS} panels per plot" for n in shown[MAX_PANELS:]]
    return shown[:MAX_PANELS], skipped


def title_of(results: Sequence) -> str:
    """A short title from the names: ``speedup and expected_tokens against alpha``."""
    first = results[0]
    panels, _ = panels_of(results)
    x_axis = max(first.axes, key=lambda a: a.count)
    names = panels if len(panels) <= 3 else panels[:2] + [f"{len(panels) - 2} more"]
    what = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else (names[0] if names else "nothing")
    title = f"{what} against {x_axis.name}"
    others = [a.name for a in first.axes if a is not x_axis]
    if others:
        title += ", by " + ", ".join(others)
    if len(results) > 1:
        title += ", per scenario"
    return title


@dataclass(frozen=True)
class _SweepChart:
    """What a sweep's plot draws, as plain data (its PNG is kept under it: :func:`_kept`)."""

    title: str
    panels: tuple  # per panel: a name, or a group of names sharing it (where a mark goes)
    heights: tuple  # per panel, in inches
    lines: tuple  # per panel: (legend label or None, x, y) per line
    steps: tuple  # per panel: True for a true/false quantity (a step plot between "false" and "true")
    ylabels: tuple
    legends: tuple  # per panel: whether it has a legend
    marker: Optional[str]
    xlabel: str
    log_base: Optional[float]  # None: a linear x axis
    ticks: Optional[tuple]  # a tick at each swept value (a log axis of at most 12)


def sweep_png(results: Sequence, title: Optional[str] = None, marks: Sequence[Mark] = (),
              together: Sequence[Sequence[str]] = (), keep: bool = True) -> bytes:
    """The PNG of one sweep statement (its results, one per scenario). ``together``: groups of shown
    quantities drawn in one panel (the two sides of a break-even, which cross at the answer); ``keep``:
    as :func:`_kept`."""
    first = results[0]
    plan = first.plan
    x_axis = max(first.axes, key=lambda a: a.count)  # the longest axis across, the others as lines
    others = [a for a in first.axes if a is not x_axis]
    shown, _ = panels_of(results)
    groups = {n: tuple(g) for g in together if all(m in shown for m in g) for n in g}
    panels: list = []  # a name, or a group of names sharing one panel
    for n in shown:
        entry = groups.get(n, n)
        if entry not in panels:
            panels.append(entry)
    title = title or title_of(results)
    combos = int(np.prod([a.count for a in others])) if others else 1
    if combos > MAX_LINES:
        title += f"\n(lines for the first {MAX_LINES} of {combos:,} combinations)"
    lines, steps, ylabels, legends = [], [], [], []
    for entry in panels:
        names = entry if isinstance(entry, tuple) else (entry,)
        steps.append(len(names) == 1 and plan.model.quantities[names[0]].is_bool)
        drawn = []
        for name, r in itertools.product(names, results):
            for label, mask in _lines(r, others):
                y = np.where(r.bad[mask], np.nan, r.display(name)[mask].astype(float))
                parts = [p for p in (name if len(names) > 1 else "", r.label if len(results) > 1 else "", label) if p]
                drawn.append((", ".join(parts) or None, r.display(x_axis.name)[mask], y))
        lines.append(tuple(drawn))
        ylabels.append(column_header(plan, names[0]) if len(names) == 1 else
                       f"{' and '.join(names)} ({plan.model.quantities[names[0]].unit_text})")
        legends.append(len(results) > 1 or bool(others) or len(names) > 1)
    log = x_axis.kind == "times"
    chart = _SweepChart(title, tuple(panels), tuple(2.2 if not step else 0.9 for step in steps) or (2.2,),
                        tuple(lines), tuple(steps), tuple(ylabels), tuple(legends),
                        "o" if x_axis.count <= 50 else None, column_header(plan, x_axis.name),
                        (float(x_axis.factor) if x_axis.factor > 1 else 10.0) if log else None,
                        tuple(float(v) for v in x_axis.array() / float(x_axis.scale)) if log and x_axis.count <= 12
                        else None)
    return _sweep_png(chart, tuple(marks), keep=keep)


@_kept
def _sweep_png(chart: _SweepChart, marks: Sequence[Mark]) -> bytes:
    """One panel per shown quantity (or group), stacked on the sweep's x axis, the plan's marks on them."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    with _figure(1.1 + sum(chart.heights), 9) as fig:
        axes = fig.subplots(max(1, len(chart.panels)), 1, sharex=True, squeeze=False,
                            gridspec_kw={"height_ratios": list(chart.heights)})[:, 0]
        for ax, lines, step, ylabel, legend in zip(axes, chart.lines, chart.steps, chart.ylabels, chart.legends):
            for label, x, y in lines:
                if step:
                    ax.step(x, y, where="mid", linewidth=1.4, label=label)
                else:
                    ax.plot(x, y, marker=chart.marker, markersize=3, linewidth=1.2, label=label)
            if step:
                ax.set_ylim(-0.25, 1.25)
                ax.set_yticks([0, 1], ["false", "true"])
            ax.set_ylabel(ylabel)
            ax.grid(True, linewidth=0.4, alpha=0.6)
            if legend:
                ax.legend(fontsize=7, loc="best")
        if not chart.panels:
            axes[0].text(0.5, 0.5, "nothing to plot", ha="center", va="center")
        labels = _draw_marks(axes, chart.panels, marks)
        bottom = axes[-1]
        if chart.log_base is not None:
            bottom.set_xscale("log", base=chart.log_base)
            if chart.ticks is not None:  # a tick at every swept value
                bottom.xaxis.set_major_locator(FixedLocator(list(chart.ticks)))
            bottom.xaxis.set_minor_locator(NullLocator())
        bottom.xaxis.set_major_formatter(FuncFormatter(_plain_tick))
        bottom.set_xlabel(chart.xlabel)
        _keep_in(axes[0], labels)
        fig.suptitle(chart.title, fontsize=10)
        # fixed margins in inches, room for 8-character tick labels and the axis titles (tight_layout
        # measures every label with a whole extra draw: a quarter of a sweep plot's time)
        _margins(fig, left=0.85, right=0.2, top=0.25 + 0.17 * (chart.title.count("\n") + 1), bottom=0.5,
                 between=0.25)
        return _png(fig)


def _plain_tick(v: float, _pos=None) -> str:
    """1, 2, 1,024, 0.5, 20,000,000, 1.2E-05: a tick by the number rule (four significant digits at most:
    ticks are round), never 2⁰ or 1e3."""
    return significant(float(v), 4)


def _draw_marks(axes, panels: Sequence[str], marks: Sequence[Mark]) -> list:
    """The marks on the panels; returns the labels written beside the vertical lines (see :func:`_keep_in`)."""
    colours = {"current": "0.45", "line": "tab:red", "point": "tab:red"}
    labels = []
    for k, m in enumerate(marks):
        if m.kind == "point":
            at = [i for i, p in enumerate(panels) if m.panel == p or (isinstance(p, tuple) and m.panel in p)]
            if at:
                ax = axes[at[0]]
                ax.plot([m.x], [m.y], marker="*", markersize=11, color=colours["point"], zorder=5,
                        linestyle="none", label=m.label)
                ax.annotate(m.label, (m.x, m.y), textcoords="offset points", xytext=(-8, -13), ha="right", fontsize=7,
                            color=colours["point"])
            continue
        for i, ax in enumerate(axes):
            ax.axvline(m.x, color=colours[m.kind], linewidth=1, linestyle=":" if m.kind == "current" else "--",
                       zorder=1)
        labels.append(axes[0].annotate(m.label, (m.x, 1.0), xycoords=("data", "axes fraction"),
                                       textcoords="offset points", xytext=(3, -10 - 9 * (k % 3)), fontsize=7,
                                       color=colours[m.kind]))
    return labels


def _keep_in(ax, labels) -> None:
    """A line's label in the right part of the panel is written to the left of its line, so that it
    is not cut at the figure's edge (once the x axis has its limits and scale)."""
    lo, hi = ax.get_xlim()
    for text in labels:
        at = ax.transAxes.inverted().transform(ax.transData.transform((text.xy[0], 0)))[0]
        if at > 0.6 or not lo <= text.xy[0] <= hi:
            dx, dy = text.xyann
            text.xyann = (-abs(dx), dy)
            text.set_horizontalalignment("right")


def _lines(result, others) -> list[tuple[str, np.ndarray]]:
    """(legend label, point mask) per combination of the non-x axes."""
    if not others:
        return [("", np.ones(result.size, dtype=bool))]
    values = [np.unique(result.display(a.name)) for a in others]
    out = []
    for combo in itertools.islice(itertools.product(*values), MAX_LINES):
        mask = np.ones(result.size, dtype=bool)
        for a, v in zip(others, combo):
            mask &= result.display(a.name) == v
        label = ", ".join(f"{a.name} = {significant(float(v))}" for a, v in zip(others, combo))
        out.append((label, mask))
    return out


@_kept
def distribution_png(data) -> bytes:
    """A histogram of one figure's trials (a :class:`planner.outputs.uncertainty.PlotData`): one
    outline per scenario that moves it, its bars as shares of every trial (a ``first(...)``'s trials
    that find nothing are no bar), the value as written a solid line in the outline's colour (and in
    the legend below), the 5th and 95th percentiles dotted when there is one outline."""
    from matplotlib.ticker import FuncFormatter

    unit = f" ({data.unit})" if data.unit else ""
    with _figure(2.8 + 0.2 * ((len(data.series) + 1) // 2 if len(data.series) > 1 else 0), 9) as fig:
        ax = fig.subplots()
        every = np.concatenate([s[1] for s in data.series]) if data.series else np.zeros(0)
        finite = every[np.isfinite(every)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if finite.size and hi - lo <= 100 and np.all(finite == np.round(finite)):  # whole numbers: a bar each
            bins = np.arange(lo - 0.5, hi + 1.5)
        else:
            bins = np.linspace(lo, hi if hi > lo else lo + 1.0, 51)
        for k, (label, values, point) in enumerate(data.series):
            colour = f"C{k % 10}"
            v = values[np.isfinite(values)]
            shown = data.written[k] if k < len(data.written) else _plain_tick(point)
            written = f"as written {shown}" if math.isfinite(point) else "as written: never"
            ax.hist(v, bins=bins, histtype="step", linewidth=1.3, color=colour,
                    weights=np.full(len(v), 100.0 / max(1, len(values))),
                    label=f"{label} ({written})" if label else None)
            if math.isfinite(point):
                ax.axvline(point, color=colour, linewidth=1.4, zorder=3)
                if not label:
                    ax.annotate(written, (point, 1.0), xycoords=("data", "axes fraction"),
                                textcoords="offset points", xytext=(3, -10), fontsize=7, color=colour)
            if len(data.series) == 1 and v.size:
                p5, p95 = np.percentile(v, [5, 95])
                for x, name in ((p5, "P5"), (p95, "P95")):
                    ax.axvline(x, color="0.45", linewidth=1, linestyle=":", zorder=2)
                    ax.annotate(name, (x, 0.0), xycoords=("data", "axes fraction"), textcoords="offset points",
                                xytext=(3, 3), fontsize=7, color="0.35")
        ax.set_xlabel(f"{data.name}{unit}")
        ax.set_ylabel("share of trials (%)")
        ax.xaxis.set_major_formatter(FuncFormatter(_plain_tick))
        ax.grid(True, linewidth=0.4, alpha=0.6)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.15)  # room for the labels above the tallest bar
        if len(data.series) > 1:
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2, frameon=False)
        fig.suptitle(_words(data.title), fontsize=10)
        fig.tight_layout()
        return _png(fig)


@_kept
def rank_tornado_png(figures: Sequence[tuple[str, Sequence[tuple[str, float]]]]) -> bytes:
    """A tornado per figure: ``(title, [(input, rank correlation), ...])``, largest first, a
    horizontal bar each (right for a figure that rises with the input, left for one that falls)."""
    heights = [0.55 + 0.28 * max(1, len(rows)) for _, rows in figures] or [1.0]
    with _figure(0.7 + sum(heights), 9) as fig:
        axes = fig.subplots(max(1, len(figures)), 1, squeeze=False, sharex=True,
                            gridspec_kw={"height_ratios": heights})[:, 0]
        for ax, (title, rows) in zip(axes, figures):
            names = [n for n, _ in rows][::-1]
            rhos = [r for _, r in rows][::-1]
            ax.barh(range(len(rows)), rhos, color=["tab:blue" if r >= 0 else "tab:red" for r in rhos], height=0.6)
            ax.set_yticks(range(len(rows)), names, fontsize=8)
            for y, r in enumerate(rhos):
                ax.annotate(_two(r), (r, y), textcoords="offset points", xytext=(4 if r >= 0 else -4, -3),
                            ha="left" if r >= 0 else "right", fontsize=7)
            ax.axvline(0, color="0.3", linewidth=0.8)
            ax.set_xlim(-1.35, 1.35)  # a +1.00 label fits right of its bar
            ax.set_title(_words(title), fontsize=9, loc="left")
            ax.grid(True, axis="x", linewidth=0.4, alpha=0.6)
        axes[-1].set_xlabel("rank correlation with the figure (Spearman)")
        fig.suptitle("What moves each figure over the trials", fontsize=10)
        fig.tight_layout()
        return _png(fig)


@_kept
def tornado_png(bars: Sequence[tuple[str, Sequence[tuple[str, float, float]]]]) -> bytes:
    """One tornado chart of what moves the headline figures: for each figure (``label``) its top
    movers (``input``, lowest and highest elasticity over the scenarios), a horizontal bar from 0
    (the range between them hatched where the scenarios differ), figures one under another."""
    rows: list[tuple[float, str, float, float]] = []  # (y, input, low, high)
    groups: list[tuple[float, str]] = []
    y = 0.0
    for label, movers in bars:
        groups.append((y, label))
        for name, low, high in movers:
            rows.append((y, name, low, high))
            y += 1
        y += 0.8  # a gap between figures
    with _figure(0.9 + 0.28 * y, 8) as fig:
        ax = fig.subplots()
        for yy, name, low, high in rows:
            same = _two(low) == _two(high)
            end = high if abs(high) >= abs(low) else low
            ax.barh(yy, end, height=0.7, color="tab:blue" if end >= 0 else "tab:orange")
            if not same:
                ax.barh(yy, high - low, left=low, height=0.7, fill=False, hatch="////", edgecolor="0.3", linewidth=0)
            ax.annotate(_two(high) if same else f"{_two(low)} to {_two(high)}",
                        (max(high, 0.0), yy), textcoords="offset points", xytext=(4, -3), fontsize=7)
        ax.set_yticks([r[0] for r in rows], [r[1] for r in rows])
        ax.set_ylim(y - 1.25, -1.1)  # top down, room above the first figure's title
        ax.axvline(0, color="0.2", linewidth=0.8)
        for top, label in groups:
            ax.annotate(_words(label), (0, top - 0.55), xycoords=("axes fraction", "data"), fontsize=8,
                        weight="bold", annotation_clip=False, zorder=4,  # over the zero line and the grid
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})
        lo = min([0.0] + [r[2] for r in rows])
        hi = max([0.0] + [r[3] for r in rows])
        pad = 0.3 * max(hi - lo, 1e-9)  # room for the widest label right of its bar
        ax.set_xlim(lo - (pad if lo < 0 else 0), hi + pad)
        ax.set_xlabel("% change of the figure per 1% change of the input (elasticity)")
        ax.grid(True, axis="x", linewidth=0.4, alpha=0.6)
        fig.suptitle("What moves the headline figures", fontsize=10)
        # fixed margins (tight_layout measures every label: a third of the time), the left one as wide as
        # the longest input's name at 8 points (about 0.075 inch a letter)
        longest = max([len(r[1]) for r in rows] + [8])
        _margins(fig, left=0.25 + 0.075 * longest, right=0.2, top=0.45, bottom=0.45)
        return _png(fig)


@_kept
def series_png(data) -> bytes:
    """A series over the periods (a :class:`planner.outputs.periods.LinePlot`): one line per scenario
    (the plan as written among them), the period each ``first(...)`` found marked with a dot and its
    words on the line it belongs to, zero drawn when the values cross it."""
    legend = len(data.lines) > 1
    with _figure(3.0 + (0.2 * ((len(data.lines) + 2) // 3) if legend else 0), 9) as fig:
        ax = fig.subplots()
        for k, (label, x, y) in enumerate(data.lines):
            same = label.endswith(")") and " (same as " in label  # drawn over an earlier line: dashed, so both show
            ax.plot(x, y, color=f"C{k % 10}", linewidth=1.5, label=label or None,
                    linestyle=(0, (4, 4)) if same else ("-", "--", "-.", ":")[(k // 10) % 4])
        every = np.concatenate([y for _, _, y in data.lines]) if data.lines else np.zeros(0)
        finite = every[np.isfinite(every)]
        if finite.size and finite.min() < 0 < finite.max():
            ax.axhline(0, color="0.2", linewidth=0.8, zorder=1)
        texts, said = [], set()
        # a dot on its line and a dotted line up to its words, once per period, staggered left to right
        for i, x0, text in sorted(data.marks, key=lambda m: (m[1], m[0])):
            _, x, y = data.lines[i]
            at = np.nonzero(np.isclose(x, x0))[0]
            if not at.size:
                continue
            colour = f"C{i % 10}"
            ax.plot([x0], [float(y[at[0]])], marker="o", markersize=5, color=colour, zorder=5, markeredgecolor="white")
            if x0 in said:
                continue
            said.add(x0)
            ax.axvline(x0, color=colour, linewidth=0.9, linestyle=":", zorder=1)
            texts.append(ax.annotate(text, (x0, 1.0), xycoords=("data", "axes fraction"), textcoords="offset points",
                                     xytext=(3, -10 - 9 * (len(texts) % 3)), fontsize=7, color=colour))
        if texts:  # room above the lines for the marks' words
            lo, hi = ax.get_ylim()
            ax.set_ylim(lo, hi + (hi - lo) * (0.08 + 0.07 * min(3, len(texts))))
        _over_periods(ax, data)
        if legend:
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
        ax.set_title(_words(data.title), fontsize=10)
        fig.tight_layout()
        _keep_in(ax, texts)
        return _png(fig)


def _over_periods(ax, data) -> None:
    """A chart over the periods (a series' lines, its fan): the period unit and the figure's name and unit
    as labels, ticks on whole periods, plain numbers on both axes, a light grid."""
    from matplotlib.ticker import FuncFormatter

    ax.set_xlabel(data.period_unit)
    ax.set_ylabel(f"{data.name} ({data.unit})" if data.unit else data.name)
    ax.xaxis.set_major_locator(_period_ticks(data))
    ax.xaxis.set_major_formatter(FuncFormatter(_plain_tick))
    ax.yaxis.set_major_formatter(FuncFormatter(_plain_tick))
    ax.grid(True, linewidth=0.4, alpha=0.6)


def _period_ticks(data):
    """Ticks on whole periods: for months every quarter, half year or year (1 to 60 months: 12, 24...)."""
    from matplotlib.ticker import MaxNLocator, MultipleLocator

    xs = [x for line in getattr(data, "lines", ()) or getattr(data, "fans", ()) for x in (line[1][0], line[1][-1])]
    span = (max(xs) - min(xs)) if xs else 0
    if data.period_unit == "month" and span > 6:
        return MultipleLocator(12 if span > 36 else 6 if span > 18 else 3)
    return MaxNLocator(integer=True)


@_kept
def fan_png(data) -> bytes:
    """A series' fan over the periods (a :class:`planner.outputs.periods.FanPlot`): per scenario the
    median of the trials, a band from the 25th to the 75th percentile and a lighter one from the 5th
    to the 95th, and the plan as written dotted; the legend names the bands for one fan, the
    scenarios for several (the report's sentence says what the bands are)."""
    with _figure(3.4, 9) as fig:
        ax = fig.subplots()
        one = len(data.fans) == 1  # one fan: a legend entry per band; several: one per scenario (its median)
        for k, (label, x, f, point) in enumerate(data.fans):
            colour = f"C{(data.colours[k] if data.colours else k) % 10}"  # the scenario's colour on its line chart
            ax.fill_between(x, f["p5"], f["p95"], color=colour, alpha=0.15, linewidth=0,
                            label="5th to 95th percentile" if one else None)
            ax.fill_between(x, f["p25"], f["p75"], color=colour, alpha=0.3, linewidth=0,
                            label="25th to 75th percentile" if one else None)
            ax.plot(x, f["p50"], color=colour, linewidth=1.5, label="median" if one else f"{label} (median)")
            ax.plot(x, point, color=colour, linewidth=1, linestyle=":", label="as written" if one else None)
        lo = min(float(np.nanmin(f["p5"])) for _, _, f, _ in data.fans)
        hi = max(float(np.nanmax(f["p95"])) for _, _, f, _ in data.fans)
        if lo < 0 < hi:
            ax.axhline(0, color="0.2", linewidth=0.8, zorder=1)
        _over_periods(ax, data)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2 if one else 3, frameon=False)
        ax.set_title(_words(data.title), fontsize=10)
        fig.tight_layout()
        return _png(fig)


@_kept
def waterfall_png(title: str, old: float, steps: Sequence[tuple[str, float]], new: float) -> bytes:
    """A waterfall (``planner diff``): the old figure, each step's effect as a bar from the running
    total (rises blue, falls orange), the new figure."""
    labels = ["old"] + [k for k, _ in steps] + ["new"]
    bottoms, heights, colors = [0.0], [old], ["0.55"]
    level = old
    for _, e in steps:
        bottoms.append(level if e >= 0 else level + e)
        heights.append(abs(e))
        colors.append("tab:blue" if e >= 0 else "tab:orange")
        level += e
    bottoms.append(0.0)
    heights.append(new)
    colors.append("0.55")
    with _figure(3.6, 8) as fig:
        ax = fig.subplots()
        x = list(range(len(labels)))
        ax.bar(x, heights, bottom=bottoms, color=colors, width=0.6)
        texts = [significant(old, 4)] + [_signed(e) for _, e in steps] + [significant(new, 4)]
        for i, t in enumerate(texts):
            ax.annotate(t, (i, max(bottoms[i], bottoms[i] + heights[i])), textcoords="offset points", xytext=(0, 2),
                        ha="center", fontsize=7)
        ax.set_xticks(x, [_words(t) for t in labels], rotation=20, ha="right")
        ax.axhline(0, color="0.2", linewidth=0.8)
        ax.grid(True, axis="y", linewidth=0.4, alpha=0.6)
        ax.set_title(_words(title), fontsize=10)
        _margins(fig, left=0.7, right=0.2, top=0.4, bottom=0.9)
        return _png(fig)


def _signed(v: float) -> str:
    """A change by the number rule with its sign: ``+1,250``, ``-0.5``."""
    text = significant(v + 0.0, 4)
    return text if text.startswith("-") else "+" + text


def _two(v: float) -> str:
    """An elasticity or correlation to two decimals, signed, never -0.00."""
    return f"{round(v, 2) + 0.0:+.2f}"


def _words(text: str) -> str:
    """A title or label in words: the report's code marks (backticks) dropped."""
    return text.replace("`", "")


def _margins(fig, left: float, right: float, top: float, bottom: float, between: float = 0.3) -> None:
    """The axes' margins, and the gap ``between`` panels stacked on a shared x axis, in inches."""
    width, height = fig.get_size_inches()
    fig.subplots_adjust(left=min(left / width, 0.5), right=1 - right / width, top=1 - top / height,
                        bottom=bottom / height)
    panels = len(fig.axes)
    if panels > 1:  # hspace is a fraction of the mean panel height
        room = height * (fig.subplotpars.top - fig.subplotpars.bottom)
        fig.subplots_adjust(hspace=between / max((room - between * (panels - 1)) / panels, 0.1))


PNG_COMPRESSION = 3  # zlib level: a third faster to write than PIL's default 6, files about 8% larger


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None}, pil_kwargs={"compress_level": PNG_COMPRESSION})
    return buf.getvalue()
