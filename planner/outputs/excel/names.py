"""Plan names to Excel defined names, by Excel's rules (not LibreOffice's).

Excel refuses a defined name that

* looks like an A1 cell (``a1``, ``XFD1048576``: one to three letters naming
  a column up to XFD, then a row from 1 to 1,048,576; XlsxWriter, which writes
  the workbook, also refuses row 0 and rows past the last, ``a0``,
  ``xfd1048577``, so those count as cells too);
* looks like an R1C1 reference (``r``, ``c``, ``rc``, ``r1``, ``c12``,
  ``r1c1``);
* is ``TRUE`` or ``FALSE``, or starts with a digit or a period;
* contains anything but letters, digits, ``_``, ``.`` and ``\\``;
* is longer than 255 characters;
* starts with one of Excel's own prefixes (``_xlfn.``, ``_xlnm.`` ...).

Gnumeric (and, by the same reading, Excel) also refuses a dotted name whose
part before a ``.`` reads as a cell: ``h100.hbm_capacity`` begins with the
cell H100 ("Invalid expression"), so no part before a dot may look like an
A1 or R1C1 reference either.

Names are case-insensitive, so ``Batch`` and ``batch`` collide. LibreOffice
accepts some names Excel refuses, which is why these rules are Excel's.

:func:`excel_names` maps every plan name deterministically, by one rule: a
name that is valid and free keeps its spelling; in the others each part that
reads as a cell gets a ``_`` suffix (``h100_.hbm_capacity``, ``a1_``, ``r_``),
other characters Excel refuses become ``_``, and a name still taken gets
``_2``, ``_3`` ... until free.
"""

from __future__ import annotations

import hashlib
import re
from typing import Iterable

MAX_LENGTH = 255
MAX_COLUMN = 16384  # XFD
MAX_ROW = 1048576
_A1 = re.compile(r"([A-Za-z]{1,3})(\d+)")
_R1C1 = re.compile(r"[Rr]\d*([Cc]\d*)?|[Cc]\d*")
_RESERVED_PREFIXES = ("_XLFN.", "_XLNM.", "_XLWS.", "_XLUDF.", "_XLPM.", "_XLETA.", "_XLOP.")


def _column_number(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - ord("A") + 1)
    return n


def is_cell_like(name: str) -> bool:
    """An A1 or R1C1 reference, as Excel would read the name."""
    m = _A1.fullmatch(name)
    if m and _column_number(m.group(1)) <= MAX_COLUMN and 1 <= int(m.group(2)) <= MAX_ROW:
        return True
    return bool(_R1C1.fullmatch(name))


def _valid_char(ch: str, first: bool) -> bool:
    if ch == "_" or ch == "\\":
        return True
    if ch.isalpha():
        return True
    if first:
        return False
    return ch.isdigit() or ch == "."


# letters then digits: a cell to some reader even past the last row or at row 0 (``a0``, ``xfd1048577``);
# XlsxWriter refuses to write such a name at all
_ANY_ROW = re.compile(r"[A-Za-z][A-Za-z]?[A-Da-d]?\d+")


def reads_as_cell(name: str) -> bool:
    """``is_cell_like``, or letters and digits that some engine or writer takes for a cell."""
    return is_cell_like(name) or bool(_ANY_ROW.fullmatch(name))


def is_valid(name: str) -> bool:
    """Would Excel (and Gnumeric, and XlsxWriter) accept ``name`` as a defined name?"""
    if not name or len(name) > MAX_LENGTH:
        return False
    if not all(_valid_char(ch, i == 0) for i, ch in enumerate(name)):
        return False
    upper = name.upper()
    if upper in ("TRUE", "FALSE") or upper.startswith(_RESERVED_PREFIXES):
        return False
    parts = name.split(".")
    return not reads_as_cell(name) and not any(reads_as_cell(p) for p in parts[:-1])


def _key(name: str) -> str:
    return name.upper()


def _repair(name: str) -> str:
    """A valid spelling close to ``name`` (may still collide)."""
    chars = [ch if _valid_char(ch, i == 0) else "_" for i, ch in enumerate(name)] or ["_"]
    if not _valid_char(chars[0], True):
        chars.insert(0, "_")
    parts = "".join(chars).split(".")
    text = ".".join(p + "_" if reads_as_cell(p) and i < len(parts) - 1 else p for i, p in enumerate(parts))
    if not is_valid(text):
        text += "_"
    if len(text) > MAX_LENGTH - 12:
        digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
        text = text[: MAX_LENGTH - 12] + "_" + digest
    return text


def excel_names(names: Iterable[str]) -> dict[str, str]:
    """Plan name -> Excel defined name; deterministic, valid, unique ignoring case."""
    names = list(dict.fromkeys(names))
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:  # valid names keep their spelling when free
        if is_valid(name) and _key(name) not in taken:
            out[name] = name
            taken.add(_key(name))
    for name in names:
        if name in out:
            continue
        base = _repair(name)
        candidate, n = base, 1
        while _key(candidate) in taken or not is_valid(candidate):
            n += 1
            candidate = f"{base}_{n}"
        out[name] = candidate
        taken.add(_key(candidate))
    return out


def unique_name(text: str, taken: set[str]) -> str:
    """A valid Excel name for ``text`` (by the same rule) that is not in ``taken`` (upper case); adds it."""
    base = text if is_valid(text) else _repair(text)
    candidate, n = base, 1
    while _key(candidate) in taken or not is_valid(candidate):
        n += 1
        candidate = f"{base}_{n}"
    taken.add(_key(candidate))
    return candidate


def table_names(names: dict[str, str], tables: Iterable[str]) -> dict[str, str]:
    """The defined names of the series written as tables of values (their input cells on the sheet of
    periods), clear of the quantities' ``names``: the export names them and ``planner import`` finds
    them by the same rule."""
    taken = {_key(v) for v in names.values()}
    return {t: unique_name(t, taken) for t in tables}
