"""A real local OpenAI-compatible endpoint for the summariser client tests, scripted per scenario.

Each POST takes the next step of the script (the last one repeats): an HTTP status, headers, a body
(``dict`` is sent as JSON, ``str`` as text) and a delay before answering. The server records every
request body it received, so tests assert the calls the endpoint really saw.
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


class ScriptedServer:
    """``with ScriptedServer([Step(500), Step()]) as srv: srv.url, srv.bodies``."""

    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.bodies: list[dict[str, Any]] = []
        self.times: list[float] = []
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
        payload = (json.dumps(step.body) if isinstance(step.body, dict) else str(step.body))
        try:
            request.send_response(step.status)
            for name, value in step.headers:
                request.send_header(name, value)
            request.send_header("Content-Type", "application/json" if isinstance(step.body, dict)
                                else "text/plain")
            request.end_headers()
            request.wfile.write(payload.encode())
        except OSError:
            pass  # the client gave up (timeout) before the answer

    def __enter__(self) -> Self:
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
