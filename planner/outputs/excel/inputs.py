"""The Inputs sheet: one editable, named cell per input, with its unit, comment and data validation."""

from __future__ import annotations

import math
import os
from typing import Optional

from ...language import ir
from ...language.errors import PlanError
from .book import BASE_ONLY, IDENT, SELECTED, scale_of, unit_of, HEADER, INPUT, MAX_VALIDATION, NAME, UNITS, Book
from .generator import ATOM, Generator, NotWritten, Piece, UnsupportedFormula, number

HEADER_ROW_NOTE = ("Edit the orange cells; every other sheet follows. Percentages are Excel's own: type 65% "
                   "(the cell holds 0.65). `planner import` reads them back.")


def inputs_sheet(book: Book) -> None:
    ws = book.create_sheet("Inputs")
    row = book.heading(ws)
    ws.note(row, 1, HEADER_ROW_NOTE)
    row += 2
    ws.header(row, ["Input", "Value", "Unit", "Name", "Tags", "Constraints"])
    ws.freeze = (row + 1, 1)
    ws.repeat = (row, row)
    book.inputs_header = row
    inputs = [n for n in book.plan.definition_order() if book.q[n].is_input]
    headlines = set(book.headlines)
    runs = imported_runs(book, inputs) | scenario_runs(book, inputs)
    for k, name in enumerate(inputs):
        if k in runs:  # a run from one library file, or every scenario sets: one line, the rows under it
            count, summary = runs[k]
            row += 1
            ws.note(row, 1, summary)
            ws.group(row + 1, row + count)
        row += 1
        q = book.q[name]
        ws.text(row, 1, book.label(name), NAME)  # words first; the identifier beside them
        value = ws.number(row, 2, book.display(book.base_context, name), book.style(name), INPUT)
        ws.text(row, 3, unit_of(q), UNITS)
        ws.text(row, 4, name, IDENT)
        ws.text(row, 5, ", ".join(q.tags))
        ws.text(row, 6, ", ".join(c.span.flat for c in q.definition.constraints))
        if q.doc or q.tags:
            value.comment = (q.doc or "") + ("\n[" + ", ".join(q.tags) + "]" if q.tags else "")
        if name in headlines:
            ws.highlight.add(row)
        book.define(name, f"Inputs!$B${row}")
        book.input_rows[name] = row
        validation(book, ws, q, row)
        if book.selectable:
            chosen = book.selected_input(name)
            if chosen is None:
                ws.formula(row, SELECTED, f"=B{row}", book.display(book.base_context, name), book.style(name))
            else:  # the scenario cell to edit, said in words and linked; the value the selected scenario uses
                ws.formula(row, SELECTED, chosen, book.display(book.base_context, name), book.style(name))
                setters = [c for c in book.selectable if name in book.model.scenarios[c.scenario].overrides]
                every = len(setters) == len(book.selectable)
                shown = book.scenario_cells(name)
                if every and len(setters) > 3:  # a row of the Scenarios sheet: how many, where
                    shown = f"all {len(setters)} scenarios: Scenarios! row {book.rows[name]}"
                elif every:
                    shown = "every scenario sets it: " + shown
                ws.link(row, SELECTED + 1, shown, f"Scenarios!{setters[0].column}{book.rows[name]}")
                if every:  # only the base case reads this cell: the cells to edit are the scenarios' own
                    value.style = BASE_ONLY
                    value.comment = (f"The base case's {name} (Selected scenario: base). Every scenario sets its "
                                     "own value: edit those, the orange cells of the Scenarios sheet.\n"
                                     + (value.comment or ""))
    if book.selectable:
        ws.text(book.inputs_header, SELECTED, "In the selected scenario", HEADER)
        ws.text(book.inputs_header, SELECTED + 1, "Set by scenarios (edit there)", HEADER)
        ws.caps[SELECTED + 1] = 50
    ws.caps.update({1: 50, 4: 24, 5: 30, 6: 34})


