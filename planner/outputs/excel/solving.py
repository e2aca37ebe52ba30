"""The Solve sheet: every answer live, checked in the sheet itself.

One row per question and scenario (answers from :mod:`planner.questions.solve`):

* a **closed form** (SymPy's, translated back into the IR by :mod:`planner.compute.closed` and
  written by the same generator as every formula) becomes a formula over the defined names (or the
  scenario's column), in the inputs' display units (``(1 + rate)^years``,
  not ``(31536000*rate + 1)^(years/31536000)``); a long one is split into
  named helper cells on the "Solve work" sheet; an integer threshold's
  closed form already carries its rounding, printed portably as
  ``-INT(-(x))``;
* **no closed form**: an in-sheet bisection on the "Solve work" sheet, a
  fixed number of rows over the input's declared domain, each row halving
  the bracket (``lo``, ``hi``, the midpoint, the condition's ``lhs - rhs``
  there through the plan's own formulas). It converges in any engine,
  without Goal Seek, macros or iterative calculation, and shows ``#N/A``
  when the two ends do not bracket a root. Integer thresholds bisect over
  the integers (``INT`` of the midpoint);
* **maximize/minimize**: the objective at every candidate, one row each,
  and the answer by ``INDEX``/``MATCH`` of the ``MAX`` (``MIN``).

Every answer has a live, labelled verification: the residual ``lhs - rhs``
at a root, ``batch - 1 = 97 fails: TRUE`` for an integer threshold, the
optimum for an optimisation. Each cell caches planner's own value; the
bisections are run in Python row by row, as the sheet runs them.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional, Sequence

import numpy as np

from ...language import ir
from ...language.errors import PlanError
from ...language.text import difference_text, formula_text
from ...questions.answer import objective_unit  # the optimum's display unit, as planner solve shows it
from ...questions.ranges import Domain
from .book import NO_ANSWER, cell_scale, figure, percent_figure, scale_of, unit_of, HEADER, NAME, TITLE, UNITS, AnswerRef, Book, Chart, Series, cached, literal, sheet_ref, sheet_title
from .names import unique_name
from .generator import ATOM, Generator, NotWritten, Piece, UnsupportedFormula, number
from .tables import MAX_SWEEP_ROWS, ROW, Live, LiveTable, Output, _broken, titled

MIN_HALVINGS = 60
MAX_HALVINGS = 400
WORK = "Solve work"
SPLIT = 500  # characters: a longer closed form is split into named helper cells
NOTE_LENGTH = 110  # characters in one note on the Solve sheet (the full text: JSON and the report)
COLUMNS = ["Question", "Scenario", "Answer", "Unit", "Holds", "Status", "Check", "Check value", "Method", "Notes"]
ANSWER, HOLDS, STATUS, CHECK, CHECK_VALUE, METHOD, NOTES = 3, 5, 6, 7, 8, 9, 10


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
        stmt = book.aliases.get(a.removesuffix(".value"))
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
    from ...questions.every_answer import question_scenarios

    rows = []
    for stmt in book.answers.questions():
        own = [(stmt, s, {}) for s in question_scenarios(book.plan, stmt)]  # `for all`: as written too
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
            try:  # the numeric route's answer; the closed form (the sheet shows it) within its budget
                r = book.answers.answer(stmt, s, {**book.overrides, **overrides}, book.origins, closed_form=True)
            except PlanError as err:
                r = err
        out.append((stmt, book.context(s, overrides), r))
    return out


def one_line(text: str, limit: int = NOTE_LENGTH) -> str:
    """``text`` on one line, cut to ``limit`` characters where it is longer: after its last whole clause
    (``; ``) in the second half of the limit, else its last whole word, then ``…``."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    clause = cut.rfind("; ")
    cut = cut[:clause] if clause >= limit // 2 else cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "…"


class Work:
    """The Solve work sheet: blocks one below the other."""

    def __init__(self, book: Book) -> None:
        self.book = book
        self.ws = book.create_sheet(sheet_title(book, WORK), work=True)
        self.ws.text(1, 1, "Working for the Solve sheet: closed-form parts, verifications, bisections", TITLE,
                     overflow=True)
        self.top = 3
        self.optimize: dict = {}

    def block(self, title: str) -> int:
        self.ws.label(self.top, 1, title)
        return self.top + 2  # a note row, then the table header

    def end(self, table: LiveTable) -> None:
        self.top = table.last + 3

    def ref(self, col: str, row: int) -> str:
        return f"{sheet_ref(self.ws.title)}!${col}${row}"


