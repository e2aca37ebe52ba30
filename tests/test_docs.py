"""The documentation: the command-line page documents every command and every option of the CLI (in the
spirit of sqlite-utils' tests/test_docs.py), the generated pages are current, every page is on the site,
and the README stays a front door."""

import argparse
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from doc_pages import GENERATED, page, pages

from planner.cli import build_parser

# The hand-written pages, not the generated reference (which lists every option by construction).
CLI = "\n".join(text for name, text in pages().items() if name not in GENERATED)


def _subcommands():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, action.choices


def _options(parser):
    for action in parser._actions:
        for flag in action.option_strings:
            if flag not in ("-h", "--help"):
                yield flag


def test_every_command_is_documented():
    _, commands = _subcommands()
    for name in commands:
        assert f"planner {name}" in CLI, f"`planner {name}` is in no hand-written page"


@pytest.mark.parametrize("command", sorted(_subcommands()[1]))
def test_every_option_is_documented(command):
    sub = _subcommands()[1][command]
    for flag in _options(sub):
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", CLI), \
            f"`planner {command} {flag}` is in no hand-written page"


def test_global_options_are_documented():
    parser, _ = _subcommands()
    for flag in _options(parser):
        assert flag in CLI, f"`planner {flag}` is in no hand-written page"


def test_the_parser_of_one_command_parses_as_the_whole_one():
    """main() builds only the command it runs: the same names, defaults and handler as the full parser;
    every command is built where they are listed (`planner --help`, an unknown command)."""
    from planner.cli import COMMANDS, _command_of

    full = build_parser()
    commands = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == COMMANDS
    cases = [["eval", "x.plan", "-s", "all", "--set", "a=1"], ["--color", "never", "check", "x.plan", "-v"],
             ["-q", "sweep", "x.plan", "alpha=0..1", "--limit", "3"], ["--no-cache", "solve", "x.plan", "--for", "a",
                                                                      "--where", "b = 1", "--min"],
             ["export", "x.plan", "-o", "b.xlsx"], ["fmt", "--check", "a.plan", "b.plan"], ["library"]]
    for argv in cases:
        only = _command_of(argv)
        assert only in COMMANDS, argv
        one = build_parser(only)
        assert vars(one.parse_args(argv)) == vars(full.parse_args(argv)), argv
    assert _command_of(["--color", "eval"]) is None  # `eval` is the colour here, not the command
    assert _command_of(["evaluate", "x.plan"]) is None and _command_of(["--version"]) is None
    assert _command_of(["-h", "eval"]) is None and _command_of(["eval", "-h"]) == "eval"


def test_the_generated_pages_are_current():
    """docs/generate.py writes the command-line reference and the library catalog; a change to the parser
    or to a library file without running it fails here."""
    run = subprocess.run([sys.executable, str(ROOT / "docs" / "generate.py"), "--check"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr


def test_the_generated_pages_hold_every_command_and_library_file():
    reference = page("docs/cli-reference.md")
    for name in _subcommands()[1]:
        assert f"## planner {name}\n" in reference, name
    for folder, name in [("hardware", "hardware.md"), ("models", "models.md"), ("llm", "formulas.md")]:
        catalog = page(f"docs/library/{name}")
        for path in sorted((ROOT / "planner" / "library" / folder).glob("*.plan")):
            assert f'import "{folder}/{path.name}"' in catalog, path.name
    hardware = page("docs/library/hardware.md")
    assert "| `hbm_bandwidth` | 3.35 | TB/s |" in hardware  # the H100 SXM's datasheet figure, as written


def test_every_page_is_on_the_site():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for name in pages():
        if name.startswith("docs/"):
            assert f": {name[len('docs/'):]}" in nav, f"{name} is not in mkdocs.yml's nav"
    assert set(GENERATED) <= set(pages())


def test_the_readme_is_a_front_door():
    readme = page("README.md")
    assert len(readme.splitlines()) <= 250
    for heading in ("## Install", "## Two commands", "## An example", "## Where to go next"):
        assert heading in readme, heading
    for target in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)", readme):
        assert (ROOT / target).exists(), target


def test_the_dependency_ends_tested_in_ci_are_the_bounds():
    """.ci/dependency-ends tests the oldest and newest lark and SymPy: the oldest must be pyproject.toml's
    lower bound, the newest inside the range; and every dependency has an upper bound."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = {}
    for spec in project["dependencies"] + [s for extra in project["optional-dependencies"].values() for s in extra]:
        name = re.match(r"[A-Za-z0-9_.\-\[\]]+", spec).group(0)
        assert "<" in spec, f"{spec}: no upper bound"
        specs[re.sub(r"\[.*\]", "", name).lower()] = spec
    script = (ROOT / ".ci" / "dependency-ends").read_text(encoding="utf-8")
    for package in ("lark", "sympy"):
        low = re.search(r">=([\d.]+)", specs[package]).group(1)
        high = re.search(r"<([\d.]+)", specs[package]).group(1)
        oldest = re.search(rf"oldest .*?{package}==([\d.]+)", script).group(1)
        newest = re.search(rf"newest .*?{package}==([\d.]+)", script).group(1)
        assert oldest == low, (package, oldest, low)
        as_tuple = lambda v: tuple(int(x) for x in v.split("."))  # noqa: E731
        assert as_tuple(low) <= as_tuple(newest) < as_tuple(high), (package, newest, high)


def test_the_api_reference_has_every_public_name():
    """docs/api.md renders each name `import planner` offers from the module that defines it."""
    import planner

    api = page("docs/api.md")
    for name in planner.__all__:
        obj = getattr(planner, name)
        if isinstance(obj, str):
            continue  # __version__
        where = f"{obj.__module__}.{obj.__qualname__}"
        assert f"::: {where}\n" in api, f"planner.{name} ({where}) is not in docs/api.md"


def test_the_api_reference_shows_no_raw_sphinx_roles():
    """mkdocstrings leaves `:class:` roles as text (":class:Plan" on the API page): the site's hook
    turns each into its code, linked where the page has the object's entry."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    html = ('<h2 id="planner.plan.Plan">Plan</h2><p>See :meth:<code>eval</code>, :class:<code>~a.b.Value</code>'
            ' and :exc:<code>planner.PlanError</code>.</p><h3 id="planner.plan.Plan.eval">eval</h3>')
    out = hooks.on_page_content(html, None, None, None)
    assert ":meth:" not in out and ":class:" not in out and ":exc:" not in out
    assert '<a href="#planner.plan.Plan.eval"><code>eval</code></a>' in out
    assert "<code>Value</code>" in out and "<code>planner.PlanError</code>" in out
    assert "hooks:\n  - docs/hooks.py" in (ROOT / "mkdocs.yml").read_text()
