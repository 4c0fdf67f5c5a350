"""The loss record of one compaction (R-FID-1): which facts of the replaced span the checkpoint
and the retained messages kept, and which the rest of the session needed again.

A fact is *kept* when the checkpoint text or a retained message states it (by the rule of its
kind, :mod:`.matching`), and *needed later* when a message after the compaction mentions it (a
tool call's arguments, a person's text or the assistant's prose; tool results do not count), with
the step whose request or response first holds that mention. Besides the span's own statements, a
path a tool result of the span stated is a fact when a later tool call used it. A lost fact says
how the session got it back (:mod:`.recovery`). String matching only: a paraphrase is not a match,
and a fact the agent found again by re-reading still counts as lost (recovered, at a cost).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..frozen import FrozenModel
from ..session import Message, Session
from .facts import (
    FACT_KINDS,
    Fact,
    FactKind,
    Normaliser,
    extract_facts,
    message_mentions,
    result_paths,
    tool_inputs,
)
from .matching import Matcher
from .recovery import Recovery, ReturnedTexts, find_recovery

__all__ = ["FactFate", "KindRecall", "LossRecord", "applied_loss_record", "loss_record",
           "recorded_loss_records"]

class FactFate(FrozenModel):
    """What became of one fact of the replaced span."""

    fact: Fact
    kept: bool
    """Present in the checkpoint or a retained message."""
    needed_step: int | None = None
    """The step whose request or response first mentions it after the compaction (None: never)."""
    needed_message: int | None = None
    """Session index of that first mention."""
    recovery: Recovery | None = None
    """Lost and needed: how the session got it back before using it (None: never, or not lost)."""

    @property
    def needed_later(self) -> bool:
        return self.needed_step is not None

    @property
    def recovered_at_step(self) -> int | None:
        return None if self.recovery is None else self.recovery.step


class KindRecall(FrozenModel):
    """The counts of one fact kind."""

    facts: int = 0
    kept: int = 0
    needed_later: int = 0
    needed_later_kept: int = 0


class LossRecord(FrozenModel):
    """One compaction's loss record."""

    source: Literal["recorded", "replay"]
    """``recorded``: the agent's own compaction; ``replay``: one the replay applied."""
    step: int
    """The first step sent from the compacted context."""
    n: int
    """1 for the first compaction of its source."""
    span_messages: int
    """Session messages the compaction replaced."""
    checkpoint_chars: int
    fates: tuple[FactFate, ...]

    def kinds(self) -> dict[FactKind, KindRecall]:
        """Counts by kind, every kind present (zeros included), in ``FACT_KINDS`` order."""
        out: dict[FactKind, KindRecall] = {}
        for kind in FACT_KINDS:
            mine = [f for f in self.fates if f.fact.kind == kind]
            needed = [f for f in mine if f.needed_later]
            out[kind] = KindRecall(facts=len(mine), kept=sum(f.kept for f in mine),
                                   needed_later=len(needed),
                                   needed_later_kept=sum(f.kept for f in needed))
        return out

    @property
    def needed_later(self) -> int:
        return sum(f.needed_later for f in self.fates)

    @property
    def needed_later_kept(self) -> int:
        return sum(f.needed_later and f.kept for f in self.fates)

    @property
    def recall_needed_later(self) -> float | None:
        """Kept share of the needed-later facts (None when none was needed later)."""
        return self.needed_later_kept / self.needed_later if self.needed_later else None

    def recall_of(self, *kinds: FactKind) -> float | None:
        """The needed-later recall over ``kinds`` only (None when none of them was needed)."""
        needed = [f for f in self.fates if f.needed_later and f.fact.kind in kinds]
        return sum(f.kept for f in needed) / len(needed) if needed else None

    def lost(self, *, never_recovered_first: bool = False) -> tuple[FactFate, ...]:
        """Needed later but not kept, in the order they were needed (the never-recovered ones
        first with ``never_recovered_first``)."""
        return tuple(sorted((f for f in self.fates if f.needed_later and not f.kept),
                            key=lambda f: (never_recovered_first and f.recovery is not None,
                                           f.needed_step or 0, f.fact.kind, f.fact.key)))

    @property
    def never_recovered(self) -> int:
        """Lost facts the session never got back before using them."""
        return sum(f.recovery is None for f in self.lost())

    @property
    def recovery_tokens(self) -> int:
        """Tokens of the texts that brought the lost facts back (each text counted once)."""
        texts = {(f.recovery.message, f.recovery.how): f.recovery.tokens
                 for f in self.lost() if f.recovery is not None}
        return sum(texts.values())

    def as_json(self) -> dict[str, Any]:
        """The ``fidelity`` object of ``--summary-json`` (docs/fidelity.md)."""
        recall = self.recall_needed_later
        return {"kinds": {k: v.model_dump(mode="json") for k, v in self.kinds().items()},
                "needed_later": self.needed_later, "needed_later_kept": self.needed_later_kept,
                "recall_needed_later": None if recall is None else round(recall, 4)}


def _texts(norm: Normaliser, text: str) -> tuple[str, str]:
    """``text`` normalised, and the same lower-cased (instructions keep their line breaks)."""
    flat = norm.text(text)
    return flat, "\n".join(norm.text(line) for line in text.splitlines()).lower()


