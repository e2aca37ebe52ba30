"""The typed, frozen IR of a plan. No lark and no SymPy in here.

Every node carries the :class:`~planner.language.source.Span` it came from, so any
later stage can point at the source.
"""

from __future__ import annotations

import re

import enum
from fractions import Fraction

from .lazy import lazy_dataclass as dataclass  # dataclasses.dataclass, made on first use
from .source import Source, Span

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional


class BinOp(enum.Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    POW = "^"


class CmpOp(enum.Enum):
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    APPROX = "~="


class BoolOp(enum.Enum):
    AND = "and"
    OR = "or"


# ---- units ---------------------------------------------------------------

@dataclass(frozen=True)
class UnitFactor:
    name: str
    power: int
    span: Span


@dataclass(frozen=True)
class UnitExpr:
    """A unit as written: factors with signed powers (``TB/s`` is TB^1 s^-1)."""

    factors: tuple[UnitFactor, ...]
    span: Span

    @property
    def text(self) -> str:
        return self.span.text.strip()


def unit_from_text(text: str, source: Source, offset: int) -> UnitExpr:
    """A unit written as text at ``offset`` of ``source`` (the unit part of a number token, ``TB/s``, ``B/token``,
    ``W*h``, ``s^2``, ``%/month``; a live value's ``-> kUSD/month``), read left to right: a factor after ``/``
    divides, after ``*`` (or ``·``) multiplies."""
    factors = []
    pos = offset
    sign = 1
    for part in re.split(r"([/*·])", text):
        if part in ("/", "*", "·"):
            sign = -1 if part == "/" else 1
        else:
            name, _, power = part.partition("^")
            p = int(power) if power else 1
            factors.append(UnitFactor(name, sign * p, Span(source, pos, pos + len(part))))
        pos += len(part)
    return UnitExpr(tuple(factors), Span(source, offset, offset + len(text)))


# ---- expressions -----------------------------------------------------------

@dataclass(frozen=True)
class Number:
    value: Fraction
    unit: Optional[UnitExpr]
    span: Span


@dataclass(frozen=True)
class Bool:
    value: bool
    span: Span


@dataclass(frozen=True)
class Name:
    name: str
    span: Span


@dataclass(frozen=True)
class ScenarioRef:
    """``name@scenario``: a quantity's value in another scenario (checks only)."""

    name: str
    scenario: str
    span: Span


@dataclass(frozen=True)
class Neg:
    operand: "Expr"
    span: Span


@dataclass(frozen=True)
class Binary:
    op: BinOp
    left: "Expr"
    right: "Expr"
    span: Span
    op_span: Span


@dataclass(frozen=True)
class Compare:
    """A comparison chain: ``0 <= alpha < 1`` has two ops and three operands."""

    ops: tuple[CmpOp, ...]
    operands: tuple["Expr", ...]
    span: Span
    op_spans: tuple[Span, ...]


@dataclass(frozen=True)
class Logic:
    op: BoolOp
    left: "Expr"
    right: "Expr"
    span: Span


@dataclass(frozen=True)
class Not:
    operand: "Expr"
    span: Span


@dataclass(frozen=True)
class Arg:
    name: Optional[str]
    value: "Expr"
    span: Span


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Arg, ...]
    span: Span
    name_span: Span
    # `irr(f(m) for m in 0..5)`: the range its flows (the last args) were listed from, (var, values, body) as
    # written, for the outputs to print so; not an expression of the call (walks and transforms skip it).
    # `npv(rate, net)` of a series: (None, the periods, `net`), its periods' values the flows
    over: Optional[tuple] = None


class AggOp(enum.Enum):
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    COUNT = "count"
    FIRST = "first"  # the first value of the variable where the body (a condition) holds; none: "never"


ITEM = "#"  # the variable of an aggregate written without one (`sum([a, b])`, `sum(1..n)`): no plan name


