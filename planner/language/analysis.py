"""Static analysis: names, duplicates, arity, recursion, cycles, scenarios, questions.

Dimensions and types are inferred by :mod:`planner.language.dims`.

Turns the IR into a :class:`~planner.language.model.Model`. Every error found is
collected with its span; the pass reports all of them at once.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Optional

from . import ir, uncertain
from .aggregates import Ranges
from .functions import BUILTINS, FUNCTIONS
from .dims import (  # noqa: F401  (unit_of is re-exported)
    Poisoned,
    Typer,
    dim_text,
    example_unit,
    same_dim,
    unit_of,
)
from .errors import (
    PlanWarning,
    ArityError,
    ConstraintError,
    CycleError,
    DisplayUnitError,
    DuplicateError,
    DistributionError,
    ErrorSink,
    KindError,
    Label,
    LimitError,
    OverrideError,
    PlanError,
    RecursionError_,
    ScenarioError,
    UnitError,
    UnknownNameError,
    did_you_mean,
    suggest,
)
from . import live
from . import series as series_rules
from .graph import topological_order
from .limits import MAX_EXPANDED_DEPTH, MAX_EXPANSION
from .model import Answer, Bound, Model, Quantity, ScenarioModel, Type
from .units import BUILTIN_UNITS, DIMENSIONLESS, TIME, Unit, UnitTable, canonical_text

RESERVED_SCENARIOS = {"all", "base"}


class Analyzer:
    def __init__(self, plan: ir.PlanIR) -> None:
        self.plan = plan
        self.units = UnitTable()
        self.sink = ErrorSink()
        self.warnings: list[PlanWarning] = []  # found while analysing: old declarations, deprecated names
        self.defs: dict[str, ir.Definition] = {}
        self.functions: dict[str, ir.FunctionDef] = {}
        self.types: dict[str, Type] = {}
        self.function_refs: dict[str, frozenset[str]] = {}
        self.typer = Typer(self.units, self.defs, self.functions, self._bind)
        self.period_unit: Optional[Unit] = None  # the unit the periods count in (`month`), when written
        self.periods: Optional[ir.Periods] = None  # set by :meth:`run`
        self.questions = {s.alias: s for s in plan.statements  # question answers by name, for messages
                          if isinstance(s, (ir.Solve, ir.Optimize)) and s.alias}

    # ---- entry ---------------------------------------------------------------
    def run(self) -> Model:
        statements = self.plan.statements
        self._units([s for s in statements if isinstance(s, ir.UnitDecl)])
        self._collect(statements)
        self._recursion()
        self.sink.raise_if_any()
        self.answer_names = self._answer_statements()  # (before the periods: an error there may name one)
        self.periods = self._periods(statements)
        used: dict[str, tuple[set[str], list[str]]] = {}  # a definition's names and the functions it calls
        for name, d in self.defs.items():
            used[name] = self._resolve(d.expr, frozenset(), extra=self.answer_names)
            for c in d.constraints:
                if c.condition is not None:
                    self._resolve(c.condition, frozenset())
        for f in self.functions.values():
            params = frozenset(p.name for p in f.params)
            self._resolve(f.body, params)
            for p in f.params:
                if p.default is not None:
                    self._resolve(p.default, params)
        self.sink.raise_if_any()
        self._expansion(statements)
        self.sink.raise_if_any()
        refs = {name: names.union(*map(self._function_refs, calls)) if calls else names
                for name, (names, calls) in used.items()}  # (what _refs gives, from the walk _resolve made)
        known = set(self.defs) | set(self.answer_names)
        graph = {name: tuple(sorted(r & known)) for name, r in refs.items()}
        graph.update(self._answer_graph())
        spans = {n: d.name_span for n, d in self.defs.items()}
        spans.update({a: s.span for a, s in self.answer_names.items()})
        try:
            order_all = topological_order(graph, spans, self._ref_span)
        except CycleError as err:
            at = series_rules.cycle_through_at(getattr(err, "path", []), self.defs)
            if at is not None:
                raise at from None
            through = [a for a in self.answer_names if f"`{a}` uses" in " ".join(lab.text for lab in err.labels)
                       or err.label.startswith(f"`{a}` uses")]
            if through:
                err.hint = (f"`{through[0]}` is a question's answer: the formulas its question uses cannot depend on "
                            "it; use the answer in other formulas only")
            raise
        order = [n for n in order_all if n in self.defs]
        quantities: dict[str, Quantity] = {}
        answer_types: dict[str, Type] = {}
        for name in self._typing_order(graph, order_all):
            if name in self.answer_names:
                t = self._answer_type(name)
                if t is not None:
                    self.types[name] = answer_types[name] = t
                continue
            d = self.defs[name]
            if d.uncertain is not None and None in [self._infer(p, {}) for p in d.uncertain.params]:
                continue  # a parameter's own error (`normal(1e400, 1)`), for every question alike
            t = self._infer(d.expr, {})
            if t is None:
                continue
            self.types[name] = t
        self.sink.raise_if_any()
        answer_rank = {a: i for i, a in enumerate(n for n in order_all if n in self.answer_names)}
        for name in order:
            deps = tuple(sorted(n for n in refs[name] if n in self.defs))
            quantities[name] = self._quantity(self.defs[name], deps)
            if answer_rank:
                quantities[name].answer_deps = tuple(sorted((a for a in refs[name] if a in answer_rank),
                                                            key=answer_rank.get))
        self.sink.raise_if_any()
        for q in quantities.values():  # the inputs' bounds first: a series' help sizes a range from them
            self._constraints(q, quantities)
        series_rules.mark(quantities, order, self._function_refs, self.functions, self.periods, self.sink)
        if self.periods is not None:
            for s in statements:
                if isinstance(s, (ir.Check, ir.Solve)):
                    series_rules.check_condition(s.condition, quantities, self.sink,
                                                 "a check" if isinstance(s, ir.Check) else "a solve's condition")
        self.sink.raise_if_any()
        for q in quantities.values():  # an uncertain input's distribution inside its constraints, for every question
            if q.is_input and q.definition.uncertain is not None and not q.is_bool:
                try:
                    uncertain.domain(q, [float(self.typer.type(p, {}, self.types.get).const)
                                         for p in q.definition.uncertain.params])
                except PlanError as err:
                    self.sink.add(err)
        scenarios, axes = self._scenarios(statements, quantities)
        model = Model(
            plan=self.plan, quantities=quantities, order=order, functions=self.functions,
            scenarios=scenarios, axes=axes, units=self.units,
            sweeps=[s for s in statements if isinstance(s, ir.Sweep)],
            solves=[s for s in statements if isinstance(s, ir.Solve)],
            optimizes=[s for s in statements if isinstance(s, ir.Optimize)],
            checks=[s for s in statements if isinstance(s, ir.Check)],
            warnings=self.warnings, periods=self.periods,
        )
        for name in order_all:
            if name in answer_types:
                stmt = self.answer_names[name]
                direct = graph[name]
                model.answers[name] = Answer(name, stmt, answer_types[name],
                                             tuple(n for n in direct if n in quantities),
                                             tuple(n for n in direct if n in self.answer_names),
                                             optimum=name.endswith(".value"))
        self._constraints_without_answers(model)
        self._questions(model)
        live.check(self.plan.prose, model, self.units, self.sink, self.warnings)  # `{name}` in titles, notes and docs
        self.sink.raise_if_any()
        if self.typer.saw_aggregate:
            self._ranges(model)
            self.sink.raise_if_any()
        return model

    def _periods(self, statements) -> Optional[ir.Periods]:
        """The plan's periods (one statement at most), and the type of `period` they give."""
        found = [s for s in statements if isinstance(s, ir.Periods)]
        for extra in found[1:]:
            self.sink.add(DuplicateError("a plan declares its periods once", extra.span, label="declared again here",
                                         labels=[Label(found[0].span, "first declared here")]))
        if not found:
            return None
        periods = found[0]
        for item in periods.values.items:
            self._resolve(item, frozenset())
        self.sink.raise_if_any()
        from types import SimpleNamespace

        try:
            t = self.typer.var_type(SimpleNamespace(values=periods.values), {}, self._period_lookup)
        except PlanError as err:
            self.sink.add(err)
            return periods
        self.typer.period = Type("num", t.dim if t.dim is not None else DIMENSIONLESS, None, t.unit)
        start = periods.values.items[0]
        written = start.unit if isinstance(start, ir.Number) else None
        if written is not None:
            self.period_unit = unit_of(written, self.units)
        return periods

    def _period_lookup(self, name: str) -> Optional[Type]:
        """The type of a name the periods' ends use (an input, typed on its own)."""
        if name not in self.types and name in self.defs and self.defs[name].is_input:
            t = self._infer(self.defs[name].expr, {})
            if t is not None:
                self.types[name] = t
        return self.types.get(name)

    # ---- answers used as quantities -------------------------------------------------
    def _answer_statements(self) -> dict[str, ir.Statement]:
        """``as NAME`` of every solve and maximize/minimize (and ``NAME.value`` of the latter) that does not
        clash with a quantity (a clash is reported with the questions)."""
        out: dict[str, ir.Statement] = {}
        for s in sorted(self.questions.values(), key=lambda s: s.span.start):
            if s.alias in self.defs or s.alias in out:
                continue
            out[s.alias] = s
            if isinstance(s, ir.Optimize):
                out[s.alias + ".value"] = s
        return out

    def _question_exprs(self, s) -> list[ir.Expr]:
        return [s.condition] if isinstance(s, ir.Solve) else [s.objective]

    def _answer_graph(self) -> dict[str, tuple[str, ...]]:
        """What each answer depends on: the names its question uses, and its input."""
        known = set(self.defs) | set(self.answer_names)
        out = {}
        for name, s in self.answer_names.items():
            used = set()
            for e in self._question_exprs(s):
                used |= self._refs(e, frozenset())
            target = s.target if isinstance(s, ir.Solve) else s.over
            used.add(target)
            out[name] = tuple(sorted(used & known))
        return out

    def _answer_type(self, name: str) -> Optional[Type]:
        s = self.answer_names[name]
        target = s.target if isinstance(s, ir.Solve) else s.over
        if name.endswith(".value"):
            return self._infer(s.objective, {})
        t = self.types.get(target)
        return None if t is None else Type("num", t.dim)

    def _constraints_without_answers(self, model: Model) -> None:
        """A constraint is checked before a question is answered, so it cannot depend on an answer."""
        for q in model.quantities.values():
            for c in q.definition.constraints:
                if c.condition is None:
                    continue
                names = {n.name for n in ir.free_names(c.condition)}
                through = [n for n in names if n in model.quantities and model.answer_cone(n) & set(model.answers)]
                direct = [n for n in names if n in model.answers]
                if not (through or direct):
                    continue
                first = (direct or through)[0]
                answer = first if first in model.answers else \
                    next(a for a in model.answers if a in model.answer_cone(first))
                self.sink.add(ConstraintError(
                    f"the constraint `{c.condition.span.flat}` depends on the answer `{answer}`", c.span,
                    label="uses a question's answer" + ("" if first == answer else f" through `{first}`"),
                    hint="constraints are checked before questions are answered; check the answer with "
                         f"`check {answer} ...` instead"))

    # ---- aggregates --------------------------------------------------------------
    def ranges(self, model: Model) -> Ranges:
        return Ranges(model.quantities, self.functions, lambda u: unit_of(u, self.units), model.answers)

    def _ranges(self, model: Model) -> None:
        """Every range of every aggregate the plan evaluates has a step and a largest number of values
        (through user functions, with the bounds of each call's arguments)."""
        ranges = self.ranges(model)
        exprs = [q.definition.expr for q in model.quantities.values()]
        exprs += [c.condition for q in model.quantities.values() for c in q.definition.constraints
                  if c.condition is not None]
        exprs += [s.condition for s in model.solves] + [s.objective for s in model.optimizes]
        exprs += [c.condition for c in model.checks]
        seen: set = set()
        for e in exprs:
            try:
                self.check_ranges(ranges, e)
            except PlanError as err:
                key = (err.span, err.message)
                if key not in seen:
                    seen.add(key)
                    self.sink.add(err)

    def check_ranges(self, ranges: Ranges, expr: ir.Expr) -> None:
        """Raise the first range of ``expr`` (functions it calls included) without a bound."""
        stack: list[tuple[ir.Expr, dict, int, tuple]] = [(expr, {}, 0, ())]  # outer: the ranges around
        while stack:
            node, scope, depth, outer = stack.pop()
            if isinstance(node, ir.Aggregate):
                n = ranges.terms(node, scope, ranges.step(node.values, self._const).value)
                ranges.nested(node, n, outer)
                inner = dict(scope)
                inner[node.var] = ranges.var_interval(node, scope)
                stack.extend((i, scope, depth, outer) for i in node.values.items)
                stack.append((node.body, inner, depth, outer + ((node.values.span, n),)))
                continue
            if isinstance(node, ir.Call) and node.func in self.functions and depth < 64:
                body, inner = ir.inline(self.functions[node.func], node, lambda a: (a, scope),
                                        lambda d, bound: (d, bound))
                stack.append((body, inner, depth + 1, outer))
            stack.extend((c, scope, depth, outer) for c in ir.children(node))

    # ---- declarations ------------------------------------------------------
    def _units(self, decls: list[ir.UnitDecl]) -> None:
        """Declared units, in any order: a derived unit waits for the units it uses."""
        pending: list[ir.UnitDecl] = []
        for decl in decls:
            if decl.name in self.units.declared:
                first = self.units.declared[decl.name]
                if first.span.source is not decl.span.source and \
                        first.span.flat == decl.span.flat:
                    continue  # the same declaration reached through an import
                self.sink.add(DuplicateError(f"unit `{decl.name}` is declared twice", decl.name_span,
                                             labels=[Label(first.name_span, "first declared here")]))
                continue
            if decl.name in self.units.units and decl.definition is None:
                # `unit W` from a plan written before W was built in: the built-in is the same
                # watt (a base unit of its own could not meet the library's figures in W)
                builtin = self.units.units[decl.name]
                self.warnings.append(PlanWarning(
                    f"`{decl.name}` is a built-in unit now{_aside(decl.name, builtin)}: this declaration is ignored",
                    decl.name_span, hint=f"remove `unit {decl.name}`; the built-in gives the same figures"))
                self.units.declared[decl.name] = decl
                continue
            self.units.declared[decl.name] = decl
            if decl.definition is None:
                self.units.declare_base(decl.name)
            else:
                pending.append(decl)
        while pending:
            def uses(d: ir.UnitDecl):
                for n in ir.walk(d.definition):
                    if isinstance(n, ir.Number) and n.unit:
                        yield from (f.name for f in n.unit.factors)
                    elif isinstance(n, ir.Name) and n.name not in self.defs:
                        yield n.name

            waiting = {d.name for d in pending}  # `unit TB = 1000 GB` waits for this plan's own GB
            ready = [d for d in pending
                     if all(self.units.lookup(u) is not None and u not in waiting for u in uses(d))]
            if not ready:  # unknown units (or a cycle): report them
                ready = pending
            for decl in ready:
                pending.remove(decl)
                t = self._infer(ir.transform(decl.definition, self._unit_name), {})
                if t is None:
                    continue
                if t.const is None or t.is_bool:
                    self.sink.add(UnitError(f"unit `{decl.name}` must be defined by a constant such as `1000 USD`",
                                            decl.definition.span))
                    continue
                unit = Unit(t.const, t.dim or DIMENSIONLESS)
                builtin = BUILTIN_UNITS.get(decl.name)
                if builtin is not None:
                    if builtin.scale == unit.scale and builtin.dim == unit.dim:
                        continue  # `unit kW = 1000 W`: exactly the built-in; nothing changes
                    # A plan written before the unit was built in keeps its own meaning, in its own file
                    # only: an import (the library's figures in GB) keeps the built-in one.
                    if not self.units.local:
                        self.units.root = self.plan.source_name
                        self.units.files = frozenset(st.span.source.name for st in self.plan.statements)
                    self.units.override(decl.name, unit, decl.span.source)
                    self.warnings.append(PlanWarning(
                        f"`{decl.name}` is a built-in unit ({_meaning(builtin)}); this file declares it as "
                        f"{_meaning(unit)}, and its own `{decl.name}` is used in this file "
                        f"(imports keep the built-in)", decl.name_span,
                        hint=f"rename this unit (`{decl.name}_own`, say) so a reader sees which is meant, or "
                             f"remove the declaration to use the built-in `{decl.name}`"))
                    continue
                self.units.declare(decl.name, unit)

    def _unit_name(self, node: ir.Expr) -> ir.Expr:
        """In a unit declaration a bare unit name is one of that unit: `unit J = W*s`."""
        if isinstance(node, ir.Name) and node.name not in self.defs and self.units.lookup(node.name) is not None:
            return ir.Number(Fraction(1), ir.UnitExpr((ir.UnitFactor(node.name, 1, node.span),), node.span),
                             node.span)
        return node

    def _collect(self, statements: Iterable[ir.Statement]) -> None:
        seen: dict[str, ir.Span] = {}

        def claim(name: str, span, what: str) -> bool:
            if name in BUILTINS and (what == "function" or FUNCTIONS[name].reserved):
                self.sink.add(DuplicateError(f"`{name}` is a built-in function and cannot be redefined", span,
                                             hint=f"rename the {what}"))
                return False
            if name in seen:
                self.sink.add(DuplicateError(
                    f"`{name}` is defined twice", span, label="defined again here",
                    labels=[Label(seen[name], "first defined here")],
                    hint="remove one definition, or use a scenario to try another value",
                ))
                return False
            seen[name] = span
            return True

        for s in statements:
            if isinstance(s, ir.Definition) and claim(s.name, s.name_span, "quantity"):
                self.defs[s.name] = s
            elif isinstance(s, ir.FunctionDef) and claim(s.name, s.name_span, "function"):
                self.functions[s.name] = s
                names: dict[str, ir.Param] = {}
                for p in s.params:
                    if p.name in names:
                        self.sink.add(DuplicateError(f"parameter `{p.name}` appears twice in `{s.name}`", p.span,
                                                     labels=[Label(names[p.name].span, "first here")]))
                    names[p.name] = p
                seen_default = False
                for p in s.params:
                    if p.default is not None:
                        seen_default = True
                    elif seen_default:
                        self.sink.add(ArityError(f"parameter `{p.name}` without a default follows one with a default",
                                                 p.span, hint="put parameters with defaults last"))

    def _recursion(self) -> None:
        calls = {
            name: sorted({n.func for n in self._walk_fn(f) if isinstance(n, ir.Call) and n.func in self.functions})
            for name, f in self.functions.items()
        }
        state: dict[str, int] = {}

        def visit(name: str, path: list[str]) -> bool:
            state[name] = 1
            for callee in calls[name]:
                if state.get(callee) == 1:
                    cycle = path[path.index(callee):] + [callee] if callee in path else [name, callee]
                    f = self.functions[callee]
                    site = next(n for n in self._walk_fn(self.functions[name])
                                if isinstance(n, ir.Call) and n.func == callee)
                    self.sink.add(RecursionError_(
                        "recursive function: " + " -> ".join(cycle), site.span,
                        label=f"`{name}` calls `{callee}`", labels=[Label(f.name_span, f"`{callee}` defined here")],
                        hint="functions are expanded inline, so they cannot call themselves; "
                             "unroll the recursion by hand",
                    ))
                    return True
                if state.get(callee) is None and visit(callee, path + [callee]):
                    return True
            state[name] = 2
            return False

        for name in self.functions:
            if state.get(name) is None and visit(name, [name]):
                return

    # ---- how big user functions expand ------------------------------------------------
    def _expansion(self, statements) -> None:
        """Refuse a call whose inline expansion would pass MAX_EXPANSION nodes or MAX_EXPANDED_DEPTH
        levels, before anything expands it: forty levels of `f_k(x) = f_{k-1}(x) + f_{k-1}(x)` are
        2^40 nodes. Each function's expansion is a linear form over its arguments' sizes (and a
        max-plus form over their depths), computed once, so this costs the size of the plan."""
        if not self.functions:
            return
        forms: dict[str, _Form] = {}
        for s in statements:
            for expr in _expressions(s):
                for node in ir.walk(expr):
                    if not (isinstance(node, ir.Call) and node.func in self.functions):
                        continue
                    form = self._form(node, frozenset(), forms)
                    if form.size > MAX_EXPANSION or form.depth > MAX_EXPANDED_DEPTH:
                        what = (f"{form.size:,} nodes (the limit is {MAX_EXPANSION:,})" if form.size > MAX_EXPANSION
                                else f"{form.depth:,} levels deep (the limit is {MAX_EXPANDED_DEPTH:,})")
                        self.sink.add(LimitError(
                            f"calling `{node.func}` here expands to {what}", node.span,
                            label="functions are expanded inline",
                            hint="a function that calls another several times grows with every level; "
                                 "compute the shared part once as a quantity and use it"))
                        break  # one error per expression (its inner calls are part of it)

    def _form(self, e: ir.Expr, params: frozenset[str], forms: dict[str, "_Form"]) -> "_Form":
        if isinstance(e, ir.Name) and e.name in params:
            return _Form(0, {e.name: 1}, 0, {e.name: 0})
        if isinstance(e, ir.Call) and e.func in self.functions:
            f = self.functions[e.func]
            body = self._function_form(f, forms)
            def default(d, bound):  # a default is expanded where it is used, over the earlier arguments
                return _Form(1, {}, 1, {}) if d is None else self._form(d, frozenset(bound), forms).substitute(bound)
            _, args = ir.inline(f, e, lambda a: self._form(a, params, forms), default)
            return body.substitute(args)
        parts = [self._form(c, params, forms) for c in ir.children(e)]
        return _Form.node(parts)

    def _function_form(self, f: ir.FunctionDef, forms: dict[str, "_Form"]) -> "_Form":
        if f.name not in forms:
            forms[f.name] = self._form(f.body, frozenset(p.name for p in f.params), forms)
        return forms[f.name]

    @staticmethod
    def _walk_fn(f: ir.FunctionDef):
        yield from ir.walk(f.body)
        for p in f.params:
            if p.default is not None:
                yield from ir.walk(p.default)

    # ---- names -------------------------------------------------------------
    def _resolve(self, expr: ir.Expr, params: frozenset[str], allow_refs: bool = False,
                 extra: Iterable[str] = ()) -> tuple[set[str], list[str]]:
        """Report the names ``expr`` uses that are not known; and return them all as :meth:`_refs`
        finds them, but for the user functions called, listed (their own names come from
        :meth:`_function_refs`, once every function is resolved)."""
        extra = extra if isinstance(extra, (frozenset, dict)) else frozenset(extra)
        defs = self.defs
        names: set[str] = set()
        calls: list[str] = []
        for node, bound in ir.walk_scoped(expr):
            if isinstance(node, ir.Name):
                name = node.name
                if name in bound:
                    continue
                names.add(name)
                if name in defs and name not in params and name not in extra:
                    self._deprecated(name, node.span)
                if name in params or name in defs or name in extra:
                    continue
                err = self._unknown(name, node.span, params | frozenset(extra) | bound)
                owner = next((n for n in ir.walk(expr) if isinstance(n, ir.Aggregate) and n.var == node.name), None)
                if owner is not None:
                    err.hint = (f"`{node.name}` is the variable of `{owner.op.value}(...)`: it is known inside it "
                                "only")
                    err.labels.append(Label(owner.var_span, f"defined here, for this `{owner.op.value}` only"))
                self.sink.add(err)
            elif isinstance(node, ir.Aggregate) and node.written_var is not None:
                self._shadow(node, params | bound)
            elif isinstance(node, ir.Previous) and node.name not in defs:
                self.sink.add(self._unknown(node.name, node.name_span, params | frozenset(extra) | bound))
            elif isinstance(node, ir.ScenarioRef):
                if not allow_refs:
                    self.sink.add(ScenarioError(
                        "`name@scenario` can only be used in `check` statements", node.span,
                        hint="a formula is evaluated in each scenario; compare scenarios in a check"))
                elif node.name in self.answer_names:  # `best@large`: answers are not quantities
                    at = node.scenario if node.scenario.isidentifier() else f'"{node.scenario}"'
                    self.sink.add(UnknownNameError(
                        f"`{node.name}` is a question's answer: `@{at}` reads a quantity only", node.span,
                        label="a question's answer", hint=(
                            f"an answer is worked out in the scenario its check runs in: write "
                            f"`check {node.name} ... in {at}`")))
                elif node.name not in self.defs:
                    self.sink.add(self._unknown(node.name, node.span, frozenset()))
            elif isinstance(node, ir.Call):
                self._check_call(node)
                if node.func in self.functions:
                    calls.append(node.func)
        return names, calls

    def _deprecated(self, name: str, span) -> None:
        """A warning where a plan uses a quantity another file tags ``[deprecated "what to write"]``."""
        d = self.defs[name]
        if span.source is d.span.source or span.source.name == d.span.source.name:
            return
        for tag in d.tags:
            if tag.text == "deprecated" or tag.text.startswith("deprecated:"):
                advice = tag.text.partition(":")[2].strip()
                if not any(w.span == span for w in self.warnings):
                    self.warnings.append(PlanWarning(f"`{name}` is deprecated" + (f": {advice}" if advice else ""),
                                                     span, family="deprecated"))
                return

    def _shadow(self, agg: ir.Aggregate, params: frozenset[str]) -> None:
        """An aggregate's variable may not hide a quantity, a parameter or an enclosing variable."""
        var = agg.var
        if var in params:
            what = "an enclosing variable or a parameter"
            labels = []
        elif var in self.defs:
            what = "the quantity"
            labels = [Label(self.defs[var].name_span, "defined here")]
        else:
            return
        self.sink.add(DuplicateError(
            f"the variable `{var}` of `{agg.op.value}` hides {what} `{var}`", agg.var_span,
            label="hides another name", labels=labels,
            hint=f"name the variable of `{agg.op.value}` otherwise, such as `{var}2` or `k`"))

    def _unknown(self, name: str, span, params: frozenset[str]) -> PlanError:
        pool = set(self.defs) | set(params)
        if self.periods is not None:  # `previus`: the words of a plan with periods
            pool |= {"period", "previous"}
        guess = suggest(name, pool)
        hint = did_you_mean(name, guess)
        if name in self.functions:
            hint = f"`{name}` is a function: call it as `{name}(...)`"
        elif name in BUILTINS:
            hint = f"`{name}` is a built-in function: call it as `{name}(...)`"
        elif self.units.lookup(name) is not None and guess is None:
            hint = f"`{name}` is a unit; units follow a number, as in `1 {name}`"
        elif name in self.questions or name in self.answer_names:  # `best` or `best.value`
            hint = (f"`{name}` is a question's answer: use it in a formula, a question or a check, or alone as a "
                    f"`with` value (`with x = {name}`); constraints and scenarios take constants and inputs only")
            return UnknownNameError(f"`{name}` cannot be used here", span, label="a question's answer", hint=hint)
        elif name.endswith(".value") and name[:-6] in self.questions:
            what = "a `solve`" if isinstance(self.questions[name[:-6]], ir.Solve) else "this question"
            hint = (f"`.value` is the optimum of a `maximize`/`minimize`; `{name[:-6]}` answers {what}: "
                    f"use `{name[:-6]}` itself")
        return UnknownNameError(f"unknown name `{name}`", span, label="not defined in this plan", hint=hint)

    def _check_call(self, call: ir.Call) -> None:
        if call.func in BUILTINS:
            lo, hi, sig = BUILTINS[call.func]
            n = len(call.args)
            for a in call.args:
                if a.name is not None:
                    self.sink.add(ArityError(f"built-in `{call.func}` takes no keyword arguments", a.span))
            flows = FUNCTIONS[call.func].flows if call.func in FUNCTIONS else None
            if flows is not None and self.periods is not None and n == flows + 1 < lo and \
                    isinstance(call.args[-1].value, ir.Name) and call.args[-1].value.name in self.defs:
                return  # `irr(net)`: a series' periods are its flows (series.mark), else its arity error is there
            if n < lo or (hi is not None and n > hi):
                want = f"{lo}" if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
                hint = f"`{call.func}({sig})`"
                if call.func == "log" and n == 1:
                    hint = "write `ln(x)` for the natural logarithm or `log(x, 10)` for base 10"
                if flows is not None and self.periods is not None and n > flows:  # `irr(net)`, `net` a series
                    args = "".join(a.span.flat + ", " for a in call.args[:flows])
                    last = call.args[-1].span.flat
                    last = last if isinstance(call.args[-1].value, ir.Name) else f"({last})"
                    hint += (f"; the cash flows of a series, one a period: `{call.func}({args}{last} at m for m in "
                             f"{self.periods.values.span.flat})`")
                self.sink.add(ArityError(f"`{call.func}` takes {want} argument{'s' if not want.endswith(' 1') and want != '1' else ''}, got {n}",
                                         call.span, hint=hint))
            return
        if call.func in self.functions:
            self._bind(self.functions[call.func], call)
            return
        guess = suggest(call.func, list(self.functions) + list(BUILTINS))
        hint = f"did you mean `{guess}`?" if guess else None
        if call.func in {op.value for op in ir.AggOp}:
            hint = (f"`{call.func}` goes over a list or a range: `{call.func}([a, b, c])`, "
                    f"`{call.func}(x for x in [a, b, c])` or `{call.func}(f(m) for m in 1..n)`")
        elif call.func in self.defs:
            hint = f"`{call.func}` is a quantity, not a function; write `{call.func} * (...)` to multiply"
        self.sink.add(UnknownNameError(f"unknown function `{call.func}`", call.name_span, hint=hint))

    def _bind(self, f: ir.FunctionDef, call: ir.Call, report: bool = True) -> Optional[dict[str, ir.Expr]]:
        """Match a call's arguments to parameters (positional, keyword, defaults)."""
        bound: dict[str, ir.Expr] = {}
        params = [p.name for p in f.params]
        errors = []
        positional = [a for a in call.args if a.name is None]
        if len(positional) > len(params):
            errors.append(ArityError(
                f"`{f.name}` takes {len(params)} argument{'s' if len(params) != 1 else ''}, got {len(call.args)}",
                call.span, labels=[Label(f.span, "defined here")], hint=f"`{f.name}({', '.join(params)})`"))
        for p, a in zip(params, positional):
            bound[p] = a.value
        for a in call.args:
            if a.name is None:
                continue
            if a.name not in params:
                guess = suggest(a.name, params)
                errors.append(ArityError(f"`{f.name}` has no parameter `{a.name}`", a.span,
                                         hint=f"did you mean `{guess}`?" if guess else f"`{f.name}({', '.join(params)})`"))
            elif a.name in bound:
                errors.append(ArityError(f"parameter `{a.name}` of `{f.name}` is given twice", a.span))
            else:
                bound[a.name] = a.value
        missing = [p.name for p in f.params if p.name not in bound and p.default is None]
        if missing and not errors:
            errors.append(ArityError(
                f"`{f.name}` is missing argument{'s' if len(missing) > 1 else ''} "
                + ", ".join(f"`{m}`" for m in missing), call.span,
                labels=[Label(f.span, "defined here")], hint=f"`{f.name}({', '.join(params)})`"))
        if errors:
            if report:
                for e in errors:
                    self.sink.add(e)
            return None
        return bound

    def _refs(self, expr: ir.Expr, params: frozenset[str]) -> set[str]:
        """Quantities an expression depends on, through user functions too."""
        out: set[str] = set()
        for node, bound in ir.walk_scoped(expr, params):
            if isinstance(node, ir.Name) and node.name not in bound:
                out.add(node.name)
            elif isinstance(node, ir.Call) and node.func in self.functions:
                out |= self._function_refs(node.func)
        return out

    def _function_refs(self, name: str) -> frozenset[str]:
        if name not in self.function_refs:
            f = self.functions[name]
            params = frozenset(p.name for p in f.params)
            refs = self._refs(f.body, params)
            for p in f.params:
                if p.default is not None:
                    refs |= self._refs(p.default, params)
            self.function_refs[name] = frozenset(refs)
        return self.function_refs[name]

    def _ref_span(self, user: str, used: str):
        if user in self.defs:
            exprs = [self.defs[user].expr]
            fallback = self.defs[user].expr.span
        else:  # an answer: where its question uses the name
            s = self.answer_names[user]
            exprs = self._question_exprs(s)
            fallback = s.span
        for e in exprs:
            for node in ir.free_names(e):
                if node.name == used:
                    return node.span
        return fallback

    # ---- types and dimensions -----------------------------------------------
    def _typing_order(self, graph: dict[str, tuple[str, ...]], order_all: list[str]) -> list[str]:
        """``order_all`` with each series that ``previous(x, START)`` reads typed before its reader, where no
        same-period dependency forbids it: a START of a bare 0 fits any unit, so the series' own type decides
        (``previous(ordered, 0) * price`` is money however the names sort). A depth-first walk over the
        same-period edges, taking a ``previous`` edge only to a series that does not itself lead back into
        the walk (a series reading itself, or a loop through the periods)."""
        soft = {n: [p.name for p in ir.walk(d.expr) if isinstance(p, ir.Previous) and p.name != n and p.name in graph]
                for n, d in self.defs.items()}
        if not any(soft.values()):
            return order_all
        out: list[str] = []
        done: set[str] = set()
        active: set[str] = set()

        def reaches_walk(m: str) -> bool:  # m depends, in the same period, on a name the walk is in
            seen, todo = {m}, [m]
            while todo:
                for k in graph.get(todo.pop(), ()):
                    if k in active:
                        return True
                    if k not in seen and k not in done:
                        seen.add(k)
                        todo.append(k)
            return False

        def edges(n: str):
            yield from graph.get(n, ())
            yield from (m for m in soft.get(n, ()) if m not in done and m not in active and not reaches_walk(m))

        for root in order_all:
            if root in done:
                continue
            stack, active = [(root, edges(root))], {root}
            while stack:
                node, todo = stack[-1]
                nxt = next((m for m in todo if m not in done and m not in active), None)
                if nxt is None:
                    stack.pop()
                    active.discard(node)
                    done.add(node)
                    out.append(node)
                else:
                    active.add(nxt)
                    stack.append((nxt, edges(nxt)))
        return out

    def _infer(self, expr: ir.Expr, scope: dict[str, Type]) -> Optional[Type]:
        try:
            return self.typer.type(expr, scope, self.types.get)
        except Poisoned:
            return None
        except PlanError as e:
            self.typer.at_precedence(expr, e, self.types.get)
            self.sink.add(e)
            return None

    def infer_strict(self, expr: ir.Expr, scope: dict[str, Type] | None = None) -> Type:
        """Type of an expression, raising the first error (used by the CLI)."""
        return self.typer.type(expr, scope or {}, self.types.get)

    # ---- quantities --------------------------------------------------------------
    def _quantity(self, d: ir.Definition, deps: tuple[str, ...]) -> Quantity:
        t = self.types[d.name]
        if t.dim is None:
            t = Type(t.kind, DIMENSIONLESS, t.const)
        display = Unit(Fraction(1), t.dim, canonical_text(t.dim))
        literal_unit = ir.literal_unit(d.expr.first if isinstance(d.expr, ir.Series) else d.expr)
        if literal_unit is not None:
            display = unit_of(literal_unit, self.units)
        elif isinstance(d.expr, ir.Reduce) and isinstance(d.expr.body, ir.Period) and self.period_unit is not None:
            display = self.period_unit  # `first(period where ...)` in the periods' unit (months)
        elif t.unit and not t.unit.startswith("%") and (t.dim == TIME or t.dim.dimensionless and not (
                isinstance(d.expr, ir.Binary) and d.expr.op is ir.BinOp.DIV)):  # (a ratio of counts: a plain number)
            written = self._written_unit(t.unit)  # a time or a count in the unit its formula is written in:
            if written is not None and written.dim == t.dim:  # `horizon * 2` in months, `demand * 0.9` in tokens
                display = written
        if d.display is not None:
            unit = unit_of(d.display, self.units, self.sink)
            if unit is not None:
                if t.is_bool:
                    self.sink.add(DisplayUnitError(f"`{d.name}` is true/false and has no unit", d.display.span))
                elif unit.dim != t.dim:
                    self.sink.add(DisplayUnitError(
                        f"cannot show `{d.name}` in {unit.text}: it is {t.dim.describe()}, "
                        f"{unit.text} is {unit.dim.describe()}",
                        d.display.span, labels=[Label(d.expr.span, canonical_text(t.dim) or "a plain number")],
                        hint=(f"a unit of {t.dim.describe()}, such as `{example_unit(t.dim)}`"
                              if not t.dim.dimensionless else
                              f"it is a plain number: drop `-> {unit.text}`, or give the inputs units "
                              f"(a rate as `3%/month`)")))
                else:
                    display = unit
        if d.uncertain is not None and d.uncertain.point_written and not t.is_bool:
            for p in d.uncertain.values:  # `x = 5 ms ~ 1 GB to 2 GB`: the point and its distribution disagree
                pt = self._infer(p, {})
                if pt is not None and pt.dim is not None and pt.dim != t.dim:
                    self.sink.add(UnitError(f"`{p.span.flat}` is {dim_text(pt)}, but `{d.name}` is {dim_text(t)}",
                                            p.span, label=dim_text(pt), labels=[Label(d.expr.span, dim_text(t))],
                                            hint="write the point value and the distribution in one dimension"))
                    break
        q = Quantity(d.name, d, d.is_input, t, display, deps)
        if d.is_input:
            q.value = t.const if not t.is_bool else _bool_value(d.expr)
        return q

    def _written_unit(self, text: str) -> Optional[Unit]:
        """The unit ``text`` (as a formula's type carries it) names, or None."""
        from .lower import unit_from_text
        from .source import Source

        try:
            return unit_of(unit_from_text(text, Source("unit", text), 0), self.units)
        except PlanError:
            return None

    def _constraints(self, q: Quantity, quantities: dict[str, Quantity]) -> None:
        for c in q.definition.constraints:
            if c.kind == "integer":
                if q.is_bool:
                    self.sink.add(ConstraintError(f"`{q.name}` is true/false, so `integer` does not apply", c.span))
                q.integer = True
            elif c.kind == "boolean":
                if not q.is_bool:
                    self.sink.add(ConstraintError(f"`{q.name}` is a number, not true/false", c.span,
                                                  hint="write `true` or `false` as its value"))
            else:
                t = self._infer(c.condition, {})
                if t is None:
                    continue
                if not t.is_bool:
                    self.sink.add(KindError("a constraint must be a condition such as `x >= 0`", c.condition.span))
                    continue
                if q.is_input:
                    lo, hi = bounds_of(c.condition, q.name, self._const)
                    if lo is not None and (q.lower is None or lo.value > q.lower.value):
                        q.lower = lo
                    if hi is not None and (q.upper is None or hi.value < q.upper.value):
                        q.upper = hi

    def _const(self, e: ir.Expr) -> Optional[Fraction]:
        """The exact value of a constant expression; None when it uses a quantity."""
        try:
            t = self.typer.type(e, {}, lambda n: None)
        except (PlanError, Poisoned):
            return None
        return t.const

    # ---- scenarios ---------------------------------------------------------------
    def _scenarios(self, statements, quantities) -> tuple[dict[str, ScenarioModel], dict[str, list[str]]]:
        """Plain scenarios, plus every combination of the axes' members.

        A combination is named by its members joined with ``/`` in axis
        order (``h100/fp8``) and overrides the union of their inputs; two
        axes may not set the same input.
        """
        scenarios: dict[str, ScenarioModel] = {}
        axes: dict[str, list[str]] = {}
        axis_list: list[ir.Axis] = []
        members: dict[tuple[str, str], ScenarioModel] = {}
        for s in statements:
            if isinstance(s, ir.Scenario):
                self._add_scenario(scenarios, self._scenario_model(s, quantities, f"scenario `{s.name}`"))
            elif isinstance(s, ir.Axis):
                first = next((a for a in axis_list if a.name == s.name), None)
                if first is not None:
                    self.sink.add(DuplicateError(f"axis `{s.name}` is defined twice", s.name_span,
                                                 labels=[Label(first.name_span, "first defined here")]))
                    continue
                if not s.members:
                    self.sink.add(ScenarioError(f"axis `{s.name}` has no members", s.name_span))
                    continue
                axis_list.append(s)
                axes[s.name] = []
                for m in s.members:
                    if m.name in axes[s.name]:
                        self.sink.add(DuplicateError(f"axis `{s.name}` has `{m.name}` twice", m.name_span))
                        continue
                    if m.name in RESERVED_SCENARIOS:  # `gpu=all` picks every member
                        self.sink.add(ScenarioError(f"`{m.name}` is reserved and cannot name an axis member",
                                                    m.name_span))
                        continue
                    axes[s.name].append(m.name)
                    members[(s.name, m.name)] = self._scenario_model(m, quantities, f"`{s.name}={m.name}`")
        self._axis_clashes(axis_list)
        if axis_list and not self.sink.errors:
            import itertools

            count = 1
            for a in axis_list:
                count *= len(axes[a.name])
            if count > 10_000:
                self.sink.add(ScenarioError(f"the axes make {count:,} combinations (at most 10,000)", axis_list[0].span))
                return scenarios, axes
            for combo in itertools.product(*[[(a.name, m) for m in axes[a.name]] for a in axis_list]):
                parts = [members[c] for c in combo]
                name = "/".join(m for _, m in combo)
                overrides = tuple(o for p in parts for o in p.scenario.overrides)
                first = parts[0].scenario
                synthetic = ir.Scenario(name, "; ".join(p.scenario.doc for p in parts if p.scenario.doc) or None,
                                        tuple(t for p in parts for t in p.scenario.tags), overrides,
                                        first.span, first.name_span)
                model = ScenarioModel(name, synthetic, axis=None, picks=dict(combo))
                for p in parts:
                    model.overrides.update(p.overrides)
                self._add_scenario(scenarios, model)
        return scenarios, axes

    def _scenario_model(self, s: ir.Scenario, quantities, where: str) -> ScenarioModel:
        model = ScenarioModel(s.name, s, axis=s.axis)
        for o in s.overrides:
            for node in ir.walk(o.expr):  # a deprecated library name warns here too
                if isinstance(node, ir.Name) and node.name in self.defs:
                    self._deprecated(node.name, node.span)
            value = self.override_value(o, quantities, where)
            if value is not None:
                if o.name in model.overrides:
                    self.sink.add(DuplicateError(f"`{o.name}` is set twice in {where}", o.name_span))
                model.overrides[o.name] = value
        return model

    def _add_scenario(self, scenarios: dict[str, ScenarioModel], model: ScenarioModel) -> None:
        s = model.scenario
        if model.name in RESERVED_SCENARIOS:
            self.sink.add(ScenarioError(f"`{model.name}` is reserved and cannot name a scenario", s.name_span))
        elif model.name in scenarios:
            self.sink.add(DuplicateError(f"scenario `{model.name}` is defined twice", s.name_span,
                                         labels=[Label(scenarios[model.name].scenario.name_span, "first defined here")]))
        else:
            scenarios[model.name] = model

    def _axis_clashes(self, axis_list: list[ir.Axis]) -> None:
        setters: dict[str, tuple[ir.Axis, ir.Override]] = {}
        for a in axis_list:
            seen_here: set[str] = set()
            for m in a.members:
                for o in m.overrides:
                    if o.name in seen_here:
                        continue
                    seen_here.add(o.name)
                    if o.name in setters:
                        other_axis, other = setters[o.name]
                        self.sink.add(ScenarioError(
                            f"axes `{other_axis.name}` and `{a.name}` both set `{o.name}`", o.span,
                            label=f"set by axis `{a.name}`",
                            labels=[Label(other.span, f"set by axis `{other_axis.name}`")],
                            hint="each input may vary along one axis only; combinations would be ambiguous"))
                    else:
                        setters[o.name] = (a, o)

    def override_value(self, o: ir.Override, quantities: dict[str, Quantity], where: str,
                       report: bool = True) -> Optional[Fraction | bool]:
        """Check one ``name = value`` override; return its exact value in base units."""
        try:
            return self._override(o, quantities, where)
        except PlanError as err:
            if not report:
                raise
            self.sink.add(err)
            return None

    def _override(self, o: ir.Override, quantities, where: str):
        q = quantities.get(o.name)
        if q is None:
            guess = suggest(o.name, [n for n, x in quantities.items() if x.is_input])
            raise OverrideError(f"{where} sets `{o.name}`, which is not defined", o.name_span,
                                hint=f"did you mean `{guess}`?" if guess else None)
        if not q.is_input:
            raise OverrideError(
                f"{where} sets `{o.name}`, which is a formula, not an input", o.name_span,
                labels=[Label(q.definition.name_span, "defined by a formula here")],
                hint="only inputs (quantities defined by a literal) can be overridden")
        expr = ir.transform(o.expr, lambda n: _input_literal(n, quantities))
        for node in ir.walk(expr):
            if isinstance(node, ir.Name):
                if node.name in quantities:
                    raise OverrideError(f"{where}: `{node.name}` is a formula; a value may use numbers, units "
                                        "and inputs only", node.span)
                raise self._unknown(node.name, node.span, frozenset())
        t = self.typer.type(expr, {}, lambda n: None)
        if q.is_bool:
            if not t.is_bool or not isinstance(expr, ir.Bool):
                raise KindError(f"`{o.name}` is true/false; {where} gives {dim_text(t)}", o.expr.span)
            return expr.value
        if t.is_bool:
            raise KindError(f"`{o.name}` is a number; {where} gives true/false", o.expr.span)
        if t.const is None:
            raise OverrideError(f"{where}: the value of `{o.name}` must be a constant", o.expr.span,
                                hint="use numbers, units and inputs, such as `3.35 TB/s`")
        if q.dim.dimensionless and q.display.scale != 1 and t.const != 0 and not any(
                isinstance(n, ir.Number) and n.unit is not None for n in ir.walk(expr)):
            # `mfu = 40%`: is `--set mfu=50` 50% or 5000%? Refuse to guess.
            raise UnitError(
                f"`{o.name}` is written in {q.unit_text}, so a bare number is ambiguous", o.expr.span,
                label="no unit", labels=[Label(q.definition.expr.span, f"written in {q.unit_text}")],
                hint=_ambiguous_hint(o.expr.span.flat, t.const, q.unit_text))
        if not same_dim(t, Type("num", q.dim)):
            raise UnitError(
                f"{where} gives `{o.name}` in {dim_text(t)}, but it is in {q.unit_text or 'a plain number'}",
                o.expr.span, label=dim_text(t),
                labels=[Label(q.definition.expr.span, f"declared as {q.unit_text or 'a plain number'}")],
                hint=(f"write it in {q.unit_text}, as `{o.name}` is declared: `{o.name} = {_in_unit(expr, q.unit_text)}`"
                      if q.unit_text and isinstance(expr, ir.Number) else
                      f"write the value with a unit of {q.dim.describe()}, such as `{example_unit(q.dim)}`")
                if not q.dim.dimensionless else "write a plain number")
        return t.const

    # ---- questions -----------------------------------------------------------------
    def _questions(self, model: Model) -> None:
        q = model.quantities

        def need_input(name: str, span, what: str) -> bool:
            if name not in q:
                self.sink.add(self._unknown(name, span, frozenset()))
                return False
            if not q[name].is_input:
                self.sink.add(OverrideError(f"{what} `{name}`, which is a formula, not an input", span,
                                            labels=[Label(q[name].definition.name_span, "defined here")]))
                return False
            return True

        def need_condition(expr: ir.Expr, extra=()):
            self._resolve(expr, frozenset(), allow_refs=True, extra=extra)
            for node in ir.walk(expr):
                if isinstance(node, ir.ScenarioRef) and node.scenario not in model.scenarios \
                        and node.scenario != "base":
                    guess = suggest(node.scenario, model.scenarios)
                    self.sink.add(ScenarioError(f"unknown scenario `{node.scenario}` in `{node.name}@{node.scenario}`",
                                                node.span, hint=f"did you mean `{guess}`?" if guess else
                                                "scenarios: " + ", ".join(["base", *model.scenarios])))
            if self.sink.errors:
                return
            t = self._infer(expr, dict(extra) if isinstance(extra, dict) else {})
            if t is not None and not t.is_bool:
                self.sink.add(KindError("expected a condition such as `a = b` or `a >= b`", expr.span))

        def picks(items):
            for p in items:
                self.check_pick(p, model)

        for s in model.sweeps:
            for axis in s.axes:
                if need_input(axis.name, axis.name_span, "a sweep varies"):
                    self._values(axis.values, q[axis.name])
            for n in s.show:
                if n.name not in q:
                    self.sink.add(self._unknown(n.name, n.span, frozenset()))
            picks(s.scenarios)
        for s in model.solves:
            if need_input(s.target, s.target_span, "`solve` is for"):
                need_condition(s.condition, {n: t for n, t in self.types.items() if n in model.answers})
            picks(s.scenarios)
        for s in model.optimizes:
            if need_input(s.over, s.over_span, "`over` needs an input, not"):
                self._resolve(s.objective, frozenset(), extra=model.answers)
                t = self._infer(s.objective, {})
                if t is not None and t.is_bool:
                    self.sink.add(KindError("the objective must be a number", s.objective.span))
                self._values(s.values, q[s.over])
            picks(s.scenarios)
        answers = self.answer_types(model)
        self._answer_names(model)
        for c in model.checks:
            need_condition(c.condition, answers)  # checks may use question results by alias
            for o in c.overrides:
                if isinstance(o.expr, ir.Name) and o.expr.name in answers and o.name in q and q[o.name].is_input:
                    if not same_dim(answers[o.expr.name], Type("num", q[o.name].dim)):
                        self.sink.add(UnitError(f"`{o.expr.name}` is {dim_text(answers[o.expr.name])}, "
                                                f"`{o.name}` is {dim_text(q[o.name].type)}", o.expr.span))
                    continue
                self.override_value(o, q, "`with`")
            if c.tolerance is not None:
                t = self._infer(c.tolerance, {})
                if t is not None and (t.is_bool or t.const is None):
                    self.sink.add(KindError("a tolerance must be a constant such as `0.1%` or `0.01 ms`",
                                            c.tolerance.span))
                elif t is not None and not _relative(c.tolerance) and isinstance(c.condition, ir.Compare):
                    # an absolute tolerance is in the compared values' unit (`within 0.05 GB`)
                    compared = self._infer(c.condition.operands[0], dict(answers))
                    if compared is not None and not compared.is_bool and not same_dim(t, compared):
                        self.sink.add(UnitError(
                            f"the tolerance is {dim_text(t)} but the compared values are {dim_text(compared)}",
                            c.tolerance.span, label=dim_text(t),
                            hint="an absolute tolerance is in the compared values' unit (`within "
                                 + (f"{_example_text(c.tolerance)} {example_unit(compared.dim)}"
                                    if compared.dim is not None and not compared.dim.dimensionless
                                    else _example_text(c.tolerance))
                                 + "`); a relative one is in % or ppm (`within 1%`)"))
            picks(c.scenarios)
        for pc in (s for s in model.plan.statements if isinstance(s, ir.ProbabilityCheck)):
            for node in ir.free_names(pc.condition):  # run by the simulation; its names are checked here
                if node.name not in q:
                    self.sink.add(self._unknown(node.name, node.span, frozenset()))
            self._probability_bounds(pc)
            picks(pc.scenarios)
        self._correlations(model)

    def _probability_bounds(self, pc: ir.ProbabilityCheck) -> None:
        for err in self.probability_bound_errors(pc):
            self.sink.add(err)

    def probability_bound_errors(self, pc: ir.ProbabilityCheck) -> list[PlanError]:
        """``check P(x < 1) >= 120%`` (or `simulate --solve 'x where P(...) >= 120%'`): a share of trials
        is from 0% to 100%."""
        out: list[PlanError] = []
        cond = pc.condition
        if not isinstance(cond, ir.Compare):
            return out
        stats = [o for o in cond.operands if isinstance(o, ir.Call) and o.func in ("P", "mean", "sd")
                 or isinstance(o, ir.Call) and o.func.startswith("p") and o.func[1:2].isdigit()]
        if not stats or any(o.func != "P" for o in stats):
            return out
        for o in cond.operands:
            if any(o is st for st in stats):
                continue
            try:
                t = self.infer_strict(o)
            except PlanError:
                continue
            if t.const is None or t.is_bool or t.dim is not None and not t.dim.dimensionless:
                continue
            if not 0 <= float(t.const) <= 1:
                out.append(DistributionError(
                    f"`{o.span.flat}` is not a probability: `P(...)` is the share of trials where its "
                    "condition holds, from 0% to 100%", o.span, label="outside 0% to 100%",
                    labels=[Label(stats[0].span, "a share of trials")],
                    hint="write a bound from 0% to 100% (`check P(cost < 2 USD) >= 90%`)"))
        return out

    def _correlations(self, model: Model) -> None:
        """``correlate(a, b, rho)``: two uncertain inputs, each pair once, a set that can hold together."""
        from .uncertain import correlation_factor

        q = model.quantities
        pairs: list[ir.Correlation] = []
        seen: dict[frozenset, ir.Correlation] = {}
        for c in (s for s in model.plan.statements if isinstance(s, ir.Correlation)):
            ok = True
            for name, span in ((c.a, c.a_span), (c.b, c.b_span)):
                if name not in q:
                    self.sink.add(self._unknown(name, span, frozenset()))
                    ok = False
                elif q[name].definition.uncertain is None or not q[name].is_input:
                    self.sink.add(DistributionError(
                        f"`{name}` is not an uncertain input, so it has nothing to correlate", span,
                        label="not uncertain", labels=[Label(q[name].definition.span, "defined here")],
                        hint=f"give `{name}` a range (`{name} = low to high`) or a distribution, or correlate "
                             "two inputs that have one"))
                    ok = False
            key = frozenset((c.a, c.b))
            if ok and key in seen:
                self.sink.add(DistributionError(f"`{c.a}` and `{c.b}` are correlated twice", c.span,
                                                label="again", labels=[Label(seen[key].span, "first here")],
                                                hint="keep one `correlate` per pair"))
                ok = False
            if ok:
                seen[key] = c
                pairs.append(c)
        if pairs:
            names = [n for n in model.order if any(n in (p.a, p.b) for p in pairs)]
            try:
                correlation_factor(names, pairs)
            except DistributionError as err:
                self.sink.add(err)

    def answer_types(self, model: Model) -> dict[str, Type]:
        """Names of question results (``solve ... as x``, ``maximize ... as best``) and their types:
        the input's for the answer, the objective's for ``best.value`` (checks only)."""
        out: dict[str, Type] = {}
        for s in list(model.solves) + list(model.optimizes):
            target = s.target if isinstance(s, ir.Solve) else s.over
            if s.alias is None or target not in model.quantities or s.alias in model.quantities:
                continue
            out[s.alias] = Type("num", model.quantities[target].dim)
            if isinstance(s, ir.Optimize):
                try:
                    t = self.typer.type(s.objective, {}, self.types.get)
                except (PlanError, Poisoned):
                    continue
                out[s.alias + ".value"] = Type("num", t.dim)
        return out

    def _answer_names(self, model: Model) -> None:
        seen: dict[str, ir.Span] = {}
        for s in sorted(list(model.solves) + list(model.optimizes), key=lambda s: s.span.start):
            if s.alias is None:
                continue
            if s.alias in model.quantities:
                self.sink.add(DuplicateError(f"`as {s.alias}` names a question like the quantity `{s.alias}`",
                                             s.span, labels=[Label(model.quantities[s.alias].definition.name_span,
                                                                   "defined here")], hint="pick another name"))
            elif s.alias in seen:
                self.sink.add(DuplicateError(f"two questions are named `{s.alias}`", s.span,
                                             labels=[Label(seen[s.alias], "first here")]))
            seen[s.alias] = s.span

    def _values(self, values: ir.Values, q: Quantity) -> None:
        if q.is_bool:
            self.sink.add(KindError(f"`{q.name}` is true/false; a sweep varies numbers only", values.span,
                                    hint="compare the two cases with scenarios that set it to true and false"))
            return
        for item in values.items:
            t = self._infer(item, {})
            if t is None:
                continue
            if t.is_bool or t.const is None:
                self.sink.add(KindError("sweep values must be constants", item.span))
            elif values.kind in ("times", "count") and item is values.items[-1]:
                if t.dim is not None and not t.dim.dimensionless:
                    self.sink.add(UnitError(f"`{values.kind}` takes a plain number", item.span))
            elif not same_dim(t, Type("num", q.dim)):
                self.sink.add(UnitError(
                    f"`{q.name}` is in {q.unit_text or 'a plain number'}, this value is {dim_text(t)}",
                    item.span, label=dim_text(t)))

    def check_pick(self, p: ir.ScenarioPick, model: Model) -> None:
        if p.axis is None:
            if p.name in RESERVED_SCENARIOS or p.name in model.scenarios:
                return
            guess = suggest(p.name, model.scenarios)
            self.sink.add(ScenarioError(f"unknown scenario `{p.name}`", p.span,
                                        hint=f"did you mean `{guess}`?" if guess else
                                        ("scenarios: " + ", ".join(model.scenarios) if model.scenarios else
                                         "this plan defines no scenarios")))
            return
        if p.axis not in model.axes:
            self.sink.add(ScenarioError(f"unknown axis `{p.axis}`", p.span,
                                        hint=("axes: " + ", ".join(model.axes)) if model.axes else None))
        elif p.name not in model.axes[p.axis] and p.name != "all":
            guess = suggest(p.name, model.axes[p.axis])
            self.sink.add(ScenarioError(f"axis `{p.axis}` has no scenario `{p.name}`", p.span,
                                        hint=f"did you mean `{guess}`?" if guess else
                                        "choices: " + ", ".join(model.axes[p.axis])))


