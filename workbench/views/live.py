"""The words of the live view (R-LIVE-1): how close a followed session is to its agent's own
compaction line, and the line ``workbench watch`` prints per update."""

from __future__ import annotations

from typing import Literal, Protocol

__all__ = ["line_caption", "line_level", "update_line"]


class AgentLineLike(Protocol):
    """What the caption needs (``workbench.services.live.AgentLine``)."""

    @property
    def agent(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def tokens(self) -> int | None: ...
    @property
    def responses(self) -> int: ...


class UpdateLike(Protocol):
    """What the update line needs (``workbench.services.live.LiveUpdate``)."""

    @property
    def path(self) -> str: ...
    @property
    def session_id(self) -> str: ...
    @property
    def created(self) -> bool: ...
    @property
    def replaced(self) -> str | None: ...
    @property
    def responses(self) -> int: ...
    @property
    def written(self) -> int: ...
    @property
    def waiting_bytes(self) -> int: ...
    @property
    def replay_steps(self) -> int | None: ...
    @property
    def seconds(self) -> float: ...


def line_level(tokens: int | None, line: int) -> Literal["none", "ok", "near", "over"]:
    """``over`` at or past the line (the agent compacts before its next request), ``near`` from 90 %
    of it, ``ok`` below, ``none`` without a provider count yet."""
    if tokens is None or line <= 0:
        return "none"
    if tokens >= line:
        return "over"
    return "near" if tokens >= 0.9 * line else "ok"


def line_caption(agent: AgentLineLike) -> str:
    """E.g. "Live · 118 responses · last request 151,204 of Claude Code's compaction line 167,000
    (91%, 15,796 to go)"."""
    head = f"Live · {agent.responses:,} responses"
    if agent.tokens is None:
        return f"{head} · no provider count yet; {agent.agent} compacts at {agent.line:,}"
    share = agent.tokens / agent.line if agent.line else 0.0
    where = (f"{agent.line - agent.tokens:,} to go" if agent.tokens < agent.line
             else "at or past it: the agent compacts before its next request")
    return (f"{head} · last request {agent.tokens:,} of {agent.agent}'s compaction line "
            f"{agent.line:,} ({share:.0%}, {where})")


def update_line(update: UpdateLike) -> str:
    """The line ``workbench watch`` prints for one update."""
    verb = "imported" if update.created else "updated"
    replay = ("" if update.replay_steps is None
              else f", replay 'default' {update.replay_steps:,} steps")
    waiting = (f", waiting for a line being written ({update.waiting_bytes:,} bytes)"
               if update.waiting_bytes else "")
    figures = (f"({update.responses:,} responses, {update.written:,} messages written{replay}"
               f"{waiting}; {update.seconds:.2f} s)")
    if update.replaced is not None:
        where = (f"stored as a new session {update.session_id}" if update.created
                 else f"its content is already stored as session {update.session_id}")
        return (f"new session: {update.path} no longer extends the stored session "
                f"{update.replaced}, which is kept as it was with its replays; {where} {figures}")
    return f"{verb}: {update.path} -> {update.session_id} {figures}"
