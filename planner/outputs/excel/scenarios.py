"""The Scenarios sheet (one column per scenario) and the Check contexts work sheet (one column per
``check ... with`` context): both on the same rows, one per quantity."""

from __future__ import annotations


from .book import (scale_of, unit_of, prose,
    CHECK_CONTEXTS,
    FIGURE,
    NEVER_WORD,
    HEADER,
    IDENT,
    INPUT,
    NAME,
    SCENARIOS,
    TITLE,
    UNITS,
    AnswerRef,
    Book,
    Context,
    capitalised,
    col_index,
    col_letter,
)
from .generator import number

FIRST_ROW = 5
FIRST_COLUMN = 4  # D: the label, the identifier and the unit before it


def scenarios_layout(book: Book) -> None:
    """Fix rows and columns first: other sheets refer to these cells.

    With a Scenarios sheet the rows that differ between its columns come first: the inputs a scenario sets,
    then the figures they move; the inputs no scenario sets (every column reads the Inputs sheet) and the
    figures no scenario moves (every column the Model sheet's figure) follow, each block an outline group
    under a line that says so, collapsed: the printed sheet shows what the scenarios change."""
    columns = {SCENARIOS: FIRST_COLUMN, CHECK_CONTEXTS: FIRST_COLUMN}
    for ctx in book.contexts.values():
        if ctx is book.base_context:
            continue
        ctx.sheet = CHECK_CONTEXTS if ctx.overrides else SCENARIOS
        ctx.column = col_letter(columns[ctx.sheet])
        columns[ctx.sheet] += 1
    inputs = [n for n in book.plan.definition_order() if book.q[n].is_input]
    derived = book.derived_order()
    shown = [c for c in book.contexts.values() if c.sheet == SCENARIOS]
    book.scenario_groups = []  # (first row, last row, summary text) on the Scenarios sheet
    if not shown:
        blocks = [(inputs + derived, None)]
    else:
        set_by = {n for c in shown for n in book.model.scenarios[c.scenario].overrides if n not in book.overrides}
        moves = book.moves(set_by)  # a figure that reduces a series the scenario moves moves too
        follow = [n for n in inputs if n not in set_by]
        still = [n for n in derived if not moves[n]]
        moved = [n for n in derived if moves[n]]
        blocks = [([n for n in inputs if n in set_by], None),
                  (follow, f"{_count(len(follow), 'input')} no scenario sets: every column reads the Inputs "
                           "sheet's value (expand + to see them)")]
        headlines = set(book.headlines)
        results = [n for n in moved if n in headlines]
        if len(blocks[0][0]) + len(moved) > LONG and results and len(results) < len(moved):
            # a long sheet prints what the scenarios change and their results, as a scenario summary does;
            # the figures on the way follow, grouped (the Model sheet has each of them in order)
            others = [n for n in moved if n not in headlines]
            blocks += [(results, None),
                       (others, f"{_count(len(others), 'more figure')} the scenarios move, on the way to the "
                                "headline figures above (expand + to see them)")]
        else:
            blocks.append((moved, None))
        blocks.append((still, f"{_count(len(still), 'figure')} no scenario moves: every column shows the Model "
                              "sheet's figure (expand + to see them)"))
    row = FIRST_ROW
    for names, summary in blocks:
        if summary is not None and len(names) >= GROUPED:
            row += 1  # the summary line
            book.scenario_groups.append((row, row + len(names) - 1, summary))
        for name in names:
            book.rows[name] = row
            row += 1


GROUPED = 2  # fewest rows worth an outline group (one row takes the room of its summary line)
LONG = 45  # inputs and figures the scenarios move past which the sheet shows their headline figures only


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def sheets_needed(book: Book) -> list[str]:
    return [s for s in (SCENARIOS, CHECK_CONTEXTS) if any(c.sheet == s for c in book.contexts.values())]


NOTES = {
    SCENARIOS: "One column per scenario: inputs it sets are orange values (edit them here; `planner import` reads "
               "them back for that scenario), the others follow the Inputs sheet; every derived figure is a "
               "formula over its own column, except one that reduces a series: planner's figure at export (its "
               "comment says so; pick the scenario as the Summary's Selected scenario to see it live).",
    CHECK_CONTEXTS: "Working for the Checks sheet: one column per `check ... with` context (the inputs the check "
                    "sets, on top of its scenario), each a live copy of the plan.",
}


