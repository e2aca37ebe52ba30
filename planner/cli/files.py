"""The commands that read or write files: `planner export`, `import`, `report` and `build`."""

from __future__ import annotations

import os
import sys

from .common import _load, import_roots, overrides_from, scenarios_from, warn
from .emit import emit
from .options import EXIT_CHECK_FAILED, EXIT_OK, _add_common, _format, _import_root, _positive
from .output import atomic_write, note, refuse_inputs, write_output


def add_export(sub) -> None:
    p = sub.add_parser("export", help="write a live Excel workbook (every figure a formula)",
                       description="Write an .xlsx workbook: inputs as named cells, every derived figure, "
                                   "scenario, sweep, solve and check as a live formula (Excel and LibreOffice).")
    _add_common(p)
    p.add_argument("--output", "-o", required=True, metavar="BOOK.xlsx", help="the workbook to write")
    p.add_argument("--trials", type=_positive, default=1000, metavar="N",
                   help="rows of the Trials sheet, for a plan with uncertain inputs (default: 1,000; at most "
                        "10,000)")
    p.set_defaults(handler=cmd_export)


def cmd_export(args) -> int:
    from ..language.errors import UsageError
    from ..outputs.excel.writer import workbook_bytes

    if args.output == "-" and sys.stdout.isatty():
        raise UsageError("-o -: a workbook is binary and standard output is a terminal",
                         hint="redirect it: planner export FILE -o - > book.xlsx")
    refuse_inputs(args.output, args.file)
    from ..outputs.progress import Progress

    with Progress("export") as progress:
        progress.step("loading")
        plan = _load(args.file, args=args)
        refuse_inputs(args.output, plan.files)
        overrides, origins = overrides_from(plan, args.sets)
        scenarios = [s for s in scenarios_from(plan, args.scenario) if s is not None] if args.scenario else None
        progress.step("the workbook")
        data = workbook_bytes(plan, scenarios, overrides, origins, trials=args.trials)
        progress.step("writing")
    if args.output == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return EXIT_OK
    atomic_write(args.output, data, plan.files)
    note(f"wrote {args.output}")
    return EXIT_OK


def add_import(sub) -> None:
    p = sub.add_parser("import", help="read inputs edited in an exported workbook and evaluate the plan with them",
                       description="Read the input cells of a workbook written by `planner export` (the Inputs "
                                   "sheet, a scenario's own cells, a series' table of values), list the inputs that "
                                   "differ from the plan, and evaluate the plan with them.")
    p.add_argument("workbook", metavar="BOOK.xlsx", help="a workbook written by `planner export`")
    p.add_argument("--plan", required=True, metavar="FILE", help="the .plan file the workbook was exported from")
    _import_root(p)
    p.add_argument("--scenario", "-s", action="append", metavar="NAME",
                   help="evaluate in these scenarios too (as for eval)")
    p.add_argument("--write", action="store_true",
                   help="write the edited inputs, scenario values and series' tables back into FILE, changing only "
                        "those "
                        "literals (their units and written decimals kept); refused when FILE changed since the "
                        "export, or a value breaks a constraint")
    p.add_argument("--dry-run", action="store_true", dest="dry_run",
                   help="with or without --write: print the change to FILE as a unified diff; write nothing")
    p.add_argument("--force", action="store_true",
                   help="with --write: write even when FILE changed since the workbook was exported")
    _format(p)
    p.set_defaults(handler=cmd_import)


def cmd_import(args) -> int:
    from ..outputs.excel.reader import describe, read_inputs
    from ..outputs.views import ImportView

    plan = _load(args.plan, args=args)
    imported = read_inputs(args.workbook, plan)
    if args.write or args.dry_run:
        return _write_back(args, plan, imported)
    if imported.table_overrides:  # a series' table of values edited: the plan with those items
        from ..outputs.excel.writeback import with_tables

        plan = with_tables(plan, imported, import_roots(args))
    evaluations = imported.evaluate(plan, scenarios_from(plan, args.scenario))
    if args.format in ("csv", "jsonl"):  # rows only on stdout: what the workbook changed on stderr
        sys.stderr.write(describe(imported) + "\n")
    emit(ImportView(plan, evaluations, plan.display_order(), imported=imported, workbook=args.workbook), args.format)
    return EXIT_OK


