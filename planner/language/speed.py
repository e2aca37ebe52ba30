"""The speed tricks planner keeps, in one list, and the switch that turns them off.

Each trick is plain Python made faster where a measurement showed a user-visible gain; each has a
plain route it falls back to, and the test suite runs once over the plain routes
(``PLANNER_NO_TRICKS=1 pytest ...``, or ``pytest --no-tricks``; see ``.ci/run``), so a trick can
never be the only thing that makes a figure right.

=============  ==========================================  =====================================  ==========================
name           what                                        buys (measured)                        off: the plain route
=============  ==========================================  =====================================  ==========================
``lazy``       data classes made on first use             a third of a small ``planner eval``     ``dataclasses.dataclass``
               (:mod:`planner.language.lazy`)              (the IR's classes, made at import)     at import
``one-pass``   the parser's reductions call lowering's    a parse in half the time; the          lark's parse tree, then
               methods (:func:`.parser.parse_transform`,  language server's check of             the Transformer
               lark's private ``Shift``, ``_vargs_meta``)  ``llm_cost.plan`` 250 ms, not 410 ms
``gc``         no cyclic collection while a plan is       40% of the load of a 10,000-quantity   the collector runs as
               built, and what was built frozen           plan                                   Python runs it
               (:func:`.limits.paused_gc`, ``freeze``)
``worker``     a second process formats half of a big     a 1,000,000-point CSV on two cores      this process formats
               sweep's floats (:mod:`planner.outputs.     (three quarters of it is ``repr``)      every float
               reprs`)
``deep``       the plan's walks run on a thread with a    not speed: a formula nested thousands   the caller's thread (the
               big stack (:func:`.limits.deep`)           deep is refused cleanly instead of     parse-time limits still
                                                          crashing CPython's C stack              hold; tests/test_hostile.py
                                                                                                  passes either way)
``formulas``   the workbook's formulas stored without     a fifth of a 36-month plan's export    XlsxWriter's own step
               XlsxWriter's 30 ``_xlfn.`` passes each     (``gpu_buy_vs_rent``: 2.5 s to 1.9 s   (its private
               (:func:`planner.outputs.excel.writer.      of CPU)                                ``_prepare_formula``
               _prepared`)                                                                        left as it is)
=============  ==========================================  =====================================  ==========================

``PLANNER_NO_TRICKS`` is read once, when this module is imported: ``1`` (or ``all``) turns every
trick off; a comma-separated list of names (``lazy,worker``) turns off those. Anything else in it
is an error naming the tricks, not a silent no-op.
"""

from __future__ import annotations

import os

TRICKS = ("lazy", "one-pass", "gc", "worker", "deep", "formulas")
ENV = "PLANNER_NO_TRICKS"


def _off(value: str) -> frozenset:
    value = value.strip().lower()
    if value in ("", "0", "no", "false"):
        return frozenset()
    if value in ("1", "all", "yes", "true"):
        return frozenset(TRICKS)
    names = {n.strip() for n in value.split(",") if n.strip()}
    unknown = sorted(names - set(TRICKS))
    if unknown:
        raise ValueError(f"{ENV}: no trick named {', '.join(unknown)} (the tricks: {', '.join(TRICKS)}; "
                         f"1 turns every one off)")
    return frozenset(names)


OFF = _off(os.environ.get(ENV, ""))


def on(trick: str) -> bool:
    """Whether ``trick`` (one of :data:`TRICKS`) is in use."""
    if trick not in TRICKS:
        raise KeyError(trick)
    return trick not in OFF
