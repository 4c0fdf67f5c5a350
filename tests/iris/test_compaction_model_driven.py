"""Model-driven checkpoints (R-CMP-12): tool schema and arguments, each gate at its boundary, the
typed state merge, state_files escapes, worklog and repository state."""

from __future__ import annotations

import os

import pytest
from iris.compaction import (
    COMPACT_CONTEXT_TOOL,
    CheckpointArgsError,
    CompactionOutcome,
    RejectedDecision,
    SkippedDecision,
    TypedCheckpointState,
    apply_model_checkpoint,
    check_gates,
    checkpoint_worklog,
    merge_typed_state,
    normalize_state_files,
    parse_compact_args,
    thresholds,
)
from iris.compaction.typed_state import MAX_ITEMS, Claim
from iris.config import parse_config
from iris.session import Message, TextBlock, ToolCallBlock, ToolResultBlock
from iris.tokens import default_estimator

EST = default_estimator()
ARGS = {"active_objective": "Migrate the sinks", "next_step": "Edit sinks/kafka.py retry loop"}


def test_r_cmp_12_tool_schema_requires_objective_and_next_step():
    schema = COMPACT_CONTEXT_TOOL["input_schema"]
    assert COMPACT_CONTEXT_TOOL["name"] == "compact_context"
    assert schema["required"] == ["active_objective", "next_step"]
    assert set(schema["properties"]) >= {"completed", "decisions", "open_issues",
                                         "open_issues_complete", "retired_items", "state_files",
                                         "planned_state_files", "evidence_refs", "claim_kinds"}


@pytest.mark.parametrize("raw,match", [
    ({"active_objective": "x"}, "next_step"),
    ({**ARGS, "next_step": "  "}, "next_step"),
    ({**ARGS, "bogus": 1}, "unknown argument"),
    ({**ARGS, "claim_kinds": {"tests pass": "observed"}}, "observed claim needs"),
    ({**ARGS, "claim_kinds": {"x": "guessed"}}, "claim_kinds"),
])
def test_r_cmp_12_argument_validation(raw, match):
    """R-CMP-12: required fields, claim kinds, observed claims need evidence."""
    with pytest.raises(CheckpointArgsError, match=match):
        parse_compact_args(raw)


def test_r_cmp_12_evidence_ids_must_be_known():
    args = {**ARGS, "claim_kinds": {"t": "observed"}, "claim_evidence": {"t": ["ev1"]}}
    assert parse_compact_args(args, known_evidence={"ev1"}).claims()[0].evidence == ("ev1",)
    with pytest.raises(CheckpointArgsError, match="unknown evidence id 'ev1'"):
        parse_compact_args(args, known_evidence=set())


def test_r_cmp_12_state_files_normalised_and_escapes_rejected(tmp_path):
    """R-CMP-12: paths normalised relative to the root; `..`, absolute outside and symlinks
    pointing outside are rejected; nothing is read."""
    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    os.symlink(outside, root / "link.txt")
    os.symlink(root / "docs", root / "inside-link")
    got = normalize_state_files(["docs/notes.md", "./docs/../docs/a.md", str(root / "b.md"),
                                 "inside-link", "docs/notes.md"], root)
    assert got == ("docs/notes.md", "docs/a.md", "b.md", "inside-link")
    for bad, why in [("../secret.txt", "outside"), (str(outside), "outside"),
                     ("docs/../../secret.txt", "outside"), ("link.txt", "symlink")]:
        with pytest.raises(CheckpointArgsError, match=why):
            normalize_state_files([bad], root)


def _gate(**kw):
    base = {"current_tokens": 100000, "projected_tokens": 50000, "current_batch": 10,
            "last_apply_batch": None, "cooldown_until_batch": None, "fingerprint": "a",
            "last_fingerprint": None}
    return check_gates(**{**base, **kw})


def test_r_cmp_12_low_gain_gate_boundaries():
    """R-CMP-12: skip unless saving ≥ 2048 tokens and ≥ 10% of the prepared surface."""
    assert _gate(current_tokens=20000, projected_tokens=17952).passed          # 2048, 10.24%
    assert _gate(current_tokens=20000, projected_tokens=17953).gate == "low_gain"  # 2047
    assert _gate(current_tokens=30000, projected_tokens=27000).passed          # exactly 10%
    assert _gate(current_tokens=30000, projected_tokens=27001).gate == "low_gain"


def test_r_cmp_12_interval_cooldown_duplicate_gates():
    """R-CMP-12: fewer than 3 batches since the last apply; low-gain cooldown; duplicates."""
    assert _gate(current_batch=12, last_apply_batch=10).gate == "interval"
    assert _gate(current_batch=13, last_apply_batch=10).passed
    assert _gate(current_batch=11, cooldown_until_batch=12).gate == "cooldown"
    assert _gate(current_batch=12, cooldown_until_batch=12).passed
    assert _gate(fingerprint="x", last_fingerprint="x").gate == "duplicate"


def _typed(**kw):
    return TypedCheckpointState(active_objective="o", next_step="n", **kw)


def test_r_cmp_12_typed_merge_new_wins_and_unrestated_kept():
    """R-CMP-12: new items win; omitted items are kept; retired items removed by trimmed match."""
    old = _typed(completed=("a", "b"), decisions=("use X",))
    new = _typed(completed=("c", "a"), decisions=("use Y",))
    merged = merge_typed_state(old, new, retired_items=["  use X "])
    assert merged.completed == ("b", "c", "a") and merged.decisions == ("use Y",)
    assert merge_typed_state(old, new, retired_items=["USE X"]).decisions == ("use X", "use Y")


