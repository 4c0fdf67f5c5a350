"""Walking a recorded session for the replay: a cursor over the recorded messages.

:class:`Walk` turns each recorded message into a counted :class:`Part` once as the replay reaches
it and hands the new parts to the step's :class:`~iris.preparation.carry.StepCarry` (the durable
history lives there, not here); it tracks runs, model switches and recorded compactions;
:class:`Collector` drives an async context source. (The replay's work folder is
:func:`iris.work_dir.claim_work_dir`.)
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, TypeVar

from ..compaction.usage import UsageTracker, context_bytes
from ..context import ContextContribution, escape_attribute
from ..reduction.todos import todos_all_completed
from ..reduction.toolkinds import ToolKindMap
from ..session import Message, Session, TextBlock, Usage
from .carry import StepCarry
from .records import UsageKind
from .state import Part, TokenCache

if TYPE_CHECKING:
    from ..context import ContextBuildInput

_T = TypeVar("_T")

__all__ = ["Collector", "Walk", "context_parts", "contribution_parts",
           "is_user_input", "provider_reading"]


def is_user_input(message: Message) -> bool:
    """A message a person typed: it starts a run (not a tool result, injection or summary)."""
    return (message.role == "user" and not message.synthetic and not message.is_compaction_summary
            and any(b.type != "tool_result" for b in message.content))


class Walk:
    """A cursor over the recorded session: what the messages reached so far say (position, runs,
    model and limits in use, recorded compactions passed, tools called, todo state). The durable
    history it appends to is the caller's :class:`StepCarry`; nothing outside writes here."""

    def __init__(self, cache: TokenCache, session: Session, *, baseline: bool = False) -> None:
        self.cache = cache
        self.baseline = baseline
        """True for the as-recorded baseline: a recorded compaction replaces the durable history
        with the context it provided (summary included). Otherwise the recorded compaction's
        output (the agent's summary, Codex replacement history) is left out of the replayed
        history: the replay keeps its own history and applies its own compaction policy."""
        self.recorded_tokens = 0
        """Local estimate of the history as the recorded agent sent it (recorded compactions
        applied, no engine reduction): what the calibration compares with the provider."""
        self.cuts_passed = 0
        """Recorded compactions passed so far (each opens a new provider window)."""
        self.left_out: list[int] = []
        """Session indices of recorded-compaction output left out of the replayed history."""
        self.switches = {sw.at_message: sw for sw in session.model_switches}
        self.recorded_cuts = {c.at_message for c in session.compactions}
        self.clears = {c.at_message for c in session.compactions if c.trigger == "clear"}
        """Where the user cleared the conversation (``/clear``): every replay's history restarts
        there, as the agent's did (a user action, not the agent's context policy)."""
        self.clears_passed = 0
        self.model = session.header.model
        self.limits = session.header.limits
        self.recorded_compaction = False
        """True once the walk passed a compaction the recorded agent made: from then on the
        provider measured a compacted context, not the replay's history."""
        self.called: set[str] = set()
        self.position = 0
        self.bytes = 0
        self.runs = 0
        self.run_input = ""
        self.kinds = ToolKindMap.for_dialect(session.header.tool_dialect)
        self.todos_done_at: int | None = None
        """Index of the latest todo call when it finished every item (None: open or none)."""
        self.interrupted_at = -1
        """Index of the latest user input or model switch: either ends the wrap-up grace."""

    @property
    def todos_completed(self) -> bool:
        """R-RED-9: the latest todo call completed the list and nothing new came since (a user
        question or a model switch resumes normal trimming, seed 002)."""
        return self.todos_done_at is not None and self.todos_done_at > self.interrupted_at

    def _todos(self, i: int, m: Message) -> None:
        """Only the new message is looked at: the replay never rescans the history for todos."""
        if i in self.switches or is_user_input(m):
            self.interrupted_at = i
        if any(self.kinds.kind(c.name) == "todo" for c in m.tool_calls):
            self.todos_done_at = i if todos_all_completed((m,), self.kinds) else None

    def advance(self, session: Session, upto: int, carry: StepCarry) -> StepCarry:
        """``carry`` with the recorded messages ``[position, upto)`` appended to its durable
        history (for the baseline, a recorded compaction replaces what came before it)."""
        new: list[Part] = []
        reset = False
        for i in range(self.position, upto):
            m = session.messages[i]
            if i in self.switches:
                self.model = self.switches[i].model
                self.limits = self.switches[i].limits or self.limits
            if m.is_compaction_summary or i in self.recorded_cuts:
                self.recorded_compaction = True
            if i in self.recorded_cuts:
                self.recorded_tokens = 0
                self.cuts_passed += 1
                if self.baseline or i in self.clears:
                    new, reset = [], True
                self.clears_passed += i in self.clears
            part = Part(m, self.cache.message(m), "history", i)
            self.recorded_tokens += part.tokens
            if not self.baseline and (m.is_compaction_summary
                                      or m.compaction_provided):
                self.left_out.append(i)
                continue
            new.append(part)
            self.called.update(c.name for c in m.tool_calls)
            self._todos(i, m)
            if is_user_input(m):
                self.runs += 1
                self.run_input = m.text
        self.bytes += context_bytes(session.messages[self.position:upto])
        self.position = upto
        return carry.with_messages(tuple(new), reset=reset)


