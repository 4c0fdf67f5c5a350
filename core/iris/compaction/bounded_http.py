"""One HTTP POST whose deadline covers connect, headers and body, and whose answer size is capped.

A per-read timeout (what ``httpx.post(timeout=…)`` sets) starts again with every byte, so an
endpoint that trickles its headers or body one byte a second keeps a call alive forever. Here every
network operation of the call waits at most until one deadline fixed when the call starts: the
socket backend handed to httpcore clamps each connect, read and write timeout to the time left,
and fails with a timeout once none is left. The answer body is read in chunks and refused as soon
as it passes ``max_body_bytes`` (or when its ``Content-Length`` already says it will).

Proxies come from the usual environment variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``),
as ``httpx`` would take them; the deadline covers the proxy's connection too.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpcore

__all__ = ["DEFAULT_MAX_BODY_BYTES", "BodyTooLarge", "DeadlinePassed", "PostFailed", "bounded_post"]

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""Largest summariser answer read (4 MiB): a summary is a few kilobytes of JSON."""


class DeadlinePassed(Exception):
    """The call's deadline passed before the whole answer arrived."""


class BodyTooLarge(Exception):
    """The answer is longer than the cap; nothing past the cap was read."""


class PostFailed(Exception):
    """The endpoint could not be reached or broke the protocol (worth another attempt)."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


def _left(deadline: float) -> float:
    """Seconds until ``deadline``; a timeout (httpcore's, so the pool maps it) when none is left."""
    import httpcore

    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("deadline passed")
    return left


def _clamp(deadline: float, timeout: float | None) -> float:
    left = _left(deadline)
    return left if timeout is None else min(timeout, left)


def _backend(deadline: float) -> httpcore.NetworkBackend:
    """httpcore's socket backend with every wait clamped to ``deadline``."""
    import httpcore

    class Stream(httpcore.NetworkStream):
        def __init__(self, inner: httpcore.NetworkStream) -> None:
            self.inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self.inner.read(max_bytes, _clamp(deadline, timeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self.inner.write(buffer, _clamp(deadline, timeout))

        def close(self) -> None:
            self.inner.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> httpcore.NetworkStream:
            return Stream(self.inner.start_tls(ssl_context, server_hostname,
                                               _clamp(deadline, timeout)))

        def get_extra_info(self, info: str) -> Any:
            return self.inner.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):
        def __init__(self) -> None:
            self.inner = httpcore.SyncBackend()

        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None,
                        socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
            return Stream(self.inner.connect_tcp(host, port, _clamp(deadline, timeout),
                                                 local_address, socket_options))

        def sleep(self, seconds: float) -> None:
            time.sleep(min(seconds, _left(deadline)))

    return Backend()


def _pool(url: str, deadline: float) -> httpcore.ConnectionPool:
    """A one-call connection pool for ``url`` (through the environment's proxy, if any)."""
    import urllib.request  # with http.client and ssl: only a process that posts loads them

    import httpcore
    import httpx

    parts = urlsplit(url)
    ssl_context = httpx.create_ssl_context() if parts.scheme == "https" else None
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(parts.hostname or ""):
        return httpcore.HTTPProxy(proxy_url=proxy, ssl_context=ssl_context,
                                  network_backend=_backend(deadline))
    return httpcore.ConnectionPool(ssl_context=ssl_context, network_backend=_backend(deadline))


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name.lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


def bounded_post(url: str, content: bytes, headers: dict[str, str], *, deadline: float,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Answer:
    """POST ``content`` to ``url`` and read the answer, all before ``deadline`` (a
    ``time.monotonic()`` value) and at most ``max_body_bytes`` of body.

    Raises :class:`DeadlinePassed`, :class:`BodyTooLarge` or :class:`PostFailed`."""
    import httpcore

    try:
        with _pool(url, deadline) as pool, pool.stream(
                "POST", url, headers={**headers, "Content-Length": str(len(content))},
                content=content) as response:
            size = _content_length(response.headers)
            if size is not None and size > max_body_bytes:
                raise BodyTooLarge(f"Content-Length {size} bytes")
            chunks: list[bytes] = []
            read = 0
            for chunk in response.iter_stream():
                read += len(chunk)
                if read > max_body_bytes:
                    raise BodyTooLarge(f"more than {max_body_bytes} bytes")
                chunks.append(chunk)
            return Answer(response.status, list(response.headers), b"".join(chunks))
    except httpcore.TimeoutException:
        raise DeadlinePassed from None
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError,
            httpcore.UnsupportedProtocol, OSError) as exc:
        raise PostFailed(str(exc) or type(exc).__name__) from None
