"""The loss record of a compaction (R-FID-1): facts of the replaced span by kind, kept or not,
needed later or not, on transcripts built here and on the real Claude Code sessions."""

from __future__ import annotations

import json
from pathlib import Path

from iris.fidelity import (
    FACT_KINDS,
    applied_loss_record,
    command_parts,
    extract_facts,
    recorded_loss_records,
)
from iris.session import (
    Message,
    RecordedCompaction,
    Session,
    SessionHeader,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)

ROOT = "/ws/proj"


def _user(text: str) -> Message:
    return Message(role="user", content=(TextBlock(text=text),))


def _call(cid: str, name: str, text: str = "", **args: object) -> Message:
    blocks: list[TextBlock | ToolCallBlock] = [TextBlock(text=text)] if text else []
    blocks.append(ToolCallBlock(id=cid, name=name, arguments=dict(args)))
    return Message(role="assistant", content=tuple(blocks))


def _result(cid: str, text: str, error: bool = False) -> Message:
    return Message(role="tool", content=(ToolResultBlock(call_id=cid, text=text, is_error=error),))


def _session(summary: str) -> Session:
    """A session that compacts at message 9: the path is kept and needed again, the test command
    is needed again but dropped, the notes file is never needed again."""
    messages = [
        _user("Fix the tokenizer in src/parse.py. Never change the files under tests/fixtures."),
        _call("c1", "Read", file_path=f"{ROOT}/src/parse.py"),
        _result("c1", "def parse_token(): ..."),
        _call("c2", "Bash", command=f"cd {ROOT} && pytest tests/test_parse.py -q 2>&1 | tail -5"),
        _result("c2", "Exit code 1\nE   ValueError: bad token at 3", error=True),
        _call("c3", "Read", file_path=f"{ROOT}/docs/notes.md"),
        _result("c3", "notes"),
        _call("c4", "Grep", pattern="parse_token"),
        _result("c4", "src/parse.py:1"),
        Message(role="user", content=(TextBlock(text=summary),), is_compaction_summary=True,
                synthetic=True),
        _call("c5", "Edit", "Editing src/parse.py now.", file_path=f"{ROOT}/src/parse.py",
              old_string="a", new_string="def parse_token(text):\n    pass"),
        _result("c5", "ok"),
        _call("c6", "Bash", command="pytest tests/test_parse.py -q"),
        _result("c6", "1 passed in 0.2s"),
        Message(role="assistant", content=(TextBlock(text="Done."),)),
    ]
    return Session(header=SessionHeader(session_id="built", workspace_root=ROOT),
                   messages=tuple(messages),
                   compactions=(RecordedCompaction(at_message=9, summary=summary),))


SUMMARY = "Summary: the user wants the tokenizer fixed; we read src/parse.py and searched parse_token."


def test_r_fid_1_needed_later_kept_lost_and_never_needed():
    """R-FID-1: a fact needed later and dropped (the test command), one kept (the path), one never
    needed again (the notes file); the lost one names the step that needed it."""
    (record,) = recorded_loss_records(_session(SUMMARY))
    fates = {(f.fact.kind, f.fact.key): f for f in record.fates}
    kept = fates["paths", "src/parse.py"]
    assert kept.kept and kept.needed_step == 4 and kept.needed_message == 10
    dropped = fates["commands", "pytest tests/test_parse.py -q"]
    assert not dropped.kept and dropped.needed_step == 5
    never = fates["paths", "docs/notes.md"]
    assert not never.kept and not never.needed_later
    assert [(f.fact.kind, f.fact.key, f.needed_step) for f in record.lost()] == [
        ("commands", "pytest tests/test_parse.py -q", 5), ("paths", "tests/test_parse.py", 5)]
    ident = fates["identifiers", "parse_token"]
    assert ident.kept and ident.needed_step == 4  # defined again by the later edit
    assert record.step == 4 and record.span_messages == 9 and record.source == "recorded"


