"""``planner import``: read back the inputs a user edited in an exported workbook.

Each input is found through its workbook-level defined name (the same
mangling as the export), so moving rows or adding sheets does not matter.
Values are in the input's display unit, as the Inputs sheet shows them (a
percentage as Excel stores it: the fraction, 0.65 for a typed ``65%``); they
come back as exact rationals in base units (``3.35`` TB/s is 3350000000000),
the same as a ``--set`` override, and every constraint is checked with them
as they are read, in the base case and every scenario an edit reaches. The
Unit column next to each value says which unit it is in: a unit the plan has
since changed (``6 kUSD`` exported, the plan now says ``6000 USD``) is
converted with a warning; one of another dimension is refused, naming the
cell. A series' table of values (``series price = [10 USD, 12 USD]``) is read from its input cells on
the sheet of periods, named as a whole (:func:`_table_edits`). Every cell read, on any sheet, goes
through :func:`cell_input`, and the file itself through :func:`checked_bytes`
(its zip container's limits) before openpyxl reads it.

A workbook must belong to the plan: one that names an input the plan does
not have (exported from another plan), or none of the plan's inputs, is
refused; one exported from another version of the plan (its document
properties name another file or title, or other inputs) gets a warning.
"""

from __future__ import annotations

import datetime
import io
import os
import re
import stat
import warnings
import zipfile
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from ...compute.evaluation import Origin, Plan, display_value, format_value
from ...language.errors import UsageError
from ..numbers import is_percent, scale_of, unit_of
from .names import excel_names, is_cell_like


AT_EXPORT = "planner's figure at export"  # how the export's comment begins on a figure it wrote as a value


@dataclass(frozen=True)
class Change:
    """An input whose workbook value differs from the plan's."""

    name: str
    cell: str  # Inputs!B17
    plan_value: object  # display unit
    book_value: object  # display unit
    unit: str
    scenario: Optional[str] = None  # an edit in the scenario's column of the Scenarios sheet
    period: Optional[int] = None  # an item of a series' table of values (0: the first period's)
    when: Optional[str] = None  # that period as the sheet heads it ("quarter 2")

    def describe(self) -> str:
        where = f" (scenario {self.scenario})" if self.scenario else f" ({self.when})" if self.when else ""
        return (f"{self.name}{where}: {format_value(self.plan_value, self.unit)} -> "
                f"{format_value(self.book_value, self.unit)}  ({self.cell})")


@dataclass
class Imported:
    path: str
    overrides: dict  # name -> exact value in base units (only the changed inputs)
    origins: dict  # name -> Origin
    changes: list[Change]
    missing: list[str]  # plan inputs the workbook does not name
    warnings: list[str] = field(default_factory=list)  # e.g. exported from another version of the plan
    scenario_overrides: dict = field(default_factory=dict)  # scenario -> {name: base value} (Scenarios sheet)
    scenario_origins: dict = field(default_factory=dict)  # scenario -> {name: Origin}
    not_inputs: list[str] = field(default_factory=list)  # formula cells that hold a typed value now
    plan_hash: Optional[str] = None  # the hash of the plan's text at export (None: an older workbook)
    table_overrides: dict = field(default_factory=dict)  # series -> {item: base value} (its table's cells)
    exported_from: Optional[tuple] = None  # (plan file name, title) the workbook records (None: not recorded)

    def overrides_for(self, plan: Plan, scenario: Optional[str]) -> dict:
        """The edits as they apply in ``scenario``: the Inputs sheet holds the plan's own values,
        so an input the scenario sets keeps the scenario's value (as its column in the workbook)."""
        own = plan.model.scenarios[scenario].overrides if scenario is not None else {}
        edits = {k: v for k, v in self.overrides.items() if k not in own}
        return {**edits, **self.scenario_overrides.get(scenario, {})}

    def evaluate(self, plan: Plan, scenarios) -> list:
        """The plan evaluated with the edits in each of ``scenarios``; a constraint a cell's value breaks is
        the located error naming the cell, with what to type there."""
        from ...language.errors import ConstraintError, PlanError

        try:
            return [plan.evaluate(s, self.overrides_for(plan, s),
                                  {**self.origins, **self.scenario_origins.get(s, {})}) for s in scenarios]
        except PlanError as exc:
            for err in getattr(exc, "errors", [exc]):
                if isinstance(err, ConstraintError) and err.hint is None and f"from {self.path} " in err.message:
                    err.hint = ("type a value that meets the constraint in that cell, in the unit its row shows "
                                "(or change the constraint in the plan)")
                elif not isinstance(err, ConstraintError) and self.changes:
                    # a figure the edits break (an irr with no rate once a cost is typed 100 times too large):
                    # say which cells it was evaluated with, or the reader cannot tell their typing caused it
                    err.notes.append("with the workbook's edits: " + "; ".join(c.describe() for c in self.changes))
            raise


