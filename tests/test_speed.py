"""The speed tricks (planner/language/speed.py) are each switched off by PLANNER_NO_TRICKS, and the
plain routes give the same figures. The suite runs once with every trick off (``.ci/run``:
``pytest --no-tricks``)."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, TOKEN_COST

from planner.language import speed

PROBE = r"""
import json, sys, threading
from planner.language import ir, lazy, limits, speed
import planner

real = ir.Number not in lazy._PENDING  # a data class made at import, not on first use
thread = limits.deep(lambda: threading.current_thread().name)
values = planner.load(sys.argv[1]).eval(scenario="int4_g128")
print(json.dumps({"off": sorted(speed.OFF), "real_dataclass": real, "deep_thread": thread,
                  "step": float(values["batch_step_bound"])}))
"""


def _probe(env_value):
    env = dict(os.environ)
    env.pop("PLANNER_NO_TRICKS", None)
    if env_value is not None:
        env["PLANNER_NO_TRICKS"] = env_value
    run = subprocess.run([sys.executable, "-c", PROBE, str(TOKEN_COST)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_every_trick_off_gives_the_same_figures_by_the_plain_routes():
    on, off = _probe("0"), _probe("1")
    assert on["off"] == [] and off["off"] == sorted(speed.TRICKS)
    assert on["real_dataclass"] is False and off["real_dataclass"] is True  # lazy: made at import
    assert on["deep_thread"] == "planner-deep" and off["deep_thread"] == "MainThread"
    # 降低每個 Token 的生成成本: 19.262 ms per int4 step at batch 32, by either route
    assert on["step"] == off["step"] == pytest.approx(19.262, abs=5e-4)


def test_one_trick_off_by_name():
    got = _probe("deep,worker")
    assert got["off"] == ["deep", "worker"] and got["deep_thread"] == "MainThread"
    assert got["real_dataclass"] is False


@pytest.mark.parametrize("value, off", [("", set()), ("0", set()), ("1", set(speed.TRICKS)),
                                        ("all", set(speed.TRICKS)), ("gc, one-pass", {"gc", "one-pass"})])
def test_the_switch_reads_off_or_a_list_of_names(value, off):
    assert speed._off(value) == off


def test_an_unknown_trick_is_an_error_naming_the_tricks():
    with pytest.raises(ValueError, match="no trick named lazzy .*the tricks: lazy, one-pass, gc, worker, deep, formulas"):
        speed._off("lazzy")
    with pytest.raises(KeyError):
        speed.on("fast")


@pytest.mark.parametrize("trick", speed.TRICKS)
def test_every_trick_listed_is_switched_where_it_lives(trick):
    # a trick in the list that no code asks about would be "off" in name only
    sources = [p.read_text(encoding="utf-8") for p in (ROOT / "planner").rglob("*.py") if p.name != "speed.py"]
    assert any(f'on("{trick}")' in text for text in sources)
