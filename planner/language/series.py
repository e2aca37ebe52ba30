"""Series over periods: which quantities have a value per period, and the rules they keep.

A plan declares its periods once (``periods = 1 month..60 month``). A quantity is *per period* (a
series) when it is declared with ``series``, or when its formula uses ``period``, ``previous`` or
another per-period quantity outside a reduction (``sum(x)``, ``x at 36 month``...): ``margin =
revenue - cost`` is a series when ``revenue`` is. Everything else is one figure, as before.

The rules (each a located error): a series needs the plan's periods; a reduction or ``at`` reduces a
series, not a figure; inside a series, ``at`` would read another period of a series being computed
(a later one, possibly): ``previous`` is the way to the period before; ``previous(x)`` names a
series; a condition of a check, a solve or a constraint reduces the series it uses. A loop within
one period (``a = b + 1``, ``b = a * 2``, both series) is the cycle every formula's dependency graph
reports, path named; ``previous`` is no edge of that graph, so a recurrence is no cycle.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Callable, Iterable, Mapping, Optional

from . import ir
from .errors import ArityError, KindError

_SERIES_NODES = (ir.Period, ir.Previous, ir.Series, ir.PeriodTable)


def period_uses(expr: ir.Expr):
    """The nodes of ``expr`` read in the period being computed: not those inside a reduction or
    inside the series an ``at`` reads (those are whole series)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ir.Reduce):
            continue
        if isinstance(node, ir.At):
            stack.append(node.when)
            continue
        stack.extend(ir.children(node))


def at_inside(name: str, node: ir.At) -> KindError:
    """``x at 3 month`` inside the series ``name``: it would read another (perhaps a later) period."""
    return KindError(f"inside the series `{name}`, `at` would read another period of a series", node.span,
                     label="a value at another period (perhaps a later one)",
                     hint="a series reads the period before with `previous(x)`; take `x at ...` in a figure of its own")


def cycle_through_at(path: list[str], defs: Mapping) -> Optional[KindError]:
    """A dependency cycle (``path``, each name using the next) that goes through ``x at ...`` inside a
    series (``series cash = ... + cash at 3 month``): the ``at`` is the mistake, not the cycle."""
    for a, b in zip(path, path[1:]):
        d = defs.get(a)
        if d is None or not isinstance(d.expr, ir.Series):
            continue
        for node in period_uses(d.expr):
            if isinstance(node, ir.At) and any(isinstance(n, ir.Name) and n.name == b for n in ir.walk(node.series)):
                return at_inside(a, node)
    return None


def previous_names(expr: ir.Expr) -> set[str]:
    """The quantities ``expr`` reads in the period before (``previous(x)``)."""
    return {n.name for n in ir.walk(expr) if isinstance(n, ir.Previous)}


def mark(quantities: Mapping, order: Iterable[str], function_refs: Callable[[str], Iterable[str]],
         functions: Mapping, periods: Optional[ir.Periods], sink) -> None:
    """Set ``per_period`` on each quantity (in dependency order) and report what breaks the rules."""
    for name in order:
        q = quantities[name]
        expr = q.definition.expr
        if periods is not None:
            flows = _flows_of_periods(expr, quantities, periods, functions)
            if flows is not expr:
                q.definition = dataclasses.replace(q.definition, expr=flows)
                expr = flows
        q.per_period = per = isinstance(expr, ir.Series) or per_period(expr, quantities, functions, function_refs)
        if per:
            q.deps = tuple(sorted(set(q.deps) | {n for n in previous_names(expr) if n in quantities and n != name}))
    for name in order:
        q = quantities[name]
        _check(q, quantities, periods, functions, sink)


