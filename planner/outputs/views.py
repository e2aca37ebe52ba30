"""What a command prints, as result objects that render themselves.

Each view holds one command's results and renders them in every format the
command offers: ``table(width)`` (fitted to the terminal's width, or None),
``json()``, ``jsonl()``, ``csv()`` and ``markdown()``, each returning text.
The command line writes one with :func:`planner.cli.emit.emit`, and the
Python API's results (:mod:`.results`) print as the views' tables; the
tables, JSON and CSV are laid out by :mod:`.terminal`'s helpers.
``planner simulate``'s view is :class:`.simulation.SimulationView`,
``planner sweep --dask``'s :class:`.summary.SweepSummaryView`.

The JSON shapes are documented in docs/cli.md ("JSON output") and kept
stable: new keys may be added, existing ones keep their meaning.
"""

from __future__ import annotations

from ..compute.evaluation import format_value
from ..language.errors import PlanError
from ..language.live import plain as prose_text
from .numbers import answer_style, differing, period_number, plan_styles
from .terminal import (
    NEVER, _csv_value, answer_json, column_header, csv_rows, dumps, figure, figures, fit, json_number, jsonl,
    markdown_table, period_labels, wrap_text,
)

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Optional, Sequence
    from ..compute.evaluation import Evaluation, Plan
    from ..questions.explain import Explanation
    from ..questions.sensitivity import Sensitivity
    from ..questions.answer import SolveResult

EVAL_FORMAT = "planner.eval/1"
SOLVE_FORMAT = "planner.solve/1"


