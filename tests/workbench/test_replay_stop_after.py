"""Stopping a replay after a step, and re-runs that follow the engine's own events (R-PREP-6,
R-UI-4): ``replay(..., options=ReplayOptions(stop_after=k))`` is the first k + 1 steps of the
whole replay, not a cancellation; a re-run's step clock comes from the preparation events; the
stored summariser label is the summariser's declared kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.compaction import ExtractiveSummariser, RecordedSummariser
from iris.config import parse_config
from iris.prompts import PromptSnapshot
from iris.replay import ReplayObservers, ReplayOptions, replay

from workbench.importers.native import load_native
from workbench.services.replay import summariser_name
from workbench.services.rerun import ReplayInputs, run_step

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
BUDGET = {"compaction": {"input_budget_tokens": 96000}}


@pytest.fixture(scope="module")
def long_session():
    return load_native(SAMPLES / "long_session.jsonl")


@pytest.fixture(scope="module")
def whole(long_session):
    return replay(long_session, parse_config(BUDGET))


def _compaction_step(result) -> int:
    return next(c.step_index for c in result.checkpoints)


def test_r_prep_6_stop_after_is_the_prefix_of_the_whole_replay(long_session, whole):
    """The first k + 1 preparations, byte for byte, and a replay that was not cancelled."""
    k = _compaction_step(whole)
    seen: list[tuple[int, int]] = []
    short = replay(long_session, parse_config(BUDGET),
                   observers=ReplayObservers(progress=lambda done, total: seen.append((done, total))),
                   options=ReplayOptions(stop_after=k))
    assert len(short.preparations) == k + 1
    assert not short.cancelled
    assert all(p.phase != "cancelled" for p in short.preparations)
    assert [json.loads(p.model_dump_json()) for p in short.preparations] == \
        [json.loads(p.model_dump_json()) for p in whole.preparations[:k + 1]]
    assert [c.step_index for c in short.checkpoints] == [k]
    assert seen[-1] == (k + 1, k + 1)  # progress counts the steps this replay prepares


def test_r_prep_6_stop_after_rejects_a_negative_step(long_session):
    with pytest.raises(ValueError, match="stop_after"):
        replay(long_session, options=ReplayOptions(stop_after=-1))


def test_r_ui_4_rerun_step_records_the_renders_of_that_step(long_session, whole):
    """The step clock rides on the engine's events: the rendered summary request and the
    checkpoint of the re-run step are those of the whole replay's compaction at that step."""
    k = _compaction_step(whole)
    config = parse_config(BUDGET)
    inputs = ReplayInputs(session_id="s", session=long_session, config=config,
                          snapshot=PromptSnapshot.defaults(), summariser="extractive")
    outcome = run_step(inputs, k, summariser=ExtractiveSummariser())
    assert outcome.status == "applied"
    assert outcome.summary_request  # the templates the engine rendered at step k
    assert outcome.checkpoint_text == whole.checkpoints[0].checkpoint_text
    assert outcome.summariser == "extractive"


class _Undeclared:
    """A summariser whose kind says nothing (the protocol requires the attribute)."""

    kind = ""

    def summarise(self, request, *, timeout_seconds):  # pragma: no cover - never called
        raise AssertionError


def test_r_ui_4_summariser_label_is_the_declared_kind(long_session):
    """The label saved with a replay is the summariser's ``kind``, never its class name."""
    assert summariser_name(None) == "extractive"
    assert summariser_name(ExtractiveSummariser()) == "extractive"
    assert summariser_name(RecordedSummariser(long_session)) == "recorded"
    assert summariser_name(_Undeclared()) == "custom"
