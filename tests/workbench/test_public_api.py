"""The explicit public API (STYLE.md 11, R-UI-8): ``iris.context``, ``iris.prompts`` and
``workbench`` each list a sorted ``__all__`` whose every name imports, and importing the engine or
the notebook API never pulls in Streamlit."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

MODULES = ("iris.context", "iris.prompts", "workbench")


@pytest.mark.parametrize("name", MODULES)
def test_r_ui_8_all_is_sorted_unique_and_importable(name):
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported)
    for symbol in exported:
        assert getattr(module, symbol) is not None, f"{name}.{symbol}"


def test_r_ui_8_star_import_gives_the_notebook_api():
    namespace: dict[str, object] = {}
    exec("from workbench import *", namespace)  # noqa: S102 - a star import needs a fresh namespace
    for symbol in ("load_session", "replay", "compare", "write_report", "NotebookReplay"):
        assert callable(namespace[symbol]), symbol


def test_r_ui_8_unknown_attribute_is_an_attribute_error():
    import workbench

    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        workbench.nonexistent  # noqa: B018
    assert "replay" in dir(workbench)


@pytest.mark.slow  # starts a process
def test_notebook_api_and_engine_never_import_streamlit():
    """core/iris never imports streamlit; neither does the notebook/report API."""
    code = ("import sys, iris.context, iris.prompts, iris.replay, workbench as wb\n"
            "wb.replay; wb.compare; wb.write_report; wb.open_store\n"
            "bad = sorted(m for m in sys.modules if m == 'streamlit' or m.startswith('streamlit.'))\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow  # starts a process
def test_importing_workbench_is_light():
    """``import workbench`` alone (what the CLI and pages do first) loads neither pandas nor plotly."""
    code = "import sys, workbench; print('pandas' in sys.modules, 'plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("package", ["workbench", "iris"])
def test_r_ui_8_type_checking_imports_are_the_lazy_names(package):
    """A lazily exported name is loaded from the module ``_HOMES`` names; the ``TYPE_CHECKING``
    imports that type checkers read and the literal ``__all__`` that ruff, the type checker and
    ``import *`` read (they accept no computed one) must say the same, so a name added to one list
    and not the others fails here, not in a user's editor."""
    import ast

    module = importlib.import_module(package)
    tree = ast.parse(Path(str(module.__file__)).read_text("utf-8"))
    (block,) = [node for node in tree.body if isinstance(node, ast.If)
                and getattr(node.test, "id", None) == "TYPE_CHECKING"]
    declared: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        base = package if node.level == 1 else ""
        home = ".".join(part for part in (base, node.module) if part)
        declared.update({alias.asname or alias.name: home for alias in node.names})
    homes = module._HOMES
    lazy = (homes if isinstance(next(iter(homes.values())), str)
            else {name: home for home, names in homes.items() for name in names})
    assert declared == lazy
    assert set(module.__all__) == set(lazy)
