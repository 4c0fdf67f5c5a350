"""Fuzzing every importer with mutated real lines (issue 8, R-SES-5): truncation, type swaps, huge
strings, deep nesting, invalid UTF-8, dropped keys and wrong top-level values. Seeds are the real
transcripts of ``../shared/real-sessions/`` (skipped when absent) and the repository's fixtures and
samples. The only failure an import may end with is :class:`SessionFormatError` naming the file and
the line; lenient mode may skip lines but never raises anything else."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path

import pytest
from iris.errors import SessionFormatError

from workbench.importers import load_session

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
SAMPLES = ROOT / "sample_sessions"
CASES_PER_SEED = 28
HUGE = 600_000
DEEP = 50_000

#: (format, seed file) from the repository; the real sessions are added by their own test.
REPO_SEEDS = [("native", SAMPLES / "bugfix.jsonl"), ("claude_code", FIXTURES / "claude_parallel.jsonl"),
              ("claude_code", FIXTURES / "claude_compact.jsonl"), ("codex", FIXTURES / "codex_compacted.jsonl"),
              ("codex", FIXTURES / "codex_basic.jsonl"), ("openai_chat", FIXTURES / "chat_array.json"),
              ("openai_chat", FIXTURES / "mini_swe.traj.json")]
REAL_SEEDS = [("claude_code", "claude_code"), ("codex", "codex_rollout"), ("openai_chat", "openai_chat")]


def _leaves(value, path=()):
    """Every (path, value) node of a JSON value, containers included."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))


def _set(doc, path, new):
    if not path:
        return new
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return doc


def _other_type(rng: random.Random, value):
    choices = [None, True, 0, -1, 3.5, "", "text", [], [1, "a"], {}, {"x": 1}]
    return rng.choice([c for c in choices if type(c) is not type(value)])


def _mutate_json(rng: random.Random, doc, kind: str):
    nodes = list(_leaves(doc))
    path, value = rng.choice(nodes)
    if kind == "type_swap":
        return _set(doc, path, _other_type(rng, value))
    if kind == "huge_string":
        strings = [p for p, v in nodes if isinstance(v, str)] or [path]
        return _set(doc, rng.choice(strings), "Ω" + "A" * HUGE)
    if kind == "drop_key":
        dicts = [(p, v) for p, v in nodes if isinstance(v, dict) and v]
        if dicts:
            _, d = rng.choice(dicts)
            d.pop(rng.choice(list(d)))
        return doc
    return doc


def _mutate_text(rng: random.Random, text: str, kind: str) -> bytes:
    """One mutated copy of a JSON text (a JSONL line, or a whole JSON document)."""
    if kind == "truncate":
        return text[: rng.randrange(max(len(text), 1))].encode()
    if kind == "invalid_utf8":
        data = text.encode()
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + data[at:]
    if kind == "deep_nesting":
        doc = json.loads(text)
        marker = "__DEEP__"
        nodes = [p for p, _ in _leaves(doc)]
        doc = _set(doc, rng.choice(nodes), marker)
        return json.dumps(doc).replace(f'"{marker}"', "[" * DEEP + "1" + "]" * DEEP).encode()
    if kind == "wrong_top":
        return rng.choice([b"null", b"[]", b'"a string"', b"12", b"{}", b"true", b"[{}]"])
    return json.dumps(_mutate_json(rng, json.loads(text), kind)).encode()


KINDS = ("truncate", "type_swap", "huge_string", "deep_nesting", "invalid_utf8", "drop_key", "wrong_top")


def _cases(fmt: str, seed_path: Path, rng: random.Random):
    """Mutated files: JSONL formats get one mutated line among the first real lines; JSON
    documents get a mutation of one node (or of the whole text)."""
    raw = seed_path.read_text(encoding="utf-8")
    for n in range(CASES_PER_SEED):
        kind = KINDS[n % len(KINDS)]
        if fmt == "openai_chat":
            if kind in ("truncate", "invalid_utf8", "wrong_top", "deep_nesting"):
                yield kind, None, _mutate_text(rng, raw, kind)
            else:
                yield kind, None, json.dumps(_mutate_json(rng, json.loads(raw), kind), indent=2).encode()
            continue
        lines = raw.splitlines()[:60]
        at = rng.randrange(len(lines))
        mutated = _mutate_text(rng, lines[at], kind)
        body = b"\n".join([*(x.encode() for x in lines[:at]), mutated, *(x.encode() for x in lines[at + 1:])])
        yield kind, at + 1, body + b"\n"


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
            assert err.line >= line or kind == "drop_key", (kind, line, str(err))
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


def test_r_ses_5_detection_of_garbage_is_a_format_error(tmp_path):
    """R-SES-5: without a format, undetectable bytes are a SessionFormatError naming the file."""
    for n, body in enumerate([b"\xff\xfe\x00garbage", b"[" * DEEP, b"", b"{\"type\": 5}\n", b"\x00" * 100]):
        path = tmp_path / f"garbage-{n}.jsonl"
        path.write_bytes(body)
        with pytest.raises(SessionFormatError) as err:
            load_session(path)
        assert str(path) in str(err.value)
