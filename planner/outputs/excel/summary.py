"""The Summary sheet, first in the workbook: what a reader needs at a glance, all of it live.

The title and notes; the headline quantities (the report's rule: tagged
``[headline]``, else the plan's leaves) per scenario, as columns when there
are few scenarios and as rows when there are many; the key inputs (tagged
``[assumption]`` or ``[headline]``, else the first of the plan's own inputs),
each a formula over its cell on the Inputs sheet with a link to it; the
answers of the questions (from the Solve sheet) and the check status (a
live count over the Checks sheet).
"""

from __future__ import annotations

import math

from ..numbers import answer_style, prose_style
from .book import FIGURE, NEVER_WORD, NO_ANSWER, STALE, shown_figures
from .book import HEADER, IDENT, INPUT, SELECTED, capitalised, prose, col_index, col_letter, unit_of, NAME, NOTE, SCENARIOS, UNIT, UNITS, Book, sheet_ref

FEW = 6  # scenarios shown as columns; more are rows
KEY_INPUTS = 12  # untagged plans: this many of their own inputs
SECTION = "section"


def create(book: Book) -> None:
    book.create_sheet("Summary")


def fill(book: Book) -> None:
    ws = book.sheet("Summary")
    row = book.heading(ws)
    ws.note(row, 1, _live_sentence(book))
    row += 2
    row = _selector(book, ws, row)
    row = _headlines(book, ws, row)
    row = _series(book, ws, row)
    row = _inputs(book, ws, row)
    row = _answers(book, ws, row)
    _checks(book, ws, row)
    ws.caps.update({1: 45, 2: 30})


def _live_sentence(book: Book) -> str:
    """The Summary's first sentence, true of this workbook: every figure live, or every figure but the
    answers planner found at export (a search the sheet cannot redo: a `first` over months, several roots)
    and the scenarios' figures that reduce a series (the sheet of periods computes the selected one only)."""
    edit = "edit the orange cells on the Inputs sheet (or a scenario's own inputs on the Scenarios sheet)"
    fixed = sum(1 for _, ctx, r, at in book.solve_rows
                if not ctx.overrides and (getattr(book.sheet("Solve").at(at, 3), "kind", None) != "formula"))
    frozen = bool(book.selectable) and any(not book.q[n].is_input and book.reads_series(n) for n in book.rows)
    if not fixed and not frozen:
        return f"Every figure here is live: {edit} and it follows."
    what = ""
    if fixed:
        what = (" the answer planner found at export (its" if fixed == 1 else
                f" the {fixed} answers planner found at export (their") + f" status reads \"{STALE}\" after an edit)"
    if frozen:
        what += (" and" if fixed else "") + (", in the scenarios' columns, the figures that reduce a series "
                                             "(planner's at export; pick the scenario as the Selected scenario "
                                             "to see them live)")
    return f"Every figure here is live except{what}: {edit} and the rest follows."


def _selector(book: Book, ws, row: int) -> int:
    """The scenario switch: a list of the scenarios (base first); the Selected scenario columns of the
    Model and Inputs sheets compute the one picked, live."""
    if not book.selectable:
        return row
    selected, choices = book.selector_names
    names = ["base"] + [c.label for c in book.selectable]
    ws.text(row, 1, "Selected scenario (Model and Inputs follow it)", NAME)
    ws.text(row, 2, "base", INPUT)
    if len(names) <= FEW + 1:
        ws.text(row, 3, "one of:", NOTE)
        for k, label in enumerate(names, start=4):
            ws.text(row, k, label, NOTE)
        source = f"$D${row}:${col_letter(3 + len(names))}${row}"
        book.defined[choices] = f"Summary!{source}"
    else:  # a dozen names across the Summary would print it too small to read: the list, under the Scenarios
        # sheet's columns (base, then each scenario under its own column)
        scenarios = book.sheet(SCENARIOS)
        at = scenarios.max_row + 2
        first = book.selectable[0].column
        scenarios.text(at, 1, "The Summary's scenario selector offers these", NOTE)
        scenarios.text(at, col_index(first) - 1, "base", IDENT)
        for ctx in book.selectable:
            scenarios.text(at, col_index(ctx.column), ctx.label, IDENT)
        source = (f"{sheet_ref(SCENARIOS)}!${col_letter(col_index(first) - 1)}${at}:"
                  f"${book.selectable[-1].column}${at}")
        book.defined[choices] = source
        ws.text(row, 3, f"one of the {len(names)} scenarios: base, or a column of the Scenarios sheet", NOTE,
                overflow=True)
    book.defined[selected] = f"Summary!$B${row}"
    ws.validations.append((row, 2, {"validate": "list", "source": f"={source}",
                                    "error_title": "planner scenario", "error_message": "one of: " + ", ".join(names)[:240],
                                    "error_type": "stop", "show_error": True, "ignore_blank": False}))
    return row + 2


