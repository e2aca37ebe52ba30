"""`planner check`, `sweep`, `solve` and `sensitivity`: the questions a plan asks, answered."""

from __future__ import annotations

import sys

from .common import _color, _load, _past_memory, overrides_from, scenarios_from
from .emit import emit
from .options import (
    EXIT_BAD_INPUT,
    EXIT_CHECK_FAILED,
    EXIT_OK,
    _add_common,
    _dask,
    _format,
    _import_root,
    _names,
    _percentiles,
    _positive,
    _sampling,
)
from .output import note, refuse_inputs


def add_check(sub) -> None:
    p = sub.add_parser("check", help="run every `check`; exit 1 if any fails",
                       description="Run every `check` statement. Exit 0 when all pass, 1 when any fails.")
    p.add_argument("file", metavar="FILE", help="a .plan file")
    p.add_argument("--verbose", "-v", action="store_true", help="list passing checks too")
    _sampling(p)
    _import_root(p)
    _format(p, ("table", "json", "markdown", "jsonl"))
    p.set_defaults(handler=cmd_check)


def cmd_check(args) -> int:
    from ..outputs.views import CheckView
    from ..questions.every_check import run_every_check

    plan = _load(args.file, args=args)
    # A plan that cannot be evaluated (a violated constraint, a division by
    # zero) is a bad plan (exit 2), not a failed check.
    plan.evaluate_all([None] + [s for s in plan.resolve_scenarios("all") if s is not None])
    results = run_every_check(plan, args.samples, args.seed, args.method)
    failed = [r for r in results if not r.passed]
    emit(CheckView(plan, results, args.verbose, _color(args, sys.stdout)), args.format)
    return EXIT_CHECK_FAILED if failed else EXIT_OK


def add_sweep(sub) -> None:
    p = sub.add_parser("sweep", help="evaluate quantities over a grid of input values (vectorised)",
                       description="Without NAME=VALUES, run every `sweep` in the file; with them, sweep those "
                                   "inputs as a grid. VALUES as in a plan: 0.3,0.6,0.8 or [0.3, 0.6], 1..8, "
                                   "'1..8 step 2', '1..1024 times 2', '2 TB/s..4 TB/s count 5'. Points that break "
                                   "a constraint or give no finite value are reported, not printed as nan. With "
                                   "--dask, a grid too large for memory runs in chunks and is reduced to figures "
                                   "per quantity (mean, sd, min, max, percentiles) and the share of points where "
                                   "each --probability holds.")
    _add_common(p)
    p.add_argument("axes", nargs="*", metavar="NAME=VALUES", help="an input and its values; several make a grid")
    p.add_argument("--show", type=_names, action="extend", metavar="NAME[,NAME...]",
                   help="quantities to show, a comma list; repeatable (default: those that depend on the swept "
                        "inputs)")
    p.add_argument("--format", "-f", choices=["table", "json", "csv", "markdown", "jsonl"], default="table",
                   help="output format: table, json, csv, markdown, jsonl (one JSON object per point) (default: "
                        "table, fitted to the terminal's width). Big sweeps are computed and written block by "
                        "block, in bounded memory; from 100,000 points a second process formats half of the "
                        "numbers where there is a second core")
    p.add_argument("--limit", type=_positive, metavar="N",
                   help="only the first N points of each sweep (the others are not computed)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write to FILE (all or nothing: nothing is written if the run fails) instead of stdout")
    _dask(p, "sweep")
    p.add_argument("--percentiles", type=_percentiles, metavar="P[,P...]",
                   help="with --dask, the percentiles of each quantity over the grid, a comma list (default: "
                        "5,50,95); exact, as numpy's percentile gives them")
    p.add_argument("--probability", "-p", action="append", default=[], metavar="CONDITION",
                   help='with --dask, the share of the grid\'s points where a condition holds, in plan syntax '
                        '("margin > 0 USD"); repeatable')
    p.set_defaults(handler=cmd_sweep)


