"""``ReplayOptions(keep_records=False)`` with ``ReplayObservers(on_compaction=…)``: a host that
streams a replay gets every record, request and archive as the replay makes them, and the result
holds none of them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from iris.preparation.publisher import ListSink
from iris.replay import AppliedCompaction, ReplayEnvironment, ReplayObservers, ReplayOptions, replay
from iris.tokens import TokenEstimator

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth import synth_session


def _json(items) -> list[str]:
    return [json.dumps(x.model_dump(mode="json"), sort_keys=True) if x is not None else "null"
            for x in items]


@pytest.mark.slow
def test_r_prep_5_a_streamed_replay_hands_over_every_record_and_archive():
    """R-PREP-5: without records and bodies kept, the sink receives the same preparations and
    requests, ``on_compaction`` each checkpoint with its archive text, and the result keeps no
    preparation, request or archive (its checkpoints and run figures are the same)."""
    session = synth_session(responses=160, seed=5)
    kept = replay(session, environment=ReplayEnvironment(estimator=TokenEstimator()))
    sink, archived = ListSink(), []

    def on_compaction(applied: AppliedCompaction, text: str) -> None:
        archived.append((applied, text))

    lean = replay(session, observers=ReplayObservers(sink=sink, on_compaction=on_compaction),
                  environment=ReplayEnvironment(estimator=TokenEstimator()),
                  options=ReplayOptions(keep_bodies=False, keep_records=False))
    assert kept.checkpoints and lean.preparations == () and not lean.requests and not lean.archives
    assert _json(p for p, _ in sink.saved) == _json(kept.preparations)
    assert _json(r for _, r in sink.saved if r is not None) == _json(kept.requests.values())
    assert [a for a, _ in archived] == list(kept.checkpoints) == list(lean.checkpoints)
    assert {a.archive_name: t for a, t in archived} == kept.archives
    assert lean.model_dump(exclude={"preparations", "requests", "archives"}) == \
        kept.model_dump(exclude={"preparations", "requests", "archives"})


@pytest.mark.slow
def test_r_prep_5_a_failing_compaction_observer_never_changes_the_replay():
    """R-PREP-5: an ``on_compaction`` that raises is noted as an observation failure; the
    records are those of a replay without it."""
    session = synth_session(responses=160, seed=5)
    kept = replay(session, environment=ReplayEnvironment(estimator=TokenEstimator()))

    def broken(applied: AppliedCompaction, text: str) -> None:
        raise OSError("disk full")

    failing = replay(session, observers=ReplayObservers(on_compaction=broken),
                     environment=ReplayEnvironment(estimator=TokenEstimator()))
    assert _json(failing.preparations) == _json(kept.preparations)
    assert failing.observation_failures == tuple(
        f"step {c.step_index}: on_compaction: OSError: disk full" for c in kept.checkpoints)
