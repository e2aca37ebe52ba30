"""The only Transformer: lark parse tree to the typed IR of :mod:`planner.language.ir`."""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction
from functools import lru_cache
from typing import Optional

from lark import Token, Transformer, Tree, v_args
from lark.exceptions import VisitError

from . import ir, uncertain
from .errors import ParseError, PlanError
from .functions import FUNCTIONS
from .parser import _split_quantity, keywords, parse, parse_transform
from .source import Source, Span

_CMP = {
    "==": ir.CmpOp.EQ, "=": ir.CmpOp.EQ, "!=": ir.CmpOp.NE, "≠": ir.CmpOp.NE,
    "<": ir.CmpOp.LT, "<=": ir.CmpOp.LE, "≤": ir.CmpOp.LE, ">": ir.CmpOp.GT,
    ">=": ir.CmpOp.GE, "≥": ir.CmpOp.GE, "~=": ir.CmpOp.APPROX, "≈": ir.CmpOp.APPROX,
}
_BIN = {"+": ir.BinOp.ADD, "-": ir.BinOp.SUB, "*": ir.BinOp.MUL, "×": ir.BinOp.MUL,
        "·": ir.BinOp.MUL, "/": ir.BinOp.DIV, "^": ir.BinOp.POW, "**": ir.BinOp.POW}


_LEADING_ZERO = re.compile(r"0_?\d")


@lru_cache(maxsize=4096)  # (plans repeat their numbers; a Fraction is immutable, so one may be shared)
def parse_number(text: str) -> Fraction:
    """Exact value of a literal: ``4.15`` is 83/20, ``70e9`` is 70000000000."""
    text = text.replace("_", "") if "_" in text else text
    whole, dot, frac = text.partition(".")
    if whole.isdigit() and (not dot or frac.isdigit()):  # `5`, `1.0001`: integers, without parsing the text twice
        return Fraction(int(whole + frac), 10 ** len(frac)) if frac else Fraction(int(whole))
    return Fraction(text)


def unescape(token: str) -> str:
    body = token[1:-1]
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


unit_from_text = ir.unit_from_text  # (where its callers import it from)


