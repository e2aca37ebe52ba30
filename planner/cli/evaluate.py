"""`planner eval` and `planner explain`."""

from __future__ import annotations

from .common import _load, _width, overrides_from, scenarios_from
from .options import EXIT_OK, _add_common, _format, _names
from .output import write_output


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
        names = [n for n in args.only if n in plan.model.quantities]
        answers = [n for n in args.only if n not in plan.model.quantities]
    evaluations = plan.evaluate_all(scenarios, overrides, origins)
    text = _eval_output(args.format, plan, evaluations, names) if names or not answers else ""
    if answers and args.format in ("table", "json"):
        text = _with_answers(args.format, plan, evaluations, answers, text, overrides, origins)
    write_output(text)
    return EXIT_OK


def _with_answers(fmt: str, plan, evaluations, answers, text: str, overrides, origins) -> str:
    """The questions' answers beside the quantities: a table under the text's, or ``answers`` (display
    units), ``answer_units`` and ``answer_questions`` in the JSON. A scenario without an answer says so."""
    from ..compute.evaluation import format_value
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
    question = {a: " ".join(source.statements[a.removesuffix(".value")].span.flat.split()) for a in answers}
    if fmt == "json":
        import json

        from ..outputs.terminal import dumps, json_number

        data = json.loads(text) if text else {"format": "planner.eval/1", "file": plan.path,
                                              "scenarios": [ev.label for ev in evaluations]}
        data["answers"] = {ev.label: {a: (json_number(v) if not isinstance(v, PlanError) else None)
                                      for a in answers for v in [values[(a, ev.label)]]} for ev in evaluations}
        data["answer_units"] = {a: source.unit(a)[1] for a in answers}
        data["answer_questions"] = question
        return dumps(data)
    from ..outputs.terminal import fit

    rows = []
    for a in answers:
        unit = source.unit(a)[1]
        cells = [a] + [("no answer" if isinstance(v, PlanError) else format_value(v, ""))
                       for ev in evaluations for v in [values[(a, ev.label)]]]
        rows.append(cells + [unit, question[a]])
    headers = ["answer"] + [ev.label for ev in evaluations] + ["unit", "question"]
    table = fit(rows, headers, ["left"] + ["right"] * len(evaluations) + ["left", "left"], _width(), keep=1,
                tail=2, wrap=len(headers) - 1, what="scenarios")
    return (text.rstrip("\n") + "\n\n" if text else "") + table + "\n"


def _eval_output(fmt: str, plan, evaluations, names) -> str:
    from ..language.live import plain
    from ..outputs.terminal import dumps, eval_csv, eval_json, eval_jsonl, eval_markdown, eval_table

    if fmt == "json":
        return dumps(eval_json(plan, evaluations, names))
    if fmt == "csv":
        return eval_csv(plan, evaluations, names)
    if fmt == "jsonl":
        return eval_jsonl(plan, evaluations, names)
    if fmt == "markdown":
        from ..outputs.markup import text

        return f"# {text(plain(plan.title))}\n\n{eval_markdown(plan, evaluations, names)}"
    from ..outputs.terminal import wrap_text

    width = _width()
    return f"{wrap_text(plain(plan.title), width)}\n\n{eval_table(plan, evaluations, names, width)}"


def add_explain(sub) -> None:
    p = sub.add_parser("explain", help="show a quantity's formula, SymPy form, value and inputs",
                       description="The formula as written, its SymPy form, the same over inputs only, "
                                   "its value with unit, and the inputs it depends on.")
    _add_common(p)
    p.add_argument("name", metavar="NAME", help="the quantity to explain")
    p.set_defaults(handler=cmd_explain)


def cmd_explain(args) -> int:
    from ..outputs.terminal import explain_text, wrap_text
    from ..questions.explain import explain

    plan = _load(args.file, all_imports=True, args=args)  # any quantity can be explained, used or not
    overrides, origins = overrides_from(plan, args.sets)
    scenarios = scenarios_from(plan, args.scenario)
    parts = [explain_text(explain(plan, args.name, s, overrides, origins)) for s in scenarios]
    write_output(wrap_text("\n\n".join(parts), _width()))
    return EXIT_OK
