"""``planner import``: read back the inputs a user edited in an exported workbook.

Each input is found through its workbook-level defined name (the same
mangling as the export), so moving rows or adding sheets does not matter.
Values are in the input's display unit, as the Inputs sheet shows them (a
percentage as Excel stores it: the fraction, 0.65 for a typed ``65%``); they
come back as exact rationals in base units (``3.35`` TB/s is 3350000000000),
the same as a ``--set`` override, and every constraint is checked when the
plan is evaluated with them. The Unit column next to each value says which
unit it is in: a unit the plan has since changed (``6 kUSD`` exported, the
plan now says ``6000 USD``) is converted with a warning; one of another
dimension is refused, naming the cell.

A workbook must belong to the plan: one that names an input the plan does
not have (exported from another plan), or none of the plan's inputs, is
refused; one exported from another version of the plan (its document
properties name another file or title, or other inputs) gets a warning.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from ...compute.evaluation import Origin, Plan, format_value
from ...language.errors import UsageError
from ..numbers import is_percent, scale_of, unit_of
from .names import excel_names, is_cell_like


@dataclass(frozen=True)
class Change:
    """An input whose workbook value differs from the plan's."""

    name: str
    cell: str  # Inputs!B17
    plan_value: object  # display unit
    book_value: object  # display unit
    unit: str
    scenario: Optional[str] = None  # an edit in the scenario's column of the Scenarios sheet

    def describe(self) -> str:
        where = f" (scenario {self.scenario})" if self.scenario else ""
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

    def overrides_for(self, plan: Plan, scenario: Optional[str]) -> dict:
        """The edits as they apply in ``scenario``: the Inputs sheet holds the plan's own values,
        so an input the scenario sets keeps the scenario's value (as its column in the workbook)."""
        own = plan.model.scenarios[scenario].overrides if scenario is not None else {}
        edits = {k: v for k, v in self.overrides.items() if k not in own}
        return {**edits, **self.scenario_overrides.get(scenario, {})}

    def evaluate(self, plan: Plan, scenarios) -> list:
        return [plan.evaluate(s, self.overrides_for(plan, s), {**self.origins, **self.scenario_origins.get(s, {})})
                for s in scenarios]


def read_inputs(path: str, plan: Plan) -> Imported:
    """The workbook's input values that differ from ``plan``; raise UsageError on an unreadable cell."""
    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    from .book import display_value

    try:
        wb = load_workbook(path, data_only=True)
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError) as exc:
        raise UsageError(f"{path} is not an .xlsx workbook ({exc})",
                         hint="export one with `planner export FILE -o book.xlsx`") from None
    defined = {name.upper(): dn for name, dn in wb.defined_names.items()}
    names = excel_names(plan.definition_order())
    imported = Imported(path, {}, {}, [], [], _belongs(wb, plan, path, names))
    from .book import PLAN_HASH

    imported.plan_hash = next((str(p.value) for p in wb.custom_doc_props if p.name == PLAN_HASH), None)
    formulas = None
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
        raw = wb[sheet][coord].value
        if raw is None:
            if formulas is None:
                formulas = load_workbook(path, data_only=False)
            if formulas[sheet][coord].value is not None:
                raise UsageError(f"{where} (`{name}`) holds a formula with no saved value",
                                 hint="open the workbook in Excel or LibreOffice and save it, then import again")
            raise UsageError(f"{where} (`{name}`) is empty", hint="type a value, or the plan's value back")
        value = _exact(raw, q, where) / scale_of(q) * _unit_scale(wb, sheet, coord, plan, q, imported)
        if value != q.value:
            imported.overrides[name] = value
            imported.origins[name] = Origin(f"{path} {where}", None)
            imported.changes.append(Change(name, where, display_value(q, q.value), display_value(q, value),
                                           q.unit_text))
    _scenario_edits(wb, path, plan, imported)
    _formula_edits(path, plan, names, imported)
    return imported


