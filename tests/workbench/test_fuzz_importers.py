"""Fuzzing every importer with mutated real lines (R-SES-5): the mutation classes of
``tests/fuzz_mutations.py`` (bad timestamps, lone surrogates, huge integers, over-long number
literals, wrong types, truncation, invalid UTF-8, dropped keys, wrong top-level values, huge
strings, deep nesting). Seeds are the real transcripts of ``../shared/real-sessions/`` (skipped
when absent) and the repository's fixtures and samples; every random choice comes from a fixed
seed. The only failure an import may end with is :class:`SessionFormatError` naming the file and
the line; lenient mode may skip lines but never raises anything else. The store-and-replay test
imports into a real SQLite store and replays what imported, each case under a time bound.
``scripts/fuzz_campaign.py`` runs the same classes at a larger scale (docs/robustness.md)."""

from __future__ import annotations

import gzip
import random
import signal
import zlib
from contextlib import contextmanager
from pathlib import Path

import pytest
from fuzz_mutations import CLASSES, mutate_file
from iris.errors import IrisError, SessionFormatError, StorageError

from workbench.importers import detect_format, load_session
from workbench.services.replay import replay_and_save
from workbench.storage.store import Store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
SAMPLES = ROOT / "sample_sessions"
CASES_PER_SEED = 2 * len(CLASSES)
DEEP = 50_000
#: Seconds one case (two imports and their replays) may take before it counts as a hang.
CASE_SECONDS = 20

#: (format, seed file) from the repository; the real sessions are added by their own test.
REPO_SEEDS = [("native", SAMPLES / "bugfix.jsonl"), ("claude_code", FIXTURES / "claude_parallel.jsonl"),
              ("claude_code", FIXTURES / "claude_compact.jsonl"), ("codex", FIXTURES / "codex_compacted.jsonl"),
              ("codex", FIXTURES / "codex_basic.jsonl"), ("openai_chat", FIXTURES / "chat_array.json"),
              ("openai_chat", FIXTURES / "mini_swe.traj.json")]
REAL_SEEDS = [("claude_code", "claude_code"), ("codex", "codex_rollout"), ("openai_chat", "openai_chat")]


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def _cases(fmt: str, seed_path: Path, rng: random.Random, per_class: int = 2, max_lines: int = 60):
    """``(class, mutated line or None, file bytes)``: JSON Lines formats get one mutated line among
    the first ``max_lines``; JSON documents get one mutated node (or text)."""
    raw = _read(seed_path)
    for kind in CLASSES:
        for _ in range(per_class):
            made = mutate_file(rng, raw, kind, jsonl=fmt != "openai_chat", max_lines=max_lines)
            if made is not None:
                yield kind, made[1], made[0]


def _check(fmt: str, path: Path, kind: str, line: int | None) -> str:
    """Import strictly and leniently; returns 'ok' or 'error' (anything else fails the test)."""
    outcome = "ok"
    try:
        load_session(path, format=fmt)
    except SessionFormatError as err:
        outcome = "error"
        assert err.path is not None and Path(str(err.path)) == path, (kind, str(err))
        # a problem of the whole file (nothing in it at all) has no line; every other names one
        assert (err.line is not None and err.line >= 1) or "empty file" in str(err), \
            f"{fmt}/{kind}: no line in {err}"
        if line is not None and fmt != "openai_chat":
            # a JSONL error names the mutated line, or a later line that depends on it
            assert err.line is not None and (err.line >= line or kind == "drop_key"), (kind, line, str(err))
    try:
        load_session(path, format=fmt, lenient=True)
    except SessionFormatError as err:
        assert err.path is not None, (kind, str(err))
    return outcome


