"""``planner diff``'s outputs: a short ranked summary for the terminal (one screen), every figure's
bridge with ``--details``, JSON, CSV and Markdown (with a waterfall chart per moved headline figure:
a PNG next to the Markdown with ``-o DIR``, else drawn in text)."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Optional, Sequence

from ..compute.evaluation import format_value
from ..questions.diff import Figure, PlanDiff, compare, load_version
from .terminal import _csv_value, dumps, json_number, wrap_text
from .viewmodel import headline_names

SHORT_FIGURES = 5  # figures in the default summary (two lines each: a screen of 80x24 with the changes)
BAR = 40  # characters of the widest bar of a text waterfall


def run(old: str, new: str, import_roots: Sequence[str] = (), samples: Optional[int] = None) -> PlanDiff:
    """``planner diff OLD NEW``: each a file or ``REV:PATH`` (a file at a git revision)."""
    a, base = load_version(old, import_roots)
    b, _ = load_version(new, import_roots)
    return compare(a, b, lambda p: headline_names(p)[0], base, import_roots, samples)


def _num(v, digits: int = 6) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return format_value(float(f"{v:.{digits}g}"), "", digits)


def _signed(v: float, digits: int = 6) -> str:
    text = _num(v, digits)
    return text if text.startswith("-") else "+" + text


def _side(f: Figure, new: bool, digits: int = 6) -> str:
    v, note = (f.new, f.new_note) if new else (f.old, f.old_note)
    return note if v is None else _num(v, digits)


def _why(f: Figure, limit: Optional[int] = None, digits: int = 6) -> str:
    """The bridge on one line: each change's effect, largest first, then the interaction."""
    parts = []
    for key, e in f.effects:
        if e is None:
            parts.append(f"{key} ?")
        elif isinstance(e, bool):
            parts.append(f"{key} alone makes it {_num(e)}")
        else:
            parts.append(f"{key} {_signed(e, digits)}")
    more = 0
    if limit is not None and len(parts) > limit:
        more, parts = len(parts) - limit, parts[:limit]
    if more:
        parts.append(f"{more} more")
    inter = f.interaction
    if inter is not None and f.effects and not math.isclose(inter, 0.0, abs_tol=1e-9 * max(1.0, abs(f.change or 0))):
        parts.append(f"interaction {_signed(inter, digits)}")
    return ", ".join(parts) if parts else "(no single change moves it alone)"


def _grouped(figures: Sequence[Figure]) -> list[tuple[Figure, list[str]]]:
    """Figures that moved the same way (the same changes, by the same amounts) in several scenarios
    once, with their scenarios' labels."""
    out: dict[tuple, tuple[Figure, list[str]]] = {}
    for f in figures:
        key = (f.name, f.kind, _side(f, False), _side(f, True), tuple((k, _num(e)) for k, e in f.effects))
        if key in out:
            out[key][1].append(f.label)
        else:
            out[key] = (f, [f.label])
    return list(out.values())


def _one_each(moved: list[tuple[Figure, list[str]]]) -> list[tuple[Figure, list[str]]]:
    """Each figure once, largest move first: its row of the plan as written where it moved there (else
    its largest), the other scenarios it moved in counted, with the range of their changes."""
    by_name: dict[tuple, list] = {}
    for f, labels in moved:
        by_name.setdefault((f.name, f.kind), []).append((f, labels))
    out = []
    for rows in by_name.values():
        f, labels = next((r for r in rows if "base" in r[1]), rows[0])
        rest = [(g, label) for g, ls in rows for label in ls if label != labels[0]]
        shown = [labels[0]]
        if rest:
            more = f"{len(rest)} scenario{'s' if len(rest) > 1 else ''}"
            changes = sorted({g.change for g, _ in rest if g.numeric})
            if changes:
                low, high = _signed(changes[0], 3), _signed(changes[-1], 3)
                more += f": {low}" + (f" to {high}" if high != low else "")
            shown.append(more)
        out.append((f, shown))
    return out


def _change_lines(d: PlanDiff) -> list[str]:
    return [c.summary for c in d.changes]


def _check_text(c) -> str:
    return c.text + (f" [{c.scenario}]" if c.scenario and not c.text.endswith(f" in {c.scenario}") else "")