class _Lower(Transformer):
    def __init__(self, source: Source) -> None:
        super().__init__(visit_tokens=False)
        self.source = source
        self.prose: list[ir.Prose] = []  # every title, note and doc string, for the live values in them
        # lark re-creates a ``v_args`` wrapper (functools.update_wrapper) on every
        # attribute access, i.e. for every tree node; binding each one once here
        # makes lowering a 10,000-quantity plan about twice as fast.
        for name, attr in vars(_Lower).items():
            if hasattr(attr, "visit_wrapper"):
                setattr(self, name, getattr(self, name))

    # -- helpers --------------------------------------------------------
    def span(self, meta) -> Span:
        """The span of a node: lark's meta (its start_pos and end_pos) from a parse tree; the one-pass
        parser's meta is the node's span already."""
        return meta if type(meta) is Span else Span(self.source, meta.start_pos, meta.end_pos)

    def tspan(self, tok: Token) -> Span:
        return Span(self.source, tok.start_pos, tok.end_pos)

    def transform_text(self):
        """The source parsed and lowered in one pass (no parse tree in between)."""
        return parse_transform(self.source, self)

    # -- expressions -----------------------------------------------------
    def _leading_zero(self, tok: Token, number: str) -> None:
        """``01`` is an error: a plan has no dates, and ``2025-01-01`` would silently be 2023."""
        if not number.startswith("0") or not _LEADING_ZERO.match(number):
            return
        span = Span(self.source, tok.start_pos, tok.start_pos + len(number))
        line = self.source.line_text(span.line)
        col = span.column - 1
        date = None
        for m in re.finditer(r"\d{1,4}([-/.])\d{1,2}\1\d{1,4}", line):
            if m.start() <= col < m.end():
                date = m.group(0)
        hint = ("write the date in a doc string (`start = 0 \"first month: " + (date or "2025-01") + "\"`) and count "
                "periods from it as numbers (`month = 1`, `months = 36`)")
        if date is None:
            hint = (f"write `{number.lstrip('0_') or '0'}`; a date belongs in a doc string, with periods counted "
                    "as numbers")
        elif "-" in date:
            parts = [int(p) for p in date.split("-")]
            shown = " - ".join(str(p) for p in parts)
            hint = f"`{date}` would be read as {shown} = {parts[0] - sum(parts[1:])}; " + hint
        raise ParseError(f"a number cannot start with 0 (`{number}`): dates are not numbers here", span,
                         label="a leading zero", hint=hint)

    @v_args(meta=True)
    def number(self, meta, children):
        (tok,) = children
        text = tok.value  # (the token's own str: str(tok) would copy it)
        if text[0] == "0":
            self._leading_zero(tok, text)
        return ir.Number(parse_number(text), None, self.span(meta))

    @v_args(meta=True)
    def quantity(self, meta, children):
        (tok,) = children
        text = str(tok)
        number, space, unit = _split_quantity(text)
        self._leading_zero(tok, number)
        unit_offset = tok.start_pos + len(number) + len(space)
        return ir.Number(parse_number(number), unit_from_text(unit, self.source, unit_offset), self.tspan(tok))

    @v_args(meta=True)
    def true(self, meta, children):
        return ir.Bool(True, self.span(meta))

    @v_args(meta=True)
    def false(self, meta, children):
        return ir.Bool(False, self.span(meta))

    @v_args(meta=True)
    def dotted(self, meta, children):
        span = self.span(meta)  # (from the first name to the last)
        if len(children) == 1:  # a plain name
            return children[0].value, span
        return ".".join(str(c) for c in children), span

    @v_args(meta=True)
    def name(self, meta, children):
        (dotted,) = children
        return ir.Name(dotted[0], dotted[1])

    @v_args(meta=True)
    def scenario_ref(self, meta, children):
        dotted, scen = children
        name = unescape(str(scen)) if scen.type == "STRING" else str(scen)  # x@"h100/fp8" for combinations
        return ir.ScenarioRef(dotted[0], name, self.span(meta))

    @v_args(meta=True)
    def neg(self, meta, children):
        return ir.Neg(children[0], self.span(meta))

    @v_args(meta=True)
    def pos(self, meta, children):
        return children[0]

    @v_args(meta=True)
    def binary(self, meta, children):
        left, op, right = children
        return ir.Binary(_BIN[op.value], left, right, self.span(meta), Span(self.source, op.start_pos, op.end_pos))

    def comp_op(self, children):
        return children[0]

    @v_args(meta=True)
    def compare(self, meta, children):
        operands = tuple(children[0::2])
        ops = tuple(_CMP[str(t)] for t in children[1::2])
        return ir.Compare(ops, operands, self.span(meta), tuple(self.tspan(t) for t in children[1::2]))

    @v_args(meta=True)
    def and_op(self, meta, children):
        return ir.Logic(ir.BoolOp.AND, children[0], children[1], self.span(meta))

    @v_args(meta=True)
    def or_op(self, meta, children):
        return ir.Logic(ir.BoolOp.OR, children[0], children[1], self.span(meta))

    @v_args(meta=True)
    def not_op(self, meta, children):
        return ir.Not(children[0], self.span(meta))

    @v_args(meta=True)
    def call(self, meta, children):
        (func, func_span) = children[0]
        args = tuple(children[1:])
        return ir.Call(func, args, self.span(meta), func_span)

    _AGGREGATES = {op.value: op for op in ir.AggOp}

    def _agg_op(self, func: str, func_span: Span, values: ir.Values) -> ir.AggOp:
        if func not in self._AGGREGATES:
            raise ParseError(
                f"`{func}(... for ... in ...)` is not an aggregate", func_span,
                label="not sum, product, min, max, count or first",
                hint="`for ... in` inside a call needs one of sum, product, min, max, count or first: "
                     "`sum(x^m for m in 1..n)`; a user function takes its arguments one by one")
        if values.kind in ("times", "count"):
            word = values.kind
            raise ParseError(f"a range in a formula steps arithmetically; `{word}` is for sweeps", values.span,
                             label=f"`{word}` is not allowed here",
                             hint="write `a..b` (steps of one) or `a..b step s`, or list the values: `[1, 2, 4, 8]`")
        return self._AGGREGATES[func]

    @v_args(meta=True)
    def aggregate(self, meta, children):
        (func, func_span), body, var, values = children
        if func in FUNCTIONS and FUNCTIONS[func].flows is not None:  # `irr(f(m) for m in 0..36)`, `npv(f(m) ...)`
            return self._flows(meta, func, func_span, (), body, var, values)
        op = self._agg_op(func, func_span, values)
        if op is ir.AggOp.FIRST:
            raise ParseError("`first` needs a condition: the first value where it holds", self.span(meta),
                             label="no `where`",
                             hint=f"write `first({var} for {var} in {values.span.flat} where CONDITION)`")
        return ir.Aggregate(op, str(var), values, body, self.span(meta), func_span, self.tspan(var))

    @v_args(meta=True)
    def call_over(self, meta, children):
        (func, func_span), first, body, var, values = children
        return self._flows(meta, func, func_span, (first,), body, var, values)

    def _flows(self, meta, func: str, func_span: Span, before: tuple, body: ir.Expr, var, values: ir.Values):
        """``npv(rate, flow(m) for m in 1 month..36 month)``: the cash flows of a function whose record
        says they may come from a range (``flows``), listed: ``npv(rate, flow(1 month), flow(2 month),
        ...)``, each the body with the variable replaced by its value. The range's ends (and step) are
        literals, in one unit; at most :data:`MAX_FLOWS` values."""
        f = FUNCTIONS.get(func)
        if f is None or f.flows is None:
            raise ParseError(f"`{func}` takes no range of values here", func_span,
                             label="`for ... in` is for sums, products, min, max, count, first, npv and irr",
                             hint=f"`{func}` takes its arguments one by one")
        if f.flows != len(before):  # `irr(-500, flow(m) for m in 1..n)`: the range holds every flow
            wanted = f"`{func}({', '.join(f.params[:f.flows] + ('flow(m) for m in 1..n',))})`"
            raise ParseError(f"`{func}` takes no range of values here: {wanted}", func_span,
                             label=f"the range of flows comes after {f.flows} argument{'s' * (f.flows != 1)}"
                             if f.flows else "the range of flows is its only argument",
                             hint="put today's flow first in the range: `irr(if(m == 0, -500, flow(m)) for m in 0..5)`"
                             if func == "irr" else f"`{func}` takes {', '.join(f.params[:f.flows])} before the range")
        where = values.span
        if values.kind not in ("range", "step"):
            raise ParseError(f"`{func}` over a list: list the flows as arguments", where,
                             label="not a range", hint=f"`{func}(..., a, b, c)`")
        ends = [ir.literal(e) for e in values.items]
        v = str(var)
        unit = next((u for e in ends if e is not None for u in [e[1]] if u is not None), None)
        power = f"({v} / 1 {unit.text})" if unit is not None else v
        out = (f"write the sum out: `sum(flow({v}) / (1 + rate)^{power} for {v} in {where.flat})`" if func == "npv"
               else "list the flows as arguments")
        moving = func == "npv" and ends[0] is not None and ends[1] is None and (len(ends) < 3 or ends[2] is not None)
        if moving and (len(ends) < 3 or (ends[0][1] and ends[0][1].text) == (ends[2][1] and ends[2][1].text)):
            return self._npv_sum(meta, func_span, before[0].value, body, var, values, ends)
        if any(e is None for e in ends) or len({u.text if u is not None else "" for _, u in ends}) > 1:
            raise ParseError(f"the cash flows of `{func}` come from a range of constants, in one unit", where,
                             label="an end or the step is not a number as written",
                             hint=f"`1 month..36 month`, `0..10`; or {out}")
        (start, unit), (stop, _) = ends[0], ends[1]
        step = ends[2][0] if len(ends) > 2 else Fraction(1)
        if step <= 0:
            raise ParseError("the step of a range must be positive", values.items[2].span,
                             hint="a range counts up from its start: `1..n step 2`")
        count = 0 if stop < start else int((stop - start) // step) + 1
        if count == 0 or count > MAX_FLOWS:
            raise ParseError(f"`{func}` takes 1 to {MAX_FLOWS} cash flows (as Excel's); this range has {count:,}",
                             where, label="no values" if count == 0 else "too many values",
                             hint=out)
        flows = tuple(ir.Arg(None, _bound(body, v, start + k * step, unit), body.span) for k in range(count))
        return ir.Call(func, tuple(before) + flows, self.span(meta), func_span, over=(v, values, body))

    def _npv_sum(self, meta, func_span: Span, rate: ir.Expr, body: ir.Expr, var, values: ir.Values, ends):
        """``npv(rate, flow(m) for m in 1 month..n)``, a range whose end is a quantity (the flows are not
        known as the plan is read): the sum Excel's NPV computes, ``sum(flow(m) / (1 + rate)^k for m in ...)``
        where ``m`` is the range's ``k``-th value (the first discounted one period)."""
        (start, unit), step = ends[0], (ends[2] if len(ends) > 2 else (Fraction(1), ends[0][1]))
        at = values.span
        k = ir.Binary(ir.BinOp.ADD, ir.Binary(ir.BinOp.DIV, ir.Binary(ir.BinOp.SUB, ir.Name(str(var), at),
                                                                       ir.Number(start, unit, at), at, at),
                                              ir.Number(step[0], step[1], at), at, at), ir.Number(Fraction(1), None, at),
                      at, at)
        discount = ir.Binary(ir.BinOp.POW, ir.Binary(ir.BinOp.ADD, ir.Number(Fraction(1), None, at), rate, at, at), k,
                             at, at)
        term = ir.Binary(ir.BinOp.DIV, body, discount, body.span, at)
        return ir.Aggregate(ir.AggOp.SUM, str(var), values, term, self.span(meta), func_span, self.tspan(var))

    @v_args(meta=True)
    def aggregate_where(self, meta, children):
        (func, func_span), body, var, values, condition = children
        op = self._agg_op(func, func_span, values)
        if op is not ir.AggOp.FIRST:
            raise ParseError(f"`where` inside `{func}(...)` is not supported", condition.span,
                             label="only `first` takes a condition",
                             hint=f"`first({var} for {var} in ... where ...)` finds the first value where a "
                                  f"condition holds; to {func} only some terms, use `if(condition, term, 0)`")
        if not (isinstance(body, ir.Name) and body.name == str(var)):
            raise ParseError("`first` gives the first value of its variable", body.span,
                             label=f"not `{var}`",
                             hint=f"write `first({var} for {var} in {values.span.flat} where ...)` and use the "
                                  "value it gives in a formula of its own")
        return ir.Aggregate(op, str(var), values, condition, self.span(meta), func_span, self.tspan(var))

    @v_args(meta=True)
    def aggregate_values(self, meta, children):
        (func, func_span), values = children
        op = self._agg_op(func, func_span, values)
        if op is ir.AggOp.FIRST:
            raise ParseError("`first` needs a condition: the first value where it holds", self.span(meta),
                             label="no `where`", hint=f"write `first(m for m in {values.span.flat} where CONDITION)`")
        body = ir.Bool(True, values.span) if op is ir.AggOp.COUNT else ir.Name(ir.ITEM, values.span)
        return ir.Aggregate(op, ir.ITEM, values, body, self.span(meta), func_span, values.span)

    @v_args(meta=True)
    def reduce_where(self, meta, children):
        (func, func_span), body, cond = children
        if func not in ir.REDUCTIONS:
            raise ParseError(f"`{func}(... where ...)` is not a reduction of a series", func_span,
                             label="not " + ", ".join(ir.REDUCTIONS[:-1]) + " or first",
                             hint="`first(period where cash < 0)` is the first period where a condition holds; "
                                  "`count(period where cash < 0)` how many periods it holds in")
        return ir.Reduce(func, body, cond, self.span(meta), func_span)

    @v_args(meta=True)
    def series_at(self, meta, children):
        series, when = children
        return ir.At(series, when, self.span(meta))

    @v_args(meta=True)
    def arg(self, meta, children):
        (value,) = children
        return ir.Arg(None, value, self.span(meta))

    @v_args(meta=True)
    def kwarg(self, meta, children):
        name, value = children
        return ir.Arg(str(name), value, self.span(meta))

    # -- units --------------------------------------------------------------
    @v_args(meta=True)
    def unit(self, meta, children):
        factors = [children[0]]
        for op, factor in zip(children[1::2], children[2::2]):
            if str(op) == "/":
                factor = ir.UnitFactor(factor.name, -factor.power, factor.span)
            factors.append(factor)
        return ir.UnitExpr(tuple(factors), self.span(meta))

    @v_args(meta=True)
    def unit_factor(self, meta, children):
        tok = children[0]
        power = int(children[1]) if len(children) > 1 else 1
        return ir.UnitFactor(str(tok), power, self.span(meta))

    @v_args(meta=True)
    def display(self, meta, children):
        return children[0]

    # -- annotations --------------------------------------------------------
    def _prose(self, tok) -> str:
        text = unescape(str(tok))
        self.prose.append(ir.Prose(text, self.tspan(tok)))
        return text

    def doc(self, children):
        return ("doc", self._prose(children[0]))

    @v_args(meta=True)
    def tag(self, meta, children):
        words = " ".join(str(c) for c in children if c.type == "NAME")
        strings = [unescape(str(c)) for c in children if c.type == "STRING"]
        strings += [" ".join(str(c).split()) for c in children if c.type == "TAG_VALUE"]
        text = f"{words}: {strings[0]}" if words and strings else (words or strings[0])
        return ir.Tag(text, self.span(meta))

    def tags(self, children):
        return ("tags", tuple(children))

    @v_args(meta=True)
    def integer_constraint(self, meta, children):
        return ir.Constraint("integer", None, self.span(meta))

    @v_args(meta=True)
    def boolean_constraint(self, meta, children):
        return ir.Constraint("boolean", None, self.span(meta))

    @v_args(meta=True)
    def condition_constraint(self, meta, children):
        return ir.Constraint("condition", children[0], self.span(meta))

    def constraints(self, children):
        return ("constraints", tuple(children))

    @staticmethod
    def _annotations(items):
        doc, tags, constraints, display = None, (), (), None
        for item in items:
            if isinstance(item, ir.UnitExpr):
                display = item
            elif item[0] == "doc":
                doc = item[1] if doc is None else doc + "\n" + item[1]
            elif item[0] == "tags":
                tags = tags + item[1]
            elif item[0] == "constraints":
                constraints = item[1]
        return doc, tags, constraints, display

    # -- statements ------------------------------------------------------------
    def title(self, children):
        return ("title", self._prose(children[0]))

    def note(self, children):
        return ("note", self._prose(children[0]))

    @staticmethod
    def _no_single_equals(expr: ir.Expr, what: str) -> None:
        """In a formula `=` would silently compare: ask for `==` (conditions keep `=`)."""
        if "=" not in expr.span.source.text[expr.span.start:expr.span.end]:
            return  # no `=` in its text: nothing to walk for
        for node in ir.walk(expr):
            if isinstance(node, ir.Compare):
                for span in node.op_spans:
                    if span.text == "=":
                        raise ParseError(
                            f"`=` inside {what} compares; write `==` if that is meant", span,
                            label="a second `=`",
                            hint="`=` defines a quantity at the start of a line; inside a formula compare with `==` "
                                 "(`x = 1` as a condition is fine in `solve`, `check` and `where`)")

    @v_args(meta=True)
    def definition(self, meta, children):
        name, expr, *rest = children
        self._no_single_equals(expr, "a formula")
        dist = None
        if rest and isinstance(rest[0], _Uncertainty):
            expr, dist = uncertain.from_definition(expr, rest.pop(0).parts)
        doc, tags, constraints, display = self._annotations(rest)
        return ir.Definition(name.value, expr, display, doc, tags, constraints, self.span(meta), self.tspan(name),
                             dist)

    @v_args(meta=True)
    def series_def(self, meta, children):
        word, name, first, *rest = children
        if str(word) != "series":
            raise ParseError(f"unexpected `{name}` after `{word}`", self.tspan(name), label="expected `=` or `(`",
                             hint=f"define a quantity with `{word} = ...`, a function with `{word}(x) = ...`, or a "
                                  f"series over periods with `series {name} = ...`")
        then = rest.pop(0) if rest and not isinstance(rest[0], (tuple, ir.UnitExpr)) else None
        for e in (first, then):
            if e is not None:
                self._no_single_equals(e, "a formula")
        doc, tags, _, display = self._annotations(rest)
        end = (then or first).span.end
        expr = ir.Series(name.value, first, then, Span(self.source, first.span.start, end))
        return ir.Definition(name.value, expr, display, doc, tags, (), self.span(meta), self.tspan(name))

    @v_args(meta=True)
    def period_table(self, meta, children):
        return ir.PeriodTable(tuple(children), self.span(meta))

    @v_args(meta=True)
    def periods(self, meta, children):
        name, *items = children
        span = Span(self.source, items[0].span.start, items[-1].span.end)
        if str(name) != "periods":
            raise ParseError(f"`{name}` cannot be a range: a formula is one value", span, label="a range",
                             hint="a plan's periods are written `periods = 1 month..60 month`; a range of values "
                                  "goes in a sweep (`sweep x in 1..8`) or an aggregate (`sum(f(m) for m in 1..n)`)")
        values = ir.Values("range" if len(items) == 2 else "step", tuple(items), span)
        return ir.Periods(values, self.span(meta))

    def uncertain_to(self, children):
        return _Uncertainty(("to", children[0]))

    def uncertain_tilde(self, children):
        return _Uncertainty(("~", children[0], children[1] if len(children) > 1 else None))

    @v_args(meta=True)
    def param(self, meta, children):
        return ir.Param(str(children[0]), children[1] if len(children) > 1 else None, self.span(meta))

    @v_args(meta=True)
    def function_def(self, meta, children):
        name = children[0]
        params = tuple(c for c in children[1:] if isinstance(c, ir.Param))
        rest = [c for c in children[1:] if not isinstance(c, ir.Param)]
        body, *annotations = rest
        self._no_single_equals(body, "a function body")
        doc, tags, _, display = self._annotations(annotations)
        return ir.FunctionDef(str(name), params, body, display, doc, tags, self.span(meta), self.tspan(name))

    @v_args(meta=True)
    def unit_decl(self, meta, children):
        name = children[0]
        definition = None
        rest = list(children[1:])
        if rest and not isinstance(rest[0], tuple):
            definition = rest.pop(0)
        doc, _, _, _ = self._annotations(rest)
        return ir.UnitDecl(str(name), definition, doc, self.span(meta), self.tspan(name))

    @v_args(meta=True)
    def override(self, meta, children):
        (name, name_span), expr = children
        self._no_single_equals(expr, "a value")
        return ir.Override(name, expr, self.span(meta), name_span)

    @v_args(meta=True)
    def scenario(self, meta, children):
        name = children[0]
        annotations = [c for c in children[1:] if isinstance(c, tuple)]
        overrides = tuple(c for c in children[1:] if isinstance(c, ir.Override))
        doc, tags, _, _ = self._annotations(annotations)
        return ir.Scenario(str(name), doc, tags, overrides, self.span(meta), self.tspan(name))

    axis_member = scenario

    @v_args(meta=True)
    def axis(self, meta, children):
        name = children[0]
        annotations = [c for c in children[1:] if isinstance(c, tuple)]
        doc, _, _, _ = self._annotations(annotations)
        members = tuple(
            ir.Scenario(m.name, m.doc, m.tags, m.overrides, m.span, m.name_span, axis=str(name))
            for m in children[1:] if isinstance(m, ir.Scenario)
        )
        return ir.Axis(str(name), doc, members, self.span(meta), self.tspan(name))

    # -- questions ------------------------------------------------------------
    def _values_of(kind: str):
        """The method for a list or a range of values of one kind (``list``, ``range``, ``step``...)."""
        @v_args(meta=True)
        def values(self, meta, children):
            return ir.Values(kind, tuple(children), self.span(meta))
        return values

    value_list, range_plain, range_step, range_times, range_count = map(
        _values_of, ("list", "range", "step", "times", "count"))
    del _values_of

    @v_args(meta=True)
    def sweep_axis(self, meta, children):
        (name, name_span), values = children
        return ir.SweepAxis(name, values, self.span(meta), name_span)

    def show(self, children):
        return ("show", tuple(ir.Name(name, span) for name, span in children))

    @v_args(meta=True)
    def pick_name(self, meta, children):
        tok = children[0]  # a name, or a quoted combination of axes: "h100/fp8"
        return ir.ScenarioPick(unescape(str(tok)) if tok.type == "STRING" else str(tok), None, self.span(meta))

    @v_args(meta=True)
    def pick_axis(self, meta, children):
        return ir.ScenarioPick(str(children[1]), str(children[0]), self.span(meta))

    def scenario_list(self, children):
        return tuple(children)

    def for_scenarios(self, children):
        return ("scenarios", children[0])

    def alias(self, children):
        return ("alias", str(children[0]))

    question_doc = doc

    def within(self, children):
        return ("within", children[0])

    def with_overrides(self, children):
        return ("with", tuple(children))

    @staticmethod
    def _options(items):
        opts = {"scenarios": (), "alias": None, "within": None, "with": (), "show": (), "doc": None}
        for item in items:
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and item[0] in opts:
                opts[item[0]] = item[1]
        return opts

    @v_args(meta=True)
    def sweep(self, meta, children):
        axes = tuple(c for c in children if isinstance(c, ir.SweepAxis))
        opts = self._options([c for c in children if isinstance(c, tuple)])
        return ir.Sweep(axes, opts["show"], opts["scenarios"], self.span(meta))

    @v_args(meta=True)
    def solve(self, meta, children):
        (target, target_span), cond, *rest = children
        opts = self._options(rest)
        return ir.Solve(target, "root", cond, opts["scenarios"], opts["alias"], self.span(meta), target_span,
                        opts["doc"])

    @v_args(meta=True)
    def solve_extreme(self, meta, children):
        mode, (target, target_span), cond, *rest = children
        word = str(mode)
        modes = {"min": "min", "smallest": "min", "max": "max", "largest": "max"}
        if word not in modes:
            raise ParseError(
                f"unexpected `{word}` after `solve`", self.tspan(mode),
                label="expected `min`, `max` or the input to solve for",
                hint="write `solve min batch where ...` for the smallest integer that satisfies a condition",
            )
        opts = self._options(rest)
        return ir.Solve(target, modes[word], cond, opts["scenarios"], opts["alias"], self.span(meta), target_span,
                        opts["doc"])

    def opt_sense(self, children):
        return "max" if str(children[0]) == "maximize" else "min"

    @v_args(meta=True)
    def optimize(self, meta, children):
        sense, objective, (over, over_span), values, *rest = children
        opts = self._options(rest)
        return ir.Optimize(sense, objective, over, values, opts["scenarios"], opts["alias"], self.span(meta), over_span,
                           opts["doc"])

    @v_args(meta=True)
    def check(self, meta, children):
        cond, *rest = children
        opts = self._options(rest)
        return ir.Check(cond, opts["within"], opts["with"], opts["scenarios"], self.span(meta))

    @v_args(meta=True)
    def correlate(self, meta, children):
        (a, a_span), (b, b_span), rho = children
        return uncertain.correlation(a, b, rho, self.span(meta), a_span, b_span)

    @v_args(meta=True)
    def import_stmt(self, meta, children):
        path = unescape(str(children[0]))
        alias = str(children[1]) if len(children) > 1 else None
        return ir.Import(path, alias, None, self.span(meta))

    @v_args(meta=True)
    def from_import(self, meta, children):
        path = unescape(str(children[0]))
        return ir.Import(path, None, tuple(str(c) for c in children[1:]), self.span(meta))

    def start(self, children):
        return children


MAX_FLOWS = 254  # the cash flows a range may give npv and irr: Excel's NPV takes 254 values, IRR's CHOOSE as many


def _bound(e: ir.Expr, var: str, value: Fraction, unit: Optional[ir.UnitExpr]) -> ir.Expr:
    """``e`` with the variable ``var`` (where free) replaced by ``value`` in ``unit``, each at the span of
    the name it replaces."""
    if isinstance(e, ir.Name):
        return ir.Number(value, unit, e.span) if e.name == var else e
    out = ir.map_children(e, lambda child: _bound(child, var, value, unit))
    if isinstance(e, ir.Aggregate) and e.var == var:  # its body's `var` is its own
        out = dataclasses.replace(out, body=e.body)
    return out


def _transform(source: Source, tree: Tree, lower: "_Lower"):
    """Run the transformer; a PlanError raised inside it reaches the caller as itself."""
    try:
        return lower.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, PlanError):
            raise exc.orig_exc from None
        raise


