"""A compiled plan: the generated source and the two ways it runs.

The code both compilers generate (:mod:`planner.compute.ircompile` from the IR,
:mod:`planner.compute.compiled` through SymPy) is one function ``_plan`` from
the input values to every output value, written against a namespace: ``_np``
(numpy), ``_approx``, ``_agg`` and ``_x`` (:mod:`planner.compute.numeric`).

It runs on numpy values (:meth:`CompiledPlan.__call__`: arrays for sweeps,
numpy scalars for one evaluation, where 1/0 is inf and a domain error nan),
and, for one evaluation, also on plain Python floats
(:meth:`CompiledPlan.scalar`) through :data:`SCALAR`, a stand-in for numpy
that gives the same bits or gives up. Python's ``+ - * / **`` on floats are
the same IEEE operations numpy's scalars do (one rounding each, ``**``
through the C library's ``pow`` in both); where Python raises instead (1/0,
an overflowing power), where it would go on with a complex number, where
numpy's own answer depends on the machine (the max of -0.0 and 0.0), and for
the functions whose float results may differ in the last bit between
Python's ``math`` and numpy's loops (log, exp, the rounding before floor and
ceiling, aggregates), the scalar run gives up and the caller runs numpy. A
run whose values are not all finite floats and true/false values also gives
up, so every error report comes from the numpy route as before. An
evaluation that needs none of that does not import numpy at all (start-up:
numpy's import is most of a small ``planner eval``).
"""

from __future__ import annotations

import math
import operator

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (5 ms of a warm `planner eval`)
if TYPE_CHECKING:
    from typing import Optional, Sequence


class CompiledPlan:
    """One compiled function from input values to every output value (``function``: built from
    ``source`` on first use when not given). A plain class (a data class would bring
    :mod:`dataclasses` into a warm ``planner eval``: nothing compares or prints these)."""

    def __init__(self, inputs: list[str], outputs: list[str], source: str, function: object = None) -> None:
        self.inputs = inputs
        self.outputs = outputs
        self.source = source
        self.function = function

    def __repr__(self) -> str:
        return f"{type(self).__name__}(inputs={len(self.inputs)}, outputs={len(self.outputs)})"

    def __call__(self, values: Sequence) -> tuple:
        import numpy as np

        if self.function is None:
            self.function = load_source(self.source, self.code)
        with np.errstate(all="ignore"):
            return self.function(tuple(values))

    @property
    def code(self):
        """:attr:`source` compiled by Python, once for both ways it runs (or as the cache checked it)."""
        code = self.__dict__.get("_code")
        if code is None:
            code = self.__dict__["_code"] = _compile(self.source)
        return code

    def scalar(self, values: Sequence) -> Optional[tuple]:
        """Every output from Python floats and bools, with the bits :meth:`__call__` gives for the
        same values as numpy scalars; ``None`` where it cannot promise that (see the module). Run
        as :class:`Steps` when the compiler left them (no code to compile), else as the code."""
        steps = self.__dict__.get("steps")
        function = steps.run if steps is not None else self.__dict__.get("_scalar_function")
        if function is None:
            namespace: dict = {"_np": SCALAR, "_approx": _give_up, "_agg": _give_up, "_x": _give_up}
            exec(self.code, namespace)  # noqa: S102  (our generated code)
            function = self.__dict__["_scalar_function"] = namespace["_plan"]
        try:
            out = function(tuple(values))
        except (ArithmeticError, ValueError, TypeError, AttributeError, GiveUp):
            return None
        for v in out:
            if v.__class__ is float:
                if not math.isfinite(v):
                    return None
            elif v.__class__ is not bool:
                return None
        return out


class IRCompiled(CompiledPlan):
    """A :class:`CompiledPlan` built from the IR (:mod:`planner.compute.ircompile`); ``fallbacks`` are
    the outputs printed through SymPy (name, why)."""

    def __init__(self, inputs: list[str], outputs: list[str], source: str, function: object = None,
                 fallbacks: Optional[list[tuple[str, str]]] = None) -> None:
        super().__init__(inputs, outputs, source, function)
        self.fallbacks = [] if fallbacks is None else fallbacks


def power_base(text: str) -> str:
    """The printed base of ``**``: a negative number as numpy's (``_np.float64(-2.5)``). Python
    reads ``-2.5**x`` as ``-(2.5**x)``, and ``(-2.5)^x`` must stay ``(-2.5)**x``; and as a Python
    float, ``(-8.0)**(1/3)`` would be a complex number where numpy's is nan (a domain error)."""
    return f"_np.float64({text})" if text.startswith("-") else text


def _compile(source: str):
    """Python's code of generated source, compiled without the cyclic collector (it would walk every
    object of the loaded plan again and again while the compiler allocates: half of the compile
    time of a 10,000-quantity plan)."""
    from ..language.limits import paused_gc

    with paused_gc():
        return compile(source, "<planner>", "exec")


def load_source(source: str, code=None):
    """The numpy function of generated source (ours: identifiers we made and float literals), from
    its ``code`` when compiled already."""
    import numpy as np

    from .numeric import aggregate, approx, expand

    namespace: dict = {"_np": np, "_approx": approx, "_agg": aggregate, "_x": expand}
    exec(code if code is not None else _compile(source), namespace)  # noqa: S102
    return namespace["_plan"]


# ---- numpy's functions on Python floats, the same bits or GiveUp --------------------------------

