"""The OpenAI-compatible summary client (R-PREP-7): retries, a circuit breaker, counted calls, a cache.

One :class:`OpenAICompatibleSummariser` serves one replay at a time (``replay`` calls
:meth:`~OpenAICompatibleSummariser.start_run` when it starts):

* **Retries** (tenacity): HTTP 408, 409, 429, 500, 502, 503, 504 and connection errors are retried,
  up to ``RetryPolicy.max_attempts`` attempts per summary, with exponential backoff and jitter; a
  ``Retry-After`` header (seconds or an HTTP date) replaces the backoff. Attempts and waits all fit
  in the call's ``timeout_seconds``: when the next wait would pass it, the call fails at once. A
  timeout is not retried (the time is spent).
* **Bounds**: ``timeout_seconds`` is a deadline for the whole call, not a per-read timeout: an
  endpoint that trickles its headers or body a byte at a time still fails with
  :class:`SummaryTimeout` when it passes (:mod:`iris.compaction.bounded_http`). An answer longer
  than ``max_body_bytes`` (4 MiB unless set; ``WORKBENCH_SUMMARY_MAX_BODY_BYTES`` for
  :meth:`~OpenAICompatibleSummariser.from_env`) fails with :class:`SummaryTooLarge` without being
  read further. Both count as failed calls for the breaker.
* **Circuit breaker**: after ``RetryPolicy.failure_threshold`` summary calls in a row fail (at once
  on HTTP 401, 403 or 404), the endpoint is not called again in the run. Later summary requests
  fail immediately with ``circuit open: …``, so every later step that needed a summary records why.
* **Counting**: :attr:`~OpenAICompatibleSummariser.stats` counts summary calls, HTTP attempts,
  retries, failed calls, requests refused by the open breaker, cache hits, and the tokens every
  attempt reported, including those of answers that were then rejected.
* **Answers**: reasoning blocks (``<think>…</think>``, ``<thinking>``, ``<reasoning>``) are removed
  before the summary is validated; an answer that is only reasoning is a failed call.
* **Token parameter**: o-series and gpt-5 models are sent ``max_completion_tokens`` and no
  ``temperature``; other models ``max_tokens`` and ``temperature 0``. An endpoint that answers
  HTTP 400 naming ``max_completion_tokens`` (or ``temperature``) gets the same request again
  with it (without it).
* **Cache**: answers are kept by the hash of the endpoint, model and request body, in-process
  (shared by every client of the process) and, with ``cache_dir``, as one JSON file per request in
  that folder. A hit sends nothing and counts no tokens.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from ..frozen import UNCHANGED, FrozenModel

# httpx and tenacity are imported where a call is made: replays without a remote summariser (the
# command line's default) do not pay for them at start-up.
if TYPE_CHECKING:
    import httpx
    from tenacity import RetryCallState

from ..errors import SummariserError
from ..session import Usage
from .bounded_http import DEFAULT_MAX_BODY_BYTES, BodyTooLarge, DeadlinePassed, PostFailed, bounded_post
from .summarisers import SummariserKind, SummaryRequest, SummaryResult, SummaryTimeout
from .summary_cache import DISK_BYTES as CACHE_DISK_BYTES
from .summary_cache import SummaryCache, request_key
from .usage import RunUsage, UsageTotals

__all__ = ["ClientStats", "MeteredSummariser", "OpenAICompatibleSummariser", "RetryPolicy",
           "SummaryCache", "SummaryCallFailed", "SummaryTooLarge", "client_delta", "client_run_usage", "request_key", "start_client_run",
           "strip_reasoning", "uses_max_completion_tokens"]

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
PERMANENT_STATUS = frozenset({401, 403, 404})
_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)\s*", re.DOTALL | re.IGNORECASE)
_COMPLETION_TOKENS_MODEL = re.compile(r"(^|/)(o\d|gpt-5)", re.IGNORECASE)


class SummaryCallFailed(SummariserError):
    """A summary call that failed after its attempts; ``usage`` sums what the attempts reported."""

    def __init__(self, message: str, *, usage: Usage | None = None, attempts: int = 0,
                 permanent: bool = False) -> None:
        super().__init__(message)
        self.usage = usage
        self.attempts = attempts
        self.permanent = permanent
        """True for answers that no retry or later call will change (HTTP 401, 403, 404)."""


class SummaryTooLarge(SummaryCallFailed):
    """An answer longer than the client's ``max_body_bytes``; the rest of it was not read."""


