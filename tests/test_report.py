"""Markdown reports: the shipped template on the reference plan (a snapshot
whose figures are checked against the article and against the plan), the
plain view model, Markdown escaping, and user templates in the sandbox."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import TOKEN_COST

from planner.language.errors import TemplateError
from planner.outputs import plots
from planner.outputs.build import report_outputs
from planner.outputs.report import cell, code, math, render, text
from planner.outputs.viewmodel import analyse, headline_names, view_model

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"


@pytest.fixture(scope="module")
def analysis(token_cost):
    return analyse(token_cost)


@pytest.fixture(scope="module")
def report(analysis):
    """The shipped report of token_cost.plan, plots reported as skipped so the
    text does not depend on whether matplotlib is installed."""
    mp = pytest.MonkeyPatch()
    mp.setattr(plots, "available", lambda: "matplotlib is not installed (pip install matplotlib)")
    try:
        outputs, _ = report_outputs(analysis, "token_cost.md")
    finally:
        mp.undo()
    # token_cost's 34 quantities are past a legible graph: the whole one is a file beside the report
    assert [(o.kind, o.name) for o in outputs] == [("graph", "token_cost-graph.md"), ("report", "token_cost.md")]
    return outputs[-1].data.decode("utf-8")


def _section(report: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", report, re.M | re.S)
    assert m, f"no section {title!r}"
    return m.group(1)


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row, split at unescaped `|`."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def _table(section: str) -> dict[str, list[str]]:
    """A row's identifier (the small code span under its words) -> the other cells, for every row of the
    tables in a section."""
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| .*?<sub><code>(.+?)</code>", line)
        if m:
            rows[m.group(1).replace("<wbr>", "")] = _cells(line)[1:]
    return rows


def _header(section: str) -> list[str]:
    """The column names of a section's first table (its first column is the rows' words), code spans stripped."""
    line = next(line for line in section.splitlines() if line.startswith("| |"))
    return [re.sub(r"</?code>|<wbr>", "", c).strip("`") for c in _cells(line)[1:]]


def _number(text: str) -> float:
    return float(text.strip("*").split()[0].replace(",", ""))


# ---- the snapshot -------------------------------------------------------------------

def test_snapshot_of_the_reference_report(report):
    path = SNAPSHOTS / "token_cost.md"
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(report, encoding="utf-8")
    assert path.exists(), "no snapshot yet: run UPDATE_SNAPSHOTS=1 pytest tests/test_report.py"
    assert report == path.read_text(encoding="utf-8"), (
        "the report of sheets/token_cost.plan changed; if intended, regenerate with "
        "UPDATE_SNAPSHOTS=1 pytest tests/test_report.py and review the diff")


def test_article_figures_are_in_the_report(report):
    scen = _section(report, "Results")
    cols = _header(scen)
    rows = _table(scen)
    at = lambda name, scenario: _number(rows[name][cols.index(scenario)])  # noqa: E731
    # the article: 46.667 ms at batch 1 (BF16), 53.825 ms at batch 32 (BF16), 19.262 ms (INT4)
    assert at("batch1_weight_bound", "bf16") == pytest.approx(46.667, abs=5e-4)
    assert at("batch_step_bound", "bf16") == pytest.approx(53.825, abs=5e-4)
    assert at("batch_step_bound", "int4_g128") == pytest.approx(19.262, abs=5e-4)
    assert at("weight_bytes", "fp8_e4m3") == 70
    # speculative decoding: 2.4011x at alpha 0.8, gamma 4, c 0.1
    assert _number(rows["speedup"][0]) == pytest.approx(2.4011, abs=5e-5)
    assert _number(rows["expected_tokens"][0]) == pytest.approx(3.3616, abs=5e-5)
    assert "**60 of 60 checks pass.**" in _section(report, "Checks")


def test_article_answers_are_in_the_report(report):
    solves = _section(report, "Solves")
    # break-even acceptance rate "about 0.287"; crossover batch per format 98, 49, 26
    breakeven = re.search(r"`alpha` = \*\*([0-9.]+)\*\*", solves)
    assert breakeven and float(breakeven.group(1)) == pytest.approx(0.2871, abs=5e-5)
    for scenario, batch in [("bf16", 98), ("fp8_e4m3", 49), ("int4_g128", 26)]:
        assert f"- `{scenario}`: `batch` = **{batch}**" in solves
    # the crossover batch in closed form, through the plan's own quantities (weight_bytes, kv_bytes_per_sequence)
    # in base units: in display units (TFLOP/s against GB) it would carry 1e21 and 1e12 factors
    assert "Closed form, over each quantity in base units (seconds, bytes, the plan's base currency):\n\n```math\n\\mathrm{batch} = \\left\\lceil" in solves
    assert "1{,}000{,}000{,}000{,}000" not in solves
    assert "\\mathrm{weight\\_bytes}" in solves and "\\mathrm{kv\\_bytes\\_per\\_sequence}" in solves
    # the polynomial the break-even solves, in LaTeX, not SymPy's 5*alpha**4
    assert ("`alpha` is the real root of $`5 \\cdot \\alpha^{4} + 5 \\cdot \\alpha^{3} + 5 \\cdot \\alpha^{2} "
            "+ 5 \\cdot \\alpha - 2 = 0`$") in solves
    # the method, the same in every scenario, is said once
    assert solves.count("exact: the condition can only change where a side crosses the other") == 1
    best = _section(report, "Optimisation")
    assert "`gamma` = **6** (optimum 2.46964)" in best  # the article: gamma 6, 2.4696
    sweeps = _section(report, "Sweeps")
    rows = [line for line in sweeps.splitlines() if line.startswith("| 0.")]
    assert [round(float(r.split("|")[3]), 4) for r in rows] == [1.0179, 1.6469, 2.4011, 2.9251]


def _decimals(text: str) -> int:
    return len(text.strip("*").partition(".")[2])


def test_every_figure_is_the_plans_figure(report, token_cost):
    """Each cell of the scenario table is the plan's own value, digits grouped as in the workbook,
    one number style per quantity (the same decimals in every scenario)."""
    scen = _section(report, "Results")
    labels = _header(scen)
    rows = _table(scen)
    evaluations = {s: token_cost.evaluate(s) for s in labels}
    assert set(token_cost.model.derived) <= set(rows)
    for name in token_cost.model.derived:
        cells = rows[name]
        if token_cost.quantities[name].is_bool:
            assert [c.strip("*") for c in cells] == [str(evaluations[s].display(name)).lower() for s in labels]
            continue
        # one style per quantity: the same decimals in every scenario, except that a whole figure shows none
        # (140 | 70 | 36.3125, not 140.0000 | 70.0000 | 36.3125)
        assert len({_decimals(c) for c in cells if _decimals(c)}) <= 1, (name, cells)
        for label, got in zip(labels, cells):
            if not _decimals(got):
                want = float(evaluations[label].display(name))
                assert abs(want - round(want)) <= 1e-9 * max(1.0, abs(want)), (name, got)
        for label, got in zip(labels, cells):
            want = evaluations[label].display(name)
            assert _number(got) == pytest.approx(want, rel=1e-5, abs=0.51 * 10 ** -_decimals(got)), (name, label)
    inputs = _table(_section(report, "Inputs"))
    for name in token_cost.model.inputs:
        assert _number(inputs[name][0]) == pytest.approx(token_cost.evaluate().display(name), rel=1e-6), name
    # digits grouped as in the workbook; an input that differs from the first scenario's is bold too
    assert inputs["parameters"][0] == "70,000,000,000"
    assert rows["kv_bytes_per_sequence"][0] == "671,088,640"
    # one style for the quantity, as the workbook's cells show it: 16 bit, 8 bit, 4.15 bit
    assert rows["bits_per_weight"][:3] == ["16.00", "**8.00**", "**4.15**"]


def test_report_contains_every_section(report):
    titles = re.findall(r"^## (.+)$", report, re.M)
    assert titles == ["Findings", "About this plan", "Results", "Sweeps", "Solves", "Optimisation",
                      "What moves the headline figures", "Scenarios", "Assumptions and sources", "Inputs",
                      "Checks", "Definitions", "Dependency graph"]
    assert "```mermaid\nflowchart LR\n" in report
    # rows are labelled by their doc strings, the identifier (and unit) small beside them
    results = _section(report, "Results")
    assert "| Plain decode step at `batch` (lower bound)<br><sub><code>batch_<wbr>step_<wbr>bound</code>, ms</sub> |" in results
    assert _table(results)["batch_step_bound"] == ["53.8249", "**30.4916**", "**19.2624**"]  # bold: not as in bf16
    assert _table(_section(report, "Inputs"))["hbm_bandwidth"] == ["3.0"]  # as written: 3.0 TB/s
    # formulas as written and in LaTeX, in their own section: display math for fractions
    definitions = _section(report, "Definitions")
    assert ("```math\n  \\mathrm{expected\\_tokens} = \\frac{1 - \\alpha^{\\gamma + 1}}{1 - \\alpha}\n  ```\n\n"
            "  As written: `(1 - alpha^(gamma + 1)) / (1 - alpha)`") in definitions
    # products show their multiplication; names are upright with their underscores
    assert "\\mathrm{weight\\_bytes} = \\mathrm{parameters} \\cdot \\mathrm{bits\\_per\\_weight}" in definitions  # as written
    # a call of a user function is the call; the function's own formula is shown once, after the quantities
    assert "\\mathrm{batch\\_step\\_bound} = \\mathrm{step\\_bound}(\\mathrm{weight\\_bytes}, \\mathrm{batch})" in definitions
    assert definitions.count("\\mathrm{step\\_bound}(\\mathrm{weights}, \\mathrm{sequences}, \\mathrm{positions} = 1)") == 1
    assert "- **Peak HBM bandwidth** `hbm_bandwidth` (TB/s) *[assumption]*." in definitions
    assumptions = _section(report, "Assumptions and sources")
    assert "`hbm_bandwidth` = 3.0 TB/s: peak HBM bandwidth (assumption)" in assumptions
    assert "(assumption: free verification)" in assumptions


def test_bold_in_the_results_marks_what_each_scenario_changes(report):
    """Every value of a row that differs anywhere was bold, so nearly every figure was: a value is bold where
    it reads other than the first scenario's (the first column is never bold), so a reader sees what each
    scenario changes. fp8's verify step costs one plain step, as bf16's does (both memory-bound at batch 32)."""
    results = _section(report, "Results")
    assert "a value in bold differs from `bf16`'s." in results
    table = _table(results)
    assert table["bits_per_weight"] == ["16.00", "**8.00**", "**4.15**"]
    assert table["verify_cost_ratio"] == ["1.00000", "1.00000", "**1.16288**"]
    assert table["verify_is_compute_bound"] == ["false", "false", "**true**"]
    for row in table.values():
        assert not row[0].startswith("**")
        assert all(cell.startswith("**") == (cell.strip("*") != row[0]) for cell in row), row


def test_report_is_deterministic(analysis, report):
    again, _ = report_outputs(analysis, "token_cost.md", plots=False)
    first = report.replace("matplotlib is not installed (pip install matplotlib)",
                           "the report was printed, not written to a file (use -o)")
    first = first.replace("; [the whole graph](token_cost-graph.md) is in a file of its own", "")  # printed: no file
    assert again[0].data.decode("utf-8") == first


# ---- the view model -------------------------------------------------------------------

def _plain(value, path="view"):
    if isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, str), path
            _plain(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _plain(v, f"{path}[{i}]")
    else:
        assert value is None or type(value) in (str, int, float, bool), f"{path} is a {type(value).__name__}"


def test_view_model_is_plain_data(analysis):
    view = view_model(analysis)
    _plain(view)
    assert view["format"] == "planner.report/1"
    assert view["file"] == "token_cost.plan"
    # no key shadows a dict method (Jinja's `a.values` would find the method)
    keys = set()
    stack = [view]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys |= set(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    assert not keys & set(dir(dict))


def test_every_view_model_key_is_documented(analysis, plan_file):
    """The report page's view model section names every key a template can use."""
    import planner

    page = (Path(__file__).parent.parent / "docs" / "report.md").read_text(encoding="utf-8")
    section = page[page.index("## The view model"):]
    views = [view_model(analysis), view_model(analyse(planner.load(plan_file(QUESTIONS))))]
    keys: set[str] = set()
    stack: list = list(views)
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys |= {k for k in item if not (item is views[0]["quantities"] or item is views[1]["quantities"])}
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    missing = sorted(k for k in keys if f"`{k}`" not in section)
    assert not missing, f"undocumented view model keys: {missing}"


