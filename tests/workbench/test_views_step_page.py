"""What the Step-through page shows around its tables (R-UI-2): the header in words, the "why"
panel per stage with links to the messages, the timeline with the current step, and the final
request's messages as boxes (cut texts, originals on demand)."""

from __future__ import annotations

from evidence_builders import messages, preparation, request
from iris.compaction.thresholds import thresholds
from iris.config import parse_config

from workbench.views.colors import MARK_COLOURS, STATUS_COLOURS
from workbench.views.step_page import (
    LAST,
    LONG,
    MARKS_CSS,
    cut,
    focus_caption,
    header_text,
    marked_only,
    message_box,
    message_url,
    page_count,
    request_caption,
    stage_whys,
    status_style,
    timeline_at,
    timeline_spec,
)
from workbench.views.step_through import request_messages, step_header


def test_r_ui_2_header_names_the_step_figures_and_the_budget_source():
    prep = preparation(4, usage_kind="estimated")
    head = header_text(prep, 36, None)
    assert head.title == f"Step 4 of 35 · response message #{prep.response_message_index}"
    assert (head.phase, head.badge, head.error) == ("ready", "green", None)
    final, lines, trigger, provider = head.cells
    assert final == "**Final input** :green[760] of 2,000 (38.0%)"
    assert lines == "Pressure line 1,600 · reminder 1,080"
    assert trigger == f"**Trigger compared** {step_header(prep).trigger_label}"
    assert provider == "**Provider usage of this response** ≈1,460 (frozen estimate)"
    assert head.caption.startswith("Budget 2,000 (source: ")
    configured = thresholds(parse_config({"compaction": {"input_budget_tokens": 96_000}}))
    assert header_text(prep, 36, configured).caption.startswith("Budget 96,000 (source: ")


def test_r_ui_2_header_of_a_failed_step_says_where_and_why():
    head = header_text(preparation(3, phase="failed", usage_kind="missing"), 5, None)
    assert head.badge == "red" and head.cells[3].endswith(" —")
    assert head.error is not None
    assert head.error.startswith("This preparation is **failed** in stage `compaction`: ")
    assert "timed out" in head.error


def test_r_ui_2_timeline_draws_the_current_step_on_a_shared_spec():
    spec = timeline_spec([], [])
    assert set(spec) >= {"data", "layout"}
    shapes_before = list(spec["layout"].get("shapes", ()))
    at = timeline_at(spec, 7)
    line = at["layout"]["shapes"][-1]
    assert (line["x0"], line["x1"], line["line"]["color"]) == (7, 7, STATUS_COLOURS["candidate"])
    assert at["data"] is spec["data"]  # the bars are shared, not copied
    assert list(spec["layout"].get("shapes", ())) == shapes_before  # the cached spec is unchanged


def test_stage_status_cells_take_their_status_colour():
    assert status_style("applied") == f"color: {STATUS_COLOURS['applied']}"
    assert status_style("unknown") == "color: inherit"


def test_ux_a_decision_links_to_its_message_on_the_messages_page():
    assert message_url("s 1", 5) == "messages?session=s+1&message=5"
    assert message_url("s1", float("nan")) is None


def test_r_ui_2_why_panel_words_few_decisions_and_tables_many():
    prep = preparation(2, compaction="applied")
    whys = {w.stage: w for w in stage_whys(prep, "s1")}
    assert list(whys) == [s.name for s in prep.stages]
    trim = whys["trim_old_bodies"]
    assert trim.label == "trim_old_bodies — entered · 2 decisions" and not trim.expanded
    assert trim.lines is not None and trim.table is None
    assert trim.lines.splitlines()[0].startswith("- **reduced**: ")
    assert "[message #2](messages?session=s1&message=2)" in trim.lines
    assert trim.messages == (2, 3)  # opened in the app by the panel's page links
    assert whys["assembly"].messages == ()
    assert whys["compaction"].expanded  # a stage that applied something opens
    assert whys["assembly"].lines is None and whys["assembly"].table is None
    assert whys["assembly"].explanation.startswith("Assembly builds the request")
    many = {w.stage: w for w in stage_whys(prep, "s1", few=1)}["trim_old_bodies"]
    assert many.lines is None and many.table is not None
    assert list(many.table["open"]) == ["messages?session=s1&message=2",
                                        "messages?session=s1&message=3"]


def test_r_ui_2_request_caption_and_page_by_page_pool():
    shown = request_messages(request(), messages())
    prep = preparation(1)
    assert request_caption(prep, request(), shown) == \
        "4 messages · tools: none · dropped: tool:web_search"
    assert [m.position for m in marked_only(shown, True)] == [2]
    assert marked_only(shown, False) == shown
    assert [page_count(n) for n in (0, 1, 10, 11)] == [1, 1, 1, 2]


def test_r_ui_2_focus_caption_only_when_messages_are_left_out():
    assert focus_caption(4, 4, 0) is None
    words = focus_caption(15, 120, 3)
    assert words is not None
    assert words.startswith(f"Showing 15 of 120 messages: the checkpoint, what this step changed "
                            f"and the last {LAST} (3 more changed ones page by page).")
    assert "(" not in (focus_caption(15, 120, 0) or "")


def test_r_ui_2_long_texts_are_cut_unless_full():
    text = "x" * (LONG + 1234)
    assert cut(text, False) == "x" * LONG + "\n… [1,234 more characters: switch on “Show full texts”]"
    assert cut(text, True) == text and cut("short", False) == "short"


def test_r_ui_2_message_box_carries_marks_and_its_original():
    shown = request_messages(request(), messages())
    box = message_box(shown[2], 9, full=False)
    assert box.key == "wbmsg-2-reduced"
    assert box.heading == "**2 · tool** · history \\#2 :orange-badge[reduced] · 600 characters"
    assert (box.original_key, box.original_label) == ("st_original_9_2", "Original (600 characters)")
    assert box.original_text == "E" * 600
    plain_box = message_box(shown[0], 9, full=True)
    assert plain_box.key == "wbmsg-0" and plain_box.original_label is None
    assert all(f'[class*="-{mark}"]' in MARKS_CSS and colour in MARKS_CSS
               for mark, colour in MARK_COLOURS.items())
