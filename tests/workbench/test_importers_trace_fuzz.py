"""Mutated SWE-agent and OpenTelemetry files import or fail with one SessionFormatError naming the
file (R-SES-5): wrong types anywhere in the document, deleted members, cut files."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from iris.errors import SessionFormatError

from workbench.importers import load_session

FIX = Path(__file__).parents[1] / "fixtures" / "importers"
SEEDS = ["swe_agent_1x.traj", "swe_agent_0x.traj", "otel_otlp.json", "otel_any_agent.json",
         "otel_legacy.jsonl"]
ODD = [None, 7, -1, 2.5, True, "x", "", [], {}, [1, "a"], {"k": None}, "{not json", "[]",
       "99999999999999999999999"]


def _places(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value inside the document."""
    found = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            found += _places(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += _places(v, (*path, i))
    return found


def _mutate(doc: Any, rng: random.Random) -> Any:
    doc = json.loads(json.dumps(doc))
    place = rng.choice(_places(doc)[1:])
    parent = doc
    for key in place[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and rng.random() < 0.3:
        del parent[place[-1]]
    else:
        parent[place[-1]] = rng.choice(ODD)
    return doc


def _documents(path: Path) -> list[Any]:
    text = path.read_text()
    return [json.loads(x) for x in text.splitlines()] if path.suffix == ".jsonl" else [json.loads(text)]


def _write(path: Path, docs: list[Any], lines: bool) -> None:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs) if lines else json.dumps(docs[0], indent=1))


@pytest.mark.parametrize("name", SEEDS)
def test_r_ses_5_mutated_trace_files_fail_only_with_format_errors(name, tmp_path):
    """R-SES-5: 150 single mutations per fixture, strict and lenient: a session or a
    SessionFormatError naming the file and a line or field, never another exception."""
    rng = random.Random(name)
    seed = FIX / name
    docs = _documents(seed)
    outcomes = {"ok": 0, "error": 0}
    for n in range(150):
        mutated = [_mutate(d, rng) if i == n % len(docs) else d for i, d in enumerate(docs)]
        path = tmp_path / f"{n}{seed.suffix}"
        _write(path, mutated, seed.suffix == ".jsonl")
        for lenient in (False, True):
            try:
                load_session(path, lenient=lenient)
                outcomes["ok"] += 1
            except SessionFormatError as err:
                outcomes["error"] += 1
                assert err.path == str(path), str(err)
                assert err.line is not None or err.field is not None or "no " in err.problem, str(err)
    assert outcomes["error"] > 0 and outcomes["ok"] > 0


@pytest.mark.parametrize("name", SEEDS)
def test_r_ses_5_cut_trace_files_fail_cleanly(name, tmp_path):
    data = (FIX / name).read_bytes()
    for cut in range(1, len(data), max(1, len(data) // 40)):
        path = tmp_path / f"cut{(FIX / name).suffix}"
        path.write_bytes(data[:cut])
        for lenient in (False, True):
            try:
                load_session(path, lenient=lenient)
            except SessionFormatError as err:
                assert err.path == str(path)
