"""The plan's IR to Excel formulas: one small method per IR node class, the plan as its author wrote it.

Each method returns a :class:`Piece`: the formula text of the node, how tightly it binds (for
parentheses) and its *scale*, the base units one unit of the text stands for. A reference is its cell
or defined name as the cell holds its figure (``horizon`` in months: scale 2,628,000 s), a literal is
written as typed with its unit's scale (``12 month`` is ``12`` at 2,628,000 s), and the scales combine
as the units do (a product multiplies them), so ``weight_bytes / hbm_bandwidth`` in GB over TB/s is
already in ms and needs no factor at all. A conversion is written only where two scales meet that
differ (a sum, a comparison, a plain argument such as an exponent) and once at the end, into the
cell's own display unit. Built-in functions are spelled from their records
(:data:`planner.language.functions.FUNCTIONS`: ``excel``/``sheet`` and which arguments keep the
result's scale); user functions are expanded inline, their parameters bound to the printed arguments,
as every generator over the IR does, but for a function of a range's number that sums over a range
(``cash(m) = start_cash + sum(flow(k) for k in 1 month..m)``): that is one row of the Cash flows sheet,
its value at 1, 2, 3 ... written once, and a call reads its cell (``INDEX(row,1,months)``).

A sum (product, max, min, count, first) over a range writes its terms as one row of the Cash flows
sheet, a column per value of the range (a month, a year), the range's variable being its column's
number in the header row in the range's own unit (a month range counts months, ``D$3``); the figure
adds up its row. A sum inside a row's term over the same range up to the row's variable is the running
total of its own row (``SUM('Cash flows'!$D$9:I$9)``); a sum of terms kept to a window of the range
(``if(k > m - term, pay(k), 0)``) a SUMIFS over its row of terms.

Series over periods print on the sheet of periods (:class:`PeriodRows`, :mod:`.periods`): a series'
cell is its row in the column being printed, ``previous`` the cell to its left (the first column: its
start), ``period`` the column's number in the periods' row, a table of values its item; a reduction is
a formula over a row (``MIN``, ``MAX``, ``SUM``, ``AVERAGE``; ``at`` ``INDEX``/``MATCH``), over a working
row of its terms where it reduces an expression or keeps to a condition; ``never`` is ``#N/A``
(``x == never`` is ``ISNA(x)``).

Excel's grammar differs from the plan's where it matters: unary minus binds tighter than ``^``
(``=-2^2`` is 4) and ``^`` is left-associative, so negations and powers are parenthesised as operands;
a power whose exponent moves is 0 where it falls below the smallest double
(``IF(n*LN(0.5)<-708,0,0.5^n)``: numpy gives 0, LibreOffice's ``^`` ``#NUM!``); numbers are exact to 15
significant digits; a ceiling is ``-INT(-(x))``; only functions Excel and LibreOffice Calc 7.4 share.
Nothing here imports SymPy.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Callable, Mapping, NamedTuple, Optional

from ...language import ir
from ...language.aggregates import Interval
from ...language.errors import PlanError
from ...language.text import decimal_places

LIMIT = 8192  # characters in a cell formula, the leading "=" included
MAX_TERM_CELLS = 100_000  # cells the terms of one block may take (each costs about 0.3 ms to write)
SPILL = LIMIT // 2 - 16  # a part longer than this goes to a helper cell (two of them fit in one formula)
MAX_NESTING = 64  # levels of nested function calls
MAX_ARGS = 255  # arguments of one function call
DIGITS = 15  # significant digits Excel keeps in a number

# Excel precedence levels, loosest first (for deciding parentheses).
CMP, ADD, NEG, MUL, POW, ATOM = 10, 20, 30, 40, 50, 60

FLOW_FIRST = 4  # the Cash flows sheet's first column of terms (D): the label, the term and its unit before it
FLOW_HEADER = 3  # the Cash flows sheet's row of column numbers (1, 2, 3 ...), which the terms use as their index
ROW_TERMS = 16_384 - FLOW_FIRST + 1  # terms a row holds (Excel's last column is XFD)

# Excel's (and LibreOffice's) range: no subnormals, nothing from 1E+308 on
TINY = Fraction(2.2250738585072014e-308)
HUGE = Fraction(9.99999999999999e307)


class UnsupportedFormula(PlanError):
    """A construct with no faithful Excel formula."""

    family = "excel"


class NotWritten(Exception):
    """What this generator does not write (yet): a term a row cannot hold (it uses an outer range's
    variable otherwise than as a running total's end), a range longer than a row, a formula past
    Excel's limits. The workbook writes that figure by its other route."""


class _Deeper(NotWritten):
    """A term uses the variables of two ranges around it besides its own: the range around it prints
    its terms once per value of its variable (:meth:`Generator._each`)."""


class _Requalify(Exception):
    """A part of the formula must go to a helper cell, which refers to cells by sheet: print it again so."""


class Piece(NamedTuple):
    """A printed node: its text, how tightly it binds, its scale (base units per unit of the text;
    None for a condition) and, for a literal, its exact value (folded into a conversion)."""

    text: str
    prec: int
    scale: Optional[Fraction]
    value: Optional[Fraction] = None


class Bound(NamedTuple):
    """A name bound inside a formula: a user function's parameter or a listed aggregate's item (``expr``
    in ``env``, printed where it is used: a row's cells refer to other sheets), or a range's variable
    (``piece``, ``expr`` None)."""

    piece: Optional[Piece]
    expr: Optional[ir.Expr]
    env: Mapping
    scope: object  # what :class:`planner.language.aggregates.Ranges` knows of it
    of: object = None  # a variable's type, or the aggregate whose variable it is (its range's type)


# ---- numbers ---------------------------------------------------------------------------------

def _decimal(value: Fraction) -> Optional[str]:
    """Exact decimal text (``4.15``, ``1E+12``, ``1E-12``) if it fits in 15 digits, else None."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    places = decimal_places(value.denominator)  # value * 10**places is an integer
    if places is None:
        return None
    digits = value.numerator * (10 ** places // value.denominator)
    if digits == 0:
        return "0"
    exponent = -places
    while digits % 10 == 0:
        digits //= 10
        exponent += 1
    text = str(digits)
    if len(text) > DIGITS:
        return None
    point = len(text) + exponent  # position of the decimal point from the left
    if 0 <= exponent < 6:
        return sign + text + "0" * exponent
    if exponent < 0 and point > -5:
        if point > 0:
            return sign + text[:point] + "." + text[point:]
        return sign + "0." + "0" * (-point) + text
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    e = point - 1
    return f"{sign}{mantissa}E{'+' if e >= 0 else '-'}{abs(e)}"


def _float_text(v: float) -> str:
    if v != v or v in (float("inf"), float("-inf")):
        raise UnsupportedFormula(f"Excel has no literal for {v}")
    if abs(v) < TINY:
        return "0"
    if abs(v) > HUGE:
        raise UnsupportedFormula(f"{v:.3g} is beyond the largest number Excel holds")
    text = repr(v).upper()
    if "E" in text:
        mantissa, _, exp = text.partition("E")
        text = f"{mantissa}E{'+' if not exp.startswith('-') else '-'}{exp.lstrip('+-')}"
    if text.endswith(".0"):
        text = text[:-2]
    return text


def number(value: Fraction | int | float) -> str:
    """A constant as Excel formula text: exact where 15 digits allow (``4.15``, ``1E+12``), else a
    quotient of two whole numbers (``1/3``), else the nearest double."""
    if isinstance(value, float):
        return _float_text(value)
    value = Fraction(value)
    if value and abs(value) < TINY:
        return "0"  # below the smallest double: 0, as numpy gives (a literal 1E-400 is #VALUE!)
    if abs(value) > HUGE:
        raise UnsupportedFormula("a constant beyond the largest number Excel holds (about 1E+308)")
    text = _decimal(value)
    if text is not None:
        return text
    if len(str(abs(value.numerator))) <= DIGITS and len(str(value.denominator)) <= DIGITS:
        return f"{value.numerator}/{value.denominator}"
    return _float_text(value.numerator / value.denominator)


def cached(value, scale: Fraction | float = 1):
    """A value as a cell's cached result: a bool, a finite float in the display unit, or the error text
    an engine shows for what is not finite (planner reports those points as issues)."""
    if value is None:
        return ""
    if isinstance(value, bool) or type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    if isinstance(value, str):
        return value
    v = float(value)
    if v != v:
        return "#NUM!"
    if v in (float("inf"), float("-inf")):
        return "#DIV/0!"
    return v / float(scale) if scale != 1 else v


def constant(value: Fraction, scale: Fraction = Fraction(1)) -> Piece:
    """A literal: ``value`` units of ``scale``."""
    text = number(value)
    prec = NEG if text.startswith("-") else (MUL if "/" in text else ATOM)
    return Piece(text, prec, scale, Fraction(value))


def call(name: str, args: list[str]) -> str:
    """``NAME(a,b,...)``; more than Excel's 255 arguments nest (MAX, MIN, AND, OR are associative)."""
    while len(args) > MAX_ARGS:
        args = [f"{name}({','.join(args[i:i + MAX_ARGS])})" for i in range(0, len(args), MAX_ARGS)]
    return f"{name}({','.join(args)})"


def nesting(text: str) -> int:
    """How deeply function calls nest in a formula (Excel allows 64)."""
    depth = deepest = 0
    stack: list[bool] = []
    quoted = False
    for i, ch in enumerate(text):
        if ch == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "(":
            opened = i > 0 and (text[i - 1].isalnum() or text[i - 1] in "._")
            stack.append(opened)
            depth += opened
            deepest = max(deepest, depth)
        elif ch == ")" and stack:
            depth -= stack.pop()
    return deepest


def col_letter(n: int) -> str:
    """1 -> A, 28 -> AB."""
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def wrap(p: Piece, level: int) -> str:
    """``p``'s text, in parentheses unless it binds tighter than ``level``."""
    return p.text if p.prec > level else f"({p.text})"


def convert(p: Piece, scale: Fraction) -> Piece:
    """``p`` written in ``scale``: its text times the factor between the two (exact; a literal folds it)."""
    if p.scale is None or p.scale == scale:
        return p
    factor = p.scale / scale
    if p.value is not None:
        return constant(p.value * factor)
    if factor.numerator == 1:
        return Piece(f"{wrap(p, NEG - 1)}/{number(factor.denominator)}", MUL, scale)
    if factor.denominator == 1:
        return Piece(f"{wrap(p, NEG - 1)}*{number(factor.numerator)}", MUL, scale)
    return Piece(f"{wrap(p, NEG - 1)}*{number(factor.numerator)}/{number(factor.denominator)}", MUL, scale)


def common(pieces: list[Piece], want: Optional[Fraction]) -> Optional[Fraction]:
    """The scale pieces that meet (a sum's terms, a comparison's sides) are written in: the figure's
    own where one of them has it, else the first that is not a literal's."""
    scales = [p.scale for p in pieces if p.value is None and p.scale is not None]
    if want is not None and want in scales:
        return want
    return scales[0] if scales else (pieces[0].scale if pieces else None)


_RELATIONS = {ir.CmpOp.EQ: "=", ir.CmpOp.NE: "<>", ir.CmpOp.LT: "<", ir.CmpOp.LE: "<=", ir.CmpOp.GT: ">",
              ir.CmpOp.GE: ">=", ir.CmpOp.APPROX: "="}
_FLIPPED = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}  # `x < k` is `k > x`
_IDENTITY = {ir.AggOp.SUM: "0", ir.AggOp.COUNT: "0", ir.AggOp.PRODUCT: "1"}  # a term beyond the range's end
_ASSOCIATIVE = frozenset({"MAX", "MIN", "SUM", "PRODUCT", "AND", "OR"})  # F(a, b, c) is F(F(a, b), c)
_TOTAL = {ir.AggOp.SUM: "SUM", ir.AggOp.COUNT: "SUM", ir.AggOp.PRODUCT: "PRODUCT", ir.AggOp.MAX: "MAX",
          ir.AggOp.MIN: "MIN", ir.AggOp.FIRST: "MIN"}


