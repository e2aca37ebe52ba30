"""Sweeps written as they are computed: block by block, in bounded memory.

``planner sweep`` evaluates a sweep's points :data:`BLOCK` at a time
(:meth:`planner.questions.sweep.SweepRun.block`) and writes each block before
computing the next, in every format:

* ``csv``: a row per point (the sweep, the scenario, the axes and shown quantities in their display
  units, the point's issues), one header per block of same-shaped sweeps;
* ``jsonl``: one JSON object per point (``sweep``, ``scenario``, the axes and
  shown quantities by name in their display units, ``issues`` when there are);
* ``json``: the ``planner.sweep/1`` document (per sweep and scenario its axes,
  shown quantities, points and issues), its ``points`` written as they come;
* ``table`` and ``markdown``: :func:`planner.outputs.terminal.sweep_table`'s
  and :func:`~planner.outputs.terminal.sweep_markdown`'s layouts; sweeps of up
  to :data:`TABLE_IN_MEMORY` points go through them (fitted to the terminal),
  bigger ones are laid out in two passes (column widths, then rows).

``limit`` keeps the first points of each sweep (``--limit N``: the others
are not computed). A :class:`planner.outputs.progress.Progress` counts the
points written.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Iterator, Optional, Sequence, TextIO

import numpy as np

from ..language import speed
from .terminal import SWEEP_FORMAT, column_header, markdown_cell, plain, sweep_markdown, sweep_table, sweep_title

BLOCK = 16384  # points evaluated and written at a time (a few MB of text)
TABLE_IN_MEMORY = 20_000  # bigger tables are laid out in two passes


def shown(run, limit: Optional[int]) -> int:
    """How many points of ``run`` are written."""
    return run.size if limit is None else min(run.size, limit)


def blocks(run, limit: Optional[int] = None, size: Optional[int] = None) -> Iterator:
    """The evaluated blocks of a prepared sweep, in order."""
    size = size or BLOCK
    n = shown(run, limit)
    for start in range(0, n, size):
        yield run.block(start, min(n, start + size))


def write(runs: Sequence, fmt: str, out: TextIO, limit: Optional[int] = None, progress=None,
          width: Optional[int] = None) -> "Totals":
    """Every sweep of ``runs`` in ``fmt`` on ``out``; the totals (points, issues) for a summary.
    ``width``: the terminal's, which tables fit (:func:`planner.outputs.terminal.fit`)."""
    totals = Totals()
    if fmt in ("table", "markdown"):
        _table(runs, out, limit, progress, totals, width, markdown=fmt == "markdown")
    else:
        runs = list(runs)
        with _Texts(runs, limit) as texts_of:
            {"csv": _csv, "jsonl": _jsonl, "json": _json}[fmt](runs, out, limit, progress, totals, texts_of)
    return totals


class Totals:
    def __init__(self) -> None:
        self.points = 0
        self.left_out: list[tuple[object, int]] = []  # (run, points not written because of --limit)

    def count(self, run, limit: Optional[int]) -> None:
        if shown(run, limit) < run.size:
            self.left_out.append((run, run.size - shown(run, limit)))


def _advance(progress, n: int) -> None:
    if progress is not None:
        progress.advance(n)


def _label(run) -> str:
    return sweep_title(run).rsplit("  [", 1)[0]


def _names(run) -> list[str]:
    axes = [a.name for a in run.axes]
    return axes + [n for n in run.show if n not in set(axes)]


def _display_arrays(result, names: Sequence[str]) -> list:
    """Each column in display units: float64 values (an array) or bools (a list)."""
    out = []
    for n in names:
        col = result.display(n)
        if col.dtype == bool:
            out.append([bool(v) for v in col.tolist()])
        else:
            out.append(np.asarray(col, dtype=np.float64))
    return out


def _display_columns(result, names: Sequence[str]) -> list[list]:
    """Each column as Python values in display units: floats (``repr`` is their text) or bools."""
    return [c if isinstance(c, list) else c.tolist() for c in _display_arrays(result, names)]


