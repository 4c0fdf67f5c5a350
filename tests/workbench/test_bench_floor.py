"""The benchmarks' floor (``bench/floor.py``): it must count exactly what the engine's estimator
counts for the same texts, or the ratios ``make bench`` reports against it mean nothing, and it
must fail clearly on a transcript that is not there."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from iris.session import Session, block_text
from iris.tokens import TokenEstimator
from iris.vocabulary import cl100k_encoding

from workbench.importers import load_session
from workbench.importers.native import dump_session

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from floor import FloorError, floor_counts  # bench/ is not a package: its folder is on sys.path
from synth import synth_session

CLAUDE_CODE = "claude_code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"


def _engine_tokens(session: Session) -> int:
    estimator = TokenEstimator()
    return sum(estimator.count(block_text(b)) for m in session.messages for b in m.content if b.type != "image")


def test_r_tok_1_floor_counts_the_estimators_tokens_for_a_native_transcript(tmp_path):
    """R-TOK-1: the floor encodes each message's text once with the packaged vocabulary and its
    total equals the engine's estimator over the same block texts (tool calls included)."""
    session = synth_session(responses=30, seed=4)
    path = dump_session(session, tmp_path / "synth.jsonl")
    counts = floor_counts(path, cl100k_encoding())
    assert counts["tokens"] == _engine_tokens(session)
    assert counts["texts"] == sum(1 for m in session.messages for b in m.content if block_text(b))
    assert counts["lines"] == len(path.read_text(encoding="utf-8").splitlines())


def test_r_tok_1_floor_reads_gzip_as_the_engine_does(tmp_path):
    """R-TOK-1: a gzipped transcript gives the same counts as the plain file."""
    path = dump_session(synth_session(responses=5, seed=9), tmp_path / "s.jsonl")
    packed = tmp_path / "s.jsonl.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert floor_counts(packed, cl100k_encoding()) == floor_counts(path, cl100k_encoding())


def test_r_tok_1_floor_matches_the_engine_on_the_real_claude_code_session(real_sessions):
    """R-TOK-1: on the real Claude Code transcript (split assistant lines, tool results), the
    floor's texts are the loaded session's texts: the same number of tokens."""
    path = real_sessions / CLAUDE_CODE
    assert floor_counts(path, cl100k_encoding())["tokens"] == _engine_tokens(load_session(path).session)


@pytest.mark.slow  # starts a process
def test_r_tok_1_floor_script_prints_the_in_process_counts(tmp_path):
    """R-TOK-1: ``python bench/floor.py FILE --json`` (the floor process) counts what the
    in-process floor counts."""
    path = dump_session(synth_session(responses=3, seed=2), tmp_path / "s.jsonl")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "floor.py"), str(path), "--json"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == floor_counts(path, cl100k_encoding())


@pytest.mark.slow  # starts a process
def test_r_ses_5_floor_script_fails_clearly_on_a_missing_file(tmp_path):
    """R-SES-5: a missing transcript is a non-zero exit naming the file, not a traceback."""
    missing = tmp_path / "nowhere.jsonl"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "floor.py"), str(missing)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert str(missing) in proc.stderr and "no such transcript file" in proc.stderr
    assert "Traceback" not in proc.stderr
    with pytest.raises(FloorError, match="no such transcript file"):
        floor_counts(missing, cl100k_encoding())
