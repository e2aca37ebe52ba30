"""``check`` statements: asserted figures, per scenario, with tolerances.

* ``check a == b``: equal up to floating-point rounding (relative 1e-12).
* ``check a ~= 46.667 ms``: equal to the precision the figure is written
  with (half a unit in its last digit, here 0.0005 ms), as an article that
  rounds its numbers means them.
* ``within 0.1%`` (relative) or ``within 0.01 ms`` (absolute) sets the
  tolerance explicitly; any other comparison is evaluated as written.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from ..compute.diagnose import diagnose_expr
from ..compute.evaluation import Evaluation, Origin, Plan, as_number, format_value
from ..language import ir
from ..language.analysis import unit_of
from ..language.errors import EvaluationError, NoRootError, PlanError
from ..language.precision import APPROX_SLACK, approx_tolerance, literal_of

RELATIVE_UNITS = {"%", "ppm"}
EXACT_REL = 1e-12


@dataclass
class CheckResult:
    check: ir.Check
    scenario: Optional[str]
    passed: bool
    lhs: Optional[float | bool] = None
    rhs: Optional[float | bool] = None
    unit: str = ""
    tolerance: str = ""
    error: Optional[PlanError] = None
    overrides: dict[str, str] = field(default_factory=dict)
    flags: Optional[tuple[bool, bool]] = None  # `flag == false`: the two sides' values (lhs, rhs)
    exact_difference: Optional[Fraction] = None  # `a == b` decided exactly: a - b in the display unit
    beyond_floats: bool = False  # decided exactly, where floating point would say the opposite
    unanswered: str = ""  # the answer (`as NAME`) the check uses that has none here (``error`` says why)
    answer_mode: str = "root"  # `check churn_limit ~= ...` of a `solve max`: its actual never shown above itself

    @property
    def text(self) -> str:
        return self.check.span.flat

    @property
    def location(self) -> str:
        return self.check.span.location()

    @property
    def expected(self) -> str:
        never = never_side(self.check)  # `runway == never`: never (or not never) against the figure
        if never is not None:
            return "never" if never[1] else "not never"
        return "" if self.rhs is None else format_value(self.rhs, self.unit, 8)

    @property
    def actual(self) -> str:
        if self.lhs is None and self.error is None and never_side(self.check) is not None:
            return "never"
        return "" if self.lhs is None else format_value(self.lhs, self.unit, 8, self.answer_mode)

    def describe(self) -> str:
        where = f" in {self.scenario}" if self.scenario else ""
        if self.error is not None:
            at = ""
            if self.error.span is not None and self.error.span.start != self.check.span.start:
                at = f" ({self.error.label + ', ' if self.error.label else ''}at {self.error.span.location()})"
            if self.unanswered:  # a no-answer is a finding of its question; a check of it fails, naming it
                return f"`{self.unanswered}` has no answer{where}: {self.error.message}{at}"
            return f"could not evaluate{where}: {self.error.message}{at}"
        never = never_side(self.check)
        if never is not None:
            return f"expected {'' if never[1] else 'a value, not '}never, got {self.actual}{where}"
        if self.rhs is None:
            return f"condition is false{where}"
        tol = f" ({self.tolerance})" if self.tolerance else ""
        apart = ""
        if self.exact_difference is not None and self.expected == self.actual:
            apart = f", {decimal_text(abs(self.exact_difference))} {self.unit}".rstrip() + " apart in exact arithmetic"
        return f"expected {self.expected}{tol}, got {self.actual}{apart}{where}"


def never_side(check: ir.Check) -> Optional[tuple[ir.Expr, bool]]:
    """The figure ``x`` of ``check x == never`` (or ``!= never``: False), shown as its value or never; else None."""
    cond = check.condition
    if not (isinstance(cond, ir.Compare) and len(cond.ops) == 1 and cond.ops[0] in (ir.CmpOp.EQ, ir.CmpOp.NE)):
        return None
    left, right = cond.operands
    side = left if isinstance(right, ir.Never) else right if isinstance(left, ir.Never) else None
    return None if side is None else (side, cond.ops[0] is ir.CmpOp.EQ)


def compares_values(plan: Plan, check: ir.Check, answer_types: Optional[dict] = None) -> bool:
    """``a == b`` or ``a ~= b`` between two numbers: decided with a tolerance and
    shown as expected against actual (any other condition is just true or false)."""
    cond = check.condition
    return (isinstance(cond, ir.Compare) and len(cond.ops) == 1
            and cond.ops[0] in (ir.CmpOp.EQ, ir.CmpOp.APPROX)
            and not any(isinstance(o, ir.Never) for o in cond.operands)
            and not plan.analyzer.infer_strict(cond.operands[0], dict(answer_types or {})).is_bool)


class _CompiledCheck:
    """A check's sides (or its condition) compiled over every quantity, the values it takes from
    other scenarios (``x@fp8``) and the question answers it uses (:mod:`planner.compute.numeric`)."""

    def __init__(self, plan: Plan, check: ir.Check, answer_types: Optional[dict] = None) -> None:
        self._plan = weakref.ref(plan)  # kept per plan (_compiled_check), which it must not keep alive
        self.check = check
        cond = check.condition
        # Question results by alias (`solve ... as x`): values that come from planner.questions.solve.
        used = {n.name for n in ir.walk(cond) if isinstance(n, ir.Name)}
        self.answers = [name for name in (answer_types or {}) if name in used]
        self.pair = compares_values(plan, check, answer_types)
        # `flag == false`: true/false on both sides, shown as expected against actual
        self.never = (never_side(check) or (None,))[0]  # `runway == never`: the figure, its value or never
        self.flags = (not self.pair and self.never is None and isinstance(cond, ir.Compare)
                      and len(cond.ops) == 1 and cond.ops[0] in (ir.CmpOp.EQ, ir.CmpOp.APPROX))
        self.refs: list[ir.ScenarioRef] = [n for n in ir.walk(cond) if isinstance(n, ir.ScenarioRef)]
        from ..compute.numeric import compile_program

        refs = {id(r): f"@ref{i}" for i, r in enumerate(self.refs)}
        outputs = list(zip(self.labels, self.sides))
        # over the quantities the condition names (a call is several times faster than over every
        # quantity); a function whose body reads other quantities needs them all
        # (a series is no argument: it has no one value; the program computes it from its definition)
        plain = {n for n, q in plan.model.quantities.items() if not q.per_period}
        self.names = [n for n in dict.fromkeys(x.name for x in ir.free_names(cond)) if n in plain]
        try:
            self.compiled = compile_program(plan.model, self.names + list(refs.values()) + self.answers, outputs, refs)
        except AssertionError:  # a quantity that is not an argument (planner.compute.numeric.Compiler._name)
            self.names = [n for n in plan.model.quantities if n in plain]
            self.compiled = compile_program(plan.model, self.names + list(refs.values()) + self.answers, outputs, refs)

    @property
    def plan(self) -> Plan:
        return self._plan()

    def tolerance(self, scale: Fraction, unit: str) -> "Tolerance":
        """:func:`tolerance_of` the check, worked out once for its display unit."""
        key = (scale, unit)
        if getattr(self, "_tolerance", (None,))[0] != key:
            self._tolerance = (key, tolerance_of(self.plan, self.check, scale, unit))
        return self._tolerance[1]

    @property
    def sides(self) -> list[ir.Expr]:
        """What is compiled: both sides of ``a == b``; the condition (and, for ``flag == false``,
        its two sides too) otherwise."""
        cond = self.check.condition
        if self.pair:
            return [cond.operands[0], cond.operands[1]]
        if self.never is not None:
            return [cond, self.never]
        return [cond, cond.operands[0], cond.operands[1]] if self.flags else [cond]

    @property
    def labels(self) -> list[str]:
        if self.never is not None:
            return ["cond", "lhs"]
        return ["lhs", "rhs"] if self.pair else (["cond", "lhs", "rhs"] if self.flags else ["cond"])

    def exactly(self, exact) -> Optional[tuple]:
        """The compiled sides (or condition) in exact arithmetic from the exact inputs, with
        ``exact`` (a :class:`planner.compute.exact.ExactEvaluator` of this evaluation); None when
        they have no rational value (``sqrt``, ``exp``...), use another scenario or an answer."""
        if self.refs or self.answers or exact is None:
            return None
        from ..compute.exact import NotRational

        try:
            return tuple(exact.expr(side) for side in self.sides)
        except NotRational:
            return None

    def __call__(self, ev: Evaluation, ref_values: dict[str, float], answers: Optional[dict] = None) -> tuple:
        # numpy scalars: a division by zero is inf (and located by `problem`), not a ZeroDivisionError
        args = [as_number(ev.values[n]) for n in self.names]
        args += [as_number(ref_values[i]) for i in range(len(self.refs))]
        args += [as_number(float((answers or {})[name])) for name in self.answers]
        return self.compiled(args)

    def problem(self, ev: Evaluation, ref_values: dict[str, float], answers: Optional[dict], out) -> Optional[PlanError]:
        """Why this check has no finite value to judge, or None: a check whose actual or expected
        value (or any part of its condition) is NaN or infinite fails, with the located reason."""
        values: dict[str, object] = dict(ev.values)
        values.update({k: float(v) for k, v in (answers or {}).items()})
        for i, r in enumerate(self.refs):
            values[f"{r.name}@{r.scenario}"] = ref_values[i]
        err = diagnose_expr(self.plan.model, self.check.condition, values)
        if err is not None:
            return err
        if self.pair:
            for side, value, operand in (("actual", out[0], self.check.condition.operands[0]),
                                         ("expected", out[1], self.check.condition.operands[1])):
                if not math.isfinite(float(value)):
                    return EvaluationError(f"the {side} value is {float(value)!r}, not a finite number",
                                           operand.span, label="not finite")
        return None


_COMPILED: "weakref.WeakKeyDictionary[Plan, dict[int, tuple[ir.Check, _CompiledCheck]]]" = weakref.WeakKeyDictionary()


def _compiled_check(plan: Plan, check: ir.Check, answer_types: Optional[dict]) -> _CompiledCheck:
    """A check compiled once per plan (compiling is most of a run's time; ``planner serve`` runs the
    checks again at every edit)."""
    cache = _COMPILED.setdefault(plan, {})
    got = cache.get(id(check))
    if got is None or got[0] is not check:
        got = cache[id(check)] = (check, _CompiledCheck(plan, check, answer_types))  # the check kept alive
    return got[1]


def display_unit(plan: Plan, check: ir.Check, answers=None, figure: bool = False):
    """The unit to show a check's numbers in: the unit written on its literal, else the quantity's (or answer's)
    it compares; ``figure``: the quantity's first, as the workbook's Summary shows it (`npv > 0 USD` in kUSD)."""
    cond = check.condition
    if not isinstance(cond, ir.Compare):
        return Fraction(1), ""

    def written():
        for operand in reversed(cond.operands):
            lit = literal_of(operand)
            if lit is not None and lit.unit is not None:
                return unit_of(lit.unit, plan.model.units).scale, lit.unit.text
        return None

    shown = None if figure else written()
    if shown is not None:
        return shown
    for operand in cond.operands:
        if isinstance(operand, ir.Name) and operand.name not in plan.model.quantities:
            if answers is None:  # a question result by alias (`solve ... as x`)
                from .fast import Answers

                answers = Answers(plan)
            if operand.name in answers:
                return answers.unit(operand.name)
        if isinstance(operand, (ir.Name, ir.ScenarioRef)):
            q = plan.model.quantities[operand.name]
            return q.display.scale, q.unit_text
    shown = written() if figure else None
    if shown is not None:
        return shown
    t = plan.analyzer.infer_strict(cond.operands[0], dict(answers.types) if answers is not None else None)
    from ..language.units import canonical_text
    return Fraction(1), canonical_text(t.dim) if t.dim is not None else ""


def run_checks(plan: Plan, answers=None, base_overrides=None, checks=None) -> list[CheckResult]:
    """Every check in every scenario it names. ``answers`` (a
    :class:`planner.questions.fast.Answers`) shares question results a caller already has;
    ``base_overrides`` (an export's ``--set``) apply under each check's own ``with``; ``checks``:
    these of the plan's checks only (``planner serve`` runs again those an edited input reaches)."""
    results: list[CheckResult] = []
    cache: dict[tuple, Evaluation | PlanError] = {}
    exact_cache: dict[tuple, object] = {}

    def exact(scenario, overrides, ev: Evaluation):
        """The exact evaluator of an evaluation (shared by the checks that run in it)."""
        key = (scenario, tuple(sorted((k, str(v)) for k, v in overrides.items())))
        if key not in exact_cache:
            from ..compute.exact import ExactEvaluator

            exact_cache[key] = ExactEvaluator(plan.model, ev.inputs)
        return exact_cache[key]

    def evaluation(scenario, overrides, origins) -> Evaluation:
        key = (scenario, tuple(sorted((k, str(v)) for k, v in overrides.items())))
        if key not in cache:
            try:
                cache[key] = plan.evaluate(scenario, overrides, origins)
            except PlanError as err:
                cache[key] = err
        got = cache[key]
        if isinstance(got, PlanError):
            raise got
        return got

    # Question results by alias: the solver (and SymPy with it) only when a check uses one.
    types = answers.types if answers is not None else plan.analyzer.answer_types(plan.model)
    for check in plan.model.checks if checks is None else checks:
        overrides = dict(base_overrides or {})
        origins = {}
        from_answers = {}  # `with x = ALIAS`: set per scenario from the answer
        for o in check.overrides:
            origins[o.name] = Origin(f"`with {o.name} = {o.expr.span.flat}`", o.span)
            if isinstance(o.expr, ir.Name) and o.expr.name in types:
                from_answers[o.name] = o.expr.name
                continue
            overrides[o.name] = plan.analyzer.override_value(o, plan.model.quantities, "`with`", report=False)
        shown_overrides = {o.name: o.expr.span.flat for o in check.overrides}
        scenarios = check_scenarios(plan, check)
        compiled = _compiled_check(plan, check, types)
        if answers is None and (compiled.answers or from_answers):
            from .fast import Answers

            answers = Answers(plan)
        scale, unit = display_unit(plan, check, answers)
        lhs = check.condition.operands[0] if compiled.pair else None
        mode = answers.mode(lhs.name) if isinstance(lhs, ir.Name) and lhs.name in compiled.answers else "root"
        for scenario in scenarios:
            result = CheckResult(check, scenario, False, unit=unit, overrides=shown_overrides, answer_mode=mode)
            try:
                values, all_overrides = {}, dict(overrides)
                for n in compiled.answers:
                    result.unanswered = n  # (kept only where its answer raises NoRootError)
                    values[n] = answers.value(n, scenario, overrides, origins)
                for name, alias in from_answers.items():
                    result.unanswered = alias
                    all_overrides[name] = answers.value(alias, scenario, overrides, origins)
                result.unanswered = ""
                ev = evaluation(scenario, all_overrides, origins)
                # an answer is found in floats (a root by bisection, a closed form rounded): a check
                # that sets an input from one is decided in floats, as its answer is
                inexact = bool(from_answers)
                refs = {}
                for i, r in enumerate(compiled.refs):
                    other = evaluation(None if r.scenario == "base" else r.scenario, all_overrides, origins)
                    refs[i] = other.values[r.name]
                out = compiled(ev, refs, values)
                problem = compiled.problem(ev, refs, values, out)
                if problem is not None:
                    raise problem
            except PlanError as err:
                result.error = err
                if not isinstance(err, NoRootError):
                    result.unanswered = ""
                results.append(result)
                continue
            if compiled.pair:
                lhs, rhs = float(out[0]), float(out[1])
                tol = compiled.tolerance(scale, unit)
                exactly = compiled.exactly(exact(scenario, all_overrides, ev)) \
                    if tol.kind == "exact" and not inexact else None
                # `==` is exact where the sides have rational values (0.1 + 0.2 == 0.3 holds, 1e16 + 1 == 1e16
                # does not), and equal to float rounding where they do not (sqrt, exp, ln...)
                in_floats = within(tol, lhs, rhs)
                passed = exactly[0] == exactly[1] if exactly is not None else in_floats
                result.beyond_floats = passed != in_floats
                result.lhs, result.rhs = lhs / float(scale), rhs / float(scale)
                result.tolerance = tol.text
                result.passed = passed
                if exactly is not None and not passed:
                    result.exact_difference = (exactly[0] - exactly[1]) / scale
            else:
                exactly = compiled.exactly(exact(scenario, all_overrides, ev)) if not inexact else None
                # a condition is decided exactly where it can be (every comparison in it, `==` included)
                result.passed = bool(exactly[0]) if exactly is not None else bool(out[0])
                result.beyond_floats = result.passed != bool(out[0])
                if compiled.flags:
                    result.flags = (bool(out[1]), bool(out[2]))
                elif compiled.never is not None and math.isfinite(float(out[1])):
                    result.lhs = float(out[1]) / float(scale)  # (none where it is never)
            results.append(result)
    return results


def check_scenarios(plan: Plan, check: ir.Check) -> list[Optional[str]]:
    """The scenarios of a check's ``for`` list, resolved as for questions (one selection per statement)."""
    from ..compute.evaluation import scenarios_for

    return scenarios_for(plan, check.scenarios)


@dataclass(frozen=True)
class Tolerance:
    """How ``lhs == rhs`` / ``lhs ~= rhs`` is decided (shared with the Excel Checks sheet)."""

    kind: str  # "relative" (of |rhs|), "absolute" (base units) or "exact" (float rounding)
    value: Fraction
    slack: float  # multiplicative slack for binary rounding of the tolerance itself
    text: str  # as shown to users ("" for exact)


def tolerance_of(plan: Plan, check: ir.Check, scale: Fraction, unit: str) -> Tolerance:
    """The tolerance of an equality check: ``within`` if given, else half a unit
    of the figure's last written digit for ``~=``, else float rounding."""
    cond = check.condition
    assert isinstance(cond, ir.Compare)
    if check.tolerance is not None:
        tol_expr = check.tolerance
        lit = literal_of(tol_expr)
        tol = abs(plan.analyzer.infer_strict(tol_expr).const)
        if lit is not None and lit.unit is not None and lit.unit.text in RELATIVE_UNITS:
            return Tolerance("relative", tol, 1e-12, f"within {tol_expr.span.flat}")
        if lit is not None and "e" in lit.span.text.lower():  # `within 1e-12`: 1 × 10⁻¹² as people write it
            shown = f"{decimal_text(lit.value)} {lit.unit.text if lit.unit is not None else ''}".rstrip()
        else:
            shown = tol_expr.span.flat if lit is not None else format_value(float(tol / scale), unit)
        return Tolerance("absolute", tol, 1e-12, f"± {shown}")
    if cond.ops[0] is ir.CmpOp.APPROX:
        tol = approx_tolerance(cond, 0, plan.model.units)
        if tol is not None:
            return Tolerance("absolute", tol, APPROX_SLACK, f"± {decimal_text(tol / scale)} {unit}".rstrip())
    return Tolerance("exact", Fraction(0), EXACT_REL, "")




def decimal_text(value: Fraction) -> str:
    """A tolerance as a plan writes numbers: ``0.00005`` (not ``5e-05``) from a millionth to a
    million, else ``5e25`` or ``1e-12``; never the binary noise of a float (``5e25`` is not
    ``50000000000000002382364672``)."""
    v = Fraction(value)
    if v == 0:
        return "0"
    if Fraction(1, 10**6) <= abs(v) < 10**6:
        from decimal import Decimal

        text = format(Decimal(repr(float(v))), "f")  # the shortest digits of the float, not its binary tail
        return text[:-2] if text.endswith(".0") else text
    mantissa, _, exponent = f"{float(v):.6e}".partition("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def within(tol: Tolerance, lhs: float, rhs: float) -> bool:
    if not (math.isfinite(lhs) and math.isfinite(rhs)):
        return False
    if tol.kind == "relative":
        return abs(lhs - rhs) <= float(tol.value) * abs(rhs) * (1 + tol.slack)
    if tol.kind == "absolute":
        return abs(lhs - rhs) <= float(tol.value) * (1 + tol.slack)
    return lhs == rhs or math.isclose(lhs, rhs, rel_tol=EXACT_REL, abs_tol=0.0)
