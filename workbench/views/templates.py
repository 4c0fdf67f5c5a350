"""Pure helpers behind the Templates page: example variables per prompt id, live preview, diff.

The page edits a template inside a ``with_template`` snapshot (R-UI-4, R-PRM-3); these functions
turn (snapshot, id, edited source) into what the page shows, without Streamlit, so notebooks and
tests get the same results.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from iris.errors import TemplateError
from iris.prompts import PROMPT_IDS, PromptConfig, PromptSnapshot
from pydantic import BaseModel, ConfigDict

from ..text_diff import unified_diff

if TYPE_CHECKING:  # pandas only for the re-run table
    import pandas as pd

__all__ = ["TemplatePreview", "editor_prompts_root", "example_variables", "preview_template",
           "rerun_table", "template_diff"]

_TODOS = [
    {"id": "1", "content": "Reproduce the missing 31 March entry with a failing test", "status": "completed"},
    {"id": "2", "content": "Fix the month end boundary in tally/report.py", "status": "in_progress"},
    {"id": "3", "content": "Run the whole test suite", "status": "pending"},
]
_MEMORIES = [
    {"name": "date-ranges", "text": "Date ranges in tally are half-open: [start, end).",
     "summary": "date ranges are half-open"},
    {"name": "commit-style", "text": "The user prefers short imperative commit messages.",
     "summary": "short imperative commit messages"},
]

#: Realistic values for every declared variable (the bug-fix sample session's situation).
_EXAMPLES: dict[str, dict[str, Any]] = {
    "compaction": {
        "required_sections": ["Goal", "Progress", "Key Decisions", "File Evidence", "Constraints",
                              "Open Issues", "Next Step"],
        "summary_max_tokens": 4800, "profile": "continuation",
        "session_constraints": ["Never push without asking the user.", "Keep amounts as Decimal."]},
    "compaction_input": {
        "messages": [
            {"index": 1, "role": "user", "tool_name": None,
             "text": "The March report is missing money: the entry on the 31st isn't counted."},
            {"index": 2, "role": "assistant", "tool_name": None,
             "text": "I'll look at how the report selects the month's entries."},
            {"index": 3, "role": "tool", "tool_name": "Read",
             "text": "tally/report.py lines 40-52: end = date(year, month, days_in_month)"}],
        "previous_checkpoint": "", "omitted_note": "2 older tool outputs were reduced before summarising.",
        "current_request": "Now also add a regression test for February in leap years."},
    "memory_context": {"memories": _MEMORIES, "memory_root": ".iris/memory"},
    "memory_flush": {"memory_root": ".iris/memory",
                     "existing_memories": [{"name": m["name"], "summary": m["summary"]} for m in _MEMORIES],
                     "transcript": "user: the test command is `python -m pytest -q`, not tox.\n"
                                   "assistant: Noted; running python -m pytest -q."},
    "memory_dream": {"memories": _MEMORIES + [{"name": "ranges", "text": "Ranges are [start, end).",
                                               "summary": "duplicate"}], "max_memories": 20},
    "memory_overview": {"memories": _MEMORIES, "memory_root": ".iris/memory"},
    "memory_recall_instruction": {"tool_name": "memory_search", "memory_count": 2},
    "goal_context": {"objective": "The March report includes the entry of the 31st.",
                     "status": "active",
                     "success_criteria": ["tally report --month 2025-03 prints 287.84",
                                          "python -m pytest -q passes"],
                     "progress_notes": ["Found the off-by-one in tally/report.py"]},
    "goal_continuation": {"objective": "The March report includes the entry of the 31st.",
                          "remaining": ["Run the whole test suite"], "turns_used": 7, "max_turns": 30},
    "todo_context": {"todos": _TODOS},
    "todo_reminder": {"todos": _TODOS, "turns_since_update": 4},
    "skill_catalog_usage": {"tool_name": "load_skill",
                            "skills": [{"name": "release", "description": "Cut a release of tally"},
                                       {"name": "migrations", "description": "Write a data migration"}]},
    "tool_discovery_instruction": {"search_tool_name": "tool_search",
                                   "deferred_tools": [{"name": "web_fetch", "description": "Fetch a URL"},
                                                      {"name": "sql", "description": "Query the ledger DB"}]},
    "project_skill_update": {"skill_name": "testing", "current_skill": "Run `python -m pytest -q`.",
                             "lessons": ["Month-end bugs need a test on the last day of each month."]},
    "evolution_review": {"session_summary": "Fixed an off-by-one at month end in tally/report.py; "
                                            "the first fix failed a leap-year test.",
                         "outcome": "succeeded", "existing_skills": ["testing", "release"]},
}
assert set(_EXAMPLES) == set(PROMPT_IDS)


def example_variables(prompt_id: str) -> dict[str, Any]:
    """A fresh copy of the example variables for ``prompt_id`` (KeyError for unknown ids)."""
    return copy.deepcopy(_EXAMPLES[prompt_id])


def template_diff(original: str, edited: str, prompt_id: str) -> str:
    """Unified diff of a template edit ("" when unchanged)."""
    return unified_diff(original, edited, fromfile=f"saved/{prompt_id}.j2",
                        tofile=f"edited/{prompt_id}.j2")


class TemplatePreview(BaseModel):
    """What the Templates page shows for one id."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    prompt_id: str
    snapshot: PromptSnapshot
    """The snapshot holding the edit (the previous valid one when the edit has an error)."""
    rendered: str | None
    error: str | None
    diff: str
    edited: bool


