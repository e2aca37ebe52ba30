"""Compiled evaluation straight from the typed IR: the plan as one numpy function, without SymPy.

``planner eval``, ``sweep`` and ``check`` need numbers, not algebra, and
importing SymPy costs more than evaluating a plan. This module builds each
formula's canonical form with :mod:`planner.compute.canonical` (the same
constructor calls :mod:`planner.compute.symbolic` makes, giving the trees SymPy
would give) and prints it as :class:`planner.compute.compiled.NumpyPrinter`
would: the same source text, so the same floating-point operations in the
same order and the same numbers to the last bit. A formula whose canonical
form is not mirrored (:class:`~planner.compute.canonical.Unsupported`) is
printed through SymPy instead, imported only then; :attr:`IRCompiled.fallbacks`
names them.

The generated code only ever holds identifiers this module made (``_v0``,
``_v1``...) and float literals, never user text.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Mapping, Optional, Sequence

from ..language import ir
from ..language.analysis import unit_of
from ..language.model import Model
from . import canonical as C
from .program import IRCompiled, Steps, load_source, power_base  # noqa: F401  (re-exported)

Node = tuple


class Converter:
    """IR to canonical nodes, call for call as :class:`planner.compute.symbolic.Converter` does."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._scales: dict[int, Fraction] = {}
        self._names: dict[str, Node] = {}
        # while divisions() converts a formula: every divisor that is not a nonzero number, with the
        # branch conditions of the `if`s it sits in: (divisor, ((condition, holds), ...))
        self.divisors: Optional[list] = None
        self._branches: list = []

    def expr(self, e: ir.Expr, env: Optional[Mapping[str, Node]] = None,
             ref: Optional[Callable[[ir.ScenarioRef], Node]] = None) -> Node:
        return self._conv(e, env or {}, ref)

    def divisions(self, e: ir.Expr) -> tuple[Node, list]:
        """:meth:`expr` of a quantity's formula, and the divisions it makes: (divisor, ((condition,
        holds), ...)) for each divisor that is not a nonzero number, with the ``if`` branches it sits in."""
        self.divisors, self._branches = [], []
        try:
            return self._conv(e, {}, None), self.divisors
        finally:
            self.divisors, self._branches = None, []

    def _scale(self, unit: ir.UnitExpr) -> Fraction:
        key = id(unit)
        got = self._scales.get(key)
        if got is None:
            got = self._scales[key] = unit_of(unit, self.model.units).scale
        return got

    def _name(self, name: str) -> Node:
        node = self._names.get(name)
        if node is None:
            node = ("s", name)  # a quantity, or a question's answer used in a formula (a number)
            q = self.model.quantities.get(name)
            if q is not None and q.is_bool:
                node = C.relation("Eq", node, C.ONE)
            self._names[name] = node
        return node

    def _conv(self, e: ir.Expr, env, ref) -> Node:
        t = type(e)
        if t is ir.Number:
            if e.unit is not None:
                return ("n", e.value * self._scale(e.unit))
            return ("n", e.value)
        if t is ir.Name:
            name = e.name
            if env and name in env:
                return env[name]
            return self._name(name)
        conv = self._conv
        if t is ir.Binary:
            op = e.op
            if op is _ADD or op is _SUB:
                terms = []
                for x, positive in _terms(e):
                    v = conv(x, env, ref)
                    terms.append(v if positive else C.neg(v))
                return C.add(*terms)
            if op is _MUL:
                return C.mul(*[conv(x, env, ref) for x in _factors(e)])
            a, b = conv(e.left, env, ref), conv(e.right, env, ref)
            if op is _DIV:
                if b[0] == "n" and b[1] != 0:
                    return C.mul(a, ("n", 1 / b[1]))
                if self.divisors is not None:  # SymPy's algebra may drop it (0/z, z/z, x*z/z)
                    self.divisors.append((b, tuple(self._branches)))
                return C.mul(a, C.power(b, C.NEG_ONE))
            return C.power(a, b)
        if t is ir.Neg:
            return C.neg(conv(e.operand, env, ref))
        if t is ir.Call:
            return self._call(e, env, ref)
        if t is ir.Bool:
            return C.TRUE if e.value else C.FALSE
        if t is ir.Compare:
            ops = [conv(o, env, ref) for o in e.operands]
            rels = [C.relation(_REL[op], ops[i], ops[i + 1]) for i, op in enumerate(e.ops)]
            return rels[0] if len(rels) == 1 else C.and_or("and", rels)
        if t is ir.Logic:
            return C.and_or("and" if e.op is ir.BoolOp.AND else "or", [conv(e.left, env, ref), conv(e.right, env, ref)])
        if t is ir.Not:
            return C.not_(conv(e.operand, env, ref))
        if t is ir.ScenarioRef:
            if ref is None:
                raise AssertionError("scenario reference outside a check")
            return ref(e)
        if t is ir.Aggregate:
            return self._aggregate(e, env, ref)
        raise C.Unsupported(f"the {type(e).__name__} node")

    def _aggregate(self, e: ir.Aggregate, env, ref) -> Node:
        """An aggregate over a list, written out term by term (``sum([q, k])`` is ``q + k``). One over a
        range (SymPy's ``Sum`` over an index, its ends decided with SymPy's polynomials) is not mirrored."""
        if e.values.kind != "list":
            raise C.Unsupported("an aggregate over a range")
        terms = []
        for item in e.values.items:
            inner = {**(env or {}), e.var: self._conv(item, env, ref)}
            terms.append(self._conv(e.body, inner, ref))
        op = e.op
        if op is ir.AggOp.SUM:
            return C.add(*terms)
        if op is ir.AggOp.PRODUCT:
            return C.mul(*terms)
        if op is ir.AggOp.COUNT:
            return C.add(*[_indicator(t) for t in terms])
        return C.max_min("Max" if op is ir.AggOp.MAX else "Min", terms)

    def _call(self, e: ir.Call, env, ref) -> Node:
        c = lambda x: self._conv(x, env, ref)  # noqa: E731
        f = self.model.functions.get(e.func)
        if f is not None:
            inner: dict[str, Node] = {}
            for p, arg in ir.bind_args(f, e):
                inner[p.name] = c(arg) if arg is not None else self._conv(p.default, dict(inner), ref)
            return self._conv(f.body, inner, ref)
        name = e.func
        if name == "if" and self.divisors is not None and len(e.args) == 3:
            cond = c(e.args[0].value)
            args = [cond]
            for holds, arg in ((True, e.args[1]), (False, e.args[2])):
                self._branches.append((cond, holds))  # a division in a branch counts only where it is taken
                try:
                    args.append(c(arg.value))
                finally:
                    self._branches.pop()
        else:
            args = [c(a.value) for a in e.args]
        if name == "max" or name == "min":
            return C.max_min("Max" if name == "max" else "Min", args)
        if name == "abs":
            return C.abs_(args[0])
        if name == "sqrt":
            return C.power(args[0], C.HALF)
        if name == "exp":
            return C.exp_(args[0])
        if name == "ln":
            return C.log_(args[0])
        if name == "log":
            return C.mul(C.log_(args[0]), C.power(C.log_(args[1]), C.NEG_ONE))
        if name == "floor":
            return C.floor_ceiling("floor", args[0])
        if name == "ceil":
            return C.floor_ceiling("ceiling", args[0])
        if name == "round":
            x = args[0]
            scale = C.power(("n", Fraction(10)), args[1]) if len(args) > 1 else C.ONE
            # sign(x) * floor(Abs(x) * scale + 1/2) / scale, operator by operator
            rounded = C.floor_ceiling("floor", C.add(C.mul(C.abs_(x), scale), C.HALF))
            return C.mul(C.mul(C.sign_(x), rounded), C.power(scale, C.NEG_ONE))
        if name == "if":
            cond, a, b = args
            if cond == C.TRUE:
                return a
            if cond == C.FALSE:
                return b
            return C.piecewise([(a, cond), (b, C.TRUE)])
        raise C.Unsupported(f"the function {name}")