class EvalView:
    """`planner eval`: every quantity's value per scenario (``names``; None: none shown), the series over
    periods after them (``series``; None: the plan's), and the questions' answers beside them in the table
    and the JSON (``answers``: their names, values per (name, scenario label), units and questions as
    written)."""

    def __init__(self, plan: Plan, evaluations: Sequence[Evaluation], names: Optional[Sequence[str]],
                 answers: Optional[dict] = None, series: Optional[Sequence[str]] = None) -> None:
        self.plan, self.evaluations, self.names, self.answers = plan, evaluations, names, answers
        self.series = list(plan.series_order() if hasattr(plan, "series_order") else []) if series is None else series

    def table(self, width: Optional[int]) -> str:
        text = "" if self.names is None else \
            f"{wrap_text(prose_text(self.plan.title), width)}\n\n{self.quantities_table(width)}"
        if self.series:
            text = text.rstrip("\n") + "\n\n" + self.series_table(width) + "\n"
        if not self.answers:
            return text
        a = self.answers
        rows = []
        for name in a["names"]:
            unit = a["units"][name]  # an answer alone, as solve, the report and the workbook write it (money to cents)
            cells = [name] + [("no answer" if isinstance(v, PlanError)
                               else format_value(v, unit).removesuffix(" " + unit))
                              for ev in self.evaluations for v in [a["values"][(name, ev.label)]]]
            rows.append(cells + [a["units"][name], a["questions"][name]])
        headers = ["answer"] + [ev.label for ev in self.evaluations] + ["unit", "question"]
        table = fit(rows, headers, ["left"] + ["right"] * len(self.evaluations) + ["left", "left"], width, keep=1,
                    tail=2, wrap=len(headers) - 1, what="scenarios")
        return (text.rstrip("\n") + "\n\n" if text else "") + table + "\n"

    def _rows(self):
        plan, evaluations = self.plan, self.evaluations
        headers = ["quantity"] + [ev.label for ev in evaluations] + ["unit", "notes"]
        rows = []
        styles = plan_styles(plan, evaluations, self.names)
        for n in self.names:
            q = plan.model.quantities[n]
            values = figures([ev.display(n) for ev in evaluations], q.unit_text, style=styles.get(n))
            values = [NEVER if ev.is_never(n) else v for ev, v in zip(evaluations, values)]
            notes = []
            if q.is_input:
                overridden = any(ev.origins.get(n) and ev.origins[n].description != "the plan" for ev in evaluations)
                notes.append("input*" if overridden else "input")
            notes.extend(q.tags)
            rows.append([n] + values + [q.unit_text, ", ".join(notes)])
        align = ["left"] + ["right"] * len(evaluations) + ["left", "left"]
        return rows, headers, align

    def quantities_table(self, width: Optional[int] = None) -> str:
        """The quantities, one column per scenario; fitted to ``width`` (the terminal's) when given."""
        rows, headers, align = self._rows()
        return fit(rows, headers, align, width, keep=1, tail=2, wrap=len(headers) - 1, what="scenarios")

    def data(self) -> dict[str, Any]:
        """The JSON's data (``planner.eval/1``), with the answers when there are any."""
        plan, evaluations, names = self.plan, self.evaluations, self.names
        data: dict[str, Any] = {"format": EVAL_FORMAT, "file": plan.path}
        if names is not None:
            data.update({
                "title": prose_text(plan.title),  # prose as text: `{{` is one brace (planner.language.live)
                "notes": [prose_text(n) for n in plan.model.plan.notes],
                "scenarios": [ev.label for ev in evaluations],
                "quantities": {n: _quantity_meta(plan, n) for n in names},
                "values": {ev.label: {n: _json_value(ev, n, ev.display(n)) for n in names} for ev in evaluations},
                "base_values": {ev.label: {n: _json_value(ev, n, ev.values[n]) for n in names} for ev in evaluations},
                "overrides": {ev.label: _overrides(ev) for ev in evaluations},
            })
        else:
            data["scenarios"] = [ev.label for ev in evaluations]
        if self.series:
            data["series"] = self._series_json()
        if self.answers:
            a = self.answers
            data["answers"] = {ev.label: {n: (json_number(v) if not isinstance(v, PlanError) else None)
                                          for n in a["names"] for v in [a["values"][(n, ev.label)]]}
                               for ev in evaluations}
            data["answer_units"] = dict(a["units"])
            data["answer_questions"] = dict(a["questions"])
        return data

    def json(self) -> str:
        return dumps(self.data())

    def csv(self) -> str:
        """One table ``pandas.read_csv`` reads. Without series: a row per quantity, a column per scenario. With
        series, long form for everything: ``name, scenario, period, value, unit``, a figure's period empty, a
        series' period as written (``1``, ``2.5``) in the plan's period unit."""
        def value(v):
            return v if isinstance(v, str) else _csv_value(v)

        if not self.series:
            return "" if self.names is None else csv_rows(["quantity", "unit"] + [ev.label for ev in self.evaluations], [
                [n, self.plan.model.quantities[n].unit_text]
                + [NEVER if ev.is_never(n) else _csv_value(ev.display(n)) for ev in self.evaluations]
                for n in self.names])
        rows = [[n, ev.label, "", NEVER if ev.is_never(n) else _csv_value(ev.display(n)),
                 self.plan.model.quantities[n].unit_text]
                for n in self.names or () for ev in self.evaluations]
        rows += [[rec["series"], rec["scenario"], rec["period"], value(rec["value"]), rec["unit"]]
                 for rec in self._series_json()["records"]]
        return csv_rows(["name", "scenario", "period", "value", "unit"], rows)

    def jsonl(self) -> str:
        """One line per quantity and scenario: ``quantity``, ``scenario``, ``value`` (display unit), ``unit``,
        ``base_value``, ``kind``, ``input_from`` (where an overridden input's value came from); then a line per
        scenario, series and period (the JSON's series records)."""
        def records():
            for ev in self.evaluations:
                for n in self.names:
                    q = self.plan.model.quantities[n]
                    origin = ev.origins.get(n)
                    yield {"quantity": n, "scenario": ev.label, "value": _json_value(ev, n, ev.display(n)),
                           "unit": q.unit_text, "base_value": _json_value(ev, n, ev.values[n]),
                           "kind": "input" if q.is_input else "derived",
                           "input_from": origin.description if origin and origin.description != "the plan" else None}
        text = "" if self.names is None else jsonl(records())
        if self.series:
            text = (text + "\n" if text else "") + jsonl(self._series_json()["records"])
        return text

    def markdown(self) -> str:
        from .markup import text

        out = ""
        if self.names is not None:
            rows, headers, align = self._rows()
            out = f"# {text(prose_text(self.plan.title))}\n\n{markdown_table(rows, headers, align)}"
        if self.series:  # after the figures, as the table shows them
            tables = []
            for ev in self.evaluations:
                title, headers, rows = self._series_rows(ev)
                tables.append(f"## {text(title[0].upper() + title[1:])}\n\n"
                              + markdown_table(rows, headers, ["right"] * len(headers)))
            out = (out.rstrip("\n") + "\n\n" if out else "") + "\n".join(tables)
        return out

    # ---- series over periods: a table of periods -------------------------------------------------------

    def _series_rows(self, ev: Evaluation):
        """One scenario's series: its title, headers (a column per series, its unit in the header) and a row
        per period."""
        plan, names = self.plan, self.series
        unit, _ = plan.period_unit
        headers = [unit or "period"] + [column_header(plan, n) for n in names]
        columns = [figures([NEVER if v != v else float(v) for v in ev.series_display(n)],
                           plan.model.quantities[n].unit_text)
                   if not plan.model.quantities[n].is_bool else
                   ["true" if v else "false" for v in ev.series[n]] for n in names]
        labels = period_labels(plan, ev)
        rows = [[labels[i]] + [c[i] for c in columns] for i in range(len(labels))]
        return f"series{'' if ev.scenario is None else f' in {ev.label}'}", headers, rows

    def series_table(self, width: Optional[int] = None) -> str:
        """Each scenario's series as one table: a row per period, a column per series (its unit in the header)."""
        out = []
        for ev in self.evaluations:
            title, headers, rows = self._series_rows(ev)
            out.append(title + "\n" + fit(rows, headers, ["right"] * len(headers), width, keep=1, what="series"))
        return "\n".join(out)

    def _series_json(self) -> dict[str, Any]:
        """The series in long form: one record per scenario, series and period (display units; never as
        ``never``)."""
        plan, names = self.plan, self.series
        records = []
        for ev in self.evaluations:
            labels = period_labels(plan, ev)
            unit, scale = plan.period_unit
            for n in names:
                q = plan.model.quantities[n]
                values = ev.series[n] if q.is_bool else ev.series_display(n)
                for i, v in enumerate(values):
                    at = period_number(float(ev.periods[i]) / scale)
                    records.append({"scenario": ev.label, "series": n, "period": at,
                                    "period_label": labels[i], "value": bool(v) if q.is_bool else
                                    (NEVER if v != v else json_number(float(v))), "unit": q.unit_text})
        return {"period_unit": plan.period_unit[0], "series": {n: _quantity_meta(plan, n) for n in names},
                "records": records}