def text(d: PlanDiff, details: bool = False, width: Optional[int] = None) -> str:
    """The terminal's view: one screen by default (changes, checks that now fail, the largest moves with
    their three largest effects, new scenarios), everything with ``details``."""
    digits = 6 if details else 3  # three significant digits, as the report's sentences
    lines = [f"{d.old.path} -> {d.new.path}"]
    changes = _change_lines(d)
    if details:
        lines += ["Changed:"] + [f"  {c}" for c in changes] if changes else ["No statement changed."]
        for c in d.changes:
            if c.status == "changed" and c.kind != "input":
                lines += [f"  {c.key}:", f"    - {c.old}", f"    + {c.new}"]
    else:
        lines.append("Changed: " + "; ".join(changes) if changes else "No statement changed.")
    bad = d.regressions
    if bad:
        lines.append("Checks that passed and now fail:")
        lines += [f"  {_check_text(c)}" for c in bad]
    moved = _grouped(d.moved)
    lines.append("")
    if not moved:
        lines.append("No headline figure or answer moved.")
    else:
        lines.append("Moved (as written unless in a scenario), each change's effect alone below:")
        shown = moved if details else _one_each(moved)
        for f, labels in shown[:None if details else SHORT_FIGURES]:
            change = f" ({_signed(f.change, digits)})" if f.numeric else ""
            unit = f" {f.unit}" if f.unit else ""
            where = [n for n in labels if n != "base"] if details else labels[:1]
            head = f"{f.name}" + (f" in {', '.join(where)}" if where and where != ["base"] else "")
            tail = f"; {labels[1]}" if not details and len(labels) > 1 else ""
            if details and "base" in labels and len(labels) > 1:
                head = f"{f.name} as written and in {', '.join(where)}"
            lines.append(f"{head}: {_side(f, False, digits)} -> {_side(f, True, digits)}{unit}{change}{tail}")
            lines.append("  " + _why(f, None if details else 3, digits))
            if details:
                lines += [f"    {k}: {why}" for k, why in f.unknown.items()]
        if not details:
            more = len(shown) - SHORT_FIGURES
            lines.append((f"... {more} more figures moved; " if more > 0 else "")
                         + "planner diff --details shows every scenario and the whole bridge")
    for s in [s for s, status in d.scenarios if status == "added"]:
        vals = [f"{f.name} {_side(f, True, digits)}" for f in d.figures if f.scenario == s and f.new is not None]
        lines.append(f"New scenario {s}: " + ", ".join(vals))
    removed = [s for s, status in d.scenarios if status == "removed"]
    if removed:
        lines.append("Removed scenarios: " + ", ".join(removed))
    if details:
        lines += ["", "Checks:" if d.checks else "Checks: none"]
        lines += [f"  {_status(c.old)} -> {_status(c.new)}  {_check_text(c)}" for c in d.checks]
    return wrap_text("\n".join(lines), width) + "\n"


def _status(passed: Optional[bool]) -> str:
    return "absent" if passed is None else ("pass" if passed else "FAIL")


def as_json(d: PlanDiff) -> dict:
    return {
        "format": "planner.diff/1", "old": d.old.path, "new": d.new.path,
        "changes": [{"kind": c.kind, "name": c.name, "status": c.status, "old": c.old, "new": c.new,
                     **({"old_value": c.old_value, "new_value": c.new_value} if c.kind == "input" else {})}
                    for c in d.changes],
        "scenarios": [{"scenario": s or "base", "status": status} for s, status in d.scenarios],
        "figures": [{"name": f.name, "kind": f.kind, "scenario": f.label, "unit": f.unit,
                     "old": json_number(f.old), "new": json_number(f.new),
                     "old_note": f.old_note or None, "new_note": f.new_note or None, "moved": f.moved,
                     "change": json_number(f.change),
                     "effects": {k: json_number(e) for k, e in f.effects},
                     "interaction": json_number(f.interaction) if f.effects else None,
                     "unknown": f.unknown}
                    for f in d.figures],
        "checks": [{"check": c.text, "scenario": c.scenario or "base", "old": c.old, "new": c.new,
                    "regression": c.regression} for c in d.checks],
        "regressions": len(d.regressions),
    }


def json_text(d: PlanDiff) -> str:
    return dumps(as_json(d))


