"""Series in every `planner eval` format, and the finance functions over a series (issue 41).

Figures are worked by hand: a balance of 10,000 USD earning 1% a month with 500 USD saved each month is
10,000 * 1.01 + 500 = 10,600.00, then 10,600 * 1.01 + 500 = 11,206.00, then 11,206 * 1.01 + 500 = 11,818.06.
"""

from __future__ import annotations

import json

import pytest

from planner.cli import main

CASH = """title "Cash with interest, month by month"
unit USD
periods = 1 month..3 month
start          = 10_000 USD "cash before the first month"
rate           = 1%         "interest per month on the balance"
saving         = 500 USD    "put aside every month"
series balance = start * (1 + rate) + saving then previous * (1 + rate) + saving
ending         = last(balance)
"""


@pytest.fixture
def cash(tmp_path):
    path = tmp_path / "cash.plan"
    path.write_text(CASH)
    return path


def test_markdown_shows_the_series_after_the_figures(cash, capsys):
    assert main(["eval", str(cash), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| ending " in out and "## Series" in out
    assert out.index("| ending ") < out.index("## Series")
    lines = [line for line in out.splitlines() if " month |" in line and "balance" not in line]
    assert [line.split("|")[2].strip() for line in lines] == ["10,600.00", "11,206.00", "11,818.06"]
    assert "balance (USD)" in out


def test_jsonl_has_a_line_per_series_period_after_the_figures(cash, capsys):
    assert main(["eval", str(cash), "--format", "jsonl"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    figures = [r for r in records if "quantity" in r]
    series = [r for r in records if r.get("series") == "balance"]
    assert [r["quantity"] for r in figures] == ["start", "rate", "saving", "ending"]
    assert records.index(series[0]) > records.index(figures[-1])
    assert [r["period"] for r in series] == [1, 2, 3] and all(type(r["period"]) is int for r in series)
    assert [r["value"] for r in series] == pytest.approx([10_600.00, 11_206.00, 11_818.06])
    assert {r["unit"] for r in series} == {"USD"} and series[1]["period_label"] == "2 month"


def test_csv_of_a_plan_with_series_is_one_long_table_pandas_reads(cash, capsys):
    import io

    pandas = pytest.importorskip("pandas")
    assert main(["eval", str(cash), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    frame = pandas.read_csv(io.StringIO(out), dtype={"period": str}, keep_default_na=False)
    assert list(frame.columns) == ["name", "scenario", "period", "value", "unit"]
    figures = frame[frame["period"] == ""]
    assert list(figures["name"]) == ["start", "rate", "saving", "ending"]
    assert float(figures.set_index("name").loc["ending", "value"]) == pytest.approx(11_818.06)
    balance = frame[frame["name"] == "balance"]
    assert list(balance["period"]) == ["1", "2", "3"]  # as written, not 1.0
    assert [float(v) for v in balance["value"]] == pytest.approx([10_600.00, 11_206.00, 11_818.06])
    assert set(balance["unit"]) == {"USD"} and set(frame["scenario"]) == {"base"}


def test_a_whole_period_is_an_integer_in_every_record_a_fraction_stays_one(cash, tmp_path, capsys):
    """JSON, JSON Lines, CSV, the API's records and simulate's fans write month 2 as ``2``, never ``2.0``;
    periods counted from half a month (0.5, 1.5, 2.5) keep their halves."""
    from planner import load

    assert main(["eval", str(cash), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert '"period": 2,' in out and '"period": 2.0' not in out
    periods = [r["period"] for r in json.loads(out)["series"]["records"]]
    assert periods == [1, 2, 3] and all(type(p) is int for p in periods)
    records = load(cash).eval().series.to_records()
    assert [r["period"] for r in records] == [1, 2, 3] and all(type(r["period"]) is int for r in records)
    uncertain = tmp_path / "u.plan"
    uncertain.write_text(CASH.replace("1%         ", "1% ~ 0.5% to 2%"))
    assert main(["simulate", str(uncertain), "--format", "json", "--samples", "50"]) == 0
    out = capsys.readouterr().out
    assert '"periods": [\n' in out and "1.0," not in out
    (scenario,) = json.loads(out)["scenarios"]
    assert [type(p) for p in scenario["series"]["balance"]["periods"]] == [int, int, int]
    half = tmp_path / "half.plan"
    half.write_text("periods = 0.5 month..2.5 month\nseries a = 1 then previous + 1\n")
    assert main(["eval", str(half), "--format", "jsonl"]) == 0
    assert [json.loads(line)["period"] for line in capsys.readouterr().out.splitlines()] == [0.5, 1.5, 2.5]
    assert main(["eval", str(half), "--format", "csv"]) == 0
    assert [line.split(",")[2] for line in capsys.readouterr().out.splitlines()[1:]] == ["0.5", "1.5", "2.5"]


def test_csv_of_a_plan_without_series_keeps_its_table_of_scenarios(tmp_path, capsys):
    path = tmp_path / "flat.plan"
    path.write_text("unit USD\na = 2 USD\nb = a * 3\n")
    assert main(["eval", str(path), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["quantity,unit,base", "a,USD,2.0", "b,USD,6.0"]


def test_every_format_carries_the_same_series(cash, capsys):
    seen = {}
    for fmt in ("table", "json", "csv", "markdown", "jsonl"):
        assert main(["eval", str(cash), "--format", fmt]) == 0
        seen[fmt] = capsys.readouterr().out
    for fmt, out in seen.items():
        assert ("11,818.06" in out) or ("11818.06" in out), fmt
        assert ("11,206" in out) or ("11206" in out), fmt


def _error(tmp_path, text):
    from planner.language.errors import PlanError
    from planner import load

    path = tmp_path / "e.plan"
    path.write_text(text)
    with pytest.raises(PlanError) as info:
        load(path).eval()
    return info.value


NET = "periods = 1 month..3 month\nrate = 12%\nseries net = [100, 200, 300]\n"


def test_a_list_as_an_argument_says_so_not_to_close_the_paren(tmp_path):
    err = _error(tmp_path, NET + "value2 = npv(rate / 12, [net at 1 month, net at 2 month])\n")
    assert err.span.line == 4 and err.span.column == 25
    assert "close the" not in (err.hint or "")
    assert "list" in err.hint and "not an argument" in err.hint and "`npv(..., net)`" in err.hint


def _value(tmp_path, text, name):
    from planner import load

    path = tmp_path / "v.plan"
    path.write_text(text)
    return load(path).eval()[name].number


# Excel's NPV: the first flow one period away. 100/1.01 + 200/1.01^2 + 300/1.01^3, worked out in plain Python:
NPV_1PCT = 100 / 1.01 + 200 / 1.01 ** 2 + 300 / 1.01 ** 3  # 586.2461552...


def test_at_takes_the_variable_of_a_range_of_flows(tmp_path):
    value = _value(tmp_path, NET + "value2 = npv(rate / 12, net at m for m in 1 month..3 month)\n", "value2")
    assert value == pytest.approx(NPV_1PCT, rel=1e-12)
    assert NPV_1PCT == pytest.approx(586.2461552, abs=1e-6)


def test_irr_over_a_range_of_a_series_periods(tmp_path):
    # -500 + 300 x + 300 x^2 = 0 with x = 1 / (1 + r): x = (-300 + sqrt(300^2 + 4 * 300 * 500)) / 600
    x = (-300 + (300 ** 2 + 4 * 300 * 500) ** 0.5) / 600
    text = "periods = 1 month..3 month\nseries net = [-500, 300, 300]\nr = irr(net at m for m in 1 month..3 month)\n"
    assert _value(tmp_path, text, "r") == pytest.approx(1 / x - 1, rel=1e-9)
    assert 1 / x - 1 == pytest.approx(0.1306624, abs=1e-7)


def test_npv_of_a_series_discounts_each_period_one_period_apart(tmp_path):
    # Excel's NPV over the series' row: the first period's flow discounted one period
    assert _value(tmp_path, NET + "value2 = npv(rate / 12, net)\n", "value2") == pytest.approx(NPV_1PCT, rel=1e-12)
    assert _value(tmp_path, NET + "value2 = npv(rate / 12, net * 2) + 1\n", "value2") == \
        pytest.approx(2 * NPV_1PCT + 1, rel=1e-12)


def test_irr_of_a_series_takes_its_periods_as_the_flows(tmp_path):
    # Excel's IRR over the row: the first flow is today's. -500 + 300 x + 300 x^2 = 0, x = 1 / (1 + r)
    x = (-300 + (300 ** 2 + 4 * 300 * 500) ** 0.5) / 600
    text = "periods = 1 month..3 month\nseries net = [-500, 300, 300]\nr = irr(net)\n"
    assert _value(tmp_path, text, "r") == pytest.approx(1 / x - 1, rel=1e-9)


def test_the_exact_route_gives_npv_of_a_series_as_a_fraction(tmp_path):
    from fractions import Fraction

    from planner import load
    from planner.compute.exact import ExactEvaluator

    path = tmp_path / "x.plan"
    path.write_text(NET + "value2 = npv(rate / 12, net)\n")
    plan = load(path)
    inputs, _ = plan.input_values(None)
    d = Fraction(100, 101)
    assert Fraction(ExactEvaluator(plan.model, inputs).quantity("value2")) == 100 * d + 200 * d ** 2 + 300 * d ** 3


def test_flows_of_a_series_beside_others_or_over_an_input_horizon_say_what_to_write(tmp_path):
    err = _error(tmp_path, NET + "value2 = irr(-500, net)\n")
    assert err.span.line == 4 and err.span.column == 20 and "series" in err.message
    assert "`irr(if(m == 0 month, -500, net at m) for m in 0 month..3 month)`" in err.hint
    text = "horizon = 3 month\nperiods = 1 month..horizon\nrate = 12%\nseries net = [100, 200, 300]\n"
    err = _error(tmp_path, text + "value2 = npv(rate / 12, net)\n")
    assert err.span.line == 5 and err.span.column == 25
    assert "`npv(rate / 12, net at m for m in 1 month..horizon)`, after `where horizon <= 30 month`" in err.hint
    assert _value(tmp_path, text + "value2 = npv(rate / 12, net at m for m in 1 month..3 month)\n", "value2") == \
        pytest.approx(NPV_1PCT, rel=1e-12)
    err = _error(tmp_path, NET + "value2 = irr(rate)\n")
    assert "takes at least 2 arguments, got 1" in err.message and err.span.column == 10


def test_npv_of_figures_is_unchanged(tmp_path):
    text = "rate = 1%\nvalue = npv(rate, 100, 200, 300)\n"
    assert _value(tmp_path, text, "value") == pytest.approx(NPV_1PCT, rel=1e-12)


def test_npv_of_a_series_inside_a_series_says_to_take_it_in_a_figure(tmp_path):
    err = _error(tmp_path, NET + "series y = npv(rate / 12, net) + net\n")
    assert err.span.line == 4 and err.span.column == 27
    assert "figure of its own" in err.hint and "`at`" not in err.message


def test_irr_of_a_formula_of_a_series_shows_the_spelling_that_works(tmp_path):
    text = "periods = 1 month..3 month\nseries net = [-500, 300, 300]\n"
    err = _error(tmp_path, text + "r = irr(net * 2)\n")
    spelling = "irr((net * 2) at m for m in 1 month..3 month)"
    assert f"`{spelling}`" in err.hint
    x = (-300 + (300 ** 2 + 4 * 300 * 500) ** 0.5) / 600  # doubling every flow leaves the rate as it was
    assert _value(tmp_path, text + f"r = {spelling}\n", "r") == pytest.approx(1 / x - 1, rel=1e-9)


def test_npv_of_a_series_in_a_check_says_to_name_it_first(tmp_path):
    err = _error(tmp_path, NET + "check npv(rate / 12, net) > 500\n")
    assert err.span.line == 4 and err.span.column == 22 and "`value = npv(..., net)`" in err.hint
    err = _error(tmp_path, NET + "check net > 500\n")
    assert "`min(net)`" in err.hint