def _in_unit(expr: ir.Number, unit: str) -> str:
    """A number as written, with the unit its input is declared in: ``2%`` and ``%/month`` give ``2%/month``."""
    text = expr.span.flat
    if expr.unit is not None and unit.startswith(expr.unit.text):  # `2%` of `%/month`: the rest of the unit
        return text + unit[len(expr.unit.text):]
    number = text[:len(text) - len(expr.unit.text)].rstrip() if expr.unit is not None else text
    return f"{number} {unit}" if not unit.startswith("%") else f"{number}{unit}"


def _ambiguous_hint(written: str, value: Fraction, unit: str) -> str:
    """`--set utilisation=0.5` for a percent input: 0.5% or 50%? Offer both when both are plausible."""
    sep = "" if unit == "%" else " "
    plain = f"`{written}{sep}{unit}`"
    if unit == "%" and 0 < abs(value) <= 1:
        shown = format(float(value * 100), ".15g")
        return f"give the unit: {plain}, or `{shown}%` if {written} is a fraction ({written} = {shown}%)"
    return f"give the unit: {plain}"


class _Form:
    """An expression's size (nodes) and depth once inlined, over its parameters' sizes and depths:
    size = const + sum(coef[p] * size(p)); depth = max(dconst, max(offset[p] + depth(p)))."""

    __slots__ = ("const", "coefs", "dconst", "offsets")

    def __init__(self, const: int, coefs: dict[str, int], dconst: int, offsets: dict[str, int]) -> None:
        self.const, self.coefs, self.dconst, self.offsets = const, coefs, dconst, offsets

    @property
    def size(self) -> int:
        return self.const + sum(self.coefs.values())

    @property
    def depth(self) -> int:
        return max([self.dconst] + [o + 1 for o in self.offsets.values()])

    @staticmethod
    def node(parts: list["_Form"]) -> "_Form":
        coefs: dict[str, int] = {}
        offsets: dict[str, int] = {}
        for part in parts:
            for p, c in part.coefs.items():
                coefs[p] = coefs.get(p, 0) + c
            for p, o in part.offsets.items():
                offsets[p] = max(offsets.get(p, -1), o + 1)
        return _Form(1 + sum(p.const for p in parts), coefs, 1 + max((p.dconst for p in parts), default=0), offsets)

    def substitute(self, args: dict[str, "_Form"]) -> "_Form":
        const, dconst = self.const, self.dconst
        coefs: dict[str, int] = {}
        offsets: dict[str, int] = {}
        for p, c in self.coefs.items():
            a = args.get(p, _Form(1, {}, 1, {}))
            const += c * a.const
            for q, k in a.coefs.items():
                coefs[q] = coefs.get(q, 0) + c * k
        for p, o in self.offsets.items():
            a = args.get(p, _Form(1, {}, 1, {}))
            dconst = max(dconst, o + a.dconst)
            for q, k in a.offsets.items():
                offsets[q] = max(offsets.get(q, -1), o + k)
        return _Form(const, coefs, dconst, offsets)


