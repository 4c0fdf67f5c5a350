"""Pluggable summarisers (R-PREP-7): extractive (offline, the default), recorded, remote.

The remote one, ``OpenAICompatibleSummariser``, lives in :mod:`.remote` (retries, circuit breaker,
counted calls, cache).

Every summariser answers a :class:`SummaryRequest` with a :class:`SummaryResult` whose ``kind`` the
UI shows, so an extractive checkpoint is never mistaken for a model's summary. Failures are
:class:`~iris.errors.SummariserError` (timeouts: :class:`SummaryTimeout`); ``compact`` turns them
into rejected attempts.
"""

from __future__ import annotations

import re
from typing import Literal, Protocol, runtime_checkable

from ..errors import SummariserError
from ..frozen import FrozenModel
from ..session import Message, Session, Usage
from .checkpoint import REQUIRED_SECTIONS, SummaryInvalid, validate_summary
from .config import CheckpointForm
from .evidence import evidence_allowance
from .extract import extractive_sections

__all__ = [
    "OWN_COMPACTION_STEPS",
    "ExtractiveSummariser",
    "RecordedSummariser",
    "Summariser",
    "SummariserKind",
    "SummaryRequest",
    "SummaryResult",
    "SummaryTimeout",
]


class SummaryTimeout(SummariserError):
    """The summariser did not answer within ``timeout_seconds``."""


class SummaryRequest(FrozenModel):
    """Everything a summariser may use: the rendered prompt and the structured head."""

    system_prompt: str
    """The rendered ``compaction`` template."""
    input_text: str
    """The rendered ``compaction_input`` template (the reduced, bounded head)."""
    head: tuple[Message, ...]
    """The head being archived (unreduced), for summarisers that read messages directly."""
    current_request: str | None = None
    required_sections: tuple[str, ...] = REQUIRED_SECTIONS
    max_tokens: int
    profile: str = "continuation"
    previous_checkpoint: str | None = None
    session_constraints: tuple[str, ...] = ()
    step_index: int | None = None
    """The replay step being prepared, when known (the recorded summariser places summaries by
    step: one is never used before the step it was written at)."""
    checkpoint_form: CheckpointForm = "structured"
    """``compaction.checkpoint_form``: with ``summary`` forms a summary the recorded agent wrote
    may be used as written (:attr:`SummaryResult.verbatim`)."""


class SummaryResult(FrozenModel):

    text: str
    usage: Usage | None = None
    kind: SummariserKind
    model: str | None = None
    note: str = ""
    """How the summary was chosen, when that matters to the reader (the recorded summariser
    says which recorded summary it reused, or why it fell back); shown in the records."""
    verbatim: bool = False
    """The recorded agent's own summary of this compaction, used as written: the checkpoint is
    that text (``summary`` checkpoint forms only), not checked for the required sections."""


#: A replay compacting this many steps after the agent's compaction still replays that
#: compaction: the agent's summary is its output (R-TWIN-4).
OWN_COMPACTION_STEPS = 1

SummariserKind = Literal["extractive", "recorded", "remote"]
"""What fills a checkpoint; a summariser declares its kind (persisted as the re-run's label)."""


@runtime_checkable
class Summariser(Protocol):
    """Writes the summary of a compaction; ``kind`` names it in records and stored re-runs."""

    @property
    def kind(self) -> str: ...

    def summarise(self, request: SummaryRequest, *, timeout_seconds: float) -> SummaryResult: ...


#: A reasoning tag quoted from the session's own text (a user asking about ``<think>`` blocks).
_QUOTED_TAG = re.compile(r"<(/?)(think|thinking|reasoning)>", re.IGNORECASE)


def _join(sections: dict[str, str]) -> str:
    """The sections as one summary. The text is the session's own, quoted: a reasoning tag in it
    is written ``‹think›``, so the summary is not taken for a model's leaked reasoning (which the
    validator refuses in a model's summary)."""
    text = "\n\n".join(f"## {title}\n{sections[title]}" for title in REQUIRED_SECTIONS)
    return _QUOTED_TAG.sub(lambda m: f"‹{m.group(1)}{m.group(2)}›", text)


