"""Reading a whole JSON document (or, failing that, JSON Lines of documents) for the importers of
formats that are not line-oriented: SWE-agent trajectories and OpenTelemetry span dumps."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError
from pydantic import ValidationError

from ._common import LineErrors, has_surrogate_escape, json_error_words, scrub_surrogates
from ._source import read_bytes

__all__ = ["in_field", "load_document", "load_documents"]

_LONG_DIGITS = re.compile(r"[0-9]{4301}")


def _text(path: Path) -> str:
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFormatError(f"not UTF-8 text (byte offset {exc.start})", path=path,
                                 line=data.count(b"\n", 0, exc.start) + 1) from None


def load_document(path: Path) -> Any:
    """The file's single JSON document; a decode error names its line and column."""
    text = _text(path)
    if not text.strip():
        raise SessionFormatError("empty file: no records", path=path)
    try:
        return _clean(json.loads(text), text)
    except json.JSONDecodeError as exc:
        raise SessionFormatError(f"not valid JSON ({json_error_words(exc)}; truncated file?)",
                                 path=path, line=exc.lineno) from None
    except RecursionError:
        raise SessionFormatError("JSON nested too deeply to read", path=path) from None
    except ValueError:
        raise _too_many_digits(path, text) from None


def _clean(doc: Any, text: str) -> Any:
    """The document with lone surrogates replaced (see :func:`scrub_surrogates`)."""
    return scrub_surrogates(doc, []) if has_surrogate_escape(text) else doc


def _too_many_digits(path: Path, text: str) -> SessionFormatError:
    """The decoder refuses integer literals of more than 4,300 digits (a bare ValueError)."""
    found = _LONG_DIGITS.search(text)
    line = text.count("\n", 0, found.start()) + 1 if found else None
    return SessionFormatError("not valid JSON (a number with too many digits to read)", path=path, line=line)


def _one_value(line: str) -> bool:
    """Whether ``line`` holds a whole JSON value (a JSON Lines line, not a document's first line)."""
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def load_documents(path: Path, errors: LineErrors) -> list[tuple[int, Any]]:
    """``(line, document)`` pairs: the one document of the file (line 1), or, when the file is
    JSON Lines, one per non-blank line (a bad line is an error naming it: raised when strict,
    skipped and listed when lenient)."""
    text = _text(path)
    if not text.strip():
        raise SessionFormatError("empty file: no records", path=path)
    try:
        return [(1, _clean(json.loads(text), text))]
    except json.JSONDecodeError as whole:
        lines = text.splitlines()
        filled = [x for x in lines if x.strip()]
        if len(filled) < 2 or whole.lineno > 1 and not _one_value(filled[0]):  # one broken document
            raise SessionFormatError(f"not valid JSON ({json_error_words(whole)}; "
                                     "truncated file?)", path=path, line=whole.lineno) from None
    except RecursionError:
        raise SessionFormatError("JSON nested too deeply to read", path=path) from None
    except ValueError:
        raise _too_many_digits(path, text) from None
    docs: list[tuple[int, Any]] = []
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            docs.append((lineno, errors.scrub(json.loads(raw), lineno) if has_surrogate_escape(raw)
                          else json.loads(raw)))
        except json.JSONDecodeError as exc:
            errors.error(f"not valid JSON ({json_error_words(exc, line=lineno)})", line=lineno)
        except RecursionError:
            errors.error("JSON nested too deeply to read", line=lineno)
        except ValueError:  # an integer literal of more than 4,300 digits
            errors.error("not valid JSON (a number with too many digits to read)", line=lineno)
    return docs


def in_field(exc: Exception, field: str) -> SessionFormatError:
    """A failure while converting the element at ``field`` as a format error naming it (the
    element's own field path, if any, is appended)."""
    if isinstance(exc, SessionFormatError):
        return SessionFormatError(exc.problem, path=exc.path, line=exc.line,
                                  field=f"{field}.{exc.field}" if exc.field else field)
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        inner = ".".join(str(p) for p in err["loc"])
        return SessionFormatError(err["msg"], field=f"{field}.{inner}" if inner else field)
    return SessionFormatError(f"unexpected shape ({type(exc).__name__}: {exc})", field=field)
