"""Claude Code ``queue-operation`` lines: messages the user typed while the agent worked (R-TWIN-8).

Claude Code queues what the user types during a turn (``operation: enqueue`` with the text in
``content``). The queue's next operation says what became of it, first in, first out:

* ``remove``: the message went to the model inside the running turn, with the next request. No
  user line records it, so it becomes a user message at that place: before the first response
  after the ``remove`` line (the response that read it);
* ``dequeue``: it was sent as the next prompt, which the transcript records as a user line;
* ``popAll``: the user took the queued messages back into the input box (what is sent then is
  recorded as usual).

Queued slash commands (``/model``) run in the terminal, and queued background-task notices (a JSON
object) are reported by their own lines: neither is a message to the model.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime
from typing import Any

from iris.session import TextBlock

from ._common import opt_str, parse_time
from .claude_tree import Line

__all__ = ["QueuedMessages"]


class QueuedMessages:
    """Follows the queue through a transcript's ``queue-operation`` lines."""

    def __init__(self) -> None:
        self._pending: deque[tuple[str, datetime | None]] = deque()
        self.delivered: list[Line] = []

    def see(self, data: dict[str, Any], lineno: int) -> None:
        """One ``queue-operation`` line."""
        operation = data.get("operation")
        if operation == "enqueue":
            content = opt_str(data.get("content"), "content")
            if content is not None and _typed(content):
                self._pending.append((content, parse_time(data.get("timestamp"))))
        elif operation in ("remove", "dequeue") and self._pending:
            content, when = self._pending.popleft()
            if operation == "remove":
                self.delivered.append(Line(lineno=lineno, kind="user",
                                           uuid=f"queue-operation:{lineno}", parent=None,
                                           blocks=(TextBlock(text=content),), timestamp=when))
        elif operation == "popAll":
            self._pending.clear()

    def place(self, live: list[Line]) -> list[Line]:
        """``live`` with each delivered message before the first response after it."""
        if not self.delivered:
            return live
        out: list[Line] = []
        waiting = list(self.delivered)
        for line in live:
            while waiting and line.kind == "assistant" and line.lineno > waiting[0].lineno:
                out.append(waiting.pop(0))
            out.append(line)
        return out + waiting


def _typed(content: str) -> bool:
    """A message the user typed for the model (not a slash command, not a task notice)."""
    text = content.strip()
    return bool(text) and not text.startswith("/") and not text.startswith("{")
