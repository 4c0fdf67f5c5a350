"""What a user trips over in the pages' tables and sentences: column names in snake_case, "None"
cells, a compaction with no link to its step, "replay replay …", "Saved −$1.27"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from workbench.pricing.records import ReplayCost, Savings
from workbench.pricing.words import cost_lines
from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store
from workbench.views.recorded import compaction_answer

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")


def _columns(element: Any) -> dict[str, Any]:
    return json.loads(element.proto.columns)


def test_r_ui_3_compaction_tables_say_their_columns_and_link_each_step():
    """R-UI-3: the applied compactions and every attempt name their columns in words, show an
    empty attempt number as a dash (no number format over the Styler's "—"), and link each row
    to its step on Step-through."""
    with open_store() as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        info, _ = replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME,
                                  config=budget_96k_config())
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page("../pages/compaction.py").run()
    assert not at.exception, at.exception
    applied = next(d for d in at.dataframe if "cut_index" in d.value.columns)
    config = _columns(applied)
    assert config["tokens_before"]["label"] == "whole request before"
    assert config["cut_index"]["label"] == "cut at message"
    assert config["link"]["type_config"]["type"] == "link"
    step = int(applied.value["step"].iloc[0])
    link = applied.value["link"].iloc[0]
    assert link.startswith("step-through?") and f"replay={info.id}" in link
    assert link.endswith(f"step={step}")
    attempts = next(d for d in at.dataframe if "outcome" in d.value.columns)
    # Plans and the applied record have no attempt number: the cell holds the dash itself (the
    # browser's grid draws "None" over an empty cell whatever a Styler says).
    shown = list(attempts.value["attempt"])
    assert "—" in shown and not any(v is None or pd.isna(v) for v in shown)
    assert "type_config" not in _columns(attempts).get("attempt", {})
    assert all(v.startswith("step-through?") for v in attempts.value["link"])


def test_r_ui_6_compared_saved_replay_is_not_called_replay_twice():
    """R-UI-6: a saved replay in the comparison is labelled "replay <name>" already; the
    where-each-compacted table says it once, and a preset still reads "replay <preset>"."""
    runs = [{"label": "replay claude-code", "compactions": [{"step": 71}]},
            {"label": "default", "compactions": []}]
    who = list(compaction_answer(runs, [])["who"])
    assert who[:2] == ["replay claude-code", "replay default"]


def _cost(saved: float, pct: float) -> ReplayCost:
    return ReplayCost(price_known=True, requests_usd=11.53, summaries_usd=1.2409,
                      replay_usd=12.77, saved_usd=saved, saved_pct=pct, steps_compared=143,
                      recorded_usd=11.50, savings=Savings(smaller_requests_usd=0.0827,
                                                          cache_misses_usd=0.1153,
                                                          summaries_usd=1.2409))


def test_r_tok_6_a_replay_that_costs_more_says_so_without_a_negative_saving():
    """R-TOK-6: a replay dearer than the recorded bill reads "Costs $1.27 more (+11.1 %)" (cents
    from a dollar up), never "Saved −$1.27 (−11.1 %)"; a cheaper one still reads "Saved"."""
    words = " ".join(cost_lines(_cost(-1.2735, -11.1)))
    assert "Costs $1.27 more (+11.1 %) than the recorded bill of the same 143 steps" in words
    assert "Saved" not in words and "−$1.27" not in words
    assert "Saved $0.5000 (4.3 %) against the recorded bill" in " ".join(cost_lines(_cost(0.5, 4.3)))


def test_r_tok_6_summary_usage_columns_are_words():
    """R-TOK-6: the Usage page's summary usage table labels every column in words (no
    ``cache_hits``)."""
    from workbench.ui.usage import _SUMMARY_COLUMNS  # pyright: ignore[reportPrivateUsage]

    assert _SUMMARY_COLUMNS["cache_hits"].get("label") == "cache hits"
    assert all("_" not in str(c.get("label")) for c in _SUMMARY_COLUMNS.values())


def test_r_ses_1_blank_text_block_is_said_not_drawn_as_an_empty_box():
    """R-SES-1: Claude Code's whitespace-only text blocks (kept by the lossless import) read as
    words on the Messages page; real text gets no note."""
    from workbench.views.messages import blank_note

    assert blank_note("\n\n") == "whitespace-only text block (2 characters)"
    assert blank_note("") == "empty text block"
    assert blank_note(" ok ") is None


def test_r_ses_2_search_counts_are_singular_for_one():
    """R-SES-2: one hit reads "1 block in 1 message", not "1 blocks in 1 messages"."""

    from workbench.views.search import counts_caption

    one = pd.DataFrame({"message": [160], "role": ["user"], "kind": ["text"], "tool": [""],
                        "state": ["left out"],
                        "error": [False]})
    assert counts_caption(one).startswith("1 block in 1 message ·")


def test_r_ui_2_header_says_when_no_overhead_was_measured_yet():
    """R-UI-2: at a step before any response measured the unrecorded overhead (step 0 of a real
    Claude Code session: 43 tokens against the provider's 25,897), the header says why its figure
    is so small instead of a bare "+ 0 unrecorded overhead"; a measured overhead names its step."""
    from workbench.views.step_through import StepHeader

    common: dict[str, Any] = {"step_index": 0, "phase": "ready", "phase_colour": "#000",
                              "final_input_tokens": 43,
                              "input_budget": 200_000, "percent_of_budget": 0.0,
                              "pressure": "green", "pressure_colour": "#000",
                              "provider_label": "25,897", "whole_request_tokens": 43}
    first = StepHeader(**common).whole_request_words
    assert "+ 0 unrecorded overhead (none measured yet" in first and "system prompt" in first
    later = StepHeader(**{**common, "whole_request_tokens": 25_889,
                          "unrecorded_overhead_tokens": 25_846, "overhead_measured_at": 0})
    assert later.whole_request_words.endswith("+ 25,846 unrecorded overhead (measured at step 0)")


def test_r_ui_2_why_panel_states_one_after_figure_per_basis():
    """R-UI-2: the Why panel's commit line states the whole request as sent and the untrimmed
    history's detail once each; the engine's reason (which calls the history figure a "whole
    request") is not appended after them, so a compaction has one "whole request" after figure."""
    from iris.preparation.records import CompactionApplied

    from workbench.services.step_through import open_step
    from workbench.views.step_page import stage_whys

    with open_store() as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        info, _ = replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME,
                                  config=budget_96k_config())
        from workbench.services.replay import open_saved

        step = next(s.step_index for s in open_saved(store, info.id).steps if s.compaction_applied)
        prep = open_step(store, session_id, info.id, step).prep
    applied = next(d for s in prep.stages for d in s.decisions if isinstance(d, CompactionApplied))
    assert applied.sent_tokens_after is not None
    lines = {w.stage: w.lines for w in stage_whys(prep, session_id)}["compaction"] or ""
    commit = next(line for line in lines.splitlines() if "compaction-applied" in line)
    assert f"whole request as sent {applied.sent_tokens_before:,} → {applied.sent_tokens_after:,}" \
        in commit.replace("\\", "")
    assert commit.count("whole request") == 1 and "counted on the untrimmed" not in commit
    assert f"head archived to {applied.archive_path}" in commit.replace("\\", "")


def test_r_ui_2_stage_table_puts_the_long_note_last():
    """R-UI-2: the stage table's raw local estimates (which its caption calls the last two
    columns of detail) come before the long note, which is the table's last column."""
    with open_store() as store:
        store.import_file(ROOT / "sample_sessions" / "bugfix.jsonl")
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page("../pages/step_through.py").run()
    assert not at.exception, at.exception
    table = next(d for d in at.dataframe if "local_before_tokens" in d.value.columns)
    order = list(table.proto.column_order)
    assert order[-1] == "note"
    assert order.index("local_after_tokens") < order.index("note")
