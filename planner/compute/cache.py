"""The compiled-plan cache: a loaded plan kept on disk, so the next run skips lark, the parse,
the imports, the analysis and the compiling.

* **Key**: planner's version, Python's, the plan's resolved path, the folders its
  imports may read, ``all_imports``, and the SHA-256 of the plan's text. An entry
  also lists every file the plan read (itself and each import) with the SHA-256
  of the bytes the run read (taken as it read them, not after: a file saved during
  the load makes the entry miss, never stores the new digest beside the old model),
  and, for each import, every place its lookup looked at up to the file it chose
  (where each resolves, and whether a file is there): an entry is used only while all
  of them are unchanged, so a retargeted symlink or a new file that now shadows a
  library import (``./hardware/h100_sxm.plan``) is read again.
* **Trusted only when private**: the folder is created ``0700``; a folder that is a
  symbolic link, not the user's, or group/world-writable is not used at all (one
  warning), and an entry is read only when it is a regular file of the user's that
  nobody else may write, opened without following a link and without blocking (a FIFO
  planted as an entry is skipped, not waited on).
* **Where**: ``$XDG_CACHE_HOME/planner`` (else ``~/.cache/planner``);
  ``~/Library/Caches/planner`` on macOS, ``%LOCALAPPDATA%\\planner\\Cache`` on Windows.
* **Written atomically**: to a temporary file in that folder, then renamed over
  the entry; concurrent runs each write their own, and a reader sees a whole
  entry or none. At most :data:`MAX_ENTRIES` entries are kept (the oldest go);
  pruning deletes only planner's own entries (its name pattern, a regular file of the
  user's that starts with planner's header), never anything else in the folder.
* **Safe**: a header with the payload's length and SHA-256 (a torn or corrupt
  file is not read; the header is a pickle of plain strings and numbers, read with the same
  unpickler as the payload); the payload is unpickled with an unpickler that builds
  only planner's own data classes (``planner.language``, and the compiled
  :class:`planner.compute.runtime.Program`, which is data: steps named from a fixed
  table over numbered registers, checked by :meth:`~planner.compute.runtime.Program.valid`
  before it is used) and fractions, so an entry cannot run code.
* **Closed forms too**: a question's closed forms, derived for a workbook or a report, are kept in
  the entry as plain data (nested tuples whose heads come from a fixed table of SymPy constructors,
  :func:`planner.compute.symbolic.from_data`), stored again at the end of the command that derived them.
* **Charts too**: a report's PNG is kept in an entry of its own (:func:`drawn`, :func:`keep`), keyed by
  the chart's data (:func:`fingerprint`), planner's version and code, and the installed matplotlib and
  Pillow, so a warm report that draws the same charts imports no matplotlib; an entry that is not a
  whole PNG under its key is drawn again.
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
_refused: dict = {}  # folders found unsafe in this process (warned about once)
_NAME = 64  # hex digits of an entry's name (a SHA-256), then ".cache"


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


_CODE: list[str] = []  # the digest of planner's code, taken once per process


def _code() -> str:
    """planner's own code, by the size and modification time of each of its modules (and its
    grammar): an entry made by other code (a new release, an edited checkout) is never read."""
    if not _CODE:
        from ..language.data import data_dir

        marks: list[str] = []
        _marks(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), marks)
        _marks(str(data_dir("grammar")), marks)  # a checkout's grammar is beside the package, not in it
        _CODE.append(_digest("\n".join(marks).encode("utf-8")))
    return _CODE[0]


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
    """The SHA-256 of a regular file's bytes; None for anything else (a FIFO is not waited on)."""
    data = _read_regular(path, follow=True)
    return None if data is None else _digest(data)


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _read_regular(path, follow: bool, own: bool = False, limit: int = -1) -> Optional[bytes]:
    """The bytes of a regular file, opened without blocking (and, unless ``follow``, without
    following a symbolic link); with ``own``, only a file of this user's that nobody else may
    write. None otherwise, or on any error."""
    import stat

    try:
        fd = os.open(path, _FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0)))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (own and not _private(info)):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _private(info) -> bool:
    """Whether a file or folder is this user's and nobody else may write it."""
    uid = getattr(os, "getuid", None)
    return (uid is None or info.st_uid == uid()) and not info.st_mode & 0o022