@dataclass(frozen=True)
class Values:
    """A list or a range of values: a sweep's (``a..b``, ``step``, ``times``, ``count``, ``[...]``) or an
    aggregate's (``a..b``, ``a..b step s``, ``[...]``)."""

    kind: str  # "list" | "range" | "step" | "times" | "count"
    items: tuple["Expr", ...]  # list items, or (start, stop[, by])
    span: Span


@dataclass(frozen=True)
class Aggregate:
    """``sum(body for var in values)``: ``op`` over the values of ``var`` (a range of integers steps,
    or a list), ``body`` evaluated at each. ``count`` counts where ``body`` (a condition) holds; written
    without a body (``count([a, b])``, ``sum(1..n)``) the variable is :data:`ITEM` and the body is the
    variable itself (``true`` for ``count``). ``first`` (written ``first(m for m in R where C)``) takes the
    condition ``C`` as its body and gives the first value of ``var`` where it holds. ``var`` is visible in
    ``body`` only."""

    op: AggOp
    var: str
    values: Values
    body: "Expr"
    span: Span
    name_span: Span
    var_span: Span

    @property
    def written_var(self) -> Optional[str]:
        return None if self.var == ITEM else self.var


# ---- series over periods (docs/language.md, "Series over periods") ---------------------------------

@dataclass(frozen=True)
class Series:
    """A series' definition: ``first`` is its value in the first period, ``then`` (or ``first`` where
    none is written) its value in every later one, where ``previous`` (a :class:`Previous` of
    ``name``) is the series in the period before."""

    name: str
    first: "Expr"
    then: Optional["Expr"]
    span: Span


@dataclass(frozen=True)
class Period:
    """``period``: the period being computed (a time: ``3 month`` in the third month of a plan whose
    periods are ``1 month..60 month``)."""

    span: Span


@dataclass(frozen=True)
class Previous:
    """``previous`` (in a series' ``then``), ``previous(x)`` and ``previous(x, start)``: the
    per-period quantity ``name`` in the period before; ``init`` is its value in the first period."""

    name: str
    init: Optional["Expr"]
    span: Span
    name_span: Span


@dataclass(frozen=True)
class PeriodTable:
    """``[10 USD, 10 USD, 12 USD]`` as a series' formula: the first value in the first period, the
    second in the second...; the last one holds in every period after the list."""

    items: tuple["Expr", ...]
    span: Span


REDUCTIONS = ("sum", "mean", "min", "max", "last", "count", "first")


@dataclass(frozen=True)
class Reduce:
    """A series reduced to one figure: ``sum(x)``, ``mean``, ``min``, ``max``, ``last``,
    ``count(c)``, ``first(x where c)`` (``x`` at the first period where ``c`` holds, or never).
    ``cond``: the periods it runs over (all where none is written)."""

    op: str
    body: "Expr"
    cond: Optional["Expr"]
    span: Span
    name_span: Span


@dataclass(frozen=True)
class At:
    """``x at 36 month``: a series' value in one period (never outside the plan's periods)."""

    series: "Expr"
    when: "Expr"
    span: Span


@dataclass(frozen=True)
class Never:
    """``never``: what ``first(...)`` gives where its condition never holds; compared with ``==``."""

    span: Span


Expr = (Number | Bool | Name | ScenarioRef | Neg | Binary | Compare | Logic | Not | Call | Aggregate | Series | Period
        | Previous | Reduce | At | Never | PeriodTable)
NODES: tuple[type, ...] = Expr.__args__


class Visitor:
    """One shape for every walk over the IR, as :mod:`ast`'s ``NodeVisitor`` and SymPy's printers: a method
    ``visit_<Node>`` per node class, and ``visit(e, ...)`` dispatching on ``e``'s class. That a walk covers
    every node is checked when its class is defined: a subclass may lack a method only where it defines
    ``visit_other`` (a walk over part of the IR), so a node added to the IR fails at import, not when a
    user's plan reaches the walk."""

    _visits: dict = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        other = getattr(cls, "visit_other", None)
        cls._visits = {node: getattr(cls, "visit_" + node.__name__, other) for node in NODES}
        missing = [node.__name__ for node, method in cls._visits.items() if method is None]
        if missing:
            raise TypeError(f"{cls.__qualname__} has no method for {', '.join(missing)}")

    def visit(self, e: Expr, *args, **kwargs):
        return self._visits[e.__class__](self, e, *args, **kwargs)


