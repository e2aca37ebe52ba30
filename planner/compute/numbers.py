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

The one rule for every output a person reads (the terminal, the build summary, explain, simulate, sweeps,
the report's tables and sentences, the serve page and the workbook's number formats; JSON and CSV keep every
digit): a quantity's style is :func:`plan_styles`' (its figures in the base case and every scenario, an
input's written decimals), a figure alone is :func:`significant` (``format_value``), a distribution's row
is :func:`row_texts`, a share of samples is :func:`share`, a sentence's figure is :func:`prose_style`'s.
It lives in the compute stage so that the questions' messages can use it too.

Plain data and the standard library only: every stage above ``language`` may import it.
"""

from __future__ import annotations

import math
import re
from ..language.lazy import lazy_dataclass as dataclass  # dataclasses.dataclass, made on first use
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
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
    optional: int = 0  # further decimals shown only where the figure has them (an input's edits: 2.255)
    money: bool = False  # a currency unit: negatives show a red minus sign

    def excel(self) -> str:
        """The Excel/LibreOffice/Gnumeric number format.

        A percentage's cell holds the fraction (0.455 for 45.5 %, what Excel stores when one types
        ``45.5%``) and the format is Excel's own percent format (``#,##0.0%``)."""
        if self.scientific:
            code = "0." + "0" * max(self.decimals, 1) + "E+00"
        else:
            places = "0" * self.decimals + "#" * self.optional
            code = "#,##0" + ("." + places if places else "")
        if self.percent:
            code += "%"
        if self.money:
            # A minus sign, in red, rather than parentheses: the same "-1,234.50" the report and the
            # terminal print, and no doubt left for a reader who does not read accounting brackets.
            code = f"{code};[Red]-{code}"
        return code

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
            rounded = exact.quantize(Decimal(1).scaleb(-(self.decimals + self.optional)))
        text = f"{rounded:,.{self.decimals + self.optional}f}"
        if self.optional:  # the optional decimals only where the figure has them, as `0.00##` shows it
            whole, _, part = text.partition(".")
            part = part[: self.decimals] + part[self.decimals:].rstrip("0")
            text = whole + ("." + part if part else "")
        if rounded == 0:
            text = text.lstrip("-")  # no "-0.00"
        return text


def _decimals_needed(v: float, digits: int = SIGNIFICANT) -> int:
    """Decimals that show ``v`` to ``digits`` significant digits, trailing zeros dropped (4.15 -> 2, 140 -> 0)."""
    if v == 0:
        return 0
    exponent = math.floor(math.log10(abs(v)))
    decimals = max(0, digits - 1 - exponent)
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


# ISO 4217 codes people write in plans (and the yuan's common RMB); a unit made of one of them, with an
# SI prefix or not (USD, kUSD, MEUR), over anything (USD/month, USD/GPU/h) is money.
CURRENCIES = frozenset("""
    USD EUR GBP JPY CNY RMB CHF CAD AUD NZD INR KRW SEK NOK DKK ISK PLN CZK HUF RON BGN TRY ILS AED SAR
    QAR KWD BRL MXN ARS CLP COP PEN SGD HKD TWD THB MYR IDR PHP VND PKR BDT EGP NGN KES ZAR RUB UAH
""".split())
_MONEY = re.compile(r"(?:k|M|G|T|m|bn)?([A-Z]{3})")
CENTS = 2


def is_money(unit: str) -> bool:
    """A currency unit (``USD``, ``kUSD``, ``EUR/month``, ``USD/Mtoken``): figures to cents."""
    head = re.split(r"[/*· ]", unit.strip(), maxsplit=1)[0]
    m = _MONEY.fullmatch(head)
    return m is not None and m.group(1) in CURRENCIES


def written_decimals(text: str) -> Optional[int]:
    """The decimals of a number as written (``2.50`` -> 2, ``1_920`` -> 0); None for ``7e10``."""
    m = re.match(r"\s*[+-]?[0-9_]*(?:\.([0-9_]*))?(?![0-9_.eE])", text)
    if m is None or not re.match(r"\s*[+-]?[0-9.]", text):
        return None
    return len((m.group(1) or "").replace("_", ""))


