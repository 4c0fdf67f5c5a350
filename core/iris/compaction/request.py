"""The summary request (R-CMP-6, R-CMP-9): the head reduced, bounded and rendered.

The head is first reduced with the per-request reduction rules (§8) to save summary cost (the
archive stays the lossless original), then trimmed from the oldest end to the summariser's input
allowance (reference §2.3: ``budget − 4096 − clamp(budget/8, 2048, 4096) − max(budget/50, 1024)``,
at least ``budget/6``) with an omission note, then rendered through the ``compaction`` and
``compaction_input`` templates of the operation's own templates (a
:class:`~iris.prompts.PromptSnapshot`, or any :class:`~iris.prompts.PromptTemplates`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..session import Message, ThinkingBlock, ToolCallBlock, ToolResultBlock, block_text
from ..tokens import TokenEstimator
from .checkpoint import REQUIRED_SECTIONS
from .summarisers import SummaryRequest

if TYPE_CHECKING:  # iris.config and iris.prompts import this package
    from ..config import ContextConfig
    from ..prompts import PromptTemplates
    from ..reduction import ReductionMemory

__all__ = ["build_summary_request", "input_allowance", "reduce_head", "summary_messages"]


def reduce_head(head: Sequence[Message], config: ContextConfig, estimator: TokenEstimator | None = None,
                reduction_memory: ReductionMemory | None = None) -> tuple[Message, ...]:
    """The head after the reduction rules (R-CMP-6), on a scratch copy: no artifacts are written
    (``work_dir=None``) because the archive keeps the lossless original. The head is decided
    from scratch; ``reduction_memory`` (the run's) only lends its content caches, so results the
    run already described are not described again."""
    if not config.reduction.enabled or not head:
        return tuple(head)
    from ..reduction import reduce_request  # deferred: reduction imports are heavier

    memory = reduction_memory.shared_caches() if reduction_memory is not None else None
    return reduce_request(list(head), config=config.reduction, policy=config.context_policy,
                          work_dir=None, estimator=estimator, memory=memory).messages


def input_allowance(budget: int) -> int:
    """Tokens of archived messages the summariser may receive (reference §2.3)."""
    clamp = min(max(budget // 8, 2048), 4096)
    return max(budget - 4096 - clamp - max(budget // 50, 1024), budget // 6)


def summary_messages(head: Sequence[Message]) -> list[dict[str, Any]]:
    """``compaction_input`` message dicts: ``index``, ``role``, ``text``, ``tool_name``."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for i, message in enumerate(head):
        parts: list[str] = []
        tool: str | None = None
        for b in message.content:
            if isinstance(b, ToolCallBlock):
                names[b.id] = tool = b.name
                parts.append(f"call {b.name} {json.dumps(b.arguments, ensure_ascii=False, sort_keys=True)}")
            elif isinstance(b, ToolResultBlock):
                tool = names.get(b.call_id, "tool")
                parts.append(("[error] " if b.is_error else "") + b.text)
            elif not isinstance(b, ThinkingBlock):  # reasoning is not summary input
                parts.append(block_text(b))
        role = "tool" if message.tool_results else message.role
        out.append({"index": i, "role": role, "text": "\n".join(parts), "tool_name": tool})
    return out


def _trim(items: list[dict[str, Any]], allowance: int, estimator: TokenEstimator,
          ) -> tuple[list[dict[str, Any]], int]:
    total = sum(estimator.count(m["text"]) + 4 for m in items)
    dropped = 0
    while items[dropped:] and total > allowance and len(items) - dropped > 1:
        total -= estimator.count(items[dropped]["text"]) + 4
        dropped += 1
    return items[dropped:], dropped


def build_summary_request(head: Sequence[Message], *, config: ContextConfig,
                          prompts: PromptTemplates, profile: str,
                          budget: int, summary_max_tokens: int, estimator: TokenEstimator,
                          current_request: str | None, previous_checkpoint: str | None,
                          constraints: Sequence[str], archive_name: str,
                          reduction_memory: ReductionMemory | None = None) -> SummaryRequest:
    """Render the summary request for ``head`` (the previous checkpoint, if any, excluded)."""
    reduced = reduce_head(head, config, estimator, reduction_memory)
    items, dropped = _trim(summary_messages(reduced), input_allowance(budget), estimator)
    note = (f"[system] The earliest {dropped} messages of this segment were omitted from the "
            f"summary input; they remain verbatim in {archive_name}.") if dropped else ""
    system = prompts.render("compaction", {
        "required_sections": list(REQUIRED_SECTIONS), "summary_max_tokens": summary_max_tokens,
        "profile": profile, "session_constraints": list(constraints)})
    text = prompts.render("compaction_input", {
        "messages": items, "previous_checkpoint": previous_checkpoint or "",
        "omitted_note": note, "current_request": current_request or ""})
    return SummaryRequest(system_prompt=system, input_text=text, head=tuple(head),
                          current_request=current_request, max_tokens=summary_max_tokens,
                          profile=profile, previous_checkpoint=previous_checkpoint,
                          session_constraints=tuple(constraints))
