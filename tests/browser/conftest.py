"""A real Streamlit server for browser tests: ``start_streamlit(home)`` starts ``workbench/ui/app.py`` on
a free 127.0.0.1 port with its own WORKBENCH_HOME, waits for ``/_stcore/health`` and returns the base
URL; every server started is terminated (by its PID) when the test session ends. ``streamlit_server``
is one shared server with an empty store; tests that need their own store call the factory.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

try:  # a loaded 2-core CI machine renders Streamlit reruns slowly: wait longer than Playwright's 5 s
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)
except ImportError:  # pragma: no cover - playwright is a dev dependency
    pass

from workbench.cli import streamlit_command

ROOT = Path(__file__).resolve().parents[2]
HEALTH_TIMEOUT = 60.0

_servers: list[tuple[subprocess.Popen, Path]] = []


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def start_streamlit(home: Path) -> str:
    """Serve the workbench with ``home`` as WORKBENCH_HOME; returns ``http://127.0.0.1:<port>``."""
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = home / "streamlit.log"
    env = {**os.environ, "WORKBENCH_HOME": str(home), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    with log.open("wb") as out:
        proc = subprocess.Popen(streamlit_command(port), cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    _servers.append((proc, home))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + HEALTH_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        if _healthy(url):
            return url
        time.sleep(0.2)  # polling a starting server, not waiting on the page
    pytest.fail(f"streamlit not healthy after {HEALTH_TIMEOUT:.0f}s:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="session")
def streamlit_factory() -> Iterator[Callable[[Path], str]]:
    """The factory; servers it started are stopped at the end of the session."""
    yield start_streamlit
    while _servers:
        proc, _ = _servers.pop()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def streamlit_server(streamlit_factory, tmp_path_factory) -> str:
    """One shared server (empty store at first) for the whole browser test session."""
    return streamlit_factory(tmp_path_factory.mktemp("browser-home"))