class ExtractiveSummariser:
    """Offline and deterministic: fills every section from the head's own text (no model)."""

    kind: SummariserKind = "extractive"

    def summarise(self, request: SummaryRequest, *, timeout_seconds: float) -> SummaryResult:
        sections = extractive_sections(request.head, current_request=request.current_request,
                                       constraints=request.session_constraints,
                                       previous_checkpoint=request.previous_checkpoint,
                                       evidence_chars=evidence_allowance(request.max_tokens))
        return SummaryResult(text=_join(sections), kind="extractive")


class RecordedSummariser:
    """Reuses a compaction summary recorded in an imported session (Claude Code
    ``isCompactSummary``, Codex ``compacted``).

    In a replay (the request names its step) the step whose request first carried a summary is
    the step of the agent's compaction that wrote it. When the replay compacts at that step or
    the next (:data:`OWN_COMPACTION_STEPS`), the summary is the output of the compaction being
    replayed (R-TWIN-4): with a ``summary`` checkpoint form it is used as written
    (:attr:`SummaryResult.verbatim`). Any other compaction uses the nearest summary written
    **before** the cut, so an earlier compaction never uses it (R-REAL-6).

    A summary recorded later than the head being archived holds facts from the future of the
    step being compacted, so it is never used: the nearest earlier readable summary is taken,
    and when there is none the checkpoint is filled extractively (``kind="extractive"``). Either
    way :attr:`SummaryResult.note` says which recorded summary was used or why none was, and the
    compaction records show it. Encrypted summaries (Codex remote compaction) and redaction
    placeholders are not readable: at such a compaction of the agent, and wherever the session
    holds no readable summary at all, the checkpoint is the offline (extractive) one, with a note
    saying so (R-TWIN-9).

    A recorded summary rarely has the required sections; it is then placed under
    ``## Progress`` and the other sections are filled extractively.
    """

    kind: SummariserKind = "recorded"

    def __init__(self, session: Session) -> None:
        self.session = session
        found = [(c.at_message, c.summary) for c in session.compactions if _readable(c.summary)]
        found += [(i, m.text) for i, m in enumerate(session.messages)
                  if m.is_compaction_summary and _readable(m.text)]
        self._recorded = sorted(found)
        readable = {at for at, _ in self._recorded}
        self._unreadable = sorted({c.at_message for c in session.compactions
                                   if not _readable(c.summary) and c.at_message not in readable}
                                  | {i for i, m in enumerate(session.messages)
                                     if m.is_compaction_summary and not _readable(m.text)})

    @property
    def available(self) -> bool:
        """True when the session holds at least one readable recorded summary."""
        return bool(self._recorded)

    def _position(self, head: tuple[Message, ...]) -> int | None:
        """Session index just after the head's last recorded message (messages the replay added,
        such as pressure notices, are skipped); None when no message of the head's end is found.
        The earliest match wins, so a repeated message never moves the cut into the future."""
        for j in range(len(head) - 1, max(len(head) - 20, 0) - 1, -1):
            found = self._find(head[max(j - 2, 0):j + 1])
            if found is not None:
                return found + 1
        return None

    def _find(self, tail: tuple[Message, ...]) -> int | None:
        messages, last = self.session.messages, tail[-1]
        for i in range(len(tail) - 1, len(messages)):
            if messages[i] == last and messages[i - len(tail) + 1:i + 1] == tail:
                return i
        return None

    def summarise(self, request: SummaryRequest, *, timeout_seconds: float) -> SummaryResult:
        if not self._recorded and not self._unreadable:
            raise SummariserError("the session has no recorded compaction summary")
        sections = extractive_sections(request.head, current_request=request.current_request,
                                       constraints=request.session_constraints,
                                       previous_checkpoint=request.previous_checkpoint)
        if request.step_index is not None and (own := self._own(request, sections)) is not None:
            return own
        if not self._recorded:
            note = ("the session's recorded compactions hold no readable summary (encrypted or "
                    "redacted): filled by the offline summariser")
            return SummaryResult(text=_join(sections), kind="extractive", note=note)
        cut = self._position(request.head)
        if cut is None:
            note = ("the archived head could not be placed in the recorded session, so no "
                    "recorded summary is known to be earlier: filled extractively")
            return SummaryResult(text=_join(sections), kind="extractive", note=note)
        earlier = [item for item in self._recorded if item[0] <= cut]
        if not earlier:
            later = self._recorded[0][0]
            note = (f"no recorded summary was written before message {cut} (the first one, "
                    f"message {later}, came later and is not used): filled extractively")
            return SummaryResult(text=_join(sections), kind="extractive", note=note)
        at, text = earlier[-1]
        note = f"recorded summary of message {at}, the nearest written before message {cut}"
        return _reuse(at, text or "", sections, note)

    def written_step(self, at: int) -> int | None:
        """The first step whose request carried the summary at message ``at`` (the step of the
        compaction that wrote it); None when no response follows it."""
        return next((k for k, b in enumerate(self.session.index.batches)
                     if b.assistant_message > at), None)

    def _own(self, request: SummaryRequest, sections: dict[str, str]) -> SummaryResult | None:
        """R-TWIN-4: the agent's own summary when the replay compacts at the agent's compaction
        (its step or the next); None otherwise (the summary before the cut is looked for)."""
        step = request.step_index
        assert step is not None
        own = [(w, at, text or "") for at, text in self._recorded
               if (w := self.written_step(at)) is not None
               and 0 <= step - w <= OWN_COMPACTION_STEPS]
        hidden = [(w, at) for at in self._unreadable
                  if (w := self.written_step(at)) is not None and 0 <= step - w <= OWN_COMPACTION_STEPS]
        if hidden and (not own or max(hidden) > max(own)[:2]):
            written, at = max(hidden)
            note = (f"the agent's own summary of its compaction at step {written} (message {at}) "
                    "is not readable (encrypted or redacted): filled by the offline summariser")
            return SummaryResult(text=_join(sections), kind="extractive", note=note)
        if not own:
            return None
        written, at, text = max(own)
        note = (f"the agent's own summary of its compaction at step {written} (message {at}), "
                "the output of the compaction being replayed")
        if request.checkpoint_form != "structured":
            return SummaryResult(text=text.strip(), kind="recorded", verbatim=True,
                                 note=f"{note}; used as written")
        return _reuse(at, text, sections, note)


def _reuse(at: int, text: str, sections: dict[str, str], note: str) -> SummaryResult:
    """A recorded summary as the checkpoint's summary: as it is when it has the required
    sections, else placed under ``## Progress`` with the other sections filled extractively."""
    try:
        validate_summary(text)
        return SummaryResult(text=text.strip(), kind="recorded", note=note)
    except SummaryInvalid:
        pass
    sections["Progress"] = (f"Recorded summary (message {at}, reused verbatim):\n"
                            f"{text.strip()}\n\n{sections['Progress']}")
    return SummaryResult(text=_join(sections), kind="recorded", note=note)


#: A redacted transcript's stand-in for hidden text (``[REDACTED_TEXT len=64 sha=7d53…]``).
_REDACTED = re.compile(r"\[REDACTED_[A-Z0-9_]+ len=\d+ sha=[0-9a-fA-F]+\]")


def _readable(text: str | None) -> bool:
    """A recorded summary with readable text (not an encrypted remote summary's placeholder, nor
    a redaction placeholder standing for the whole text)."""
    stripped = (text or "").strip()
    return bool(stripped) and not stripped.startswith("[compaction summary: encrypted") \
        and _REDACTED.fullmatch(stripped) is None

