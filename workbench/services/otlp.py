"""Where a replay's OpenTelemetry spans go (``workbench export``, ``wb.export_otlp``): an OTLP JSON
file or an OTLP receiver over HTTP. The spans and their JSON document are built by
:mod:`workbench.views.otlp_export` (pure); this module does the file write and the network call."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from iris.errors import IrisError, StorageError
from iris.safe_files import write_file
from opentelemetry.sdk.trace import ReadableSpan

__all__ = ["push_otlp", "write_otlp"]


def push_otlp(spans: Sequence[ReadableSpan], endpoint: str, *, headers: dict[str, str] | None = None,
              timeout: float = 10.0) -> str:
    """Send the spans as OTLP protobuf over HTTP with the SDK's exporter; returns the URL used.

    ``endpoint`` is a base URL (``http://localhost:6006``) or the traces URL itself (ending in
    ``/v1/traces``), as ``OTEL_EXPORTER_OTLP_ENDPOINT`` and ``..._TRACES_ENDPOINT`` are. Without
    ``headers`` the exporter reads ``OTEL_EXPORTER_OTLP_HEADERS``. A refusal or an unreachable
    receiver raises :class:`~iris.errors.IrisError` with the exporter's reason (transient errors
    are retried within ``timeout`` seconds)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    url = endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"
    exporter = OTLPSpanExporter(endpoint=url, headers=headers, timeout=timeout)
    with _ExporterLog() as log:
        try:
            result = exporter.export(spans)
        except Exception as exc:  # noqa: BLE001 - older exporters let a connection error through
            result = None
            log.messages.append(f"{type(exc).__name__}: {exc}")
        finally:
            exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        reason = log.messages[-1] if log.messages else "the exporter gave no reason"
        raise IrisError(f"{url}: the OTLP receiver did not take the spans ({reason})")
    return url


class _ExporterLog(logging.Handler):
    """Collects what the OpenTelemetry exporter logs while it sends, instead of printing it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self._logger = logging.getLogger("opentelemetry")
        self._propagate = self._logger.propagate

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))

    def __enter__(self) -> Self:
        self._logger.addHandler(self)
        self._logger.propagate = False
        return self

    def __exit__(self, *exc: object) -> None:
        self._logger.removeHandler(self)
        self._logger.propagate = self._propagate


def write_otlp(path: str | Path, document: Mapping[str, Any]) -> Path:
    """Write the document on one line, as the collector's file exporter writes and its
    ``otlpjsonfile`` receiver reads (atomically; a symbolic link at the target is refused)."""
    path = Path(path)
    try:
        write_file(path, json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")
    except OSError as exc:
        raise StorageError(f"{path}: cannot write the OTLP file ({exc.strerror or exc})") from None
    return path
