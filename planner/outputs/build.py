"""``planner build``: the main job, and the file writing behind ``planner report``.

``build(FILE, OUTDIR)`` loads the plan, evaluates every scenario, runs the
checks, sweeps and solves, and produces, all in memory first:

* ``OUTDIR/<stem>.xlsx``: the live workbook (:mod:`planner.outputs.excel`);
* ``OUTDIR/<stem>.md``: the Markdown report (:mod:`planner.outputs.report`);
* ``OUTDIR/<stem>-sweep-<n>.png``: one plot per sweep, and
  ``OUTDIR/<stem>-uncertain-<n>.png``, one histogram per headline figure an
  uncertain input moves, and ``OUTDIR/<stem>-tornado.png``, what moves them,
  when matplotlib is installed (the report says when
  plots were skipped).

Only then are files written: into a fresh temporary directory (next to
OUTDIR when it does not exist yet, then renamed as a whole; inside it, as a
hidden directory, when it does), then moved into OUTDIR, the old files set
aside and put back if any move fails. A bad plan, a template error or any
other failure leaves OUTDIR exactly as it was. A failing ``check`` is not a failure of the build: the
outputs are written (they show the failure) and the exit code is 1.
Other files in OUTDIR are left alone.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from ..compute.evaluation import Plan, format_value
from ..language.errors import UsageError
from ..language import ir

if TYPE_CHECKING:  # the view model (SymPy's closed forms and derivatives) only where a report is made
    from .viewmodel import Analysis

DEFAULT_OUTDIR = "out"
MAX_HISTOGRAMS = 8  # uncertainty.MAX_PLOTS: one histogram per uncertain headline figure
MAX_SERIES = 6  # periods.MAX_SERIES: a line chart (and a fan) per headline series


@dataclass
class Output:
    name: str  # file name inside the output directory
    data: bytes  # or a function writing them into an open binary file, for output too big to hold
    kind: str  # "report" | "workbook" | "plot" | "graph"


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
    bars = []
    if analysis.sensitivity:
        from .viewmodel import sensitivity_bars

        bars = sensitivity_bars(analysis)
        if sum(len(movers) for _, movers in bars) < 2:  # one bar says no more than its sentence
            bars = []
    if groups or bars:  # only then is matplotlib worth importing
        reason = plotting.available() if plots else "the report was printed, not written to a file (use -o)"
    skipped: list[str] = []
    sensitivity = None
    if bars and reason is None:
        sensitivity = f"{stem}-sensitivity.png"
        outputs.append(Output(sensitivity, plotting.tornado_png(bars), "plot"))
    if groups and reason is None:
        for i, (_, results) in enumerate(groups, start=1):
            name = f"{stem}-sweep-{i}.png"
            outputs.append(Output(name, plotting.sweep_png(results, marks=plot_marks(analysis, results),
                                                           together=break_evens(analysis, results)), "plot"))
            files[i] = name
            skipped += [f"sweep {i}, {s}" for s in plotting.panels_of(results)[1]]
    elif groups:
        notes.append(f"plots skipped: {reason}")
    graph = None
    if plots:  # written to a file: the whole graph beside it when the report draws a summary
        from .viewmodel import full_graph

        whole = full_graph(analysis)
        if whole is not None:
            graph = f"{stem}-graph.md"
            outputs.append(Output(graph, graph_markdown(analysis, report_name, *whole).encode("utf-8"), "graph"))
    from .viewmodel import view_model
    from . import uncertainty

    histograms: dict[str, str] = {}
    if getattr(analysis, "simulations", None):
        if reason is None and not groups:
            reason = plotting.available() if plots else "the report was printed, not written to a file (use -o)"
            if reason is not None:
                notes.append(f"plots skipped: {reason}")
        if reason is None:
            labels = {n: uncertainty.label(analysis.plan, n) for n in analysis.uncertain_figures}
            for i, data in enumerate(uncertainty.plot_data(analysis, labels), start=1):
                name = f"{stem}-uncertain-{i}.png"
                outputs.append(Output(name, plotting.distribution_png(data), "plot"))
                histograms[data.name] = name
            bars = uncertainty.tornado_data(analysis, labels)
            if bars:
                name = f"{stem}-tornado.png"
                outputs.append(Output(name, plotting.rank_tornado_png(bars), "plot"))
                histograms["tornado"] = name
    charts = series_charts(analysis, stem, plots)
    if charts[2] and not notes:
        notes.append(f"plots skipped: {charts[2]}")
    outputs += charts[0]
    plot_info = {"enabled": bool(files or histograms or charts[1]) or sensitivity is not None,
                 "note": f"plots skipped: {reason or charts[2]}" if reason or charts[2] else "", "files": files,
                 "skipped": skipped, "sensitivity": sensitivity, "graph": graph, "uncertainty": histograms,
                 "periods": charts[1]}

    text = render(view_model(analysis, plot_info), template)
    outputs.append(Output(report_name, text.encode("utf-8"), "report"))
    return outputs, notes


def series_charts(analysis: Analysis, stem: str, plots: bool) -> tuple[list[Output], dict[str, str], Optional[str]]:
    """Per headline series a line chart over the periods (``STEM-series-N.png``) and, under
    uncertainty, its fan (``STEM-fan-N.png``): the outputs, ``{name: file, "fan:name": file}`` and
    the reason they were not drawn (None when they were, or when the plan has no series)."""
    from . import periods
    from .viewmodel import headline_names

    plan = analysis.plan
    if plan.model.periods is None or not plan.model.series:
        return [], {}, None
    names = periods.headline_series(plan, headline_names(plan)[0])
    if not names:
        return [], {}, None
    from . import plots as plotting

    reason = plotting.available() if plots else "the report was printed, not written to a file (use -o)"
    if reason is not None:
        return [], {}, reason
    labels = {n: periods.label(plan, n) for n in names}
    outputs, files = [], {}
    for i, data in enumerate(periods.plot_data(analysis, names, labels), start=1):
        files[data.name] = f"{stem}-series-{i}.png"
        outputs.append(Output(files[data.name], plotting.series_png(data), "plot"))
    for data in periods.fan_data(analysis, names, labels):
        files[f"fan:{data.name}"] = f"{stem}-fan-{names.index(data.name) + 1}.png"
        outputs.append(Output(files[f"fan:{data.name}"], plotting.fan_png(data), "plot"))
    return outputs, files, None


MERMAID_EDGES = 500  # GitHub's Mermaid refuses to draw a flowchart with more edges


def graph_markdown(analysis: Analysis, report_name: str, source: str, edges: Sequence) -> str:
    """The file with a plan's whole dependency graph: Mermaid when GitHub can draw it, and always the
    list of what each quantity uses (searchable, and readable past Mermaid's 500 edges)."""
    plan = analysis.plan
    uses: dict[str, list[str]] = {}
    for a, b in edges:
        uses.setdefault(b, []).append(a)
    from .markup import code

    lines = [f"# Dependency graph of {code(Path(plan.path).name)}", "",
             f"Every quantity of the plan and what it uses, beside [the report]({report_name}), "
             f"whose graph is a summary. Arrows point from a quantity to the quantities that use it.", ""]
    if len(edges) <= MERMAID_EDGES:
        lines += ["```mermaid", source, "```", ""]
    else:
        lines += [f"{len(edges):,} dependencies are more than GitHub's Mermaid draws ({MERMAID_EDGES}); the list:", ""]
    lines += [f"- `{n}` uses " + ", ".join(f"`{d}`" for d in ds) for n, ds in uses.items()]
    return "\n".join(lines) + "\n"


def plot_marks(analysis: Analysis, results: Sequence) -> list:
    """What the plan says about a sweep's x axis: its value as written, and the answers of the
    questions about that input (a break-even, a threshold, an optimum), in display units."""
    from ..language.errors import PlanError
    from .numbers import figure, prose_style
    from .plots import Mark

    def said(v: float, unit: str) -> str:  # as the report's sentences say it: 55.3 %, not 55.3333 %
        return figure(v, unit, prose_style([v], unit))

    plan = analysis.plan
    first = results[0]
    x = max(first.axes, key=lambda a: a.count).name
    q = plan.quantities[x]
    lo, hi = float(first.display(x).min()), float(first.display(x).max())
    marks = []
    labels = {r.label for r in results}
    if "base" in labels:  # a scenario that sets every input to its value as written answers for the base too
        labels |= {ev.scenario for ev in analysis.evaluations
                   if ev.scenario and ev.inputs == analysis.base.inputs}
    current = analysis.base.display(x)
    if not q.is_bool:
        marks.append(Mark(float(current), f"as written: {said(float(current), q.unit_text)}", "current"))
    for stmt, answers in analysis.solves:
        ok = [(s, r) for s, r in answers if not isinstance(r, PlanError) and (r.label in labels or len(answers) == 1)]
        name = stmt.alias or ("break-even" if getattr(stmt, "mode", "") == "root" else "")
        for scenario, r in ok:
            where = f" ({r.label})" if len(ok) > 1 else ""
            if r.target != x:
                continue
            if r.mode in ("maximize", "minimize"):
                panel = stmt.objective.name if hasattr(stmt.objective, "name") else None
                marks.append(Mark(float(r.display_value), f"{r.mode[:3]}imum{where}: "
                                  f"{said(float(r.optimum_display), r.optimum_unit)} at "
                                  f"{said(float(r.display_value), r.unit)}", "point", panel,
                                  float(r.optimum_display)))
            elif lo - (hi - lo) <= float(r.display_value) <= hi + (hi - lo):  # near enough to be drawn
                marks.append(Mark(float(r.display_value),
                                  f"{name or r.mode}{where}: {said(float(r.display_value), r.unit)}"))
    return marks


def break_evens(analysis: Analysis, results: Sequence) -> list[tuple[str, str]]:
    """The two sides of each `solve X where a = b` whose X is the sweep's x axis and whose sides are
    quantities of one unit: drawn in one panel, they cross at the answer the plot marks."""
    from ..language import ir

    x = max(results[0].axes, key=lambda a: a.count).name
    quantities = analysis.plan.quantities
    out = []
    for stmt, _ in analysis.solves:
        c = getattr(stmt, "condition", None)
        if (getattr(stmt, "target", None) == x and isinstance(c, ir.Compare) and len(c.operands) == 2
                and all(isinstance(o, ir.Name) and o.name in quantities for o in c.operands)):
            a, b = (o.name for o in c.operands)
            if quantities[a].unit_text == quantities[b].unit_text and not quantities[a].is_bool:
                out.append((a, b))
    return out


def sweep_groups(analysis: Analysis) -> list[tuple[str, list]]:
    """(title, results per scenario) for each sweep statement, in file order."""
    return [(stmt.span.flat, results) for stmt, results in analysis.sweeps]


def workbook_output(analysis: Analysis, name: str) -> Output:
    from .excel.writer import workbook_bytes

    data = workbook_bytes(analysis.plan, solve_results=analysis.solve_results() or None, answers=analysis.answers,
                          checks=analysis.checks)
    return Output(name, data, "workbook")


def build(path: str, outdir: str = DEFAULT_OUTDIR, template: Optional[str] = None,
          import_roots: Sequence[str] = (), progress=None) -> BuildResult:
    """Everything a plan produces, written into ``outdir`` only when all of it succeeded.
    ``progress`` (a :class:`planner.outputs.progress.Progress`) is told each step."""
    from ..compute.evaluation import load
    from ..questions.fast import Answers

    step = progress.step if progress is not None else (lambda what: None)
    _check_outdir(outdir)
    stem = Path(path).stem
    inputs = [Path(path)] + ([Path(template)] if template else [])
    refuse_inputs([Path(outdir) / f"{stem}.xlsx", Path(outdir) / f"{stem}.md"], inputs)
    step("loading")
    plan = load(path, answers=Answers, import_roots=import_roots)  # formulas may use questions' answers
    inputs += plan.files
    refuse_inputs([Path(outdir) / name for name in [f"{stem}.xlsx", f"{stem}.md"]
                   + [f"{stem}-sweep-{i}.png" for i in range(1, len(plan.model.sweeps) + 1)]
                   + [f"{stem}-uncertain-{i}.png" for i in range(1, MAX_HISTOGRAMS + 1)] + [f"{stem}-tornado.png"]
                   + [f"{stem}-{kind}-{i}.png" for kind in ("series", "fan") for i in range(1, MAX_SERIES + 1)]],
                   inputs)
    step("scenarios, checks, sweeps and solves")
    from .viewmodel import analyse

    analysis = analyse(plan)
    step("the workbook")
    skipped = []
    outputs = [workbook_output(analysis, f"{stem}.xlsx")]
    step("the report and its plots")
    report, notes = report_outputs(analysis, f"{stem}.md", template)
    outputs += report
    result = BuildResult(analysis, outputs, notes=skipped + notes)
    step("writing")
    result.written = publish(outputs, Path(outdir), inputs)
    return result


# ---- writing -------------------------------------------------------------------------

def _check_outdir(outdir: str) -> None:
    if str(outdir) == "-":
        raise UsageError("-o -: the output is a folder (planner build, planner diff): it cannot be standard output",
                         hint="print the report with `planner report FILE -o -`, or a workbook with "
                              "`planner export FILE -o -`")
    p = Path(outdir)
    if p.exists() and not p.is_dir():
        raise UsageError(f"-o {outdir}: exists and is not a directory")


_STAGED: set = set()  # temporaries (files, folders) this process has made and not yet moved in or removed
_MAKING = threading.RLock()  # held while a temporary is made and recorded: none exists unrecorded


def remove_staged() -> None:
    """Remove every temporary an interrupted write left (the command line calls it on Ctrl-C and
    SIGTERM: the write runs on another thread, whose own cleanup may not run before the process
    ends). A target is never touched: it is the old file or, if its rename came first, the new one.
    A temporary the writing thread is making as the signal comes is waited for and removed too."""
    with _MAKING:
        for path in list(_STAGED):
            _STAGED.discard(path)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except OSError:
                pass


def _stage_file(real: Path) -> tuple[int, Path]:
    """A new temporary file beside ``real`` (its descriptor and path), recorded as it is made."""
    with _MAKING:
        fd, name = tempfile.mkstemp(prefix=f".{real.name}.planner-", dir=real.parent)
        _STAGED.add(name)
    return fd, Path(name)


def _stage_directory(outdir: Path) -> Path:
    """A new temporary folder beside ``outdir``, recorded as it is made."""
    with _MAKING:
        name = tempfile.mkdtemp(prefix=f".{outdir.name}.planner-", dir=outdir.parent)
        _STAGED.add(name)
    return Path(name)


def _done(path) -> None:
    _STAGED.discard(str(path))


def refuse_inputs(targets: Sequence[Path], inputs: Sequence[Path], what: str = "-o") -> None:
    """An output that would replace one of the run's own inputs (the plan, an imported plan, the
    template), by name, through a symlink or as a hard link, is refused before anything is written."""
    seen = []
    for p in inputs:
        try:
            seen.append((Path(p), os.stat(p)))
        except OSError:
            continue
    for target in targets:
        try:
            st = os.stat(target)  # follows symlinks: a link to the plan is the plan
        except OSError:
            continue
        for p, info in seen:
            if os.path.samestat(st, info):
                raise UsageError(f"{what} {target} would overwrite {p}, an input of this run",
                                 hint="write the output somewhere else; planner never replaces its own inputs")


def publish(outputs: Sequence[Output], outdir: Path, protect: Sequence[Path] = (),
            denied: Optional[str] = None) -> list[Path]:
    """Write every output into ``outdir``: all of them, or (on any error) none.

    * A regular file (or a new one) is staged as a temporary file next to its
      target and renamed over it, so a reader never sees half a file; the old
      files are kept aside until every rename succeeded, and put back if one failed.
    * A symlink is followed: its target is replaced (atomically, as above) and the
      link stays a link.
    * A character device or a FIFO (``/dev/null``, ``/dev/stdout``, a pipe) is
      written to, never replaced; the run's own standard output or error is
      written through its descriptor.
    * A block device, a socket or a directory in the way is refused, and so is any
      output that is one of ``protect`` (the run's inputs).

    ``denied``: the hint when writing is not permitted (default: choose another ``-o``).
    """
    _check_outdir(str(outdir))
    shown = outdir  # paths as the user wrote them, for messages
    plans: list[tuple[Output, Path, Path, str]] = []  # (output, shown path, real path, how)
    for out in outputs:
        target = outdir / out.name
        if target.is_dir():  # a file replaces a file; a directory in the way is the user's, never moved aside
            raise UsageError(f"{target} is a directory; planner writes a file of that name there",
                             hint="choose another output name, or move the directory")
        plans.append((out, target, *_destination(target)))
    refuse_inputs([t for _, t, _, _ in plans], protect)
    real_outdir = Path(os.path.realpath(outdir))
    try:
        if not real_outdir.exists():
            _fresh_directory(outputs, real_outdir)
        else:
            _replace_files([(o, real) for o, _, real, how in plans if how == "file"], real_outdir)
            for out, target, real, how in plans:
                if how != "file":
                    _stream(out.data, target, how)
    except OSError as exc:
        raise _write_error(exc, shown, outputs, denied) from None
    return [shown / out.name for out in outputs]


def rewrite(path: Path, data: bytes, denied: str) -> None:
    """Replace the text of a file the run read and changed (``planner fmt``). A file with one name
    is replaced as :func:`publish` does (staged, renamed in). A file with hard links keeps them: the
    new text is staged and read back first, then written into the file itself; if that write is
    interrupted, the staged copy is kept and named (a rename would give this name a new file and
    leave the other names with the old text)."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is None or st.st_nlink < 2 or not stat.S_ISREG(st.st_mode):
        publish([Output(path.name, data, "file")], path.parent, denied=denied)
        return
    real = Path(os.path.realpath(path))
    stage = None
    try:
        fd, stage = _stage_file(real)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if stage.read_bytes() != data:
            raise OSError(errno.EIO, "the staged copy did not read back the same")
        with open(real, "r+b") as f:
            try:
                f.write(data)
                f.truncate()
                f.flush()
                os.fsync(f.fileno())
            except BaseException:
                sys.stderr.write(f"planner: {path} was interrupted while being rewritten; its new text is in {stage}\n")
                _done(stage)
                stage = None  # kept: the only whole copy
                raise
    except OSError as exc:
        raise _write_error(exc, path.parent, [Output(path.name, data, "file")], denied) from None
    finally:
        if stage is not None:
            stage.unlink(missing_ok=True)
            _done(stage)


def _destination(target: Path) -> tuple[Path, str]:
    """Where ``target`` really is and how to write it: "file" (replace or create), or a stream."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return Path(os.path.realpath(target)), "file"  # new (a dangling link: its target is created)
    except OSError:
        return Path(os.path.realpath(target)), "file"  # unreadable: the write reports it
    for fd in (1, 2):
        try:
            if os.path.samestat(st, os.fstat(fd)):  # `-o /dev/stdout`, even when it is redirected to a file
                return target, f"fd{fd}"
        except OSError:
            pass
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return target, "stream"
    if stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        kind = "a block device" if stat.S_ISBLK(st.st_mode) else "a socket"
        raise UsageError(f"{target} is {kind}; planner writes regular files, character devices and pipes only")
    return Path(os.path.realpath(target)), "file"


def _write(f, data) -> None:
    """An output's bytes into an open binary file; ``data`` is the bytes, or a function that
    writes them into the file as it computes them (``planner sweep -o``: too big to hold)."""
    if callable(data):
        data(f)
    else:
        f.write(data)


def _stream(data, target: Path, how: str) -> None:
    if how.startswith("fd"):
        stream = sys.stdout if how == "fd1" else sys.stderr
        stream.flush()
        fd = int(how[2:])
        if callable(data):
            with os.fdopen(os.dup(fd), "wb") as f:
                data(f)
            return
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        return
    with open(target, "wb") as f:  # a device or a pipe: written to, not replaced
        _write(f, data)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _normal_mode() -> int:
    return 0o666 & ~_umask()


def _fresh_directory(outputs: Sequence[Output], outdir: Path) -> None:
    """OUTDIR does not exist yet: stage a directory next to it, then rename it in one step."""
    outdir.parent.mkdir(parents=True, exist_ok=True)
    stage = _stage_directory(outdir)
    try:
        for out in outputs:
            with open(stage / out.name, "wb") as f:
                _write(f, out.data)
        stage.chmod(0o777 & ~_umask())  # mkdtemp makes it private; a normal directory is wanted
        try:
            os.rename(stage, outdir)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not outdir.is_dir():
                raise
            raise UsageError(f"{outdir} was created by another run while this one was writing it; "
                             "nothing of this run was written there",
                             hint="run again (into the folder the other run made), or choose another folder") from None
        _done(stage)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        _done(stage)
        raise


def _replace_files(files: Sequence[tuple[Output, Path]], outdir: Path) -> None:
    """Stage each file next to its (real) target, then rename them over the old ones; on any
    error put every old file back (and remove the new ones), so nothing changed."""
    staged: list[tuple[Path, Path]] = []  # (stage, real target)
    try:
        for out, real in files:
            fd, name = _stage_file(real)
            staged.append((name, real))
            with os.fdopen(fd, "wb") as f:
                _write(f, out.data)
            try:
                mode = stat.S_IMODE(os.stat(real).st_mode)  # a replaced file keeps its permissions
            except OSError:
                mode = _normal_mode()
            os.chmod(name, mode)
    except BaseException:
        for stage, _ in staged:
            stage.unlink(missing_ok=True)
            _done(stage)
        raise
    done: list[tuple[Path, Optional[Path]]] = []  # (real target, backup of the old file or None)
    try:
        for stage, real in staged:
            backup = None
            if os.path.lexists(real):
                backup = real.with_name(f".{real.name}.planner-old-{os.getpid()}")
                try:
                    os.link(real, backup)  # the old file stays in place until the rename replaces it
                except OSError:
                    os.replace(real, backup)  # no hard links here: set it aside
            done.append((real, backup))
            os.replace(stage, real)
            _done(stage)
    except BaseException:
        for real, backup in reversed(done):
            if backup is not None:
                if os.path.lexists(real) and os.path.samefile(backup, real):
                    backup.unlink()  # never replaced (renaming a hard link onto itself would keep both)
                else:
                    os.replace(backup, real)
            else:
                real.unlink(missing_ok=True)
        for stage, _ in staged:
            stage.unlink(missing_ok=True)
            _done(stage)
        raise
    for _, backup in done:
        if backup is not None:
            backup.unlink(missing_ok=True)


def _write_error(exc: OSError, shown: Path, outputs: Sequence[Output], denied: Optional[str] = None) -> UsageError:
    """The user's path, not a temporary file's, and why it could not be written."""
    reason = exc.strerror or str(exc)
    where = shown if len(outputs) != 1 else shown / outputs[0].name
    folder = shown if str(shown) not in ("", ".") else Path(".")
    hint = None
    if isinstance(exc, PermissionError):
        hint = denied or f"the folder {folder} is not writable for you; choose another -o"
    elif exc.errno == errno.ENOSPC:
        hint = "the disk is full"
    elif isinstance(exc, (NotADirectoryError, FileNotFoundError)):
        hint = "a part of the path is not a folder, or does not exist"
    return UsageError(f"cannot write {where}: {reason}", hint=hint)


# ---- the summary ------------------------------------------------------------------------

def solve_lines(analysis: Analysis) -> list[str]:
    """One line per solve/maximize/minimize: the answer per scenario, or why there is none."""
    from ..language.errors import PlanError
    from .numbers import answer_style, figure

    lines = []
    for stmt, answers in analysis.solves:
        parts = []
        for scenario, r in answers:
            where = f"{scenario} " if scenario else ""
            if isinstance(r, PlanError):
                parts.append(f"{where}no answer in the domain ({r.message})")  # as `planner solve` says it
            else:
                parts.append(where + figure(r.display_value, r.unit, answer_style(r.display_value, r.unit, r.mode))
                             + (f" (optimum {format_value(r.optimum_display, r.optimum_unit)})"
                                if r.optimum_display is not None else ""))
        lines.append(f"{ir.question_text(stmt)}: {', '.join(parts)}")
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
    from ..language.live import plain

    lines = [f"{plain(plan.title)}  ({plan.path})", ""]

    def shown(ev, n: str) -> str:  # the quantity's one style, as the report and the workbook write it
        style = a.styles.get(n)
        return "never" if ev.is_never(n) else style.text(ev.display(n)) if style else format_value(ev.display(n))

    if len(labels) > 4 and len(labels) > len(names):  # many scenarios: one row each, to stay readable
        heads = [f"{n} ({plan.quantities[n].unit_text})" if plan.quantities[n].unit_text else n for n in names]
        rows = [[ev.label] + [shown(ev, n) for n in names] for ev in a.evaluations]
        lines.append(table(rows, ["scenario"] + heads, ["left"] + ["right"] * len(names)))
    else:
        rows = [[n] + [shown(ev, n) for ev in a.evaluations] + [plan.quantities[n].unit_text]
                for n in names]
        lines.append(table(rows, ["headline"] + labels + ["unit"], ["left"] + ["right"] * len(labels) + ["left"]))
    from .periods import findings

    said = findings(plan, a.evaluations)  # the report's sentences, in the terminal's plain text
    lines += [""] + [s.replace("**", "") for s in said] if said else []
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
