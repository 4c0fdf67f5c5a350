"""What a transcript file itself says, read without the importers: the agent and its version, how
many model responses it holds and what their usage fields bill (for ``workbench twin-check``).

Counting apart from the importer is the point: the check compares these figures with what the
import kept (``responses``) and with the replay's ``cost.recorded_billed_usd``, so a response the
importer drops shows up as a difference instead of vanishing on both sides.

* Claude Code: the main conversation's responses are the distinct ``message.id`` of assistant
  lines that are not sidechain lines, carry ``usage`` and are not ``<synthetic>``; one response
  is split over several lines, and the last line's usage is the response's (FORMATS.md).
* Codex: one model call per ``token_count`` event whose ``total_token_usage`` changed (each is
  written twice) and whose ``last_token_usage`` is not all zero; the model is the last
  ``turn_context`` model before it.

Each response is priced with :func:`workbench.pricing.price` at its list price, cache reads and
5-minute / 1-hour cache writes as its usage records them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import orjson

from ..importers._source import open_bytes
from ..pricing import price

__all__ = ["Agent", "FileFacts", "file_facts"]

Agent = Literal["claude_code", "codex"]


@dataclass(frozen=True)
class FileFacts:
    """A transcript file's own figures."""

    agent: Agent | None
    """``claude_code`` or ``codex``; None for a file of neither agent."""
    version: str | None
    """Claude Code's ``version`` (the first line that records one), Codex's ``cli_version``."""
    responses: int
    """Model responses with usage in the main conversation."""
    billed_usd: float | None
    """Those responses at list price with their cache reads and writes; None when none is priced."""
    unpriced: int
    """Responses whose model has no known price."""
    subagent_responses: int = 0
    """Claude Code: responses with usage of the sub-agents' conversations the file carries in
    ``agent_progress`` lines (distinct ``message.id``)."""


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with open_bytes(path) as fh:
        for raw in fh:
            if raw.strip():
                try:
                    data = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(data, dict):
                    yield data


def _int(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


class _Bill:
    def __init__(self) -> None:
        self.total = Decimal(0)
        self.priced = 0
        self.unpriced = 0

    def add(self, model: str | None, when: datetime | None, *, prompt: int, output: int,
            read: int, write_5m: int = 0, write_1h: int = 0) -> None:
        usd = price(model, input_tokens=prompt, output_tokens=output, cache_read_tokens=read,
                    cache_write_tokens=write_5m, cache_write_1h_tokens=write_1h, when=when)
        if usd is None:
            self.unpriced += 1
            return
        self.total += usd
        self.priced += 1

    def usd(self) -> float | None:
        return round(float(self.total), 6) if self.priced else None


def _claude_code(path: Path) -> FileFacts:
    version: str | None = None
    last: dict[str, tuple[str | None, dict[str, Any], datetime | None]] = {}
    sub: set[str] = set()
    for data in _lines(path):
        version = version or (data.get("version") if isinstance(data.get("version"), str) else None)
        _progress_response(data, sub)
        message = data.get("message")
        if data.get("type") != "assistant" or data.get("isSidechain") is True \
                or not isinstance(message, dict):
            continue
        usage, mid, model = message.get("usage"), message.get("id"), message.get("model")
        if not isinstance(usage, dict) or not isinstance(mid, str) or model == "<synthetic>":
            continue
        last[mid] = (model if isinstance(model, str) else None, usage, _time(data.get("timestamp")))
    bill = _Bill()
    for model, usage, when in last.values():
        fresh, read = _int(usage.get("input_tokens")), _int(usage.get("cache_read_input_tokens"))
        write = _int(usage.get("cache_creation_input_tokens"))
        split = usage.get("cache_creation")
        split = split if isinstance(split, dict) else {}
        hour = _int(split.get("ephemeral_1h_input_tokens"))
        five = _int(split.get("ephemeral_5m_input_tokens"))
        if not 0 < five + hour <= write:
            hour = 0
        bill.add(model, when, prompt=fresh + read + write, output=_int(usage.get("output_tokens")),
                 read=read, write_5m=write - hour, write_1h=hour)
    return FileFacts("claude_code", version, len(last), bill.usd(), bill.unpriced, len(sub))


def _progress_response(data: dict[str, Any], found: set[str]) -> None:
    """Adds the ``message.id`` of a sub-agent response an ``agent_progress`` line copies."""
    progress = data.get("data")
    if data.get("type") != "progress" or not isinstance(progress, dict) \
            or progress.get("type") != "agent_progress":
        return
    inner = progress.get("message")
    message = inner.get("message") if isinstance(inner, dict) else None
    if isinstance(message, dict) and isinstance(message.get("usage"), dict) \
            and isinstance(message.get("id"), str) and message.get("model") != "<synthetic>":
        found.add(message["id"])


def _codex(path: Path) -> FileFacts:
    version: str | None = None
    model: str | None = None
    previous: Any = None
    responses = 0
    bill = _Bill()
    for data in _lines(path):
        kind, payload = data.get("type"), data.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta":
            version = version or (payload.get("cli_version")
                                  if isinstance(payload.get("cli_version"), str) else None)
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
        elif kind == "event_msg" and payload.get("type") == "token_count" \
                and isinstance(payload.get("info"), dict):
            info = payload["info"]
            total, usage = info.get("total_token_usage"), info.get("last_token_usage")
            if total == previous or not isinstance(usage, dict):
                continue
            previous = total
            prompt, output = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
            if not (prompt or output):
                continue
            responses += 1
            bill.add(model, _time(data.get("timestamp")), prompt=prompt, output=output,
                     read=_int(usage.get("cached_input_tokens")))
    return FileFacts("codex", version, responses, bill.usd(), bill.unpriced)


def _agent(path: Path) -> Agent | None:
    """The agent that wrote ``path``, from its first lines' shape."""
    for n, data in enumerate(_lines(path)):
        if data.get("type") in ("session_meta", "response_item", "turn_context", "event_msg") \
                and "payload" in data:
            return "codex"
        if "sessionId" in data or data.get("type") in ("user", "assistant", "summary",
                                                        "file-history-snapshot", "queue-operation"):
            return "claude_code"
        if n >= 20:
            break
    return None


def file_facts(path: str | Path) -> FileFacts:
    """The agent, version, responses and usage bill of the transcript at ``path``."""
    path = Path(path)
    agent = _agent(path)
    if agent == "claude_code":
        return _claude_code(path)
    if agent == "codex":
        return _codex(path)
    return FileFacts(None, None, 0, None, 0)