def test_r_cmp_12_typed_merge_claims_go_stale():
    """R-CMP-12: unrestated claims go from active to stale; restated ones are replaced."""
    old = _typed(claims=(Claim(key="k1", kind="derived"), Claim(key="k2", kind="assumed")))
    new = _typed(claims=(Claim(key="k2", kind="observed", evidence=("e",)),))
    merged = merge_typed_state(old, new)
    assert [(c.key, c.status, c.kind) for c in merged.claims] == [
        ("k1", "stale", "derived"), ("k2", "active", "observed")]


def test_r_cmp_12_open_issues_complete_moves_unrestated_to_history():
    """R-CMP-12: with open_issues_complete only new issues are current; others are historical."""
    old = _typed(open_issues=("flaky test", "slow build"))
    merged = merge_typed_state(old, _typed(open_issues=("slow build",)), open_issues_complete=True)
    assert merged.open_issues == ("slow build",) and merged.historical_issues == ("flaky test",)
    incremental = merge_typed_state(old, _typed(open_issues=("new bug",)))
    assert incremental.open_issues == ("flaky test", "slow build", "new bug")


def test_r_cmp_12_typed_merge_capped_with_disclosure():
    """R-CMP-12: capped; the overflow is counted for disclosure."""
    old = _typed(completed=tuple(f"item {i}" for i in range(MAX_ITEMS)))
    merged = merge_typed_state(old, _typed(completed=("new 1", "new 2")))
    assert len(merged.completed) == MAX_ITEMS and merged.overflow == 2
    assert merged.completed[-1] == "new 2" and "item 0" not in merged.completed


def _history(n=12, size=1000):
    out = [Message(role="user", content=(TextBlock(text="Migrate every sink. Never push."),))]
    for i in range(n):
        out += [Message(role="assistant", content=(
                    ToolCallBlock(id=f"e{i}", name="edit", arguments={"path": f"s{i}.py"}),
                    ToolCallBlock(id=f"b{i}", name="bash", arguments={"command": f"pytest {i}"}))),
                Message(role="tool", content=(ToolResultBlock(call_id=f"e{i}", text="ok"),
                                              ToolResultBlock(call_id=f"b{i}", text="x " * size,
                                                              is_error=i == 3)))]
    return out


def test_r_cmp_12_worklog_records_terminal_results_only():
    """R-CMP-12: the worklog lists successful edits and shell results with terminal status."""
    head = _history(2)
    head.append(Message(role="assistant", content=(
        ToolCallBlock(id="u", name="edit", arguments={"path": "pending.py"}),)))
    log = checkpoint_worklog(head)
    assert "- modified `s0.py` (edit)" in log and "- shell `pytest 0` → ok" in log
    assert not any("pending.py" in line for line in log)


def _apply(history, tmp_path, state=None, batch=20, args=ARGS, tokens=None):
    cfg = parse_config({"compaction": {"model_driven": True}})
    return apply_model_checkpoint(
        history, args, config=cfg, thresholds=thresholds(cfg), work_dir=tmp_path / "s",
        project_root=tmp_path, estimator=EST,
        request_tokens=tokens if tokens is not None else EST.request_tokens(history),
        current_batch=batch, state=state, repository_state="branch main, HEAD abc123, clean")


def _skip_gate(out: CompactionOutcome) -> str:
    """The gate that skipped a model-driven checkpoint."""
    skipped = out.decisions[0]
    assert isinstance(skipped, SkippedDecision), skipped
    return skipped.gate


def test_r_cmp_12_apply_builds_checkpoint_from_arguments(tmp_path):
    """R-CMP-12: applied deterministically; Current User Request from the real message; typed,
    worklog and repository-state sections; the head archived."""
    history = _history()
    out = _apply(history, tmp_path, args={**ARGS, "completed": ["sink a migrated (pytest ok)"],
                                          "state_files": ["notes/task.md"]})
    assert out.status == "applied"
    text = out.history[0].text
    assert "## Current User Request\nMigrate every sink. Never push." in text
    assert "## Next Step\nEdit sinks/kafka.py retry loop" in text
    for heading in ("## Typed Checkpoint State", "## Checkpoint Worklog", "## Repository State"):
        assert heading in text
    assert "notes/task.md" in text and "HEAD abc123" in text
    assert out.state.typed is not None
    assert out.state.last_model_apply_batch == 20 and out.state.typed.completed
    again = _apply([*out.history, *_history(12)[1:]], tmp_path, state=out.state, batch=22)
    assert again.status == "skipped" and _skip_gate(again) == "interval"


def test_r_cmp_12_low_gain_skip_starts_cooldown_and_duplicate(tmp_path):
    """R-CMP-12: a low-gain skip cools retries down for 2 batches; identical repeats with no new
    work are duplicates."""
    small = _history(1, size=5)
    first = _apply(small, tmp_path, batch=5)
    assert first.status == "skipped" and _skip_gate(first) == "low_gain"
    assert first.state.cooldown_until_batch == 7
    dup = _apply(small, tmp_path, state=first.state, batch=9)
    assert _skip_gate(dup) == "duplicate"
    grown = [*small, *_history(12)[1:]]
    cool = _apply(grown, tmp_path, state=first.state, batch=6)
    assert _skip_gate(cool) == "cooldown"
    assert _apply(grown, tmp_path, state=first.state, batch=7).status == "applied"


def test_r_cmp_12_invalid_state_file_rejects_request(tmp_path):
    out = _apply(_history(), tmp_path, args={**ARGS, "state_files": ["../../etc/passwd"]})
    rejected = out.decisions[0]
    assert isinstance(rejected, RejectedDecision), rejected
    assert out.status == "rejected" and "outside the project root" in rejected.reason
    assert not (tmp_path / "s").exists()