# The fields of each node that hold expressions, in order: a field holds one (or None) or a tuple of them;
# an argument's value and a list's or range's items are looked through.
_FIELDS: dict[type, tuple[str, ...]] = {
    Neg: ("operand",), Not: ("operand",), Binary: ("left", "right"), Logic: ("left", "right"),
    Compare: ("operands",), Call: ("args",), Aggregate: ("values", "body"), Series: ("first", "then"),
    Previous: ("init",), Reduce: ("body", "cond"), At: ("series", "when"), PeriodTable: ("items",),
}


def children(expr: Expr) -> tuple[Expr, ...]:
    fields = _FIELDS.get(expr.__class__)
    if fields is None:
        return ()
    out = []
    for field in fields:  # (told by class, not isinstance: this is the hot loop of every walk)
        value = getattr(expr, field)
        kind = value.__class__
        if kind is tuple:
            out.extend(x.value if x.__class__ is Arg else x for x in value)
        elif kind is Values:
            out.extend(value.items)
        elif value is not None:
            out.append(value)
    return tuple(out)


def walk(expr: Expr):
    """Every node of an expression, parents before children."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def map_children(expr: Expr, fn) -> Expr:
    """``expr`` with each of its children ``c`` replaced by ``fn(c)`` (one level; ``expr`` itself for a leaf)."""
    fields = _FIELDS.get(expr.__class__)
    if fields is None:
        return expr
    import dataclasses

    changes = {}
    for field in fields:  # (the shapes of :func:`children`)
        value = getattr(expr, field)
        kind = value.__class__
        if kind is tuple:
            value = tuple(dataclasses.replace(x, value=fn(x.value)) if x.__class__ is Arg else fn(x) for x in value)
        elif kind is Values:
            value = dataclasses.replace(value, items=tuple(fn(x) for x in value.items))
        elif value is not None:
            value = fn(value)
        changes[field] = value
    return dataclasses.replace(expr, **changes)


def transform(expr: Expr, fn) -> Expr:
    """Rebuild an expression bottom-up, replacing each node by ``fn(node)``."""
    return fn(map_children(expr, lambda child: transform(child, fn)))


def free_names(expr: Expr, bound: frozenset[str] = frozenset()):
    """Every :class:`Name` of ``expr`` that refers to something outside it: an aggregate's variable is
    bound in its body (``m`` in ``sum(x^m for m in 1..n)`` is not a free name; ``x`` and ``n`` are)."""
    stack: list[tuple[Expr, frozenset[str]]] = [(expr, bound)]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, Name):
            if node.name not in scope:
                yield node
        elif isinstance(node, Aggregate):
            stack.extend((i, scope) for i in node.values.items)
            stack.append((node.body, scope | {node.var}))
        else:
            stack.extend((c, scope) for c in children(node))


def walk_scoped(expr: Expr, bound: frozenset[str] = frozenset()):
    """Every node with the aggregate variables in scope there: ``(node, names bound at it)``."""
    stack: list[tuple[Expr, frozenset[str]]] = [(expr, bound)]
    pop, push = stack.pop, stack.append
    leaves = (Number, Name, Bool)
    while stack:
        node, scope = pop()
        yield node, scope
        cls = node.__class__
        if cls in leaves:  # the most common nodes first, by their class (children() asks isinstance)
            continue
        if cls is Binary:
            push((node.right, scope))
            push((node.left, scope))
        elif isinstance(node, Aggregate):
            push((node.body, scope | {node.var}))
            stack.extend((i, scope) for i in reversed(node.values.items))
        else:
            stack.extend((c, scope) for c in reversed(children(node)))


def is_literal(expr: Expr) -> bool:
    """An input is a quantity defined by a literal (optionally negated)."""
    if isinstance(expr, Neg):
        return is_literal(expr.operand)
    return isinstance(expr, (Number, Bool))


def literal(expr: Expr) -> Optional[tuple[Fraction, Optional[UnitExpr]]]:
    """A number as written (``-3``, ``1 month``): its value, the signs applied, and its unit; None for
    anything else."""
    sign = 1
    while isinstance(expr, Neg):
        sign, expr = -sign, expr.operand
    return (sign * expr.value, expr.unit) if isinstance(expr, Number) else None


def literal_unit(expr: Expr) -> Optional[UnitExpr]:
    """The unit of a number as written (``-3 ms``); None for a plain number or anything else."""
    return (literal(expr) or (None, None))[1]


# ---- statements -----------------------------------------------------------

@dataclass(frozen=True)
class Tag:
    text: str
    span: Span


@dataclass(frozen=True)
class Constraint:
    """``integer``, ``boolean`` or a condition such as ``0 <= alpha < 1``."""

    kind: str  # "integer" | "boolean" | "condition"
    condition: Optional[Expr]
    span: Span


@dataclass(frozen=True)
class Distribution:
    """An uncertain input's distribution (:mod:`planner.language.uncertain`): ``kind`` is ``range``
    (``a to b``: a lognormal with 5th percentile a and 95th b), ``normal``, ``lognormal``,
    ``uniform``, ``triangular``, ``pert`` or ``discrete``; ``params`` are literals (numbers in one
    unit), in the kind's order (a ``discrete``'s alternate values and weights). ``point_written``
    says whether the plan wrote the point value (``55% ~ 40% to 70%``); otherwise the definition's
    expression is the distribution's median."""

    kind: str
    params: tuple[Expr, ...]
    point_written: bool
    span: Span

    @property
    def values(self) -> tuple[Expr, ...]:
        """The parameters in the input's unit (all but a ``discrete``'s weights)."""
        return self.params[::2] if self.kind == "discrete" else self.params


