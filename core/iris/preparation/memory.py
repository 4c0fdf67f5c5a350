"""The step memory of a replay: what the preparation stages may reuse from the steps before.

A replay prepares one request per step, and most of each request is the previous one plus a few
messages. The stages keep what they derived in a :class:`StepMemory` that the replay walker owns
and hands to every step through :attr:`PipelineSettings.memory
<iris.preparation.state.PipelineSettings.memory>`. Each stage has its own named slot:

* ``tokens``: message token counts (the estimator caches each distinct text);
* ``marks`` and ``views``: the final request's per-message marks, hashes and mark JSON;
* ``fold``: the index of repeated bodies and the folded messages;
* ``trim``: the trim stage's previous run and the messages it shortened;
* ``reduction``: the reduction engine's own memory (:class:`~iris.reduction.ReductionMemory`).

A memory never changes a record, only how much work a step takes. Keys are values: a message
mark, a session message index or a history position plus what was applied, always checked
against the part an entry was made from (the same object, or an equal one), never an object id.
Without ``incremental`` the replay walker gives every step a fresh memory; only the token counts stay.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import lineage
from ..lineage import shared_prefix
from ..reduction import ReductionMemory, ReductionState
from ..session import Message
from ..tokens import TokenEstimator
from .part import Origin, Part, PartView
from .records import MarkKind, MessageMark, canonical_json

__all__ = ["FoldIndex", "FoldMemory", "JoinedTexts", "MarkMemory", "MarkTexts", "PartHashes", "PartView", "Rewrite", "StepMemory",
           "TokenCache", "TrimMemory", "TrimRun", "ViewMemory", "shared_prefix", "starts_with"]

MarkKey = tuple[str, int | None, str | None, tuple[MarkKind, ...]]


def starts_with(history: Sequence[Part], prefix: Sequence[Part]) -> bool:
    """``history`` starts with the parts of ``prefix`` (the same objects, or equal ones)."""
    n = len(prefix)
    if n > len(history):
        return False
    k = min(lineage.known(prefix, history), n)
    # tuple comparison: the same object is equal without a call, so a shared prefix is one C loop
    return k == n or tuple(history[k:n]) == tuple(prefix[k:])


class TokenCache:
    """Message token counts. The estimator caches each distinct text, so a message whose texts
    were seen before costs no encoder call; ``counted`` says how many messages were counted."""

    def __init__(self, estimator: TokenEstimator) -> None:
        self.estimator = estimator
        self.counted = 0
        """How many messages were counted: a replay's cost indicator (each recorded or
        rewritten message is counted once, when its part is made)."""

    def message(self, message: Message) -> int:
        self.counted += 1
        return self.estimator.message_tokens(message)

    def text(self, text: str) -> int:
        return self.estimator.count(text)


@dataclass(eq=False)
class MarkMemory:
    """One ``MessageMark`` per distinct value (most repeat every step) and, once a request's hash
    is read, its canonical JSON."""

    by_value: dict[MarkKey, MessageMark] = field(default_factory=dict[MarkKey, MessageMark])
    texts: dict[MarkKey, str] = field(default_factory=dict[MarkKey, str])

    def get(self, origin: Origin, history_index: int | None, key: str | None,
            marks: tuple[MarkKind, ...]) -> MessageMark:
        value = (origin, history_index, key, marks)
        mark = self.by_value.get(value)
        if mark is None:
            mark = self.by_value[value] = MessageMark(origin=origin, history_index=history_index,
                                                      key=key, marks=marks)
        return mark

    def text(self, part: Part) -> str:
        """The canonical JSON of ``part``'s mark."""
        value = (part.origin, part.history_index, part.key, part.marks)
        text = self.texts.get(value)
        if text is None:
            mark = self.get(*value)
            text = self.texts[value] = canonical_json(mark.model_dump(mode="json"))
        return text


