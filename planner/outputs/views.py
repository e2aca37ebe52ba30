"""What a command prints, as result objects that render themselves.

Each view holds one command's results and renders them in every format the
command offers: ``table(width)`` (fitted to the terminal's width, or None),
``json()``, ``jsonl()``, ``csv()`` and ``markdown()``, each returning text.
The command line writes one with :func:`planner.cli.emit.emit`; the
renderers themselves are :mod:`.terminal`'s, :mod:`.simulation`'s and
:mod:`.summary`'s (imported when a view renders: this module costs nothing
at start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Optional, Sequence


class CheckView:
    """`planner check`: every check's result."""

    def __init__(self, plan: Any, results: Sequence[Any], verbose: bool = False, color: bool = False) -> None:
        self.plan, self.results, self.verbose, self.color = plan, results, verbose, color

    def table(self, width: Optional[int]) -> str:
        from .terminal import check_text, wrap_text

        return wrap_text(check_text(self.results, self.verbose, self.color), width)

    def json(self) -> str:
        from .terminal import check_json, dumps

        return dumps(check_json(self.plan, self.results))

    def jsonl(self) -> str:
        from .terminal import check_jsonl

        return check_jsonl(self.results)

    def markdown(self) -> str:
        from .terminal import check_markdown

        return check_markdown(self.results)


class SensitivityView:
    """`planner sensitivity`: one quantity's elasticities, per scenario."""

    def __init__(self, plan: Any, results: Sequence[Any]) -> None:
        self.plan, self.results = plan, results

    def table(self, width: Optional[int]) -> str:
        from .terminal import sensitivity_table

        return "\n\n".join(sensitivity_table(r, width) for r in self.results)

    def json(self) -> str:
        from .terminal import dumps, sensitivity_json

        return dumps(sensitivity_json(self.plan, self.results))

    def csv(self) -> str:
        from .terminal import sensitivity_csv

        return sensitivity_csv(self.results)

    def jsonl(self) -> str:
        from .terminal import sensitivity_jsonl

        return sensitivity_jsonl(self.results)

    def markdown(self) -> str:
        from .terminal import sensitivity_markdown

        return "\n\n".join(sensitivity_markdown(r) for r in self.results)


class SolveView:
    """`planner solve`: the answers, the errors, and the questions with no answer in their domain."""

    def __init__(self, plan: Any, results: Sequence[Any], errors: Sequence[Any] = (),
                 missing: Sequence[tuple[Any, Any, Any]] = ()) -> None:
        self.plan, self.results, self.errors, self.missing = plan, results, errors, missing

    def no_answer(self) -> list[str]:
        """A line for each question with no answer in a scenario: where it is, what, and why."""
        return [f"{q.span.location()}: {q.alias or ' '.join(q.span.flat.split())[:60]} [{scenario or 'base'}]: "
                f"no answer in the domain: {err.message}" for q, scenario, err in self.missing]

    def table(self, width: Optional[int]) -> str:
        from .terminal import solve_text, wrap_text

        text = solve_text(self.results) if self.results else ""
        no_answer = self.no_answer()
        if no_answer:
            text = (text.rstrip("\n") + "\n\n" if text else "") + "\n".join(no_answer) + "\n"
        return wrap_text(text, width)

    def json(self) -> str:
        from .terminal import dumps, solve_json

        return dumps(solve_json(self.plan, self.results, self.errors, self.missing))

    def csv(self) -> str:
        from .terminal import solve_csv

        return solve_csv(self.results)

    def jsonl(self) -> str:
        from .terminal import solve_jsonl

        return solve_jsonl(self.results)

    def markdown(self) -> str:
        from .terminal import solve_markdown

        return solve_markdown(self.results)


class SimulationView:
    """`planner simulate`: each quantity's figures over the samples, per scenario (in memory or in chunks)."""

    def __init__(self, sims: Sequence[Any], names: Sequence[str], percentiles: Sequence[float],
                 probabilities: Sequence[tuple[str, Any]] = (), sensitivity: bool = False,
                 flags: Sequence[str] = ()) -> None:
        self.sims, self.names, self.percentiles = sims, names, percentiles
        self.probabilities, self.sensitivity, self.flags = probabilities, sensitivity, flags

    def table(self, width: Optional[int]) -> str:
        from .simulation import text

        return text(self.sims, self.names, self.percentiles, self.probabilities, width, self.sensitivity, self.flags)

    def json(self) -> str:
        from .simulation import as_json

        return as_json(self.sims, self.names, self.percentiles, self.probabilities)

    def csv(self) -> str:
        from .simulation import as_csv

        return as_csv(self.sims, self.names, self.percentiles)

    def markdown(self) -> str:
        from .simulation import markdown

        return markdown(self.sims, self.names, self.percentiles, self.probabilities, self.flags)


class SweepSummaryView:
    """`planner sweep --dask`: each sweep's figures over its whole grid."""

    def __init__(self, results: Sequence[Any]) -> None:
        self.results = results

    def table(self, width: Optional[int]) -> str:
        from .summary import text

        return text(self.results, width)

    def json(self) -> str:
        from .summary import as_json

        return as_json(self.results)

    def csv(self) -> str:
        from .summary import as_csv

        return as_csv(self.results)

    def markdown(self) -> str:
        from .summary import markdown

        return markdown(self.results)
