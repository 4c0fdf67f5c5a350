"""Benchmark cases against the floor (``bench/floor.py``: start Python, load the vocabulary,
parse every line, encode each message's text once) and against a peer tool; each runs in its own
process (``python bench/floor_cases.py CASE OUT.json OPTIONS_JSON``), like ``bench/cases.py``.

* ``floor_process``: ``workbench replay FILE`` (load + replay, a fresh store folder each run)
  against ``python bench/floor.py FILE``, both new processes, interleaved; CPU of each child
  (``wait4`` rusage) and its peak RSS; then one ``workbench replay`` under cProfile.
* ``floor_inprocess``: in one warm process (vocabulary loaded), ``load_session`` + ``replay``
  (fresh token cache) against :func:`floor.floor_counts`, interleaved; then one profiled replay.
* ``peer``: ``workbench report FILE`` (load, replay, HTML) against ``claude-code-log FILE``
  (``--no-cache``, HTML) on the same decompressed Claude Code transcript: CPU and peak RSS of each
  child; then one ``workbench report`` under cProfile.

A transcript that is absent (``../shared`` not checked out) gives ``{"skipped": reason}`` and
its row says so.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from floor import floor_counts
from measure import Stats, timed
from profiled import profile_call, profile_module

WORKBENCH = [sys.executable, "-m", "workbench.cli"]
FLOOR = [sys.executable, str(HERE / "floor.py")]


def child(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Wall and CPU seconds (user + system, from ``wait4``) and peak RSS bytes of one process."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd[1:4])}…: exit {proc.returncode}: {err.read()[-800:].decode(errors='replace')}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss * 1024}


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte code cached, as an installed package has it
    return env


def _stats(runs: list[dict[str, float]]) -> dict[str, Any]:
    return {key: Stats.of([r[key] for r in runs]).as_dict() for key in ("wall", "cpu", "rss")}


def _missing(path: Path) -> dict[str, str] | None:
    if path.is_file():
        return None
    return {"skipped": f"{path.name} is absent (the real sessions of ../shared are not checked out)"}


def floor_process_one(path: Path, repeats: int, tmp: Path) -> dict[str, Any]:
    if (skip := _missing(path)) is not None:
        return skip
    runs: dict[str, list[dict[str, float]]] = {"replay": [], "floor": []}
    for i in range(repeats + 1):  # the first round warms byte code and the vocabulary cache
        home = tmp / f"home-{path.name}-{i}"
        floor = child([*FLOOR, str(path)], _env())
        replay = child([*WORKBENCH, "replay", str(path)], _env(WORKBENCH_HOME=str(home)))
        if i:
            runs["floor"].append(floor)
            runs["replay"].append(replay)
    profile = profile_module("workbench.cli", ["replay", str(path)],
                             _env(WORKBENCH_HOME=str(tmp / f"home-{path.name}-profile")),
                             tmp / "replay.prof", ROOT)
    return {"path": path.name, **{k: _stats(v) for k, v in runs.items()}, "profile": profile}


def case_floor_process(paths: dict[str, str], repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        return {label: floor_process_one(Path(p), repeats, Path(tmp)) for label, p in paths.items()}


def _content_tokens(session: Any, estimator: Any) -> int:
    from iris.session import block_text

    return sum(estimator.count(block_text(b)) for m in session.messages for b in m.content if b.type != "image")


def floor_inprocess_one(path: Path, repeats: int) -> dict[str, Any]:
    if (skip := _missing(path)) is not None:
        return skip
    from iris.replay import ReplayEnvironment, replay
    from iris.tokens import TokenEstimator
    from iris.vocabulary import cl100k_encoding

    from workbench.importers import load_session

    encoding = cl100k_encoding()

    def ours() -> tuple[float, float, int]:
        load_cpu = timed(lambda: load_session(path))
        session = load_cpu[2].session
        done = timed(lambda: replay(session, environment=ReplayEnvironment(estimator=TokenEstimator())))
        return load_cpu[1], done[1], len(done[2].preparations)

    floor_counts(path, encoding)  # warm: imports, first-use caches
    ours()
    floor, load, rep = [], [], []
    for _ in range(repeats):
        floor.append(timed(lambda: floor_counts(path, encoding))[1])
        one = ours()
        load.append(one[0])
        rep.append(one[1])
    counts = floor_counts(path, encoding)
    session = load_session(path).session
    whole = [a + b for a, b in zip(load, rep)]
    profile = profile_call(lambda: replay(load_session(path).session,
                                          environment=ReplayEnvironment(estimator=TokenEstimator())))
    return {"path": path.name, "steps": one[2], "messages": len(session.messages), "floor_counts": counts,
            "engine_content_tokens": _content_tokens(session, TokenEstimator()),
            "floor_cpu": Stats.of(floor).as_dict(), "load_cpu": Stats.of(load).as_dict(),
            "replay_cpu": Stats.of(rep).as_dict(), "ours_cpu": Stats.of(whole).as_dict(),
            "ratio_runs": [w / f for w, f in zip(whole, floor)], "profile": profile}


def case_floor_inprocess(paths: dict[str, str], repeats: int) -> dict[str, Any]:
    return {label: floor_inprocess_one(Path(p), repeats) for label, p in paths.items()}


def _peer_command() -> list[str] | None:
    """``claude-code-log`` beside this Python (the bench extra), or the one ``BENCH_PEER`` names."""
    script = Path(os.environ.get("BENCH_PEER") or Path(sys.executable).parent / "claude-code-log")
    return [str(script)] if script.is_file() else None


def _peer_version(peer: list[str]) -> str:
    """The peer's version: its distribution's metadata here, else what ``--version`` prints."""
    try:
        return importlib.metadata.version("claude-code-log")
    except importlib.metadata.PackageNotFoundError:
        out = subprocess.run([*peer, "--version"], capture_output=True, text=True, check=True).stdout
        return out.strip().rsplit(" ", 1)[-1]


def case_peer(path: str, repeats: int) -> dict[str, Any]:
    source = Path(path)
    if (skip := _missing(source)) is not None:
        return skip
    peer = _peer_command()
    if peer is None:
        return {"skipped": "claude-code-log is not installed (the bench extra: pip install -e '.[dev,bench]', "
                           "which `make bench` runs)"}
    with tempfile.TemporaryDirectory(prefix="bench-peer-") as tmp_name:
        tmp = Path(tmp_name)
        transcript = tmp / source.name.removesuffix(".gz")
        data = source.read_bytes()
        transcript.write_bytes(gzip.decompress(data) if source.suffix == ".gz" else data)
        ours_html, theirs_html = tmp / "ours.html", tmp / "theirs.html"
        runs: dict[str, list[dict[str, float]]] = {"ours": [], "theirs": []}
        for i in range(repeats + 1):
            theirs = child([*peer, "--no-cache", str(transcript), "-o", str(theirs_html)], _env(HOME=str(tmp / "peer-home")))
            ours = child([*WORKBENCH, "report", str(transcript), "--out", str(ours_html)],
                         _env(WORKBENCH_HOME=str(tmp / f"home-{i}")))
            if i:
                runs["theirs"].append(theirs)
                runs["ours"].append(ours)
        profile = profile_module("workbench.cli", ["report", str(transcript), "--out", str(tmp / "p.html")],
                                 _env(WORKBENCH_HOME=str(tmp / "home-profile")), tmp / "report.prof", ROOT)
        sizes = {"ours_html": ours_html.stat().st_size, "theirs_html": theirs_html.stat().st_size}
    return {"path": source.name, "peer": "claude-code-log", "peer_version": _peer_version(peer),
            **{k: _stats(v) for k, v in runs.items()}, **sizes, "profile": profile,
            "cpu_ratio_runs": [o["cpu"] / t["cpu"] for o, t in zip(runs["ours"], runs["theirs"])]}


def main(argv: list[str]) -> int:
    case, out = argv[0], Path(argv[1])
    opts = json.loads(argv[2]) if len(argv) > 2 else {}
    if case == "floor_process":
        data = case_floor_process(opts["paths"], opts.get("repeats", 5))
    elif case == "floor_inprocess":
        data = case_floor_inprocess(opts["paths"], opts.get("repeats", 5))
    elif case == "peer":
        data = case_peer(opts["path"], opts.get("repeats", 3))
    else:
        raise SystemExit(f"unknown case {case!r}")
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

