"""Peak memory of replaying a stored session and saving the replay, as the app and the CLI do
(``replay_and_save``, ``workbench replay --name``, ``replay --defaults``), against the session.

For ``synth_session(responses=N)`` saved in a fresh store and read back (``store.session``: the
loaded session, measured with tracemalloc while it is read), one path is run in this process
after the RSS high-water mark is reset:

* ``whole``: the previous path: the whole replay in memory with every request and archive body,
  its evidence bundle, then the store's save in one piece;
* ``streamed``: ``workbench.services.replay.replay_and_save``: each step written into the store
  as it is made, only its figures kept;
* ``streamed_summary``: the same with what ``--summary-json`` needs as well (each step's cache
  prefix) and the summary computed;
* ``engine``: the engine's replay alone, keeping nothing (no record, request or archive; a sink
  that drops each step): what any replay of the session holds, the floor of the others.

Peak RSS above the loaded session (the RSS once it is read, with the imports done and the
vocabulary loaded: ≈ 46 MB every process pays once) is stated in MB and as a multiple of the
session; tracemalloc is off while a path runs. Each path wants its own process (the peak is
per process): ``run`` starts one per path.

Usage::

    .venv/bin/python bench/save_memory.py [N] [--paths whole,streamed] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

PATHS = ("whole", "streamed", "streamed_summary", "engine")


def one(responses: int, path: str, home: Path) -> dict:
    """Run one path in this process; its figures."""
    from iris.config import default_config
    from iris.tokens import default_estimator
    from measure import peak_rss_bytes, reset_peak, retained_size, rss_bytes
    from synth import synth_session

    from workbench.analysis.replay_report import replay_report
    from workbench.services.replay import (
        replay_and_save,
        replay_session,
        stream_replay,
        workspace_templates,
    )
    from workbench.storage.store import Store

    store = Store(home / f"{path}.db")
    session = synth_session(responses)
    sid, _ = store.save_session(session, format="native", content_hash=f"bench-{responses}",
                                source_path=None)
    del session
    loaded, size = retained_size(lambda: store.session(sid))
    workspace_templates(default_config())  # imports and the bundled configuration, before
    default_estimator().count("the vocabulary is loaded once per process, not per replay")
    reset_peak()
    base = rss_bytes()
    started = time.process_time()
    if path == "whole":
        _, bundle = replay_session(loaded)
        info = store.replays.save(bundle, session_id=sid, name="default")
        del bundle
    elif path == "streamed":
        info, _ = replay_and_save(store, sid)
    elif path == "engine":
        from iris.replay import ReplayObservers, ReplayOptions, replay

        class _Drop:
            def save(self, preparation: object, request: object) -> None:
                return None

        replay(loaded, observers=ReplayObservers(sink=_Drop()),
               options=ReplayOptions(keep_bodies=False, keep_records=False))
        info = None
    else:
        streamed = stream_replay(loaded, store=store, session_id=sid, name="default",
                                 prefixes=True)
        replay_report(loaded, streamed.result, prefixes=streamed.prefixes)
        info = streamed.info
    cpu = time.process_time() - started
    peak = peak_rss_bytes() - base
    steps = info.step_count if info is not None else 0
    store.close()
    return {"path": path, "responses": responses, "steps": steps, "session_mb": round(size / 1e6, 1),
            "peak_extra_mb": round(peak / 1e6, 1), "peak_x_session": round(peak / size, 2),
            "cpu_s": round(cpu, 2)}


def run(responses: int, paths: list[str]) -> list[dict]:
    """Each path in a new process of this script."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-save-memory-") as tmp:
        for path in paths:
            out = Path(tmp) / f"{path}.json"
            subprocess.run([sys.executable, __file__, str(responses), "--one", path,
                            "--home", tmp, "--json", str(out)], check=True)
            rows.append(json.loads(out.read_text(encoding="utf-8")))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("responses", nargs="?", type=int, default=2000)
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--one", choices=PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.one:
        result: object = one(args.responses, args.one, args.home)
    else:
        result = run(args.responses, args.paths.split(","))
        print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
