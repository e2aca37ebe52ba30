"""``planner explain``: one quantity, from its formula down to its inputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import sympy as sp

from ..compute.evaluation import Plan, format_value
from ..compute.closed import NoClosedForm, to_ir
from ..compute.numbers import figure, plan_styles, significant
from ..compute.symbolic import inline_inputs, loose_index, loose_note
from ..language.errors import UnknownNameError, suggest
from ..language.graph import cone


@dataclass
class Explanation:
    name: str
    kind: str
    formula: str
    location: str
    doc: Optional[str]
    tags: tuple[str, ...]
    sympy: str
    in_inputs: str
    in_inputs_ir: Any  # the formula over inputs as IR nodes (for the LaTeX printer); None: see `no_ir`
    value: str
    scenario: Optional[str]
    inputs: list[tuple[str, str]]
    used_by: list[str]
    constraints: list[str]
    scaled: bool = False  # some input is not in base units, so SymPy forms hold conversion factors
    factors: tuple[str, ...] = ()  # those conversions, in words: ``1 month = 2,628,000 s``
    no_ir: Optional[str] = None  # why the formula over inputs has no IR form (a function the language has not)
    series: Any = None  # a series: the evaluation holding its values (the outputs say its first, last and lowest)


def upstream_inputs(plan: Plan, name: str) -> list[str]:
    """Every input a quantity depends on, directly or not, in file order (an input: itself)."""
    q = plan.model.quantities
    if q[name].is_input:
        return [name]
    inputs = [n for n in cone(plan.model, [name]) if q[n].is_input]
    return sorted(inputs, key=lambda n: q[n].definition.span.start)


def explain(plan: Plan, name: str, scenario: Optional[str] = None, overrides=None, origins=None) -> Explanation:
    q = plan.model.quantities.get(name)
    if q is None and name in plan.model.answers:  # an answer: its question says how it is found
        stmt = plan.model.answers[name].statement
        raise UnknownNameError(f"`{name}` is the answer of `{stmt.span.flat}` ({stmt.span.location()}), "
                               "not a formula to explain",
                               hint=f"`planner solve {plan.path}` shows how it is found and verified, and its "
                                    f"closed form with --closed-form; `planner eval {plan.path} --only {name}` "
                                    "its value")
    if q is None:
        guess = suggest(name, plan.model.quantities)
        raise UnknownNameError(f"no quantity `{name}` in {plan.path}",
                               hint=f"did you mean `{guess}`?" if guess else None)
    ev = plan.evaluate(scenario, overrides, origins)
    used_by = [n for n in plan.definition_order() if name in plan.model.quantities[n].deps]
    node, no_ir, expr, full = None, None, None, None
    if q.per_period:  # a value per period, `previous` the period before: no formula over inputs to show
        no_ir = "a series: computed period by period, its values below"
        reduced = [name]
    else:
        if q.is_input:
            expr = full = plan.symbols[name]
        else:
            expr = plan.exprs[name]
            full = inline_inputs(plan.model, plan.symbols, plan.exprs, name)
        try:  # the formula over inputs in the IR, which the outputs print (the report's LaTeX printer)
            node = to_ir(full, frozenset(n for n, x in plan.model.quantities.items() if x.is_bool))
        except NoClosedForm as exc:
            no_ir = str(exc)
        if (loose := loose_index(full)) is not None:  # SymPy's form is wrong: none is shown
            no_ir = loose_note(loose)
        reduced = _series_reduced(plan, name)
        if reduced:  # SymPy holds a stand-in function for it: no formula over inputs to show
            no_ir = "no closed form: it reduces a series (" + ", ".join(f"`{n}`" for n in reduced) + \
                "), computed period by period"
    upstream = upstream_inputs(plan, name)
    figures = [n for n in [name, *upstream] if not plan.model.quantities[n].per_period]
    styles = plan_styles(plan, [ev], figures)  # each figure as every other output writes it

    def shown(n: str) -> str:
        unit = plan.model.quantities[n].unit_text
        return "never" if ev.is_never(n) else figure(ev.display(n), unit, styles.get(n))

    inputs = [(n, shown(n)) for n in upstream]
    used = {a for n in cone(plan.model, [name]) for a in plan.model.quantities[n].answer_deps}
    for a in plan.model.formula_answers:  # answers it uses: each a question's, shown with the question
        if a in used:
            answer = plan.model.answers[a]
            if answer.optimum:
                from .answer import objective_unit

                unit, scale = objective_unit(plan, answer.statement.objective, answer.type)
            else:
                target = plan.model.quantities[answer.target]
                scale, unit = target.display.scale, target.unit_text
            inputs.append((a, format_value(ev.answers[a] / float(scale), unit)
                           + f"  (answer of `{answer.statement.span.flat}`)"))
    return Explanation(
        name=name,
        kind="input" if q.is_input else "derived",
        formula=q.formula,
        location=q.definition.span.location(),
        doc=q.doc,
        tags=q.tags,
        sympy=f"({no_ir})" if reduced or (expr is not None and loose_index(expr)) else sp.sstr(expr),
        in_inputs=f"({no_ir})" if reduced or (full is not None and loose_index(full)) else sp.sstr(full),
        in_inputs_ir=node,
        no_ir=no_ir,
        value="" if q.per_period else shown(name),
        series=ev if q.per_period else None,
        scenario=scenario,
        inputs=inputs,
        used_by=used_by,
        constraints=[c.span.flat for c in q.definition.constraints],
        scaled=not reduced and any(plan.model.quantities[n].display.scale != 1 for n in [name, *upstream]),
        factors=() if reduced else _factors(plan, [name, *upstream]),
    )


def _series_reduced(plan: Plan, name: str) -> list[str]:
    """The series that ``name`` reduces, directly or through the figures it uses, in file order."""
    from ..language import ir

    q = plan.model.quantities
    found = {d for n in cone(plan.model, [name]) if not q[n].is_input and not q[n].per_period
             and any(isinstance(x, (ir.Reduce, ir.At)) for x in ir.walk(q[n].definition.expr))
             for d in q[n].deps if q[d].per_period}
    return sorted(found, key=lambda n: q[n].definition.span.start)


def _factors(plan: Plan, names: list[str]) -> tuple[str, ...]:
    """The display units of ``names`` that are not base units, each as its factor (``1 month = 2,628,000 s``)."""
    from ..language.units import canonical_text

    out: dict[str, str] = {}
    for n in names:
        q = plan.model.quantities[n]
        scale = q.display.scale
        if scale != 1 and q.unit_text and q.unit_text not in out:
            base = canonical_text(q.dim) if q.dim is not None else ""
            value = float(scale)
            out[q.unit_text] = f"1 {q.unit_text} = {significant(value)} {base}".rstrip()
    return tuple(out.values())