def read_inputs(path: str, plan: Plan) -> Imported:
    """The workbook's input values that differ from ``plan``; raise UsageError on an unreadable cell."""
    wb, formulas = open_workbook(path)
    defined = {name.upper(): dn for name, dn in wb.defined_names.items()}
    names = excel_names(plan.definition_order())
    imported = Imported(path, {}, {}, [], [], _belongs(wb, plan, path, names))
    from .book import PLAN_FILE, PLAN_HASH, PLAN_TITLE

    props = {p.name: str(p.value) for p in wb.custom_doc_props}
    imported.plan_hash = props.get(PLAN_HASH)
    if PLAN_FILE in props or PLAN_TITLE in props:
        imported.exported_from = (props.get(PLAN_FILE, "?"), props.get(PLAN_TITLE, "?"))
    for name in plan.definition_order():
        q = plan.model.quantities[name]
        if not q.is_input:
            continue
        dn = defined.get(names[name].upper())
        if dn is None:
            imported.missing.append(name)
            continue
        sheet, coord = _one_cell(dn.attr_text, wb.sheetnames, names[name], name)
        where = f"{sheet}!{coord}"
        value = cell_input(wb, formulas, sheet, coord, q, q.value,
                           lambda: _unit_scale(wb, sheet, coord, plan, q, imported))
        if value != q.value:
            imported.overrides[name] = value
            imported.origins[name] = Origin(f"{path} {where}", None)
            imported.changes.append(Change(name, where, display_value(q, q.value), display_value(q, value),
                                           q.unit_text))
    _scenario_edits(wb, formulas, path, plan, names, imported)
    _formula_edits(formulas, plan, names, imported)
    _table_edits(wb, formulas, path, plan, names, imported)
    if imported.changes:  # every edit meets the constraints where it applies, whichever scenarios are shown
        imported.evaluate(plan, [None, *plan.model.scenarios] if imported.overrides
                          else [None, *imported.scenario_overrides])
    return imported


def _formula_edits(wb, plan: Plan, names: dict, imported: Imported) -> None:
    """Cells the export wrote as formulas (each derived figure on Model and Scenarios, the selected
    scenario's columns, a scenario's copy of an input it does not set) that hold a typed value now:
    reported as not inputs (neither read nor written back), never silently dropped. ``wb``: the workbook
    with its formulas."""
    from .book import SELECTED

    defined = {name.upper(): dn for name, dn in wb.defined_names.items()}

    def typed(ws, row: int, col: int, name: str, what: str) -> None:
        cell = ws.cell(row=row, column=col)
        v = cell.value
        if v is None or (isinstance(v, str) and v.startswith("=")) or not isinstance(v, (int, float, str, bool)):
            return
        if cell.comment is not None and cell.comment.text.startswith(AT_EXPORT):
            return  # the export wrote planner's figure there (a scenario's reduction of a series), not a formula
        imported.not_inputs.append(f"{ws.title}!{cell.coordinate} (`{name}`, {what}) holds the typed value {v!r}: "
                                   "not an input, so it is neither read nor written back; edit the inputs it "
                                   "follows, or its formula in the plan")

    for name in plan.definition_order():
        q = plan.model.quantities[name]
        dn = defined.get(names[name].upper())
        if dn is None:
            continue
        m = _CELL.fullmatch((dn.attr_text or "").strip())
        if m is None:
            continue
        sheet = m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)
        if sheet not in wb.sheetnames:
            continue
        row = int(m.group(4))
        if not q.is_input and sheet == "Model":
            typed(wb[sheet], row, 2, name, "a formula")
            typed(wb[sheet], row, SELECTED, name, "a formula of the selected scenario")
        elif q.is_input and sheet == "Inputs":
            typed(wb[sheet], row, SELECTED, name, "the selected scenario's value, a formula")
    if "Scenarios" not in wb.sheetnames:
        return
    ws = wb["Scenarios"]
    layout = scenarios_layout(ws)
    rows = {c.value: c.row for c in ws[layout.names] if isinstance(c.value, str) and c.value in plan.model.quantities}
    for head in ws[layout.heads]:
        scenario = head.value
        if head.column < layout.first or not isinstance(scenario, str) or scenario not in plan.model.scenarios:
            continue
        sets = plan.model.scenarios[scenario].overrides
        for name, row in rows.items():
            q = plan.model.quantities[name]
            if q.is_input and name in sets:
                continue
            what = (f"scenario {scenario}'s copy of the Inputs value, which the scenario does not set" if q.is_input
                    else f"a formula of scenario {scenario}")
            typed(ws, row, head.column, name, what)


