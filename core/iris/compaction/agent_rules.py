"""The agent profiles' rules by agent version (R-TWIN-3, R-TWIN-7): one table, chosen at replay time.

An agent profile (``compaction.agent_rules: claude-code`` or ``codex``) replays a session as the
recorded agent ran it, and the agent's rule changed between versions: Claude Code up to 2.1.20
reserved the model's output (capped at 32,000) before its 13,000-token buffer, so it compacted
near 155,000 of a 200,000 window; from 2.1.21 ("Fixed auto-compact triggering too early on models
with large output token limits") it reserves 20,000 for the summary, near 167,000. Each row of
:data:`AGENT_RULES` states the versions it was documented for, the compaction fields it sets and
its public source; :func:`resolve_agent_rule` picks the row for the session's recorded version
(Claude Code ``version``, Codex ``cli_version``) and model. A version outside every documented
range, or none recorded, gets the nearest documented row, and the note says so. Where an agent
has rows for particular models (Codex: gpt-5.3-codex-spark, the GPT-5 models), the most
specific pattern the session's model matches wins; a model none of them names gets the
agent's generic row, and the note says that too. docs/profiles.md has the table in words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal

from ..frozen import FrozenModel

if TYPE_CHECKING:  # iris.config imports this package
    from ..config import ContextConfig
    from ..session import SessionHeader

__all__ = ["AGENT_RULES", "AgentName", "AgentRule", "ResolvedRule", "apply_agent_rule",
           "parse_version", "resolve_agent_rule"]

AgentName = Literal["claude-code", "codex"]
Version = tuple[int, ...]


def parse_version(text: str | None) -> Version | None:
    """``2.1.5`` → (2, 1, 5); ``0.104.0-alpha.1`` → (0, 104, 0); None when no number leads."""
    if not text:
        return None
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


class AgentRule(FrozenModel):
    """One row of the table: an agent's versions and models, and what it did there."""

    agent: AgentName
    name: str
    """The row in words, e.g. ``Claude Code 1.0–2.1.20``."""
    first: str
    """The first version the row was documented for (inclusive)."""
    last: str | None
    """The last version it was documented for (inclusive); None: still current."""
    model: str = "*"
    """A model-name pattern (``fnmatch``, case-insensitive)."""
    output_reservation_cap: int | None = None
    """Claude Code: the window minus min(the model's max output, this) minus ``buffer`` is the
    line (``reserved`` = the two together); None: ``fields`` set ``reserved`` directly."""
    buffer: int = 0
    fields: Mapping[str, Any] = {}
    """The ``compaction`` fields the row sets (the rest of the profile stays as configured)."""
    restore: Mapping[str, Any] = {}
    """Claude Code: the ``restore_recent_reads`` fields the row sets (how the files that come
    back after the summary are chosen and sent), when the profile restores files."""
    source: str

    def covers(self, version: Version) -> bool:
        first = parse_version(self.first) or ()
        last = parse_version(self.last) if self.last else None
        return version >= first and (last is None or version[:len(last)] <= last)


_CC_SOURCE_BUFFER = ("AUTOCOMPACT_BUFFER_TOKENS 13,000 in Claude Code's autoCompact.ts (public "
                     "analyses)")

_CC_SOURCE_RESTORE_JSON = (
    "after the summary the 5 most recent files of its file state (a read stamped with the "
    "time it ran: Date.now() in FileReadTool), each up to 5,000 tokens, 50,000 in all, come "
    "back as a Read call and its JSON-quoted result (createToolResultMessage: JSON.stringify of "
    "the result; published analyses of 2.1.76 and of the 1.0 bundle)")

_CODEX_FIELDS: Mapping[str, Any] = {"threshold": 0.9, "effective_window_percent": 95,
                                    "reserved": 0, "keep_initial_context": True}
_CODEX_SOURCE = (
    "codex-rs: ModelInfo::auto_compact_token_limit is the catalogue's auto_compact_token_limit, "
    "else context_window × 9 / 10 (protocol/src/openai_models.rs; 90 % since PR #5292 \"Auto "
    "compact at ~90%\", 2025-10-17; a configured limit is clamped to it since PR #11516, "
    "2026-02-12); model_context_window is the window × effective_context_window_percent (95), "
    "so the line is 90 % of the full window, not of model_context_window (issue #40095); the "
    "count compared is ContextManager::get_total_token_usage (core/src/context_manager/"
    "history.rs, session/context_window.rs, scope Total); compact.rs rebuilds the history as the "
    "initial context (developer instructions, AGENTS.md, environment context), the user "
    "messages up to COMPACT_USER_MESSAGE_MAX_TOKENS 20,000, then the summary")