def solve_sheet(book: Book) -> None:
    answers = _answers(book)
    if not answers:
        return
    ws = book.create_sheet("Solve")
    ws.text(1, 1, "Solve", TITLE, overflow=True)
    ws.header(3, COLUMNS)
    ws.freeze = (4, 3)
    ws.repeat = (3, 3)
    work = Work(book)
    row, exported = 3, False
    for stmt, ctx, r in answers:
        row += 1
        book.solve_index[(id(stmt), ctx.key)] = row
        book.solve_rows.append((stmt, ctx, r, row))
        ws.text(row, 1, ir.question_text(stmt))
        ws.text(row, 2, ctx.label)
        if isinstance(r, PlanError):
            ws.formula(row, 3, "=NA()", "#N/A")  # no answer: what uses it shows #N/A too
            # a finding, not a failure: nothing to re-check, and the status neither holds nor FAILS
            ws.text(row, HOLDS, "")
            ws.text(row, STATUS, NO_ANSWER)
            ws.text(row, NOTES, one_line(r.message))
            book.solve_cells.append((stmt, ctx, None))
            continue
        q = book.q[r.target]
        ws.text(row, 4, unit_of(q), UNITS)
        ws.text(row, METHOD, one_line(r.method.split(":")[0]))
        notes = [one_line(n) for n in r.notes]
        if isinstance(stmt, ir.Optimize):
            _optimize(book, ws, work, row, stmt, ctx, r, notes)
        elif _over_periods(book, stmt.condition) or (stmt.mode != "root" and not q.integer
                                                     and (r.closed_form is None or not _boundary(stmt))):
            # the series' rows compute the inputs as they are, not a trial value; the least (greatest) real
            # value where a condition holds has no in-sheet search: planner's answer, said so
            ws.number(row, 3, figure(q, r.display_value), book.answer_style(q, r))
            _as_exported(book, ws, row, stmt, ctx, r.target)
            exported = True
            notes.insert(0, "planner's answer, not live: " + (
                "its condition reduces a series, whose rows compute the inputs as they are" if
                _over_periods(book, stmt.condition) else "the least or greatest real value where the condition "
                "holds, found numerically") + " (export again after editing)")
        elif stmt.mode == "root" or not q.integer:  # a real threshold with a closed form: its boundary's root
            _root(book, ws, work, row, stmt, ctx, r, notes)
            _in_domain(book, work, ws, row, stmt, ctx, q, notes)
        else:
            _threshold(book, ws, work, row, stmt, ctx, r, notes)
            _in_domain(book, work, ws, row, stmt, ctx, q, notes)
        ws.text(row, NOTES, "; ".join(notes))
        holds = ws.at(row, HOLDS)
        ws.status(row, STATUS, f"E{row}", holds.value if holds.kind == "bool" else holds.cached is True,
                  stale=ws.at(row, 3).kind == "number")  # planner's figure, not a formula: not live
        book.solve_cells.append((stmt, ctx, f"C{row}"))
    ws.note(2, 1, "Each answer is live: a closed form over the named inputs, or a bisection on the "
            f"'{WORK}' sheet; #N/A outside the target's declared domain. 'Holds' re-checks the condition at the "
            "answer through the plan's formulas" + (
                "; for planner's answer written at export (its Notes say so), that the inputs are still those "
                "it was found for." if exported else "."))
    ws.flag(4, STATUS, row)
    ws.caps.update({1: 50, CHECK: 34, METHOD: 24, NOTES: 60})


def _as_exported(book: Book, ws, row: int, stmt: ir.Solve, ctx, target: str) -> None:
    """Holds of planner's answer written at export: TRUE while every input its condition reads (but the
    target) holds the value the answer was found for, so that an edit turns its status (and the Summary's)
    to "re-run planner" (it held TRUE whatever the edit)."""
    names = {n.name for n in ir.walk(stmt.condition) if isinstance(n, ir.Name)}
    cone = set(names).union(*(book.model.answer_cone(n) for n in names))
    inputs = [n for n in book.plan.definition_order() if n in cone and n != target
              and book.q[n].is_input and not book.q[n].per_period]  # (a table of values is a row of periods)
    tests = [f"{book.cell(ctx, n, ws.title)}=" + (str(v).upper() if isinstance(v, bool) else number(v))
             for n in inputs for v in [book.display(ctx, n)]]
    text = f"=AND({','.join(tests)})"
    fits = 0 < len(tests) <= 255 and len(text) <= 8000  # Excel's AND takes 255 arguments, a formula 8,192 characters
    ws.formula(row, HOLDS, text if fits else "=TRUE()", True)


def _boundary(stmt: ir.Solve) -> bool:
    """Whether a real threshold's condition is one comparison of two sides, so that its answer (the closed
    form of its boundary) is checked in the sheet as a root is: ``lhs - rhs`` changes sign around it."""
    c = stmt.condition
    return isinstance(c, ir.Compare) and len(c.operands) == 2


def _over_periods(book: Book, e: ir.Expr) -> bool:
    """Whether a question's condition or objective reads a series (itself or through the quantities it uses)."""
    return any(isinstance(n, (ir.Reduce, ir.At)) or isinstance(n, ir.Name) and book.reads_series(n.name)
               for n in ir.walk(e))