_ADD, _SUB, _MUL, _DIV = ir.BinOp.ADD, ir.BinOp.SUB, ir.BinOp.MUL, ir.BinOp.DIV


def _indicator(cond: Node) -> Node:
    """1 where ``cond`` holds, else 0 (what ``count`` adds up)."""
    if cond == C.TRUE:
        return C.ONE
    if cond == C.FALSE:
        return C.ZERO
    return C.piecewise([(C.ONE, cond), (C.ZERO, C.TRUE)])

_REL = {
    ir.CmpOp.EQ: "Eq", ir.CmpOp.APPROX: "Eq", ir.CmpOp.NE: "Ne", ir.CmpOp.LT: "Lt",
    ir.CmpOp.LE: "Le", ir.CmpOp.GT: "Gt", ir.CmpOp.GE: "Ge",
}


def _terms(e: ir.Binary) -> list[tuple[ir.Expr, bool]]:
    """The terms of a left-deep chain of `+` and `-`, with their signs, in order."""
    right: list[tuple[ir.Expr, bool]] = []
    node: ir.Expr = e
    while type(node) is ir.Binary and (node.op is _ADD or node.op is _SUB):
        right.append((node.right, node.op is _ADD))
        node = node.left
    right.append((node, True))
    right.reverse()
    return right


