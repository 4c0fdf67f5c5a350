"""UI benchmark on a real session: the app served by ``streamlit run`` and driven in Debian's
chromium through playwright.

The store is prepared first (untimed): the real transcript imported and its default replays made
(``workbench replay --defaults``). Then, on a freshly started server:

* first load: the Sessions page with the session selected, until the script run has finished;
* first Step-through: the step-through page at step 0; then "▶" four times (each until the new
  step's header shows and the run has finished);
* Messages: the page, then four page flips (page number typed, until the flipped page's first
  message shows and the run has finished);
* the Usage, Compaction and Reduction pages, each opened once.

Each figure is wall time in the browser, next to the server process's CPU time in that interval
(``/proc/PID/stat``) and the browser renderer's busy time (CDP ``TaskDuration``): their sum is
the work one interaction costs, which other load on the machine changes much less than the wall
time.

Run as ``python bench/ui_real.py TRANSCRIPT OUT.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ui import _start  # the same server start as the synthetic UI case

ROOT = Path(__file__).resolve().parents[1]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def _chrome_args() -> list[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from ui import _chrome_args as args

    return args()


def _cpu(pid: int) -> float:
    """User + system CPU seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _prepare(transcript: str, home: Path) -> tuple[str, int, float]:
    """Import the transcript and make its default replays; ``(session id, steps, seconds)``."""
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    started = time.perf_counter()
    cli = [sys.executable, "-m", "workbench.cli"]
    subprocess.run([*cli, "import", "--quiet", transcript], env=env, check=True, cwd=ROOT)
    subprocess.run([*cli, "replay", "--defaults"], env=env, check=True, cwd=ROOT, capture_output=True)
    listed = subprocess.run([*cli, "replays", "--json"], env=env, check=True, cwd=ROOT,
                            capture_output=True, text=True)
    default = next(r for r in json.loads(listed.stdout) if r["name"] == "default")
    return default["session_id"], default["steps"], time.perf_counter() - started


class _Timer:
    def __init__(self, page, pid: int) -> None:
        self.page, self.pid = page, pid
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")

    def _browser_busy(self) -> float:
        """Seconds the page's renderer main thread has been busy (CDP ``TaskDuration``)."""
        metrics = self.cdp.send("Performance.getMetrics")["metrics"]
        return next(m["value"] for m in metrics if m["name"] == "TaskDuration")

    def __call__(self, action: Callable[[], object], text: str | None = None) -> dict[str, float]:
        """Wall seconds from ``action`` until ``text`` shows and the run is over, with the server's
        CPU seconds and the browser renderer's busy seconds in that interval."""
        self.page.evaluate("window.__wbSameDocument = true")
        cpu, busy, start = _cpu(self.pid), self._browser_busy(), time.perf_counter()
        action()
        if text:
            self.page.get_by_text(text, exact=False).first.wait_for(timeout=180_000)
        self.page.wait_for_timeout(100)  # the run state flips to "running" shortly after an action
        self.page.locator(IDLE).wait_for(timeout=180_000)
        wall = time.perf_counter() - start
        after = self._browser_busy()
        # A navigation (page.goto) starts a new document whose TaskDuration counts from zero: all
        # of it is this interval's (subtracting the old document's total gave 0).
        navigated = not self.page.evaluate("window.__wbSameDocument === true")
        return {"wall": wall, "server_cpu": _cpu(self.pid) - cpu,
                "browser_busy": after if navigated else max(0.0, after - busy)}


def _drive(page, timer: _Timer, url: str, sid: str, steps: int) -> dict:
    out: dict = {"first_load": timer(lambda: page.goto(f"{url}/?session={sid}"), "Sessions")}
    out["first_step_through"] = timer(lambda: page.goto(f"{url}/step-through?session={sid}&step=0"),
                                      f"Step 0 of {steps - 1}")
    out["next_step"] = [timer(lambda: page.get_by_role("button", name="▶").click(),
                              f"Step {k + 1} of {steps - 1}") for k in range(4)]
    out["messages_first"] = timer(lambda: page.goto(f"{url}/messages?session={sid}"), "Page (of")
    box = page.get_by_label("Page (of", exact=False)
    label = page.get_by_text("Page (of", exact=False).first.inner_text()  # "Page (of N, S messages each)"
    size = int(label.split(",")[1].split()[0])
    out["messages_page_size"] = size
    out["messages_flip"] = [timer(lambda k=k: (box.fill(str(k + 2)), box.press("Enter")),
                                  f"#{(k + 1) * size} ·") for k in range(4)]
    out["pages"] = {name: timer(lambda name=name: page.goto(f"{url}/{name}?session={sid}"))
                    for name in ("usage", "compaction", "reduction")}
    return out


def measure(transcript: str) -> dict:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-ui-real-") as tmp:
        home = Path(tmp)
        sid, steps, prepared = _prepare(transcript, home)
        proc, url = _start(home)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=_chrome_args())
                page = browser.new_page(viewport={"width": 1280, "height": 1400})
                out = _drive(page, _Timer(page, proc.pid), url, sid, steps)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return {"transcript": Path(transcript).name, "steps": steps, "prepare_seconds": prepared, **out}


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(json.dumps(measure(sys.argv[1]), indent=1), encoding="utf-8")