def _quantity_meta(plan: Plan, name: str) -> dict[str, Any]:
    q = plan.model.quantities[name]
    meta: dict[str, Any] = {
        "kind": "input" if q.is_input else "derived",
        "type": "boolean" if q.is_bool else "number",
        "unit": q.unit_text,
        "base_unit": "" if q.is_bool else (str(q.dim) if not q.dim.dimensionless else ""),
        "doc": prose_text(q.doc),
        "tags": list(q.tags),
        "formula": q.formula,
        "depends_on": list(q.deps),
        "line": q.definition.span.line,
    }
    if q.is_input:
        meta["constraints"] = [c.span.flat for c in q.definition.constraints]
    return meta


def _json_value(ev: Evaluation, name: str, v: Any) -> Any:
    return NEVER if ev.is_never(name) else json_number(v)


def _overrides(ev: Evaluation) -> dict[str, Any]:
    return {name: {"value": json_number(ev.display(name)), "from": origin.description}
            for name, origin in ev.origins.items() if origin.description != "the plan"}
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


GREEN, RED, RESET = "\x1b[32m", "\x1b[31m", "\x1b[0m"


class CheckView:
    """`planner check`: every check's result. ``verbose`` lists the passes too; ``color`` paints `ok` green
    and `FAIL` red (for a terminal)."""

    def __init__(self, plan: Any, results: Sequence[Any], verbose: bool = False, color: bool = False) -> None:
        self.plan, self.results, self.verbose, self.color = plan, results, verbose, color

    def table(self, width: Optional[int]) -> str:
        """Each failure with expected against actual (passes too when verbose), then the count."""
        ok, fail = (f"{GREEN}ok{RESET}  ", f"{RED}FAIL{RESET}") if self.color else ("ok  ", "FAIL")
        lines = []
        failed = 0
        for r in self.results:
            note = getattr(r, "note", "")  # a probability check over samples where a `first` is never
            if not r.passed:
                failed += 1
                lines.append(f"{fail} {r.location}: {r.text}\n     {describe(r)}"
                             + (f"\n     note: {note}" if note else ""))
            elif self.verbose:
                where = f" [{r.scenario}]" if r.scenario else ""
                value = f" = {r.actual}" if r.actual else ""
                lines.append(f"{ok} {r.text}{where}{value}" + (f"\n     note: {note}" if note else ""))
        summary = f"{len(self.results) - failed} passed, {failed} failed"
        if self.color:
            summary = f"{RED if failed else GREEN}{summary}{RESET}"
        lines.append(summary)
        return wrap_text("\n".join(lines), width)

    def json(self) -> str:
        failed = sum(not r.passed for r in self.results)
        return dumps({"format": "planner.check/1", "file": self.plan.path, "passed": len(self.results) - failed,
                      "failed": failed, "checks": [_check_record(r) for r in self.results]})

    def jsonl(self) -> str:
        return jsonl(_check_record(r) for r in self.results)

    def markdown(self) -> str:
        rows = [["pass" if r.passed else "**FAIL**", r.text, r.scenario or "", r.actual, r.expected, r.tolerance,
                 r.check.span.line] for r in self.results]
        failed = sum(not r.passed for r in self.results)
        return (markdown_table(rows, ["", "check", "scenario", "actual", "expected", "tolerance", "line"],
                               ["left", "left", "left", "right", "right", "left", "right"])
                + f"\n\n{len(self.results) - failed} passed, {failed} failed")