def imported_runs(book: Book, names: list[str], noun: str = "inputs") -> dict[int, tuple[int, str]]:
    """Runs of ``names`` imported from one library file (``llama3_8b.hidden_size``), by the index of their
    first: (how many, the summary line). They are grouped under that line, collapsed: the printed sheet lists
    the plan's own figures and one line per library file. A figure the Summary shows, a headline or an input
    a scenario sets stays a row of its own."""
    from .summary import key_inputs

    own = book.plan.source.name
    keep = set(book.headlines) | set(key_inputs(book)) | {
        n for c in book.selectable for n in book.model.scenarios[c.scenario].overrides}

    def source(name: str):
        where = book.q[name].definition.span.source.name
        return None if where == own or "." not in name or name in keep else (name.split(".")[0], where)

    out = {}
    for k, end in _runs(names, source, 2):
        group = names[k:end]
        tags = [t for n in group for t in book.q[n].tags if t.startswith("source: ")]
        common = os.path.commonprefix(tags).rsplit(":", 1)[0].strip() if len(tags) == len(group) else ""
        prefix, where = source(group[0])
        out[k] = (end - k, f"{prefix}: {end - k} {noun} imported from {_library_path(where)}"
                  + (f", {common}" if common.startswith("source: ") else "") + " (expand + to see them)")
    return out


EVERY_SCENARIO_RUN = 3  # consecutive inputs every scenario sets, fewest grouped under one line


def scenario_runs(book: Book, inputs: list[str]) -> dict[int, tuple[int, str]]:
    """Runs of inputs every scenario sets (more than three scenarios), by the index of their first: (how
    many, the summary line naming the Scenarios rows to edit). Grouped, collapsed: only the base case reads
    these cells, so the printed Inputs sheet shows the inputs an edit here changes. A headline or an input
    the Summary shows stays a row of its own."""
    from .summary import key_inputs

    if len(book.selectable) <= 3:
        return {}
    keep = set(book.headlines) | set(key_inputs(book))

    def every(name: str):
        return name not in keep and all(name in book.model.scenarios[c.scenario].overrides
                                        for c in book.selectable) or None

    out = {}
    for k, end in _runs(inputs, every, EVERY_SCENARIO_RUN):
        rows = sorted(book.rows[n] for n in inputs[k:end])
        where = f"row {rows[0]}" if len(rows) == 1 else (
            f"rows {rows[0]}-{rows[-1]}" if rows[-1] - rows[0] == len(rows) - 1 else "rows " + ", ".join(map(str, rows)))
        out[k] = (end - k, f"{end - k} inputs every scenario sets ({book.label(inputs[k])}, ...): edit them on the "
                  f"Scenarios sheet, {where} (expand + to see the base case's values)")
    return out


def _runs(names: list[str], key, least: int) -> list[tuple[int, int]]:
    """(first, end) of each run of at least ``least`` consecutive names with one key that is not None."""
    out, k = [], 0
    while k < len(names):
        here, end = key(names[k]), k + 1
        while here is not None and end < len(names) and key(names[end]) == here:
            end += 1
        if here is not None and end - k >= least:
            out.append((k, end))
        k = end
    return out


def _library_path(path: str) -> str:
    """A library file as the plan's import names it (``models/llama3_8b.plan``), else its file name."""
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[parts.index("library") + 1:]) if "library" in parts[:-1] else parts[-1]


def validation(book: Book, ws, q, row: int) -> None:
    """Constraints as data validation: a TRUE/FALSE list, whole/decimal bounds, or a custom formula."""
    shown = ", ".join(c.span.flat for c in q.definition.constraints)
    cell = f"B{row}"
    if q.is_bool:
        spec = {"validate": "list", "source": ["TRUE", "FALSE"]}
        shown = "true or false"
    else:
        conditions = [c.condition for c in q.definition.constraints if c.kind == "condition"]
        if not conditions and not q.integer:
            return
        spec = bounds_validation(book, q, conditions) or custom_validation(book, q, conditions, cell)
        if spec is None:
            return
    spec.update({"error_title": "planner constraint", "error_message": f"{q.name}: {shown}"[:255],
                 "error_type": "stop", "show_error": True, "ignore_blank": False})
    ws.validations.append((row, 2, spec))