class _Level(NamedTuple):
    """A range whose row (or block) of terms is being printed."""

    var: str  # the placeholder its variable prints as in the terms
    text: str  # the variable as its row's cells print it (over the column placeholder)
    column: str  # the placeholder each cell of the row replaces with its column's letter
    start: str  # the range's start and step as printed (a running total must share them)
    step: Fraction
    terms: int  # the most values the range holds
    count: int  # the cells of its row
    at: object  # the variable's base value in each cell (a numpy array; None: no cached values)


class PeriodRows:
    """Where the series live: a row per series on a sheet of periods, a column per period.

    ``rows``: series name -> its row; ``first``: the first period's column; ``count``: the periods;
    ``header``: the row of the periods' values (in the periods' unit, ``scale`` base units each);
    ``sheet``: the sheet as a reference; ``add_row(cells, label)`` writes a working row of formulas
    (a reduction's terms) and returns its row. ``col``: the column being printed (None: a figure)."""

    def __init__(self, sheet: str, rows: dict, first: int, count: int, header: int, scale: Fraction,
                 add_row: Callable) -> None:
        self.sheet, self.rows, self.first, self.count, self.header = sheet, rows, first, count, header
        self.scale, self.add_row = scale, add_row
        self.col: Optional[int] = None
        self.suffix = ""  # said after a working row's label (which block of rows it reduces)
        self.at: Optional[list] = None  # each period as an IR number (planner's values of a working row's terms)
        self._made: dict[tuple, int] = {}  # working rows written, by their cells

    def span(self, row: int) -> str:
        """A row's periods as a range, qualified (a figure elsewhere reads it)."""
        return f"{self.sheet}!${col_letter(self.first)}${row}:${col_letter(self.first + self.count - 1)}${row}"

    def row(self, cells: list, label: str, held: Optional[list] = None) -> int:
        """A working row of ``cells`` (their cached values ``held``), written once."""
        key = tuple(cells)
        if key not in self._made:
            self._made[key] = self.add_row(cells, label + self.suffix, held or [""] * len(cells))
        return self._made[key]