_RECENT: dict = {}  # (name, text) -> IR of the last texts lowered (insertion order: oldest first)
RECENT = 64


def lower(source: Source, tree: Optional[Tree] = None) -> ir.PlanIR:
    """The IR of a plan (``tree``: its parse tree when the caller already has it; else the plan is
    parsed and lowered in one pass, :func:`planner.language.parser.parse_transform`).

    The last :data:`RECENT` texts lowered are remembered (the IR is immutable): the language server
    checks a plan on every keystroke, lowering its text (then again to load it) and every plan it
    imports, unchanged since the last keystroke. On ``sheets/llm_cost.plan`` that was 120 of a
    keystroke's 200 ms of CPU (the imported library plans 91)."""
    key = (source.name, source.text)
    if tree is None:
        found = _RECENT.get(key)
        if found is not None:
            return found
    out = _lower(source, tree)
    if tree is None:
        remember(source.name, source.text, out)
    return out


def _lower(source: Source, tree: Optional[Tree]) -> ir.PlanIR:
    return join(source.name, [_part(source, tree)])


def lower_part(source: Source) -> ir.PlanIR:
    """Some whole statements of a plan lowered on their own (the language server parses a plan
    statement by statement, keeping the statements that did not change): their title, notes and
    statements before the passes over the whole plan, which :func:`join` makes. Not remembered."""
    return _part(source, None)