@dataclass(frozen=True)
class Definition:
    name: str
    expr: Expr
    display: Optional[UnitExpr]
    doc: Optional[str]
    tags: tuple[Tag, ...]
    constraints: tuple[Constraint, ...]
    span: Span
    name_span: Span
    uncertain: Optional[Distribution] = None  # an uncertain input: `expr` is its point value

    @property
    def is_input(self) -> bool:
        return is_literal(self.expr)


@dataclass(frozen=True)
class Periods:
    """``periods = 1 month..60 month``: the plan's periods, the values of ``period`` (a range)."""

    values: Values
    span: Span


@dataclass(frozen=True)
class Param:
    name: str
    default: Optional[Expr]
    span: Span


@dataclass(frozen=True)
class FunctionDef:
    name: str
    params: tuple[Param, ...]
    body: Expr
    display: Optional[UnitExpr]
    doc: Optional[str]
    tags: tuple[Tag, ...]
    span: Span
    name_span: Span


def bind_args(f: "FunctionDef", call: Call) -> list[tuple["Param", Optional[Expr]]]:
    """Each parameter of ``f`` with the argument a (checked) call gives it,
    or ``None`` where the parameter's default applies."""
    positional = [a.value for a in call.args if a.name is None]
    keywords = {a.name: a.value for a in call.args if a.name is not None}
    out: list[tuple[Param, Optional[Expr]]] = []
    for i, p in enumerate(f.params):
        out.append((p, positional[i] if i < len(positional) else keywords.get(p.name)))
    return out


