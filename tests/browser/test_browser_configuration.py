"""Browser flows for the Configuration page (R-UI-6): load a preset, replay, change the threshold
in the form, replay again and see a different number of compactions; compare two presets on one
chart whose legend names both."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect
from waiting import wait_until

from workbench.storage.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"
SLOW = 60_000


@pytest.fixture(scope="module")
def configuration_url(streamlit_factory, tmp_path_factory) -> str:
    home = tmp_path_factory.mktemp("configuration-home")
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(SAMPLE).session_id
    return f"{streamlit_factory(home)}/configuration?session={session_id}"


def _pick(page: Page, label: str, option: str) -> None:
    page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
    page.get_by_role("option", name=option, exact=True).click()


def test_r_ui_6_threshold_change_gives_a_different_number_of_compactions(page: Page,
                                                                         configuration_url):
    page.goto(configuration_url)
    expect(page.get_by_text("Pick A and B and press Compare.")).to_be_visible(timeout=SLOW)
    _pick(page, "Preset", "cost-first")
    page.get_by_role("button", name="Load preset").click()
    expect(page.get_by_label("Threshold", exact=True)).to_have_value("0.70", timeout=SLOW)

    page.get_by_role("button", name="Replay and save").click()
    saved = page.get_by_text(re.compile(r"saved: \d+ compactions"))
    expect(saved).to_be_visible(timeout=SLOW)
    found = re.search(r"saved: (\d+) compactions", saved.inner_text())
    assert found is not None
    first = int(found.group(1))
    assert first > 0

    threshold = page.get_by_label("Threshold", exact=True)
    threshold.fill("0.40")
    threshold.press("Enter")
    expect(page.get_by_label("Configuration (YAML)")).to_contain_text("threshold: 0.4",
                                                                      timeout=SLOW)
    page.get_by_role("button", name="Replay and save").click()
    # a different number of compactions than before (a lower threshold compacts more often)
    expect(page.get_by_text(re.compile(rf"saved: (?!{first} )\d+ compactions"))).to_be_visible(
        timeout=SLOW)


def test_r_ui_6_compare_two_presets_on_one_chart(page: Page, configuration_url):
    page.goto(configuration_url)
    # the page's last line: the script has finished, so a rerun will not close the menu
    expect(page.get_by_text("Pick A and B and press Compare.")).to_be_visible(timeout=SLOW)
    # A and B default to the presets "default" and "cost-first"
    # widgets render a moment after the text (their components load lazily): wait for them
    expect(page.get_by_role("combobox", name="Configuration A")).to_have_value(
        "preset · default", timeout=SLOW)
    expect(page.get_by_role("combobox", name="Configuration B")).to_have_value(
        "preset · cost-first", timeout=SLOW)
    page.get_by_role("button", name="Compare", exact=True).click()
    chart = page.get_by_test_id("stPlotlyChart")
    expect(chart).to_be_visible(timeout=SLOW)
    legend = chart.locator("text.legendtext")
    expect(legend.filter(has_text="pressure line · default")).to_be_visible(timeout=SLOW)
    expect(legend.filter(has_text="compaction · cost-first")).to_be_visible()
    for run in ("default", "cost-first"):  # both runs' token lines, by their exact legend names
        expect(legend.filter(has_text=re.compile(f"^{run}$"))).to_have_count(1)


def test_r_ui_6_a_reload_during_replay_and_save_still_saves_the_replay(page: Page,
                                                                       streamlit_factory, tmp_path):
    """R-UI-6: reloading the page while "Replay and save" runs does not lose the replay: the run
    finishes and stores it (it used to be dropped without a word)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from synth import synth_session

    from workbench.importers.native import dump_session

    home = tmp_path / "home"
    home.mkdir()
    src = dump_session(synth_session(responses=1500, seed=5, session_id="slow"), tmp_path / "slow.jsonl")
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(src).session_id
    page.goto(f"{streamlit_factory(home)}/configuration?session={session_id}")
    expect(page.get_by_text("Pick A and B and press Compare.")).to_be_visible(timeout=4 * SLOW)
    name = page.get_by_label("Save the replay as")
    name.fill("kept across a reload")
    name.press("Enter")
    page.get_by_role("button", name="Replay and save").click()
    expect(page.get_by_test_id("stProgress").first).to_be_visible(timeout=SLOW)
    page.reload()

    def saved() -> bool:
        with Store(home / "workbench.db") as store:
            return store.replays.find(session_id, "kept across a reload") is not None
    assert not saved()  # the reload came while the replay was still running
    expect(page.get_by_role("heading", name="Configuration", exact=True)).to_be_visible(timeout=SLOW)
    wait_until(saved, seconds=120, what="the replay started before the reload is saved")