def bounds_validation(book: Book, q, conditions) -> Optional[dict]:
    """whole/decimal with between/>=/<= when the constraints are plain bounds on the input."""
    if not all(_is_plain_bound(c, q.name, book.plan.analyzer) for c in conditions):
        return None
    lo, hi = q.lower, q.upper
    scale = scale_of(q)
    kind = "integer" if q.integer else "decimal"
    if q.integer:
        lo_v = None if lo is None else (math.ceil(lo.value / scale) if lo.inclusive else math.floor(lo.value / scale) + 1)
        hi_v = None if hi is None else (math.floor(hi.value / scale) if hi.inclusive else math.ceil(hi.value / scale) - 1)
        lo_t = None if lo_v is None else str(lo_v)
        hi_t = None if hi_v is None else str(hi_v)
        lo_inc = hi_inc = True
    else:
        lo_t = None if lo is None else number(lo.value / scale)
        hi_t = None if hi is None else number(hi.value / scale)
        lo_inc = lo is None or lo.inclusive
        hi_inc = hi is None or hi.inclusive
    if lo_t is not None and hi_t is not None:
        if not (lo_inc and hi_inc):
            return None
        return {"validate": kind, "criteria": "between", "minimum": lo_t, "maximum": hi_t}
    if lo_t is not None:
        return {"validate": kind, "criteria": ">=" if lo_inc else ">", "value": lo_t}
    if hi_t is not None:
        return {"validate": kind, "criteria": "<=" if hi_inc else "<", "value": hi_t}
    # integer without bounds: any whole number
    return {"validate": "integer", "criteria": "between", "minimum": "-1E+15", "maximum": "1E+15"}


def custom_validation(book: Book, q, conditions, cell: str) -> Optional[dict]:
    """Any other condition as a custom rule; None past Excel's 255 characters for one (the
    constraint is still checked by planner, and shown in the Constraints column)."""
    refs = book.pieces(book.base_context)
    refs[q.name] = Piece(cell, ATOM, scale_of(q))
    gen = Generator(book.model, refs)
    try:
        parts = [gen.formula(c, None)[1:] for c in conditions]
    except (NotWritten, UnsupportedFormula):  # a sum over a range writes rows, which a validation rule cannot use
        return None
    if q.integer:
        parts.insert(0, f"INT({cell})={cell}")
    text = parts[0] if len(parts) == 1 else "AND(" + ",".join(parts) + ")"
    if len(text) > MAX_VALIDATION:
        return None
    return {"validate": "custom", "value": text}


def _is_plain_bound(cond: ir.Expr, name: str, analyzer) -> bool:
    """``a <= x < b`` or ``x >= 1`` (and conjunctions): comparisons of the input with constants."""
    if isinstance(cond, ir.Logic) and cond.op is ir.BoolOp.AND:
        return _is_plain_bound(cond.left, name, analyzer) and _is_plain_bound(cond.right, name, analyzer)
    if not isinstance(cond, ir.Compare):
        return False
    for i, op in enumerate(cond.ops):
        if op not in (ir.CmpOp.LT, ir.CmpOp.LE, ir.CmpOp.GT, ir.CmpOp.GE):
            return False
        left, right = cond.operands[i], cond.operands[i + 1]
        mine = [o for o in (left, right) if isinstance(o, ir.Name) and o.name == name]
        other = right if mine and mine[0] is left else left
        if len(mine) != 1:
            return False
        try:
            if analyzer.infer_strict(other).const is None:
                return False
        except PlanError:
            return False
    return True

