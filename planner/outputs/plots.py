"""One PNG per sweep, next to the report (optional: the ``plot`` extra, matplotlib).

The only home of matplotlib. Plots are deterministic: no pyplot and no
global backend (a :class:`~matplotlib.figure.Figure` drawn by the Agg
canvas), matplotlib's default style whatever the user's matplotlibrc says,
a fixed ``svg.hashsalt``, and no ``Software``/date metadata in the PNG; the
same plan gives the same bytes with the same matplotlib.

Layout: one panel per shown numeric quantity (stacked, sharing the x axis),
x the sweep's longest axis (log scale for a ``times`` range), one line per
scenario and per value of the other axes (at most ``MAX_LINES``). Points
with issues are gaps, never values.
"""

from __future__ import annotations

import io
import itertools
import textwrap
from typing import Optional, Sequence

import numpy as np

MAX_LINES = 12  # lines per panel; grids with more combinations are plotted for the first ones
MAX_PANELS = 6


def available() -> Optional[str]:
    """None when plots can be drawn, else the reason they cannot."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed (pip install 'planner-units[plot]')"
    return None


def _label(plan, name: str) -> str:
    unit = plan.model.quantities[name].unit_text
    return f"{name} ({unit})" if unit else name


def sweep_png(results: Sequence, title: str) -> bytes:
    """The PNG of one sweep statement (its results, one per scenario)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    first = results[0]
    plan = first.plan
    x_axis = max(first.axes, key=lambda a: a.count)  # the longest axis across, the others as lines
    others = [a for a in first.axes if a is not x_axis]
    panels = [n for n in first.show
              if n not in {a.name for a in first.axes} and not plan.model.quantities[n].is_bool][:MAX_PANELS]
    style = dict(matplotlib.rcParamsDefault)
    style.update({"svg.hashsalt": "planner", "path.simplify": False, "font.size": 9})
    with matplotlib.rc_context(style):
        fig = Figure(figsize=(6.4, 1.2 + 2.2 * max(1, len(panels))), dpi=100)
        FigureCanvasAgg(fig)
        axes = fig.subplots(max(1, len(panels)), 1, sharex=True, squeeze=False)[:, 0]
        combos = int(np.prod([a.count for a in others])) if others else 1
        marker = "o" if x_axis.count <= 50 else None
        for ax, name in zip(axes, panels):
            for r in results:
                for label, mask in _lines(r, others):
                    x = r.display(x_axis.name)[mask]
                    y = np.where(r.bad[mask], np.nan, r.display(name)[mask].astype(float))
                    parts = [p for p in (r.label if len(results) > 1 else "", label) if p]
                    ax.plot(x, y, marker=marker, markersize=3, linewidth=1.2, label=", ".join(parts) or None)
            ax.set_ylabel(_label(plan, name))
            ax.grid(True, linewidth=0.4, alpha=0.6)
            if len(results) > 1 or others:
                ax.legend(fontsize=7, loc="best")
        if not panels:
            axes[0].text(0.5, 0.5, "no numeric quantity to plot", ha="center", va="center")
        if x_axis.kind == "times":
            axes[-1].set_xscale("log", base=float(x_axis.factor) if x_axis.factor > 1 else 10)
        axes[-1].set_xlabel(_label(plan, x_axis.name))
        if combos > MAX_LINES:
            title += f"\n(lines for the first {MAX_LINES} of {combos:,} combinations of " \
                     + ", ".join(a.name for a in others) + ")"
        fig.suptitle("\n".join(textwrap.wrap(title, 90)) if "\n" not in title else title, fontsize=9)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


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
        label = ", ".join(f"{a.name} = {float(v):g}" for a, v in zip(others, combo))
        out.append((label, mask))
    return out
