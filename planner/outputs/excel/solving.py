"""The Solve sheet: every answer live, checked in the sheet itself.

One row per question and scenario (answers from :mod:`planner.questions.solve`):

* a **closed form** becomes a formula over the defined names (or the
  scenario's column), so changing an input moves the answer; an integer
  threshold's closed form already carries its rounding, printed portably
  as ``-INT(-(x))``;
* **no closed form**: an in-sheet bisection on the "Solve work" sheet, a
  fixed number of rows over the input's declared domain, each row halving
  the bracket (``lo``, ``hi``, the midpoint, the condition's ``lhs - rhs``
  there through the plan's own formulas). It converges in any engine,
  without Goal Seek, macros or iterative calculation, and shows ``#N/A``
  when the two ends do not bracket a root. Integer thresholds bisect over
  the integers (``INT`` of the midpoint);
* **maximize/minimize**: the objective at every candidate, one row each,
  and the answer by ``INDEX``/``MATCH`` of the ``MAX`` (``MIN``).

Every answer has a live verification: the condition evaluated (again
through the plan's formulas) at the answer, as a residual ``lhs - rhs``
for roots, or at ``n`` and its neighbour for integer thresholds.
"""

from __future__ import annotations

import math
from typing import Optional

import sympy as sp
from openpyxl.formatting.rule import CellIsRule

from ...compute.symbolic import rational
from ...language import ir
from ...language.errors import PlanError
from ...questions.roots import Domain
from ...questions.solve import objective_unit  # the optimum's display unit, as planner solve shows it
from .book import (
    BAD_FILL,
    GOOD_FILL,
    HEADER_FONT,
    NOTE_FONT,
    TITLE_FONT,
    AnswerRef,
    Book,
    header,
    put_formula,
    put_text,
    sheet_ref,
    widths,
)
from .printer import UnsupportedFormula, number
from .tables import MAX_SWEEP_ROWS, ROW, LiveTable, Output, sheet_title

MIN_HALVINGS = 60
MAX_HALVINGS = 400
WORK = "Solve work"


def collect_contexts(book: Book) -> None:
    """The Solve rows every column needs, and their row numbers (known before any sheet is written,
    so a formula that uses an answer can point at its Solve cell)."""
    _formula_answers(book)
    for stmt, scenario, overrides in _rows(book):
        book.context(scenario, overrides)
    for i, (stmt, scenario, overrides) in enumerate(_rows(book)):
        book.solve_index[(id(stmt), book.context(scenario, overrides).key)] = 4 + i


def _formula_answers(book: Book) -> None:
    """Answers used in formulas (and the answers their questions use), in every column that evaluates them."""
    model = book.model
    used = set(model.formula_answers)
    for a in list(used):
        used |= model.answer_cone(a) & set(model.answers)
    statements = []
    for a in model.answers:  # dependency order: upstream questions first
        stmt = book.aliases.get(a[: -len(".value")] if a.endswith(".value") else a)
        if a in used and stmt is not None and stmt not in statements:
            statements.append(stmt)
    for ctx in list(book.contexts.values()):
        if any(isinstance(v, AnswerRef) for v in ctx.overrides.values()):
            continue  # a check's `with x = ALIAS` column: answers inside it are not live
        for stmt in statements:
            need = (stmt, ctx.scenario, dict(ctx.overrides))
            if need not in book.solve_needs:
                book.solve_needs.append(need)


def _rows(book: Book) -> list[tuple]:
    """(statement, scenario, overrides) per Solve row: each question in its own scenarios, then the
    answers that checks use in other scenarios or with `with` overrides."""
    from ...compute.evaluation import scenarios_for

    rows = []
    for stmt in book.answers.solver.questions():
        own = [(stmt, s, {}) for s in scenarios_for(book.plan, stmt.scenarios)]
        extra = [need for need in book.solve_needs if need[0] is stmt]
        for item in own + extra:
            if not any(r[0] is item[0] and r[1] == item[1] and r[2] == item[2] for r in rows):
                rows.append(item)
    return rows


def _answers(book: Book) -> list[tuple]:
    """(statement, context, SolveResult or the PlanError) for every Solve row."""
    given = {}
    for r in book.solve_results or []:
        given[(id(r.statement), r.scenario)] = r
    out = []
    for stmt, s, overrides in _rows(book):
        r = None if overrides else given.get((id(stmt), s))
        if r is None:
            try:
                r = book.answers.solver.answer(stmt, s, {**book.overrides, **overrides}, book.origins)
            except PlanError as err:
                r = err
        out.append((stmt, book.context(s, overrides), r))
    return out


