"""Uncertain inputs and probability checks, as written: from the parsed pieces to the IR.

An input written as a range or a distribution is an *uncertain input*::

    utilisation = 40% to 70%                 # a 90% interval: lognormal, P5 = 40%, P95 = 70%
    utilisation = 55% ~ 40% to 70%           # the same, with 55% as its point value
    latency     = normal(10 ms, 2 ms)        # mean, standard deviation
    price       = lognormal(2 USD, 0.5 USD)  # mean, standard deviation (of the value, not its log)
    share       = uniform(20%, 30%)          # low, high
    months      = triangular(6, 9, 18)       # low, mode, high
    weeks       = pert(6, 9, 18)             # low, mode, high: a beta, mean (low + 4 mode + high) / 6
    gpus        = discrete(8, 30%, 16, 70%)  # values and their weights, in turn

``a to b`` reads as Squiggle reads it: a lognormal whose 5th percentile is ``a`` and 95th is ``b``
(so ``a`` must be above zero; a range that reaches zero or below is a ``uniform`` or a ``normal``).
Every deterministic question (eval, check, solve, sweep, the workbook, the report) uses the input's
*point value*: the one written before ``~``, else the distribution's median. The parameters are
literals written in one unit (a bare ``0`` fits any unit).

A ``check`` whose comparison uses ``P(condition)``, ``mean(x)``, ``sd(x)`` or a percentile
``p5(x)`` ... ``p95(x)`` (``p99_9`` is the 99.9th) is a *probability check*
(:class:`planner.language.ir.ProbabilityCheck`), run against the simulation.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Optional

from . import ir, literals
from .errors import DistributionError
from .source import Span

# kind -> parameter names, in order
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "normal": ("mean", "sd"),
    "lognormal": ("mean", "sd"),
    "uniform": ("low", "high"),
    "triangular": ("low", "mode", "high"),
    "pert": ("low", "mode", "high"),
}
DISCRETE = "discrete"  # `discrete(value, weight, value, weight, ...)`
RANGE = "range"  # `a to b`
Z95 = 1.6448536269514722  # the standard normal's 95th percentile: `a to b` is mu -+ Z95 sigma in logs

_PERCENTILE = re.compile(r"p(\d{1,2})(?:_(\d+))?$")
STATISTICS = ("P", "mean", "sd")


def describe(d: ir.Distribution) -> str:
    """In words, for the language server's hover and messages."""
    p = [x.span.flat for x in d.params]
    if d.kind == RANGE:
        return f"lognormal with 90% between {p[0]} and {p[1]} (5th and 95th percentiles)"
    if d.kind == DISCRETE:
        return "discrete: " + ", ".join(f"{v} ({w})" for v, w in zip(p[::2], p[1::2]))
    names = DISTRIBUTIONS[d.kind]
    return f"{d.kind}(" + ", ".join(f"{n} {v}" for n, v in zip(names, p)) + ")"


# ---- literals --------------------------------------------------------------

def _literal(expr: ir.Expr, what: str) -> tuple[Fraction, Optional[ir.UnitExpr]]:
    lit = ir.literal(expr)
    if lit is None:
        raise DistributionError(f"{what} must be a number, such as `40%` or `3 ms`", expr.span, label="not a number",
                         hint="a distribution's parameters are literals; define a derived quantity from the "
                              "uncertain input for anything computed")
    return lit


def _unit_text(unit: Optional[ir.UnitExpr]) -> Optional[str]:
    return None if unit is None else unit.text.replace(" ", "")


def _common_unit(values: list[tuple[Fraction, Optional[ir.UnitExpr]]], exprs: list[ir.Expr],
                 span: Span) -> Optional[ir.UnitExpr]:
    unit = next((u for v, u in values if u is not None), None)
    for (v, u), e in zip(values, exprs):
        if _unit_text(u) != _unit_text(unit) and not (u is None and v == 0):
            raise DistributionError(
                f"a distribution's parameters are written in one unit: `{e.span.flat}` is not in "
                f"{unit.text if unit is not None else 'a plain number'}", e.span, label="another unit",
                hint=f"write every parameter in {unit.text if unit is not None else 'plain numbers'} "
                     f"(for example `{_example(unit)}`)")
    return unit


