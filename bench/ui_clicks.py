"""UI benchmark of the first clicks on a real session: the six interactions of the "first click"
figures, each in the real app (``streamlit run``) in Debian's chromium through playwright.

On a store prepared like ``bench/ui_real.py``'s (the real transcript imported and its default
replays made, untimed; or an existing ``WORKBENCH_HOME`` given as the third argument), on a freshly
started server:

* usage: the Usage page opened by its address (a new document, the first chart of the document);
* timeline / breakdown: on the Step-through page, the step timeline expander opened, then the
  context breakdown expander;
* messages_from_page_list: the "Messages" entry of the sidebar's page list clicked from the
  Step-through page (until the Messages page's paging box shows);
* discard: on the Templates page, the compaction template edited, then "Discard edit";
* messages_by_address: the Messages page opened by a link's address (``?session=…&message=3``, a
  new document, as a link from a table opens it);
* long_sample: on the long sample's ``budget 96k`` replay (it compacts), a decision's "Open here"
  message link in Step-through's Why panel (messages_by_link), then the Templates page: Discard
  edit and "Re-run the whole replay", next to that replay's own CPU (``replay_and_save`` once more
  in a warm process).

Each figure is ``ui_real._Timer``'s: wall time, the server's CPU and the renderer's busy time;
an interaction that shows a chart lasts until the chart is drawn.

Run as ``python bench/ui_clicks.py TRANSCRIPT OUT.json [HOME]``; ``BENCH_UI_CLICKS_REPEATS`` fresh
servers (3) per figure, the median reported.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ui import _start
from ui_real import ROOT, _chrome_args, _prepare, _Timer

_EXPANDER = '[data-testid="stExpander"] summary'
#: A drawn chart, plotly's or Vega-Lite's (the script run ends before the browser has drawn it).
_CHART = '[data-testid="stPlotlyChart"] .main-svg, [data-testid="stVegaLiteChart"] svg.marks'


def _drawn(scope, action):
    """``action``, then wait until a chart inside ``scope`` is drawn."""
    def run() -> None:
        action()
        scope().locator(_CHART).first.wait_for(timeout=180_000)
    return run


def _drive(page, timer: _Timer, url: str, sid: str, steps: int) -> dict:
    out: dict = {}
    page.goto(f"{url}/?session={sid}")
    page.get_by_text("Sessions", exact=False).first.wait_for(timeout=180_000)
    out["usage"] = timer(_drawn(lambda: page, lambda: page.goto(f"{url}/usage?session={sid}")),
                         "Per step")
    timer(lambda: page.goto(f"{url}/step-through?session={sid}&step=1"), f"Step 1 of {steps - 1}")

    def box(title: str):
        return lambda: page.get_by_test_id("stExpander").filter(has_text=title)
    out["timeline"] = timer(_drawn(box("Step timeline"), lambda: page.locator(
        _EXPANDER, has_text="Step timeline").click()), "click a bar")
    out["breakdown"] = timer(_drawn(box("What this request"), lambda: page.locator(
        _EXPANDER, has_text="What this request").click()), "The parts add up")
    out["messages_from_page_list"] = timer(
        lambda: page.get_by_test_id("stSidebarNav").get_by_text("Messages", exact=True).click(),
        "Page (of")
    out["messages_by_address"] = timer(lambda: page.goto(f"{url}/messages?session={sid}&message=3"),
                                       "Page (of")
    out.update(_templates(page, timer, f"{url}/templates?session={sid}"))
    return out


def _message_link(page, timer: _Timer, address: str) -> dict:
    """A decision's "Open here" link in the Why panel clicked (the Messages page in the same
    document) until the Messages page shows the linked message."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    timer(lambda: page.goto(address), "Step 20 of")
    stage = page.get_by_test_id("stExpander").filter(has=page.get_by_test_id("stPageLink")).first
    try:
        stage.wait_for(state="attached", timeout=30_000)
    except PlaywrightTimeout:  # no in-app message link (an older tree): nothing to measure
        return {}
    link = stage.get_by_test_id("stPageLink").locator("a").first
    if not link.is_visible():
        stage.locator("summary").click()
    link.wait_for(timeout=180_000)
    return timer(link.click, "Opened from a link to message")