def test_r_fid_1_kinds_counts_and_json_shape():
    """R-FID-1/R-FID-2: counts by kind (every kind present) and the summary-json object."""
    (record,) = recorded_loss_records(_session(SUMMARY))
    kinds = record.kinds()
    assert tuple(kinds) == FACT_KINDS
    assert kinds["paths"].needed_later == 2 and kinds["paths"].needed_later_kept == 1
    assert kinds["commands"].needed_later == 1 and kinds["commands"].needed_later_kept == 0
    assert kinds["errors"].facts == 1 and kinds["instructions"].facts == 1
    data = record.as_json()
    assert set(data) == {"kinds", "needed_later", "needed_later_kept", "recall_needed_later"}
    assert set(data["kinds"]["paths"]) == {"facts", "kept", "needed_later", "needed_later_kept"}
    assert data["needed_later"] == record.needed_later == 4
    assert data["recall_needed_later"] == 0.5
    json.dumps(data)


def test_r_fid_1_a_summary_that_names_the_command_keeps_it():
    """R-FID-1: the same session with a summary naming the command (absolute path form and extra
    spaces normalised) loses nothing it needs later."""
    summary = SUMMARY + f"\nRun `cd {ROOT}/ && pytest   tests/test_parse.py -q` to check."
    (record,) = recorded_loss_records(_session(summary))
    assert record.lost() == () and record.recall_needed_later == 1.0


def test_r_fid_1_retained_messages_count_as_kept():
    """R-FID-1: a replay's compaction keeps what its raw tail holds, whatever the checkpoint says."""
    session = _session(SUMMARY)
    record = applied_loss_record(session, n=1, step=4, archived=range(3), first_kept=3,
                                 checkpoint="## Files\n- nothing")
    fates = {(f.fact.kind, f.fact.key): f for f in record.fates}
    assert fates["paths", "src/parse.py"].kept  # stated again in the retained Grep result
    assert not fates["instructions", next(k for kd, k in fates if kd == "instructions")].kept
    assert record.source == "replay" and record.span_messages == 3


def test_r_fid_1_fact_kinds_from_calls_and_text():
    """R-FID-1: each kind is found where the module doc says (commands split, redirections and cd
    dropped; URLs, numbers with units, instructions from what a person typed)."""
    messages = [
        _user("Keep responses under 200 ms and always check https://example.org/spec. Thanks"),
        _call("c1", "Bash", command="cd /x && make build; FOO=1 npm test 2>&1 | tee log.txt"),
        _result("c1", "<tool_use_error>ENOENT: no such file</tool_use_error>", error=True),
        _call("c2", "Write", file_path="/x/app.py", content="class TokenCache:\n    pass"),
    ]
    facts = {(f.kind, f.key) for f in extract_facts(enumerate(messages))}
    assert ("commands", "make build") in facts and ("commands", "FOO=1 npm test") in facts
    assert ("urls", "https://example.org/spec") in facts
    assert ("numbers", "200ms") in facts
    assert ("errors", "enoent: no such file") in facts
    assert ("identifiers", "TokenCache") in facts and ("paths", "/x/app.py") in facts
    assert any(kind == "instructions" for kind, _ in facts)


def test_command_parts_respects_quotes_and_here_documents():
    """R-FID-1: a separator inside quotes does not split; a here-document body is not commands."""
    assert command_parts('python -c "import a; a.run()" && git status') == [
        'python -c "import a; a.run()"', "git status"]
    assert command_parts("cat > f.txt <<'EOF'\nrm -rf /\nEOF") == ["cat"]
    assert command_parts("if true; then\n  mix test\nfi") == ["mix test"]


def test_r_fid_1_real_claude_code_sessions(real_sessions: Path):
    """R-FID-1 on the real Claude Code sessions: each recorded compaction has a loss record with
    needed-later paths and commands, some of them lost by the agent's own summary."""
    from workbench.importers import load_session

    files = sorted((real_sessions / "claude_code").glob("*.jsonl.gz"))
    assert files
    for path in files:
        session = load_session(path).session
        records = recorded_loss_records(session)
        assert len(records) == len(session.compactions) >= 1
        for record in records:
            kinds = record.kinds()
            assert kinds["paths"].needed_later > 0 and kinds["commands"].needed_later > 0
            assert record.lost(), path.name
            assert all(f.needed_step is not None and f.needed_step >= record.step
                       for f in record.lost())