def _example(unit: Optional[ir.UnitExpr]) -> str:
    u = "" if unit is None else (unit.text if unit.text == "%" else " " + unit.text)
    return f"40{u} to 70{u}"


# ---- distributions -----------------------------------------------------------

def distribution_name(expr: ir.Expr, functions: frozenset[str] = frozenset()) -> Optional[str]:
    """The distribution a formula calls at its top (``normal(...)``), unless the plan defines a
    function of that name."""
    if isinstance(expr, ir.Call) and (expr.func in DISTRIBUTIONS or expr.func == DISCRETE) \
            and expr.func not in functions:
        return expr.func
    return None


def _call_params(call: ir.Call) -> list[ir.Expr]:
    if call.func == DISCRETE:
        return _discrete_params(call)
    names = DISTRIBUTIONS[call.func]
    usage = f"{call.func}({', '.join(names)})"
    given: dict[str, ir.Expr] = {}
    positional = [a for a in call.args if a.name is None]
    if len(positional) > len(names):
        raise DistributionError(f"`{call.func}` takes {len(names)} parameters: {usage}", positional[len(names)].span,
                         label="one too many", hint=f"write `{usage}`")
    for name, a in zip(names, positional):
        given[name] = a.value
    for a in call.args:
        if a.name is None:
            continue
        if a.name not in names:
            raise DistributionError(f"`{call.func}` has no parameter `{a.name}`", a.span, label="unknown parameter",
                             hint=f"write `{usage}`")
        if a.name in given:
            raise DistributionError(f"`{a.name}` is given twice", a.span, label="again", hint=f"write `{usage}`")
        given[a.name] = a.value
    missing = [n for n in names if n not in given]
    if missing:
        raise DistributionError(f"`{call.func}` needs {', '.join(f'`{m}`' for m in missing)}: {usage}", call.span,
                         label="missing a parameter", hint=f"write `{usage}`")
    return [given[n] for n in names]


DISCRETE_USAGE = "discrete(value, weight, value, weight, ...)"


def _discrete_params(call: ir.Call) -> list[ir.Expr]:
    named = next((a for a in call.args if a.name is not None), None)
    if named is not None:
        raise DistributionError("`discrete` takes values and weights in turn, without names", named.span,
                                label="a name", hint=f"write `{DISCRETE_USAGE}`, such as "
                                                     "`discrete(8, 30%, 16, 50%, 32, 20%)`")
    args = [a.value for a in call.args]
    if len(args) % 2:
        raise DistributionError("`discrete` takes a weight after each value; the last value has none",
                                args[-1].span if args else call.span, label="no weight after this",
                                hint=f"write `{DISCRETE_USAGE}`, such as `discrete(8, 30%, 16, 70%)`")
    if len(args) < 4:
        raise DistributionError("`discrete` chooses among two or more values", call.span, label="one value",
                                hint=f"write `{DISCRETE_USAGE}`; a single value is a plain number")
    return args


def median(kind: str, v: list[float]) -> float:
    """The median of a distribution given its parameters (in one unit)."""
    if kind == RANGE:
        return math.sqrt(v[0] * v[1])
    if kind == "normal":
        return v[0]
    if kind == "lognormal":
        m, s = v
        r = s / m
        return m / math.sqrt(1 + r ** 2) if abs(r) < 1e150 else m / math.hypot(1.0, r)  # (r ^ 2 overflows)
    if kind == "uniform":
        return (v[0] + v[1]) / 2
    if kind == DISCRETE:
        return discrete_median(v)
    if kind == "pert":
        a, b = pert_shape(v)
        return v[0] + (v[2] - v[0]) * beta_median(a, b)
    low, mode, high = v
    if mode - low >= (high - low) / 2:
        return low + math.sqrt((high - low) * (mode - low) / 2)
    return high - math.sqrt((high - low) * (high - mode) / 2)


