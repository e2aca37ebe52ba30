"""The Model sheet: every derived quantity as a live formula over the named cells."""

from __future__ import annotations

from .book import HEADER, IDENT, NAME, SELECTED, TITLE, UNITS, Book, col_letter, scale_of, unit_of
from .generator import ATOM, Piece
from .inputs import imported_runs

SELECTED_COL = col_letter(SELECTED)


def _ref(q, cell: str) -> Piece:
    return Piece(cell, ATOM, None if q.is_bool else scale_of(q))


def _selected_refs(book: Book, refs: dict) -> tuple[dict, dict]:
    """References for the Selected scenario column: every input as the selected scenario has it (the
    Inputs sheet's Selected column), each derived quantity its own cell of that column (filled in as
    the rows are written), on this sheet and qualified (for the Cash flows sheet)."""
    here, there = dict(refs), dict(refs)
    for name, row in book.input_rows.items():
        here[name] = there[name] = _ref(book.q[name], f"Inputs!${SELECTED_COL}${row}")
    for name in book.model.derived:
        here.pop(name, None)
        there.pop(name, None)
    return here, there


def model_sheet(book: Book) -> None:
    ws = book.create_sheet("Model")
    ws.text(1, 1, book.said(book.plan.title), TITLE, overflow=True)
    ws.note(2, 1, "Every figure is a live formula over the named inputs, in its display unit, in dependency order; "
            "headline figures are highlighted." + (" The Selected scenario column computes the scenario picked "
                                                   "on the Summary." if book.selectable else ""))
    row = 3
    ws.header(row, ["Quantity", "Value", "Unit", "Name", "Tags", "Formula (as written)"])
    ws.freeze = (row + 1, 1)
    ws.repeat = (row, row)
    refs = book.pieces(book.base_context)
    headlines = set(book.headlines)
    selected = book.selectable and _selected_refs(book, refs)
    if selected:
        ws.text(3, SELECTED, "Selected scenario", HEADER)
    set_by = {n for c in book.selectable for n in book.model.scenarios[c.scenario].overrides}
    moves = book.moves(set_by)

    def moved(name: str) -> bool:  # depends on an input some scenario sets (a series it reduces included)
        return moves[name]

    rows = {}
    order = book.derived_order()
    runs = imported_runs(book, order, "figures")  # a library file's figures: one line, collapsed
    for k, name in enumerate(order):
        if k in runs:
            count, summary = runs[k]
            row += 1
            ws.note(row, 1, summary)
            ws.group(row + 1, row + count)
        row += 1
        rows[name] = row
    for name in book.derived_order():
        row = rows[name]
        q = book.q[name]
        ws.text(row, 1, book.label(name), NAME)  # words first; the identifier beside them
        text = book.quantity_formula(name, book.base_context, refs, f"Model: {name}")
        ws.formula(row, 2, text, book.display(book.base_context, name), book.style(name))
        if selected:
            here, there = selected
            here[name] = _ref(q, f"{SELECTED_COL}{row}")
            there[name] = _ref(q, f"Model!${SELECTED_COL}${row}")
        if selected and not moved(name):  # no scenario moves it: the same figure as column B
            ws.formula(row, SELECTED, f"=B{row}", book.display(book.base_context, name), book.style(name))
        elif selected:
            text = book.quantity_formula(name, book.base_context, here, f"Model (selected scenario): {name}", there,
                                         periods=book.periods_selected)
            ws.formula(row, SELECTED, text, book.display(book.base_context, name), book.style(name))
        ws.text(row, 3, unit_of(q), UNITS)
        ws.text(row, 4, name, IDENT)
        ws.text(row, 5, ", ".join(q.tags))
        ws.text(row, 6, q.formula)
        if name in headlines:
            ws.highlight.add(row)
        book.define(name, f"Model!$B${row}")
        book.model_rows[name] = row
    if selected:
        book.selected_refs = selected[1]  # the selected scenario's series rows read these (periods.fill)
    longest_tag = max((len(t) for n in book.derived_order() for t in book.q[n].tags), default=0)
    ws.caps.update({1: 50, 4: 24, 5: min(18, max(12, longest_tag + 2)), 6: 60})  # a tag to a line, or wrapped
