"""Install the lowest versions pyproject.toml allows into a fresh venv and run a smoke subset there.

pip has no "lowest" resolution, so this writes a constraints file pinning every direct dependency
(``[project] dependencies`` and the extras named with ``--extras``) to its lower bound, installs the
project with it (editable) from the package registry, and runs the given tests with the venv's
Python. The package list of the wheel is checked by tests/workbench/test_iris_facade.py.

    python scripts/lowest_deps.py                  # the default smoke subset
    python scripts/lowest_deps.py --keep /tmp/low  # keep the venv to look around
    python scripts/lowest_deps.py tests/test_x.py  # other tests

A dependency with no lower bound is an error: every requirement must say which version it needs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import tomllib
import venv
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]

#: Tests that exercise every dependency the installed package imports: the engine's goldens
#: (pydantic, pyyaml, jinja2, tiktoken), the store and the CLI (sqlite-utils, tqdm), the cost
#: and summary JSON (genai-prices), the notebook frames (pandas, pyarrow, duckdb, plotly), the
#: remote summariser (httpx, httpcore, tenacity) and one Streamlit page (streamlit).
SMOKE = (
    "tests/iris/test_pipeline_golden.py",
    "tests/workbench/test_truth_engine.py",
    "tests/workbench/test_cli_lists.py",
    "tests/workbench/test_notebook_frames.py",
    "tests/workbench/test_summary_client.py",
    "tests/workbench/test_app_sessions.py",
)

#: Installed besides the project to run the tests (not constrained: they are not the project's
#: dependencies).
TEST_TOOLS = ("pytest>=8", "hypothesis>=6.100", "opentelemetry-proto>=1.20", "polars>=1.0")


def lower_bounds(pyproject: Path, extras: tuple[str, ...]) -> list[str]:
    """``name==lower`` for each direct dependency (and each named extra's), in file order."""
    project = tomllib.loads(pyproject.read_text("utf-8"))["project"]
    raw = list(project["dependencies"])
    todo, seen = list(extras), set[str]()
    while todo:  # an extra may name others (``context-workbench[corpus]``)
        extra = todo.pop(0)
        if extra in seen:
            continue
        seen.add(extra)
        for text in project["optional-dependencies"][extra]:
            req = Requirement(text)
            if req.name == project["name"]:
                todo += sorted(req.extras)
            else:
                raw.append(text)
    pins: list[str] = []
    for text in raw:
        req = Requirement(text)
        lows = [s.version for s in req.specifier if s.operator in (">=", "==", "~=")]
        if not lows:
            raise SystemExit(f"pyproject.toml: {text!r} has no lower bound")
        pins.append(f"{req.name}=={lows[0]}")
    return pins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("tests", nargs="*", default=list(SMOKE))
    parser.add_argument("--extras", default="app", help="comma-separated extras to install (app)")
    parser.add_argument("--keep", type=Path, help="build the venv here and keep it")
    args = parser.parse_args(argv)
    extras = tuple(e for e in args.extras.split(",") if e)
    with tempfile.TemporaryDirectory(prefix="lowest-deps-") as scratch:
        where = args.keep or Path(scratch) / "venv"
        constraints = Path(scratch) / "constraints.txt"
        pins = lower_bounds(ROOT / "pyproject.toml", extras)
        constraints.write_text("\n".join(pins) + "\n", "utf-8")
        print("lowest allowed:", " ".join(pins), flush=True)
        if not (where / "bin" / "python").exists():
            venv.create(where, with_pip=True)
        py = str(where / "bin" / "python")
        spec = f"{ROOT}[{','.join(extras)}]" if extras else str(ROOT)
        # editable: the tests import the checkout's code; what differs is only the dependencies
        subprocess.run([py, "-m", "pip", "install", "-c", str(constraints), "-e", spec,
                        *TEST_TOOLS], check=True)
        return subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "--continue-on-collection-errors", *args.tests],
                              cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
