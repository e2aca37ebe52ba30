"""``planner explain``: one quantity, from its formula down to its inputs."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from ..compute.evaluation import Plan, format_value
from ..compute.numbers import figure, plan_styles
from ..language import ir
from ..language.errors import UnknownNameError, suggest
from ..language.graph import cone
from ..language.limits import deep
from ..language.model import Model
from ..language.text import formula_text

MAX_SHOWN = 2_000  # IR nodes of a formula over inputs that explain writes out (a diamond doubles at each level)


@dataclass
class Explanation:
    name: str
    kind: str
    formula: str
    location: str
    doc: Optional[str]
    tags: tuple[str, ...]
    in_inputs: str  # the formula over inputs as plan text (or why there is none, in brackets)
    in_inputs_ir: Any  # the formula over inputs as IR nodes (for the LaTeX printer); None: see `no_ir`
    value: str
    scenario: Optional[str]
    inputs: list[tuple[str, str]]
    used_by: list[str]
    constraints: list[str]
    no_ir: Optional[str] = None  # why there is no formula over inputs to show (a series; too long)
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
    used_by = [n for n in plan.definition_order(series=True) if name in plan.model.quantities[n].deps]
    node, no_ir = None, None
    if q.per_period:  # a value per period, `previous` the period before: no formula over inputs to show
        no_ir = "a series: computed period by period, its values below"
    else:
        node = deep(over_inputs, plan.model, name)
        if _size(node, MAX_SHOWN) > MAX_SHOWN:
            derived = [f"`{d}`" for d in q.deps if not plan.model.quantities[d].is_input]
            node, no_ir = None, (f"too long over its inputs, over {MAX_SHOWN:,} terms: see "
                                 + (", ".join(derived[:6]) + (", ..." if len(derived) > 6 else "") or "its formula"))
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
        in_inputs=f"({no_ir})" if node is None else deep(formula_text, node),
        in_inputs_ir=node,
        no_ir=no_ir,
        value="" if q.per_period else shown(name),
        series=ev if q.per_period else None,
        scenario=scenario,
        inputs=inputs,
        used_by=used_by,
        constraints=[c.span.flat for c in q.definition.constraints],
    )


def over_inputs(model: Model, name: str) -> ir.Expr:
    """``name``'s formula written over inputs: each derived quantity it uses replaced by its formula and each
    call of a user function by its body (:func:`~planner.language.ir.inline`), the plan's literals as written
    (``1 month``, ``3.2 kUSD``). Series and answers stay names. Each quantity is expanded once, dependencies
    first (no recursion along a chain of formulas), and shared where it is used again."""
    q = model.quantities
    done: dict[str, ir.Expr] = {}

    def expand(e: ir.Expr, env: dict) -> ir.Expr:
        cls = e.__class__
        if cls is ir.Name:
            if e.name in env:  # a parameter (its argument, already over inputs) or an aggregate's variable
                return env[e.name]
            x = q.get(e.name)
            if x is None or x.is_input or x.per_period:
                return e
            if e.name not in done:
                done[e.name] = expand(x.definition.expr, {})
            return done[e.name]
        if cls is ir.Call and e.func in model.functions:
            body, inner = ir.inline(model.functions[e.func], e, lambda a: expand(a, env),
                                    lambda d, bound: expand(d, bound))
            return expand(body, inner)
        if cls is ir.Aggregate:
            values = replace(e.values, items=tuple(expand(i, env) for i in e.values.items))
            var = e.var
            taken = {n.name for v in env.values() for n in ir.free_names(v)}
            while var in taken:  # an argument holds a name the variable would capture: the variable renamed
                var += "2"
            body = expand(e.body, {**env, e.var: ir.Name(var, e.var_span)})
            return ir.Aggregate(e.op, var, values, body, e.span, e.name_span, e.var_span)
        out = ir.map_children(e, lambda c: expand(c, env))
        if cls is ir.Call and e.over is not None and e.over[0] is not None:  # `npv(r, f(m) for m in ...)`: printed
            var, values, body = e.over  # from its range, whose formula goes over inputs too
            values = replace(values, items=tuple(expand(i, env) for i in values.items))
            out = replace(out, over=(var, values, expand(body, {**env, var: ir.Name(var, body.span)})))
        if cls is ir.Call and out.func == "if" and len(out.args) == 3 and out.args[0].value.__class__ is ir.Bool \
                and not any(a.name for a in out.args):
            # a condition a default argument settles (`if(false, bias, 0)` of `qkv_bias = false`): its branch
            return out.args[1 if out.args[0].value.value else 2].value
        if cls is ir.Binary and out.op in (ir.BinOp.ADD, ir.BinOp.SUB):  # ... and the zero it leaves added
            if _zero(out.right):
                return out.left
            if out.op is ir.BinOp.ADD and _zero(out.left):
                return out.right
        return out

    for n in cone(model, [name]):
        if not q[n].is_input and not q[n].per_period and n not in done:
            done[n] = expand(q[n].definition.expr, {})
    return done[name] if name in done else ir.Name(name, q[name].definition.name_span)  # an input: itself


def _zero(e: ir.Expr) -> bool:
    return e.__class__ is ir.Number and e.value == 0


def _size(e: ir.Expr, cap: int) -> int:
    """The nodes of ``e`` written out (a node shared by two parents counts twice), counted up to just past
    ``cap``: bottom-up over the shared nodes, without recursion."""
    sizes: dict[int, int] = {}
    stack = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in sizes:
            continue
        kids = ir.children(node)
        if ready:
            sizes[id(node)] = min(cap + 1, 1 + sum(sizes[id(c)] for c in kids))
            if sizes[id(node)] > cap:
                return cap + 1
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in kids if id(c) not in sizes)
    return sizes[id(e)]