def test_headline_rule(token_cost, plan_file):
    import planner

    # the reference plan tags its headline figures
    assert headline_names(token_cost) == (
        ["weight_bytes", "batch1_weight_bound", "batch_step_bound", "speculative_speedup_at_batch", "average_tpot"],
        "tagged [headline]")
    # untagged: the derived quantities nothing else uses
    untagged = planner.load(plan_file("a = 2\nb = a * 3\nc = b + 1\nd = a - 1\n"))
    names, rule = headline_names(untagged)
    assert names == ["c", "d"] and rule != "tagged [headline]"
    tagged = planner.load(plan_file("a = 2\nb = a * 3 [headline]\nc = b + 1\n"))
    assert headline_names(tagged) == (["b"], "tagged [headline]")


# ---- Markdown escaping --------------------------------------------------------------------

@pytest.mark.parametrize("given, expected", [
    ("a | b", r"a \| b"),
    (r"\left|x\right|", r"\left\|x\right\|"),
    ("two\nlines", "two lines"),
    (None, ""),
])
def test_cell(given, expected):
    assert cell(given) == expected


def test_math_code_and_text_filters():
    assert math(r"\frac{a}{b}") == r"$`\frac{a}{b}`$"
    assert math("") == ""
    assert code("a * b") == "`a * b`"
    assert code("uses `x`") == "``uses `x```" or code("uses `x`") == "`` uses `x` ``"
    assert text("5*x**4 + y_1 in [0, 1)") == r"5\*x\*\*4 + y\_1 in \[0, 1)"
    assert text("keep `a*b` as code") == "keep `a*b` as code"


