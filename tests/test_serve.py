"""`planner serve`: the page's JSON API through Starlette's test client, and the real server on a socket
(paths outside the plan's folder, Host headers, the write-back, the reload). The page itself, in
Chromium: tests/test_serve_browser.py."""

from __future__ import annotations

import http.client
import json
import os
import sys
import time

import pytest

pytest.importorskip("starlette", reason="planner serve needs the `serve` extra: pip install '.[serve]'")
pytest.importorskip("uvicorn", reason="planner serve needs the `serve` extra: pip install '.[serve]'")

from starlette.testclient import TestClient  # noqa: E402

from serve_server import Running  # noqa: E402

from planner.outputs.serve.app import create_app  # noqa: E402
from planner.outputs.serve.live import Session  # noqa: E402

# Hostile text in the title and a doc string (docs/hostile.md): the API returns it as data.
RENT = """\
title "Rent <img src=x onerror=alert(1)> & \\"pay\\" <script>alert(2)</script>"
unit USD

price    = 2.50 USD/h "hourly price <b>per</b> GPU" where price > 0 USD/h
hours    = 10 h       "hours rented"                where hours >= 1 h, hours <= 1000 h
gpus     = 4          "GPUs"                        where integer, gpus >= 1
discount = 10% ~ uniform(5%, 15%) "discount"        where 0 <= discount < 1
budget   = 200 USD    "the budget"
spot     = false      "spot pricing"

cost = price * hours * gpus * (1 - discount) -> USD "total cost" [headline]
left = budget - cost -> USD                         "what is left" [headline]

scenario long "a long run" { hours = 100 h }

sweep hours in [10 h, 20 h, 40 h] show cost
solve hours where cost = budget as break_even_hours
check cost == 90 USD
check left > 0 USD
"""


@pytest.fixture
def rent(tmp_path):
    path = tmp_path / "rent.plan"
    path.write_text(RENT, encoding="utf-8")
    return path


@pytest.fixture
def client(rent):
    return TestClient(create_app(Session(str(rent))), base_url="http://127.0.0.1")


def post(client, path, edits=None, scenario=None):
    r = client.post(path, json={"scenario": scenario, "edits": edits or {}})
    assert r.status_code == 200
    return r.json()


def by_name(rows, key="name"):
    return {r[key]: r for r in rows}


def test_plan_lists_inputs_with_units_bounds_slider_ranges_and_docs(client):
    data = client.get("/api/plan").json()
    assert data["title"] == 'Rent <img src=x onerror=alert(1)> & "pay" <script>alert(2)</script>'
    assert data["scenarios"] == ["long"]
    inputs = by_name(data["inputs"])
    assert list(inputs) == ["price", "hours", "gpus", "discount", "budget", "spot"]
    price = inputs["price"]
    assert (price["unit"], price["value"], price["doc"]) == ("USD/h", 2.5, "hourly price <b>per</b> GPU")
    assert price["lower"] == {"value": 0.0, "inclusive": False} and price["upper"] is None
    assert (price["min"], price["max"]) == (0.25, 25.0)  # unbounded: 0.1x..10x the value
    hours = inputs["hours"]
    assert (hours["min"], hours["max"]) == (1.0, 100.0)  # the bound `hours >= 1 h` above 0.1x
    assert inputs["gpus"]["integer"] and inputs["gpus"]["step"] == 1
    assert (inputs["discount"]["unit"], inputs["discount"]["value"]) == ("%", 10.0)
    assert (inputs["discount"]["min"], inputs["discount"]["max"]) == (1.0, 100.0)  # `discount < 1`: 100%
    assert inputs["spot"]["kind"] == "bool" and inputs["spot"]["value"] is False


def test_moving_an_input_recomputes_figures_answers_and_checks(client):
    first = post(client, "/api/compute")
    assert by_name(first["headlines"])["cost"]["number"] == pytest.approx(90.0)  # 2.50 x 10 x 4 x 0.9
    assert first["checks"]["failed"] == 0 and first["checks"]["passed"] == 2
    (answer,) = first["answers"]
    assert answer["number"] == pytest.approx(200 / 9)  # 200 USD / (2.50 USD/h x 4 x 0.9)
    moved = post(client, "/api/compute", {"price": 3})
    figures = by_name(moved["headlines"])
    assert figures["cost"]["number"] == pytest.approx(108.0)
    assert figures["cost"]["text"] == "108.00 USD"
    assert figures["left"]["number"] == pytest.approx(92.0)
    assert moved["answers"][0]["number"] == pytest.approx(200 / 10.8)
    assert moved["checks"]["failed"] == 1  # cost == 90 USD no longer holds
    (failed,) = [r for r in moved["checks"]["rows"] if not r["passed"]]
    assert failed["text"] == "check cost == 90 USD" and "108" in failed["why"]
    assert moved["inputs"]["price"] == 3.0


