"""The option objects of ``replay()`` and ``compact()``: frozen, validated when built, and the
defaults (None) replay exactly like the explicit default objects (R-PREP-6: same inputs, same
records)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from iris.compaction import CompactionEnvironment, CompactionRequest
from iris.config import parse_config
from iris.prompts import PromptSnapshot, PromptTemplates
from iris.replay import ReplayEnvironment, ReplayObservers, ReplayOptions, replay
from iris.session import Message, Session, SessionHeader, TextBlock, Usage
from iris.tokens import TokenEstimator


def _session() -> Session:
    messages = (Message(role="user", content=(TextBlock(text="fix the build"),)),
                Message(role="assistant", content=(TextBlock(text="fixed"),),
                        usage=Usage(input_tokens=120, output_tokens=5)),
                Message(role="user", content=(TextBlock(text="and the tests"),)),
                Message(role="assistant", content=(TextBlock(text="done"),),
                        usage=Usage(input_tokens=140, output_tokens=5)))
    return Session(header=SessionHeader(session_id="options"), messages=messages)


def test_option_objects_are_frozen_keyword_only_dataclasses():
    for cls in (ReplayObservers, ReplayEnvironment, ReplayOptions, CompactionRequest,
                CompactionEnvironment):
        assert dataclasses.is_dataclass(cls), cls
    options = ReplayOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):  # assigning a frozen field on purpose
        options.stop_after = 3  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(TypeError):  # a positional argument on purpose: the fields are keyword-only
        ReplayOptions("recorded")  # pyright: ignore[reportCallIssue]


def test_replay_options_are_checked_when_built():
    with pytest.raises(ValueError, match="baseline must be 'engine' or 'recorded', got 'both'"):
        ReplayOptions(baseline="both")  # pyright: ignore[reportArgumentType] -- a wrong value on purpose
    with pytest.raises(ValueError, match=r"stop_after must be a step index \(>= 0\), got -2"):
        ReplayOptions(stop_after=-2)
    assert ReplayOptions(stop_after=0).stop_after == 0


def test_r_prep_6_default_options_equal_explicit_defaults():
    """None for every option object replays exactly like the default objects."""
    session = _session()
    implicit = replay(session)
    explicit = replay(session, parse_config({}), observers=ReplayObservers(),
                      environment=ReplayEnvironment(), options=ReplayOptions())
    assert implicit.model_dump_json() == explicit.model_dump_json()


def test_observers_environment_and_options_reach_the_run():
    seen: list[tuple[int, int]] = []
    r = replay(_session(), observers=ReplayObservers(progress=lambda done, total: seen.append((done, total))),
               environment=ReplayEnvironment(estimator=TokenEstimator()),
               options=ReplayOptions(stop_after=0, keep_bodies=False))
    assert len(r.preparations) == 1 and seen == [(1, 1)]
    assert r.requests == {} and r.preparations[0].phase == "ready"


class _Recording:
    """Templates that record which ids were rendered (a PromptTemplates, not a PromptSnapshot)."""

    def __init__(self) -> None:
        self.inner = PromptSnapshot.defaults()
        self.rendered: list[str] = []

    @property
    def snapshot_id(self) -> str:
        return self.inner.snapshot_id

    def render(self, prompt_id: str, variables: Mapping[str, Any]) -> str:
        self.rendered.append(prompt_id)
        return self.inner.render(prompt_id, variables)


def test_r_prm_4_any_prompt_templates_render_the_summary_request():
    """The engine asks templates only for render and snapshot_id (iris.prompts.PromptTemplates)."""
    recording = _Recording()
    assert isinstance(recording, PromptTemplates)
    words = " ".join(f"word{i}" for i in range(400))
    messages: list[Message] = []
    for i in range(12):
        messages.append(Message(role="user", content=(TextBlock(text=f"step {i}: {words}"),)))
        messages.append(Message(role="assistant", content=(TextBlock(text=f"done {i}"),),
                                usage=Usage(input_tokens=900 * (i + 1), output_tokens=5)))
    session = Session(header=SessionHeader(session_id="templates"), messages=tuple(messages))
    config = parse_config({"compaction": {"input_budget_tokens": 5000}})
    recorded = replay(session, config, prompts=recording)
    plain = replay(session, config, prompts=PromptSnapshot.defaults())
    assert "compaction" in recording.rendered and "compaction_input" in recording.rendered
    assert recorded.model_dump_json() == plain.model_dump_json()
