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

import re
from fractions import Fraction

from ...language import ir
from ...questions.checks import (EXACT_REL, check_scenarios, compares_values, display_unit, never_side, run_checks,
                                 tolerance_of)
from ..numbers import answer_style, cell_unit
from .book import cell_scale, percent_figure, scale_of, FIGURE, NEVER_WORD, TITLE, UNITS, Book, cached
from .generator import ATOM, Generator, Piece, number

COLUMNS = ["Check", "Scenario", "Actual", "Expected", "Unit", "Tolerance", "Holds", "Status", "Line"]


def checks_sheet(book: Book) -> None:
    if not book.model.checks:
        return
    ws = book.create_sheet("Checks")
    grouped = sum(len(check_scenarios(book.plan, c)) for c in book.model.checks) > UNGROUPED
    ws.note(2, 1, "Each check is a live TRUE/FALSE cell with planner's tolerance "
            "(`==`: 1e-12 relative; `~=`: half a unit in the figure's last digit)." + (
                " The checks are grouped as the plan's comments group them, one live line per group: expand "
                "its + to see each check (a group with a check that failed at export is open)." if grouped else ""))
    ws.header(3, COLUMNS)
    ws.freeze = (4, 1)
    ws.repeat = (3, 3)
    results = iter(book.checks_run if book.checks_run is not None  # as `planner check` runs them
                   else run_checks(book.plan, book.answers, book.overrides))
    row = 3
    starts = {id(first): title for title, first in check_sections(book.model.checks)}
    opened: list = []  # the group being written: [summary row, first row, any failed at export]

    def close(last: int) -> None:
        if opened:
            at, first, failed = opened.pop()
            n = last - first + 1
            span = f"G{first}:G{last}"
            ws.formula(at, 8, f'=IF(COUNTIF({span},TRUE)={n},"{_all(n)}",({n}-COUNTIF({span},TRUE))&" of {n} FAIL")',
                       _all(n) if not any(failed) else f"{sum(failed)} of {n} FAIL")
            ws.group(first, last, collapsed=not any(failed))

    for check in book.model.checks:
        if grouped and id(check) in starts:
            close(row)
            row += 1
            ws.label(row, 1, starts[id(check)])
            ws.number(row, 9, check.span.line)
            opened.append((row, row + 1, []))
        plain, from_alias = book.check_overrides(check)
        shown_scale, unit = display_unit(book.plan, check, book.answers, figure=True)  # the Summary's unit
        written = float(display_unit(book.plan, check, book.answers)[0] / shown_scale)  # planner check's, to it
        scale = cell_scale(shown_scale, unit)  # a percentage's cells hold the fraction
        cond = check.condition
        pair = compares_values(book.plan, check, book.answer_types)
        never = never_side(check)  # `x == never`: x as the Summary shows it (its value or never) against never
        text = check.span.flat
        for scenario in check_scenarios(book.plan, check):
            row += 1
            result = next(results)
            merged = book.check_context(scenario, plain, from_alias)
            ctx = book.context(scenario, merged)
            refs, qualified = book.pieces(ctx, ws.title), book.pieces(ctx)
            values = dict(book.env(ctx))  # planner's values, for helper cells and rows of terms
            for name in book.answers_used(check):  # question results by alias
                ref, answer_scale = book.answer_cell(name, scenario, plain, ws.title)
                refs[name] = Piece(ref, ATOM, answer_scale)
                ref, _ = book.answer_cell(name, scenario, plain, "")
                qualified[name] = Piece(ref, ATOM, answer_scale)
                values[name] = book.answer_value(name, scenario, plain)
            for r in [n for n in ir.walk(cond) if isinstance(n, ir.ScenarioRef)]:
                # ``name@scenario``: that scenario's column (with the check's `with`)
                other = book.context(None if r.scenario == "base" else r.scenario, merged)
                q = book.q[r.name]
                key = f"{r.name}@{r.scenario}"
                refs[key] = Piece(book.read(other, r.name, ws.title), ATOM, None if q.is_bool else scale_of(q))
                qualified[key] = Piece(book.read(other, r.name), ATOM, None if q.is_bool else scale_of(q))
                values[key] = book.env(other)[r.name]
            where = f"Checks: {text}"
            gen = Generator(book.model, refs, row=book.flow_cells, values=values, where=where, row_refs=qualified,
                            spill=lambda t, v, where=where: book.helper_cell(t, where, v), periods=book.periods,
                            analyzer=book.plan.analyzer)

            ws.text(row, 1, text)
            ws.text(row, 2, ctx.label)
            ws.text(row, 5, cell_unit(unit), UNITS)
            ws.number(row, 9, check.span.line)

            if ctx is not book.base_context and any(isinstance(n, (ir.Reduce, ir.At)) for n in ir.walk(cond)):
                # the sheet of periods computes the base case's series (and the selected scenario's): planner's verdict
                holds = "TRUE" if result.passed else "FALSE"
                ws.text(row, 6, "planner's verdict, not live: it reduces a series in another case than the base")
            elif pair:
                lhs, rhs = cond.operands
                sides = [percent_figure(unit, v * written if isinstance(v, float) else v) for v in (result.lhs, result.rhs)]
                for k, e in enumerate((lhs, rhs)):
                    if sides[k] is None:  # the check has no value (an answer missing): the side's own value
                        sides[k] = cached(book.value_of(e, values), scale)
                style = book.number_style(sides, unit)
                actual = style if style is None or result.lhs is None else \
                    answer_style(result.lhs * written, unit, result.answer_mode, style)  # an answer on its side
                for col, e, value, shown in ((3, lhs, sides[0], actual), (4, rhs, sides[1], style)):
                    ws.formula(row, col, gen.formula(e, scale), value, shown)
                holds, tol_text = tolerance(book, check, f"C{row}", f"D{row}", shown_scale, unit)
                ws.text(row, 6, tol_text)
            else:
                holds = gen.formula(cond, None)[1:]
            if never is not None:
                shown = NEVER_WORD if result.lhs is None else percent_figure(unit, result.lhs * written)
                style = book.number_style([shown], unit)
                if holds not in ("TRUE", "FALSE"):  # else planner's verdict (a series in another case): its figure
                    x = gen.formula(never[0], scale)[1:]
                    ws.formula(row, 3, f'=IF(ISNA({x}),"{NEVER_WORD}",{x})', shown, style, FIGURE)
                elif shown == NEVER_WORD:
                    ws.text(row, 3, shown, FIGURE)
                else:
                    ws.number(row, 3, shown, style)
                ws.text(row, 4, result.expected, FIGURE)  # never, or not never
            if result.beyond_floats:
                # decided in exact arithmetic where a spreadsheet's floats cannot tell (0.5^2000 is not 0):
                # planner's verdict, as a value, so the workbook says what planner says
                holds = "TRUE" if result.passed else "FALSE"
                ws.text(row, 6, "decided in exact arithmetic: floating point cannot tell these apart")
            ws.formula(row, 7, f"=IFERROR({holds},FALSE)", bool(result.passed))
            ws.status(row, 8, f"G{row}", bool(result.passed))
            book.check_cells.append((check, scenario, f"G{row}"))
            book.check_results.append(result)
            if opened:
                opened[-1][2].append(not result.passed)
    close(row)
    row = _probability_rows(book, ws, row, grouped)
    ws.flag(4, 8, row)
    if grouped:
        for text, style in (("FAIL", "bad"), ("all ", "good")):
            ws.conditionals.append((4, 8, row, 8, {"type": "text", "criteria": "containing" if text == "FAIL"
                                                   else "begins with", "value": text, "style": style}))
    first_row = min(int(w[1:]) for _, _, w in book.check_cells)
    span, total = f"G{first_row}:G{row}", len(book.check_cells)
    passed = sum(1 for r in book.check_results if r.passed)
    ws.formula(1, 1, f'="Checks: "&COUNTIF({span},TRUE)&" of {total} hold"&IF(COUNTIF({span},TRUE)<{total},", "&'
               f'({total}-COUNTIF({span},TRUE))&" FAIL","")',
               f"Checks: {passed} of {total} hold" + (f", {total - passed} FAIL" if passed < total else ""), style=TITLE)
    ws.note(row + 2, 1, "A check that cannot be evaluated (a broken constraint, no answer) shows FALSE.")
    ws.caps.update({1: 60, 2: 30})