def loss_record(session: Session, *, source: Literal["recorded", "replay"], n: int, step: int,
                span: Sequence[int], checkpoint: str, retained: Sequence[int],
                resume_message: int) -> LossRecord:
    """The loss record of a compaction that replaced the session messages ``span`` with
    ``checkpoint``, kept ``retained`` raw and resumed with session message ``resume_message``
    (everything from there on is *later*)."""
    messages = session.messages
    norm = Normaliser(session.header.workspace_root)
    matcher = Matcher()
    facts = extract_facts(((i, messages[i]) for i in span), workspace_root=session.header.workspace_root)
    facts += _used_result_facts(messages, span, facts, norm, matcher)
    kept_text = "\n".join([checkpoint, *(_full_text(messages[i]) for i in retained)])
    kept_flat, kept_lower = _texts(norm, kept_text)
    later = [(i, *_texts(norm, t)) for i in range(resume_message, len(messages))
             if (t := message_mentions(messages[i]))]
    firsts = [b.assistant_message for b in session.index.batches]
    returned = ReturnedTexts(messages, norm)
    fates: list[FactFate] = []
    for fact in facts:
        kept = matcher.found(fact, kept_flat, kept_lower)
        where = next((i for i, flat, lower in later if matcher.found(fact, flat, lower)), None)
        recovery = (find_recovery(returned, fact, resume=resume_message, needed=where,
                                  firsts=firsts, matcher=matcher)
                    if where is not None and not kept else None)
        fates.append(FactFate(fact=fact, kept=kept, needed_message=where, recovery=recovery,
                              needed_step=None if where is None else bisect.bisect_left(firsts, where)))
    return LossRecord(source=source, step=step, n=n, span_messages=len(span),
                      checkpoint_chars=len(checkpoint), fates=tuple(fates))


def _used_result_facts(messages: Sequence[Message], span: Sequence[int], facts: Sequence[Fact],
                       norm: Normaliser, matcher: Matcher) -> tuple[Fact, ...]:
    """The paths first stated by a tool result of ``span`` (not already ``facts``) that a later
    tool call's arguments use, anywhere after that result."""
    known = {f.key for f in facts if f.kind == "paths"}
    candidates: dict[str, int] = {}
    for i in span:
        for key in result_paths(messages[i], norm):
            if not any(k == key or k.endswith("/" + key) or key.endswith("/" + k) for k in known):
                known.add(key)
                candidates.setdefault(key, i)
    if not candidates:
        return ()
    first = min(candidates.values())
    inputs = [(i, norm.text(t)) for i in range(first + 1, len(messages))
              if (t := tool_inputs(messages[i]))]
    starts = [i for i, _ in inputs]
    out: list[Fact] = []
    for key, at in candidates.items():
        fact = Fact(kind="paths", text=key, key=key, message=at, from_result=True)
        tail = "/".join(key.rstrip("/").split("/")[-2:])
        for _, text in inputs[bisect.bisect_right(starts, at):]:
            if tail in text and matcher.found(fact, text, ""):
                out.append(fact)
                break
    return tuple(sorted(out, key=lambda f: f.message))


def _full_text(message: Message) -> str:
    """Everything a retained message puts in front of the model (results included)."""
    return "\n".join([message.text, message_mentions(message)])


def recorded_loss_records(session: Session, step_of: Callable[[int], int | None] | None = None
                          ) -> tuple[LossRecord, ...]:
    """The loss record of each compaction the agent recorded: its summary is the checkpoint, and
    the messages the compaction put in place (Codex's replacement history, marked
    ``compaction_provided``) are retained; Claude Code retains none. ``step_of`` maps a
    compaction's ``at_message`` to its step (default: the first step whose response comes after
    it)."""
    firsts = [b.assistant_message for b in session.index.batches]
    messages = session.messages
    out: list[LossRecord] = []
    start = 0
    for n, c in enumerate(session.compactions, start=1):
        step = step_of(c.at_message) if step_of is not None else bisect.bisect_left(firsts, c.at_message)
        placed = _placed(messages, c.at_message)
        summary = next((i for i in placed if messages[i].is_compaction_summary), None)
        text = c.summary or (messages[summary].text if summary is not None else "")
        resume = placed.stop if placed else c.at_message
        out.append(loss_record(session, source="recorded", n=n, step=step or 0,
                               span=range(start, c.at_message), checkpoint=text or "",
                               retained=[i for i in placed if i != summary],
                               resume_message=resume))
        start = c.at_message
    return tuple(out)


def _placed(messages: Sequence[Message], at: int) -> range:
    """The messages a recorded compaction put in place from ``at``: its summary and the messages
    it provided, up to the first message the session recorded after them."""
    end = at
    while end < len(messages) and (messages[end].is_compaction_summary
                                   or messages[end].compaction_provided):
        end += 1
    return range(at, end)


def applied_loss_record(session: Session, *, n: int, step: int, archived: Sequence[int],
                        first_kept: int | None, checkpoint: str) -> LossRecord:
    """The loss record of a compaction a replay applied at ``step``: it archived the session
    messages ``archived``, wrote ``checkpoint`` and kept the raw tail from session message
    ``first_kept`` (None: no raw tail) up to the step's response, where *later* begins."""
    batches = session.index.batches
    resume = batches[step].assistant_message if step < len(batches) else len(session.messages)
    retained = range(first_kept, resume) if first_kept is not None else ()
    return loss_record(session, source="replay", n=n, step=step, span=archived,
                       checkpoint=checkpoint, retained=retained, resume_message=resume)