class Generator(ir.Visitor):
    """The Excel formula of an IR expression.

    ``refs``: the cell or defined name of every quantity and answer a formula may use, as a
    :class:`Piece` (scale: base units per unit of the cell's figure; None for TRUE/FALSE).
    ``row(cells, values, label, written, unit=..., at=...)`` writes the terms of a range as one row of the
    Cash flows sheet (``unit``: its cells' unit, the term's dimension as ``analyzer`` types it, named at
    their scale; ``at``: its variable's values where they are not the header's numbers) and returns (the
    row as a range, (sheet, line)); ``values`` (name -> base value of every
    quantity and answer) gives the terms' cached results (``row(..., shared=True)``: a function's row,
    which every figure reading it shares). Without ``row`` an aggregate over a range
    is not written here. ``spill(formula, value)`` writes a part of a formula longer than Excel's
    8,192 characters (or deeper than its 64 levels) into a helper cell and returns its reference; the
    part's references are ``row_refs`` (qualified).
    """

    def __init__(self, model, refs: Mapping[str, Piece], row: Optional[Callable] = None,
                 values: Optional[Mapping[str, object]] = None, where: str = "",
                 row_refs: Optional[Mapping[str, Piece]] = None, spill: Optional[Callable] = None,
                 periods: Optional[PeriodRows] = None, split: int = SPILL, analyzer=None) -> None:
        from ...language.aggregates import Ranges
        from ...language.analysis import unit_of

        self.model = model
        self.refs = refs
        self.row_refs = refs if row_refs is None else row_refs  # what a row's cells (on their own sheet) use
        self.row = row
        self.analyzer = analyzer
        self.periods = periods  # the sheet of series (a plan with periods)
        self.spill = spill  # spill(formula, value) writes a helper cell (sheet-qualified refs) and returns it
        self.split = split  # characters of a part that goes to a helper cell (the Solve sheet's: fewer)
        self.values = values
        self.where = where
        self.units = model.units
        self.unit_of = lambda u: unit_of(u, model.units)
        self.ranges = Ranges(model.quantities, model.functions, self.unit_of, model.answers)
        self._open: list[_Level] = []
        self._columns = 0  # placeholders made, one per row printed
        self._rows: dict[tuple, tuple] = {}  # rows written, by their cells
        self._programs: dict[tuple, object] = {}  # the compiled terms of a range (a block's rows share one)
        self._written = 0  # cells of terms written
        self._horizons: dict[Fraction, int] = {}  # the largest whole number of a unit the plan's ranges reach
        self._summing: Optional[set] = None  # the user functions written as a row each (:meth:`_of_numbers`)
        self._shared = False  # printing a function's row: its rows serve every figure (:meth:`_row_of_function`)

    # ---- the door -------------------------------------------------------------------------------
    def formula(self, e: ir.Expr, scale: Optional[Fraction] = Fraction(1)) -> str:
        """``=...`` for ``e`` in ``scale`` (base units per unit of the cell's figure; None for a condition).
        On a thread with a big stack (:func:`planner.language.limits.deep`): formulas nest deep."""
        from ...language.limits import deep

        return deep(self._formula, e, scale)

    def _formula(self, e: ir.Expr, scale: Optional[Fraction]) -> str:
        try:
            p = self.expr(e, {}, scale)
        except _Requalify:  # a part goes to a helper cell: the whole printed over qualified references
            self.refs = self.row_refs
            p = self.expr(e, {}, scale)
        if scale is not None and p.scale is not None:
            p = convert(p, scale)
        text = "=" + p.text
        if len(text) > LIMIT or nesting(text) > MAX_NESTING:
            raise NotWritten(f"a formula of {len(text)} characters and {nesting(text)} nested calls")
        return text

    def expr(self, e: ir.Expr, env: Mapping[str, Bound], want: Optional[Fraction] = None) -> Piece:
        p = self.visit(e, env, want)
        if self.spill is not None and (len(p.text) > self.split or p.text.count("(") > MAX_NESTING // 2
                                       and nesting(p.text) > MAX_NESTING // 2):
            return self._helper(e, env, want, p)
        return p

    def _tree(self, name: str, texts: list[str], env, scale: Optional[Fraction], part: Callable) -> str:
        """``NAME(texts)``; where that is longer than a part may be and ``NAME`` is associative (MAX, MIN,
        SUM, PRODUCT, AND, OR), its arguments in groups, each group's ``NAME`` in a helper cell, up to a
        tree of them (a MAX of MAXes): Excel limits one cell's formula, not the tree. ``part(indexes)``:
        the call over those arguments as an IR node (for the helper cell's cached value)."""
        text = call(name, texts)
        if self.spill is None or name not in _ASSOCIATIVE or len(text) <= self.split:
            return text
        if self.refs is not self.row_refs:
            raise _Requalify
        members = [[i] for i in range(len(texts))]  # the arguments each text stands for
        room = self.split - len(name) - 2
        while len(call(name, texts)) > self.split:
            groups: list[list[int]] = [[]]
            size = 0
            for k, text in enumerate(texts):
                if groups[-1] and size + len(text) + 1 > room:
                    groups.append([])
                    size = 0
                groups[-1].append(k)
                size += len(text) + 1
            if len(groups) == len(texts):
                raise NotWritten(f"a call of {len(texts)} arguments past what a helper cell holds")
            new_texts, new_members = [], []
            for g in groups:
                idx = [i for k in g for i in members[k]]
                if len(g) == 1:
                    new_texts.append(texts[g[0]])
                else:
                    new_texts.append(self._helper(part(idx), env, scale, Piece(call(name, [texts[k] for k in g]),
                                                                               ATOM, scale)).text)
                new_members.append(idx)
            texts, members = new_texts, new_members
        return call(name, texts)

    def _helper(self, e: ir.Expr, env, want, p: Piece) -> Piece:
        """``e`` moved into a helper cell (printed over qualified references, its value cached); a part of
        a range's term, into a row of its own across the range's columns, the term reading its column."""
        if "\x00" in p.text:
            level = next((x for x in reversed(self._open) if x.var in p.text or x.column in p.text), None)
            if self.row is None or level is None or len(p.text) >= LIMIT or \
                    "\x00" in p.text.replace(level.var, "").replace(level.column, ""):
                return p  # (the term is too long for its cell: refused where it is written)
            text = p.text.replace(level.var, level.text)
            cells = ["=" + text.replace(level.column, col_letter(FLOW_FIRST + k)) for k in range(level.count)]
            held = lambda: self._held_value(e, env, level, 1 if p.scale is None else p.scale)  # noqa: E731
            _, (sheet, line) = self._write_row(cells, held, f"{self.where} (a part of a term)", e.span.flat,
                                               self._unit(e, env, p.scale))
            return Piece(f"{sheet}!{level.column}${line}", ATOM, p.scale)
        if self.refs is not self.row_refs:
            raise _Requalify
        if len(p.text) >= LIMIT:
            raise NotWritten(f"a part of {len(p.text):,} characters that no helper cell holds")
        value = ""
        if self.values is not None:
            try:
                value = cached(self._value(e, env), 1 if p.scale is None else p.scale)
            except (AssertionError, KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
                value = ""
        return Piece(self.spill("=" + p.text, value), ATOM, p.scale)

    # ---- atoms ----------------------------------------------------------------------------------
    def visit_Number(self, e: ir.Number, env, want) -> Piece:
        if e.unit is None:
            return constant(e.value)
        unit = self.unit_of(e.unit)
        if all(self.units.lookup(f.name).dim.dimensionless for f in e.unit.factors):
            return constant(e.value * unit.scale)  # a count or a percentage: its value (50% is 0.5)
        return constant(e.value, unit.scale)

    def visit_Bool(self, e: ir.Bool, env, want) -> Piece:
        return Piece("TRUE" if e.value else "FALSE", ATOM, None)

    def visit_Name(self, e: ir.Name, env, want) -> Piece:
        bound = env.get(e.name)
        if bound is not None:
            return bound.piece if bound.expr is None else self.expr(bound.expr, bound.env, want)
        if self.periods is not None and e.name in self.periods.rows:
            return self._series_cell(e.name, self.periods.col, e.span)
        try:
            return self.refs[e.name]
        except KeyError:
            raise UnsupportedFormula(f"no cell or name for `{e.name}`", e.span) from None

    def visit_ScenarioRef(self, e: ir.ScenarioRef, env, want) -> Piece:
        ref = self.refs.get(f"{e.name}@{e.scenario}")
        if ref is None:
            raise NotWritten(f"`{e.name}@{e.scenario}`")
        return ref

    # ---- arithmetic -----------------------------------------------------------------------------
    def visit_Neg(self, e: ir.Neg, env, want) -> Piece:
        p = self.expr(e.operand, env, want)
        if p.value is not None:
            return constant(-p.value, p.scale)
        return Piece("-" + wrap(p, POW), NEG, p.scale)  # -(x^2): Excel's minus binds tighter than ^

    def visit_Binary(self, e: ir.Binary, env, want) -> Piece:
        op = e.op
        if op is ir.BinOp.POW:
            return self._power(e, env)
        if op in (ir.BinOp.ADD, ir.BinOp.SUB):
            a, b = self.expr(e.left, env, want), self.expr(e.right, env, want)
            scale = common([a, b], want)
            a, b = convert(a, scale), convert(b, scale)
            value = None if a.value is None or b.value is None else \
                a.value + b.value if op is ir.BinOp.ADD else a.value - b.value
            return Piece(f"{wrap(a, ADD - 1)}{op.value}{wrap(b, ADD)}", ADD, scale, value)
        a, b = self.expr(e.left, env), self.expr(e.right, env)
        if a.scale is None or b.scale is None:  # TRUE*x: Excel counts TRUE as 1, as planner does
            a, b = a._replace(scale=a.scale or Fraction(1)), b._replace(scale=b.scale or Fraction(1))
        if op is ir.BinOp.MUL:
            scale = a.scale * b.scale
            if b.value == 1 and b.text == "1":  # `x * 1 month`: the unit, not a factor
                return Piece(a.text, a.prec, scale)
            if a.value == 1 and a.text == "1":
                return Piece(b.text, b.prec, scale)
            value = None if a.value is None or b.value is None else a.value * b.value
            return Piece(f"{wrap(a, NEG - 1)}*{wrap(b, MUL)}", MUL, scale, value)  # -a*b is (-a)*b: the same
        scale = a.scale / b.scale
        if b.value == 1 and b.text == "1":  # `m / 1 year`
            return Piece(a.text, a.prec, scale)
        value = None if a.value is None or not b.value else a.value / b.value  # (a constant: a literal's value)
        return Piece(f"{wrap(a, NEG - 1)}/{wrap(b, MUL)}", MUL, scale, value)

    def _power(self, e: ir.Binary, env) -> Piece:
        base, exp = self.expr(e.left, env), self.expr(e.right, env)
        exp = convert(exp, Fraction(1))
        if exp.value is not None and exp.value.denominator == 1 and base.scale is not None:
            scale = base.scale ** int(exp.value)  # x^2 of a length in m is in m^2
        else:
            base, scale = convert(base, Fraction(1)), Fraction(1)
        power = f"{wrap(base, POW)}^{wrap(exp, POW)}"
        if exp.value is not None:
            if base.value is not None and exp.value.denominator == 1 and abs(exp.value) <= 4096 and base.value:
                value = base.value ** int(exp.value)  # a power of literals: below the smallest double it is 0,
                if abs(value) < TINY or abs(value) > HUGE:  # as planner computes it (Excel's ^ gives #NUM!)
                    return constant(value, scale)
                return Piece(power, POW, scale, value)
            return Piece(power, POW, scale)
        # an exponent that moves can take the power below the smallest double: numpy gives 0,
        # LibreOffice's ^ #NUM!. Where ln|result| < -708 (below 3.3E-308) the answer is 0.
        log = f"LN({base.text})" if base.value is not None and base.value > 0 else f"LN(ABS({base.text})+1E-300)"
        return Piece(f"IF({wrap(exp, NEG - 1)}*{log}<-708,0,{power})", ATOM, scale)

    # ---- logic ----------------------------------------------------------------------------------
    def visit_Compare(self, e: ir.Compare, env, want) -> Piece:
        from ...language.precision import approx_tolerance

        if len(e.ops) == 1 and e.ops[0] in (ir.CmpOp.EQ, ir.CmpOp.NE) and \
                any(isinstance(o, ir.Never) for o in e.operands):  # `x == never`: x has no value (#N/A)
            other = next(o for o in e.operands if not isinstance(o, ir.Never))
            test = f"ISNA({self.expr(other, env).text})"
            return Piece(test if e.ops[0] is ir.CmpOp.EQ else f"NOT({test})", ATOM, None)

        sides = [self.expr(o, env) for o in e.operands]
        parts = []
        for i, op in enumerate(e.ops):
            a, b = sides[i], sides[i + 1]
            scale = common([a, b], None)
            a, b = convert(a, scale), convert(b, scale)
            tol = approx_tolerance(e, i, self.units) if op is ir.CmpOp.APPROX else None
            if tol is not None:
                parts.append(f"ABS({a.text}-{wrap(b, ADD)})<={number(tol / (scale or 1))}")
            else:
                parts.append(f"{wrap(a, CMP)}{_RELATIONS[op]}{wrap(b, CMP)}")
        if len(parts) == 1:
            return Piece(parts[0], CMP, None)
        return Piece(call("AND", parts), ATOM, None)

    def visit_Logic(self, e: ir.Logic, env, want) -> Piece:
        args, node = [], e
        while isinstance(node, ir.Logic) and node.op is e.op:  # `a and b and c`: one AND(a,b,c)
            args.append(node.right)
            node = node.left
        args.append(node)
        args.reverse()

        def part(idx):
            out = args[idx[0]]
            for i in idx[1:]:
                out = ir.Logic(e.op, out, args[i], e.span)
            return out
        return Piece(self._tree(e.op.value.upper(), [self.expr(a, env).text for a in args], env, None, part), ATOM, None)

    def visit_Not(self, e: ir.Not, env, want) -> Piece:
        return Piece(f"NOT({self.expr(e.operand, env).text})", ATOM, None)

    # ---- calls ----------------------------------------------------------------------------------
    def visit_Call(self, e: ir.Call, env, want) -> Piece:
        from ...language.functions import FUNCTIONS

        f = self.model.functions.get(e.func)
        if f is not None:  # a user function: its row (a function of a period), else inline
            got = self._function_row(f, e, env)
            if got is not None:
                return got
            inner: dict[str, Bound] = {}
            for p, arg in ir.bind_args(f, e):
                if arg is not None:
                    inner[p.name] = Bound(None, arg, env, (arg, _scope(env)))
                else:
                    bound = dict(inner)
                    inner[p.name] = Bound(None, p.default, bound, (p.default, _scope(bound)))
            return self.expr(f.body, inner, want)
        record = FUNCTIONS[e.func]
        if e.over is not None and e.over[0] is None and self.periods is not None \
                and len(e.args) - record.flows == self.periods.count:  # `npv(rate, net)`: the series' row
            return self._flows_row(e, env, want, record)
        args = [self.expr(a.value, env, want) for a in e.args]
        keeps = record.sheet_keeps
        keep = range(len(args)) if keeps == "all" else range(1, len(args)) if keeps == "rest" else keeps
        scale = common([args[i] for i in keep if i < len(args)], want) if keep else Fraction(1)
        texts = []
        for i, a in enumerate(args):
            if a.scale is None:
                texts.append(a.text)
            else:
                texts.append(convert(a, scale if i in keep and scale is not None else Fraction(1)).text)
        missing = len(record.params) - len(texts)
        if record.excel is None and record.defaults and not record.variadic and missing > 0:
            # (Excel's own functions take the same defaults: PMT(rate,48,55000), as the plan writes it)
            texts += [number(Fraction(d)) for d in record.defaults[len(record.defaults) - missing:]]
        if record.excel is not None:  # Excel's own function (PMT, NPV, IRR)
            if record.excel_args is not None:  # its values as one array (IRR's)
                texts = self._array_of(e, env, args, texts, record, scale if 0 in keep and scale is not None else 1)
            text = call(record.excel, texts)
        elif isinstance(record.sheet, str):
            text = self._tree(record.sheet, texts, env, scale,
                              lambda idx: ir.Call(e.func, tuple(e.args[i] for i in idx), e.span, e.name_span))
        else:
            text = record.sheet(texts)
        prec = ATOM if _one_call(text) else NEG
        return Piece(text, prec, scale)

    # ---- user functions of a period: a row each ------------------------------------------------------
    def _function_row(self, f, e: ir.Call, env) -> Optional[Piece]:
        """A call of a one-parameter user function at a whole number of a range's unit, within the plan's
        ranges of that unit (1, 2 ... up to the largest end any of them can reach): a reference into the
        function's row of the Cash flows sheet, its value at each of those numbers (written once, each cell
        the function's body over its column's number). The cell in the column being printed where the
        argument is the variable of the range whose row that is, the cell itself for a constant, else
        ``INDEX(row,1,argument)``. None (expanded inline) where the argument may fall outside the row or
        between its numbers."""
        if self.row is None or len(f.params) != 1:
            return None
        if self._summing is None:
            self._summing = {name for name, g in self.model.functions.items() if self._of_numbers(g)}
        if f.name not in self._summing:
            return None
        (_, arg), = ir.bind_args(f, e)
        if arg is None:
            return None
        at = self.expr(arg, env)
        unit = at.scale
        if not unit or not self._whole(arg, env, unit):
            return None
        iv = self.ranges.interval(arg, _scope(env))
        width = self._horizon(unit)
        if iv.lo is None or iv.hi is None or iv.lo < unit or iv.hi > width * unit:
            return None
        try:
            got = self._row_of_function(f, unit, width, arg, env)
        except NotWritten:  # (a body past a cell's limits: each call inline)
            got = self._rows[("function", f.name, unit)] = None
        if got is None:
            return None
        sheet, line, scale = got
        level = next((x for x in self._open if x.var == at.text), None)
        if level is not None and level.text == f"{level.column}${FLOW_HEADER}":
            return Piece(f"{sheet}!{level.column}${line}", ATOM, scale)  # the column being printed
        if at.value is not None:
            return Piece(f"{sheet}!${col_letter(FLOW_FIRST + int(at.value) - 1)}${line}", ATOM, scale)
        last = col_letter(FLOW_FIRST + width - 1)
        return Piece(f"INDEX({sheet}!${col_letter(FLOW_FIRST)}${line}:${last}${line},1,{at.text})", ATOM, scale)

    def _row_of_function(self, f, unit: Fraction, width: int, arg: ir.Expr, env) -> tuple:
        """``f``'s row: (the sheet, its line, the scale of its cells), written on first use (``arg`` in
        ``env``: the argument of the call that first reads it, which gives its parameter's type)."""
        key = ("function", f.name, unit)
        if key not in self._rows:
            self._columns += 1
            column, var = f"\x00c{self._columns}\x00", f"\x00v{self._columns}\x00"
            import numpy as np

            level = _Level(var, f"{column}${FLOW_HEADER}", column, "1", unit, width, width,
                           float(unit) * np.arange(1, width + 1) if self.values is not None else None)
            param = f.params[0].name
            inner = {param: Bound(Piece(var, ATOM, unit), None, {}, Interval(unit, unit * width), self._type(arg, env))}
            saved = self._open, self.refs, self.where, self._shared
            # its rows of terms are the function's, labelled so (after the sheet or case whose figures read
            # it: "Solve work: cash(m)", a row over that sheet's trial inputs), written once for them all
            context = self.where.rpartition(": ")[0]
            called = f"{context}: {f.name}({param})" if context else f"{f.name}({param})"
            self._open, self.refs, self.where, self._shared = [level], self.row_refs, called, True
            try:
                body = self.expr(f.body, inner)
            finally:
                self._open, self.refs, self.where, self._shared = saved
            text = body.text.replace(var, level.text)
            if "\x00" in text.replace(column, ""):
                raise NotWritten(f"`{f.name}` uses a range's variable besides its own")
            cells = ["=" + text.replace(column, col_letter(FLOW_FIRST + j)) for j in range(width)]
            if any(len(c) > LIMIT or nesting(c) > MAX_NESTING for c in cells[:1]):
                raise NotWritten("a function's body longer than a cell holds")
            held = lambda: self._held_value(f.body, inner, level, 1 if body.scale is None else body.scale)  # noqa: E731
            self._shared, shared = True, self._shared
            try:
                _, (sheet, line) = self._write_row(cells, held, f"{called} at each {param}",
                                                   f"{f.name}({param}) = {f.body.span.flat}",
                                                   self._unit(f.body, inner, body.scale))
            finally:
                self._shared = shared
            self._rows[key] = (sheet, line, body.scale)
        return self._rows[key]

    def _of_numbers(self, f) -> bool:
        """``f`` (through the functions it calls) sums over a range, what its calls would repeat inline,
        and reads no series and no period: its row holds it at any number. (A function without a sum is
        a formula over its column's number, as readable inline.)"""
        seen, todo, sums = set(), [f], False
        while todo:
            g = todo.pop()
            if g.name in seen:
                continue
            seen.add(g.name)
            for n in ir.walk(g.body):
                if isinstance(n, (ir.Period, ir.Previous, ir.Series, ir.PeriodTable)) or \
                        isinstance(n, ir.Name) and self.periods is not None and n.name in self.periods.rows:
                    return False
                sums = sums or isinstance(n, ir.Aggregate) and n.values.kind != "list"
                if isinstance(n, ir.Call) and n.func in self.model.functions:
                    todo.append(self.model.functions[n.func])
        return sums

    def _whole(self, e: ir.Expr, env, unit: Fraction) -> bool:
        """``e`` is a whole number of ``unit`` whatever the inputs (a range's variable counting from 1, an
        integer input, a constant, their sums and differences)."""
        if isinstance(e, ir.Number):
            v = self._constant(e)
            return v is not None and (v / unit).denominator == 1
        if isinstance(e, ir.Binary) and e.op in (ir.BinOp.ADD, ir.BinOp.SUB):
            return self._whole(e.left, env, unit) and self._whole(e.right, env, unit)
        if not isinstance(e, ir.Name):
            return False
        bound = env.get(e.name)
        if bound is not None:
            if bound.expr is not None:
                return self._whole(bound.expr, bound.env, unit)
            p = bound.piece
            if p.value is not None:
                return (p.value * p.scale / unit).denominator == 1
            level = next((x for x in self._open if x.var == p.text), None)
            return level is not None and p.scale == unit and (level.step / unit).denominator == 1 and \
                level.start.lstrip("-").isdigit()
        q = self.model.quantities.get(e.name)
        return q is not None and q.is_input and q.integer and q.display.scale == unit

    def _horizon(self, unit: Fraction) -> int:
        """The largest number of ``unit`` the plan's ranges in that unit reach (0: none)."""
        if unit not in self._horizons:
            most = 0
            exprs = [q.definition.expr for q in self.model.quantities.values() if not q.is_input] + \
                [f.body for f in self.model.functions.values()]
            for x in exprs:
                for n in ir.walk(x):
                    if isinstance(n, ir.Aggregate) and n.values.kind == "range":
                        try:
                            if self.ranges.step(n.values, self._constant).value != unit:
                                continue
                        except PlanError:
                            continue
                        hi = self.ranges.interval(n.values.items[1], {}).hi
                        if hi is not None:
                            most = max(most, int(hi // unit))
            self._horizons[unit] = min(most, ROW_TERMS)
        return self._horizons[unit]

    def _array_of(self, e: ir.Call, env, args: list[Piece], texts: list[str], record, scale: Fraction) -> list[str]:
        """The arguments of a function that takes its values as one array (IRR): an array of constants
        (``{-100,60,60}``), else cells of the Cash flows sheet and a guess, planner's own value (a root's
        search from LibreOffice's 10% misses one at -37%); on the sheet of periods ``CHOOSE({1,2},a,b)``,
        which Excel and LibreOffice read as an array (Gnumeric does not)."""
        if all(a.value is not None for a in args) and not any("/" in t for t in texts):
            return ["{" + ",".join(texts) + "}"]
        if self.row is not None:
            out = [self._array(e, env, texts, self._unit(e.args[0].value, env, scale) if e.args else "")]
            return out + (self._guess(e, env) if "\x00" not in out[0] else [])
        if self.periods is None:  # (a sweep's table prints it again, with rows)
            raise NotWritten(f"the values of `{e.func}`, which are cells of the Cash flows sheet")
        return record.excel_args(texts)

    def _flows_row(self, e: ir.Call, env, want, record) -> Piece:
        """``npv(rate, net)``, ``irr(net)`` of a series: Excel's own function over its row on the sheet of
        periods, as an analyst writes it (``NPV(rate,Months!$C$38:$AL$38)``; a working row where the flows
        are an expression of series), NPV in the row's unit, IRR with planner's own root as its guess."""
        flows, scale = self._row_of(e.over[2], env, want, f"{e.span.flat}: the cash flows")
        texts = [a.text if a.scale is None else convert(a, Fraction(1)).text
                 for a in (self.expr(arg.value, env) for arg in e.args[:record.flows])] + [flows]
        texts += self._guess(e, env) if record.excel_args is not None else []
        return Piece(call(record.excel, texts), ATOM, scale if record.flows else Fraction(1))

    def _guess(self, e: ir.Call, env) -> list[str]:
        """IRR's guess: planner's root, where the engine's search starts (from 10% LibreOffice misses one at -37%)."""
        guess = self._held_value(e, env, None)
        return [_float_text(float(f"{guess:.6g}"))] if isinstance(guess, float) else []

    def _array(self, e: ir.Call, env, texts: list[str], unit: str) -> str:
        """The arguments of a function that takes them as one array (IRR) as cells of the Cash flows
        sheet, their range: a row, or inside a range's term a block (a row per argument, a column per
        value of the range). Gnumeric reads no ``CHOOSE({1,2,3},a,b,c)`` as an array."""
        if self.refs is not self.row_refs:
            raise _Requalify
        label, joined = f"{self.where} ({e.func}: its values)", "".join(texts)
        if "\x00" not in joined:
            got, _ = self._write_row(["=" + t for t in texts], lambda: [self._held_value(a.value, env, None)
                                                                        for a in e.args],
                                     label, e.span.flat, unit, e.over and _numbers(e.over[0], e.over[1], len(texts)))
            return got[0]
        level = next((x for x in reversed(self._open) if x.var in joined or x.column in joined), None)
        if level is None or "\x00" in joined.replace(level.var, "").replace(level.column, ""):
            raise _Deeper(f"the values of `{e.func}` use the variables of two ranges")
        rows = []
        for a, t in zip(e.args, texts):
            t = t.replace(level.var, level.text)
            rows.append((["=" + t.replace(level.column, col_letter(FLOW_FIRST + k)) for k in range(level.count)],
                         lambda a=a: self._held_value(a.value, env, level), label, e.span.flat, unit))
        sheet, first, last = self._write_block(rows)
        return f"{sheet}!{level.column}${first}:{level.column}${last}"

    def _held_value(self, e: ir.Expr, env, level: Optional[_Level], scale: Fraction = Fraction(1)):
        """``e``'s cached value in ``scale`` (``level``: in each column of that range's row), "" where none."""
        count = 1 if level is None else level.count
        if self.values is None or level is not None and level.at is None:
            return "" if level is None else [""] * count
        import numpy as np

        try:
            got = self._value(e, env, None if level is None else {level.var: level.at})
        except (AssertionError, KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
            return "" if level is None else [""] * count
        if level is None:
            return cached(got, scale)
        return [cached(v, scale) for v in np.broadcast_to(np.asarray(got), (count,)).tolist()]

    # ---- the unit of a row's cells ----------------------------------------------------------------
    def _unit(self, e: ir.Expr, env, scale: Optional[Fraction]) -> str:
        """The unit of cells that hold ``e`` (over the names bound around it) in ``scale``: its dimension
        named (the unit the plan writes it in, a unit a figure is shown in, a declared or built-in one)."""
        from ...language.dims import unit_named

        t = self._type(e, env) if scale is not None else None
        if t is None or t.is_bool or t.dim is None:
            return ""
        return unit_named(t.dim, scale, self.units, t.unit, (q.display for q in self.model.quantities.values()))

    def _term_unit(self, e: ir.Aggregate, env, scale: Optional[Fraction]) -> str:
        """The unit of the cells of a row of ``e``'s terms (a count's and a product's: plain numbers)."""
        if e.op in (ir.AggOp.COUNT, ir.AggOp.PRODUCT):
            return ""
        inner = {**env, e.var: Bound(None, None, env, None, e)}
        return self._unit(ir.Name(e.var, e.span) if e.op is ir.AggOp.FIRST else e.body, inner, scale)

    def _type(self, e: ir.Expr, env):
        """``e``'s type (:class:`planner.language.model.Type`) over the names bound around it; None
        without the plan's analyzer, or where it has none."""
        if self.analyzer is None:
            return None
        from ...language.dims import Poisoned

        typer, lookup = self.analyzer.typer, self.analyzer.types.get

        def scope(env) -> dict:
            out = {}
            for name, b in env.items():
                t = typer.type(b.expr, scope(b.env), lookup) if b.expr is not None else \
                    typer.var_type(b.of, scope(b.env), lookup) if isinstance(b.of, ir.Aggregate) else b.of
                if t is None:
                    raise Poisoned()
                out[name] = t
            return out
        try:
            return typer.type(e, scope(env), lookup)
        except (PlanError, Poisoned):
            return None

    # ---- aggregates -----------------------------------------------------------------------------
    def visit_Aggregate(self, e: ir.Aggregate, env, want) -> Piece:
        if e.values.kind == "list":
            return self._listed(e, env, want)
        if self.row is None:
            raise NotWritten("a sum over a range outside the workbook")
        saved, self.refs = self.refs, self.row_refs
        try:
            got = self._window(e, env, want)  # a sum of the terms where the variable is in a window: SUMIFS
            if got is not None:
                return got
            level = self._running_of(e, env)
            if level is not None:
                try:
                    return self._running(e, env, want, level)
                except NotWritten:  # its terms use the outer variable otherwise too: a block of rows
                    pass
            got = self._partial(e, env)  # an end that moves with the outer range, terms that do not: one row
            if got is not None:
                return got
            ranges, scale = self._row(e, env, want, self._open)
        finally:
            self.refs = saved
        if e.op in (ir.AggOp.SUM, ir.AggOp.COUNT, ir.AggOp.PRODUCT):
            return Piece(call(_TOTAL[e.op], ranges) if ranges else _IDENTITY[e.op], ATOM, scale)
        if not ranges:
            return Piece("NA()", ATOM, scale)
        # no value in the range (every term blank): #N/A, as planner's "never" (MAX of no number is 0)
        return Piece(f"IF(COUNT({','.join(ranges)})=0,NA(),{call(_TOTAL[e.op], ranges)})", ATOM, scale)

    def _listed(self, e: ir.Aggregate, env, want) -> Piece:
        """A list's aggregate written out: ``sum([a, b])`` is ``SUM(a,b)``."""
        items = []
        for item in e.values.items:
            piece = self.expr(item, env)
            inner = {**env, e.var: Bound(None, item, env, (item, _scope(env)))}
            items.append((piece, self.expr(e.body, inner, want)))
        terms = [t for _, t in items]
        if e.op is ir.AggOp.FIRST:
            scale = common([p for p, _ in items], want)
            out = "NA()"
            for piece, cond in reversed(items):
                out = f"IF({cond.text},{convert(piece, scale).text},{out})"
            return Piece(out, ATOM, scale)
        part = lambda idx: replace(e, values=replace(e.values, items=tuple(e.values.items[i] for i in idx)))
        if e.op is ir.AggOp.COUNT:
            return Piece(self._tree("SUM", [f"IF({t.text},1,0)" for t in terms], env, Fraction(1), part), ATOM,
                         Fraction(1))
        scale = Fraction(1) if e.op is ir.AggOp.PRODUCT else common(terms, want)
        return Piece(self._tree(_TOTAL[e.op], [convert(t, scale).text for t in terms], env, scale, part), ATOM, scale)

    def _range(self, e: ir.Aggregate, env, fixed_end: Optional[int] = None):
        """What the terms of ``e`` are printed over: its variable (a placeholder each row fills in),
        the row's level, the range's end (None for a fixed count) and the test that a cell is inside."""
        step = self.ranges.step(e.values, self._constant)
        n = self.ranges.terms(e, _scope(env), step.value)
        start = self.expr(e.values.items[0], env)
        unit = step.scale if start.scale is not None else Fraction(1)
        start = convert(start, unit)
        by = step.value / unit
        self._columns += 1
        column, var = f"\x00c{self._columns}\x00", f"\x00v{self._columns}\x00"
        index = f"{column}${FLOW_HEADER}"  # 1, 2, 3 ...: the variable is start + (index - 1) * step
        if start.value is not None:
            offset = start.value - by
            text = index if by == 1 else f"{index}*{number(by)}"
            if offset:
                text = f"({text}{'+' if offset > 0 else '-'}{number(abs(offset))})"
        else:
            text = f"({wrap(start, ADD - 1)}+({index}-1){'' if by == 1 else '*' + number(by)})"
        end, inside = None, None
        if fixed_end is not None:
            count = fixed_end
        else:
            end = convert(self.expr(e.values.items[1], env), unit)
            if end.value is not None and start.value is not None:  # a fixed end: the terms up to it
                count = max(0, min(n, int((end.value - start.value) // by) + 1)) if by else n
            else:  # a moving one: IF(variable <= end, term, nothing) in each cell
                count, inside = n, f"{var}<={wrap(end, CMP)}"
        at = None
        if self.values is not None and "\x00" not in start.text:
            try:
                first = float(start.value * unit) if start.value is not None else self._value(e.values.items[0], env)
                import numpy as np

                at = first + np.arange(count) * float(by * unit)
            except (AssertionError, KeyError, TypeError, ValueError):
                at = None
        level = _Level(var, text, column, start.text, step.value, n, count, at)
        return level, Piece(var, ATOM, unit), start, by, unit, inside

    def _row(self, e: ir.Aggregate, env, want, open_levels, fixed_end: Optional[int] = None):
        """The terms of ``e`` as one row of the Cash flows sheet, or, where they use the variable of the
        range around them, a block of rows (a row per value of ``e``'s variable, a column per value of
        the outer one): the cells as ranges (of the outer's column, in a block), and the terms' scale."""
        level, var, start, by, unit, inside = self._range(e, env, fixed_end)
        outer = open_levels[-1] if open_levels else None
        try:
            template, scale = self._term(e, env, want, open_levels, level, var, inside)
        except _Deeper:
            if outer is None:
                raise
            return self._each(e, env, want, open_levels, level, start, by, unit, inside)
        label = f"{self.where} ({e.var} = {e.values.items[0].span.flat})"
        written = e.body.span.flat
        if e.op is ir.AggOp.FIRST:
            written = f"{e.var} where {written}"
        if (outer is None or (outer.var not in template and outer.column not in template)) and \
                level.count > ROW_TERMS:  # wider than a sheet: down a column of helper cells instead
            if self.spill is None or start.value is None:
                raise NotWritten(f"a range of {level.count:,} values is wider than a row")
            values = self._values(e, env, level, level.at, by, unit, scale, fixed_end, inside)
            refs = [self.spill("=" + template.replace(level.var, _at(start.value + j * by)), values[j])
                    for j in range(level.count)]
            return [f"{refs[0]}:{refs[-1].split('!')[-1]}"], scale
        if outer is None or (outer.var not in template and outer.column not in template):
            template = template.replace(level.var, level.text)
            sheet, _, line = template.rpartition(f"!{level.column}$")
            if sheet and line.isdigit():  # each term a function's value in its column: the function's row
                last = col_letter(FLOW_FIRST + level.count - 1)
                return [f"{sheet}!${col_letter(FLOW_FIRST)}${line}:${last}${line}"] if level.count else [], scale
            cells = ["=" + template.replace(level.column, col_letter(FLOW_FIRST + j)) for j in range(level.count)]
            if any(len(c) > LIMIT or nesting(c) > MAX_NESTING for c in cells[:1]):
                raise NotWritten("a term longer than a cell holds")
            values = lambda: self._values(e, env, level, level.at, by, unit, scale, fixed_end, inside) \
                if cells else []  # noqa: E731
            got, _ = self._write_row(cells, values, label, written, self._term_unit(e, env, scale),
                                     _numbers(e.var, e.values, level.count))
            return got, scale
        # a block: the outer range's values across, this range's down (its variable a number in each row)
        self._fits(e, level.count * outer.count)
        texts = [template.replace(level.var, self._nth(start, by, unit, j).text) for j in range(level.count)]
        return self._block(e, env, outer, texts, by, unit, scale, inside, label, written,
                           self._term_unit(e, env, scale)), scale

    def _term(self, e: ir.Aggregate, env, want, open_levels, level: _Level, var: Piece, inside):
        """The formula of one term of ``e`` (its variable printed as ``var``: ``level``'s placeholder, or
        one of its values) and the terms' scale. Raises :class:`_Deeper` where it uses the variables of
        two ranges around it besides its own."""
        inner = {**env, e.var: Bound(var, None, env, self.ranges.var_interval(e, _scope(env)), e)}
        saved, self._open = self._open, list(open_levels) + ([level] if var.text == level.var else [])
        try:
            body = self.expr(e.body, inner, want if e.op in (ir.AggOp.SUM, ir.AggOp.MAX, ir.AggOp.MIN) else None)
        finally:
            self._open = saved
        if e.op is ir.AggOp.FIRST:
            term, scale = var.text, var.scale
        elif e.op is ir.AggOp.COUNT:
            term, scale = f"IF({body.text},1,0)", Fraction(1)
        elif e.op is ir.AggOp.PRODUCT:
            body = convert(body, Fraction(1))
            term, scale = body.text, Fraction(1)
        else:
            if want is not None and body.scale is not None and e.op is ir.AggOp.SUM:
                body = convert(body, want)  # the row in the figure's own unit
            term, scale = body.text, body.scale
        blank = _IDENTITY.get(e.op, '""')
        if inside is not None and var.text != level.var:
            inside = inside.replace(level.var, var.text)
        if e.op is ir.AggOp.FIRST:
            cond = body.text if inside is None else f"AND({inside},{body.text})"
            template = f"IF({cond},{term},\"\")"
        else:
            template = term if inside is None else f"IF({inside},{term},{blank})"
        outer = open_levels[-1] if open_levels else None
        rest = template.replace(level.var, "").replace(level.column, "")
        if outer is not None:
            rest = rest.replace(outer.var, "").replace(outer.column, "")
        if "\x00" in rest or outer is not None and level.column in template and \
                (outer.var in template or outer.column in template):
            raise _Deeper("a term that uses the variables of two ranges around it")
        return template, scale

    def _each(self, e: ir.Aggregate, env, want, open_levels, level: _Level, start: Piece, by: Fraction,
              unit: Fraction, inside):
        """A block whose terms hold a range of their own over every variable around them (a sum three
        ranges deep): the terms printed once per value of ``e``'s variable, that value a number in them
        (so the range inside sees one range around it), a row each across the outer range's columns."""
        outer = open_levels[-1]
        self._fits(e, level.count * outer.count)
        before, texts, scale = self._written, [], None
        for j in range(level.count):
            template, scale = self._term(e, env, want, open_levels, level, self._nth(start, by, unit, j), inside)
            texts.append(template)
            self._fits(e, self._written - before + level.count * outer.count)
        label = f"{self.where} ({e.var} = {e.values.items[0].span.flat})"
        return self._block(e, env, outer, texts, by, unit, scale, inside, label, e.body.span.flat,
                           self._term_unit(e, env, scale)), scale

    @staticmethod
    def _nth(start: Piece, by: Fraction, unit: Fraction, j: int) -> Piece:
        """The ``j``-th value of a range (from 0) as an atom."""
        if start.value is not None:
            v = start.value + j * by
            return Piece(_at(v), ATOM, unit, v)
        return Piece(f"({wrap(start, ADD - 1)}+{number(j * by)})", ATOM, unit)

    def _fits(self, e: ir.Aggregate, cells: int) -> None:
        if cells > MAX_TERM_CELLS:
            raise UnsupportedFormula(
                f"`{e.op.value}` over ranges would write {cells:,} cells, one per term (at "
                f"most {MAX_TERM_CELLS:,}): the workbook is not written",
                hint="lower the declared bounds of the inputs that end the ranges (`where n <= 1000`), or "
                     "write the inner sum in closed form; `planner eval`, `check` and `report` compute it as it is")

    def _block(self, e: ir.Aggregate, env, outer: _Level, texts: list, by: Fraction, unit: Fraction, scale, inside,
               label: str, written: str, cells_unit: str) -> list:
        """The rows of a block (``texts``: a term per value of ``e``'s variable, over the outer range's
        placeholders), written together, one after another (rows alike are each a row), or found written."""
        rows = []
        for j, text in enumerate(texts):
            text = text.replace(outer.var, outer.text)
            cells = ["=" + text.replace(outer.column, col_letter(FLOW_FIRST + k)) for k in range(outer.count)]
            if any(len(c) > LIMIT or nesting(c) > MAX_NESTING for c in cells[:1]):
                raise NotWritten("a term longer than a cell holds")
            values = lambda j=j, cells=cells: self._block_values(e, env, outer, j, by, unit, scale, inside) \
                if cells else []  # noqa: E731
            rows.append((cells, values, f"{label[:-1]}, {e.var} #{j + 1})", written, cells_unit))
        if not rows:
            return []
        sheet, first, last = self._write_block(rows)
        return [f"{sheet}!{outer.column}${first}:{outer.column}${last}"]

    def _write_block(self, rows: list) -> tuple:
        """Rows ``(cells, values, label, written, unit)`` (``values()`` their cached values) written together,
        one after another (rows alike are
        each a row), or found written: (the sheet, the first row, the last)."""
        key = ("block",) + tuple(tuple(r[0]) for r in rows)
        if key not in self._rows:
            lines = [self.row(*r[:4], unit=r[4])[1] for r in rows]
            self._written += sum(len(r[0]) for r in rows)
            self._rows[key] = (lines[0][0], lines[0][1], lines[-1][1])
        return self._rows[key]

    def _write_row(self, cells: list, values: Callable[[], list], label: str, written: str, unit: str,
                   at=None) -> tuple:
        """A row written once: printing again (over qualified references) finds it written; a function's
        row and its rows of terms, by every figure that reads it (the sheet's ``row(..., shared=True)``).
        ``values()``: its cells' cached values, computed only where the row is written."""
        key = tuple(cells)
        if key not in self._rows:
            self._rows[key] = self.row(cells, values, label, written, unit=unit, shared=self._shared, at=at)
            self._written += len(cells)
        return self._rows[key]

    def _window(self, e: ir.Aggregate, env, want) -> Optional[Piece]:
        """``sum(if(k > m - term, pay(k), 0) for k in 1 month..m)``: the terms (which use no variable but
        their own) once as a row, added up where the variable keeps to the conditions and the range's end,
        ``SUMIFS(row,'Cash flows'!$D$3:$CI$3,">"&(I$3-term),'Cash flows'!$D$3:$CI$3,"<="&I$3)`` (the
        header row numbers the terms). None where the sum is not such a sum."""
        body = e.body
        if e.op is not ir.AggOp.SUM or e.values.kind != "range" or not self._open or \
                not (isinstance(body, ir.Call) and body.func == "if" and len(body.args) == 3) or \
                any(a.name is not None for a in body.args) or self._constant(body.args[2].value) != 0:
            return None
        tests, todo = [], [body.args[0].value]
        while todo:  # the conditions: `k OP x` joined by `and`, x free of k
            c = todo.pop()
            if isinstance(c, ir.Logic) and c.op is ir.BoolOp.AND:
                todo += [c.right, c.left]  # (the left one first)
                continue
            if not isinstance(c, ir.Compare) or len(c.ops) != 1 or c.ops[0] is ir.CmpOp.APPROX:
                return None
            a, b = c.operands
            op = _RELATIONS[c.ops[0]]
            if not (isinstance(a, ir.Name) and a.name == e.var):
                a, b, op = b, a, _FLIPPED.get(op, op)
            if not (isinstance(a, ir.Name) and a.name == e.var) or \
                    any(isinstance(n, ir.Name) and n.name == e.var for n in ir.walk(b)):
                return None
            tests.append((op, b))
        step = self.ranges.step(e.values, self._constant)
        start = self.expr(e.values.items[0], env)
        unit = step.scale if start.scale is not None else Fraction(1)
        if convert(start, unit).value != 1 or step.value != unit:
            return None  # (the header's numbers are the variable's values)
        n = self.ranges.terms(e, _scope(env), step.value)
        try:
            ranges, scale = self._row(replace(e, body=body.args[1].value), env, want, [], fixed_end=n)
        except NotWritten:
            return None
        if not ranges:
            return Piece("0", ATOM, scale)
        sheet, _, cells = ranges[0].rpartition("!")
        first, _, last = cells.partition(":")
        header = f"{sheet}!{first.rsplit('$', 1)[0]}${FLOW_HEADER}:{last.rsplit('$', 1)[0]}${FLOW_HEADER}"
        tests.append(("<=", e.values.items[1]))
        criteria = [f'{header},"{op}"&{wrap(convert(self.expr(x, env), unit), POW)}' for op, x in tests]
        return Piece(f"SUMIFS({ranges[0]},{','.join(criteria)})", ATOM, scale)

    def _running_of(self, e: ir.Aggregate, env) -> Optional[_Level]:
        """The open row whose running total ``e`` is: a sum over the same range, up to that row's variable."""
        if not self._open or e.op is not ir.AggOp.SUM or e.values.kind != "range":
            return None
        end = e.values.items[1]
        outer = self._open[-1]
        if self.expr(end, env).text != outer.var:
            return None
        step = self.ranges.step(e.values, self._constant)
        start = self.expr(e.values.items[0], env)
        unit = step.scale if start.scale is not None else Fraction(1)
        if convert(start, unit).text != outer.start or step.value != outer.step:
            return None
        return outer

    def _running(self, e: ir.Aggregate, env, want, level: _Level) -> Piece:
        """A running total of its own row: ``SUM('Cash flows'!$D$9:I$9)``, I the outer row's column."""
        ranges, scale = self._row(e, env, None, [], fixed_end=level.count)
        if not ranges:
            return Piece("0", ATOM, scale)
        first, _, _ = ranges[0].rpartition(":")
        line = first.rsplit("$", 1)[1]
        return Piece(f"SUM({first}:{level.column}${line})", ATOM, scale)

    def _partial(self, e: ir.Aggregate, env) -> Optional[Piece]:
        """A sum up to an end that moves with the range around it (``cash(m - 1 month)`` inside a sum over
        ``m``), whose terms do not: its own row, every term of it, and the part up to the end,
        ``SUMIF('Cash flows'!$D$3:$CJ$3,"<="&(I$3-1),'Cash flows'!$D$9:$CJ$9)`` (the header row numbers
        the terms). None where it is not such a sum."""
        if not self._open or e.op is not ir.AggOp.SUM:
            return None
        step = self.ranges.step(e.values, self._constant)
        start = self.expr(e.values.items[0], env)
        unit = step.scale if start.scale is not None else Fraction(1)
        start = convert(start, unit)
        end = convert(self.expr(e.values.items[1], env), unit)
        if start.value is None or "\x00" in start.text or "\x00" not in end.text:
            return None
        n = self.ranges.terms(e, _scope(env), step.value)
        try:
            ranges, scale = self._row(e, env, None, [], fixed_end=n)
        except NotWritten:
            return None
        if not ranges:
            return Piece("0", ATOM, scale)
        by = step.value / unit
        count = f"({end.text}-{number(start.value)})/{number(by)}+1" if by != 1 else \
            f"{wrap(end, ADD)}-{number(start.value - 1)}" if start.value != 1 else end.text
        sheet_row, _, _ = ranges[0].rpartition(":")
        sheet, _, first = sheet_row.rpartition("!")
        last = ranges[0].rpartition(":")[2]
        header = f"{sheet}!{first.rsplit('$', 1)[0]}${FLOW_HEADER}:{last.rsplit('$', 1)[0]}${FLOW_HEADER}"
        return Piece(f'SUMIF({header},"<="&({count}),{ranges[0]})', ATOM, scale)

    # ---- series over periods ------------------------------------------------------------------------
    def _over(self, what: str, span=None) -> PeriodRows:
        if self.periods is None or (self.periods.col is None and what != "a reduction"):
            raise NotWritten(f"{what} outside the sheet of periods")
        return self.periods

    def _series_cell(self, name: str, col: Optional[int], span) -> Piece:
        from ..numbers import scale_of

        if col is None:
            raise UnsupportedFormula(f"`{name}` is a series: a figure reads a reduction of it", span)
        q = self.model.quantities[name]
        return Piece(f"{col_letter(col)}{self.periods.rows[name]}", ATOM, None if q.is_bool else scale_of(q))

    def visit_Series(self, e: ir.Series, env, want) -> Piece:
        p = self._over("a series")
        return self.expr(e.first if p.col == p.first or e.then is None else e.then, env, want)

    def visit_Period(self, e: ir.Period, env, want) -> Piece:
        p = self._over("`period`")
        return Piece(f"{col_letter(p.col)}${p.header}", ATOM, p.scale)

    def visit_Previous(self, e: ir.Previous, env, want) -> Piece:
        p = self._over("`previous`")
        if p.col == p.first:
            if e.init is None:
                return Piece("NA()", ATOM, want)  # no period before the first
            return self.expr(e.init, env, want)
        return self._series_cell(e.name, p.col - 1, e.span)

    def visit_PeriodTable(self, e: ir.PeriodTable, env, want) -> Piece:
        p = self._over("a table of periods")
        return self.expr(e.items[min(p.col - p.first, len(e.items) - 1)], env, want)

    def visit_Never(self, e: ir.Never, env, want) -> Piece:
        return Piece("NA()", ATOM, want)

    def _cells(self, make: Callable[[int], Piece]) -> tuple[list[str], Optional[Fraction]]:
        """A working row's formulas, one per period (``make(column)``, in the first one's scale)."""
        p = self._over("a reduction")
        saved_col, saved_refs = p.col, self.refs
        self.refs = self.row_refs  # on the sheet of periods: other sheets' cells qualified
        try:
            pieces = []
            for col in range(p.first, p.first + p.count):
                p.col = col
                pieces.append(make(col))
        finally:
            p.col, self.refs = saved_col, saved_refs
        scale = pieces[0].scale if pieces else None
        return ["=" + convert(x, scale).text if scale is not None else "=" + x.text for x in pieces], scale

    def _row_of(self, e: ir.Expr, env, want, label: str) -> tuple[str, Optional[Fraction]]:
        """The periods of the series ``e`` as a range: its own row, or a working row of its terms."""
        p = self._over("a reduction")
        if isinstance(e, ir.Name) and e.name in p.rows and e.name not in env:
            return p.span(p.rows[e.name]), self._series_cell(e.name, p.first, e.span).scale
        if isinstance(e, ir.Period):
            return p.span(p.header), p.scale
        cells, scale = self._cells(lambda col: self.expr(e, env, want))
        got = self._period_values(e, env)
        held = None if got is None else [cached(v, 1 if scale is None else scale) for v in got]
        return p.span(p.row(cells, label, held)), scale

    def visit_Reduce(self, e: ir.Reduce, env, want) -> Piece:
        p = self._over("a reduction")
        if p.count == 0:
            return Piece("0" if e.op in ("sum", "count") else "NA()", ATOM, want if e.op != "count" else Fraction(1))
        written = e.span.flat
        if e.op == "count":
            test = e.cond if e.cond is not None else e.body
            cells, _ = self._cells(lambda col: Piece(f"IF({self.expr(test, env).text},1,0)", ATOM, Fraction(1)))
            got = self._period_values(test, env)
            held = None if got is None else [1.0 if v else 0.0 for v in got]
            return Piece(f"SUM({p.span(p.row(cells, written, held))})", ATOM, Fraction(1))
        if e.op in ("first", "last"):
            values, scale = self._row_of(e.body, env, want, f"{written}: the values")
            if e.cond is None:
                cell = values.split(":")[0 if e.op == "first" else 1]
                if e.op == "last":
                    cell = f"{p.sheet}!{cell}"
                return Piece(cell, ATOM, scale)
            cells, _ = self._cells(lambda col: Piece(
                f'IF({self.expr(e.cond, env).text},{col - p.first + 1},"")', ATOM, Fraction(1)))
            got = self._period_values(e.cond, env)
            held = None if got is None else [float(j + 1) if v else "" for j, v in enumerate(got)]
            index = p.span(p.row(cells, f"{written}: the periods where it holds, numbered", held))
            pick = "MIN" if e.op == "first" else "MAX"  # INDEX(row, 1, k): Gnumeric reads INDEX(row, k) as a row number
            return Piece(f"IF(COUNT({index})=0,NA(),INDEX({values},1,{pick}({index})))", ATOM, scale)
        if e.cond is None:
            values, scale = self._row_of(e.body, env, want, written)
        else:
            cells, scale = self._cells(lambda col: self._kept(e, env, want))
            got, holds = self._period_values(e.body, env), self._period_values(e.cond, env)
            held = None if got is None or holds is None else \
                [cached(v, 1 if scale is None else scale) if c else "" for v, c in zip(got, holds)]
            values = p.span(p.row(cells, f"{written}: the values where it holds", held))
        if e.op == "sum":
            return Piece(f"SUM({values})", ATOM, scale)
        total = {"mean": "AVERAGE", "min": "MIN", "max": "MAX"}[e.op]
        return Piece(f"IF(COUNT({values})=0,NA(),{total}({values}))", ATOM, scale)

    def _period_values(self, e: ir.Expr, env) -> Optional[list]:
        """``e``'s value in every period (planner's numeric route, one program), or None."""
        p = self.periods
        if self.values is None or p.at is None:
            return None
        import numpy as np

        from ...compute.numeric import Compiler

        names = list(self.values)
        try:
            c = Compiler(self.model, names)
            regs = self._registers(c, env, {})
            outs = [(f"p{j}", c.visit(ir.At(e, when, e.span), c.top, regs, _scope(env))) for j, when in enumerate(p.at)]
            program = c.program(outs)
            with np.errstate(all="ignore"):
                got = program([np.bool_(a) if isinstance(a, bool) else a for a in (self.values[n] for n in names)])
        except (AssertionError, KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
            return None
        return [np.asarray(v).item() for v in got]

    def _kept(self, e: ir.Reduce, env, want) -> Piece:
        body = self.expr(e.body, env, want)
        return Piece(f'IF({self.expr(e.cond, env).text},{body.text},"")', ATOM, body.scale)

    def visit_At(self, e: ir.At, env, want) -> Piece:
        p = self._over("a reduction")
        values, scale = self._row_of(e.series, env, want, e.span.flat)
        when = convert(self.expr(e.when, env), p.scale)
        return Piece(f"INDEX({values},1,MATCH({when.text},{p.span(p.header)},0))", ATOM, scale)

    # ---- cached values ----------------------------------------------------------------------------
    def _values(self, e: ir.Aggregate, env, level: _Level, at, by: Fraction, unit: Fraction, scale, fixed_end,
                inside) -> list:
        """The terms' values as the cells hold them (planner's numeric route, one array over the row)."""
        count = level.count
        if self.values is None or at is None:
            return [""] * count
        got = self._terms(e, env, {}, at, with_end=fixed_end is None)
        if got is None:
            return [""] * count
        term, last = got
        return self._held(e, term, at, unit, scale, inside is None or fixed_end is not None, last)

    def _block_values(self, e: ir.Aggregate, env, outer: _Level, j: int, by: Fraction, unit: Fraction, scale,
                      inside) -> list:
        """One row of a block: ``e``'s term at its ``j``-th value, in each column of the outer range."""
        if self.values is None or outer.at is None:
            return [""] * outer.count
        import numpy as np

        key = (id(e.values.items[0]), id(env), outer.var)
        if key not in self._programs:
            try:
                self._programs[key] = (env, self._value(e.values.items[0], env, {outer.var: outer.at}))
            except (AssertionError, KeyError, TypeError, ValueError):
                self._programs[key] = (env, None)
        first = self._programs[key][1]
        if first is None:
            return [""] * outer.count
        at = np.broadcast_to(np.asarray(first, dtype=float) + j * float(by * unit), (outer.count,))
        got = self._terms(e, env, {outer.var: outer.at}, at)
        if got is None:
            return [""] * outer.count
        term, last = got
        return self._held(e, term, at, unit, scale, inside is None, last)

    def _terms(self, e: ir.Aggregate, env, outer: dict, at, with_end: bool = True):
        """The body of ``e`` with its variable at ``at`` (an array), and the range's end (base values)."""
        import numpy as np

        from ...compute.numeric import Compiler

        index = "\x00index"
        names = list(self.values)
        key = (id(e), id(env), tuple(outer), with_end)  # a block's rows run one program
        if key not in self._programs:
            c = Compiler(self.model, names + [index] + list(outer))
            regs = self._registers(c, env, {k: c.top.names[k] for k in outer})
            var = c.top.names[index]
            scope = {**_scope(env), e.var: self.ranges.var_interval(e, _scope(env))}
            try:
                outputs = [("term", c.visit(e.body, c.top, {**regs, e.var: var}, scope)),
                           ("end", c.visit(e.values.items[1], c.top, regs, _scope(env)) if with_end
                            else c.top.const(float("inf")))]
                program = c.program(outputs)
            except AssertionError:  # a scenario's figure (a check's `name@scenario`): no cached value
                program = None
            self._programs[key] = (env, program)  # (env kept alive: its id is in the key)
        program = self._programs[key][1]
        if program is None:
            return None
        args = [np.bool_(a) if isinstance(a, bool) else a for a in (self.values[n] for n in names)]
        try:
            with np.errstate(all="ignore"):
                term, last = program(args + [at] + list(outer.values()))
        except (KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
            return None
        return np.broadcast_to(term, np.shape(at)), np.broadcast_to(last, np.shape(at))

    @staticmethod
    def _held(e: ir.Aggregate, term, at, unit: Fraction, scale, always: bool, last) -> list:
        out = []
        for v, x, end in zip(term.tolist(), at.tolist(), last.tolist()):
            ok = always or x <= end + abs(end) * 1e-12
            if e.op is ir.AggOp.FIRST:
                out.append(cached(x / float(unit)) if ok and v else "")
            elif e.op is ir.AggOp.COUNT:
                out.append(float(bool(v)) if ok else 0.0)
            elif not ok:
                out.append({ir.AggOp.SUM: 0.0, ir.AggOp.PRODUCT: 1.0}.get(e.op, ""))
            else:
                out.append(cached(v, scale if e.op is not ir.AggOp.PRODUCT else 1))
        return out

    def _value(self, e: ir.Expr, env, outer: Optional[dict] = None):
        """``e``'s base value in ``env`` (planner's numeric route); ``outer``: the values of the open
        ranges' variables (by placeholder) it may use."""
        import numpy as np

        from ...compute.numeric import Compiler

        outer = outer or {}
        names = list(self.values)
        c = Compiler(self.model, names + list(outer))
        out = c.visit(e, c.top, self._registers(c, env, {k: c.top.names[k] for k in outer}), _scope(env))
        program = c.program([("out", out)])
        with np.errstate(all="ignore"):
            v = program([np.bool_(a) if isinstance(a, bool) else a for a in (self.values[n] for n in names)]
                        + list(outer.values()))[0]
        if isinstance(v, np.ndarray) and v.ndim:
            return v
        return bool(v) if isinstance(v, (bool, np.bool_)) else float(v)

    def _registers(self, c, env, ranges: Mapping[str, int]) -> dict:
        """Registers of ``c`` for the names bound in ``env``: parameters compiled from their arguments,
        the open ranges' variables (``ranges``: placeholder -> register)."""
        regs = {}
        for name, b in env.items():
            if b.expr is None:
                if b.piece.text in ranges:
                    regs[name] = ranges[b.piece.text]
                elif b.piece.value is not None:  # a range's variable at one of its values (:meth:`_each`)
                    regs[name] = c.top.const(float(b.piece.value * b.piece.scale))
                continue
            try:
                regs[name] = c.visit(b.expr, c.top, self._registers(c, b.env, ranges), _scope(b.env))
            except AssertionError:  # it uses a range's variable this program does not bind: unused here
                pass
        return regs

    def _constant(self, e: ir.Expr) -> Optional[Fraction]:
        from ...compute.exact import constant

        return constant(self.model, e)


def _at(v: Fraction) -> str:
    """A range's variable at one of its values, as an atom."""
    return number(v) if v >= 0 else f"({number(v)})"


def _numbers(var: str, values: ir.Values, count: int) -> Optional[tuple]:
    """``(var, unit, values)``: the values of a range's variable in its row's ``count`` columns, in the unit
    its start is written in, where they are not the header's numbers 1, 2, 3 ... (a range from 0, or in
    steps of 2), for a row of them above it; None where they are, or where its start and step are not
    written as numbers in one unit."""
    ends = [ir.literal(x) for i, x in enumerate(values.items) if i != 1]
    if values.kind not in ("range", "step") or any(x is None for x in ends) or \
            len({x[1].text if x[1] is not None else "" for x in ends}) > 1:
        return None
    start, unit = ends[0]
    step = ends[1][0] if len(ends) > 1 else Fraction(1)
    at = [start + j * step for j in range(count)]
    if at == list(range(1, count + 1)):
        return None
    return var, unit.text if unit is not None else "", at


def _scope(env: Mapping[str, Bound]) -> dict:
    return {name: b.scope for name, b in env.items()}


def _one_call(text: str) -> bool:
    """Whether ``NAME(...)`` is one call from its first parenthesis to its last."""
    depth = 0
    opened = False
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
            opened = True
        elif ch == ")":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return False
        elif not opened and not (ch.isalnum() or ch in "._"):
            return False
    return opened