def _part(source: Source, tree: Optional[Tree]) -> ir.PlanIR:
    lower = _Lower(source)
    items = lower.transform_text() if tree is None else _transform(source, tree, lower)
    title = None
    notes = []
    statements = []
    for item in items:
        if isinstance(item, tuple) and item[0] == "title":
            title = item[1]
        elif isinstance(item, tuple) and item[0] == "note":
            notes.append(item[1])
        else:
            statements.append(item)
    _refuse_reserved(statements)
    prose = tuple(sorted(lower.prose, key=lambda p: p.span.start))
    return ir.PlanIR(source.name, title, tuple(notes), tuple(statements), prose)


def join(name: str, parts, text: Optional[str] = None) -> ir.PlanIR:
    """The plan of ``parts`` (each from :func:`lower_part`, in the order of the text): the IR that
    lowering their text together gives. With ``text`` (the plan's whole text), remembered as its
    IR, for :func:`lower` to give back."""
    title = None
    notes: list = []
    statements: list = []
    prose: list = []
    for part in parts:
        title = part.title if part.title is not None else title
        notes.extend(part.notes)
        statements.extend(part.statements)
        prose.extend(part.prose)
    out = ir.PlanIR(name, title, tuple(notes), tuple(_series(_uncertain(statements))), tuple(prose))
    if text is not None:
        remember(name, text, out)
    return out


