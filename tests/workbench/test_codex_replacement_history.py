"""Codex replacement history is context a recorded compaction provided, not model responses
(R-SES-3, R-SES-4): one replay step per model call, ``inspect --json`` counts model calls."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from iris.config import parse_config
from iris.replay import ReplayOptions, replay
from iris.session import Message, TextBlock

from workbench.cli import main
from workbench.importers import load_session
from workbench.importers.native import dump_session, load_native
from workbench.storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
ROLLOUT = FIX / "codex_replacement_history.jsonl"
MODEL_CALLS = [3, 5, 7, 15, 17]
"""Indices of the five assistant messages that are real model calls in the fixture."""


def test_r_ses_4_replacement_history_is_marked_and_makes_no_response():
    """R-REAL-5: The 6 replacement-history items are compaction-provided; its 2 assistant copies carry
    no usage and make no request batch, so 5 batches = 5 token_count model calls."""
    session = load_session(ROLLOUT).session
    (comp,) = session.compactions
    provided = [i for i, m in enumerate(session.messages) if m.compaction_provided]
    assert provided == list(range(comp.at_message, comp.at_message + 6))
    copies = [session.messages[i] for i in provided if session.messages[i].role == "assistant"]
    assert [m.text for m in copies] == ["Looked at the store layout.",
                                        "Split plan: reader and writer modules."]
    assert all(m.usage is None for m in copies)
    assert [b.assistant_message for b in session.index.batches] == MODEL_CALLS
    assert all(session.messages[i].usage is not None for i in MODEL_CALLS)


def test_r_ses_4_inspect_json_responses_count_model_calls(capsys):
    """R-REAL-5."""
    assert main(["inspect", str(ROLLOUT), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts["responses"] == 5 == counts["responses_with_usage"]
    assert counts["messages_by_role"]["assistant"] == 7
    assert counts["compaction_provided_messages"] == 6
    assert counts["tool_calls"] == 3


def test_r_prep_6_replay_makes_one_step_per_model_call():
    """R-REAL-5: No phantom steps: every step answers a real model call and has trusted provider usage."""
    session = load_session(ROLLOUT).session
    result = replay(session)
    assert [p.response_message_index for p in result.preparations] == MODEL_CALLS
    assert [p.provider_usage_kind for p in result.preparations] == ["trusted"] * 5
    assert [p.provider_prompt_tokens for p in result.preparations] == [
        30000, 31000, 209950, 48297, 49397]


def test_r_ses_3_replacement_history_stays_in_the_session_for_the_baseline():
    """The new context after the compaction is still there: messages[at_message:] starts with
    the provided copies, ends with the encrypted summary, then the real calls follow."""
    session = load_session(ROLLOUT).session
    (comp,) = session.compactions
    after = session.messages[comp.at_message:comp.at_message + 6]
    assert [m.role for m in after] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert after[-1].is_compaction_summary and "encrypted" in after[-1].text


def test_r_ses_3_legacy_compaction_history_is_marked_provided():
    session = load_session(FIX / "codex_legacy_compacted.jsonl").session
    (comp,) = session.compactions
    assert all(m.compaction_provided for m in session.messages[comp.at_message:comp.at_message + 3])
    assert not any(m.compaction_provided for m in session.messages[:comp.at_message])
    assert len(session.index.batches) == 2


def test_r_ses_1_flag_survives_the_store_and_the_native_format(tmp_path):
    """Real SQLite store and native JSONL keep the flag; an ordinary message's serialised form
    has no such key, so content hashes of existing sessions do not change."""
    session = load_session(ROLLOUT).session
    with open_store() as store:
        store.import_file(ROLLOUT)
        stored = store.session(session.header.session_id)
    assert [m.compaction_provided for m in stored.messages] == [
        m.compaction_provided for m in session.messages]
    native = tmp_path / "s.jsonl"
    dump_session(session, native)
    assert load_native(native).messages == session.messages
    plain = Message(role="user", content=(TextBlock(text="hi"),))
    assert "compaction_provided" not in plain.model_dump(mode="json")


def test_r_ses_4_real_rollout_responses_equal_deduplicated_token_counts(real_sessions):
    """On the real rollout (no compaction): responses = distinct model calls with usage."""
    (path,) = sorted((real_sessions / "codex_rollout").glob("*.jsonl"))
    session = load_session(path).session
    totals, last = set(), None
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            info = row.get("payload", {}).get("info") if row.get("type") == "event_msg" else None
            if isinstance(info, dict) and info.get("total_token_usage") != last:
                last = info.get("total_token_usage")
                if (info.get("last_token_usage") or {}).get("input_tokens"):
                    totals.add(json.dumps(last, sort_keys=True))
    assert len(session.index.batches) == len(totals)
    assert not any(m.compaction_provided for m in session.messages)


def test_r_ses_3_as_recorded_baseline_sends_the_replacement_history():
    """The as-recorded baseline's request after the compaction is the replacement history (with
    its assistant copies); the engine's own replay leaves it out of its history."""
    session = load_session(ROLLOUT).session
    baseline = replay(session, options=ReplayOptions(baseline="recorded"))
    after = baseline.request(baseline.preparations[3])
    assert after is not None
    texts = [m.text for m in after.messages]
    assert "Split plan: reader and writer modules." in texts
    assert not any(t.startswith("Reading the store first.") for t in texts)
    # automatic compaction off: the fixture's provider counts (210,000) are far above its text
    engine = replay(session, parse_config({"compaction": {"threshold": 0}}))
    own = engine.request(engine.preparations[3])
    assert own is not None
    assert "Split plan: reader and writer modules." not in [m.text for m in own.messages]


def test_r_ses_4_summary_json_counts_one_step_per_model_call(capsys):
    # the default configuration fails one step of this small fixture (R-TWIN-9: exit 2 without
    # --allow-failed); the step count is what is checked here
    assert main(["replay", str(ROLLOUT), "--summary-json", "-", "--allow-failed"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] == 5
    keys = ("step", "tokens_before", "tokens_after", "trigger")
    assert [{k: c[k] for k in keys} for c in summary["recorded_compactions"]] == [
        {"step": 3, "tokens_before": 209950, "tokens_after": 48297, "trigger": "auto"}]


def test_r_ui_1_messages_view_marks_provided_copies():
    """The Messages view tells a kept copy from a response: flagged, and in the batch before it."""
    from iris.tokens import default_estimator

    from workbench.views.messages import conversation

    session = load_session(ROLLOUT).session
    views = conversation(session, default_estimator())
    copies = [v for v in views if v.compaction_provided and v.role == "assistant"]
    assert [v.index for v in copies] == [11, 13]
    assert all(v.batch == 2 and v.usage is None for v in copies)
    assert not any(views[i].compaction_provided for i in MODEL_CALLS)


def test_r_ui_1_messages_page_flags_the_kept_copies():
    from streamlit.testing.v1 import AppTest

    with open_store() as store:
        sid = store.import_file(ROLLOUT).session_id
    root = Path(__file__).resolve().parents[2]
    at = AppTest.from_file(str(root / "workbench" / "ui" / "app.py"), default_timeout=90)
    at.query_params["session"] = sid
    at.run()
    at.switch_page("../pages/messages.py").run()
    assert not at.exception, at.exception
    captions = [c.value for c in at.caption]
    flagged = [c for c in captions if "provided by the recorded compaction" in c]
    assert len(flagged) == 6
    assert any(m.value == "5" for m in at.metric if m.label == "Responses")