def _check(q, quantities: Mapping, periods: Optional[ir.Periods], functions: Mapping, sink) -> None:
    expr = q.definition.expr  # (a series in a plan without periods: refused as it is lowered)
    for node in ir.walk(expr):
        if isinstance(node, (ir.Reduce, ir.At)):
            inner = node.body if isinstance(node, ir.Reduce) else node.series
            if not per_period(inner, quantities):
                what = f"`{node.op}`" if isinstance(node, ir.Reduce) else "`at`"
                sink.add(KindError(f"{what} reduces a series; `{inner.span.flat}` is one figure", inner.span,
                                   label="not a series",
                                   hint="a series is declared with `series name = ...` or uses one per period"))
        if isinstance(node, ir.At) and q.per_period and node.span == node.series.span and \
                node in set(period_uses(expr)):  # a flow of `npv(rate, net)` (_flows_of_periods), not an `at` written
            sink.add(KindError(f"inside the series `{q.name}`, the cash flows of a series are every period of it",
                               node.span, label="a series' periods as cash flows",
                               hint="take the `npv` or `irr` in a figure of its own (`value = npv(rate, net)`) and "
                                    "use that figure in the series"))
        elif isinstance(node, ir.At) and q.per_period and node in set(period_uses(expr)):
            sink.add(at_inside(q.name, node))
        if isinstance(node, ir.Call) and node.func not in functions:
            _flows_of_a_series(node, quantities, periods, sink)
        if isinstance(node, ir.Previous):
            target = quantities.get(node.name)
            if target is not None and not target.per_period:
                sink.add(KindError(f"`{node.name}` is one figure, not a series: it has no previous period",
                                   node.name_span, label="not a series",
                                   hint=f"use `{node.name}` itself, or declare it with `series {node.name} = ...`"))


