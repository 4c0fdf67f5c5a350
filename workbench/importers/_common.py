"""Helpers every transcript importer shares: streaming line reading, strict/lenient error
collection, and the small conversions (timestamps, tool arguments, titles) that must behave the
same in every format.

The error policy lives here so it is identical across formats (R-SES-5): strict mode raises the
first :class:`SessionFormatError`; lenient mode records it and the importer leaves the line out.
Any other exception raised while a line is converted is wrapped so that it names the file and line.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from iris.errors import SessionFormatError
from orjson import JSONDecodeError as FastDecodeError
from orjson import loads as fast_loads
from pydantic import ValidationError

from ._nesting import too_deep, within_nesting
from ._source import open_bytes

__all__ = ["LINE_FAILURES", "MAX_COUNT", "LineErrors", "UnplacedLine", "as_bool", "as_dict", "as_int", "as_list", "as_str",
           "fast_object", "has_digit_run", "has_surrogate_escape", "iter_json_lines", "json_error_words", "opt_str", "parse_arguments", "parse_time",
           "scrub_surrogates", "sha256_file", "short_id", "shorten_title"]

TITLE_LENGTH = 80

#: Everything a line's conversion may raise that becomes that line's format error.
LINE_FAILURES = (SessionFormatError, ValidationError, KeyError, TypeError, ValueError, AttributeError,
                 IndexError)
_JSON = json.JSONDecoder()
#: ``bytes.translate`` table turning every ASCII digit into ``0``: a run of digits becomes a run
#: of zeros, found by a plain substring search (far cheaper than a regular expression).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
#: The largest token count or size accepted (2**53 - 1: exact as a float, and far below SQLite's
#: 64-bit INTEGER even when several counts are added up).
MAX_COUNT = 2**53 - 1
#: A UTF-16 surrogate code point: once JSON is decoded, any left in a string is unpaired.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_error_words(exc: json.JSONDecodeError, *, line: int | None = None) -> str:
    """A decode error in words with its place: ``invalid control character at line 3, column 7``.

    The decoder's own message ends in "at" when it points at a position ("Invalid control
    character at"); that "at" is dropped so the place reads once. ``line`` replaces the decoder's
    line when the text decoded was one line of a larger file."""
    what = exc.msg.removesuffix(" at").strip() or "invalid JSON"
    return f"{what[:1].lower()}{what[1:]} at line {line or exc.lineno}, column {exc.colno}"


class UnplacedLine(SessionFormatError):
    """A line that was read but could not be placed in the conversation, with why. An importer
    reports it in its ``warnings`` list; :func:`workbench.importers.load_session` counts these
    apart (``ImportResult.unplaced``) so every surface can show them (R-TWIN-1)."""


class LineErrors:
    """Strict/lenient error policy for one import: ``skipped`` (lenient) and ``warnings``."""

    def __init__(self, path: Path, lenient: bool, skipped: list[SessionFormatError] | None,
                 warnings: list[SessionFormatError] | None = None) -> None:
        self.path = path
        self.lenient = lenient
        self.skipped = skipped if skipped is not None else []
        self.warnings = warnings if warnings is not None else []
        self.lines_read = 0
        """Non-blank lines seen (0 means the file is empty)."""

    def error(self, problem: str, *, line: int | None = None, field: str | None = None) -> None:
        """Report a problem that makes a line unusable: raise (strict) or record it (lenient)."""
        self.record(SessionFormatError(problem, path=self.path, line=line, field=field))

    def record(self, exc: SessionFormatError) -> None:
        if not self.lenient:
            raise exc
        self.skipped.append(exc)

    def warn(self, problem: str, *, line: int | None = None, field: str | None = None) -> None:
        """Something worth knowing that does not stop the import (kept data, ignored records)."""
        self.warnings.append(SessionFormatError(problem, path=self.path, line=line, field=field))

    def unplaced(self, problem: str, *, line: int | None = None) -> None:
        """A line kept out of the conversation because it cannot be placed (never silently)."""
        self.warnings.append(UnplacedLine(problem, path=self.path, line=line))

    def scrub(self, data: Any, lineno: int | None) -> Any:
        """``data`` with lone surrogates replaced (:func:`scrub_surrogates`), as a warning."""
        found: list[str] = []
        try:
            data = scrub_surrogates(data, found)
        except RecursionError:
            raise SessionFormatError("JSON nested too deeply to read", path=self.path, line=lineno) from None
        if found:
            self.warn(f"{len(found)} string(s) with a lone UTF-16 surrogate (half of a \\ud800-style "
                      "pair); each one replaced by U+FFFD", line=lineno, field=found[0] or None)
        return data

    @contextmanager
    def line(self, lineno: int) -> Iterator[None]:
        """Convert any failure inside the block into this line's error (raised or recorded)."""
        try:
            yield
        except LINE_FAILURES as exc:
            self.failed(exc, lineno)

    def failed(self, exc: Exception, lineno: int | None) -> None:
        """What :meth:`line` does with a failure, for hot loops that catch ``LINE_FAILURES``
        themselves (a context manager per line is measurable on a 50 MB transcript)."""
        if isinstance(exc, SessionFormatError):
            if exc.line is None or exc.path is None:
                exc = SessionFormatError(exc.problem, path=self.path, line=exc.line or lineno,
                                         field=exc.field)
            self.record(exc)
        elif isinstance(exc, ValidationError):
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or None
            self.record(SessionFormatError(err["msg"], path=self.path, line=lineno, field=field))
        else:
            self.record(SessionFormatError(f"unexpected shape ({type(exc).__name__}: {exc})",
                                           path=self.path, line=lineno))

    def nothing_imported(self, what: str) -> SessionFormatError:
        if self.lines_read == 0 and not self.skipped:
            return SessionFormatError("empty file: no records", path=self.path)
        n = len(self.skipped)
        extra = f" ({n} bad line{'s' if n != 1 else ''} skipped, first: {self.skipped[0]})" if n else ""
        return SessionFormatError(f"no {what} could be imported{extra}", path=self.path)