def remember(name: str, text: str, plan_ir: ir.PlanIR) -> None:
    """Keep ``plan_ir`` as the IR of the plan ``name`` with ``text``, for :func:`lower` to give back."""
    _RECENT[(name, text)] = plan_ir
    while len(_RECENT) > RECENT:
        _RECENT.pop(next(iter(_RECENT)), None)


class _Uncertainty:
    """What the grammar's ``uncertainty`` gave, for :func:`planner.language.uncertain.from_definition`."""

    def __init__(self, parts: tuple) -> None:
        self.parts = parts


def _uncertain(statements: list) -> list:
    """Definitions that call a distribution (``x = normal(1, 0.1)``) become uncertain inputs and checks
    that use a statistic (``P(...)``, ``p95(...)``) probability checks, unless the plan defines or
    imports a function of that name (a plan that worked keeps its meaning)."""
    functions = frozenset(s.name for s in statements if isinstance(s, ir.FunctionDef)) | frozenset(
        n for s in statements if isinstance(s, ir.Import) and s.names for n in s.names)
    out = []
    for s in statements:
        if isinstance(s, ir.Definition) and s.uncertain is None and uncertain.distribution_name(s.expr, functions):
            expr, dist = uncertain.from_definition(s.expr, None, functions)
            s = dataclasses.replace(s, expr=expr, uncertain=dist)
        elif isinstance(s, ir.Check):
            s = uncertain.probability_check(s, functions) or s
        out.append(s)
    return out


