"""Regenerate the README screenshots from the real app, driven through a real browser.

    .venv/bin/python scripts/screenshots.py            # writes docs/screenshots/*.png
    .venv/bin/python scripts/screenshots.py --only usage --theme dark

The script imports the bundled samples into a throw-away WORKBENCH_HOME, makes their replays
(``default`` and, for the long session, ``budget 96k`` which compacts), serves ``workbench/ui/app.py``
with Streamlit (once per theme: light, then dark), opens each view by its URL query
(``?session=…&replay=…&step=…``, as a user's link would) and saves the viewport at 1280x900.
PNGs are reduced to a 256-colour palette (UI screenshots have few colours) to keep the repository
small. Needs Debian's chromium (``/usr/bin/chromium`` or ``$CHROMIUM_PATH``); no network.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import Page, ViewportSize, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
SIZE: ViewportSize = {"width": 1280, "height": 900}
CHROME_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", "--disable-quic"]
WAIT = 90_000


def prepare_store(home: Path) -> dict[str, str]:
    """Import the samples, make their replays; returns the ids and the step a view should open."""
    from workbench.services.imports import bundled_samples
    from workbench.services.replay import BUDGET_REPLAY_NAME, ensure_default_replay, open_saved
    from workbench.storage.replays import replay_id_for
    from workbench.storage.store import Store

    with Store(home / "workbench.db") as store:
        ids = {p.stem: store.import_file(p).session_id for p in bundled_samples()}
        for session_id in ids.values():
            ensure_default_replay(store, session_id)
        long_id = ids["long_session"]
        replay = replay_id_for(long_id, BUDGET_REPLAY_NAME)
        steps = open_saved(store, replay).steps
        step = next(s.step_index for s in steps if s.compaction_applied)
    return {"session": long_id, "replay": replay, "step": str(step)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(home: Path, theme: str) -> Iterator[str]:
    """The real app on a free port with ``home`` as WORKBENCH_HOME; stopped by its PID after."""
    from workbench.cli import streamlit_command

    port = _free_port()
    cmd = [*streamlit_command(port), "--theme.base", theme, "--client.toolbarMode", "minimal"]
    env = {**os.environ, "WORKBENCH_HOME": str(home), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log = (home / f"streamlit-{theme}.log").open("wb")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"streamlit did not start; see {log.name}")
            time.sleep(0.2)  # polling a starting server
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()


def _settled(page: Page) -> None:
    """Wait until the script run is over: sidebar drawn, no skeletons, charts and tables drawn."""
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_test_id("stSelectbox").first).to_be_visible(timeout=WAIT)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=WAIT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=WAIT)
    for chart in page.get_by_test_id("stPlotlyChart").all():
        expect(chart.locator("svg.main-svg").first).to_be_visible(timeout=WAIT)
    page.wait_for_timeout(800)  # a screenshot, not a test: let fonts and chart transitions finish


def _open(page: Page, url: str, path: str, query: dict[str, str], heading: str) -> None:
    page.goto(f"{url}/{path}" + (f"?{urlencode(query)}" if query else ""))
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible(timeout=WAIT)
    _settled(page)


def shot_sessions(page: Page, url: str, q: dict[str, str]) -> None:
    _open(page, url, "", {"session": q["session"]}, "Sessions")
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible(timeout=WAIT)
    _settled(page)


def shot_step_through(page: Page, url: str, q: dict[str, str]) -> None:
    _open(page, url, "step-through", q, "Step-through")
    expect(page.get_by_text("compaction — applied")).to_be_visible(timeout=WAIT)
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible(timeout=WAIT)
    _settled(page)


def shot_compaction(page: Page, url: str, q: dict[str, str]) -> None:
    _open(page, url, "compaction", q, "Compaction")
    expect(page.get_by_test_id("stPlotlyChart").get_by_text("cut point")).to_be_visible(timeout=WAIT)
    _settled(page)


def shot_usage(page: Page, url: str, q: dict[str, str]) -> None:
    _open(page, url, "usage", q, "Usage")
    expect(page.get_by_test_id("stPlotlyChart").locator("svg.main-svg").first).to_be_visible(
        timeout=WAIT)
    _settled(page)


def shot_templates(page: Page, url: str, q: dict[str, str]) -> None:
    _open(page, url, "templates", q, "Templates")


def shot_configuration(page: Page, url: str, q: dict[str, str]) -> None:
    _open(page, url, "configuration", {"session": q["session"]}, "Configuration")
    page.get_by_role("button", name="Compare", exact=True).click()
    chart = page.get_by_test_id("stPlotlyChart")
    expect(chart.locator("svg.main-svg").first).to_be_visible(timeout=WAIT)
    _settled(page)
    heading = page.get_by_role("heading", name="Compare two configurations on this session")
    heading.evaluate("element => element.scrollIntoView({block: 'start'})")  # chart below it
    page.wait_for_timeout(500)


def shot_real_vs_replay(page: Page, url: str, q: dict[str, str]) -> None:
    """The Usage page of a real session (``--real``): where the replay and the agent compacted,
    the estimate error and the chart with the agent's compaction marked."""
    if "real_session" not in q:
        raise SystemExit("the real-vs-replay screenshot needs --real TRANSCRIPT")
    page.set_viewport_size({"width": 1280, "height": 1250})
    _open(page, url, "usage", {"session": q["real_session"], "replay": q["real_replay"]}, "Usage")
    chart = page.get_by_test_id("stPlotlyChart")
    expect(chart.get_by_text("agent compacted (recorded)")).to_be_visible(timeout=WAIT)
    _settled(page)