class GiveUp(Exception):
    """The scalar run cannot promise numpy's bits here: numpy runs instead."""


def _give_up(*args):
    raise GiveUp


class Steps:
    """The generated code of one plan as data, for :meth:`CompiledPlan.scalar`: each line as
    (variable, step), a step one of

    * ``("v", name)``, ``("k", value)``: a variable, a constant;
    * ``("+", first, ((adds, term), ...))``: ``(first + term - term ...)``, left to right;
    * ``("*", negated, factors, divisors)``: ``(-f*f*f/(d*d))``: the first factor negated, then
      the products left to right, then one division by the divisors' product (``1.0`` without
      factors);
    * ``("**", base, exponent)``, ``("/", numerator, denominator)``;
    * ``("r", op, left, right)``: a comparison (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``);
    * ``("f", name, args)``: :data:`SCALAR`'s function ``name`` (``_approx``: give up).

    :mod:`planner.compute.ircompile` makes each step with the text of the same part of the code,
    the step being that text as Python reads it, so a run gives the code's scalar run bit for bit
    (every operation the same one on the same floats, in the same order; the same exceptions), and
    costs no compiling: Python's compile of a 10,000-line plan's code took longer than all of the
    plan's evaluation."""

    __slots__ = ("inputs", "lines", "outputs")

    def __init__(self, inputs: list[str], lines: list[tuple[str, tuple]], outputs: list[str]) -> None:
        self.inputs = inputs
        self.lines = lines
        self.outputs = outputs

    def run(self, values: tuple) -> tuple:
        if len(values) != len(self.inputs):
            raise ValueError("not as many values as inputs")  # as the code's unpacking
        env = dict(zip(self.inputs, values))
        for name, step in self.lines:
            env[name] = _value(step, env)
        return tuple(env[v] for v in self.outputs)


NUMPY_FUNCTIONS = frozenset(("maximum", "minimum", "where", "abs", "sign", "sqrt", "floor", "ceil", "log", "exp",
                             "logical_and", "logical_or", "logical_not", "float64"))  # what the code calls on _np
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


def _value(step: tuple, env: dict):
    tag = step[0]
    if tag == "v":
        return env[step[1]]
    if tag == "k":
        return step[1]
    if tag == "*":
        factors = step[2]
        if factors:
            x = _value(factors[0], env)
            if step[1]:
                x = -x
            for f in factors[1:]:
                x = x * _value(f, env)
        else:
            x = 1.0
        divisors = step[3]
        if divisors:
            d = _value(divisors[0], env)
            for f in divisors[1:]:
                d = d * _value(f, env)
            x = x / d
        return x
    if tag == "+":
        x = _value(step[1], env)
        for adds, term in step[2]:
            x = x + _value(term, env) if adds else x - _value(term, env)
        return x
    if tag == "**":
        return _value(step[1], env) ** _value(step[2], env)
    if tag == "/":
        return _value(step[1], env) / _value(step[2], env)
    if tag == "r":
        return _COMPARE[step[1]](_value(step[2], env), _value(step[3], env))
    if tag == "f":  # the function first (SCALAR's log gives up before its argument is worked out)
        fn = getattr(SCALAR, step[1]) if step[1] in NUMPY_FUNCTIONS else _give_up
        return fn(*[_value(a, env) for a in step[2]])
    raise GiveUp  # not a step of ours


def _floats(a, b) -> None:
    if a.__class__ is not float or b.__class__ is not float:
        raise GiveUp


class _Scalar:
    """What the generated code calls on ``_np``, for Python floats and bools."""

    nan = math.nan
    inf = math.inf
    float64 = float  # a negative base (power_base): a float, whose power the run's checks see through

    @staticmethod
    def maximum(a, b):
        _floats(a, b)
        if a > b:
            return a
        if a < b:
            return b
        if a == b and (a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)):
            return b
        raise GiveUp  # nan (numpy keeps it), or 0.0 against -0.0 (numpy's answer depends on the machine)

    @staticmethod
    def minimum(a, b):
        _floats(a, b)
        if a < b:
            return a
        if a > b:
            return b
        if a == b and (a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)):
            return b
        raise GiveUp

    @staticmethod
    def sqrt(a):
        if a.__class__ is not float:
            raise GiveUp
        return math.sqrt(a)  # correctly rounded, as numpy's; ValueError below zero (numpy: nan)

    @staticmethod
    def abs(a):
        if a.__class__ is not float:
            raise GiveUp
        return math.fabs(a)

    @staticmethod
    def sign(a):
        if a.__class__ is not float:
            raise GiveUp
        if a > 0.0:
            return 1.0
        if a < 0.0:
            return -1.0
        if a == 0.0:
            return 0.0  # numpy's sign of -0.0 is 0.0 too
        raise GiveUp

    @staticmethod
    def where(condition, yes, no):
        if condition.__class__ is not bool:
            raise GiveUp
        return yes if condition else no

    @staticmethod
    def logical_and(a, b):
        if a.__class__ is not bool or b.__class__ is not bool:
            raise GiveUp
        return a and b

    @staticmethod
    def logical_or(a, b):
        if a.__class__ is not bool or b.__class__ is not bool:
            raise GiveUp
        return a or b

    @staticmethod
    def logical_not(a):
        if a.__class__ is not bool:
            raise GiveUp
        return not a

    def __getattr__(self, name: str):  # log, exp, floor, ceil and anything else: numpy's own
        raise GiveUp


SCALAR = _Scalar()