def _usable(folder: Path, create: bool) -> bool:
    """Whether the cache folder may be used: a real folder (not a symbolic link) of this user's that
    nobody else may write; created ``0700`` when ``create``. Warns once per folder when it is not."""
    import stat

    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            return False
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(folder, 0o700)  # the umask can only take bits away
            info = os.lstat(folder)
        except OSError:
            return False
    except OSError:
        return False
    if stat.S_ISDIR(info.st_mode) and _private(info):
        return True
    if str(folder) not in _refused:
        uid = getattr(os, "getuid", None)
        if stat.S_ISLNK(info.st_mode):
            why, fix = "a symbolic link", f"remove the link ({folder}) or set XDG_CACHE_HOME"
        elif not stat.S_ISDIR(info.st_mode):
            why, fix = "not a folder", f"remove {folder} or set XDG_CACHE_HOME"
        elif uid is not None and info.st_uid != uid():
            why, fix = "owned by another user", f"remove {folder} or set XDG_CACHE_HOME"
        else:
            why, fix = "writable by other users", f"chmod 700 {folder}"
        _refused[str(folder)] = why
        sys.stderr.write(f"planner: the plan cache {folder} is {why}: not used (fix: {fix})\n")
    return False


# ---- reading -------------------------------------------------------------------------------

class _Unpickler(_CUnpickler):
    """Builds planner's own data classes and fractions, nothing else: no function of any module
    can be reached, so a cache entry (even one written by someone else) cannot run code."""

    def find_class(self, module: str, name: str):
        if module == "fractions" and name == "Fraction":
            return Fraction
        if module == "planner.compute.runtime" and name in ("Program", "Body", "ScanBody"):
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
    folder = directory()
    if not _usable(folder, create=False):
        return None
    data = _read_regular(folder / f"{cache_key}.cache", follow=False, own=True)
    if data is None:
        return None
    header, payload = _parse(data)
    if not isinstance(header, dict) or header.get("key") != cache_key or header.get("length") != len(payload) \
            or header.get("sha256") != _digest(payload):
        return None
    for name, digest in header["files"]:
        if _file_digest(name) != digest:  # the plan or an import changed since
            return None
    probes = header.get("probes")
    if not isinstance(probes, list):
        return None
    if probes:
        from ..language.imports import probe

        for candidate, real, present in probes:  # what each import's lookup would find now
            if probe(candidate) != (candidate, real, present):
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
    forms = state.get("forms")
    if isinstance(forms, dict):
        plan.__dict__["_closed_forms"] = dict(forms)  # checked as they are rebuilt (symbolic.from_data)
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


_changed: dict = {}  # cache key -> a plan that gained closed forms since it was stored


def changed(plan) -> None:
    """``plan`` has gained something worth keeping (a question's closed forms): :func:`flush` stores it again."""
    if plan.cache_key is not None:
        _changed[plan.cache_key] = plan


def flush() -> None:
    """Store again every plan that :func:`changed` named (at the end of a command that succeeded)."""
    while _changed:
        cache_key, plan = _changed.popitem()
        store(cache_key, plan)


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
        "forms": dict(plan.closed_forms),  # plain tuples, strings and integers
    }
    buf = io.BytesIO()
    _Pickler(buf, protocol=PROTOCOL).dump(state)
    payload = buf.getvalue()
    files, probes = [], []
    for i, p in enumerate(plan.files):
        digest = getattr(p, "digest", None)  # an import: the bytes the run read
        if digest is None:  # the plan itself: its text is in the key; the file still holds it?
            data = _read_regular(str(p), follow=True)
            if i or data is None or data.decode("utf-8-sig", "replace") != plan.source.text:
                return
            digest = _digest(data)
        files.append((str(p), digest))
        probes.extend(getattr(p, "probes", ()))
    _write(cache_key, _compose({"key": cache_key, "length": len(payload), "sha256": _digest(payload),
                                "files": files, "probes": [tuple(x) for x in probes]}, payload))


