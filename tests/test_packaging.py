"""A non-editable install works from any directory: the wheel carries the
grammar, the report templates and the library. A checkout works too, without
installing: the CLI and the API find grammar/ and templates/ next to planner/."""

import os
import subprocess
import sys
import zipfile

import pytest
from conftest import ROOT, TOKEN_COST


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (path,) = out.glob("planner_units-*.whl")
    return path, proc.stdout + proc.stderr


def test_the_build_gives_no_setuptools_warnings(wheel):
    _, log = wheel
    warnings = [line.strip() for line in log.splitlines()
                if "Warning" in line or "is absent from the `packages`" in line]
    assert warnings == []


def test_wheel_metadata_names_the_distribution_license_authors_and_urls(wheel):
    path, _ = wheel
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "Name: planner-units" in meta
    assert "License-Expression: MIT" in meta
    assert "Author-email: The planner maintainers" in meta
    assert "Project-URL: Homepage," in meta
    assert "Classifier: Typing :: Typed" in meta
    assert "Provides-Extra: lsp" in meta


def test_wheel_ships_data_files(wheel):
    wheel, _ = wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "planner/grammar/plan.lark" in names
    assert "planner/templates/report.md.j2" in names
    assert "planner/library/hardware/h100_sxm.plan" in names
    assert "planner/library/llm/roofline.plan" in names
    assert "planner/library/models/llama3_8b.plan" in names
    assert "planner/library/hardware/b200.plan" in names
    assert "planner/py.typed" in names
    assert "planner/outputs/serve/page.html" in names  # planner serve's page and its script
    assert "planner/outputs/serve/page.js" in names
    assert "planner/__main__.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "planner = planner.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_runs_from_another_directory(wheel, tmp_path):
    wheel, _ = wheel
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True)
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    code = ("import planner, sys; assert planner.__file__.startswith(sys.argv[1]), planner.__file__;"
            "from planner.cli import main; sys.exit(main(['check', sys.argv[2]]))")
    proc = subprocess.run([sys.executable, "-c", code, str(site), str(TOKEN_COST)], cwd=workdir, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failed" in proc.stdout
    proc = subprocess.run([sys.executable, "-c", "from planner.cli import main; import sys; sys.exit(main(sys.argv[1:]))",
                           "eval", "-", ], cwd=workdir, env=env, capture_output=True, text=True)
    assert proc.returncode == 2  # a bad argument is a clean error, not a traceback
    assert "Traceback" not in proc.stderr


def _checkout_env():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return env


def test_the_cli_runs_from_a_checkout():
    """`python -m planner` from the repository root uses the checkout (grammar/ and templates/ beside planner/)."""
    code = ("import sys, planner, runpy; assert planner.__file__.startswith(sys.argv[1]), planner.__file__;"
            "sys.argv = ['planner', 'check', 'sheets/token_cost.plan'];"
            "runpy.run_module('planner', run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT / "planner")], cwd=ROOT, env=_checkout_env(),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failed" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "planner", "report", "sheets/token_cost.plan"], cwd=ROOT,
                          env=_checkout_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Per-token cost of a 70B dense model")
def test_the_api_runs_from_a_checkout():
    code = ("import sys, planner; assert planner.__file__.startswith(sys.argv[1]), planner.__file__;"
            "plan = planner.load('sheets/token_cost.plan');"
            "print(plan.eval(scenario='int4_g128')['batch_step_bound'])")
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT / "planner")], cwd=ROOT, env=_checkout_env(),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    number, unit = proc.stdout.split()
    assert unit == "ms" and abs(float(number) - 19.262) < 5e-4  # the article: 19.262 ms


def test_the_wheel_holds_every_package_of_the_source(wheel):
    """planner/cli/ (the command line, split into a package) was missing from pyproject's `packages`:
    the installed `planner` command had no `planner.cli`. Every folder of planner/ with an __init__.py
    must be in the wheel."""
    path, _ = wheel
    names = set(zipfile.ZipFile(path).namelist())
    for init in sorted((ROOT / "planner").rglob("__init__.py")):
        inside = init.relative_to(ROOT).as_posix()
        assert inside in names, f"{inside} is not in the wheel: add its package to pyproject.toml's packages"
