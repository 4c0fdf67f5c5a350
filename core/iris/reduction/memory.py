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
from typing import TYPE_CHECKING, Any

from ..context.policy import ContextPolicy
from ..session import Message, ToolResultBlock
from .classify import ResultInfo, Verdict
from .config import ReductionConfig
from .render import Rendering
from .validity import Validity, ValidityMemory

if TYPE_CHECKING:
    from .tracker import Tracker

__all__ = ["InfoKey", "KindsKey", "ReductionMemory", "RenderKey", "ResultMemory", "TrackerKey",
           "VerdictKey"]

KindsKey = tuple[str, tuple[tuple[str, str], ...]]
"""A tool-kind map's source format and its sorted overrides."""
InfoKey = tuple[str, str | None, str, bool, bool, bool, KindsKey]
"""Call id, tool name (None: no call), result text, is_error, reducible, has an artifact, kinds;
the call's arguments are compared on a hit (see :class:`ResultMemory`)."""
VerdictKey = tuple[int, Validity | None, bool, bool, int, str]
"""Age (capped at the last age gate), validity, repeated, recalled, results (capped at
``min_tool_results_prune``), configuration key: everything a verdict depends on besides the
result itself."""
RenderKey = tuple[str | None, str | None, bool, str | None]
"""Renderer, its ``why``, whether artifacts are written, the existing artifact."""
TrackerKey = tuple[str, ContextPolicy, bool, bool, KindsKey, str]
"""Configuration key, policy, read-back hint, whether artifacts are written, kinds, encoding."""
RebuiltKey = tuple[str, tuple[tuple[int, str], ...]]
"""Call id of a message's first result and the texts sent for its changed blocks (by index)."""


@dataclass(eq=False)
class ResultMemory:
    """What one tool result's content gave, and what was decided from it per request context."""

    arguments: Mapping[str, Any] | None
    """The call arguments it was described with (None: no call); a hit must have equal ones."""
    info: ResultInfo
    verdicts: dict[VerdictKey, Verdict] = field(default_factory=dict[VerdictKey, Verdict])
    renderings: dict[RenderKey, Rendering] = field(default_factory=dict[RenderKey, Rendering])
    externalized: tuple[ToolResultBlock, str | None] | None = None
    """The preview block and ``tool-outputs/`` path of a result over the inline budget."""


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
    config_keys: dict[ReductionConfig, str] = field(default_factory=dict[ReductionConfig, str])
    """Configuration → its JSON (a short key for verdicts and the tracker)."""
    classified: int = 0
    """Results classified with this memory so far (an instrumentation counter)."""

    def shared_caches(self) -> ReductionMemory:
        """A memory with these content caches and no tracker: a request reduced with it is decided
        in full (another history, e.g. a compaction's head) without describing again what this
        memory's run already described, and without disturbing this memory's tracker."""
        return ReductionMemory(results=self.results, validity=self.validity, rebuilt=self.rebuilt,
                               config_keys=self.config_keys)

    def config_key(self, config: ReductionConfig) -> str:
        key = self.config_keys.get(config)
        if key is None:
            key = self.config_keys[config] = config.model_dump_json()
        return key
