"""The compatibility promise, tested on plans from earlier commits of this repository.

tests/compat/<commit>/ holds every plan that commit shipped (sheets/, tests/plans/, examples/ and
the README's plan blocks that it loaded) beside the figures that commit's own planner gave
(FILE.json, recorded by tests/compat/record.py). Today's planner must load each one, with its
imports resolved against today's library, and give every recorded figure (value in the display
unit and in the base unit, to 1e-9 relative), the same units and the same check verdicts.

A figure may differ only where CHANGELOG.md records the change that moved it: EXPECTED names the
plan, the figures, the CHANGELOG text that explains them, and the warning today's run must give
(a plan that uses a deprecated name is told so). Any other difference is a regression.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
CORPUS = TESTS / "compat"
CHANGELOG = (TESTS.parent / "CHANGELOG.md").read_text()
PLANS = sorted(p for p in CORPUS.glob("*/**/*.plan"))
RELATIVE = 1e-9

# hbm_capacity: 0.1.0 (915106c..4daaa87) made it the driver's figure; it is the vendor's figure again
# and deprecated. Plans recorded in that window that read it move back to the vendor figure (as they
# were before 915106c) and are warned.
HBM_RESTORED = "**`hbm_capacity` is the vendor's figure again** (80 GB for the A100 80GB), as it was before"

# (plan id under tests/compat, figures that may differ, CHANGELOG text that explains them, warning today's run gives)
# A figure is `quantity` (every scenario), `scenario:quantity`, or `check:LINE` (that check's verdict and figures).
HBM = ("h100.hbm_capacity", "hbm_capacity", "mi300x.hbm_capacity")
LLM_HBM = ("h100.hbm_capacity", "rtx4090.hbm_capacity", "check:496", "check:summary")
DEPRECATED = "warning[deprecated]: `{}` is deprecated"
OWN_W = "A plan that declares `unit W` itself gets the built-in W"
FP64_CHOICE = "`h100_sxm.peak_fp64_dense` is 66.9 TFLOP/s, the whitepaper's figure"
WRITTEN_UNIT = "A time or a count defined without `-> unit` keeps the unit its formula is written in"
EXPECTED: list[tuple[str, tuple[str, ...], str, tuple[str, ...]]] = [
    # 0.1.0's driver figures (81559 MiB for the H100, 85.5 GB in gpu_compare) are the vendor's again (80 GB)
    ("f504625/sheets/gpu_compare.plan", HBM, HBM_RESTORED,
     (DEPRECATED.format("h100.hbm_capacity"), DEPRECATED.format("mi300x.hbm_capacity"))),
    ("4daaa87/sheets/gpu_compare.plan", HBM, HBM_RESTORED,
     (DEPRECATED.format("h100.hbm_capacity"), DEPRECATED.format("mi300x.hbm_capacity"))),
    # the check written for the driver's figure, (81559 MiB - weights) / kv ~= 146600 token, fails with the vendor's
    ("f504625/sheets/llm_cost.plan", LLM_HBM, HBM_RESTORED,
     (DEPRECATED.format("h100.hbm_capacity"), DEPRECATED.format("rtx4090.hbm_capacity"))),
    ("4daaa87/sheets/llm_cost.plan", LLM_HBM, HBM_RESTORED,
     (DEPRECATED.format("h100.hbm_capacity"), DEPRECATED.format("rtx4090.hbm_capacity"))),
    ("f504625/README/block-12.plan", ("h100.hbm_capacity",), HBM_RESTORED, (DEPRECATED.format("h100.hbm_capacity"),)),
    ("4daaa87/README/block-12.plan", ("h100.hbm_capacity",), HBM_RESTORED, (DEPRECATED.format("h100.hbm_capacity"),)),
    # before 0.1.0 the H100's FP64 peak was the datasheet's rounded 67 TFLOP/s
    ("c466bee/sheets/gpu_compare.plan", ("h100.peak_fp64_dense",), FP64_CHOICE, ()),
    ("c466bee/README/block-08.plan", ("h100.peak_fp64_dense",), FP64_CHOICE, ()),
    # the same figures; the base unit of the built-in W is J/s where the plan's own W was a dimension of its own
    ("1762bfd/extra/rack_power_bill.plan", ("energy", "gpu_power", "price", "rack_power"), OWN_W,
     ("warning[compat]: `W` is a built-in unit now",)),
    # a time or a count without `-> unit` in the unit its formula is written in: `step = batch_bound` in ms,
    # `crossover_batch * expected_tokens` in tokens (the same figures, shown so)
    ("f504625/README/block-08.plan", ("step",), WRITTEN_UNIT, ()),
    ("4daaa87/README/block-08.plan", ("step",), WRITTEN_UNIT, ()),
    ("f504625/README/block-09.plan", ("tokens_per_verify", "check:24"), WRITTEN_UNIT, ()),
    ("4daaa87/README/block-09.plan", ("tokens_per_verify", "check:24"), WRITTEN_UNIT, ()),
]

# Differences no CHANGELOG line explains: regressions, reported. Each plan's test checks that what goes
# wrong is exactly this (every problem line contains the text) and then reports it as an expected failure;
# once mended, the test fails until the entry is removed.
UNEXPLAINED = {
}


def plan_id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def close(old, new) -> bool:
    if isinstance(old, bool) or isinstance(new, bool) or not isinstance(old, (int, float)) \
            or not isinstance(new, (int, float)):
        return old == new
    if math.isnan(old) or math.isnan(new):
        return math.isnan(old) and math.isnan(new)
    if old == new:
        return True
    return abs(new - old) <= RELATIVE * max(abs(old), abs(new))


def differences(recorded: dict, ev: dict, ck: dict, base: dict | None = None) -> dict[str, str]:
    """Figure -> what differs, between the recorded output and today's (``base``: today's eval
    without ``--scenario``, compared where the record has one: a plan with scenarios)."""
    found: dict[str, str] = {}
    if recorded.get("base_eval") and base is not None:
        for kind in ("values", "base_values"):
            for scenario, values in recorded["base_eval"][kind].items():
                now = base[kind].get(scenario, {})
                for name, old in values.items():
                    if name not in now:
                        found.setdefault(f"{scenario}:{name}", "missing today (without a scenario)")
                    elif not close(old, now[name]):
                        found.setdefault(f"{scenario}:{name}", f"{kind} {old!r} -> {now[name]!r} (without a scenario)")
    old_ev = recorded["eval"]
    # `--scenario all` shows the plan as written first, then each scenario (CHANGELOG, Changed): the
    # recorded scenarios must follow it unchanged, and the base's figures are compared with `base` above
    shown = ev["scenarios"][1:] if ev["scenarios"][:1] == ["base"] and old_ev["scenarios"][:1] != ["base"] \
        else ev["scenarios"]
    if shown != old_ev["scenarios"]:
        found["scenarios"] = f"{old_ev['scenarios']} -> {ev['scenarios']}"
    units = {name: [q.get("unit", ""), q.get("base_unit", "")] for name, q in ev["quantities"].items()}
    for name, old in old_ev["units"].items():
        if units.get(name) != old:
            found[f"{name}"] = f"unit {old} -> {units.get(name)}"
    for kind in ("values", "base_values"):
        for scenario, values in old_ev[kind].items():
            now = ev[kind].get(scenario, {})
            for name, old in values.items():
                if name not in now:
                    found.setdefault(f"{scenario}:{name}", "missing today")
                elif not close(old, now[name]):
                    found.setdefault(f"{scenario}:{name}", f"{kind} {old!r} -> {now[name]!r}")
    old_ck = recorded["check"]
    today = {}
    for c in ck["checks"]:
        today.setdefault((c["line"], c["check"], c["scenario"], json.dumps(c.get("with"), sort_keys=True)), c)
    for c in old_ck["checks"]:
        key = (c["line"], c["check"], c["scenario"], json.dumps(c.get("with"), sort_keys=True))
        now = today.get(key)
        where = f"check:{c['line']}"
        if now is None:
            found.setdefault(where, f"{c['check']!r} ({c['scenario']}) not run today")
            continue
        for field in ("passed", "actual", "expected", "unit"):
            if not close(c[field], now[field]):
                found.setdefault(where, f"{c['check']!r} ({c['scenario']}): {field} {c[field]!r} -> {now[field]!r}")
    if (old_ck["passed"], old_ck["failed"]) != (ck["passed"], ck["failed"]):
        found["check:summary"] = f"{old_ck['passed']} passed, {old_ck['failed']} failed -> " \
                                 f"{ck['passed']} passed, {ck['failed']} failed"
    return found


def explained(pid: str, figure: str) -> tuple[str, tuple[str, ...]] | None:
    name = figure.split(":", 1)[1] if ":" in figure and not figure.startswith("check:") else figure
    for plan, figures, reason, warning in EXPECTED:
        if plan == pid and (figure in figures or name in figures):
            return reason, warning
    return None


def today_figures(today, capsys, plan: Path) -> tuple[dict, dict, str]:
    """Today's differences from the record for one plan, and what its runs said on stderr."""
    recorded = json.loads(Path(str(plan) + ".json").read_text())
    code, out, err = today(capsys, "--no-cache", "eval", plan, "--all", "--scenario", "all", "-f", "json")
    assert code == 0, err
    ev = json.loads(out)
    base = None
    if recorded.get("base_eval"):
        code, out, base_err = today(capsys, "--no-cache", "eval", plan, "--all", "-f", "json")
        assert code == 0, base_err
        base = json.loads(out)
    code, out, check_err = today(capsys, "--no-cache", "check", plan, "-f", "json")
    assert code in (0, 1), check_err
    return recorded, differences(recorded, ev, json.loads(out), base), err + check_err