def domain_test(q, ref: str) -> Optional[str]:
    """An Excel condition that ``ref`` (in the display unit) lies in ``q``'s declared domain; None: any number."""
    dom, parts = Domain.of(q), []
    if dom.lo is not None:
        parts.append(f"{ref}{'>=' if dom.lo_inclusive else '>'}{number(dom.lo / scale_of(q))}")
    if dom.hi is not None:
        parts.append(f"{ref}{'<=' if dom.hi_inclusive else '<'}{number(dom.hi / scale_of(q))}")
    if q.integer:
        parts.append(f"{ref}=INT({ref})")
    return f"AND({','.join(parts)})" if parts else None


def _in_domain(book: Book, work: Work, ws, row: int, stmt, ctx, q, notes: list) -> None:
    """Planner answers only inside the target's domain: the answer cell shows #N/A outside it (an edited
    input can move a closed form, or a branch of max/min, there), so 'Holds' is FALSE too."""
    raw = ws.at(row, 3)
    if raw is None or raw.kind != "formula":
        return
    top = work.top
    work.ws.label(top, 1, f"answer before the domain check: {ir.question_text(stmt)} [{ctx.label}]")
    work.ws.formula(top + 1, 1, raw.value, raw.cached, raw.num)
    ref = work.ref("A", top + 1)
    test = domain_test(q, ref)
    if test is None:
        ws.formula(row, 3, f"={ref}", raw.cached, raw.num)
    else:
        ws.formula(row, 3, f"=IF(IFERROR({test},FALSE),{ref},NA())", raw.cached, raw.num)
        notes.append(f"#N/A outside the domain of {q.name}: {Domain.of(q).text()}"
                     + (", integer" if q.integer else ""))
    work.top = top + 4


# ---- closed forms -----------------------------------------------------------------------

def _closed_form_ir(book: Book, r) -> ir.Expr:
    """The closed form as IR over the quantities' figures as their cells hold them (display units; a
    percent cell holds 0.08 for 8%), giving the answer's figure (as the report prints it:
    :mod:`planner.compute.closed`); once per form.
    :class:`~planner.compute.closed.NoClosedForm` when the plan language cannot write it."""
    from ...compute.closed import NoClosedForm, in_display_units, to_ir  # SymPy's, as the closed form is

    key = ("closed form", r.target, r.closed_form)
    if key not in book.closed_forms:
        try:
            # not rewritten through the plan's quantities as the report's is: its float evaluation then
            # differs from planner's answer in the last digits, which the residual checks beside it show
            book.closed_forms[key] = to_ir(in_display_units(book.plan, r.target, r.closed_form, scale_of),
                                           {n for n, q in book.q.items() if q.is_bool})
        except NoClosedForm as err:
            book.closed_forms[key] = err
    got = book.closed_forms[key]
    if isinstance(got, NoClosedForm):
        raise got
    return got


def _closed_form(book: Book, ws, work: Work, row: int, stmt, ctx, r, notes: list) -> bool:
    """The answer as a formula over the names (generated from the closed form's IR, as every formula of
    the workbook); False when there is none Excel can express (the sheet then solves by bisection)."""
    if r.closed_form is None:
        return False
    from ...compute.closed import NoClosedForm

    # every quantity as its cell holds it: the closed form is over those figures
    refs = {n: Piece(book.read(ctx, n), ATOM, None if q.is_bool else Fraction(1)) for n, q in book.q.items()}
    values = {n: book.display(ctx, n) for n in book.q}
    values = {n: (float("nan") if isinstance(v, str) else v) for n, v in values.items()}
    parts: list = []
    prefix = f"{stmt.alias or stmt.target}.{ctx.scenario or 'base'}"

    def part(text: str, value) -> str:  # a long formula's part: a named cell on the Solve work sheet
        name = unique_name(f"{prefix}.part{len(parts) + 1}", book.taken_names)
        parts.append((name, text, value))
        return name

    try:
        node = _closed_form_ir(book, r)
        text = Generator(book.model, refs, values=values, where=f"{WORK}: {prefix}", row_refs=refs,
                         spill=part, split=SPLIT).formula(node, Fraction(1))
    except NoClosedForm as err:
        notes.append(f"no Excel formula for the closed form (it uses {err.what}): solved in the sheet")
        return False
    except (UnsupportedFormula, NotWritten) as err:
        notes.append(f"no Excel formula for the closed form ({getattr(err, 'message', err)}): solved in the sheet")
        return False
    if parts:
        top = work.block(f"closed form, in parts: {ir.question_text(stmt)} [{ctx.label}]")
        work.ws.note(top - 1, 1, "each part is a named cell; the answer's formula uses their names")
        work.ws.header(top, ["Part", "Value"])
        for k, (name, part_text, value) in enumerate(parts):
            at = top + 1 + k
            work.ws.text(at, 1, name, NAME)
            work.ws.formula(at, 2, part_text, value, book.number_style([value]))
            book.defined[name] = work.ref("B", at)
        work.top = top + len(parts) + 3
    q = book.q[r.target]
    ws.formula(row, 3, text, figure(q, r.display_value), book.answer_style(q, r))
    shown = f"{r.target} = {formula_text(node)}"  # the cell's formula as plan text, over the figures the cells hold
    notes.insert(0, ("closed form: " + shown) if len(shown) <= NOTE_LENGTH - 13 else
                 f"closed form in {len(parts) + 1} cells (named parts on '{WORK}')" if parts else
                 "closed form over the inputs (the full text: planner solve --format json)")
    return True


