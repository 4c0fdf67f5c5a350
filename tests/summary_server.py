"""A real local OpenAI-compatible endpoint for the summariser client tests, scripted per scenario.

Each POST takes the next step of the script (the last one repeats): an HTTP status, headers, a body
(``dict`` is sent as JSON, ``str`` as text) and a delay before answering. The server records every
request body it received, so tests assert the calls the endpoint really saw.

Two hostile modes: ``trickle`` sends the status line, headers and body one byte every ``trickle``
seconds (so each read gets something before a per-read timeout would fire), and ``huge`` sends a
body of that many bytes (announced in ``Content-Length`` unless ``chunked``, then sent in chunks
without a length).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from iris.compaction import REQUIRED_SECTIONS

GOOD = "\n\n".join(f"## {s}\nConcrete content for {s.lower()} with enough detail."
                   for s in REQUIRED_SECTIONS)


def answer(content: str = GOOD, *, prompt_tokens: int = 1200, completion_tokens: int = 80,
           model: str = "served-model") -> dict[str, Any]:
    """A chat-completions answer with usage."""
    return {"model": model, "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}


@dataclass(frozen=True)
class Step:
    status: int = 200
    body: Any = field(default_factory=answer)
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    trickle: float = 0.0
    """Seconds between single bytes of the answer (0: sent at once)."""
    trickle_headers: bool = True
    """With ``trickle``: trickle the status line and headers too (else only the body)."""
    huge: int = 0
    """Send this many bytes of body instead of ``body`` (0: send ``body``)."""
    chunked: bool = False
    """With ``huge``: no Content-Length, chunked transfer encoding."""


class ScriptedServer:
    """``with ScriptedServer([Step(500), Step()]) as srv: srv.url, srv.bodies``."""

    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.bodies: list[dict[str, Any]] = []
        self.times: list[float] = []
        self.sent_bytes = 0
        """Body bytes the huge mode wrote before the client stopped reading."""
        self._lock = threading.Lock()
        self._release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                owner.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    @property
    def calls(self) -> int:
        return len(self.bodies)

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        body = json.loads(request.rfile.read(int(request.headers["Content-Length"])))
        with self._lock:
            self.bodies.append(body)
            self.times.append(time.monotonic())
            step = self.script[min(len(self.bodies), len(self.script)) - 1]
        if step.delay:
            self._release.wait(step.delay)
        try:
            if step.huge:
                self._send_huge(request, step)
            elif step.trickle:
                self._send_trickle(request, step)
            else:
                self._send(request, step)
        except OSError:
            pass  # the client gave up (timeout, too large) before the answer ended

    @staticmethod
    def _payload(step: Step) -> bytes:
        return (json.dumps(step.body) if isinstance(step.body, dict) else str(step.body)).encode()

    def _send(self, request: BaseHTTPRequestHandler, step: Step) -> None:
        request.send_response(step.status)
        for name, value in step.headers:
            request.send_header(name, value)
        request.send_header("Content-Type", "application/json" if isinstance(step.body, dict)
                            else "text/plain")
        request.end_headers()
        request.wfile.write(self._payload(step))

    def _send_trickle(self, request: BaseHTTPRequestHandler, step: Step) -> None:
        payload = self._payload(step)
        raw = (f"HTTP/1.1 {step.status} OK\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload
        start = 0 if step.trickle_headers else len(raw) - len(payload)
        request.wfile.write(raw[:start])
        for i in range(start, len(raw)):
            if self._release.is_set():
                return
            request.wfile.write(raw[i:i + 1])
            request.wfile.flush()
            self._release.wait(step.trickle)
        request.close_connection = True

    def _send_huge(self, request: BaseHTTPRequestHandler, step: Step) -> None:
        request.send_response(step.status)
        request.send_header("Content-Type", "application/json")
        if step.chunked:
            request.send_header("Transfer-Encoding", "chunked")
        else:
            request.send_header("Content-Length", str(step.huge))
        request.end_headers()
        block = b"x" * 65536
        for start in range(0, step.huge, len(block)):
            part = block[:min(len(block), step.huge - start)]
            self.sent_bytes += len(part)
            request.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if step.chunked else part)
        if step.chunked:
            request.wfile.write(b"0\r\n\r\n")

    def __enter__(self) -> Self:
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