def test_absolute_values_in_math(plan_file):
    import planner

    plan = planner.load(plan_file("x = -2\ny = abs(x) * 3\n"))
    view = view_model(analyse(plan))
    assert view["quantities"]["y"]["latex"] == r"\left|x\right| \cdot 3"  # as written
    assert cell(math(view["quantities"]["y"]["latex"])) == r"$`\left\|x\right\| \cdot 3`$"  # safe in a table
    out = render(view)
    assert "$`y = \\left|x\\right| \\cdot 3`$" in _section(out, "Definitions")


# ---- user templates and the sandbox ----------------------------------------------------------

def _template(tmp_path, body: str) -> str:
    path = tmp_path / "mine.md.j2"
    path.write_text(body, encoding="utf-8")
    return str(path)


def test_user_template_renders_the_view_model(tmp_path, analysis):
    path = _template(tmp_path, "# {{ title }}\n{% for q in headline.quantities %}- {{ q.name }}: "
                               "{{ q.scenario_numbers[0] | fmt(4) }} {{ q.unit }}\n{% endfor %}")
    out = render(view_model(analysis), path)
    assert out.startswith("# Per-token cost of a 70B dense model\n")
    assert "- batch1_weight_bound: 46.67 ms\n" in out


def test_user_template_can_include_a_neighbour(tmp_path, analysis):
    (tmp_path / "part.j2").write_text("[{{ file }}]", encoding="utf-8")
    out = render(view_model(analysis), _template(tmp_path, 'x {% include "part.j2" %}\n'))
    assert out == "x [token_cost.plan]\n"


