"""Property tests over generated sessions and configurations (hypothesis, bounded):
replay never raises (R-PREP-1); a ready preparation fits its budget, a failed one says why
(R-PREP-3); required contributions are never dropped (R-DYN-4); a cut never separates a tool call
from its results (R-CMP-6); a current read is never reduced (R-RED-6); the history archives plus
the checkpoint's raw tail give back the original messages exactly (R-CMP-7); replay is
deterministic (R-PREP-6). Sessions come from the seeded generator in ``bench/synth.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from iris.compaction.archive import read_archive
from iris.config import parse_config
from iris.replay import replay
from iris.session import RecordedContribution, Session, StepSnapshot

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth import synth_session

#: Bounded: a fixed number of derandomised examples and no shrinking (each example is a replay).
BOUNDED = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                   phases=[Phase.explicit, Phase.generate],
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

configs = st.fixed_dictionaries({
    "compaction": st.fixed_dictionaries({
        "input_budget_tokens": st.sampled_from([6000, 12000, 24000, 60000]),
        "keep_recent_ratio": st.sampled_from([0.1, 0.15, 0.4]),
        "retain_recent_tokens": st.sampled_from([512, 4096]),
    }),
    "reduction": st.booleans(),
    "context_policy": st.fixed_dictionaries({"enabled": st.booleans(),
                                             "preserve_recent_tool_groups": st.integers(0, 3)}),
})


def _with_snapshots(session: Session, seed: int, optional_chars: int) -> Session:
    """Every step gets one required contribution and two optional ones of varying size."""
    snaps = tuple(StepSnapshot(step_index=k, contributions=(
        RecordedContribution(key="goal", text=f"Goal (step {k}): fix invoice rounding, seed {seed}."),
        RecordedContribution(key="memory", text="remember: " + "ledger " * optional_chars,
                             required=False, priority=50),
        RecordedContribution(key="todos", text="- [ ] run the tests\n" * (1 + k % 5), required=False,
                             priority=10)))
        for k in range(len(session.index.batches)))
    return Session(header=session.header, messages=session.messages, context_snapshots=snaps)


sessions = st.builds(lambda n, seed, extra: _with_snapshots(synth_session(n, seed), seed, extra),
                     st.integers(4, 40), st.integers(0, 10_000), st.sampled_from([10, 400, 3000]))


def _check_budget_and_failures(r) -> None:
    for p in r.preparations:
        if p.phase == "ready":
            assert p.final_input_tokens <= p.input_budget, (p.step_index, p.final_input_tokens)
        else:
            assert p.phase == "failed" and p.error is not None and p.error.message and p.error.stage


def _check_required(session: Session, r) -> None:
    required = {s.step_index: {c.key for c in s.contributions if c.required} for s in session.context_snapshots}
    for p in r.preparations:
        if p.phase == "ready":
            assert required[p.step_index] <= set(p.final_contribution_keys), p.step_index


def _check_cuts(session: Session, r) -> None:
    where = {}
    for i, m in enumerate(session.messages):
        for b in m.content:
            if b.type == "tool_call":
                where.setdefault(b.id, []).append(i)
            elif b.type == "tool_result":
                where.setdefault(b.call_id, []).append(i)
    for c in r.checkpoints:
        archived = set(c.archived_messages)
        recorded = next(p for p in r.preparations if p.step_index == c.step_index).response_message_index
        for call_id, places in where.items():
            # the call and every result already recorded at that step: all archived or all kept
            inside = {i in archived for i in places if i < recorded}
            assert len(inside) <= 1, f"call {call_id} split by the cut of step {c.step_index}"


def _check_archives(session: Session, r, tmp: Path) -> None:
    archived: list[int] = []
    for c in r.checkpoints:
        path = tmp / c.archive_name
        path.write_text(r.archives[c.archive_name], encoding="utf-8")
        # an archive after the first also holds the previous checkpoint (not a session message)
        got = [m for m in read_archive(path) if not _is_checkpoint(m)]
        assert [m.model_dump() for m in got] == [session.messages[i].model_dump() for i in c.archived_messages]
        archived += c.archived_messages
        if c.first_kept_message is not None:
            # archives so far + the raw tail = every original message before the response, once
            assert sorted(archived) == [i for i in range(c.first_kept_message) if i in set(archived)]
            step = next(p for p in r.preparations if p.step_index == c.step_index)
            tail = range(c.first_kept_message, step.response_message_index)
            assert set(archived).isdisjoint(tail)
            assert set(archived) | set(tail) >= {i for i in range(step.response_message_index)
                                                if session.messages[i].role != "system"} - _pinned(session)


def _is_checkpoint(message) -> bool:
    return message.is_compaction_summary or message.text.startswith("[Context Summary]")


def _pinned(session: Session) -> set[int]:
    """Messages a checkpoint carries itself instead of archiving (the first user request)."""
    return {i for i, m in enumerate(session.messages[:3]) if m.role == "user"}


def _current_reads(session: Session, upto: int) -> dict[tuple[int, int], str]:
    """(message, block) → text of Read results whose file no later Read/Edit/Write touches
    before ``upto`` (certainly still current, whatever the line ranges)."""
    messages = session.messages[:upto]
    calls = {b.id: (i, b) for i, m in enumerate(messages) for b in m.content if b.type == "tool_call"}
    touches = [(i, b.arguments.get("file_path")) for i, b in calls.values()
               if b.name in ("Read", "Edit", "Write")]
    current = {}
    for i, m in enumerate(messages):
        for j, b in enumerate(m.content):
            if b.type != "tool_result" or b.is_error or b.call_id not in calls:
                continue
            at, call = calls[b.call_id]
            path = call.arguments.get("file_path")
            if call.name == "Read" and not any(t > at and p == path for t, p in touches):
                current[(i, j)] = b.text
    return current


def _check_current_reads(session: Session, r, reduction_on: bool) -> None:
    """No reduction decision ever touches a current read; with reduction on (its validity verdict
    also protects the read from old-body trimming) the read reaches every request unchanged."""
    for p in r.preparations:
        request = r.request(p)
        if request is None:
            continue
        current = _current_reads(session, p.response_message_index)
        for stage in p.stages:
            for d in stage.decisions:
                ref = getattr(d, "ref", None) or ""
                if d.kind == "reduced" and ref.startswith("result:"):
                    _, mi, bi = ref.split(":")
                    assert (int(mi), int(bi)) not in current, f"current read {ref} reduced at step {p.step_index}"
        if not reduction_on:
            continue
        for msg, mark in zip(request.messages, request.marks):
            if mark.history_index is None:
                continue
            for j, b in enumerate(msg.content):
                if (mark.history_index, j) in current:
                    assert b.text == current[(mark.history_index, j)], \
                        f"current read result:{mark.history_index}:{j} changed at step {p.step_index}"


@BOUNDED
@given(sessions, configs)
def test_r_prep_properties_of_generated_replays(tmp_path_factory, session, cfg):
    """R-PREP-1/3, R-DYN-4, R-CMP-6/7, R-RED-6 on one generated session and configuration."""
    r = replay(session, parse_config(cfg))  # R-PREP-1: never raises
    assert len(r.preparations) == len(session.index.batches)
    _check_budget_and_failures(r)
    _check_required(session, r)
    _check_cuts(session, r)
    _check_archives(session, r, tmp_path_factory.mktemp("archives"))
    _check_current_reads(session, r, reduction_on=cfg["reduction"])


@settings(max_examples=6, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.too_slow])
@given(sessions, configs)
def test_r_prep_6_replay_is_deterministic(session, cfg):
    """R-PREP-6: the same session and configuration give byte-identical records twice."""
    config = parse_config(cfg)
    assert replay(session, config).model_dump_json() == replay(session, config).model_dump_json()
