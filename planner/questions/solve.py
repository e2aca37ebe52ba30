"""Solving: which input value makes a condition true, symbolically first.

Three questions, each per scenario (the other inputs keep the scenario's
values and any ``--set`` overrides):

* ``solve alpha where speedup = 1``: the root of ``lhs - rhs`` inside the
  input's declared domain;
* ``solve min batch where compute_time >= memory_time`` (``max`` likewise):
  the smallest (largest) integer for which the condition holds, checked at
  ``n`` and at ``n - 1`` (``n + 1``), the condition being monotone there;
* ``maximize speedup over gamma in 1..8`` (``minimize`` likewise): the best
  of the listed values, each evaluated (vectorised).

The method, in order (the univariate mathematics lives in :mod:`planner.questions.roots`):

1. The condition is written over inputs only (:func:`inline`, expanding
   just the quantities it uses), the other inputs replaced by their exact
   rational values.
2. When it is piecewise rational in the target (``max``/``min``/``abs``/
   ``if`` split into branches plus their switch points), every real root of
   every piece is found exactly (``Poly.real_roots``); the roots are then
   checked against the condition with exact rationals (algebraic roots at
   60 digits, against the size of the condition's terms: a candidate that
   comes close without passing is named in the notes). This finds *all* roots in the domain, so several roots are
   reported, never one picked; between two neighbouring candidates the
   condition is one rational function, so one exact evaluation there tells
   whether it holds on that whole stretch (an error naming the stretch).
3. Otherwise the condition is evaluated vectorised on a grid over the
   declared domain (shrunk away from open bounds), sign changes are
   bracketed and refined with mpmath's bracketing solver, and each root is
   re-evaluated exactly. Integer thresholds search upward by doubling when
   the domain has no upper bound.
4. Constraints whose value depends on the target (its own, or
   ``ratio < 10`` on ``ratio = x / (1 - x)``) are not asked of its current
   value but checked at each answer, exactly: roots that break one are left
   out and named in the notes; when none is left (or an integer threshold
   breaks one) it is a located :class:`ConstraintError`. The other
   constraints must hold before solving.
5. A closed form over the other inputs is sought once per statement
   (``sympy.roots`` on a numerator of degree <= 2, or ``solve`` when the
   target occurs once); it is reported only when it reproduces the answer.

:class:`SolveResult` is the stable shape that the CLI, the Excel writer and
the report read; see its docstring.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np
import sympy as sp

from ..compute.closed import plan_text
from ..compute.evaluation import Plan, format_value, input_quantity, scenarios_for
from ..compute.numbers import significant
from ..compute.symbolic import NotData, cone, from_data, rational, to_data
from ..language import ir
from ..language.errors import (
    ConstraintError,
    KindError,
    Label,
    MultipleRootsError,
    NoRootError,
    NotMonotoneError,
    SolveError,
    UnknownNameError,
    suggest,
)
from ..language.model import Quantity
from ..language.source import Source, Span
from ..language.text import difference_text
from .answer import SolveResult, Verification, least_hint, objective_unit  # noqa: F401  (objective_unit: re-exported)
from .optimum import NEAR_TIE, optimum, scenario_note
from .roots import (
    DIGITS,
    GRID,
    ROOT_TOL,
    Domain,
    FormBudget,
    Run,
    change_points,
    compile_univariate,
    degree_of,
    exact_number,
    exact_roots,
    holds_at,
    inline,
    integer_runs,
    integer_runs_numeric,
    numeric_roots,
    relations,
    residual,
    root_forms,
    to_float,
    value_at,
    zero_intervals,
)


# ---- results ------------------------------------------------------------------

# ---- the solver -------------------------------------------------------------------

@dataclass
class _Prepared:
    """What does not depend on the scenario: the expanded condition, closed forms."""

    stmt: Any
    target: str
    x: sp.Symbol
    cond: sp.Basic  # root mode: lhs - rhs; integer modes: the condition
    lhs: Optional[sp.Basic] = None
    rhs: Optional[sp.Basic] = None
    forms: Optional[list[sp.Basic]] = None  # candidate closed forms, computed on first use
    form_note: Optional[str] = None  # why the closed-form search stopped early, when it did
    lhs_unit: str = ""


_PREPARED: "weakref.WeakKeyDictionary[Plan, dict]" = weakref.WeakKeyDictionary()


def _form_key(stmt) -> str:
    """A question by where it is written and what it asks (the plan's text is in the cache's key)."""
    return f"{stmt.span.start}:{stmt.span.end}:{stmt.mode}:{stmt.target}"


class Solver:
    """Answers a plan's ``solve``/``maximize``/``minimize`` questions; caches per statement."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        # shared by every solver of this plan (a build has several): a question is prepared, and its
        # closed forms derived, once per plan
        self._prepared: dict[int, tuple[Any, _Prepared]] = _PREPARED.setdefault(plan, {})
        self._constraint_cache: dict[str, dict[int, sp.Basic]] = {}

    # -- entry points --------------------------------------------------------
    def questions(self) -> list[Any]:
        """Every solve/maximize/minimize statement, in file order."""
        stmts = list(self.plan.model.solves) + list(self.plan.model.optimizes)
        return sorted(stmts, key=lambda s: s.span.start)

    def aliases(self) -> dict[str, Any]:
        return {s.alias: s for s in self.questions() if s.alias}

    def run(self, stmt, scenarios=None, overrides=None, origins=None) -> list[SolveResult]:
        """A statement in each of its scenarios (``scenarios`` overrides its ``for``)."""
        picks = stmt.scenarios
        return [self.answer(stmt, s, overrides, origins) for s in scenarios_for(self.plan, picks, scenarios)]

    def answer(self, stmt, scenario: Optional[str] = None, overrides=None, origins=None) -> SolveResult:
        if isinstance(stmt, ir.Optimize):
            return self._optimize(stmt, scenario, overrides, origins)
        q = self.plan.model.quantities[stmt.target]
        if stmt.mode != "root" and not q.integer and not q.is_bool:
            # the least (greatest) real value where a condition holds: the numeric route's alone, through the
            # plan's one door to its answers (planner.questions.fast.Answers)
            return self.plan.answer_source.answer(stmt, scenario, overrides, origins)
        inputs, _ = self.plan.input_values(scenario, overrides, origins)
        self._check_other_inputs(stmt.target, inputs, scenario, overrides, origins)
        prep = self._prepare(stmt)
        values = {self.plan.symbols[n]: exact_number(v) for n, v in inputs.items() if n != stmt.target}
        values.update(self.upstream(prep.cond, stmt.target, stmt, scenario, overrides, origins))
        if stmt.mode == "root":
            return self._root(prep, q, values, scenario)
        return self._threshold(prep, q, values, scenario)

    def boundary(self, stmt: ir.Solve, found: SolveResult, scenario=None, overrides=None, origins=None
                 ) -> SolveResult:
        """A real threshold's answer (the numeric route's) with the closed form of the boundary it sits on,
        where one of the condition's comparisons has one that gives the answer (to 1e-12): ``2/(rate + 1)^years``
        for ``solve min x where x * (1 + rate)^years >= 2``; else as it is, its note saying so."""
        from dataclasses import replace

        prep = self._prepare(stmt)
        inputs, _ = self.plan.input_values(scenario, overrides, origins)
        values = {self.plan.symbols[n]: exact_number(v) for n, v in inputs.items() if n != stmt.target}
        values.update(self.upstream(prep.cond, stmt.target, stmt, scenario, overrides, origins))
        form = self._match_form(prep, values, rational(Fraction(found.value)))
        if form is None:
            return found
        q = self.plan.model.quantities[stmt.target]
        return replace(found, closed_form=form, display_form=self.in_display_units(form, q),
                       form_units=self.form_units(form, q), notes=tuple(n for n in found.notes if "closed form" not in n),
                       booleans=frozenset(n for n, x in self.plan.model.quantities.items() if x.is_bool))

    def upstream(self, expr: sp.Basic, target: str, stmt, scenario, overrides, origins) -> dict:
        """The exact values of the answers ``expr`` uses (another question's ``as NAME``), in this scenario;
        an answer that itself changes with ``target`` is a located error."""
        out = {}
        names = self.plan.symbols.answer_names
        for sym in sorted((x for x in expr.free_symbols if x in names), key=lambda x: x.name):
            a = names[sym]
            if target in self.plan.model.answer_inputs(a):
                what = stmt.condition if isinstance(stmt, ir.Solve) else stmt.objective
                raise SolveError(
                    f"`{_text(what)}` uses the answer `{a}`, which changes with `{target}` itself", what.span,
                    label=f"through `{a}`", notes=scenario_note(scenario),
                    hint=f"planner solves one question at a time: `{a}` would have to be solved again at every "
                         f"`{target}`; write its condition into this one instead")
            out[sym] = exact_number(self.plan.answer_source.value(a, scenario, overrides, origins))
        return out

    def _check_other_inputs(self, target: str, inputs, scenario, overrides, origins) -> None:
        """The inputs kept fixed must satisfy their constraints. Constraints whose value depends on
        the target (its own, ``ratio < 10`` over ``ratio = x / (1 - x)``) are checked at the answer
        instead (:meth:`_check_answers`): the target's current value does not matter."""
        raw = self.plan.run_compiled(inputs)
        dependent = self._dependent(target)
        broken = [i for i in range(len(self.plan._constraints))
                  if i not in dependent and not bool(np.all(raw[f"__constraint{i}"]))]
        for name, v in inputs.items():
            q = self.plan.model.quantities[name]
            if name != target and q.integer and not isinstance(v, bool) \
                    and (Fraction(v) / q.display.scale).denominator != 1:
                broken.append(name)
        if broken:
            self.plan.evaluate(scenario, overrides, origins)  # raises the located constraint error

    def _dependent(self, target: str) -> dict[int, sp.Basic]:
        """The constraints whose condition depends on ``target``, by index in the plan's list,
        each written over inputs only (computed once per target)."""
        if target not in self._constraint_cache:
            plan, found = self.plan, {}
            for i, (_, c) in enumerate(plan._constraints):
                used = [n.name for n in ir.walk(c.condition) if isinstance(n, ir.Name)]
                if target in cone(plan.model, [n for n in used if n in plan.model.quantities]):
                    found[i] = inline(plan, plan.converter.expr(c.condition))
            self._constraint_cache[target] = found
        return self._constraint_cache[target]

    def _check_answers(self, prep: _Prepared, q: Quantity, values: dict, answers: list[sp.Basic], notes: list[str],
                       scenario) -> list[sp.Basic]:
        """The answers that keep every constraint depending on the target; the others are named in
        ``notes``. When none is left, the first one's broken constraint is a located error."""
        kept, first = [], None
        dom = Domain.of(q)
        for value in answers:
            broken = next((i for i, cond in self._dependent(q.name).items()
                           if holds_at(cond.xreplace(values), prep.x, value) is not True), None)
            if broken is None:
                kept.append(value)
                continue
            name, c = self.plan._constraints[broken]
            shown = format_value(to_float(value) / float(dom.scale), dom.unit)
            owner = self.plan.model.quantities[name]
            at = ""
            if name != q.name and not owner.is_bool:
                v = value_at(inline(self.plan, self.plan.symbols[name]).xreplace(values), prep.x, value)
                at = f", `{name}` = {format_value(to_float(v) / float(owner.display.scale), owner.unit_text)}"
            text = c.condition.span.flat
            notes.append(f"{q.name} = {shown} breaks the constraint `{text}` (line {c.span.line}{at}): left out")
            first = first or (value, c, shown, text, at)
        if not kept:
            value, c, shown, text, at = first
            raise ConstraintError(
                f"constraint violated at the answer: `{text}` does not hold at `{q.name}` = {shown}"
                + (f" ({at[2:]})" if at else ""), c.span, label="this constraint",
                labels=[Label(prep.stmt.condition.span, f"solved for `{q.name}` here")],
                notes=scenario_note(scenario),
                hint=f"no `{q.name}` that answers the question keeps this constraint; check the inputs or the "
                     "constraint")
        return kept

    # -- preparation -------------------------------------------------------------
    def _prepare(self, stmt: ir.Solve) -> _Prepared:
        key = id(stmt)
        if key in self._prepared and self._prepared[key][0] is stmt:
            return self._prepared[key][1]
        plan = self.plan
        if plan.model.quantities[stmt.target].is_bool:
            raise KindError(f"`{stmt.target}` is true/false; `solve` is for numbers only", stmt.target_span,
                            hint=f"evaluate with `--set {stmt.target}=true` and `--set {stmt.target}=false` instead")
        x = plan.symbols[stmt.target]
        text = _text(stmt.condition)
        if stmt.mode == "root":
            c = stmt.condition
            if not (isinstance(c, ir.Compare) and len(c.ops) == 1 and c.ops[0] in (ir.CmpOp.EQ, ir.CmpOp.APPROX)):
                raise SolveError(
                    f"`solve {stmt.target} where ...` needs an equation `lhs = rhs`, got `{text}`", c.span,
                    hint=_boundary_hint(stmt.target, c, text))
            lhs = inline(plan, plan.converter.expr(c.operands[0]))
            rhs = inline(plan, plan.converter.expr(c.operands[1]))
            t = plan.analyzer.infer_strict(c.operands[0])
            from ..language.units import canonical_text

            prep = _Prepared(stmt, stmt.target, x, lhs - rhs, lhs, rhs,
                             lhs_unit=canonical_text(t.dim) if t.dim is not None else "")
        else:
            prep = _Prepared(stmt, stmt.target, x, inline(plan, plan.converter.expr(stmt.condition)))
        if not prep.cond.has(x):
            raise SolveError(f"`{text}` does not depend on `{stmt.target}`", stmt.condition.span,
                             label=f"`{stmt.target}` does not change this",
                             hint="solve for an input that the condition uses (directly or through formulas)")
        self._prepared[key] = (stmt, prep)  # the statement kept alive, so that its id is not reused
        return prep

    def _closed_forms(self, prep: _Prepared) -> list[sp.Basic]:
        """Candidate closed forms over the other inputs: derived once per question, whatever the
        scenario (:func:`planner.questions.roots.root_forms`), within a bounded budget."""
        if prep.forms is not None:
            return prep.forms
        key = _form_key(prep.stmt)
        kept = self.plan.closed_forms.get(key)  # derived by an earlier run, kept in the compiled-plan cache
        if kept is not None:
            try:
                prep.forms = [from_data(d, self.plan.symbols) for d in kept]
                return prep.forms
            except (ValueError, TypeError):
                pass  # not a closed form after all: derive it again
        budget = FormBudget()
        exprs = [prep.cond] if prep.stmt.mode == "root" else relations(prep.cond)
        prep.forms = root_forms(exprs, prep.x, self._reachable, budget)
        if budget.spent is not None:
            prep.form_note = (f"no closed form: its search stopped at its budget ({budget.spent}); the answer "
                              "comes from the root search alone, and the workbook bisects")
        else:  # a complete search (one cut short by its budget may find more another time) is kept
            try:
                self.plan.keep_closed_forms(key, [to_data(f, self.plan.symbols) for f in prep.forms])
            except NotData:
                pass
        return prep.forms

    def _reachable(self, cond: sp.Basic) -> Optional[bool]:
        """Whether a condition over one input and a constant holds throughout that input's declared
        domain (True), nowhere in it (False), or depends on its value (None): branches of an ``if``
        that no value in the domain reaches are left out of closed forms."""
        if not isinstance(cond, sp.core.relational.Relational):
            return None
        lhs, rhs = cond.lhs, cond.rhs
        if isinstance(lhs, sp.Rational) and isinstance(rhs, sp.Symbol):
            return self._reachable(cond.reversed)
        if not (isinstance(lhs, sp.Symbol) and isinstance(rhs, sp.Rational)) or lhs not in self.plan.symbols.names:
            return None
        q = self.plan.model.quantities[self.plan.symbols.names[lhs]]
        if q.is_bool or not q.is_input:
            return None
        dom = Domain.of(q)
        if isinstance(cond, (sp.Eq, sp.Ne)):
            reachable = dom.contains(rhs) and (not q.integer or (rhs / rational(dom.scale)).is_integer)
            return None if reachable else isinstance(cond, sp.Ne)
        c = Fraction(int(rhs.p), int(rhs.q))
        lo, hi = dom.lo, dom.hi
        below = hi is not None and (hi < c or (hi == c and not dom.hi_inclusive))  # every value < c
        at_most = hi is not None and hi <= c  # every value <= c
        above = lo is not None and (lo > c or (lo == c and not dom.lo_inclusive))  # every value > c
        at_least = lo is not None and lo >= c  # every value >= c
        always, never = {
            sp.StrictLessThan: (below, at_least), sp.LessThan: (at_most, above),
            sp.StrictGreaterThan: (above, at_most), sp.GreaterThan: (at_least, below),
        }.get(type(cond), (False, False))
        return True if always else (False if never else None)

    def _real_forms(self, prep: _Prepared, values: dict):
        """Each closed form with its value at these inputs, when that value is a real number:
        ``(form, value as a SymPy expression, value as a float)``."""
        for form in self._closed_forms(prep):
            v = form.xreplace(values)
            try:
                z = complex((sp.nsimplify(v) if v.has(sp.I) else v).evalf(30))
            except TypeError:
                continue
            if abs(z.imag) <= 1e-12 * max(1.0, abs(z.real)):
                yield form, v, z.real

    def _match_form(self, prep: _Prepared, values: dict, target: sp.Basic) -> Optional[sp.Basic]:
        """The closed form that gives ``target`` with these input values."""
        t = float(target.evalf(30))
        return next((form for form, _, v in self._real_forms(prep, values)
                     if math.isclose(v, t, rel_tol=1e-12, abs_tol=1e-300)), None)

    # -- roots -----------------------------------------------------------------------
    def _root(self, prep: _Prepared, q: Quantity, values: dict, scenario) -> SolveResult:
        x, dom = prep.x, Domain.of(q)
        f = prep.cond.xreplace(values)
        stmt = prep.stmt
        if not f.has(x):
            raise self._no_root(prep, q, values, scenario, f"`{_text(stmt.condition)}` does not depend on "
                                f"`{q.name}` with these inputs (lhs - rhs = {format_value(to_float(f))})")
        notes: list[str] = []
        candidates = exact_roots(f, x)
        if candidates is not None:
            roots = [c for c in candidates if dom.contains(c) and self._is_root(f, x, c, q, dom, notes)]
            intervals = zero_intervals(f, x, dom, candidates)
        else:
            intervals = []
            roots = numeric_roots(f, x, dom, q, notes, intervals)
            method = f"numeric: sign changes on {GRID} points over the domain, refined by bracketing (mpmath)"
        if intervals:
            raise self._interval_of_roots(prep, q, dom, intervals, candidates is None, scenario)
        if not roots:
            raise self._no_root(prep, q, values, scenario)
        if q.integer:
            roots = self._whole_roots(prep, q, f, roots, scenario)
        left_out: list[str] = []
        roots = self._check_answers(prep, q, values, roots, left_out, scenario)
        notes += left_out
        if len(roots) > 1:
            shown = ", ".join(format_value(to_float(r) / float(dom.scale), dom.unit) for r in roots)
            err = MultipleRootsError(
                f"`{_text(stmt.condition)}` has {len(roots)} roots for `{q.name}` in {dom.text()}: {shown}",
                stmt.condition.span, label="several solutions",
                hint=f"narrow the domain of `{q.name}` with a constraint (`where ...`) so one root remains",
                notes=left_out + scenario_note(scenario))
            err.roots = [to_float(r) for r in roots]  # type: ignore[attr-defined]
            raise err
        root = roots[0]
        exact = isinstance(root, sp.Rational)
        res, size = residual(f, x, root)
        if exact:
            res = 0.0 if value_at(f, x, root) == 0 else to_float(value_at(f, x, root))
        ver = Verification(
            text=(f"{difference_text(stmt.condition)} = "
                  f"{format_value(res, prep.lhs_unit, 3)} at the root"
                  + (" (exact)" if exact and res == 0 else f" ({DIGITS} digits)")),
            exact=exact, residual=res, relative=abs(res) / size if size > 0 else 0.0)
        if candidates is not None:
            method = (f"exact: real roots of polynomials in {q.name} (degree {degree_of(root, x)}), "
                      "checked in the domain")
        form = self._match_form(prep, values, root)
        if isinstance(root, sp.CRootOf):
            poly = plan_text(root.poly.as_expr().xreplace({root.poly.gen: x}))
            notes.insert(0, f"{q.name} is the real root of {poly} = 0 in {dom.text()}")
        if form is None and prep.form_note is not None:
            notes.append(prep.form_note)
        elif form is None and candidates is not None:
            notes.append("no closed form over the other inputs")
        return self._result(prep.stmt, q, scenario, root, form, ver, method, tuple(to_float(r) for r in roots),
                            notes=notes)

    def _whole_roots(self, prep: _Prepared, q: Quantity, f: sp.Basic, roots: list[sp.Basic],
                     scenario) -> list[sp.Basic]:
        """The roots at which an ``integer`` input takes a whole value (exactly); none: a located
        refusal. An integer input cannot take any other value, so ``planner solve``, ``planner check``,
        the workbook and the report all refuse alike (``solve min``/``solve max`` ask for a threshold)."""
        x, dom = prep.x, Domain.of(q)
        scale = rational(dom.scale)
        whole = []
        for r in roots:
            n = round(to_float(r) / float(dom.scale)) if math.isfinite(to_float(r)) else None
            if n is None or abs(to_float(r) / float(dom.scale) - n) > 1e-9 * max(1, abs(n)):
                continue
            exact = sp.Integer(n) * scale
            if r == exact or value_at(f, x, exact) == 0:
                whole.append(exact)
        if whole:
            return whole
        stmt = prep.stmt
        shown = ", ".join(format_value(to_float(r) / float(dom.scale), dom.unit) for r in roots)
        lhs, rhs = (_text(o) for o in stmt.condition.operands)
        declared = next((c for c in q.definition.constraints if c.kind == "integer"), None)
        err = NoRootError(
            f"no integer `{q.name}` makes `{_text(stmt.condition)}` hold: the root is {q.name} = {shown}, "
            "not an integer", stmt.condition.span, label="holds only between two integers",
            labels=[Label(declared.span, f"`{q.name}` is declared integer here")] if declared is not None else [],
            notes=scenario_note(scenario),
            hint=self._threshold_hint(q, f, x, roots[0], lhs, rhs))
        err.roots = [to_float(r) for r in roots]  # type: ignore[attr-defined]
        raise err

    @staticmethod
    def _threshold_hint(q: Quantity, f: sp.Basic, x: sp.Symbol, root: sp.Basic, lhs: str, rhs: str) -> str:
        """The threshold questions around a non-integer root, with the integers they give."""
        scale = rational(Domain.of(q).scale)
        up = math.ceil(to_float(root) / float(scale))
        above = holds_at(sp.StrictGreaterThan(f, 0), x, sp.Integer(up) * scale)
        if above is None:
            return f"ask for a threshold instead: `solve min {q.name} where ...` or `solve max {q.name} where ...`"
        grows, shrinks = (">=", "<=") if above else ("<=", ">=")
        return (f"ask for a threshold instead: `solve min {q.name} where {lhs} {grows} {rhs}` ({up}) or "
                f"`solve max {q.name} where {lhs} {shrinks} {rhs}` ({up - 1})")

    @staticmethod
    def _is_root(f: sp.Basic, x: sp.Symbol, c: sp.Basic, q: Quantity, dom: Domain, notes: list[str]) -> bool:
        """Whether the candidate ``c`` (a root of one piece, or a branch switch) is a root of ``f``:
        exactly for a rational, else to :data:`ROOT_TOL` of the size of ``f``'s terms at 60 digits.
        A candidate that comes close without passing is named in the notes, never dropped silently."""
        shown = format_value(to_float(c) / float(dom.scale), dom.unit)
        if isinstance(c, sp.Rational):
            value = f.xreplace({x: c})
            if value.is_finite is False or value.has(sp.nan, sp.zoo):
                notes.append(f"`{q.name}` = {shown} makes a denominator zero: not a root")
                return False
            return value == 0
        value, size = residual(f, x, c)
        if not math.isfinite(value) or not math.isfinite(size):
            notes.append(f"`{q.name}` = {shown} makes a denominator zero: not a root")
            return False
        if abs(value) <= ROOT_TOL * size:
            return True
        if abs(value) <= 1e-12 * size:
            notes.append(f"`{q.name}` = {shown} is not a root: lhs - rhs = {significant(value, 3)} there, "
                         f"{significant(abs(value) / size, 3)} of the size of its terms (60 digits)")
        return False

    def _interval_of_roots(self, prep: _Prepared, q: Quantity, dom: Domain, intervals, numeric: bool,
                           scenario) -> MultipleRootsError:
        def show(v, unbounded: str) -> str:
            return unbounded if v is None else format_value(to_float(v) / float(dom.scale), dom.unit)

        about = "about " if numeric else ""
        stretches = [f"from {about}{show(a, '-inf')} to {show(b, 'inf')}" for a, b in intervals]
        err = MultipleRootsError(
            f"`{_text(prep.stmt.condition)}` holds for every `{q.name}` {', and '.join(stretches)}"
            + (" (neighbouring points of the search grid are all exact roots)" if numeric else ""),
            prep.stmt.condition.span, label="a whole interval of solutions",
            hint=f"narrow the domain of `{q.name}` with a constraint (`where ...`) so one root remains; or "
                 + least_hint(q.name, prep.stmt.condition, interval=True),
            notes=scenario_note(scenario))
        a, b = intervals[0]
        err.interval = (-math.inf if a is None else to_float(a), math.inf if b is None else to_float(b))  # type: ignore[attr-defined]
        return err

    def _no_root(self, prep: _Prepared, q: Quantity, values, scenario, message: str = "") -> NoRootError:
        stmt, x, dom = prep.stmt, prep.x, Domain.of(q)
        notes = []
        ends = []
        fn = compile_univariate(prep.cond.xreplace(values), x)
        pts = dom.sample(float(q.value or 0), 5)
        for p, unbounded in ((pts[0], dom.lo is None), (pts[-1], dom.hi is None)):
            v = float(fn(np.array([p]))[0])
            ends.append((p, v))
            at = format_value(p / float(dom.scale), dom.unit) if not unbounded else \
                f"{significant(p / float(dom.scale), 3)}{(' ' + dom.unit) if dom.unit else ''} (far end of the search)"
            notes.append(f"at {q.name} = {at}: lhs - rhs = {format_value(v, prep.lhs_unit)}")
        notes += scenario_note(scenario)
        err = NoRootError(message or f"no `{q.name}` in {dom.text()} makes `{_text(stmt.condition)}` hold",
                          stmt.condition.span, label="never holds in the domain", notes=notes,
                          hint="the two sides never meet there: check the inputs or widen the domain; "
                               + least_hint(q.name, stmt.condition))
        err.ends = ends  # type: ignore[attr-defined]
        return err

    # -- integer thresholds ------------------------------------------------------------
    def _threshold(self, prep: _Prepared, q: Quantity, values: dict, scenario) -> SolveResult:
        stmt, x, dom = prep.stmt, prep.x, Domain.of(q)
        scale = rational(dom.scale)
        cond = prep.cond.xreplace(values)
        lo, hi = dom.integers()

        def holds(n: int) -> bool:
            h = holds_at(cond, x, sp.Integer(n) * scale)
            if h is None:
                raise SolveError(f"`{_text(stmt.condition)}` has no value at {q.name} = {n}, so the threshold "
                                 "cannot be checked there", stmt.condition.span, label="no value",
                                 notes=scenario_note(scenario),
                                 hint=f"a division by zero or a value outside a function's domain at {n}; "
                                      f"leave it out of `{q.name}`'s domain with a constraint")
            return h
        cands = change_points(cond, x) if cond.has(x) else []
        if cands is not None:
            runs = integer_runs(holds, [c / scale for c in cands], lo, hi)
            method = ("exact: the condition can only change where a side crosses the other (real roots of "
                      "polynomials); checked at the integers around each crossing")
        else:
            runs = integer_runs_numeric(compile_univariate(cond, x), float(dom.scale), lo, hi, q)
            method = ("numeric: the condition evaluated at every integer up to 4096 past the bound, then by "
                      "doubling; the edge found by bisection and checked exactly")
        n = _pick(runs, stmt, q, dom, scenario, lo, hi)
        if not method.startswith("exact"):
            # floats can miss an exact edge by one: settle it exactly
            step = -1 if stmt.mode == "min" else 1
            for _ in range(64):
                nxt = n + step
                if (lo is not None and nxt < lo) or (hi is not None and nxt > hi) or not holds(nxt):
                    break
                n = nxt
        notes: list[str] = []
        self._check_answers(prep, q, values, [sp.Integer(n) * scale], notes, scenario)
        at_n = holds(n)
        neighbor = n - 1 if stmt.mode == "min" else n + 1
        inside = (lo is None or neighbor >= lo) and (hi is None or neighbor <= hi)
        at_neighbor = holds(neighbor) if inside else None
        if not at_n or at_neighbor:
            raise SolveError(f"could not verify the threshold {n} for `{q.name}`: the condition is "
                             f"{at_n} at {n} and {at_neighbor} at {neighbor}", stmt.condition.span,
                             notes=scenario_note(scenario))
        word = "fails" if at_neighbor is False else "is outside the domain"
        ver = Verification(
            text=f"holds at {q.name} = {n}, {word} at {neighbor}",
            exact=True, holds=True, neighbor=float(neighbor), neighbor_holds=at_neighbor)
        value = sp.Integer(n) * scale
        form, boundary = self._integer_form(prep, values, n, scale, cond)
        if at_neighbor is None:
            notes.append(f"the condition already holds at the {'lower' if stmt.mode == 'min' else 'upper'} "
                         f"end of the domain ({dom.text()})")
        return self._result(stmt, q, scenario, value, form, ver, method, (), boundary=boundary, notes=notes)

    def _integer_form(self, prep: _Prepared, values, n: int, scale, cond) -> tuple[Optional[sp.Basic], Optional[sp.Basic]]:
        x = prep.x
        for form, v, b in self._real_forms(prep, values):
            t = b / float(scale)
            if not (n - 1 - 1e-9 <= t <= n + 1 + 1e-9):
                continue
            ratio = form / scale
            at_b = holds_at(cond, x, v) if v.is_Rational else None
            if prep.stmt.mode == "min":
                options = [sp.ceiling(ratio), sp.floor(ratio) + 1] if at_b is not False else [sp.floor(ratio) + 1]
            else:
                options = [sp.floor(ratio), sp.ceiling(ratio) - 1] if at_b is not False else [sp.ceiling(ratio) - 1]
            for o in options:
                if o.xreplace(values) == n:
                    return (o * scale if scale != 1 else o), form
        return None, None

    # -- optimize ---------------------------------------------------------------------
    def _optimize(self, stmt: ir.Optimize, scenario, overrides, origins) -> SolveResult:
        """:func:`planner.questions.fast.optimum` (the numeric route's), with near ties the objective has no
        rational value for decided in SymPy's digits (:meth:`_digits`)."""
        from dataclasses import replace

        r = optimum(self.plan, stmt, scenario, overrides, origins, ties=self._digits)
        return replace(r, exact=rational(r.exact))

    def _digits(self, stmt: ir.Optimize, pts, y: np.ndarray, near: np.ndarray, best: int,
                scenario, overrides, origins) -> tuple[int, np.ndarray, str]:
        """The best of the candidates ``near`` (within a float whisker of the best) and its ties, where
        the objective has no rational value: at 60 significant digits. Returns (best, ties, how)."""
        try:
            f = self._objective_in(stmt, scenario, overrides, origins)
            x = self.plan.symbols[stmt.over]
            exact = [value_at(f, x, rational(pts.exact(int(i)))) for i in near]
            keys = [v if isinstance(v, sp.Rational) else sp.Float(v.evalf(DIGITS), DIGITS) for v in exact]
            if not all(k.is_real and k.is_finite for k in keys):
                raise TypeError
        except (TypeError, ValueError, ZeroDivisionError):
            return best, near, f"equal in floating point, to {NEAR_TIE:g} relative"
        pick = max if stmt.sense == "max" else min
        top = pick(keys)
        rational_only = all(isinstance(k, sp.Rational) for k in keys)
        tol = 0 if rational_only else abs(top) * sp.Float(10) ** (10 - DIGITS)
        ties = np.array([i for i, k in zip(near, keys) if abs(k - top) <= tol])
        how = "exact" if rational_only else f"equal to {DIGITS - 10} significant digits"
        return int(ties[0]), ties, how

    def _objective_in(self, stmt: ir.Optimize, scenario, overrides, origins) -> sp.Basic:
        """The objective over inputs only, every input but ``over`` at its exact value in the scenario."""
        key = ("objective", id(stmt))
        if key not in self._prepared:
            self._prepared[key] = inline(self.plan, self.plan.converter.expr(stmt.objective))  # type: ignore
        f = self._prepared[key]
        inputs, _ = self.plan.input_values(scenario, overrides, origins)
        values = {self.plan.symbols[n]: exact_number(v) for n, v in inputs.items() if n != stmt.over}
        values.update(self.upstream(f, stmt.over, stmt, scenario, overrides, origins))
        return f.xreplace(values)

    # -- shared ------------------------------------------------------------------------
    def _result(self, stmt, q: Quantity, scenario, value: sp.Basic, form, ver, method, roots,
                boundary=None, notes=()) -> SolveResult:
        v = to_float(value)
        return SolveResult(
            target=q.name, mode=stmt.mode, scenario=scenario, value=v,
            display_value=v / float(q.display.scale), unit=q.unit_text, exact=value, closed_form=form,
            verification=ver, method=method, roots=roots, boundary=boundary, statement=stmt, alias=stmt.alias,
            question=ir.question_text(stmt), notes=tuple(notes), display_form=self.in_display_units(form, q),
            form_units=self.form_units(form, q),
            booleans=frozenset(n for n, x in self.plan.model.quantities.items() if x.is_bool))

    def form_units(self, form: Optional[sp.Basic], q: Quantity) -> tuple[tuple[str, str], ...]:
        """The display unit of the target and of each input a closed form is written over (those that
        have one): the form is in these units, as :meth:`in_display_units` writes it."""
        if form is None:
            return ()
        plan, out = self.plan, [(q.name, q.unit_text)]
        for sym in sorted(form.free_symbols, key=lambda s: s.name):
            name = plan.symbols.names.get(sym)
            if sym in plan.symbols.answer_names:
                a = plan.model.answers[plan.symbols.answer_names[sym]]
                name = None if a.optimum else a.target
            if name is not None and not plan.model.quantities[name].is_bool:
                out.append((name, plan.model.quantities[name].unit_text))
        return tuple((n, u) for n, u in dict(out).items() if u)

    def in_display_units(self, form: Optional[sp.Basic], q: Quantity) -> Optional[sp.Basic]:
        """A base-unit closed form over the inputs' symbols, written over their displayed values and
        giving the target in its display unit (``rent`` in USD/month is ``rent / 2628000`` USD/s)."""
        if form is None:
            return None
        plan = self.plan
        scales = {}
        for sym in form.free_symbols:
            name = plan.symbols.names.get(sym)
            if name is not None and not plan.model.quantities[name].is_bool:
                scales[sym] = sym * rational(plan.model.quantities[name].display.scale)
            elif sym in plan.symbols.answer_names:
                a = plan.model.answers[plan.symbols.answer_names[sym]]
                scales[sym] = sym * rational(plan.model.quantities[a.target].display.scale
                                             if not a.optimum else Fraction(1))
        out = form.xreplace(scales) / rational(q.display.scale)
        try:
            return sp.factor_terms(out)
        except (TypeError, ValueError):
            return out