def solve_sheet(book: Book) -> None:
    answers = _answers(book)
    if not answers:
        return
    ws = book.wb.create_sheet("Solve")
    put_text(ws, 1, 1, "Solve", TITLE_FONT)
    put_text(ws, 2, 1, "Each answer is live: a closed form over the named inputs, or a bisection on the "
             f"'{WORK}' sheet, #N/A outside the target's declared domain; 'Holds' re-checks the condition at the "
             "answer through the plan's formulas.",
             NOTE_FONT)
    header(ws, 3, ["Question", "Scenario", "Answer", "Unit", "Holds", "Check value", "Method", "Notes"])
    ws.freeze_panes = "A4"
    work = book.wb.create_sheet(sheet_title(book, WORK))
    put_text(work, 1, 1, "Working for the Solve sheet: verifications, bisections and candidate tables",
             TITLE_FONT)
    state = {"top": 3}
    row = 3
    for stmt, ctx, r in answers:
        row += 1
        book.solve_index[(id(stmt), ctx.key)] = row
        put_text(ws, row, 1, stmt.span.flat)
        put_text(ws, row, 2, ctx.label)
        if isinstance(r, PlanError):
            put_text(ws, row, 3, "no answer")
            put_text(ws, row, 8, r.message)
            book.solve_cells.append((stmt, ctx, None))
            continue
        q = book.q[r.target]
        put_text(ws, row, 4, q.unit_text)
        put_text(ws, row, 7, r.method)
        notes = list(r.notes)
        here = f"C{row}"
        if isinstance(stmt, ir.Optimize):
            _optimize(book, ws, work, state, row, stmt, ctx, r, notes)
        elif stmt.mode == "root":
            _root(book, ws, work, state, row, stmt, ctx, r, notes)
            _in_domain(work, state, ws, row, stmt, ctx, q, notes)
        else:
            _threshold(book, ws, work, state, row, stmt, ctx, r, notes)
            _in_domain(work, state, ws, row, stmt, ctx, q, notes)
        put_text(ws, row, 8, "; ".join(notes))
        book.solve_cells.append((stmt, ctx, here))
    rng = f"E4:E{row}"
    ws.conditional_formatting.add(rng, CellIsRule(operator="equal", formula=["TRUE"], fill=GOOD_FILL))
    ws.conditional_formatting.add(rng, CellIsRule(operator="equal", formula=["FALSE"], fill=BAD_FILL))
    widths(ws, {"A": 50, "B": 14, "C": 16, "D": 10, "E": 8, "F": 16, "G": 50, "H": 60})


def _block(book: Book, work, state, title: str) -> int:
    top = state["top"]
    put_text(work, top, 1, title, HEADER_FONT)
    return top + 2  # a note row, then the table header


def _end(state, table: LiveTable) -> None:
    state["top"] = table.last + 3


def _ref(work, col: str, row: int) -> str:
    return f"{sheet_ref(work.title)}!${col}${row}"


def domain_test(q, ref: str) -> Optional[str]:
    """An Excel condition that ``ref`` (in the display unit) lies in ``q``'s declared domain; None: any number."""
    dom, parts = Domain.of(q), []
    if dom.lo is not None:
        parts.append(f"{ref}{'>=' if dom.lo_inclusive else '>'}{number(dom.lo / dom.scale)}")
    if dom.hi is not None:
        parts.append(f"{ref}{'<=' if dom.hi_inclusive else '<'}{number(dom.hi / dom.scale)}")
    if q.integer:
        parts.append(f"{ref}=INT({ref})")
    return f"AND({','.join(parts)})" if parts else None


def _in_domain(work, state, ws, row: int, stmt, ctx, q, notes: list) -> None:
    """Planner answers only inside the target's domain: the answer cell shows #N/A outside it (an edited
    input can move a closed form, or a branch of max/min, there), so 'Holds' is FALSE too."""
    raw = ws.cell(row=row, column=3).value
    if not isinstance(raw, str) or not raw.startswith("="):
        return
    top = state["top"]
    put_text(work, top, 1, f"answer before the domain check: {stmt.span.flat} [{ctx.label}]", HEADER_FONT)
    put_formula(work, top + 1, 1, raw, "General")
    ref = _ref(work, "A", top + 1)
    test = domain_test(q, ref)
    if test is None:
        put_formula(ws, row, 3, f"={ref}", "General")
    else:
        put_formula(ws, row, 3, f"=IF(IFERROR({test},FALSE),{ref},NA())", "General")
        notes.append(f"#N/A when the answer leaves the domain of {q.name}: {Domain.of(q).text()}")
    state["top"] = top + 4