def _series(statements: list) -> list:
    """Names of series over periods read as such (docs/language.md, "Series over periods"), unless the plan
    defines them: ``never`` in any plan; in a plan with ``periods``, ``period``, ``previous`` (in a series'
    ``then``), ``previous(x[, start])`` and the one-argument reductions ``sum(x)``, ``mean``, ``min``,
    ``max``, ``last``, ``count`` and ``first``, so a plan written before series keeps its meaning."""
    defined, has_periods = _series_context(statements)
    series = [s for s in statements if isinstance(s, ir.Definition) and isinstance(s.expr, ir.Series)]
    if series and not has_periods:
        raise ParseError(f"the series `{series[0].name}` needs the plan's periods", series[0].name_span,
                         label="a series, in a plan without periods",
                         hint="declare them once, before or after: `periods = 1 month..60 month`")
    if "never" in defined and not has_periods:
        return statements

    def rewrite(expr: ir.Expr, series: Optional[str]) -> ir.Expr:
        return _read_series(expr, series, defined, has_periods)

    out = []
    for s in statements:  # a statement with nothing to read is kept as it is (the same object)
        if isinstance(s, ir.Definition):
            if isinstance(s.expr, ir.Series):
                first = rewrite(s.expr.first, None)
                then = None if s.expr.then is None else rewrite(s.expr.then, s.name)
                if first is not s.expr.first or then is not s.expr.then:
                    s = dataclasses.replace(s, expr=dataclasses.replace(s.expr, first=first, then=then))
            else:
                expr = rewrite(s.expr, None)
                constraints = tuple(c if c.condition is None or rewrite(c.condition, None) is c.condition
                                    else dataclasses.replace(c, condition=rewrite(c.condition, None))
                                    for c in s.constraints)
                if expr is not s.expr or any(a is not b for a, b in zip(constraints, s.constraints)):
                    s = dataclasses.replace(s, expr=expr, constraints=constraints)
        elif isinstance(s, (ir.Check, ir.ProbabilityCheck, ir.Solve)):
            condition = rewrite(s.condition, None)
            if condition is not s.condition:
                s = dataclasses.replace(s, condition=condition)
        elif isinstance(s, ir.Optimize):
            objective = rewrite(s.objective, None)
            if objective is not s.objective:
                s = dataclasses.replace(s, objective=objective)
        out.append(s)
    return out


