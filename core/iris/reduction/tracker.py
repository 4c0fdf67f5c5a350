"""Incremental bookkeeping of the reduction engine across the requests of one replay.

A replay calls :func:`~iris.reduction.engine.reduce_request` once per step with the previous
history plus a few new messages and the state the previous call returned. The :class:`Tracker`
keeps what was derived from the history so far (results in order, calls and batches, closed tool
groups, repeated outputs, the newest output per input, read validity) and extends it with the new
messages only. Per request it names the results whose decision can differ from the previous
request (*dirty*):

* results new in this request;
* results whose age reached one of the configured age gates (a heap keyed by the batch at which
  each result's next gate fires);
* reads whose validity a new event on a file of the same name changed, earlier outputs that a new
  identical call made repeated, outputs whose recall protection changed;
* results of tool groups that closed or left the ``preserve_recent_tool_groups`` window;
* results reduced, trimmed, externalised or deferred by the previous request (frozen or re-gated
  now).

Every other result keeps its verdict and rendering; only its age moves. A history that does not
extend the one seen (a compaction, a fold), another state, configuration or encoding: the engine
starts a new tracker and that request is decided in full, as the first one is.
"""

from __future__ import annotations

import heapq
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from operator import is_
from typing import Any

from .. import lineage
from ..session import Message, ToolCallBlock, ToolResultBlock
from .classify import ResultInfo, Verdict
from .models import FrozenRendering, ReductionState, ToolResultDecision
from .render import Rendering
from .result_memory import ResultMemory, TrackerKey
from .validity import ReadEvent, Validity, ValidityIndex, ValidityMemory

__all__ = ["DecisionView", "Item", "Tracker"]

_EVENT_KINDS = ("read", "edit", "write", "delete")


class Item:
    """One tool result and what was decided for it at the latest request that touched it."""

    entry: ResultMemory
    """Set by ``Tracker._resolve`` before the item is classified."""
    info: ResultInfo
    """Set by ``Tracker._resolve`` before the item is classified."""
    __slots__ = (
        "age",
        "age_in_reason",
        "batch",
        "bi",
        "block",
        "defer",
        "due",
        "entry",
        "fresh",
        "frozen",
        "group",
        "group_closed",
        "group_rank",
        "info",
        "mi",
        "owed",
        "own_batch",
        "protected",
        "reason",
        "ref",
        "rendering",
        "repeated",
        "rules",
        "saved",
        "seq",
        "settled",
        "text",
        "validity",
        "vals",
        "verdict",
    )

    def __init__(self, seq: int, mi: int, bi: int, block: ToolResultBlock, own_batch: int | None) -> None:
        self.seq, self.mi, self.bi, self.block, self.own_batch = seq, mi, bi, block, own_batch
        self.ref = f"result:{mi}:{bi}"
        self.batch = 0
        self.group: int | None = None
        self.age = 0
        self.verdict: Verdict | None = None
        self.rules: Verdict | None = None
        """The rules' verdict of its latest decision (None: frozen, or reduction disabled)."""
        self.rendering: Rendering | None = None
        self.frozen: FrozenRendering | None = None
        self.group_closed = False
        self.group_rank = -1
        self.text = block.text
        self.validity: Validity | None = None
        self.repeated = False
        self.protected = False
        self.fresh = False
        """The rules reduced it at this request before the saving gate (re-gated next request)."""
        self.due: int | None = None
        self.saved = 0
        self.vals: dict[str, Any] = {}
        """Field values of its latest decision (reused with the new age while it stays clean)."""
        self.reason = ""
        self.age_in_reason = False
        self.settled = -1
        """The tracker's request number at which :attr:`vals` were settled."""
        self.defer: tuple[str, str] | None = None
        """A result the saving gate kept: its reason before and after the saving figure (the
        figure is the request's whole saving, so it changes while the result waits)."""
        self.owed = 0
        """The tokens a result the saving gate kept would save (its share of the request's)."""

    def reset(self) -> None:
        self.verdict, self.rendering, self.frozen, self.text = None, None, None, self.block.text
        self.rules = None
        self.defer = None

    def decision(self, view: DecisionView) -> ToolResultDecision:
        """This result's decision at the request of ``view`` (its settled values with that
        request's age, and saving figure when the saving gate keeps it)."""
        if self.settled == view.request:
            return ToolResultDecision.from_values(self.vals)
        age = max(view.batches - self.batch, 0)
        vals = self.vals.copy()  # never changed once a decision owns it: copy, then set the age
        vals["age"] = age
        if self.defer is not None:
            reason = f"{self.defer[0]}{view.saving:,}{self.defer[1]}"
            vals["reason"] = reason.replace("{age}", str(age)) if self.age_in_reason else reason
        elif self.age_in_reason:
            vals["reason"] = self.reason.replace("{age}", str(age))
        return ToolResultDecision.from_values(vals)


