"""Context-policy trimming of old bodies (R-POL-2), applied after the reduction rules.

Only when the policy is enabled and ``context_read`` is available in the step. A result is trimmed
when reduction kept it for no protecting reason, it lies outside the most recent
``preserve_recent_tool_groups`` complete tool groups, its group is closed, it is not an error, it is
reducible, and its body is longer than ``old_result_preview_chars``. The trimmed body is bounded by
``old_result_preview_chars`` for every kind: the category summary when the output has a structured
shape, the summary is shorter and it fits; otherwise the first ``old_result_preview_chars``
characters of that summary (or of the output) and a note (0 keeps only the note); the engine
appends the read-back hint naming the
``result:N:B`` reference (the committed original stays readable with ``context_read``, so nothing is
archived).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..context.policy import ContextPolicy
from ..tokens import TokenEstimator
from .classify import SummaryRenderer, Verdict
from .render import Rendering, render_base

if TYPE_CHECKING:
    from .tracker import Item

__all__ = ["PROTECTING_RULES", "plan_trims"]

#: Kept-by rules that also protect a result from trimming (the reason it was kept still holds).
PROTECTING_RULES = frozenset({
    "not_reducible", "current_read", "high_risk_protect", "diff_protect", "recalled_input_protect",
    "error_result", "diagnostics_protect", "shell_read_only_age_turns", "min_incremental_saved_tokens",
    "wrap_up_grace",
})
_SHAPE_RENDER: dict[str, SummaryRenderer] = {
    "search": "search", "json": "json", "diff": "diff", "shell_success": "shell_success",
    "shell_log": "shell_log", "read": "read_like", "web_fetch": "read_like", "skill": "skill"}


def _trim_text(it: Item, policy: ContextPolicy, est: TokenEstimator) -> tuple[str, str] | None:
    """The trimmed body, bounded by ``old_result_preview_chars`` whatever the result kind: the
    category summary when it saves tokens and fits, else the first characters of that summary
    (or of the output) plus a note; None when nothing smaller results."""
    shape, text = it.info.shape, it.info.text
    original = est.count(text)
    n = policy.old_result_preview_chars
    source, what = text, "output"
    render = _SHAPE_RENDER.get(shape)
    if render:
        summary = render_base(Verdict("trimmed", "old_body_trim", shape, "", render=render), it.info)
        if est.count(summary) < original:
            if len(summary) <= n:
                return summary, f"{shape} summary"
            source, what = summary, f"{shape} summary"
    shown = min(n, len(source))
    note = (f"[Older {it.info.tool_name.lower()} output trimmed by the context policy; "
            f"{len(text):,} characters, the first {shown:,} of its {what} shown]")
    preview = f"{source[:n]}\n{note}" if n else note
    how = f"preview of {n} characters" + (f" of the {what}" if what != "output" else "")
    return (preview, how) if est.count(preview) < original else None


def plan_trims(items: list[Item], policy: ContextPolicy, est: TokenEstimator) -> None:
    """Turn eligible kept results into ``trimmed`` ones (in place on the items)."""
    keep = policy.preserve_recent_tool_groups
    for it in items:
        v = it.verdict
        if v is None or v.action != "kept" or it.frozen is not None or v.rule in PROTECTING_RULES:
            continue
        if not it.group_closed or it.group_rank < keep or it.info.facts.is_error or not it.info.reducible:
            continue
        if len(it.info.text) <= policy.old_result_preview_chars:
            continue
        trimmed = _trim_text(it, policy, est)
        if trimmed is None:
            continue
        text, how = trimmed
        it.verdict = Verdict("trimmed", "old_body_trim", v.category,
                             f"outside the {keep} most recent complete tool groups (group rank "
                             f"{it.group_rank}) and not protected (reduction: {v.rule}) → {how} + read-back "
                             f"hint", render="trim")
        it.rendering = Rendering(text, None, False)