def style_for(values: Iterable[Optional[float | bool]], unit: str = "",
              written: Optional[int] = None) -> NumberStyle:
    """The one style for a quantity's figures (in its display unit: 65 for 65 %).

    Money (:func:`is_money`) is shown to cents, with more decimals only for a price per unit too small
    for cents (0.0042 USD/token), and never in scientific notation below 1e15. ``written``: the decimals of
    an input's literal; its format shows at least those, and up to six where an edit adds more
    (``#,##0.00####``), so a value typed into the cell is never shown rounded."""
    finite = [abs(float(v)) for v in values
              if v is not None and not isinstance(v, bool) and math.isfinite(float(v))]
    percent, money = is_percent(unit), is_money(unit)
    nonzero = [v for v in finite if v != 0]
    style = _style(nonzero, percent, money)
    if written is not None and not style.scientific:
        # a percentage keeps a decimal (60.0%) so that a typed 65.5% is not shown as 66%
        decimals = max(style.decimals, written, 1 if percent else 0)
        optional = MAX_DECIMALS - decimals if decimals else 0  # `#,##0.` would show a bare point
        style = NumberStyle(decimals, False, percent, max(optional, 0), money)
    return style


def _style(nonzero: list[float], percent: bool, money: bool) -> NumberStyle:
    if not nonzero:
        return NumberStyle(CENTS if money else 0, False, percent, money=money)
    largest = max(nonzero)
    if largest >= SCIENTIFIC_ABOVE or (largest < SCIENTIFIC_BELOW and not money):
        return NumberStyle(3, True, percent, money=money)
    # Six significant digits for every figure of the quantity, down to the smallest one that is not
    # rounding residue (a billionth of the largest): 140 | 70 | 36.3125 keeps the digits of 36.3125.
    readable = [v for v in nonzero if v >= largest * 1e-9]
    exponent = math.floor(math.log10(min(readable)))
    cap = max(0, min(MAX_DECIMALS, SIGNIFICANT - 1 - exponent))
    need = max(_decimals_needed(v) for v in readable)
    if money:
        # cents; a price smaller than a tenth of the unit keeps two significant digits more (0.0042)
        small = min(readable) < 0.1
        return NumberStyle(max(CENTS, min(cap, need)) if small else CENTS, False, percent, money=money)
    return NumberStyle(min(cap, need), False, percent)



def plan_styles(plan, evaluations: Iterable = (), names: Optional[Iterable[str]] = None) -> dict[str, NumberStyle]:
    """:func:`quantity_styles` over the base case and every scenario of ``plan`` (a compiled plan), and
    ``evaluations`` besides (a run's ``--set`` figures): the same style for a quantity whichever of its
    figures an output shows (the terminal's base column, the report's and the workbook's every scenario)."""
    from ..language.errors import PlanError

    every = list(evaluations)
    for scenario in plan.resolve_scenarios("all", written=True):
        try:
            every.append(plan.evaluate(scenario))
        except PlanError:  # a scenario this run does not show fails (a constraint, an answer with no root):
            continue  # its figures choose nothing, and the run says nothing of it
    return quantity_styles(plan.model, every, names)

PROSE_SIGNIFICANT = 3  # digits a figure in a sentence is written with (money still to cents)


def prose_style(values: Iterable[Optional[float | bool]], unit: str = "") -> NumberStyle:
    """The style of a figure in a sentence (a live value in a note, a question's answer): as
    :func:`style_for`, but with three significant digits where that has fewer decimals (``55.3 %``, not
    ``55.3333 %``; ``0.287``); money keeps its cents and whole figures their digits."""
    values = list(values)
    style = style_for(values, unit)
    finite = [abs(float(v)) for v in values
              if v is not None and not isinstance(v, bool) and math.isfinite(float(v)) and v != 0]
    if style.money or style.scientific or not finite:
        return style
    largest = max(finite)
    readable = [v for v in finite if v >= largest * 1e-9]
    decimals = max(0, PROSE_SIGNIFICANT - 1 - math.floor(math.log10(min(readable))))
    return NumberStyle(min(style.decimals, decimals), False, style.percent)


def texts(values: Iterable[Optional[float | bool]], unit: str = "") -> list[str]:
    """A quantity's figures as text outputs write them (the terminal's tables, the report's): one style
    for all of them, the workbook's number format (``140.0000 | 70.0000 | 36.3125``, as the cells show
    them: a live cell cannot drop its decimals where the figure happens to be whole)."""
    values = list(values)
    style = style_for(values, unit)
    return [style.text(v) for v in values]


