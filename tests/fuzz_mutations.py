"""Mutations of real-format transcripts, shared by ``tests/workbench/test_fuzz_importers.py`` and
``scripts/fuzz_campaign.py``.

Every mutation class changes one JSON value (one line of a JSON Lines file, or one node of a JSON
document) or the bytes of one line, the way damaged or hostile transcripts differ from good ones:

``bad_timestamp``  a time field becomes out of range, non-finite, or not a time
``lone_surrogate`` a string (or key) gains a ``\\ud800``-style escape that is half of a UTF-16 pair
``huge_int``       a number becomes an integer beyond 64 bits (or a very large negative one)
``huge_digits``    a number becomes a literal of thousands of digits, or ``1e999``
``wrong_type``     a value is swapped for one of another JSON type
``truncate``       the text is cut at a random point
``invalid_utf8``   bytes that are not UTF-8 are inserted
``drop_key``       a key of an object is removed
``wrong_top``      the value is replaced by a non-object (``null``, ``[]``, ``12``…)
``huge_string``    a string becomes 600,000 characters long
``deep_nesting``   a value becomes 50,000 nested arrays
``space_run``      a string gains a run of 100,000 spaces (after a newline or ``## ``, then text):
                   the input that makes a backtracking regular expression slow
``digit_text``     a string becomes digits no ``int()`` converts (5,000 of them), ``Infinity`` or ``²``
``bom``            a UTF-8 byte order mark starts the file (or, in JSON Lines, one line)
``huge_float``     a token count (not in a raw provider usage object, kept verbatim) becomes a huge
                   or non-integral float (``1e308``, ``2**53 + 1`` written as a float, ``1e20``, ``12.5``)

The whole-file classes (:data:`FILE_CLASSES`, :func:`mutate_whole`; the campaign runs them, the
unit fuzz test keeps to :data:`CLASSES`):

``self_append``      the file appended to itself two or three times
``duplicate_id``     a line (or a document's list element) carrying an id repeated
``trailing_garbage`` text after the end: garbage, a bracket, ``null``, a second value
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["ALL_CLASSES", "CLASSES", "FILE_CLASSES", "mutate_file", "mutate_text", "mutate_whole"]

CLASSES = ("bad_timestamp", "lone_surrogate", "huge_int", "huge_digits", "wrong_type", "truncate",
           "invalid_utf8", "drop_key", "wrong_top", "huge_string", "deep_nesting", "space_run", "digit_text",
           "bom", "huge_float")
HUGE_STRING = 600_000
DEEP = 50_000

BAD_TIMES: tuple[Any, ...] = (
    1e20, -1e20, 10**20, 2**63, 1e308, float("inf"), float("-inf"), float("nan"),
    "99999999999999999999", "1e300", "-1e300", "inf", "nan", "-62135596801",
    "9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "2026-02-30T10:00:00Z",
    "2026-02-01T25:00:00Z", "yesterday", True, [2026], {"t": 1})
HUGE_INTS = (2**63, 2**64 + 7, -(2**63) - 1, 10**30, 2**200, -(10**25))
HUGE_LITERALS = ("9" * 5000, "1" + "0" * 4400, "-" + "7" * 4301, "1e999", "-1e999")
SURROGATES = ("\ud800", "\udfff", "\udc00", "\ud83d")
HUGE_FLOATS = (1e308, -1e308, 1.7976931348623157e308, 1e300, 9007199254740993.0, 1e20, 1.5e16, 12.5)
BOM = b"\xef\xbb\xbf"
_TOKEN_KEY = re.compile(r"token", re.IGNORECASE)
OTHER_TYPES: tuple[Any, ...] = (None, True, 0, -1, 3.5, "", "text", "12", [], [1, "a"], {}, {"x": 1})
_TIME_KEY = re.compile(r"time|created|date", re.IGNORECASE)
_ISO = re.compile(r"^\d{4}-\d\d-\d\dT")
_MARKER = "__FUZZ_MARKER__"


def _nodes(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every (path, value) of a JSON value, containers included."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, (*path, i))


def _set(doc: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return doc


def _is_time(path: tuple, value: Any) -> bool:
    key = next((p for p in reversed(path) if isinstance(p, str)), "")
    if isinstance(value, str) and _ISO.match(value):
        return True
    return bool(_TIME_KEY.search(key)) and isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _pick(rng: random.Random, nodes: list[tuple[tuple, Any]], wanted) -> tuple[tuple, Any] | None:
    chosen = [(p, v) for p, v in nodes if wanted(p, v)]
    return rng.choice(chosen) if chosen else None


def _with_surrogate(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(SURROGATES) + text[at:]


def _mutate_value(rng: random.Random, doc: Any, kind: str) -> tuple[Any, str | None] | None:
    """``(mutated doc, literal)``: ``literal`` replaces the marker string in the dumped text.
    None when the document has nothing this class can change."""
    nodes = list(_nodes(doc))
    if kind == "bad_timestamp":
        found = _pick(rng, nodes, _is_time)
        return None if found is None else (_set(doc, found[0], rng.choice(BAD_TIMES)), None)
    if kind == "lone_surrogate":
        found = _pick(rng, nodes, lambda p, v: isinstance(v, str) or (isinstance(v, dict) and v))
        if found is None:
            return None
        path, value = found
        if isinstance(value, str):
            return _set(doc, path, _with_surrogate(rng, value)), None
        key = rng.choice(list(value))
        value[_with_surrogate(rng, key)] = value.pop(key)
        return doc, None
    if kind in ("huge_int", "huge_digits"):
        numbers = lambda p, v: isinstance(v, (int, float)) and not isinstance(v, bool) and bool(p)
        found = _pick(rng, nodes, numbers) or _pick(rng, nodes, lambda p, v: bool(p))
        if found is None:
            return None
        if kind == "huge_int":
            return _set(doc, found[0], rng.choice(HUGE_INTS)), None
        return _set(doc, found[0], _MARKER), rng.choice(HUGE_LITERALS)
    if kind == "wrong_type":
        path, value = rng.choice(nodes[1:] or nodes)
        return _set(doc, path, rng.choice([c for c in OTHER_TYPES if type(c) is not type(value)])), None
    if kind == "drop_key":
        found = _pick(rng, nodes, lambda p, v: isinstance(v, dict) and bool(v))
        if found is None:
            return None
        found[1].pop(rng.choice(list(found[1])))
        return doc, None
    if kind == "huge_string":
        found = _pick(rng, nodes, lambda p, v: isinstance(v, str))
        return None if found is None else (_set(doc, found[0], "Ω" + "A" * HUGE_STRING), None)
    if kind in ("space_run", "digit_text"):
        found = _pick(rng, nodes, lambda p, v: isinstance(v, str) and bool(p))
        if found is None:
            return None
        if kind == "digit_text":
            return _set(doc, found[0], rng.choice(["9" * 5000, "Infinity", "²", "-" + "1" * 4400])), None
        text = found[1]
        at = rng.randrange(len(text) + 1)
        run = rng.choice(["\n## ", "\n", "## ", ""]) + "a" + " " * 100_000 + "b\n"
        return _set(doc, found[0], text[:at] + run + text[at:]), None
    if kind == "huge_float":
        def token_count(path: tuple, value: Any) -> bool:
            # a provider's raw usage object is kept verbatim, never read as counts: not a target
            key = next((p for p in reversed(path) if isinstance(p, str)), "")
            return (isinstance(value, (int, float)) and not isinstance(value, bool)
                    and bool(_TOKEN_KEY.search(key)) and "raw" not in path)
        found = _pick(rng, nodes, token_count)
        return None if found is None else (_set(doc, found[0], rng.choice(HUGE_FLOATS)), None)
    if kind == "deep_nesting":
        path, _ = rng.choice(nodes)
        return _set(doc, path, _MARKER), "[" * DEEP + "1" + "]" * DEEP
    raise ValueError(f"unknown mutation class {kind!r}")


def mutate_text(rng: random.Random, text: str, kind: str, *, indent: int | None = None) -> bytes | None:
    """One mutated copy of one JSON text, or None when this class cannot change it."""
    if kind == "truncate":
        return text[: rng.randrange(max(len(text), 1))].encode()
    if kind == "invalid_utf8":
        data = text.encode()
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + data[at:]
    if kind == "wrong_top":
        return rng.choice([b"null", b"[]", b'"a string"', b"12", b"{}", b"true", b"[{}]"])
    changed = _mutate_value(rng, json.loads(text), kind)
    if changed is None:
        return None
    doc, literal = changed
    # ensure_ascii: a lone surrogate is written as its \\udXXX escape, as JSON encoders in the wild do
    out = json.dumps(doc, indent=indent, ensure_ascii=kind == "lone_surrogate")
    if literal is not None:
        out = out.replace(json.dumps(_MARKER), literal, 1)
    return out.encode()


def mutate_file(rng: random.Random, raw: bytes, kind: str, *, jsonl: bool,
                max_lines: int | None = None, tries: int = 8) -> tuple[bytes, int | None] | None:
    """A mutated copy of a whole file and the 1-based line mutated (None for a JSON document).

    JSON Lines files get one line mutated (among the first ``max_lines``); a JSON document gets one
    node mutated and is written back one value per line (``indent=2``). None when no try found
    something this class can change."""
    if kind == "bom":
        lines = raw.split(b"\n")
        at = 0 if not jsonl or rng.random() < 0.5 else rng.randrange(len(lines))
        return b"\n".join([*lines[:at], BOM + lines[at], *lines[at + 1:]]), at + 1 if jsonl else None
    if not jsonl:
        body = mutate_text(rng, raw.decode("utf-8"), kind, indent=2)
        return None if body is None else (body, None)
    lines = raw.split(b"\n")
    usable = [i for i, line in enumerate(lines[:max_lines] if max_lines else lines) if line.strip()]
    for _ in range(tries):
        at = rng.choice(usable)
        body = mutate_text(rng, lines[at].decode("utf-8"), kind)
        if body is not None:
            return b"\n".join([*lines[:at], body, *lines[at + 1:]]), at + 1
    return None


# ------------------------------------------------------------------ whole-file classes

#: Classes that change the file as a whole rather than one value: the file appended to itself
#: (two or three times), a record carrying an id (a tool call, a span, a message) once more, and
#: text after the end (garbage, a bracket, a second value).
FILE_CLASSES = ("self_append", "duplicate_id", "trailing_garbage")
ALL_CLASSES = CLASSES + FILE_CLASSES
GARBAGE = (b"garbage", b"}", b"]", b"\x00", b'{"a": 1}', b"[]", b"null", b",", b"<html>")
_ID_LINE = re.compile(rb'"(call_id|tool_call_id|tool_use_id|spanId|span_id|id)"\s*:')
_ID_KEYS = {"call_id", "tool_call_id", "tool_use_id", "tool_calls", "spanId", "span_id", "id"}


def mutate_whole(rng: random.Random, raw: bytes, kind: str, *, jsonl: bool,
                 max_lines: int | None = None) -> tuple[bytes, int | None] | None:
    """A file of a :data:`FILE_CLASSES` class and the 1-based line where the change starts (the
    first appended line, the repeated line; None for a document's repeated element)."""
    body = raw if raw.endswith(b"\n") else raw + b"\n"
    first_new = body.count(b"\n") + 1
    if kind == "self_append":
        return body * rng.choice([2, 3]), first_new
    if kind == "trailing_garbage":
        return body + rng.choice(GARBAGE) + rng.choice([b"", b"\n"]), first_new
    if kind != "duplicate_id":
        raise ValueError(f"unknown mutation class {kind!r}")
    if not jsonl:
        return _repeat_element(rng, json.loads(raw))
    lines = raw.split(b"\n")
    usable = [i for i, line in enumerate(lines[:max_lines] if max_lines else lines)
              if _ID_LINE.search(line)]
    if not usable:
        return None
    at = rng.choice(usable)
    to = rng.choice([at + 1, len(lines) - (lines[-1] == b"")])
    return b"\n".join([*lines[:to], lines[at], *lines[to:]]), to + 1


def _repeat_element(rng: random.Random, doc: Any) -> tuple[bytes, None] | None:
    """A document with one list element that carries an id inserted once more after itself."""
    lists = [(path, i) for path, value in _nodes(doc) if isinstance(value, list)
             for i, item in enumerate(value) if isinstance(item, dict) and _ID_KEYS & item.keys()]
    if not lists:
        return None
    path, i = rng.choice(lists)
    node = doc
    for key in path:
        node = node[key]
    node.insert(i + 1, json.loads(json.dumps(node[i])))
    return json.dumps(doc, indent=2).encode(), None
