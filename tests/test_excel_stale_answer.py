"""An answer the Solve sheet cannot recompute (a bisection over a long sum would write thousands of
cells) is planner's figure, written at export. After an edit its check no longer holds; the status says
the answer is out of date ("re-run planner"), not that it FAILS. LibreOffice recalculates each book, its
cached values poisoned first, so the statuses read back were computed."""

from __future__ import annotations

import openpyxl
import pytest
from excel_recalc import POISON, poison, recalculate, require_soffice

from planner.outputs.excel.book import STALE
from planner.outputs.excel.writer import Book, to_bytes
from planner.plan import loads_compiled as loads

PLAN = """title "Rent or buy a machine"
unit USD
horizon  = 48 month    "how long the machine is used" where 1 month <= horizon <= 120 month
price    = 10000 USD   "purchase price" [assumption] where price > 0 USD
rent     = 300 USD/month "monthly rent" [assumption]
rate     = 1%          "discount rate per month" [assumption] where 0% < rate < 50%
npv_rent = sum(rent * 1 month * (1 + rate)^(-(m / 1 month)) for m in 1 month..horizon) -> USD
    "present cost of renting" [headline]
solve rate where npv_rent = price as breakeven_rate
"""


@pytest.fixture(scope="module")
def recalculated(tmp_path_factory):
    require_soffice()
    work = tmp_path_factory.mktemp("stale")
    book = Book(loads(PLAN, str(work / "machine.plan")))
    exported = work / "exported.xlsx"
    exported.write_bytes(to_bytes(book.build()))
    wb = openpyxl.load_workbook(exported)
    sheet, coord = next(wb.defined_names[book.names["price"]].destinations)  # the input cell named price
    coord = coord.replace("$", "")
    wb[sheet.strip("'")][coord].value = 12000  # the analyst's edit: the machine costs more
    edited = work / "edited.xlsx"
    wb.save(edited)
    unedited = work / "unedited.xlsx"
    unedited.write_bytes(exported.read_bytes())
    for path in (edited, unedited):
        assert poison(path) > 20
    out = recalculate([edited, unedited], work)
    return {p.stem: openpyxl.load_workbook(out[p], data_only=True) for p in (edited, unedited)}, \
        openpyxl.load_workbook(exported)


def _rows(wb, sheet: str):
    return [r for r in wb[sheet].iter_rows() if str(r[0].value or "").lower().startswith(("solve rate", "breakeven"))]


def test_the_answer_is_planners_figure_not_a_formula(recalculated):
    _, formulas = recalculated
    (row,) = _rows(formulas, "Solve")
    # 48 months at 1%: the rate where renting's present cost is 10,000 USD, from the annuity formula
    # 300 * (1 - 1.01^-48) / 0.01 = 11,392 > 10,000, so the break-even rate is above 1% (about 1.6% a month)
    assert not str(row[2].value).startswith("=") and 0.015 < row[2].value < 0.017


@pytest.mark.parametrize("sheet", ["Solve", "Summary"])
def test_an_edit_makes_a_written_answer_say_re_run_not_fails(recalculated, sheet):
    books, _ = recalculated
    (before,) = _rows(books["unedited"], sheet)
    (after,) = _rows(books["edited"], sheet)
    assert before[5].value == "holds" and before[4].value == 1  # TRUE (LibreOffice writes it as 1) as exported, LibreOffice agrees
    assert after[4].value == 0 and after[5].value == STALE  # after the edit: out of date, said so
    assert after[5].value != POISON and "FAILS" not in str(after[5].value)


SERIES = """title "Cash with interest, month by month"
unit USD
periods = 1 month..12 month
start          = 10_000 USD "cash before the first month"      where start >= 0 USD
rate           = 1%         "interest per month on the balance"
saving         = 500 USD    "put aside every month"           where saving >= 0 USD
series balance = start * (1 + rate) + saving then previous * (1 + rate) + saving
ending         = last(balance) "the balance after twelve months"
solve saving where ending = 20_000 USD as enough
"""


