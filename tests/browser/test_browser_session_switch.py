"""Through a real browser (R-UI-4): re-run the whole replay on session A (Templates page), switch the
sidebar to session B and its compacting replay: A's result and its "Save edited replay" button are
gone, so nothing computed for A can be stored under B."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect

from workbench.services.replay import (
    BUDGET_REPLAY_NAME,
    DEFAULT_REPLAY_NAME,
    ensure_default_replay,
    replay_choices,
)
from workbench.storage.replays import replay_id_for
from workbench.storage.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"
SLOW = 90_000


def _stores_two_sessions(home: Path, tmp_path: Path) -> tuple[str, str, str, str, str]:
    """Session A (the long sample) and B (a shorter copy under another id), replays made; returns
    A, B, and B's sidebar labels: its title, its default replay and its ``budget 96k`` replay."""
    lines = SAMPLE.read_text("utf-8").splitlines()
    header = {**json.loads(lines[0]), "session_id": "harbor-copy", "title": "Harbor (copy)"}
    copy = tmp_path / "harbor-copy.jsonl"
    copy.write_text("\n".join([json.dumps(header), *lines[1:140]]) + "\n", "utf-8")
    with Store(home / "workbench.db") as store:
        a = store.import_file(SAMPLE).session_id
        b = store.import_file(copy).session_id
        for session_id in (a, b):
            ensure_default_replay(store, session_id)
        title = next(f"{s.title} · {s.message_count} msgs" for s in store.list_sessions()
                     if s.id == b)
        labels = replay_choices(store, b)
    return (a, b, title, labels[replay_id_for(b, DEFAULT_REPLAY_NAME)],
            labels[replay_id_for(b, BUDGET_REPLAY_NAME)])


def _replay_names(home: Path, session_id: str) -> set[str]:
    with Store(home / "workbench.db") as store:
        return {r.name for r in store.replays.list(session_id)}


def test_r_ui_4_switching_session_drops_the_rerun_so_b_cannot_store_it(page: Page,
                                                                       streamlit_factory, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    a, b, b_title, b_default, b_budget = _stores_two_sessions(home, tmp_path)
    before_b = _replay_names(home, b)
    url = streamlit_factory(home)
    page.goto(f"{url}/templates?session={a}&replay={replay_id_for(a, BUDGET_REPLAY_NAME)}")
    expect(page.get_by_text(re.compile(r"Rendered with the variables of step \d+"))).to_be_visible(
        timeout=SLOW)
    editor = page.get_by_label("Template source")
    editor.fill(editor.input_value() + "\nALWAYS MENTION PENGUINS.\n")
    page.get_by_text("Diff against the saved template").click()  # blur: the edit reaches Streamlit
    expect(page.get_by_text("This view uses an edited snapshot")).to_be_visible(timeout=SLOW)
    page.get_by_role("button", name="Re-run the whole replay").click()
    save = page.get_by_role("button", name="Save edited replay")
    expect(save).to_be_visible(timeout=SLOW)

    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").filter(has_text="Session").click()
    page.get_by_role("option", name=b_title).click()
    replay = sidebar.get_by_role("combobox", name="Replay")
    expect(replay).to_have_value(b_default, timeout=SLOW)  # the sidebar now lists B's replays
    replay.click()
    page.get_by_role("option", name=b_budget, exact=True).click()
    expect(replay).to_have_value(b_budget, timeout=SLOW)
    expect(page.get_by_role("button", name="Re-run the whole replay")).to_be_visible(timeout=SLOW)
    expect(page.get_by_text("Press a re-run button to compare")).to_be_visible(timeout=SLOW)
    expect(save).to_have_count(0)
    assert _replay_names(home, b) == before_b  # nothing of A's stored under B
    assert f"session={b}" in page.url
