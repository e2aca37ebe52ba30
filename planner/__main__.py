"""``python -m planner``: the same command line as ``planner``."""

from .cli import run

if __name__ == "__main__":
    run()
