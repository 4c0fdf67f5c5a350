"""R-SES-1/2/3: the session model, derived views, usage normalisation, native round-trip."""

import json

from iris.session import (
    Message,
    ModelLimits,
    ModelSwitch,
    RecordedCompaction,
    RecordedContribution,
    Session,
    SessionHeader,
    StepSnapshot,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
    index_session,
)

from workbench.importers.native import dumps_session, event_schema, parse_native_lines


def _session():
    msgs = (
        Message(role="system", content=(TextBlock(text="sys"),)),
        Message(role="user", content=(TextBlock(text="fix the bug"),)),
        Message(role="assistant", content=(ToolCallBlock(id="a", name="Read", arguments={"p": 1}),
                                           ToolCallBlock(id="b", name="Grep", arguments={})),
                usage=Usage(input_tokens=10, cache_read_tokens=100, cache_write_tokens=5)),
        Message(role="tool", content=(ToolResultBlock(call_id="a", text="x"),
                                      ToolResultBlock(call_id="b", text="y", is_error=True))),
        Message(role="assistant", content=(ToolCallBlock(id="c", name="Bash", arguments={}),)),
    )
    return Session(header=SessionHeader(session_id="s1", title="t", limits=ModelLimits(context=1000)),
                   messages=msgs,
                   model_switches=(ModelSwitch(at_message=4, model="m2"),),
                   compactions=(RecordedCompaction(at_message=1, summary="sum"),),
                   context_snapshots=(StepSnapshot(step_index=0, contributions=(
                       RecordedContribution(key="k", text="v", required=False, priority=5),)),))


def test_r_ses_1_batches_groups_and_pairing():
    idx = index_session(_session().messages)
    assert [b.assistant_message for b in idx.batches] == [2, 4]
    # parallel calls share one batch, and their results take the call's batch
    assert idx.batch_of_message == (None, None, 0, 0, 1)
    assert idx.results["b"].block == 1
    assert idx.unanswered_calls == ("c",)
    assert [g.closed for g in idx.groups] == [True, False]


def test_r_ses_2_usage_normalisation_per_provider():
    anthropic = Usage(input_tokens=10, cache_read_tokens=100, cache_write_tokens=5)
    openai = Usage(input_tokens=110, cache_read_tokens=100, cache_read_in_input=True)
    assert anthropic.prompt_tokens == 115
    assert openai.prompt_tokens == 110
    assert not Usage().is_trusted


def test_r_ses_3_native_round_trip_is_lossless():
    s = _session()
    text = dumps_session(s)
    back = parse_native_lines(text.splitlines())
    assert back == s
    assert dumps_session(back) == text
    first = json.loads(text.splitlines()[0])
    assert first["type"] == "header" and first["schema_version"] == 1


def test_r_ses_3_schema_lists_every_event_type():
    schema = json.dumps(event_schema())
    for kind in ("header", "message", "model_switch", "compaction", "context_snapshot"):
        assert f'"{kind}"' in schema


def test_r_ses_1_model_copy_reindexes_new_messages():
    s = _session()
    assert s.index.unanswered_calls == ("c",)
    shorter = s.model_copy(update={"messages": s.messages[:4]})
    assert shorter.index.unanswered_calls == ()
    assert len(shorter.index.batches) == 1
