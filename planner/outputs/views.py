"""What a command prints, as result objects that render themselves.

Each view holds one command's results and renders them in every format the
command offers: ``table(width)`` (fitted to the terminal's width, or None),
``json()``, ``jsonl()``, ``csv()`` and ``markdown()``, each returning text.
The command line writes one with :func:`planner.cli.emit.emit`; the
renderers themselves are :mod:`.terminal`'s (imported when a view renders:
this module costs nothing at start-up). ``planner simulate``'s view is
:class:`.simulation.SimulationView`, ``planner sweep --dask``'s
:class:`.summary.SweepSummaryView`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Optional, Sequence


class EvalView:
    """`planner eval`: every quantity's value per scenario (``names``; None: none shown), and the
    questions' answers beside them in the table and the JSON (``answers``: their names, values per
    (name, scenario label), units and questions as written)."""

    def __init__(self, plan: Any, evaluations: Sequence[Any], names: Optional[Sequence[str]],
                 answers: Optional[dict] = None) -> None:
        self.plan, self.evaluations, self.names, self.answers = plan, evaluations, names, answers

    def table(self, width: Optional[int]) -> str:
        from ..language.live import plain
        from .terminal import eval_table, wrap_text

        text = "" if self.names is None else \
            f"{wrap_text(plain(self.plan.title), width)}\n\n{eval_table(self.plan, self.evaluations, self.names, width)}"
        series = self._series()
        if series:
            from .terminal import series_table

            text = text.rstrip("\n") + "\n\n" + series_table(self.plan, self.evaluations, series, width) + "\n"
        if not self.answers:
            return text
        from ..compute.evaluation import format_value
        from ..language.errors import PlanError
        from .terminal import fit

        a = self.answers
        rows = []
        for name in a["names"]:
            unit = a["units"][name]  # an answer alone, as solve, the report and the workbook write it (money to cents)
            cells = [name] + [("no answer" if isinstance(v, PlanError) else format_value(v, unit).removesuffix(" " + unit))
                              for ev in self.evaluations for v in [a["values"][(name, ev.label)]]]
            rows.append(cells + [a["units"][name], a["questions"][name]])
        headers = ["answer"] + [ev.label for ev in self.evaluations] + ["unit", "question"]
        table = fit(rows, headers, ["left"] + ["right"] * len(self.evaluations) + ["left", "left"], width, keep=1,
                    tail=2, wrap=len(headers) - 1, what="scenarios")
        return (text.rstrip("\n") + "\n\n" if text else "") + table + "\n"

    def data(self) -> dict[str, Any]:
        """The JSON's data (``planner.eval/1``), with the answers when there are any."""
        from .terminal import eval_json, json_number

        if self.names is not None:
            data = eval_json(self.plan, self.evaluations, self.names)
        else:
            data = {"format": "planner.eval/1", "file": self.plan.path,
                    "scenarios": [ev.label for ev in self.evaluations]}
        series = self._series()
        if series:
            from .terminal import series_json

            data["series"] = series_json(self.plan, self.evaluations, series)
        if self.answers:
            from ..language.errors import PlanError

            a = self.answers
            data["answers"] = {ev.label: {n: (json_number(v) if not isinstance(v, PlanError) else None)
                                          for n in a["names"] for v in [a["values"][(n, ev.label)]]}
                               for ev in self.evaluations}
            data["answer_units"] = dict(a["units"])
            data["answer_questions"] = dict(a["questions"])
        return data

    def json(self) -> str:
        from .terminal import dumps

        return dumps(self.data())

    def csv(self) -> str:
        from .terminal import eval_csv

        series = self._series()
        if series:  # the series in long form (a row per series and period), after the figures
            from .terminal import series_csv

            head = "" if self.names is None else eval_csv(self.plan, self.evaluations, self.names) + "\n"
            return head + series_csv(self.plan, self.evaluations, series)
        return "" if self.names is None else eval_csv(self.plan, self.evaluations, self.names)

    def _series(self) -> list:
        """The series to show (a plan's series, or those ``--only`` names)."""
        order = self.plan.series_order() if hasattr(self.plan, "series_order") else []
        only = getattr(self, "only", None)
        return [n for n in order if only is None or n in only]

    def jsonl(self) -> str:
        from .terminal import eval_jsonl

        text = "" if self.names is None else eval_jsonl(self.plan, self.evaluations, self.names)
        series = self._series()
        if series:  # after the figures, a line per scenario, series and period (the JSON's series records)
            from .terminal import series_jsonl

            text = (text + "\n" if text else "") + series_jsonl(self.plan, self.evaluations, series)
        return text

    def markdown(self) -> str:
        from ..language.live import plain
        from .markup import text
        from .terminal import eval_markdown

        out = "" if self.names is None else \
            f"# {text(plain(self.plan.title))}\n\n{eval_markdown(self.plan, self.evaluations, self.names)}"
        series = self._series()
        if series:  # after the figures, as the table shows them
            from .terminal import series_markdown

            out = (out.rstrip("\n") + "\n\n" if out else "") + series_markdown(self.plan, self.evaluations, series)
        return out