def _prepare_sweeps(plan, args, overrides, origins, limit, runs) -> None:
    from ..language.errors import UsageError
    from ..questions import sweep
    from ..questions.ranges import parse_assignment

    if args.axes:
        axes = [parse_assignment(plan, text) for text in args.axes]
        for s in plan.resolve_scenarios(args.scenario):
            runs.append(sweep.prepare(plan, axes, args.show, s, overrides, origins, **limit))
    else:
        if not plan.model.sweeps:
            example = next((n for n in plan.model.inputs if not plan.model.quantities[n].is_bool), "x")
            raise UsageError(f"{plan.path} has no `sweep` statements",
                             hint=f"give the values on the command line: planner sweep FILE {example}=1..8")
        for stmt in plan.model.sweeps:
            runs.extend(sweep.prepare_statement(plan, stmt, args.scenario, overrides, origins, show=args.show,
                                                **limit))


def cmd_sweep(args) -> int:
    from ..language.errors import UsageError
    from ..outputs import stream
    from ..outputs.progress import Progress
    from ..outputs.views import SweepView

    chunked = args.dask or args.scheduler is not None
    if chunked:
        from ..questions.chunked import MAX_POINTS, libraries

        libraries()  # without the extra: say what to install, before anything runs
        if args.limit is not None:
            raise UsageError("--limit shows the first points, and a --dask sweep shows figures over all of them",
                             hint="leave out --limit or --dask")
        if args.format == "jsonl":
            raise UsageError("--format jsonl writes every point, and a --dask sweep writes figures",
                             hint="use --format table, json, csv or markdown")
    elif args.probability or args.percentiles:
        raise UsageError("--probability and --percentiles summarise a --dask sweep",
                         hint="add --dask (the figures over the whole grid), or leave them out (every point)")
    plan = _load(args.file, args=args)
    overrides, origins = overrides_from(plan, args.sets)
    limit = {"max_points": MAX_POINTS} if chunked else {}
    runs = []
    with _past_memory("a grid past the limit", "too many points", on=not chunked):
        _prepare_sweeps(plan, args, overrides, origins, limit, runs)
    for run in runs:  # what can fail (a fixed input breaking its constraint) fails before anything is written
        run.block(0, 1)
        run.diagnosed = 0
    if chunked:
        return _sweep_chunked(plan, runs, args)
    total = sum(stream.shown(r, args.limit) for r in runs)
    refuse_inputs(args.output, args.file, plan.files)
    with Progress("sweep", total, "points") as progress:
        view = SweepView(runs, args.limit, progress)
        emit(view, args.format, args.output, plan.files)
    totals = view.totals
    if args.output not in (None, "-"):
        note(f"wrote {args.output}")
    if totals.left_out and args.format not in ("table", "markdown"):
        note("; ".join(f"{stream.shown(r, args.limit):,} of {r.size:,} points of `{stream._label(r)}` "
                       f"[{r.label}] (--limit {args.limit})" for r, _ in totals.left_out))
    return EXIT_OK


def _sweep_chunked(plan, runs, args) -> int:
    """``planner sweep --dask``: each sweep as a chunked grid, reduced to figures."""
    from ..language.lower import lower_expr
    from ..language.source import Source
    from ..outputs.summary import SweepSummaryView
    from ..questions import chunked

    conditions = [(text, lower_expr(Source("--probability", text))) for text in args.probability]
    refuse_inputs(args.output, args.file, plan.files)
    from ..outputs.progress import Progress

    with Progress("sweep --dask") as progress, chunked.scheduler(args.scheduler, progress.step) as where:
        results = [chunked.sweep(where, r, conditions, args.percentiles or [5.0, 50.0, 95.0], args.chunk_mb)
                   for r in runs]
    emit(SweepSummaryView(results), args.format, args.output)
    if args.output not in (None, "-"):
        note(f"wrote {args.output}")
    if results:
        note(f"{sum(r.size for r in results):,} points in {sum(r.blocks for r in results):,} chunks, "
             f"on {results[0].where}")
    return EXIT_OK


