"""The fixed prompt ids (R-PRM-2) and the variables each id's consuming code provides (R-PRM-4).

Templates describe strategy; the code that renders an id owns its input variables. Declaring them
here lets rendering fail with a clear message when a caller forgets one, and lets an edited template
be checked at edit time for names no caller will ever supply.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["PROMPT_IDS", "PROMPT_VARIABLES"]

#: The 15 fixed ids, each a ``<id>.j2`` file (order of the source document's table).
PROMPT_IDS: tuple[str, ...] = (
    "compaction",
    "compaction_input",
    "memory_context",
    "memory_flush",
    "memory_dream",
    "memory_overview",
    "memory_recall_instruction",
    "goal_context",
    "goal_continuation",
    "todo_context",
    "todo_reminder",
    "skill_catalog_usage",
    "tool_discovery_instruction",
    "project_skill_update",
    "evolution_review",
)

#: Declared variables per id. Every name must be passed to ``render``; no other name is accepted.
PROMPT_VARIABLES: MappingProxyType[str, tuple[str, ...]] = MappingProxyType({
    # Compaction contract (used by iris.compaction): list[str], int, "continuation"|"archival", list[str].
    "compaction": ("required_sections", "summary_max_tokens", "profile", "session_constraints"),
    # messages: list of {index, role, text, tool_name}; the three strings may be "".
    "compaction_input": ("messages", "previous_checkpoint", "omitted_note", "current_request"),
    # memories: list of {name, text}; memory_root: str.
    "memory_context": ("memories", "memory_root"),
    # existing_memories: list of {name, summary}; transcript: str.
    "memory_flush": ("memory_root", "existing_memories", "transcript"),
    # memories: list of {name, text}; max_memories: int.
    "memory_dream": ("memories", "max_memories"),
    # memories: list of {name, summary}.
    "memory_overview": ("memories", "memory_root"),
    "memory_recall_instruction": ("tool_name", "memory_count"),
    # success_criteria / progress_notes: list[str]; status: str.
    "goal_context": ("objective", "status", "success_criteria", "progress_notes"),
    "goal_continuation": ("objective", "remaining", "turns_used", "max_turns"),
    # todos: list of {id, content, status} with status pending|in_progress|completed.
    "todo_context": ("todos",),
    "todo_reminder": ("todos", "turns_since_update"),
    # skills: list of {name, description}; tool_name: str (the skill loading tool).
    "skill_catalog_usage": ("skills", "tool_name"),
    # deferred_tools: list of {name, description}; search_tool_name: str.
    "tool_discovery_instruction": ("deferred_tools", "search_tool_name"),
    "project_skill_update": ("skill_name", "current_skill", "lessons"),
    # existing_skills: list[str]; outcome: str ("succeeded", "failed", ...).
    "evolution_review": ("session_summary", "outcome", "existing_skills"),
})

assert tuple(PROMPT_VARIABLES) == PROMPT_IDS