class JoinedTexts:
    """Texts made from the leading parts of a request, kept as their UTF-8 joined by ``sep`` in
    one buffer that grows in place, with where each text ends: the hash of a request reads its
    leading texts straight from the buffer (nothing is joined, copied or visited per part)."""

    __slots__ = ("buf", "ends", "sep", "state")

    def __init__(self, sep: bytes, buf: bytearray | None = None, ends: array[int] | None = None,
                 state: tuple[bytes, int, Any] | None = None) -> None:
        self.sep = sep
        self.buf = buf if buf is not None else bytearray()
        self.ends = ends if ends is not None else array("q")
        self.state = state
        """``(header, count, sha)``: the hash state after ``header`` and the first ``count``
        texts, the latest :meth:`hashed` made (the next request continues from it)."""

    def __len__(self) -> int:
        return len(self.ends)

    def extend(self, texts: Sequence[str]) -> None:
        if not texts:
            return
        encoded = [t.encode() for t in texts]
        sep, pos = self.sep, len(self.buf)
        if self.ends:
            self.buf += sep
            pos += len(sep)
        self.buf += sep.join(encoded)
        for e in encoded:
            pos += len(e)
            self.ends.append(pos)
            pos += len(sep)

    def feed(self, sha: Any, count: int) -> None:
        """``sha.update`` with the first ``count`` texts joined by ``sep``."""
        if count > 0:
            with memoryview(self.buf) as view, view[:self.ends[count - 1]] as part:
                sha.update(part)

    def hashed(self, header: bytes, count: int) -> Any:
        """A SHA-256 fed ``header`` then the first ``count`` texts joined by ``sep``, continued
        from the state the previous call left when it holds a leading part of that text."""
        state, ends = self.state, self.ends
        if state is not None and state[0] == header and state[1] <= count:
            sha, start = state[2].copy(), ends[state[1] - 1] if state[1] else 0
        else:
            sha, start = hashlib.sha256(header), 0
        if count > 0:
            with memoryview(self.buf) as view, view[start:ends[count - 1]] as part:
                sha.update(part)
        if state is None or state[0] != header or state[1] <= count:
            self.state = (header, count, sha.copy())
        return sha

    def cut(self, count: int) -> JoinedTexts:
        """A copy holding the first ``count`` texts."""
        count = min(count, len(self.ends))
        end = self.ends[count - 1] if count else 0
        state = self.state if self.state is not None and self.state[1] <= count else None
        return JoinedTexts(self.sep, self.buf[:end], self.ends[:count], state)


class PartHashes:
    """The content hashes of a request's messages, fed to the request's hash when it is first
    computed (a replay that never reads a request's hash never hashes its messages). Each part's
    hash is computed once and kept joined, in request order, on the :class:`ViewMemory` the
    request was made from, so the next request's hash reads the ones it shares."""

    __slots__ = ("views",)

    def __init__(self, views: ViewMemory) -> None:
        self.views = views

    def feed(self, sha: Any, count: int) -> None:
        views = self.views
        texts = views.hashes
        if len(texts) < count:
            texts.extend([p.digest for p in views.placed[len(texts):count]])
        texts.feed(sha, count)


class MarkTexts:
    """The canonical JSON of a request's marks, kept like :class:`PartHashes`."""

    __slots__ = ("marks", "views")

    def __init__(self, views: ViewMemory, marks: MarkMemory) -> None:
        self.views, self.marks = views, marks

    def hashed(self, header: bytes, count: int) -> Any:
        """A SHA-256 fed ``header`` then the first ``count`` mark texts (the request's hash
        begins with them, so the next request's hash continues from this one's state)."""
        views, text = self.views, self.marks.text
        texts = views.mark_json
        if len(texts) < count:
            texts.extend([text(p) for p in views.placed[len(texts):count]])
        return texts.hashed(header, count)


@dataclass(eq=False)
class ViewMemory:
    """The latest final request's parts and their views, one list per piece of a view (shown
    message, mark) plus the parts in request order: the next request reuses the views of the
    parts it starts with (a part's view depends on nothing but the part)."""

    parts: tuple[Part, ...] = ()
    shown: list[Message] = field(default_factory=list[Message])
    marks: list[MessageMark] = field(default_factory=list[MessageMark])
    placed: list[Part] = field(default_factory=list[Part])
    """The parts, as a list that grows in place while requests only grow (a request made from
    it reads only its own leading entries)."""
    hashes: JoinedTexts = field(default_factory=lambda: JoinedTexts(b'","'))
    """The content hashes of the leading parts of ``placed`` read so far (:class:`PartHashes`)."""
    mark_json: JoinedTexts = field(default_factory=lambda: JoinedTexts(b","))
    """The mark JSON of the leading parts of ``placed`` read so far (:class:`MarkTexts`)."""
    shared: int = 0
    """How many leading parts the latest request shares with the one before it."""
    sent: tuple[tuple[Message, ...], tuple[MessageMark, ...]] = ((), ())
    """The messages and marks of the request made before the latest one (their first
    ``shared`` items are the latest request's)."""


