"""Reports as GitHub renders them: every formula through a real LaTeX renderer
(KaTeX from npm, ``throwOnError``), every diagram through Mermaid's own
parser (its 500-edge limit included), and every table inside GitHub's column.

The reports are those of every shipped plan (``sheets/*.plan``, whatever
plans are added later) and of the test plans below, which stress what the
shipped ones do not: many scenarios, a plain list of scenarios, true/false
inputs in conditions, functions, Greek and dotted names, no units at all,
and a plan far too large for one graph; and in a real browser (Chromium's
headless shell, 900 px) every report's tables, formulas and graphs are measured
against the 836 px column. The JavaScript side is
``tests/render/render.mjs``; ``.ci/run`` installs its npm packages
(``npm ci --prefix tests/render``). Without node or those packages the
tests are skipped, and fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SHEETS

from planner.outputs.build import report_outputs
from planner.outputs.viewmodel import GRAPH_EDGES, analyse

RENDER = Path(__file__).parent / "render"

MANY_SCENARIOS = """title "Many scenarios on three axes"
rate     = 0.05   "interest rate per year"
years    = 10     "loan term"            where integer, years >= 1
price    = 1000 "purchase price"
fee      = 25     "arrangement fee"
discount = false  "pays upfront"
payment  = price * rate / (1 - (1 + rate)^(-years)) + fee / years [headline]
total    = if(discount, 0.97 * price, payment * years) [headline]
cheap    = total < 1300 [headline]
axis rate_level "interest" {
    low  { rate = 0.02 }
    mid  { rate = 0.05 }
    high { rate = 0.09 }
}
axis term { short { years = 5 } long { years = 20 } }
axis pay { monthly { discount = false } upfront { discount = true, fee = 0 } }
check total ~= 970 in rate_level=low, term=short, pay=upfront
"""

PLAIN_SCENARIOS = "title \"Eight plain scenarios\"\nx = 1\ny = 2\nz = x * y + x / y\n" + "".join(
    f"scenario s{i} \"scenario number {i}\" {{ x = {i}, y = {i + 1} }}\n" for i in range(8))

MATHS = """title "Formulas of every kind"
alpha = 0.5 where 0 < alpha < 1
gamma = 3 where integer, gamma >= 1
c = 0.25
on = true
import "hardware/h100_sxm.plan" as h100
f(a, b) = max(a, b) - min(a, b)
poly = 5 * alpha^4 + 3 * alpha^2 - 2
ratio = (1 - alpha^(gamma + 1)) / (1 - alpha) / (gamma * c + 1)
pick = if(on and alpha > 0.2, abs(poly), sqrt(ratio)) + f(alpha, c)
tiny = h100.hbm_bandwidth / (1 TB/s) * 1e-15 + floor(ratio) + ceil(c) + round(ratio, 2) + exp(-alpha) + ln(ratio) + log(ratio, 10)
flag = not on or alpha >= 0.5
solve alpha where poly = 0
maximize ratio over gamma in 1..6
sweep alpha in 0.1..0.9 step 0.2 show ratio, flag
check flag == true
check ratio ~= 1.25 within 1%
"""


def _chain(n: int) -> str:
    """A plan of ``n`` quantities, each using the two before it: far past a legible graph."""
    lines = ['title "A long chain"', "a0 = 1", "a1 = 2"]
    lines += [f"a{i} = a{i - 1} + a{i - 2} / 1000" for i in range(2, n)]
    lines += [f"out{k} = a{n - 1 - k} * 2 [headline]" for k in range(5)]
    return "\n".join(lines) + "\n"


TEST_PLANS = {"many_scenarios": MANY_SCENARIOS, "plain_scenarios": PLAIN_SCENARIOS, "maths": MATHS,
              "chain": _chain(600)}


def _node() -> str:
    node = shutil.which("node")
    reason = None
    if node is None:
        reason = "node is not installed"
    elif not (RENDER / "node_modules" / "katex").is_dir() or not (RENDER / "node_modules" / "mermaid").is_dir():
        reason = "the npm packages are not installed (npm ci --prefix tests/render)"
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: failing instead of skipping)")
        pytest.skip(reason)
    return node


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    """The shipped report of every sheet and test plan, written to files."""
    import planner

    out = tmp_path_factory.mktemp("reports")
    plans = {p.stem: p for p in sorted(SHEETS.glob("*.plan"))}
    plans.update({p.stem: p for p in sorted((Path(__file__).parent / "plans").glob("series_*.plan"))})  # periods
    for name, text in TEST_PLANS.items():
        path = out / f"{name}.plan"
        path.write_text(text, encoding="utf-8")
        plans[name] = path
    files = {}
    for name, path in plans.items():
        outputs, _ = report_outputs(analyse(planner.load(path)), f"{name}.md", plots=False)
        files[name] = out / f"{name}.md"
        files[name].write_bytes(outputs[-1].data)
    return files


def _check(node: str, files) -> dict:
    run = subprocess.run([node, str(RENDER / "render.mjs"), "check", *map(str, files)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_every_formula_and_graph_renders(reports):
    node = _node()
    found = _check(node, reports.values())
    problems = {name: found[str(path)]["errors"] for name, path in reports.items() if found[str(path)]["errors"]}
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)
    for name, path in reports.items():
        assert found[str(path)]["diagrams"] == 1, name
        assert found[str(path)]["math"] > 0, name
    assert found[str(reports["token_cost"])]["math"] >= 22  # every derived quantity, the closed form, the polynomial


def test_the_renderers_fail_on_errors(tmp_path):
    """The check can fail: bad LaTeX, a Mermaid syntax error, and Mermaid's edge limit are each caught."""
    node = _node()
    bad = tmp_path / "bad.md"
    edges = "\n".join(f"  n{i} --> n{i + 1}" for i in range(600))
    bad.write_text("# x\n\n| a |\n|---|\n| $`\\frac{1}`$ |\n\n```math\n\\left( x\n```\n\n"
                   f"```mermaid\nflowchart LR\n  a -->\n```\n\n```mermaid\nflowchart LR\n{edges}\n```\n",
                   encoding="utf-8")
    errors = _check(node, [bad])[str(bad)]["errors"]
    assert len(errors) == 4, errors
    assert sum("KaTeX" in e for e in errors) == 2 and any("Edge limit exceeded" in e for e in errors)