def row_texts(stats: dict, unit: str = "", whole: bool = False) -> list[str]:
    """A distribution's figures (``point``, ``mean``, ``sd``, percentiles) in one style, chosen from all
    but the sd (a spread is written to the figure's precision: the sd of a constant is 0, never
    ``3.55289e-15``, and an sd does not ask a mean for more digits), as `planner simulate` and the report
    write a row. ``nan`` (a ``first(...)`` with no value) is written as the style writes it.

    ``whole``: every sample is a whole number (a count, a month): the point and percentiles are written
    whole (a percentile between two samples rounded to one), the mean and sd as a sentence writes the
    mean (:func:`prose_style`: 28.9, not 28.9057 or 29); money keeps its cents."""
    chosen = [v for k, v in stats.items() if k != "sd" and v is not None and v == v]
    style = style_for(chosen, unit)
    if whole and not style.money and not style.scientific:
        spread = prose_style([stats[k] for k in ("mean",) if k in stats and stats[k] == stats[k]], unit)
        whole_style = NumberStyle(0, False, style.percent)
        return [(spread if k in ("mean", "sd") else whole_style).text(v) for k, v in stats.items()]
    return [style.text(v) for v in stats.values()]


SHARE_DECIMALS = 2  # a share of samples or trials: 38.77 %, as every output writes it


def share(p: float) -> str:
    """A share of samples, trials or points as every output writes it (``38.77%``): two decimals, ``100%`` and
    ``0%`` only when every or no sample, else never rounded to them (``> 99.99%``, ``< 0.01%``)."""
    if p != p:
        return "n/a"
    if p >= 1:
        return "100%"
    if p <= 0:
        return "0%"
    text = f"{p * 100:.{SHARE_DECIMALS}f}"
    if float(text) >= 100:
        return f"> {100 - 10 ** -SHARE_DECIMALS:.{SHARE_DECIMALS}f}%"
    if float(text) <= 0:
        return f"< {10 ** -SHARE_DECIMALS:.{SHARE_DECIMALS}f}%"
    return text + "%"


def interval(left: str, right: str) -> str:
    """The two ends of an interval, written: ``[0 %, 100 %]``, and ``[1; 1,000]`` where an end has digits
    grouped (``[1, 1,000]`` would read as three numbers)."""
    return f"{left}; {right}" if "," in left + right else f"{left}, {right}"


def period_number(x: float) -> int | float:
    """A period as a number of its unit, the same in every output (JSON, CSV, the API's records, the
    report): ``3`` for the third month, a whole number as an integer, never ``3.0`` (nor ``2.9999999999999996``,
    what dividing by a month's seconds can leave); ``2.5`` stays as it is."""
    r = round(x)
    return int(r) if abs(x - r) <= 1e-9 * max(1.0, abs(x)) else float(x)


def significant(value: Optional[float | bool], digits: int = SIGNIFICANT, mode: str = "root") -> str:
    """One figure alone with up to ``digits`` significant digits by the rule: grouped, trailing zeros
    dropped, scientific where the rule is (``40,000,000``; ``15.9155``; ``1.257E-11``); the answer of a
    ``solve min``/``max`` (``mode``) on its own side (:func:`answer_style`)."""
    if value is None or isinstance(value, bool) or not math.isfinite(float(value)):
        return NumberStyle().text(value)
    v = float(value)
    if v == 0:
        return "0"
    if abs(v) >= SCIENTIFIC_ABOVE or abs(v) < SCIENTIFIC_BELOW:  # as a cell shows it: 1.257E-11
        return NumberStyle(min(3, max(digits - 1, 1)), True).text(v)
    decimals = _decimals_needed(v, digits)  # at most six decimals, as a cell shows it (0.046667), unless asked
    return answer_style(v, "", mode, NumberStyle(min(decimals, MAX_DECIMALS) if digits <= SIGNIFICANT else decimals)).text(v)


def written_places(model) -> dict[str, int]:
    """Input -> the most decimals its literals are written with (the definition and every scenario's
    value: ``2.50`` and ``3.125`` give 3), so that no output shows a typed value rounded."""
    from ..language import ir

    out: dict[str, int] = {}

    def note(name: str, expr) -> None:
        d = written_decimals(expr.span.flat)
        if d is not None:
            out[name] = max(out.get(name, 0), d)

    quantities = model.quantities
    for name, q in quantities.items():
        if q.is_input and not q.is_bool:
            note(name, q.definition.expr)
    for stmt in model.plan.statements:
        if isinstance(stmt, ir.Scenario):
            for o in stmt.overrides:
                if o.name in quantities and quantities[o.name].is_input:
                    note(o.name, o.expr)
    return out


