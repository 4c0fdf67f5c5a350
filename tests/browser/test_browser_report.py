"""Through a real browser (R-UI-9): the HTML report opens from ``file://`` with the network cut off
and its plotly figures render (SVG drawn by the inline plotly.js)."""

from __future__ import annotations

from playwright.sync_api import Page, Route, expect

import workbench as wb

FIRST = 30_000


def test_r_ui_9_report_opens_offline_and_shows_its_figures(page: Page, tmp_path):
    out = wb.write_report(wb.sample_path("long_session"), tmp_path / "report.html", "cost-first")
    assert out is not None  # None only for standard output ('-')
    outside: list[str] = []

    def refuse(route: Route) -> None:  # anything not from the file itself is a leak
        outside.append(route.request.url)
        route.abort()

    page.route("http*://**/*", refuse)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(out.as_uri())

    expect(page.get_by_role("heading", name="Context report: ")).to_be_visible(timeout=FIRST)
    plots = page.locator(".js-plotly-plot")
    expect(plots).to_have_count(2, timeout=FIRST)
    for div_id in ("wb-usage", "wb-timeline"):
        figure = page.locator(f"#{div_id}")
        expect(figure.locator("svg.main-svg").first).to_be_visible(timeout=FIRST)
        # traces were drawn, not only the axes: scatter lines / bars are SVG paths
        expect(figure.locator("g.trace").first).to_be_attached()
    expect(page.locator("#wb-usage").get_by_text("replayed request")).to_be_visible()
    expect(page.get_by_role("heading", name="Cut points")).to_be_visible()
    assert outside == [] and errors == []
