"""planner: plans of named quantities and formulas, with units, scenarios,
solving, live Excel workbooks and Markdown reports."""

from .language.errors import PlanError

__all__ = ["Plan", "Evaluation", "PlanError", "load", "loads"]
__version__ = "0.1.0"


def __getattr__(name: str):
    # The API pulls in SymPy and numpy (~0.25 s); imported on first use, so
    # `planner --help` and `planner --version` start at once.
    if name in ("Plan", "Evaluation", "load", "loads"):
        from . import plan

        return getattr(plan, name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")