def quantity_styles(model, evaluations, names: Optional[Iterable[str]] = None) -> dict[str, NumberStyle]:
    """THE style of each quantity, for every output (terminal, report, workbook, page): chosen from its
    figures in the display unit in ``evaluations`` (the base case and every scenario of the plan), and for an
    input from the decimals it is written with. A figure is spelled the same wherever it appears."""
    written = written_places(model)
    out = {}
    for n in (model.quantities if names is None else names):
        q = model.quantities[n]
        if q.is_bool:
            continue
        values = []
        for ev in evaluations:
            if n in getattr(ev, "series", ()):  # a series: its style from every period's figure
                values.extend(float(x) for x in ev.series_display(n) if math.isfinite(float(x)))
                continue
            v = ev.display(n)
            if v is not None and not isinstance(v, bool) and not (isinstance(v, float) and math.isnan(v)):
                values.append(float(v))
        out[n] = style_for(values, q.unit_text, written.get(n) if q.is_input else None)
    return out


def answer_style(value: float, unit: str, mode: str, style: Optional[NumberStyle] = None) -> NumberStyle:
    """How a question's answer is written: as every figure (``style``, else the rule's), except that a least
    value (``solve min``) is never shown below itself, nor a greatest (``solve max``) above (1.2345 kUSD is
    ``1.235 kUSD``, not ``1.23 kUSD``, which falls short): the decimals it needs, added one at a time."""
    style = style or style_for([value], unit)
    if mode not in ("min", "max") or isinstance(value, bool) or not math.isfinite(float(value)) or style.scientific:
        return style
    for more in range(17):
        shown = NumberStyle(style.decimals + more, style.scientific, style.percent, 0, style.money)
        said = float(shown.text(value).replace(",", ""))
        if (said >= value) if mode == "min" else (said <= value):
            return shown if more else style
    return style


def figure(value: Optional[float | bool], unit: str = "", style: Optional[NumberStyle] = None) -> str:
    """One figure with its unit for text outputs (the terminal, messages): ``6,527,500.00 USD``,
    ``45.5 %``, ``140 GB``; the number and its unit are always apart."""
    text = (style or style_for([value] if not isinstance(value, bool) else [], unit)).text(value)
    return f"{text} {unit}".strip() if unit and not isinstance(value, bool) else text


def differing(a: float, b: float, unit: str = "", digits: int = 8) -> tuple[str, str]:
    """Two figures written so that they differ where the numbers do: money by the money rule (to cents,
    more decimals while they look equal: ``3,298,035.200`` against ``3,298,035.205``), other figures with
    ``digits`` significant digits, more while they look equal. A failed comparison never prints two equal
    numbers."""
    money = is_money(unit)
    if money:
        style = style_for([a, b], unit)
        texts = (style.text(a), style.text(b))
    else:
        texts = (_significant(a, digits), _significant(b, digits))
    if a != b and math.isfinite(a) and math.isfinite(b):
        for n in range(1, 18):
            if texts[0] != texts[1]:
                break
            if money:
                more = NumberStyle(min(style.decimals + n, 17), style.scientific, style.percent)
                texts = (more.text(a), more.text(b))
            else:
                texts = (_significant(a, digits + n), _significant(b, digits + n))
    return (f"{texts[0]} {unit}".strip(), f"{texts[1]} {unit}".strip())


def apart(a: Fraction, b: Fraction) -> tuple[str, str]:
    """Two different exact values as Python writes their floats, with more significant digits where those
    are one float: a solve's answer in % and the float just above it in the base unit, each divided by the
    percent's scale, round to one float (``5.483983392348823`` twice); exactly they read
    ``5.4839833923488232`` and ``5.4839833923488240``."""
    x, y = float(a), float(b)
    if x != y:
        return repr(x).removesuffix(".0"), repr(y).removesuffix(".0")
    context = Context(prec=60)
    exact = [context.divide(Decimal(v.numerator), Decimal(v.denominator)) for v in (a, b)]
    for digits in range(17, 60):
        texts = tuple(f"{v:.{digits}g}" for v in exact)
        if texts[0] != texts[1]:
            return texts
    return texts


def _significant(v: float, digits: int) -> str:
    """``v`` with ``digits`` significant digits, a whole number as it is (the terminal's plain figures)."""
    if not math.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.{digits}g}"
