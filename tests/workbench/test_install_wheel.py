"""A normal (non-editable) install works outside a checkout: the app opens and the notebook runs.

The wheel is built from this repository and installed with ``--no-deps`` into a fresh virtual
environment in a temporary folder; the dependencies come from the test's own environment through a
``.pth`` line (so the test needs no network). Everything then runs with that folder as the working
directory, so nothing can be found through the checkout: the pages, the bundled samples, the prompt
defaults and the presets must all come from the wheel.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """Build the wheel, install it into a new venv outside the repository; return paths and env."""
    base = tmp_path_factory.mktemp("wheel-install")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["WORKBENCH_HOME"] = str(base / "home")
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    _run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
          "-q", "-w", str(base / "dist")], cwd=base, env=env)
    wheel = next((base / "dist").glob("context_workbench-*.whl"))
    target = base / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
          str(wheel)], cwd=base, env=env)
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=base, env=env).strip())
    # The dependencies (not this project) from the test's environment, after the venv's own site.
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return {"base": base, "python": python, "bin": target / "bin", "env": env, "wheel": wheel}


def test_the_wheel_carries_pages_samples_and_defaults(installed):
    import zipfile

    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    for page in ("sessions.py", "step_through.py", "usage.py", "templates.py"):
        assert f"workbench/pages/{page}" in names
    assert "workbench/sample_sessions/long_session.jsonl" in names
    assert "workbench/sample_sessions/long_session.context.yaml" in names
    assert any(n.startswith("iris/prompts/defaults/") and n.endswith(".j2") for n in names)
    assert not any(n.startswith(("pages/", "workbench/ui/pages/", "sample_sessions/", "tests/"))
               for n in names)


def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    out = _run([str(installed["python"]), "-c",
                "import workbench, iris, workbench.pages as p; print(workbench.__file__, iris.__file__, p.__file__, sep='\\n')"],
               cwd=installed["base"], env=installed["env"])
    for path in out.splitlines():
        assert path.startswith(str(installed["base"] / "venv")), path


def test_the_installed_app_opens_every_page_without_an_exception(installed):
    script = (
        "import pathlib, importlib.util\n"
        "from streamlit.testing.v1 import AppTest\n"
        "app = pathlib.Path(importlib.util.find_spec('workbench.ui.app').origin)\n"
        "at = AppTest.from_file(str(app), default_timeout=60).run()\n"
        "assert not at.exception, [e.value for e in at.exception]\n"
        "print('ok', len(at.title) + len(at.markdown))\n"
    )
    out = _run([str(installed["python"]), "-c", script], cwd=installed["base"], env=installed["env"])
    assert out.startswith("ok")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_workbench_run_serves_the_app_from_the_wheel(installed):
    port = _free_port()
    proc = subprocess.Popen([str(installed["bin"] / "workbench"), "run", "--port", str(port)],
                            cwd=installed["base"], env=installed["env"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    try:
        deadline = time.monotonic() + 60
        body = ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read().decode()
                break
            except OSError:
                time.sleep(0.3)
        assert body == "ok", proc.stdout.read() if proc.poll() is not None else "no answer in 60 s"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_the_shipped_notebook_runs_in_a_kernel_of_the_installed_package(installed):
    script = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        f"nb = nbformat.read({str(NOTEBOOK)!r}, as_version=4)\n"
        "NotebookClient(nb, timeout=240, kernel_name='python3', resources={'metadata': {'path': '.'}}).execute()\n"
        "errors = [o for c in nb.cells if c.cell_type == 'code' for o in c.outputs if o.output_type == 'error']\n"
        "shown = sum(1 for c in nb.cells if c.cell_type == 'code' for o in c.outputs\n"
        "            if o.output_type in ('execute_result', 'display_data'))\n"
        "print(len(errors), shown)\n"
    )
    out = _run([str(installed["python"]), "-c", script], cwd=installed["base"], env=installed["env"],
               timeout=400)
    errors, shown = (int(x) for x in out.split()[-2:])
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    assert errors == 0
    assert shown >= len(cells) - 2


def test_r_ui_9_wheel_carries_the_report_plotly_bundle(installed):
    """R-UI-9: the plotly.js bundle the HTML report inlines, and its licence, are in the wheel
    (an installed `workbench report` reads it from the package)."""
    import zipfile

    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    assert {"workbench/assets/plotly-basic.min.js", "workbench/assets/plotly-basic.LICENSE",
            "workbench/assets/NOTICE.md"} <= names
    code = "from workbench.report import plotly_bundle; print(len(plotly_bundle()))"
    out = _run([str(installed["python"]), "-c", code], cwd=installed["base"], env=installed["env"])
    assert int(out) > 1_000_000