def _columns(book: Book) -> list:
    """The plan as written, then each scenario the Scenarios sheet shows: a reader sees the figures the
    plan states beside what the scenarios make of them."""
    shown = [c for c in book.contexts.values() if c.sheet == SCENARIOS]
    return [book.base_context] + shown


def _section(ws, row: int, title: str) -> int:
    ws.text(row, 1, title, SECTION, overflow=True)
    return row + 1


def _headlines(book: Book, ws, row: int) -> int:
    names = book.headlines
    if not names:
        return row
    contexts = _columns(book)
    row = _section(ws, row, "Headline figures" + (" per scenario" if len(contexts) > 1 else ""))
    if len(contexts) - 1 <= FEW:  # FEW scenarios beside the plan as written
        written = "As written" if len(contexts) > 1 else "Value"
        labels = [scenario_words(book, c) if c is not book.base_context else written for c in contexts]
        ws.header(row, ["Figure", "Unit"] + labels + (["Selected scenario"] if book.selectable else []))
        named = [c for c in contexts if c is not book.base_context and scenario_words(book, c) != c.label]
        if named:  # the doc strings head the columns; the names below, as the selector lists them
            row += 1
            for k, ctx in enumerate(contexts, start=3):
                ws.caps[k] = 18  # a long doc string wraps over its column
                if ctx is not book.base_context:
                    ws.text(row, k, ctx.label, IDENT)
            ws.repeat = (row - 1, row)
        else:
            ws.repeat = (row, row)
        for name in names:
            row += 1
            label = ws.text(row, 1, words(book, name))  # the doc string; the identifier in its comment
            if label.value != name:
                label.comment = name
            ws.text(row, 2, unit_of(book.q[name]), UNITS)
            for k, ctx in enumerate(contexts, start=3):
                _figure(book, ws, row, k, name, book.cell(ctx, name, ws.title), book.display(ctx, name))
            if book.selectable:  # follows the selector above, through the Model's (or Inputs') Selected column
                at = book.model_rows.get(name)
                ref = f"Model!${col_letter(SELECTED)}${at}" if at else f"Inputs!${col_letter(SELECTED)}${book.input_rows[name]}"
                _figure(book, ws, row, 3 + len(contexts), name, ref, book.display(book.base_context, name))
            ws.highlight.add(row)
        return row + 2
    ws.header(row, ["Scenario"] + [words(book, n) for n in names])  # words first; the identifier in a comment
    for k, name in enumerate(names, start=2):
        if words(book, name) != name:
            ws.at(row, k).comment = name
        ws.caps[k] = 18
    ws.text(row + 1, 1, "unit", UNIT)
    for k, name in enumerate(names, start=2):
        ws.text(row + 1, k, unit_of(book.q[name]), UNIT)
    ws.repeat = (row, row + 1)
    row += 1
    for ctx in contexts:
        row += 1
        ws.text(row, 1, ctx.label if ctx is not book.base_context else "as written", NAME)
        for k, name in enumerate(names, start=2):
            _figure(book, ws, row, k, name, book.cell(ctx, name, ws.title), book.display(ctx, name))
    return row + 2