def _table_edits(wb, formulas, path: str, plan: Plan, names: dict, imported: Imported) -> None:
    """Values typed in a series' table of values (``series price = [10 USD, 12 USD]``): its input cells on
    the sheet of periods, found through the defined name the export gives them, each read as an Inputs
    cell is (:func:`cell_input`, in the unit its row shows). A number typed in a period after the table,
    where its last value holds on, adds items to the table up to that period (as the sheet computes it).
    A value typed over a formula of a computed series is reported as not an input."""
    from .names import table_names
    from openpyxl.utils import column_index_from_string as _column

    from .periods import FIRST, HEADER_ROW, constant, table_items

    if plan.model.periods is None:
        return
    tables = {n: table_items(plan.model.quantities[n].definition.expr) for n in plan.series_order()}
    tables = {n: items for n, items in tables.items() if items is not None and not plan.model.quantities[n].is_bool}
    defined = {name.upper(): dn for name, dn in wb.defined_names.items()}
    inputs = set()
    for name, xl in table_names(names, tables).items():
        dn = defined.get(xl.upper())
        m = _RANGE.fullmatch((dn.attr_text or "").strip()) if dn is not None else None
        if m is None:
            imported.warnings.append(f"the workbook does not name the cells of `{name}`'s table of values (`{xl}`; "
                                     "exported by an older planner?): its edits there are not read")
            continue
        sheet = m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)
        if sheet not in wb.sheetnames:
            continue
        q = plan.model.quantities[name]
        row, first = int(m.group(4)), _column(m.group(3).upper())
        for j, item in enumerate(tables[name][:_column(m.group(5).upper()) - first + 1]):
            cell = wb[sheet].cell(row, first + j)
            coord, where = cell.coordinate, f"{sheet}!{cell.coordinate}"
            plan_value = constant(plan.model, item)
            typed = formulas[sheet][coord].value
            if isinstance(typed, str) and typed.startswith("="):
                continue  # a formula the export wrote (an item over other names), still one
            if plan_value is None:  # typed over an item over other names
                imported.not_inputs.append(f"{where} (`{name}`, {_heading(wb[sheet], first + j)}) holds the typed "
                                           f"value {typed!r}: the table's item there is the formula "
                                           f"`{item.span.flat}`, so it is neither read nor written back")
                continue
            inputs.add(coord)
            value = cell_input(wb, formulas, sheet, coord, q, plan_value,
                               lambda: _unit_scale(wb, sheet, coord, plan, q, imported, f"{sheet}!B{row}"))
            if value != plan_value:
                when = _heading(wb[sheet], first + j)
                imported.table_overrides.setdefault(name, {})[j] = value
                imported.changes.append(Change(name, where, display_value(q, plan_value), display_value(q, value),
                                               q.unit_text, period=j, when=when))
        items = tables[name]
        held = constant(plan.model, items[-1]) if _column(m.group(5).upper()) - first + 1 == len(items) else None
        if held is None:
            continue
        held = imported.table_overrides.get(name, {}).get(len(items) - 1, held)
        col, after, changed = first + len(items), {}, []
        while isinstance(formulas[sheet].cell(HEADER_ROW + 1, col).value, (int, float)):  # a period's column
            cell = formulas[sheet].cell(row, col)
            if isinstance(cell.value, (int, float)) and not isinstance(cell.value, bool):  # typed where it held on
                coord = cell.coordinate
                inputs.add(coord)
                value = cell_input(wb, formulas, sheet, coord, q, held,
                                   lambda: _unit_scale(wb, sheet, coord, plan, q, imported, f"{sheet}!B{row}"))
                if value != held:
                    changed.append(Change(name, f"{sheet}!{coord}", display_value(q, held), display_value(q, value),
                                          q.unit_text, period=col - first, when=_heading(wb[sheet], col)))
                held = value
            after[col - first] = held
            col += 1
        if changed:  # the table grows to the last period typed: the values between hold on as they did
            imported.table_overrides.setdefault(name, {}).update(
                {k: v for k, v in after.items() if k <= changed[-1].period})
            imported.changes.extend(changed)
    for sheet in formulas.sheetnames:  # the sheet of periods: its header row says Series, Unit, then periods
        ws = formulas[sheet]
        if ws.max_row >= HEADER_ROW and [ws.cell(HEADER_ROW, c).value for c in range(1, FIRST)] == ["Series", "Unit"]:
            _typed_over_series(formulas, sheet, plan, inputs, tables, imported)


