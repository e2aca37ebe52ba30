"""The Model sheet: every derived quantity as a live formula over the named cells."""

from __future__ import annotations

from fractions import Fraction

from .book import NOTE_FONT, TITLE_FONT, Book, header, number_format, put_formula, put_text, widths


def model_sheet(book: Book) -> None:
    ws = book.wb.create_sheet("Model")
    put_text(ws, 1, 1, book.plan.title, TITLE_FONT)
    put_text(ws, 2, 1, "Every figure is a live formula over the named inputs, in its display unit, "
             "in dependency order.", NOTE_FONT)
    row = 3
    header(ws, row, ["Quantity", "Value", "Unit", "Description", "Tags", "Formula (as written)"])
    ws.freeze_panes = ws.cell(row=row + 1, column=1)
    refs = book.refs(book.base_context)
    for name in book.derived_order():
        row += 1
        q = book.q[name]
        put_text(ws, row, 1, name)
        scale = Fraction(1) if q.is_bool else q.display.scale
        text = book.formula(book.plan.exprs[name], refs, scale, f"Model: {name}")
        put_formula(ws, row, 2, text, number_format(book.base.display(name)))
        put_text(ws, row, 3, q.unit_text)
        put_text(ws, row, 4, q.doc)
        put_text(ws, row, 5, ", ".join(q.tags))
        put_text(ws, row, 6, q.formula)
        book.define(name, f"Model!$B${row}")
    widths(ws, {"A": 30, "B": 16, "C": 10, "D": 60, "E": 34, "F": 70})
