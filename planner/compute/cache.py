"""The compiled-plan cache: a loaded plan kept on disk, so the next run skips lark, the parse,
the imports, the analysis and the compiling.

* **Key**: planner's version, Python's, the plan's resolved path, the folders its
  imports may read, ``all_imports``, and the SHA-256 of the plan's text. An entry
  also lists every file the plan read (itself and each import) with the SHA-256
  of its content, and is used only while all of them are unchanged.
* **Where**: ``$XDG_CACHE_HOME/planner`` (else ``~/.cache/planner``);
  ``~/Library/Caches/planner`` on macOS, ``%LOCALAPPDATA%\\planner\\Cache`` on Windows.
* **Written atomically**: to a temporary file in that folder, then renamed over
  the entry; concurrent runs each write their own, and a reader sees a whole
  entry or none. At most :data:`MAX_ENTRIES` entries are kept (the oldest go).
* **Safe**: a header with the payload's length and SHA-256 (a torn or corrupt
  file is not read; the header is a pickle of plain strings and numbers, read with the same
  unpickler as the payload); the payload is unpickled with an unpickler that builds
  only planner's own data classes (``planner.language``, and the compiled
  :class:`planner.compute.runtime.Program`, which is data: steps named from a fixed
  table over numbered registers, checked by :meth:`~planner.compute.runtime.Program.valid`
  before it is used) and fractions, so an entry cannot run code.
* **Ignored on any error**, reading or writing: the plan is loaded as usual.
  ``planner --no-cache`` bypasses it; the library (``planner.load``) does not
  use it unless :func:`enable` is called (the command line does).
"""

from __future__ import annotations

import io
import os
import sys
from fractions import Fraction
from pathlib import Path

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Optional

from hashlib import sha256 as _sha256
from pickle import Pickler as _CPickler, Unpickler as _CUnpickler, UnpicklingError

PROTOCOL = 5  # pickle.HIGHEST_PROTOCOL since Python 3.8
MAGIC = b"planner-plan-cache 2\n"
_LENGTH = 8  # the header's length, in bytes, after the magic line
MAX_ENTRIES = 512
_enabled = False


def enable(on: bool = True) -> None:
    global _enabled
    _enabled = on


def enabled() -> bool:
    return _enabled and not os.environ.get("PLANNER_NO_CACHE")


def directory() -> Path:
    """The user's cache folder for planner (not created here)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "planner" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "planner"
    base = os.environ.get("XDG_CACHE_HOME") or ""
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "planner"


def key(path: Path, text: str, all_imports: bool, roots) -> str:
    from .. import __version__

    parts = [__version__, _code(), sys.version, str(path.resolve()),
             repr(sorted(str(Path(r).resolve()) for r in roots)), repr(bool(all_imports)),
             _digest(text.encode("utf-8"))]
    return _digest("\0".join(parts).encode("utf-8"))


def _code() -> str:
    """planner's own code, by the size and modification time of each of its modules (and its
    grammar): an entry made by other code (a new release, an edited checkout) is never read."""
    marks: list[str] = []
    _marks(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), marks)
    return _digest("\n".join(marks).encode("utf-8"))


def _marks(folder: str, marks: list[str]) -> None:
    """``path:size:mtime`` of each module and grammar under ``folder``, in a fixed order (by
    :func:`os.scandir`, whose entries carry their type: half the time of :func:`os.walk` and a
    stat per path)."""
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if entry.name.endswith((".py", ".lark")) and entry.is_file():
            st = entry.stat()
            marks.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
        elif entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
            _marks(entry.path, marks)


def _digest(data: bytes) -> str:
    return _sha256(data).hexdigest()


def _file_digest(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return _digest(f.read())
    except OSError:
        return None


# ---- reading -------------------------------------------------------------------------------

class _Unpickler(_CUnpickler):
    """Builds planner's own data classes and fractions, nothing else: no function of any module
    can be reached, so a cache entry (even one written by someone else) cannot run code."""

    def find_class(self, module: str, name: str):
        if module == "fractions" and name == "Fraction":
            return Fraction
        if module == "planner.compute.runtime" and name in ("Program", "Body"):
            from . import runtime

            return getattr(runtime, name)
        if module.startswith("planner.language.") and module.count(".") == 2 and not name.startswith("_"):
            import importlib

            obj = getattr(importlib.import_module(module), name, None)
            if isinstance(obj, type) and obj.__module__ == module:
                return obj
        raise UnpicklingError(f"not in a plan cache: {module}.{name}")


def fetch(cache_key: str, cls, answers=None):
    """The cached plan for ``cache_key`` (an instance of ``cls``, :class:`planner.compute.evaluation.Plan`),
    or None: no entry, a changed file, or anything wrong with the entry."""
    if not enabled():
        return None
    try:
        return _fetch(cache_key, cls, answers)
    except Exception:  # noqa: BLE001  (a cache is never a reason to fail: load the plan as usual)
        return None


def _fetch(cache_key: str, cls, answers):
    path = directory() / f"{cache_key}.cache"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    header, payload = _parse(data)
    if not isinstance(header, dict) or header.get("key") != cache_key or header.get("length") != len(payload) \
            or header.get("sha256") != _digest(payload):
        return None
    for name, digest in header["files"]:
        if _file_digest(name) != digest:  # the plan or an import changed since
            return None
    state = _Unpickler(io.BytesIO(payload)).load()
    return _rebuild(state, cls, answers)


def _parse(data: bytes) -> tuple[object, bytes]:
    """An entry's header and payload (:func:`_compose`); the header None when it is not one."""
    if not data.startswith(MAGIC):
        return None, b""
    start = len(MAGIC) + _LENGTH
    end = start + int.from_bytes(data[len(MAGIC):start], "big")
    return _Unpickler(io.BytesIO(data[start:end])).load(), data[end:]


