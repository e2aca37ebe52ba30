"""The least (greatest) real value where a condition holds: `solve min X where COND` of an `X` not declared
integer (planner/questions/fast.py, docs/questions.md "The least value where a condition holds").

Golden values: closed forms worked by hand (2, sqrt(10), 19/7 from `ceil(7 x) >= 20`), the break-even
acceptance rate of the reference article (0.287107752303907, docs/questions.md), and, for series, a
month-by-month script bisected on itself.
"""

from __future__ import annotations

import io
import math

import pytest

import planner
from planner.plan import loads_compiled as loads
from planner.language.errors import NoRootError, NotMonotoneError, PlanError, SolveError
from planner.questions.fast import Answers
from planner.questions.solve import adhoc

SMALL = """\
x = 3 where x >= 1
z = 2 where z > 0
f = (x - 2)^2
"""


def _answer(text: str, question: str):
    plan = loads(text + question + "\n", name="t.plan")
    (stmt,) = plan.model.solves
    return Answers(plan).answer(stmt)


@pytest.mark.parametrize("question,expected", [
    ("solve min x where x^2 >= 4", 2.0),
    ("solve max x where x^2 <= 10", math.sqrt(10)),
    ("solve min x where x^3 >= 8", 2.0),
    ("solve min x where x >= 9536743164062500", 9536743164062500.0),  # past the grid: found by doubling
    ("solve min x where x * x - x * x + x >= 2", 2.0),  # the doubling stops where x * x overflows (inf - inf)
])
def test_the_least_and_greatest_real_value(question, expected):
    r = _answer(SMALL, question)
    assert r.value == pytest.approx(expected, rel=1e-15)
    below = math.nextafter(r.value, -math.inf if r.mode == "min" else math.inf)
    assert r.verification.holds is True and r.verification.neighbor == below
    assert r.verification.neighbor_holds is False and r.exact is None and r.closed_form is None


def test_an_infimum_not_attained_is_the_least_float_where_it_holds():
    """`ceil(7 x) >= 20` holds for x > 19/7, not at it: the answer is a float just past 19/7 (planner's
    `ceil` forgives a product a few floats past a whole number, as 100.00000000000017 is 100)."""
    r = _answer(SMALL, "solve min x where ceil(7 * x) >= 20")
    assert r.value > 19 / 7 and r.value == pytest.approx(19 / 7, rel=1e-14)
    assert r.verification.neighbor_holds is False


def test_the_break_even_acceptance_rate_is_the_least_rate_that_speeds_up(token_cost):
    stmt = adhoc(token_cost, "alpha", "speedup >= 1", "min")
    r = Answers(token_cost).answer(stmt)
    assert r.value == pytest.approx(0.287107752303907, rel=1e-12)


def test_holding_everywhere_is_the_domains_end():
    r = _answer(SMALL, "solve min x where x >= 0")
    assert r.value == 1.0
    assert any("holds everywhere in the domain ([1, inf))" in n for n in r.notes)


@pytest.mark.parametrize("question,family,fragments", [
    ("solve min x where x < 0", NoRootError, ["no `x` in [1, inf) makes `x < 0` hold"]),
    ("solve min x where f >= 1", NotMonotoneError, ["changes more than once", "at x = 1, 3"]),
    ("solve max x where x^2 >= 4", NotMonotoneError, ["holds only above x = 2", "`solve min x`"]),
    ("solve min z where z >= 0", SolveError, ["holds for every `z` in (0, inf)", "there is no least"]),
    ("solve min x where sqrt(2 - x) >= 0", SolveError, ["has no value at x = "]),
])
def test_no_answer_several_boundaries_or_no_least_say_so(question, family, fragments):
    with pytest.raises(family) as info:
        _answer(SMALL, question)
    text = str(info.value)
    for fragment in fragments:
        assert fragment in text, text


def test_a_condition_false_past_the_grid_and_the_several_boundaries_are_listed():
    with pytest.raises(NotMonotoneError) as info:
        _answer(SMALL, "solve min x where f >= 1")
    assert info.value.roots == pytest.approx([1.0, 3.0], rel=1e-15)


# ---- series: the least starting cash -------------------------------------------------------------

