"""planner: plans of named quantities and formulas, with units, scenarios,
solving, live Excel workbooks and Markdown reports.

A ``.plan`` file defines quantities (``hbm_bandwidth = 3.0 TB/s``,
``step = weights / hbm_bandwidth -> ms``), scenarios, checks and questions.
From Python::

    import planner

    plan = planner.load("sheets/token_cost.plan")     # raises planner.PlanError, located
    plan.eval(scenario="all")                         # every quantity per scenario (EvalResult)
    plan.eval(overrides={"hbm_bandwidth": "4.8 TB/s"})["batch1_weight_bound"]   # 29.1667 ms
    plan.check().ok                                   # every `check` (CheckResults)
    plan.solve()["breakeven_alpha"]                   # the plan's questions (SolveResults)
    plan.solve("alpha", where="speedup = 1")          # or your own
    plan.sweep({"alpha": [0.3, 0.6, 0.9]}, show=["speedup"])   # SweepResults
    plan.sensitivity("speedup")                       # elasticities (SensitivityResults)
    plan.explain("speedup")                           # formula, over inputs, inputs (Explanation)
    plan.simulate(["cost"], samples=10_000)          # Monte Carlo over uncertain inputs (SimulationResults)

Results print as the terminal prints them, show as tables in notebooks and
become pandas DataFrames with ``to_pandas()`` (pandas is optional). Values
are :class:`Value` objects: a number in the quantity's display unit with
the unit. Overrides take units: a text such as ``"4.8 TB/s"`` (plan syntax)
or a ``Value``; a bare number for an input with a unit is an error.

The command line is ``planner`` (or ``python -m planner``); see
``planner --help`` and the README.
"""


__version__ = "0.1.0"

# The API pulls in lark and numpy (SymPy too for questions); imported on first use,
# so `planner --help` and `planner --version` start at once (PlanError too: its module
# brings dataclasses and typing).
_LAZY = {
    "PlanError": "planner.language.errors",
    "load": "planner.plan", "loads": "planner.plan", "Plan": "planner.plan", "Evaluation": "planner.plan",
    "Value": "planner.plan", "EvalResult": "planner.plan", "CheckResults": "planner.plan",
    "SolveResults": "planner.plan", "SweepResults": "planner.plan", "SweepTable": "planner.plan",
    "SensitivityResults": "planner.plan", "Explanation": "planner.plan",
}

__all__ = sorted(["__version__", *_LAZY])


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)
