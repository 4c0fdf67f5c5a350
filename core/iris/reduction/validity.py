"""Read validity (R-RED-6): which reads are still the current view of their file.

A read is **stale** when a later successful edit overlaps its displayed range, shifts lines above
it, has an unknown range, or when the file is later replaced as a whole or deleted; it is
**superseded** when one later successful read of the same file covers its whole range. Every other
successful read with a known path is current and is never reduced.

Paths match on whole-segment suffixes (``src/a.py`` matches ``/repo/src/a.py``); two distinct
absolute paths never match. A Claude-Code-style edit (``old_string``/``new_string``) has no line
numbers: its range is located by finding ``old_string`` in the read's lines (numbered as shown,
or, for a body without line numbers, counted from the start of the read's range); when it cannot
be found the edit counts as unknown-range, except that an edit that adds no lines and is absent from
a partial read leaves that read current.
"""

from __future__ import annotations

import posixpath
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from .facts import WHOLE_FILE_END, FileChange, ToolFacts, numbered_lines

__all__ = ["ReadEvent", "Validity", "ValidityIndex", "ValidityMemory", "analyze_read_validity",
           "same_file"]

Validity = tuple[Literal["stale", "superseded"], Literal["modified", "replaced", "superseded"]]
Shown = tuple[list[tuple[int, str]], list[str]]
"""The numbered lines of a read and their right-stripped texts."""
ReadKey = tuple[str, str]
"""A read's call id and its text: what its verdict is derived from besides the later events."""
Signature = tuple[int, str | None]
"""How many later events concern a read's file, and the call id of the newest of them."""


@dataclass(frozen=True)
class ReadEvent:
    """One tool result in conversation order, as validity analysis sees it."""

    call_id: str
    facts: ToolFacts
    text: str


@lru_cache(maxsize=4096)  # the same few paths are compared again at every new event on their file
def _segments(path: str) -> tuple[bool, tuple[str, ...]]:
    norm = posixpath.normpath(path.replace("\\", "/"))
    return norm.startswith("/"), tuple(s for s in norm.split("/") if s and s != ".")


def same_file(a: str, b: str) -> bool:
    """Whole-segment suffix match; distinct absolute roots never match."""
    abs_a, seg_a = _segments(a)
    abs_b, seg_b = _segments(b)
    if abs_a and abs_b:
        return seg_a == seg_b
    short, long = (seg_a, seg_b) if len(seg_a) <= len(seg_b) else (seg_b, seg_a)
    return bool(short) and long[-len(short):] == short


_SHOWN_CACHE = 64
"""Parsed reads kept per replay (the most recently used): an edit is located in the current reads
of its file, the same few reads again and again, but every read's parsed lines would cost more
memory than its text."""


@dataclass(eq=False)
class ValidityMemory:
    """What validity analysis reuses across the requests of one run (keys are content)."""

    shown: OrderedDict[tuple[str, int], Shown] = field(default_factory=OrderedDict[tuple[str, int], Shown])
    """(read text, first line) → its parsed lines, the :data:`_SHOWN_CACHE` most recent."""
    located: dict[tuple[str, int, str], tuple[int, int] | None] = field(
        default_factory=dict[tuple[str, int, str], tuple[int, int] | None])
    """(read text, first line, an edit's old text) → the lines it covers in that read, if shown."""
    final: dict[ReadKey, tuple[str, Validity, int]] = field(
        default_factory=dict[ReadKey, tuple[str, Validity, int]])
    """A stale read → (call id of the deciding event, verdict, its position when decided)."""
    signatures: dict[ReadKey, tuple[Signature, Validity | None]] = field(
        default_factory=dict[ReadKey, tuple[Signature, Validity | None]])
    """Any other read → the later events it was analysed against and the verdict then."""


def _shown(read_text: str, memory: ValidityMemory | None = None, first: int = 1) -> Shown:
    """The numbered lines of a read and their right-stripped texts (parsed once while recent); a
    body without line numbers is numbered from ``first``, the start of the read's range."""
    cache: OrderedDict[tuple[str, int], Shown] | None = None
    key = (read_text, first)
    if memory is not None:
        cache = memory.shown
        cached = cache.get(key)
        if cached is not None:
            cache.move_to_end(key)
            return cached
    shown = numbered_lines(read_text) or list(enumerate(read_text.splitlines(), start=first))
    hit: Shown = (shown, [t.rstrip() for _, t in shown])
    if cache is not None:
        cache[key] = hit
        if len(cache) > _SHOWN_CACHE:
            cache.popitem(last=False)
    return hit


def _locate(old_text: str, read_text: str, memory: ValidityMemory | None = None,
            first: int = 1) -> tuple[int, int] | None:
    """Pre-edit lines of ``old_text`` inside a read output, if it is shown there."""
    shown, texts = _shown(read_text, memory, first)
    want = [ln.rstrip() for ln in old_text.splitlines()] or [""]
    n = len(want)
    if n == 1:  # one line: the first shown line containing it
        i = next((i for i, t in enumerate(texts) if want[0] in t), None)
        return (shown[i][0], shown[i][0]) if i is not None else None
    head, tail, middle = want[0], want[-1], want[1:-1]
    # a block: first line ends with its first line, last starts with its last, the rest equal
    for i in range(len(texts) - n + 1):
        if (texts[i].endswith(head) and texts[i + n - 1].startswith(tail)
                and texts[i + 1:i + n - 1] == middle):
            return shown[i][0], shown[i + n - 1][0]
    return None


