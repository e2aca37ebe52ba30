"""Plan text of an IR expression: a formula written back in the plan's own syntax.

One printer (:class:`TextPrinter`, a method per IR node, as the LaTeX and Excel generators): what
``planner explain`` shows of a formula over inputs (user functions and quantities inlined), and of a
closed form translated back into the IR (:func:`planner.compute.closed.to_ir`). Numbers keep the text
and unit they were written with (``70e9``, ``1 month``, ``5%``); brackets are written where the
grammar needs them to read the same tree (``a - (b + c)``, ``(1 + growth)^(t - 1)``); spacing is
``planner fmt``'s (one space around binary operators, none around ``^``, ``..``).
"""

from __future__ import annotations

from fractions import Fraction

from . import ir

# how tightly each construct binds, as the grammar reads it (grammar/plan.lark, lowest first)
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _NEG, _POW, _ATOM = range(1, 10)
_BINARY = {ir.BinOp.ADD: _ADD, ir.BinOp.SUB: _ADD, ir.BinOp.MUL: _MUL, ir.BinOp.DIV: _MUL, ir.BinOp.POW: _POW}


def formula_text(expr: ir.Expr) -> str:
    """``expr`` as plan text on one line."""
    return TextPrinter().visit(expr)[0]


def difference_text(cond: ir.Compare) -> str:
    """A comparison's ``lhs - rhs`` (what a root makes zero), bracketed where the grammar needs it:
    ``cost - (a + b)``."""
    left, right = cond.operands
    return formula_text(ir.Binary(ir.BinOp.SUB, left, right, cond.span, cond.span))


def decimal_places(q: int) -> int | None:
    """The decimal places of ``1/q`` when it is a terminating decimal (``q`` of twos and fives only:
    ``1/8`` = 0.125 has 3), else None. The one test of every printer that writes a rational as a decimal."""
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    return max(twos, fives) if q == 1 else None


def number_text(value: Fraction) -> str:
    """A rational as a plan literal where it is one (``0.25``, ``70000000000``), else ``p / q``."""
    places = decimal_places(value.denominator)
    if places is None or places > 15:
        return f"{value.numerator} / {value.denominator}"
    if places == 0:
        return str(value.numerator)
    digits = str(abs(value.numerator) * 10 ** places // value.denominator).rjust(places + 1, "0")
    return ("-" if value < 0 else "") + digits[:-places] + "." + digits[-places:].rstrip("0")


def _written(e: ir.Number) -> str | None:
    """The literal's own text in the plan (``70e9``, ``3.2 kUSD``), when its span holds it."""
    from .lower import parse_number
    from .parser import _split_quantity

    text = e.span.flat
    if not text or not (text[0].isdigit() or text[0] == "."):
        return None
    number, _, unit = _split_quantity(text)
    try:
        same = parse_number(number) == e.value
    except (ValueError, ZeroDivisionError):
        return None
    return text if same and unit == (e.unit.text if e.unit is not None else "") else None


class TextPrinter(ir.Visitor):
    """Each ``visit_<Node>`` returns ``(text, precedence)``."""

    def _in(self, e: ir.Expr, least: int) -> str:
        """``e`` where the grammar reads only what binds at least as tightly as ``least``: bracketed below it."""
        text, prec = self.visit(e)
        return text if prec >= least else f"({text})"

    def visit_Number(self, e):
        text = _written(e)
        if text is None:
            text = number_text(e.value)
            if e.unit is not None:
                text += e.unit.text if e.unit.text == "%" else " " + e.unit.text
        return text, (_MUL if " / " in text and e.unit is None else _ATOM)

    def visit_Bool(self, e):
        return ("true" if e.value else "false"), _ATOM

    def visit_Name(self, e):
        return e.name, _ATOM

    def visit_ScenarioRef(self, e):
        pick = e.scenario if e.scenario.isidentifier() else '"' + e.scenario + '"'
        return f"{e.name}@{pick}", _ATOM

    def visit_Neg(self, e):
        return "-" + self._in(e.operand, _NEG), _NEG

    def visit_Binary(self, e):
        prec = _BINARY[e.op]
        if e.op is ir.BinOp.POW:  # `postfix ^ unary`: right-associative, the base an atom
            return f"{self._in(e.left, _ATOM)}^{self._in(e.right, _NEG)}", _POW
        return f"{self._in(e.left, prec)} {e.op.value} {self._in(e.right, prec + 1)}", prec

    def visit_Compare(self, e):
        out = self._in(e.operands[0], _ADD)
        for op, operand in zip(e.ops, e.operands[1:]):
            out += f" {op.value} {self._in(operand, _ADD)}"
        return out, _CMP

    def visit_Logic(self, e):
        prec = _OR if e.op is ir.BoolOp.OR else _AND
        return f"{self._in(e.left, prec)} {e.op.value} {self._in(e.right, prec + 1)}", prec

    def visit_Not(self, e):
        return "not " + self._in(e.operand, _NOT), _NOT

    def visit_Call(self, e):
        if e.over is not None:  # `irr(f(m) for m in 0..5)`, `npv(rate, net)`: as written, not each flow
            from .functions import FUNCTIONS

            var, values, body = e.over
            flows = self.visit(body)[0] if var is None else f"{self.visit(body)[0]} for {var} in {self.values(values)}"
            before = [self.visit(a.value)[0] for a in e.args[:FUNCTIONS[e.func].flows]]
            return f"{e.func}({', '.join(before + [flows])})", _ATOM
        args = ", ".join(self.visit(a.value)[0] if a.name is None else f"{a.name} = {self.visit(a.value)[0]}"
                         for a in e.args)
        return f"{e.func}({args})", _ATOM

    def values(self, v: ir.Values) -> str:
        items = [self.visit(i)[0] for i in v.items]
        if v.kind == "list":
            return "[" + ", ".join(items) + "]"
        # a range's ends are sums in the grammar (`1 month..n`, `0..n - 1`)
        ends = [self._in(i, _ADD) for i in v.items]
        return f"{ends[0]}..{ends[1]}" + (f" {v.kind} {ends[2]}" if len(ends) > 2 else "")

    def visit_Aggregate(self, e):
        values = self.values(e.values)
        if e.var == ir.ITEM:  # `sum([a, b])`, `count(1..n)`
            return f"{e.op.value}({values})", _ATOM
        if e.op is ir.AggOp.FIRST:
            return f"first({e.var} for {e.var} in {values} where {self.visit(e.body)[0]})", _ATOM
        return f"{e.op.value}({self.visit(e.body)[0]} for {e.var} in {values})", _ATOM

    # series over periods
    def visit_Series(self, e):
        first = self.visit(e.first)[0]
        return (first, self.visit(e.first)[1]) if e.then is None else (f"{first} then {self.visit(e.then)[0]}", _OR - 1)

    def visit_Period(self, e):
        return "period", _ATOM

    def visit_Never(self, e):
        return "never", _ATOM

    def visit_Previous(self, e):
        if e.span.flat == "previous":
            return "previous", _ATOM
        init = "" if e.init is None else ", " + self.visit(e.init)[0]
        return f"previous({e.name}{init})", _ATOM

    def visit_PeriodTable(self, e):
        return "[" + ", ".join(self.visit(i)[0] for i in e.items) + "]", _ATOM

    def visit_Reduce(self, e):
        cond = "" if e.cond is None else " where " + self.visit(e.cond)[0]
        return f"{e.op}({self.visit(e.body)[0]}{cond})", _ATOM

    def visit_At(self, e):
        return f"{self._in(e.series, _ATOM)} at {self._in(e.when, _ATOM)}", _ATOM