class _Transient(Exception):
    """An attempt worth retrying; ``retry_after`` is the server's requested wait in seconds."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    """HTTP attempts per summary call (the first one included)."""
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    jitter: float = 0.25
    max_retry_after: float = 60.0
    """A longer ``Retry-After`` ends the call instead of waiting."""
    failure_threshold: int = 2
    """Consecutive failed summary calls that open the breaker for the rest of the run."""


class ClientStats(FrozenModel):
    """What a client did since it was made (or since :meth:`start_run`)."""

    calls: int = 0
    """Summary calls sent to the endpoint (cache hits and refused requests excluded)."""
    attempts: int = 0
    """HTTP requests, retries included."""
    retries: int = 0
    failures: int = 0
    """Summary calls that ended in an error after their attempts."""
    refused: int = 0
    """Summary requests refused without a call because the breaker was open."""
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    breaker_open: bool = False
    breaker_reason: str | None = None


def strip_reasoning(text: str) -> str:
    """``text`` without reasoning blocks (an unclosed block runs to the end)."""
    return _REASONING.sub("", text).strip()


def uses_max_completion_tokens(model: str) -> bool:
    """o-series (o1, o3, o4-mini…) and gpt-5.x take ``max_completion_tokens``, not ``max_tokens``."""
    return bool(_COMPLETION_TOKENS_MODEL.search(model.strip()))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header: a number or an HTTP date; None when absent or bad."""
    if not value or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            import email.utils  # only for a Retry-After date (about 60 ms to import)

            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(seconds, 0.0) if math.isfinite(seconds) else None


@runtime_checkable
class MeteredSummariser(Protocol):
    """A summariser that calls a model: it counts its calls (:class:`ClientStats`), starts each
    replay with its circuit breaker closed and may refuse a request while the breaker is open.
    The engine asks for these through this protocol (``isinstance``), never by attribute name."""

    @property
    def kind(self) -> str: ...

    def summarise(self, request: SummaryRequest, *, timeout_seconds: float) -> SummaryResult: ...

    @property
    def stats(self) -> ClientStats: ...

    def start_run(self) -> ClientStats:
        """Close the breaker for a new run; the counters so far (for a per-run delta)."""
        ...

    def refusal(self) -> str | None:
        """Why any request is refused right now (the open breaker), else None."""
        ...


@dataclass
class _Ledger:
    """One summary call: its attempts and the usage they reported."""

    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    raw: list[dict[str, Any]] = field(default_factory=list)

    def usage(self, model: str) -> Usage | None:
        if not self.raw:
            return None
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens,
                     cache_read_in_input=True, cache_write_in_input=True, model=model,
                     raw={"attempts": self.raw} if len(self.raw) > 1 else self.raw[0])


