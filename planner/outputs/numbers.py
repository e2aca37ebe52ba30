"""One number style per quantity, the same in the workbook and the report.

A quantity's figures (its value in every scenario, or down a sweep column)
are shown with one :class:`NumberStyle`, chosen by :func:`style_for` from
their size: whole numbers with digit grouping (``70,000,000,000``), other
figures with as many decimals as the largest needs for six significant
digits but no more than any of them needs (``16.00 | 8.00 | 4.15``, not
``16 | 8 | 4.1500``), and scientific notation for figures too large or too
small to read that way (``1.2573E-11``); a percentage (unit ``%``) shows a
``%`` sign after the figure it holds (``45.5%`` for a cell holding 45.5). The workbook uses
:meth:`NumberStyle.excel` as the cell's number format; the report and other
text outputs use :meth:`NumberStyle.text`, so both show the same digits.

Plain data and the standard library only: every output may import it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Iterable, Optional

SIGNIFICANT = 6  # digits a figure is shown with, at most
MAX_DECIMALS = 6
SCIENTIFIC_ABOVE = 1e15  # whole numbers beyond Excel's 15 digits
SCIENTIFIC_BELOW = 1e-4  # the largest figure this small reads better as 1.2E-05


@dataclass(frozen=True)
class NumberStyle:
    """How one quantity's figures are written: fixed decimals with grouping, or scientific."""

    decimals: int = 0
    scientific: bool = False
    percent: bool = False  # the unit is `%`: the figures are percentages (45.5 means 45.5%)

    def excel(self) -> str:
        """The Excel/LibreOffice/Gnumeric number format (for figures written in their display unit).

        A percentage keeps the figure as typed (the cell holds 45.5 for 45.5%, as the plan does) and
        shows a literal ``%`` after it: Excel's own ``0.0%`` would show 45.5 as 4550.0%."""
        if self.scientific:
            code = "0." + "0" * max(self.decimals, 1) + "E+00"
        else:
            code = "#,##0" + ("." + "0" * self.decimals if self.decimals else "")
        return code + '"%"' if self.percent else code

    def text(self, value: Optional[float | bool]) -> str:
        """The figure as text with the same digits the workbook shows (``70,000,000,000``; ``4.15``)."""
        if value is None:
            return "n/a"
        if isinstance(value, bool):
            return "true" if value else "false"
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        # Half away from zero on the figure's 15 significant digits, as Excel and LibreOffice show it
        # (36.3125 with three decimals is 36.313, where Python's own rounding would give 36.312).
        exact = Decimal(f"{v:.15g}")
        with localcontext() as ctx:
            ctx.rounding = ROUND_HALF_UP
            if self.scientific:
                mantissa, _, exponent = format(exact, f".{max(self.decimals, 1)}E").partition("E")
                return f"{mantissa}E{int(exponent):+03d}"
            rounded = exact.quantize(Decimal(1).scaleb(-self.decimals))
        text = f"{rounded:,.{self.decimals}f}"
        if rounded == 0:
            text = text.lstrip("-")  # no "-0.00"
        return text


def _decimals_needed(v: float) -> int:
    """Decimals that show ``v`` to SIGNIFICANT digits, trailing zeros dropped (4.15 -> 2, 140 -> 0)."""
    if v == 0:
        return 0
    exponent = math.floor(math.log10(abs(v)))
    decimals = max(0, SIGNIFICANT - 1 - exponent)
    text = f"{abs(v):.{min(decimals, 20)}f}"
    if "." not in text:
        return 0
    return len(text.rstrip("0").split(".")[1])


def style_for(values: Iterable[Optional[float | bool]], unit: str = "") -> NumberStyle:
    """The one style for a quantity's figures (in its display unit)."""
    finite = [abs(float(v)) for v in values
              if v is not None and not isinstance(v, bool) and math.isfinite(float(v))]
    percent = unit == "%"
    nonzero = [v for v in finite if v != 0]
    if not nonzero:
        return NumberStyle(0, False, percent)
    largest = max(nonzero)
    if largest >= SCIENTIFIC_ABOVE or largest < SCIENTIFIC_BELOW:
        return NumberStyle(3, True, percent)
    # Six significant digits for every figure of the quantity, down to the smallest one that is not
    # rounding residue (a billionth of the largest): 140 | 70 | 36.3125 keeps the digits of 36.3125.
    readable = [v for v in nonzero if v >= largest * 1e-9]
    exponent = math.floor(math.log10(min(readable)))
    cap = max(0, min(MAX_DECIMALS, SIGNIFICANT - 1 - exponent))
    need = max(_decimals_needed(v) for v in readable)
    return NumberStyle(min(cap, need), False, percent)