def preview_template(base: PromptSnapshot, current: PromptSnapshot, prompt_id: str, source: str,
                     variables: dict[str, Any] | None = None) -> TemplatePreview:
    """Apply ``source`` to ``current`` with ``with_template`` and render it; errors become text."""
    diff = template_diff(base.template_source(prompt_id), source, prompt_id)
    try:
        snapshot = current.with_template(prompt_id, source)
        rendered = snapshot.render(prompt_id, variables if variables is not None
                                   else example_variables(prompt_id))
        error = None
    except TemplateError as exc:
        snapshot, rendered, error = current, None, str(exc)
    return TemplatePreview(prompt_id=prompt_id, snapshot=snapshot, rendered=rendered, error=error,
                           diff=diff, edited=bool(snapshot.edited_ids(base)))


def editor_prompts_root(config_yaml: str | None) -> str:
    """``prompts.root`` of the Configuration page's editor configuration when it is valid (so the
    Templates page edits the templates replays use), else the default ``.iris/prompts``."""
    from .configuration import check_config

    if config_yaml:
        check = check_config(config_yaml)
        if check.ok and check.config is not None:
            return check.config.prompts.root
    return PromptConfig().root


def _usage(outcome: Any) -> str:
    usage = outcome.summary_usage
    if usage is None:
        return "— (not reported)" if outcome.summary_text else "—"
    return f"{usage.input_tokens:,} in / {usage.output_tokens:,} out"


def rerun_table(comparison: Any) -> pd.DataFrame:
    """Original and edited snapshot side by side (a ``workbench.rerun.StepComparison``): status,
    tokens before/after, pressure line and whether R-CMP-8's success condition held."""
    import pandas as pd

    rows = {
        "template snapshot": lambda o: o.snapshot_id[:19] + "…",
        "compaction stage": lambda o: o.status,
        "request before (tokens)": lambda o: f"{o.tokens_before:,}",
        "request after (tokens)": lambda o: "—" if o.tokens_after is None else f"{o.tokens_after:,}",
        "pressure line": lambda o: f"{o.pressure_line:,}",
        "success (≤ line and smaller)": lambda o: ("✓ " if o.success else "✗ ") + o.success_reason,
        "summariser": lambda o: o.summariser,
        "summary usage": _usage,
        "summary request (characters)": lambda o: f"{len(o.summary_request):,}",
        "checkpoint (characters)": lambda o: f"{len(o.checkpoint_text):,}",
    }
    return pd.DataFrame([{"": name, "original": show(comparison.original),
                          "edited": show(comparison.edited)} for name, show in rows.items()],
                        columns=["", "original", "edited"])
