"""``workbench report`` (R-UI-9): one self-contained HTML file with the figures, the stage table,
the compaction cut points, the usage comparison and the failed preparations; offline, escaped and
deterministic. The browser check that its figures render is tests/browser/test_browser_report.py."""

from __future__ import annotations

import json
import re

import pytest
from iris.context import ContextSnapshot
from iris.replay import ReplayEnvironment
from iris.replay import replay as engine_replay

import workbench as wb
from workbench.cli import main
from workbench.notebook import NotebookReplay
from workbench.report import BUNDLE_TRACES, plotly_bundle, render_report
from workbench.storage.store import open_store

LONG = wb.sample_path("long_session")
SMALL = wb.sample_path("unanswered")
#: A tag that loads something from elsewhere: <script src=…>, <link href=…>, <img src=…>, …
EXTERNAL = re.compile(r"<(script|link|img|iframe|embed|object)\b[^>]*\b(src|href)\s*=", re.IGNORECASE)


@pytest.fixture(scope="module")
def cost_report() -> tuple[str, wb.NotebookReplay]:
    """The long sample under the cost-first preset (it compacts). The CLI path is tested below."""
    r = wb.replay(LONG, "cost-first")
    return render_report(r, config_source="cost-first"), r


def test_r_ui_9_report_is_one_offline_html_file(cost_report):
    html, _ = cost_report
    assert html.startswith("<!DOCTYPE html>")
    assert not EXTERNAL.search(html), EXTERNAL.search(html)
    assert "Plotly.newPlot" in html and 'id="wb-usage"' in html and 'id="wb-timeline"' in html
    assert html.count(plotly_bundle()) == 1  # the library itself, inline, once
    assert len(html.encode()) < 1_500_000


def test_r_ui_9_report_bundle_is_the_installed_plotly_js_version():
    """R-UI-9: the inlined partial bundle is the plotly.js the installed plotly package builds
    figures for (a plotly upgrade must bring the matching bundle), with its licence beside it."""
    from importlib.resources import files

    from plotly.offline import get_plotlyjs

    version = re.search(r"plotly\.js v(\d+\.\d+\.\d+)", get_plotlyjs()[:300])
    assert version is not None
    assert f"plotly.js (basic - minified) v{version.group(1)}" in plotly_bundle()[:300]
    assert "MIT License" in (files("workbench") / "assets" / "plotly-basic.LICENSE").read_text()


def test_r_ui_9_report_figures_draw_only_bundled_traces(cost_report):
    """R-UI-9: every trace the report's figures draw is a type the basic bundle has; each
    figure's template keeps defaults of no other type."""
    html, _ = cost_report
    body = html[html.index("<body"):]
    plots = re.findall(r"Plotly\.newPlot\(\s*\"[\w-]+\",\s*(\[.*?\]),\s*(\{.*?\}),\s*\{\"displaylogo", body,
                       re.DOTALL)
    assert len(plots) >= 2
    for data, layout in plots:
        types = {trace.get("type", "scatter") for trace in json.loads(data)}
        assert types <= BUNDLE_TRACES, types
        assert set(json.loads(layout)["template"].get("data", {})) <= types  # a template may have none


def test_r_ui_9_report_holds_the_tables(cost_report):
    html, r = cost_report
    for heading in ("Summary", "Usage: local estimate vs provider", "Compaction", "Cut points",
                    "Stages", "Failed preparations", "Configuration"):
        assert f">{heading}</h" in html, heading
    first = r.result.checkpoints[0]
    applied = r.compactions().iloc[0]
    assert f"<td>{applied['cut_index']}<" in html and f"<td>{first.step_index}<" in html
    assert "summary (compaction)" in html and "main model" in html
    assert f"Every one of the {len(r)} preparations is ready." in html
    assert "input_budget_tokens: 64000" in html  # the configuration used


