"""Dependency graph of quantities: topological order, cycles as errors.

Uses the standard library's :mod:`graphlib`, which reports a cycle's path.
"""

from __future__ import annotations

import graphlib
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from .errors import CycleError, Label
from .source import Span

if TYPE_CHECKING:
    from .model import Model


def topological_order(
    deps: Mapping[str, Sequence[str]],
    spans: Mapping[str, Span],
    ref_span: Callable[[str, str], Span],
) -> list[str]:
    """Names ordered so every quantity comes after the ones it uses.

    Ties keep definition order, so output is deterministic.
    """
    order = _static_order(deps)
    if order is not None:
        return order
    sorter = graphlib.TopologicalSorter()  # a cycle: graphlib finds its path for the message
    for name in deps:
        sorter.add(name, *deps[name])
    try:
        return list(sorter.static_order())
    except graphlib.CycleError as exc:
        cycle = list(exc.args[1])  # [a, b, ..., a], each depends on the next... reversed
        cycle.reverse()  # now each entry uses the next one
        # Rotate so the cycle starts at the earliest-defined name.
        body = cycle[:-1]
        first = min(body, key=lambda n: spans[n].start)
        i = body.index(first)
        body = body[i:] + body[:i]
        path = body + [body[0]]
        labels = [Label(ref_span(a, b), f"`{a}` uses `{b}`") for a, b in zip(path, path[1:])]
        main = labels.pop(0) if labels else None
        error = CycleError(
            "dependency cycle: " + " -> ".join(path),
            main.span if main else spans[first],
            label=main.text if main else "",
            labels=labels,
            hint="a quantity cannot depend on itself; make one of them an input",
        )
        error.path = path  # each name uses the next
        raise error from None


def _static_order(deps: Mapping[str, Sequence[str]]) -> list[str] | None:
    """``TopologicalSorter`` given ``add(name, *deps[name])`` for each name, then ``static_order()``:
    the same order (graphlib's: nodes as first met, the ready ones in rounds, each round in the
    order they became ready, which is a queue), or None when there is a cycle. graphlib's own
    walks the whole graph once more looking for a cycle before it starts, with a method call per
    node and edge: a sixth of checking a 100,000-line plan."""
    waiting: dict[str, int] = {}  # a node's dependencies not yet ordered, nodes in graphlib's order
    users: dict[str, list[str]] = {}
    for name, ds in deps.items():
        if name not in waiting:
            waiting[name] = 0
            users[name] = []
        for d in ds:
            if d not in waiting:
                waiting[d] = 0
                users[d] = [name]
            else:
                users[d].append(name)
        waiting[name] += len(ds)
    order = [n for n, count in waiting.items() if not count]
    for node in order:  # (the list grows as it is read: a queue)
        for user in users[node]:
            count = waiting[user] - 1
            waiting[user] = count
            if not count:
                order.append(user)
    return order if len(order) == len(waiting) else None


def cone(model: "Model", names: Iterable[str]) -> list[str]:
    """``names`` and every quantity they use, directly or not, dependencies first.

    Walked with a stack, not recursion: a chain of thousands of formulas is fine."""
    order: list[str] = []
    seen: set[str] = set()
    for root in names:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(model.quantities[root].deps))]
        while stack:
            name, deps = stack[-1]
            d = next((d for d in deps if d not in seen), None)
            if d is None:
                stack.pop()
                order.append(name)
            else:
                seen.add(d)
                stack.append((d, iter(model.quantities[d].deps)))
    return order