def context_parts(context_input: ContextBuildInput | None, cache: TokenCache) -> tuple[Part, ...]:
    """The static context messages (context.yaml) as parts keyed by their position."""
    if context_input is None:
        return ()
    from ..context.build import ContextBuilder  # with its Jinja renderer: only for a context.yaml

    pairs = [(m.position, m.to_message()) for m in ContextBuilder().build(context_input).messages]
    return tuple(Part(m, cache.message(m), "context", None, position) for position, m in pairs)


def contribution_message(contribution: ContextContribution) -> Message:
    """How a selected dynamic contribution appears in the request: one synthetic user message."""
    text = (f'<context_contribution key="{escape_attribute(contribution.key)}">\n'
            f"{contribution.text}\n</context_contribution>")
    return Message(role="user", content=(TextBlock(text=text),), synthetic=True)


def contribution_parts(contributions: Sequence[ContextContribution], cache: TokenCache
                       ) -> tuple[Part, ...]:
    """This step's dynamic contributions as parts (the contribution kept as the payload)."""
    parts: list[Part] = []
    for i, c in enumerate(contributions):
        m = contribution_message(c)
        parts.append(Part(m, cache.message(m), "contribution", None, c.key, c.required,
                          c.priority, i, payload=c))
    return tuple(parts)


def provider_reading(tracker: UsageTracker, usage: Usage | None) -> tuple[int | None, UsageKind]:
    """What the provider said about this step's request: trusted usage, the tracker's frozen
    ``≈`` estimate (R-TOK-4), or nothing."""
    if usage is not None and usage.is_trusted:
        return usage.prompt_tokens, "trusted"
    if tracker.reading.kind == "estimated":
        return tracker.reading.tokens, "estimated"
    return None, "missing"


class Collector:
    """Runs the context source's coroutines on the replay's own event loop.

    Inside a running loop (a Jupyter cell, an async web handler) a second loop cannot run in the
    same thread, so the replay's loop then runs in a helper thread."""

    def __init__(self) -> None:
        import asyncio  # imported here: replays without a context source never start a loop

        try:
            asyncio.get_running_loop()
            nested = True
        except RuntimeError:
            nested = False
        self.loop = asyncio.new_event_loop()
        self.thread: threading.Thread | None = None
        if nested:
            self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                           name="iris-replay-context-source")
            self.thread.start()

    def run(self, coroutine: Coroutine[object, object, _T]) -> _T:
        if self.thread is None:
            return self.loop.run_until_complete(coroutine)
        import asyncio

        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        if self.thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join()
        self.loop.close()