# ---- roots --------------------------------------------------------------------------

def _closed_form(book: Book, ws, row: int, stmt, ctx, r, notes: list) -> bool:
    """The answer as a formula over the names; False when there is none Excel can express."""
    if r.closed_form is None:
        return False
    q = book.q[r.target]
    try:
        text = book.formula(r.closed_form, book.refs(ctx, ws.title), q.display.scale, f"Solve: {stmt.target}",
                            book.refs(ctx))
    except UnsupportedFormula as err:
        notes.append(f"the closed form has no Excel formula ({err.message}): solved in the sheet instead")
        return False
    put_formula(ws, row, 3, text, "General")
    notes.insert(0, "closed form: " + r.closed_form_text)
    return True


def _sides(book: Book, stmt: ir.Solve) -> tuple[sp.Basic, sp.Basic]:
    c = stmt.condition
    return book.plan.converter.expr(c.operands[0]), book.plan.converter.expr(c.operands[1])


def _root(book: Book, ws, work, state, row: int, stmt: ir.Solve, ctx, r, notes: list) -> None:
    lhs, rhs = _sides(book, stmt)
    if not _closed_form(book, ws, row, stmt, ctx, r, notes):
        _bisection(book, ws, work, state, row, stmt, ctx, r, lhs - rhs)
    # verification: the condition's two sides at the answer
    top = _block(book, work, state, f"check: {stmt.span.flat} [{ctx.label}]")
    table = LiveTable(book, work, ctx, [stmt.target], [Output("lhs", lhs), Output("rhs", rhs)], top, left=1)
    table.header()
    table.fill([[f"=Solve!$C${row}"]])
    a, b = _ref(work, table.letter("out:0"), table.first), _ref(work, table.letter("out:1"), table.first)
    put_formula(ws, row, 6, f"={a}-{b}", "0.000E+00")
    put_formula(ws, row, 5, f"=IFERROR(ABS(F{row})<=1E-9*MAX(ABS({a}),ABS({b})),FALSE)")
    _end(state, table)


def _halvings(lo: float, hi: float, answer: float) -> int:
    size = max(abs(answer), abs(lo), abs(hi)) if answer == 0 else abs(answer)
    need = math.log2(max(hi - lo, 1e-300) / max(size, 1e-300)) + 54
    return int(min(MAX_HALVINGS, max(MIN_HALVINGS, math.ceil(need))))


def _bisection(book: Book, ws, work, state, row: int, stmt, ctx, r, f: sp.Basic) -> None:
    """Bisection on lhs - rhs over the domain; columns lo, hi, then the table (midpoint, f).

    A probe where the formulas have no value in the engine (``EXP`` overflows,
    LibreOffice's ``^`` underflows; numpy gives inf or 0) is put on the side of
    planner's answer it lies on, so only a domain whose ends do not bracket a
    root gives ``#N/A``.
    """
    q = book.q[r.target]
    ends = Domain.of(q).sample(r.value)  # the ends of the domain planner.questions.solve searches
    lo, hi = float(ends[0]), float(ends[-1])
    scale = float(q.display.scale)
    n = _halvings(lo, hi, r.value)
    top = _block(book, work, state, f"bisection: {stmt.span.flat} [{ctx.label}]")
    put_text(work, top - 1, 1, f"{n} halvings of the domain; the first two rows are its ends; a point where the "
             f"formulas have no value counts as lying on its side of planner's answer ({r.display_value:.15g})",
             NOTE_FONT)
    table = LiveTable(book, work, ctx, [stmt.target], [Output("lhs - rhs", f)], top, left=3)
    for col, label in ((1, "lo"), (2, "hi")):
        put_text(work, top, col, label, HEADER_FONT)
        put_text(work, top + 1, col, q.unit_text, NOTE_FONT)
    table.header()
    first = table.first
    x, fx = table.letter("in:" + stmt.target), table.letter("out:0")
    table.fill([[lo / scale], [hi / scale]] + [[f"=(A{ROW}+B{ROW})/2"] for _ in range(n)])
    start = first + 2
    put_formula(work, start, 1, f"={x}{first}")
    put_formula(work, start, 2, f"={x}{first + 1}")
    answer = number(r.display_value)

    def low_side(at: str, value: str, sign: str) -> str:
        """TRUE when the probe ``at`` lies on the low end's side of the root."""
        return f"IFERROR(SIGN({value})={sign},{at}<{answer})"

    # the sign on the low end's side: f there, else the opposite of f at the high end
    sign = f"IFERROR(SIGN(${fx}${first}),-SIGN(${fx}${first + 1}))"
    for k in range(start + 1, table.last + 1):
        side = low_side(f"{x}{k - 1}", f"{fx}{k - 1}", sign)
        moves = f"OR({side},IFERROR({fx}{k - 1}=0,FALSE))"  # a zero closes the bracket
        put_formula(work, k, 1, f"=IF({moves},{x}{k - 1},A{k - 1})")
        put_formula(work, k, 2, f"=IF({side},B{k - 1},{x}{k - 1})")
    f_lo, f_hi = _ref(work, fx, first), _ref(work, fx, first + 1)
    sign = f"IFERROR(SIGN({f_lo}),-SIGN({f_hi}))"
    ends = (f"{low_side(_ref(work, x, first), f_lo, sign)}="
            f"{low_side(_ref(work, x, first + 1), f_hi, sign)}")
    put_formula(ws, row, 3, f"=IF({ends},NA(),{_ref(work, x, table.last)})", "General")
    _end(state, table)