def test_a_scenario_sets_its_inputs_and_edits_apply_in_it(client):
    long = post(client, "/api/compute", scenario="long")
    assert long["inputs"]["hours"] == 100.0
    assert by_name(long["headlines"])["cost"]["number"] == pytest.approx(900.0)
    edited = post(client, "/api/compute", {"gpus": 1}, scenario="long")
    assert by_name(edited["headlines"])["cost"]["number"] == pytest.approx(225.0)


def test_a_value_outside_a_constraint_is_an_error_naming_it(client):
    data = post(client, "/api/compute", {"hours": 0.5})
    assert "hours >= 1 h" in data["error"]
    assert "headlines" not in data


@pytest.mark.parametrize("edits, words", [
    ({"cost": 1}, "`cost` is not an input"),
    ({"nothing": 1}, "`nothing` is not an input"),
    ({"spot": 1}, "true or false"),
    ({"price": "1+1"}, "takes a number"),
    ({"price": True}, "takes a number"),
])
def test_bad_edits_are_errors_not_tracebacks(client, edits, words):
    assert words in post(client, "/api/compute", edits)["error"]


def test_an_unknown_scenario_is_an_error(client):
    assert "no scenario `nope`" in post(client, "/api/compute", scenario="nope")["error"]


def test_charts_are_the_sweeps_pngs(client):
    data = post(client, "/api/charts", {"price": 3})
    (chart,) = data["charts"]
    assert chart["title"] == "sweep hours in [10 h, 20 h, 40 h] show cost"
    assert chart["png"].startswith("data:image/png;base64,iVBORw0KGgo")


def test_monte_carlo_histograms_on_request(client):
    data = post(client, "/api/simulate")
    assert data["error"] is None and data["samples"] == 2000
    assert [f["name"] for f in data["figures"]] == ["cost", "left"]
    assert all(f["png"].startswith("data:image/png;base64,") for f in data["figures"])


def test_posts_must_be_json(client, rent):
    before = rent.read_bytes()
    r = client.post("/api/write", data={"edits": "x"})
    assert r.status_code == 400
    assert rent.read_bytes() == before


def test_write_back_changes_only_the_edited_literal(client, rent):
    before = rent.read_text(encoding="utf-8")
    data = post(client, "/api/write", {"price": 3, "gpus": 4})  # gpus as written: not an edit
    assert data["error"] is None and data["written"] == 1
    after = rent.read_text(encoding="utf-8")
    assert after == before.replace("price    = 2.50 USD/h", "price    = 3.00 USD/h")
    assert "+price    = 3.00 USD/h" in data["diff"]
    assert client.get("/api/plan").json()["version"] == data["version"] == 2  # loaded again


def test_write_back_into_the_scenario_that_sets_the_input(client, rent):
    before = rent.read_text(encoding="utf-8")
    data = post(client, "/api/write", {"hours": 120}, scenario="long")
    assert data["error"] is None and data["written"] == 1
    assert rent.read_text(encoding="utf-8") == before.replace("{ hours = 100 h }", "{ hours = 120 h }")


def test_write_back_refuses_a_value_outside_a_constraint(client, rent):
    before = rent.read_bytes()
    data = post(client, "/api/write", {"hours": 5000})
    assert "hours <= 1000 h" in data["error"] and data["written"] == 0
    assert rent.read_bytes() == before


def test_the_plan_is_loaded_again_when_its_file_changes(client, rent):
    assert client.get("/api/version").json()["version"] == 1
    text = rent.read_text(encoding="utf-8").replace("2.50 USD/h", "5.00 USD/h")
    rent.write_text(text, encoding="utf-8")
    os.utime(rent, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))  # a new mtime, however coarse
    assert client.get("/api/version").json()["version"] == 2
    assert by_name(client.get("/api/plan").json()["inputs"])["price"]["value"] == 5.0
    assert by_name(post(client, "/api/compute")["headlines"])["cost"]["number"] == pytest.approx(180.0)