def inline(f: "FunctionDef", call: Call, given, default) -> tuple[Expr, dict]:
    """A call of the user function ``f`` expanded inline: ``(body, env)``, ``f``'s body and what each
    of its parameters stands for there. A parameter the call gives is ``given(argument)`` (the argument
    belongs to the caller's scope); one whose default applies is ``default(expr, bound)``, the default
    read over the parameters bound before it (``bound``, a copy; ``expr`` is None for a missing argument
    of an unchecked call). Each argument is read once, so a parameter used many times costs nothing more.

    The one place a user function is inlined: the numeric program, the exact and symbolic evaluators,
    the diagnosis, intervals, dimensions and the analysis all expand a call through it, each passing how
    it reads an expression. The body keeps its spans (an error inside it points at the function's text;
    the caller adds the call's span as a label); recursion is refused by the analysis before any of them
    runs."""
    env: dict = {}
    for p, arg in bind_args(f, call):
        env[p.name] = given(arg) if arg is not None else default(p.default, dict(env))
    return f.body, env


@dataclass(frozen=True)
class UnitDecl:
    name: str
    definition: Optional[Expr]
    doc: Optional[str]
    span: Span
    name_span: Span


@dataclass(frozen=True)
class Override:
    name: str
    expr: Expr
    span: Span
    name_span: Span


@dataclass(frozen=True)
class Scenario:
    name: str
    doc: Optional[str]
    tags: tuple[Tag, ...]
    overrides: tuple[Override, ...]
    span: Span
    name_span: Span
    axis: Optional[str] = None


@dataclass(frozen=True)
class Axis:
    name: str
    doc: Optional[str]
    members: tuple[Scenario, ...]
    span: Span
    name_span: Span


@dataclass(frozen=True)
class ScenarioPick:
    """``bf16`` or, with axes, ``precision=fp8``."""

    name: str
    axis: Optional[str]
    span: Span


@dataclass(frozen=True)
class SweepAxis:
    name: str
    values: Values
    span: Span
    name_span: Span


@dataclass(frozen=True)
class Sweep:
    axes: tuple[SweepAxis, ...]
    show: tuple[Name, ...]
    scenarios: tuple[ScenarioPick, ...]
    span: Span


@dataclass(frozen=True)
class Solve:
    target: str
    mode: str  # "root" | "min" | "max"
    condition: Expr
    scenarios: tuple[ScenarioPick, ...]
    alias: Optional[str]
    span: Span
    target_span: Span
    doc: Optional[str] = None  # what the answer means, in a sentence (`as NAME "..."`); may hold live values


@dataclass(frozen=True)
class Optimize:
    sense: str  # "max" | "min"
    objective: Expr
    over: str
    values: Values
    scenarios: tuple[ScenarioPick, ...]
    alias: Optional[str]
    span: Span
    over_span: Span
    doc: Optional[str] = None  # what the answer means, in a sentence (`as NAME "..."`); may hold live values


@dataclass(frozen=True)
class Check:
    condition: Expr
    tolerance: Optional[Expr]
    overrides: tuple[Override, ...]
    scenarios: tuple[ScenarioPick, ...]
    span: Span


@dataclass(frozen=True)
class ProbabilityCheck:
    """``check P(cost < 1 USD) >= 90%``, ``check p95(cost) <= 2 USD``: a comparison whose sides use
    statistics of the simulated quantities (``P``, ``mean``, ``sd``, ``p5``...), run against the
    simulation (:mod:`planner.questions.simulate`), not by the deterministic checks."""

    condition: Expr
    scenarios: tuple[ScenarioPick, ...]
    span: Span


@dataclass(frozen=True)
class Correlation:
    """``correlate(a, b, 0.8)``: the rank correlation (Spearman's) of two uncertain inputs in the
    simulation (:mod:`planner.language.uncertain`); ``rho`` is a number from -1 to 1."""

    a: str
    b: str
    rho: float
    span: Span
    a_span: Span
    b_span: Span
    rho_span: Span


@dataclass(frozen=True)
class Import:
    path: str
    alias: Optional[str]
    names: Optional[tuple[str, ...]]  # ``from "x" import a, b``
    span: Span


Statement = (Definition | Periods | FunctionDef | UnitDecl | Scenario | Axis | Sweep | Solve | Optimize | Check | ProbabilityCheck
             | Correlation | Import)


