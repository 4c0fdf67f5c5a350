"""Typed access to the records a test reads: the stage, final request, decisions of one kind and
block text, each asserted present (a missing one fails the test and shows what was there)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from iris.preparation import ContextPreparation, PreparationFailure, PreparedRequest
from iris.preparation.records import StageName, StageRecord
from iris.replay import Replay
from iris.session import ContentBlock, TextBlock, ToolResultBlock

D = TypeVar("D")
T = TypeVar("T")


def stage_of(p: ContextPreparation, name: StageName) -> StageRecord:
    """The stage ``name`` of ``p`` (a preparation records all six)."""
    stage = p.stage(name)
    assert stage is not None, f"no {name} stage in step {p.step_index}: {[s.name for s in p.stages]}"
    return stage


def request_of(r: Replay, p: ContextPreparation) -> PreparedRequest:
    """The final request ``r`` kept for ``p``."""
    request = r.request(p)
    assert request is not None, f"no final request kept for step {p.step_index} ({p.phase})"
    return request


def failure_of(p: ContextPreparation) -> PreparationFailure:
    """Why step ``p`` failed or was cancelled."""
    assert p.error is not None, f"step {p.step_index} has no error ({p.phase})"
    return p.error


def of_kind(decisions: Iterable[object], kind: type[D]) -> list[D]:
    """The decisions of one class (``Reduced``, ``CompactionApplied``…), in order."""
    return [d for d in decisions if isinstance(d, kind)]


def block_text(block: ContentBlock) -> str:
    """The text of a text block or tool result (any other block fails the test)."""
    assert isinstance(block, TextBlock | ToolResultBlock), f"not a text block: {block!r}"
    return block.text


def all_present(values: Iterable[T | None]) -> list[T]:
    """The values, each asserted present (not None)."""
    seen = list(values)
    assert None not in seen, f"missing values: {seen}"
    return [v for v in seen if v is not None]