@pytest.mark.parametrize("body, line, pointed", [
    ("ok\n{{ ''.__class__.__mro__ }}\n", 2, "__class__"),
    ("{{ title.__class__.__base__.__subclasses__() }}\n", 1, "__class__"),
    ("{{ lipsum.__globals__['os'] }}\n", 1, "__globals__"),
    ("{{ cycler.__init__.__globals__ }}\n", 1, "__init__"),
    ("{{ notes.append('x') }}\n", 1, "append"),
    ("{{ quantities.clear() }}\n", 1, "clear"),
    ("{{ 'x' * 100000000 }}\n", 1, None),
    ("{{ 10 ** 100000 }}\n", 1, None),
    ("{% for i in range(10**9) %}{% endfor %}\n", 1, None),
])
def test_sandbox_blocks_python_internals(tmp_path, analysis, body, line, pointed):
    path = _template(tmp_path, body)
    with pytest.raises(TemplateError) as info:
        render(view_model(analysis), path)
    err = info.value
    assert err.span is not None and err.span.source.name == path and err.span.line == line
    if pointed:
        assert err.span.text == pointed
    assert str(err).startswith(f"{path}:{line}:")


# Each would build tens of megabytes (and, with a larger number, any amount): refused before it is built.
@pytest.mark.parametrize("body", [
    "{{ '%30000000d' % 1 }}",
    "{{ '{:>30000000}'.format(1) }}",
    "{{ '%s' | format(1) }}{{ '%30000000s' | format(1) }}",
    "{{ 'x' | center(30000000) }}",
    "{{ 'x'.ljust(30000000) }}",
    "{{ 'a' | indent(30000000, first=true) }}",
    "{{ lipsum(30000) }}",
    "{% set s = 'x' * 1000000 %}{{ ([s] * 30) | join }}",
    "{% set s = 'x' * 1000000 %}{{ ','.join([s] * 30) }}",
    "{% set s = 'a' * 10000 %}{{ s | replace('a', s) }}",
    "{% set s = 'a' * 10000 %}{{ s.replace('a', s) }}",
    "{% set s = 'x' * 1000000 %}{{ s + s + s + s + s + s + s + s + s + s + s + s + s + s + s + s + s + s + s + s + s }}",
    "{% set s = 'x' * 1000000 %}{{ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s }}",
    "{% macro d(s, n) %}{{ d(s ~ s, n - 1) if n else s }}{% endmacro %}{{ d('x', 25) }}",
    "{% set ns = namespace(s='x') %}{% for i in range(25) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
])
def test_sandbox_bounds_what_a_template_builds(tmp_path, analysis, body):
    path = _template(tmp_path, "# {{ title }}\n" + body + "\n")
    with pytest.raises(TemplateError, match="limit") as info:
        render(view_model(analysis), path)
    err = info.value
    assert err.span is not None and err.span.source.name == path and err.span.line == 2
    assert "templates are bounded" in err.hint


