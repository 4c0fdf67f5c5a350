"""Pure helpers behind the Templates page: example variables per prompt id, live preview, diff.

The page edits a template inside a ``with_template`` snapshot (R-UI-4, R-PRM-3); these functions
turn (snapshot, id, edited source) into what the page shows, without Streamlit, so notebooks and
tests get the same results.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iris.errors import TemplateError
from iris.frozen import FrozenModel
from iris.prompts import PROMPT_IDS, PROMPT_VARIABLES, PromptConfig, PromptSnapshot
from pydantic import ConfigDict

from ..analysis.text_diff import unified_diff
from .markup import code_span, one_line, plain

if TYPE_CHECKING:  # pandas only for the re-run table
    import pandas as pd

__all__ = ["SUMMARISER_LABELS", "TemplatePreview", "broken_template_note", "checkpoint_same_caption",
           "default_replay_name",
           "edited_sides_caption", "editor_prompts_root", "engine_only_note", "example_variables",
           "preview_template", "rendered_heading", "rerun_intro", "rerun_table",
           "saved_replay_message", "snapshot_status", "source_caption", "step_labels", "template_diff",
           "variables_caption"]

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


class TemplatePreview(FrozenModel):
    """What the Templates page shows for one id."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # frozen, extra="forbid" from FrozenModel

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


def broken_template_note(preview: TemplatePreview) -> str | None:
    """Why re-running and saving are off: the edit does not compile or render, so a re-run would
    use the last good snapshot on both sides and a save would store it under the edit's name."""
    if preview.error is None:
        return None
    return (f"The edited {preview.prompt_id} template has an error (shown above): re-running and "
            "saving are off until it renders, so neither runs or saves the last good snapshot in "
            "its place.")


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


def _history(outcome: Any) -> str:
    before, after = outcome.history_tokens_before, outcome.history_tokens_after
    if before is None:
        return "—"
    return f"{before:,} → " + ("—" if after is None else f"{after:,}")


def rerun_table(comparison: Any) -> pd.DataFrame:
    """Original and edited snapshot side by side (a ``workbench.services.rerun.StepComparison``): status,
    tokens before/after, pressure line and whether R-CMP-8's success condition held."""
    import pandas as pd

    rows = {
        "template snapshot": lambda o: o.snapshot_id[:19] + "…",
        "compaction stage": lambda o: o.status,
        "request before (tokens, whole request as sent)": lambda o: f"{o.tokens_before:,}",
        "request after (tokens, whole request as sent)": lambda o: (
            "—" if o.tokens_after is None else f"{o.tokens_after:,}"),
        "detail: untrimmed durable history before → after": lambda o: _history(o),
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


# ------------------------------------------------------------------ the page's words


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(f"`{i}`" for i in ids)


def source_caption(directory: Path, saved_count: int) -> str:
    """Where the page reads and saves templates, and how many of them are saved there."""
    return (f"Prompts root: {code_span(directory)} ({saved_count} of {len(PROMPT_IDS)} templates saved "
            "there; the others use the packaged defaults).")


def variables_caption(prompt_id: str) -> str:
    """The variables the consuming code passes to ``prompt_id``."""
    return "Variables provided by the consuming code: " + _ids(PROMPT_VARIABLES[prompt_id])


def snapshot_status(base: PromptSnapshot, preview: TemplatePreview) -> tuple[bool, str]:
    """(whether the view uses an edited snapshot, the sentence saying which snapshot it uses)."""
    if preview.edited:
        changed = ", ".join(preview.snapshot.edited_ids(base))
        return True, (f"This view uses an **edited snapshot** (not saved): {changed}. "
                      f"Snapshot `{preview.snapshot.snapshot_id[:19]}…`")
    return False, f"This view uses the **saved snapshot** `{base.snapshot_id[:19]}…`"


def rendered_heading(step: int | None) -> str:
    """Heading of the rendered output: example variables, or those of ``step``."""
    if step is None:
        return "Rendered with example variables"
    return f"Rendered with the variables of step {step}"


def engine_only_note(prompt_id: str, engine_ids: Sequence[str]) -> str | None:
    """Why an edit of ``prompt_id`` cannot change a replay (None when the engine renders it)."""
    if prompt_id in engine_ids:
        return None
    return (f"The engine renders only {_ids(engine_ids)} during a replay; an edit of "
            f"`{prompt_id}` does not change a replay.")


def rerun_intro(step: int, replay_name: str, stage: str, selected: int | None) -> str:
    """Which compaction step a re-run uses, and how it relates to the sidebar's step."""
    nearest = ("" if selected in (None, step)
               else f"; the nearest compaction to the selected step {selected}")
    return (f"Compaction step **{step}** of replay **{one_line(replay_name)}** (stage {plain(stage)}){nearest}. "
            "Both sides walk the same history; only the template snapshot differs.")


#: How the summariser choice reads on the page.
SUMMARISER_LABELS: dict[str, str] = {
    "extractive": "extractive (offline: ignores the prompt, so checkpoints match)",
    "recorded": "recorded (the session's own summaries)",
    "remote": "remote (the configured endpoint writes a new summary)",
}


def edited_sides_caption(changed: Sequence[str]) -> str:
    """What the edited side of a re-run takes from this page (``changed``: the engine templates
    that differ from the replay's own)."""
    if changed:
        return ("The edited side uses this page's " + _ids(changed) + " (edited or saved in the "
                "workspace); the original side uses the replay's own templates.")
    return ("This page's compaction templates are the replay's own: both sides will be "
            "identical until you edit one.")


def step_labels(steps: Sequence[Any]) -> dict[int, str]:
    """Picker labels of a whole re-run's compaction steps (``StepComparison`` items)."""
    return {c.step_index: f"step {c.step_index}: {c.original.status} → {c.edited.status}"
            for c in steps}


def checkpoint_same_caption(summariser: str) -> str:
    """Said when both checkpoints are identical."""
    return "The checkpoint text is identical" + (
        ": the extractive summariser reads the messages, not the prompt."
        if summariser == "extractive" else ".")


def default_replay_name(snapshot_id: str | None) -> str:
    """The suggested name of a saved edited replay (from its template snapshot id)."""
    return f"templates {(snapshot_id or '')[7:15]}"


def saved_replay_message(name: str, snapshot_id: str | None) -> str:
    """Confirmation of a saved edited replay."""
    return (f"Saved replay **{one_line(name)}** with template snapshot `{(snapshot_id or '')[:19]}…` "
            "(kept in the store); pick it in the sidebar.")