def _typed_over_series(formulas, sheet: str, plan: Plan, inputs: set, tables: dict, imported: Imported) -> None:
    """A number typed over a formula of a series' row on the sheet of periods (the export wrote each of its
    cells as a formula, but a table's own cells, ``tables``' items, and those read as typed after it,
    ``inputs``): reported as not an input, never silently dropped."""
    from .book import capitalised, prose
    from .periods import FIRST, HEADER_ROW

    ws = formulas[sheet]
    labels = {}
    for n in plan.series_order():
        q = plan.model.quantities[n]
        labels[capitalised(prose(q.doc)) if q.doc else n] = n
    for row in ws.iter_rows(min_row=HEADER_ROW + 2):
        name = labels.get(row[0].value) if row and isinstance(row[0].value, str) else None
        if name is None:
            continue
        for cell in row[FIRST - 1 + len(tables.get(name, ())):]:
            v = cell.value  # the words beside a row's quarters and years are text: only numbers are typed figures
            if not isinstance(v, (int, float)) or cell.coordinate in inputs:
                continue
            imported.not_inputs.append(f"{sheet}!{cell.coordinate} (`{name}`, {_heading(ws, cell.column)}) holds "
                                       f"the typed value {v!r}: not an input, so it is neither read nor written "
                                       "back; edit the inputs it follows, or its table or formula in the plan")


def _heading(ws, col: int) -> str:
    """A period as the sheet heads its column ("Quarter 2" reads "quarter 2")."""
    from .periods import HEADER_ROW

    text = ws.cell(HEADER_ROW, col).value
    if not isinstance(text, str) or not text:
        return f"column {col}"
    return text[:1].lower() + text[1:] if text[1:2].islower() else text  # "Y1 Q1" stays


def _scenario_edits(wb, formulas, path: str, plan: Plan, names: dict, imported: Imported) -> None:
    """Values typed in a scenario's own input cells on the Scenarios sheet (one column per scenario,
    its name in row 4 under its doc string; the input's name in column B, its unit in column C; see
    :func:`scenarios_layout`), each read as an Inputs cell is (:func:`cell_input`)."""
    if "Scenarios" not in wb.sheetnames:
        return
    ws = wb["Scenarios"]
    layout = scenarios_layout(ws)
    rows = {c.value: c.row for c in ws[layout.names] if isinstance(c.value, str)}
    for head in ws[layout.heads]:
        scenario = head.value
        if head.column < layout.first or not isinstance(scenario, str) or scenario not in plan.model.scenarios:
            continue
        for name, plan_value in plan.model.scenarios[scenario].overrides.items():
            q = plan.model.quantities[name]
            if name not in rows or not isinstance(plan_value, (Fraction, bool, int)):
                continue
            coord = ws.cell(row=rows[name], column=head.column).coordinate
            where = f"Scenarios!{coord}"
            typed = formulas["Scenarios"][coord].value
            if isinstance(typed, str) and typed.replace("$", "").upper() == f"={names[name].upper()}":
                continue  # the export's link to the Inputs value (an input the command line set): not typed
            value = cell_input(wb, formulas, "Scenarios", coord, q, plan_value,
                               lambda: _unit_scale(wb, "Scenarios", coord, plan, q, imported,
                                                   f"Scenarios!{layout.unit}{rows[name]}"))
            if value != plan_value:
                imported.scenario_overrides.setdefault(scenario, {})[name] = value
                imported.scenario_origins.setdefault(scenario, {})[name] = Origin(f"{path} {where}", None)
                imported.changes.append(Change(name, where, display_value(q, plan_value), display_value(q, value),
                                               q.unit_text, scenario))


