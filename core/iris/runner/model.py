"""The model client of a live run: one chat-completions call per step, with a bounded deadline.

:class:`ChatModel` is what the runner needs (``complete(messages, tools) -> ModelReply``); a host
may pass its own. :class:`OpenAIChatModel` talks to any OpenAI-compatible endpoint through
:func:`iris.compaction.bounded_http.bounded_post`: the deadline covers connecting, the headers and
the whole body, and an answer longer than ``max_answer_bytes`` is refused unread. HTTP 408, 409,
429, 500, 502, 503, 504 and connection errors are tried again (``max_attempts``, exponential
backoff from ``initial_backoff`` or the server's ``Retry-After``) while the deadline leaves time;
the deadline covers every attempt and wait. A failed call is a :class:`ModelCallFailed` naming the
endpoint and why; the runner records it and stops the run.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from ..compaction.bounded_http import Answer, BodyTooLarge, DeadlinePassed, PostFailed, bounded_post
from ..compaction.remote import RETRYABLE_STATUS, parse_retry_after
from ..errors import IrisError
from ..session import Message
from .config import EndpointConfig
from .wire import reply_message

# tenacity is imported where a call is made: an engine replay that never talks to a model does
# not pay for it at start-up.
if TYPE_CHECKING:
    from tenacity import RetryCallState

__all__ = ["ChatModel", "ModelCallFailed", "ModelReply", "OpenAIChatModel"]

MAX_BACKOFF = 8.0
"""Longest wait between attempts when the server names none (seconds)."""


class ModelCallFailed(IrisError):
    """The model endpoint could not be reached, timed out, refused the call or answered junk."""


class _WorthAnotherAttempt(Exception):
    """An attempt that failed in a way another attempt may not (HTTP 408/409/429/5xx, no
    connection): why, and the server's Retry-After in seconds when it named one."""

    def __init__(self, why: str, retry_after: float | None) -> None:
        super().__init__(why)
        self.why = why
        self.retry_after = retry_after


@dataclass(frozen=True)
class ModelReply:
    """One answer: the assistant message (its ``usage`` is the provider's) and the raw body."""

    message: Message
    raw: Mapping[str, Any]


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers one chat-completions request."""

    def complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]],
                 *, id_prefix: str) -> ModelReply: ...


class OpenAIChatModel:
    """``POST <base_url>/chat/completions`` with ``model``, ``messages`` and ``tools``."""

    def __init__(self, endpoint: EndpointConfig) -> None:
        self.endpoint = endpoint
        self.calls = 0
        """Model calls made (one per step)."""
        self.attempts = 0
        """HTTP attempts made, retries included."""

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.endpoint.base_url!r}, model={self.endpoint.model!r})"

    def body(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
             ) -> dict[str, Any]:
        e = self.endpoint
        body: dict[str, Any] = {"model": e.model, "messages": list(messages)}
        if tools:
            body["tools"] = list(tools)
        if e.max_output_tokens is not None:
            body["max_tokens"] = e.max_output_tokens
        if e.temperature is not None:
            body["temperature"] = e.temperature
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        name = self.endpoint.api_key_env
        key = os.environ.get(name) if name else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]],
                 *, id_prefix: str = "call") -> ModelReply:
        """One model call: up to ``max_attempts`` HTTP attempts, all within ``timeout_seconds``
        (tenacity retries an attempt worth repeating; the wait is the server's Retry-After or
        ``initial_backoff`` doubled per attempt, at most ``MAX_BACKOFF``)."""
        from tenacity import Retrying, retry_if_exception_type, wait_exponential

        e = self.endpoint
        url = f"{e.base_url.rstrip('/')}/chat/completions"
        content = json.dumps(self.body(messages, tools), ensure_ascii=False).encode()
        deadline = time.monotonic() + e.timeout_seconds
        self.calls += 1
        backoff = wait_exponential(multiplier=e.initial_backoff, max=MAX_BACKOFF)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            after = exc.retry_after if isinstance(exc, _WorthAnotherAttempt) else None
            return backoff(state) if after is None else after

        def stop(state: RetryCallState) -> bool:
            return (state.attempt_number >= e.max_attempts
                    or time.monotonic() + state.upcoming_sleep >= deadline)

        retrying = Retrying(retry=retry_if_exception_type(_WorthAnotherAttempt), wait=wait,
                            stop=stop, sleep=time.sleep, reraise=True)
        try:
            answer = retrying(self._attempt, url, content, deadline)
        except _WorthAnotherAttempt as exc:
            attempts = retrying.statistics.get("attempt_number", e.max_attempts)
            if attempts >= e.max_attempts:
                raise ModelCallFailed(f"{exc.why} (after {e.max_attempts} attempt(s))") from None
            raise ModelCallFailed(f"{exc.why} (no time left for another attempt within "
                                  f"{e.timeout_seconds:g} s)") from None
        return self._reply(url, answer, id_prefix)

    def _attempt(self, url: str, content: bytes, deadline: float) -> Answer:
        """The answer; :class:`_WorthAnotherAttempt` (why, and the server's Retry-After) when
        another attempt may succeed; an answer no retry will change raises ModelCallFailed."""
        e = self.endpoint
        self.attempts += 1
        try:
            answer = bounded_post(url, content, self._headers(), deadline=deadline,
                                  max_body_bytes=e.max_answer_bytes)
        except DeadlinePassed:
            raise ModelCallFailed(f"{url}: no complete answer within {e.timeout_seconds:g} s "
                                  "(the deadline covers connecting, the headers and the body)") from None
        except BodyTooLarge as exc:
            raise ModelCallFailed(f"{url}: answer too large ({exc}; max_answer_bytes="
                                  f"{e.max_answer_bytes})") from None
        except PostFailed as exc:
            raise _WorthAnotherAttempt(f"cannot reach {url}: {exc}", None) from None
        if answer.status == 200:
            return answer
        text = answer.body.decode("utf-8", errors="replace")
        why = f"{url} answered HTTP {answer.status}: {text[:200]!r}"
        if answer.status not in RETRYABLE_STATUS:
            raise ModelCallFailed(why)
        after = next((v.decode("latin-1") for k, v in answer.headers if k.lower() == b"retry-after"), None)
        raise _WorthAnotherAttempt(why, parse_retry_after(after))

    def _reply(self, url: str, answer: Answer, id_prefix: str) -> ModelReply:
        text = answer.body.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            body = cast("dict[str, Any]", data)
            return ModelReply(reply_message(body, self.endpoint.model, id_prefix=id_prefix), body)
        except (ValueError, TypeError) as exc:
            raise ModelCallFailed(f"junk answer from {url}: {exc} (body {text[:120]!r})") from None