class ImportView(EvalView):
    """`planner import`: the plan evaluated with a workbook's edited inputs, and what the workbook changed
    (before the table or the Markdown; in the JSON's ``workbook``)."""

    def __init__(self, plan: Any, evaluations: Sequence[Any], names: Sequence[str], imported: Any,
                 workbook: str) -> None:
        super().__init__(plan, evaluations, names)
        self.imported, self.workbook = imported, workbook

    def _described(self, text: str) -> str:
        from .excel.reader import describe

        return f"{describe(self.imported)}\n\n{text}"

    def table(self, width: Optional[int]) -> str:
        return self._described(super().table(width))

    def markdown(self) -> str:
        return self._described(super().markdown())

    def data(self) -> dict[str, Any]:
        data = super().data()
        i = self.imported
        data["workbook"] = {"file": self.workbook, "warnings": i.warnings, "missing": i.missing,
                            "changes": [{"name": c.name, "cell": c.cell, "plan": c.plan_value,
                                         "workbook": c.book_value, "unit": c.unit, "scenario": c.scenario}
                                        for c in i.changes]}
        return data


class LibraryView:
    """`planner library`: the plans shipped with planner, each with its title."""

    def __init__(self, entries: Sequence[tuple[str, str]]) -> None:
        self.entries = entries

    def table(self, width: Optional[int]) -> str:
        rows = [f"{entry:<28} {title}" for entry, title in self.entries]
        return "\n".join(rows) + '\n\nuse: import "PATH" as NAME   (e.g. import "hardware/h100_sxm.plan" as h100)'


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


class SweepView:
    """`planner sweep`: every point of each sweep, written as it is computed (in bounded memory, block by
    block: :mod:`.stream`), so it renders onto a stream rather than into one text: :meth:`write`.
    ``totals`` (points, and those --limit left out) is there once it is written."""

    def __init__(self, runs: Sequence[Any], limit: Optional[int] = None, progress: Any = None) -> None:
        self.runs, self.limit, self.progress = runs, limit, progress
        self.totals: Any = None

    def write(self, fmt: str, out: Any, width: Optional[int]) -> None:
        from .stream import write

        self.totals = write(self.runs, fmt, out, self.limit, self.progress, width=width)


class ExplainView:
    """`planner explain`: one quantity from its formula down to its inputs, per scenario."""

    def __init__(self, explanations: Sequence[Any]) -> None:
        self.explanations = explanations

    def table(self, width: Optional[int]) -> str:
        from .terminal import explain_text, wrap_text

        return wrap_text("\n\n".join(explain_text(e) for e in self.explanations), width)


class BuildView:
    """`planner build`: the headline figures per scenario, the answers, the checks and the files written."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def table(self, width: Optional[int]) -> str:
        from .build import summary

        return summary(self.result)