def test_sandbox_bounds_the_output_as_a_whole(tmp_path, analysis):
    """Small pieces, many times: the output's size is checked before it is joined."""
    path = _template(tmp_path, "{% set s = 'x' * 1000000 %}{% for i in range(30) %}{{ s }}{% endfor %}\n")
    with pytest.raises(TemplateError, match=r"the output of mine.md.j2: .*30,000,000 .*limit 20,000,000"):
        render(view_model(analysis), path)


def test_undefined_name_points_at_it_with_a_suggestion(tmp_path, analysis):
    path = _template(tmp_path, "# {{ title }}\n\n{{ titel }}\n")
    with pytest.raises(TemplateError) as info:
        render(view_model(analysis), path)
    err = info.value
    assert (err.span.line, err.span.column, err.span.text) == (3, 4, "titel")
    assert "did you mean `title`?" in str(err)
    rendered = str(err).splitlines()
    assert rendered[1].endswith("{{ titel }}") and rendered[2].endswith("   ^^^^^")


def test_undefined_attribute_is_an_error(tmp_path, analysis):
    path = _template(tmp_path, "{% for q in inputs %}{{ q.nme }}{% endfor %}\n")
    with pytest.raises(TemplateError, match="has no attribute 'nme'") as info:
        render(view_model(analysis), path)
    assert info.value.hint == "did you mean `name`?"


def test_syntax_error_points_at_the_line(tmp_path, analysis):
    path = _template(tmp_path, "# {{ title }}\n{% for q in %}\n{% endfor %}\n")
    with pytest.raises(TemplateError, match="syntax") as info:
        render(view_model(analysis), path)
    assert info.value.span.line == 2


def test_missing_template_is_a_usage_error(tmp_path, analysis):
    from planner.language.errors import UsageError

    with pytest.raises(UsageError, match="no such template"):
        render(view_model(analysis), str(tmp_path / "nope.j2"))


