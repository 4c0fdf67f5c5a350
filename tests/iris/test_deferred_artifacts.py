"""Reduction artifacts as values: a replay in its own temporary folder writes none of them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from iris.reduction.artifacts import ArtifactWriter, DeferredArtifactWriter
from iris.replay import ReplayEnvironment, replay
from iris.tokens import TokenEstimator

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth import synth_session


def test_r_red_7_deferred_writer_names_the_same_files_and_writes_them_on_flush(tmp_path):
    """R-RED-7: the same logical path as a direct write; nothing on disk until ``flush``, then
    the same bytes; ``discard`` drops what is pending."""
    direct, deferred = ArtifactWriter(tmp_path / "direct"), DeferredArtifactWriter(tmp_path / "later")
    texts = [("reduced-artifacts", "Bash", "line 1\nline 2\n"), ("tool-outputs", "Read", "x" * 70000),
             ("reduced-artifacts", "Bash", "line 1\nline 2\n")]
    assert [deferred.write(*t) for t in texts] == [direct.write(*t) for t in texts]
    assert not (tmp_path / "later").exists() and len(deferred.pending) == 2
    assert deferred.flush() == 2 and deferred.pending == {}
    files = sorted(p.relative_to(tmp_path / "direct") for p in (tmp_path / "direct").rglob("*.txt"))
    assert files == sorted(p.relative_to(tmp_path / "later") for p in (tmp_path / "later").rglob("*.txt"))
    for f in files:
        assert (tmp_path / "later" / f).read_bytes() == (tmp_path / "direct" / f).read_bytes()
    deferred.write("reduced-artifacts", "Grep", "pending")
    deferred.discard()
    assert deferred.pending == {} and deferred.flush() == 0


def test_r_prep_6_a_replay_without_a_folder_keeps_the_records_of_one_with_a_folder(tmp_path):
    """R-PREP-6: the replay in its own temporary folder (artifacts recorded, then dropped) gives
    the same preparations and checkpoints as a replay writing its artifacts to ``work_dir``."""
    session = synth_session(responses=160, seed=5)
    on_disk = replay(session, environment=ReplayEnvironment(estimator=TokenEstimator(), work_dir=tmp_path))
    own = replay(session, environment=ReplayEnvironment(estimator=TokenEstimator()))
    assert list((tmp_path / "reduced-artifacts").iterdir())  # this session writes artifacts

    def dump(result):
        return json.dumps([p.model_dump(mode="json") for p in (*result.preparations, *result.checkpoints)],
                          sort_keys=True)

    assert dump(own) == dump(on_disk)