def _series(book: Book, ws, row: int) -> int:
    """The headline series (tagged ``[headline]``), each a link to its row of periods."""
    p = book.periods_selected or book.periods
    names = [n for n in getattr(book, "series_names", []) if "headline" in book.q[n].tags] if p else []
    if not names:
        return row
    title = book.periods_sheet.title
    row = _section(ws, row, f"Headline series ({title.lower()}: the {title} sheet)")
    for name in names:
        label = words(book, name)
        ws.link(row, 1, f"{label[:1].upper()}{label[1:]}, {title.lower()[:-1]} by {title.lower()[:-1]}",
                f"{title}!A{p.rows[name]}")
        ws.text(row, 2, unit_of(book.q[name]), UNITS)
        row += 1
    return row + 1


def _figure(book: Book, ws, row: int, col: int, name: str, ref: str, value) -> None:
    """A headline figure, live; a `first` that finds nothing shows "never" (planner's word for it), where
    the Model and Scenarios cells keep #N/A for the formulas that use them."""
    if not book.may_be_never(name):
        ws.formula(row, col, "=" + ref, value, book.style(name))
        return
    shown = value if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        else NEVER_WORD
    ws.formula(row, col, f'=IF(ISNA({ref}),"{NEVER_WORD}",{ref})', shown, book.style(name), FIGURE)


def words(book: Book, name: str) -> str:
    """A quantity's label for a reader: its doc string (capitalised), else its name."""
    return book.label(name)


def scenario_words(book: Book, ctx) -> str:
    """A scenario named for a reader: its doc string (capitalised), else its name."""
    doc = book.model.scenarios[ctx.scenario].scenario.doc if ctx.scenario is not None else None
    return capitalised(prose(doc)) if doc else ctx.label


def key_inputs(book: Book) -> list[str]:
    inputs = [n for n in book.plan.definition_order() if book.q[n].is_input]
    tagged = [n for n in inputs if any(t == "headline" or t.startswith("assumption") for t in book.q[n].tags)]
    if tagged:
        return tagged
    own = [n for n in inputs if "." not in n]
    return (own or inputs)[:KEY_INPUTS]


def _inputs(book: Book, ws, row: int) -> int:
    names = key_inputs(book)
    if not names:
        return row
    every = len(names) == len([n for n in book.q if book.q[n].is_input])
    row = _section(ws, row, "Key inputs" + ("" if every else " (every input: the Inputs sheet)"))
    value = "Selected scenario" if book.selectable else "Value"
    ws.header(row, ["Description", "Input", value, "Unit"])
    if any(n in book.model.scenarios[c.scenario].overrides for c in book.selectable for n in names):
        ws.text(row, 5, "Set by scenarios (edit there)", HEADER, overflow=True)
    for name in names:
        row += 1
        q = book.q[name]
        at = book.input_rows[name]
        ws.text(row, 1, book.label(name))
        ws.link(row, 2, name, f"Inputs!B{at}")
        # with a selector, the value the selected scenario uses (the Inputs sheet's Selected column)
        column = col_letter(SELECTED) if book.selectable else "B"
        ws.formula(row, 3, f"=Inputs!${column}${at}", book.display(book.base_context, name), book.style(name))
        ws.text(row, 4, unit_of(q), UNITS)
        setters = [c for c in book.selectable if name in book.model.scenarios[c.scenario].overrides]
        if setters:  # where to edit it for each scenario that sets it, linked to the first
            link = ws.link(row, 5, book.scenario_cells(name), f"Scenarios!{setters[0].column}{book.rows[name]}")
            link.overflow = True  # runs into the empty cells to its right: its column is a headline figure's too
    return row + 2