def _formula_edits(path: str, plan: Plan, names: dict, imported: Imported) -> None:
    """Cells the export wrote as formulas (each derived figure on Model and Scenarios, the selected
    scenario's columns, a scenario's copy of an input it does not set) that hold a typed value now:
    reported as not inputs (neither read nor written back), never silently dropped."""
    from openpyxl import load_workbook

    from .book import SELECTED

    wb = load_workbook(path, data_only=False)
    defined = {name.upper(): dn for name, dn in wb.defined_names.items()}

    def typed(ws, row: int, col: int, name: str, what: str) -> None:
        cell = ws.cell(row=row, column=col)
        v = cell.value
        if v is None or (isinstance(v, str) and v.startswith("=")) or not isinstance(v, (int, float, str, bool)):
            return
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


def _scenario_edits(wb, path: str, plan: Plan, imported: Imported) -> None:
    """Values typed in a scenario's own input cells on the Scenarios sheet (one column per scenario,
    its name in row 4 under its doc string; the input's name in column B, its unit in column C; see
    :func:`scenarios_layout`)."""
    from .book import display_value

    if "Scenarios" not in wb.sheetnames:
        return
    ws = wb["Scenarios"]
    layout = scenarios_layout(ws)
    rows = {c.value: c.row for c in ws[layout.names] if isinstance(c.value, str)}
    formulas = None
    for head in ws[layout.heads]:
        scenario = head.value
        if head.column < layout.first or not isinstance(scenario, str) or scenario not in plan.model.scenarios:
            continue
        for name, plan_value in plan.model.scenarios[scenario].overrides.items():
            q = plan.model.quantities[name]
            if name not in rows or not isinstance(plan_value, (Fraction, bool, int)):
                continue
            cell = ws.cell(row=rows[name], column=head.column)
            where = f"Scenarios!{cell.coordinate}"
            if cell.value is None:
                continue
            if formulas is None:
                from openpyxl import load_workbook

                formulas = load_workbook(path, data_only=False)["Scenarios"]
            typed = formulas[cell.coordinate].value
            if isinstance(typed, str) and typed.startswith("="):
                continue  # a formula (the Inputs value, or a live answer): not a typed value
            value = _exact(cell.value, q, where)
            if not q.is_bool:
                value = value / scale_of(q) * _unit_scale(wb, "Scenarios", cell.coordinate, plan, q, imported,
                                                              f"Scenarios!{layout.unit}{cell.row}")
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
        raise UsageError(f"{cell} says `{q.name}` is in `{text or '(no unit)'}`, which is not a unit of "
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
        return [f"{path} was exported from {origin}, another version of the plan than {this}"
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


def _one_cell(target: str, sheets: list[str], xl: str, name: str) -> tuple[str, str]:
    """The sheet and cell (``B5``) a defined name refers to; UsageError unless it is one cell."""
    m = _CELL.fullmatch(target.strip())
    sheet = None if m is None else m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)
    if sheet not in sheets or not is_cell_like(m.group(3) + m.group(4)):
        raise UsageError(f"the name `{xl}` (`{name}`) refers to `{target}`, not one cell of this workbook",
                         hint="point the name at the input's value cell again, or export a fresh workbook")
    return sheet, f"{m.group(3).upper()}{m.group(4)}"


def _exact(raw, q, where: str):
    """A cell value as the exact base-unit value of input ``q``."""
    if q.is_bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, (int, float)) and raw in (0, 1):
            return bool(raw)
        if isinstance(raw, str) and raw.strip().upper() in ("TRUE", "FALSE"):
            return raw.strip().upper() == "TRUE"
        raise UsageError(f"{where} (`{q.name}`) must be TRUE or FALSE, not {raw!r}")
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise UsageError(f"{where} (`{q.name}`) must be a number, not {raw!r}")
    if isinstance(raw, str):
        typed = raw.strip().replace(",", "")
        hundredths = is_percent(q.unit_text) and typed.endswith("%")  # "65%" typed as text is 0.65
        try:
            number = Fraction(typed[:-1].strip() if hundredths else typed) / (100 if hundredths else 1)
        except (ValueError, ZeroDivisionError):
            raise UsageError(f"{where} (`{q.name}`) must be a number, not the text {raw!r}",
                             hint=f"type a plain number in {q.unit_text}" if q.unit_text else None) from None
    elif isinstance(raw, int):
        number = Fraction(raw)
    else:
        if raw != raw or raw in (float("inf"), float("-inf")):
            raise UsageError(f"{where} (`{q.name}`) is not a finite number")
        number = Fraction(repr(raw))  # the decimal the cell shows, exactly (0.8 is 4/5)
    return number * scale_of(q)


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