def test_cli_report_template_errors_exit_2(cli, tmp_path):
    path = _template(tmp_path, "{{ ''.__class__.__mro__ }}\n")
    out_file = tmp_path / "r.md"
    code_, out, err = cli("report", TOKEN_COST, "-t", path, "-o", out_file)
    assert code_ == 2 and "error[template]" in err and "__class__" in err
    assert not out_file.exists() and list(tmp_path.iterdir()) == [Path(path)]


def test_cli_report_to_stdout_and_file(cli, tmp_path):
    code_, out, err = cli("report", TOKEN_COST)
    assert code_ == 0 and out.startswith("# Per-token cost of a 70B dense model\n")
    target = tmp_path / "sub" / "r.md"
    code_, out2, err = cli("report", TOKEN_COST, "-o", target)
    assert code_ == 0 and target.exists() and "wrote:" in err


QUESTIONS = """title "Questions"
alpha = 0.8 where 0 <= alpha < 1
gamma = 4   where integer, gamma >= 1
c     = 0.1
speedup = (1 - alpha^(gamma + 1)) / (1 - alpha) / (gamma * c + 1)
ratio   = 1 / (alpha - 0.5)
scenario cheap { c = 0.05 }
scenario dear  { c = 0.5 }
sweep alpha in [0.3, 0.5, 0.7] show ratio
solve alpha where speedup = 100
solve alpha where speedup = 1 for all
"""


def test_questions_without_answers_and_points_with_issues(plan_file):
    import planner

    plan = planner.load(plan_file(QUESTIONS))
    out = render(view_model(analyse(plan)))
    sweeps = _section(out, "Sweeps")
    row = next(line for line in sweeps.splitlines() if line.startswith("| 0.5 |"))
    assert "| inf |" in row and "division by zero at `alpha - 0.5`" in row
    solves = _section(out, "Solves")
    # no root: the reason and the values that show why, never a silently picked answer
    assert "- no answer in the domain: no `alpha` in \\[0, 1) makes `speedup = 100` hold" in solves
    assert "at alpha = 0: lhs - rhs = -99.2857" in solves
    # per scenario: cheap (c = 0.05) and dear (c = 0.5) have different break-even rates
    found = dict(re.findall(r"- `(cheap|dear)`: `alpha` = \*\*([0-9.]+)\*\*", solves))
    # alpha^4 + alpha^3 + alpha^2 + alpha = 4c: 0.166774 at c = 0.05, 0.741271 at c = 0.5 (numpy.roots)
    assert found == {"cheap": "0.166774", "dear": "0.741271"}


def test_report_into_a_folder_named_with_a_trailing_slash(tmp_path, capsys):
    from conftest import TOKEN_COST

    from planner.cli import main

    assert main(["report", str(TOKEN_COST), "-o", str(tmp_path / "reports") + "/"]) == 0
    capsys.readouterr()
    assert (tmp_path / "reports" / "token_cost.md").is_file()
    assert not (tmp_path / "reports").is_file()


def test_a_template_that_runs_too_long_is_stopped(tmp_path, monkeypatch):
    import planner.outputs.report as report
    from planner.language.errors import TemplateError

    monkeypatch.setattr(report, "RENDER_SECONDS", 0.5)
    path = tmp_path / "slow.j2"
    path.write_text("ok\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n")
    with pytest.raises(TemplateError, match="ran for more than 0.5 s") as info:
        report.render({}, str(path))
    assert "slow.j2:2:" in str(info.value)


# ---- formulas as written ---------------------------------------------------------------------------

AS_WRITTEN = [  # (formula in a plan with `f(a, b = 2 B) = a * b` and inputs x, y, n, flag) -> its LaTeX
    ("f(x, y)", r"f(x, y)"),  # a call of a user function is the call, never its body
    ("f(x)", r"f(x)"),
    ("x * 2 B", r"x \cdot 2\,\mathrm{B}"),  # a literal keeps its unit
    ("x * 1 month / (3 day)", r"\frac{x \cdot 1\,\mathrm{month}}{3\,\mathrm{day}}"),
    ("round(x)", r"\operatorname{round}\left(x\right)"),  # rounding, not sign(x) floor(|x| + 1/2)
    ("round(x, 2)", r"\operatorname{round}(x, 2)"),
    ("x - (y + 1)", r"x - (y + 1)"),
    ("(x + y) * 3", r"(x + y) \cdot 3"),
    ("-(x + y)", r"-(x + y)"),
    ("x ^ (n + 1)", r"x^{n + 1}"),
    ("(x + 1) ^ 2", r"(x + 1)^{2}"),
    ("if(flag, x, y)", r"\begin{cases} x & \text{if } \mathrm{flag} \\ y & \text{otherwise} \end{cases}"),
    ("sum(x * m for m in 1..n)", r"\sum_{m = 1}^{n} x \cdot m"),
    ("max(x, y) + abs(x) + sqrt(y)", r"\max(x, y) + \left|x\right| + \sqrt{y}"),
    ("x * 5%", r"x \cdot 5\%"),
]