def _write_back(args, plan, imported) -> int:
    from ..outputs.excel.reader import describe
    from ..outputs.excel.writeback import write_back

    changes, shown, warnings = write_back(args.workbook, plan, imported, force=args.force, dry_run=args.dry_run,
                                          import_roots=import_roots(args))
    for text in warnings:
        sys.stderr.write(f"warning: {text}\n")
    sys.stderr.write(describe(imported) + "\n")
    if args.dry_run:
        sys.stdout.write(shown)
        note(f"nothing written (--dry-run): {len(changes)} literal{'s' if len(changes) != 1 else ''} of "
             f"{plan.path} would change")
    elif changes:
        note(f"wrote {plan.path}: {len(changes)} literal{'s' if len(changes) != 1 else ''} changed")
    else:
        note(f"{plan.path} is unchanged: the workbook has no edits to write back")
    return EXIT_OK


def add_report(sub) -> None:
    p = sub.add_parser("report", help="render the Markdown report (default or your Jinja template)",
                       description="Render the Markdown report: inputs, formulas in LaTeX, scenarios, sweeps, "
                                   "solves, sensitivity, checks and the dependency graph. With -o, plots of the "
                                   "sweeps are written next to the report.")
    p.add_argument("file", metavar="FILE", help="a .plan file")
    p.add_argument("--template", "-t", metavar="TEMPLATE",
                   help="a Jinja template (default: the shipped report.md.j2)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write the report here (default: print it; `-` prints it too)")
    _import_root(p)
    p.set_defaults(handler=cmd_report)


def cmd_report(args) -> int:
    from ..outputs.build import publish, report_outputs
    from ..outputs.viewmodel import analyse

    refuse_inputs(args.output, args.file, args.template)
    plan = _load(args.file, args=args)
    refuse_inputs(args.output, plan.files)
    analysis = analyse(plan)
    if args.output is None or args.output == "-":
        outputs, _ = report_outputs(analysis, "report.md", args.template, plots=False)
        write_output(outputs[-1].data.decode("utf-8"))
    else:
        from pathlib import Path

        target = Path(args.output)
        if args.output.endswith(("/", os.sep)):  # `-o reports/`: a folder, the file named after the plan
            target = target / f"{Path(plan.path).stem}.md"
        outputs, notes = report_outputs(analysis, target.name, args.template, plots=_regular(target))
        written = publish(outputs, target.parent, list(plan.files) + ([Path(args.template)] if args.template else []))
        for text in notes:
            note(text)
        note("wrote: " + ", ".join(str(p) for p in written))
    return EXIT_CHECK_FAILED if analysis.checks_failed else EXIT_OK


def _regular(path) -> bool:
    """A regular file or a new one (plots go next to it), not a device or a pipe (`-o /dev/stdout`)."""
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def add_build(sub) -> None:
    p = sub.add_parser("build", help="the main job: workbook, report and plots into a directory",
                       description="Evaluate every scenario, run the checks, sweeps and solves, and write the "
                                   "workbook, the report and its plots into OUTDIR (all or nothing). Exit 1 when "
                                   "a check fails (the files are still written), 2 on a bad plan (nothing written).")
    p.add_argument("file", metavar="FILE", help="a .plan file")
    p.add_argument("--output", "-o", metavar="OUTDIR", default="out", help="output directory (default: out)")
    p.add_argument("--template", "-t", metavar="TEMPLATE", help="a Jinja template for the report")
    _import_root(p)
    p.set_defaults(handler=cmd_build)


def cmd_build(args) -> int:
    from ..outputs.build import build
    from ..outputs.progress import Progress
    from ..outputs.views import BuildView

    with Progress("build") as progress:
        result = build(args.file, args.output, args.template, import_roots(args), progress=progress)
    warn(result.analysis.plan)
    emit(BuildView(result), "table")
    return EXIT_CHECK_FAILED if result.checks_failed else EXIT_OK