class DecisionView:
    """The decisions of one request, built when read. Valid until the tracker takes the next
    request: :meth:`Tracker.advance` first turns a view still held by someone into its tuple."""

    __slots__ = ("__weakref__", "_built", "batches", "by_msg", "count", "items", "request", "saving")

    def __init__(self, tracker: Tracker, request: int, saving: int) -> None:
        self.items, self.by_msg, self.count = tracker.items, tracker.by_msg, len(tracker.items)
        self.request, self.batches, self.saving = request, tracker.batches, saving
        self._built: tuple[ToolResultDecision, ...] | None = None

    def all(self) -> tuple[ToolResultDecision, ...]:
        if self._built is None:
            self._built = tuple(it.decision(self) for it in self.items[:self.count])
        return self._built

    def of_messages(self, indices: Iterable[int]) -> dict[int, list[ToolResultDecision]]:
        if self._built is not None:
            wanted = set(indices)
            out: dict[int, list[ToolResultDecision]] = {}
            for d in self._built:
                if d.message_index in wanted:
                    out.setdefault(d.message_index, []).append(d)
            return out
        return {mi: [it.decision(self) for it in self.by_msg[mi]] for mi in indices if mi in self.by_msg}


class Tracker:
    """What the engine derived from the history so far; extended in place by :meth:`advance`."""

    def __init__(self, key: TrackerKey,
                 info_of: Callable[[ToolCallBlock | None, ToolResultBlock], ResultMemory],
                 validity: ValidityMemory) -> None:
        self.key = key
        self._info_of = info_of
        """``(call block or None, result block) → ResultMemory`` (the engine's content cache)."""
        self.msgs: list[Message] = []
        self.batches = 0
        self.calls: dict[str, tuple[ToolCallBlock, int, int]] = {}
        """Call id → (call block, assistant message index, batch); the first declaration wins."""
        self.items: list[Item] = []
        self.by_id: dict[str, Item] = {}
        self.by_msg: dict[int, list[Item]] = {}
        self.unsafe = False
        """Two results share a call id, or a result came before its call: decide in full each time."""
        self.orphans: set[str] = set()
        self.open: dict[int, set[str]] = {}
        self.group_items: dict[int, list[Item]] = {}
        self.closed: list[int] = []
        self.pos: dict[int, int] = {}
        self.window: set[int] = set()
        self.unrepeated: dict[tuple[str, str], list[Item]] = {}
        self.newest: dict[str, Item] = {}
        self.validity = ValidityIndex(validity)
        self.heap: list[tuple[int, int, Item]] = []
        self.carry: list[Item] = []
        self.new_reduced: frozenset[str] | None = None
        """Input keys the previous request added to ``reduced_inputs`` (None: not known yet)."""
        self.last: tuple[Message, ...] | None = None
        """The messages of the latest :meth:`advance` when they came as a tuple (``msgs`` holds
        the same objects)."""
        self.out: list[Message] = []
        self.before = 0
        self.saved = 0
        self.out_state: ReductionState | None = None
        self.requests = 0
        self.pending: dict[int, Item] = {}
        """Results the saving gate kept, by position, not decided again since (their verdicts
        hold while they stay clean; only the gate's outcome can change them)."""
        self.owed = 0
        """What the pending results would save together."""
        self.pending_gate: str | None = None
        """The gate that keeps the pending results."""
        self._view: weakref.ref[DecisionView] | None = None
        self.timed: list[Item] = []
        """Results the latest :meth:`advance` made dirty only because their age reached a gate."""

    def view(self, saving: int) -> DecisionView:
        """The decisions of the request just settled (see :class:`DecisionView`)."""
        view = DecisionView(self, self.requests, saving)
        self._view = weakref.ref(view)
        return view

    def extends(self, messages: Sequence[Message]) -> bool:
        """True when ``messages`` starts with exactly the message objects seen so far."""
        k = len(self.msgs)
        if k > len(messages):
            return False
        last = self.last
        if last is not None and len(last) == k and isinstance(messages, tuple):
            # the seen messages are those of ``last``: what is noted of their lineage counts
            return lineage.shared_prefix(last, messages) == k
        return all(map(is_, self.msgs, messages))  # stops at the shorter: the k seen

    def rank(self, it: Item) -> int:
        g = it.group
        return len(self.closed) - 1 - self.pos[g] if g is not None and g in self.pos else -1

    def advance(self, messages: Sequence[Message], state: ReductionState, keep: int
                ) -> tuple[dict[int, Item], frozenset[str], int]:
        """Take in the messages after those seen; (dirty results by position, recalled input keys,
        index of the first new message)."""
        held = self._view() if self._view is not None else None
        if held is not None:  # a result of the previous request is still read: fix its decisions
            held.all()
        self._view = None
        dirty: dict[int, Item] = {it.seq: it for it in self.carry}
        start, first_item = len(self.msgs), len(self.items)
        new_groups: list[int] = []
        for mi in range(start, len(messages)):
            msg = messages[mi]
            if msg.role == "assistant":
                ids: list[str] = []
                for block in msg.content:
                    if isinstance(block, ToolCallBlock) and block.id not in self.calls:
                        self.calls[block.id] = (block, mi, self.batches)
                        ids.append(block.id)
                        if block.id in self.orphans:
                            self.unsafe = True  # an earlier result's call appears only now
                if ids:
                    self.open[mi] = set(ids)
                    new_groups.append(mi)
                self.batches += 1
                continue
            for bi, block in enumerate(msg.content):
                if isinstance(block, ToolResultBlock):
                    it = Item(len(self.items), mi, bi, block, self.batches - 1 if self.batches else None)
                    self.items.append(it)
                    self.by_msg.setdefault(mi, []).append(it)
        self.msgs.extend(messages[start:])
        self.last = messages if isinstance(messages, tuple) else None
        new = self.items[first_item:]
        for it in new:
            self._resolve(it)
            dirty[it.seq] = it
        self._groups(new, new_groups, keep, dirty)
        self._repeats(new, dirty)
        self._validity(new, dirty)
        recalled = self._recall(new, state, dirty)
        self.timed = []
        while self.heap and self.heap[0][0] <= self.batches:
            due, seq, it = heapq.heappop(self.heap)
            if it.due == due:
                it.due = None
                if seq not in dirty:
                    self.timed.append(it)
                dirty[seq] = it
        return dirty, recalled, start

    def _resolve(self, it: Item) -> None:
        cid = it.block.call_id
        if cid in self.by_id:
            self.unsafe = True
        self.by_id[cid] = it
        call = self.calls.get(cid)
        if call is None:
            self.orphans.add(cid)
            it.batch = it.own_batch if it.own_batch is not None else 0
        else:
            it.batch, it.group = call[2], call[1]
            self.group_items.setdefault(call[1], []).append(it)
        it.entry = self._info_of(call[0] if call else None, it.block)
        it.info = it.entry.info

    def _groups(self, new: list[Item], new_groups: list[int], keep: int, dirty: dict[int, Item]) -> None:
        touched = set(new_groups)
        for g in new_groups:  # the group's own ids (the results seen so far are many more)
            self.open[g] = {cid for cid in self.open[g] if cid not in self.by_id}
        for it in new:
            if it.group is not None and it.group in self.open:
                self.open[it.group].discard(it.block.call_id)
                touched.add(it.group)
        for g in sorted(touched):
            if g in self.open and not self.open[g]:
                del self.open[g]
                self._close(g, dirty)
        window: set[int] = set(self.closed[-keep:]) if keep > 0 else set()
        for g in self.window - window:
            for it in self.group_items.get(g, ()):
                dirty[it.seq] = it
        self.window = window

    def _close(self, g: int, dirty: dict[int, Item]) -> None:
        if not self.closed or g > self.closed[-1]:
            self.pos[g] = len(self.closed)
            self.closed.append(g)
        else:  # an older group closed late: the positions after it move
            at = bisect_right(self.closed, g)
            self.closed.insert(at, g)
            for j in range(at, len(self.closed)):
                self.pos[self.closed[j]] = j
        for it in self.group_items.get(g, ()):
            dirty[it.seq] = it

    def _repeats(self, new: list[Item], dirty: dict[int, Item]) -> None:
        """An output is repeated once a later successful call has the same input and output."""
        for it in new:
            key = (it.info.input_key, it.info.digest)
            if it.info.facts.is_error:
                self.unrepeated.setdefault(key, []).append(it)
                continue
            for earlier in self.unrepeated.pop(key, ()):
                earlier.repeated = True
                dirty[earlier.seq] = earlier
            self.unrepeated[key] = [it]

    def _validity(self, new: list[Item], dirty: dict[int, Item]) -> None:
        events = [ReadEvent(it.info.call_id, it.info.facts, it.info.text) for it in new
                  if it.info.kind in _EVENT_KINDS]
        if not events:
            return
        for call_id, verdict in self.validity.add(events).items():
            it = self.by_id[call_id]
            if it.validity != verdict:
                it.validity = verdict
                dirty[it.seq] = it

    def _recall(self, new: list[Item], state: ReductionState, dirty: dict[int, Item]) -> frozenset[str]:
        """Recalled input keys (R-RED-9) and the protection flag of each key's newest output."""
        before: dict[str, Item | None] = {}
        for it in new:
            before.setdefault(it.info.input_key, self.newest.get(it.info.input_key))
            self.newest[it.info.input_key] = it
        candidates = set(before)
        if self.new_reduced is None:
            candidates |= self.newest.keys()
        else:
            candidates |= self.new_reduced
        added: set[str] = set()
        for key in candidates:
            it = self.newest.get(key)
            if (it is not None and key not in state.recalled_inputs and key in state.reduced_inputs
                    and it.info.refetchable and it.info.call_id not in state.frozen):
                added.add(key)
        recalled = state.recalled_inputs | added if added else state.recalled_inputs
        for key in candidates:
            old, it = before.get(key), self.newest.get(key)
            if old is not None and old is not it and old.protected:
                old.protected = False
                dirty[old.seq] = old
            if it is not None and it.protected != (key in recalled):
                it.protected = key in recalled
                dirty[it.seq] = it
        return frozenset(recalled)

    def schedule(self, it: Item, gates: tuple[int, ...]) -> None:
        """Remember the batch at which the result's age reaches its next gate."""
        if it.frozen is not None:
            return
        age = self.batches - it.batch
        at = bisect_right(gates, age)
        due = it.batch + gates[at] if at < len(gates) else None
        if due is not None and due != it.due:
            heapq.heappush(self.heap, (due, it.seq, it))
        it.due = due