def _fuzz(fmt: str, seed_path: Path, tmp_path: Path, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    tally = {"ok": 0, "error": 0}
    suffix = ".json" if seed_path.suffix == ".json" else ".jsonl"
    for n, (kind, line, body) in enumerate(_cases(fmt, seed_path, rng)):
        path = tmp_path / f"{fmt}-{n}-{kind}{suffix}"
        path.write_bytes(body)
        tally[_check(fmt, path, kind, line)] += 1
        path.unlink()
    return tally


@pytest.mark.parametrize(("fmt", "seed_path"), REPO_SEEDS, ids=[f"{f}-{p.name}" for f, p in REPO_SEEDS])
def test_r_ses_5_fuzzed_fixture_lines_fail_only_with_located_format_errors(fmt, seed_path, tmp_path):
    """R-SES-5: mutated fixture lines import or fail with SessionFormatError(file, line)."""
    tally = _fuzz(fmt, seed_path, tmp_path, seed=zlib.crc32(seed_path.name.encode()))
    assert tally["error"] > 0  # the mutations really break files (the fuzzer is not a no-op)


@pytest.mark.parametrize(("fmt", "folder"), REAL_SEEDS)
def test_r_ses_5_fuzzed_real_lines_fail_only_with_located_format_errors(fmt, folder, real_sessions, tmp_path):
    """R-SES-5: mutated lines of the real transcripts import or fail with SessionFormatError(file, line)."""
    seed_path = min((real_sessions / folder).iterdir())
    tally = _fuzz(fmt, seed_path, tmp_path, seed=len(folder))
    assert tally["error"] > 0


@contextmanager
def _time_bound(seconds: int, what: str):
    """Fail (instead of hanging the suite) when the block runs longer than ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"{what} took over {seconds} s (a hang)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _clean(err: IrisError, path: Path, store_path: Path) -> None:
    """A clean error: the project's hierarchy, naming the file and line or field (or the store)."""
    if isinstance(err, SessionFormatError):
        assert err.path == str(path), str(err)
        assert err.line is not None or err.field is not None or "empty file" in str(err), str(err)
    elif isinstance(err, StorageError):
        assert "saving a replay" in str(err) or str(store_path) in str(err), str(err)
    else:
        assert str(err).strip(), repr(err)


def _store_and_replay(fmt: str, path: Path, stores: dict[str, Store]) -> dict[str, str]:
    """Strict and lenient import into real stores, then the replay of what imported: returns the
    outcome of each stage ('ok' or 'error'); any other exception fails the test."""
    outcome: dict[str, str] = {}
    try:
        detect_format(path)
    except SessionFormatError as err:
        _clean(err, path, path)
    for mode, store in stores.items():
        try:
            result = store.import_file(path, format=fmt, lenient=mode == "lenient")
        except IrisError as err:
            _clean(err, path, store.path)
            outcome[mode] = "error"
            continue
        outcome[mode] = "ok"
        stored = store.session(result.session_id)
        for message in stored.messages:  # valid text all the way down: encodable as UTF-8
            message.model_dump_json().encode("utf-8")
        if mode == "lenient" and outcome["strict"] == "error":
            again = load_session(path, format=fmt, lenient=True)
            assert again.skipped or again.warnings, f"{path.name}: strict failed, lenient listed nothing"
        try:
            replay_and_save(store, result.session_id)
            outcome[f"replay {mode}"] = "ok"
        except IrisError as err:
            _clean(err, path, store.path)
            outcome[f"replay {mode}"] = "error"
    return outcome


def _fuzz_store(fmt: str, seed_path: Path, tmp_path: Path, seed: int, per_class: int) -> dict[str, int]:
    rng = random.Random(seed)
    tally: dict[str, int] = {}
    stores = {mode: Store(tmp_path / f"{mode}.db") for mode in ("strict", "lenient")}
    suffix = ".json" if fmt == "openai_chat" else ".jsonl"
    try:
        for n, (kind, _line, body) in enumerate(_cases(fmt, seed_path, rng, per_class, max_lines=400)):
            path = tmp_path / f"{fmt}-{n}-{kind}{suffix}"
            path.write_bytes(body)
            with _time_bound(CASE_SECONDS, f"{path.name} (import and replay)"):
                for stage, result in _store_and_replay(fmt, path, stores).items():
                    tally[f"{stage} {result}"] = tally.get(f"{stage} {result}", 0) + 1
            path.unlink()
    finally:
        for store in stores.values():
            store.close()
    return tally


@pytest.mark.parametrize(("fmt", "seed_path"), REPO_SEEDS, ids=[f"{f}-{p.name}" for f, p in REPO_SEEDS])
def test_r_ses_5_fuzzed_files_store_and_replay_or_fail_cleanly(fmt, seed_path, tmp_path):
    """R-SES-5: every mutation class, imported strict and lenient into a real SQLite store and
    replayed, ends in success or in a project error naming file and line/field, in bounded time."""
    tally = _fuzz_store(fmt, seed_path, tmp_path, seed=zlib.crc32(seed_path.name.encode()), per_class=1)
    assert tally.get("strict error", 0) > 0 and tally.get("replay lenient ok", 0) > 0, tally


@pytest.mark.parametrize(("fmt", "folder"), REAL_SEEDS)
def test_r_ses_5_fuzzed_real_files_store_and_replay_or_fail_cleanly(fmt, folder, real_sessions, tmp_path):
    """R-SES-5: the same on the real transcripts (one case per mutation class)."""
    seed_path = min((real_sessions / folder).iterdir())
    tally = _fuzz_store(fmt, seed_path, tmp_path, seed=len(folder), per_class=1)
    assert tally.get("strict error", 0) > 0 and tally.get("replay lenient ok", 0) > 0, tally


def test_r_ses_5_detection_of_garbage_is_a_format_error(tmp_path):
    """R-SES-5: without a format, undetectable bytes are a SessionFormatError naming the file."""
    for n, body in enumerate([b"\xff\xfe\x00garbage", b"[" * DEEP, b"", b"{\"type\": 5}\n", b"\x00" * 100,
                              b'{"type": "user", "n": ' + b"9" * 5000 + b"}\n"]):
        path = tmp_path / f"garbage-{n}.jsonl"
        path.write_bytes(body)
        with pytest.raises(SessionFormatError) as err:
            load_session(path)
        assert str(path) in str(err.value)
