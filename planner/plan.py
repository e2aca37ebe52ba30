"""The Python API: load a plan, evaluate it per scenario, with overrides.

    >>> import planner
    >>> plan = planner.load("sheets/token_cost.plan")
    >>> plan.evaluate(scenario="int4_g128").display("batch_step_bound")
    19.26...

The door on top of the stages: :func:`load` and :func:`loads` read and check
a plan (:mod:`planner.language`) and compile it (:mod:`planner.compute`).
"""

from __future__ import annotations

from .compute.evaluation import Evaluation, Origin, Plan, load, loads
from .language.errors import PlanError

__all__ = ["Evaluation", "Origin", "Plan", "PlanError", "load", "loads"]
