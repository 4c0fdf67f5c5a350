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

ROOT = Path(__file__).resolve().parents[1]


def test_every_facade_name_is_its_modules_object():
    """R-BUILD-1, R-DYN-1: ``from iris import X`` gives the very object of X's module."""
    from iris import _HOMES  # pyright: ignore[reportPrivateUsage]

    assert sorted(iris.__all__) == sorted(n for names in _HOMES.values() for n in names)
    for module, names in _HOMES.items():
        for name in names:
            assert getattr(iris, name) is getattr(importlib.import_module(module), name), name
    assert "load_context_build_input" in dir(iris)


def test_import_iris_loads_no_engine_module_and_keeps_the_replay_module():
    """``import iris`` imports none of the engine's modules until a name is used, and
    ``iris.replay`` stays the runner's module (the facade does not shadow it)."""
    code = ("import sys, iris; assert not [m for m in sys.modules if m.startswith('iris.')], "
            "sorted(m for m in sys.modules if m.startswith('iris.'));"
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
    """Each folder with an ``__init__.py`` under the installed roots is listed in
    ``[tool.setuptools] packages``, so a wheel (pipx, a CI install) holds every module."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    for package, folder in setuptools["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            parts = init.parent.relative_to(ROOT / folder).parts
            name = ".".join((package, *parts))
            if any(name.startswith(f"{other}.") or name == other
                   for other in setuptools["package-dir"] if other != package and
                   other.startswith(f"{package}.")):
                continue  # a folder mapped under another name (pages, sample_sessions)
            assert name in listed, f"{init.parent} is not listed as package {name!r}"
