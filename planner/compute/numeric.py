"""What compiled plans share, without SymPy: the callable wrapper and ``approx``.

Both routes to a compiled plan (:mod:`planner.compute.ircompile` from the IR,
:mod:`planner.compute.compiled` through SymPy) generate code that calls
``approx`` and return a :class:`CompiledPlan`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


def approx(x):
    """``x`` rounded to 15 significant digits, as spreadsheets do before
    ``INT``/``CEILING``: so ``floor(log(1000, 10))`` is 3 (the float quotient
    is 2.9999999999999996) and planner agrees with its own workbook."""
    x = np.asarray(x, dtype=float)
    with np.errstate(all="ignore"):
        magnitude = np.floor(np.log10(np.abs(x)))
        scale = 10.0 ** (14 - magnitude)
        rounded = np.round(x * scale) / scale
    return np.where(np.isfinite(rounded) & (x != 0), rounded, x)


@dataclass
class CompiledPlan:
    """One compiled function from input values to every output value."""

    inputs: list[str]
    outputs: list[str]
    source: str
    function: object

    def __call__(self, values: Sequence) -> tuple:
        with np.errstate(all="ignore"):
            return self.function(tuple(values))