def _flows_of_periods(expr: ir.Expr, quantities: Mapping, periods: ir.Periods, functions: Mapping) -> ir.Expr:
    """``npv(rate, net)`` with ``net`` a series: its value in each period is a cash flow, one period apart
    (Excel's NPV and IRR over the series' row): ``npv(rate, net at 1 month, ..., net at 36 month)``, as
    ``npv(rate, net at m for m in 1 month..36 month)`` lists them. ``expr`` itself when there is none (or the
    periods' ends are not numbers as written: :func:`_flows_of_a_series` then says what to write)."""
    from .functions import FUNCTIONS
    from .lower import MAX_FLOWS

    ends = [ir.literal(e) for e in periods.values.items]
    if periods.values.kind not in ("range", "step") or any(e is None for e in ends):
        return expr
    (start, unit), (stop, _) = ends[0], ends[1]
    step = ends[2][0] if len(ends) > 2 else Fraction(1)
    count = 0 if step <= 0 or stop < start else int((stop - start) // step) + 1
    changed = []

    def flows(node):
        f = FUNCTIONS.get(node.func) if isinstance(node, ir.Call) and node.func not in functions else None
        if f is None or f.flows is None or len(node.args) != f.flows + 1 or not 0 < count <= MAX_FLOWS \
                or not per_period(node.args[-1].value, quantities):
            return node
        series = node.args[-1]
        changed.append(node)
        return dataclasses.replace(node, args=node.args[:-1] + tuple(
            ir.Arg(None, ir.At(series.value, ir.Number(start + k * step, unit, series.span), series.span), series.span)
            for k in range(count)), over=(None, periods.values, series.value))  # printed as written

    out = ir.transform(expr, flows)
    return out if changed else expr


def _flows_of_a_series(call: ir.Call, quantities: Mapping, periods: Optional[ir.Periods], sink) -> None:
    """``npv(rate, net)``, ``irr(net)`` with ``net`` a series: its periods are not (yet) the cash flows; say
    so, with the spelling that reads them one by one (else npv would discount each period's value alone)."""
    from .functions import BUILTINS, FUNCTIONS

    f = FUNCTIONS.get(call.func)
    if f is None or f.flows is None:
        return
    lo = BUILTINS[call.func][0]
    if len(call.args) < lo:  # `irr(x)`, `x` one figure (analysis left it here, in case it was a series)
        sink.add(ArityError(f"`{call.func}` takes at least {lo} arguments, got {len(call.args)}", call.span,
                            hint=f"`{call.func}({BUILTINS[call.func][2]})`; the cash flows of a series, one a period:"
                                 f" `{call.func}(net)` with `net` a series"))
        return
    for arg in call.args[f.flows:]:
        if per_period(arg.value, quantities):
            before = "".join(a.span.flat + ", " for a in call.args[:f.flows])
            over, after = periods.values.span.flat if periods is not None else "1 month..36 month", ""
            stop = periods.values.items[1] if periods is not None else None
            q = quantities.get(stop.name) if isinstance(stop, ir.Name) else None
            if q is not None and q.upper is None:
                # the periods end at an input (`1 month..horizon`): a range is sized from its declared bounds
                from .aggregates import _example

                after = f", after `where {stop.name} <= {_example(q, 'upper')}` on `{stop.name}`"
            hint = (f"read the series period by period with `at`: `{call.func}({before}{arg.span.flat} at m for m in "
                    f"{over})`{after} (the first period's flow is " + ("discounted one period, as Excel's NPV)"
                                                                 if call.func == "npv" else "today's, as Excel's IRR)"))
            if len(call.args) > f.flows + 1:  # other flows beside the series: each period's written out
                others = [a for a in call.args if a is not arg]
                before = "".join(a.span.flat + ", " for a in others)
                ends = periods.values.items if periods is not None else ()
                start = ir.literal(ends[0]) if ends else None
                over = (f"{arg.span.flat} at {ends[0].span.flat}, ..., {arg.span.flat} at {ends[1].span.flat}"
                        if len(ends) >= 2 else f"{arg.span.flat} at 1 month, ...")
                hint = f"list the series' flows one by one with `at`: `{call.func}({before}{over})`"
                if call.func == "irr" and len(others) == 1 and arg is call.args[-1] and len(ends) == 2 \
                        and start is not None and start[0] == 1 and ir.literal(ends[1]) is not None:
                    # `irr(-capex, net)`: today's flow, then one a period: a range from period 0
                    zero = "0" + (f" {start[1].text}" if start[1] is not None else "")
                    hint = (f"put today's flow first in a range from period 0: `irr(if(m == {zero}, "
                            f"{others[0].span.flat}, {arg.span.flat} at m) for m in {zero}..{ends[1].span.flat})`")
            what = ("beside other flows: it takes the series alone or one cash flow per argument"
                    if len(call.args) > f.flows + 1 else "is not supported yet: it takes one cash flow per argument")
            sink.add(KindError(f"`{call.func}` of a series {what}", arg.span, label="a series (a value per period)",
                               hint=hint))
            return


def per_period(expr: ir.Expr, quantities: Mapping, functions: Mapping | tuple = (),
               function_refs: Optional[Callable[[str], Iterable[str]]] = None) -> bool:
    """Whether ``expr`` has a value per period (uses a series, ``period`` or ``previous`` outside a
    reduction; with ``function_refs``, the quantities each user function uses, calls one that uses a series)."""
    for node in period_uses(expr):
        if isinstance(node, _SERIES_NODES):
            return True
        if isinstance(node, ir.Name) and node.name in quantities and quantities[node.name].per_period:
            return True
        if function_refs is not None and isinstance(node, ir.Call) and node.func in functions and \
                any(n in quantities and quantities[n].per_period for n in function_refs(node.func)):
            return True
    return False


def check_condition(expr: ir.Expr, quantities: Mapping, sink, what: str) -> None:
    """A condition (of a check, a solve, a constraint) is one truth: the series it uses are reduced."""
    flows = {id(a.value): n.func for n in ir.walk(expr) if isinstance(n, ir.Call) and n.func in ("npv", "irr")
             for a in n.args}
    for node in period_uses(expr):
        if isinstance(node, ir.Name) and node.name in quantities and quantities[node.name].per_period:
            hint = f"reduce it: `min({node.name})`, `last({node.name})`, `{node.name} at 12 month` " \
                   f"or `count({node.name} < 0)`"
            if id(node) in flows:  # `check npv(rate, net) > 0`: the flows of a series, in a quantity of their own
                hint = (f"take the `{flows[id(node)]}` of a series in a quantity of its own (`value = "
                        f"{flows[id(node)]}(..., {node.name})`) and use it here")
            sink.add(KindError(f"`{node.name}` is a series (a value per period): {what} needs one figure", node.span,
                               label="a series", hint=hint))
            return
        if isinstance(node, (ir.Period, ir.Previous)):
            sink.add(KindError(f"{what} needs one figure, not a value per period", node.span,
                               label="per period", hint="use it inside a reduction such as `first(period where ...)`"))
            return
