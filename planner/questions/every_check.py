"""Every check of a plan: the deterministic ones (:mod:`planner.questions.checks`) and the probability
checks against a simulation (:mod:`planner.questions.simulate`), the one list ``planner check``,
:meth:`planner.Plan.check`, the report and workbook builder and the language server all run. Its own
module because the simulation's results are check results (``simulate`` imports ``checks``), and the
simulation is imported only for a plan that has such checks."""

from __future__ import annotations

from typing import Optional

from ..compute.evaluation import Plan
from ..language import ir
from .checks import run_checks


def has_probability_checks(plan: Plan) -> bool:
    """Whether the plan has a ``check P(...)`` (or another statistic): those need a simulation."""
    return any(isinstance(s, ir.ProbabilityCheck) for s in plan.model.plan.statements)


def run_every_check(plan: Plan, samples: Optional[int] = None, seed: int = 0, method: str = "lhs",
                    answers=None, sims: Optional[dict] = None) -> list:
    """Every check of the plan, the probability checks too (``check P(...) >= 90%``, against one
    simulation per scenario: ``samples``, ``seed``, ``method`` as ``planner simulate`` takes them): what
    ``planner check``, :meth:`planner.Plan.check`, the report and the editor all run. ``answers`` (a
    :class:`planner.questions.fast.Answers`) and ``sims`` (scenario -> a simulation already run with
    those defaults) share what a caller already has."""
    results = run_checks(plan, answers)
    if has_probability_checks(plan):
        from .simulate import DEFAULT_SAMPLES, run_probability_checks

        results += run_probability_checks(plan, samples or DEFAULT_SAMPLES, seed, method, sims=sims)
    return results