def _series_context(statements) -> tuple[frozenset, bool]:
    defined = frozenset(s.name for s in statements if isinstance(s, (ir.Definition, ir.FunctionDef)))
    return defined, any(isinstance(s, ir.Periods) for s in statements)


def read_series(plan: ir.PlanIR, expr: ir.Expr) -> ir.Expr:
    """An expression typed outside the plan (``--probability "min(cash) < 0 USD"``) read as the plan's own
    formulas are: ``min(cash)`` a reduction of a series where the plan has periods, ``never`` a value."""
    defined, has_periods = _series_context(plan.statements)
    return _read_series(expr, None, defined, has_periods)


def _read_series(expr: ir.Expr, series: Optional[str], defined: frozenset, has_periods: bool) -> ir.Expr:
    if expr is None or not any(_to_read(node, defined, has_periods) for node in ir.walk(expr)):
        return expr  # the same object: the editor keeps the statements a keystroke did not touch
    return _rewrite_series(expr, series, defined, has_periods)


def _to_read(node, defined: frozenset, has_periods: bool) -> bool:
    if isinstance(node, ir.Name):
        return node.name not in defined and (node.name == "never" or (has_periods and node.name in ("period", "previous")))
    return has_periods and isinstance(node, ir.Call) and node.func not in defined and \
        (node.func == "previous" or (node.func in ir.REDUCTIONS and len(node.args) == 1))