def _texts(col: list) -> list[str]:
    """A column's values as text: ``repr`` of each float (the shortest that reads back the same
    float, as before), ``true``/``false``."""
    if col and isinstance(col[0], bool):
        return ["true" if v else "false" for v in col]
    return list(map(repr, col))


PARALLEL_AFTER = 100_000  # points of a sweep from which a second process formats half of its floats


class _Texts:
    """The text of each block's columns (:func:`_texts`), for the points of ``runs``.

    Writing a big sweep is mostly Python's ``repr`` of its floats (three quarters of a
    1,000,000-point CSV), on one core. With a second core and a sweep of at least
    :data:`PARALLEL_AFTER` points, a second process (:class:`planner.outputs.reprs.Worker`, started
    the first time it is needed) formats the first half of each block's rows while this one formats
    the rest: the same text, as the worker is this same Python, given the same float64 values. If
    the worker cannot start or fails, the rest is formatted here. Use as a context manager: the
    worker is stopped at the end."""

    def __init__(self, runs: Sequence, limit: Optional[int]) -> None:
        self.parallel = max((shown(run, limit) for run in runs), default=0) >= PARALLEL_AFTER and _cores() >= 2 \
            and speed.on("worker")  # (off: this process formats every float; planner.language.speed)
        self.worker = None

    def __enter__(self) -> "_Texts":
        return self

    def __exit__(self, *exc) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def __call__(self, result, names: Sequence[str]) -> list[list[str]]:
        cols = _display_arrays(result, names)
        floats = [j for j, c in enumerate(cols) if not isinstance(c, list)]
        half = result.size // 2
        if not (self.parallel and floats and half):
            return [_texts(c if isinstance(c, list) else c.tolist()) for c in cols]
        try:
            if self.worker is None:
                from .reprs import Worker

                self.worker = Worker()
            self.worker.send([cols[j][:half].tobytes() for j in floats])
        except OSError:  # no second process here: this one formats everything
            self._stop()
            return self(result, names)
        out = [_texts(c if isinstance(c, list) else c[half:].tolist()) for c in cols]
        try:
            firsts = [text.split("\n") for text in self.worker.receive()]
        except OSError:  # the worker failed: its half is formatted here
            self._stop()
            firsts = [_texts(cols[j][:half].tolist()) for j in floats]
        for j, first in zip(floats, firsts):
            out[j] = first + out[j]
        return out

    def _stop(self) -> None:
        self.parallel = False
        self.__exit__()


def _cores() -> int:
    """The processors this process may run on."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# ---- CSV ---------------------------------------------------------------------------------------

def _csv_line(fields: Sequence[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue()


def _csv(runs, out: TextIO, limit, progress, totals: Totals, texts_of: "_Texts") -> None:
    header = None
    for run in runs:
        names = _names(run)
        if names != header:  # one header per block of same-shaped sweeps (scenarios stack)
            if header is not None:
                out.write("\n")
            out.write(_csv_line(["sweep", "scenario"] + [column_header(run.plan, n) for n in names] + ["issue"]))
            header = names
        prefix = _csv_line([_label(run), run.label, "x"])[:-2]  # the quoted label and scenario, then a comma
        for result in blocks(run, limit):
            cols = [result.with_never(n, c) for n, c in zip(names, texts_of(result, names))]
            notes = result.notes()
            if not notes:
                out.write(prefix + (",\n" + prefix).join(map(",".join, zip(*cols))) + ",\n")
            else:
                lines = [prefix + ",".join(row) + ",\n" for row in zip(*cols)]
                for i, texts in notes.items():
                    lines[i] = _csv_line([_label(run), run.label] + [c[i] for c in cols] + ["; ".join(texts)])
                out.write("".join(lines))
            totals.points += result.size
            _advance(progress, result.size)
        totals.count(run, limit)


# ---- JSON lines -------------------------------------------------------------------------------------

def _json_texts(texts: list[str]) -> list[str]:
    """A column's :func:`_texts` as JSON: what is not finite is ``null``, as json_number gives."""
    if texts and texts[0] not in ("true", "false"):
        for i, t in enumerate(texts):
            if t[-1] in "nf" and t in ("nan", "inf", "-inf"):
                texts[i] = "null"
    return texts


