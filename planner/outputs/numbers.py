"""One number style per quantity, the same in the workbook and the report.

A quantity's figures (its value in every scenario, or down a sweep column)
are shown with one :class:`NumberStyle`, chosen by :func:`style_for` from
their size: whole numbers with digit grouping (``70,000,000,000``), other
figures with as many decimals as the largest needs for six significant
digits but no more than any of them needs (``16.00 | 8.00 | 4.15``, not
``16 | 8 | 4.1500``), and scientific notation for figures too large or too
small to read that way (``1.2573E-11``). A percentage (unit ``%``, ``%/year``) is, in a
workbook, what Excel makes of a typed ``65%``: the cell holds the fraction (0.65) and
:meth:`NumberStyle.excel` is a real percent format (``0.0%``), so an analyst's ``65%`` and every
formula over the cell mean what the plan means. Styles are chosen from the figures in the display
unit (65 for 65 %); :func:`cell_unit` is what is left of the unit for the workbook's unit column.
The workbook uses :meth:`NumberStyle.excel` as the cell's number format; the report and other
text outputs use :meth:`NumberStyle.text`, so both show the same digits.

Plain data and the standard library only: every output may import it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
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
    percent: bool = False  # the unit is a percentage: `%`, `%/year` (45.5 means 45.5 %)

    def excel(self) -> str:
        """The Excel/LibreOffice/Gnumeric number format.

        A percentage's cell holds the fraction (0.455 for 45.5 %, what Excel stores when one types
        ``45.5%``) and the format is Excel's own percent format (``#,##0.0%``)."""
        if self.scientific:
            code = "0." + "0" * max(self.decimals, 1) + "E+00"
        else:
            code = "#,##0" + ("." + "0" * self.decimals if self.decimals else "")
        return code + "%" if self.percent else code

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


def is_percent(unit: str) -> bool:
    """A unit whose figures are percentages: ``%``, ``%/year``, ``%/month``."""
    return unit == "%" or unit.startswith("%/")


def cell_unit(unit: str) -> str:
    """The unit a workbook writes beside a figure whose format already shows ``%``: ``%`` -> ``""``,
    ``%/year`` -> ``/year``; any other unit as it is."""
    return unit[1:] if is_percent(unit) else unit


def cell_scale(scale: Fraction, unit: str) -> Fraction:
    """Base units per unit of a cell's figure: the display unit's scale, times 100 for a percentage
    (the cell holds the fraction, 0.6 for 60 %, as Excel stores a typed ``60%``)."""
    return Fraction(scale) * 100 if is_percent(unit) else Fraction(scale)


def scale_of(q) -> Fraction:
    """The base units per unit of ``q``'s cells (1 for a TRUE/FALSE)."""
    return Fraction(1) if q.is_bool else cell_scale(q.display.scale, q.unit_text)


def unit_of(q) -> str:
    """The text of ``q``'s unit column (``%`` is in the number format, not beside it)."""
    return cell_unit(q.unit_text)


def style_for(values: Iterable[Optional[float | bool]], unit: str = "") -> NumberStyle:
    """The one style for a quantity's figures (in its display unit: 65 for 65 %)."""
    finite = [abs(float(v)) for v in values
              if v is not None and not isinstance(v, bool) and math.isfinite(float(v))]
    percent = is_percent(unit)
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
