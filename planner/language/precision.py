"""The precision a figure is written with, and what ``~=`` means everywhere.

``a ~= b`` holds when ``a`` and ``b`` differ by at most half a unit in the
last written digit of the literal on its right (``46.667 ms``: 0.0005 ms),
or on its left when the right is not a literal; without a literal on either
side it is ``==``. The evaluation, the exact route, SymPy, the workbook and
the report all take the tolerance from :func:`approx_tolerance`, so it means
the same in a check, inside ``and``/``not``, and in a formula.
"""

from __future__ import annotations

from fractions import Fraction

from typing import TYPE_CHECKING

from . import ir
from .dims import unit_of

if TYPE_CHECKING:
    from typing import Optional


APPROX_SLACK = 1e-9  # `a ~= b` in floats: the tolerance widened by this much, for its own binary rounding


def literal_of(e: ir.Expr) -> Optional[ir.Number]:
    """The number literal ``e`` is (a leading minus allowed), or None."""
    sign_free = e.operand if isinstance(e, ir.Neg) else e
    return sign_free if isinstance(sign_free, ir.Number) else None


def half_ulp(num: ir.Number) -> Fraction:
    """Half a unit in the last written digit of a literal (``46.667`` -> 0.0005, ``1e26`` -> 5e25),
    in the unit it is written in."""
    text = num.span.text.strip()
    digits = []
    for ch in text:
        if ch.isdigit() or ch in "._eE+-":
            digits.append(ch)
        else:
            break
    mantissa, _, exponent = "".join(digits).replace("_", "").lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    places = decimals - (int(exponent) if exponent else 0)
    return Fraction(1, 2) * Fraction(10) ** (-places)


def approx_literal(cmp: ir.Compare, i: int = 0) -> Optional[ir.Number]:
    """The literal whose written precision the ``i``-th comparison of ``cmp`` uses: the right
    operand's, else the left's."""
    return literal_of(cmp.operands[i + 1]) or literal_of(cmp.operands[i])


def approx_tolerance(cmp: ir.Compare, i: int, units) -> Optional[Fraction]:
    """The tolerance of the ``i``-th comparison of ``cmp`` when it is ``~=``, in base units; None
    when neither operand is a literal (then ``~=`` is ``==``)."""
    lit = approx_literal(cmp, i)
    if lit is None:
        return None
    scale = unit_of(lit.unit, units).scale if lit.unit is not None else Fraction(1)
    return half_ulp(lit) * scale


def in_floats(tolerance: Fraction) -> float:
    """A ``~=`` tolerance as the float comparisons use it: widened by :data:`APPROX_SLACK`."""
    return float(tolerance) * (1 + APPROX_SLACK)
