"""``import`` and ``from ... import``: reusing other plans.

    import "hardware/h100_sxm.plan" as h100       # h100.hbm_bandwidth, h100.peak_bf16_dense
    from "models.plan" import weight_bytes, kv     # bare names; the rest as models.NAME

A path is looked up relative to the importing file, then in each extra
import root, then in planner's shipped library (``planner/library``;
``planner library`` lists it). Imports stay home: after symlinks are
resolved, an imported file must lie inside the importing plan's folder (or
below), an extra root (``--import-root DIR``, ``PLANNER_IMPORT_PATH``) or the
library, must be a regular ``.plan`` file (never a FIFO or a device, which
are refused without being opened for reading) and must be plan text; a
refused or unreadable import names the path and the rule, never the file's
content (:func:`read_plan`). The
imported plan's quantities, functions and units join the plan under a
namespace (the alias, else the file's stem); selected names come in bare.
Its scenarios, checks and questions stay behind: they are that plan's own.
Imported inputs are inputs here too, so scenarios can override them
(``scenario h200 { h100.hbm_bandwidth = 4.8 TB/s }``).

This is an IR-to-IR pass before checking: names are rewritten, spans keep
pointing into the imported file, so errors there show that file's line.

Imports bring only what is used: after resolving, an imported quantity or
function stays only when the importing plan uses it, directly (in a
formula, a constraint, a scenario, a check or a question), by selecting it
(``from ... import name``), or through what those use. ``all_imports=True``
keeps everything (``planner eval --all``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import ir
from .data import data_dir
from .errors import DuplicateError, ImportError_, Label, LimitError, NotPlanText, PlanError, UsageError, suggest
from .limits import MAX_FILE_BYTES
from .source import Source, Span

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Mapping, Optional, Sequence


def library_dir() -> Path:
    return data_dir("library")


def library_entries() -> list[str]:
    root = library_dir()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.plan"))


def suggest_entries(name: str) -> list[str]:
    """The library plans a mistyped path may mean: every entry it is the start of
    (``hardware/h100`` -> the H100 NVL, PCIe and SXM plans), else the closest one."""
    entries = library_entries()
    stem = name[:-5] if name.endswith(".plan") else name
    starting = [e for e in entries if e.startswith(stem)]
    if starting:
        return starting
    guess = suggest(name, entries) or suggest(name + ".plan", entries)
    return [guess] if guess else []


def did_you_mean(names: list[str], quote: str) -> str:
    """``did you mean "a"?`` or ``did you mean "a", "b" or "c"?``."""
    quoted = [f"{quote}{n}{quote}" for n in names]
    return "did you mean " + (quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]) + "?"


# ---- reading plan files -------------------------------------------------------------

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_plan(path: Path, span: Optional[Span] = None, shown: Optional[str] = None,
              digest: Optional[list] = None) -> str:
    """The text of a plan file, or a clear error that quotes none of it.

    Opened without blocking (a FIFO is refused, never waited on), checked to
    be a regular file of at most ``MAX_FILE_BYTES`` bytes, decoded as UTF-8
    (a byte-order mark is dropped) and checked to be plan text. ``span`` is
    the import statement that asked for it (None for the plan itself).
    ``digest``: a list the SHA-256 of the bytes read is appended to (what the
    compiled-plan cache records: the file as this run read it, not as it is later)."""
    shown = shown or str(path)

    def fail(message: str, hint: Optional[str] = None, cls=None) -> PlanError:
        if cls is None:
            cls = ImportError_ if span is not None else UsageError
        return cls(message, span, hint=hint)

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise fail(f"no such file: {shown}") from None
    except IsADirectoryError:
        raise fail(f"{shown} is a directory, not a .plan file") from None
    except OSError as exc:
        raise fail(f"cannot read {shown}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        kind = next((what for test, what in _KINDS if test(info.st_mode)), None)
        if kind is not None:
            raise fail(f"{shown} is {kind}, not a .plan file", "planner reads plans from regular files only")
        if info.st_size > MAX_FILE_BYTES:
            raise fail(f"{shown} has {info.st_size:,} bytes; a plan file may have at most {MAX_FILE_BYTES:,} "
                       "(the limit)", "split it into files that import each other", cls=LimitError)
        chunks, size = [], 0
        while size <= MAX_FILE_BYTES:
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:  # it changed into something that blocks: refuse rather than wait
                raise fail(f"{shown} cannot be read without waiting") from None
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_FILE_BYTES:
            raise fail(f"{shown} has more than {MAX_FILE_BYTES:,} bytes (the limit)", cls=LimitError)
    except OSError as exc:
        raise fail(f"cannot read {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if digest is not None:
        import hashlib  # only for the cache (a cold run); a warm one reads no plan text

        digest.append(hashlib.sha256(data).hexdigest())
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise fail(f"{shown}:{line}:{column}: not UTF-8 text ({exc.reason} at byte {exc.start:,}), so not a plan",
                   cls=NotPlanText if span is None else None) from None


# ---- resolving -------------------------------------------------------------------------

def resolve_imports(plan: ir.PlanIR, base: Path, stack: tuple[Path, ...] = (),
                    all_imports: bool = False, roots: Sequence[Path] = (),
                    files: Optional[list[Path]] = None) -> ir.PlanIR:
    """The plan with its imports' statements joined in (only those it uses, unless ``all_imports``).

    ``roots`` are extra folders imports may read from (and are looked up in), besides each
    importing plan's own folder and planner's library; ``files`` collects every file read."""
    resolved = _resolve(plan, base, stack, tuple(Path(r) for r in roots), files if files is not None else [])
    return resolved if all_imports else _used_only(plan, resolved)


def _resolve(plan: ir.PlanIR, base: Path, stack: tuple[Path, ...], roots: tuple[Path, ...],
             files: list[Path]) -> ir.PlanIR:
    import dataclasses  # here, not at import: a warm `planner eval` needs neither it nor inspect

    from .lower import lower

    statements: list[ir.Statement] = []
    namespaces: dict[str, ir.Import] = {}
    for s in plan.statements:
        if not isinstance(s, ir.Import):
            statements.append(s)
            continue
        path, probes = _find(s, base, roots)
        if path in stack:
            cycle = stack[stack.index(path):] + (path,)
            chain = " -> ".join(p.name for p in cycle)
            raise ImportError_(f"import cycle: {chain}", s.span, hint="plans cannot import each other in a circle")
        digest: list[str] = []
        text = read_plan(path, s.span, f'"{s.path}" ({path})', digest)
        files.append(ReadFile(path, digest[0], probes))
        inner = lower(Source(_display_path(path), text))
        inner = _resolve(inner, path.parent, stack + (path,), roots, files)
        prefix = s.alias or path.stem
        if not prefix.isidentifier():
            raise ImportError_(f"`{path.stem}` cannot be a namespace", s.span,
                               hint=f'name it: import "{s.path}" as NAME')
        if prefix in namespaces:
            raise DuplicateError(f"namespace `{prefix}` is imported twice", s.span,
                                 labels=[Label(namespaces[prefix].span, "first imported here")],
                                 hint='use `as` to give one of them another name')
        namespaces[prefix] = s
        statements.extend(_bring(inner, s, prefix))
    return dataclasses.replace(plan, statements=tuple(statements))


def _used_only(own: ir.PlanIR, resolved: ir.PlanIR) -> ir.PlanIR:
    """Drop imported definitions and functions that nothing of the plan's own uses, even indirectly."""
    import dataclasses
    mine = {id(s) for s in own.statements}
    defs = {s.name: s for s in resolved.statements if isinstance(s, (ir.Definition, ir.FunctionDef))}
    wanted: set[str] = set()
    todo: list[str] = []
    for s in resolved.statements:
        if id(s) in mine:
            todo.extend(referenced_names(s))
    for s in own.statements:  # names selected with `from "x" import a, b` are wanted as written
        if isinstance(s, ir.Import) and s.names:
            todo.extend(s.names)
    while todo:
        name = todo.pop()
        if name in wanted or name not in defs:
            continue
        wanted.add(name)
        todo.extend(referenced_names(defs[name]))
    kept = tuple(s for s in resolved.statements
                 if id(s) in mine or not isinstance(s, (ir.Definition, ir.FunctionDef)) or s.name in wanted)
    return dataclasses.replace(resolved, statements=kept)


