"""Where the time goes: cProfile on the CPU clock, summarised for ``bench/results.json``.

The floor cases profile the slower side once (a child process for a whole command, or a call in
the case's own process) and keep a few named parts (imports, vocabulary, loading, replay,
tiktoken, storing) plus the functions with the most self time, so the causes written in
``docs/performance.md`` come from the same ``make bench`` run as the ratios.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: Named parts: label -> (a piece of the file name, the function name). A part is the summed
#: cumulative CPU of the matching functions (cProfile counts a recursive function's outermost
#: calls only, so the import machinery is not counted twice).
PARTS: dict[str, tuple[str, str]] = {
    "imports": ("importlib._bootstrap", "_find_and_load"),
    "vocabulary": ("iris/vocabulary.py", "cl100k_encoding"),
    "load transcript": ("importers/__init__.py", "load_session"),
    "open store": ("storage/store.py", "open_store"),
    "replay": ("iris/replay.py", "replay"),
    "tiktoken encode": ("tiktoken/core.py", "encode_ordinary"),
    "tiktoken encode (batch)": ("tiktoken/core.py", "encode_ordinary_batch"),
    "json.loads": ("json/__init__.py", "loads"),
    "HTML report": ("report/__init__.py", "render_report"),
    "argument parser": ("cli/__init__.py", "build_parser"),
    "pydantic model classes": ("_model_construction.py", "__new__"),
    "jinja2 templates compiled": ("jinja2/environment.py", "compile"),
    "regular expressions compiled": ("re/__init__.py", "_compile"),
    "tiktoken CoreBPE built": ("tiktoken/core.py", "__init__"),
}

#: Runs ``python -m MODULE ARGS`` under cProfile (CPU clock) and writes the stats to a file.
CHILD = """
import cProfile, runpy, sys, time
out, module = sys.argv[1], sys.argv[2]
sys.argv = [module, *sys.argv[3:]]
prof = cProfile.Profile(time.process_time)
prof.enable()
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    prof.disable()
    prof.dump_stats(out)
"""


def _short(key: tuple[str, int, str]) -> str:
    file, line, name = key
    parts = Path(file).parts
    where = "/".join(parts[-2:]) if len(parts) > 1 else file
    return f"{where}:{line}({name})" if line else name


def summarise(stats: pstats.Stats, top: int = 12) -> dict[str, Any]:
    """The named parts, the functions of most self time, and the project's functions of most
    cumulative time (engine and workbench code), in seconds of CPU."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in table.values())
    parts = {label: sum(v[3] for k, v in table.items() if k[2] == name and piece in k[0])
             for label, (piece, name) in PARTS.items()}
    by_self = sorted(table.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    own = [(k, v) for k, v in table.items() if "/core/iris/" in k[0] or "/workbench/" in k[0]]
    by_cum = sorted(own, key=lambda kv: kv[1][3], reverse=True)[:top]
    return {"total": total, "parts": {k: round(v, 4) for k, v in parts.items() if v > 0},
            "self": [[_short(k), round(v[2], 4)] for k, v in by_self],
            "cumulative": [[_short(k), round(v[3], 4)] for k, v in by_cum]}


def profile_call(fn: Callable[[], Any]) -> dict[str, Any]:
    """Profile one call in this process (CPU clock)."""
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    try:
        fn()
    finally:
        prof.disable()
    return summarise(pstats.Stats(prof))


def profile_module(module: str, args: Sequence[str], env: dict[str, str], out: Path, cwd: Path) -> dict[str, Any]:
    """Profile ``python -m module args`` in a new process (start-up imports included)."""
    proc = subprocess.run([sys.executable, "-c", CHILD, str(out), module, *args], env=env, cwd=cwd,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not out.is_file():
        raise RuntimeError(f"profile of {module} {' '.join(args[:1])}: exit {proc.returncode}: {proc.stderr[-600:]}")
    summary = summarise(pstats.Stats(str(out)))
    os.unlink(out)
    return summary
