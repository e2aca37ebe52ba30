"""A non-editable install works from any directory: the wheel carries the
grammar, the report templates and the library."""

import os
import subprocess
import sys
import zipfile

import pytest
from conftest import ROOT, TOKEN_COST


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (path,) = out.glob("planner-*.whl")
    return path


def test_wheel_ships_data_files(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "planner/grammar/plan.lark" in names
    assert "planner/templates/report.md.j2" in names
    assert "planner/library/hardware/h100_sxm.plan" in names
    assert "planner/library/llm/roofline.plan" in names
    assert "planner/library/models/llama3_8b.plan" in names
    assert "planner/library/hardware/b200.plan" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "planner = planner.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_runs_from_another_directory(wheel, tmp_path):
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
