"""Browser flow for the Templates page: edit a template, see the re-rendered output and the diff
(R-UI-4, R-PRM-3), through a real Streamlit server and Debian's Chromium."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def templates_server(tmp_path_factory):
    """Serve pages/templates.py alone (a page file is a valid Streamlit script) on a free port."""
    home = tmp_path_factory.mktemp("wbhome")
    port = _free_port()
    env = {**os.environ, "WORKBENCH_HOME": str(home), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "pages" / "templates.py"),
         "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                break
        except OSError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"streamlit did not start:\n{proc.stdout.read().decode(errors='replace')}")
        time.sleep(0.2)
    yield url, home
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_r_ui_4_edit_template_rerenders_and_shows_diff(templates_server, page: Page):
    url, home = templates_server
    page.goto(url)
    expect(page.get_by_text("This view uses the saved snapshot")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("## Goal").first).to_be_visible()

    editor = page.get_by_label("Template source")
    editor.fill("Checkpoint for {{ profile }} within {{ summary_max_tokens }} tokens")
    page.get_by_text("Diff against the saved template").click()  # blur: the edit reaches Streamlit

    expect(page.get_by_text("Checkpoint for continuation within 4800 tokens")).to_be_visible()
    expect(page.get_by_text("+Checkpoint for {{ profile }} within")).to_be_visible()
    expect(page.get_by_text("This view uses an edited snapshot")).to_be_visible()
    assert not (home / "workspace" / ".iris").exists()  # nothing written before Save

    page.get_by_role("button", name="Save to workspace").click()
    expect(page.get_by_text("This view uses the saved snapshot")).to_be_visible()
    saved = home / "workspace" / ".iris" / "prompts" / "compaction.j2"
    assert saved.read_text("utf-8").startswith("Checkpoint for {{ profile }}")