# ---- roots --------------------------------------------------------------------------

def _sides(book: Book, stmt: ir.Solve) -> tuple[ir.Expr, ir.Expr, ir.Expr]:
    """The condition's two sides, and their difference as the plan would write it (``lhs - (rhs)``)."""
    c = stmt.condition
    lhs, rhs = c.operands
    return lhs, rhs, ir.Binary(ir.BinOp.SUB, lhs, rhs, c.span, c.op_spans[0])


def _root(book: Book, ws, work: Work, row: int, stmt: ir.Solve, ctx, r, notes: list) -> None:
    lhs, rhs, difference = _sides(book, stmt)
    q = book.q[r.target]
    if not _closed_form(book, ws, work, row, stmt, ctx, r, notes):
        terms = _row_terms(book, stmt.target, difference)
        if terms * _bisection_rows(q, r) > MAX_BISECTION_TERMS:
            # every row of an in-sheet bisection repeats each term of the sums it goes through: a 36-month
            # plan's would write some 4,000 helper cells per answer. planner's answer, said so; the
            # verification below stays live.
            ws.number(row, 3, figure(q, r.display_value), book.answer_style(q, r))
            notes.insert(0, f"planner's answer, not live: a bisection in the sheet would repeat the {terms:,} "
                         "terms of its sums in every row (export again after editing)")
        else:
            _bisection(book, ws, work, row, stmt, ctx, r, difference)
    # verification: the condition's two sides at the answer, and lhs - rhs just below and above it
    top = work.block(f"check: {ir.question_text(stmt)} [{ctx.label}]")
    work.ws.note(top - 1, 1, "the sides at the answer, then just below and above it (a root changes the sign "
                 "of lhs - rhs)")
    table = LiveTable(book, work.ws, ctx, [stmt.target], [Output("lhs", lhs), Output("rhs", rhs)], top, left=1)
    table.header()
    answer = f"Solve!$C${row}"
    step = f"MAX(ABS({answer})*1E-9,1E-12)"
    delta = max(abs(figure(q, r.display_value)) * 1e-9, 1e-12)
    table.fill([[Live(f"={answer}", figure(q, r.display_value))], [Live(f"={answer}-{step}", figure(q, r.display_value) - delta)],
                [Live(f"={answer}+{step}", figure(q, r.display_value) + delta)]])
    a, b = work.ref(table.letter("out:0"), table.first), work.ref(table.letter("out:1"), table.first)
    below = [work.ref(table.letter(f"out:{k}"), table.first + 1) for k in (0, 1)]
    above = [work.ref(table.letter(f"out:{k}"), table.first + 2) for k in (0, 1)]
    (va, va_lo, va_hi), (vb, vb_lo, vb_hi) = table.values["out:0"], table.values["out:1"]
    ok = all(isinstance(v, float) for v in (va, vb, va_lo, vb_lo, va_hi, vb_hi))
    residual = va - vb if ok else "#NUM!"
    holds = ok and (abs(residual) <= 1e-9 * max(abs(va), abs(vb))
                    or np.sign(va_lo - vb_lo) * np.sign(va_hi - vb_hi) <= 0)
    unit = _unit_of(book, stmt)
    ws.text(row, CHECK, f"{difference_text(stmt.condition)} at the answer" + (f" ({unit})" if unit else ""))
    ws.formula(row, CHECK_VALUE, f"={a}-{b}", residual, book.number_style([1e-300]))
    ws.formula(row, HOLDS, f"=IFERROR(OR(ABS(H{row})<=1E-9*MAX(ABS({a}),ABS({b})),"
               f"SIGN({below[0]}-{below[1]})*SIGN({above[0]}-{above[1]})<=0),FALSE)", bool(holds))
    work.end(table)


def _unit_of(book: Book, stmt: ir.Solve) -> str:
    """The base unit of lhs - rhs (the residual is in base units)."""
    from ...language.units import canonical_text

    t = book.plan.analyzer.infer_strict(stmt.condition.operands[0])
    return canonical_text(t.dim) if t.dim is not None else ""


MAX_BISECTION_TERMS = 2_000  # helper cells an in-sheet bisection may write (rows x terms of its sums)


def _bisection_rows(q, r) -> int:
    ends = Domain.of(q).sample(r.value)
    return _halvings(float(ends[0]), float(ends[-1]), r.value)