def _unit_scale(wb, sheet: str, coord: str, plan: Plan, q, imported: Imported,
                cell: Optional[str] = None) -> Fraction:
    """The base-unit scale of the unit the workbook shows for ``q``'s value (the Unit column, as exported:
    next to the value on the Inputs sheet, or ``cell``); another unit of the same dimension is converted
    (with a warning), any other is refused."""
    if cell is None:
        m = re.fullmatch(r"B([0-9]+)", coord)
        if sheet != "Inputs" or m is None or q.is_bool:
            return scale_of(q)
        cell = f"Inputs!C{m.group(1)}"
    unit_sheet, unit_coord = cell.split("!")
    raw = wb[unit_sheet][unit_coord].value
    text = "" if raw is None else str(raw).strip()
    if text == unit_of(q):
        return scale_of(q)
    from ...language.errors import PlanError

    try:
        _, scale, _ = plan.parse_override(f"{q.name}=1 {text}".rstrip(), f"{cell} (`{q.name}`'s unit)")
    except PlanError:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise UsageError(f"{cell} says `{q.name}` is in `{shown or '(no unit)'}`, which is not a unit of "
                         f"`{q.name}` ({q.unit_text or 'a plain number'} in the plan)",
                         hint=f"type {q.unit_text or 'nothing'} in {cell} and the value in that unit") from None
    imported.warnings.append(f"{cell}: `{q.name}` is in {text or 'plain numbers'} in the workbook, "
                             f"{q.unit_text or 'a plain number'} in the plan; the value was converted")
    return scale


def _belongs(wb, plan: Plan, path: str, names: dict) -> list[str]:
    """Refuse a workbook whose inputs are not the plan's; return warnings for another version of it."""
    from .book import PLAN_FILE, PLAN_INPUTS, PLAN_TITLE, provenance

    mine = provenance(plan)
    book = {p.name: str(p.value) for p in wb.custom_doc_props if p.name in mine}
    origin = (f"`{book.get(PLAN_FILE, '?')}` (\"{book.get(PLAN_TITLE, '?')}\")"
              if PLAN_FILE in book or PLAN_TITLE in book else None)
    this = f"`{mine[PLAN_FILE]}` (\"{mine[PLAN_TITLE]}\")"
    same_inputs = book.get(PLAN_INPUTS) == mine[PLAN_INPUTS]
    if not same_inputs:
        inputs = [n for n in plan.definition_order() if plan.model.quantities[n].is_input]
        ours = {names[n].upper() for n in inputs}
        on_inputs = _input_names(wb)
        foreign = [label for xl, label in on_inputs.items() if xl.upper() not in ours]
        exported = f" was exported from {origin} and" if origin else ""
        hint = (f"export a workbook from this plan (`planner export {mine[PLAN_FILE]} -o book.xlsx`), "
                "or pass the plan the workbook came from with --plan")
        if foreign:
            shown = ", ".join(f"`{n}`" for n in foreign[:10]) + (f" and {len(foreign) - 10} more"
                                                                 if len(foreign) > 10 else "")
            raise UsageError(f"{path}{exported} has inputs that {this} does not: {shown}", hint=hint)
        if inputs and not any(names[n].upper() in {k.upper() for k in wb.defined_names} for n in inputs):
            raise UsageError(f"{path}{exported} names none of the plan's inputs ({this})", hint=hint)
    if origin is not None and (not same_inputs or book.get(PLAN_FILE) != mine[PLAN_FILE]
                               or book.get(PLAN_TITLE) != mine[PLAN_TITLE]):
        return [f"{path} was exported from {origin}, another plan than {this} or another version of it"
                + ("" if same_inputs else " with other inputs")]
    return []


@dataclass(frozen=True)
class ScenariosLayout:
    names: str  # the column of the quantities' identifiers
    unit: str  # the column of their units
    heads: int  # the row of the scenarios' names
    first: int  # the first scenario column (1-based)


def scenarios_layout(ws) -> ScenariosLayout:
    """Where the Scenarios sheet keeps what import reads: identifiers in B, units in C, the scenarios'
    names in row 4 from column D (words first: labels in A, doc strings in row 3); a workbook exported
    before had identifiers in A, units in B and the names in row 3 from column C."""
    if ws["B3"].value == "Name":
        return ScenariosLayout("B", "C", 4, 4)
    return ScenariosLayout("A", "B", 3, 3)


def _input_names(wb) -> dict[str, str]:
    """Defined names on the Inputs sheet's value cells: name -> the input's identifier in column D (column
    A in a workbook exported before labels came first), or the name."""
    out = {}
    for xl, dn in wb.defined_names.items():
        m = _CELL.fullmatch((dn.attr_text or "").strip())
        sheet = None if m is None else m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)
        if sheet != "Inputs" or "Inputs" not in wb.sheetnames:
            continue
        column = "D" if _has_name_header(wb["Inputs"]) else "A"
        label = wb["Inputs"][f"{column}{m.group(4)}"].value if m.group(4) != "0" else None
        out[xl] = label if isinstance(label, str) and label else xl
    return out


def _has_name_header(ws) -> bool:
    """Whether the Inputs sheet has the identifier column (header "Name" in column D)."""
    return any(ws.cell(r, 4).value == "Name" for r in range(1, min(ws.max_row, 12) + 1))


