"""Handing preparations to the host (R-PREP-5): the full snapshot to an evidence sink, a small
``context.preparation`` event to the broker, and observation failures that never change execution.

A sink (the workbench's SQLite store, a JSON-lines writer, a list in a test) receives the record
and its final request and returns its own reference. Subscribers of the broker get only the
identity and the final metering. Anything a sink or a subscriber raises is caught and kept in
``Publisher.failures``; the replay goes on exactly as it would without observers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol, runtime_checkable

from ..frozen import FrozenModel
from .records import ContextPreparation, Phase, PreparedRequest

__all__ = ["Broker", "EvidenceSink", "ListSink", "PreparationEvent", "Publisher"]


@runtime_checkable
class EvidenceSink(Protocol):
    """Where full preparation snapshots go; ``save`` returns the sink's reference (or None)."""

    def save(self, preparation: ContextPreparation, request: PreparedRequest | None
             ) -> str | None: ...


class PreparationEvent(FrozenModel):
    """The broker event: identity and final metering only, never the snapshot itself."""

    event: Literal["context.preparation"] = "context.preparation"
    preparation_id: str
    phase: Phase
    step_index: int
    stage_count: int
    final_input_tokens: int
    input_budget: int

    @classmethod
    def of(cls, preparation: ContextPreparation) -> PreparationEvent:
        return cls(preparation_id=preparation.preparation_id, phase=preparation.phase,
                   step_index=preparation.step_index, stage_count=len(preparation.stages),
                   final_input_tokens=preparation.final_input_tokens,
                   input_budget=preparation.input_budget)


Subscriber = Callable[[PreparationEvent], object]


class Broker:
    """Fan-out of events to subscribers, in subscription order."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    @property
    def subscribed(self) -> bool:
        return bool(self._subscribers)

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def publish(self, event: PreparationEvent, on_error: Callable[[str], None]) -> None:
        for subscriber in self._subscribers:
            try:
                subscriber(event)
            except Exception as exc:  # noqa: BLE001 -- an observer's failure never changes execution
                on_error(f"subscriber {getattr(subscriber, '__name__', subscriber)!r}: "
                         f"{type(exc).__name__}: {exc}")


class ListSink:
    """A sink that keeps everything in memory (notebooks, tests, the replay's own result)."""

    def __init__(self) -> None:
        self.saved: list[tuple[ContextPreparation, PreparedRequest | None]] = []

    def save(self, preparation: ContextPreparation, request: PreparedRequest | None) -> str:
        self.saved.append((preparation, request))
        return preparation.preparation_id


class Publisher:
    """Sends each preparation to the sink and its event to the broker; swallows their failures."""

    def __init__(self, sink: EvidenceSink | None = None, broker: Broker | None = None) -> None:
        self.sink = sink
        self.broker = broker or Broker()
        self.failures: list[str] = []
        """One line per observation failure: ``step N: sink: …`` or ``step N: subscriber …``."""

    def publish(self, preparation: ContextPreparation, request: PreparedRequest | None
                ) -> str | None:
        step = preparation.step_index
        ref = None
        if self.sink is not None:
            try:
                ref = self.sink.save(preparation, request)
            except Exception as exc:  # noqa: BLE001 -- R-PREP-5: a failing sink never changes execution
                self.failures.append(f"step {step}: sink: {type(exc).__name__}: {exc}")
        if self.broker.subscribed:  # the event is made only for someone
            self.broker.publish(PreparationEvent.of(preparation),
                                lambda msg: self.failures.append(f"step {step}: {msg}"))
        return ref