# ---- integer helpers ------------------------------------------------------------------


def _pick(runs: list[Run], stmt: ir.Solve, q: Quantity, dom: Domain, scenario, lo, hi) -> int:
    true = [r for r in runs if r[2]]
    cond = _text(stmt.condition)

    def span_text(r: Run) -> str:
        a = "-inf" if r[0] is None else str(r[0])
        b = "inf" if r[1] is None else str(r[1])
        return a if a == b else f"{a}..{b}"

    notes = [f"holds for {q.name} in " + ", ".join(span_text(r) for r in true)] if true else []
    notes += [f"fails for {q.name} in " + ", ".join(span_text(r) for r in runs if not r[2])]
    notes += scenario_note(scenario)
    if not true:
        err = NoRootError(f"no integer `{q.name}` in {dom.text()} makes `{cond}` hold", stmt.condition.span,
                          label="never holds in the domain", notes=notes)
        err.runs = runs  # type: ignore[attr-defined]
        raise err
    if stmt.mode == "min":
        ok = len(true) == 1 and true[0][1] == hi
        first = true[0][0]
        if ok and first is None:
            raise SolveError(f"`{cond}` holds for every integer `{q.name}` down to -inf: there is no smallest",
                             stmt.condition.span, notes=notes, hint=f"bound `{q.name}` below with a constraint")
    else:
        ok = len(true) == 1 and true[0][0] == (lo if lo is not None else None)
        first = true[0][1]
        if ok and first is None:
            raise SolveError(f"`{cond}` holds for every integer `{q.name}` up to inf: there is no largest",
                             stmt.condition.span, notes=notes, hint=f"bound `{q.name}` above with a constraint")
    if not ok:
        other = "max" if stmt.mode == "min" else "min"
        err = NotMonotoneError(
            f"`{cond}` is not monotone in `{q.name}`: it does not switch once from false to true "
            f"{'as it grows' if stmt.mode == 'min' else 'as it shrinks'}", stmt.condition.span,
            label="changes more than once" if len(true) > 1 else "fails again after holding", notes=notes,
            hint=(f"`solve {other} {q.name}` if the condition holds below a threshold; "
                  f"or bound `{q.name}` with a constraint so the condition switches once"))
        err.runs = runs  # type: ignore[attr-defined]
        raise err
    return int(first)


