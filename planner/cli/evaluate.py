"""`planner eval` and `planner explain`."""

from __future__ import annotations

from .common import _load, overrides_from, scenarios_from
from .emit import emit
from .options import EXIT_OK, _add_common, _format, _names


def add_eval(sub) -> None:
    p = sub.add_parser("eval", help="evaluate every quantity (per scenario)",
                       description="Evaluate every quantity, as written or per scenario, with --set overrides.")
    _add_common(p)
    p.add_argument("--only", type=_names, action="extend", metavar="NAME[,NAME...]",
                   help="show only these quantities or answers (`as NAME` of a question); a comma list, repeatable")
    p.add_argument("--all", action="store_true", dest="all_imports",
                   help="also show the imported quantities the plan does not use")
    _format(p)
    p.set_defaults(handler=cmd_eval)


def cmd_eval(args) -> int:
    from ..outputs.views import EvalView

    plan = _load(args.file, args.all_imports, args)
    overrides, origins = overrides_from(plan, args.sets)
    scenarios = scenarios_from(plan, args.scenario)
    names = plan.display_order()  # the plan's own quantities first, then the imported ones
    answers = list(plan.model.formula_answers)  # computed anyway: shown beside the quantities
    if args.only:
        from ..language.errors import UnknownNameError, suggest

        for n in args.only:
            if n not in plan.model.quantities and n not in plan.model.answers:
                guess = suggest(n, names + list(plan.model.answers))
                raise UnknownNameError(f"--only names `{n}`, which is not in {plan.path}",
                                       hint=f"did you mean `{guess}`?" if guess else None)
        names = [n for n in args.only if n in plan.model.quantities and not plan.model.quantities[n].per_period]
        answers = [n for n in args.only if n not in plan.model.quantities]
    evaluations = plan.evaluate_all(scenarios, overrides, origins)
    answered = _answers(plan, evaluations, answers, overrides, origins) if answers and args.format in ("table", "json") \
        else None
    shown = names if names or not (answers or args.only) else None
    series = None if args.only is None else [n for n in plan.series_order() if n in args.only]  # None: all
    emit(EvalView(plan, evaluations, shown, answered, series), args.format)
    return EXIT_OK


def _answers(plan, evaluations, answers, overrides, origins) -> dict:
    """The questions' answers, to show beside the quantities: each one's value per scenario in its display
    unit (the error where a scenario has none), its unit and its question as written."""
    from ..language.errors import PlanError

    source = plan.answer_source
    values: dict = {}
    for ev in evaluations:
        for a in answers:
            scale, unit = source.unit(a)
            try:
                values[(a, ev.label)] = float(source.value(a, ev.scenario, overrides, origins) / scale)
            except PlanError as err:
                values[(a, ev.label)] = err
    return {"names": answers, "values": values, "units": {a: source.unit(a)[1] for a in answers},
            "questions": {a: " ".join(source.statements[a.removesuffix(".value")].span.flat.split()) for a in answers}}


def add_explain(sub) -> None:
    p = sub.add_parser("explain", help="show a quantity's formula, the same over inputs, value and inputs",
                       description="The formula as written, the same over inputs only (user functions and "
                                   "quantities inlined, numbers and units as written) and in LaTeX, its value "
                                   "with unit, and the inputs it depends on.")
    _add_common(p)
    p.add_argument("name", metavar="NAME", help="the quantity to explain")
    p.set_defaults(handler=cmd_explain)


def cmd_explain(args) -> int:
    from ..outputs.views import ExplainView
    from ..questions.explain import explain

    plan = _load(args.file, all_imports=True, args=args)  # any quantity can be explained, used or not
    overrides, origins = overrides_from(plan, args.sets)
    scenarios = scenarios_from(plan, args.scenario)
    emit(ExplainView([explain(plan, args.name, s, overrides, origins) for s in scenarios]), "table")
    return EXIT_OK
