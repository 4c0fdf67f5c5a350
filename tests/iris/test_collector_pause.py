"""A replay keeps the garbage collector off its long-lived objects and restores it afterwards."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from iris.collector_pause import replay_collections
from iris.replay import ReplayEnvironment, ReplayObservers, ReplayOptions, replay
from iris.tokens import TokenEstimator

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth import synth_session


def demo_session():
    return synth_session(responses=40, seed=3)


def test_objects_are_frozen_during_a_replay_and_released_after_it():
    """Inside a step (the progress callback) the permanent generation holds objects; when the
    replay returns, nothing is left frozen and the result is the same as a replay under a
    disabled collector."""
    assert gc.get_freeze_count() == 0
    seen: list[int] = []
    result = replay(demo_session(),
                    observers=ReplayObservers(progress=lambda *_: seen.append(gc.get_freeze_count())),
                    environment=ReplayEnvironment(estimator=TokenEstimator()))
    assert seen and min(seen) > 0
    assert gc.get_freeze_count() == 0
    gc.disable()
    try:
        plain = replay(demo_session(), environment=ReplayEnvironment(estimator=TokenEstimator()))
    finally:
        gc.enable()
    assert plain.model_dump_json() == result.model_dump_json()


def test_nested_replays_unfreeze_only_when_the_outermost_ends():
    with replay_collections() as outer:
        with replay_collections() as inner:
            inner.step_done()
            assert gc.get_freeze_count() > 0
        assert gc.get_freeze_count() > 0
        outer.step_done()
    assert gc.get_freeze_count() == 0


def test_disabled_or_collector_off_freezes_nothing():
    with replay_collections(enabled=False) as freezer:
        freezer.step_done()
        assert gc.get_freeze_count() == 0
    gc.disable()
    try:
        with replay_collections() as freezer:
            freezer.step_done()
            assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_pause_collector_false_leaves_the_collector_alone():
    """R-PREP-6: ``ReplayOptions(pause_collector=False)`` freezes nothing during the replay (the
    progress callback sees an empty permanent generation) and gives the same records as the
    default, which does freeze."""
    seen: list[int] = []
    off = replay(demo_session(),
                 observers=ReplayObservers(progress=lambda *_: seen.append(gc.get_freeze_count())),
                 environment=ReplayEnvironment(estimator=TokenEstimator()),
                 options=ReplayOptions(pause_collector=False))
    assert seen and max(seen) == 0
    assert ReplayOptions().pause_collector is True
    on = replay(demo_session(), environment=ReplayEnvironment(estimator=TokenEstimator()))
    assert off.model_dump_json() == on.model_dump_json()
