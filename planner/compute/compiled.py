"""Compiled evaluation: the whole plan becomes one numpy function.

Each quantity's SymPy expression is printed to numpy source by a small
printer (one method per node type) and compiled once; the generated code
only ever sees identifiers this module made (``_v0``, ``_v1``...), never
user text. The same function runs on scalars (one evaluation) and on
arrays (sweeps, scenarios side by side).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from .numeric import MAX_TERMS, CompiledPlan, aggregate, approx, expand  # noqa: F401  (both routes share them)
from .program import power_base


def _float(e) -> str:
    try:
        # int / int is correctly rounded and much faster than SymPy's float() (via mpmath)
        x = e.p / e.q if isinstance(e, sp.Rational) else float(e)
    except OverflowError:
        x = math.inf if e > 0 else -math.inf
    if math.isinf(x):
        return "_np.inf" if x > 0 else "(-_np.inf)"
    return repr(x)


class NumpyPrinter:
    """SymPy expression to numpy source. Raises on anything it cannot print."""

    HOIST = 40  # subtrees deeper than this get a line of their own (Python's parser nests ~200 deep)

    def __init__(self, names: dict[sp.Symbol, str]) -> None:
        self.names = names  # shared: compile_plan adds each output as it is printed
        self.depth = 0  # aggregates' bodies are lambdas, one level deeper each
        self.level: dict[sp.Symbol, int] = {}  # the depth at which an index is defined (plan values: 0)
        self.counter = 0
        self.nesting = 0  # of the expression being printed
        self.hoisted: list[str] = []  # `_hN = ...` lines that must come before the printed expression

    def __call__(self, e: sp.Basic) -> str:
        return self.p(e)

    def p(self, e: sp.Basic) -> str:
        # Every branch is evaluated anyway (numpy), so moving a deep subtree to a line of its own is
        # exact; not inside an aggregate's body, whose lambda defines names the subtree may use.
        if self.nesting >= self.HOIST and e.args and self.depth == 0:
            saved, self.nesting = self.nesting, 0
            try:
                text = self.p(e)
            finally:
                self.nesting = saved
            self.count = getattr(self, "count", 0) + 1
            name = f"_h{self.count}"
            self.hoisted.append(f"{name} = {text}")
            return name
        self.nesting += 1
        try:
            return self._print(e)
        finally:
            self.nesting -= 1

    def _print(self, e: sp.Basic) -> str:
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            for cls in type(e).__mro__:
                method = getattr(self, "_" + cls.__name__, None)
                if method is not None:
                    break
        if method is None:
            raise NotImplementedError(f"cannot compile {type(e).__name__}: {e}")
        return method(e)

    def _Symbol(self, e):
        text = self.names[e]
        outer = self.depth - self.level.get(e, 0)
        return f"_x({text}, {outer})" if outer > 0 else text

    def _aggregate(self, e, kind: str, limits=None) -> str:
        # SymPy merges nested sums into one node, innermost limits first: Sum(f, (j, 1, i), (i, 1, n))
        limits = list(e.limits) if limits is None else limits
        k, lo, hi = limits[-1]
        lo_text, hi_text = self.p(lo), self.p(hi)
        self.counter += 1
        name = f"_k{self.counter}"
        self.depth += 1
        self.names[k], self.level[k] = name, self.depth
        try:
            body = self._aggregate(e, kind, limits[:-1]) if len(limits) > 1 else self.p(e.function)
        finally:
            self.depth -= 1
        cap = getattr(k, "terms", MAX_TERMS)
        return f"_agg({kind!r}, lambda {name}: {body}, {lo_text}, {hi_text}, {cap})"

    def _Sum(self, e):
        return self._aggregate(e, "sum")

    def _Product(self, e):
        return self._aggregate(e, "product")

    def _RangeMax(self, e):
        return self._aggregate(e, "max")

    def _RangeMin(self, e):
        return self._aggregate(e, "min")

    def _Number(self, e):
        return _float(e)

    def _Integer(self, e):
        return _float(e)

    def _BooleanTrue(self, e):
        return "True"

    def _BooleanFalse(self, e):
        return "False"

    def _Exp1(self, e):
        return repr(math.e)

    def _Pi(self, e):
        return repr(math.pi)

    def _Infinity(self, e):
        return "_np.inf"

    def _NegativeInfinity(self, e):
        return "(-_np.inf)"

    def _NaN(self, e):
        return "_np.nan"

    def _ComplexInfinity(self, e):
        return "_np.nan"

    def _Add(self, e):
        # `x - y` rather than `x + (-1.0*y)`: the same floats, one pass less over arrays
        text = ""
        for i, a in enumerate(e.args):
            coeff, rest = a.as_coeff_Mul()
            if i and isinstance(coeff, sp.Rational) and coeff.p < 0:  # (no assumption queries: they are slow)
                text += " - " + self.p(rest if coeff == -1 else sp.Mul(-coeff, rest))
            else:
                text += (" + " if i else "") + self.p(a)
        return "(" + text + ")"

    def _Mul(self, e):
        num, den = [], []
        for a in e.args:
            if isinstance(a, sp.Pow) and a.exp.is_Number and a.exp < 0:
                den.append(a.base if a.exp == -1 else sp.Pow(a.base, -a.exp, evaluate=False))
            elif isinstance(a, sp.Rational) and not isinstance(a, sp.Integer) and a.p in (1, -1):
                num.append(sp.Integer(a.p))
                den.append(sp.Integer(a.q))
            else:
                num.append(a)
        sign = ""
        if len(num) > 1 and num[0] == -1:  # `-x` rather than `-1.0*x`
            sign, num = "-", num[1:]
        text = sign + "*".join(self.p(a) for a in num) if num else "1.0"
        if den:
            text += "/(" + "*".join(self.p(a) for a in den) + ")"
        return "(" + text + ")"

    def _Pow(self, e):
        base, exp = e.base, e.exp
        if exp == sp.Rational(1, 2):
            return f"_np.sqrt({self.p(base)})"
        if exp == -1:
            return f"(1.0/{self.p(base)})"
        if exp.is_Number and exp < 0:
            return f"(1.0/({power_base(self.p(base))}**{self.p(-exp)}))"
        return f"({power_base(self.p(base))}**{self.p(exp)})"

    def _fold(self, fn: str, args) -> str:
        parts = [self.p(a) for a in args]
        out = parts[0]
        for part in parts[1:]:
            out = f"_np.{fn}({out}, {part})"
        return out

    def _Max(self, e):
        return self._fold("maximum", e.args)

    def _Min(self, e):
        return self._fold("minimum", e.args)

    def _Abs(self, e):
        return f"_np.abs({self.p(e.args[0])})"

    def _sign(self, e):
        return f"_np.sign({self.p(e.args[0])})"

    def _floor(self, e):
        return f"_np.floor(_approx({self.p(e.args[0])}))"

    def _ceiling(self, e):
        return f"_np.ceil(_approx({self.p(e.args[0])}))"

    def _log(self, e):
        return f"_np.log({self.p(e.args[0])})"

    def _exp(self, e):
        return f"_np.exp({self.p(e.args[0])})"

    def _Piecewise(self, e):
        out = "_np.nan"
        for value, cond in reversed(e.args):
            if cond is sp.true:
                out = self.p(value)
            else:
                out = f"_np.where({self.p(cond)}, {self.p(value)}, {out})"
        return out

    def _rel(self, e, op):
        return f"({self.p(e.lhs)} {op} {self.p(e.rhs)})"

    def _Equality(self, e):
        return self._rel(e, "==")

    def _Unequality(self, e):
        return self._rel(e, "!=")

    def _StrictLessThan(self, e):
        return self._rel(e, "<")

    def _LessThan(self, e):
        return self._rel(e, "<=")

    def _StrictGreaterThan(self, e):
        return self._rel(e, ">")

    def _GreaterThan(self, e):
        return self._rel(e, ">=")

    def _And(self, e):
        return self._fold("logical_and", e.args)

    def _Or(self, e):
        return self._fold("logical_or", e.args)

    def _Not(self, e):
        return f"_np.logical_not({self.p(e.args[0])})"


def compile_plan(
    inputs: Sequence[str],
    outputs: Sequence[tuple[str, sp.Basic]],
    symbols: Mapping[str, sp.Symbol],
) -> CompiledPlan:
    """Compile ``outputs`` (name, expression) in order, over ``inputs``.

    Outputs may use earlier outputs and any input by symbol.
    """
    var: dict[sp.Symbol, str] = {}
    for i, name in enumerate(inputs):
        var[symbols[name]] = f"_v{i}"
    lines = ["def _plan(_in):"]
    if inputs:
        lines.append("    " + ", ".join(f"_v{i}" for i in range(len(inputs))) + ", = _in")
    printer = NumpyPrinter(var)
    offset = len(inputs)
    out_vars = []
    for j, (name, expr) in enumerate(outputs):
        v = f"_v{offset + j}"
        text = printer(expr)
        lines.extend(f"    {h}" for h in printer.hoisted)
        printer.hoisted.clear()
        lines.append(f"    {v} = {text}")
        if name in symbols:
            var[symbols[name]] = v
        out_vars.append(v)
    lines.append("    return (" + "".join(f"{v}, " for v in out_vars) + ")")
    source = "\n".join(lines) + "\n"
    namespace: dict = {"_np": np, "_approx": approx, "_agg": aggregate, "_x": expand}
    # The source is generated from SymPy trees this package built; it holds
    # only our own identifiers and float literals, never user text.
    exec(compile(source, "<planner>", "exec"), namespace)  # noqa: S102
    return CompiledPlan(list(inputs), [n for n, _ in outputs], source, namespace["_plan"])
