"""The summary cache's folder stays under its size cap: the least recently used answers go first,
a read counts as a use, 0 keeps nothing on disk, and ``WORKBENCH_SUMMARY_CACHE_MB`` sets the cap
(R-PREP-7)."""

from __future__ import annotations

import os
import time

import pytest
from iris.compaction import OpenAICompatibleSummariser
from iris.compaction.summary_cache import DISK_BYTES, SummaryCache
from iris.errors import SummariserError

ANSWER = "x" * 1000


def _size(folder) -> int:
    return sum(p.stat().st_size for p in folder.glob("*.json"))


def test_r_prep_7_disk_cache_evicts_least_recently_used_answers_beyond_its_cap(tmp_path):
    """Five answers fit under a 6,000-byte cap; a sixth takes the folder over, and the oldest
    unread answers are deleted (down to 90 % of the cap) while the one read lately stays."""
    folder = tmp_path / "summary-cache"
    cache = SummaryCache(folder, max_bytes=6000)
    for i in range(5):
        cache.put(f"k{i}", ANSWER, "m")
    assert len(list(folder.glob("*.json"))) == 5
    old = time.time() - 1000
    for i in range(5):  # written long ago, k0 first
        os.utime(folder / f"k{i}.json", (old + i, old + i))
    SummaryCache.clear_memory()
    assert cache.get("k0") == (ANSWER, "m")  # read from disk: now the most recently used
    cache.put("k5", ANSWER, "m")
    left = sorted(p.stem for p in folder.glob("*.json"))
    assert left == ["k0", "k2", "k3", "k4", "k5"]  # k1, the least recently used, went
    assert _size(folder) <= 6000 * 0.9
    SummaryCache.clear_memory()
    assert cache.get("k1") is None and cache.get("k2") == (ANSWER, "m")
    SummaryCache.clear_memory()


def test_r_prep_7_a_cap_of_zero_keeps_nothing_on_disk(tmp_path):
    cache = SummaryCache(tmp_path / "summary-cache", max_bytes=0)
    cache.put("k", ANSWER, None)
    assert not (tmp_path / "summary-cache").exists()
    assert cache.get("k") == (ANSWER, None)  # the in-process cache still answers
    SummaryCache.clear_memory()


def test_r_prep_7_cache_cap_from_the_environment(tmp_path, monkeypatch):
    """The default cap is DISK_BYTES; WORKBENCH_SUMMARY_CACHE_MB changes it; a bad value says
    what it must be."""
    monkeypatch.setenv("WORKBENCH_SUMMARY_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("WORKBENCH_SUMMARY_MODEL", "m")
    client = OpenAICompatibleSummariser.from_env(cache_dir=tmp_path)
    assert client is not None and client.cache is not None and client.cache.max_bytes == DISK_BYTES
    monkeypatch.setenv("WORKBENCH_SUMMARY_CACHE_MB", "5")
    client = OpenAICompatibleSummariser.from_env(cache_dir=tmp_path)
    assert client is not None and client.cache is not None and client.cache.max_bytes == 5_000_000
    monkeypatch.setenv("WORKBENCH_SUMMARY_CACHE_MB", "lots")
    with pytest.raises(SummariserError, match="WORKBENCH_SUMMARY_CACHE_MB must be a whole number"):
        OpenAICompatibleSummariser.from_env(cache_dir=tmp_path)