def _expressions(s: ir.Statement):
    """The expressions of a statement that may call user functions."""
    if isinstance(s, ir.Definition):
        yield s.expr
        yield from (c.condition for c in s.constraints if c.condition is not None)
    elif isinstance(s, ir.Check):
        yield s.condition
        yield from (o.expr for o in s.overrides)
    elif isinstance(s, ir.Solve):
        yield s.condition
    elif isinstance(s, ir.Optimize):
        yield s.objective
    elif isinstance(s, (ir.Scenario,)):
        yield from (o.expr for o in s.overrides)


def _relative(tol: ir.Expr) -> bool:
    """A tolerance written in % or ppm is relative to the expected value."""
    unit = ir.literal_unit(tol)
    return unit is not None and unit.text in ("%", "ppm")


def _example_text(tol: ir.Expr) -> str:
    lit = ir.literal(tol)
    return "..." if lit is None else format(abs(float(lit[0])), "g")


def _input_literal(node: ir.Expr, quantities) -> ir.Expr:
    """In an override, a name of an input stands for its value as written
    (``hbm_bandwidth = h100.hbm_bandwidth``)."""
    if isinstance(node, ir.Name) and node.name in quantities and quantities[node.name].is_input:
        return quantities[node.name].definition.expr
    return node



def _bool_value(expr: ir.Expr) -> bool:
    assert isinstance(expr, ir.Bool)
    return expr.value