def _probability_rows(book: Book, ws, row: int, grouped: bool = False) -> int:
    """The probability checks (``check P(cheaper) >= 80%``), as ``planner check`` decides them over its
    simulation: planner's verdict as a value (the samples are planner's, not the sheet's), said so, so that
    the workbook counts every check the plan has. Returns the last row written."""
    from ...questions.simulate import run_probability_checks

    given = book.checks_run
    results = [r for r in given if isinstance(r.check, ir.ProbabilityCheck)] if given is not None \
        else run_probability_checks(book.plan)
    if not results:
        return row
    row += 1
    top = row
    ws.label(row, 1, f"Probability checks: planner's verdicts over its simulation of {results[0].samples:,} samples "
                     "(values, not formulas: export again after editing; the Trials sheet simulates live)")
    for result in results:
        row += 1
        ws.text(row, 1, result.check.span.flat)
        ws.text(row, 2, result.scenario or "base")
        if result.error is None and isinstance(result.lhs, (int, float)) and not isinstance(result.lhs, bool):
            unit = result.unit or ""
            sides = [percent_figure(unit, result.lhs), percent_figure(unit, result.rhs)]
            style = book.number_style(sides, unit)
            ws.number(row, 3, sides[0], style)
            ws.number(row, 4, sides[1], style)
            ws.text(row, 5, cell_unit(unit), UNITS)
        error = re.search(r"\(sampling error about [^)]*\)", result.stat_text) if result.error is None else None
        ws.text(row, 6, result.error.message if result.error is not None else error.group(0)[1:-1] if error else None)
        ws.formula(row, 7, "=TRUE" if result.passed else "=FALSE", bool(result.passed))
        ws.status(row, 8, f"G{row}", bool(result.passed))
        ws.number(row, 9, result.check.span.line)
        book.check_cells.append((result.check, result.scenario, f"G{row}"))
        book.check_results.append(result)
    if grouped:  # as the plan's other groups: one line that counts them, the rows under it
        n, failed = len(results), sum(not r.passed for r in results)
        ws.formula(top, 8, f'=IF(COUNTIF(G{top + 1}:G{row},TRUE)={n},"{_all(n)}",'
                           f'({n}-COUNTIF(G{top + 1}:G{row},TRUE))&" of {n} FAIL")',
                   _all(n) if not failed else f"{failed} of {n} FAIL")
        ws.group(top + 1, row, collapsed=not failed)
    return row