@pytest.fixture(scope="module")
def today():
    """Today's eval and check of every corpus plan, run once in-process."""
    from planner.cli import main

    def run(capsys, *args):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_the_corpus_is_there_and_small():
    commits = {p.relative_to(CORPUS).parts[0] for p in PLANS}
    assert len(commits) >= 4, commits
    assert any(p.read_text().count("unit W\n") and "unit kWh = kW*h" in p.read_text() for p in PLANS)
    size = sum(f.stat().st_size for f in CORPUS.rglob("*") if f.is_file())
    assert size < 2_000_000, size
    for plan in PLANS:
        assert Path(str(plan) + ".json").is_file(), plan


@pytest.mark.parametrize("plan", PLANS, ids=plan_id)
def test_an_old_plan_loads_and_gives_its_recorded_figures(plan, today, capsys):
    _, found, said = today_figures(today, capsys, plan)
    pid = plan_id(plan)
    unexplained, warnings = {}, set()
    for figure, what in found.items():
        why = explained(pid, figure)
        if why is None:
            unexplained[figure] = what
        else:
            warnings.update(why[1])
    problems = [f"{k}: {v}" for k, v in sorted(unexplained.items())]
    problems += [f"not said: {w}" for w in sorted(warnings) if w not in said]
    if pid in UNEXPLAINED:
        assert problems and all(UNEXPLAINED[pid] in p for p in problems), problems
        pytest.xfail(f"{pid}: unexplained, reported: {problems}")
    assert not problems, f"{pid}: figures moved with no CHANGELOG line to explain them, or unwarned:\n" + \
        "\n".join(f"  {p}" for p in problems) + f"\n{said}"


