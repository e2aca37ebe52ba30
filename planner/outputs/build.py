"""``planner build``: the main job, and the file writing behind ``planner report``.

``build(FILE, OUTDIR)`` loads the plan, evaluates every scenario, runs the
checks, sweeps and solves, and produces, all in memory first:

* ``OUTDIR/<stem>.xlsx``: the live workbook (:mod:`planner.outputs.excel`);
* ``OUTDIR/<stem>.md``: the Markdown report (:mod:`planner.outputs.report`);
* ``OUTDIR/<stem>-sweep-<n>.png``: one plot per sweep, when matplotlib is
  installed (the report says when plots were skipped).

Only then are files written: into a fresh temporary directory (next to
OUTDIR when it does not exist yet, then renamed as a whole; inside it, as a
hidden directory, when it does), then moved into OUTDIR, the old files set
aside and put back if any move fails. A bad plan, a template error or any
other failure leaves OUTDIR exactly as it was. A failing ``check`` is not a failure of the build: the
outputs are written (they show the failure) and the exit code is 1.
Other files in OUTDIR are left alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..compute.evaluation import Plan, format_value
from ..language.errors import UsageError
from .viewmodel import Analysis, analyse, view_model

DEFAULT_OUTDIR = "out"


@dataclass
class Output:
    name: str  # file name inside the output directory
    data: bytes
    kind: str  # "report" | "workbook" | "plot"


@dataclass
class BuildResult:
    analysis: Analysis
    outputs: list[Output]
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def checks_failed(self) -> int:
        return self.analysis.checks_failed


# ---- producing outputs (memory only) ---------------------------------------------

def report_outputs(analysis: Analysis, report_name: str, template: Optional[str] = None,
                   plots: bool = True) -> tuple[list[Output], list[str]]:
    """The report and its plots. ``plots=False`` (report on stdout) skips them."""
    from . import plots as plotting
    from .report import render

    stem = report_name[:-3] if report_name.endswith(".md") else report_name
    outputs: list[Output] = []
    notes: list[str] = []
    files: dict[int, str] = {}
    groups = sweep_groups(analysis)
    reason = None
    if groups:  # only then is matplotlib worth importing
        reason = plotting.available() if plots else "the report was printed, not written to a file (use -o)"
    if groups and reason is None:
        for i, (title, results) in enumerate(groups, start=1):
            name = f"{stem}-sweep-{i}.png"
            outputs.append(Output(name, plotting.sweep_png(results, title), "plot"))
            files[i] = name
    elif groups:
        notes.append(f"plots skipped: {reason}")
    plot_info = {"enabled": bool(files), "note": f"plots skipped: {reason}" if reason else "",
                 "files": files}
    text = render(view_model(analysis, plot_info), template)
    outputs.append(Output(report_name, text.encode("utf-8"), "report"))
    return outputs, notes


def sweep_groups(analysis: Analysis) -> list[tuple[str, list]]:
    """(title, results per scenario) for each sweep statement, in file order."""
    return [(stmt.span.flat, results) for stmt, results in analysis.sweeps]


def workbook_output(analysis: Analysis, name: str) -> Output:
    from .excel.writer import workbook_bytes

    data = workbook_bytes(analysis.plan, solve_results=analysis.solve_results() or None)
    return Output(name, data, "workbook")


def build(path: str, outdir: str = DEFAULT_OUTDIR, template: Optional[str] = None,
          import_roots: Sequence[str] = ()) -> BuildResult:
    """Everything a plan produces, written into ``outdir`` only when all of it succeeded."""
    from ..compute.evaluation import load

    _check_outdir(outdir)
    plan = load(path, import_roots=import_roots)
    analysis = analyse(plan)
    stem = Path(plan.path).stem
    outputs = [workbook_output(analysis, f"{stem}.xlsx")]
    report, notes = report_outputs(analysis, f"{stem}.md", template)
    outputs += report
    result = BuildResult(analysis, outputs, notes=notes)
    result.written = publish(outputs, Path(outdir))
    return result


# ---- writing -------------------------------------------------------------------------

def _check_outdir(outdir: str) -> None:
    p = Path(outdir)
    if p.exists() and not p.is_dir():
        raise UsageError(f"-o {outdir}: exists and is not a directory")


def publish(outputs: Sequence[Output], outdir: Path) -> list[Path]:
    """Write every output into a temporary directory next to ``outdir``, then
    move them into place: all of them, or (on any error) none."""
    _check_outdir(str(outdir))
    for out in outputs:  # a file replaces a file; a directory in the way is the user's, never moved aside
        if (outdir / out.name).is_dir():
            raise UsageError(f"{outdir / out.name} is a directory; planner writes a file of that name there",
                             hint="choose another output name, or move the directory")
    shown = outdir  # paths as the user wrote them, for messages
    outdir = outdir.absolute()
    fresh = not outdir.exists()
    if fresh:  # stage next to it, then rename the whole directory in one step
        outdir.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.planner-", dir=outdir.parent))
    else:  # stage inside it (same file system, no need to write to its parent)
        stage = Path(tempfile.mkdtemp(prefix=".planner-build-", dir=outdir))
    try:
        for out in outputs:
            (stage / out.name).write_bytes(out.data)
        if fresh:
            umask = os.umask(0)
            os.umask(umask)
            stage.chmod(0o777 & ~umask)  # mkdtemp makes it private; a normal directory is wanted
            os.rename(stage, outdir)
        else:
            _swap_in(outputs, stage, outdir)
        shutil.rmtree(stage, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return [shown / out.name for out in outputs]


def _swap_in(outputs: Sequence[Output], stage: Path, outdir: Path) -> None:
    """Move the staged files over the old ones; on any error put every old
    file back (and remove the new ones), so OUTDIR is as it was."""
    backup = stage / ".previous"
    backup.mkdir()
    saved: list[str] = []  # old files moved aside
    placed: list[str] = []  # new files moved in
    try:
        for out in outputs:
            target = outdir / out.name
            if target.exists():
                os.replace(target, backup / out.name)
                saved.append(out.name)
            os.replace(stage / out.name, target)
            placed.append(out.name)
    except BaseException:
        for name in placed:
            (outdir / name).unlink(missing_ok=True)
        for name in saved:
            os.replace(backup / name, outdir / name)
        raise


# ---- the summary ------------------------------------------------------------------------

def solve_lines(analysis: Analysis) -> list[str]:
    """One line per solve/maximize/minimize: the answer per scenario, or why there is none."""
    from ..language.errors import PlanError

    lines = []
    for stmt, answers in analysis.solves:
        parts = []
        for scenario, r in answers:
            where = f"{scenario} " if scenario else ""
            if isinstance(r, PlanError):
                parts.append(f"{where}no answer ({r.family})")
            else:
                parts.append(where + format_value(r.display_value, r.unit)
                             + (f" (optimum {format_value(r.optimum_display, r.optimum_unit)})"
                                if r.optimum_display is not None else ""))
        lines.append(f"{stmt.span.flat}: {', '.join(parts)}")
    if lines:
        lines.insert(0, "")
    return lines


def summary(result: BuildResult) -> str:
    """Headline figures per scenario, solves, checks and the files written."""
    from .terminal import table

    a = result.analysis
    plan: Plan = a.plan
    from .viewmodel import headline_names

    names, _ = headline_names(plan)
    labels = [ev.label for ev in a.evaluations]
    lines = [f"{plan.title}  ({plan.path})", ""]
    if len(labels) > 4 and len(labels) > len(names):  # many scenarios: one row each, to stay readable
        heads = [f"{n} ({plan.quantities[n].unit_text})" if plan.quantities[n].unit_text else n for n in names]
        rows = [[ev.label] + [format_value(ev.display(n)) for n in names] for ev in a.evaluations]
        lines.append(table(rows, ["scenario"] + heads, ["left"] + ["right"] * len(names)))
    else:
        rows = [[n] + [format_value(ev.display(n)) for ev in a.evaluations] + [plan.quantities[n].unit_text]
                for n in names]
        lines.append(table(rows, ["headline"] + labels + ["unit"], ["left"] + ["right"] * len(labels) + ["left"]))
    for line in solve_lines(a):
        lines.append(line)
    failed = [r for r in a.checks if not r.passed]
    lines.append("")
    lines.append(f"checks: {len(a.checks) - len(failed)} passed, {len(failed)} failed")
    for r in failed:
        lines.append(f"  FAIL {r.location}: {r.text}\n       {r.describe()}")
    for note in result.notes:
        lines.append(note)
    lines.append("wrote: " + ", ".join(str(p) for p in result.written))
    return "\n".join(lines)
