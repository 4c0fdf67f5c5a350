"""Importers: every supported transcript format becomes one :class:`iris.session.Session`.

``load_session(path)`` is the single entry point: it detects the format (or takes ``format=``),
runs the importer in strict or lenient mode (R-SES-5) and returns an :class:`ImportResult` that
also carries the content hash of the file (so a store can refuse to import it twice).
"""

from __future__ import annotations

import stat
from pathlib import Path

from iris.errors import SessionFormatError
from iris.frozen import FrozenModel
from iris.session import Session

from ._common import UnplacedLine, sha256_file
from ._fast import paused_gc
from ._source import GZIP_ERRORS
from .registry import BUILTIN, formats, get_importer

__all__ = ["FORMATS", "ImportResult", "SkippedLine", "detect_format", "file_hash", "formats",
           "load_session"]

FORMATS = tuple(importer.name for importer in BUILTIN)
"""The built-in formats in detection order (from :data:`registry.BUILTIN`, the one list a new
built-in importer is added to); :func:`formats` adds the plugins (entry points)."""


class SkippedLine(FrozenModel):
    """One line a lenient import left out, and why."""

    line: int
    """1-based line number in the source file (0 when the problem is not tied to one line)."""
    problem: str


class ImportResult(FrozenModel):
    """A session imported from a file, with how it was read."""

    session: Session
    format: str
    path: str
    skipped: tuple[SkippedLine, ...] = ()
    """Every line a lenient import left out (empty after a strict import)."""
    warnings: tuple[SkippedLine, ...] = ()
    """Things kept or ignored that are worth knowing: orphan results kept, records that are not
    model context (e.g. mini-swe-agent's ``exit`` message), missing parents."""
    content_hash: str
    """``sha256:<hex>`` of the file bytes."""
    unplaced: tuple[SkippedLine, ...] = ()
    """Lines that were read but could not be placed in the conversation, each with why (R-TWIN-1);
    never silently dropped: every surface that shows an import shows their count."""


def file_hash(path: str | Path) -> str:
    """``sha256:<hex>`` of a file, read in chunks."""
    return sha256_file(Path(path))


def detect_format(path: str | Path) -> str:
    """The format name of a session file, judged from its first records."""
    from .detect import detect

    return detect(Path(path))


def load_session(path: str | Path, *, format: str | None = None, lenient: bool = False) -> ImportResult:
    """Import one session file. Strict mode raises one :class:`SessionFormatError` naming file,
    line and problem; lenient mode skips bad lines and lists them in ``ImportResult.skipped``."""
    path = Path(path)
    if not path.is_file():
        raise SessionFormatError(_not_a_file(path), path=path)
    try:
        fmt = format or detect_format(path)
    except GZIP_ERRORS as exc:
        raise _gzip_error(path, exc) from None
    except OSError as exc:
        raise SessionFormatError(f"cannot read the file ({exc.strerror or exc})", path=path) from None
    try:
        importer = get_importer(fmt)
    except SessionFormatError as exc:
        raise SessionFormatError(exc.problem, path=path) from None
    errors: list[SessionFormatError] = []
    notes: list[SessionFormatError] = []
    try:
        content_hash = file_hash(path)
        with paused_gc():
            session = importer.load(path, lenient=lenient, skipped=errors, warnings=notes,
                                    content_hash=content_hash)
    except GZIP_ERRORS as exc:
        raise _gzip_error(path, exc) from None
    except OSError as exc:
        raise SessionFormatError(f"cannot read the file ({exc.strerror or exc})", path=path) from None
    except RecursionError:
        raise SessionFormatError("JSON nested too deeply to read", path=path) from None
    except SessionFormatError:
        raise
    except Exception as exc:
        if importer in BUILTIN:
            raise
        raise SessionFormatError(f"the {fmt!r} importer (a plugin) failed: {type(exc).__name__}: {exc}",
                                 path=path) from None
    if not isinstance(session, Session):
        raise SessionFormatError(f"the {fmt!r} importer returned {type(session).__name__}, not a Session",
                                 path=path)
    unplaced: list[SessionFormatError] = [n for n in notes if isinstance(n, UnplacedLine)]
    notes = [n for n in notes if not isinstance(n, UnplacedLine)]
    return ImportResult(session=session, format=fmt, path=str(path), skipped=_lines(errors),
                        warnings=_lines(notes), content_hash=content_hash, unplaced=_lines(unplaced))


def _not_a_file(path: Path) -> str:
    """What ``path`` is, for a path that is not a regular file (said, never read: a named pipe
    would block and a device such as /dev/zero would be read for ever)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot read the file ({exc.strerror or exc})"
    kinds = ((stat.S_ISDIR, "is a folder, not a file (import a folder with `workbench import`)"),
             (stat.S_ISFIFO, "is a named pipe (FIFO), not a regular file"),
             (stat.S_ISCHR, "is a device, not a regular file"),
             (stat.S_ISBLK, "is a device, not a regular file"),
             (stat.S_ISSOCK, "is a socket, not a regular file"))
    return next((text for test, text in kinds if test(mode)), "is not a regular file")


def _gzip_error(path: Path, exc: BaseException) -> SessionFormatError:
    return SessionFormatError(f"damaged or truncated gzip file ({exc})", path=path)


def _lines(errors: list[SessionFormatError]) -> tuple[SkippedLine, ...]:
    return tuple(SkippedLine(line=e.line or 0, problem=_problem(e)) for e in errors)


def _problem(err: SessionFormatError) -> str:
    return f"[{err.field}] {err.problem}" if err.field else err.problem