def test_a_plan_too_large_to_draw_gets_the_summary_graph(reports):
    text = reports["chain"].read_text(encoding="utf-8")
    graph = text[text.index("```mermaid"):]
    assert graph.count("-->") <= GRAPH_EDGES
    assert "too many to draw legibly" in text and "602 quantities" not in text  # the note gives the real size
    assert "605 quantities" in text
    assert "this summary shows the headline quantities and the inputs each depends on" in text
    assert graph.count(":::headline") == 5 and "a0<br>a1" in graph  # a0 and a1 feed every headline: one node


def test_many_scenarios_become_rows_and_each_axis_is_listed_once(reports):
    text = reports["many_scenarios"].read_text(encoding="utf-8")
    headline = text[text.index("## Findings"):text.index("## Results")]
    assert "| rate_level | term | pay |" in headline
    assert headline.count("\n| ") >= 12  # a row per scenario (3 x 2 x 2)
    scenarios = text[text.index("## Scenarios"):text.index("## Inputs")]
    assert text.index("## Results") < text.index("## Scenarios")  # results first, what produced them after
    for axis in ("rate_level", "term", "pay"):
        assert scenarios.count(f"**Axis `{axis}`**") == 1
    assert "`low/short/monthly`" not in scenarios  # no list of every combination's overrides
    assert "The 12 scenarios are every combination of `rate_level` × `term` × `pay`." in scenarios
    plain = reports["plain_scenarios"].read_text(encoding="utf-8")
    assert "| scenario | `z` |" in plain  # eight scenarios: one row each


def test_no_sympy_or_python_syntax_in_any_report(reports):
    for name, path in reports.items():
        text = path.read_text(encoding="utf-8")
        prose = re.sub(r"```.*?```", "", text, flags=re.S)  # fenced blocks are LaTeX or Mermaid
        words = re.sub(r"`[^`]+`", "", prose)  # code spans are the plan's own text, as written
        for pattern in (r"\w\*\*\d", r"\bCRootOf\b", r"\bPiecewise\b", r"\bEq\(", r"= 1\b.*\bif\b",
                        r"\d(?:\.\d+)?e[-+]\d"):
            assert not re.search(pattern, words), (name, pattern, re.search(pattern, words))
    maths = reports["maths"].read_text(encoding="utf-8")
    assert r"\text{if } \mathrm{on}" in maths  # a true/false input in a condition is its name
    formulas = re.findall(r"\$`(.+?)`\$", maths) + re.findall(r"```math\n(.+?)```", maths, re.S)
    assert formulas and not [f for f in formulas if re.search(r"\\mathrm\{on\} = 1|\*\*|\bEq\b", f)]
    assert all(r"\cdot" in f for f in formulas if "5" in f and r"\alpha^{4}" in f)  # products are visible
    assert r"\alpha > 0.2" in maths  # decimals stay decimals (not \frac{1}{5})


# ---- in a real browser at 900 px -----------------------------------------------------------------