# Sheet!$B$5 or 'Two words'!B5, as the export writes a name (and Excel and LibreOffice keep it)
_CELL = re.compile(r"=?(?:'((?:[^']|'')+)'|([^'!:\s]+))!\$?([A-Za-z]{1,3})\$?([0-9]+)")
# Sheet!$C$6:$E$6: a table of values, a row of input cells
_RANGE = re.compile(_CELL.pattern + r":\$?([A-Za-z]{1,3})\$?\4")


def _one_cell(target: str, sheets: list[str], xl: str, name: str) -> tuple[str, str]:
    """The sheet and cell (``B5``) a defined name refers to; UsageError unless it is one cell."""
    m = _CELL.fullmatch(target.strip())
    sheet = None if m is None else m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)
    if sheet not in sheets or not is_cell_like(m.group(3) + m.group(4)):
        raise UsageError(f"the name `{xl}` (`{name}`) refers to `{target}`, not one cell of this workbook",
                         hint="point the name at the input's value cell again, or export a fresh workbook")
    return sheet, f"{m.group(3).upper()}{m.group(4)}"


def cell_input(wb, formulas, sheet: str, coord: str, q, plan_value, unit_scale) -> object:
    """The exact base-unit value of input ``q`` typed in ``sheet!coord``: the one validation of every
    workbook cell import reads (Inputs and Scenarios sheets). ``wb`` holds the saved values, ``formulas``
    the formulas; ``unit_scale()`` is the base-unit scale of the unit the row shows. An empty cell, a
    formula with no saved value, an error, text, a date, a TRUE/FALSE for a number, and a number outside
    the literal range (:func:`planner.language.literals.magnitude_problem`) are each refused, naming the
    sheet, the cell, the input and what to type instead, in the input's unit."""
    from ...language import literals

    where = f"{sheet}!{coord}"
    wanted = "TRUE or FALSE" if q.is_bool else "a number"
    cell = wb[sheet][coord]
    raw = cell.value
    if q.is_bool:
        instead = wanted
    elif is_percent(q.unit_text):
        instead = f"a percentage ({q.unit_text})"
    else:
        instead = f"a number in {q.unit_text}" if q.unit_text else "a plain number"
    hint = (f"type {instead} in {where}; the plan's value is "
            f"{format_value(display_value(q, plan_value), q.unit_text)}")

    def refuse(what: str, first: str = "") -> UsageError:
        return UsageError(f"{where} (`{q.name}`) {what}", hint=first + hint)

    if raw is None:
        if formulas[sheet][coord].value is not None:
            raise refuse("holds a formula with no saved value",
                         "open the workbook in Excel or LibreOffice and save it (that saves each formula's value), "
                         "then import again; or ")
        raise refuse("is empty")
    if cell.data_type == "e":
        raise refuse(f"must be {wanted}, not the error {raw}")
    if isinstance(raw, (datetime.date, datetime.time, datetime.timedelta)):
        raise refuse(f"must be {wanted}, not {_when(raw)}",
                     "give the cell a number format, or ")
    if q.is_bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, (int, float)) and raw in (0, 1):
            return bool(raw)
        if isinstance(raw, str) and raw.strip().upper() in ("TRUE", "FALSE"):
            return raw.strip().upper() == "TRUE"
        raise refuse(f"must be TRUE or FALSE, not {_shown(raw)}")
    if isinstance(raw, bool):
        raise refuse(f"must be a number, not {'TRUE' if raw else 'FALSE'}")
    if isinstance(raw, str):
        number = _typed_number(raw, is_percent(q.unit_text))
        if number is None:
            raise refuse(f"must be a number, not the text {_shown(raw)}",
                         "a comma is read only between groups of three digits (1,800): for a decimal comma "
                         "write a point (6.5, not 6,5); " if "," in raw else "")
    elif isinstance(raw, int):
        number = Fraction(raw)
    elif isinstance(raw, float):
        if raw != raw or raw in (float("inf"), float("-inf")):
            raise refuse("is not a finite number")
        number = Fraction(repr(raw))  # the decimal the cell shows, exactly (0.8 is 4/5)
    else:
        raise refuse(f"must be a number, not {_shown(raw)}")
    value = number * unit_scale()
    problem = literals.magnitude_problem(value)
    if problem is not None:
        raise refuse(f"is {_shown(raw)}, {problem}", f"{literals.HINT}: ")
    return value


# a decimal as a cell's text may hold it: digits, a point, an exponent (grouping commas are dropped first)
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+))?", re.ASCII)
# commas only between groups of three digits: "6,5%" is a decimal comma (6.5 %), never 65 %
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?", re.ASCII)