@pytest.mark.parametrize("row", EXPECTED, ids=lambda row: row[0])
def test_every_expected_difference_is_in_the_changelog_and_still_happens(row, today, capsys):
    pid, figures, reason, warning = row
    assert reason in CHANGELOG, f"CHANGELOG.md does not say {reason!r}"
    _, found, said = today_figures(today, capsys, CORPUS / pid)
    moved = {f.split(":", 1)[1] if ":" in f and not f.startswith("check:") else f for f in found} | set(found)
    stale = [f for f in figures if f not in moved]
    assert not stale, f"{pid}: listed as differing but now the same (drop them from EXPECTED): {stale}"
    assert all(w in said for w in warning) or pid in UNEXPLAINED, (pid, warning, said)


def test_every_unexplained_difference_names_a_corpus_plan():
    assert set(UNEXPLAINED) <= {plan_id(p) for p in PLANS}


def test_a_plan_from_before_0_1_0_gets_its_hbm_capacity_again(today, capsys):
    """gpu_compare as c466bee shipped it sets hbm_capacity from h100/mi300x.hbm_capacity in its
    scenarios: 80 GB and 192 GB then (the vendor's), 85.5 GB and 206.1 GB under 0.1.0, 80 and 192 now."""
    plan = CORPUS / "c466bee/sheets/gpu_compare.plan"
    recorded = json.loads(Path(str(plan) + ".json").read_text())["eval"]["values"]
    _, out, _ = today(capsys, "--no-cache", "eval", plan, "--scenario", "all", "-f", "json")
    values = json.loads(out)["values"]
    pairs = [(recorded[s]["hbm_capacity"], values[s]["hbm_capacity"]) for s in recorded]
    assert {old for old, _ in pairs} == {80.0, 192.0}
    assert all(old == new for old, new in pairs), pairs