def _jsonl(runs, out: TextIO, limit, progress, totals: Totals, texts_of: "_Texts") -> None:
    for run in runs:
        names = _names(run)
        head = "{" + f'"sweep": {_dumps(_label(run))}, "scenario": {_dumps(run.label)}'
        keys = [f", {_dumps(n)}: " for n in names]  # (names and labels are one-line strings)
        for result in blocks(run, limit):
            cols = [result.with_never(n, _json_texts(c), '"never"') for n, c in zip(names, texts_of(result, names))]
            notes = result.notes()
            lines = []
            for i, row in enumerate(zip(*cols)):
                line = head + "".join(k + v for k, v in zip(keys, row))
                if i in notes:
                    line += ', "issues": ' + json.dumps(notes[i], ensure_ascii=False)
                lines.append(line + "}\n")
            out.write("".join(lines))
            totals.points += result.size
            _advance(progress, result.size)
        totals.count(run, limit)


# ---- JSON: planner.sweep/1, streamed ----------------------------------------------------------------

def _dumps(value, level: int = 0) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    return text.replace("\n", "\n" + "  " * level) if level else text


def _json(runs, out: TextIO, limit, progress, totals: Totals, texts_of: "_Texts") -> None:
    """The ``planner.sweep/1`` document, indented as :func:`.terminal.dumps` writes it, piece by piece."""
    file = runs[0].plan.path if runs else None
    out.write("{\n" + f'  "format": {_dumps(SWEEP_FORMAT)},\n  "file": {_dumps(file)},\n  "sweeps": ')
    if not runs:
        out.write("[]\n}\n")
        return
    out.write("[\n")
    for k, run in enumerate(runs):
        names = _names(run)
        plan = run.plan
        head = {
            "sweep": _label(run),
            "line": run.statement.span.line if run.statement is not None else None,
            "scenario": run.label,
            "axes": [{"name": a.name, "unit": a.unit, "count": a.count} for a in run.axes],
            "show": [{"name": n, "unit": plan.model.quantities[n].unit_text} for n in run.show],
        }
        out.write("    {\n" + "".join(f"      {_dumps(key)}: {_dumps(v, 3)},\n" for key, v in head.items()))
        out.write('      "points": ')
        keys = [f"          {_dumps(n)}: " for n in names]
        issues: list = []
        issue_count = bad = written = 0
        for result in blocks(run, limit):
            cols = [result.with_never(n, _json_texts(c), '"never"') for n, c in zip(names, texts_of(result, names))]
            text = ",\n".join("        {\n" + ",\n".join(key + v for key, v in zip(keys, row)) + "\n        }"
                              for row in zip(*cols))
            out.write(("[\n" if written == 0 else ",\n") + text)
            written += result.size
            issues += result.issues
            issue_count += result.issue_count
            bad += int(result.bad.sum())
            totals.points += result.size
            _advance(progress, result.size)
        out.write("\n      ],\n" if written else "[],\n")
        tail = {
            "issues": [{"index": s.index, "point": s.point, "quantity": s.quantity, "kind": s.kind,
                        "reason": s.reason} for s in issues],
            "issue_count": issue_count,
            "points_with_issues": bad,
        }
        if shown(run, limit) < run.size:
            tail["limit"] = limit
            tail["points_total"] = run.size
        out.write(",\n".join(f"      {_dumps(key)}: {_dumps(v, 3)}" for key, v in tail.items()))
        out.write("\n    }" + (",\n" if k + 1 < len(runs) else "\n"))
        totals.count(run, limit)
    out.write("  ]\n}\n")


# ---- table ------------------------------------------------------------------------------------------

