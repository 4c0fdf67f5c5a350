"""Search and filters over a session (R-UI-1, R-UI-8): text, tool names, file paths and errors,
filtered by role, tool, error and what a replay did with each message at a step, with counts and a
link to the step; the pure views on a real Claude Code transcript, the notebook's ``search`` and the
Messages page (AppTest)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import workbench as wb
from workbench.importers import load_session
from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store
from workbench.views.search import (
    STATES,
    SearchQuery,
    block_frame,
    counts_caption,
    message_states,
    search,
    search_counts,
)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
LONG = ROOT / "sample_sessions" / "long_session.jsonl"


@pytest.fixture(scope="module")
def real_session():
    path = ROOT.parent / "shared" / "real-sessions" / "claude_code" / \
        "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl.gz"
    if not path.is_file():
        pytest.skip("../shared/real-sessions is absent")
    return load_session(path).session


def test_r_ui_1_search_finds_tools_paths_and_errors_in_a_real_session(real_session):
    """R-UI-1: on a real Claude Code session, a tool filter keeps only that tool's calls and
    results, a file path is found in the calls that name it, and the error filter finds exactly
    the results recorded as errors."""
    blocks = block_frame(real_session)
    reads = search(blocks, SearchQuery(tools=("Read",)), session_id="s")
    assert len(reads) > 0 and set(reads["tool"]) == {"Read"}
    assert set(reads["kind"]) == {"tool_call", "tool_result"}
    path = next(p for p in reads["paths"] if p)
    by_path = search(blocks, SearchQuery(text=path), session_id="s")
    assert path in set(by_path["paths"]) and len(by_path) >= 1
    errors = search(blocks, SearchQuery(errors_only=True), session_id="s")
    recorded = sum(1 for m in real_session.messages for b in m.content
                   if getattr(b, "type", "") == "tool_result" and getattr(b, "is_error", False))
    assert len(errors) == recorded > 0 and set(errors["kind"]) == {"tool_result"}
    assert search_counts(errors)["error"] == {"errors": recorded}
    assert search_counts(errors)["state"] == {}  # no replay step given: no state counted
    assert "—" not in counts_caption(errors) and f"{recorded:,} errors" in counts_caption(errors)
    only_user = search(blocks, SearchQuery(text="error", roles=("user",)), session_id="s")
    assert set(only_user["role"]) <= {"user"}
    assert all("error" in m.lower() for m in only_user["match"])


def test_r_ui_1_each_hit_names_the_step_that_first_sent_it(real_session):
    """R-UI-1: a hit's step is the first response at or after its message (a response's own)."""
    blocks = block_frame(real_session)
    responses = [b.assistant_message for b in real_session.index.batches]
    for message, step in zip(blocks["message"], blocks["step"], strict=True):
        if not pd.isna(step):
            assert responses[int(step)] >= message
            assert int(step) == 0 or responses[int(step) - 1] < message
    found = search(blocks, SearchQuery(tools=("Bash",)), session_id="S1", replay_id="R1")
    link = urlparse(str(found["link"].iloc[0]))
    assert link.path == "step-through"
    assert parse_qs(link.query) == {"session": ["S1"], "replay": ["R1"],
                                    "step": [str(found["step"].iloc[0])]}


def test_r_ui_1_state_filter_follows_the_request_of_a_step():
    """R-UI-1: after a compaction, messages before the cut are left out of the step's request,
    reduced ones carry a mark, and the filter counts agree with the request."""
    result = wb.replay(LONG, {"compaction": {"input_budget_tokens": 96000}})
    applied = [p.step_index for p in result.preparations if p.compaction_applied]
    assert applied
    prep = result.preparations[applied[0] + 1]
    request = result.result.request(prep)
    assert request is not None
    states = message_states(request, prep.response_message_index, len(result.session.messages))
    sent = {m.history_index for m in request.marks if m.history_index is not None}
    assert {i for i, s in states.items() if s in ("sent whole", "reduced")} == sent
    assert any(s == "left out" for s in states.values())
    assert all(s == "not sent yet" for i, s in states.items() if i >= prep.response_message_index)
    frame = result.search(state=("left out",), step=applied[0] + 1)
    assert len(frame) > 0 and set(frame["state"]) == {"left out"}
    assert set(frame["message"]) <= {i for i, s in states.items() if s == "left out"}
    assert set(STATES) >= set(result.search(step=applied[0] + 1)["state"])
    assert counts_caption(frame).startswith(f"{len(frame):,} blocks in ")


def test_r_ui_1_messages_page_searches_and_links_to_the_step():
    """R-UI-1: typing on the Messages page lists the hits with counts and a Step-through link."""
    with open_store() as store:
        session_id = store.import_file(LONG).session_id
        replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME, config=budget_96k_config())
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page("../pages/messages.py").run()
    assert not at.exception, at.exception
    at.text_input(key="wb_search_text").input("retry").run()
    assert not at.exception, at.exception
    found = _found(at)
    assert len(found) > 0
    assert all("retry" in m.lower() for m in found["match"])
    assert all(link.startswith(f"step-through?session={session_id}&replay=") for link in found["link"])
    assert any(c.value.startswith(f"{len(found):,} blocks in ") for c in at.caption)
    at.text_input(key="wb_search_text").input("").run()
    at.toggle(key="wb_search_errors").set_value(True).run()
    recorded = sum(1 for m in load_session(LONG).session.messages for b in m.content
                   if getattr(b, "is_error", False))
    if recorded:
        errors = _found(at)
        assert len(errors) == recorded and all(errors["error"])
    else:
        assert any(c.value == "Nothing found." for c in at.caption)


def _found(at: AppTest):
    """The search's result table (the only table with a ``match`` column)."""
    return next(d.value for d in at.dataframe if "match" in d.value.columns)