def _compose(header: dict, payload: bytes) -> bytes:
    """An entry: the magic line, the header's length and the header (a pickle of plain strings and
    numbers: json would be one more import for a warm run), then the payload."""
    buf = io.BytesIO()
    _CPickler(buf, protocol=PROTOCOL).dump(header)
    head = buf.getvalue()
    return MAGIC + len(head).to_bytes(_LENGTH, "big") + head + payload


def _rebuild(state: dict, cls, answers):
    plan = cls(state["source"], state["model"], None, answers)  # the Plan class (the caller's: no import back)
    plan.analyzer_state = state["analyzer"]  # the analyzer, rebuilt when first asked for (--set, checks)
    plan.files = tuple(Path(p) for p in state["files"])
    compiled = state.get("compiled")
    if compiled is not None and compiled.inputs == plan.arguments and compiled.valid():
        plan.__dict__["compiled"] = compiled
    plan.cached = True
    return plan


def analyzer(state: dict):
    """The plan's analyzer from its cached state (the analysis module is imported only then)."""
    from ..language.analysis import Analyzer
    from ..language.dims import Typer

    rebuilt = Analyzer.__new__(Analyzer)
    rebuilt.__dict__.update(state)
    rebuilt.typer = Typer(rebuilt.units, rebuilt.defs, rebuilt.functions, rebuilt._bind)
    return rebuilt


# ---- writing ---------------------------------------------------------------------------------

def _fraction(value: Fraction):
    return Fraction, (value.numerator, value.denominator)  # by its two integers, not by text to parse again


class _Pickler(_CPickler):
    # a table by type, looked up by the C pickler itself (a reducer_override is a call into Python
    # for every object: most of the time of writing a big plan's entry)
    dispatch_table = {Fraction: _fraction}


def store(cache_key: str, plan) -> None:
    """Keep ``plan`` (loaded, and compiled when it has been) under ``cache_key``; quietly nothing
    on any error."""
    if not enabled():
        return
    try:
        _store(cache_key, plan)
    except Exception:  # noqa: BLE001
        pass


def _store(cache_key: str, plan) -> None:
    analyzer = dict(vars(plan.analyzer))
    analyzer.pop("typer", None)  # rebuilt from the rest (it holds a bound method)
    compiled = plan.__dict__.get("compiled")
    state = {
        "source": plan.source, "model": plan.model, "analyzer": analyzer,
        "files": [str(p) for p in plan.files],
        "compiled": compiled,
    }
    buf = io.BytesIO()
    _Pickler(buf, protocol=PROTOCOL).dump(state)
    payload = buf.getvalue()
    files = [(str(p), _file_digest(str(p))) for p in plan.files]
    if any(d is None for _, d in files):
        return
    entry = _compose({"key": cache_key, "length": len(payload), "sha256": _digest(payload), "files": files},
                     payload)
    folder = directory()
    folder.mkdir(parents=True, exist_ok=True)
    import tempfile  # only to write (a read needs neither it nor shutil, which it brings)

    fd, stage = tempfile.mkstemp(prefix=".entry-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(entry)
        os.replace(stage, folder / f"{cache_key}.cache")
    except BaseException:
        try:
            os.unlink(stage)
        except OSError:
            pass
        raise
    _prune(folder)


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.cache"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-MAX_ENTRIES]:
        try:
            old.unlink()
        except OSError:
            pass