def bounds_of(cond: ir.Expr, name: str, const) -> tuple[Optional[Bound], Optional[Bound]]:
    """Bounds on ``name`` from a condition such as ``0 <= alpha < 1`` or ``batch >= 1``."""
    lo = hi = None
    parts = [cond]
    while parts:
        c = parts.pop()
        if isinstance(c, ir.Logic) and c.op is ir.BoolOp.AND:
            parts += [c.left, c.right]
            continue
        if not isinstance(c, ir.Compare):
            continue
        for i, op in enumerate(c.ops):
            left, right = c.operands[i], c.operands[i + 1]
            if isinstance(left, ir.Name) and left.name == name:
                value, side = const(right), op
            elif isinstance(right, ir.Name) and right.name == name:
                value, side = const(left), _flip(op)
            else:
                continue
            if value is None:
                continue
            if side in (ir.CmpOp.GT, ir.CmpOp.GE):
                b = Bound(value, side is ir.CmpOp.GE)
                if lo is None or b.value > lo.value:
                    lo = b
            elif side in (ir.CmpOp.LT, ir.CmpOp.LE):
                b = Bound(value, side is ir.CmpOp.LE)
                if hi is None or b.value < hi.value:
                    hi = b
            elif side is ir.CmpOp.EQ:
                lo = hi = Bound(value, True)
    return lo, hi


def _flip(op: ir.CmpOp) -> ir.CmpOp:
    return {ir.CmpOp.LT: ir.CmpOp.GT, ir.CmpOp.LE: ir.CmpOp.GE, ir.CmpOp.GT: ir.CmpOp.LT,
            ir.CmpOp.GE: ir.CmpOp.LE}.get(op, op)


def analyze(plan: ir.PlanIR) -> tuple[Model, Analyzer]:
    analyzer = Analyzer(plan)
    return analyzer.run(), analyzer


def _meaning(unit) -> str:
    """What a unit is, in base units: ``1,000,000,000 B``."""
    means = canonical_text(unit.dim) or "a plain number"
    scale = float(unit.scale)
    number = f"{scale:,.12g}" if 1e-6 <= abs(scale) < 1e15 else f"{scale:.12g}"
    return f"{number} {means}" if unit.scale != 1 or unit.dim.dimensionless else f"1 {means}"


def _aside(name: str, unit) -> str:
    """`` (1,000 W)`` after a unit's name, unless that says only the name again."""
    text = _meaning(unit)
    return "" if text == f"1 {name}" else f" ({text})"

