"""The Checks sheet: every ``check`` as a live TRUE/FALSE cell.

Tolerances are those of :mod:`planner.questions.checks`: ``a == b`` within 1e-12
relative, ``a ~= 46.667 ms`` within half a unit of the figure's last digit,
``within 0.1%`` relative, ``within 0.01 ms`` absolute; any other condition is
evaluated as written. A check in a scenario reads that scenario's column on
the Scenarios sheet; ``with`` overrides get a column of their own on the
Check contexts sheet; a question's answer (``check crossover_batch == 98``)
reads the Solve sheet. Every cell caches planner's own result
(:func:`planner.questions.checks.run_checks`).
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ...language import ir
from ...questions.checks import EXACT_REL, check_scenarios, compares_values, display_unit, run_checks, tolerance_of
from ..numbers import cell_unit
from .book import cell_scale, percent_figure, scale_of, unit_of, TITLE, UNITS, Book, cached, in_base
from .printer import formula, number

COLUMNS = ["Check", "Scenario", "Actual", "Expected", "Unit", "Tolerance", "Holds", "Status", "Line"]


def checks_sheet(book: Book) -> None:
    if not book.model.checks:
        return
    ws = book.create_sheet("Checks")
    ws.text(1, 1, "Checks", TITLE, overflow=True)
    ws.note(2, 1, "Each check is a live TRUE/FALSE cell with planner's tolerance "
            "(`==`: 1e-12 relative; `~=`: half a unit in the figure's last digit).")
    ws.header(3, COLUMNS)
    ws.freeze = (4, 1)
    ws.repeat = (3, 3)
    results = iter(run_checks(book.plan, book.answers, book.overrides))
    row = 3
    for check in book.model.checks:
        plain, from_alias = book.check_overrides(check)
        shown_scale, unit = display_unit(book.plan, check, book.answers)
        scale = cell_scale(shown_scale, unit)  # a percentage's cells hold the fraction
        cond = check.condition
        pair = compares_values(book.plan, check, book.answer_types)
        text = check.span.flat
        for scenario in check_scenarios(book.plan, check):
            row += 1
            result = next(results)
            merged = book.check_context(scenario, plain, from_alias)
            ctx = book.context(scenario, merged)
            refs = book.refs(ctx, ws.title)
            bools = set(book.bools)
            env = {}
            values = book.by_symbol(book.env(ctx))  # planner's values, for helper cells of long formulas
            for name in book.answers_used(check):  # question results by alias
                sym = sp.Symbol(f"{name}#answer", real=True)
                ref, answer_scale = book.answer_cell(name, scenario, plain, ws.title)
                refs[sym] = in_base(ref, answer_scale)
                env[name] = sym
                values[sym] = book.answer_value(name, scenario, plain)

            def scenario_ref(r: ir.ScenarioRef, merged=merged, refs=refs, bools=bools, values=values):
                """``name@scenario``: that scenario's column (with the check's `with`)."""
                other = book.context(None if r.scenario == "base" else r.scenario, merged)
                q = book.q[r.name]
                sym = sp.Symbol(f"{r.name}@{r.scenario}", real=True)
                cell = book.cell(other, r.name, ws.title)
                refs[sym] = cell if q.is_bool else in_base(cell, scale_of(q))
                values[sym] = book.env(other)[r.name]
                if q.is_bool:
                    bools.add(sym)
                    return sp.Eq(sym, 1)
                return sym

            ws.text(row, 1, text)
            ws.text(row, 2, ctx.label)
            ws.text(row, 5, cell_unit(unit), UNITS)
            ws.number(row, 9, check.span.line)

            def spill(t: str, sub: sp.Basic, values=values) -> str:
                return book.spill(t, f"Checks: {text}", sub, values)

            if pair:
                lhs = book.plan.converter.expr(cond.operands[0], env, ref=scenario_ref)
                rhs = book.plan.converter.expr(cond.operands[1], env, ref=scenario_ref)
                sides = [percent_figure(unit, result.lhs), percent_figure(unit, result.rhs)]
                for k, e in enumerate((lhs, rhs)):
                    if sides[k] is None:  # the check has no value (an answer missing): the side's own value
                        sides[k] = cached(book.evaluate(e, values), scale)
                style = book.number_style(sides, unit)
                for col, e, value in ((3, lhs, sides[0]), (4, rhs, sides[1])):
                    ws.formula(row, col, formula(e, refs, bools, spill=spill, scale=scale, row=book.flow_writer(f"Checks: {text}", values)), value, style)
                holds, tol_text = tolerance(book, check, f"C{row}", f"D{row}", shown_scale, unit)
                ws.text(row, 6, tol_text)
            else:
                e = book.plan.converter.expr(cond, env, ref=scenario_ref)
                holds = formula(e, refs, bools, spill=spill, row=book.flow_writer(f"Checks: {text}", values))[1:]
            if result.beyond_floats:
                # decided in exact arithmetic where a spreadsheet's floats cannot tell (0.5^2000 is not 0):
                # planner's verdict, as a value, so the workbook says what planner says
                holds = "TRUE" if result.passed else "FALSE"
                ws.text(row, 6, "decided in exact arithmetic: floating point cannot tell these apart")
            ws.formula(row, 7, f"=IFERROR({holds},FALSE)", bool(result.passed))
            ws.status(row, 8, f"G{row}", bool(result.passed))
            book.check_cells.append((check, scenario, f"G{row}"))
            book.check_results.append(result)
    ws.flag(4, 8, row)
    ws.note(row + 2, 1, "A check that cannot be evaluated (a broken constraint, no answer) shows FALSE.")
    ws.caps.update({1: 60, 2: 30})


def tolerance(book: Book, check: ir.Check, a: str, b: str, scale: Fraction, unit: str) -> tuple[str, str]:
    """The pass formula for ``lhs == rhs`` / ``~=`` over cells ``a`` and ``b`` (display units),
    decided as planner.questions.checks decides it; and the tolerance as text."""
    tol = tolerance_of(book.plan, check, scale, unit)
    diff = f"ABS({a}-{b})"
    slack = number(tol.slack)
    if tol.kind == "relative":
        return f"{diff}<={number(tol.value)}*ABS({b})*(1+{slack})", tol.text
    if tol.kind == "absolute":
        return f"{diff}<={number(tol.value / cell_scale(scale, unit))}*(1+{slack})", tol.text
    return f"OR({a}={b},{diff}<={number(EXACT_REL)}*MAX(ABS({a}),ABS({b})))", ""
