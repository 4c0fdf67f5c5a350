"""The decoded vocabulary is cached in the user's cache folder, checked before use (R-TOK-1)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from iris import vocabulary
from iris.vocabulary import CL100K_SHA256, cache_dir, cl100k_encoding, load_ranks


def _cache_files(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_r_tok_1_ranks_are_cached_by_vocabulary_hash_and_read_back_equal(tmp_path, monkeypatch):
    """The first load writes one file named by the vocabulary hash into a private folder; the next
    load reads it and yields the same table the packaged vocabulary decodes to."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRIS_CACHE_DIR", str(folder))
    first = load_ranks()
    names = _cache_files(folder)
    assert len(names) == 1 and CL100K_SHA256[:16] in names[0]
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert vocabulary._read_cached(folder) == first
    assert load_ranks() == first == vocabulary._packaged_ranks()
    assert cl100k_encoding()._mergeable_ranks == first


def test_r_tok_1_a_damaged_cache_file_is_ignored_and_rewritten(tmp_path, monkeypatch):
    """A cache file whose checksum does not match (a flipped byte, a truncated write) is never
    used: the table is decoded from the package again and the file replaced."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRIS_CACHE_DIR", str(folder))
    good = load_ranks()
    path = folder / _cache_files(folder)[0]
    blob = bytearray(path.read_bytes())
    blob[100] ^= 0xFF
    path.write_bytes(bytes(blob))
    assert vocabulary._read_cached(folder) is None
    assert load_ranks() == good
    assert vocabulary._read_cached(folder) == good  # rewritten
    path.write_bytes(b"short")
    assert vocabulary._read_cached(folder) is None
    assert load_ranks() == good


def test_r_tok_1_an_empty_cache_setting_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("IRIS_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() is None
    assert len(load_ranks()) == 100256
    assert list(tmp_path.iterdir()) == []


def test_r_tok_1_an_unwritable_cache_folder_is_skipped(tmp_path, monkeypatch):
    """A cache folder that is a symbolic link is refused by the safe writer; the load still works."""
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    monkeypatch.setenv("IRIS_CACHE_DIR", str(tmp_path / "link"))
    assert len(load_ranks()) == 100256
    assert list(target.iterdir()) == []


@pytest.mark.slow  # starts a process
def test_r_tok_1_a_fresh_process_counts_the_same_from_the_cache(tmp_path):
    """Two processes on the same cache folder: the first writes it, the second reads it; both count
    the same tokens."""
    env = {**os.environ, "IRIS_CACHE_DIR": str(tmp_path)}
    code = "from iris.tokens import TokenEstimator\nprint(TokenEstimator().count('hello world, café'))\n"
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=120, check=False) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
    assert runs[0].stdout == runs[1].stdout != ""
    assert len(_cache_files(tmp_path)) == 1


@pytest.mark.parametrize("xdg", [True, False])
def test_cache_folder_follows_xdg_cache_home(tmp_path, monkeypatch, xdg):
    monkeypatch.delenv("IRIS_CACHE_DIR", raising=False)
    if xdg:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        assert cache_dir() == tmp_path / "context-workbench"
    else:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.setenv("HOME", str(tmp_path))
        assert cache_dir() == tmp_path / ".cache" / "context-workbench"