def describe(r) -> str:
    """A failed check's expected against actual, with the digits that differ (``expected 3,298,035.20 USD
    (± 0.005 USD), got 3,298,035.21 USD``: never two equal numbers)."""
    numbers = [v for v in (r.lhs, r.rhs) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if r.error is not None or len(numbers) != 2 or r.passed or getattr(r, "stat_text", ""):
        return r.describe()  # (a probability check says its statistic, sampling error and comparison)
    got, want = differing(float(r.lhs), float(r.rhs), r.unit)
    where = f" in {r.scenario}" if r.scenario else ""
    tol = f" ({r.tolerance})" if r.tolerance else ""
    apart = ""
    if got == want and getattr(r, "exact_difference", None) is not None:  # equal as floats, not exactly
        from ..questions.checks import decimal_text

        apart = f", {decimal_text(abs(r.exact_difference))} {r.unit}".rstrip() + " apart in exact arithmetic"
    return f"expected {want}{tol}, got {got}{apart}{where}"


def _check_record(r) -> dict[str, Any]:
    return {"check": r.text, "line": r.check.span.line, "scenario": r.scenario, "passed": r.passed,
            "actual": r.lhs, "expected": r.rhs, "unit": r.unit, "tolerance": r.tolerance,
            "error": r.error.message if r.error else None, "with": r.overrides,
            **({"note": r.note} if getattr(r, "note", "") else {})}


class SensitivityView:
    """`planner sensitivity`: one quantity's elasticities, per scenario."""

    def __init__(self, plan: Any, results: Sequence[Sensitivity]) -> None:
        self.plan, self.results = plan, results

    def table(self, width: Optional[int]) -> str:
        out = []
        for s in self.results:
            if s.never:
                out.append(wrap_text(f"sensitivity of {s.quantity} = {NEVER}  [{s.label}]\n{_never_sensitivity(s)}",
                                     width))
                continue
            rows, headers, align = _sensitivity_rows(s)
            head = (f"sensitivity of {s.quantity} = {format_value(s.value, s.unit)}  [{s.label}]\n"
                    f"elasticity: a 1% rise in the input moves {s.quantity} by about that many %")
            out.append(wrap_text(head, width) + "\n" + fit(rows, headers, align, width, keep=1, tail=1, wrap=4))
        return "\n\n".join(out)

    def json(self) -> str:
        return dumps({"format": "planner.sensitivity/1", "file": self.plan.path, "results": [
            {"quantity": s.quantity, "scenario": s.label, "value": NEVER if s.never else s.value, "unit": s.unit,
             "inputs": [{"input": r.input, "value": r.value, "unit": r.unit, "elasticity": r.elasticity,
                         "derivative": r.derivative, "method": r.method, "note": r.note} for r in s.rows]}
            for s in self.results]})

    def csv(self) -> str:
        headers = ["quantity", "scenario", "input", "value", "unit", "elasticity", "derivative", "method", "note"]
        return csv_rows(headers,
                        [[s.quantity, s.label, r.input, "" if r.value is None else repr(r.value), r.unit,
                          "" if r.elasticity is None else repr(r.elasticity),
                          "" if r.derivative is None else repr(r.derivative), r.method, r.note]
                         for s in self.results for r in _or_never_row(s)])

    def jsonl(self) -> str:
        return jsonl({"quantity": s.quantity, "scenario": s.label, "input": r.input, "value": r.value,
                      "unit": r.unit, "elasticity": r.elasticity, "derivative": r.derivative, "method": r.method,
                      "note": r.note} for s in self.results for r in _or_never_row(s))

    def markdown(self) -> str:
        out = []
        for s in self.results:
            if s.never:
                out.append(f"**sensitivity of {s.quantity} = {NEVER}** [{s.label}]\n\n{_never_sensitivity(s)}")
                continue
            rows, headers, align = _sensitivity_rows(s)
            out.append(f"**sensitivity of {s.quantity} = {format_value(s.value, s.unit)}** [{s.label}]\n\n"
                       + markdown_table(rows, headers, align))
        return "\n\n".join(out)


def _sensitivity_rows(s: Sensitivity):
    rows = [[r.input, format_value(r.value, r.unit), "n/a" if r.elasticity is None else f"{r.elasticity:+.4f}",
             "n/a" if r.derivative is None else format_value(r.derivative),
             r.method + (f" ({r.note})" if r.note else "")] for r in s.rows]
    per = f"d {s.quantity}/d input ({s.unit or '1'} per input unit)"
    return rows, ["input", "value", "elasticity", per, "method"], ["left", "right", "right", "right", "left"]


def _never_sensitivity(s: Sensitivity) -> str:
    """What ``sensitivity`` says of a ``first(...)`` that finds nothing in the scenario."""
    return (f"{s.quantity} is never in {s.label} (its `first(...)` finds no period where its condition holds), "
            "so it has no sensitivity there")


def _or_never_row(s: Sensitivity) -> list:
    """The rows of a sensitivity; for one that is never, a single row saying so (no input, no value)."""
    if not s.never:
        return s.rows
    from ..questions.sensitivity import Row

    return [Row("", None, "", None, None, "none", _never_sensitivity(s))]


class SolveView:
    """`planner solve`: the answers, the errors, and the questions with no answer in their domain
    (``missing``: question, scenario, why)."""

    def __init__(self, plan: Any, results: Sequence[SolveResult], errors: Sequence[PlanError] = (),
                 missing: Sequence[tuple[Any, Any, Any]] = ()) -> None:
        self.plan, self.results, self.errors, self.missing = plan, results, errors, missing

    def no_answer(self) -> list[str]:
        """A line for each question with no answer in a scenario: where it is, what, and why."""
        return [f"{q.span.location()}: {q.alias or ' '.join(q.span.flat.split())[:60]} [{scenario or 'base'}]: "
                f"no answer in the domain: {err.message}" for q, scenario, err in self.missing]

    def table(self, width: Optional[int]) -> str:
        """One block per question, one line per scenario; then the questions with no answer."""
        lines: list[str] = []
        last = None
        for r in self.results:
            if r.statement is not last:
                if lines:
                    lines.append("")
                where = f"  ({r.statement.span.location()})" if r.statement.span.source.name != "--where" else ""
                alias = f"  as {r.alias}" if r.alias and f" as {r.alias}" not in r.question else ""
                lines.append(f"{r.question}{alias}{where}")
                last = r.statement
            style = answer_style(r.display_value, r.unit, r.mode)  # as eval, the report and the workbook write it
            value = f"{figures([r.display_value], r.unit, style=style)[0]} {r.unit}".strip()
            head = f"  [{r.label}] {r.target} = {value}"
            if r.optimum is not None:
                head += f"  ({figure(r.optimum_display, r.optimum_unit, 6)} at the optimum)"
            lines.append(head)
            lines.append(f"      verified     {r.verification.text}")
            lines.append(f"      method       {r.method}")
            if r.closed_form_unwritten is not None:
                lines.append(f"      note         {r.closed_form_unwritten}")
            elif r.closed_form is not None:
                lines.append(f"      closed form  {r.target} = {r.closed_form_text}")
                if r.form_units:  # the form is over the figures as shown, not base units: say in which
                    lines.append("      in units     " + "; ".join(f"{n} in {u}" for n, u in r.form_units))
            for note in r.notes:
                lines.append(f"      note         {note}")
        text = "\n".join(lines)
        no_answer = self.no_answer()
        if no_answer:
            text = (text.rstrip("\n") + "\n\n" if text else "") + "\n".join(no_answer) + "\n"
        return wrap_text(text, width)

    def json(self) -> str:
        return dumps({
            "format": SOLVE_FORMAT, "file": self.plan.path, "results": [answer_json(r) for r in self.results],
            "no_answer": [{"question": " ".join(q.span.flat.split()), "alias": q.alias, "scenario": s or "base",
                           "reason": e.message, "location": q.span.location()} for q, s, e in self.missing],
            "errors": [{"message": e.message, "family": e.family,
                        "location": e.span.location() if e.span is not None else None} for e in self.errors]})

    def csv(self) -> str:
        return csv_rows(["question", "alias", "scenario", "target", "mode", "value", "unit", "optimum", "closed_form",
                         "method", "verification"],
                        [[r.question, r.alias or "", r.label, r.target, r.mode, repr(r.display_value), r.unit,
                          "" if r.optimum_display is None else repr(r.optimum_display), r.closed_form_text or "",
                          r.method, r.verification.text] for r in self.results])

    def jsonl(self) -> str:
        return jsonl(answer_json(r) for r in self.results)

    def markdown(self) -> str:
        rows = [[r.question, r.label, format_value(r.display_value, r.unit)
                 + (f" ({format_value(r.optimum_display, r.optimum_unit, 6)} at the optimum)"
                    if r.optimum is not None else ""),
                 r.method, r.verification.text, r.closed_form_text or ""] for r in self.results]
        return markdown_table(rows, ["question", "scenario", "answer", "method", "verified", "closed form"])


class ExplainView:
    """`planner explain`: one quantity from its formula down to its inputs, per scenario."""

    def __init__(self, explanations: Sequence[Explanation]) -> None:
        self.explanations = explanations

    def table(self, width: Optional[int]) -> str:
        return wrap_text("\n\n".join(_explain_text(e) for e in self.explanations), width)


def _explain_text(e: Explanation) -> str:
    from .terminal import explain_latex

    lines = [f"{e.name} = {e.formula}", f"  defined at   {e.location} ({e.kind})"]
    if e.doc:
        lines.append(f"  description  {prose_text(e.doc)}")
    if e.tags:
        lines.append(f"  tags         {', '.join(e.tags)}")
    if e.constraints:
        lines.append(f"  constraints  {', '.join(e.constraints)}")
    if e.series is not None:  # no formula over inputs: one line says so, not three
        lines.append(f"  closed form  ({e.no_ir})")
    elif e.kind == "derived":
        lines.append(f"  in inputs    {e.in_inputs}")
        lines.append(f"  latex        {explain_latex(e)}")
    value = e.value
    if e.series is not None:  # a series: its first, last and lowest values, as the editor's hover says them
        from .periods import series_values

        said = series_values(e.series, e.name)
        unit = e.series.plan.model.quantities[e.name].unit_text
        value = said.replace("**", "") if isinstance(said, str) else (
            f"first {format_value(said[0], unit)} ({said[1]}), last {format_value(said[2], unit)} ({said[3]}), "
            f"lowest {format_value(said[4], unit)} ({said[5]})")
    lines.append(f"  value        {value}" + (f"   (scenario {e.scenario})" if e.scenario else ""))
    if e.inputs and e.kind == "derived":
        lines.append("  inputs")
        width = max(len(n) for n, _ in e.inputs)
        for n, v in e.inputs:
            lines.append(f"    {n.ljust(width)}  {v}")
    if e.used_by:
        lines.append(f"  used by      {', '.join(e.used_by)}")
    return "\n".join(lines)


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


class BuildView:
    """`planner build`: the headline figures per scenario, the answers, the checks and the files written."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def table(self, width: Optional[int]) -> str:
        from .build import summary

        return summary(self.result)
