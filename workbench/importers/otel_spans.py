"""Spans out of an OpenTelemetry dump, in one shape whatever the dump's layout.

Layouts read: OTLP JSON (``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``, attributes as
``[{"key", "value": {"stringValue" | "intValue" | ...}}]``, ids in hex, times as nanosecond
strings), one OTLP document per line (the collector's file exporter), and the flat span lists agent
frameworks write (``{"spans": [...]}``, a bare list, or one span per line; attributes as an object,
ids under ``context``/``parent`` or ``span_id``/``parent_span_id``, times as nanoseconds or ISO
strings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from iris.errors import SessionFormatError

from ._common import as_dict, as_list

__all__ = ["Span", "any_value", "spans_of"]


@dataclass(slots=True)
class Span:
    id: str
    parent: str | None
    name: str
    start: int
    """Start time in nanoseconds since the epoch (0 when unknown)."""
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    where: str = ""
    """Where the span is in the file (``resourceSpans[0].scopeSpans[1].spans[3]``)."""
    trace: str = ""

    @property
    def operation(self) -> str | None:
        op = self.attrs.get("gen_ai.operation.name")
        return op if isinstance(op, str) else None


def spans_of(doc: Any, where: str = "") -> list[Span]:
    """Every span of one document (see the module docstring for the layouts)."""
    if isinstance(doc, dict) and "resourceSpans" in doc:
        return _otlp(as_list(doc["resourceSpans"], f"{where}resourceSpans"), f"{where}resourceSpans")
    if isinstance(doc, dict) and isinstance(doc.get("spans"), list):
        return [_flat(s, f"{where}spans[{i}]") for i, s in enumerate(doc["spans"])]
    if isinstance(doc, list):
        return [_flat(s, f"{where}[{i}]") for i, s in enumerate(doc)]
    return [_flat(doc, where or "span")]


def _otlp(resources: list[Any], where: str) -> list[Span]:
    spans: list[Span] = []
    for r, res in enumerate(resources):
        res = as_dict(res, f"{where}[{r}]")
        scopes = res.get("scopeSpans", res.get("instrumentationLibrarySpans", []))
        for s, scope in enumerate(as_list(scopes, f"{where}[{r}].scopeSpans")):
            at = f"{where}[{r}].scopeSpans[{s}].spans"
            for i, raw in enumerate(as_list(as_dict(scope, at).get("spans", []), at)):
                spans.append(_otlp_span(as_dict(raw, f"{at}[{i}]"), f"{at}[{i}]"))
    return spans


def _otlp_span(raw: dict[str, Any], where: str) -> Span:
    events = [(str(e.get("name", "")), _kv(e.get("attributes", []), f"{where}.events[{n}]"))
              for n, e in enumerate(as_list(raw.get("events", []), f"{where}.events"))
              if isinstance(e, dict)]
    return Span(id=str(raw.get("spanId", "")), parent=raw.get("parentSpanId") or None,
                trace=str(raw.get("traceId", "")),
                name=str(raw.get("name", "")), start=_nanos(raw.get("startTimeUnixNano"), where),
                attrs=_kv(raw.get("attributes", []), where), events=events, where=where)


def _kv(items: Any, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, item in enumerate(as_list(items, f"{where}.attributes")):
        item = as_dict(item, f"{where}.attributes[{n}]")
        out[str(item.get("key"))] = any_value(item.get("value"))
    return out


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value (``intValue`` strings become integers)."""
    if not isinstance(value, dict) or not value:
        return None
    kind, inner = next(iter(value.items()))
    if kind == "intValue":
        return int(inner)
    if kind == "doubleValue":
        return float(inner)
    if kind == "arrayValue":
        return [any_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return {str(kv.get("key")): any_value(kv.get("value")) for kv in (inner or {}).get("values", [])}
    return inner  # stringValue, boolValue, bytesValue (base64 text)


def _flat(raw: Any, where: str) -> Span:
    raw = as_dict(raw, where)
    context = raw.get("context") if isinstance(raw.get("context"), dict) else {}
    parent = raw.get("parent") if isinstance(raw.get("parent"), dict) else {}
    span_id = context.get("span_id", raw.get("span_id", raw.get("spanId", "")))
    parent_id = parent.get("span_id", raw.get("parent_span_id", raw.get("parent_id",
                                                                        raw.get("parentSpanId"))))
    attrs = raw.get("attributes", {})
    if isinstance(attrs, list):  # OTLP key/value list inside a flat dump
        attrs = _kv(attrs, where)
    events = []
    for n, e in enumerate(raw.get("events") or []):
        if isinstance(e, dict):
            ea = e.get("attributes", {})
            events.append((str(e.get("name", "")),
                           _kv(ea, f"{where}.events[{n}]") if isinstance(ea, list) else dict(ea or {})))
    start = raw.get("start_time", raw.get("startTimeUnixNano", raw.get("start_time_unix_nano")))
    trace = context.get("trace_id", raw.get("trace_id", raw.get("traceId", "")))
    return Span(id=str(span_id), parent=None if parent_id in (None, "") else str(parent_id),
                trace=str(trace),
                name=str(raw.get("name", "")), start=_nanos(start, where),
                attrs=as_dict(attrs, f"{where}.attributes"), events=events, where=where)


#: 9999-12-31T23:59:59Z in Unix nanoseconds: a later start is not a time.
_MAX_NANOS = 253_402_300_799 * 10**9


def _nanos(value: Any, where: str) -> int:
    """A span's start in Unix nanoseconds (0: none recorded). Numbers and digit strings must lie
    in years 1970-9999; an ISO time without a zone is UTC; anything else, an empty string
    included, is an error of the span's ``start_time``."""
    field = f"{where}.start_time"
    if value is None:
        return 0
    if isinstance(value, bool):
        raise SessionFormatError("must be a time, got a boolean", field=field)
    if isinstance(value, str) and value.isascii() and value.isdecimal() and len(value) <= 20:
        value = int(value)
    if isinstance(value, int | float):
        if not (math.isfinite(value) and 0 <= value <= _MAX_NANOS):  # also Infinity/NaN
            raise SessionFormatError(f"not a time in range: {str(value)[:40]!r} (Unix "
                                     "nanoseconds up to the year 9999)", field=field)
        return int(value)
    if isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value)
            parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
            return int(parsed.timestamp() * 1e9)
        except (ValueError, OverflowError):
            pass
    raise SessionFormatError(f"not a time: {str(value)[:40]!r}", field=field)