def _typed_number(text: str, percent: bool) -> Optional[Fraction]:
    """The exact number typed as text (``"1,800"``; ``"65%"`` for a percentage: 0.65), or None. An exponent
    beyond +-100,000 is clamped (the number is far outside the literal range either way), so no huge
    power of ten is ever computed."""
    typed = text.strip()
    hundredths = percent and typed.endswith("%")
    if hundredths:
        typed = typed[:-1].strip()
    if "," in typed:
        if _GROUPED.fullmatch(typed) is None:
            return None  # a decimal comma, or commas that group nothing: ambiguous, refused
        typed = typed.replace(",", "")
    m = _DECIMAL.fullmatch(typed)
    if m is None or len(typed) > 1000:
        return None
    if m.group(1) is not None and abs(int(m.group(1))) > 100_000:
        typed = typed[:m.start(1)] + ("-" if m.group(1).startswith("-") else "") + "100000"
    return Fraction(typed) / (100 if hundredths else 1)


def _when(raw) -> str:
    """A date, time or duration as the cell shows it (what openpyxl reads from a cell with a date format)."""
    if isinstance(raw, datetime.datetime):
        return f"a date ({raw.date().isoformat() if raw.time() == datetime.time() else raw.isoformat(' ')})"
    if isinstance(raw, datetime.date):
        return f"a date ({raw.isoformat()})"
    if isinstance(raw, datetime.time):
        return f"a time of day ({raw.isoformat()})"
    return f"a duration ({raw})"


def _shown(raw) -> str:
    """A cell's value in a message: text quoted and cut at 60 characters."""
    if isinstance(raw, str):
        return repr(raw if len(raw) <= 60 else raw[:57] + "...")
    return str(raw)



# Limits on a workbook's zip container, checked before openpyxl reads a byte of it. The largest workbook
# planner exports (tests/plans/gpu_buy_vs_rent_uncertain.plan with --trials 10000, the most trials) is a
# 2.1 MB file holding 23 MB in 38 parts, its largest part deflated 13 to 1; openpyxl takes about 140 MB
# and 10 s to read it twice (its values, its formulas).
MAX_FILE = 64_000_000  # bytes of the .xlsx file
MAX_INFLATED = 128_000_000  # bytes of all its parts, inflated
MAX_PARTS = 1_000
MAX_RATIO = 100  # inflated / compressed, for a part of more than RATIO_FLOOR bytes (deflate's own limit: ~1,030)
RATIO_FLOOR = 1_000_000
_CHUNK = 1 << 20


def open_workbook(path: str):
    """``path`` read as two openpyxl workbooks, its saved values and its formulas, once its zip container
    has been checked (:func:`checked_bytes`); UsageError for anything that is not a workbook."""
    data = checked_bytes(path)
    from openpyxl import load_workbook

    books = []
    for data_only in (True, False):
        try:
            with warnings.catch_warnings():  # openpyxl's notes on what it skips (styles, extensions) are not the user's
                warnings.simplefilter("ignore")
                books.append(load_workbook(io.BytesIO(data), data_only=data_only))
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - openpyxl raises whatever its parsers meet in a damaged part
            raise UsageError(f"{path} is not an .xlsx workbook openpyxl can read ({type(exc).__name__}: "
                             f"{str(exc)[:200]})", hint=_EXPORT) from None
    return books[0], books[1]


_EXPORT = "export one with `planner export FILE -o book.xlsx`, or save it again from Excel or LibreOffice"


