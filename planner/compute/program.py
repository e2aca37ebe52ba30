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
        same values as numpy scalars; ``None`` where it cannot promise that (see the module)."""
        function = self.__dict__.get("_scalar_function")
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
    """The printed base of ``**``, parenthesized when it is a negative number: Python reads
    ``-2.5**x`` as ``-(2.5**x)``, and ``(-2.5)^x`` must stay ``(-2.5)**x``."""
    return f"({text})" if text.startswith("-") else text


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


def _floats(a, b) -> None:
    if a.__class__ is not float or b.__class__ is not float:
        raise GiveUp


class _Scalar:
    """What the generated code calls on ``_np``, for Python floats and bools."""

    nan = math.nan
    inf = math.inf

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