#: The replay the real-vs-replay shot shows: the configuration that sends what the agent sent
#: (no trimming, folding or reduction), so its compaction can be set against the agent's.
AGENT_LIKE_NAME = "as the agent sent"
#: The replay the real-fidelity shot shows: the claude-code agent profile with the offline
#: summariser, which compacts at the agent's own step.
PROFILE_NAME = "claude-code profile"


def shot_real_fidelity(page: Page, url: str, q: dict[str, str]) -> None:
    """The Compaction page of a real session (``--real``) replayed with the claude-code profile:
    what the agent's compaction and the replay's lost, and the agent's lost facts."""
    if "real_session" not in q:
        raise SystemExit("the real-fidelity screenshot needs --real TRANSCRIPT")
    page.set_viewport_size({"width": 1280, "height": 1000})
    _open(page, url, "compaction", {"session": q["real_session"], "replay": q["real_profile"]},
          "Compaction")
    heading = page.get_by_role("heading", name="What each compaction lost")
    expect(heading).to_be_visible(timeout=WAIT)
    _settled(page)
    heading.evaluate("element => element.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)


def prepare_real(home: Path, transcript: Path) -> dict[str, str]:
    """Import a real transcript (``.gz`` is decompressed into ``home`` first) and make its
    default replay and the ``as the agent sent`` one; the transcript stays outside the
    repository."""
    import gzip

    from iris.config import parse_config

    from workbench.services.presets import resolve_config
    from workbench.services.replay import ensure_default_replay, replay_and_save
    from workbench.storage.store import Store

    if transcript.suffix == ".gz":
        plain = home / transcript.stem
        plain.write_bytes(gzip.decompress(transcript.read_bytes()))
        transcript = plain
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(transcript).session_id
        ensure_default_replay(store, session_id)
        config = parse_config({"context_policy": {"enabled": False}, "reduction": False})
        info, _ = replay_and_save(store, session_id, name=AGENT_LIKE_NAME, config=config)
        profile, _ = replay_and_save(store, session_id, name=PROFILE_NAME,
                                     config=resolve_config("claude-code"))
    return {"real_session": session_id, "real_replay": info.id, "real_profile": profile.id}


SHOTS: dict[str, Callable[[Page, str, dict[str, str]], None]] = {
    "sessions": shot_sessions, "step-through": shot_step_through, "compaction": shot_compaction,
    "usage": shot_usage, "templates": shot_templates, "configuration": shot_configuration,
    "real-vs-replay": shot_real_vs_replay, "real-fidelity": shot_real_fidelity,
}
#: Shots of a real transcript (``--real``).
REAL_SHOTS = ("real-vs-replay", "real-fidelity")
#: Views also shown in the dark theme (the README shows both renderings).
DARK = ("step-through", "usage")


def _shrink(path: Path) -> None:
    """Palette PNG: a UI screenshot keeps its look at a third of the size."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def run(names: list[str], themes: list[str], out: Path, *, palette: bool = True,
        real: Path | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="wb-screens-") as tmp:
        home = Path(tmp)
        query = prepare_store(home) if set(names) - set(REAL_SHOTS) else {}
        if real is not None:
            query |= prepare_real(home, real)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"), args=CHROME_ARGS)
            for theme in themes:
                wanted = [n for n in names if theme == "light" or n in DARK]
                if not wanted:
                    continue
                with serve(home, theme) as url:
                    for name in wanted:
                        page = browser.new_page(viewport=SIZE)  # a new browser session: the URL decides
                        SHOTS[name](page, url, query)
                        target = out / (name + ("-dark" if theme == "dark" else "") + ".png")
                        page.screenshot(path=str(target))
                        page.close()
                        if palette:
                            _shrink(target)
                        written.append(target)
                        print(f"wrote {target} ({target.stat().st_size // 1024} KB)")
            browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(SHOTS), help="repeatable")
    parser.add_argument("--theme", choices=["light", "dark", "both"], default="both")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--full-colour", action="store_true", help="keep 24-bit PNGs (larger)")
    parser.add_argument("--real", type=Path, metavar="TRANSCRIPT",
                        help="a real transcript (.jsonl or .jsonl.gz) for the real-vs-replay shot, "
                             "e.g. ../shared/real-sessions/claude_code/8463c716-….jsonl.gz")
    args = parser.parse_args(argv)
    themes = ["light", "dark"] if args.theme == "both" else [args.theme]
    names = args.only or [n for n in SHOTS if n not in REAL_SHOTS or args.real]
    run(names, themes, args.out, palette=not args.full_colour, real=args.real)
    return 0


if __name__ == "__main__":
    sys.exit(main())