def has_digit_run(raw: bytes, digits: int) -> bool:
    """True when ``raw`` holds ``digits`` or more ASCII digits in a row (in a number or a string)."""
    return b"0" * digits in raw.translate(_DIGITS_AS_ZERO)


def fast_object(raw: bytes, digits: int = 19) -> dict[str, Any] | None:
    """The JSON object of one line, decoded by orjson, or None where its value could differ from
    ``json.loads``'s or the line needs the exact decoder (which then names its error).

    orjson refuses what the exact path treats its own way: invalid UTF-8, lone surrogates (the
    exact path repairs them), NaN and infinite numbers, nesting deeper than 1,024. It reads an
    integer beyond 64 bits as a float, so a line with a run of ``digits`` digits anywhere is left
    to the exact decoder (an integer of 18 digits or fewer is exact either way)."""
    try:
        data = fast_loads(raw)
    except FastDecodeError:
        return None
    if type(data) is not dict or has_digit_run(raw, digits):
        return None
    return data


def iter_json_lines(path: Path, errors: LineErrors) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for every usable line, reading the file one line at a time.

    Blank lines are ignored; invalid UTF-8, invalid JSON and non-object lines are errors. Lines
    are decoded by orjson where its value is provably ``json.loads``'s (:func:`fast_object`), else
    by the standard library's decoder."""
    decode = _JSON.decode
    with open_bytes(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw.isspace():  # a line from a file is never b"": this is ``not raw.strip()``
                continue
            errors.lines_read += 1
            fast = fast_object(raw)
            if fast is not None:  # no lone surrogate either: orjson refuses them
                yield lineno, fast
                continue
            try:  # the exact path, still without per-line context managers
                data = decode(raw.decode("utf-8"))
            except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError too
                data = None
            if type(data) is dict:
                if b"\\ud" in raw or b"\\uD" in raw:  # a \udXXX escape: maybe half a pair
                    data = errors.scrub(data, lineno)
                yield lineno, data
                continue
            joined = _joined_objects(raw)
            if joined is not None:
                errors.warn(f"holds {len(joined)} JSON objects with no line break between them (a "
                            "write that lost its newline); each is read as a line of its own",
                            line=lineno)
                for part in joined:
                    yield lineno, part
                continue
            with errors.line(lineno):  # decode again, slowly, for the exact error of this line
                _decode_line(raw, lineno)


def _joined_objects(raw: bytes) -> list[dict[str, Any]] | None:
    """The JSON objects of a line that holds several written one after the other (``{…}{…}``):
    each complete and an object, nothing else on the line; None otherwise (the line's own error
    is reported then)."""
    try:
        text = raw.decode("utf-8")
        found: list[dict[str, Any]] = []
        at = 0
        while True:
            while at < len(text) and text[at].isspace():
                at += 1
            if at == len(text):
                break
            value, at = _JSON.raw_decode(text, at)
            if type(value) is not dict:
                return None
            found.append(value)
    except (ValueError, RecursionError):
        return None
    return found if len(found) > 1 else None


def _decode_line(raw: bytes, lineno: int) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFormatError(f"not UTF-8 text (byte {exc.start + 1} of the line)",
                                 line=lineno) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionFormatError(f"not valid JSON ({json_error_words(exc, line=lineno)}; "
                                 "truncated line?)", line=lineno) from None
    except ValueError:  # the decoder refuses integer literals of more than 4,300 digits
        raise SessionFormatError("not valid JSON (a number with too many digits to read)",
                                 line=lineno) from None
    except RecursionError:  # hostile nesting: an error of this line, not of the whole import
        raise SessionFormatError("JSON nested too deeply to read", line=lineno) from None
    if not isinstance(data, dict):
        raise SessionFormatError(f"expected a JSON object, got {_kind(data)}", line=lineno)
    return data


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def has_surrogate_escape(text: str | bytes) -> bool:
    """True when JSON text holds a ``\\udXXX`` escape (which may be half of a surrogate pair)."""
    return ("\\ud" in text or "\\uD" in text) if isinstance(text, str) else \
        (b"\\ud" in text or b"\\uD" in text)


def scrub_surrogates(value: Any, found: list[str], field: str = "") -> Any:
    """``value`` (decoded JSON) with every lone UTF-16 surrogate in its strings and keys replaced
    by U+FFFD, the Unicode replacement character; the field path of each changed string is
    appended to ``found``.

    JSON may spell half of a surrogate pair (``"\\ud800"``); Python decodes it to a string that no
    UTF-8 text, SQLite column or hash can hold. This is the one place such text is repaired: every
    importer calls it on the lines whose raw text has a ``\\udXXX`` escape, so everything after the
    import sees valid text. A valid pair (an escaped emoji) decodes to one character, untouched."""
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value) is None:
            return value
        found.append(field)
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        clean = {}
        for key, item in value.items():
            key = scrub_surrogates(key, found, field)
            clean[key] = scrub_surrogates(item, found, f"{field}.{key}" if field else key)
        return clean
    if isinstance(value, list):
        return [scrub_surrogates(v, found, f"{field}[{i}]") for i, v in enumerate(value)]
    return value


