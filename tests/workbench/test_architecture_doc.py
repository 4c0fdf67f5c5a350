"""docs/architecture.md draws the folders as they are: its listing names every module and package
directly in ``workbench/`` (one a line) and every package of the engine, its "Services and pages"
section names every service module, and its floors are the import-linter layers contract's. A new
package, service or floor fails here until the page says where it is."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text("utf-8")


def _blocks() -> list[str]:
    return re.findall(r"^```\n(.*?)^```$", DOC, re.MULTILINE | re.DOTALL)


def _listing() -> str:
    (listing,) = [b for b in _blocks() if b.startswith(" pages/")]
    return listing


def _entries(listing: str, indent: int) -> list[str]:
    """The names that open a line at this indent (``name/`` or ``name.py``)."""
    return re.findall(rf"^ {{{indent}}}(\S+)", listing, re.MULTILINE)


def test_the_listing_names_every_module_and_package_of_workbench():
    """Architecture: each folder and module directly in workbench/ has its own line, and no line
    names one that is gone."""
    actual = {p.name + "/" if p.is_dir() else p.name for p in (ROOT / "workbench").iterdir()
              if p.name not in ("__pycache__", "__init__.py", "py.typed")}
    listing = _listing()
    workbench = listing[listing.index("\n workbench/\n"):listing.index("\n core/iris/")]
    assert set(_entries(workbench, 3)) == actual


def test_the_listing_names_the_top_level_folders():
    """Architecture: the pages, the workbench, the engine, the samples and the tests sit at the top
    of the checkout, as drawn."""
    top = _entries(_listing(), 1)
    assert top == ["pages/", "workbench/", "core/iris/", "sample_sessions/", "tests/"]
    assert all((ROOT / name).is_dir() for name in top)
    assert (ROOT / "workbench" / "pages").resolve() == ROOT / "pages"


def test_the_listing_names_every_package_of_the_engine():
    """Architecture: the engine's line names each of its packages."""
    listing = _listing()
    engine = listing[listing.index("\n core/iris/"):listing.index("\n sample_sessions/")]
    packages = sorted(p.parent.name for p in (ROOT / "core" / "iris").glob("*/__init__.py"))
    assert packages and [p for p in packages if not re.search(rf"\b{p}\b", engine)] == []


def test_every_service_module_is_named_in_services_and_pages():
    """Architecture: "Services and pages" names each module of workbench/services in backticks."""
    section = DOC[DOC.index("## Services and pages"):DOC.index("A page reads its widgets")]
    named = set(re.findall(r"`(\w+)`", section))
    modules = sorted(p.stem for p in (ROOT / "workbench" / "services").glob("*.py") if p.stem != "__init__")
    assert [m for m in modules if m not in named] == []


def test_the_floors_drawn_are_the_layers_contract():
    """Architecture: the floors of workbench drawn in the page are the layers of the exhaustive
    contract in pyproject.toml, in order."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c.get("containers") == ["workbench"]]
    (floors,) = [b for b in _blocks() if "↓" in b]
    drawn = [re.split(r"\s{2,}", line.strip())[0] for line in floors.splitlines()
             if line.strip() and line.strip() != "↓"]
    assert drawn == [*layers, "iris"]