def add_solve(sub) -> None:
    p = sub.add_parser("solve", help="solve for an input: break-even roots, integer thresholds, optima",
                       description="Without --for/--where, answer every `solve`, `maximize` and `minimize` in "
                                   "the file (in its own scenarios, or --scenario). With them, solve "
                                   "`--for INPUT --where \"LHS = RHS\"`; --min/--max give the smallest/largest "
                                   "value (an integer, for an integer input) for which the condition holds.")
    _add_common(p)
    p.add_argument("--for", dest="target", metavar="INPUT", help="the input to solve for")
    p.add_argument("--where", metavar="CONDITION", help='the condition, in plan syntax: "speedup = 1"')
    extreme = p.add_mutually_exclusive_group()
    extreme.add_argument("--min", dest="mode", action="store_const", const="min",
                         help="the smallest INPUT for which CONDITION holds (an integer, for an integer INPUT)")
    extreme.add_argument("--max", dest="mode", action="store_const", const="max",
                         help="the largest INPUT for which CONDITION holds (an integer, for an integer INPUT)")
    p.add_argument("--closed-form", action="store_true",
                   help="derive each answer's closed form over the other inputs (SymPy; slower; at most 20 s, then "
                        "the numeric answer, saying so). Every answer comes from the numeric route")
    _format(p)
    p.set_defaults(handler=cmd_solve, mode="root")


def cmd_solve(args) -> int:
    from ..language.errors import UsageError, render
    from ..outputs.views import SolveView
    from ..questions import fast

    plan = _load(args.file, args=args)
    overrides, origins = overrides_from(plan, args.sets)
    answers = fast.Answers(plan)  # SymPy only for what the numeric route does not answer, or with --closed-form
    if (args.target is None) != (args.where is None):
        raise UsageError("--for and --where go together", hint='planner solve FILE --for alpha --where "speedup = 1"')
    if args.target is not None:
        from ..questions.solve import adhoc

        questions = [adhoc(plan, args.target, args.where, args.mode)]
    else:
        if args.mode != "root":
            raise UsageError(f"--{args.mode} needs --for and --where")
        questions = fast.questions(plan)
        if not questions:
            raise UsageError(f"{plan.path} has no `solve`, `maximize` or `minimize` statements",
                             hint='ask one from the shell: planner solve FILE --for INPUT --where "LHS = RHS"')
    from ..outputs.progress import Progress
    from ..questions.every_answer import answer_all

    with Progress("solve", len(questions), "questions") as progress:
        got = answer_all(plan, questions, args.scenario, overrides, origins, closed_form=args.closed_form,
                         answers=answers, progress=progress)
    results, errors, missing = got.results, got.failed, got.missing
    view = SolveView(plan, results, errors, missing)
    if args.format != "table" or results or missing:
        emit(view, args.format)
    if args.format != "table":  # (the table says it; JSON in `no_answer`; CSV and JSONL rows are answers only)
        for line in view.no_answer():
            sys.stderr.write(line + "\n")
    for err in errors:
        sys.stderr.write(render(err) + "\n")
    # a no-answer beside answers is a finding (exit 0); nothing answered at all is what one question
    # with no answer is (its error, exit 2)
    return EXIT_BAD_INPUT if errors or (missing and not results) else EXIT_OK


def add_sensitivity(sub) -> None:
    p = sub.add_parser("sensitivity", help="elasticity of a quantity to each input it depends on",
                       description="For each input QUANTITY depends on: the elasticity (dy/dx * x/y) at the "
                                   "current values, from SymPy's derivative, sorted by magnitude.")
    _add_common(p)
    p.add_argument("name", metavar="QUANTITY", help="the quantity to analyse")
    _format(p)
    p.set_defaults(handler=cmd_sensitivity)


def cmd_sensitivity(args) -> int:
    from ..outputs.views import SensitivityView
    from ..questions.sensitivity import sensitivity

    plan = _load(args.file, args=args)
    overrides, origins = overrides_from(plan, args.sets)
    results = [sensitivity(plan, args.name, s, overrides, origins) for s in scenarios_from(plan, args.scenario)]
    emit(SensitivityView(plan, results), args.format)
    return EXIT_OK
