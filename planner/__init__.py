"""planner: plans of named quantities and formulas, with units, scenarios,
solving, live Excel workbooks and Markdown reports."""

from .errors import PlanError
from .plan import Evaluation, Plan, load, loads

__all__ = ["Plan", "Evaluation", "PlanError", "load", "loads"]
__version__ = "0.1.0"
