"""The engine's package facade and packaging (docs/architecture.md): the seed's public names are
importable from ``iris`` and are the objects of their modules; ``import iris`` stays cheap; the
wheel ships ``py.typed`` so a type checker reads the packages' annotations."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import iris
import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_facade_name_is_its_modules_object():
    """R-BUILD-1, R-DYN-1: ``from iris import X`` gives the very object of X's module."""
    from iris import _HOMES  # pyright: ignore[reportPrivateUsage]

    assert sorted(iris.__all__) == sorted(n for names in _HOMES.values() for n in names)
    for module, names in _HOMES.items():
        for name in names:
            assert getattr(iris, name) is getattr(importlib.import_module(module), name), name
    assert "load_context_build_input" in dir(iris)


@pytest.mark.slow  # starts a process
def test_import_iris_loads_no_engine_module_and_keeps_the_replay_module():
    """``import iris`` imports none of the engine's modules until a name is used (only its small
    lazy-name helper, ``iris.lazy``), and ``iris.replay`` stays the runner's module (the facade
    does not shadow it)."""
    code = ("import sys, iris; loaded = sorted(m for m in sys.modules if m.startswith('iris.'));"
            "assert loaded == ['iris.lazy'], loaded;"
            "iris.Session; import iris.replay as r; assert r.__name__ == 'iris.replay'; "
            "assert callable(r.replay)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_unknown_name_is_an_attribute_error():
    try:
        iris.NoSuchName  # pyright: ignore[reportAttributeAccessIssue]  # noqa: B018
    except AttributeError as err:
        assert "NoSuchName" in str(err)
    else:
        raise AssertionError("iris.NoSuchName did not raise")


def test_py_typed_is_shipped():
    """Both packages carry the PEP 561 marker and list it as package data."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    package_data = data["tool"]["setuptools"]["package-data"]
    assert (ROOT / "core" / "iris" / "py.typed").is_file() and "py.typed" in package_data["iris"]
    assert (ROOT / "workbench" / "py.typed").is_file() and "py.typed" in package_data["workbench"]


def test_every_package_folder_is_in_the_wheel():
    """setuptools finds the packages (``[tool.setuptools.packages.find]``): every folder with an
    ``__init__.py`` under the engine and the workbench, the app's pages and the linked samples
    among them, is a package of the wheel (pipx, a CI install), and nothing outside them is."""
    from setuptools import find_namespace_packages

    find = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["packages"]["find"]
    found = {name for where in find["where"]
             for name in find_namespace_packages(where=str(ROOT / where), include=find["include"])}
    for root, prefix in ((ROOT / "core" / "iris", "iris"), (ROOT / "workbench", "workbench")):
        for init in root.rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                name = ".".join((prefix, *init.parent.relative_to(root).parts))
                assert name in found, f"{init.parent} is not found as package {name!r}"
    assert {"workbench.pages", "workbench.sample_sessions", "workbench.presets", "iris.data"} <= found
    assert not any(name.split(".")[0] not in {"iris", "workbench"} for name in found)
