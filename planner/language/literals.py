"""One range rule for every number a user writes.

A number reaches planner from many places: a literal in a plan (``x = 1e400``),
a distribution's parameter (``normal(1e400, 1)``), ``--set``, ``--samples`` and
``--seed`` on the command line, a workbook cell. Each passes through
:func:`magnitude_problem`: a number (in base units B, s) is usable when it is
zero or its magnitude lies between ``1e-300`` and ``1e300``, and is finite.
Beyond that, double-precision arithmetic overflows to infinity or loses
every digit, and a plan's numbers would be silently wrong.

:func:`check` turns the problem into the one located error
(:class:`~planner.language.errors.EvaluationError`, ``"<text> is too large
for double-precision arithmetic"``) with the same hint everywhere.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional, Union

from .errors import EvaluationError

HUGE = Fraction(10) ** 300
TINY = Fraction(1, 10 ** 300)
HINT = "numbers (in base units B, s) must lie between 1e-300 and 1e300"

Number = Union[int, float, Fraction]


def magnitude_problem(value: Number) -> Optional[str]:
    """``None`` when ``value`` (an int, float or Fraction, in base units) is usable in
    double-precision arithmetic; else a short phrase: ``"too large for double-precision
    arithmetic"``, ``"too small for double-precision arithmetic"`` or ``"not a finite number"``."""
    if value.__class__ is Fraction:  # the commonest: a plan's literal, exactly
        if value == 0 or _moderate(value) or TINY <= abs(value) <= HUGE:
            return None
        return _phrase(abs(value) > 1)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "not a finite number"
        size = abs(value)
        if size == 0 or 1e-300 <= size <= 1e300:
            return None
        return _phrase(size > 1)
    if isinstance(value, int):  # (and bool)
        return None if value.bit_length() <= 996 or abs(value) <= HUGE else _phrase(True)
    if not isinstance(value, Fraction):
        try:
            value = Fraction(value)
        except (TypeError, ValueError, OverflowError):
            return "not a finite number"
    if value == 0 or _moderate(value) or TINY <= abs(value) <= HUGE:
        return None
    return _phrase(abs(value) > 1)


def check(value: Number, span, text: Optional[str] = None) -> None:
    """Raise the located error for ``value`` (written as ``text``, else the span's text)
    when :func:`magnitude_problem` finds one."""
    problem = magnitude_problem(value)
    if problem is not None:
        raise error(problem, span, text)


def error(problem: str, span, text: Optional[str] = None) -> EvaluationError:
    """The located error for a number with ``problem`` (a :func:`magnitude_problem` phrase)."""
    if text is None:
        text = span.text.strip() if span is not None else "the number"
    return EvaluationError(f"{text} is {problem}", span, hint=HINT)


def _phrase(large: bool) -> str:
    return f"{'too large' if large else 'too small'} for double-precision arithmetic"


def _moderate(value: Fraction) -> bool:
    """Whether a nonzero ``value`` lies well between :data:`TINY` and :data:`HUGE` (within 2^±900,
    about 10^±271), told from the sizes of its integers, without comparing fractions."""
    size = value.numerator.bit_length() - value.denominator.bit_length()  # log2 |value|, give or take one
    return -900 < size < 900
