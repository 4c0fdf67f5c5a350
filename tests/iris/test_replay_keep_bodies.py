"""``ReplayOptions(keep_bodies=False)``: requests go only to the sink, archives only to the folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from iris.preparation.publisher import ListSink
from iris.replay import ReplayEnvironment, ReplayObservers, ReplayOptions, replay
from iris.tokens import TokenEstimator

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth import synth_session


def _json(items) -> list[str]:
    return [json.dumps(x.model_dump(mode="json"), sort_keys=True) if x is not None else "null"
            for x in items]


def test_r_prep_5_without_bodies_the_sink_gets_every_request_and_records_are_unchanged(tmp_path):
    """R-PREP-5: the same preparations and checkpoints; the sink receives the same requests as
    with bodies kept; the result holds no request and no archive text, the folder holds the
    archives."""
    session = synth_session(responses=160, seed=5)
    kept_sink, lean_sink = ListSink(), ListSink()
    kept = replay(session, observers=ReplayObservers(sink=kept_sink),
                  environment=ReplayEnvironment(estimator=TokenEstimator(), work_dir=tmp_path / "kept"))
    lean = replay(session, observers=ReplayObservers(sink=lean_sink),
                  environment=ReplayEnvironment(estimator=TokenEstimator(), work_dir=tmp_path / "lean"),
                  options=ReplayOptions(keep_bodies=False))
    assert kept.checkpoints and kept.requests and kept.archives
    assert lean.requests == {} and lean.archives == {}
    assert _json(lean.preparations) == _json(kept.preparations)
    assert _json(lean.checkpoints) == _json(kept.checkpoints)
    assert _json(r for _, r in lean_sink.saved) == _json(r for _, r in kept_sink.saved)
    assert _json(r for _, r in kept_sink.saved if r is not None) == _json(kept.requests.values())
    for name, text in kept.archives.items():
        assert (tmp_path / "lean" / name).read_text(encoding="utf-8") == text
