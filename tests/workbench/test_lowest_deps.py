"""Packaging truth (docs/architecture.md "Dependencies"): every dependency's lower bound in
pyproject.toml is a version the code runs on. The slow test installs exactly those lowest versions
into a fresh venv from the package registry (scripts/lowest_deps.py) and runs the smoke subset."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import lowest_deps  # pyright: ignore[reportMissingImports]  # scripts/ is on sys.path from the line above


def test_every_dependency_has_a_lower_bound_and_extras_are_followed():
    """Each requirement names the lowest version it needs, and the app extra brings its own
    extras' requirements (``context-workbench[corpus]``) into the pins."""
    pins = lowest_deps.lower_bounds(ROOT / "pyproject.toml", ("app",))
    names = [p.split("==")[0] for p in pins]
    assert len(names) == len(set(names))
    assert {"pydantic", "sqlite-utils", "streamlit", "pyarrow", "duckdb"} <= set(names)
    assert "sqlite-utils==4.0" in pins  # sqlite_utils.Migrations


def test_a_requirement_without_a_lower_bound_is_refused(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["pyyaml"]\n[project.optional-dependencies]\n', "utf-8")
    with pytest.raises(SystemExit, match="pyyaml"):
        lowest_deps.lower_bounds(tmp_path / "pyproject.toml", ())


def _registry_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
    except OSError:
        return False
    return True


@pytest.mark.slow
def test_the_lowest_allowed_versions_pass_the_smoke_tests(tmp_path: Path):
    """Every lower bound holds: a fresh venv with each direct dependency at its lowest allowed
    version runs the engine goldens, the truth engine, the CLI lists, the notebook frames, the
    summary client and the Sessions page."""
    if not _registry_reachable():
        pytest.skip("the package registry (pypi.org) is not reachable from here")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "lowest_deps.py"),
                             "--keep", str(tmp_path / "venv")], capture_output=True, text=True,
                            timeout=1800, check=False)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