def _rewrite_series(expr: ir.Expr, series: Optional[str], defined: frozenset, has_periods: bool) -> ir.Expr:
    def fn(node):
        if isinstance(node, ir.Name) and node.name not in defined:
            if node.name == "never":
                return ir.Never(node.span)
            if has_periods and node.name == "period":
                return ir.Period(node.span)
            if has_periods and node.name == "previous":
                if series is None:
                    raise ParseError("`previous` alone is the series being defined, in the `then` part of "
                                     "a series", node.span, label="not inside a series' `then`",
                                     hint="name the series: `previous(cash)`, or give its first value: "
                                          "`previous(cash, 0 USD)`")
                return ir.Previous(series, None, node.span, node.span)
        if isinstance(node, ir.Call) and has_periods and node.func not in defined:
            positional = [a for a in node.args if a.name is None]
            if node.func == "previous":
                if not 1 <= len(node.args) <= 2 or len(positional) != len(node.args) \
                        or not isinstance(node.args[0].value, ir.Name):
                    raise ParseError("`previous` takes a series' name and, optionally, its value before the "
                                     "first period", node.span, label="expected `previous(cash)` or "
                                     "`previous(cash, 0 USD)`")
                target = node.args[0].value
                init = node.args[1].value if len(node.args) == 2 else None
                if init is None and series is None:
                    raise ParseError(f"`previous({target.name})` has no value in the first period",
                                     node.span, label="outside a series' `then`",
                                     hint=f"give it one: `previous({target.name}, 0)` (in the unit of "
                                          f"`{target.name}`)")
                return ir.Previous(target.name, init, node.span, target.span)
            if node.func in ir.REDUCTIONS and len(node.args) == 1 and positional:
                return ir.Reduce(node.func, node.args[0].value, None, node.span, node.name_span)
        return node
    return ir.transform(expr, fn)


def _name_span(span: Span, name: str) -> Span:
    """The span of ``name`` inside ``span`` (a statement whose IR keeps no span for that name)."""
    at = span.text.find(name)
    return Span(span.source, span.start + max(at, 0), span.start + max(at, 0) + len(name)) if at >= 0 else span


def _refuse_reserved(statements) -> None:
    """A reserved word (`and`, `true`, `where`, ...) names nothing: not a quantity, function, parameter,
    unit, scenario, axis, axis member, namespace or answer, wherever it stands (the contextual lexer
    reads a keyword as a name where only a name fits, so the grammar alone lets `and = 1` through)."""
    words = keywords()
    named: list[tuple[str, Span, str]] = []
    for s in statements:
        if not isinstance(s, ir.Import) or s.alias:  # (a name imported is the file's it comes from: not found there)
            named.extend(ir.defines(s))
        if isinstance(s, ir.FunctionDef):
            named.extend((p.name, _name_span(p.span, p.name), "a parameter") for p in s.params)
        elif isinstance(s, ir.Axis):
            named.extend((m.name, m.name_span, "an axis member") for m in s.members)
    for name, span, what in named:
        if name in words:
            raise ParseError(f"`{name}` is a reserved word and cannot name {what}", span, label="reserved",
                             hint=f"pick another name, such as `{name}_` or `my_{name}`")


def lower_expr(source: Source) -> ir.Expr:
    """Parse a lone expression (``--set`` values, ``--where`` conditions)."""
    tree = parse(source, start="expr")
    return _transform(source, tree, _Lower(source))


def lower_values(source: Source) -> ir.Values:
    """Parse sweep values typed on the command line (``0.3,0.6``, ``1..8``, ``1..1024 times 2``)."""
    tree = parse(source, start="cli_values")
    return _transform(source, tree, _Lower(source))