def test_r_fid_2_summary_json_has_fidelity_on_replay_and_recorded_compactions(tmp_path: Path):
    """R-FID-2: `--summary-json` gives each of the replay's compactions a ``fidelity`` object, and
    each recorded compaction of a built session its own (the agent's summary dropped a command)."""
    from iris.config import parse_config
    from iris.replay import replay

    from workbench.analysis.replay_report import replay_report
    from workbench.cli import main

    sample = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"
    config, out = tmp_path / "tight.yaml", tmp_path / "s.json"
    config.write_text("compaction:\n  input_budget_tokens: 96000\n", encoding="utf-8")
    assert main(["replay", str(sample), "--config", str(config), "--summary-json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["compactions"]
    for entry in data["compactions"]:
        fid = entry["fidelity"]
        assert set(fid["kinds"]) == set(FACT_KINDS)
        assert fid["needed_later_kept"] <= fid["needed_later"]
        assert sum(k["facts"] for k in fid["kinds"].values()) > 0
    session = _session(SUMMARY)
    summary = replay_report(session, replay(session, parse_config({})))
    (recorded,) = summary.recorded_compactions
    assert recorded.fidelity is not None
    assert recorded.fidelity.kinds["commands"].model_dump() == {
        "facts": 1, "kept": 0, "needed_later": 1, "needed_later_kept": 0}


def test_r_fid_2_summary_json_on_a_real_session(real_sessions: Path, tmp_path: Path):
    """R-FID-2 on a real Claude Code session: `--summary-json` with the claude-code profile gives
    the replay's compaction and the agent's recorded one a fidelity object at the same step, the
    replay's keeping more of the needed-later files and commands."""
    from workbench.cli import main

    path = real_sessions / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"
    out = tmp_path / "s.json"
    assert main(["replay", str(path), "--config", "claude-code", "--summary-json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    (mine,), (agent,) = data["compactions"], data["recorded_compactions"]
    assert mine["step"] == agent["step"] == 71
    assert mine["fidelity"]["needed_later"] == agent["fidelity"]["needed_later"] > 0
    assert mine["fidelity"]["recall_needed_later"] is not None

    def paths_commands(entry: dict) -> float:
        kinds = entry["fidelity"]["kinds"]
        kept = sum(kinds[k]["needed_later_kept"] for k in ("paths", "commands"))
        return kept / sum(kinds[k]["needed_later"] for k in ("paths", "commands"))

    assert paths_commands(mine) > paths_commands(agent)  # R-FID-3: files and commands kept


def test_r_fid_1_messages_a_compaction_provided_are_retained_not_later():
    """R-FID-1: a Codex-style compaction puts copies of earlier messages in place
    (``compaction_provided``): they count as retained, and a fact is needed later only where the
    session mentions it after them."""
    provided = _call("c1", "Bash", command="make lint").model_copy(
        update={"compaction_provided": True})
    messages = (
        _user("Run the linter please, and keep the build green."),
        _call("c1", "Bash", command="make lint"),
        _result("c1", "ok"),
        Message(role="user", content=(TextBlock(text="summary: linted"),),
                is_compaction_summary=True, compaction_provided=True),
        provided,
        _user("go on"),
        _call("c2", "Bash", command="make lint"),
        _result("c2", "ok"),
    )
    session = Session(header=SessionHeader(session_id="codex-like"), messages=messages,
                      compactions=(RecordedCompaction(at_message=3, summary="summary: linted"),))
    (record,) = recorded_loss_records(session)
    fate = next(f for f in record.fates if f.fact.kind == "commands")
    assert fate.kept and fate.needed_message == 6 and fate.needed_step == 1
