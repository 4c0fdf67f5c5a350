"""The project's one canonical JSON form and content hash: a contract.

Record ids, request references, configuration and template snapshot ids, the summary cache's keys
and the store's JSON columns are all taken over :func:`canonical_json`: sorted keys, no
whitespace (``","`` and ``":"`` separators), non-ASCII kept as UTF-8, pydantic models dumped in
JSON mode. Hashes are SHA-256, written ``sha256:<hex>``. Stored records and caches hold these
values, so changing the form or the algorithm is a migration (new record schema version, a
store migration, regenerated goldens), never a refactor; ``tests/workbench/test_hashing.py`` pins both.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

__all__ = ["ALGORITHM", "canonical_json", "content_hash", "hex_digest", "text_hash"]

ALGORITHM = "sha256"
"""The hash algorithm; also the prefix of every hash this module writes."""


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: the one serialisation hashes are taken over."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def hex_digest(text: str) -> str:
    """The bare SHA-256 hex digest of ``text`` (UTF-8), for keys that carry no prefix."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def text_hash(text: str) -> str:
    """``sha256:<hex>`` of ``text`` as it is (already canonical, or raw text)."""
    return f"{ALGORITHM}:{hex_digest(text)}"


def content_hash(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return text_hash(canonical_json(value))
