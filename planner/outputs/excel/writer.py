"""The live workbook: every figure a formula over named input cells.

Sheets, in order:

* **Inputs** (:mod:`.inputs`): one row per input (name, value in its display unit, unit,
  description, tags, constraints); the value cell is styled as an input,
  carries a workbook-level defined name, data validation from its
  constraints and its doc as a comment.
* **Model** (:mod:`.derived`): every derived quantity in dependency order, a live formula over
  the defined names, converted to its display unit, with its own name.
* **Scenarios** (:mod:`.scenarios`): one column per scenario (and per `check ... with` context):
  overridden inputs as values, the rest referencing the Inputs sheet, every
  derived quantity a formula over cells of its own column.
* one sheet per **sweep**, and per **maximize/minimize** (see
  :mod:`.tables`);
* **Solve**: each answer live (see :mod:`.solving`);
* **Checks** (:mod:`.checking`): each check a live TRUE/FALSE cell, with planner's tolerance;
* **Helpers**: subexpressions moved out of formulas longer than Excel's
  8,192 characters (only when needed).

Plan text (titles, docs, tags, units, scenario names) is always written as
a string cell, never as a formula. The bytes are deterministic: fixed
document timestamps and zip entry dates. Custom document properties record
the plan the workbook came from (:func:`provenance`), which ``planner
import`` checks.

This module composes the sheets, which share the state and styles of
:mod:`.book`, and saves the result; no sheet builder imports it.
"""

from __future__ import annotations

import io
import zipfile
from typing import Mapping, Optional, Sequence

from openpyxl import Workbook
from openpyxl.packaging.custom import StringProperty
from openpyxl.writer.excel import ExcelWriter

from ...compute.evaluation import Plan
from . import book as state
from . import checking, derived, inputs, scenarios, solving, tables
from .book import FIXED_TIME, ZIP_TIME, AnswerRef, provenance  # noqa: F401  (AnswerRef: for readers of the layout)


class Book(state.Book):
    """The workbook being written: the shared state of :class:`book.Book`, composed sheet by sheet."""

    def build(self) -> Workbook:
        for s in self.wanted:
            self.context(s)
        self.collect_check_contexts()
        tables.sweep_contexts(self)
        solving.collect_contexts(self)
        scenarios.place_contexts(self)
        inputs.inputs_sheet(self)
        derived.model_sheet(self)
        sheet = self.wb.create_sheet("Scenarios") if len(self.contexts) > 1 else None
        if sheet is not None:
            scenarios.scenarios_layout(self, sheet)
        tables.sweep_sheets(self)
        solving.solve_sheet(self)
        checking.checks_sheet(self)
        if sheet is not None:
            scenarios.scenarios_fill(self, sheet)
        if self.helpers is not None:  # helper cells go last
            self.wb.move_sheet(self.helpers, len(self.wb.sheetnames) - 1 - self.wb.sheetnames.index("Helpers"))
        self.wb.calculation.fullCalcOnLoad = True
        self.wb.properties.creator = "planner"
        self.wb.properties.title = self.plan.title
        self.wb.properties.created = FIXED_TIME
        self.wb.properties.modified = FIXED_TIME
        for name, value in provenance(self.plan).items():
            self.wb.custom_doc_props.append(StringProperty(name=name, value=value))
        return self.wb


# ---- saving -------------------------------------------------------------------

def to_bytes(wb: Workbook) -> bytes:
    """Serialise with fixed timestamps, so the same plan gives the same bytes."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        ExcelWriter(wb, archive).save()
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o600 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def workbook_bytes(plan: Plan, scenarios: Optional[Sequence[str]] = None, overrides: Optional[Mapping] = None,
                   origins: Optional[Mapping] = None, solve_results: Optional[Sequence] = None) -> bytes:
    """The live workbook for ``plan`` as .xlsx bytes.

    ``scenarios`` picks the scenario columns (default: all; columns that
    checks need are added); ``overrides`` (from ``--set``) change the input
    values written on the Inputs sheet.
    """
    book = Book(plan, scenarios, overrides, origins, solve_results)
    return to_bytes(book.build())