def _factors(e: ir.Binary) -> list[ir.Expr]:
    right: list[ir.Expr] = []
    node: ir.Expr = e
    while type(node) is ir.Binary and node.op is _MUL:
        right.append(node.right)
        node = node.left
    right.append(node)
    right.reverse()
    return right


# ---- printing: NumpyPrinter's text for the same tree ------------------------------------------

def _number(v: Fraction) -> tuple[str, tuple]:
    """A number's text in the code, and its step (:mod:`planner.compute.program`)."""
    try:
        x = v.numerator / v.denominator  # correctly rounded, as the SymPy route prints it
    except OverflowError:
        x = math.inf if v > 0 else -math.inf
    if math.isinf(x):
        return ("_np.inf", ("k", x)) if x > 0 else ("(-_np.inf)", ("k", x))
    return repr(x), ("k", x)


_ATOMS = frozenset(("n", "s", "d", "b"))  # nodes without arguments (never hoisted)
_OPS = {"Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">="}
_FUNCS = {"Abs": "abs", "sign": "sign", "log": "log", "exp": "exp"}
_NAN = ("_np.nan", ("k", math.nan))
_ONE_TEXT = ("1.0", ("k", 1.0))


class Printer:
    """NumpyPrinter's text for a canonical form, and with it the same code as steps for
    :class:`planner.compute.program.Steps` (the one evaluation without compiling the code):
    each part's text and its step are made together, so that the steps are the text as Python
    reads it (``-a*b`` as ``(-a)*b``, left to right)."""

    HOIST = 40  # as NumpyPrinter: subtrees deeper than this get a line of their own (`_hN = ...`)

    def __init__(self, names: Mapping[Node, str]) -> None:
        self.names = names
        self.nesting = 0  # of the expression being printed
        self.count = 0  # hoisted lines so far (their names are _h1, _h2...)
        self.hoisted: list[str] = []  # `_hN = ...` lines that must come before the printed expression
        self.hoisted_steps: list[tuple[str, tuple]] = []  # the same, as (name, step)

    def __call__(self, e: Node) -> str:
        return self.p(e)[0]

    def both(self, e: Node) -> tuple[str, tuple]:
        """``e``'s text and its step."""
        return self.p(e)

    def p(self, e: Node) -> tuple[str, tuple]:
        # NumpyPrinter.p, step for step: every branch is evaluated anyway (numpy), so moving a deep
        # subtree to a line of its own is exact; Python's parser nests only about 200 deep
        tag = e[0]
        if tag == "s" or tag == "d":  # (atoms first: nothing to nest or hoist)
            name = self.names[e]
            return name, ("v", name)
        if tag == "n":
            return _number(e[1])
        if self.nesting >= self.HOIST and tag not in _ATOMS:
            saved, self.nesting = self.nesting, 0
            try:
                text, step = self.p(e)
            finally:
                self.nesting = saved
            self.count += 1
            name = f"_h{self.count}"
            self.hoisted.append(f"{name} = {text}")
            self.hoisted_steps.append((name, step))
            return name, ("v", name)
        self.nesting += 1
        out = self._print(e)  # (on an error compile_outputs resets the count)
        self.nesting -= 1
        return out

    def _print(self, e: Node) -> tuple[str, tuple]:
        tag = e[0]
        if tag == "s" or tag == "d":
            name = self.names[e]
            return name, ("v", name)
        if tag == "n":
            return _number(e[1])
        if tag == "+":
            return self._add(e)
        if tag == "*":
            return self._mul(e)
        if tag == "^":
            return self._pow(e[1], e[2])
        if tag == "f":
            name, args = e[1], e[2]
            if name == "Max" or name == "Min":
                return self._fold("maximum" if name == "Max" else "minimum", args)
            if name == "floor" or name == "ceiling":
                inner = self._call("_approx", [self.p(args[0])])
                return self._call("floor" if name == "floor" else "ceil", [inner])
            return self._call(_FUNCS[name], [self.p(args[0])])
        if tag == "pw":
            out = _NAN
            for value, cond in reversed(e[1]):
                if cond == C.TRUE:
                    out = self.p(value)
                else:
                    out = self._call("where", [self.p(cond), self.p(value), out])
            return out
        if tag == "r":
            (lt, ls), (rt, rs) = self.p(e[2]), self.p(e[3])
            op = _OPS[e[1]]
            return f"({lt} {op} {rt})", ("r", op, ls, rs)
        if tag == "and" or tag == "or":
            return self._fold("logical_and" if tag == "and" else "logical_or", e[1])
        if tag == "not":
            return self._call("logical_not", [self.p(e[1])])
        if tag == "b":
            return ("True" if e[1] else "False"), ("k", bool(e[1]))
        raise AssertionError(e)

    @staticmethod
    def _call(fn: str, args: list) -> tuple[str, tuple]:
        """``fn(args)``: ``_approx``, or one of numpy's functions (``_np.<fn>``)."""
        text = fn if fn == "_approx" else f"_np.{fn}"
        return f"{text}({', '.join(t for t, _ in args)})", ("f", fn, tuple(s for _, s in args))

    def _fold(self, fn: str, args) -> tuple[str, tuple]:
        out = self.p(args[0])
        for a in args[1:]:
            out = self._call(fn, [out, self.p(a)])
        return out

    def _add(self, e: Node) -> tuple[str, tuple]:
        parts = []
        first = None
        rest = []
        for i, a in enumerate(e[1]):
            coeff, other = C.as_coeff_mul(a)
            if i and coeff < 0:
                text, step = self.p(other if coeff == -1 else C.mul(("n", -coeff), other))
                parts.append(" - " + text)
                rest.append((False, step))
            else:
                text, step = self.p(a)
                parts.append((" + " if i else "") + text)
                if i:
                    rest.append((True, step))
                else:
                    first = step
        return "(" + "".join(parts) + ")", ("+", first, tuple(rest))

    def _mul(self, e: Node) -> tuple[str, tuple]:
        nums, dens = [], []
        for a in e[1]:
            tag = a[0]
            if tag == "^":
                exp = a[2]
                if exp[0] == "n" and exp[1].numerator < 0:
                    dens.append(a[1] if exp[1] == -1 else ("^", a[1], ("n", -exp[1])))
                    continue
            elif tag == "n":
                v = a[1]
                d = v.denominator
                if d != 1 and (v.numerator == 1 or v.numerator == -1):
                    nums.append(("n", v.numerator))  # ints: _float prints them as the Fractions would print
                    dens.append(("n", d))
                    continue
            nums.append(a)
        sign = ""
        if len(nums) > 1 and nums[0][0] == "n" and nums[0][1] == -1:
            sign, nums = "-", nums[1:]
        p = self.p
        texts, factors = [], []
        for a in nums:
            t, step = p(a)
            texts.append(t)
            factors.append(step)
        text = sign + "*".join(texts) if nums else "1.0"
        divisors = []
        if dens:
            texts = []
            for a in dens:
                t, step = p(a)
                texts.append(t)
                divisors.append(step)
            text += "/(" + "*".join(texts) + ")"
        return "(" + text + ")", ("*", bool(sign), tuple(factors), tuple(divisors))

    def _pow(self, base: Node, exp: Node) -> tuple[str, tuple]:
        if exp == C.HALF:
            return self._call("sqrt", [self.p(base)])
        if exp == C.NEG_ONE:
            text, step = self.p(base)
            return f"(1.0/{text})", ("/", ("k", 1.0), step)
        bt, bs = self.p(base)
        if bt.startswith("-"):  # a negative number: numpy's (power_base)
            bs = ("f", "float64", (bs,))
        if exp[0] == "n" and exp[1] < 0:
            et, es = self.p(("n", -exp[1]))
            return f"(1.0/({power_base(bt)}**{et}))", ("/", ("k", 1.0), ("**", bs, es))
        et, es = self.p(exp)
        return f"({power_base(bt)}**{et})", ("**", bs, es)


# ---- compiling ------------------------------------------------------------------------------

Output = tuple  # (name, builder): builder(converter, env) -> Node, and a SymPy builder for the fallback


_KEEPS_INFINITY = frozenset(("floor", "ceiling", "Abs", "log"))  # inf in, inf (or nan) out


def _exposed(node: Node, divisor: Node, anywhere: bool = False) -> bool:
    """Whether ``node`` still divides by ``divisor`` where it shows: a power ``divisor ** -k`` reached
    from the top through sums, products, constant powers and functions that keep an infinity, so
    that ``divisor = 0`` makes the value itself infinite or nan (numpy's max of -inf and 1 is 1, its
    exp of -inf 0, a comparison true or false; SymPy's ``0 / z`` is 0). With ``anywhere``, such a
    power anywhere in ``node`` counts (as in a spreadsheet, where #DIV/0! goes through MAX and IF's
    condition alike)."""
    return all(_inverted(node, b, anywhere) for b in _bases(divisor))


def _bases(divisor: Node) -> list[Node]:
    """What SymPy inverts when it divides by ``divisor``: each factor of a product (``1 / (a * b)``
    is ``a**-1 * b**-1``), the base of a constant power, else the divisor itself; numbers none."""
    tag = divisor[0]
    if tag == "n":
        return []
    if tag == "*":
        return [b for f in divisor[1] for b in _bases(f)]
    if tag == "^" and divisor[2][0] == "n" and divisor[2][1] > 0:
        return _bases(divisor[1])
    return [divisor]


def _inverted(node: Node, base: Node, anywhere: bool) -> bool:
    stack = [node]
    while stack:
        e = stack.pop()
        tag = e[0]
        if tag == "^" and e[2][0] == "n" and e[2][1] < 0 and e[1] == base:
            return True
        if tag == "+" or tag == "*":
            stack.extend(e[1])
        elif tag == "^" and (anywhere or (e[2][0] == "n" and e[2][1] != 0)):
            stack.append(e[1])
            if anywhere:
                stack.append(e[2])
        elif tag == "f" and (anywhere or e[1] in _KEEPS_INFINITY):
            stack.extend(e[2])
        elif anywhere and tag == "pw":
            stack.extend(x for pair in e[1] for x in pair)
        elif anywhere and tag == "r":
            stack.extend((e[2], e[3]))
        elif anywhere and tag in ("and", "or"):
            stack.extend(e[1])
        elif anywhere and tag == "not":
            stack.append(e[1])
    return False


def _hidden(node: Node, divisors, anywhere: bool = False) -> list[tuple[Node, tuple]]:
    """The divisions of a formula (``divisors``, (divisor, branches) as the converter kept them)
    that its canonical form ``node`` hides (:func:`_exposed`), each once."""
    return [(d, branches) for d, branches in dict.fromkeys(divisors or ())
            if not _exposed(node, d, anywhere)]  # a zero divisor that shows in the value (1 / z is inf): none


def hidden_divisions(model: Model, names: Sequence[str]) -> dict[str, list[tuple[Node, tuple]]]:
    """For each quantity of ``names`` whose formula has divisions its canonical form no longer makes
    anywhere (``0 / z`` is 0, ``z / z`` is 1): (divisor, ((condition, holds), ...)) for each, the
    ``if`` branches it sits in. The workbook writes them into the quantity's formula (a division
    left anywhere in a cell's formula is Excel's own #DIV/0!). Formulas not mirrored are left out."""
    conv = Converter(model)
    out: dict[str, list[Node]] = {}
    for name in names:
        q = model.quantities[name]
        if q.is_input or q.is_bool:
            continue
        try:
            node, divisions = conv.divisions(q.definition.expr)
        except (C.Unsupported, RecursionError):
            continue
        guards = _hidden(node, divisions, anywhere=True)
        if guards:
            out[name] = guards
    return out


def divisor_guard(divisor: Node, branches) -> Node:
    """What is 0 exactly where a division by ``divisor`` divides by zero: the divisor, or 1 where
    one of the ``if`` branches it sits in is not taken."""
    if not branches:
        return divisor
    taken = [cond if holds else C.not_(cond) for cond, holds in branches]
    when = taken[0] if len(taken) == 1 else C.and_or("and", taken)
    return C.piecewise([(divisor, when), (C.ONE, C.TRUE)])


def compile_outputs(model: Model, inputs: Sequence[str], outputs: Sequence[tuple[str, object]],
                    extra: Sequence[tuple[str, Node]] = (), sympy_fallback: Optional[Callable] = None,
                    divisors: bool = False) -> IRCompiled:
    """Compile ``outputs`` (name, IR expression or ``callable(converter) -> Node``), in order, into one
    function of ``inputs`` (quantities) and ``extra`` (more variables, as (name, node): scenario
    references and answers in checks). An output named like a quantity is used by name in the later ones.

    ``sympy_fallback(name, output, names, printer)`` prints an output through SymPy when its canonical
    form is not mirrored (``names`` maps variable names to their ``_v`` identifiers; ``printer``'s
    ``count`` and ``hoisted`` lines continue through SymPy's printer).

    With ``divisors``, a quantity's value is nan wherever one of its formula's divisions, as
    written, divides by zero (a divisor other than a nonzero number, in a branch that is taken)
    and the value is finite:
    SymPy's algebra (and its mirror here) turns ``0 / z`` into 0, ``z / z`` into 1 and ``x * z / z``
    into ``x``, true for every ``z`` but zero; the nan makes it an evaluation error (located by
    :mod:`planner.compute.diagnose`) or a sweep's issue, as ``1 / z`` is. The value is the same,
    bit for bit, everywhere else (a true/false quantity is left as it is)."""
    conv = Converter(model)
    var: dict[Node, str] = {}
    by_name: dict[str, str] = {}
    variables = [(name, ("s", name)) for name in inputs] + list(extra)
    for i, (name, node) in enumerate(variables):
        v = f"_v{i}"
        var[node] = v
        by_name[name] = v
    lines = ["def _plan(_in):"]
    n_in = len(inputs) + len(extra)
    if n_in:
        lines.append("    " + ", ".join(f"_v{i}" for i in range(n_in)) + ", = _in")
    printer = Printer(var)
    out_vars, fallbacks = [], []
    steps: list[tuple[str, tuple]] = []  # the code as Steps, while every output is mirrored
    for j, (name, output) in enumerate(outputs):
        v = f"_v{n_in + j}"
        q = model.quantities.get(name) if divisors and not callable(output) else None
        divisions: list = []
        try:
            if q is not None and not q.is_bool:
                node, divisions = conv.divisions(output)
            else:
                node = output(conv) if callable(output) else conv.expr(output)
            text, step = printer.both(node)
        except (C.Unsupported, RecursionError) as exc:
            if sympy_fallback is None:
                raise
            printer.hoisted.clear()
            printer.hoisted_steps.clear()
            printer.nesting = 0
            steps = None  # SymPy's text has no steps: the code is compiled for every run
            text = sympy_fallback(name, output, by_name, printer)
            fallbacks.append((name, str(exc) if isinstance(exc, C.Unsupported) else "too deep"))
            divisions = []  # (SymPy's printer: its divisions are not looked for)
        guards: list[tuple[str, tuple]] = []
        for d, branches in _hidden(node, divisions) if divisions else ():
            try:
                gt, gs = printer.both(divisor_guard(d, branches))
                guards.append((f"({gt} == 0.0)", ("r", "==", gs, ("k", 0.0))))
            except (C.Unsupported, RecursionError):
                printer.nesting = 0  # not mirrored: this division keeps SymPy's algebra
        lines.extend(f"    {h}" for h in printer.hoisted)
        printer.hoisted.clear()
        lines.append(f"    {v} = {text}")
        if steps is not None:
            steps.extend(printer.hoisted_steps)
            steps.append((v, step))
        printer.hoisted_steps.clear()
        if guards:  # nan where a division divides by zero and the value hides it, else the value
            zero = guards[0]
            for g in guards[1:]:
                zero = Printer._call("logical_or", [zero, g])
            finite = (f"(_np.abs({v}) < _np.inf)", ("r", "<", ("f", "abs", (("v", v),)), ("k", math.inf)))
            text, step = Printer._call("where", [Printer._call("logical_and", [zero, finite]), _NAN, (v, ("v", v))])
            lines.append(f"    {v} = {text}")
            if steps is not None:
                steps.append((v, step))
        if name in model.quantities:
            var[("s", name)] = v
            by_name[name] = v
        out_vars.append(v)
    lines.append("    return (" + "".join(f"{v}, " for v in out_vars) + ")")
    source = "\n".join(lines) + "\n"
    compiled = IRCompiled([n for n, _ in variables], [n for n, _ in outputs], source, None, fallbacks)  # run: on first call
    if steps is not None:
        compiled.steps = Steps([f"_v{i}" for i in range(n_in)], steps, out_vars)
    return compiled