def as_csv(d: PlanDiff) -> str:
    """One row per figure and scenario and step of its bridge: the total, each change, the interaction."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["figure", "kind", "scenario", "unit", "old", "new", "step", "effect"])
    for f in d.figures:
        base = [f.name, f.kind, f.label, f.unit, _csv(f.old, f.old_note), _csv(f.new, f.new_note)]
        w.writerow(base + ["total", _csv(f.change, "")])
        for key, e in f.effects:
            w.writerow(base + [key, _csv(e, "unknown")])
        if f.effects and f.numeric:
            w.writerow(base + ["interaction", _csv(f.interaction, "")])
    return out.getvalue()


def _csv(v, note: str) -> str:
    return note if v is None else _csv_value(v)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(d: PlanDiff, images: Optional[dict[str, str]] = None) -> str:
    """The diff in Markdown. ``images``: figure name -> a waterfall PNG's file name (else text charts)."""
    out = [f"# What changed in {_md(d.new.title)}", "", f"`{d.old.path}` → `{d.new.path}`", "", "## Changes", ""]
    out += ["| change | kind | old | new |", "|---|---|---|---|"]
    for c in d.changes:
        old = c.old_value if c.kind == "input" and c.old_value else c.old
        new = c.new_value if c.kind == "input" and c.new_value else c.new
        out.append(f"| {c.status} | {c.kind} `{c.name}` | {_md(f'`{old}`') if old else ''} | "
                   f"{_md(f'`{new}`') if new else ''} |")
    if d.regressions:
        out += ["", "**Checks that passed and now fail:**", ""]
        out += [f"- `{_md(c.text)}`" + (f" in {c.scenario}" if c.scenario and not c.text.endswith(f" in {c.scenario}")
                                        else "") for c in d.regressions]
    out += ["", "## Figures that moved", "", "| figure | scenario | old | new | change | unit |",
            "|---|---|---:|---:|---:|---|"]
    for f, labels in _grouped(d.moved):
        out.append(f"| `{f.name}` | {', '.join(labels)} | {_side(f, False)} | {_side(f, True)} | "
                   f"{_signed(f.change) if f.numeric else ''} | {f.unit} |")
    bridges = [f for f in d.moved if f.scenario is None and f.numeric and f.effects]
    if bridges:
        out += ["", "## Bridges (the plan as written)", "",
                "Each change's effect is the figure with that one change made to the old plan; the interaction is "
                "the total change minus the sum of those effects.", ""]
    for f in bridges:
        out += [f"### `{f.name}` ({f.unit})" if f.unit else f"### `{f.name}`", "",
                "| step | effect |", "|---|---:|", f"| old | {_num(f.old)} |"]
        out += [f"| {k} | {_signed(e) if e is not None else 'unknown'} |" for k, e in f.effects]
        out += [f"| interaction | {_signed(f.interaction)} |", f"| new | {_num(f.new)} |", ""]
        if images and f.name in images:
            out += [f"![Waterfall of {f.name}]({images[f.name]})", ""]
        else:
            out += ["```text", *waterfall_text(f), "```", ""]
    out += ["## Checks", "", "| check | scenario | old | new |", "|---|---|---|---|"]
    out += [f"| `{_md(c.text)}` | {c.scenario or 'base'} | {_status(c.old)} | {_status(c.new)} |" for c in d.checks]
    return "\n".join(out) + "\n"


def steps(f: Figure) -> list[tuple[str, float]]:
    """A waterfall's bars: the change's effects (unknown ones left out) and the interaction."""
    bars = [(k, e) for k, e in f.effects if isinstance(e, float)]
    return bars + [("interaction", f.interaction)]


def waterfall_text(f: Figure) -> list[str]:
    """The waterfall drawn in characters: each step a bar from the running total."""
    rows = [("old", 0.0, f.old)]
    level = f.old
    for k, e in steps(f):
        rows.append((k, level, level + e))
        level += e
    rows.append(("new", 0.0, f.new))
    lo = min(min(a, b) for _, a, b in rows)
    hi = max(max(a, b) for _, a, b in rows)
    scale = BAR / (hi - lo) if hi > lo else 0.0
    width = max(len(k) for k, _, _ in rows)
    out = []
    for k, a, b in rows:
        start, end = sorted((round((a - lo) * scale), round((b - lo) * scale)))
        bar = " " * start + ("█" * max(end - start, 1))
        value = _num(b) if k in ("old", "new") else _signed(b - a)
        out.append(f"{k.ljust(width)} {bar.ljust(BAR + 1)} {value}")
    return out


def write(d: PlanDiff, folder: str) -> list[str]:
    """``-o DIR``: diff.md and a waterfall PNG per moved headline figure of the plan as written, all or
    nothing (:func:`planner.outputs.build.publish`, as ``planner build`` writes). The files' names."""
    from .build import Output, publish
    from .plots import available, waterfall_png

    outputs, images = [], {}
    if available() is None:
        for f in d.moved:
            if f.scenario is None and f.numeric and f.effects:
                name = f"diff_{f.name}.png"
                outputs.append(Output(name, waterfall_png(f"{f.name} ({f.unit})" if f.unit else f.name, f.old,
                                                          steps(f), f.new), "plot"))
                images[f.name] = name
    outputs.append(Output("diff.md", markdown(d, images).encode("utf-8"), "report"))
    return [str(p) for p in publish(outputs, Path(folder))]
