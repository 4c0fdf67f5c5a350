"""The native session format: JSON Lines, one event per line, lossless round-trip (R-SES-3).

Line 1 is ``{"type": "header", "schema_version": 1, ...}`` (a :class:`SessionHeader`); every
following line is one of ``message``, ``model_switch``, ``compaction``, ``microcompaction``,
``context_snapshot`` or ``subagent``.
Messages are numbered by their order in the file; the other events refer to message indices.
The JSON Schema of every event is generated from the models into ``docs/session.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from iris.errors import SessionFormatError
from iris.safe_files import write_file
from iris.session import (
    SCHEMA_VERSION,
    Message,
    ModelSwitch,
    RecordedCompaction,
    RecordedMicrocompaction,
    Session,
    SessionHeader,
    StepSnapshot,
    SubagentCall,
    ToolCallBlock,
    ToolResultBlock,
)
from pydantic import Field, TypeAdapter, ValidationError

from ._common import MAX_COUNT, fast_object, has_surrogate_escape, json_error_words, scrub_surrogates
from ._fast import paused_gc
from ._source import open_bytes
from .native_checks import NativeChecks

__all__ = ["NativeEvent", "dump_session", "dumps_session", "event_schema", "load_native", "parse_native_lines"]


class HeaderEvent(SessionHeader):
    type: Literal["header"] = "header"


class MessageEvent(Message):
    type: Literal["message"] = "message"


class ModelSwitchEvent(ModelSwitch):
    type: Literal["model_switch"] = "model_switch"


class CompactionEvent(RecordedCompaction):
    type: Literal["compaction"] = "compaction"


class MicrocompactionEvent(RecordedMicrocompaction):
    type: Literal["microcompaction"] = "microcompaction"


class ContextSnapshotEvent(StepSnapshot):
    type: Literal["context_snapshot"] = "context_snapshot"


class SubagentEvent(SubagentCall):
    type: Literal["subagent"] = "subagent"


NativeEvent = Annotated[
    HeaderEvent | MessageEvent | ModelSwitchEvent | CompactionEvent | MicrocompactionEvent
    | ContextSnapshotEvent | SubagentEvent,
    Field(discriminator="type"),
]
_EVENT = TypeAdapter(NativeEvent)
#: The integers of 16 digits or more the decoder met on the current line: maybe beyond
#: MAX_COUNT (checked then, not on every line). Noted as the decoder reads them, which costs far
#: less than searching each line's text for a run of digits.
_LONG_INTS: list[str] = []


def _read_int(text: str) -> int:
    if len(text) > 15 and len(text.lstrip("-")) > 15:
        _LONG_INTS.append(text)
    return int(text)


_DECODER = json.JSONDecoder(parse_int=_read_int)


def event_schema() -> dict[str, Any]:
    """JSON Schema of one line of a native session file."""
    schema = _EVENT.json_schema()
    schema["title"] = "Context Workbench native session event (one JSON object per line)"
    schema["$comment"] = f"schema_version {SCHEMA_VERSION}; line 1 is the header event"
    return schema


def _event_lines(session: Session) -> Iterator[dict[str, Any]]:
    yield {"type": "header", **session.header.model_dump(mode="json", exclude_none=True)}
    extra: dict[int, list[dict[str, Any]]] = {}
    for kind, items in (("model_switch", session.model_switches), ("compaction", session.compactions),
                        ("microcompaction", session.microcompactions)):
        for item in items:
            extra.setdefault(item.at_message, []).append(
                {"type": kind, **item.model_dump(mode="json", exclude_none=True)})
    for i, msg in enumerate(session.messages):
        yield from extra.pop(i, [])
        yield {"type": "message", **msg.model_dump(mode="json", exclude_none=True)}
    for i in sorted(extra):
        yield from extra[i]
    for snap in session.context_snapshots:
        yield {"type": "context_snapshot", **snap.model_dump(mode="json", exclude_none=True)}
    for run in session.subagents:
        yield {"type": "subagent", **run.model_dump(mode="json", exclude_none=True)}


def dumps_session(session: Session) -> str:
    """The native JSONL text of a session."""
    return "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in _event_lines(session))


def dump_session(session: Session, path: str | Path) -> Path:
    """Write the native JSONL of ``session`` (atomic; refuses a symbolic link at ``path``)."""
    return write_file(Path(path), dumps_session(session))


def parse_native_lines(lines: Iterable[str] | Iterable[bytes], *, path: str | Path | None = None,
                       lenient: bool = False, skipped: list[SessionFormatError] | None = None,
                       warnings: list[SessionFormatError] | None = None) -> Session:
    """Build a session from native lines. Strict: the first bad line raises; lenient: bad lines
    are appended to ``skipped`` and left out (the header must still be valid), and lines kept
    with a bad value dropped (:mod:`.native_checks`) are noted in ``warnings``."""
    header: SessionHeader | None = None
    messages: list[Message] = []
    switches: list[ModelSwitch] = []
    compactions: list[RecordedCompaction] = []
    micro: list[RecordedMicrocompaction] = []
    snapshots: list[StepSnapshot] = []
    subagents: list[SubagentCall] = []
    ids: set[tuple[str, str]] = set()
    checks = NativeChecks(path, lenient=lenient, warnings=warnings)
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            # orjson where its value is json.loads's; a run of 16 digits takes the exact path,
            # which notes long integers (_LONG_INTS) to check them against MAX_COUNT
            data = fast_object(raw, 16) if isinstance(raw, bytes) else None
            if data is None:
                data = _exact_line(raw, path, lineno)
            if not isinstance(data, dict):
                raise SessionFormatError(f"expected a JSON object, got {type(data).__name__}",
                                         path=path, line=lineno)
            try:
                event = _EVENT.validate_python(data)
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"][1:]) or None
                raise SessionFormatError(err["msg"], path=path, line=lineno, field=field) from None
            if isinstance(event, HeaderEvent):
                if header is not None:
                    raise SessionFormatError("a second header line", path=path, line=lineno)
                if event.schema_version > SCHEMA_VERSION:
                    raise SessionFormatError(
                        f"schema_version {event.schema_version} is newer than this workbench "
                        f"supports ({SCHEMA_VERSION})", path=path, line=lineno, field="schema_version")
                checks.header(event, lineno)  # before it is the header: refused in both modes
                header = SessionHeader.model_validate(event.model_dump(exclude={"type"}))
            elif header is None:
                raise SessionFormatError("the first line must be the header event", path=path, line=lineno)
            elif isinstance(event, MessageEvent):
                message = checks.message(_message(event), lineno)
                _ids_once(message, ids, path, lineno)
                messages.append(message)
            else:
                checks.counts(data, lineno)
                if isinstance(event, MicrocompactionEvent):
                    micro.append(RecordedMicrocompaction.model_validate(event.model_dump(exclude={"type"})))
                else:
                    _add_event(event, switches, compactions, subagents, snapshots)
        except SessionFormatError as exc:
            if not lenient or header is None and lineno == 1:
                raise
            if skipped is not None:
                skipped.append(exc)
    if header is None:
        raise SessionFormatError("empty session file (no header line)", path=path)
    return Session(header=header, messages=tuple(messages), model_switches=tuple(switches),
                   compactions=tuple(compactions), context_snapshots=tuple(snapshots),
                   subagents=tuple(subagents), microcompactions=tuple(micro))


def _add_event(event: object, switches: list[ModelSwitch], compactions: list[RecordedCompaction],
               subagents: list[SubagentCall], snapshots: list[StepSnapshot]) -> None:
    """A model switch, compaction, sub-agent or context snapshot event into its list."""
    if isinstance(event, ModelSwitchEvent):
        switches.append(ModelSwitch.model_validate(event.model_dump(exclude={"type"})))
    elif isinstance(event, CompactionEvent):
        compactions.append(RecordedCompaction.model_validate(event.model_dump(exclude={"type"})))
    elif isinstance(event, SubagentEvent):
        subagents.append(SubagentCall.model_validate(event.model_dump(exclude={"type"})))
    elif isinstance(event, ContextSnapshotEvent):
        snapshots.append(StepSnapshot.model_validate(event.model_dump(exclude={"type"})))


def _exact_line(raw: str | bytes, path: str | Path | None, lineno: int) -> Any:
    """One line decoded by the standard library (errors named by line), its lone surrogates
    repaired and its long integers checked."""
    if isinstance(raw, bytes):
        # Bytes lines (from load_native) are decoded one by one so junk names its line.
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SessionFormatError(f"not UTF-8 text (byte {exc.start + 1} of the line)",
                                     path=path, line=lineno) from None
    _LONG_INTS.clear()
    try:
        # json.loads only for its words about a byte order mark
        data = json.loads(raw) if raw.startswith("\ufeff") else _DECODER.decode(raw)
    except json.JSONDecodeError as exc:
        raise SessionFormatError(f"not valid JSON ({json_error_words(exc, line=lineno)})",
                                 path=path, line=lineno) from None
    except RecursionError:  # hostile nesting names its line
        raise SessionFormatError("JSON nested too deeply to read", path=path,
                                 line=lineno) from None
    except ValueError:  # the decoder refuses integer literals of more than 4,300 digits
        raise SessionFormatError("not valid JSON (a number with too many digits to read)",
                                 path=path, line=lineno) from None
    if has_surrogate_escape(raw):
        data = scrub_surrogates(data, [])
    if _LONG_INTS:  # every number of the format is a count or an index
        _check_numbers(data, path, lineno)
    return data


_MESSAGE_FIELDS = tuple(Message.model_fields)
_new, _set = object.__new__, object.__setattr__


def _message(event: MessageEvent) -> Message:
    """The event as the engine's Message: its values were validated as the event (a Message
    with a ``type``, the same validators), so they are not dumped and validated again. Built as
    ``Message.model_construct`` builds it (every field given, no private attributes), without
    its per-call work."""
    values = event.__dict__
    message = _new(Message)
    _set(message, "__dict__", {name: values[name] for name in _MESSAGE_FIELDS})
    _set(message, "__pydantic_fields_set__", event.model_fields_set - {"type"})
    _set(message, "__pydantic_extra__", None)
    _set(message, "__pydantic_private__", None)
    return message


def _ids_once(message: Message, seen: set[tuple[str, str]], path: str | Path | None,
              lineno: int) -> None:
    """A tool call's id and a result's call id once each (a line repeated, the file appended to
    itself): a result could not say which call it answers. A compaction-provided copy repeats
    them by design."""
    if message.compaction_provided:
        return
    for n, block in enumerate(message.content):
        if isinstance(block, ToolCallBlock):
            key, field, what = ("call", block.id), f"content.{n}.id", "the id of an earlier call"
        elif isinstance(block, ToolResultBlock):
            key, field, what = ("result", block.call_id), f"content.{n}.call_id", "answered earlier"
        else:
            continue
        if key in seen:
            raise SessionFormatError(f"tool call {key[1]!r} is {what} too: each call has its own "
                                     "id and one result", path=path, line=lineno, field=field)
        seen.add(key)


def _check_numbers(value: Any, path: str | Path | None, lineno: int, field: str = "") -> None:
    """Refuse integers beyond ±MAX_COUNT (SQLite and the token arithmetic hold 64 bits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_COUNT:
        raise SessionFormatError(f"number out of range (more than {MAX_COUNT:,})", path=path,
                                 line=lineno, field=field or None)
    if isinstance(value, dict):
        for key, item in value.items():
            _check_numbers(item, path, lineno, f"{field}.{key}" if field else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_numbers(item, path, lineno, f"{field}[{i}]")


def load_native(path: str | Path, *, lenient: bool = False,
                skipped: list[SessionFormatError] | None = None,
                warnings: list[SessionFormatError] | None = None) -> Session:
    path = Path(path)
    with open_bytes(path) as fh, paused_gc():  # as load_session does: the records are kept
        return parse_native_lines(fh, path=path, lenient=lenient, skipped=skipped,
                                  warnings=warnings)