def _json_object(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object (a dict parsed from JSON: string keys), else empty."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class OpenAICompatibleSummariser:
    """Chat-completions client for any OpenAI-compatible endpoint (see the module docstring)."""

    kind: SummariserKind = "remote"
    ENV = ("WORKBENCH_SUMMARY_BASE_URL", "WORKBENCH_SUMMARY_MODEL", "WORKBENCH_SUMMARY_API_KEY")

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 policy: RetryPolicy | None = None, cache_dir: str | Path | None = None,
                 use_cache: bool = True, token_parameter: str | None = None,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 cache_max_bytes: int = CACHE_DISK_BYTES) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.policy = policy or RetryPolicy()
        self.max_body_bytes = max_body_bytes
        """Longest answer read; a longer one fails the call with :class:`SummaryTooLarge`."""
        self.cache = SummaryCache(cache_dir, max_bytes=cache_max_bytes) if use_cache else None
        self.token_parameter = token_parameter or (
            "max_completion_tokens" if uses_max_completion_tokens(model) else "max_tokens")
        self.send_temperature = True
        """False once the endpoint refused ``temperature`` (some reasoning models accept only 1)."""
        self._stats = ClientStats()
        self._consecutive_failures = 0
        self._lock = threading.Lock()
        self.sleep = time.sleep
        """How waits between attempts sleep (replaceable, e.g. to record them)."""

    @classmethod
    def from_env(cls, **options: Any) -> OpenAICompatibleSummariser | None:
        """From ``WORKBENCH_SUMMARY_BASE_URL``/``_MODEL``/``_API_KEY``; None when unset.
        ``WORKBENCH_SUMMARY_MAX_BODY_BYTES`` (a positive whole number) changes the answer cap,
        ``WORKBENCH_SUMMARY_CACHE_MB`` (a whole number, 0: none) the summary cache folder's size cap."""
        base, model, key = (os.environ.get(name, "").strip() for name in cls.ENV)
        if not base or not model:
            return None
        cap = os.environ.get("WORKBENCH_SUMMARY_MAX_BODY_BYTES", "").strip()
        if cap and "max_body_bytes" not in options:
            if not cap.isdecimal() or int(cap) <= 0:
                raise SummariserError("WORKBENCH_SUMMARY_MAX_BODY_BYTES must be a positive whole "
                                      f"number of bytes, got {cap!r}")
            options["max_body_bytes"] = int(cap)
        cache_mb = os.environ.get("WORKBENCH_SUMMARY_CACHE_MB", "").strip()
        if cache_mb and "cache_max_bytes" not in options:
            if not cache_mb.isdecimal():
                raise SummariserError("WORKBENCH_SUMMARY_CACHE_MB must be a whole number of megabytes "
                                      f"(0: no summary cache on disk), got {cache_mb!r}")
            options["cache_max_bytes"] = int(cache_mb) * 1000 * 1000
        return cls(base, model, key or None, **options)

    @property
    def stats(self) -> ClientStats:
        return self._stats

    def start_run(self) -> ClientStats:
        """Close the breaker for a new run; returns the counters so far (for a per-run delta)."""
        with self._lock:
            self._consecutive_failures = 0
            self._stats = self._stats.evolve(**UNCHANGED, breaker_open=False, breaker_reason=None)
            return self._stats

    def refusal(self) -> str | None:
        """``circuit open: …`` (counted as refused) while the breaker is open, else None; the
        compaction engine asks before it builds a summary request."""
        if not self._stats.breaker_open:
            return None
        self._count(refused=1)
        return (f"circuit open: {self._stats.breaker_reason}; {self.base_url} is not called "
                "again in this run")

    def _count(self, *, calls: int = 0, attempts: int = 0, retries: int = 0, refused: int = 0,
               cache_hits: int = 0, input_tokens: int = 0, output_tokens: int = 0) -> None:
        with self._lock:
            s = self._stats
            self._stats = s.evolve(
                **UNCHANGED, calls=s.calls + calls, attempts=s.attempts + attempts,
                retries=s.retries + retries, refused=s.refused + refused,
                cache_hits=s.cache_hits + cache_hits, input_tokens=s.input_tokens + input_tokens,
                output_tokens=s.output_tokens + output_tokens)

    def body(self, request: SummaryRequest) -> dict[str, Any]:
        """The chat-completions request body for ``request``."""
        body: dict[str, Any] = {"model": self.model, self.token_parameter: request.max_tokens,
                                "messages": [{"role": "system", "content": request.system_prompt},
                                             {"role": "user", "content": request.input_text}]}
        if self.token_parameter == "max_tokens" and self.send_temperature:
            body["temperature"] = 0
        return body

    def summarise(self, request: SummaryRequest, *, timeout_seconds: float) -> SummaryResult:
        body = self.body(request)
        key = request_key(self.base_url, body)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            self._count(cache_hits=1)
            return SummaryResult(text=hit[0], kind="remote", model=hit[1],
                                 note=f"answer from the summary cache (request {key[:12]}), no call")
        if (refused := self.refusal()) is not None:
            raise SummariserError(refused)
        self._count(calls=1)
        ledger = _Ledger()
        try:
            text, model = self._with_retries(body, timeout_seconds, ledger)
        except SummariserError as exc:
            self._failed(exc)
            raise
        finally:
            self._count(input_tokens=ledger.input_tokens, output_tokens=ledger.output_tokens)
        with self._lock:
            self._consecutive_failures = 0
        if self.cache is not None:
            self.cache.put(key, text, model)
        return SummaryResult(text=text, usage=ledger.usage(model), kind="remote", model=model)

    def _failed(self, exc: SummariserError) -> None:
        permanent = isinstance(exc, SummaryCallFailed) and exc.permanent
        with self._lock:
            self._consecutive_failures += 1
            s, n = self._stats, self._consecutive_failures
            if permanent or n >= self.policy.failure_threshold:
                why = "a permanent error" if permanent else f"{n} failed summary calls in a row"
                self._stats = s.evolve(**UNCHANGED, failures=s.failures + 1, breaker_open=True,
                                       breaker_reason=f"{why} (last: {exc})")
            else:
                self._stats = s.evolve(**UNCHANGED, failures=s.failures + 1)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return exc.retry_after
        from tenacity import wait_exponential, wait_random

        p = self.policy
        backoff = wait_exponential(multiplier=p.initial_backoff, max=p.max_backoff)
        return (backoff + wait_random(0, p.jitter))(state)

    def _with_retries(self, body: dict[str, Any], timeout: float, ledger: _Ledger,
                      ) -> tuple[str, str]:
        from tenacity import Retrying, retry_if_exception_type

        deadline = time.monotonic() + timeout

        def stop(state: RetryCallState) -> bool:
            wait = state.upcoming_sleep
            return (state.attempt_number >= self.policy.max_attempts
                    or wait > self.policy.max_retry_after
                    or time.monotonic() + wait >= deadline)

        def before_sleep(state: RetryCallState) -> None:
            self._count(retries=1)

        retrying = Retrying(retry=retry_if_exception_type(_Transient), wait=self._wait, stop=stop,
                            sleep=lambda s: self.sleep(s), before_sleep=before_sleep,
                            reraise=True)
        try:
            return retrying(self._attempt, body, deadline, timeout, ledger)
        except _Transient as exc:
            wait = (f"; Retry-After {exc.retry_after:g} s is longer than this call may wait"
                    if exc.retry_after and ledger.attempts < self.policy.max_attempts else "")
            raise SummaryCallFailed(f"{exc} (gave up after {ledger.attempts} attempt(s){wait})",
                                    usage=ledger.usage(self.model),
                                    attempts=ledger.attempts) from None

    def _post(self, body: dict[str, Any], deadline: float, timeout: float) -> httpx.Response:
        """One HTTP attempt, over by ``deadline`` whatever the endpoint does (see bounded_http)."""
        import json

        import httpx

        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = f"{self.base_url}/chat/completions"
        try:
            answer = bounded_post(url, json.dumps(body).encode(), headers, deadline=deadline,
                                  max_body_bytes=self.max_body_bytes)
        except DeadlinePassed:
            raise SummaryTimeout(f"timeout after {timeout:g} s ({url}): the deadline covers "
                                 "connecting, the headers and the whole body") from None
        except BodyTooLarge as exc:
            raise SummaryTooLarge(f"answer from {url} is too large ({exc}; the limit is "
                                  f"max_body_bytes={self.max_body_bytes})") from None
        except PostFailed as exc:
            raise _Transient(f"cannot reach {url}: {exc}") from None
        return httpx.Response(answer.status, headers=answer.headers, content=answer.body)

    def _attempt(self, body: dict[str, Any], deadline: float, timeout: float, ledger: _Ledger,
                 ) -> tuple[str, str]:
        if deadline - time.monotonic() <= 0:
            raise SummaryTimeout(f"timeout after {timeout:g} s ({self.base_url})")
        ledger.attempts += 1
        self._count(attempts=1)
        response = self._post(body, deadline, timeout)
        status, url = response.status_code, f"{self.base_url}/chat/completions"
        if status in RETRYABLE_STATUS:
            raise _Transient(f"{url} answered HTTP {status}: {response.text[:200]!r}",
                             parse_retry_after(response.headers.get("retry-after")))
        if status == 400 and (change := self._adapt(body, response.text)) is not None:
            raise _Transient(f"{url} {change}", retry_after=0.0)  # sent again at once
        if status != 200:
            raise SummaryCallFailed(f"{url} answered HTTP {status}: {response.text[:200]!r}",
                                    usage=ledger.usage(self.model), attempts=ledger.attempts,
                                    permanent=status in PERMANENT_STATUS)
        return self._parse(response, ledger)

    def _adapt(self, body: dict[str, Any], error: str) -> str | None:
        """Change ``body`` (and what later requests send) after an HTTP 400 naming a parameter
        the model does not take; None when the error names none that can be changed."""
        if "max_completion_tokens" in error and "max_tokens" in body:
            body["max_completion_tokens"] = body.pop("max_tokens")
            body.pop("temperature", None)
            self.token_parameter = "max_completion_tokens"
            return "asked for max_completion_tokens"
        if "temperature" in error and "temperature" in body:
            body.pop("temperature")
            self.send_temperature = False
            return "refused temperature"
        return None

    def _parse(self, response: httpx.Response, ledger: _Ledger) -> tuple[str, str]:
        try:
            data = response.json()
        except ValueError:
            raise SummaryCallFailed(f"junk answer from {self.base_url}: not JSON (body "
                                    f"{response.text[:120]!r})", usage=ledger.usage(self.model),
                                    attempts=ledger.attempts) from None
        answer = _json_object(data)
        named = answer.get("model")
        model = named if isinstance(named, str) and named else self.model
        raw = _json_object(answer.get("usage"))
        if isinstance(answer.get("usage"), dict):
            ledger.raw.append(raw)
            ledger.input_tokens += _int(raw.get("prompt_tokens"))
            ledger.output_tokens += _int(raw.get("completion_tokens"))
        try:
            content = data["choices"][0]["message"]["content"]
            if not isinstance(content, str):
                raise TypeError("content is not text")
        except (KeyError, IndexError, TypeError) as exc:
            raise SummaryCallFailed(f"junk answer from {self.base_url}: {exc!s:.120} (body "
                                    f"{response.text[:120]!r})", usage=ledger.usage(model),
                                    attempts=ledger.attempts) from None
        text = strip_reasoning(content)
        if not text:
            what = "only a reasoning block" if content.strip() else "empty content"
            raise SummaryCallFailed(f"answer from {self.base_url} held {what}",
                                    usage=ledger.usage(model), attempts=ledger.attempts)
        return text, model