def test_r_ui_9_report_lists_failed_preparations_escaped():
    """A failed step appears with its stage and error; transcript/error text is escaped."""
    class Flaky:
        async def collect(self, scope):
            if scope.step_index == 1:
                raise RuntimeError("<img src=x onerror=alert(1)> snapshot service down")
            return ContextSnapshot()

    session = wb.load_session(SMALL)
    config = wb.resolve_config(None)
    result = engine_replay(session, config, environment=ReplayEnvironment(context_source=Flaky()))
    html = render_report(NotebookReplay(session, config, result, label="flaky"))
    section = html.split(">Failed preparations</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<td>failed<" in section and "<td>assembly<" in section
    assert "&lt;img src=x onerror=alert(1)&gt; snapshot service down" in section
    assert "<img src=x" not in html


def test_r_ui_9_report_is_deterministic():
    first = wb.build_report(SMALL)
    assert wb.build_report(SMALL) == first


def test_r_ui_9_report_of_a_stored_session_with_progress(tmp_path, capsys):
    with open_store() as store:
        session_id = store.import_file(SMALL).session_id
    out = tmp_path / "nested" / "stored.html"
    assert main(["report", session_id, "--out", str(out), "--title", "Coverage <run>"]) == 0
    captured = capsys.readouterr()
    assert f"wrote {out}" in captured.out
    assert "report:   0% replaying" in captured.err and "report: 100% rendered" in captured.err
    html = out.read_text(encoding="utf-8")
    assert "<h1>Context report: Coverage &lt;run&gt;</h1>" in html


def test_r_ui_9_report_errors_name_what_was_wrong(tmp_path, capsys):
    assert main(["report", "no-such-session", "--out", str(tmp_path / "x.html")]) == 1
    assert "'no-such-session' is neither a transcript file" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("compaction:\n  threshold: [1\n", encoding="utf-8")
    assert main(["report", str(SMALL), "--config", str(bad), "--out", str(tmp_path / "y.html")]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3: invalid YAML" in err and "replaying" not in err
    assert not (tmp_path / "y.html").exists()


def test_r_ui_9_report_of_a_stored_replay_matches_its_records():
    """The app's report button: the saved replay's configuration and templates are used again."""
    from iris.config import parse_config

    from workbench.report import stored_replay_report
    from workbench.services.replay import replay_and_save

    with open_store() as store:
        session_id = store.import_file(LONG).session_id
        config = parse_config({"compaction": {"input_budget_tokens": 96000}})
        info, result = replay_and_save(store, session_id, name="budget 96k", config=config)
        seen: list[float] = []
        html = stored_replay_report(store, info.id, progress=lambda f, text: seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    assert "<code>budget 96k</code>" in html and "input_budget_tokens: 96000" in html
    first = result.checkpoints[0]
    cuts = html.split("<h3>Cut points</h3>", 1)[1].split("<h3>", 1)[0]
    assert f"<td>{first.step_index}<" in cuts and f"<td>{first.cut_index}<" in cuts


def test_r_ui_9_usage_page_builds_a_downloadable_report():
    """AppTest: the Usage page's button builds the report with progress and offers the download."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    with open_store() as store:
        session_id = store.import_file(SMALL).session_id
    app = Path(__file__).resolve().parents[2] / "workbench" / "ui" / "app.py"
    at = AppTest.from_file(str(app), default_timeout=90)
    at.query_params["session"] = session_id
    at.run()
    at.switch_page("../pages/usage.py").run()
    at.button(key="usage_report").click().run()
    assert not at.exception and not at.error
    downloads = at.get("download_button")
    assert len(downloads) == 1 and "report.html" in downloads[0].proto.label


def test_report_answers_where_the_replay_and_the_agent_compacted():
    """The report marks the agent's recorded compaction (usage chart and message timeline) and
    answers in one table where the replay and the agent compacted; the budget names its source."""
    from iris.session import RecordedCompaction

    session = wb.load_session(LONG)
    at = session.index.batches[40].assistant_message - 1
    session = session.model_copy(update={"compactions": (RecordedCompaction(
        at_message=at, pre_tokens=61_234, source="test:recorded"),)})
    r = wb.replay(session, "cost-first")
    html = render_report(r, config_source="cost-first")
    assert "Where the replay and the agent compacted" in html
    assert "the agent compacted at step 40" in html
    assert "agent compacted (recorded)" in html and "61,234" in html
    assert "Estimate error (as-recorded estimate vs provider)" in html
    assert "(source: " in html
