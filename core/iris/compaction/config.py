"""`compaction` and `model` configuration (R-CMP-1, R-CMP-2): two families of fields, two rules.

Iris fields (`input_budget_tokens`, `keep_recent_ratio`, `summary_ratio`, `timeout_seconds`) are the
engine's own contract: an invalid value is a :class:`~iris.errors.ConfigError`. Chord fields
(`threshold`, `reserved`, `reminder`, `retain_recent_tokens`, `model_driven`, `model_pool`,
`profile`) follow the reference implementation: an invalid value falls back to its default and a
warning naming the field path is kept on the loaded configuration. :func:`sanitize_chord_fields`
applies that fallback to the raw mapping *before* strict validation, so the models stay strict.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, field_validator

from ..frozen import FrozenModel
from ..session import ModelLimits

__all__ = [
    "CHORD_DEFAULTS",
    "CheckpointForm",
    "CompactionConfig",
    "ModelCompactionOverride",
    "ModelConfig",
    "RestoreForm",
    "RestoreOrder",
    "RestoreReads",
    "sanitize_chord_fields",
    "sanitize_model_overrides",
]

Profile = Literal["auto", "continuation", "archival"]
CheckpointForm = Literal["structured", "summary", "summary_with_user_messages"]
RestoreForm = Literal["tagged", "read_json", "read_text"]
RestoreOrder = Literal["touched", "modified"]


class RestoreReads(FrozenModel):
    """``compaction.restore_recent_reads``: which read files come back after a compaction."""

    files: int = Field(default=5, ge=1)
    """How many of the most recently read files (distinct paths, newest first)."""
    tokens_per_file: int = Field(default=5000, ge=1)
    """A file over this many tokens comes back as a short reference instead of its text."""
    total_tokens: int = Field(default=50000, ge=1)
    """A file that would take the restored files over this many tokens is left out (the
    files after it may still fit)."""
    form: RestoreForm = Field(default="tagged", exclude_if=lambda v: v == "tagged")
    """How a restored file is sent: ``tagged``, its numbered lines in a ``<restored-file>``
    tag; ``read_json``, as Claude Code up to 2.1.85 did (a Read call and its result, the result
    JSON-quoted, each in a ``<system-reminder>``); ``read_text``, as from 2.1.86 (the result as
    text, ``N<tab>`` line numbers)."""
    order: RestoreOrder = Field(default="touched", exclude_if=lambda v: v == "touched")
    """Which files are the most recent: ``touched``, the last read, edit or write of each (Claude
    Code up to 2.1.85 stamps a read with the time of reading); ``modified``, the last edit or
    write, files only read after them (from 2.1.86 a read is stamped with the file's
    modification time, which the transcript does not record)."""

class CompactionConfig(FrozenModel):
    """Durable compaction settings. Derived lines (pressure, recent target, summary max) are not
    configurable: see :func:`iris.compaction.thresholds`."""

    input_budget_tokens: int | None = None
    """Whole input allowance after the output reservation. Unset: derived from model limits, else
    96000 (R-CMP-3). Positive integer when set."""
    keep_recent_ratio: float = 0.15
    """0 < v < 1: soft target for recent original text, ``ceil(budget × ratio)``."""
    summary_ratio: float = 0.05
    """0 < v < 1: max output share of the summary request, ``ceil(budget × ratio)``."""
    timeout_seconds: float = 300.0
    """Positive finite seconds for one whole compaction."""
    threshold: float = 0.8
    """Share of the usable budget that triggers automatic compaction; 0 disables it."""
    reserved: int = 0
    """Fixed headroom subtracted from the budget before the threshold is applied."""
    reminder: float = 0.0
    """0 derives ``min(0.60, threshold × 0.90)``; (0, 1] explicit; -1 disables the reminder only."""
    retain_recent_tokens: int = 4096
    """Budget for recent real user messages kept verbatim in a checkpoint (text only)."""
    model_driven: bool = False
    """Expose the ``compact_context`` tool (R-CMP-12)."""
    model_pool: str | None = None
    """Model pool that writes summaries; None reuses the agent's."""
    profile: Profile = "auto"
    """``continuation`` keeps a raw tail, ``archival`` none, ``auto`` picks per session state."""

    # Agent-profile fields (docs/profiles.md): replaying a session as the recorded agent ran it.
    # Each is left out of the configuration's JSON form while at its default, so configurations
    # that do not use them keep their hash.
    reserve_output: bool = Field(default=True, exclude_if=lambda v: v is True)
    """False: a budget derived from a context window (recorded limits, ``model.limit``) is the
    whole window, with no output reservation (Codex records the window it lets inputs fill)."""
    effective_window_percent: int = Field(default=100, exclude_if=lambda v: v == 100)
    """1…100: the share of the model's full window that the budget states. Below 100 the
    threshold applies to the full window (``usable × 100 / percent``): Codex records
    ``model_context_window`` as 95 % of the window and compacts at 90 % of the full window."""
    budget_covers_recorded: bool = Field(default=False, exclude_if=lambda v: v is False)
    """True: a budget not set by ``input_budget_tokens`` is raised to the largest prompt the
    session's provider accepted (a budget below a prompt the agent really sent is not the
    agent's)."""
    apply_recorded_manual: bool = Field(default=False, exclude_if=lambda v: v is False)
    """True: a compaction the recorded agent's user asked for (Claude Code ``/compact``,
    ``compactMetadata.trigger: manual``) is applied at the same step, as a manual compaction."""
    microcompact: Literal["off", "recorded", "by-version"] = Field(
        default="off", exclude_if=lambda v: v == "off")
    """Old tool results cleared in place as the recorded agent cleared them (Claude Code's
    microcompaction, :mod:`iris.compaction.microcompact`): ``recorded``, the clearings the
    transcript records, at their step; ``by-version``, those, and for a version that cleared
    without recording it (no clearing recorded) its documented rule; ``off``, none."""
    checkpoint_form: CheckpointForm = Field(default="structured",
                                            exclude_if=lambda v: v == "structured")
    """``structured``: the checkpoint with its required sections, archive index, session
    constraints and retained user messages; ``summary``: the summary text alone (what Claude
    Code keeps); ``summary_with_user_messages``: the recent real user messages (within
    ``retain_recent_tokens``), then the summary (what Codex keeps)."""
    restore_recent_reads: RestoreReads | None = Field(default=None, exclude_if=lambda v: v is None)
    """Files re-attached after a compaction, as Claude Code does: the most recently read files
    (up to ``files``, each up to ``tokens_per_file``, at most ``total_tokens`` in all), from what
    the recorded reads showed; None: none."""
    count_new_messages: bool = Field(default=False, exclude_if=lambda v: v is False)
    """True: while the trigger compares the provider's count of the last response, it adds the
    replay's estimate of the messages recorded since (tool results, a new user message), as
    Claude Code (its ``preTokens``) and Codex (``get_total_token_usage``) both do."""
    count_earlier_reasoning: bool = Field(default=False, exclude_if=lambda v: v is False)
    """True: the trigger adds Codex's estimate of the encrypted reasoning of earlier turns (every
    reasoning block before the last user message, ``(chars × 3/4 − 650) / 4`` tokens each), as
    codex-rs ``ContextManager::get_total_token_usage`` does: the provider's count leaves that
    reasoning out, Codex adds it before comparing with its auto-compact limit."""

    agent_rules: Literal["claude-code", "codex"] | None = Field(
        default=None, exclude_if=lambda v: v is None)
    """An agent profile's rule table (:mod:`iris.compaction.agent_rules`): at replay time the
    row of the session's recorded agent version and model sets the fields it names (the
    trigger's ``reserved``/``threshold``/``effective_window_percent`` and what is kept), and the
    budget's detail names the row (an unknown version: the nearest row, and it says so). None:
    the fields apply as written."""
    keep_initial_context: bool = Field(default=False, exclude_if=lambda v: v is False)
    """True: the session's initial context (the synthetic developer and user messages before
    the first real user message: Codex's permissions instructions, AGENTS.md, environment
    context) is sent again after the checkpoint, as codex-rs' compacted history does."""

    trigger_without_usage: bool = Field(default=False, exclude_if=lambda v: v is False)
    """True: while the session has no trusted provider usage sample (no response has reported a
    non-zero prompt), automatic compaction may start on the replay's calibrated local estimate
    (basis ``calibrated_local``). False (the default, seed 002): with no trusted sample the gauge
    shows 0 and nothing triggers (R-TOK-4); a usage-less transcript (SWE-agent 0.x) then never
    compacts unless this is set. Left out of the JSON form at its default."""

    @field_validator("input_budget_tokens", mode="before")
    @classmethod
    def _positive_int(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise ValueError(f"must be a positive whole number, got {value!r}")
        if value <= 0:
            raise ValueError(f"must be a positive whole number, got {value!r}")
        return int(value)

    @field_validator("keep_recent_ratio", "summary_ratio", mode="before")
    @classmethod
    def _open_ratio(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise ValueError(f"must be a number with 0 < value < 1, got {value!r}")
        return float(value)

    @field_validator("effective_window_percent", mode="before")
    @classmethod
    def _percent(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
            raise ValueError(f"must be a whole number from 1 to 100, got {value!r}")
        return value

    @field_validator("timeout_seconds", mode="before")
    @classmethod
    def _positive_finite(cls, value: Any) -> Any:
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value) or value <= 0):
            raise ValueError(f"must be a positive finite number of seconds, got {value!r}")
        return float(value)


#: The Chord fields (seed 002's names) and the defaults they fall back to, read from the fields
#: themselves so a default is written once.
CHORD_FIELDS = ("threshold", "reserved", "reminder", "retain_recent_tokens", "model_driven",
                "model_pool", "profile")
CHORD_DEFAULTS: dict[str, Any] = {name: CompactionConfig.model_fields[name].default
                                  for name in CHORD_FIELDS}


class ModelCompactionOverride(FrozenModel):
    """Per-model `threshold`/`reminder`; None inherits the global value."""

    threshold: float | None = None
    """0 disables automatic compaction (and the reminder) for this model only."""
    reminder: float | None = None
    """-1 disables only this model's reminder; 0 derives it from the effective threshold."""


class ModelConfig(FrozenModel):
    """The model in use: its limits and compaction overrides (R-CMP-2, R-CMP-3)."""

    name: str | None = None
    limit: ModelLimits | None = None
    """``context``, ``input``, ``output`` token limits (any may be omitted)."""
    max_output_tokens: int = Field(default=64000, gt=0)
    """Output reservation when ``limit.output`` is not declared."""
    compaction: ModelCompactionOverride | None = None

    @field_validator("limit")
    @classmethod
    def _positive_limits(cls, value: ModelLimits | None) -> ModelLimits | None:
        if value is not None:
            for name in ("context", "input", "output"):
                n = getattr(value, name)
                if n is not None and n <= 0:
                    raise ValueError(f"limit.{name} must be positive, got {n!r}")
        return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _valid_threshold(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and 0 <= value <= 1


def _valid_reminder(value: Any) -> bool:
    return _is_number(value) and (value == -1 or (math.isfinite(value) and 0 <= value <= 1))


def _valid_count(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and value >= 0 and value == int(value)


_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "threshold": (_valid_threshold, "must be a number from 0 to 1"),
    "reserved": (_valid_count, "must be a non-negative whole number"),
    "reminder": (_valid_reminder, "must be 0 (derived), a number in (0, 1], or -1"),
    "retain_recent_tokens": (_valid_count, "must be a non-negative whole number"),
    "model_driven": (lambda v: isinstance(v, bool), "must be true or false"),
    "model_pool": (lambda v: v is None or isinstance(v, str), "must be a pool name"),
    "profile": (lambda v: v in ("auto", "continuation", "archival"),
                "must be one of 'auto', 'continuation', 'archival'"),
}


def sanitize_chord_fields(raw: dict[str, Any], *, field: str = "compaction",
                          ) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Replace invalid Chord values by their defaults; return the new mapping and the warnings."""
    out = dict(raw)
    warnings: list[str] = []
    for name, (check, rule) in _CHECKS.items():
        if name not in out:
            continue
        value = out[name]
        if not check(value):
            out[name] = CHORD_DEFAULTS[name]
            warnings.append(f"{field}.{name}: {value!r} {rule}; using the default "
                            f"{CHORD_DEFAULTS[name]!r}")
        elif name in ("reserved", "retain_recent_tokens"):
            out[name] = int(value)
    if out.get("retain_recent_tokens") == 0:
        # 0 means "use the built-in default" (seed 002), not "retain nothing".
        out["retain_recent_tokens"] = CHORD_DEFAULTS["retain_recent_tokens"]
    return out, tuple(warnings)


def sanitize_model_overrides(raw: dict[str, Any], *, field: str = "model.compaction",
                             ) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Per-model overrides: an invalid threshold inherits the global one (None); an invalid
    reminder becomes 0, i.e. derived from the effective threshold."""
    out = dict(raw)
    warnings: list[str] = []
    if "threshold" in out and out["threshold"] is not None and not _valid_threshold(out["threshold"]):
        warnings.append(f"{field}.threshold: {out['threshold']!r} must be a number from 0 to 1; "
                        "inheriting the global threshold")
        out["threshold"] = None
    if "reminder" in out and out["reminder"] is not None and not _valid_reminder(out["reminder"]):
        warnings.append(f"{field}.reminder: {out['reminder']!r} must be 0 (derived), a number in "
                        "(0, 1], or -1; using the derived reminder")
        out["reminder"] = 0.0
    return out, tuple(warnings)