def start_client_run(summariser: object) -> ClientStats | None:
    """Start a replay with ``summariser``: closes a client's breaker, returns its counters."""
    return summariser.start_run() if isinstance(summariser, MeteredSummariser) else None


def client_delta(summariser: object, start: ClientStats | None) -> ClientStats | None:
    """What a client did since ``start`` (None for summarisers that do not count calls)."""
    if start is None or not isinstance(summariser, MeteredSummariser):
        return None
    now = summariser.stats
    return now.evolve(
        **UNCHANGED, calls=now.calls - start.calls, attempts=now.attempts - start.attempts,
        retries=now.retries - start.retries, failures=now.failures - start.failures,
        refused=now.refused - start.refused, cache_hits=now.cache_hits - start.cache_hits,
        input_tokens=now.input_tokens - start.input_tokens,
        output_tokens=now.output_tokens - start.output_tokens)


def client_run_usage(totals: RunUsage, summariser: object, start: ClientStats | None) -> RunUsage:
    """``totals`` with the summary (compaction) row taken from a counting client's own counters
    for this run: every call, attempt, failure and reported token, applied or not."""
    delta = client_delta(summariser, start)
    if delta is None:
        return totals
    row = UsageTotals(calls=delta.calls, attempts=delta.attempts, failures=delta.failures,
                      refused=delta.refused, cache_hits=delta.cache_hits,
                      input_tokens=delta.input_tokens, output_tokens=delta.output_tokens,
                      prompt_tokens=delta.input_tokens)
    return totals.evolve(**UNCHANGED, compaction=row)

