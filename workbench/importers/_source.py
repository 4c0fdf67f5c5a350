"""Opening a session file for reading, gzip-compressed or not.

Every importer, the format detection and the content hash read through :func:`open_bytes`, so a
``.jsonl.gz`` or ``.json.gz`` file is imported exactly like its uncompressed content: the same
format, the same line numbers, the same content hash (the hash of the uncompressed bytes, so a
file and its compressed copy are recognised as one session). A file is treated as gzip when it
starts with the gzip magic bytes, whatever its name.

A UTF-8 byte order mark at the start of the (decompressed) content, as some Windows editors write
it, is skipped: the file imports, detects and hashes like the same file without it.
"""

from __future__ import annotations

import gzip
import zlib
from io import BufferedIOBase
from pathlib import Path

__all__ = ["GZIP_ERRORS", "is_gzip", "open_bytes", "read_bytes", "strip_gz"]

_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"

#: What reading a damaged or cut gzip stream raises (beside :class:`OSError`).
GZIP_ERRORS: tuple[type[BaseException], ...] = (EOFError, zlib.error, gzip.BadGzipFile)


def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic bytes."""
    with Path(path).open("rb") as fh:
        return fh.read(2) == _MAGIC


def open_bytes(path: Path) -> BufferedIOBase:
    """The file's content as a binary stream, decompressed when it is gzip, after any UTF-8
    byte order mark."""
    path = Path(path)
    stream: BufferedIOBase = (gzip.open(path, "rb") if is_gzip(path)  # noqa: SIM115 (returned open)
                              else path.open("rb"))
    try:
        if stream.peek(len(_BOM))[:len(_BOM)] == _BOM:  # pyright: ignore[reportAttributeAccessIssue]
            stream.read(len(_BOM))
    except BaseException:
        stream.close()
        raise
    return stream


def read_bytes(path: Path) -> bytes:
    """The whole (decompressed) content of the file."""
    with open_bytes(path) as fh:
        return fh.read()


def strip_gz(name: str) -> str:
    """A file name without a trailing ``.gz`` (``a.jsonl.gz`` → ``a.jsonl``)."""
    return name[:-3] if name.lower().endswith(".gz") else name
