"""Shared fixtures: an isolated WORKBENCH_HOME per test, the shared real sessions, browser set-up."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("WORKBENCH_SHARED", ROOT.parent / "shared"))
REAL = SHARED / "real-sessions"
SAMPLES = ROOT / "sample_sessions"

CHROME_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture(autouse=True)
def workbench_home(tmp_path, monkeypatch):
    """Every test gets its own data directory (store, artifacts)."""
    home = tmp_path / "wbhome"
    monkeypatch.setenv("WORKBENCH_HOME", str(home))
    return home


@pytest.fixture
def real_sessions() -> Path:
    if not REAL.is_dir():
        pytest.skip("../shared/real-sessions is absent")
    return REAL


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    # Chromium puts its singleton socket in TMPDIR and aborts when that path exceeds the 108-byte
    # Unix-socket limit (the suite also runs under a long TMPDIR): give it a short one then.
    env = dict(os.environ)
    if len(os.fsencode(tempfile.gettempdir())) > 60:
        env["TMPDIR"] = tempfile.mkdtemp(prefix="chr-", dir="/tmp")
    return {**browser_type_launch_args,
            "executable_path": os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
            "args": CHROME_ARGS, "env": env}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 1400}}


# A test that starts a server, a process, a kernel or a whole-store replay (each ≥ 0.3 s on 2 cores)
# is marked ``slow`` in its own module (``pytestmark = pytest.mark.slow``) or on the test itself:
# ``-m "not slow and not browser"`` (``make test-fast``) leaves it out of the quick loop. A test
# that is not so marked and starts a process fails (``_processes_only_in_slow_tests``), so the
# mark cannot drift from what the tests do.


class ProcessInFastTest(AssertionError):
    """A test outside ``slow`` tried to start a process."""


@pytest.fixture(autouse=True)
def _processes_only_in_slow_tests(request, monkeypatch):
    if request.node.get_closest_marker("slow") is not None:
        return
    import multiprocessing.process
    import subprocess

    def refuse(*_args, **_kwargs):
        raise ProcessInFastTest(
            f"{request.node.nodeid} starts a process: mark it slow "
            "(pytestmark = pytest.mark.slow in its module, or @pytest.mark.slow on the test)")

    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)


def _is_browser(item: pytest.Item) -> bool:
    return "/browser/" in str(item.path).replace("\\", "/")


def pytest_collection_modifyitems(config, items):
    """Mark browser and slow tests, and run the browser tests last: pytest-playwright's sync API
    keeps an asyncio loop running in the main thread for the rest of the session, and tests that
    call ``asyncio.run`` (dynamic context sources, replay inside a running loop) must not start
    inside it."""
    for item in items:
        if _is_browser(item):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)
    items.sort(key=_is_browser)


@pytest.fixture(scope="session")
def long_store(tmp_path_factory) -> Path:
    """A store folder with the long sample and its default replays, built once per test run;
    tests copy it into their own WORKBENCH_HOME with ``store_helpers.copy_store``."""
    from workbench.services.replay import ensure_default_replay
    from workbench.storage.store import open_store

    folder = tmp_path_factory.mktemp("long-store")
    with open_store(folder / "workbench.db") as store:
        ensure_default_replay(store, store.import_file(SAMPLES / "long_session.jsonl").session_id)
    return folder