RISING = """\
unit USD
unit kUSD = 1000 USD
periods = 1 month..24 month
start = 50 kUSD where start >= 0 USD
burn  = 5 kUSD
lift  = 8 kUSD
series cash = previous(cash, start) - burn + if(period >= 12 month, lift, 0 USD) -> kUSD
low   = min(cash) -> kUSD
short = count(cash < 0 USD)
"""


def _cash(start: float) -> list[float]:
    """RISING month by month in plain Python (USD)."""
    out, cash = [], start
    for m in range(1, 25):
        cash = cash - 5000 + (8000 if m >= 12 else 0)
        out.append(cash)
    return out


def test_the_least_start_that_keeps_every_month_at_or_above_zero():
    r = _answer(RISING, "solve min start where low >= 0 USD as need")
    assert r.value == pytest.approx(55_000, rel=1e-15)  # months 1..11 burn 5 kUSD each: the low is month 11's
    assert min(_cash(r.value)) >= 0 > min(_cash(math.nextafter(r.value, 0)))


def test_a_flat_condition_the_equation_cannot_answer():
    """`short = 0` holds for every start from 55 kUSD up: a whole interval of roots to the equation route;
    the least start where it holds is one answer."""
    with pytest.raises(PlanError):
        _answer(RISING, "solve start where short = 0")
    r = _answer(RISING, "solve min start where short == 0")
    assert r.value == pytest.approx(55_000, rel=1e-15)


def test_an_equation_true_on_a_whole_stretch_says_so_and_what_to_ask():
    """It listed 498 "roots" (every grid point from 57.42 kUSD up): now one interval, and the question that
    answers it."""
    with pytest.raises(PlanError) as info:
        _answer(RISING, "solve start where short = 0")
    text = str(info.value)
    assert "holds for every `start` from about" in text and "to the end of the search" in text
    assert "`solve min start where short = 0` is the least `start` where it holds" in text
    with pytest.raises(NoRootError, match="`solve min start where low >= 0 USD` is the least `start`"):
        _answer(RISING.replace("start >= 0 USD", "start >= 60 kUSD").replace("= 50 kUSD", "= 70 kUSD"),
                "solve start where low = 0 USD")


def test_already_enough_at_the_lower_bound():
    r = _answer(RISING.replace("start >= 0 USD", "start >= 60 kUSD").replace("= 50 kUSD", "= 70 kUSD"),
                "solve min start where low >= 0 USD")
    assert r.value == 60_000 and "holds everywhere" in r.notes[0]
    with pytest.raises(NoRootError):  # the equation has no root there
        _answer(RISING.replace("start >= 0 USD", "start >= 60 kUSD").replace("= 50 kUSD", "= 70 kUSD"),
                "solve start where low = 0 USD")


def test_check_uses_the_answer_and_the_condition_holds_there(tmp_path, cli):
    path = tmp_path / "cash.plan"
    path.write_text(RISING + "solve min start where low >= 0 USD as need\n"
                    "check need == 55 kUSD within 1e-6 USD\n"
                    "check low >= 0 USD with start = need\n")
    code, out, err = cli("check", path)
    assert code == 0 and "2 passed, 0 failed" in out, out + err
    code, out, err = cli("solve", path, "--for", "start", "--where", "short == 0", "--min", "--format", "json")
    assert code == 0, err
    assert '"value": 55.0' in out


def test_eval_report_and_workbook_show_the_answer(tmp_path):
    import openpyxl

    from planner.outputs.excel.writer import workbook_bytes

    text = RISING + "solve min start where low >= 0 USD as need\nmargin = need - 50 kUSD -> kUSD\n"
    plan = loads(text, name="cash.plan")
    assert plan.evaluate()["margin"] == pytest.approx(5_000, rel=1e-12)
    wb = openpyxl.load_workbook(io.BytesIO(workbook_bytes(plan)), data_only=True)
    ws = wb["Solve"]
    row = next(r for r in range(4, ws.max_row + 1) if str(ws.cell(r, 1).value).startswith("solve min start"))
    assert ws.cell(row, 3).value == pytest.approx(55, rel=1e-15) and ws.cell(row, 4).value == "kUSD"
    assert "planner's answer, not live" in ws.cell(row, 10).value

    plain = loads(SMALL + "solve min x where ceil(7 * x) >= 20 as past\n", name="small.plan")  # no closed form
    wb = openpyxl.load_workbook(io.BytesIO(workbook_bytes(plain)), data_only=True)
    ws = wb["Solve"]
    assert ws.cell(4, 3).value == pytest.approx(19 / 7, rel=1e-14) and "found numerically" in ws.cell(4, 10).value

    api = planner.loads(text, "cash.plan")
    (row,) = api.solve().rows
    assert row.value.number == pytest.approx(55, rel=1e-15) and row.mode == "min"


