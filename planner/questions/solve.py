"""Closed forms of a plan's answers: SymPy, asked only where a closed form is shown.

Every answer comes from the numeric route (:mod:`planner.questions.fast`, the plan's one door to its
answers), which also says why there is none. The Solver takes that answer and, where it can, refines it
and derives its closed form over the other inputs (``planner solve --closed-form``, the report, the
workbook, ``explain``); the door waits for it a bounded time and keeps the numeric answer when it
fails. The method (the univariate mathematics lives in :mod:`planner.questions.roots`):

1. The condition is written over inputs only (:func:`inline`, expanding just the quantities it uses),
   the other inputs replaced by their exact rational values.
2. When it is piecewise rational in the target (``max``/``min``/``abs``/``if`` split into branches plus
   their switch points), every real root of every piece is found exactly (``Poly.real_roots``) and
   checked against the condition with exact rationals (algebraic roots at 60 digits, against the size
   of the condition's terms: a candidate that comes close without passing is named in the notes); an
   integer threshold is checked at the integers around each crossing. Several roots, a stretch of
   them, none: located errors, which the one door (:mod:`planner.questions.fast`) turns into a note on
   the numeric answer (roots closer than floats tell apart), so that ``check`` and ``export`` agree.
3. Otherwise the numeric answer stands.
4. Constraints whose value depends on the target (``ratio < 10`` on ``ratio = x / (1 - x)``) are
   checked at each exact root: roots that break one are left out and named in the notes.
5. A closed form over the other inputs is sought once per statement (``sympy.roots`` on a numerator of
   degree <= 2, or ``solve`` when the target occurs once, within a budget); it is reported only when
   it reproduces the answer.

:class:`SolveResult` is the stable shape that the CLI, the Excel writer and the report read; see its
docstring.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

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
from .answer import SolveResult, Verification, least_hint
from .optimum import scenario_note
from .roots import (
    DIGITS,
    ROOT_TOL,
    Domain,
    FormBudget,
    Run,
    change_points,
    degree_of,
    exact_number,
    exact_roots,
    holds_at,
    inline,
    integer_runs,
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
    """Closed forms of a plan's answers: each numeric answer refined and given its closed form where SymPy
    derives one (:meth:`answer`); caches per statement."""

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

    def run(self, stmt, scenarios=None, overrides=None, origins=None) -> list[SolveResult]:
        """A statement in each of its scenarios (``scenarios`` overrides its ``for``)."""
        picks = stmt.scenarios
        return [self.answer(stmt, s, overrides, origins) for s in scenarios_for(self.plan, picks, scenarios)]

    def answer(self, stmt, scenario: Optional[str] = None, overrides=None, origins=None,
               found: Optional[SolveResult] = None) -> SolveResult:
        """``stmt``'s answer with its closed form over the other inputs, where SymPy derives one: ``found``,
        the numeric route's answer (asked of the plan's one door where not given), refined where the
        condition is piecewise rational in the target (every real root exact, each checked; an integer
        threshold settled at the crossings). A maximize or minimize has none: the door's answer."""
        if found is None:
            found = self.plan.answer_source.answer(stmt, scenario, overrides, origins)
        if isinstance(stmt, ir.Optimize):
            return found
        q = self.plan.model.quantities[stmt.target]
        prep = self._prepare(stmt)
        inputs, _ = self.plan.input_values(scenario, overrides, origins)
        values = {self.plan.symbols[n]: exact_number(v) for n, v in inputs.items() if n != stmt.target}
        values.update(self.upstream(prep.cond, scenario, overrides, origins))
        if stmt.mode != "root" and not q.integer:  # a real threshold: the boundary the answer sits on
            refined = self._with_form(prep, q, values, found)
        elif stmt.mode == "root":
            refined = self._root(prep, q, values, scenario, found)
        else:
            refined = self._threshold(prep, q, values, scenario, found)
        return self._checked(refined, found, q, values)

    def _checked(self, refined: SolveResult, found: SolveResult, q: Quantity, values: dict) -> SolveResult:
        """``refined`` where its value, and its closed form's at these inputs, are the numeric answer's (to
        1e-9); else the numeric answer, saying the closed form is not shown and why."""
        if refined is found:
            return found
        scale = float(q.display.scale)
        said = [("the exact analysis gives", refined.value)]
        if refined.closed_form is not None:
            try:
                z = complex(refined.closed_form.xreplace(values).evalf(30))
                said.append(("its closed form gives", z.real if abs(z.imag) <= 1e-12 * max(1.0, abs(z.real))
                             else math.nan))
            except (TypeError, ValueError):
                said.append(("its closed form gives", math.nan))
        for what, v in said:
            if not math.isclose(v, found.value, rel_tol=1e-9, abs_tol=1e-12 * scale):
                return self._formed(found, q, None, note=(
                    f"no closed form shown: {what} {q.name} = {significant(v / scale, 12)}, the numeric route "
                    f"{significant(found.value / scale, 12)}; the answer is the numeric route's"))
        return refined

    def _with_form(self, prep: _Prepared, q: Quantity, values: dict, found: SolveResult) -> SolveResult:
        """The numeric answer with the closed form that gives it (to 1e-12), where one of the condition's
        relations has one: ``2/(rate + 1)^years`` for ``solve min x where x * (1 + rate)^years >= 2``;
        else ``found`` itself (or its budget's note)."""
        form = self._match_form(prep, values, rational(Fraction(found.value)))
        if form is None and prep.form_note is not None:
            return self._formed(found, q, None, note=prep.form_note)
        return found if form is None else self._formed(found, q, form)

    def _formed(self, found: SolveResult, q: Quantity, form, boundary=None, note: Optional[str] = None) -> SolveResult:
        """``found`` with a closed form (its notes about one replaced by ``note``)."""
        from dataclasses import replace

        notes = tuple(n for n in found.notes if not n.startswith("closed form")) + ((note,) if note else ())
        return replace(found, closed_form=form, boundary=boundary, display_form=self.in_display_units(form, q),
                       form_units=self.form_units(form, q), notes=notes,
                       booleans=frozenset(n for n, x in self.plan.model.quantities.items() if x.is_bool))

    def upstream(self, expr: sp.Basic, scenario, overrides, origins) -> dict:
        """The exact values of the answers ``expr`` uses (another question's ``as NAME``), in this scenario
        (one that changes with the question's own input was refused by the numeric route)."""
        names = self.plan.symbols.answer_names
        return {sym: exact_number(self.plan.answer_source.value(names[sym], scenario, overrides, origins))
                for sym in sorted((x for x in expr.free_symbols if x in names), key=lambda x: x.name)}

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
        x = plan.symbols[stmt.target]
        if stmt.mode == "root":  # (an equation: the numeric route refused anything else)
            c = stmt.condition
            lhs = inline(plan, plan.converter.expr(c.operands[0]))
            rhs = inline(plan, plan.converter.expr(c.operands[1]))
            t = plan.analyzer.infer_strict(c.operands[0])
            from ..language.units import canonical_text

            prep = _Prepared(stmt, stmt.target, x, lhs - rhs, lhs, rhs,
                             lhs_unit=canonical_text(t.dim) if t.dim is not None else "")
        else:
            prep = _Prepared(stmt, stmt.target, x, inline(plan, plan.converter.expr(stmt.condition)))
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
    def _root(self, prep: _Prepared, q: Quantity, values: dict, scenario, found: SolveResult) -> SolveResult:
        x, dom = prep.x, Domain.of(q)
        f = prep.cond.xreplace(values)
        stmt = prep.stmt
        notes: list[str] = []
        candidates = exact_roots(f, x) if f.has(x) else None
        if candidates is None:  # not piecewise rational: the numeric root, with the closed form that gives it
            return self._with_form(prep, q, values, found)
        roots = [c for c in candidates if dom.contains(c) and self._is_root(f, x, c, q, dom, notes)]
        intervals = zero_intervals(f, x, dom, candidates)
        if intervals:
            raise self._interval_of_roots(prep, q, dom, intervals, scenario)
        if not roots:
            raise self._no_root(prep, q, values, scenario)
        if q.integer:  # an integer input takes whole values only (the numeric route found one)
            roots = self._whole_roots(prep, q, f, roots)
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
        method = f"exact: real roots of polynomials in {q.name} (degree {degree_of(root, x)}), checked in the domain"
        form = self._match_form(prep, values, root)
        if isinstance(root, sp.CRootOf):
            poly = plan_text(root.poly.as_expr().xreplace({root.poly.gen: x}))
            notes.insert(0, f"{q.name} is the real root of {poly} = 0 in {dom.text()}")
        if form is None and prep.form_note is not None:
            notes.append(prep.form_note)
        elif form is None:
            notes.append("no closed form over the other inputs")
        return self._result(prep.stmt, q, scenario, root, form, ver, method, tuple(to_float(r) for r in roots),
                            notes=notes)

    @staticmethod
    def _whole_roots(prep: _Prepared, q: Quantity, f: sp.Basic, roots: list[sp.Basic]) -> list[sp.Basic]:
        """The roots at which an ``integer`` input takes a whole value (exactly)."""
        x, scale = prep.x, rational(Domain.of(q).scale)
        whole = []
        for r in roots:
            n = round(to_float(r) / float(scale)) if math.isfinite(to_float(r)) else None
            if n is None or abs(to_float(r) / float(scale) - n) > 1e-9 * max(1, abs(n)):
                continue
            exact = sp.Integer(n) * scale
            if r == exact or value_at(f, x, exact) == 0:
                whole.append(exact)
        return whole

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

    def _interval_of_roots(self, prep: _Prepared, q: Quantity, dom: Domain, intervals, scenario) -> MultipleRootsError:
        def show(v, unbounded: str) -> str:
            return unbounded if v is None else format_value(to_float(v) / float(dom.scale), dom.unit)

        stretches = [f"from {show(a, '-inf')} to {show(b, 'inf')}" for a, b in intervals]
        err = MultipleRootsError(
            f"`{_text(prep.stmt.condition)}` holds for every `{q.name}` {', and '.join(stretches)}",
            prep.stmt.condition.span, label="a whole interval of solutions",
            hint=f"narrow the domain of `{q.name}` with a constraint (`where ...`) so one root remains; or "
                 + least_hint(q.name, prep.stmt.condition, interval=True),
            notes=scenario_note(scenario))
        a, b = intervals[0]
        err.interval = (-math.inf if a is None else to_float(a), math.inf if b is None else to_float(b))  # type: ignore[attr-defined]
        return err

    def _no_root(self, prep: _Prepared, q: Quantity, values, scenario) -> NoRootError:
        """No root in exact arithmetic (where the numeric route took a near touch for one): the two ends'
        ``lhs - rhs``."""
        stmt, x, dom = prep.stmt, prep.x, Domain.of(q)
        f = prep.cond.xreplace(values)
        notes = []
        pts = dom.sample(float(q.value or 0), 5)
        for p, unbounded in ((pts[0], dom.lo is None), (pts[-1], dom.hi is None)):
            v = to_float(value_at(f, x, rational(Fraction(float(p)))))
            at = format_value(p / float(dom.scale), dom.unit) if not unbounded else \
                f"{significant(p / float(dom.scale), 3)}{(' ' + dom.unit) if dom.unit else ''} (far end of the search)"
            notes.append(f"at {q.name} = {at}: lhs - rhs = {format_value(v, prep.lhs_unit)}")
        return NoRootError(f"no `{q.name}` in {dom.text()} makes `{_text(stmt.condition)}` hold",
                           stmt.condition.span, label="never holds in the domain", notes=notes + scenario_note(scenario),
                           hint="the two sides never meet there: check the inputs or widen the domain; "
                                + least_hint(q.name, stmt.condition))

    # -- integer thresholds ------------------------------------------------------------
    def _threshold(self, prep: _Prepared, q: Quantity, values: dict, scenario, found: SolveResult) -> SolveResult:
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
        if cands is None:  # not piecewise rational: the numeric threshold, with the closed form that gives it
            form, boundary = self._integer_form(prep, values, int(Fraction(found.exact) / dom.scale), scale, cond)
            return found if form is None else self._formed(found, q, form, boundary)
        runs = integer_runs(holds, [c / scale for c in cands], lo, hi)
        method = ("exact: the condition can only change where a side crosses the other (real roots of "
                  "polynomials); checked at the integers around each crossing")
        n = _pick(runs, stmt, q, dom, scenario, lo, hi)
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