def _row_terms(book: Book, target: str, f: ir.Expr) -> int:
    """Cells one row of a table varying ``target`` writes for the terms of the sums (products, range
    minima and maxima) in ``f`` and in the quantities between them (nested ones multiplied)."""
    from .tables import cone

    exprs = [f] + [book.q[n].definition.expr for n in cone(book, [target], [f])]
    return sum(aggregate_terms(book, e) for e in exprs)


def aggregate_terms(book: Book, e: ir.Expr) -> int:
    """The cells the aggregates over ranges in ``e`` write: each one's terms, times (1 + those of its
    body); user functions are looked into with their arguments, as the formulas expand them."""
    from ...compute.exact import constant
    from ...language.aggregates import Ranges
    from ...language.analysis import unit_of as unit

    model = book.model
    ranges = Ranges(model.quantities, model.functions, lambda u: unit(u, model.units), model.answers)

    total = 0
    stack = [(e, 1, {})]
    while stack:  # iterative: a long plan's expression must not recurse
        node, times, scope = stack.pop()
        if isinstance(node, ir.Aggregate) and node.values.kind != "list":
            try:
                n = ranges.terms(node, scope, ranges.step(node.values, lambda x: constant(model, x)).value)
            except PlanError:
                n = 1
            total += times * n
            inner = {**scope, node.var: ranges.var_interval(node, scope)}
            stack.append((node.body, times * n, inner))
            stack.extend((i, times, scope) for i in node.values.items)
            continue
        if isinstance(node, ir.Call) and node.func in model.functions:
            f = model.functions[node.func]
            inner = {p.name: (arg if arg is not None else p.default, scope) for p, arg in ir.bind_args(f, node)}
            stack.append((f.body, times, inner))
        stack.extend((c, times, scope) for c in ir.children(node))
    return total


def _halvings(lo: float, hi: float, answer: float) -> int:
    size = max(abs(answer), abs(lo), abs(hi)) if answer == 0 else abs(answer)
    need = math.log2(max(hi - lo, 1e-300) / max(size, 1e-300)) + 54
    return int(min(MAX_HALVINGS, max(MIN_HALVINGS, math.ceil(need))))


def _sign(v) -> Optional[float]:
    return None if not isinstance(v, float) or not math.isfinite(v) else float(np.sign(v))


def _bisection(book: Book, ws, work: Work, row: int, stmt, ctx, r, f: ir.Expr) -> None:
    """Bisection on lhs - rhs over the domain; columns lo, hi, then the table (midpoint, f).

    A probe where the formulas have no value in the engine (``EXP`` overflows,
    LibreOffice's ``^`` underflows; numpy gives inf or 0) is put on the side of
    planner's answer it lies on, so only a domain whose ends do not bracket a
    root gives ``#N/A``.
    """
    q = book.q[r.target]
    ends = Domain.of(q).sample(r.value)  # the ends of the domain the numeric route searches
    lo, hi = float(ends[0]), float(ends[-1])
    scale = float(scale_of(q))
    n = _halvings(lo, hi, r.value)
    top = work.block(f"bisection: {ir.question_text(stmt)} [{ctx.label}]")
    work.ws.note(top - 1, 1, f"{n} halvings of the domain; the first two rows are its ends; a point where the "
                 f"formulas have no value counts as lying on its side of planner's answer ({r.display_value:.15g})")
    table = LiveTable(book, work.ws, ctx, [stmt.target], [Output("lhs - rhs", f)], top, left=3)
    for col, label in ((1, "lo"), (2, "hi")):
        work.ws.text(top, col, label, HEADER)
        work.ws.text(top + 1, col, unit_of(q))
    table.header()
    first = table.first
    x, fx = table.letter("in:" + stmt.target), table.letter("out:0")
    answer = figure(q, r.display_value)
    # planner runs the sheet's bisection row by row, for the cached values
    def f_at(v: float):
        point = dict(book.env(ctx, {stmt.target: v * scale}))
        point[stmt.target] = v * scale
        return cached(book.value_of(f, point))

    xs = [lo / scale, hi / scale]
    fs = [f_at(xs[0]), f_at(xs[1])]
    s_lo, s_hi = _sign(fs[0]), _sign(fs[1])
    sign0 = s_lo if s_lo is not None else (-s_hi if s_hi is not None else None)

    def low_side(at: float, value) -> bool:
        s = _sign(value)
        if s is None or sign0 is None:
            return at < answer
        return s == sign0

    lows, highs = [], []
    for k in range(n):
        if k == 0:
            a, b = xs[0], xs[1]
        else:
            side = low_side(xs[-1], fs[-1])
            moves = side or (isinstance(fs[-1], float) and fs[-1] == 0)
            a = xs[-1] if moves else lows[-1]
            b = highs[-1] if side else xs[-1]
        lows.append(a)
        highs.append(b)
        xs.append((a + b) / 2)
        fs.append(f_at(xs[-1]))
    rows = [[xs[0]], [xs[1]]] + [[Live(f"=(A{ROW}+B{ROW})/2", v)] for v in xs[2:]]
    table.fill(rows)
    start = first + 2
    style = book.number_style(lows + highs, q.unit_text)
    work.ws.formula(start, 1, f"={x}{first}", lows[0], style)
    work.ws.formula(start, 2, f"={x}{first + 1}", highs[0], style)
    answer_text = number(answer)

    def low_formula(at: str, value: str, sign: str) -> str:
        """TRUE when the probe ``at`` lies on the low end's side of the root."""
        return f"IFERROR(SIGN({value})={sign},{at}<{answer_text})"

    sign = f"IFERROR(SIGN(${fx}${first}),-SIGN(${fx}${first + 1}))"
    for k in range(start + 1, table.last + 1):
        side = low_formula(f"{x}{k - 1}", f"{fx}{k - 1}", sign)
        moves = f"OR({side},IFERROR({fx}{k - 1}=0,FALSE))"  # a zero closes the bracket
        work.ws.formula(k, 1, f"=IF({moves},{x}{k - 1},A{k - 1})", lows[k - start], style)
        work.ws.formula(k, 2, f"=IF({side},B{k - 1},{x}{k - 1})", highs[k - start], style)
    f_lo, f_hi = work.ref(fx, first), work.ref(fx, first + 1)
    sign = f"IFERROR(SIGN({f_lo}),-SIGN({f_hi}))"
    ends_text = (f"{low_formula(work.ref(x, first), f_lo, sign)}="
                 f"{low_formula(work.ref(x, first + 1), f_hi, sign)}")
    ws.formula(row, 3, f"=IF({ends_text},NA(),{work.ref(x, table.last)})", answer,
               book.number_style([answer], q.unit_text))
    work.end(table)