#: The rows, oldest first per agent.
AGENT_RULES: tuple[AgentRule, ...] = (
    AgentRule(
        agent="claude-code", name="Claude Code 1.0–2.1.20", first="1.0.0", last="2.1.20",
        output_reservation_cap=32_000, buffer=13_000,
        source="the effective window reserved the model's output tokens, capped at the 32,000 "
               "Claude Code requests by default (155,000 of a 200,000 window for a model with "
               "64,000 or more; public analyses: a 45K reserve, about 77.5 %); "
               + _CC_SOURCE_BUFFER + "; Claude Code CHANGELOG 2.1.21 (2026-01-28) changed it; "
               + _CC_SOURCE_RESTORE_JSON,
        restore={"form": "read_json", "order": "touched"}),
    AgentRule(
        agent="claude-code", name="Claude Code 2.1.21 and later", first="2.1.21", last="2.1.85",
        output_reservation_cap=20_000, buffer=13_000,
        source="Claude Code CHANGELOG 2.1.21: \"Fixed auto-compact triggering too early on "
               "models with large output token limits\": the effective window reserves "
               "MAX_OUTPUT_TOKENS_FOR_SUMMARY 20,000 (167,000 of a 200,000 window; public "
               "analyses: a 33K reserve, 83.5 %); " + _CC_SOURCE_BUFFER + "; "
               + _CC_SOURCE_RESTORE_JSON,
        restore={"form": "read_json", "order": "touched"}),
    AgentRule(
        agent="claude-code", name="Claude Code 2.1.86 and later", first="2.1.86", last="2.1.88",
        output_reservation_cap=20_000, buffer=13_000,
        source="the 2.1.21 trigger; Claude Code CHANGELOG 2.1.86: \"Read tool now uses compact "
               "line-number format and deduplicates unchanged re-reads\": a restored file's Read "
               "result is sent as text with N<tab> line numbers, and a read is stamped with the "
               "file's modification time (FileReadTool.ts, messages.ts createToolResultMessage "
               "of the published 2.1.88 source), so files edited or written in the session are "
               "the most recent",
        restore={"form": "read_text", "order": "modified"}),
    AgentRule(
        agent="codex", name="Codex CLI 0.40–0.142, gpt-5.3-codex-spark", first="0.40.0",
        last="0.142.5", model="gpt-5.3-codex-spark*", fields=_CODEX_FIELDS,
        source="the generic Codex rule on gpt-5.3-codex-spark's window: the model catalogue "
               "gives context_window 128,000 (model_context_window 121,600 = 95 %), so "
               "auto_compact_token_limit is 115,200; what Codex compares with it also holds the "
               "earlier turns' reasoning and the items since the last response "
               "(ContextManager::get_total_token_usage), which is why its compactions come at "
               "prompts well below the line; " + _CODEX_SOURCE),
    AgentRule(
        agent="codex", name="Codex CLI 0.40–0.142, gpt-5", first="0.40.0", last="0.142.5",
        model="gpt-5*", fields=_CODEX_FIELDS,
        source="the generic Codex rule on the GPT-5 models' 272,000 window (gpt-5.5, "
               "gpt-5.3-codex: model_context_window 258,400 = 95 %): 244,800; " + _CODEX_SOURCE),
    AgentRule(
        agent="codex", name="Codex CLI 0.40–0.142", first="0.40.0", last="0.142.5",
        fields=_CODEX_FIELDS, source=_CODEX_SOURCE),
)


class ResolvedRule(FrozenModel):
    """The row chosen for one session, and what the replay says about the choice."""

    rule: AgentRule
    version: str | None
    exact: bool
    """False: the version is not in any documented range (or not recorded): the nearest row."""
    note: str


def _nearest(rows: list[AgentRule], version: Version) -> AgentRule:
    """The row whose range is nearest ``version``: the last row starting at or before it (a
    version past every range gets the newest row), else the first row."""
    started = [r for r in rows if (parse_version(r.first) or ()) <= version]
    return started[-1] if started else rows[0]


