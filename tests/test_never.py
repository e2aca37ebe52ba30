"""``never`` (a ``first(...)`` that finds nothing) shown one way on every route: the build's headline
table, ``explain``, ``simulate`` (table, JSON and CSV), ``simulate -p``, ``sensitivity`` and the Python API.

The figures are worked by hand: cash starts at 100 kUSD and falls by the burn every month, so month k
ends with 100 - k * burn and the cash is first below zero in month floor(100 / burn) + 1. Over 36 months
that happens only when the burn is above 100 / 36 = 2.78 kUSD: at the 2 kUSD point value never (month
51 is beyond the plan), and for a burn uniform over 1..3 kUSD in a share (2.78 - 1) / 2 = 88.9% of samples.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

PLAN = """
unit USD
unit kUSD = 1000 USD

periods = 1 month..36 month

start = 100 kUSD "cash before the first month"
burn  = 2 kUSD   "net cash spent each month"

series cash = previous(cash, start) - burn -> kUSD "cash at the month's end" [headline]

runway   = first(period where cash < 0 USD) "the first month the bank is overdrawn (or never)" [headline]

scenario price_war { burn = 4 kUSD }
"""

UNCERTAIN = PLAN.replace("burn  = 2 kUSD", "burn  = uniform(1 kUSD, 3 kUSD)")
NEVER_SHARE = (100 / 36 - 1) / 2  # 0.8889: the burn at or below 2.78 kUSD


def test_simulate_csv_says_never_and_carries_the_never_share(plan_file, cli):
    code, out, err = cli("simulate", plan_file(UNCERTAIN), "--format", "csv", "--show", "runway,burn", "-s", "base")
    assert code == 0, err
    rows = {r["quantity"]: r for r in csv.DictReader(io.StringIO(out))}
    assert rows["runway"]["point"] == "never"  # the point value (burn 2 kUSD) never overdraws
    assert float(rows["runway"]["never"]) == pytest.approx(NEVER_SHARE, abs=0.005)
    assert rows["burn"]["never"] == ""  # not a `first(...)`
    # the JSON says the same: the point "never", the share under "never"
    code, out, err = cli("simulate", plan_file(UNCERTAIN), "--format", "json", "--show", "runway", "-s", "base")
    runway = json.loads(out)["scenarios"][0]["quantities"]["runway"]
    assert runway["point"] == "never" and runway["never"] == pytest.approx(NEVER_SHARE, abs=0.005)


def test_simulate_probability_accepts_never(plan_file, cli):
    code, out, err = cli("simulate", plan_file(UNCERTAIN), "-s", "base", "--show", "runway",
                         "-p", "runway != never", "-p", "runway == never",
                         "-p", "runway == never or runway > 35 month")
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("P(")]
    share = 100 * NEVER_SHARE
    assert lines[0].startswith("P(runway != never) = 11.1") and 100 - share == pytest.approx(11.11, abs=0.01)
    assert lines[1].startswith("P(runway == never) = 88.8")
    # runway is month 36 for a burn in (100 / 36, 100 / 35] kUSD: (2.857 - 2.778) / 2 = 3.97% of samples,
    # with never's 88.89%: 92.86%
    assert lines[2].startswith("P(runway == never or runway > 35 month) = 92.8")
    assert "no value" not in "".join(lines)  # the condition says what never gives: no note


def test_sensitivity_of_a_never_says_so_instead_of_nan(plan_file, cli):
    path = plan_file(PLAN)
    code, out, err = cli("sensitivity", path, "runway", "-s", "base")
    assert code == 0, err
    assert out.startswith("sensitivity of runway = never  [base]")
    assert "no sensitivity" in out and "nan" not in out and "no finite slope" not in out
    code, out, err = cli("sensitivity", path, "runway", "-s", "base", "--format", "json")
    (result,) = json.loads(out)["results"]
    assert result["value"] == "never" and result["inputs"] == []
    # where it has a value it has its slopes: month 26 (100 / 4 = 25 months end at 0, not below)
    code, out, err = cli("sensitivity", path, "runway", "-s", "price_war")
    assert out.startswith("sensitivity of runway = 26 month  [price_war]") and "burn" in out


def test_the_python_api_gives_a_value_that_says_never(plan_file):
    import planner

    result = planner.load(plan_file(PLAN)).eval(scenario=["base", "price_war"])
    v = result["runway", "base"]
    assert v.is_never and str(v) == "never" and v.plan_text() == "never"
    with pytest.raises(ValueError, match="never"):
        v + planner.Value(1, "month")
    war = result["runway", "price_war"]
    assert not war.is_never and float(war) == 26


def test_the_build_headline_table_says_never(plan_file):
    """The headline table `planner build` prints (its workbook aside): never, not nan."""
    from planner.compute.evaluation import load
    from planner.outputs.build import BuildResult, summary
    from planner.outputs.viewmodel import analyse

    text = summary(BuildResult(analyse(load(str(plan_file(PLAN)))), []))
    (row,) = [line.split() for line in text.splitlines() if line.startswith("runway")]
    assert row == ["runway", "never", "26", "month"]


def test_explain_says_never(plan_file, cli):
    code, out, err = cli("explain", plan_file(PLAN), "runway")
    assert code == 0, err
    assert "value        never" in out and "nan" not in out


def test_the_python_api_simulation_table_says_never_at_the_point(plan_file):
    import planner

    got = planner.load(plan_file(UNCERTAIN)).simulate(["runway"], samples=2000, scenario="base")
    assert got["runway"].never == pytest.approx(NEVER_SHARE, abs=0.01)
    headers, rows, *_ = got._table()
    assert rows[0][headers.index("point")] == "never"


def test_records_and_frames_say_never_as_eval_json_and_csv_do(plan_file, cli):
    """`to_records()` and `to_pandas()` gave nan where `planner eval --format json/csv` says never."""
    import planner

    path = plan_file(PLAN)
    code, out, err = cli("eval", path, "-s", "all", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["values"]["base"]["runway"] == "never"  # the one spelling, in every output
    code, out, err = cli("eval", path, "-s", "all", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))  # a plan with series: long form, a figure's period empty
    assert ["runway", "base", "", "never", "month"] in rows and ["runway", "price_war", "", "26.0", "month"] in rows

    plan = planner.load(path)
    result = plan.eval(scenario=["base", "price_war"])
    got = {r["scenario"]: r["value"] for r in result.to_records() if r["quantity"] == "runway"}
    assert got == {"base": "never", "price_war": 26.0}
    frame = result.to_pandas()
    assert frame.loc["runway", "base"] == "never" and frame.loc["runway", "price_war"] == 26

    sweep = plan.sweep({"burn": ["2 kUSD", "4 kUSD"]}, show=["runway"])
    assert [r["runway"] for r in sweep.to_records()] == ["never", 26.0]
    assert list(sweep.to_pandas()["runway"]) == ["never", 26.0]
    code, out, err = cli("sweep", path, "burn=2 kUSD,4 kUSD", "--show", "runway", "--format", "csv")
    assert [row[-2] for row in csv.reader(io.StringIO(out))][1:] == ["never", "26.0"]

    sim = planner.load(plan_file(UNCERTAIN)).simulate(["runway"], samples=200, scenario="base")
    assert sim.to_records()[0]["point"] == "never"


def test_a_check_against_never_shows_the_figure_or_never(plan_file, cli):
    """`check runway == never` showed expected true, actual true in the report's table (a failure: "condition
    is false"); it shows never against the month found, in the report, the terminal and JSON alike. By hand:
    at a 4 kUSD burn the cash is first below zero in month 26 (100 - 26 * 4 = -4)."""
    from planner.compute.evaluation import load
    from planner.outputs.viewmodel import analyse, view_model

    checks = ("check runway == never\ncheck runway != never\n"
              "check runway == never in price_war\ncheck runway != never in price_war\n")
    path = plan_file(PLAN + checks)
    checked = view_model(analyse(load(str(path))))["checks"]["results"]
    rows = [(c["expected"], c["actual"], c["passed"]) for c in checked]
    assert rows == [("never", "never", True), ("not never", "never", False),
                    ("never", "26 month", False), ("not never", "26 month", True)]
    code, out, err = cli("check", path)
    assert code == 1 and "expected never, got 26 month in price_war" in out
    assert "expected a value, not never, got never" in out
    code, out, err = cli("check", path, "--format", "json")
    assert [c["actual"] for c in json.loads(out)["checks"]] == [None, None, 26, 26]


@pytest.mark.parametrize("engine", ["libreoffice", "gnumeric"])
def test_the_checks_sheet_shows_a_check_against_never_as_the_report_does(plan_file, tmp_path, engine):
    """The Checks sheet's Actual and Expected of `check runway == never` were blank; they read as the report's
    table: never (or the month found) against never or not never, Actual live, recalculated by LibreOffice and
    Gnumeric as exported and with the burn typed in at 4 kUSD (cash below zero in month 26, as above);
    in price_war (a series in another case than the base) planner's figure."""
    from excel_recalc import in_both_engines, require_gnumeric
    from test_excel_workbook import edit, export, require_soffice

    from planner.plan import load_compiled

    require_soffice()
    require_gnumeric()
    plan = load_compiled(plan_file(PLAN + "check runway == never\ncheck runway != never\n"
                                          "check runway == never in price_war\n"))
    items = {"as_written": export(plan, tmp_path / "never.xlsx")}
    items["burn_4"] = edit(items["as_written"], tmp_path / "burn_4.xlsx", {"burn": 4})
    in_both_engines(items, tmp_path, 10)
    for key, actual in (("as_written", "never"), ("burn_4", 26)):
        ws = items[key].engines[engine]["Checks"]
        rows = {ws.cell(r, 1).value: [ws.cell(r, c).value for c in (3, 4)] for r in range(4, ws.max_row + 1)}
        assert rows["check runway == never"] == [actual, "never"], (key, rows)
        assert rows["check runway != never"] == [actual, "not never"], (key, rows)
        assert rows["check runway == never in price_war"] == [26, "never"], (key, rows)  # planner's, not live


def test_check_verbose_and_markdown_say_never_as_the_report_does(plan_file, cli):
    """`planner check -v` listed `ok   check runway == never` with no value and `--format markdown` left its
    actual and expected blank; both read never (or the month found) against never or not never."""
    path = plan_file(PLAN + "check runway == never\ncheck runway != never in price_war\n")
    code, out, err = cli("check", "-v", path)
    assert code == 0 and "ok   check runway == never = never\n" in out, out
    assert "ok   check runway != never in price_war [price_war] = 26 month" in out, out
    code, out, err = cli("check", "--format", "markdown", path)
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines() if "runway" in line]
    assert [r[3:5] for r in rows] == [["never", "never"], ["26 month", "not never"]], out
