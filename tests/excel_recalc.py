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
import re
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


# ---- Gnumeric: the second engine ------------------------------------------------------

def require_gnumeric() -> str:
    """The ssconvert binary (Debian `gnumeric`); skip (or fail under CI=true) without it."""
    exe = shutil.which("ssconvert")
    if exe is None:
        reason = "Gnumeric is not installed (no `ssconvert` on PATH): install it with `apt-get install gnumeric`"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: failing instead of skipping)")
        pytest.skip(reason)
    return exe


def gnumeric_recalculate(paths: Iterable[Path], workdir: Path) -> dict[Path, Path]:
    """Recalculate each workbook with Gnumeric (``ssconvert --recalc``), two at a time; return
    input path -> recalculated copy."""
    from concurrent.futures import ThreadPoolExecutor

    exe = require_gnumeric()
    out = workdir / "gnumeric"
    out.mkdir(parents=True, exist_ok=True)

    def one(path: Path) -> tuple[Path, Path]:
        target = out / path.name
        proc = subprocess.run([exe, "--recalc", str(path), str(target)], capture_output=True, text=True,
                              timeout=600)
        if proc.returncode != 0 or not target.exists():
            raise RuntimeError(f"ssconvert failed on {path} (exit {proc.returncode}):\n{proc.stderr}")
        return path, target

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, [Path(p) for p in paths]))


# ---- printing: LibreOffice's PDF, page by page -----------------------------------------

def pdf_pages(paths: Iterable[Path], workdir: Path) -> dict[Path, list[str]]:
    """Print each workbook to PDF with LibreOffice as a reader's copy would (a fresh default profile,
    which keeps the cached values); return input path -> the first lines of each page (its header holds
    the plan's title and the sheet's name)."""
    exe = require_soffice()
    paths = [Path(p) for p in paths]
    profile = workdir / "lo-default-profile"
    out = workdir / "pdf"
    out.mkdir(parents=True, exist_ok=True)
    cmd = [exe, f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless", "--norestore",
           "--convert-to", "pdf", "--outdir", str(out)] + [str(p) for p in paths]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    result = {}
    for p in paths:
        pdf = out / (p.stem + ".pdf")
        if not pdf.exists():
            raise RuntimeError(f"LibreOffice printed no PDF for {p.name} (exit {proc.returncode})\n{proc.stderr}")
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                              check=True).stdout
        pages = text.split("\f")
        if pages and not pages[-1].strip():
            pages.pop()
        # the page header: the plan's title on the left, the sheet's name on the right
        result[p] = [[line.strip() for line in page.splitlines() if line.strip()][:8] for page in pages]
    return result


# ---- poison: prove an engine recalculated ---------------------------------------------

POISON = -777.0
_FORMULA_CELL = re.compile(r'<c ((?:[^>/]|/(?!>))*)>(<f(?: [^>]*)?(?:/>|>.*?</f>))(?:<v>.*?</v>|<v/>|<v />)?</c>', re.S)


def poison(path: Path) -> int:
    """Overwrite the cached value of every formula cell of ``path`` with :data:`POISON` (in place): a
    value read back after an engine's run that is not the poison was computed by the engine.
    Returns how many cells were poisoned."""
    import zipfile

    path = Path(path)
    with zipfile.ZipFile(path) as z:
        items = [(info, z.read(info.filename)) for info in z.infolist()]
    count = 0

    def one(m: re.Match) -> str:
        nonlocal count
        count += 1
        attrs = re.sub(r'\s*\bt="[^"]*"', "", m.group(1))  # a number now, whatever the result's type was
        return f"<c {attrs}>{m.group(2)}<v>{POISON:g}</v></c>"

    tmp = path.with_suffix(".poisoning")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for info, data in items:
            if info.filename.startswith("xl/worksheets/sheet") and info.filename.endswith(".xml"):
                data = _FORMULA_CELL.sub(one, data.decode("utf-8")).encode("utf-8")
            out.writestr(info, data)
    tmp.replace(path)
    return count


def in_both_engines(items: dict, work: Path, least: int) -> dict:
    """Each item's workbook with every cached value poisoned (more than ``least`` cells: a value read back
    that is not the poison was computed by the engine), then recalculated by LibreOffice and by Gnumeric:
    ``item.engines`` holds both as openpyxl workbooks of values, ``item.values`` LibreOffice's."""
    import openpyxl

    for item in items.values():
        assert poison(item.path) > least
    paths = [i.path for i in items.values()]
    lo, gn = recalculate(paths, work), gnumeric_recalculate(paths, work)
    for item in items.values():
        item.engines = {"libreoffice": openpyxl.load_workbook(lo[item.path], data_only=True),
                        "gnumeric": openpyxl.load_workbook(gn[item.path], data_only=True)}
        item.values = item.engines["libreoffice"]
    return items


def typed_in_both_engines(plan: Path, work: Path, typed: dict[str, dict], least: int = 1000) -> dict:
    """``plan`` exported (``base``) and, per case of ``typed``, a copy with those inputs typed over their
    cells as an analyst types them; each poisoned and recalculated by both engines (:func:`in_both_engines`)."""
    from test_excel_workbook import edit, export

    from planner.plan import load_compiled

    require_soffice()
    require_gnumeric()
    items = {"base": export(load_compiled(plan), work / f"{plan.stem}.xlsx")}
    for case, inputs in typed.items():
        items[case] = edit(items["base"], work / f"{plan.stem}-{case}.xlsx", inputs)
    return in_both_engines(items, work, least)


def named_cell(wb, name: str):
    """What the cell a defined name points at holds (a formula, or a recalculated value)."""
    sheet, coord = next(wb.defined_names[name].destinations)
    return wb[sheet][coord.replace("$", "")].value
