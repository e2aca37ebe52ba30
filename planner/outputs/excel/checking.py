"""The Checks sheet: every ``check`` as a live TRUE/FALSE cell.

Tolerances are those of :mod:`planner.questions.checks`: ``a == b`` within 1e-12
relative, ``a ~= 46.667 ms`` within half a unit of the figure's last digit,
``within 0.1%`` relative, ``within 0.01 ms`` absolute; any other condition is
evaluated as written. A check in a scenario reads that scenario's column on
the Scenarios sheet; ``with`` overrides get a column of their own; a
question's answer (``check crossover_batch == 98``) reads the Solve sheet.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from openpyxl.formatting.rule import CellIsRule

from ...language import ir
from ...questions.checks import EXACT_REL, check_scenarios, compares_values, display_unit, tolerance_of
from .book import BAD_FILL, GOOD_FILL, NOTE_FONT, TITLE_FONT, Book, header, in_base, put_formula, put_text, widths
from .printer import formula, number


def checks_sheet(book: Book) -> None:
    if not book.model.checks:
        return
    ws = book.wb.create_sheet("Checks")
    put_text(ws, 1, 1, "Checks", TITLE_FONT)
    put_text(ws, 2, 1, "Each check is a live TRUE/FALSE cell with planner's tolerance "
             "(`==`: 1e-12 relative; `~=`: half a unit in the figure's last digit).", NOTE_FONT)
    header(ws, 3, ["Check", "Scenario", "Actual", "Expected", "Unit", "Tolerance", "Holds", "Line"])
    ws.freeze_panes = "A4"
    row = 3
    for check in book.model.checks:
        plain, from_alias = book.check_overrides(check)
        scale, unit = display_unit(book.plan, check, book.answers)
        cond = check.condition
        pair = compares_values(book.plan, check, book.answer_types)
        text = check.span.flat
        for scenario in check_scenarios(book.plan, check):
            row += 1
            merged = book.check_context(scenario, plain, from_alias)
            ctx = book.context(scenario, merged)
            refs = book.refs(ctx, ws.title)
            bools = set(book.bools)
            env = {}
            for name in book.answers_used(check):  # question results by alias
                sym = sp.Symbol(f"{name}#answer", real=True)
                ref, answer_scale = book.answer_cell(name, scenario, plain, ws.title)
                refs[sym] = in_base(ref, answer_scale)
                env[name] = sym

            def scenario_ref(r: ir.ScenarioRef, merged=merged, refs=refs, bools=bools):
                """``name@scenario``: that scenario's column (with the check's `with`)."""
                other = book.context(None if r.scenario == "base" else r.scenario, merged)
                q = book.q[r.name]
                sym = sp.Symbol(f"{r.name}@{r.scenario}", real=True)
                cell = book.cell(other, r.name, ws.title)
                refs[sym] = cell if q.is_bool else in_base(cell, q.display.scale)
                if q.is_bool:
                    bools.add(sym)
                    return sp.Eq(sym, 1)
                return sym

            put_text(ws, row, 1, text)
            put_text(ws, row, 2, ctx.label)
            put_text(ws, row, 5, unit)
            ws.cell(row=row, column=8, value=check.span.line)

            def spill(t: str) -> str:
                return book.spill(t, f"Checks: {text}")

            if pair:
                lhs = book.plan.converter.expr(cond.operands[0], env, ref=scenario_ref)
                rhs = book.plan.converter.expr(cond.operands[1], env, ref=scenario_ref)
                for col, e in ((3, lhs), (4, rhs)):
                    put_formula(ws, row, col, formula(e, refs, bools, spill=spill, scale=scale), "General")
                holds, tol_text = tolerance(book, check, f"C{row}", f"D{row}", scale, unit)
                put_text(ws, row, 6, tol_text)
            else:
                e = book.plan.converter.expr(cond, env, ref=scenario_ref)
                holds = formula(e, refs, bools, spill=spill)[1:]
            put_formula(ws, row, 7, f"=IFERROR({holds},FALSE)")
            book.check_cells.append((check, scenario, f"G{row}"))
    if row > 3:
        rng = f"G4:G{row}"
        ws.conditional_formatting.add(rng, CellIsRule(operator="equal", formula=["TRUE"], fill=GOOD_FILL))
        ws.conditional_formatting.add(rng, CellIsRule(operator="notEqual", formula=["TRUE"], fill=BAD_FILL))
    put_text(ws, row + 2, 1, "A check that cannot be evaluated (a broken constraint, no answer) shows FALSE.",
             NOTE_FONT)
    widths(ws, {"A": 60, "B": 24, "C": 16, "D": 16, "E": 10, "F": 16, "G": 8, "H": 6})


def tolerance(book: Book, check: ir.Check, a: str, b: str, scale: Fraction, unit: str) -> tuple[str, str]:
    """The pass formula for ``lhs == rhs`` / ``~=`` over cells ``a`` and ``b`` (display units),
    decided as planner.questions.checks decides it; and the tolerance as text."""
    tol = tolerance_of(book.plan, check, scale, unit)
    diff = f"ABS({a}-{b})"
    slack = number(tol.slack)
    if tol.kind == "relative":
        return f"{diff}<={number(tol.value)}*ABS({b})*(1+{slack})", tol.text
    if tol.kind == "absolute":
        return f"{diff}<={number(tol.value / scale)}*(1+{slack})", tol.text
    return f"OR({a}={b},{diff}<={number(EXACT_REL)}*MAX(ABS({a}),ABS({b})))", ""
