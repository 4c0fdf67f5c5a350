"""The engine's import name: ``import iris`` offers its API and nothing else, and a second package
named ``iris`` (SciTools Iris) on the path is named as the conflict it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import iris
import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_dir_of_iris_is_its_api():
    """R-UI-8: ``dir(iris)`` lists the public names and the version, not the module's helpers
    (``TYPE_CHECKING``, ``annotations``, ``lazy_attributes``, the ``lazy`` module)."""
    assert set(dir(iris)) == {*iris.__all__, "__version__"}
    for helper in ("TYPE_CHECKING", "annotations", "lazy_attributes"):
        assert not hasattr(iris, helper), helper
    assert iris.Session.__module__ == "iris.session"  # the API itself still loads on use


@pytest.mark.slow
def test_another_iris_first_on_the_path_is_named_as_the_conflict(tmp_path: Path):
    """With SciTools Iris's package first on ``sys.path`` (its import needs ``cf_units``),
    ``import workbench`` and the ``workbench`` command say which package won and what to do,
    instead of ``ModuleNotFoundError: No module named 'cf_units'`` alone."""
    other = tmp_path / "site" / "iris"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("import cf_units\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run([sys.executable, "-c", "import workbench"], capture_output=True,
                          check=False, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert f"another package named 'iris' at {other / '__init__.py'}" in last
    assert "cf_units" in last and "SciTools Iris" in last and "virtual environment" in last
    ours = subprocess.run([sys.executable, "-c", "import workbench, iris; print(iris.__file__)"],
                          check=False, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert ours.returncode == 0 and ours.stdout.strip() == str(ROOT / "core" / "iris" / "__init__.py")
