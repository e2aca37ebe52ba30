"""``import`` and ``from ... import``: reusing other plans.

    import "hardware/h100_sxm.plan" as h100       # h100.hbm_bandwidth, h100.peak_bf16_dense
    from "models.plan" import weight_bytes, kv     # bare names; the rest as models.NAME

A path is looked up relative to the importing file, then in planner's
shipped library (``planner/library``; ``planner library`` lists it). The
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

import dataclasses
from enum import Enum
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Optional

from . import ir
from .data import data_dir
from .errors import DuplicateError, ImportError_, Label, suggest
from .source import Source, Span


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


def suggest_entry(name: str) -> Optional[str]:
    """The library plan a mistyped path most likely means (the first of ``suggest_entries``)."""
    return next(iter(suggest_entries(name)), None)


def did_you_mean(names: list[str], quote: str) -> str:
    """``did you mean "a"?`` or ``did you mean "a", "b" or "c"?``."""
    quoted = [f"{quote}{n}{quote}" for n in names]
    return "did you mean " + (quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]) + "?"


def resolve_imports(plan: ir.PlanIR, base: Path, stack: tuple[Path, ...] = (),
                    all_imports: bool = False) -> ir.PlanIR:
    """The plan with its imports' statements joined in (only those it uses, unless ``all_imports``)."""
    resolved = _resolve(plan, base, stack)
    return resolved if all_imports else _used_only(plan, resolved)


def _resolve(plan: ir.PlanIR, base: Path, stack: tuple[Path, ...]) -> ir.PlanIR:
    from .lower import lower

    statements: list[ir.Statement] = []
    namespaces: dict[str, ir.Import] = {}
    for s in plan.statements:
        if not isinstance(s, ir.Import):
            statements.append(s)
            continue
        path = _find(s, base)
        if path in stack:
            cycle = stack[stack.index(path):] + (path,)
            chain = " -> ".join(p.name for p in cycle)
            raise ImportError_(f"import cycle: {chain}", s.span, hint="plans cannot import each other in a circle")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise ImportError_(f"cannot read {path}: {exc}", s.span) from None
        inner = lower(Source(_display_path(path), text))
        inner = _resolve(inner, path.parent, stack + (path,))
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


def referenced_names(node) -> set[str]:
    """Every quantity or function name a statement (or expression) mentions, the names it sets included."""
    out: set[str] = set()
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Name):
            out.add(x.name)
        elif isinstance(x, ir.ScenarioRef):
            out.add(x.name)
        elif isinstance(x, ir.Call):
            out.add(x.func)
        if isinstance(x, (ir.Override, ir.SweepAxis)):
            out.add(x.name)
        elif isinstance(x, ir.Solve):
            out.add(x.target)
        elif isinstance(x, ir.Optimize):
            out.add(x.over)
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif dataclasses.is_dataclass(x) and not isinstance(x, (type, Span, Source)):
            stack.extend(v for v in (getattr(x, f.name) for f in dataclasses.fields(x))
                         if not isinstance(v, (str, int, float, Fraction, Enum, Span, type(None))))
    return out


def _display_path(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        lib = library_dir()
        try:
            return "<library>/" + str(path.relative_to(lib))
        except ValueError:
            return str(path)


def _find(s: ir.Import, base: Path) -> Path:
    name = s.path
    candidates = [base / name, base / (name + ".plan"), library_dir() / name, library_dir() / (name + ".plan")]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    guesses = suggest_entries(name)
    hint = did_you_mean(guesses, '"') if guesses else "the library has: " + ", ".join(library_entries())
    raise ImportError_(f'cannot find "{name}" next to this plan or in planner\'s library', s.span, hint=hint)


def _bring(inner: ir.PlanIR, s: ir.Import, prefix: str) -> list[ir.Statement]:
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
    return out


def rename(e: Optional[ir.Expr], mapping: Mapping[str, str], local: frozenset[str] = frozenset()):
    """Rewrite quantity and function names in an expression (parameters stay)."""
    if e is None:
        return None

    def fn(node):
        if isinstance(node, ir.Name) and node.name not in local and node.name in mapping:
            return dataclasses.replace(node, name=mapping[node.name])
        if isinstance(node, ir.ScenarioRef) and node.name in mapping:
            return dataclasses.replace(node, name=mapping[node.name])
        if isinstance(node, ir.Call) and node.func in mapping:
            return dataclasses.replace(node, func=mapping[node.func])
        return node

    return ir.transform(e, fn)
