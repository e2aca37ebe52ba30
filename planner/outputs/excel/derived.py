"""The Model sheet: every derived quantity as a live formula over the named cells."""

from __future__ import annotations

from fractions import Fraction

from .book import scale_of, unit_of, NAME, TITLE, UNITS, Book


def model_sheet(book: Book) -> None:
    ws = book.create_sheet("Model")
    ws.text(1, 1, book.plan.title, TITLE, overflow=True)
    ws.note(2, 1, "Every figure is a live formula over the named inputs, in its display unit, in dependency order; "
            "headline figures are highlighted.")
    row = 3
    ws.header(row, ["Quantity", "Value", "Unit", "Description", "Tags", "Formula (as written)"])
    ws.freeze = (row + 1, 1)
    ws.repeat = (row, row)
    refs = book.refs(book.base_context)
    env = book.by_symbol(book.env(book.base_context))
    headlines = set(book.headlines)
    for name in book.derived_order():
        row += 1
        q = book.q[name]
        ws.text(row, 1, name, NAME)
        scale = scale_of(q)
        text = book.formula(book.expr(name), refs, scale, f"Model: {name}", env=env)
        ws.formula(row, 2, text, book.display(book.base_context, name), book.style(name))
        ws.text(row, 3, unit_of(q), UNITS)
        ws.text(row, 4, q.doc)
        ws.text(row, 5, ", ".join(q.tags))
        ws.text(row, 6, q.formula)
        if name in headlines:
            ws.highlight.add(row)
        book.define(name, f"Model!$B${row}")
        book.model_rows[name] = row
    ws.caps.update({4: 50, 5: 30, 6: 60})
