"""The reduction engine's memory between the requests of one run, owned by whoever runs them.

:func:`~iris.reduction.engine.reduce_request` is a function of its arguments; what it may reuse
from earlier requests lives in a :class:`ReductionMemory` the caller passes (a replay keeps one for
all its steps). No memory means a fresh one for that call: the request is decided from scratch.
A memory never changes a result, only how much work it takes: every slot is keyed by content or
by call id (stable when a compaction shifts message indices), never by an object's identity, so
an entry stays right after the objects it was computed from are gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..session import Message, ToolCallBlock, block_text
from ..tokens import TokenEstimator
from .config import ReductionConfig
from .result_memory import InfoKey, KindsKey, RenderKey, ResultMemory, TrackerKey, VerdictKey
from .tracker import Tracker
from .validity import ValidityMemory

__all__ = ["InfoKey", "KindsKey", "MessageKey", "ReductionMemory", "RenderKey", "ResultMemory",
           "TrackerKey", "VerdictKey"]

RebuiltKey = tuple[str, tuple[tuple[int, str], ...]]
"""Call id of a message's first result and the texts sent for its changed blocks (by index)."""
MessageKey = tuple[str, tuple[str | tuple[str, str], ...]]
"""Encoding, and per block its text or, for a tool call, its id and name (the arguments are
compared on a hit): everything a message's token count depends on."""


@dataclass(eq=False)
class ReductionMemory:
    """Named caches of one run's reductions (see the module docstring for the keys' rule)."""

    tracker: Tracker | None = None
    """The incremental tracker of the latest request (extended when the next one continues it)."""
    results: dict[InfoKey, ResultMemory] = field(default_factory=dict[InfoKey, ResultMemory])
    """Per tool result content: facts, verdicts, renderings, externalised preview."""
    validity: ValidityMemory = field(default_factory=ValidityMemory)
    """Parsed reads, located edits and read verdicts."""
    rebuilt: dict[RebuiltKey, tuple[Message, Message]] = field(
        default_factory=dict[RebuiltKey, tuple[Message, Message]])
    """(original message, the message sent): the same texts give the same object again."""
    message_tokens: dict[MessageKey, tuple[tuple[Mapping[str, Any], ...], int]] = field(
        default_factory=dict[MessageKey, tuple[tuple[Mapping[str, Any], ...], int]])
    """Token counts of messages (with the arguments of their tool calls)."""
    config_keys: dict[ReductionConfig, str] = field(default_factory=dict[ReductionConfig, str])
    """Configuration → its JSON (a short key for verdicts and the tracker)."""
    classified: int = 0
    """Results classified with this memory so far (an instrumentation counter)."""

    def shared_caches(self) -> ReductionMemory:
        """A memory for another history decided in full (a compaction's head): it reads this
        memory's content facts (result descriptions, parsed reads, located edits, message token
        counts) and keeps what it decides (verdicts, renderings, read verdicts, rebuilt messages,
        its tracker) to itself, so this memory's run neither keeps nor is disturbed by them."""
        results = {key: ResultMemory(e.arguments, e.info) for key, e in self.results.items()}
        validity = ValidityMemory(shown=self.validity.shown, located=self.validity.located)
        return ReductionMemory(results=results, validity=validity,
                               message_tokens=self.message_tokens, config_keys=self.config_keys)

    def message_token_count(self, estimator: TokenEstimator, message: Message) -> int:
        """``estimator.message_tokens(message)``, counted once per content (a tool call's text is
        its arguments as JSON: an equal call is not serialised again)."""
        parts: list[str | tuple[str, str]] = []
        calls: list[Mapping[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                parts.append((block.id, block.name))
                calls.append(block.arguments)
            else:
                parts.append(block_text(block))
        key = (estimator.encoding_name, tuple(parts))
        hit = self.message_tokens.get(key)
        if hit is not None and hit[0] == tuple(calls):
            return hit[1]
        count = estimator.message_tokens(message)
        self.message_tokens[key] = (tuple(calls), count)
        return count

    def config_key(self, config: ReductionConfig) -> str:
        key = self.config_keys.get(config)
        if key is None:
            key = self.config_keys[config] = config.model_dump_json()
        return key
