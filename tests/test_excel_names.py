"""Plan names to Excel defined names, by Excel's rules (LibreOffice is more lenient,
so a LibreOffice round trip cannot prove these)."""

from __future__ import annotations

import pytest

from planner.outputs.excel.names import excel_names, is_cell_like, is_valid


@pytest.mark.parametrize("name, valid", [
    ("batch", True),
    ("hbm_bandwidth", True),
    ("α", True),
    ("_private", True),
    ("hw.h100", True),          # dots are allowed after the first character; the last part may look like a cell
    ("h100.hbm_capacity", False),  # Gnumeric reads the cell H100 before the dot ("Invalid expression")
    ("h100_.hbm_capacity", True),
    ("x1.y", False),
    ("hw.x1.y", False),         # any part before a dot
    ("r.x", False),             # an R1C1 reference before the dot
    ("mi300x.hbm_capacity", True),  # MI300X: no column that wide
    ("abcd1", True),            # four letters: no column that wide
    ("xfe1", True),             # past the last column, XFD
    ("a1", False),              # cells
    ("A1", False),
    ("ab12", False),
    ("XFD1048576", False),
    ("xfd1048577", False),      # past the last row, but XlsxWriter refuses it (and would drop the name)
    ("a0", False),              # row 0 does not exist; XlsxWriter refuses it too
    ("x0", False),
    ("x0_", True),
    ("r", False),               # R1C1 forms
    ("C", False),
    ("rc", False),
    ("R1C1", False),
    ("r2", False),
    ("c12", False),
    ("r1c", False),
    ("TRUE", False),
    ("false", False),
    ("1abc", False),            # leading digit
    (".x", False),
    ("has space", False),
    ("a-b", False),
    ("_xlfn.thing", False),     # Excel's own prefixes
    ("x" * 255, True),
    ("x" * 256, False),
])
def test_is_valid(name, valid):
    assert is_valid(name) is valid


def test_cell_like():
    assert is_cell_like("b3") and is_cell_like("XFD1") and is_cell_like("rc1")
    assert not is_cell_like("batch") and not is_cell_like("b3x")


def test_mangling_is_valid_unique_and_deterministic():
    names = ["a1", "a1_", "r", "R", "c", "rc", "R1C1", "TRUE", "Batch", "batch", "BATCH", "ok", "α", "x" * 300]
    out = excel_names(names)
    assert excel_names(list(names)) == out  # deterministic
    assert set(out) == set(names)
    assert all(is_valid(v) for v in out.values())
    keys = [v.upper() for v in out.values()]
    assert len(set(keys)) == len(keys)  # no two collide, ignoring case
    # valid names keep their spelling; the first of a case-insensitive clash keeps it
    assert out["ok"] == "ok" and out["α"] == "α" and out["Batch"] == "Batch"
    assert out["a1_"] == "a1_"  # a valid plan name is not displaced by a mangled one
    assert out["a1"] != "a1_" and out["a1"].startswith("a1")
    assert out["r"] == "r_" and out["TRUE"] == "TRUE_"
    assert out["batch"] not in ("batch", "Batch") and out["BATCH"] not in ("batch", "BATCH")
    assert len(out["x" * 300]) <= 255


def test_dotted_names_whose_first_part_reads_as_a_cell():
    """One rule: each part before a dot that reads as a cell gets a `_`; the rest keeps its spelling."""
    out = excel_names(["h100.hbm_capacity", "h100.peak_bf16_dense", "mi300x.hbm_capacity", "a1.b2.c", "hw.a1"])
    assert out == {"h100.hbm_capacity": "h100_.hbm_capacity", "h100.peak_bf16_dense": "h100_.peak_bf16_dense",
                   "mi300x.hbm_capacity": "mi300x.hbm_capacity", "a1.b2.c": "a1_.b2_.c", "hw.a1": "hw.a1"}
