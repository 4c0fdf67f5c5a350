"""Importing transcripts into the store for the Sessions page, the CLI and notebooks: every file
(or every session file below a folder) is imported and reported, with its outcome or its error in
the user's words; nothing raises. Also safe names for uploaded files, the bundled samples, and
the one reading of "a transcript path or a stored session id" (CLI and notebook).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import traceback
from collections.abc import Callable, Generator, Iterable
from contextlib import AbstractContextManager, contextmanager
from importlib import resources
from pathlib import Path

from iris.errors import IrisError, SessionFormatError, StorageError
from iris.frozen import UNCHANGED, FrozenModel
from iris.session import Session

from ..storage.store import ImportOutcome, Store

__all__ = [
    "SAMPLES_DIR",
    "ErrorReport",
    "ImportReport",
    "bundled_samples",
    "describe_error",
    "first_imported",
    "import_paths",
    "path_or_stored_id",
    "safe_upload_name",
    "save_upload",
    "session_paths",
    "shown_as",
    "uploaded",
]

#: The bundled samples, installed as the package ``workbench.sample_sessions`` (``sample_sessions/``
#: in a checkout), so notebooks and the app find them outside a checkout too.
SAMPLES_DIR = Path(str(resources.files("workbench.sample_sessions"))).resolve()


_Frozen = FrozenModel


class ErrorReport(_Frozen):
    """An import error in the words the page shows; the traceback is for developers only."""

    message: str
    path: str | None = None
    line: int | None = None
    field: str | None = None
    expected: bool = True
    """False for errors the project did not raise on purpose (a bug)."""
    traceback: str = ""


class ImportReport(_Frozen):
    """What happened to one file."""

    path: str
    outcome: ImportOutcome | None = None
    error: ErrorReport | None = None


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_upload_name(name: str) -> str:
    """A browser-supplied file name reduced to one harmless path component."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = _UNSAFE.sub("_", base).lstrip(".")[:120]
    return base if base.strip("_") else "upload.jsonl"


def save_upload(name: str, data: bytes) -> Path:
    """An uploaded file's bytes written to a new temporary folder under :func:`safe_upload_name`
    of the browser-supplied ``name``; returns the written file (the caller removes its folder:
    :func:`uploaded` does)."""
    target = Path(tempfile.mkdtemp(prefix="workbench-upload-")) / safe_upload_name(name)
    target.write_bytes(data)
    return target


@contextmanager
def uploaded(name: str, data: bytes) -> Generator[Path]:
    """:func:`save_upload` for the length of a ``with`` block: the temporary folder and the copy in
    it are removed when the block ends, whether the import in it succeeded, failed or was cut
    short (a page rerun)."""
    target = save_upload(name, data)
    try:
        yield target
    finally:
        shutil.rmtree(target.parent, ignore_errors=True)


def shown_as(report: ImportReport, names: dict[str, str]) -> ImportReport:
    """``report`` in the words of the file the user chose: an upload is imported from a temporary
    copy (:func:`save_upload`), whose path ``names`` maps to the chosen file name, in the report's
    path and error message."""
    name = names.get(report.path)
    if name is None:
        return report
    error = report.error
    if error is not None:
        error = error.evolve(**UNCHANGED, message=error.message.replace(report.path, name),
                             path=name if error.path is not None else None)
    return report.evolve(**UNCHANGED, path=name, error=error)


def first_imported(reports: Iterable[ImportReport]) -> str | None:
    """The session id of the first report with an outcome (None when every import failed)."""
    return next((r.outcome.session_id for r in reports if r.outcome is not None), None)


def describe_error(exc: BaseException) -> ErrorReport:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if isinstance(exc, SessionFormatError):
        return ErrorReport(message=str(exc), path=exc.path, line=exc.line, field=exc.field, traceback=tb)
    if isinstance(exc, IrisError):
        return ErrorReport(message=str(exc), traceback=tb)
    return ErrorReport(message=f"unexpected {type(exc).__name__}: {exc}", expected=False, traceback=tb)


def session_paths(paths: Iterable[str | Path]) -> list[str]:
    """The files an import of ``paths`` reads: a file as given, a directory every session file
    below it."""
    from ..importers.files import session_files

    return [str(f) for p in paths for f in (session_files(Path(p)) if Path(p).is_dir() else [p])]


def import_paths(store: Store, paths: Iterable[str | Path], *, lenient: bool = False,
                 format: str | None = None,
                 progress: Callable[[int, int, float, str], None] | None = None) -> list[ImportReport]:
    """Import each file (a directory: every session file below it); never raises.
    ``progress(file_index, n_files, fraction, label)``, the index into :func:`session_paths`."""
    paths = session_paths(paths)
    reports: list[ImportReport] = []
    for i, path in enumerate(paths):
        def step(fraction: float, label: str, i: int = i) -> None:
            if progress is not None:
                progress(i, len(paths), fraction, label)
        try:
            outcome = store.import_file(path, format=format, lenient=lenient, progress=step)
        except Exception as exc:  # noqa: BLE001 - the UI boundary shows every error, never crashes
            reports.append(ImportReport(path=path, error=describe_error(exc)))
        else:
            reports.append(ImportReport(path=path, outcome=outcome))
    return reports


def bundled_samples(directory: Path = SAMPLES_DIR) -> list[Path]:
    """The sample sessions shipped with the repository (empty when absent)."""
    return sorted(directory.glob("*.jsonl")) if directory.is_dir() else []


def path_or_stored_id(target: str | Path, open_store: Callable[[], AbstractContextManager[Store]],
                      *, format: str | None = None, lenient: bool = False) -> tuple[str, Session]:
    """``(session id, session)`` of ``target``: a transcript file is read (not stored); anything
    else is looked up in the store (opened only then) as a session id. A StorageError names both
    readings when ``target`` is neither."""
    from ..importers import load_session

    path = Path(target).expanduser()
    if path.is_file():
        session = load_session(path, format=format, lenient=lenient).session
        return session.header.session_id, session
    with open_store() as store:
        if any(s.id == str(target) for s in store.list_sessions()):
            return str(target), store.session(str(target))
    raise StorageError(f"{str(target)!r} is neither a transcript file nor a stored session id "
                       "(list them with `workbench sessions`)")