def resolve_agent_rule(agent: AgentName, version: str | None, model: str | None,
                       rules: tuple[AgentRule, ...] = AGENT_RULES) -> ResolvedRule:
    """The row for ``agent`` at ``version`` and ``model`` (see the module docstring)."""
    rows = [r for r in rules if r.agent == agent]
    if not rows:
        raise ValueError(f"no agent rule for {agent!r}")
    fitting, unlisted = _model_rows(rows, model)
    parsed = parse_version(version)
    if parsed is not None:
        for row in fitting:
            if row.covers(parsed):
                return ResolvedRule(rule=row, version=version, exact=True,
                                    note=f"agent rule {row.name} (version {version} recorded)"
                                    + unlisted)
        nearest = _nearest(fitting, parsed)
        return ResolvedRule(rule=nearest, version=version, exact=False, note=(
            f"agent rule {nearest.name}: version {version} is outside the documented ranges; "
            "the nearest documented rule is used" + unlisted))
    newest = fitting[-1]
    why = f"version {version!r} cannot be read" if version else "no agent version recorded"
    return ResolvedRule(rule=newest, version=version, exact=False, note=(
        f"agent rule {newest.name}: {why}; the newest documented rule is used" + unlisted))


def _specificity(pattern: str) -> int:
    return len(pattern.replace("*", "").replace("?", ""))


def _model_rows(rows: list[AgentRule], model: str | None) -> tuple[list[AgentRule], str]:
    """The rows of the most specific model pattern ``model`` matches, and what the note adds
    when the agent has rows for particular models and ``model`` is none of them (its generic
    rows are used then; "" otherwise)."""
    name = (model or "").lower()
    matching = [r for r in rows if fnmatchcase(name, r.model.lower())]
    if not matching:
        return rows, ""
    best = max(_specificity(r.model) for r in matching)
    fitting = [r for r in matching if _specificity(r.model) == best]
    particular = any(_specificity(r.model) for r in rows)
    if best or not particular:
        return fitting, ""
    return fitting, (f"; model {model or '(none recorded)'} has no rule of its own: the "
                     "agent's generic rule is used")


def rule_fields(rule: AgentRule, model: str | None, catalogue: Mapping[str, Any] | None = None
                ) -> dict[str, Any]:
    """The ``compaction`` fields ``rule`` sets for ``model`` (Claude Code's reservation from the
    model's published max output, capped; the cap itself when the model is not known)."""
    fields = dict(rule.fields)
    if rule.output_reservation_cap is not None:
        from ..catalogue import lookup

        entry = lookup(model, catalogue)
        out = entry.max_output if entry is not None and entry.max_output else None
        cap = rule.output_reservation_cap
        fields.setdefault("threshold", 1.0)
        fields["reserved"] = min(out, cap) + rule.buffer if out else cap + rule.buffer
    return fields


def apply_agent_rule(config: ContextConfig, header: SessionHeader) -> tuple[ContextConfig, str]:
    """``config`` with the row of the session's agent version and model applied, and the note
    saying which row (unchanged, with no note, when ``compaction.agent_rules`` is not set)."""
    agent = config.compaction.agent_rules
    if agent is None:
        return config, ""
    resolved = resolve_agent_rule(agent, header.agent_version, header.model)
    fields = rule_fields(resolved.rule, header.model, getattr(config, "catalogue", None))
    restore = config.compaction.restore_recent_reads
    if resolved.rule.restore and restore is not None:
        fields["restore_recent_reads"] = {**restore.model_dump(), **resolved.rule.restore}
    reserved = fields.get("reserved")
    note = resolved.note
    if isinstance(reserved, int) and resolved.rule.output_reservation_cap is not None:
        note += f": line = window − {reserved:,}"
    note += _replaced_note(config, agent, header.model, fields)
    from ..frozen import UNCHANGED
    from .config import CompactionConfig

    compaction = CompactionConfig.model_validate(
        {**config.compaction.model_dump(), **fields})  # the table's values checked like YAML's
    return config.evolve(**UNCHANGED, compaction=compaction), note


def _replaced_note(config: ContextConfig, agent: AgentName, model: str | None,
                   fields: Mapping[str, Any]) -> str:
    """What the note adds when the configuration holds a trigger value of its own (neither the
    chosen row's nor the newest row's, which a preset writes): the row replaces it, so a "what
    if" written on top of an agent profile says that it needs ``agent_rules: null``."""
    newest = resolve_agent_rule(agent, None, model).rule
    preset_like = rule_fields(newest, model, getattr(config, "catalogue", None))
    written = config.compaction.model_dump()
    replaced = [f"{name} {written[name]:,}" if isinstance(written[name], int) else f"{name} {written[name]}"
                for name, value in fields.items()
                if name in written and name != "restore_recent_reads"
                and written[name] != value and written[name] != preset_like.get(name, value)]
    if not replaced:
        return ""
    verb = "is" if len(replaced) == 1 else "are"
    return (f"; the configuration's {', '.join(replaced)} {verb} replaced by the rule's "
            "(compaction.agent_rules: null replays the values as written)")