def _templates(page, timer: _Timer, address: str) -> dict:
    out: dict = {}
    timer(lambda: page.goto(address), "Re-run with the edited")
    editor = page.get_by_label("Template source")
    editor.fill(editor.input_value() + "\nALWAYS MENTION PENGUINS.\n")
    page.get_by_text("Diff against the saved template").click()  # blur: the edit reaches Streamlit
    page.get_by_text("This view uses an edited snapshot").wait_for(timeout=180_000)
    page.wait_for_timeout(100)
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for()
    out["discard"] = timer(lambda: page.get_by_role("button", name="Discard edit").click(),
                           "This view uses the saved snapshot")
    button = page.get_by_role("button", name="Re-run the whole replay")
    if button.count() and button.is_enabled():  # only a replay with a compaction step re-runs
        out["rerun_all"] = timer(_drawn(lambda: page, button.click), "Save edited replay")
    return out


_REPLAY = """
import json, resource, sys
from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
with open_store() as store:
    sid = store.import_file(sys.argv[1]).session_id
    info, _ = replay_and_save(store, sid, name=BUDGET_REPLAY_NAME, config=budget_96k_config())
    start = cpu()
    replay_and_save(store, sid, name="again", config=budget_96k_config())
    print(json.dumps({"session": sid, "replay": info.id, "replay_cpu": cpu() - start}))
"""


#: Fresh servers (and browsers) each interaction is measured on; each figure is their median.
REPEATS = int(os.environ.get("BENCH_UI_CLICKS_REPEATS", "3"))


def _fresh(home: Path, drive) -> dict:
    """``drive(page, timer, url)`` on a freshly started server in a new browser."""
    from playwright.sync_api import sync_playwright

    proc, url = _start(home)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=_chrome_args())
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            out = drive(page, _Timer(page, proc.pid), url)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return out


def _runs(results: list[dict]) -> dict:
    """Each interaction's figures over the runs (a list per interaction)."""
    return {key: [r[key] for r in results if r.get(key)] for key in results[0]}


def rerun_case(home: Path) -> dict:
    """The long sample's ``budget 96k`` replay (it compacts): a decision's message link, then the
    Templates page's Discard edit and "Re-run the whole replay", next to the same replay's own
    CPU in a warm process."""
    import subprocess

    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    made = json.loads(subprocess.run(
        [sys.executable, "-c", _REPLAY, str(ROOT / "sample_sessions" / "long_session.jsonl")],
        env=env, check=True, capture_output=True, text=True, cwd=ROOT).stdout)
    query = f"session={made['session']}&replay={made['replay']}"

    def drive(page, timer: _Timer, url: str) -> dict:
        out = {"messages_by_link": _message_link(page, timer, f"{url}/step-through?{query}&step=20")}
        out.update(_templates(page, timer, f"{url}/templates?{query}"))
        return out
    return {"replay_cpu": made["replay_cpu"], **_runs([_fresh(home, drive) for _ in range(REPEATS)])}


def measure(transcript: str, home: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-ui-clicks-") as tmp:
        where = Path(home or tmp)
        if home is None:
            sid, steps, _ = _prepare(transcript, where)
        else:
            sid, steps = _default(where)
        out = _runs([_fresh(where, lambda page, timer, url: _drive(page, timer, url, sid, steps))
                     for _ in range(REPEATS)])
        (Path(tmp) / "long").mkdir()
        out["long_sample"] = rerun_case(Path(tmp) / "long")
    return {"transcript": Path(transcript).name, "steps": steps, "repeats": REPEATS, **out}


def _default(home: Path) -> tuple[str, int]:
    import subprocess

    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    listed = subprocess.run([sys.executable, "-m", "workbench.cli", "replays", "--json"], env=env,
                            check=True, capture_output=True, text=True)
    default = next(r for r in json.loads(listed.stdout) if r["name"] == "default")
    return default["session_id"], default["steps"]


if __name__ == "__main__":
    result = measure(sys.argv[1], sys.argv[3] if len(sys.argv) > 3 else None)
    Path(sys.argv[2]).write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps(result, indent=1))
