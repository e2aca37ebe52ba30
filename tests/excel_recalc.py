"""Recalculate .xlsx files with LibreOffice headless (for the Excel tests).

One call converts many files (each conversion costs ~0.75 s, most of it
start-up). The profile sets ``OOXMLRecalcMode`` to 0 (always recalculate)
so that stale cached values are never trusted; the output goes to its own
folder (converting into the input's folder would overwrite it).

Without ``soffice`` the tests that need it are skipped with the reason
shown; with ``CI=true`` they fail instead, since CI must run them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterable, Optional

import pytest

_XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
           xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def soffice() -> Optional[str]:
    return shutil.which("soffice") or shutil.which("libreoffice")


def require_soffice() -> str:
    """The soffice binary; skip (or fail under CI=true) when LibreOffice is missing."""
    exe = soffice()
    if exe is None:
        reason = ("LibreOffice is not installed (no `soffice` on PATH): the workbook recalculation tests need it; "
                  "install it with `apt-get install libreoffice-calc-nogui`")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: failing instead of skipping)")
        pytest.skip(reason)
    return exe


def recalculate(paths: Iterable[Path], workdir: Path) -> dict[Path, Path]:
    """Convert ``paths`` (.xlsx, distinct file names) with LibreOffice in one call;
    return input path -> recalculated copy."""
    exe = require_soffice()
    paths = [Path(p) for p in paths]
    names = [p.name for p in paths]
    assert len(set(names)) == len(names), "file names must be distinct"
    profile = workdir / "lo-profile"
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (profile / "user" / "registrymodifications.xcu").write_text(_XCU, encoding="utf-8")
    out = workdir / "recalculated"
    out.mkdir(parents=True, exist_ok=True)
    cmd = [exe, f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless", "--norestore",
           "--convert-to", "xlsx", "--outdir", str(out)] + [str(p) for p in paths]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    result = {p: out / p.name for p in paths}
    missing = [str(p) for p, q in result.items() if not q.exists()]
    if proc.returncode != 0 or missing:
        raise RuntimeError(f"LibreOffice failed (exit {proc.returncode}); not converted: {missing}\n"
                           f"{proc.stdout}\n{proc.stderr}")
    return result