@dataclass(eq=False)
class FoldIndex:
    """Latest foldable copy of each body, built over a history that only grows between
    compactions: a new copy of a body re-examines only the messages holding it."""

    parts: list[Part] = field(default_factory=list["Part"])
    """The history the index was built from (a later history must start with these parts)."""
    source: tuple[Part, ...] | None = None
    """The history the index was last extended with (its parts are ``parts``)."""
    latest: dict[str, str] = field(default_factory=dict[str, str])
    """Body text → ``result:N:B`` of its latest foldable copy."""
    names: dict[str, str] = field(default_factory=dict[str, str])
    """Call id → tool name."""
    holders: dict[str, list[int]] = field(default_factory=dict[str, list[int]])
    """Body text → positions of the history parts holding it as a tool result."""
    folds: dict[int, tuple[tuple[int, str], ...]] = field(
        default_factory=dict[int, tuple[tuple[int, str], ...]])
    """History position → (block index, read-back reference) of each fold of that message."""


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A part a stage rewrote: what it was made from, what was applied, and the result."""

    source: Part
    applied: object
    """The fold list or the reduction engine's message and its actions."""
    result: Part

    def made_from(self, source: Part, applied: object) -> bool:
        return ((self.source is source or self.source == source)
                and (self.applied is applied or self.applied == applied))


@dataclass(eq=False)
class FoldMemory:
    """The fold stage's index and its folded parts, by session message index (a folded part is
    the same object at every step while its message and folds stay the same)."""

    index: FoldIndex = field(default_factory=FoldIndex)
    folded: dict[int, Rewrite] = field(default_factory=dict[int, Rewrite])


@dataclass(frozen=True, slots=True)
class TrimRun:
    """The trim stage's previous run: the reduction state it returned, its input and output
    history, the token delta of the messages it shortened, how many and where."""

    reduction_state: ReductionState
    history_in: tuple[Part, ...]
    history_out: tuple[Part, ...]
    delta: int
    changed: int
    shrunk: frozenset[int]


RewriteKey = tuple[str, int | None, str | None, int]
"""A part's origin, session message index, key, and its history position when it has no index."""


@dataclass(eq=False)
class TrimMemory:
    """The trim stage's previous run and the parts it shortened (the same object at every step
    while the part, the engine's message and the actions stay the same)."""

    previous: TrimRun | None = None
    shortened: dict[RewriteKey, Rewrite] = field(default_factory=dict[RewriteKey, Rewrite])
    sent: tuple[tuple[Part, ...], tuple[Message, ...]] = ((), ())
    """The latest history handed to the reduction engine and its messages."""

    def messages(self, history: tuple[Part, ...]) -> tuple[Message, ...]:
        """The messages of ``history``; those of the parts it shares with the previous one are
        taken over as a whole."""
        parts, messages = self.sent
        k = shared_prefix(parts, history)
        out = messages[:k] + tuple(p.message for p in history[k:])
        lineage.note(out, messages, k)
        self.sent = (history, out)
        return out


@dataclass(eq=False)
class StepMemory:
    """Everything the stages of one replay carry from step to step, one slot per stage."""

    tokens: TokenCache
    marks: MarkMemory = field(default_factory=MarkMemory)
    views: ViewMemory = field(default_factory=ViewMemory)
    fold: FoldMemory = field(default_factory=FoldMemory)
    trim: TrimMemory = field(default_factory=TrimMemory)
    reduction: ReductionMemory = field(default_factory=ReductionMemory)

    @classmethod
    def start(cls, estimator: TokenEstimator) -> StepMemory:
        return cls(tokens=TokenCache(estimator))

    def fresh(self) -> StepMemory:
        """An empty memory keeping only the token counts (a step decided from scratch)."""
        return StepMemory(tokens=self.tokens)

    def request_views(self, parts: tuple[Part, ...]) -> ViewMemory:
        """The views of ``parts`` (:meth:`Part.view <iris.preparation.state.Part.view>`), one list
        per piece; those of the previous request's leading parts are taken over as a whole (the
        same part objects from step to step: a replay's history only grows)."""
        old = self.views
        k = shared_prefix(old.parts, parts)
        marks = self.marks
        added = parts[k:]
        if k == len(old.parts):  # the request only grew: the lists grow in place (a request
            views = old          # made from them reads only its own leading entries)
            views.parts = parts
        else:
            views = ViewMemory(parts, old.shown[:k], old.marks[:k], old.placed[:k],
                               old.hashes.cut(k), old.mark_json.cut(k), sent=old.sent)
        if added:
            shown, shown_marks = zip(*[part.view(marks) for part in added])
            views.shown.extend(shown)
            views.marks.extend(shown_marks)
            views.placed.extend(added)
        views.shared = k
        self.views = views
        return views

    def request_pieces(self, views: ViewMemory) -> tuple[PartHashes, MarkTexts]:
        """What :meth:`PreparedRequest.with_pieces` reads the request's hash from, computed when
        the hash is first read (each part's hash and each mark's JSON once)."""
        return PartHashes(views), MarkTexts(views, self.marks)
