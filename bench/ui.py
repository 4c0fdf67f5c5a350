"""UI benchmark: the step-through page of the 2,000-step replay in a real browser.

Starts the real app (``workbench/ui/app.py`` via ``streamlit run``) on a store prepared by the replay
case, opens it in Debian's chromium through playwright, and measures

* first render: from navigation to the step-through page until its script run has finished
  (header of the step shown and ``stApp`` reports ``notRunning``), on a freshly started server
  (cold) and again on new page loads (warm);
* next step: from the click on "▶" until the new step's header is shown, and until the run has
  finished (everything of the new step rendered).

Run as ``python bench/ui.py HOME SESSION_ID REPLAY_ID STEPS OUT.json``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import Stats


def _chrome_args() -> list[str]:
    """The launch arguments the browser tests use (tests/conftest.py, Debian chromium)."""
    conftest = ROOT / "tests" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_wb_test_conftest", conftest)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"{conftest}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.CHROME_ARGS)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(home: Path) -> tuple[subprocess.Popen, str]:
    from workbench.cli import streamlit_command

    port = _free_port()
    env = {**os.environ, "WORKBENCH_HOME": str(home), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log = (home / "bench-streamlit.log").open("wb")
    proc = subprocess.Popen(streamlit_command(port), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc, url
        except OSError:
            time.sleep(0.2)  # polling a starting server
    proc.terminate()
    raise SystemExit("streamlit did not become healthy")


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def _visit(page, url: str, step: int, last: int) -> float:
    start = time.perf_counter()
    page.goto(url)
    page.get_by_text(f"Step {step} of {last}", exact=False).first.wait_for(timeout=180_000)
    page.locator(IDLE).wait_for(timeout=180_000)
    return time.perf_counter() - start


def _next(page, step: int, last: int) -> tuple[float, float]:
    """(seconds until the new header shows, seconds until the run has finished)."""
    start = time.perf_counter()
    page.get_by_role("button", name="▶").click()
    page.get_by_text(f"Step {step + 1} of {last}", exact=False).first.wait_for(timeout=60_000)
    shown = time.perf_counter() - start
    page.locator(IDLE).wait_for(timeout=60_000)
    return shown, time.perf_counter() - start


def server_side(home: Path, session_id: str, replay_id: str, steps: int, clicks: int = 6) -> dict:
    """The same step-through runs without a browser (Streamlit's AppTest): script time only."""
    os.environ["WORKBENCH_HOME"] = str(home)
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=300)
    at.query_params.update({"session": session_id, "replay": replay_id, "step": str(steps * 3 // 4)})
    at.run()
    at.switch_page("../pages/step_through.py")
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    runs = []
    for _ in range(clicks):
        button = next(b for b in at.button if b.label == "▶")
        start = time.perf_counter()
        button.click().run()
        runs.append(time.perf_counter() - start)
    return {"server_first": first, "server_next": Stats.of(runs).as_dict(), "code_blocks": len(at.code)}


def measure(home: Path, session_id: str, replay_id: str, steps: int, clicks: int = 8) -> dict:
    from playwright.sync_api import sync_playwright

    last = steps - 1
    proc, url = _start(home)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=_chrome_args())
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            base = f"{url}/step-through?session={session_id}&replay={replay_id}"
            cold = _visit(page, f"{base}&step=0", 0, last)
            warm = [_visit(browser.new_page(), f"{base}&step={s}", s, last) for s in (0, steps // 2, max(steps - 100, 0))]
            shown, done = [], []
            for start_step in (0, max(steps * 3 // 4 - clicks, 0)):
                _visit(page, f"{base}&step={start_step}", start_step, last)
                for k in range(clicks // 2):
                    a, b = _next(page, start_step + k, last)
                    shown.append(a)
                    done.append(b)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return {**server_side(home, session_id, replay_id, steps), "cold_first_render": cold, "warm_first_render": Stats.of(warm).as_dict(),
            "next_shown": Stats.of(shown).as_dict(), "next_done": Stats.of(done).as_dict()}


if __name__ == "__main__":
    home, sid, rid, n, out = sys.argv[1:6]
    Path(out).write_text(json.dumps(measure(Path(home), sid, rid, int(n)), indent=1), encoding="utf-8")
