"""LaTeX for people: the plan's formulas as a reader meets them in a report.

One printer, over the plan's IR only (:class:`FormulaPrinter`, a method per IR node): the plan's own
formulas as written, and the closed forms the symbolic route derives, translated back into the IR
first (:func:`planner.compute.closed.to_ir`). No SymPy object reaches this module.

* Every product shows its multiplication (``2 \\cdot \\mathrm{batch}``):
  juxtaposed multi-letter names would run together.
* A name of more than one letter is upright text with its underscores
  (``\\mathrm{draft\\_cost}``, ``\\mathrm{h100.peak}``, ``\\mathrm{customers0}``:
  no subscript from a digit or an underscore); a Greek name is its letter
  (``alpha`` is α); a one-letter name is a variable (italic ``c``).
* A call of a user function stays the call; a built-in's LaTeX is its record's
  (:data:`planner.language.functions.FUNCTIONS`); ``if`` reads "if" and "otherwise".
* Integers are grouped as in the workbook (``70{,}000{,}000{,}000``).

The output renders with KaTeX and with GitHub's MathJax (the tests render
every shipped plan's report with KaTeX, ``throwOnError``).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Optional

from ..language import ir
from ..language.functions import FUNCTIONS
from ..language.text import decimal_places

GROUP_FROM = 10_000  # integers from here up get thousands separators
# the lower-case Greek letters whose names print as the letter (`alpha` is \alpha)
GREEK = frozenset({"alpha", "beta", "chi", "delta", "epsilon", "eta", "gamma", "iota", "kappa", "lambda", "mu",
                   "nu", "omega", "phi", "pi", "psi", "rho", "sigma", "tau", "theta", "upsilon", "xi", "zeta"})


def name_latex(name: str) -> str:
    """A plan name as LaTeX: ``\\alpha``, ``c``, or ``\\mathrm{draft\\_cost}``."""
    if len(name) == 1 and name.isalpha():
        return name
    if name in GREEK:
        return "\\" + name
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


def group_digits(digits: str) -> str:
    """``70000000000`` -> ``70{,}000{,}000{,}000`` (``{,}``: a comma without the space of punctuation)."""
    sign = "-" if digits.startswith("-") else ""
    digits = digits.lstrip("-")
    if len(digits) < len(str(GROUP_FROM)):
        return sign + digits
    head = len(digits) % 3 or 3
    parts = [digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)]
    return sign + "{,}".join(parts)


def _decimal(r: Fraction, digits: int = 12) -> Optional[str]:
    """``1/5`` -> ``0.2``: a rational whose denominator divides a power of ten, as a short decimal."""
    places = decimal_places(r.denominator)
    if places is None or places > digits:
        return None
    sign = "-" if r < 0 else ""
    scaled = abs(r.numerator) * 10 ** places // r.denominator
    whole, frac = divmod(scaled, 10 ** places)
    return f"{sign}{group_digits(str(whole))}.{str(frac).rjust(places, '0')}"


LINE_CHARACTERS = 70  # visible characters of display math that fit GitHub's 836 px column (KaTeX's 1.21 em)


def visible(tex: str) -> int:
    """About how many characters wide ``tex`` renders: commands and braces take no room."""
    text = re.sub(r"\\(?:mathrm|text|operatorname)\{", "", tex)
    text = re.sub(r"\\(?:left|right|begin\{\w+\}|end\{\w+\})", "", text)
    text = re.sub(r"\\(?:cdot|times|leq|geq|neq|lceil|rceil|lfloor|rfloor|neg|alpha|beta|gamma|delta|[a-zA-Z]+)", "x", text)
    return len(re.sub(r"[{}\\&]|\^|_(?=\{)", "", text))


# ---- formulas as written -------------------------------------------------------------------------
# Every formula is printed from the IR, not from a SymPy tree: a call of a user function stays the
# call (its own formula is shown once), a literal keeps the unit it was written in (`2 B`, `1 month`),
# ranges keep their written ends, `round()` is rounding. A closed form (SymPy's, in base units) comes
# here as the IR :func:`planner.compute.closed.to_ir` makes of it.
#
# Where a long formula may break over lines the printer leaves a mark, BREAK and a depth digit (0 the
# outermost construct): before a `+`, `-` or `\cdot` of a chain and after a call's comma. Constructs
# that cannot break (a fraction, a root, `\left( \right)`, `cases`) take the marks out of what they hold.

BREAK = "\x00"
_BREAKS = re.compile(BREAK + r"\d")
_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "add": 5, "mul": 6, "neg": 7, "pow": 8, "atom": 9}
_CMP = {"==": "=", "!=": r"\neq", "<": "<", "<=": r"\leq", ">": ">", ">=": r"\geq", "~=": r"\approx"}
CASES_CHARACTERS = 55  # the widest row of a `cases` (its value and condition) in the column
_TALL = re.compile(r"\\frac|\\sum|\\prod|\\begin|\\sqrt|\\left")


def _flat(tex: str) -> str:
    return _BREAKS.sub("", tex)


def _fraction_text(value) -> str:
    """A written literal (a :class:`fractions.Fraction`) as the plan wrote it: ``0.2``, ``70{,}000``."""
    if value.denominator == 1:
        return group_digits(str(value.numerator))
    decimal = _decimal(value)
    if decimal is not None:
        return decimal
    return rf"\frac{{{group_digits(str(value.numerator))}}}{{{group_digits(str(value.denominator))}}}"


def unit_latex(unit) -> str:
    """A written unit (an ``ir.UnitExpr``) as LaTeX: ``\\mathrm{USD}/\\mathrm{month}``, ``\\%``."""
    def factor(f, power):
        name = r"\%" if f.name == "%" else r"\mathrm{" + f.name.replace("_", r"\_") + "}"
        return name + (f"^{{{power}}}" if power != 1 else "")
    up = [factor(f, f.power) for f in unit.factors if f.power > 0]
    down = [factor(f, -f.power) for f in unit.factors if f.power < 0]
    text = r"{\cdot}".join(up) or "1"
    return text + "".join("/" + d for d in down)


class FormulaPrinter(ir.Visitor):
    """LaTeX of a plan formula as written (an ``ir.Expr``): one ``visit_<Node>`` method per IR node, each
    returning ``(latex, precedence)``."""

    def __init__(self) -> None:
        self.depth = 0
        self.unbreakable = 0  # inside a construct that cannot break over lines (a root, a `cases`)

    def doprint(self, e) -> str:
        return self.p(e)[0]

    def p(self, e):
        return self.visit(e)

    def _mark(self) -> str:
        return BREAK + str(min(self.depth, 9))

    def _inner(self, e, prec: int) -> str:
        """``e`` inside an operator of precedence ``prec``: in brackets where it binds less tightly."""
        tex, own = self.p(e)
        return tex if own > prec else self._parens(tex)

    def _parens(self, tex: str) -> str:
        if not _TALL.search(tex):
            return "(" + tex + ")"
        if BREAK in tex:  # tall and breakable: brackets of a fixed size, which may sit on different lines
            return r"\biggl(" + tex + r"\biggr)"
        return r"\left(" + tex + r"\right)"

    def _nested(self, fn, *args):
        self.depth += 1
        try:
            return fn(*args)
        finally:
            self.depth -= 1

    # leaves
    def visit_Number(self, e):
        text = _fraction_text(e.value)
        if e.unit is None:
            return text, _PREC["atom"]
        unit = unit_latex(e.unit)
        return (text + (unit if unit == r"\%" else r"\," + unit)), _PREC["mul"]

    def visit_Bool(self, e):
        return (r"\text{true}" if e.value else r"\text{false}"), _PREC["atom"]

    def visit_Name(self, e):
        return name_latex(e.name), _PREC["atom"]

    def visit_ScenarioRef(self, e):
        return name_latex(e.name) + r"\,[\text{" + e.scenario.replace("_", r"\_") + "}]", _PREC["atom"]

    # a period table (`series price = [10 USD, 12 USD]`): its values as written
    def visit_PeriodTable(self, e):
        return "[" + ", ".join(self.p(i)[0] for i in e.items) + "]", _PREC["atom"]

    # operators
    def visit_Neg(self, e):
        return "-" + self._inner(e.operand, _PREC["mul"] - 1), _PREC["add"]

    def visit_Binary(self, e):
        op = e.op.value
        if op in "+-":
            terms, node = [], e
            while isinstance(node, ir.Binary) and node.op.value in "+-":
                terms.append((node.op.value, node.right))
                node = node.left
            mark = self._mark()
            out = self._nested(lambda: self._inner(node, _PREC["add"] - 1))
            for sign, t in reversed(terms):
                # the right side of `-` in brackets when it is itself a sum: a - (b + c)
                tex = self._nested(lambda: self._inner(t, _PREC["add"] if sign == "-" else _PREC["add"] - 1))
                out += f" {mark}{sign} {tex}"
            return out, _PREC["add"]
        if op == "*":
            factors, node = [], e
            while isinstance(node, ir.Binary) and node.op.value == "*":
                factors.append(node.right)
                node = node.left
            factors.append(node)
            mark = self._mark()
            parts = [self._nested(lambda f=f: self._inner(f, _PREC["mul"] - 1)) for f in reversed(factors)]
            return f" {mark}\\cdot ".join(parts), _PREC["mul"]
        if op == "/":
            num = self.flat(e.left)
            den = self.flat(e.right)
            if max(visible(num), visible(den)) > LINE_CHARACTERS - 15 and not self.unbreakable:
                # too wide to stack: written on the line, where it can break
                left = self._nested(lambda: self._inner(e.left, _PREC["mul"] - 1))
                right = self._nested(lambda: self._inner(e.right, _PREC["mul"]))
                return f"{left} {self._mark()}/ {right}", _PREC["mul"]
            return rf"\frac{{{num}}}{{{den}}}", _PREC["atom"]
        base = self._unbroken(lambda: _flat(self._inner(e.left, _PREC["pow"])))
        exponent = self.flat(e.right)
        return f"{base}^{{{exponent}}}", _PREC["pow"]

    def visit_Compare(self, e):
        parts = [self._inner(o, _PREC["cmp"]) for o in e.operands]
        out = parts[0]
        for op, part in zip(e.ops, parts[1:]):
            out += f" {_CMP[op.value]} {part}"
        return out, _PREC["cmp"]

    def visit_Logic(self, e):
        op = e.op.value
        prec = _PREC[op]
        mark = self._mark()
        left = self._nested(lambda: self._inner(e.left, prec - 1))
        right = self._nested(lambda: self._inner(e.right, prec))
        return rf"{left} {mark}\;\text{{{op}}}\; {right}", prec

    def visit_Not(self, e):
        return r"\text{not}\; " + self._inner(e.operand, _PREC["not"]), _PREC["not"]

    # calls
    def args(self, values) -> str:
        """``values`` as a call's arguments, in parentheses, breaking at the commas (also what a built-in's
        LaTeX rule, planner.language.functions, asks of the printer)."""
        mark = self._mark()
        texts = [self._nested(lambda v=v: self.p(v)[0]) for v in values]
        inner = f", {mark}".join(texts)
        return self._parens(inner)

    def visit_Call(self, e):
        f = e.func
        values = [a.value for a in e.args]
        record = FUNCTIONS.get(f)
        if record is not None and e.over is not None:  # `irr(f(m) for m in 0..5)`: the range, not each flow
            var, over, body = e.over
            flows = self.flat(body) if var is None else \
                rf"{self.flat(body)} \;\text{{for}}\; {name_latex(var)} \in \{{{self.listed(over)}\}}"
            texts = [self.flat(a.value) for a in e.args[:record.flows]] + [flows]
            return rf"\operatorname{{{record.excel}}}\left(" + ", ".join(texts) + r"\right)", _PREC["atom"]
        if record is not None:
            text, prec = record.latex(self, e, values)
            return text, _PREC[prec]
        # a user function: its call, as written (named arguments by name)
        head = name_latex(f)
        texts = []
        mark = self._mark()
        for a in e.args:
            tex = self._nested(lambda a=a: self.p(a.value)[0])
            texts.append(tex if a.name is None else f"{name_latex(a.name)} = {tex}")
        return head + self._parens(f", {mark}".join(texts)), _PREC["atom"]

    # what a built-in's LaTeX rule (planner.language.functions) asks of the printer, with args above
    def flat(self, value) -> str:
        """``value`` on one line: inside it nothing breaks (a fraction stays stacked)."""
        return self._unbroken(lambda: _flat(self.p(value)[0]))

    def _unbroken(self, fn):
        self.unbreakable += 1
        try:
            return fn()
        finally:
            self.unbreakable -= 1

    def cases(self, e) -> Optional[str]:
        """``if(c, a, b)`` (and an ``if`` in its else, and so on) as ``cases``; None when a row is too
        wide for the column (a ``cases`` cannot break: the call is written out, breaking at its commas)."""
        rows = []
        node = e
        while isinstance(node, ir.Call) and node.func == "if":
            cond, then, other = (a.value for a in node.args)
            rows.append((self.flat(then), r"\text{if } " + self.flat(cond)))
            node = other
        rows.append((self.flat(node), r"\text{otherwise}"))
        if max(visible(a) + visible(b) for a, b in rows) > CASES_CHARACTERS:
            return None
        return r"\begin{cases} " + r" \\ ".join(f"{a} & {b}" for a, b in rows) + r" \end{cases}"

    # series over periods (docs/language.md, "Series over periods"): as written, words for words
    def visit_Period(self, e):
        return r"\text{period}", _PREC["atom"]

    def visit_Never(self, e):
        return r"\text{never}", _PREC["atom"]

    def visit_Previous(self, e):
        if e.span.flat == "previous":  # `then previous * (1 + growth)`: the series itself
            return r"\text{previous}", _PREC["atom"]
        values = [ir.Name(e.name, e.name_span)] + ([e.init] if e.init is not None else [])
        return r"\operatorname{previous}" + self.args(values), _PREC["atom"]

    def visit_Series(self, e):
        first = self._nested(lambda: self._inner(e.first, _PREC["or"] - 1))
        if e.then is None:
            return first, self.p(e.first)[1]
        then = self._nested(lambda: self._inner(e.then, _PREC["or"] - 1))
        return rf"{first} {self._mark()}\;\text{{then}}\; {then}", _PREC["or"] - 1

    def visit_Reduce(self, e):
        head = {"min": r"\min", "max": r"\max"}.get(e.op, rf"\operatorname{{{e.op}}}")
        inner = self._nested(lambda: self.p(e.body)[0])
        if e.cond is not None:
            inner += rf" {self._mark()}\;\text{{where}}\; " + self._nested(lambda: self.p(e.cond)[0])
        return head + self._parens(inner), _PREC["atom"]

    def visit_At(self, e):
        series = self._inner(e.series, _PREC["cmp"])
        return rf"{series}\;\text{{at}}\; {self._inner(e.when, _PREC['cmp'])}", _PREC["cmp"]

    # aggregates
    def listed(self, values: ir.Values) -> str:
        """A list's or a range's values, written out: ``1, 2, 3``; ``a, \\ldots, b``; ``a, a + s, \\ldots, b``."""
        flat, items = self.flat, values.items
        if values.kind == "list":
            return ", ".join(flat(i) for i in items)
        if len(items) > 2:
            return f"{flat(items[0])}, {flat(items[0])} + {flat(items[2])}, \\ldots, {flat(items[1])}"
        return f"{flat(items[0])}, \\ldots, {flat(items[1])}"

    def visit_Aggregate(self, e):
        op = e.op.value
        var = e.written_var
        items = e.values.items
        flat = self.flat
        listed = self.listed(e.values)
        if var is None:  # `sum([a, b])`, `count([p, q])`, `sum(1..n)`
            head = {"sum": r"\operatorname{sum}", "product": r"\operatorname{product}", "max": r"\max",
                    "min": r"\min", "count": r"\operatorname{count}", "first": r"\operatorname{first}"}[op]
            return head + r"\left(" + listed + r"\right)", _PREC["atom"]
        v = name_latex(var)
        body_tex, body_prec = self._unbroken(lambda: self.p(e.body))
        body = _flat(body_tex)
        if op in ("count", "first"):
            head = r"\#" if op == "count" else r"\operatorname{first}"
            return rf"{head}\left\{{ {v} \in \{{{listed}\}} : {body} \right\}}", _PREC["atom"]
        if body_prec < _PREC["mul"]:
            body = r"\left(" + body + r"\right)"
        if op in ("sum", "product") and e.values.kind != "list" and len(items) == 2:
            big = r"\sum" if op == "sum" else r"\prod"
            return rf"{big}_{{{v} = {flat(items[0])}}}^{{{flat(items[1])}}} {body}", _PREC["add"]
        big = {"sum": r"\sum", "product": r"\prod", "max": r"\max", "min": r"\min"}[op]
        return rf"{big}_{{{v} \in \{{{listed}\}}}} {body}", _PREC["add"]


def _lines(tex: str, width: int) -> list[str]:
    """``tex`` broken at its marks into lines of at most ``width`` visible characters, trying the
    outermost marks first and going deeper only while some line is still too wide."""
    depths = sorted({int(m[1]) for m in _BREAKS.findall(tex)})
    best = [_flat(tex)]
    for limit in depths:
        pieces = re.split(BREAK + "[0-" + str(limit) + "]", tex)
        pieces = [_flat(p) for p in pieces]
        lines, line = [], ""
        for piece in pieces:
            if line and visible(line) + visible(piece) > width:
                lines.append(line.rstrip())
                line = ""
            line += piece
        lines.append(line.rstrip())
        best = [l.strip() for l in lines if l.strip()]
        if all(visible(l) <= width for l in best):
            break
    return best


def formula_latex(expr) -> str:
    """A plan formula (an ``ir.Expr``) as written, in LaTeX on one line."""
    return _flat(FormulaPrinter().doprint(expr))


def formula_equation(head: str, expr, width: int = LINE_CHARACTERS) -> str:
    """``head = formula`` as LaTeX, the formula printed as written (:class:`FormulaPrinter`); too wide
    for the column, it breaks over aligned lines at its outermost sums, products and arguments.
    ``head`` is LaTeX (``\\mathrm{cost}``, or a function with its parameters)."""
    if isinstance(expr, ir.Call) and expr.func == "if":
        cases = _cases_equation(head, expr, width)
        if cases is not None:
            return cases
    body = FormulaPrinter().doprint(expr)
    return layout(head, body, width)


def _cases_equation(head: str, expr: ir.Call, width: int) -> Optional[str]:
    """``head = if(c, a, b)`` too wide for one ``cases`` row per branch on a line: a ``cases`` still, one
    row per branch, each value broken over aligned lines of its own (a 240-character closed form of
    two branches fits the column as two short rows and a few lines). None when a condition alone is too
    wide for that (the call is then written out, breaking at its commas)."""
    flat_head = _flat(head)
    branches, node = [], expr
    while isinstance(node, ir.Call) and node.func == "if":
        cond, then, node = (a.value for a in node.args)
        branches.append((then, r"\text{if } " + _flat(FormulaPrinter().doprint(cond))))
    branches.append((node, r"\text{otherwise}"))
    rows = []
    for value, when in branches:
        room = width - visible(flat_head) - 6 - visible(when)
        if room < width // 3:
            return None
        rows.append((_lines(FormulaPrinter().doprint(value), room), when))
    # beside a value over several lines (display math), a one-line value is set as display math too: its
    # fractions full size, not the small ones of a `cases` row
    tall = any(len(lines) > 1 for lines, _ in rows)
    rows = [(r"\begin{aligned} & " + r" \\ & \quad ".join(lines) + r" \end{aligned}" if len(lines) > 1
             else (r"\displaystyle " if tall else "") + lines[0], when) for lines, when in rows]
    gap = r" \\[6pt] " if tall else r" \\ "  # the rows of a tall one apart, as display lines are
    return flat_head + r" = \begin{cases} " + gap.join(f"{v} & {w}" for v, w in rows) + r" \end{cases}"


def layout(head: str, body: str, width: int = LINE_CHARACTERS) -> str:
    """``head = body`` on one line, or broken over ``aligned`` lines (``body`` may hold break marks)."""
    flat_head = _flat(head)
    one = f"{flat_head} = {_flat(body)}"
    if visible(one) <= width:
        return one
    if visible(flat_head) <= width // 3:  # `name ={} & line \\ & line`
        lines = _lines(body, width - visible(flat_head) - 3)
        if len(lines) == 1:
            return one
        return r"\begin{aligned} " + flat_head + r" ={} & " + r" \\ & \quad ".join(lines) + r" \end{aligned}"
    # a long head (a function with many parameters) on its own lines, the formula under it
    heads = _lines(head, width)
    lines = _lines(body, width - 6)
    rows = [heads[0]] + [r"\quad " + h for h in heads[1:]] + ["= " + lines[0]] + [r"\quad " + l for l in lines[1:]]
    return r"\begin{aligned} & " + r" \\ & ".join(rows) + r" \end{aligned}"


def function_head(f) -> str:
    """A user function's name and parameters (an ``ir.FunctionDef``) as LaTeX, with break marks."""
    printer = FormulaPrinter()
    params = []
    for p in f.params:
        tex = name_latex(p.name)
        if p.default is not None:
            tex += " = " + _flat(printer.doprint(p.default))
        params.append(tex)
    return name_latex(f.name) + "(" + f", {BREAK}0".join(params) + ")"
