"""Where planner's data files are, installed or in a checkout.

``grammar/`` and ``templates/`` live at the top of the repository. An
install maps them into the package (``planner.grammar``, ``planner.templates``,
see pyproject.toml); a checkout used without installing (``python -c "import
planner"`` or ``python -m planner`` from the repository root) has them next
to ``planner/``. Both are found here, so the API and the CLI run either way.
The library (``planner/library``) is inside the package in both.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
_CHECKOUT = _PACKAGE.parent


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """The folder of ``grammar``, ``templates`` or ``library``: inside the package (installed), else
    at the top of the checkout, else wherever the import system has ``planner.NAME`` (importlib's
    resources are asked only then: importing them was a twentieth of a small ``planner eval``)."""
    for folder in (_PACKAGE / name, _CHECKOUT / name):
        if folder.is_dir():
            return folder
    from importlib import resources

    return Path(str(resources.files(f"planner.{name}")))