# ---- small helpers ---------------------------------------------------------------------


def _text(node) -> str:
    return node.span.flat


def _boundary_hint(target: str, c, text: str) -> str:
    """What to write instead of an inequality: ``solve min`` (or ``max``), the least value where it holds."""
    return (f"for the least `{target}` where it holds write `solve min {target} where {text}` (`solve max` for "
            "the greatest)")


# ---- ad hoc questions from the command line -------------------------------------------

def adhoc(plan: Plan, target: str, where: str, mode: str = "root") -> ir.Solve:
    """``--for alpha --where "speedup = 1"`` as a checked :class:`ir.Solve`."""
    from ..language.analysis import BUILTINS
    from ..language.lower import lower_expr, read_series

    tsrc = Source("--for", target)
    tspan = Span(tsrc, 0, max(1, len(target)))
    q = input_quantity(plan, target.strip(), tspan, "`solve` is for")
    source = Source("--where", where)
    cond = read_series(plan.model.plan, lower_expr(source))  # `min(cash)` as the plan's own formulas read it
    for node in ir.free_names(cond):
        if node.name not in plan.model.quantities and node.name not in plan.model.answers:
            guess = suggest(node.name, plan.model.quantities)
            raise UnknownNameError(f"unknown name `{node.name}`", node.span, label="not defined in this plan",
                                   hint=f"did you mean `{guess}`?" if guess else None)
    for node in ir.walk(cond):
        if isinstance(node, ir.ScenarioRef):
            raise SolveError("`name@scenario` is not allowed in --where; use --scenario", node.span)
        if isinstance(node, ir.Call) and node.func not in BUILTINS and node.func not in plan.model.functions:
            guess = suggest(node.func, list(BUILTINS) + list(plan.model.functions))
            raise UnknownNameError(f"unknown function `{node.func}`", node.name_span,
                                   hint=f"did you mean `{guess}`?" if guess else None)
    t = plan.analyzer.infer_strict(cond)
    if not t.is_bool:
        raise KindError("--where needs a condition such as `speedup = 1` or `compute_time >= memory_time`",
                        cond.span, label="a number, not a condition")
    return ir.Solve(q.name, mode, cond, (), None, Span(source, 0, len(where)), tspan)
