"""Records of a preparation (R-PREP-1, R-PREP-2, R-PREP-3): shape, round trip, deterministic ids."""

from __future__ import annotations

import json

import pytest
from iris.preparation.records import (
    STAGE_NAMES,
    CompactionApplied,
    CompactionCandidate,
    CompactionPlan,
    CompactionRejected,
    ContextPreparation,
    DroppedOptional,
    DroppedTool,
    FinalSelection,
    FoldedRepeat,
    KeptRecent,
    KeptRequired,
    MessageMark,
    PreparationFailure,
    PreparedRequest,
    Reduced,
    StageRecord,
    Trimmed,
    request_ref,
)
from iris.session import Message, TextBlock
from pydantic import ValidationError
from record_access import failure_of

ALL_DECISIONS = (
    KeptRequired(reason="required contribution", key="goal", tokens=12),
    KeptRecent(reason="in the 2 most recent tool groups", message_index=4, ref="result:4:0",
               tool_name="read", call_id="c1"),
    FoldedRepeat(reason="identical body read again later", message_index=2, ref="result:2:0",
                 read_back="result:6:0", tool_name="read", tokens_before=300, tokens_after=20),
    DroppedOptional(reason="priority 10 is the lowest", key="hint", priority=10, position=2,
                    tokens=40),
    DroppedTool(reason="deferred disclosure", tool_name="web_fetch", tokens=90),
    Trimmed(reason="old body", message_index=2, ref="result:2:0", block_index=0, tokens_before=500,
            tokens_after=60),
    Reduced(reason="old shell success", message_index=3, ref="result:3:0", block_index=0,
            category="shell", rule="shell_success_age_turns", action="reduced", age=3),
    CompactionPlan(reason="over the pressure line", trigger="auto", request_tokens=900,
                   pressure_line=800, cut_index=6, archived_messages=6, kept_messages=4),
    CompactionCandidate(reason="summary written", attempt=1, cut_index=6, summary_tokens=100,
                        tokens_after=400),
    CompactionRejected(reason="not below the pressure line", attempt=1, tokens_after=850),
    CompactionApplied(reason="committed", cut_index=6, archive_path="history-1.md",
                      checkpoint_tokens=100, tokens_before=900, tokens_after=400),
    FinalSelection(reason="final request", message_count=5, tool_names=("read",),
                   contribution_keys=("goal",), input_tokens=400),
)


def _prep(**over) -> ContextPreparation:
    fields = {"configuration_snapshot_id": "sha256:cfg", "run_id": "s:run-0", "session_id": "s",
              "activation": "replay", "step_index": 3, "response_message_index": 7,
              "input_budget": 1000, "pressure_line": 800, "reminder_line": 600,
              "stages": tuple(StageRecord(name=n, status="entered", before_input_tokens=10,
                                          after_input_tokens=9) for n in STAGE_NAMES)}
    fields.update(over)
    return ContextPreparation(**fields).with_id()


def test_r_prep_1_every_decision_kind_round_trips_through_json():
    """R-PREP-1/R-PREP-4: every decision kind survives model_dump(mode='json') and back."""
    stage = StageRecord(name="compaction", status="applied", before_input_tokens=900,
                        after_input_tokens=400, decisions=ALL_DECISIONS)
    prep = _prep(stages=(stage,), error=None)
    text = json.dumps(prep.model_dump(mode="json"), sort_keys=True)
    again = ContextPreparation.model_validate(json.loads(text))
    assert again == prep
    assert [d.kind for d in again.stages[0].decisions] == [d.kind for d in ALL_DECISIONS]
    assert len({d.kind for d in ALL_DECISIONS}) == 12


def test_r_prep_1_ids_are_content_hashes_and_deterministic():
    """R-PREP-6: same content, same preparation_id; any change gives another id."""
    a, b = _prep(), _prep()
    assert a.preparation_id == b.preparation_id
    assert a.preparation_id.startswith("sha256:") and len(a.preparation_id) == 7 + 64
    assert _prep(step_index=4).preparation_id != a.preparation_id


def test_r_prep_1_failed_preparation_keeps_its_error():
    """R-PREP-1: a failed preparation keeps the stage and the error."""
    prep = _prep(phase="failed", error=PreparationFailure(stage="compaction", message="boom",
                                                          kind="timeout"))
    back = ContextPreparation.model_validate(prep.model_dump(mode="json"))
    assert back.phase == "failed" and failure_of(back).stage == "compaction"
    assert failure_of(back).kind == "timeout"


def test_r_prep_3_unknown_status_and_stage_are_rejected():
    """R-PREP-3: only the five statuses and six stage names exist."""
    with pytest.raises(ValidationError):
        StageRecord(name="assembly", status="done",  # pyright: ignore[reportArgumentType]  # invalid on purpose
                    before_input_tokens=0, after_input_tokens=0)
    with pytest.raises(ValidationError):
        StageRecord(name="magic",  # pyright: ignore[reportArgumentType]  # invalid on purpose
                    status="entered", before_input_tokens=0, after_input_tokens=0)


def test_records_are_frozen_and_forbid_extra_fields():
    """STYLE 4: records are frozen, unknown fields are errors."""
    prep = _prep()
    with pytest.raises(ValidationError):
        prep.step_index = 9  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ContextPreparation.model_validate({**prep.model_dump(mode="json"), "surprise": 1})


def test_prepared_request_ref_is_its_content_hash():
    """R-PREP-1: final_request_ref is the hash of the prepared request (messages, tools, marks)."""
    msg = Message(role="user", content=(TextBlock(text="hi"),))
    req = PreparedRequest(messages=(msg,), marks=(MessageMark(origin="history", history_index=0),))
    assert req.ref == request_ref(req)
    assert req.ref.startswith("sha256:")
    other = PreparedRequest(messages=(msg,),
                            marks=(MessageMark(origin="history", history_index=0,
                                               marks=("trimmed",)),))
    assert other.ref != req.ref
    assert PreparedRequest.model_validate(req.model_dump(mode="json")) == req


def test_public_surface_of_iris_preparation_is_sorted_and_importable():
    """STYLE 11: iris.preparation exports a sorted __all__ (constants, classes, functions, as
    ruff sorts it) whose names all exist."""
    import iris.preparation as prep

    def ruff_order(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert list(prep.__all__) == sorted(prep.__all__, key=ruff_order)
    for name in prep.__all__:
        assert getattr(prep, name) is not None, name
    assert prep.STAGE_NAMES == tuple(name for name, _ in prep.STAGES)