# ---- integer thresholds ---------------------------------------------------------------

def _threshold(book: Book, ws, work, state, row: int, stmt: ir.Solve, ctx, r, notes: list) -> None:
    q = book.q[r.target]
    cond = book.plan.converter.expr(stmt.condition)
    lo, hi = Domain.of(q).integers()
    if not _closed_form(book, ws, row, stmt, ctx, r, notes):
        _integer_bisection(book, ws, work, state, row, stmt, ctx, r, cond, lo, hi)
    step = -1 if stmt.mode == "min" else 1
    top = _block(book, work, state, f"check: {stmt.span.flat} [{ctx.label}]")
    table = LiveTable(book, work, ctx, [stmt.target], [Output("holds", cond, is_bool=True)], top, left=1)
    table.header()
    table.fill([[f"=Solve!$C${row}"], [f"=Solve!$C${row}{step:+d}"]])
    at_n = _ref(work, table.letter("out:0"), table.first)
    at_nb = _ref(work, table.letter("out:0"), table.first + 1)
    nb = _ref(work, table.letter("in:" + stmt.target), table.first + 1)
    outside = []
    if stmt.mode == "min" and lo is not None:
        outside.append(f"{nb}<{lo}")
    if stmt.mode == "max" and hi is not None:
        outside.append(f"{nb}>{hi}")
    # outside the domain the neighbour need not fail (nor even evaluate): IF short-circuits
    neighbour = f"IF({outside[0]},TRUE,NOT({at_nb}))" if outside else f"NOT({at_nb})"
    put_formula(ws, row, 5, f"=IFERROR(AND({at_n},{neighbour}),FALSE)")
    put_formula(ws, row, 6, f"={at_nb}")
    put_text(ws, row, 7, r.method + f" (check value: the condition at {stmt.target} {step:+d})")
    _end(state, table)


def _integer_bisection(book: Book, ws, work, state, row: int, stmt, ctx, r, cond, lo, hi) -> None:
    """Smallest (largest) integer where the condition holds: bisection over the integers.

    ``good`` always satisfies the condition, ``bad`` never does (or lies
    just outside the domain); the midpoint ``INT((good + bad) / 2)`` halves
    the gap until it is 1, and ``good`` is the answer.
    """
    n = round(r.display_value)
    reach = max(8, 3 * abs(n))  # an open end: room for the answer to triple (far ends may overflow)
    if stmt.mode == "min":
        good0 = hi if hi is not None else n + reach
        bad0 = (lo - 1) if lo is not None else n - reach
    else:
        good0 = lo if lo is not None else n - reach
        bad0 = (hi + 1) if hi is not None else n + reach
    steps = max(2, math.ceil(math.log2(abs(good0 - bad0) + 1)) + 2)
    top = _block(book, work, state, f"integer bisection: {stmt.span.flat} [{ctx.label}]")
    put_text(work, top - 1, 1, f"{steps} halvings between {bad0} (fails or outside) and {good0} (must hold); "
             "the first row checks that end; where the condition has no value (a formula overflows or "
             f"underflows) it counts as holding on planner's side of {n}", NOTE_FONT)
    table = LiveTable(book, work, ctx, [stmt.target], [Output("holds", cond, is_bool=True)], top, left=3)
    for col, label in ((1, "good"), (2, "bad")):
        put_text(work, top, col, label, HEADER_FONT)
    table.header()
    first = table.first
    x, c = table.letter("in:" + stmt.target), table.letter("out:0")
    rows: list[list] = [[good0]] + [[f"=INT((A{ROW}+B{ROW})/2)"] for _ in range(steps)]
    table.fill(rows)
    work.cell(row=first + 1, column=1, value=good0)
    work.cell(row=first + 1, column=2, value=bad0)
    side = ">=" if stmt.mode == "min" else "<="

    def holds(at: str, value: str) -> str:
        return f"IFERROR({value},{at}{side}{n})"

    for k in range(first + 2, table.last + 1):
        done = f"ABS(A{k - 1}-B{k - 1})<=1"
        h = holds(f"{x}{k - 1}", f"{c}{k - 1}")
        put_formula(work, k, 1, f"=IF({done},A{k - 1},IF({h},{x}{k - 1},A{k - 1}))")
        put_formula(work, k, 2, f"=IF({done},B{k - 1},IF({h},B{k - 1},{x}{k - 1}))")
    end = holds(_ref(work, x, first), _ref(work, c, first))
    put_formula(ws, row, 3, f"=IF(NOT({end}),NA(),{_ref(work, 'A', table.last)})", "General")
    _end(state, table)


