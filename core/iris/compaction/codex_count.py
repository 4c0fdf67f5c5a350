"""What Codex adds to the provider's count before it compares with its auto-compact limit.

codex-rs decides automatic compaction on ``ContextManager::get_total_token_usage``: the last
response's ``total_tokens`` (input + output), plus a local estimate of the encrypted reasoning of
earlier turns (every reasoning item before the last user message, which the provider's count does
not include), plus a local estimate of the items recorded after the last response (tool outputs, a
new user message). Each reasoning item is estimated from the length of its base64
``encrypted_content``: ``(chars × 3/4 − 650)`` bytes, ``bytes / 4`` tokens rounded up. On a real
Codex 0.104 rollout this reproduces the agent's compaction at the same call (docs/profiles.md).

A rollout that records its reasoning items without ``encrypted_content`` (the 0.141–0.142
rollouts of ../shared/corpus: id and an empty summary only) still had it in Codex's memory, and
Codex counted it; the count then stands in the reasoning tokens the provider reported for that
response (``last_token_usage.reasoning_output_tokens``), the size of the reasoning the item
encrypts.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..session import Message, ThinkingBlock

__all__ = ["earlier_reasoning_tokens", "reasoning_item_tokens", "response_reasoning_tokens"]

#: Bytes codex-rs subtracts from a decoded reasoning item (its fixed envelope).
_ENVELOPE_BYTES = 650


def reasoning_item_tokens(encrypted_chars: int) -> int:
    """Codex's estimate of one reasoning item from its ``encrypted_content`` length."""
    decoded = max(encrypted_chars * 3 // 4 - _ENVELOPE_BYTES, 0)
    return -(-decoded // 4)


def response_reasoning_tokens(message: Message) -> int:
    """Codex's estimate of one response's reasoning items: their ``encrypted_content`` when the
    rollout recorded it, else the reasoning tokens the provider reported for the response
    (``reasoning_output_tokens``; 0 when neither is recorded). A content no longer than Codex's
    fixed envelope is no encrypted item (a secret scanner's ``REDACTED`` in its place)."""
    recorded = [block.encrypted_chars for block in message.content
                if isinstance(block, ThinkingBlock) and block.encrypted_chars
                and block.encrypted_chars * 3 // 4 > _ENVELOPE_BYTES]
    if recorded:
        return sum(reasoning_item_tokens(chars) for chars in recorded)
    raw = message.usage.raw if message.usage is not None else None
    reported = raw.get("reasoning_output_tokens") if isinstance(raw, dict) else None
    return reported if isinstance(reported, int) and reported > 0 else 0


def earlier_reasoning_tokens(messages: Sequence[Message]) -> int:
    """Codex's estimate of the encrypted reasoning before the last user message (0 without a
    user message or without recorded reasoning): :func:`response_reasoning_tokens` of every
    response before it."""
    last_user = next((i for i in range(len(messages) - 1, -1, -1)
                      if messages[i].role == "user"), None)
    if last_user is None:
        return 0
    return sum(response_reasoning_tokens(message) for message in messages[:last_user]
               if message.role == "assistant")
