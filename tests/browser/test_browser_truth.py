"""Through a real browser: the Usage chart of a session whose agent compacted draws the recorded
compaction marker, and the trigger value and pressure lines lie inside the drawn y range (the
axis is never cut below the line that decides a compaction)."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect
from truth_helpers import RECORDED_STEP, store_long_with_recorded_compaction

from workbench.storage.store import Store
from workbench.views.recorded import RECORDED

FIRST = 90_000

#: Reads the drawn chart from Vega's SVG: the plot area, the y axis's domain (its description),
#: and each mark's description (series, step, tokens) with where it is on screen.
READ = """(root) => {
  const box = e => e.getBoundingClientRect().toJSON();
  const area = root.querySelector('g.role-frame.root path.background');
  const axis = [...root.querySelectorAll('[aria-roledescription="axis"]')]
      .map(e => e.getAttribute('aria-label')).find(t => t.startsWith('Y-axis'));
  const marks = [...root.querySelectorAll('[aria-roledescription="point"], '
      + '[aria-roledescription="line mark"]')].map(e => ({
        kind: e.getAttribute('aria-roledescription'), label: e.getAttribute('aria-label'),
        box: box(e)}));
  return {area: box(area), axis, marks};
}"""


def _inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return (outer["top"] - slack <= inner["top"] and inner["bottom"] <= outer["bottom"] + slack
            and outer["left"] - slack <= inner["left"] and inner["right"] <= outer["right"] + slack)


def test_usage_chart_draws_recorded_compaction_and_lines_inside_the_y_range(
        page: Page, streamlit_factory, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with Store(home / "workbench.db") as store:
        session_id = store_long_with_recorded_compaction(store)
    url = streamlit_factory(home)
    page.goto(f"{url}/usage?session={session_id}")
    expect(page.get_by_role("heading", name="Usage", exact=True)).to_be_visible(timeout=FIRST)
    chart = page.get_by_test_id("stVegaLiteChart").locator("svg.marks")
    expect(chart).to_be_visible(timeout=FIRST)
    expect(chart.locator('[aria-roledescription="point"]').first).to_be_attached(timeout=FIRST)
    expect(chart.get_by_text(RECORDED)).to_be_visible()  # its legend entry

    drawn = chart.evaluate(READ)
    assert re.search(r"values from 0 to [\d,]+", drawn["axis"]), drawn["axis"]  # starts at 0
    lines = {name: [m for m in drawn["marks"] if m["kind"] == "line mark"
                    and f"series: {name};" in m["label"]] for name in ("pressure line", "trigger value")}
    assert lines["pressure line"] and lines["trigger value"]
    for name, marks in lines.items():  # every line lies inside the drawn plot area
        assert all(_inside(m["box"], drawn["area"]) for m in marks), name
    stars = [m for m in drawn["marks"] if m["kind"] == "point" and f"series: {RECORDED};" in m["label"]]
    assert len(stars) == 1 and f"step: {RECORDED_STEP};" in stars[0]["label"]
    star, area = stars[0]["box"], drawn["area"]
    middle = (star["top"] + star["bottom"]) / 2, (star["left"] + star["right"]) / 2
    assert area["top"] <= middle[0] <= area["bottom"]
    assert area["left"] <= middle[1] <= area["right"]