@dataclass(frozen=True)
class Prose:
    """A title, note or doc string of the plan's own file: its text (escapes resolved) and the span
    of the string as written (quotes included), so the live values in it (``{name}``,
    :mod:`planner.language.live`) can be checked and located."""

    text: str
    span: Span


@dataclass(frozen=True)
class PlanIR:
    source_name: str
    title: Optional[str]
    notes: tuple[str, ...]
    statements: tuple[Statement, ...]
    prose: tuple[Prose, ...] = ()  # every title, note and doc string, in file order


_CLOSING_SENTENCE = re.compile(r'\s*"(?:[^"\\\n]|\\.)*"\s*$')


def question_text(stmt) -> str:
    """A question's source on one line without its closing sentence (``solve x where y = 1 as a``, not
    ``... as a "The answer is {a}."``): how tables, workbooks and summaries name the question."""
    text = " ".join(stmt.span.text.split())
    return _CLOSING_SENTENCE.sub("", text) if getattr(stmt, "doc", None) else text


_NAMED = {Definition: "a quantity", FunctionDef: "a function", UnitDecl: "a unit", Scenario: "a scenario",
          Axis: "an axis"}


def defines(s: Statement) -> list[tuple[str, Span, str]]:
    """The names a statement defines, each with the span it is written at and what it names: a quantity,
    function, unit, scenario or axis; a namespace (``import "x" as NAME``) or an imported name; an answer
    (``solve ... as NAME``)."""
    if s.__class__ in _NAMED:
        return [(s.name, s.name_span, _NAMED[s.__class__])]
    if isinstance(s, Import) and s.alias:
        at = s.span.text.rfind(s.alias)
        return [(s.alias, Span(s.span.source, s.span.start + at, s.span.start + at + len(s.alias)), "a namespace")]
    if isinstance(s, Import):
        return [(n, s.span, "an imported name") for n in s.names or ()]
    if isinstance(s, (Solve, Optimize)) and s.alias:
        end = s.span.start + len(_CLOSING_SENTENCE.sub("", s.span.text))  # `as NAME`, before any sentence
        return [(s.alias, Span(s.span.source, end - len(s.alias), end), "an answer")]
    return []


# ---- every node of a statement ----------------------------------------------------

_PARTS: dict = {}  # an IR class -> the names of its fields that may hold nodes


def _parts(x) -> list:
    """The IR nodes (and tuples of them) directly inside ``x``: its fields that are not text, numbers,
    enums or spans (told by type, not isinstance: ``Fraction``'s ABC check is slow)."""
    kind = type(x)
    names = _PARTS.get(kind)
    if names is None:
        import dataclasses

        names = _PARTS[kind] = tuple(f.name for f in dataclasses.fields(x)) \
            if dataclasses.is_dataclass(kind) and kind not in (Span, Source) else ()
    out = []
    for n in names:
        v = getattr(x, n)
        t = type(v)
        if t is tuple or t is list or (t not in (Span, Source) and hasattr(t, "__dataclass_fields__")):
            out.append(v)
    return out


def nodes(node):
    """Every IR node inside ``node``, a statement or an expression (itself first; lists and tuples looked
    through): the one walk over whole statements (the names a statement mentions, the editor's features)."""
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        yield x
        stack.extend(_parts(x))


# The fields of each node that name a quantity or a function: what :func:`mentions` collects.
MENTIONS: dict[type, tuple[str, ...]] = {
    Name: ("name",), ScenarioRef: ("name",), Call: ("func",), Override: ("name",), SweepAxis: ("name",),
    Solve: ("target",), Optimize: ("over",),
}


def mentions(node, fields: dict[type, tuple[str, ...]] = MENTIONS) -> set[str]:
    """Every name a statement (or expression) mentions, the names it sets included (dotted names whole):
    the values of the ``fields`` of each of its nodes."""
    return {getattr(x, f) for x in nodes(node) for f in fields.get(x.__class__, ())}
