"""A ``/clear`` inside a Claude Code file (R-TWIN-1, R-TWIN-3): the ``SessionStart:clear`` hook
line starts the conversation again without a parent. The import keeps both conversations (every
response, the bill) and records the clear where the context restarts; every replay's history
restarts there as the agent's did, and the trigger at that step does not read the provider's
count of the history the clear removed."""

from __future__ import annotations

from pathlib import Path

from claude_builders import asst, line, user, write
from iris.replay import replay

from workbench.importers import load_session
from workbench.services.presets import load_preset

WORDS = " alpha" * 3000


def _clear_hook(uuid: str) -> dict:
    return line("progress", uuid, None, data={"type": "hook_progress", "hookEvent": "SessionStart",
                                              "hookName": "SessionStart:clear"})


def _file(tmp_path: Path) -> Path:
    rows = [user("u1", None, "first task" + WORDS), asst("a1", "u1", "msg_1", "done one", read=4000),
            user("u2", "a1", "more" + WORDS), asst("a2", "u2", "msg_2", "done two", read=7000),
            _clear_hook("h1"),
            user("u3", "h1", "Implement the following plan: add a flag"),
            asst("a3", "u3", "msg_3", "flag added", read=1200),
            user("u4", "a3", "and the docs"), asst("a4", "u4", "msg_4", "docs too", read=1300)]
    return write(tmp_path / "cleared.jsonl", rows)


def test_r_twin_1_a_clear_keeps_both_conversations_and_is_recorded(tmp_path):
    loaded = load_session(_file(tmp_path))  # strict
    session = loaded.session
    assert [m.text for m in session.messages if m.role == "assistant"] == [
        "done one", "done two", "flag added", "docs too"]
    [clear] = session.compactions
    assert clear.trigger == "clear" and clear.source == "claude_code:clear"
    assert session.messages[clear.at_message].text.startswith("Implement the following plan")
    [note] = [w for w in loaded.warnings if "starts the conversation again" in w.problem]
    assert note.line == 5 and "context restarts there" in note.problem


def test_r_twin_3_every_replay_restarts_its_history_at_the_clear(tmp_path):
    session = load_session(_file(tmp_path)).session
    for preset in ("claude-code", "default"):
        result = replay(session, load_preset(preset))
        before, after = result.preparations[1], result.preparations[2]
        assert before.final_input_tokens > 6000 > after.final_input_tokens, preset
        # the previous response counted the history the clear removed: not the trigger's basis
        assert after.trigger_basis == "calibrated_local", preset
        assert after.trigger_tokens is not None and after.trigger_tokens < 4000, preset


def test_r_twin_8_twin_check_leaves_the_clear_out_of_the_compaction_rows(tmp_path):
    from workbench.corpus.twin_check import check_file

    row = check_file(_file(tmp_path))
    assert not row.error and row.failed_steps == 0
    assert row.responses_imported == row.responses_in_file == 4
    assert row.compactions == ()
