"""Notebook ergonomics (R-UI-8): typed tables that stay numeric when empty and when concatenated,
data (not display strings) in the columns, session and message tables, short displays, titled
figures that carry HTML for an exported notebook."""

from __future__ import annotations

import pandas as pd
import pytest
from iris.session import Message, Session, SessionHeader, TextBlock

import workbench as wb
from workbench.notebook.frames import SCHEMAS
from workbench.report import build_report
from workbench.storage.store import open_store
from workbench.views.display import display_frame

TABLES = ("stages", "decisions", "usage", "summary_usage", "compactions", "attempts", "failures")


@pytest.fixture(scope="module")
def long() -> wb.NotebookReplay:
    """The long sample under cost-first: five compactions, so every table has rows."""
    return wb.replay(wb.sample_path("long_session"), "cost-first")


@pytest.fixture(scope="module")
def default() -> wb.NotebookReplay:
    return wb.replay(wb.sample_path("long_session"))


@pytest.fixture(scope="module")
def empty() -> wb.NotebookReplay:
    """A session whose only message is the user's: no model call, so no step at all."""
    session = Session(header=SessionHeader(session_id="no-steps"),
                      messages=(Message(role="user", content=(TextBlock(text="hello"),)),))
    return wb.replay(session)


def _dtypes(frame: pd.DataFrame) -> dict[str, str]:
    return {str(c): str(t) for c, t in frame.dtypes.items()}


@pytest.mark.parametrize("table", TABLES)
def test_r_ui_8_an_empty_table_keeps_the_dtypes_of_a_full_one(long, empty, table):
    full, none = getattr(long, table)(), getattr(empty, table)()
    assert _dtypes(none) == _dtypes(full)
    assert _dtypes(full) == SCHEMAS[table]


def test_r_ui_8_concat_across_sessions_stays_numeric(long, empty):
    frames = {t: pd.concat([getattr(empty, t)(), getattr(long, t)()], ignore_index=True)
              for t in ("stages", "usage")}
    assert frames["stages"]["before_tokens"].dtype == "int64"
    assert frames["usage"]["local_estimate"].dtype == "int64"
    assert frames["usage"]["provider_tokens"].dtype == "Int64"
    assert frames["usage"]["local_estimate"].sum() == long.usage()["local_estimate"].sum()


def test_r_ui_8_columns_hold_data_and_words_are_made_when_shown(long):
    usage = long.usage()
    assert "provider_label" not in usage.columns and usage["provider_tokens"].dtype == "Int64"
    kinds = long.stages()["decision_kinds"]
    assert all(isinstance(k, dict) for k in kinds)
    assert sum(sum(k.values()) for k in kinds) == len(long.decisions())
    cut_points = long.totals().loc[0, "cut_points"]
    assert cut_points == [{"step": c.step_index, "cut_index": c.cut_index}
                          for c in long.result.checkpoints]
    shown = display_frame(long.totals())
    assert shown.loc[0, "cut_points"] == ", ".join(
        f"step {c.step_index} @ {c.cut_index}" for c in long.result.checkpoints)
    assert "provider_label" in display_frame(usage).columns


def test_r_ui_8_comparison_tables_are_typed(long, default):
    comparison = wb.compare(default, long)
    assert comparison.compactions()["first_kept_message"].dtype == "Int64"
    assert comparison.totals()["tokens_sent"].dtype == "int64"
    assert all(str(t) in ("int64", "Int64") for t in comparison.steps().dtypes)


def test_r_ui_9_report_first_kept_message_is_an_integer():
    html = build_report(wb.sample_path("long_session"), "cost-first")
    cut = html[html.index("first kept message"):]
    cut = cut[:cut.index("</table>")]
    assert ".0<" not in cut and "nan" not in cut.lower()


def test_r_ui_8_sessions_lists_the_store_typed():
    assert _dtypes(wb.sessions()) == SCHEMAS["sessions"]  # an empty store
    with open_store() as store:
        sid = store.import_file(wb.sample_path("bugfix")).session_id
    frame = wb.sessions()
    assert list(frame["id"]) == [sid] and _dtypes(frame) == SCHEMAS["sessions"]
    assert frame.loc[0, "messages"] == len(wb.load_session(sid).messages)


def test_r_ui_8_messages_one_row_per_message():
    session = wb.load_session(wb.sample_path("bugfix"))
    frame = wb.messages(session)
    assert len(frame) == len(session.messages) and _dtypes(frame) == SCHEMAS["messages"]
    assert list(frame["index"]) == list(range(len(session.messages)))
    assert list(frame["role"]) == [m.role for m in session.messages]
    usages = {i: m.usage.prompt_tokens for i, m in enumerate(session.messages) if m.usage is not None}
    values = frame["prompt_tokens"].tolist()
    assert [i for i, v in enumerate(values) if not pd.isna(v)] == sorted(usages)
    assert {i: values[i] for i in usages} == usages
    assert sum(len(c) for c in frame["tool_calls"]) == len(session.index.calls)
    assert wb.messages(wb.sample_path("bugfix")).equals(frame)  # a path works too


def test_r_ui_8_step_messages_is_a_frame(long):
    step = long.step(long.result.checkpoints[0].step_index)
    frame = step.messages()
    assert _dtypes(frame) == SCHEMAS["request"]
    assert frame.loc[0, "marks"] == ["summarised"] and len(frame) == len(step.request.messages)
    assert frame["changed"].sum() == frame["original_text"].notna().sum()


def test_r_ui_8_reprs_are_short(long):
    assert len(repr(long.session)) < 200
    assert len(long.session._repr_html_()) < 2000


def test_r_ui_8_every_figure_has_a_title_and_html_with_its_data(long, default):
    from workbench.notebook import frames as notebook_frames

    notebook_frames._sent["plotlyjs"] = False
    figures = [long.figure("usage"), long.figure("timeline"),
               wb.compare(default, long).figure()]
    titles = [f.layout.title.text for f in figures]
    assert titles == ["Tokens per step · cost-first", "Compaction timeline · cost-first",
                      "Tokens per step · default vs cost-first"]
    bundles = [f._repr_mimebundle_() for f in figures]
    for fig, bundle in zip(figures, bundles):
        assert "application/vnd.plotly.v1+json" in bundle
        assert "Plotly.newPlot" in bundle["text/html"] and fig.data[0].name in bundle["text/html"]
    # plotly.js (from the installed package) travels with the first figure only
    assert len(bundles[0]["text/html"]) > 1_000_000
    assert all(len(b["text/html"]) < 200_000 for b in bundles[1:])
