"""Browser flow for the Templates page: edit a template, see the re-rendered output and the diff
(R-UI-4, R-PRM-3), through the real app served by Streamlit and Debian's Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def templates_server(streamlit_factory, tmp_path_factory) -> tuple[str, Path]:
    """The whole app (tests/browser/conftest.py) with its own WORKBENCH_HOME, so Save is observable."""
    home = tmp_path_factory.mktemp("templates-home")
    return streamlit_factory(home), home


def test_r_ui_4_edit_template_rerenders_and_shows_diff(templates_server, page: Page):
    url, home = templates_server
    page.goto(f"{url}/templates")
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


def test_r_build_5_context_page_shows_built_messages(templates_server, page: Page):
    """The Context page in a real browser: the bundled example's three messages are listed."""
    url, _ = templates_server
    page.goto(f"{url}/context")
    expect(page.get_by_text("system · system")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("before_current_input · user (context sender)")).to_be_visible()
    expect(page.get_by_text("<identity>You are a coding agent").first).to_be_visible()
