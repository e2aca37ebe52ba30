"""Big sweeps stream: block by block in every format, --limit, -o all or nothing, progress on terminals."""

import csv
import io
import json

import pytest
from conftest import TOKEN_COST

import planner
from planner.outputs import progress as progress_mod
from planner.outputs import stream, terminal
from planner.questions import sweep
from planner.questions.ranges import parse_assignment

# a grid with points that break a constraint, divide by zero and leave sqrt's domain
ISSUES = """
a = 1 where a >= 0.5
b = 2
r = b / (a - 3)
q = sqrt(a - 5) + b
flag = a > 4
"""


def _runs(plan):
    axes = [parse_assignment(plan, "a=0..10 count 23"), parse_assignment(plan, "b=1..3")]
    return [sweep.prepare(plan, axes, ["r", "q", "flag"], None), sweep.prepare(plan, axes[:1], ["r"], None)]


def _sweep_json(results):
    """The planner.sweep/1 document built whole from in-memory results: the text a stream must write."""
    sweeps = []
    for r in results:
        cols = {n: r.display(n) for n in r.names}
        sweeps.append({
            "sweep": terminal.sweep_title(r).rsplit("  [", 1)[0],
            "line": r.statement.span.line if r.statement is not None else None,
            "scenario": r.label,
            "axes": [{"name": a.name, "unit": a.unit, "count": a.count} for a in r.axes],
            "show": [{"name": n, "unit": r.plan.model.quantities[n].unit_text} for n in r.show],
            "points": [dict(zip(r.names, row)) for row in zip(*(r.with_never(
                n, [terminal.json_number(terminal._sweep_py(v)) for v in cols[n]], terminal.NEVER) for n in r.names))],
            "issues": [{"index": s.index, "point": s.point, "quantity": s.quantity, "kind": s.kind,
                        "reason": s.reason} for s in r.issues],
            "issue_count": r.issue_count,
            "points_with_issues": int(r.bad.sum()),
        })
    return terminal.dumps({"format": terminal.SWEEP_FORMAT, "file": results[0].plan.path if results else None,
                           "sweeps": sweeps}) + "\n"


def _sweep_csv(results):
    """The CSV of in-memory results: one header per block of same-shaped sweeps (scenarios stack)."""
    buf = io.StringIO()
    w = terminal._csv_writer(buf)
    header = None
    for r in results:
        cols = {n: r.display(n) for n in r.names}
        notes = r.notes()
        if r.names != header:
            if header is not None:
                w.writerow([])
            w.writerow(["sweep", "scenario"] + [terminal.column_header(r.plan, n) for n in r.names] + ["issue"])
            header = r.names
        label = terminal.sweep_title(r).rsplit("  [", 1)[0]
        for i in range(r.size):
            w.writerow([label, r.label] + [terminal._csv_value(terminal._sweep_py(cols[n][i])) for n in r.names]
                       + ["; ".join(notes.get(i, []))])
    return buf.getvalue()


@pytest.fixture
def issues_plan():
    return planner.loads(ISSUES, "issues.plan")


@pytest.mark.parametrize("fmt", ["csv", "json", "table", "markdown"])
def test_streamed_output_is_the_in_memory_output(issues_plan, fmt, monkeypatch):
    results = [r.block(0, r.size) for r in _runs(issues_plan)]
    expected = {"csv": _sweep_csv(results),
                "json": _sweep_json(results),
                "table": "\n\n".join(terminal.sweep_table(r) for r in results) + "\n",
                "markdown": "\n\n".join(terminal.sweep_markdown(r) for r in results) + "\n"}[fmt]
    monkeypatch.setattr(stream, "BLOCK", 7)  # blocks much smaller than the sweep
    monkeypatch.setattr(stream, "TABLE_IN_MEMORY", 0)  # the two-pass table, not tabulate
    out = io.StringIO()
    stream.write(_runs(issues_plan), fmt, out)
    assert out.getvalue() == expected


def test_points_are_computed_a_block_at_a_time(issues_plan, monkeypatch):
    sizes = []
    real = sweep.SweepRun.block

    def block(self, start, stop):
        sizes.append(stop - start)
        return real(self, start, stop)

    monkeypatch.setattr(sweep.SweepRun, "block", block)
    monkeypatch.setattr(stream, "BLOCK", 10)
    stream.write(_runs(issues_plan), "csv", io.StringIO())
    assert max(sizes) == 10 and sum(sizes) == 69 + 23


