"""What a checkpoint carries verbatim (R-CMP-7, R-CMP-9): recent user messages, session
constraints and the bounded previous checkpoint body.

Session constraints are found in real user messages: lines with standing-instruction wording
("always", "never", "must", "do not", "don't", "only", "from now on", "make sure", 必须, 不要, 请勿,
始终). A later constraint that says "instead", "actually", "no longer", "from now on" or 改为 and
shares at least two content words with an earlier one supersedes it (the earlier one is marked).
Over capacity the earliest and the latest are kept, the middle ones counted as omitted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..frozen import UNCHANGED
from ..session import Message
from ..tokens import TokenEstimator
from .checkpoint import CheckpointSection, RetainedMessage, SessionConstraint

__all__ = ["MAX_CONSTRAINTS", "PREVIOUS_CHECKPOINT_TOKENS", "bound_previous_checkpoint",
           "is_real_user_message", "merge_constraints", "select_retained", "session_constraints",
           "with_current_request"]

MAX_CONSTRAINTS = 12
PREVIOUS_CHECKPOINT_TOKENS = 2000
_CONSTRAINT = re.compile(r"\b(always|never|must|do not|don't|only use|from now on|make sure)\b"
                         r"|必须|不要|请勿|始终", re.IGNORECASE)
_SUPERSEDES = re.compile(r"\b(instead|actually|no longer|from now on)\b|改为", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]{3,}")
_STOP = {"always", "never", "must", "make", "sure", "only", "from", "instead", "actually",
         "longer", "don't", "this", "that", "with", "please", "should", "when"}


def is_real_user_message(message: Message) -> bool:
    """Typed by a person: a user message with text, not synthetic, not a checkpoint."""
    return (message.role == "user" and not message.synthetic
            and not message.is_compaction_summary and bool(message.text.strip()))


def select_retained(head: Sequence[Message], *, budget: int, estimator: TokenEstimator,
                    current_request: str | None, carried: Sequence[RetainedMessage] = (),
                    ) -> tuple[RetainedMessage, ...]:
    """Newest to oldest real user messages within ``budget`` tokens of text (oldest first out).

    ``carried`` are the previous checkpoint's retained messages, older than the head, so recent
    instructions survive a compaction whose head holds no user message. A message identical to
    the current request becomes one de-duplication note; the oldest message that does not fit is
    cut at a character boundary and marked truncated.
    """
    texts = [m.text.strip() for m in head if is_real_user_message(m)]
    texts = [r.text for r in carried if not r.duplicate_of_current] + texts
    kept: list[RetainedMessage] = []
    used = 0
    deduped = False
    for text in reversed(texts):
        if current_request is not None and text == current_request.strip():
            if not deduped:
                kept.append(RetainedMessage(text="[This message repeats the current request "
                                            "verbatim; see the current request.]",
                                            duplicate_of_current=True))
                deduped = True
            continue
        cost = estimator.count(text)
        if used + cost <= budget:
            kept.append(RetainedMessage(text=text))
            used += cost
            continue
        room = budget - used
        if room > 0:
            kept.append(RetainedMessage(text=_cut_to_tokens(text, room, estimator),
                                        truncated=True))
        break
    return tuple(reversed(kept))


def with_current_request(sections: Sequence[CheckpointSection], history: Sequence[Message],
                         current_request: str | None, *, budget: int, estimator: TokenEstimator,
                         ) -> tuple[CheckpointSection, ...]:
    """``sections`` with ``## Current User Request`` taken from the real message: the current
    request, else the latest real user message of ``history`` (seed 002: the summary cannot
    override the latest message). Verbatim within ``budget`` tokens (``retain_recent_tokens``,
    the allowance for verbatim user text), else cut and marked ``[truncated]``; the full text stays
    in the request or the archive. Unchanged when there is no real message or no such section."""
    text = (current_request or "").strip() or next(
        (m.text.strip() for m in reversed(history) if is_real_user_message(m)), "")
    if not text:
        return tuple(sections)
    if estimator.count(text) > budget:
        text = _cut_to_tokens(text, budget, estimator) + "\n[truncated]"
    return tuple(s.evolve(**UNCHANGED, body=text) if s.title == "Current User Request" else s
                 for s in sections)


def _cut_to_tokens(text: str, tokens: int, estimator: TokenEstimator) -> str:
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix (in characters) within the token budget
        mid = (lo + hi + 1) // 2
        if estimator.count(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def _key(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def session_constraints(messages: Sequence[Message]) -> tuple[SessionConstraint, ...]:
    """Constraint lines of real user messages, in order, with supersession marked."""
    found: list[SessionConstraint] = []
    for message in messages:
        if not is_real_user_message(message):
            continue
        for line in message.text.splitlines():
            line = line.strip(" -*\t")
            standing = _CONSTRAINT.search(line) or _SUPERSEDES.search(line)
            if line and len(line) <= 400 and standing:
                found = _add(found, SessionConstraint(text=line))
    return tuple(found)


def _add(found: list[SessionConstraint], new: SessionConstraint) -> list[SessionConstraint]:
    if any(c.text == new.text for c in found):
        return found
    out = list(found)
    if _SUPERSEDES.search(new.text):
        key = _key(new.text)
        out = [c.evolve(**UNCHANGED, superseded=True)
               if not c.superseded and len(key & _key(c.text)) >= 2 else c for c in out]
    return [*out, new]


def merge_constraints(previous: Sequence[SessionConstraint], new: Sequence[SessionConstraint],
                      *, capacity: int = MAX_CONSTRAINTS,
                      ) -> tuple[tuple[SessionConstraint, ...], int]:
    """Carry constraints across compactions: earliest and latest kept over capacity."""
    merged: list[SessionConstraint] = []
    for c in (*previous, *new):
        existing = next((i for i, m in enumerate(merged) if m.text == c.text), None)
        if existing is None:
            merged = _add(merged, c)
        elif c.superseded:
            merged[existing] = c
    if len(merged) <= capacity:
        return tuple(merged), 0
    early = capacity // 2
    late = capacity - early
    return tuple(merged[:early] + merged[-late:]), len(merged) - capacity


def bound_previous_checkpoint(body: str, estimator: TokenEstimator,
                              budget: int = PREVIOUS_CHECKPOINT_TOKENS) -> str:
    """The previous checkpoint body within a fixed budget; a typed ``## Typed Checkpoint State``
    block is exempt and kept whole."""
    typed = ""
    marker = "## Typed Checkpoint State"
    if marker in body:
        body, rest = body.split(marker, 1)
        typed = marker + rest
    body = body.strip()
    if estimator.count(body) > budget:
        body = _cut_to_tokens(body, budget, estimator).rstrip() + "\n[previous checkpoint truncated]"
    return (body + ("\n\n" + typed.strip() if typed else "")).strip()
