"""``planner explain``: one quantity, from its formula down to its inputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy as sp

from ..compute.evaluation import Plan, format_value
from ..compute.numbers import figure, plan_styles, significant
from ..compute.symbolic import inline_inputs, latex
from ..language.errors import UnknownNameError, suggest


@dataclass
class Explanation:
    name: str
    kind: str
    formula: str
    location: str
    doc: Optional[str]
    tags: tuple[str, ...]
    sympy: str
    sympy_latex: str
    in_inputs: str
    in_inputs_latex: str
    value: str
    scenario: Optional[str]
    inputs: list[tuple[str, str]]
    used_by: list[str]
    constraints: list[str]
    scaled: bool = False  # some input is not in base units, so SymPy forms hold conversion factors
    factors: tuple[str, ...] = ()  # those conversions, in words: ``1 month = 2,628,000 s``


def upstream_inputs(plan: Plan, name: str) -> list[str]:
    """Every input a quantity depends on, directly or not, in file order."""
    seen: set[str] = set()
    stack = [name]
    while stack:
        n = stack.pop()
        for d in plan.model.quantities[n].deps:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    inputs = [n for n in seen if plan.model.quantities[n].is_input]
    if plan.model.quantities[name].is_input:
        inputs = [name]
    return sorted(inputs, key=lambda n: plan.model.quantities[n].definition.span.start)


def _cone(plan: Plan, name: str) -> set[str]:
    seen: set[str] = set()
    stack = [name]
    while stack:
        for d in plan.model.quantities[stack.pop()].deps:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return seen


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
    if q.is_input:
        expr = plan.symbols[name]
        full = expr
    else:
        expr = plan.exprs[name]
        full = inline_inputs(plan.model, plan.symbols, plan.exprs, name)
    used_by = [n for n in plan.definition_order() if name in plan.model.quantities[n].deps]
    upstream = upstream_inputs(plan, name)
    styles = plan_styles(plan, [ev], [name, *upstream])  # each figure as every other output writes it

    def shown(n: str) -> str:
        unit = plan.model.quantities[n].unit_text
        return "never" if ev.is_never(n) else figure(ev.display(n), unit, styles.get(n))

    inputs = [(n, shown(n)) for n in upstream]
    used = {a for n in [name, *plan.model.quantities] if n == name or n in _cone(plan, name)
            for a in plan.model.quantities[n].answer_deps}
    for a in plan.model.formula_answers:  # answers it uses: each a question's, shown with the question
        if a in used:
            answer = plan.model.answers[a]
            if answer.optimum:
                from .solve import objective_unit

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
        sympy=sp.sstr(expr),
        sympy_latex=latex(expr),
        in_inputs=sp.sstr(full),
        in_inputs_latex=latex(full),
        value=shown(name),
        scenario=scenario,
        inputs=inputs,
        used_by=used_by,
        constraints=[c.span.flat for c in q.definition.constraints],
        scaled=any(plan.model.quantities[n].display.scale != 1 for n in [name, *upstream_inputs(plan, name)]),
        factors=_factors(plan, [name, *upstream_inputs(plan, name)]),
    )


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
