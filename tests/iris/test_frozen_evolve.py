"""``record.evolve(**UNCHANGED, field=value)``: the typed copy the engine and the workbench derive
records with (iris.frozen). At run time it is pydantic's ``model_copy(update=...)``; the checker
reads the keyword arguments against the record's constructor."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from iris.compaction.calibration import Calibration
from iris.compaction.usage import UsageTotals, UsageTracker
from iris.frozen import UNCHANGED
from iris.session import Message, Session, SessionHeader, TextBlock

ROOT = Path(__file__).resolve().parents[2]


def _session() -> Session:
    return Session(header=SessionHeader(session_id="s"), messages=(
        Message(role="user", content=(TextBlock(text="hello"),)),))


def test_r_prep_6_evolve_is_the_copy_with_the_named_fields_replaced():
    """R-PREP-6: an evolved record equals model_copy(update=...) of the same fields, is of the same
    class, and leaves the record it came from as it was (records are values)."""
    totals = UsageTotals(calls=2, input_tokens=10)
    grown = totals.evolve(**UNCHANGED, calls=3, output_tokens=4)
    assert grown == totals.model_copy(update={"calls": 3, "output_tokens": 4})
    assert (grown.calls, grown.input_tokens, grown.output_tokens) == (3, 10, 4)
    assert (totals.calls, totals.output_tokens) == (2, 0)
    tracker = UsageTracker().evolve(**UNCHANGED, model="m", totals=UsageTracker().totals)
    assert type(tracker) is UsageTracker and tracker.model == "m"
    calibration = Calibration().evolve(**UNCHANGED, frozen_at=4)
    assert calibration.frozen_at == 4 and calibration.model_dump(exclude={"frozen_at"}) == (
        Calibration().model_dump(exclude={"frozen_at"}))


def test_r_prep_6_evolve_goes_through_a_records_own_copy():
    """R-PREP-6: a session evolved with new messages is indexed again (Session's own model_copy
    drops the cached index), as model_copy did."""
    session = _session()
    assert session.index is not None and "index" in vars(session)  # computed and cached
    longer = session.evolve(**UNCHANGED, messages=(*session.messages, *session.messages))
    assert "index" not in vars(longer)
    assert len(longer.messages) == 2 and len(session.messages) == 1


def test_r_prep_6_unchanged_stays_empty():
    """R-PREP-6: UNCHANGED holds no field, and cannot be made to (it would change every copy)."""
    assert dict(UNCHANGED) == {}
    for mutate in (lambda: UNCHANGED.__setitem__("calls", 1),  # type: ignore[attr-defined]
                   lambda: UNCHANGED.update(calls=1),  # type: ignore[attr-defined]
                   lambda: UNCHANGED.setdefault("calls", 1)):  # type: ignore[attr-defined]
        with pytest.raises(TypeError):
            mutate()
    assert dict(UNCHANGED) == {}


def test_r_prep_6_no_untyped_copy_left_in_the_engine_parts_and_the_workbench():
    """R-PREP-6: the compaction engine, the runner, the replay and the workbench derive records with evolve
    (or constructors): no ``model_copy(update=...)`` the checker cannot read is left there."""
    found = [f"{path.relative_to(ROOT)}:{n}"
             for folder in ("core/iris/compaction", "core/iris/runner", "workbench")
             for path in [*sorted((ROOT / folder).rglob("*.py")), ROOT / "core/iris/replay.py"]
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if re.search(r"\.model_copy\(\s*(update\s*=|$)", line)]
    assert not found, found


@pytest.mark.slow
def test_r_prep_6_the_checker_reads_evolve_against_the_constructor(tmp_path: Path):
    """R-PREP-6: basedpyright reports an unknown field name and a value of the wrong type given to
    evolve, and accepts a right one, as it does for the constructor."""
    (tmp_path / "probe.py").write_text(
        "from iris.compaction.usage import UsageTotals\n"
        "from iris.frozen import UNCHANGED\n"
        "good: UsageTotals = UsageTotals().evolve(**UNCHANGED, calls=1)\n"
        "UsageTotals().evolve(**UNCHANGED, nope=1)\n"
        "UsageTotals().evolve(**UNCHANGED, calls='many')\n", encoding="utf-8")
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "pythonVersion": "3.11", "typeCheckingMode": "strict",
        "extraPaths": [str(ROOT / "core")]}), encoding="utf-8")
    checker = Path(sys.executable).with_name("basedpyright")
    done = subprocess.run([str(checker), "--outputjson", "probe.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=False)
    report = json.loads(done.stdout)
    errors = [(d["range"]["start"]["line"] + 1, d["rule"]) for d in report["generalDiagnostics"]
              if d["severity"] == "error"]
    assert errors == [(4, "reportCallIssue"), (5, "reportArgumentType")], report