def _table(runs, out: TextIO, limit, progress, totals: Totals, width: Optional[int] = None,
           markdown: bool = False) -> None:
    for k, run in enumerate(runs):
        if k:
            out.write("\n\n")
        n = shown(run, limit)
        if n <= TABLE_IN_MEMORY:
            result = run.block(0, n)
            text = sweep_markdown(result) if markdown else sweep_table(result, width)
            if n < run.size:
                text = text.replace(f" of {n:,} points have issues", f" of the first {n:,} points have issues")
            out.write(text)
            totals.points += n
            _advance(progress, n)
        else:
            _big_table(run, out, limit, progress, totals, markdown)
        if n < run.size:
            out.write(f"\nfirst {n:,} of {run.size:,} points (--limit {limit})")
        totals.count(run, limit)
    out.write("\n")


def _big_table(run, out: TextIO, limit, progress, totals: Totals, markdown: bool = False) -> None:
    """:func:`planner.outputs.terminal.sweep_table`'s layout at any width (tabulate's "simple":
    right-aligned numbers, two spaces between columns, a column as wide as its widest value or its
    header plus two), or :func:`~planner.outputs.terminal.sweep_markdown`'s (tabulate's "github"), in
    two passes: the column widths, then the rows. Too many rows to fit a terminal anyway."""
    names = _names(run)
    headers = [column_header(run.plan, n) for n in names]
    if markdown:
        headers = [markdown_cell(h) for h in headers]
    widths = [len(h) + 2 for h in headers]
    note_width = 0
    any_notes = False
    for result in blocks(run, limit):  # pass 1: widths
        for j, col in enumerate(_display_columns(result, names)):
            widths[j] = max(widths[j], max((len(plain(v)) for v in col), default=0))
        notes = result.notes()
        if notes:
            any_notes = True
            note_width = max(note_width, max(len(markdown_cell("; ".join(t)) if markdown else "; ".join(t))
                                             for t in notes.values()))
    if any_notes:
        note_width = max(note_width, len("notes") + 2)
    run.diagnosed = 0  # the same points explained again in the second pass
    if markdown:
        cells = [h.rjust(w) for h, w in zip(headers, widths)] + (["notes".ljust(note_width)] if any_notes else [])
        rule = ["-" * (w + 2) for w in widths] + (["-" * (note_width + 2)] if any_notes else [])
        out.write(f"**{sweep_title(run)}**\n\n| " + " | ".join(cells) + " |\n|" + "|".join(rule) + "|\n")
    else:
        head = "  ".join(h.rjust(w) for h, w in zip(headers, widths))
        rule = "  ".join("-" * w for w in widths)
        if any_notes:
            head += "  " + "notes".ljust(note_width)
            rule += "  " + "-" * note_width
        out.write(sweep_title(run) + "\n" + head.rstrip() + "\n" + rule + "\n")
    issue_count = bad = 0
    kinds: set = set()
    first = True
    for result in blocks(run, limit):  # pass 2: rows
        notes = result.notes()
        cols = _display_columns(result, names)
        lines = []
        for i, row in enumerate(zip(*cols)):
            values = [plain(v).rjust(w) for v, w in zip(row, widths)]
            if markdown:
                if any_notes:
                    values.append(markdown_cell("; ".join(notes.get(i, []))).ljust(note_width))
                lines.append("| " + " | ".join(values) + " |")
                continue
            line = "  ".join(values)
            if any_notes:
                line = (line + "  " + "; ".join(notes.get(i, []))).rstrip()
            lines.append(line)
        out.write(("" if first else "\n") + "\n".join(lines))
        first = False
        issue_count += result.issue_count
        bad += int(result.bad.sum())
        kinds |= {f"{name} ({kind})" for _, name, kind, _ in result.problems}
        totals.points += result.size
        _advance(progress, result.size)
    if issue_count:
        n = shown(run, limit)
        of = f"the first {n:,}" if n < run.size else f"{n:,}"
        out.write(f"\n{bad:,} of {of} points have issues: " + ", ".join(sorted(kinds)))