def _write(cache_key: str, entry: bytes) -> None:
    """``entry`` under ``cache_key``: written whole to a temporary file, then renamed over the old one."""
    folder = directory()
    if not _usable(folder, create=True):
        return
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
    """Delete the oldest entries past :data:`MAX_ENTRIES`: planner's own only (an entry's name, a
    regular file of this user's, planner's header), in a folder :func:`_usable` accepted."""
    import stat

    hexdigits = set("0123456789abcdef")
    entries = []
    with os.scandir(folder) as it:
        for e in it:
            stem = e.name[:-6]
            if not (e.name.endswith(".cache") and len(stem) == _NAME and set(stem) <= hexdigits):
                continue
            try:
                info = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and _private(info):
                entries.append((info.st_mtime_ns, e.path))
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort()
    for _, old in entries[:-MAX_ENTRIES]:
        if _read_regular(old, follow=False, own=True, limit=len(MAGIC)) != MAGIC:
            continue
        try:
            os.unlink(old)
        except OSError:
            pass


# ---- drawn charts ----------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n"


def chart_key(kind: str, data: str) -> str:
    """The key of a chart: its ``kind`` (the drawing function), the :func:`fingerprint` of its data,
    planner's version and code, and the installed matplotlib and Pillow (by the size and modification
    time of their modules' ``__init__``, found without importing them)."""
    from importlib.util import find_spec

    from .. import __version__

    marks = [__version__, _code(), kind, data]
    for package in ("matplotlib", "PIL"):
        spec = find_spec(package)
        st = os.stat(spec.origin)  # an upgrade writes the file again
        marks.append(f"{spec.origin}:{st.st_size}:{st.st_mtime_ns}")
    return _digest("\0".join(["chart", *marks]).encode("utf-8"))


def fingerprint(value, parts: Optional[list] = None) -> str:
    """A digest of plain data (numbers, strings, None, arrays, and tuples, lists, dicts and data classes
    of them), each part with its type: equal digests, equal data. TypeError for anything else."""
    top = parts is None
    parts = [] if top else parts
    if value is None or isinstance(value, (bool, int, float, str, Fraction)):
        parts.append(f"{type(value).__name__}:{value!r}")
    elif isinstance(value, (tuple, list)):
        parts.append(f"{type(value).__name__}[{len(value)}")
        for v in value:
            fingerprint(v, parts)
    elif isinstance(value, dict):
        parts.append(f"dict[{len(value)}")
        for k in sorted(value, key=repr):
            fingerprint(k, parts)
            fingerprint(value[k], parts)
    elif hasattr(value, "__dataclass_fields__"):
        parts.append(f"{type(value).__qualname__}(")
        for name in value.__dataclass_fields__:
            fingerprint(getattr(value, name), parts)
    elif type(value).__module__ == "numpy":  # an array or a numpy scalar: its type, shape and bytes
        import numpy as np

        a = np.ascontiguousarray(value)
        if a.dtype.kind == "O":
            raise TypeError("not plain data: an array of objects")
        parts.append(f"{a.dtype.str}{a.shape}:{_digest(a.tobytes())}")
    else:
        raise TypeError(f"not plain data: {type(value).__name__}")
    return _digest("\n".join(parts).encode("utf-8")) if top else ""


def drawn(chart: str) -> Optional[bytes]:
    """The PNG kept under ``chart`` (:func:`chart_key`), or None: no entry, or anything wrong with it."""
    if not enabled():
        return None
    try:
        folder = directory()
        data = _usable(folder, create=False) and _read_regular(folder / f"{chart}.cache", follow=False, own=True)
        if not data:
            return None
        header, png = _parse(data)
        ok = isinstance(header, dict) and header.get("key") == chart and header.get("length") == len(png) \
            and header.get("sha256") == _digest(png) and png.startswith(PNG)
        return png if ok else None
    except Exception:  # noqa: BLE001  (drawn again)
        return None


def keep(chart: str, png: bytes) -> None:
    """Keep a drawn chart under ``chart``; quietly nothing on any error."""
    if not enabled() or not png.startswith(PNG):
        return
    try:
        _write(chart, _compose({"key": chart, "length": len(png), "sha256": _digest(png)}, png))
    except Exception:  # noqa: BLE001
        pass