def test_json_lines(issues_plan):
    out = io.StringIO()
    stream.write(_runs(issues_plan), "jsonl", out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(rows) == 69 + 23
    first = rows[0]
    assert first["sweep"] == "sweep a in 0..10 count 23, b in 1..3" and first["scenario"] == "base"
    assert first["a"] == 0.0 and first["b"] == 1.0 and first["r"] == pytest.approx(1 / (0 - 3))
    assert first["q"] is None  # sqrt(-5): not a number
    assert first["flag"] is False
    assert any("a >= 0.5" in text for text in first["issues"])  # a = 0 breaks the constraint
    clean = next(r for r in rows if r["a"] == pytest.approx(60 / 11))  # a = 5.45...: every value finite
    assert "issues" not in clean and clean["q"] == pytest.approx((60 / 11 - 5) ** 0.5 + clean["b"])


def test_limit_prints_the_first_points_and_says_so(cli, plan_file):
    path = plan_file(ISSUES)
    code, out, err = cli("sweep", path, "a=0..10 count 23", "b=1..3", "-f", "csv", "--limit", "5")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert len(rows) == 1 + 5 and rows[1][2:4] == ["0.0", "1.0"] and rows[5][2:4] == ["0.45454545454545453", "2.0"]
    assert "5 of 69 points" in err and "--limit 5" in err
    code, out, _ = cli("sweep", path, "a=0..10 count 23", "-f", "json", "--limit", "3")
    data = json.loads(out)["sweeps"][0]
    assert len(data["points"]) == 3 and data["limit"] == 3 and data["points_total"] == 23
    code, out, _ = cli("sweep", path, "a=0..10 count 23", "--limit", "2")
    assert "first 2 of 23 points (--limit 2)" in out
    with pytest.raises(SystemExit) as exc:
        cli("sweep", path, "a=0..10 count 23", "--limit", "0")
    assert exc.value.code == 2


def test_output_file_all_or_nothing(cli, plan_file, tmp_path):
    path = plan_file(ISSUES)
    target = tmp_path / "points.csv"
    code, out, err = cli("sweep", path, "a=0..10 count 23", "-f", "csv", "-o", target)
    assert code == 0 and out == "" and f"wrote {target}" in err
    assert target.read_text().count("\n") == 24
    target.write_text("previous\n")
    code, _, err = cli("sweep", path, "a=0..10 count 23", "z=1..3", "-f", "csv", "-o", target)  # z: not an input
    assert code == 2 and target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".points")] == []  # no staged file left
    code, _, err = cli("sweep", path, "a=0..10 count 23", "-o", path)
    assert code == 2 and "an input of this run" in err and path.read_text() == ISSUES


def test_quiet_leaves_out_notes(cli, plan_file, tmp_path):
    path = plan_file(ISSUES)
    code, _, err = cli("--quiet", "sweep", path, "a=0..10 count 23", "-o", tmp_path / "x.txt")
    assert code == 0 and err == ""


def test_a_fixed_input_breaking_its_constraint_fails_before_any_output(cli, plan_file):
    path = plan_file(ISSUES)
    code, out, err = cli("sweep", path, "b=1..3", "--set", "a=0.1", "-f", "csv")
    assert code == 2 and out == "" and "a >= 0.5" in err


def test_token_cost_sweep_csv_unchanged(cli):
    code, out, _ = cli("sweep", TOKEN_COST, "alpha=0..0.9 count 10", "-f", "csv")
    plan = planner.load(TOKEN_COST)
    result = sweep.run(plan, [parse_assignment(plan, "alpha=0..0.9 count 10")])
    assert out == _sweep_csv([result])


# ---- the progress bar --------------------------------------------------------------------

class _Terminal(io.StringIO):
    def isatty(self):
        return True