def test_the_editor_shows_no_error_and_the_answer_in_a_code_lens(tmp_path):
    """The editor once flagged `solve min start` of a real start (it wanted `where integer`)."""
    from planner.lsp.analysis import Document

    text = RISING + "solve min start where low >= 0 USD as need\n"
    doc = Document(tmp_path / "cash.plan", text)
    assert [d.message for d in doc.update(text) if d.severity == 1] == []
    (lens,) = doc.answers(doc.plan)
    assert lens[1] == "= 55.00 kUSD"


def test_a_true_false_input_is_still_refused_as_before():
    with pytest.raises(PlanError, match="true/false; `solve` is for numbers only"):
        _answer("on = true\nx = if(on, 3, 1)\n", "solve min on where x >= 2")


GROWN = """\
x     = 3  where x >= 1
rate  = 4% "interest a year"
years = 10
grown = x * (1 + rate)^years
solve min x where grown >= 2 as least_x
"""


def test_a_closed_form_of_the_boundary_where_one_is_shown():
    """`planner solve --closed-form`, the report and the workbook: the boundary's closed form, by hand
    2 / (1 + rate)^years; without one (a series, a ceiling) the note says so."""
    from planner.questions.fast import NO_BOUNDARY

    plan = loads(GROWN, name="grown.plan")
    (stmt,) = plan.model.solves
    r = Answers(plan).answer(stmt, closed_form=True)
    assert r.closed_form_text == "2 / (0.01 * rate + 1)^years" and r.value == pytest.approx(2 / 1.04 ** 10, rel=1e-15)
    assert Answers(plan).answer(stmt).closed_form is None  # the numeric route alone, where none is shown
    plan = loads(SMALL + "solve min x where ceil(7 * x) >= 20\n", name="t.plan")
    r = Answers(plan).answer(plan.model.solves[0], closed_form=True)
    assert r.closed_form is None and NO_BOUNDARY in r.notes


def test_the_workbook_answer_is_live_where_the_boundary_has_a_closed_form(tmp_path):
    """Recalculated by LibreOffice after every cached value is poisoned, as written and with `years` typed
    in as 5: 2 / 1.04^5 = 1.64385, and the Holds cell TRUE both times."""
    import openpyxl
    from excel_recalc import poison, recalculate, require_soffice

    from planner.outputs.excel.writer import Book, to_bytes

    require_soffice()
    plan = loads(GROWN, name=str(tmp_path / "grown.plan"))
    book = Book(plan)
    path = tmp_path / "grown.xlsx"
    path.write_bytes(to_bytes(book.build()))
    wb = openpyxl.load_workbook(path)
    assert wb["Solve"]["C4"].value.startswith("=")  # a formula, not planner's figure
    sheet, coord = next(wb.defined_names[book.names["years"]].destinations)
    wb[sheet][coord.replace("$", "")].value = 5
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)
    assert poison(path) > 3 and poison(edited) > 3
    done = recalculate([path, edited], tmp_path)
    for p, years in ((path, 10), (edited, 5)):
        ws = openpyxl.load_workbook(done[p], data_only=True)["Solve"]
        assert ws["C4"].value == pytest.approx(2 / 1.04 ** years, rel=1e-12) and ws["E4"].value in (True, 1)


def test_an_answer_that_moves_with_the_input_is_named():
    plan = loads("x = 3 where x >= 1\ny = 2 where y >= 0\nsolve y where y = x as yy\n"
                 "solve min x where x + yy >= 10 as m\n", name="t.plan")
    with pytest.raises(SolveError, match="uses the answer `yy`, which changes with `x` itself"):
        Answers(plan).answer(plan.model.solves[1])


