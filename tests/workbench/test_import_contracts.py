"""The import contracts forbid by default (docs/architecture.md): a Streamlit or SQLite import, or a
new module off the workbench's floors, breaks `lint-imports` wherever it is added, not only in
modules a contract lists by name. Each test runs the real `lint-imports` on a temporary copy of
the code with one line injected."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def _copy_tree(target: Path) -> Path:
    """The packages the contracts cover and the configuration, without caches."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("workbench", "core/iris"):
        shutil.copytree(ROOT / part, target / part, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    return target


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    # The copy comes first on the path, ahead of the checkout the venv has installed in editable mode.
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'core'}"}
    return subprocess.run([str(LINT), "--no-cache"], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def _inject(tree: Path, module: str, line: str) -> None:
    path = tree / module
    path.write_text(path.read_text("utf-8") + f"\n{line}\n", "utf-8")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy_tree(tmp_path_factory.mktemp("pristine"))


@pytest.mark.slow
def test_contracts_hold_on_the_copy(pristine: Path):
    """Architecture (docs/architecture.md): the copy the other tests change is linted from itself and keeps every contract."""
    result = _lint(pristine)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("module", "line", "contract"), [
    ("workbench/views/colors.py", "import streamlit",
     "Only workbench.ui and the pages import Streamlit"),
    ("workbench/records.py", "import streamlit.components.v1",
     "Only workbench.ui and the pages import Streamlit"),
    ("workbench/corpus/tables.py", "import sqlite3", "Only the storage package talks to SQLite"),
    ("workbench/views/colors.py", "from iris.safe_files import write_file", "Views do no file or network I/O"),
    ("workbench/views/otlp_export.py", "import httpx", "Views do no file or network I/O"),
    ("workbench/pages/usage.py", "import sqlite_utils", "Only the storage package talks to SQLite"),
    ("workbench/pages/usage.py", "import workbench.storage.store", "Pages import no storage"),
    ("workbench/pages/sessions.py", "from workbench.storage import open_store", "Pages import no storage"),
    ("core/iris/tokens.py", "import pandas", "The engine imports no workbench, Streamlit, SQLite or pandas"),
    ("core/iris/compaction/cut.py", "import pandas.api.types",
     "The engine imports no workbench, Streamlit, SQLite or pandas"),
    ("workbench/views/colors.py", "import workbench.ui.usage",
     "Workbench layers: faces, services, views, analysis, pricing, storage, records"),
    ("workbench/storage/cache.py", "import workbench.services.replay",
     "Workbench layers: faces, services, views, analysis, pricing, storage, records"),
    ("workbench/corpus/batch.py", "import workbench.notebook",
     "Workbench layers: faces, services, views, analysis, pricing, storage, records"),
    ("workbench/ui/state.py", "import workbench.ui.usage",
     "App layers: serve, entry point, page parts, session state"),
    ("workbench/ui/usage.py", "import workbench.pages.usage",
     "Workbench layers: faces, services, views, analysis, pricing, storage, records"),
])
def test_an_injected_import_breaks_its_contract(tmp_path: Path, module: str, line: str,
                                                       contract: str):
    """Architecture (docs/architecture.md): Streamlit outside workbench.ui (and the app's glue), SQLite outside
    workbench.storage, or an import up the workbench's floors fails lint-imports, naming the
    contract, in modules no contract names one by one."""
    tree = _copy_tree(tmp_path)
    _inject(tree, module, line)
    result = _lint(tree)
    assert result.returncode != 0
    assert f"{contract} BROKEN" in result.stdout, result.stdout


@pytest.mark.slow
def test_a_new_module_must_be_placed_on_a_floor(tmp_path: Path):
    """Architecture (docs/architecture.md): a new module directly in workbench/ fails lint-imports until the layers contract
    places it (the contract is exhaustive)."""
    tree = _copy_tree(tmp_path)
    (tree / "workbench" / "brand_new.py").write_text('"""A module no contract names yet."""\n', "utf-8")
    result = _lint(tree)
    assert result.returncode != 0
    assert "workbench.brand_new" in result.stdout


@pytest.mark.slow
def test_a_new_app_module_must_be_placed_on_an_app_floor(tmp_path: Path):
    """Architecture (docs/architecture.md): a new module in workbench/ui fails lint-imports until the
    app's layers contract places it (that contract is exhaustive too)."""
    tree = _copy_tree(tmp_path)
    (tree / "workbench" / "ui" / "brand_new.py").write_text('"""A module no contract names yet."""\n', "utf-8")
    result = _lint(tree)
    assert result.returncode != 0
    assert "workbench.ui.brand_new" in result.stdout


def test_no_two_modules_import_each_other():
    """Architecture (docs/architecture.md): no two modules of the engine or the workbench import
    each other (a type both need lives in a module below both)."""
    import grimp

    graph = grimp.build_graph("iris", "workbench")
    circles = sorted((a, b) for a in graph.modules for b in graph.find_modules_directly_imported_by(a)
                     if a < b and a in graph.find_modules_directly_imported_by(b))
    assert circles == []
