"""Dynamic context snapshots (R-DYN-1…3): what a source contributes to one step.

A :class:`ContextSource` is bound once to the runner and may be called concurrently for different
sessions, so sources keep no per-call mutable state. A snapshot is the whole dynamic state of its
step: entries absent from it are not inherited from earlier steps, and snapshots are never appended
to the durable conversation.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from types import MappingProxyType
from typing import Protocol, cast, runtime_checkable

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from ..errors import ConfigError, PreparationError
from ..frozen import FrozenModel
from ..session import Session, StepSnapshot
from .positional import PositionalModel

__all__ = ["ContextBuildScope", "ContextContribution", "ContextSnapshot", "ContextSource",
           "RecordedContextSource", "StaticContextSource"]


_Frozen = FrozenModel


class ContextBuildScope(PositionalModel):
    """Which step a source is asked about: ``ContextBuildScope(session_id, run_id, step_index,
    workspace_root, run_input)``, positionally or by keyword; ``workspace_root`` may be a path."""

    session_id: StrictStr
    run_id: StrictStr
    step_index: StrictInt = Field(ge=0)
    workspace_root: StrictStr | None = None
    run_input: StrictStr = ""
    """The text view of the run input (sources do not read the whole history themselves)."""

    @field_validator("workspace_root", mode="before")
    @classmethod
    def _path_text(cls, value: object) -> object:
        return os.fspath(cast("os.PathLike[str]", value)) if isinstance(value, os.PathLike) else value


class ContextContribution(PositionalModel):
    """One keyed piece of dynamic context; optional ones may be dropped under budget pressure.
    ``ContextContribution(key, text, required=True, priority=100)``."""

    key: StrictStr = Field(min_length=1)
    text: StrictStr
    required: StrictBool = True
    priority: StrictInt = 100
    """Lower priority is removed first (optional contributions only)."""


class ContextSnapshot(PositionalModel):
    """All contributions of one step; keys are unique (a duplicate is an error)."""

    contributions: tuple[ContextContribution, ...] = ()

    @model_validator(mode="after")
    def _unique_keys(self) -> ContextSnapshot:
        seen: dict[str, int] = {}
        for i, contribution in enumerate(self.contributions):
            if contribution.key in seen:
                # ConfigError passes through pydantic unchanged, with the offending position.
                raise ConfigError(f"duplicate contribution key {contribution.key!r} "
                                  f"(also at contributions[{seen[contribution.key]}])",
                                  field=f"contributions[{i}].key")
            seen[contribution.key] = i
        return self

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.contributions)


@runtime_checkable
class ContextSource(Protocol):
    """Anything with ``async collect(scope) -> ContextSnapshot``."""

    async def collect(self, scope: ContextBuildScope) -> ContextSnapshot: ...


class StaticContextSource:
    """The same contributions at every step of every session."""

    def __init__(self, contributions: Iterable[ContextContribution] = ()) -> None:
        self._snapshot = ContextSnapshot(contributions=tuple(contributions))

    async def collect(self, scope: ContextBuildScope) -> ContextSnapshot:
        return self._snapshot


def _to_snapshot(step: StepSnapshot) -> ContextSnapshot:
    return ContextSnapshot(contributions=tuple(
        ContextContribution(key=c.key, text=c.text, required=c.required, priority=c.priority)
        for c in step.contributions))


class RecordedContextSource:
    """Replays the per-step snapshots recorded in native session files (``context_snapshots``).

    Holds one or more sessions, keyed by session id. A step without a recorded snapshot gets an
    empty snapshot: nothing is carried over from earlier steps (R-DYN-2).
    """

    def __init__(self, sessions: Session | Iterable[Session]) -> None:
        sessions = (sessions,) if isinstance(sessions, Session) else tuple(sessions)
        table: dict[str, MappingProxyType[int, ContextSnapshot]] = {}
        for session in sessions:
            steps: dict[int, ContextSnapshot] = {}
            for i, step in enumerate(session.context_snapshots):
                if step.step_index in steps:
                    raise ConfigError(f"two snapshots recorded for step {step.step_index}",
                                      path=session.header.session_id, field=f"context_snapshots[{i}]")
                steps[step.step_index] = _to_snapshot(step)
            table[session.header.session_id] = MappingProxyType(steps)
        self._steps = MappingProxyType(table)

    def recorded_steps(self, session_id: str) -> tuple[int, ...]:
        return tuple(sorted(self._steps.get(session_id, {})))

    async def collect(self, scope: ContextBuildScope) -> ContextSnapshot:
        steps = self._steps.get(scope.session_id)
        if steps is None:
            raise PreparationError(f"no recorded context snapshots for session {scope.session_id!r}",
                                   stage="assembly", step=scope.step_index)
        import asyncio  # only sessions with recorded context snapshots need it

        await asyncio.sleep(0)  # a real source awaits I/O here; yield so concurrent calls interleave
        return steps.get(scope.step_index, ContextSnapshot())