def context_sheet(book: Book, title: str) -> None:
    """Create the sheet (its place in the workbook); :func:`fill_sheet` writes it once answers exist."""
    book.create_sheet(title, work=title == CHECK_CONTEXTS)


def fill_sheet(book: Book, title: str) -> None:
    ws = book.sheet(title)
    ws.text(1, 1, "Scenarios" if title == SCENARIOS else "Check contexts", TITLE, overflow=True)
    ws.note(2, 1, NOTES[title])
    ws.header(3, ["Quantity", "Name", "Unit"])
    ws.text(4, 1, "Scenario as the plan names it" if title == SCENARIOS else "Set by the check", HEADER)
    ws.freeze = (FIRST_ROW, FIRST_COLUMN)
    ws.repeat = (3, 4)
    headlines = set(book.headlines)
    if title == SCENARIOS:
        for first, last, summary in book.scenario_groups:
            ws.note(first - 1, 1, summary)
            ws.group(first, last)
    for name, row in book.rows.items():
        ws.text(row, 1, book.label(name), NAME)  # words first; the identifier beside them
        ws.text(row, 2, name, IDENT)
        ws.text(row, 3, unit_of(book.q[name]), UNITS)
        if name in headlines:
            ws.highlight.add(row)
    for ctx in [c for c in book.contexts.values() if c.sheet == title]:
        col = col_index(ctx.column)
        if ctx.overrides:
            ws.text(3, col, ctx.label, HEADER)
            ws.text(4, col, ", ".join(f"{k} = {book._shown(k, v)}" for k, v in ctx.overrides.items()))
        elif ctx.scenario is not None:  # the scenario's doc string over its column; its name below (import reads it)
            doc = book.model.scenarios[ctx.scenario].scenario.doc
            ws.text(3, col, capitalised(prose(doc)) if doc else ctx.label, HEADER)
            ws.text(4, col, ctx.label, IDENT)
        fill_column(book, ws, ctx)
        ws.caps[col] = 24
    ws.caps[1] = 40


def fill_column(book: Book, ws, ctx: Context) -> None:
    scenario_sets = set(book.model.scenarios[ctx.scenario].overrides) if ctx.scenario else set()
    col = col_index(ctx.column)
    refs, row_refs = book.pieces(ctx, ws.title), book.pieces(ctx)  # once per column, not per row
    for name, row in book.rows.items():
        q = book.q[name]
        value = book.display(ctx, name)
        style = book.style(name)
        if q.is_input:
            own = name in ctx.overrides or (name in scenario_sets and name not in book.overrides)
            answer = ctx.overrides.get(name)
            if isinstance(answer, AnswerRef):  # `with x = ALIAS`: the live answer, in x's unit
                ref, scale = book.answer_cell(answer.alias, answer.scenario, dict(answer.plain), ws.title)
                factor = scale / scale_of(q)
                ws.formula(row, col, f"={ref}" + ("" if factor == 1 else f"*{number(factor)}"), value, style)
            elif own:
                ws.number(row, col, value, style, INPUT)
            else:
                ws.formula(row, col, "=" + book.names[name], value, style)
            continue
        # a `first` that finds nothing says "never", as on the Summary; a formula reads it as #N/A (Book.read)
        never = book.may_be_never(name) and (value == "#N/A" or isinstance(value, float) and value != value)
        if book.reads_series(name):  # the sheet of periods computes the selected scenario's series, not this column's
            cell = ws.text(row, col, NEVER_WORD, FIGURE) if never else ws.number(row, col, value, style)
            cell.comment = "planner's figure at export, not live: it reduces a series (export again after editing)"
            continue
        text = book.quantity_formula(name, ctx, refs, f"{ctx.label}: {name}", row_refs)
        if book.may_be_never(name):
            text = f'=IF(ISNA({text[1:]}),"{NEVER_WORD}",{text[1:]})'
        ws.formula(row, col, text, NEVER_WORD if never else value, style, FIGURE if book.may_be_never(name) else None)