def test_the_verification_shows_the_answer_to_the_same_digits_as_its_neighbour():
    """`holds at x = 1.35 ..., fails at the float just below it (1.3511...)` read as a gap between the two:
    the answer rounded for display is followed by its full value where they differ; a round answer is shown once."""
    r = _answer(SMALL, "solve min x where x * 1.04^10 >= 2")
    text = r.verification.text
    assert f"holds at x = 1.35113 ({r.value!r}), fails at the float just below it ({r.verification.neighbor!r})" in text, text
    r = _answer(SMALL, "solve min x where x^2 >= 4")
    assert r.verification.text.startswith("holds at x = 2, fails"), r.verification.text


def test_the_verification_never_writes_the_answer_and_the_failing_float_beside_it_alike():
    """The greatest monthly growth of a 30-month capacity plan read `holds at growth = 5.48398 % (5.483983392348823),
    fails at the float just above it (5.483983392348823)`: the two adjacent floats (in the base unit), each divided
    by the percent's scale, rounded to one float. They are written exactly, to the digits that tell them apart."""
    import re
    from fractions import Fraction

    r = _answer("g = 6% where 0% <= g <= 30%\ny = (1 + g)^29\n", "solve max g where y <= 4.7")
    said, beside = re.search(r"\(([0-9.]+)\), fails at the float just above it \(([0-9.]+)\)", r.verification.text).groups()
    assert said != beside, r.verification.text
    yes = float(r.value)  # the answer (a fraction: the base unit), and the float above it, where the condition fails
    no = math.nextafter(yes, 1)
    assert (1 + yes) ** 29 <= 4.7 < (1 + no) ** 29
    assert abs(Fraction(said) - Fraction(yes) * 100) < abs(Fraction(said) - Fraction(no) * 100)  # each its own float
    assert abs(Fraction(beside) - Fraction(no) * 100) < abs(Fraction(beside) - Fraction(yes) * 100)


def test_an_equation_whose_sides_jump_past_each_other_has_no_root():
    """`ceil(x) - 2.5 = 0` was answered `x = 2`, "lhs - rhs = -0.5 (it changes sign at the next float)": a step
    across zero is no root. It is a no-answer that says where the sides jump and what to ask instead."""
    plan = loads("x = 5 where 0 <= x <= 10\ny = ceil(x) - 2.5\nsolve x where y = 0 as r\n", name="t.plan")
    (stmt,) = plan.model.solves
    with pytest.raises(NoRootError) as info:
        Answers(plan).answer(stmt)
    err = info.value
    assert "jump past each other" in err.message and "x = 2" in err.message and "-0.5" in err.message and "0.5" in err.message, \
        err.message
    assert "solve min x where y >= 0" in err.hint
    # a steep but continuous equation keeps its root
    r = _answer("x = 5 where 0 <= x <= 10\n", "solve x where 1e12 * (x - 1) = 0")
    assert r.value == pytest.approx(1.0, rel=1e-12)


def test_the_least_value_is_never_shown_below_itself(tmp_path, cli):
    """The least start that keeps the cash at or above zero, 1.2345 kUSD, was written `1.23 kUSD` by `solve`, the
    report's finding and the build: a reader who funds what is shown falls short. A least value is written with
    the decimals it needs to stay at or above the answer (a greatest value at or below it)."""
    from planner.compute.numbers import answer_style

    path = tmp_path / "round.plan"
    path.write_text("unit USD\nunit kUSD = 1000 USD\nperiods = 1 month..12 month\nstart = 1 kUSD where start >= 0 USD\n"
                    "burn = 1.2345 kUSD\nseries cash = start - burn then previous + 0 USD\n"
                    "solve min start where min(cash) >= 0 USD as need\n")
    code, out, _ = cli("solve", str(path))
    assert code == 0 and "[base] start = 1.235 kUSD" in out, out
    assert answer_style(4.387468216238861, "MUSD", "min").text(4.387468216238861) == "4.39"  # rounds up: as before
    assert answer_style(1.2345, "kUSD", "max").text(1.2345) == "1.23"  # a greatest value may round down
    assert answer_style(1.2355, "kUSD", "max").text(1.2355) == "1.2355"  # 1.24 and 1.236 are above it
    report = tmp_path / "r.md"
    code, _, _ = cli("report", str(path), "-o", str(report))
    assert "is **1.235 kUSD**" in report.read_text()
    # the workbook's Summary writes the answer as a sentence over its Solve cell: in the format that keeps it
    import openpyxl

    book = tmp_path / "round.xlsx"
    code, _, _ = cli("export", str(path), "-o", str(book))
    cells = [c.value for row in openpyxl.load_workbook(book)["Summary"].iter_rows() for c in row]
    assert '="Need: "&TEXT(Solve!$C$4,"#,##0.000")&" kUSD"' in cells, [c for c in cells if "Need" in str(c)]


