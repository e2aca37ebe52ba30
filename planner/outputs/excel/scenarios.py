"""The Scenarios sheet: one column per scenario (and per check ``with`` context)."""

from __future__ import annotations

from fractions import Fraction

from openpyxl.utils import column_index_from_string, get_column_letter

from .book import (
    HEADER_FILL,
    HEADER_FONT,
    NOTE_FONT,
    TITLE_FONT,
    AnswerRef,
    Book,
    Context,
    display_value,
    header,
    number_format,
    put_formula,
    put_text,
    widths,
)
from .printer import number


def scenarios_layout(book: Book, ws) -> None:
    """Fix rows and columns first: other sheets refer to these cells."""
    inputs = [n for n in book.plan.definition_order() if book.q[n].is_input]
    row = 5
    for name in inputs + book.derived_order():
        book.rows[name] = row
        row += 1


def scenarios_fill(book: Book, ws) -> None:
    put_text(ws, 1, 1, "Scenarios", TITLE_FONT)
    put_text(ws, 2, 1, "One column per scenario: inputs it sets are values (edit them here; `planner import` "
             "reads them back for that scenario), the others follow the Inputs sheet; every derived figure "
             "is a formula over its own column.", NOTE_FONT)
    header(ws, 3, ["Quantity", "Unit"])
    put_text(ws, 4, 1, "Description", HEADER_FONT)
    ws.freeze_panes = "C5"
    contexts = [c for c in book.contexts.values() if c.sheet is not None]
    for name, row in book.rows.items():
        put_text(ws, row, 1, name)
        put_text(ws, row, 2, book.q[name].unit_text)
    for ctx in contexts:
        col = ctx.column
        c = put_text(ws, 3, column_index_from_string(col), ctx.label, HEADER_FONT)
        c.fill = HEADER_FILL
        if ctx.scenario is not None and not ctx.overrides:
            put_text(ws, 4, c.column, book.model.scenarios[ctx.scenario].scenario.doc)
        fill_column(book, ws, ctx)
        ws.column_dimensions[col].width = max(14, min(40, len(ctx.label) + 2))
    widths(ws, {"A": 30, "B": 10})


def place_contexts(book: Book) -> None:
    col = 3
    for ctx in book.contexts.values():
        if ctx is book.base_context:
            continue
        ctx.sheet = "Scenarios"
        ctx.column = get_column_letter(col)
        col += 1


def fill_column(book: Book, ws, ctx: Context) -> None:
    values, _ = book.plan.input_values(ctx.scenario, {**book.overrides, **ctx.overrides})
    scenario_sets = set(book.model.scenarios[ctx.scenario].overrides) if ctx.scenario else set()
    ev = book.evaluation(ctx)
    col = column_index_from_string(ctx.column)
    refs, helper_refs = book.refs(ctx, ws.title), book.refs(ctx)  # once per column, not per row
    for name in book.rows:
        q = book.q[name]
        row = book.rows[name]
        if q.is_input:
            own = name in ctx.overrides or (name in scenario_sets and name not in book.overrides)
            answer = ctx.overrides.get(name)
            if isinstance(answer, AnswerRef):  # `with x = ALIAS`: the live answer, in x's unit
                ref, scale = book.answer_cell(answer.alias, answer.scenario, dict(answer.plain), ws.title)
                factor = scale / q.display.scale
                put_formula(ws, row, col, f"={ref}" + ("" if factor == 1 else f"*{number(factor)}"))
            elif own:
                c = ws.cell(row=row, column=col, value=display_value(q, values[name]))
                c.style = "Input"
            else:
                put_formula(ws, row, col, "=" + book.names[name])
            continue
        scale = Fraction(1) if q.is_bool else q.display.scale
        text = book.formula(book.plan.exprs[name], refs, scale, f"{ctx.label}: {name}", helper_refs)
        put_formula(ws, row, col, text,
                    number_format(ev.display(name)) if ev is not None else None)
