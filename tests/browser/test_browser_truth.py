"""Through a real browser: the Usage chart of a session whose agent compacted draws the recorded
compaction marker, and the trigger value and pressure lines lie inside the drawn y range (the
axis is never cut below the line that decides a compaction)."""

from __future__ import annotations

from playwright.sync_api import Page, expect
from truth_helpers import RECORDED_STEP, store_long_with_recorded_compaction

from workbench.storage.store import Store
from workbench.views.recorded import RECORDED

FIRST = 90_000

#: Reads the drawn figure from plotly's own state: the y range, each trace's values, and where
#: the recorded-compaction star and the plot area are on screen.
READ = """(gd) => {
  const out = {range: gd._fullLayout.yaxis.range, traces: {}};
  for (const t of gd._fullData) {
    out.traces[t.name] = {x: Array.from(t.x || []), y: Array.from(t.y || []).map(Number)};
  }
  const area = gd.querySelector('.bglayer rect, rect.nsewdrag').getBoundingClientRect();
  out.area = {top: area.top, bottom: area.bottom, left: area.left, right: area.right};
  const star = [...gd.querySelectorAll('g.trace.scatter')].find(
      g => g.__data__ && g.__data__[0] && g.__data__[0].trace.name === NAME);
  const point = star && star.querySelector('path.point');
  out.star = point ? point.getBoundingClientRect().toJSON() : null;
  return out;
}"""


def test_usage_chart_draws_recorded_compaction_and_lines_inside_the_y_range(
        page: Page, streamlit_factory, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with Store(home / "workbench.db") as store:
        session_id = store_long_with_recorded_compaction(store)
    url = streamlit_factory(home)
    page.goto(f"{url}/usage?session={session_id}")
    expect(page.get_by_role("heading", name="Usage", exact=True)).to_be_visible(timeout=FIRST)
    chart = page.get_by_test_id("stPlotlyChart").locator(".js-plotly-plot")
    expect(chart).to_be_visible(timeout=FIRST)
    expect(chart.locator("g.trace").first).to_be_attached(timeout=FIRST)
    expect(chart.get_by_text(RECORDED)).to_be_visible()  # its legend entry

    drawn = chart.evaluate(READ.replace("NAME", repr(RECORDED)))
    low, high = drawn["range"]
    assert low <= 0
    pressure = drawn["traces"]["pressure line"]["y"]
    trigger = drawn["traces"]["trigger value"]["y"]
    assert pressure and trigger
    assert max(pressure) <= high and max(trigger) <= high
    assert drawn["traces"][RECORDED]["x"] == [RECORDED_STEP]
    star, area = drawn["star"], drawn["area"]
    assert star is not None, "the recorded-compaction star was not drawn"
    middle = (star["top"] + star["bottom"]) / 2, (star["left"] + star["right"]) / 2
    assert area["top"] <= middle[0] <= area["bottom"]
    assert area["left"] <= middle[1] <= area["right"]
