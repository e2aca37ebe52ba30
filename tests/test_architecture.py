"""The house by stage, enforced by reading the imports.

planner/ has one folder per stage, each importing only from the stages below
it (language < compute < questions < outputs < the doors: cli/, plan.py,
__init__.py), and each third-party library has one home. Every ``import``
statement counts, at module level or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "planner"
STAGES = ["language", "compute", "questions", "outputs"]
# The doors on top of the stages. planner.lsp is the language server: like the CLI it
# serves a user (an editor), through the API door, so it may import every stage.
DOORS = {"planner.cli", "planner.plan", "planner.__main__", "planner",
         "planner.lsp", "planner.lsp.analysis", "planner.lsp.server", "planner.lsp.tolerant", "planner.lsp.framing",
         "planner.lsp.protocol", "planner.lsp.positions"}
DATA = {"planner.library"}  # plans shipped with planner, no code
CLI = "planner.cli."  # the command line's package: a door, every module of it (one per group of commands)

# library -> the only modules (or packages, ending in ".") that may import it
HOMES = {
    "lark": {"planner.language.parser", "planner.language.lower"},
    "openpyxl": {"planner.outputs.excel.reader"},  # reading workbooks back (`planner import`)
    "xlsxwriter": {"planner.outputs.excel.writer"},  # writing them: formulas with their cached values
    "jinja2": {"planner.outputs.report"},
    "matplotlib": {"planner.outputs.plots"},
    "tabulate": {"planner.outputs.terminal"},
    "pandas": {"planner.outputs.results"},  # optional: the API's to_pandas()
    "pygls": set(),  # the language server speaks the protocol itself (planner/lsp/protocol.py): no one
    "lsprotocol": set(),
    "dask": {"planner.questions.chunked"},  # optional: sweeps and simulations past memory
    "distributed": {"planner.questions.chunked"},
    "xarray": {"planner.questions.chunked"},
    "starlette": {"planner.outputs.serve.app"},  # optional: `planner serve`'s page
    "uvicorn": {"planner.outputs.serve.app"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str, bool]]:
    return imports_in(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def imports_in(text: str, name: str, is_package: bool = False) -> list[tuple[int, str, bool]]:
    """(line, imported module, at module level) for every import statement of one module.

    ``from . import x`` yields the package and, when ``x`` is a module, ``package.x`` too."""
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(text)
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        level = id(node) in top
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, level) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            out.append((node.lineno, target, level))
            for a in node.names:
                sub = f"{target}.{a.name}"
                if module_path(sub) is not None:
                    out.append((node.lineno, sub, level))
    return out


def module_path(name: str) -> Path | None:
    if not name.startswith("planner"):
        return None
    rel = Path(*name.split("."))
    for candidate in (ROOT / rel.with_suffix(".py"), ROOT / rel / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def stage_of(name: str) -> int:
    """0..3 for the stages, 4 for the doors."""
    parts = name.split(".")
    if len(parts) >= 2 and parts[1] in STAGES:
        return STAGES.index(parts[1])
    return len(STAGES)


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_lives_in_a_stage_folder_or_is_a_door():
    loose = [module_name(p) for p in MODULES if stage_of(module_name(p)) == len(STAGES)
             and module_name(p) not in DOORS | DATA and not module_name(p).startswith(CLI)]
    assert loose == [], f"modules outside the stage folders: {loose}"


def upward(here: str, found: list[tuple[int, str, bool]]) -> list[str]:
    wrong = []
    for line, target, _ in found:
        if not target.startswith("planner"):
            continue
        if target == "planner" and here != "planner":
            continue  # the root package, for planner.__version__ only (checked below)
        if stage_of(target) > stage_of(here):
            wrong.append(f"{here}:{line} imports {target}")
    return wrong


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_a_stage_imports_only_from_the_stages_below_it(path):
    assert upward(module_name(path), imports_of(path)) == []


def test_the_root_package_is_imported_only_for_its_version():
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and module_name(path) != "planner":
                package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
                if node.level and not node.module and base == ["planner"]:
                    names = [a.name for a in node.names if module_path("planner." + a.name) is None]
                    assert names in ([], ["__version__"]), f"{path}:{node.lineno} imports {names} from planner"


@pytest.mark.parametrize("library", sorted(HOMES))
def test_each_library_has_one_home(library):
    homes = HOMES[library]
    strays = []
    for path in MODULES:
        here = module_name(path)
        for line, target, _ in imports_of(path):
            if target.split(".")[0] == library:
                if not any(here == h or (h.endswith(".") and here.startswith(h)) for h in homes):
                    strays.append(f"{path.relative_to(ROOT)}:{line}")
    assert strays == [], f"{library} imported outside {sorted(homes)}"


def test_the_language_stage_needs_no_sympy_or_numpy():
    for path in (PACKAGE / "language").rglob("*.py"):
        for line, target, _ in imports_of(path):
            assert target.split(".")[0] not in ("sympy", "numpy"), f"{path}:{line} imports {target}"


def test_the_excel_and_latex_printers_import_nothing_of_sympy():
    """A closed form reaches the workbook and the LaTeX as IR (planner.compute.closed translates it):
    they are printed by the generators over the IR, not by a SymPy printer."""
    printers = sorted((PACKAGE / "outputs" / "excel").rglob("*.py")) + [PACKAGE / "outputs" / "latex.py"]
    assert len(printers) > 10
    for path in printers:
        for line, target, _ in imports_of(path):
            assert target.split(".")[0] != "sympy", f"{path}:{line} imports {target}"


def test_no_import_cycle_at_module_level():
    graph = {module_name(p): {t for _, t, top in imports_of(p) if top and module_path(t) is not None
                              and t != module_name(p)} for p in MODULES}
    # a package's __init__ importing its own submodules is not a cycle through them
    from graphlib import CycleError, TopologicalSorter

    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_excel_sheet_builders_never_import_the_writer():
    excel = PACKAGE / "outputs" / "excel"
    for path in excel.glob("*.py"):
        if path.name in ("writer.py", "__init__.py"):
            continue
        for line, target, _ in imports_of(path):
            assert target != "planner.outputs.excel.writer", f"{path.name}:{line} imports the writer"


def test_excel_modules_form_no_cycle_even_through_function_level_imports():
    excel = PACKAGE / "outputs" / "excel"
    graph = {module_name(p): {t for _, t, _ in imports_of(p) if t.startswith("planner.outputs.excel.")
                              and t != module_name(p)} for p in excel.glob("*.py")}
    from graphlib import CycleError, TopologicalSorter

    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle in excel/: {' -> '.join(exc.args[1])}")


def test_the_command_modules_form_no_cycle_even_through_function_level_imports():
    """planner/cli/: the commands' modules import the shared ones (options, common, output), never each
    other back; parser.py imports the commands' modules by name (importlib), so nothing imports it but
    the package."""
    folder = PACKAGE / "cli"
    graph = {module_name(p): {t for _, t, _ in imports_of(p) if t.startswith(CLI) and t != module_name(p)}
             for p in folder.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    assert len(graph) > 5, sorted(graph)  # the package is where this test looks
    from graphlib import CycleError, TopologicalSorter

    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle in cli/: {' -> '.join(exc.args[1])}")
    assert not [m for m, ts in graph.items() if f"{CLI}parser" in ts], "a command module imports the parser"


@pytest.mark.parametrize("stage", ["language", "compute", "questions"])
def test_no_stage_has_an_import_cycle_even_through_function_level_imports(stage):
    # (compute/cache.py and compute/evaluation.py imported each other until the numeric route)
    folder = PACKAGE / stage
    prefix = f"planner.{stage}."
    graph = {module_name(p): {t for _, t, _ in imports_of(p) if t.startswith(prefix) and t != module_name(p)}
             for p in folder.glob("*.py") if p.name != "__init__.py"}
    graph = {m: {t for t in ts if t in graph} for m, ts in graph.items()}
    from graphlib import CycleError, TopologicalSorter

    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle in {stage}/: {' -> '.join(exc.args[1])}")


@pytest.mark.parametrize("name, text, expected", [
    ("planner.language.fake", "from ..outputs import report",
     ["planner.language.fake:1 imports planner.outputs", "planner.language.fake:1 imports planner.outputs.report"]),
    ("planner.compute.fake", "def f():\n    from ..questions.solve import Solver",
     ["planner.compute.fake:2 imports planner.questions.solve"]),
    ("planner.questions.fake", "import planner.cli", ["planner.questions.fake:1 imports planner.cli"]),
    ("planner.outputs.excel.fake", "from ...plan import load", ["planner.outputs.excel.fake:1 imports planner.plan"]),
    ("planner.outputs.fake", "from ..questions import sweep",  []),
    ("planner.questions.fake", "from ..language import ir", []),
])
def test_the_layering_check_fires(name, text, expected):
    """The check above can fail: upward imports, at any depth, are seen; downward ones are not."""
    assert upward(name, imports_in(text, name)) == expected


def test_a_walk_over_the_ir_must_cover_every_node():
    """One visitor shape: a walk lacking a method for a node fails when its class is defined."""
    from planner.language import ir

    with pytest.raises(TypeError, match="has no method for .*Never"):
        type("Partial", (ir.Visitor,), {"visit_" + n.__name__: lambda self, e: 1 for n in ir.NODES
                                        if n is not ir.Never})
    other = type("Other", (ir.Visitor,), {"visit_other": lambda self, e: "other", "visit_Bool": lambda self, e: e.value})
    assert other().visit(ir.Bool(True, None)) is True
    assert other().visit(ir.Never(None)) == "other"