@pytest.fixture(scope="module")
def series_books(tmp_path_factory):
    """A solve over a series is planner's figure (its rows compute the inputs as they are); its Holds was TRUE
    whatever the edit. The book as exported, with the rate edited, and with the solved input itself edited."""
    require_soffice()
    work = tmp_path_factory.mktemp("series-stale")
    book = Book(loads(SERIES, str(work / "cash.plan")))
    exported = work / "exported.xlsx"
    exported.write_bytes(to_bytes(book.build()))
    paths = {}
    for stem, name, value in (("as_exported", None, None), ("rate", "rate", 0.02), ("saving", "saving", 900)):
        wb = openpyxl.load_workbook(exported)
        if name is not None:
            sheet, coord = next(wb.defined_names[book.names[name]].destinations)
            wb[sheet.strip("'")][coord.replace("$", "")].value = value
        paths[stem] = work / f"{stem}.xlsx"
        wb.save(paths[stem])
        assert poison(paths[stem]) > 20
    out = recalculate(list(paths.values()), work)
    return {stem: openpyxl.load_workbook(out[p], data_only=True) for stem, p in paths.items()}


@pytest.mark.parametrize("sheet", ["Solve", "Summary"])
def test_an_edit_makes_an_answer_over_a_series_say_re_run(series_books, sheet):
    def row(stem):
        (found,) = [r for r in series_books[stem][sheet].iter_rows()
                    if str(r[0].value or "").lower().startswith(("solve saving", "enough"))]
        return found

    # (20,000 - 10,000 * 1.01^12) * 1% / (1.01^12 - 1): the saving that reaches 20,000 USD
    assert row("as_exported")[2].value == pytest.approx(688.4878867, rel=1e-9)
    assert row("as_exported")[4].value == 1 and row("as_exported")[5].value == "holds"
    assert row("rate")[4].value == 0 and row("rate")[5].value == STALE  # the answer is out of date, said so
    assert row("saving")[5].value == "holds"  # the solved input is not what the answer depends on


def test_an_answer_over_a_series_with_more_inputs_than_excels_and_takes():
    """Excel's AND takes at most 255 arguments: past them the Holds of such an answer stays TRUE (no test of
    the inputs) rather than a formula Excel refuses to open."""
    def holds(n: int) -> str:
        text = ("periods = 1 month..3 month\n" + "".join(f"a{i} = {i}\n" for i in range(n)) + "x = 1 where x >= 0\n"
                f"series s = x + {' + '.join(f'a{i}' for i in range(n))}\nend = last(s)\n"
                f"solve x where end = {n * (n - 1) // 2 + 1} as need\n")  # 0 + 1 + ... + (n - 1), and x = 1
        book = Book(loads(text, "many.plan"))
        book.build()
        ws = book.sheet("Solve")
        assert ws.at(4, 3).value == pytest.approx(1, rel=1e-9)
        return ws.at(4, 5).value

    assert holds(300) == "=TRUE()"
    few = holds(100)
    assert few.startswith("=AND(a0_=0,a1_=1,") and few.count("=") == 101  # a0 ... a99 (named a0_: A0 is a cell); not x


def test_a_long_solve_note_is_cut_after_a_whole_clause_or_word():
    from planner.outputs.excel.solving import NOTE_LENGTH, one_line

    note = ("no closed form: the condition goes through a sum or a min/max/first over a range, or a series over "
            "periods; the answer is the numeric route's")
    assert one_line(note) == ("no closed form: the condition goes through a sum or a min/max/first over a range, "
                              "or a series over periods…")  # was "...over periods; t…"
    words = "alpha " * 30
    assert one_line(words) == ("alpha " * 18).rstrip() + "…" and len(one_line(words)) <= NOTE_LENGTH
    assert one_line("short;  note\n here") == "short; note here"