@pytest.mark.parametrize("formula, expected", AS_WRITTEN)
def test_formulas_print_as_written(plan_file, formula, expected):
    import planner

    plan = planner.load(plan_file(f"x = 3\ny = 4\nn = 5 where integer, 1 <= n <= 50\nflag = true\n"
                                  f"f(a, b = 2 B) = a * b\nz = {formula}\n"))
    assert view_model(analyse(plan))["quantities"]["z"]["latex"] == expected


def test_a_long_formula_breaks_over_lines_and_functions_are_shown_once(plan_file):
    import planner

    long = " + ".join(f"alpha_beta_gamma_{i} * delta_{i}" for i in range(6))
    plan = planner.load(plan_file("".join(f"alpha_beta_gamma_{i} = {i + 1}\ndelta_{i} = 2\n" for i in range(6))
                                  + "g(p, q) = p + q\n"
                                  + f"total = {long}\nother = g(total, 1) * g(1, 2)\n"))
    view = view_model(analyse(plan))
    tex = view["quantities"]["total"]["equation_latex"]
    assert tex.startswith(r"\begin{aligned} \mathrm{total} ={} & ")
    lines = tex.split(r" \\ ")
    assert len(lines) >= 3 and all(line.lstrip("& \\quad").startswith("+") for line in lines[1:])
    assert view["quantities"]["other"]["latex"] == r"g(\mathrm{total}, 1) \cdot g(1, 2)"
    assert [f["name"] for f in view["functions"]] == ["g"]
    assert view["functions"][0]["equation_latex"] == "g(p, q) = p + q"
    assert render(view).count("g(p, q) = p + q") == 1


def test_closed_forms_are_in_display_units(plan_file):
    """`rent` in USD/month, `years` in years: the closed form reads `rent * 12 * years`, without the
    2,628,000 seconds per month of base units."""
    import planner

    plan = planner.load(plan_file('unit USD\nrent = 1000 USD/month\nyears = 5 year\nbudget = 60000 USD\n'
                                  'cost = rent * years -> USD\nsolve years where cost = budget\n'))
    view = view_model(analyse(plan))
    (solve,) = view["solves"]
    assert solve["closed_form_units"] == "display"
    assert solve["closed_form_latex"] == r"\mathrm{years} = \frac{\mathrm{budget}}{12 \cdot \mathrm{rent}}"  # 60000/(12*1000) = 5
    assert "2{,}628{,}000" not in render(view) and "31{,}536{,}000" not in render(view)


# ---- plots: the tornado chart and break-evens ------------------------------------------------------

def _png_size(data: bytes) -> tuple[int, int]:
    import struct

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_sensitivity_is_one_tornado_chart_linked_from_the_report(plan_file):
    import planner

    from planner.outputs import plots
    from planner.outputs.viewmodel import sensitivity_bars

    if plots.available() is not None:
        pytest.skip("matplotlib is not installed")
    # y = a * b^2 / c: elasticities +2 (b), +1 (a), -1 (c) at any values; z = a + 3 * b: a/(a + 3b) = 1/4 and 3/4
    plan = planner.load(plan_file('a = 2\nb = 2\nc = 5\ny = a * b^2 / c "the figure" [headline]\n'
                                  'z = a + 3 * b "the sum" [headline]\nd = 1\n'))
    analysis = analyse(plan)
    bars = dict(sensitivity_bars(analysis))
    assert [(n, round(lo, 9), round(hi, 9)) for n, lo, hi in bars["The figure"]] == [("b", 2, 2), ("a", 1, 1), ("c", -1, -1)]
    assert [(n, round(lo, 9)) for n, lo, _ in bars["The sum"]] == [("b", 0.75), ("a", 0.25)]
    outputs, _ = report_outputs(analysis, "t.md")
    (chart,) = [o for o in outputs if o.name == "t-sensitivity.png"]
    assert _png_size(chart.data)[0] == 1280  # 6.4 in at 200 dpi: shown at the column's 836 px, sharp on HiDPI screens
    text = outputs[-1].data.decode("utf-8")
    assert "![What moves the headline figures](t-sensitivity.png)" in text
    section = _section(text, "What moves the headline figures")
    assert "`b` +2.00, `a` +1.00, `c` -1.00" in section  # the same movers in words, for readers without images