def test_a_broken_plan_keeps_the_last_good_one_and_says_why(client, rent):
    rent.write_text(RENT + "oops = \n", encoding="utf-8")
    os.utime(rent, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    data = post(client, "/api/compute")
    assert "rent.plan:" in data["plan_error"]
    assert by_name(data["headlines"])["cost"]["number"] == pytest.approx(90.0)


# ---- the real server -------------------------------------------------------------------------------

@pytest.fixture
def server(rent):
    running = Running(Session(str(rent)))
    yield running
    running.stop()


def raw(server, path, host=None, method="GET", body=None, headers=None):
    """A request with ``path`` sent as written (no client normalises its dots or its escapes)."""
    host_port = server.url.split("//")[1].rstrip("/")
    conn = http.client.HTTPConnection(*host_port.rsplit(":", 1), timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or host_port)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def test_the_server_listens_on_loopback(server):
    assert server.url.startswith("http://127.0.0.1:")
    status, page = raw(server, "/")
    assert status == 200 and b"<script src=\"/page.js\"></script>" in page
    assert raw(server, "/page.js")[0] == 200


@pytest.mark.parametrize("path", [
    "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd", "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "/..%252f..%252fetc%252fpasswd", "//etc/passwd", "/rent.plan", "/./rent.plan", "/page.js/../rent.plan",
    "/api/../rent.plan", "/static/../../rent.plan", "/..\\..\\etc\\passwd",
])
def test_no_file_outside_the_page_is_served(server, path):
    status, body = raw(server, path)
    assert status == 404
    assert b"root:" not in body and b"price" not in body


def test_a_foreign_host_header_is_refused(server):
    status, _ = raw(server, "/api/plan", host="attacker.example")
    assert status == 400


def test_compute_on_the_real_server(server):
    body = json.dumps({"scenario": None, "edits": {"price": 3}}).encode()
    status, data = raw(server, "/api/compute", method="POST", body=body, headers={"Content-Type": "application/json"})
    assert status == 200
    assert {h["name"]: h["number"] for h in json.loads(data)["headlines"]}["cost"] == pytest.approx(108.0)


# ---- the command ----------------------------------------------------------------------------------------

def test_without_the_extra_the_command_says_what_to_install(rent, monkeypatch, capsys):
    from planner.cli import main

    monkeypatch.delitem(sys.modules, "planner.outputs.serve.app", raising=False)
    monkeypatch.setitem(sys.modules, "starlette", None)  # import starlette: ImportError
    monkeypatch.setitem(sys.modules, "starlette.applications", None)
    assert main(["serve", str(rent)]) == 2
    err = capsys.readouterr().err
    assert "pip install starlette uvicorn" in err
    assert "Traceback" not in err


def test_a_bad_plan_is_a_located_error(tmp_path, capsys):
    from planner.cli import main

    bad = tmp_path / "bad.plan"
    bad.write_text("x = 1 +\n", encoding="utf-8")
    assert main(["serve", str(bad)]) == 2
    assert "bad.plan:1:" in capsys.readouterr().err


@pytest.mark.parametrize("args, host, warned", [([], "127.0.0.1", False), (["--host", "0.0.0.0"], "0.0.0.0", True)])
def test_the_command_listens_on_loopback_unless_told(rent, monkeypatch, capsys, args, host, warned):
    from planner.cli import main
    from planner.outputs.serve import app

    calls = []
    monkeypatch.setattr(app, "serve", lambda session, h, port, ready=None: calls.append((session.path, h, port)))
    assert main(["serve", str(rent), *args]) == 0
    assert calls == [(rent, host, 8765)]
    assert ("warning: --host 0.0.0.0" in capsys.readouterr().err) == warned


@pytest.mark.parametrize("edits, some_fail", [({"batch": 64}, False), ({"hidden": 5120, "alpha": 0.5}, True),
                                              ({"bits": 3}, True), ({"tied": True}, True)])
def test_checks_run_again_only_where_an_edit_reaches_them_give_every_checks_result(edits, some_fail):
    """The page runs again only the checks an edited input reaches; the rest keep the plan's results.
    Together they are what running every check with the edits gives."""
    from conftest import SHEETS

    from planner.questions.checks import run_checks

    session = Session(str(SHEETS / "llm_cost.plan"))
    session.compute(None, {})
    shown = session.compute("llama3_8b/h100", edits)["checks"]
    assert 0 < shown["ran"] < len(session.plan.model.checks)
    every = run_checks(session.plan, None, session.overrides(edits))
    assert [(r["text"], r["scenario"], r["passed"]) for r in shown["rows"]] == \
        [(r.text, r.scenario, bool(r.passed)) for r in every]
    assert shown["failed"] == sum(not r.passed for r in every)
    assert (shown["failed"] > 0) == some_fail


def test_a_port_in_use_is_a_clear_error(rent, capsys):
    from planner.cli import main
    from planner.outputs.serve.app import listen

    taken = listen("127.0.0.1", 0)
    try:
        port = taken.getsockname()[1]
        assert main(["serve", str(rent), "--port", str(port)]) == 2
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "--port" in err and "Traceback" not in err


@pytest.mark.parametrize("host, allowed", [("127.0.0.1", ["127.0.0.1", "localhost", "::1"]),
                                           ("192.0.2.7", ["127.0.0.1", "localhost", "::1", "192.0.2.7"]),
                                           ("0.0.0.0", ["*"])])
def test_the_host_names_a_request_may_give(host, allowed):
    from planner.outputs.serve.app import hosts_for

    assert hosts_for(host) == allowed
