"""A real local chat-completions endpoint standing in for the model in live-runner tests.

The "model" is a Python function of the request body it received (so it is stateless and serves
several sessions at once): it returns either a final text or a list of tool calls. The server
answers in the OpenAI chat-completions shape with ``usage`` whose ``prompt_tokens`` is computed
from the request it really received (about one token per four characters of its messages and
tools), as a provider would count it. Every request body is kept, so tests assert what the model
really saw.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Reply = str | list[tuple[str, dict[str, Any]]] | dict[str, Any]
"""A final answer, tool calls as (name, arguments), or a whole chat ``message`` object."""
Script = Callable[[dict[str, Any]], Reply]


def prompt_tokens(body: dict[str, Any]) -> int:
    """What this stand-in provider counts for a request: characters / 4 of messages and tools."""
    return len(json.dumps(body.get("messages", []))) // 4 + len(json.dumps(body.get("tools", []))) // 4


def chat_answer(body: dict[str, Any], reply: Reply, turn: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(reply, dict):
        message = reply
    elif isinstance(reply, str):
        message["content"] = reply
    else:
        message["tool_calls"] = [
            {"id": f"call_{turn}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(reply)]
    return {"id": f"chatcmpl-{turn}", "model": "scripted-model",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens(body), "completion_tokens": 20,
                      "total_tokens": prompt_tokens(body) + 20}}


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results of a request, in order."""
    return [str(m.get("content", "")) for m in body["messages"] if m.get("role") == "tool"]


def all_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


class ChatServer:
    """``with ChatServer(script) as srv: srv.url, srv.bodies``."""

    def __init__(self, script: Script, *, usage: bool = True) -> None:
        self.script = script
        self.usage = usage
        """False: answers carry no ``usage`` (a provider that reports none)."""
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
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

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length", "0"))
        body = json.loads(handler.rfile.read(length))
        with self._lock:
            self.bodies.append(body)
            turn = len(self.bodies)
        try:
            data = chat_answer(body, self.script(body), turn)
            if not self.usage:
                del data["usage"]
            payload = json.dumps(data).encode()
            status = 200
        except Exception as exc:  # noqa: BLE001 -- a script error is an HTTP 500 the test sees
            payload, status = json.dumps({"error": repr(exc)}).encode(), 500
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def __enter__(self) -> Self:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
