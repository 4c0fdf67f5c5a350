"""Timing and memory helpers shared by the benchmark cases.

Wall time is what a user waits for; CPU time (``process_time``) is kept next to it because the
benchmark machine may be shared: when other processes load the CPUs, wall time grows but CPU time
and the same-run ratios stay meaningful. Peak memory is the process's resident-set high-water
mark (``VmHWM``), reset before each measured part where the kernel allows it.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Stats:
    """Median, min and max of repeated measurements (seconds or any unit)."""

    median: float
    min: float
    max: float
    runs: int

    @classmethod
    def of(cls, values: list[float]) -> Stats:
        return cls(statistics.median(values), min(values), max(values), len(values))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """``(wall seconds, cpu seconds, result)`` of one call, after a garbage collection."""
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - w, time.process_time() - c, result


def _status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_bytes() -> int:
    return _status_kb("VmRSS") * 1024


def peak_rss_bytes() -> int:
    return _status_kb("VmHWM") * 1024


def reset_peak() -> bool:
    """Reset the RSS high-water mark to the current RSS (Linux ``clear_refs`` 5); False if refused."""
    try:
        with open(f"/proc/{os.getpid()}/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def retained_size(build: Callable[[], Any]) -> tuple[Any, int]:
    """``(object, bytes of Python memory it keeps alive)`` measured with tracemalloc while building."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    obj = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return obj, after - before


def load_note() -> str:
    """The 1/5/15-minute load averages and the CPU count, for the results header."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} CPUs"
