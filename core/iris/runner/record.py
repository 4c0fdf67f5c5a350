"""Writing a live session in the native format (``docs/session.schema.json``), as it happens.

The engine cannot import the workbench's importer, so it writes the same events itself: line 1
``{"type": "header", ...}``, then ``message``, ``compaction`` and ``context_snapshot`` events, each
``{"type": kind, **model.model_dump(mode="json", exclude_none=True)}`` with sorted keys, exactly as
the workbench's native dumper does. The file is rewritten atomically after every step
(:func:`iris.safe_files.write_file`), so a crash keeps every finished step, and the workbench
imports it like any transcript. Each step's :class:`ContextPreparation` goes to
``preparations.jsonl`` next to it (one JSON object a line).

A compaction the runner applied is recorded the way the workbench reads recorded compactions: a
``compaction`` event at the index of the checkpoint message (``is_compaction_summary``), followed
by copies of the raw tail kept after it (``compaction_provided``). A replay with its own policy
leaves both out; the as-recorded baseline uses them as the context after the compaction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..frozen import UNCHANGED
from ..preparation.records import ContextPreparation
from ..safe_files import write_file
from ..session import Message, RecordedCompaction, SessionHeader, StepSnapshot

__all__ = ["PREPARATIONS_FILE", "SESSION_FILE", "SessionRecord"]

SESSION_FILE = "session.jsonl"
PREPARATIONS_FILE = "preparations.jsonl"


def _line(kind: str, model: BaseModel) -> str:
    event: dict[str, Any] = {"type": kind, **model.model_dump(mode="json", exclude_none=True)}
    return json.dumps(event, ensure_ascii=False, sort_keys=True) + "\n"


class SessionRecord:
    """The session file and the preparation records of one live session folder."""

    def __init__(self, folder: Path, header: SessionHeader) -> None:
        self.folder = folder
        self.header = header
        self.messages: list[Message] = []
        self.compactions: list[RecordedCompaction] = []
        self.snapshots: list[StepSnapshot] = []
        self._lines = [_line("header", header)]
        self._preparations: list[str] = []

    @property
    def path(self) -> Path:
        return self.folder / SESSION_FILE

    def add_message(self, message: Message) -> int:
        """Append a message; returns its index in the session."""
        self.messages.append(message)
        self._lines.append(_line("message", message))
        return len(self.messages) - 1

    def add_compaction(self, event: RecordedCompaction, checkpoint: tuple[Message, ...],
                       tail: tuple[Message, ...]) -> None:
        """Record an applied compaction: the event, the checkpoint message(s), the kept tail."""
        self.compactions.append(event)
        self._lines.append(_line("compaction", event))
        for m in checkpoint:
            self.add_message(m.evolve(**UNCHANGED, is_compaction_summary=True, synthetic=True))
        for m in tail:
            self.add_message(m.evolve(**UNCHANGED, compaction_provided=True))

    def add_snapshot(self, snapshot: StepSnapshot) -> None:
        if snapshot.contributions:
            self.snapshots.append(snapshot)
            self._lines.append(_line("context_snapshot", snapshot))

    def add_preparation(self, preparation: ContextPreparation) -> None:
        self._preparations.append(
            json.dumps(preparation.model_dump(mode="json"), ensure_ascii=False, sort_keys=True) + "\n")

    def flush(self) -> None:
        """Rewrite both files atomically (no symbolic link is followed)."""
        write_file(self.path, "".join(self._lines), root=self.folder)
        write_file(self.folder / PREPARATIONS_FILE, "".join(self._preparations), root=self.folder)
