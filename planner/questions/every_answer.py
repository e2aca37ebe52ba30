"""The one door to a plan's questions (``solve``, ``maximize``, ``minimize``, or one asked from the shell
or the API), each in its scenarios: what ``planner solve``, :meth:`planner.Plan.solve` and the report and
workbook builder all run. Each answer comes from :class:`planner.questions.fast.Answers` (the numeric
route first; SymPy for what it refuses, or for a closed form where one is shown)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Optional

from ..compute.evaluation import Plan, scenarios_for
from ..language.errors import NoRootError, PlanError


def written_is_own_case(plan: Plan) -> bool:
    """Whether the plan as written is a case its scenarios leave out: it has named scenarios (not an
    axis grid), none of which sets every input to its value as written (`scenario base_case "as written"`
    is that case, under its own name)."""
    if plan.model.axes or not plan.scenario_names:
        return False
    if plan not in _OWN_CASE:  # asked per question and per row: worked out once per plan
        written, _ = plan.input_values(None)
        _OWN_CASE[plan] = not any(plan.input_values(s)[0] == written for s in plan.scenario_names)
    return _OWN_CASE[plan]


_OWN_CASE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def question_scenarios(plan: Plan, stmt, scenarios=None) -> list[Optional[str]]:
    """The scenarios a question runs in (``scenarios``, as ``--scenario`` takes them, else its own
    ``for``). ``all`` is the plan as written and then every scenario, as ``planner eval --scenario all``
    shows them; the plan as written is left out where a scenario is that case already
    (:func:`written_is_own_case`)."""
    picked = scenarios_for(plan, stmt.scenarios, scenarios)
    specs = [scenarios] if isinstance(scenarios, str) else list(scenarios or [])
    asked_all = any(n.strip() == "all" for spec in specs for n in spec.split(",")) if scenarios else \
        any(p.axis is None and p.name == "all" for p in stmt.scenarios)
    if asked_all and None not in picked and written_is_own_case(plan):
        picked = [None, *picked]
    return picked


@dataclass
class Answered:
    """Every question's outcome in each of its scenarios, in order: ``entries`` holds (question, scenario,
    the :class:`planner.questions.answer.SolveResult` or the located PlanError). A question with no
    answer in its domain (:class:`NoRootError`) is a finding, not an error."""

    entries: list[tuple[Any, Optional[str], Any]] = field(default_factory=list)
    failed: list[PlanError] = field(default_factory=list)  # every error that is not a no-answer, in order

    @property
    def results(self) -> list:
        return [r for _, _, r in self.entries if not isinstance(r, PlanError)]

    @property
    def missing(self) -> list[tuple[Any, Optional[str], NoRootError]]:
        """(question, scenario, why) of each no-answer."""
        return [(q, s, r) for q, s, r in self.entries if isinstance(r, NoRootError)]


def answer_all(plan: Plan, questions: list, scenarios=None, overrides=None, origins=None, *,
               closed_form: bool = False, answers=None, strict: bool = True,
               progress=None) -> Answered:
    """Each of ``questions`` in its own scenarios (``scenarios``, as ``--scenario`` takes them, overrides
    its ``for``), with ``overrides``; ``answers`` (an :class:`planner.questions.fast.Answers`) shares the
    answers a caller already has. With ``strict``, one question asked in one scenario raises its error
    (the user asked exactly that); otherwise each error is kept beside the others. ``progress`` (a
    :class:`planner.outputs.progress.Progress` or None) is told each question as it starts and ends."""
    if answers is None:
        from .fast import Answers

        answers = Answers(plan)
    out = Answered()
    for q in questions:
        if progress is not None:
            progress.step(" ".join(q.span.flat.split())[:60])
        try:
            picked = question_scenarios(plan, q, scenarios)
        except PlanError as err:
            if strict and len(questions) == 1:
                raise
            out.failed.append(err)  # its scenarios could not be resolved
            continue
        for scenario in picked:  # each scenario answers for itself
            try:
                got = answers.answer(q, scenario, overrides, origins, closed_form=closed_form)
            except PlanError as err:
                if strict and len(questions) == 1 and len(picked) == 1:
                    raise
                got = err
                if not isinstance(err, NoRootError):
                    out.failed.append(err)
            out.entries.append((q, scenario, got))
        if progress is not None:
            progress.advance()
    return out
