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


# Modules whose tests start servers, processes, kernels or whole-store replays (each test ≥ 0.3 s
# on 2 cores): ``-m "not slow and not browser"`` (``make test-fast``) leaves them out of the quick loop.
SLOW_MODULES = frozenset({
    "test_app_compaction", "test_app_configuration", "test_app_context", "test_app_failures",
    "test_app_links", "test_app_reduction", "test_app_session_switch", "test_app_sessions",
    "test_app_step_through", "test_app_templates", "test_app_templates_rerun", "test_app_truth",
    "test_app_usage", "test_batch", "test_faults", "test_fuzz_importers", "test_importers_bad_input",
    "test_install_wheel", "test_notebook_export", "test_notebook_example", "test_reduction_incremental",
    "test_replay_incremental", "test_summariser_choice", "test_summarisers", "test_summary_client",
    "test_app_templates_broken", "test_app_walkthrough", "test_fidelity_surfaces",
    "test_importers_openai_chat_linear", "test_input_edges", "test_live_watch",
    "test_one_figure_per_fact", "test_properties", "test_replay_keep_bodies",
    "test_replay_message_bound", "test_runner", "test_runner_real", "test_summary_bounds",
    "test_template_bounds", "test_url_params",
})


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
        elif item.path.stem in SLOW_MODULES:
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