def test_a_chart_is_drawn_without_pyplot():
    """A chart is a Figure on the Agg canvas: setting matplotlib's default style leaves out `backend`, whose
    setting (even to its default) resolves the default backend and imports pyplot (a sixtieth of a cold
    build). In a fresh process: another test may have imported pyplot into this one."""
    import subprocess
    import sys

    if plots.available() is not None:
        pytest.skip("matplotlib is not installed")
    code = ("import sys\nfrom planner.outputs import plots\n"
            "png = plots.tornado_png([('y', [('a', 1.0, 1.0), ('b', -0.5, -0.25)])], keep=False)\n"
            "print(png[:4] == b'\\x89PNG', 'matplotlib.pyplot' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]


def test_a_break_even_draws_both_sides_in_one_panel(plan_file):
    import planner

    from planner.outputs import plots
    from planner.outputs.build import break_evens

    if plots.available() is not None:
        pytest.skip("matplotlib is not installed")
    plan = planner.load(plan_file("unit USD\nrent = 900 USD\nrate = 5 where rate > 0\nown = 100 USD * rate\n"
                                  "other = 2 USD * rate\nsolve rate where own = rent\n"
                                  "sweep rate in 1..20 show own, rent, other\n"))
    a = analyse(plan)
    assert break_evens(a, a.sweeps[0][1]) == [("own", "rent")]
    together = plots.sweep_png(a.sweeps[0][1], together=break_evens(a, a.sweeps[0][1]))
    apart = plots.sweep_png(a.sweeps[0][1])
    # two panels (own and rent together, other) are shorter than three
    assert _png_size(together)[1] < _png_size(apart)[1]


def test_a_sweep_of_the_plan_as_written_marks_the_answer_of_the_scenario_that_is_the_plan():
    """gpu_buy_vs_rent sweeps the plan as written; its solve runs in each scenario, and `base_case`
    sets the inputs to their written values: its break-even is marked where npv_own meets npv_rent."""
    import planner
    from conftest import SHEETS

    from planner.outputs.build import break_evens, plot_marks

    a = analyse(planner.load(SHEETS.parent / "examples" / "gpu_buy_vs_rent.plan"))
    results = a.sweeps[0][1]
    assert break_evens(a, results) == [("npv_own", "npv_rent")]
    (mark,) = [m for m in plot_marks(a, results) if m.label.startswith("breakeven_utilisation")]
    assert 55.3 < mark.x < 55.4  # the answer the report states: "above 55.3 % in base_case"


def test_inputs_that_do_not_move_a_figure_are_counted_apart(plan_file):
    """y = max(a, b) + c + 0.01 d + 0.001 e at a = 3, b = 1: `b` is on the branch not taken (exactly 0); of
    the five inputs `a` (3/4.011 = +0.75) and `c` (1/4.011 = +0.25) and `d` (0.01/4.011 = +0.0025) are the top
    three, `e` (+0.00025) moves it less, `b` not at all."""
    import planner

    plan = planner.load(plan_file('a = 3\nb = 1\nc = 1\nd = 1\ne = 1\n'
                                  'y = max(a, b) + c + 0.01 * d + 0.001 * e "the figure" [headline]\n'))
    outputs, _ = report_outputs(analyse(plan), "t.md")
    section = _section(outputs[-1].data.decode("utf-8"), "What moves the headline figures")
    assert "`a` +0.75, `c` +0.25, `d` +0.00; 1 other input moves it less, and 1 input does not move it here." in section