# ---- integer thresholds ---------------------------------------------------------------

def _threshold(book: Book, ws, work: Work, row: int, stmt: ir.Solve, ctx, r, notes: list) -> None:
    q = book.q[r.target]
    cond = stmt.condition
    lo, hi = Domain.of(q).integers()
    if not _closed_form(book, ws, work, row, stmt, ctx, r, notes):
        terms = _row_terms(book, stmt.target, cond)
        if terms * (_integer_halvings(book, stmt, r, lo, hi) + 1) > MAX_BISECTION_TERMS:
            # as for a root: every row of the bisection would repeat each term of the sums the condition
            # goes through (a monthly plan: thousands of helper cells an answer). planner's answer, said
            # so; the check below (at the answer and its neighbour) stays live.
            ws.number(row, 3, figure(q, r.display_value), book.answer_style(q, r))
            notes.insert(0, f"planner's answer, not live: a bisection in the sheet would repeat the {terms:,} "
                         "terms of its sums in every row (export again after editing)")
        else:
            _integer_bisection(book, ws, work, row, stmt, ctx, r, cond, lo, hi)
    step = -1 if stmt.mode == "min" else 1
    n = round(r.display_value)
    top = work.block(f"check: {ir.question_text(stmt)} [{ctx.label}]")
    table = LiveTable(book, work.ws, ctx, [stmt.target], [Output("holds", cond, is_bool=True)], top, left=1)
    table.header()
    table.fill([[Live(f"=Solve!$C${row}", r.display_value)], [Live(f"=Solve!$C${row}{step:+d}", n + step)]])
    at_n = work.ref(table.letter("out:0"), table.first)
    at_nb = work.ref(table.letter("out:0"), table.first + 1)
    nb = work.ref(table.letter("in:" + stmt.target), table.first + 1)
    outside = []
    if stmt.mode == "min" and lo is not None:
        outside.append((f"{nb}<{lo}", n + step < lo))
    if stmt.mode == "max" and hi is not None:
        outside.append((f"{nb}>{hi}", n + step > hi))
    holds_n, holds_nb = table.values["out:0"]
    head = literal(f"{stmt.target} {'-' if step < 0 else '+'} 1 = ")
    shown = f"{stmt.target} {'-' if step < 0 else '+'} 1 = {n + step}"
    # outside the domain the neighbour need not fail (nor even evaluate): IF short-circuits
    if outside:
        test, is_out = outside[0]
        neighbour, fails = f"IF({test},TRUE,NOT({at_nb}))", True if is_out else holds_nb is False
        label = f'={head}&{nb}&IF({test},{literal(" is outside the domain")},{literal(" fails")})'
        shown += " is outside the domain" if is_out else " fails"
    else:
        neighbour, fails = f"NOT({at_nb})", holds_nb is False
        label = f'={head}&{nb}&{literal(" fails")}'
        shown += " fails"
    ws.formula(row, HOLDS, f"=IFERROR(AND({at_n},{neighbour}),FALSE)", holds_n is True and fails)
    ws.formula(row, CHECK, label, shown)
    ws.formula(row, CHECK_VALUE, f"=IFERROR({neighbour},FALSE)", fails)
    work.end(table)


