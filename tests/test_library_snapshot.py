"""Every figure of the shipped library, frozen: a library name never changes meaning silently.

``tests/snapshots/library.json`` holds each library quantity's value (base units), unit and tags.
A change fails this test unless it is intended and announced: rewrite the snapshot with
``PLANNER_UPDATE_SNAPSHOTS=1 pytest tests/test_library_snapshot.py``, which refuses while a changed
or removed name is not mentioned in CHANGELOG.md's Unreleased section.
"""

import json
import os

from conftest import ROOT

import planner

LIBRARY = ROOT / "planner" / "library"
SNAPSHOT = ROOT / "tests" / "snapshots" / "library.json"
CHANGELOG = ROOT / "CHANGELOG.md"


def _figures() -> dict:
    out = {}
    for path in sorted(LIBRARY.rglob("*.plan")):
        rel = path.relative_to(LIBRARY).as_posix()
        plan = planner.load(path)
        ev = plan.evaluate()
        for name in plan.definition_order():
            q = plan.model.quantities[name]
            if q.definition.span.source.name != plan.source.name:
                continue
            value = ev.values[name]
            out[f"{rel}:{name}"] = {
                "value": bool(value) if isinstance(value, bool) else repr(float(value)),
                "unit": q.unit_text or "",
                "tags": list(q.tags),
            }
    return out


def _unreleased() -> str:
    text = CHANGELOG.read_text(encoding="utf-8")
    start = text.index("## [Unreleased]")
    end = text.find("\n## [", start + 1)
    return text[start:end if end > 0 else None]


def _changed(old: dict, new: dict) -> list[str]:
    names = sorted(set(old) | set(new))
    return [n for n in names if n in old and old.get(n) != new.get(n)]  # changed or removed


def test_library_figures_are_as_recorded():
    new = _figures()
    old = json.loads(SNAPSHOT.read_text(encoding="utf-8")) if SNAPSHOT.exists() else {}
    changed = _changed(old, new)
    if os.environ.get("PLANNER_UPDATE_SNAPSHOTS"):
        notes = _unreleased()
        silent = [n for n in changed if n.rsplit(":", 1)[1] not in notes]
        assert not silent, ("changed library figures not mentioned in CHANGELOG.md's Unreleased section: "
                            + ", ".join(silent))
        SNAPSHOT.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    added = sorted(set(new) - set(old))
    assert not changed and not added, (
        f"library figures changed ({', '.join(changed[:20])}) or were added ({', '.join(added[:20])}): "
        "record them in CHANGELOG.md, then PLANNER_UPDATE_SNAPSHOTS=1 pytest tests/test_library_snapshot.py")


def test_every_changed_figure_since_the_snapshot_would_need_a_changelog_line():
    # the rule the update applies, on a made-up change
    old = {"hardware/x.plan:hbm_capacity": {"value": "8e10"}, "hardware/x.plan:tdp": {"value": "700.0"}}
    new = {"hardware/x.plan:hbm_capacity": {"value": "8.5e10"}, "hardware/x.plan:tdp": {"value": "700.0"},
           "hardware/x.plan:hbm_capacity_driver": {"value": "1.0"}}
    assert _changed(old, new) == ["hardware/x.plan:hbm_capacity"]