class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_progress_only_on_a_terminal_after_a_second(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    term = _Terminal()
    progress_mod.configure(stream=term)
    clock = _Clock()
    with progress_mod.Progress("sweep", 1000, "points", stream=term, clock=clock) as p:
        p.advance(100)
        assert term.getvalue() == ""  # nothing in the first second
        clock.t = 1.5
        p.advance(400)
        shown = term.getvalue()
        assert "sweep [" in shown and " 50% 500/1,000 points" in shown and shown.startswith("\r")
    assert term.getvalue().endswith("\r")  # erased when done
    assert term.getvalue().rsplit("\r", 2)[-2].strip() == ""


@pytest.mark.parametrize("setup", ["pipe", "no_color", "quiet"])
def test_no_progress_in_pipes_with_no_color_or_quiet(monkeypatch, setup):
    monkeypatch.delenv("NO_COLOR", raising=False)
    term = _Terminal() if setup != "pipe" else io.StringIO()
    if setup == "no_color":
        monkeypatch.setenv("NO_COLOR", "1")
    progress_mod.configure(quiet=setup == "quiet", stream=term)
    clock = _Clock()
    with progress_mod.Progress("sweep", 10, stream=term, clock=clock) as p:
        clock.t = 5
        p.advance(5)
    assert term.getvalue() == ""


def test_the_library_never_draws(monkeypatch):
    monkeypatch.setattr(progress_mod, "_enabled", None)  # no command line configured it
    term = _Terminal()
    clock = _Clock()
    with progress_mod.Progress("x", 10, stream=term, clock=clock) as p:
        clock.t = 5
        p.advance(5)
    assert term.getvalue() == ""


def _second_process(monkeypatch):
    """Sweeps of any size formatted on two cores (stream._Texts); the workers started, as a list."""
    from planner.outputs import reprs

    monkeypatch.setattr(stream, "PARALLEL_AFTER", 0)
    monkeypatch.setattr(stream, "_cores", lambda: 2)
    started = []
    real = reprs.Worker.__init__

    def init(self):
        real(self)
        started.append(self)

    monkeypatch.setattr(reprs.Worker, "__init__", init)
    return started


@pytest.mark.trick("worker")
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_a_second_process_formats_the_same_text(issues_plan, fmt, monkeypatch):
    """A big sweep on a machine with two cores: a second process formats the first half of each
    block's floats. The same text (true/false, infinities and nan, JSON's null), and the worker
    stops with the output."""
    monkeypatch.setattr(stream, "BLOCK", 7)  # odd blocks: halves of 3 and 4 points, and a last of 6
    alone = io.StringIO()
    stream.write(_runs(issues_plan), fmt, alone)
    started = _second_process(monkeypatch)
    both = io.StringIO()
    stream.write(_runs(issues_plan), fmt, both)
    assert both.getvalue() == alone.getvalue()
    assert len(started) == 1 and started[0].proc is None  # one worker, stopped at the end
    text = alone.getvalue()
    assert ("nan" in text or "null" in text) and "false" in text  # (what was compared has them)


def test_the_worker_gives_pythons_own_repr():
    """Every kind of float the worker is given comes back as this Python's repr writes it."""
    import random
    import struct

    from planner.outputs.reprs import Worker

    rng = random.Random(3)
    values = [0.0, -0.0, 1.0, -2.5, 0.1, 1e-4, 9.999999999999999e-05, 1e-05, 1e15, 1e16, 123456789012345678.0,
              5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, float("inf"), float("-inf"), float("nan")]
    values += [rng.random() * 10.0 ** rng.randint(-300, 300) * rng.choice((1, -1)) for _ in range(20000)]
    values += [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(20000)]
    worker = Worker()
    try:
        worker.send([struct.pack(f"<{len(values)}d", *values), b""])
        got, empty = worker.receive()
    finally:
        worker.close()
    assert got.split("\n") == [repr(v) for v in values] and empty == ""


@pytest.mark.parametrize("failure", ["start", "send", "receive"])
def test_without_a_worker_the_sweep_is_written_all_the_same(issues_plan, monkeypatch, failure):
    """A second process that cannot start or fails midway: this process formats the rest."""
    from planner.outputs import reprs

    monkeypatch.setattr(stream, "BLOCK", 7)
    alone = io.StringIO()
    stream.write(_runs(issues_plan), "csv", alone)
    started = _second_process(monkeypatch)

    def fail(*args):
        raise OSError("no worker here")

    if failure == "start":
        monkeypatch.setattr(reprs.Worker, "__init__", fail)
    else:
        real = getattr(reprs.Worker, failure)
        calls = []

        def later(self, *args):  # the second block's exchange fails
            calls.append(1)
            if len(calls) == 2:
                self.proc.kill()
                self.proc.wait()
                if failure == "receive":
                    raise OSError("the worker stopped")
            return real(self, *args)

        monkeypatch.setattr(reprs.Worker, failure, later)
    both = io.StringIO()
    stream.write(_runs(issues_plan), "csv", both)
    assert both.getvalue() == alone.getvalue()
    assert all(w.proc is None for w in started)
