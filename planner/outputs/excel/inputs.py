"""The Inputs sheet: one editable, named cell per input, with its unit, comment and data validation."""

from __future__ import annotations

import math
from typing import Optional

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.comments import Comment
from openpyxl.worksheet.datavalidation import DataValidation

from ...language import ir
from ...language.errors import PlanError
from .book import MAX_VALIDATION, NOTE_FONT, TITLE_FONT, Book, display_value, header, in_base, put_text, widths
from .printer import ExcelPrinter, UnsupportedFormula, number


def inputs_sheet(book: Book) -> None:
    ws = book.wb.create_sheet("Inputs")
    put_text(ws, 1, 1, book.plan.title, TITLE_FONT)
    row = 2
    for note in book.model.plan.notes:
        put_text(ws, row, 1, note, NOTE_FONT)
        row += 1
    put_text(ws, row, 1, "Edit the orange cells; every other sheet follows. "
             "`planner import` reads them back.", NOTE_FONT)
    row += 2
    header(ws, row, ["Input", "Value", "Unit", "Description", "Tags", "Constraints"])
    ws.freeze_panes = ws.cell(row=row + 1, column=1)
    inputs = [n for n in book.plan.definition_order() if book.q[n].is_input]
    for name in inputs:
        row += 1
        q = book.q[name]
        put_text(ws, row, 1, name)
        value = display_value(q, book.base.inputs[name])
        c = ws.cell(row=row, column=2, value=value)
        c.style = "Input"
        c.number_format = "General" if q.is_bool or not float(value).is_integer() else "#,##0"
        put_text(ws, row, 3, q.unit_text)
        put_text(ws, row, 4, q.doc)
        put_text(ws, row, 5, ", ".join(q.tags))
        put_text(ws, row, 6, ", ".join(c.span.flat for c in q.definition.constraints))
        if q.doc or q.tags:
            text = (q.doc or "") + ("\n[" + ", ".join(q.tags) + "]" if q.tags else "")
            comment = Comment(ILLEGAL_CHARACTERS_RE.sub("", text.strip()), "planner")
            comment.width, comment.height = 300, 80
            c.comment = comment
        book.define(name, f"Inputs!$B${row}")
        validation(book, ws, q, f"B{row}")
    widths(ws, {"A": 26, "B": 16, "C": 10, "D": 60, "E": 28, "F": 34})


def validation(book: Book, ws, q, cell: str) -> None:
    """Constraints as data validation: a TRUE/FALSE list, whole/decimal bounds, or a custom formula."""
    shown = ", ".join(c.span.flat for c in q.definition.constraints)
    if q.is_bool:
        dv = DataValidation(type="list", formula1='"TRUE,FALSE"', allow_blank=False)
        shown = "true or false"
    else:
        conditions = [c.condition for c in q.definition.constraints if c.kind == "condition"]
        if not conditions and not q.integer:
            return
        dv = bounds_validation(book, q, conditions) or custom_validation(book, q, conditions, cell)
        if dv is None:
            return
    dv.error = ILLEGAL_CHARACTERS_RE.sub("", f"{q.name}: {shown}")[:255]
    dv.errorTitle = "planner constraint"
    dv.showErrorMessage = True
    dv.errorStyle = "stop"
    ws.add_data_validation(dv)
    dv.add(cell)


def bounds_validation(book: Book, q, conditions) -> Optional[DataValidation]:
    """whole/decimal with between/>=/<= when the constraints are plain bounds on the input."""
    if not all(_is_plain_bound(c, q.name, book.plan.analyzer) for c in conditions):
        return None
    lo, hi = q.lower, q.upper
    scale = q.display.scale
    kind = "whole" if q.integer else "decimal"
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
        return DataValidation(type=kind, operator="between", formula1=lo_t, formula2=hi_t)
    if lo_t is not None:
        return DataValidation(type=kind, operator="greaterThanOrEqual" if lo_inc else "greaterThan", formula1=lo_t)
    if hi_t is not None:
        return DataValidation(type=kind, operator="lessThanOrEqual" if hi_inc else "lessThan", formula1=hi_t)
    # integer without bounds: any whole number
    return DataValidation(type="whole", operator="between", formula1="-1E+15", formula2="1E+15")


def custom_validation(book: Book, q, conditions, cell: str) -> Optional[DataValidation]:
    """Any other condition as a custom rule; None past Excel's 255 characters for one (the
    constraint is still checked by planner, and shown in the Constraints column)."""
    refs = book.refs(book.base_context)
    refs[book.sym[q.name]] = in_base(cell, q.display.scale)
    printer = ExcelPrinter(refs, book.bools)
    try:
        parts = [printer.doprint(book.plan.converter.expr(c)) for c in conditions]
    except UnsupportedFormula:  # a sum over a range needs helper cells, which a validation rule cannot use
        return None
    if q.integer:
        parts.insert(0, f"INT({cell})={cell}")
    text = parts[0] if len(parts) == 1 else "AND(" + ",".join(parts) + ")"
    if len(text) > MAX_VALIDATION:
        return None
    return DataValidation(type="custom", formula1=text)


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
