"""Golden preparation records of every sample session (R-PREP-6, STYLE 12).

The expected files live in ``tests/golden/preparations/``; after an intended change regenerate
them with ``.venv/bin/python scripts/regenerate_golden.py`` and review the diff.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("regenerate_golden",
                                               ROOT / "scripts" / "regenerate_golden.py")
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

CASES = golden.golden_cases()


def _first_difference(expected: dict, actual: dict) -> str:
    for key in ("session_id", "configuration_snapshot_id", "thresholds", "checkpoints"):
        if expected.get(key) != actual.get(key):
            return f"field {key!r} differs"
    pairs = zip(expected["preparations"], actual["preparations"])
    for e, a in pairs:
        if e != a:
            keys = sorted(k for k in e if e[k] != a.get(k))
            return f"step {e['step_index']}: fields {keys} differ"
    return (f"{len(expected['preparations'])} expected preparations, "
            f"{len(actual['preparations'])} replayed")


def test_golden_cover_every_sample():
    """Every sample session has a golden file (and the long one a compacting variant)."""
    samples = sorted(p.stem for p in (ROOT / "sample_sessions").glob("*.jsonl"))
    assert samples, "sample_sessions/*.jsonl are missing"
    stems = {stem for stem, _, _ in CASES}
    assert {f"{s}.default" for s in samples} <= stems
    assert all((golden.GOLDEN / f"{stem}.json").is_file() for stem in stems)


@pytest.mark.parametrize("stem,path,overrides", CASES, ids=[c[0] for c in CASES])
def test_r_prep_6_records_match_golden(stem, path, overrides):
    """R-PREP-6: replaying a sample under the stored configuration gives the golden records."""
    expected_text = (golden.GOLDEN / f"{stem}.json").read_text(encoding="utf-8")
    actual_text = golden.golden_text(path, overrides)
    if overrides is None:  # R-PREP-1: the samples replay without failures by default
        phases = {p["phase"] for p in json.loads(actual_text)["preparations"]}
        assert phases == {"ready"}, f"{stem}: {phases}"
    if actual_text != expected_text:
        why = _first_difference(json.loads(expected_text), json.loads(actual_text))
        pytest.fail(f"{stem}: {why}. If the change is intended, run "
                    "`.venv/bin/python scripts/regenerate_golden.py` and review the diff.")
