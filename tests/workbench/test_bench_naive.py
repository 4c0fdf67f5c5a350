"""The benchmarks' naive replay (``bench/naive.py``): every step from scratch, same records. The
runner passes ``incremental`` itself, so a default the naive mode set was silently overridden and
the baseline became three times cheaper than it claims to be."""

from __future__ import annotations

import sys
from pathlib import Path

import iris.replay as replay_module
from iris.replay import ReplayEnvironment, replay

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from naive import NaiveEstimator, naive_mode  # bench/ is not a package: its folder is on sys.path
from synth import synth_session


def test_r_red_9_naive_mode_prepares_every_step_from_scratch_with_the_same_records():
    """R-RED-9: under the naive mode every step's settings are non-incremental (a fresh step
    memory: no cached scan, facts or renderings) and the records equal the optimised replay's,
    because the frozen renderings are carried either way."""
    session = synth_session(responses=12, seed=5)
    seen: list[bool] = []
    with naive_mode():
        patched = replay_module.PipelineSettings

        def spy(*args, **kw):
            settings = patched(*args, **kw)
            seen.append(settings.incremental)
            return settings

        replay_module.PipelineSettings = spy
        try:
            naive = replay(session, environment=ReplayEnvironment(estimator=NaiveEstimator()))
        finally:
            replay_module.PipelineSettings = patched
    optimised = replay(session)
    assert seen and not any(seen)
    assert [p.model_dump_json() for p in naive.preparations] == [p.model_dump_json() for p in optimised.preparations]