UNGROUPED = 40  # check rows that print on one page as they are: more are grouped under live summary lines
SECTION_TEXT = 150  # characters of a group's title (its comment) on its summary line


def _all(n: int) -> str:
    return "holds" if n == 1 else f"all {n} hold"


def check_sections(checks) -> list[tuple[str, object]]:
    """The plan's checks in groups as its text groups them: a run of checks on consecutive lines is one group,
    titled by the nearest comment lines above it since the check before (or its first check, without one).
    Returns (title, first check) per group."""
    out, prev = [], None
    for check in checks:
        span = check.span
        same = prev is not None and prev.source is span.source
        if same and span.source.text[prev.end:span.start].count("\n") == 1:
            prev = span
            continue
        out.append((_comment_above(span, prev.end if same else 0) or span.flat, check))
        prev = span
    return out


def _comment_above(span, since: int) -> str:
    """The block of comment lines nearest above ``span`` after offset ``since`` (other statements between are
    passed over), joined: a heading ruled with dashes or equals signs, then " - " and the lines below it."""
    lines = span.source.text[since:span.start].split("\n")[1:-1]  # whole lines only
    while lines and not lines[-1].strip().startswith("#"):
        lines.pop()
    found: list[str] = []
    while lines and lines[-1].strip().startswith("#"):
        found.append(lines.pop().strip())
    parts = []
    for line in reversed(found):
        ruled = "----" in line or "====" in line
        text = line.lstrip("#").strip(" -=").strip()
        if text:
            parts.append(text + (" -" if ruled else ""))
    text = " ".join(parts).rstrip(" -")
    return text if len(text) <= SECTION_TEXT else text[:SECTION_TEXT].rsplit(" ", 1)[0] + " …"


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