def discrete_median(v: list) -> float:
    """The median of ``discrete(v1, w1, v2, w2, ...)``: the smallest value whose cumulative weight (values
    in rising order) reaches one half."""
    pairs = sorted(zip(v[::2], v[1::2]), key=lambda p: p[0])
    total = sum(w for _, w in pairs)
    acc = 0
    for value, w in pairs:
        acc += w
        if acc >= total / 2:
            return value
    return pairs[-1][0]


def pert_shape(v: list) -> tuple[float, float]:
    """The beta shape parameters of ``pert(low, mode, high)``: 1 + 4 (mode - low) / (high - low) and
    1 + 4 (high - mode) / (high - low) (the classic PERT, mean (low + 4 mode + high) / 6)."""
    low, mode, high = (float(x) for x in v)
    return 1 + 4 * (mode - low) / (high - low), 1 + 4 * (high - mode) / (high - low)


def beta_median(a: float, b: float) -> float:
    """The median of a Beta(a, b), by bisection on the regularized incomplete beta (plain floats: the
    point value of a pert is found as a plan is read, without numpy)."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if betainc(a, b, mid) < 0.5:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b) for one ``x`` (the continued fraction of Numerical
    Recipes' ``betacf``, on the side of ``x`` where it converges fast)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - betainc(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 4e-16:
            break
    return front * h


def _validate(kind: str, values: list[Fraction], exprs: list[ir.Expr], span: Span, usage: str) -> None:
    def bad(message: str, at: ir.Expr | Span, label: str, hint: str):
        raise DistributionError(message, at if isinstance(at, Span) else at.span, label=label, hint=hint)

    if kind == RANGE:
        low, high = values
        if low >= high:
            bad(f"a range runs from low to high: {exprs[0].span.flat} is not below {exprs[1].span.flat}", span,
                "low end not below high end", f"write the low end first (`{exprs[1].span.flat} to "
                f"{exprs[0].span.flat}`)" if low > high else "give the range a width, or write a plain number")
        if low <= 0:
            bad(f"`a to b` is a lognormal (90% between a and b), so its low end must be above 0; "
                f"it is {exprs[0].span.flat}", exprs[0], "not above 0",
                f"for a range that reaches 0 or below write `uniform({exprs[0].span.flat}, {exprs[1].span.flat})` "
                f"or `normal(mean, sd)`")
    elif kind == "normal":
        if values[1] <= 0:
            bad("a normal's standard deviation must be above 0", exprs[1], "not above 0",
                f"write `{usage}` with sd > 0 (a certain value is a plain number)")
    elif kind == "lognormal":
        if values[0] <= 0:
            bad("a lognormal's mean must be above 0 (its values are all positive)", exprs[0], "not above 0",
                "for a quantity that can be 0 or negative write `normal(mean, sd)` or `uniform(low, high)`")
        if values[1] <= 0:
            bad("a lognormal's standard deviation must be above 0", exprs[1], "not above 0",
                f"write `{usage}` with sd > 0 (a certain value is a plain number)")
    elif kind == "uniform":
        if values[0] >= values[1]:
            bad(f"`uniform(low, high)` needs low below high: {exprs[0].span.flat} is not below "
                f"{exprs[1].span.flat}", span, "low not below high", "write the low end first")
    elif kind in ("triangular", "pert"):
        low, mode, high = values
        if low >= high:
            bad(f"`{kind}(low, mode, high)` needs low below high: {exprs[0].span.flat} is not below "
                f"{exprs[2].span.flat}", span, "low not below high", f"write `{kind}(low, mode, high)`")
        if not low <= mode <= high:
            bad(f"a {kind}'s mode must lie between its low and high ends; {exprs[1].span.flat} does not",
                exprs[1], "outside low..high", f"write `{kind}(low, mode, high)` with low <= mode <= high")


def make(kind: str, params: list[ir.Expr], point: Optional[ir.Expr], span: Span
         ) -> tuple[ir.Expr, ir.Distribution]:
    """The point value (the one written, else the median, as a literal in the parameters' unit) and
    the distribution of an uncertain input; a located error for what it cannot mean."""
    if kind == DISCRETE:
        return _make_discrete(params, point, span)
    names = ("low end", "high end") if kind == RANGE else DISTRIBUTIONS[kind]
    usage = "low to high" if kind == RANGE else f"{kind}({', '.join(DISTRIBUTIONS[kind])})"
    given = [_literal(e, f"the {n} of `{usage}`" if kind != RANGE else f"the {n} of a range")
             for n, e in zip(names, params)]
    unit = _common_unit(given, params, span)
    values = [v for v, _ in given]
    _validate(kind, values, params, span, usage)
    dist = ir.Distribution(kind, tuple(params), point is not None, span)
    if point is not None:
        return point, dist
    exact = {"normal": values[0], "uniform": (values[0] + values[1]) / 2 if kind == "uniform" else None}.get(kind)
    value = exact if exact is not None else _scaled_median(kind, values)
    number: ir.Expr = ir.Number(abs(value), unit, span)
    if value < 0:
        number = ir.Neg(number, span)
    return number, dist


def _scaled_median(kind: str, values: list[Fraction]) -> Fraction:
    """The median of parameters of any size, in floats; for parameters beyond a float's range (``1e309 ps``
    is 1e297 s), on the values scaled by a power of two, which scales every kind's median alike. (A
    parameter beyond double precision in base units is refused at the parameter, as every literal is:
    :mod:`planner.language.literals`; its median is then a stand-in.)"""
    try:
        m = median(kind, [float(v) for v in values])
        if math.isfinite(m):
            return Fraction(repr(m))
    except (OverflowError, ValueError, ZeroDivisionError):
        pass
    k = max((v.numerator.bit_length() - v.denominator.bit_length() for v in values if v != 0), default=0)
    try:
        return Fraction(median(kind, [float(v / Fraction(2) ** k) for v in values])) * Fraction(2) ** k
    except (OverflowError, ValueError, ZeroDivisionError):
        return values[-1]


def log_params(kind: str, params) -> tuple[float, float]:
    """(mu, sigma) of the logarithm of a lognormal: ``range`` (P5, P95) or ``lognormal`` (mean, sd)."""
    if kind == RANGE:
        low, high = params
        return (math.log(low) + math.log(high)) / 2, (math.log(high) - math.log(low)) / (2 * Z95)
    mean, sd = params
    r = sd / mean
    # log(1 + r^2); for r past 1e150 (r^2 overflows) the same as 2 log r + log(1 + 1/r^2)
    s2 = math.log1p(r ** 2) if r < 1e150 else 2 * (math.log(sd) - math.log(mean)) + math.log1p((mean / sd) ** 2)
    return math.log(mean) - s2 / 2, math.sqrt(s2)


UNBOUNDED = (RANGE, "lognormal", "normal")  # the kinds without finite ends (a constraint truncates them)
MAX_CUT = 0.05  # the share of an unbounded distribution its input's domain may cut off at either end


def unbounded_cdf(kind: str, params, x: float) -> float:
    """P(value <= x) of a range, a lognormal or a normal (``params`` and ``x`` in base units)."""
    if kind == "normal":
        mean, sd = params
        return 0.5 * math.erfc(-(x - mean) / (sd * math.sqrt(2)))
    if x <= 0:
        return 0.0
    if math.isinf(x):
        return 1.0
    mu, sigma = log_params(kind, params)
    return 0.5 * math.erfc(-(math.log(x) - mu) / (sigma * math.sqrt(2)))


def domain(q, params: list[float]) -> tuple[float, float]:
    """The part of input ``q``'s distribution (``params`` in base units) its constraints keep, as
    probabilities: an unbounded one (a range, a normal, a lognormal) is truncated there, unless that cuts
    off more than 5% at an end (then the 90% interval itself breaks the constraint); a bounded one must
    lie inside; an `integer` input cannot be uncertain, but for a `discrete` of whole numbers. A located
    error otherwise: checked as the plan loads, so every question refuses what the simulation would."""
    from .errors import ConstraintError, Label

    d = q.definition.uncertain
    if q.integer and not (d.kind == DISCRETE and all(float(v).is_integer() for v in params[::2])):
        c = next(c for c in q.definition.constraints if c.kind == "integer")
        raise DistributionError(f"`{q.name}` is an integer, and an uncertain input takes any value in its range",
                                d.span, label="uncertain", labels=[Label(c.span, "integer")],
                                hint=f"drop `integer`, or give `{q.name}` one value")
    lo = -math.inf if q.lower is None else float(q.lower.value)
    hi = math.inf if q.upper is None else float(q.upper.value)
    constraint = next((c for c in q.definition.constraints if c.kind == "condition"), None)
    where = constraint.span if constraint is not None else q.definition.span
    if d.kind not in UNBOUNDED:
        ends = list(zip(params[::2], d.params[::2])) if d.kind == DISCRETE else [(params[0], d.params[0]),
                                                                                 (params[-1], d.params[-1])]
        (low, low_text), (high, high_text) = min(ends, key=lambda e: e[0]), max(ends, key=lambda e: e[0])
        if low < lo or high > hi:
            raise ConstraintError(
                f"`{q.name}` = {d.span.flat} reaches {(low_text if low < lo else high_text).span.flat}, outside "
                "what its constraint allows", where, label="this constraint", labels=[Label(d.span, describe(d))],
                hint="keep the distribution's ends inside the constraint")
        return (0.0, 1.0)
    low, high = (0.0 if d.kind != "normal" else -math.inf), math.inf
    f_lo = unbounded_cdf(d.kind, params, lo) if lo > low else 0.0
    f_hi = unbounded_cdf(d.kind, params, hi) if hi < high else 1.0
    if f_lo > MAX_CUT or 1 - f_hi > MAX_CUT:
        cut = f_lo if f_lo > MAX_CUT else 1 - f_hi
        raise ConstraintError(
            f"`{q.name}` = {d.span.flat} puts {cut:.1%} of its values outside what its constraint allows",
            where, label="this constraint", labels=[Label(d.span, describe(d))],
            hint="narrow the distribution (at most 5% may fall outside, and is cut off), or use a bounded one: "
                 "uniform(low, high), triangular(low, mode, high)")
    return (f_lo, f_hi)


def _make_discrete(params: list[ir.Expr], point: Optional[ir.Expr], span: Span) -> tuple[ir.Expr, ir.Distribution]:
    """``discrete(v1, w1, v2, w2, ...)``: values in one unit, weights above 0 (plain or %) that add to 1;
    its point value, unless written, is its median (one of its values, as written)."""
    values, weights = params[::2], params[1::2]
    given = [_literal(e, "a value of `discrete`") for e in values]
    _common_unit(given, values, span)
    shares = []
    for e in weights:
        w, unit = _literal(e, "a weight of `discrete`")
        if unit is not None and unit.text != "%":
            raise DistributionError(f"a weight is a share (`30%` or `0.3`), not `{e.span.flat}`", e.span,
                                    label="has a unit", hint=f"write `{DISCRETE_USAGE}`")
        w = w / 100 if unit is not None else w
        literals.check(w, e.span)  # a share, a plain number: the range rule of every literal
        if w <= 0:
            raise DistributionError(f"a weight must be above 0; it is {e.span.flat}", e.span, label="not above 0",
                                    hint="drop a value that cannot happen")
        shares.append(w)
    total = sum(shares)
    if total != 1:
        raise DistributionError(f"the weights of `discrete` add to {float(total):.6g}, not 100%", span,
                                label="weights do not add to 100%",
                                hint="make them add to 100% (`discrete(8, 30%, 16, 70%)`)")
    seen: dict[Fraction, ir.Expr] = {}
    for (v, _), e in zip(given, values):
        if v in seen:
            raise DistributionError(f"`{e.span.flat}` is listed twice", e.span, label="again",
                                    hint="give each value once, with the sum of its weights")
        seen[v] = e
    dist = ir.Distribution(DISCRETE, tuple(params), point is not None, span)
    if point is not None:
        return point, dist
    mid = discrete_median([x for pair in zip([v for v, _ in given], shares) for x in pair])
    return seen[mid], dist


def from_definition(expr: ir.Expr, uncertainty, functions: frozenset[str] = frozenset()
                    ) -> tuple[ir.Expr, Optional[ir.Distribution]]:
    """A definition's expression and its distribution (``None``: a certain quantity). ``uncertainty``
    is what the grammar's ``uncertainty`` gave: ``("to", high)``, ``("~", dist_or_low, high_or_None)``
    or ``None``."""
    if uncertainty is None:
        kind = distribution_name(expr, functions)
        if kind is None:
            return expr, None
        return make(kind, _call_params(expr), None, expr.span)
    if uncertainty[0] == "to":
        high = uncertainty[1]
        return make(RANGE, [expr, high], None, Span(expr.span.source, expr.span.start, high.span.end))
    _, first, high = uncertainty
    if high is not None:
        return make(RANGE, [first, high], expr, Span(first.span.source, first.span.start, high.span.end))
    kind = distribution_name(first, functions)
    if kind is None:
        raise DistributionError("after `~` comes a range or a distribution", first.span, label="not a distribution",
                         hint="write `point ~ low to high` or `point ~ normal(mean, sd)` "
                              f"(distributions: {', '.join(list(DISTRIBUTIONS) + [DISCRETE])})")
    return make(kind, _call_params(first), expr, first.span)


# ---- probability checks --------------------------------------------------------

def percentile_level(func: str) -> Optional[float]:
    """``p95`` is 95, ``p99_9`` is 99.9; ``None`` for any other name."""
    m = _PERCENTILE.match(func)
    if not m:
        return None
    return float(m.group(1) + ("." + m.group(2) if m.group(2) else ""))


def is_statistic(node: ir.Expr, functions: frozenset[str] = frozenset()) -> bool:
    return (isinstance(node, ir.Call) and node.func not in functions
            and (node.func in STATISTICS or percentile_level(node.func) is not None))


def probability_check(check: ir.Check, functions: frozenset[str] = frozenset()
                      ) -> Optional[ir.ProbabilityCheck]:
    """The probability check a ``check`` statement is, when its condition uses a statistic."""
    if not any(is_statistic(n, functions) for n in ir.walk(check.condition)):
        return None
    if check.tolerance is not None or check.overrides:
        raise DistributionError("a probability check takes no `within` or `with`", check.span,
                                label="probability check",
                         hint="write the bound in the comparison (`check p95(cost) <= 2 USD`); for other inputs "
                              "use a scenario (`check P(x < 1) >= 90% in high_load`)")
    return ir.ProbabilityCheck(check.condition, check.scenarios, check.span)


# ---- declared correlation -------------------------------------------------------

def correlation(a: str, b: str, rho_expr: ir.Expr, span: Span, a_span: Span, b_span: Span) -> ir.Correlation:
    """``correlate(a, b, rho)``: a rank correlation from -1 to 1 (a plain number or a percentage) of two
    different inputs; a located error otherwise. Whether both are uncertain inputs, and whether the
    plan's correlations together can hold, is checked with the plan (:func:`correlation_factor`)."""
    usage = "correlate(input_a, input_b, rank_correlation)"
    value, unit = _literal(rho_expr, "a correlation")
    if unit is not None and unit.text != "%":
        raise DistributionError(f"a correlation is a plain number from -1 to 1, not `{rho_expr.span.flat}`",
                                rho_expr.span, label="has a unit", hint=f"write `{usage}`, such as "
                                f"`correlate({a}, {b}, 0.8)`")
    if unit is not None:
        value = value / 100
    if not -1 <= value <= 1:
        raise DistributionError(f"a correlation runs from -1 to 1; {rho_expr.span.flat} is outside", rho_expr.span,
                                label="outside -1..1", hint="1 moves the two inputs together, -1 against each other, "
                                                            "0 leaves them independent")
    if a == b:
        raise DistributionError(f"`{a}` is correlated with itself", b_span, label="the same input",
                                hint=f"write two different uncertain inputs: `{usage}`")
    return ir.Correlation(a, b, float(value), span, a_span, b_span, rho_expr.span)


