"""Small hand-built preparations for the evidence and view tests.

They follow the record rules (six stages in order, spec statuses) so the views see realistic
shapes without running the engine; the tests that need the engine's real output replay the sample
sessions instead.
"""

from __future__ import annotations

from iris.preparation.records import (
    STAGE_NAMES,
    CompactionApplied,
    CompactionCandidate,
    CompactionPlan,
    CompactionRejected,
    ContextPreparation,
    FinalSelection,
    FoldedRepeat,
    KeptRecent,
    MessageMark,
    Phase,
    PreparationFailure,
    PreparedRequest,
    Reduced,
    StageName,
    StageRecord,
    StageStatus,
    UsageKind,
)
from iris.session import Message, TextBlock, ToolCallBlock, ToolResultBlock

from workbench.records import ArchiveRecord, EvidenceBundle


def messages() -> tuple[Message, ...]:
    return (
        Message(role="user", content=(TextBlock(text="Fix the failing test"),)),
        Message(role="assistant", content=(ToolCallBlock(id="c1", name="shell",
                                                         arguments={"cmd": "pytest"}),)),
        Message(role="tool", content=(ToolResultBlock(call_id="c1", text="E" * 600),)),
        Message(role="assistant", content=(TextBlock(text="<b>done</b>"),)),
    )


def stages(step: int, *, compaction: StageStatus = "skipped", fail_at: StageName | None = None
           ) -> tuple[StageRecord, ...]:
    out, tokens = [], 1000 + 100 * step
    for name in STAGE_NAMES:
        if fail_at == name:
            break
        decisions: tuple = ()
        status: StageStatus = "entered"
        after = tokens
        if name == "fold_repeats":
            decisions = (FoldedRepeat(reason="identical re-read of a.py", message_index=2,
                                      read_back="result:5:0", tool_name="read",
                                      tokens_before=300, tokens_after=20),)
            after = tokens - 280
        elif name == "trim_old_bodies":
            decisions = (Reduced(reason="shell output 5,731 B at age 2 → summarised", message_index=2,
                                 block_index=0, tool_name="shell", category="shell", rule="success",
                                 action="reduced", age=2, tokens_before=400, tokens_after=40),
                         KeptRecent(reason="recent tool group", message_index=3, tool_name="read"))
            after = tokens - 360
        elif name == "compaction":
            status = compaction
            decisions = _compaction_decisions(compaction, tokens)
            after = tokens // 2 if compaction == "applied" else tokens
        elif name == "final_selection":
            decisions = (FinalSelection(reason="final", message_count=4, input_tokens=tokens),)
        out.append(StageRecord(name=name, status=status, before_input_tokens=tokens,
                               after_input_tokens=after, decisions=decisions,
                               note="" if status != "skipped" else "below the pressure line"))
        tokens = after
    return tuple(out)


def _compaction_decisions(status: StageStatus, tokens: int) -> tuple:
    if status == "skipped":
        return ()
    plan = CompactionPlan(reason="request over the pressure line", trigger="auto",
                          request_tokens=tokens, pressure_line=1200, cut_index=2,
                          archived_messages=2, kept_messages=2)
    cand = CompactionCandidate(reason="summary attempt", attempt=1, cut_index=2, summary_tokens=90,
                               tokens_after=tokens // 2)
    if status == "rejected":
        return (plan, cand, CompactionRejected(reason="summary not smaller", attempt=1,
                                               tokens_after=tokens + 5))
    return (plan, cand, CompactionApplied(reason="committed", cut_index=2,
                                          archive_path="history-1.md", checkpoint_tokens=90,
                                          tokens_before=tokens, tokens_after=tokens // 2))


def preparation(step: int, *, phase: Phase = "ready", compaction: StageStatus = "skipped",
                usage_kind: UsageKind = "trusted", with_request: bool = True) -> ContextPreparation:
    fail_at = "compaction" if phase != "ready" else None
    stage_records = stages(step, compaction=compaction, fail_at=fail_at)
    error = None if phase == "ready" else PreparationFailure(
        stage="compaction", message="summariser timed out after 300 s",
        kind="timeout" if phase == "cancelled" else "error", error_type="SummariserError")
    return ContextPreparation(
        configuration_snapshot_id="sha256:cfg", run_id="run-1", session_id="s1",
        activation="replay", step_index=step, response_message_index=2 * step + 1,
        input_budget=2000, pressure_line=1600, reminder_line=1080, stages=stage_records,
        final_input_tokens=stage_records[-1].after_input_tokens, message_count=4,
        final_request_ref=request().ref if with_request and phase == "ready" else None,
        compaction_applied=compaction == "applied",
        provider_prompt_tokens=None if usage_kind == "missing" else 1100 + 90 * step,
        provider_usage_kind=usage_kind, phase=phase, error=error,
    ).with_id()


def request() -> PreparedRequest:
    msgs = messages()
    marks = (MessageMark(origin="history", history_index=0),
             MessageMark(origin="history", history_index=1),
             MessageMark(origin="history", history_index=2, marks=("reduced",)),
             MessageMark(origin="history", history_index=3))
    return PreparedRequest(messages=msgs, tools=({"name": "shell", "parameters": {}},), marks=marks,
                           dropped=("tool:web_search",))


def bundle(steps: int = 5, *, failed_at: int | None = 3, applied_at: int | None = 2,
           rejected_at: int | None = 1) -> EvidenceBundle:
    preps = []
    for step in range(steps):
        phase = "failed" if step == failed_at else "ready"
        compaction = ("applied" if step == applied_at else
                      "rejected" if step == rejected_at else "skipped")
        preps.append(preparation(step, phase=phase, compaction=compaction,
                                 usage_kind="estimated" if step == 4 else "trusted"))
    req = request()
    return EvidenceBundle(
        preparations=tuple(preps), requests={req.ref: req},
        archives=(ArchiveRecord(n=1, step_index=applied_at, path="history-1.md",
                                text="# history-1\n\nuser: Fix the failing test",
                                checkpoint_text="## Goal\nFix the failing test"),),
        configuration_snapshot_id="sha256:cfg", configuration_hash="sha256:cfghash",
        configuration_json={"compaction": {"input_budget_tokens": 2000}},
        configuration_yaml="compaction:\n  input_budget_tokens: 2000\n",
        template_snapshot_id="sha256:tpl", template_sources={"compaction": "Summarise {{ x }}"},
        summariser="extractive")
