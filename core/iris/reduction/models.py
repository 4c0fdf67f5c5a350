"""Records of request-level reduction: one decision per tool result, the state carried between
requests, and the result of one :func:`~iris.reduction.engine.reduce_request` call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol

from pydantic import PrivateAttr

from ..frozen import FrozenModel, constructed
from ..session import Message

__all__ = ["Action", "DecisionSource", "FrozenRendering", "ReductionResult", "ReductionState", "ToolResultDecision"]

Action = Literal["kept", "reduced", "trimmed", "stale", "superseded", "repeat", "externalized"]
Category = Literal["confirmation", "error", "diagnostics", "shell_success", "shell_log", "diff", "read",
                   "search", "json", "skill", "web_fetch", "generic"]
"""The kind of output a reduction decision is about (R-RED-3)."""


_Frozen = FrozenModel


class ToolResultDecision(_Frozen):
    """What happened to one tool result in one request, produced by the branch that decided it."""

    ref: str
    """``result:N:B`` (message N, content block B of the request's messages)."""
    message_index: int
    block_index: int
    call_id: str
    tool_name: str
    kind: str
    """Tool kind (read, edit, write, delete, shell, search, glob, web_fetch, skill, todo, other)."""
    category: str
    """Output category (R-RED-3) the content belongs to."""
    age: int
    """Request batches since the batch that produced the result (1 at the first request that sees it)."""
    bytes: int
    action: Action
    rule: str
    """The rule that decided (e.g. ``shell_success_age_turns``, ``current_read``, ``high_risk_protect``)."""
    reason: str
    """Plain words with the numbers that made the rule fire."""
    tokens_before: int
    tokens_after: int
    artifact_path: str | None = None
    """Where the full original lives (reduced-artifacts/ or tool-outputs/), if anywhere."""
    read_back: str | None = None
    """The read-back address given in the hint: the ``result:N:B`` ref or the artifact path."""

    @property
    def saved_tokens(self) -> int:
        return self.tokens_before - self.tokens_after

    @classmethod
    def fast(cls, **values: Any) -> ToolResultDecision:
        """Build from values the engine already validated (its hot loop; every field given)."""
        return cls.from_values(values)

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> ToolResultDecision:
        """Like :meth:`fast`, taking ownership of ``values`` (the caller never changes it again)."""
        obj = _new(cls)
        _set(obj, "__dict__", values)
        # every field is given, so all instances share one fields-set (pydantic copies it on copy)
        _set(obj, "__pydantic_fields_set__", _ALL_SET)
        _set(obj, "__pydantic_extra__", None)
        _set(obj, "__pydantic_private__", None)
        return obj


_new, _set = object.__new__, object.__setattr__
_DECISION_FIELDS = frozenset(ToolResultDecision.model_fields)
_ALL_SET = set(_DECISION_FIELDS)


class FrozenRendering(_Frozen):
    """A reduced/trimmed rendering reused byte-for-byte by later requests (R-RED-9)."""

    ref: str
    digest: str
    """sha256 of the original text (a changed original invalidates the rendering)."""
    text: str
    action: Action
    rule: str
    category: Category
    reason: str
    artifact_path: str | None = None
    read_back: str | None = None
    since_request: int


class ReductionState(_Frozen):
    """What persists between requests, keyed by call id (stable under compaction index shifts)."""

    frozen: Mapping[str, FrozenRendering] = {}
    """Call id → rendering that later requests reuse exactly."""
    externalized: Mapping[str, str] = {}
    """Call id → ``tool-outputs/`` file of results over the inline budget."""
    reduced_inputs: frozenset[str] = frozenset()
    """Input keys (tool + canonical arguments) whose output was reduced at least once."""
    recalled_inputs: frozenset[str] = frozenset()
    """Input keys re-issued after a reduction: their newest output is protected (recalled_input_protect)."""
    requests: int = 0
    """Requests reduced so far with this state."""
    has_prefix: bool = False
    """A reduced prefix exists (enables the min_incremental_saved_tokens reuse rule)."""
    grace_used: int = 0
    """Wrap-up grace requests already granted since todos completed."""


class DecisionSource(Protocol):
    """Where a result's decisions come from when they were not given as a tuple: the engine's
    view of one request, turned into decisions only when they are read."""

    count: int
    """How many decisions (one per tool result of the request)."""

    def all(self) -> tuple[ToolResultDecision, ...]: ...

    def of_messages(self, indices: Iterable[int]) -> dict[int, list[ToolResultDecision]]: ...


class ReductionResult(_Frozen):
    """The request messages to send, one decision per tool result, and the updated state.

    The decisions are built when first read (:attr:`decisions`): a replay reads only those of the
    messages that changed since the previous step (:meth:`decisions_of`), so a step does not build
    one decision per tool result of the whole history."""

    messages: tuple[Message, ...]
    state: ReductionState
    tokens_before: int
    tokens_after: int
    _decisions: tuple[ToolResultDecision, ...] | None = PrivateAttr(default=None)
    _source: DecisionSource | None = PrivateAttr(default=None)
    _since: ReductionState | None = PrivateAttr(default=None)
    _touched: tuple[int, ...] = PrivateAttr(default=())

    @classmethod
    def of(cls, *, messages: tuple[Message, ...], decisions: tuple[ToolResultDecision, ...] | DecisionSource,
           state: ReductionState, tokens_before: int, tokens_after: int) -> ReductionResult:
        """A result with its decisions as a tuple or as a source read when they are wanted."""
        # the engine's own values: the messages it was given or rebuilt, no validation pass
        result = constructed(cls, {"messages": messages, "state": state,
                                   "tokens_before": tokens_before, "tokens_after": tokens_after})
        private = result.__pydantic_private__
        assert private is not None
        private["_decisions" if isinstance(decisions, tuple) else "_source"] = decisions
        return result

    @property
    def decisions(self) -> tuple[ToolResultDecision, ...]:
        """One decision per tool result, in the order of the results in :attr:`messages`."""
        if self._decisions is None:
            self._decisions = self._source.all() if self._source is not None else ()
        return self._decisions

    @property
    def decision_count(self) -> int:
        if self._decisions is None and self._source is not None:
            return self._source.count
        return len(self.decisions)

    def decisions_of(self, indices: Iterable[int]) -> dict[int, list[ToolResultDecision]]:
        """The decisions of the results in the messages at ``indices``, by message index (in
        result order; a message without results has no entry)."""
        if self._decisions is None and self._source is not None:
            return self._source.of_messages(indices)
        wanted = set(indices)
        out: dict[int, list[ToolResultDecision]] = {}
        for d in self.decisions:
            if d.message_index in wanted:
                out.setdefault(d.message_index, []).append(d)
        return out

    def changed_since(self, state: ReductionState | None) -> tuple[int, ...] | None:
        """Indices of the messages whose text or decisions may differ from the result that returned
        ``state`` (every other message and its decisions' action, rule and ref are the same), or
        None when this result was decided in full or from another state."""
        return self._touched if state is not None and self._since is state else None

    def mark_continuation(self, state: ReductionState, touched: tuple[int, ...]) -> None:
        """Record that this result continues the one that returned ``state`` and that only the
        messages at ``touched`` may differ from it (set once by the engine, before it returns)."""
        self._since, self._touched = state, touched