def as_dict(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SessionFormatError(f"must be an object, got {_kind(value)}", field=field)
    return value


def as_list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise SessionFormatError(f"must be an array, got {_kind(value)}", field=field)
    return value


def as_str(value: Any, field: str, *, optional: bool = False) -> str:
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise SessionFormatError(f"must be a string, got {_kind(value)}", field=field)
    return value


def opt_str(value: Any, field: str) -> str | None:
    """A string, or None for null/absent; any other type is the field's error."""
    if value is None or type(value) is str:
        return value
    raise SessionFormatError(f"must be a string, got {_kind(value)}", field=field)


def as_bool(value: Any, field: str) -> bool:
    """A JSON boolean; null/absent is False; any other type is the field's error."""
    if value is None:
        return False
    if type(value) is bool:
        return value
    raise SessionFormatError(f"must be true or false, got {_kind(value)}", field=field)


def as_int(value: Any, field: str) -> int:
    """A count (tokens, sizes): a JSON integer in ``[0, MAX_COUNT]``; null is 0."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise SessionFormatError(f"must be an integer, got {_kind(value)}", field=field)
    if not 0 <= value <= MAX_COUNT:
        raise SessionFormatError(f"must be a count from 0 to {MAX_COUNT:,}, got {_number(value)}",
                                 field=field)
    return value


def _number(value: int) -> str:
    return f"{value:,}" if abs(value) < 10**30 else f"a {value.bit_length()}-bit integer"


def parse_time(value: Any, field: str = "timestamp") -> datetime | None:
    """ISO-8601 (``Z`` allowed) or Unix seconds (number or numeric string) → aware datetime.

    Out-of-range, non-finite and unparseable values are a :class:`SessionFormatError` of ``field``
    (a time must also be expressible in UTC, so ``9999-12-31T23:59-01:00`` is out of range)."""
    if value is None:
        return None
    if type(value) is str and value[-1:] == "Z":  # the common UTC time: in range whatever its year
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass  # the checks below name the problem
        else:
            if parsed.tzinfo is UTC:
                return parsed
    if isinstance(value, str) and not value.strip():  # a writer that meant "no time" writes null
        raise SessionFormatError("an empty timestamp (a time, or null for none)", field=field)
    if isinstance(value, str) and ":" not in value:  # an ISO time has a colon; a number never does
        try:
            value = float(value)
        except ValueError:
            pass
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, tz=UTC)
        if isinstance(value, str):
            parsed = datetime.fromisoformat(value)  # Python ≥ 3.11 reads the "Z" suffix
            if parsed.tzinfo is None:
                return parsed.replace(tzinfo=UTC)
            parsed.astimezone(UTC)  # raises when the UTC time falls outside years 1-9999
            return parsed
    except (ValueError, OverflowError, OSError):
        raise SessionFormatError(f"not a timestamp in range: {str(value)[:40]!r}", field=field) from None
    raise SessionFormatError(f"must be a timestamp, got {_kind(value)}", field=field)


def parse_arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as an object: JSON strings are parsed; anything that is not a JSON
    object, or nests deeper than the records hold (:mod:`._nesting`), is kept verbatim as
    ``{"_raw": text}`` so nothing is lost."""
    if isinstance(value, dict):
        return within_nesting(cast("dict[str, Any]", value))
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return {"_raw": value}
        return {"_raw": value} if not isinstance(parsed, dict) or too_deep(parsed) else parsed
    return {"_raw": json.dumps(value, ensure_ascii=False, sort_keys=True)}


def shorten_title(text: str, limit: int = TITLE_LENGTH) -> str:
    """One line of at most ``limit`` characters (whitespace collapsed, ellipsis when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def short_id(prefix: str, content_hash: str) -> str:
    """A deterministic session id from a file's content hash (for formats without an id)."""
    return f"{prefix}-{content_hash.split(':', 1)[-1][:16]}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open_bytes(path) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"
