"""The one number rule, as the outputs import it: :mod:`planner.compute.numbers`.

The rule lives in the compute stage so that every text a person reads (the questions' messages, explain,
the terminal, the report, the workbook's number formats) can write its figures by it; the outputs import it
from here as they always have."""

from ..compute.numbers import (  # noqa: F401
    CENTS, CURRENCIES, MAX_DECIMALS, PROSE_SIGNIFICANT, SCIENTIFIC_ABOVE, SCIENTIFIC_BELOW, SIGNIFICANT,
    NumberStyle, answer_style, cell_scale, cell_unit, differing, figure, interval, is_money, is_percent, prose_style, quantity_styles, row_texts,
    scale_of, share, significant, style_for, texts, unit_of, written_decimals, written_places, plan_styles,
    period_number,
)
