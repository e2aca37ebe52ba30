"""``planner sweep --dask``'s output: per sweep and scenario, a table of each shown quantity's figures
over the grid (points, mean, sd, min, max, percentiles; display units), the share of points where
each condition holds, and how many points were left out; or the same as JSON, CSV or Markdown."""

from __future__ import annotations

from typing import Optional, Sequence

from ..compute.evaluation import format_value
from ..compute.numbers import share as share_text
from ..questions.chunked import ChunkedSweep
from ..questions.simulate import _pct_text as _pct  # a percentile's key: p5, p99_9, as the figures have it
from .terminal import csv_rows, dumps, fit, json_number, markdown_table


def _keys(percentiles: Sequence[float]) -> list[str]:
    return ["points", "mean", "sd", "min", "max"] + [f"p{_pct(p)}" for p in percentiles]


def _headers(percentiles: Sequence[float]) -> list[str]:
    return ["quantity", "points", "mean", "sd", "min", "max"] + [f"p{p:g}" for p in percentiles] + ["unit"]


def _align(r: ChunkedSweep) -> list[str]:
    return ["left"] + ["right"] * (len(_headers(r.percentiles)) - 2) + ["left"]


def _header(r: ChunkedSweep) -> str:
    grid = " x ".join(f"{p.count:,} {p.name}" for p in r.axes)
    return f"[{r.label}] sweep of {grid} = {r.size:,} points, in {r.blocks:,} chunks"


def _rows(r: ChunkedSweep):
    rows = []
    for name, s in r.stats.items():
        q = r.plan.model.quantities[name]
        rows.append([name, f"{s['points']:,}"] + [format_value(s[k], "", 6) for k in _keys(r.percentiles)[1:]]
                    + ["share true" if q.is_bool else q.unit_text])
    return rows


def _lines(r: ChunkedSweep) -> list[str]:
    out = []
    if r.left_out:
        out.append(f"{r.left_out:,} of {r.size:,} points left out: a constraint does not hold there, an integer "
                   "input is swept to a fraction, or a shown quantity has no finite value (run without --dask to "
                   "see which)")
    for text, share in r.probabilities:
        out.append(f"P({text}) = {share_text(share)} of the {r.size - r.left_out:,} points")
    return out


class SweepSummaryView:
    """`planner sweep --dask`: each sweep's figures over its whole grid, rendering itself in every format
    the command offers (as :mod:`planner.outputs.views`' views do)."""

    def __init__(self, results: Sequence[ChunkedSweep]) -> None:
        self.results = results

    def table(self, width: Optional[int] = None) -> str:
        parts = []
        for r in self.results:
            body = fit(_rows(r), _headers(r.percentiles), _align(r), width, keep=1)
            parts.append("\n".join([_header(r), body] + _lines(r)))
        return "\n\n".join(parts)

    def markdown(self) -> str:
        parts = []
        for r in self.results:
            body = markdown_table(_rows(r), _headers(r.percentiles), _align(r))
            parts.append("\n".join([f"## {_header(r)}", "", body] + ["\n" + line for line in _lines(r)]))
        return "\n\n".join(parts)

    def json(self) -> str:
        results = self.results
        return dumps({
            "format": "planner.sweep-summary/1",
            "file": results[0].plan.path if results else None,
            "sweeps": [{
                "scenario": r.label,
                "axes": [{"name": p.name, "points": p.count, "unit": p.unit} for p in r.axes],
                "points": r.size,
                "left_out": r.left_out,
                "chunks": r.blocks,
                "quantities": {n: {"unit": r.plan.model.quantities[n].unit_text,
                                   **{k: json_number(s[k]) for k in _keys(r.percentiles)}} for n, s in r.stats.items()},
                "probabilities": {text: json_number(share) for text, share in r.probabilities},
            } for r in results],
        })

    def csv(self) -> str:
        keys = _keys(self.results[0].percentiles) if self.results else _keys(())
        rows = []
        for r in self.results:
            for n, s in r.stats.items():
                rows.append([r.label, n, r.plan.model.quantities[n].unit_text] + [s[k] for k in keys])
        return csv_rows(["scenario", "quantity", "unit"] + keys, rows)
