"""The Python API: load a plan, evaluate it per scenario, with overrides.

    >>> import planner
    >>> plan = planner.load("sheets/token_cost.plan")
    >>> plan.evaluate(scenario="int4_g128").display("batch_step_bound")
    19.26...

The door on top of the stages: :func:`load` and :func:`loads` read and check
a plan (:mod:`planner.language`) and compile it (:mod:`planner.compute`).
"""

from __future__ import annotations

import os
from typing import Union

from .compute import evaluation
from .compute.evaluation import Evaluation, Origin, Plan
from .language.errors import PlanError

__all__ = ["Evaluation", "Origin", "Plan", "PlanError", "load", "loads"]


def _answers(plan: Plan):
    """What answers the plan's questions when a formula uses an answer (imported then, not at start-up)."""
    from .questions.solve import Answers

    return Answers(plan)


def loads(text: str, name: str = "<plan>", base: Union[str, os.PathLike, None] = None,
          all_imports: bool = False) -> Plan:
    """Load plan text (:func:`planner.compute.evaluation.loads`); formulas may use questions' answers."""
    return evaluation.loads(text, name, base, all_imports, answers=_answers)


def load(path: Union[str, os.PathLike], all_imports: bool = False) -> Plan:
    """Parse, check and prepare a ``.plan`` file (:func:`planner.compute.evaluation.load`). Raises
    :class:`PlanError`. ``all_imports=True`` keeps every quantity of the imported plans, used or not."""
    return evaluation.load(path, all_imports, answers=_answers)
