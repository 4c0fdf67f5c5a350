"""Offline fuzz campaign: mutate real-format transcripts and check that detection, strict and
lenient import into a real SQLite store, and the replay of what imported, end in success or in a
clean error of the project's hierarchy (``iris.errors.IrisError``) that names where.

Seeds are the repository's samples (``sample_sessions/``) and importer fixtures
(``tests/fixtures/importers``) and, when present, the real transcripts of ``../shared/real-sessions``
(``.gz`` files are decompressed in memory). Mutation classes: see ``tests/fuzz_mutations.py``.

What imported leniently is also replayed under a budget of a third of its size (so it compacts)
with the recorded summariser when the session holds a recorded summary.

Every case runs in a worker subprocess with a time bound (``--timeout``): a case that does not
finish is recorded as a hang and the worker is restarted. Findings:

``crash``      an exception outside the project's error hierarchy (a traceback for the user)
``unlocated``  a project error whose message names no file, line or field
``hang``       the case did not finish within the time bound
``accepted``   a strict import accepted a ``wrong_type`` or ``huge_float`` mutation and imported
               something different from the unmutated file (the wrong value was coerced or silently
               dropped), or a ``bom`` file imported differently from the file without the mark
``unlisted``   strict refused the file but lenient imported it without listing a skipped line

The whole-file classes ``self_append``, ``duplicate_id`` and ``trailing_garbage`` are checked like
``wrong_type``: a strict import must refuse them or import exactly what the unmutated file imports.

``--urls N`` also opens N links with random query parameters (``session``, ``replay``, ``step``,
``message``: hostile, unknown, out-of-range and good values) on random pages of the app (AppTest,
its own store holding a sample session); findings: ``crash`` (an exception on the page), ``hang``
(the page did not finish within ``--timeout``) and ``silent`` (a bad parameter without the line
that names it).

Usage::

    .venv/bin/python scripts/fuzz_campaign.py                     # 3,000 cases, seed 1
    .venv/bin/python scripts/fuzz_campaign.py --cases 500 --seed 7 --json /tmp/fuzz.json
    .venv/bin/python scripts/fuzz_campaign.py --keep /tmp/fuzz-cases   # keep the failing files
    .venv/bin/python scripts/fuzz_campaign.py --cases 0 --urls 200     # only the URL parameters
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import IO, Literal, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_mutations import ALL_CLASSES, FILE_CLASSES, mutate_file, mutate_whole

SHARED = Path(os.environ.get("WORKBENCH_SHARED", ROOT.parent / "shared"))
REPO_SEEDS = sorted([*ROOT.glob("sample_sessions/*.jsonl"), *ROOT.glob("tests/fixtures/importers/*.json*"),
                     *ROOT.glob("tests/fixtures/importers/*.traj")])
#: Lines mutated per file are chosen among the first ones (the rest is kept as is).
MAX_LINES = 400
#: Classes whose strict import must refuse the file or import what the unmutated file imports
#: (a wrong type or a token count that is no count is an error; a byte order mark changes nothing).
ACCEPT_CHECKED = ("wrong_type", "huge_float", "bom", *FILE_CLASSES)


def _seeds(real: Path | None) -> list[tuple[str, bytes]]:
    files = list(REPO_SEEDS)
    if real is not None and real.is_dir():
        files += sorted(p for p in real.rglob("*") if p.suffix in (".jsonl", ".json", ".traj", ".gz"))
    seeds = []
    for path in files:
        data = path.read_bytes()
        seeds.append((path.name.removesuffix(".gz"), gzip.decompress(data) if path.suffix == ".gz" else data))
    return seeds


# ------------------------------------------------------------------------------------- worker

def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/workbench/" in f.filename or "/iris/" in f.filename] or frames
    last = ours[-1] if ours else None
    return f"{Path(last.filename).name}:{last.lineno} {last.name}" if last else "?"


T = TypeVar("T")


def _stage(findings: list[dict], stage: str, fn: Callable[[], T]
           ) -> tuple[Literal["ok"], T] | tuple[Literal["error", "crash"], Exception]:
    """Run one stage: ('ok', value) or ('error', exc); crashes and unlocated errors are findings."""
    from iris.errors import IrisError

    try:
        return "ok", fn()
    except IrisError as exc:
        located = any(getattr(exc, a, None) is not None for a in ("path", "line", "field", "step")) \
            or "/" in str(exc)
        if not located:
            findings.append({"stage": stage, "finding": "unlocated", "error": str(exc)[:300]})
        return "error", exc
    except Exception as exc:  # noqa: BLE001 - what the campaign looks for
        findings.append({"stage": stage, "finding": "crash", "where": _where(exc),
                         "error": f"{type(exc).__name__}: {str(exc)[:240]}"})
        return "crash", exc


def _comparable(session) -> dict:
    data = session.model_dump(mode="json")
    data["header"].pop("session_id", None)
    return data


def _run_case(case: dict, baselines: dict) -> dict:
    from workbench.importers import detect_format, load_session
    from workbench.services.replay import replay_and_save
    from workbench.storage.store import Store

    path, fmt, findings = Path(case["path"]), case["fmt"], []
    outcomes = {"detect": _stage(findings, "detect", lambda: detect_format(path))[0]}
    if case["seed"] not in baselines:
        baselines[case["seed"]] = _comparable(load_session(case["seed"], format=fmt).session)
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("strict", "lenient"):
            store = Store(Path(tmp) / f"{mode}.db")
            try:
                staged = _stage(findings, mode, partial(
                    store.import_file, path, format=fmt, lenient=mode == "lenient"))
                outcomes[mode] = staged[0]
                if staged[0] != "ok":
                    continue
                value = staged[1]
                if mode == "lenient" and outcomes["strict"] == "error" and not value.skipped:
                    result = load_session(path, format=fmt, lenient=True)
                    if not result.warnings:
                        findings.append({"stage": mode, "finding": "unlisted"})
                if mode == "strict" and case["kind"] in ACCEPT_CHECKED and \
                        _comparable(store.session(value.session_id)) != baselines[case["seed"]]:
                    findings.append({"stage": mode, "finding": "accepted", "line": case["line"]})
                outcomes[f"replay_{mode}"] = _stage(
                    findings, f"replay_{mode}", partial(replay_and_save, store, value.session_id))[0]
                if mode == "lenient":  # a budget that compacts, recorded summaries reused
                    outcomes["replay_tight"] = _stage(
                        findings, "replay_tight", partial(_tight_replay, store, value.session_id))[0]
            finally:
                store.close()
    return {"outcomes": outcomes, "findings": findings}


def _tight_replay(store, session_id: str):
    """A replay under a budget of a third of the session's size (at least 1,000 tokens) with the
    recorded summariser when the session holds a recorded summary: compaction, cut search and
    summary checks run on the mutated content."""
    import yaml
    from iris.compaction import RecordedSummariser
    from iris.config import config_to_yaml, default_config, parse_config

    from workbench.services.replay import replay_and_save

    data = yaml.safe_load(config_to_yaml(default_config()))
    budget = max(1000, store.session_tokens(session_id) // 3)
    data["compaction"].update(input_budget_tokens=budget, retain_recent_tokens=min(4096, budget // 4))
    config = parse_config(data, source="fuzz campaign: a third of the session's size")
    summariser = RecordedSummariser(store.session(session_id))
    return replay_and_save(store, session_id, name="tight", config=config,
                           summariser=summariser if summariser.available else None)


def worker() -> None:
    baselines: dict = {}
    for line in sys.stdin:
        case = json.loads(line)
        try:
            result = _run_case(case, baselines)
        except Exception as exc:  # noqa: BLE001 - a failure of the harness itself is reported too
            result = {"outcomes": {}, "findings": [{"stage": "harness", "finding": "crash",
                                                    "where": _where(exc), "error": repr(exc)[:240]}]}
        print(json.dumps(result), flush=True)


# ------------------------------------------------------------------------------------- parent

class Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT)
        if self.proc.stdin is None or self.proc.stdout is None:
            raise RuntimeError("the worker subprocess has no stdin/stdout pipe")
        self.stdin: IO[str] = self.proc.stdin
        self.stdout: IO[str] = self.proc.stdout

    def run(self, case: dict, timeout: float) -> dict | None:
        self.stdin.write(json.dumps(case) + "\n")
        self.stdin.flush()
        ready, _, _ = select.select([self.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.stdout.readline()
        return json.loads(line) if line else {"outcomes": {}, "findings": [
            {"stage": "worker", "finding": "crash", "error": "worker exited"}]}

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _is_document(data: bytes) -> bool:
    """One JSON value (mutated node by node) rather than JSON Lines (mutated line by line)."""
    try:
        json.loads(data)
    except ValueError:
        return False
    return len(data.strip().splitlines()) > 1 or not data.lstrip().startswith(b"{")


def _format_of(name: str, data: bytes, tmp: Path) -> str:
    from workbench.importers import detect_format

    path = tmp / name
    path.write_bytes(data)
    return detect_format(path)


def campaign(args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-campaign-"))
    seeds = _seeds(None if args.no_real else args.real)
    plan = []
    for name, data in seeds:
        try:
            plan.append((name, data, _format_of(name, data, tmp)))
        except Exception as exc:  # noqa: BLE001 - a seed this version cannot read is left out
            print(f"seed {name} left out: {exc}", file=sys.stderr)
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    tally: Counter = Counter()
    findings: list[dict] = []
    started, worker_proc = time.monotonic(), Worker()
    try:
        for n in range(args.cases):
            if args.seconds and time.monotonic() - started > args.seconds:
                break  # the time budget is spent: report the cases run so far
            name, data, fmt = plan[n % len(plan)]
            kind = args.classes[(n // len(plan)) % len(args.classes)]
            mutate = mutate_whole if kind in FILE_CLASSES else mutate_file
            made = mutate(rng, data, kind, jsonl=not _is_document(data), max_lines=MAX_LINES)
            if made is None:
                tally["not applicable"] += 1
                continue
            body, line = made
            path = tmp / f"case-{n}-{kind}{Path(name).suffix}"
            path.write_bytes(body)
            case = {"path": str(path), "fmt": fmt, "seed": str(tmp / name), "kind": kind, "line": line}
            result = worker_proc.run(case, args.timeout)
            if result is None:
                worker_proc.stop()
                worker_proc = Worker()
                result = {"outcomes": {}, "findings": [{"stage": "any", "finding": "hang",
                                                        "error": f"over {args.timeout:g} s"}]}
            tally["cases"] += 1
            tally[f"class:{kind}"] += 1
            for stage, status in result["outcomes"].items():
                tally[f"{stage}:{status}"] += 1
            for finding in result["findings"]:
                findings.append({"case": n, "seed": name, "kind": kind, "line": line, **finding})
            if result["findings"] and keep:
                shutil.copy(path, keep / path.name)
            path.unlink()
            if args.verbose and result["findings"]:
                print(n, name, kind, line, result["findings"], flush=True)
    finally:
        worker_proc.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return {"seed": args.seed, "cases": tally["cases"], "seconds": round(time.monotonic() - started, 1),
            "seeds": [name for name, _, _ in plan], "tally": dict(sorted(tally.items())),
            "findings": findings, "summary": _summary(findings)}


def _summary(findings: list[dict]) -> dict[str, int]:
    counts: Counter = Counter()
    for f in findings:
        counts[f"{f['finding']} {f['stage']} {f['kind']} {f.get('where', '')} {f.get('error', '')[:60]}".strip()] += 1
    return dict(counts.most_common())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case before it is a hang")
    parser.add_argument("--seconds", type=float, default=0, help="stop starting cases after this long (0: no limit)")
    parser.add_argument("--real", type=Path, default=SHARED / "real-sessions")
    parser.add_argument("--no-real", action="store_true", help="only the repository's own files")
    parser.add_argument("--keep", help="copy the files of cases with findings into this folder")
    parser.add_argument("--json", help="write the full result (every finding) to this file")
    parser.add_argument("--classes", type=lambda text: text.split(","), default=list(ALL_CLASSES),
                        help=f"comma-separated mutation classes (default: all of {', '.join(ALL_CLASSES)})")
    parser.add_argument("--urls", type=int, default=0, help="also open this many links with random "
                        "query parameters (URL parameter class)")
    parser.add_argument("--verbose", "-v", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return
    result = campaign(args) if args.cases else {"cases": 0, "seconds": 0, "tally": {}, "findings": [],
                                                 "summary": {}}
    if args.urls:
        from fuzz_urls import url_campaign

        result["urls"] = url_campaign(args.urls, args.seed, args.timeout)
        print(json.dumps({k: v for k, v in result["urls"].items() if k != "findings"}, indent=1))
        print(f"{len(result['urls']['findings'])} URL findings")
        for finding in result["urls"]["findings"][:20]:
            print("  ", json.dumps(finding)[:300])
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in ("cases", "seconds", "tally")}, indent=1))
    print(f"{len(result['findings'])} findings")
    for line, count in result["summary"].items():
        print(f"{count:5d}  {line}")


if __name__ == "__main__":
    main()
