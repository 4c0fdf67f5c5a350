"""`reduction` configuration (R-RED-2): every field with its default.

Unset or non-positive values use the default (Chord's rule: only positive values override).
``reduction: false`` disables reduction; ``true``, ``{}`` or an absent section use the defaults.
"""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from ..errors import ConfigError
from ..frozen import FrozenModel

__all__ = ["AGE_FIELDS", "REDUCTION_DEFAULTS", "ReductionConfig", "parse_reduction"]

class ReductionConfig(FrozenModel):
    """Per-request reduction thresholds. Ages count main-model request batches."""

    enabled: bool = True
    confirm_age_turns: int = 2
    """Confirmations/permission answers become ``[Confirmed]`` from this age."""
    error_age_turns: int = 3
    """Error results are kept whole while younger than this, then summarised."""
    high_risk_protect_age_turns: int = 4
    """Failure logs, stack traces, permission errors stay whole while younger than this."""
    diff_protect_age_turns: int = 12
    """Diffs/patches stay whole while younger than this."""
    shell_success_age_turns: int = 2
    shell_success_bytes: int = 3000
    shell_read_only_age_turns: int = 3
    """Read-only allow-listed shell commands (cat, ls, git log…) are kept while younger than this."""
    read_like_age_turns: int = 2
    read_like_output_bytes: int = 3000
    stale_age_turns: int = 3
    """Generic fallback age (and JSON documents' wait)."""
    stale_output_bytes: int = 1500
    wrap_up_grace_requests: int = 1
    min_tool_results_prune: int = 6
    """The generic fallback only runs once the conversation has this many tool results."""
    min_incremental_saved_tokens: int = 2048

    @field_validator("*", mode="before")
    @classmethod
    def _positive_or_default(cls, value: Any, info: Any) -> Any:
        if info.field_name == "enabled":
            return value
        if value is None:
            return cls.model_fields[info.field_name].default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"must be a whole number, got {value!r}")  # noqa: TRY004 -- pydantic reports ValueError
        if value <= 0:
            return cls.model_fields[info.field_name].default
        if value != int(value):
            raise ValueError(f"must be a whole number, got {value!r}")
        return int(value)


REDUCTION_DEFAULTS: dict[str, int] = {name: field.default for name, field
                                      in ReductionConfig.model_fields.items() if name != "enabled"}
"""Every threshold with its default, read from the fields (a default is written once)."""

AGE_FIELDS: tuple[str, ...] = tuple(name for name in REDUCTION_DEFAULTS if name.endswith("_age_turns"))
"""The thresholds that are ages (request batches): a new age rule is a new ``*_age_turns`` field,
and the engine's gate list (when a kept verdict must be looked at again) follows from it."""


def parse_reduction(value: Any, *, field: str = "reduction") -> ReductionConfig:
    """Accept ``false`` (disabled), ``true``/``{}``/``None`` (defaults) or a mapping of fields."""
    if value is None or value is True:
        return ReductionConfig()
    if value is False:
        return ReductionConfig(enabled=False)
    if not isinstance(value, dict):
        raise ConfigError(f"must be true, false or a mapping, got {type(value).__name__}", field=field)
    from pydantic import ValidationError

    try:
        return ReductionConfig.model_validate(value)
    except ValidationError as exc:
        raise ConfigError.from_validation(exc, field) from None