FINANCE = """title "Office lease or purchase: {buy_saves -> kUSD} saved by buying"
note "Buying saves {buy_saves -> kUSD} over the term; it pays only below {breakeven_rate} interest."
unit USD
unit kUSD = 1000 USD
price     = 1.2e6 USD     "purchase price"                    [assumption]
rate      = 5%/year       "mortgage interest"                 [assumption] where 0%/year < rate < 30%/year
years     = 10 year       "term"                              where integer, 1 year <= years <= 30 year
rent      = 9000 USD/month "monthly rent"                     [assumption]
upkeep    = 1.5%/year     "upkeep, share of the price"        [assumption]
resale    = 90%           "resale value at the end"           where 0% <= resale <= 150%
interest  = price * rate * years -> kUSD "interest paid over the term"
own_cost  = interest + price * upkeep * years + price * (1 - resale) -> kUSD "cost of owning over the term" [headline]
rent_cost = rent * years -> kUSD "cost of renting over the term" [headline]
buy_saves = rent_cost - own_cost -> kUSD "what buying saves" [headline]
scenario low_rate  "rates fall"    { rate = 3%/year }
scenario high_rate "rates rise"    { rate = 8%/year }
scenario hot       "prices rise"   { resale = 120% }
scenario long_term "twenty years"  { years = 20 year }
solve rate where own_cost = rent_cost as breakeven_rate "Buying pays below {breakeven_rate} interest."
sweep rate in 1%/year..10%/year step 1%/year show own_cost, rent_cost
check rent_cost == 1080 kUSD
"""

SCREEN = 1400  # px: one screen of a reader's browser
LLM_COST_SCREENS = 15


def _browser() -> str:
    found = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if found is None:
        reason = "chromium-headless-shell is not installed (apt-get install chromium-headless-shell)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: failing instead of skipping)")
        pytest.skip(reason)
    return found


def measure(node: str, browser: str, report: Path) -> dict:
    """The report rendered as GitHub does (render.mjs) in a headless browser 900 px wide: every table,
    formula and graph's width, the page's height with its folded parts closed, where the findings end."""
    page = report.with_suffix(".measure.html")
    page.write_text(subprocess.run([node, str(RENDER / "render.mjs"), "measure", str(report)], capture_output=True,
                                   text=True, check=True, timeout=120).stdout, encoding="utf-8")
    run = subprocess.run([browser, "--no-sandbox", "--disable-gpu", "--window-size=900,1400",
                          "--virtual-time-budget=30000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=180)
    found = re.search(r'<pre id="measured">(.*?)</pre>', run.stdout, re.S)
    assert found, run.stderr[-2000:]
    import html

    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def browser_reports(reports, tmp_path_factory) -> dict[str, Path]:
    """Every shipped sheet's and every example's report, a four-scenario finance plan and the test plans."""
    import planner
    out = tmp_path_factory.mktemp("browser")
    files = dict(reports)
    plans = {p.stem: p for p in sorted((SHEETS.parent / "examples").glob("*.plan"))}
    (out / "finance.plan").write_text(FINANCE, encoding="utf-8")
    plans["finance"] = out / "finance.plan"
    for name, path in plans.items():
        outputs, _ = report_outputs(analyse(planner.load(path)), f"{name}.md", plots=False)
        files[name] = out / f"{name}.md"
        files[name].write_bytes(outputs[-1].data)
    return files


def test_every_report_fits_the_column_and_opens_with_its_findings(browser_reports):
    node, browser = _node(), _browser()
    too_wide, late = [], []
    for name, path in browser_reports.items():
        m = measure(node, browser, path)
        assert m["column"] == 836 and m["drawn"] == m["graphs"] == 1, (name, m["column"], m["drawn"])
        for item in m["items"]:
            if item["width"] > m["column"]:
                too_wide.append(f"{name}: {item['kind']} {item['width']} px: {item['text']}")
        if m["findings_bottom"] is None or m["findings_bottom"] > SCREEN:
            late.append(f"{name}: findings end at {m['findings_bottom']} px")
        if name == "llm_cost":
            assert m["height"] <= LLM_COST_SCREENS * SCREEN, f"llm_cost is {m['height'] / SCREEN:.1f} screens"
    assert not late, "\n".join(late)
    assert not too_wide, "\n".join(too_wide)


def test_the_width_check_can_fail(tmp_path):
    """A table of long unbreakable cells and a wide formula are measured wider than the column."""
    node, browser = _node(), _browser()
    wide = tmp_path / "wide.md"
    wide.write_text("# x\n\n## Findings\n\n3 of 3 checks pass.\n\n## More\n\n| " + " | ".join(f"`{'w' * 30}{i}`" for i in range(4)) + " |\n"
                    "|---|---|---|---|\n| a | b | c | d |\n\n```math\n" + " + ".join(f"x_{{{i}}}" for i in range(200))
                    + "\n```\n\n```mermaid\nflowchart LR\n  a --> b\n```\n", encoding="utf-8")
    m = measure(node, browser, wide)
    kinds = {i["kind"] for i in m["items"] if i["width"] > m["column"]}
    assert kinds == {"table", "formula"}
    assert m["findings_bottom"] is not None and m["findings_bottom"] < SCREEN