# ---- maximize / minimize ----------------------------------------------------------------

def _optimize(book: Book, ws, work, state, row: int, stmt: ir.Optimize, ctx, r, notes: list) -> None:
    from ...questions.ranges import expand

    q = book.q[stmt.over]
    points = expand(book.plan, stmt.over, stmt.values, stmt.over_span)
    dom = Domain.of(q)
    values = [v for v in points.exact_values()
              if dom.contains(rational(v)) and not (q.integer and (v / q.display.scale).denominator != 1)]
    # planner skips a candidate that breaks any constraint, not only the bounds filtered above
    when = _constraints_on(book, stmt.over)
    fn = "MAX" if stmt.sense == "max" else "MIN"
    objective = book.plan.converter.expr(stmt.objective)
    unit, scale = objective_unit(book.plan, stmt.objective, book.plan.analyzer.infer_strict(stmt.objective))
    if len(values) > MAX_SWEEP_ROWS or not values:
        work_note = f"{len(values):,} candidates: too many for a live table; the answer is planner's value"
        ws.cell(row=row, column=3, value=r.display_value)
        ws.cell(row=row, column=6, value=r.optimum_display)
        notes.insert(0, work_note)
        return
    key = ("optimize", id(stmt))
    if key not in state:
        sheet = book.wb.create_sheet(sheet_title(book, f"{'Max' if stmt.sense == 'max' else 'Min'} {stmt.over}"))
        put_text(sheet, 1, 1, stmt.span.flat, TITLE_FONT)
        put_text(sheet, 2, 1, "The objective at each candidate; the Solve sheet picks the "
                 f"{'largest' if stmt.sense == 'max' else 'smallest'}.", NOTE_FONT)
        state[key] = (sheet, 5)
    sheet, top = state[key]
    put_text(sheet, top - 1, 1, ctx.label if ctx.scenario or ctx.overrides else "base (the plan as written)",
             HEADER_FONT)
    table = LiveTable(book, sheet, ctx, [stmt.over],
                      [Output(stmt.objective.span.flat, objective, scale, unit, guard=True,
                              when=when)],
                      top, left=1)
    table.header()
    table.fill([[float(v / q.display.scale)] for v in values])
    xs = f"{sheet_ref(sheet.title)}!{table.range('in:' + stmt.over)}"
    ys = f"{sheet_ref(sheet.title)}!{table.range('out:0')}"
    put_formula(ws, row, 3, f"=INDEX({xs},MATCH({fn}({ys}),{ys},0))", "General")
    put_formula(ws, row, 6, f"={fn}({ys})", "General")
    put_formula(ws, row, 5, f"=ISNUMBER(C{row})")
    notes.insert(0, f"check value: the objective's {'maximum' if stmt.sense == 'max' else 'minimum'}"
                 + (f" in {unit}" if unit else ""))
    state[key] = (sheet, table.last + 4)


def _constraints_on(book: Book, name: str) -> Optional[sp.Basic]:
    """Every constraint that changes with input ``name``, as one condition (None: there is none)."""
    from ...questions.sweep import default_show

    moving = {name, *default_show(book.plan, [name])}
    conditions = [book.plan.converter.expr(c.condition) for _, c in book.plan._constraints
                  if any(isinstance(n, ir.Name) and n.name in moving for n in ir.walk(c.condition))]
    return sp.And(*conditions) if conditions else None