_SEEN: dict = {}  # id(node) -> (node, what was found of it): the language server resolves the same
# statements on every keystroke (its parser keeps the unchanged ones, and the IR is immutable)
SEEN = 50_000


def _seen(node, make):
    """``make(node)``, remembered by the node's identity (the node kept, so its id is not reused)."""
    hit = _SEEN.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    found = make(node)
    if len(_SEEN) >= SEEN:
        _SEEN.clear()
    _SEEN[id(node)] = (node, found)
    return found


def referenced_names(node) -> frozenset[str]:
    """Every quantity or function name a statement (or expression) mentions, the names it sets included."""
    return _seen(node, lambda n: frozenset(ir.mentions(n)))


def _display_path(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        lib = library_dir()
        try:
            return "<library>/" + str(path.relative_to(lib))
        except ValueError:
            return str(path)


class ReadFile(type(Path())):
    """A file an import read (a :class:`Path`), with what the compiled-plan cache needs to know it
    would read the same again: ``digest``, the SHA-256 of the bytes this run read, and ``probes``,
    each place looked at before it and itself, as :func:`probe` saw it (a file created earlier in
    the search, a symlink retargeted, changes a probe)."""

    def __new__(cls, path, digest: str = "", probes: tuple = ()):
        self = super().__new__(cls, path)
        self.digest, self.probes = digest, probes
        return self


def probe(candidate: str) -> tuple[str, str, bool]:
    """What an import's lookup sees at ``candidate``: the path, where it resolves to, and whether a
    file (not a folder) is there."""
    try:
        real = os.path.realpath(candidate, strict=False)
    except (OSError, RuntimeError, ValueError):
        return candidate, "", False
    return candidate, real, os.path.exists(real) and not os.path.isdir(real)


def _resolved(c: Path, s: ir.Import) -> Path:
    try:
        return c.resolve()
    except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise ImportError_(f'"{s.path}" cannot be resolved: {c} is a symlink loop' if isinstance(exc, RuntimeError)
                           or getattr(exc, "errno", None) == 40 else f'"{s.path}" cannot be resolved: {exc}',
                           s.span, label="refused", hint="point the link at a .plan file") from None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _find(s: ir.Import, base: Path, roots: tuple[Path, ...] = ()) -> tuple[Path, tuple]:
    """The file an import names: next to the importing plan, in an extra root, in the library
    (``.plan`` may be left out), after resolving symlinks, inside one of those folders; and the
    :func:`probe` of every place looked at up to it."""
    name = s.path
    home = base.resolve()
    folders = [home] + [r.resolve() for r in roots] + [library_dir().resolve()]
    candidates = [folder / n for folder in folders for n in (name, name + ".plan")]
    outside: list[tuple[Path, Path]] = []
    not_plan: Optional[Path] = None
    probes = []
    for c in candidates:
        real = _resolved(c, s)
        probes.append((str(c), str(real), os.path.exists(real) and not os.path.isdir(real)))
        if not any(_inside(real, f) for f in folders):
            outside.append((c, real))
            continue
        if not os.path.exists(real) or os.path.isdir(real):
            continue
        if real.name.endswith(".plan"):
            return real, tuple(probes)  # a FIFO or a device is refused by read_plan, unopened
        not_plan = not_plan or real
    if not_plan is not None:
        raise ImportError_(f'"{name}" is not a .plan file ({not_plan})', s.span, hint="imports read .plan files only")
    if outside:
        extra = ", ".join(str(r) for r in roots)
        allowed = f"{home} (this plan's folder and below)" + (f", {extra}" if extra else "") + " or planner's library"
        where = f" (it resolves to {outside[0][1]})" if str(outside[0][1]) != name else ""
        raise ImportError_(f'"{name}" is outside the folders imports may read{where}', s.span,
                           label="refused: imports stay home",
                           notes=[f"imports may read {allowed}"],
                           hint="copy the file next to this plan, or allow its folder with `--import-root DIR` "
                                "(or PLANNER_IMPORT_PATH)")
    guesses = suggest_entries(name)
    hint = did_you_mean(guesses, '"') if guesses else "the library has: " + ", ".join(library_entries())
    places = "next to this plan" + (", in the import roots" if roots else "") + " or in planner's library"
    raise ImportError_(f'cannot find "{name}" {places}', s.span, hint=hint)


def _bring(inner: ir.PlanIR, s: ir.Import, prefix: str) -> list[ir.Statement]:
    """The statements an import brings in, renamed into its namespace; renamed once while the
    imported plan's statements are the same objects (as :func:`_seen` remembers)."""
    periods = next((x for x in inner.statements if isinstance(x, ir.Periods)), None)
    if periods is not None:  # its series would need the importing plan's periods and names: not yet
        raise ImportError_(f'"{s.path}" has series over periods, which cannot be imported yet', s.span,
                           label="a plan with series", labels=[Label(periods.span, "its periods")],
                           hint="copy its series into this plan, or import the figures from a plan without them")
    key = (tuple(map(id, inner.statements)), s.names, prefix)
    hit = _BROUGHT.get(key)
    if hit is None:
        hit = _BROUGHT[key] = (inner.statements, _renamed(inner, s, prefix))  # (kept: their ids stay theirs)
        while len(_BROUGHT) > 256:
            _BROUGHT.pop(next(iter(_BROUGHT)))
    return list(hit[1])


_BROUGHT: dict = {}  # (the ids of an imported plan's statements, the names selected, the namespace) -> them renamed


def _renamed(inner: ir.PlanIR, s: ir.Import, prefix: str) -> tuple:
    import dataclasses
    defs = [x for x in inner.statements if isinstance(x, (ir.Definition, ir.FunctionDef))]
    units = [x for x in inner.statements if isinstance(x, ir.UnitDecl)]
    available = {d.name for d in defs}
    selected = set(s.names or ())
    for n in s.names or ():
        if n not in available:
            guess = suggest(n, available)
            raise ImportError_(f'"{s.path}" has no quantity or function `{n}`', s.span,
                               hint=f"did you mean `{guess}`?" if guess else None)
    mapping = {d.name: (d.name if d.name in selected else f"{prefix}.{d.name}") for d in defs}
    out: list[ir.Statement] = list(units)
    for d in defs:
        if isinstance(d, ir.Definition):
            out.append(dataclasses.replace(
                d, name=mapping[d.name], expr=rename(d.expr, mapping),
                constraints=tuple(dataclasses.replace(c, condition=rename(c.condition, mapping))
                                  if c.condition is not None else c for c in d.constraints)))
        else:
            params = frozenset(p.name for p in d.params)
            out.append(dataclasses.replace(
                d, name=mapping[d.name], body=rename(d.body, mapping, params),
                params=tuple(dataclasses.replace(p, default=rename(p.default, mapping, params))
                             if p.default is not None else p for p in d.params)))
    return tuple(out)


def rename(e: Optional[ir.Expr], mapping: Mapping[str, str], local: frozenset[str] = frozenset()):
    """Rewrite quantity and function names in an expression (parameters stay)."""
    if e is None:
        return None
    import dataclasses

    def fn(node):
        if isinstance(node, ir.Name) and node.name not in local and node.name in mapping:
            return dataclasses.replace(node, name=mapping[node.name])
        if isinstance(node, ir.ScenarioRef) and node.name in mapping:
            return dataclasses.replace(node, name=mapping[node.name])
        if isinstance(node, ir.Call) and node.func in mapping:
            return dataclasses.replace(node, func=mapping[node.func])
        return node

    return ir.transform(e, fn)