def _answers(book: Book, ws, row: int) -> int:
    rows = [(stmt, ctx, r, at) for stmt, ctx, r, at in book.solve_rows if not ctx.overrides]
    if not rows:
        return row
    from ...language.errors import PlanError

    row = _section(ws, row, "Answers")
    ws.header(row, ["Answer", "Scenario", "Value", "Unit", "Holds", "Status"])
    for stmt, ctx, r, at in rows:
        row += 1
        if isinstance(r, PlanError):
            question = ws.text(row, 1, book.answer_words(stmt))  # plain text: LibreOffice does not wrap a link
        else:  # a statement, live: "Breakeven utilisation: 55.3%"
            question = _statement(book, ws, row, stmt, r, at)
        question.comment = "In the plan: " + stmt.span.flat  # the question as the plan asks it
        ws.text(row, 2, ctx.label)
        if isinstance(r, PlanError):
            ws.formula(row, 3, f"=Solve!$C${at}", "#N/A")
            # a finding, not a failure: the status says so, the reason is on the Solve sheet's row (and here
            # in the status cell's comment), not cut off in the Unit column
            status = ws.text(row, 6, NO_ANSWER)
            status.comment = " ".join(r.message.split()) + f" (Solve!J{at})"
            continue
        answer = book.sheet("Solve").at(at, 3)  # a formula, or planner's value where the sheet cannot decide
        ws.formula(row, 3, f"=Solve!$C${at}", answer.cached if answer.kind == "formula" else answer.value,
                   _prose(book, answer, r))
        ws.text(row, 4, unit_of(book.q[r.target]), UNITS)
        holds = book.sheet("Solve").at(at, 5)
        value = holds.value if holds.kind == "bool" else holds.cached
        ws.formula(row, 5, f"=Solve!$E${at}", value)
        ws.status(row, 6, f"E{row}", value is True, stale=answer.kind == "number")
    ws.flag(row - len(rows) + 1, 6, row)
    return row + 2


def _statement(book: Book, ws, row: int, stmt, r, at: int):
    """The answer as a sentence, live over its Solve cell: ``Breakeven utilisation: 55.3333%``, ``Breakeven
    rent: 3.23 USD/h`` (the figure in the answer's own format, the unit once)."""
    answer = book.sheet("Solve").at(at, 3)
    value = answer.cached if answer.kind == "formula" else answer.value
    num, unit = _prose(book, answer, r), unit_of(book.q[r.target])
    words = book.answer_words(stmt) + ": "
    if num is None or not isinstance(value, (int, float)) or isinstance(value, bool) or num.scientific:
        return ws.text(row, 1, words + ("" if value is None else str(value)) + (" " + unit if unit else ""))
    code = num.excel().split(";")[0]
    shown = num.text(value * 100 if num.percent else value) + ("%" if num.percent else "")
    tail = f'&" {unit}"' if unit else ""
    quoted = words.replace('"', '""')
    return ws.formula(row, 1, f'="{quoted}"&TEXT(Solve!$C${at},"{code}"){tail}', words + shown
                      + (" " + unit if unit else ""))


def _prose(book: Book, answer, r):
    """An answer's style on the Summary: three significant digits, as the report's sentences give it
    (``55.3%``, not the Solve sheet's ``55.3333%``); money keeps its cents; a least value (``solve min``) is
    never shown below itself nor a greatest above (:func:`..numbers.answer_style`)."""
    value = answer.cached if answer.kind == "formula" else answer.value
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return answer.num
    unit = book.q[r.target].unit_text
    shown = shown_figures([value], unit)
    return answer_style(shown[0], unit, getattr(r, "mode", "root"), prose_style(shown, unit))


def _checks(book: Book, ws, row: int) -> int:
    if not book.check_cells:
        return row
    total = len(book.check_cells)
    passed = sum(1 for r in book.check_results if r.passed)
    last = max(int(where[1:]) for _, _, where in book.check_cells)
    cells = f"{sheet_ref('Checks')}!$G$4:$G${last}"
    row = _section(ws, row, "Checks")
    ws.text(row, 1, "checks that hold", NAME)
    ws.formula(row, 2, f"=COUNTIF({cells},TRUE)", passed)
    ws.text(row, 3, f"of {total}", UNITS)
    ws.text(row + 1, 1, "status", NAME)
    # live text rather than a conditional format: LibreOffice 7.4 fails to print (to PDF) a first sheet with
    # conditional formats over formulas it has not recalculated
    ws.formula(row + 1, 2, f'=IF(COUNTIF({cells},TRUE)={total},"all hold",({total}-COUNTIF({cells},TRUE))&" fail")',
               "all hold" if passed == total else f"{total - passed} fail")
    ws.link(row + 1, 3, "see the Checks sheet", "Checks!A3", NOTE)
    return row + 3