def test_the_solve_sheet_never_shows_a_least_value_below_itself():
    """`solve min x` whose answer is 1.2345 kUSD: money's two decimals showed 1.23 kUSD on the Solve sheet, a
    value where the condition fails; its format has the decimals the report and the terminal write (1.235)."""
    import openpyxl

    from planner.outputs.excel.writer import workbook_bytes

    text = ("unit USD\nunit kUSD = 1000 USD\nx = 2 kUSD where x >= 0 USD\nneed = 1.2345 kUSD\n"
            "solve min x where x >= need as least for all\nsolve max x where x <= need as most for all\n")
    plan = loads(text, name="least.plan")
    ws = openpyxl.load_workbook(io.BytesIO(workbook_bytes(plan)))["Solve"]
    rows = {str(ws.cell(r, 1).value).split(" where")[0]: r for r in range(4, ws.max_row + 1)}
    least, most = rows["solve min x"], rows["solve max x"]
    assert ws.cell(least, 3).number_format.startswith("#,##0.000") and "0.0000" not in ws.cell(least, 3).number_format
    assert ws.cell(most, 3).number_format.startswith("#,##0.00;")  # 1.23 kUSD is at most 1.2345 kUSD: cents


def test_a_check_and_the_summary_never_show_an_answer_past_itself(tmp_path, cli):
    """`solve max x where x <= 5.47791527 %`: the answer's figure in a check (`check -v`'s 8 digits gave 5.4779153 %,
    the report's checks table and the Checks sheet 5.47792 %) and on the Summary (three digits: 5.48 %) was above
    the greatest value, where the condition fails; `solve min` of 5.47211527 % was 5.47 % on the Summary, below
    it (5.472 and 5.4721 too). Each is written with the decimals it needs to stay on its side, as the Solve sheet and the report do."""
    import openpyxl

    path = tmp_path / "side.plan"
    path.write_text("x = 2% where 0% <= x <= 20%\n"
                    "solve max x where x <= 5.47791527% as most\nsolve min x where x >= 5.47211527% as least\n"
                    "check most ~= 5.4779%\ncheck least ~= 5.4721%\n")
    code, out, _ = cli("check", "-v", str(path))
    shown = {line.split()[2]: float(line.split(" = ")[-1].removesuffix(" %")) for line in out.splitlines()
             if line.startswith("ok")}
    assert code == 0 and set(shown) == {"most", "least"}, out
    assert 5.4779152 <= shown["most"] <= 5.47791527 and 5.47211527 <= shown["least"] <= 5.4721153, out
    report = tmp_path / "r.md"
    code, _, _ = cli("report", str(path), "-o", str(report))
    rows = [line for line in report.read_text().splitlines() if line.startswith("| pass |")]
    assert [r.split(" | ")[-1] for r in rows] == ["5.477915 % |", "5.47212 % |"], rows  # 5.47792 is above the most
    book = tmp_path / "side.xlsx"
    code, _, _ = cli("export", str(path), "-o", str(book))
    wb = openpyxl.load_workbook(book)
    checks = {str(row[0].value): row for row in wb["Checks"].iter_rows() if str(row[0].value).startswith("check")}
    assert checks["check most ~= 5.4779%"][2].number_format == "#,##0.000000%"  # 5.477915 %, not 5.47792 %
    assert checks["check least ~= 5.4721%"][2].number_format == "#,##0.00000%"  # 5.47212 %: at or above the least
    summary = [row for row in wb["Summary"].iter_rows() if str(row[2].value).startswith("=Solve!")]
    assert [row[2].number_format for row in summary] == ["#,##0.0000%", "#,##0.00000%"], summary  # 5.4779, 5.47212