def _edit_invalidates(read: ReadEvent, change: FileChange, several: bool,
                      memory: ValidityMemory) -> str | None:
    """``modified``/``replaced`` when this change invalidates the read, else None."""
    if change.deleted or change.whole_file:
        return "replaced"
    first, last = read.facts.read_range or (1, WHOLE_FILE_END)
    start, end, shift = change.start, change.end, change.shift
    if start is None and change.old_text is not None:
        key = (read.text, first, change.old_text)
        located = memory.located
        found = (located[key] if key in located else
                 located.setdefault(key, _locate(change.old_text, read.text, memory, first)))
        if found:
            start, end = found
        elif shift == 0 and last < WHOLE_FILE_END and not several:
            return None  # not shown in this partial read and no lines moved
    if start is None or end is None:
        return "modified"
    if start <= last and end >= first:
        return "modified"
    if shift != 0 and start < first:
        return "modified"  # lines moved above the read: its line numbers are wrong now
    if several and shift != 0:
        return "modified"
    return None


def analyze_read_validity(events: Iterable[ReadEvent],
                          memory: ValidityMemory | None = None) -> dict[str, Validity]:
    """Call id → (``stale``/``superseded``, why) for every read that is no longer current.

    With a ``memory`` (a replay), a verdict, once reached, is kept while the event that decided it
    is still later in the conversation (events only accumulate), and a current read is re-analysed
    only when a new event on a file of the same name appears.
    """
    index = ValidityIndex(memory)
    return {cid: v for cid, v in index.add(events).items() if v}


def _basename(path: str) -> str:
    return posixpath.basename(path.replace("\\", "/"))


class ValidityIndex:
    """The events of a conversation kept across requests that only append results (a replay).

    :meth:`add` appends new events and re-derives only the reads of the file names those events
    touch; every other read keeps its verdict (no new later event can concern it), which is what
    re-running :func:`analyze_read_validity` over all events would also give.
    """

    def __init__(self, memory: ValidityMemory | None = None) -> None:
        self.memory = ValidityMemory() if memory is None else memory
        self.ordered: list[ReadEvent] = []
        self.by_name: dict[str, list[int]] = {}
        """File name → positions of the (successful) events naming it."""
        self.reads: dict[str, list[int]] = {}
        """File name → positions of the reads whose validity is analysed."""

    def add(self, events: Iterable[ReadEvent]) -> dict[str, Validity | None]:
        """Append ``events``; call id → verdict (None: current) of every read re-derived."""
        touched: set[str] = set()
        for ev in events:
            i = len(self.ordered)
            self.ordered.append(ev)
            if ev.facts.is_error:
                continue
            names = {ev.facts.path} if ev.facts.kind == "read" else {c.path for c in ev.facts.changes}
            for name in names:
                if name:
                    base = _basename(name)
                    self.by_name.setdefault(base, []).append(i)
                    touched.add(base)
            if ev.facts.kind == "read" and ev.facts.path:
                self.reads.setdefault(_basename(ev.facts.path), []).append(i)
        result: dict[str, Validity | None] = {}
        for base in sorted(touched):
            indices = self.by_name.get(base, [])
            for i in self.reads.get(base, ()):
                later_idx = indices[bisect_right(indices, i):]
                read = self.ordered[i]
                result[read.call_id] = _cached_verdict(
                    read, [self.ordered[j] for j in later_idx] if later_idx else [], later_idx,
                    self.ordered, self.memory)
        return result


def _cached_verdict(read: ReadEvent, later: list[ReadEvent], later_idx: list[int],
                    ordered: list[ReadEvent], memory: ValidityMemory) -> Validity | None:
    """Stale is final (later events cannot undo it, nor change which edit decided); anything else is
    reused until a new event on a file of the same name appears."""
    key = (read.call_id, read.text)
    final = memory.final.get(key)
    if final is not None:
        decider, verdict, pos = final
        if later_idx and later_idx[0] <= pos < len(ordered) and ordered[pos].call_id == decider:
            return verdict
        if any(ordered[j].call_id == decider for j in later_idx):  # positions moved (compaction)
            return verdict
    signature = (len(later_idx), ordered[later_idx[-1]].call_id if later_idx else None)
    cached = memory.signatures.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1]
    found = _verdict(read, later, memory)
    verdict = found[1] if found else None
    if found and verdict and verdict[0] == "stale":
        pos = next(j for j in later_idx if ordered[j].call_id == found[0])
        memory.final[key] = (found[0], verdict, pos)
    else:
        memory.signatures[key] = (signature, verdict)
    return verdict


def _verdict(read: ReadEvent, later: list[ReadEvent],
             memory: ValidityMemory) -> tuple[str, Validity] | None:
    """(call id of the deciding event, verdict), or None while the read is current."""
    path = read.facts.path or ""
    changes = [(ev.call_id, c) for ev in later if ev.facts.kind != "read"
               for c in ev.facts.changes if same_file(c.path, path)]
    several = len(changes) > 1 and any(c.shift != 0 for _, c in changes)
    for call_id, change in changes:
        why = _edit_invalidates(read, change, several, memory)
        if why:
            return call_id, ("stale", "replaced" if why == "replaced" else "modified")
    first, last = read.facts.read_range or (1, WHOLE_FILE_END)
    for ev in later:
        if ev.facts.kind == "read" and ev.facts.path and same_file(ev.facts.path, path):
            f2, l2 = ev.facts.read_range or (1, WHOLE_FILE_END)
            if f2 <= first and l2 >= last:
                return ev.call_id, ("superseded", "superseded")
    return None