def normal_correlation(rho: float) -> float:
    """The correlation of the underlying normals that gives rank correlation ``rho`` in a Gaussian copula
    (Pearson's 1907 relation, exact for continuous marginals: rho_S = 6/pi * asin(r/2))."""
    if abs(rho) == 1:  # exactly: 2 sin(pi / 6) is 0.9999999999999999 in floats
        return float(rho)
    return 2 * math.sin(math.pi * rho / 6)


def correlation_factor(names: list[str], pairs: list[ir.Correlation]) -> list[list[float]]:
    """The lower-triangular factor ``L`` (``L L^T = R``) of the normals' correlation matrix ``R`` of
    ``names`` (those in a declared correlation, in this order); a located error when the set cannot
    hold together (``R`` not positive semi-definite; a pair not declared is independent)."""
    index = {n: i for i, n in enumerate(names)}
    k = len(names)
    r = [[1.0 if i == j else 0.0 for j in range(k)] for i in range(k)]
    for pair in pairs:
        i, j = index[pair.a], index[pair.b]
        r[i][j] = r[j][i] = normal_correlation(pair.rho)
    if _cholesky(r) is None:
        from .errors import Label

        declared = {frozenset((p.a, p.b)) for p in pairs}
        missing = [(x, y) for i, x in enumerate(names) for y in names[i + 1:] if frozenset((x, y)) not in declared]
        raise DistributionError(
            "these correlations cannot all hold: their matrix is not positive semi-definite"
            + (" (a pair not declared is independent: " + ", ".join(f"{x} and {y}" for x, y in missing) + ")"
               if missing else ""), pairs[-1].span, label="impossible with the others",
            labels=[Label(p.span, "with this") for p in pairs[:-1]],
            hint="loosen one, or declare the pair between: if a moves with b and b with c, a moves with c too "
                 "(with 0.9 and 0.9, a and c need more than 0.6)")
    factor = _cholesky(r)
    assert factor is not None
    return factor


_PSD_SLACK = 1e-12


def _cholesky(r: list[list[float]]) -> Optional[list[list[float]]]:
    """``L`` with ``L L^T = r`` for a positive semi-definite ``r`` (a zero pivot, as for a correlation
    of exactly 1, leaves its column 0), else ``None``. Plain Python: the matrices are small, and the
    workbook writes these same numbers as its cells' constants."""
    k = len(r)
    out = [[0.0] * k for _ in range(k)]
    for j in range(k):
        d = r[j][j] - sum(out[j][m] ** 2 for m in range(j))
        if d < -_PSD_SLACK:
            return None
        pivot = math.sqrt(max(d, 0.0))
        out[j][j] = pivot
        for i in range(j + 1, k):
            s = r[i][j] - sum(out[i][m] * out[j][m] for m in range(j))
            if pivot <= _PSD_SLACK:
                if abs(s) > 1e-9:
                    return None
                out[i][j] = 0.0
            else:
                out[i][j] = s / pivot
    return out
