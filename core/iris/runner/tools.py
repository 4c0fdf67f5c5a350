"""Tools of a live run: the host's own (name, JSON schema, a Python callable) and the runner's.

The host supplies each tool as a :class:`Tool`; the runner adds ``context_read`` and
``context_search`` when the context policy is enabled (they read only this session's committed
messages through :class:`~iris.context.ContextAccessPort`, never re-running a tool). A tool that
raises gives an error result naming the exception; the run goes on, as with any failed tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..context import ContextAccessPort, ContextReadParams, ContextSearchParams
from ..errors import ContextAccessError
from ..session import Message, ToolCallBlock, ToolResultBlock

__all__ = ["Tool", "ToolBox"]

ToolFunction = Callable[[dict[str, Any]], object]
"""Called with the call's parsed JSON arguments; a ``str`` is the result text, anything else is
sent as JSON."""


@dataclass(frozen=True)
class Tool:
    """A host tool: its name, the JSON schema of its arguments and the callable that runs it."""

    name: str
    parameters: Mapping[str, Any]
    """JSON schema of the arguments object."""
    fn: ToolFunction = field(repr=False)
    description: str = ""
    reducible: bool = True
    """False: its results are never reduced or trimmed (R-POL-2)."""

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError(f"a tool needs a non-empty name, got {self.name!r}")
        if not callable(self.fn):
            raise TypeError(f"tool {self.name!r}: fn must be callable")

    @property
    def schema(self) -> dict[str, Any]:
        """The schema the preparation pipeline counts and the wire sends."""
        return {"name": self.name, "description": self.description,
                "input_schema": dict(self.parameters)}


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class ToolBox:
    """Runs the calls of one assistant response: host tools, then the runner's read-back tools."""

    def __init__(self, tools: Sequence[Tool], *, session_id: str,
                 transcript: Callable[[], Sequence[Message]], session_dir: Path,
                 workspace_root: Path | None) -> None:
        names = [t.name for t in tools]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise ValueError(f"two tools named {doubled[0]!r}")
        self.tools = {t.name: t for t in tools}
        self.session_id = session_id
        self.workspace_root = workspace_root
        self.port = ContextAccessPort(
            lambda sid: transcript() if sid == session_id else None, artifact_root=session_dir)

    def run(self, call: ToolCallBlock) -> ToolResultBlock:
        """The result of one call (an error result when the tool is unknown or raises)."""
        tool = self.tools.get(call.name)
        try:
            if tool is not None:
                return ToolResultBlock(call_id=call.id, text=_text(tool.fn(dict(call.arguments))),
                                       reducible=tool.reducible)
            if call.name == "context_read":
                page = self.port.read(self.session_id, ContextReadParams.model_validate(call.arguments),
                                      self.workspace_root)
                return ToolResultBlock(call_id=call.id, text=page.model_dump_json(), reducible=False)
            if call.name == "context_search":
                found = self.port.search(self.session_id,
                                         ContextSearchParams.model_validate(call.arguments))
                return ToolResultBlock(call_id=call.id, text=found.model_dump_json(), reducible=False)
            if call.name == "compact_context":
                return ToolResultBlock(call_id=call.id, is_error=True, text=(
                    "compact_context: this runner does not apply model-driven checkpoints; "
                    "automatic compaction still runs at the pressure line"))
        except ContextAccessError as exc:
            return ToolResultBlock(call_id=call.id, text=f"{call.name}: {exc}", is_error=True)
        except Exception as exc:  # noqa: BLE001 -- a failing tool is a failed result the model sees
            return ToolResultBlock(call_id=call.id, is_error=True,
                                   text=f"{call.name} failed: {type(exc).__name__}: {exc}")
        return ToolResultBlock(call_id=call.id, is_error=True,
                               text=f"unknown tool {call.name!r} (this runner offers: "
                                    f"{', '.join(sorted(self.tools)) or 'no host tools'})")
