"""Every check of a plan: the deterministic ones (:mod:`planner.questions.checks`) and the probability
checks against a simulation (:mod:`planner.questions.simulate`), the one list ``planner check`` and
:meth:`planner.Plan.check` both run. Its own module because the simulation's results are check results
(``simulate`` imports ``checks``), and the simulation is imported only for a plan that has such checks."""

from __future__ import annotations

from typing import Optional

from ..compute.evaluation import Plan
from ..language import ir
from .checks import run_checks


def run_every_check(plan: Plan, samples: Optional[int] = None, seed: int = 0, method: str = "lhs") -> list:
    """Every check of the plan, the probability checks too (``check P(...) >= 90%``, against one
    simulation per scenario: ``samples``, ``seed``, ``method`` as ``planner simulate`` takes them): what
    ``planner check`` and :meth:`planner.Plan.check` both run."""
    results = run_checks(plan)
    if any(isinstance(s, ir.ProbabilityCheck) for s in plan.model.plan.statements):
        from .simulate import DEFAULT_SAMPLES, run_probability_checks

        results += run_probability_checks(plan, samples or DEFAULT_SAMPLES, seed, method)
    return results
