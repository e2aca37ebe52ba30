"""`python -m planner.cli`, as `planner`."""

from . import run

run()