def checked_bytes(path: str) -> bytes:
    """The bytes of the ``.xlsx`` file ``path``, after its zip container passes every limit: the file's size
    (:data:`MAX_FILE`), the number of parts (:data:`MAX_PARTS`, no name twice), each part's declared and
    actual inflated size (all of them together at most :data:`MAX_INFLATED`), its compression ratio
    (:data:`MAX_RATIO`) and no DTD in its XML (an entity bomb). Each part is inflated in chunks, and its
    inflating stops as soon as it passes what its header declares. UsageError naming the limit otherwise."""
    try:  # opened without waiting: a FIFO, a device or a folder is refused, not read until it ends
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"{path} is not a regular file, so not an .xlsx workbook", hint=_EXPORT)
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise UsageError(f"{path} is larger than {MAX_FILE:,} bytes, the limit for a workbook to import",
                         hint="a workbook planner exports is far smaller: export a fresh one")
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        infos = z.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, EOFError, OSError) as exc:
        # NotImplementedError: a part that needs a newer zip version than Python reads ("zip file version 8.4")
        raise UsageError(f"{path} is not an .xlsx workbook ({exc})", hint=_EXPORT) from None
    if len(infos) > MAX_PARTS:
        raise UsageError(f"{path} has {len(infos):,} parts, more than the {MAX_PARTS:,} a workbook to import may "
                         "have", hint=_EXPORT)

    def refuse(what: str) -> UsageError:
        return UsageError(f"{path} is refused: {what}", hint=_EXPORT)

    seen, declared = set(), 0
    for info in infos:
        if info.filename in seen:
            raise refuse(f"its part {info.filename} is in it twice (which one would be read is anyone's guess)")
        seen.add(info.filename)
        declared += info.file_size
        if declared > MAX_INFLATED:
            raise refuse(f"its parts declare more than {MAX_INFLATED:,} bytes inflated, the limit for a workbook "
                         "to import")
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise refuse(f"its part {info.filename} is compressed {info.file_size // max(info.compress_size, 1):,} "
                         f"to 1, more than the {MAX_RATIO} to 1 of any workbook (a zip bomb)")
    for info in infos:
        _inflate(data, info, refuse)
    return data


def _inflate(data: bytes, info: zipfile.ZipInfo, refuse) -> None:
    """Inflate part ``info`` of the zip ``data`` in chunks, never past its declared size; refuse a part that
    holds more than it declares, is encrypted, compressed by a method workbooks do not use, or holds a DTD."""
    import struct
    import zlib

    if info.flag_bits & 0x1:
        raise refuse(f"its part {info.filename} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise refuse(f"its part {info.filename} is compressed by method {info.compress_type}, not deflate")
    head = data[info.header_offset:info.header_offset + 30]
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise refuse(f"its part {info.filename} has no header where the zip's directory says")
    start = info.header_offset + 30 + struct.unpack("<H", head[26:28])[0] + struct.unpack("<H", head[28:30])[0]
    raw = memoryview(data)[start:start + info.compress_size]
    if len(raw) < info.compress_size:
        raise refuse(f"its part {info.filename} is cut short (the file is truncated)")
    xml = info.filename.endswith((".xml", ".rels", ".vml"))
    if info.compress_type == zipfile.ZIP_STORED:
        if info.compress_size != info.file_size:
            raise refuse(f"its part {info.filename} declares {info.file_size:,} bytes but holds "
                         f"{info.compress_size:,}")
        if xml:
            _no_dtd(bytes(raw), info, refuse)
        return
    inflater, made, tail, at = zlib.decompressobj(-15), 0, b"", 0
    while True:
        if inflater.unconsumed_tail:
            pending = inflater.unconsumed_tail
        elif at < len(raw):
            pending, at = raw[at:at + _CHUNK], at + _CHUNK
        else:
            break
        try:
            out = inflater.decompress(pending, _CHUNK)
        except zlib.error as exc:
            raise refuse(f"its part {info.filename} is damaged ({exc})") from None
        made += len(out)
        if made > info.file_size:
            raise refuse(f"its part {info.filename} declares {info.file_size:,} bytes inflated but holds more "
                         "(a lying header): reading stopped there")
        if xml:
            _no_dtd(tail + out, info, refuse)
            tail = out[-16:]
        if inflater.eof:
            break
    if made != info.file_size:
        raise refuse(f"its part {info.filename} declares {info.file_size:,} bytes inflated but holds {made:,}")


def _no_dtd(chunk: bytes, info, refuse) -> None:
    """No part of a workbook declares a DTD: one that does may define entities that expand without end."""
    if b"<!DOCTYPE" in chunk or b"<!ENTITY" in chunk or b"<\x00!\x00D\x00O\x00C\x00" in chunk:
        raise refuse(f"its part {info.filename} declares a DTD (<!DOCTYPE ...>), which no workbook part has: its "
                     "entities could expand without end")


def describe(imported: Imported, plan: Optional[Plan] = None) -> str:
    """The changes as text for the terminal."""
    lines = [f"warning: {w}" for w in imported.warnings]
    if imported.changes:
        n = len(imported.changes)
        lines.append(f"{n} input{'s' if n != 1 else ''} in {imported.path} differ{'s' if n == 1 else ''} "
                     "from the plan:")
        lines.extend("  " + c.describe() for c in imported.changes)
    else:
        lines.append(f"every input in {imported.path} matches the plan")
    if imported.missing:
        lines.append("not in the workbook (the plan's values are used): " + ", ".join(imported.missing))
    lines.extend("not an input: " + text for text in imported.not_inputs)
    return "\n".join(lines)
