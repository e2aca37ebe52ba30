"""One door per question: no question logic is copied between the modules that ask the questions
(planner/questions), the doors (the command line, the API, the language server) and the report and
workbook builder. The scan is pylint's duplicate-code check (runs where pylint is installed:
`pip install pylint`; by hand: `pylint --disable=all --enable=duplicate-code planner`)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ["planner/questions", "planner/lsp", "planner/cli", "planner/plan.py", "planner/outputs/viewmodel.py",
           "planner/outputs/views.py", "planner/outputs/build.py"]


def test_no_question_logic_is_copied_between_modules():
    pytest.importorskip("pylint")
    import io

    from pylint.lint import Run
    from pylint.reporters.text import TextReporter

    out = io.StringIO()
    Run(["--disable=all", "--enable=duplicate-code",
         *[str(ROOT / p) for p in SCANNED]], reporter=TextReporter(out), exit=False)
    copies = [line for line in out.getvalue().splitlines() if line.startswith("==")]
    assert copies == [], out.getvalue()