def _integer_ends(stmt, r, lo, hi) -> tuple[int, int]:
    """The two ends an integer bisection starts from: one where the condition must hold, one where it fails."""
    n = round(r.display_value)
    reach = max(8, 3 * abs(n))  # an open end: room for the answer to triple (far ends may overflow)
    if stmt.mode == "min":
        return (hi if hi is not None else n + reach), ((lo - 1) if lo is not None else n - reach)
    return (lo if lo is not None else n - reach), ((hi + 1) if hi is not None else n + reach)


def _integer_halvings(book: Book, stmt, r, lo, hi) -> int:
    good0, bad0 = _integer_ends(stmt, r, lo, hi)
    return max(2, math.ceil(math.log2(abs(good0 - bad0) + 1)) + 2)


def _integer_bisection(book: Book, ws, work: Work, row: int, stmt, ctx, r, cond, lo, hi) -> None:
    """Smallest (largest) integer where the condition holds: bisection over the integers.

    ``good`` always satisfies the condition, ``bad`` never does (or lies
    just outside the domain); the midpoint ``INT((good + bad) / 2)`` halves
    the gap until it is 1, and ``good`` is the answer.
    """
    q = book.q[r.target]
    n = round(r.display_value)
    good0, bad0 = _integer_ends(stmt, r, lo, hi)
    steps = _integer_halvings(book, stmt, r, lo, hi)
    top = work.block(f"integer bisection: {ir.question_text(stmt)} [{ctx.label}]")
    work.ws.note(top - 1, 1, f"{steps} halvings between {bad0} (fails or outside) and {good0} (must hold); "
                 "the first row checks that end; where the condition has no value (a formula overflows or "
                 f"underflows) it counts as holding on planner's side of {n}")
    table = LiveTable(book, work.ws, ctx, [stmt.target], [Output("holds", cond, is_bool=True)], top, left=3)
    for col, label in ((1, "good"), (2, "bad")):
        work.ws.text(top, col, label, HEADER)
    table.header()
    first = table.first
    x, c = table.letter("in:" + stmt.target), table.letter("out:0")
    side = ">=" if stmt.mode == "min" else "<="
    scale = float(scale_of(q))

    def holds_at(v: int):
        """The condition at ``v``, or None where the engine shows an error (an operand not finite)."""
        point = dict(book.env(ctx, {stmt.target: v * scale}))
        point[stmt.target] = v * scale
        if _broken(book, cond, point, 1)[0]:
            return None
        return bool(book.value_of(cond, point))

    def holds(at: int, value) -> bool:
        return value if isinstance(value, bool) else (at >= n if side == ">=" else at <= n)

    xs, hs = [good0], [holds_at(good0)]
    goods, bads = [good0], [bad0]
    xs.append((good0 + bad0) // 2)
    hs.append(holds_at(xs[-1]))
    for _ in range(steps - 1):
        a, b = goods[-1], bads[-1]
        if abs(a - b) <= 1:
            pass
        elif holds(xs[-1], hs[-1]):
            a = xs[-1]
        else:
            b = xs[-1]
        goods.append(a)
        bads.append(b)
        xs.append((a + b) // 2)
        hs.append(holds_at(xs[-1]))
    rows: list[list] = [[good0]] + [[Live(f"=INT((A{ROW}+B{ROW})/2)", v)] for v in xs[1:]]
    table.fill(rows)
    work.ws.number(first + 1, 1, good0)
    work.ws.number(first + 1, 2, bad0)

    def holds_formula(at: str, value: str) -> str:
        return f"IFERROR({value},{at}{side}{n})"

    for k in range(first + 2, table.last + 1):
        i = k - first - 1
        done = f"ABS(A{k - 1}-B{k - 1})<=1"
        h = holds_formula(f"{x}{k - 1}", f"{c}{k - 1}")
        work.ws.formula(k, 1, f"=IF({done},A{k - 1},IF({h},{x}{k - 1},A{k - 1}))", goods[i])
        work.ws.formula(k, 2, f"=IF({done},B{k - 1},IF({h},B{k - 1},{x}{k - 1}))", bads[i])
    end = holds_formula(work.ref(x, first), work.ref(c, first))
    ws.formula(row, 3, f"=IF(NOT({end}),NA(),{work.ref('A', table.last)})", figure(q, r.display_value),
               book.answer_style(q, r))
    work.end(table)


# ---- maximize / minimize ----------------------------------------------------------------

def _optimize(book: Book, ws, work: Work, row: int, stmt: ir.Optimize, ctx, r, notes: list) -> None:
    from ...questions.ranges import expand

    q = book.q[stmt.over]
    points = expand(book.plan, stmt.over, stmt.values, stmt.over_span)
    dom = Domain.of(q)
    values = [v for v in points.exact_values()
              if dom.contains(v) and not (q.integer and (v / scale_of(q)).denominator != 1)]
    # planner skips a candidate that breaks any constraint, not only the bounds filtered above
    when = _constraints_on(book, stmt.over)
    fn = "MAX" if stmt.sense == "max" else "MIN"
    objective = stmt.objective
    unit, scale = objective_unit(book.plan, stmt.objective, book.plan.analyzer.infer_strict(stmt.objective))
    scale = cell_scale(scale, unit)
    answer_style = book.number_style([figure(q, r.display_value)], q.unit_text)
    optimum_style = book.number_style([percent_figure(unit, r.optimum_display)], unit)
    best = "largest" if stmt.sense == "max" else "smallest"
    ws.text(row, CHECK, titled(f"{stmt.objective.span.flat} at the best {stmt.over}", unit))
    if len(values) > MAX_SWEEP_ROWS or not values or _over_periods(book, objective):
        ws.number(row, 3, figure(q, r.display_value), answer_style)
        ws.number(row, CHECK_VALUE, percent_figure(unit, r.optimum_display), optimum_style)
        ws.number(row, HOLDS, True)
        notes.insert(0, "planner's answer, not live: its objective reduces a series, whose rows compute the inputs "
                     "as they are (export again after editing)" if values and len(values) <= MAX_SWEEP_ROWS else
                     f"{len(values):,} candidates: too many for a live table; the answer is planner's value")
        return
    key = id(stmt)
    if key not in work.optimize:
        sheet = book.create_sheet(sheet_title(book, f"{'Max' if stmt.sense == 'max' else 'Min'} {stmt.over}"),
                                  work=True)
        sheet.text(1, 1, ir.question_text(stmt), TITLE, overflow=True)
        sheet.note(2, 1, f"The objective at each candidate; the Solve sheet picks the {best}.")
        work.optimize[key] = (sheet, 5)
    sheet, top = work.optimize[key]
    sheet.label(top - 1, 1, ctx.label if ctx.scenario or ctx.overrides else "base (the plan as written)")
    table = LiveTable(book, sheet, ctx, [stmt.over],
                      [Output(stmt.objective.span.flat, objective, scale, unit, guard=True, when=when)],
                      top, left=1)
    table.header()
    table.fill([[float(v / scale_of(q))] for v in values])
    xs = f"{sheet_ref(sheet.title)}!{table.range('in:' + stmt.over)}"
    ys = f"{sheet_ref(sheet.title)}!{table.range('out:0')}"
    if _near_ties(table.values["out:0"], stmt.sense):
        # Candidates whose objectives agree to 1e-9 are told apart by planner in exact arithmetic; an
        # engine's MATCH of the float MAX picks one of them by rounding (LibreOffice and Gnumeric
        # differ), so the answer is planner's, said so, and the table beside it stays live.
        ws.number(row, 3, figure(q, r.display_value), answer_style)
        notes.insert(0, f"the best {stmt.over}s agree to 1e-9 in floats: planner's exact choice (not live)")
    else:
        ws.formula(row, 3, f"=INDEX({xs},MATCH({fn}({ys}),{ys},0))", figure(q, r.display_value), answer_style)
    ws.formula(row, CHECK_VALUE, f"={fn}({ys})", percent_figure(unit, r.optimum_display), optimum_style)
    ws.formula(row, HOLDS, f"=ISNUMBER(C{row})", True)
    charted = table.rows >= 2
    if charted:
        xcol, ycol = table.col["in:" + stmt.over], table.col["out:0"]
        sheet.charts.append(Chart(f"{stmt.objective.span.flat} by {stmt.over} — {ctx.label}",
                                  titled(stmt.over, q.unit_text), titled(stmt.objective.span.flat, unit),
                                  [Series(stmt.objective.span.flat, (sheet.title, table.first, xcol, table.last, xcol),
                                          (sheet.title, table.first, ycol, table.last, ycol))],
                                  top, table.left + table.width + 1))
    work.optimize[key] = (sheet, max(table.last, top + (Chart.ROWS if charted else 0)) + 4)


def _near_ties(objective: Sequence, sense: str) -> bool:
    """Whether more than one candidate's objective lies within 1e-9 (relative) of the best: where planner
    decides in exact arithmetic (questions.optimum.NEAR_TIE) and the engines' floats may not agree."""
    from ...questions.optimum import NEAR_TIE

    ys = [float(v) for v in objective if isinstance(v, (int, float)) and not isinstance(v, bool)
          and math.isfinite(float(v))]
    if len(ys) < 2:
        return False
    best = max(ys) if sense == "max" else min(ys)
    return sum(1 for y in ys if abs(y - best) <= NEAR_TIE * max(abs(best), 1e-300)) > 1


def _constraints_on(book: Book, name: str) -> Optional[ir.Expr]:
    """Every constraint that changes with input ``name``, as one condition (None: there is none)."""
    from ...questions.sweep import default_show

    moving = {name, *default_show(book.plan, [name])}
    conditions = [c.condition for _, c in book.plan._constraints
                  if any(isinstance(n, ir.Name) and n.name in moving for n in ir.walk(c.condition))]
    if not conditions:
        return None
    out = conditions[0]
    for c in conditions[1:]:
        out = ir.Logic(ir.BoolOp.AND, out, c, c.span)
    return out

