"""The whole context configuration: one YAML file, validated once into frozen models.

Sections: ``context_policy`` (R-POL-1), ``compaction`` (R-CMP-1/2), ``reduction`` (R-RED-2),
``prompts`` (R-PRM-1), ``model`` (limits and per-model compaction overrides, R-CMP-2/3),
``catalogue`` (model catalogue entries added or overridden) and ``estimate`` (unrecorded overhead
and calibration of whole-request estimates).
Unknown keys and invalid Iris fields are :class:`~iris.errors.ConfigError` naming the file, line and
field path; invalid Chord fields fall back to their defaults with a warning on ``config.warnings``.
:func:`config_hash` gives a stable ``sha256:`` id of the effective configuration (warnings excluded,
since they do not change behaviour) that replays combine with the template snapshot id.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml
from pydantic import BaseModel, Field, ValidationError

from .catalogue import CatalogueEntry
from .compaction.calibration import EstimateConfig
from .compaction.config import (
    CompactionConfig,
    ModelConfig,
    sanitize_chord_fields,
    sanitize_model_overrides,
)
from .context.policy import ContextPolicy
from .errors import ConfigError
from .frozen import FrozenModel
from .hashing import content_hash
from .prompts.config import PromptConfig
from .reduction.config import ReductionConfig, parse_reduction
from .yaml_errors import read_yaml, relocated

__all__ = [
    "ContextConfig",
    "config_hash",
    "config_to_yaml",
    "default_config",
    "load_config",
    "parse_config",
]

_Model = TypeVar("_Model", bound=BaseModel)

SECTIONS = ("context_policy", "compaction", "reduction", "prompts", "model", "catalogue",
            "estimate")


class ContextConfig(FrozenModel):
    """Everything that decides how a context is prepared, except the prompt template sources."""

    context_policy: ContextPolicy = Field(default_factory=ContextPolicy)
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)
    reduction: ReductionConfig = Field(default_factory=ReductionConfig)
    prompts: PromptConfig = Field(default_factory=PromptConfig)
    model: ModelConfig | None = None
    """The model in use; None means limits come from the session, the catalogue or 96000."""
    catalogue: dict[str, CatalogueEntry] = Field(default_factory=dict)
    """Model catalogue entries added or overridden by this configuration (by model name)."""
    estimate: EstimateConfig = Field(default_factory=EstimateConfig)
    """Unrecorded overhead and calibration of whole-request estimates."""
    warnings: tuple[str, ...] = ()
    """Chord-style fallbacks applied while loading, each naming the field path."""


def _fields(value: object, field: str) -> dict[str, Any]:
    """A YAML mapping of fields (values checked by the section's model), else a ConfigError."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"must be a mapping, got {type(value).__name__}", field=field)
    return dict(cast("Mapping[str, Any]", value))


def _section(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    return {} if value is None else _fields(value, name)


def _validate(model: type[_Model], value: Mapping[str, Any], field: str) -> _Model:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise ConfigError.from_validation(exc, field) from None


def _build(data: Mapping[str, Any]) -> ContextConfig:
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ConfigError(f"unknown section (expected one of {', '.join(SECTIONS)})",
                          field=str(unknown[0]))
    compaction, warnings = sanitize_chord_fields(_section(data, "compaction"))
    model_cfg = None
    if data.get("model") is not None:
        model_raw = _section(data, "model")
        if isinstance(model_raw.get("compaction"), Mapping):
            overrides, more = sanitize_model_overrides(dict(model_raw["compaction"]))
            model_raw["compaction"] = overrides
            warnings += more
        model_cfg = _validate(ModelConfig, model_raw, "model")
    return ContextConfig(
        context_policy=_validate(ContextPolicy, _section(data, "context_policy"), "context_policy"),
        compaction=_validate(CompactionConfig, compaction, "compaction"),
        reduction=parse_reduction(data.get("reduction")),
        prompts=_validate(PromptConfig, _section(data, "prompts"), "prompts"),
        model=model_cfg, catalogue=_catalogue(_section(data, "catalogue")),
        estimate=_validate(EstimateConfig, _section(data, "estimate"), "estimate"),
        warnings=warnings)


def _catalogue(raw: dict[str, Any]) -> dict[str, CatalogueEntry]:
    """``catalogue:`` entries by model name (``source`` defaults to ``configuration``)."""
    out: dict[str, CatalogueEntry] = {}
    for name, fields in raw.items():
        entry = {"source": "configuration", **_fields(fields, f"catalogue.{name}"),
                 "name": str(name)}
        out[str(name)] = _validate(CatalogueEntry, entry, f"catalogue.{name}")
    return out


def parse_config(data: str | Mapping[str, Any], *, source: str = "<config>") -> ContextConfig:
    """Validate a configuration given as YAML text or an already-parsed mapping."""
    root: yaml.Node | None = None
    parsed: object = data
    if isinstance(data, str):
        parsed, root = read_yaml(data, source)
    if parsed is None:
        parsed = {}
    if not isinstance(parsed, Mapping):
        raise ConfigError(f"the top level must be a mapping, got {type(parsed).__name__}",
                          path=source, line=1 if root is not None else None)
    try:
        return _build(cast("Mapping[str, Any]", parsed))  # a YAML mapping: _build checks the keys
    except ConfigError as exc:
        raise relocated(exc, source, root) from None


def load_config(path: str | Path) -> ContextConfig:
    """Read and validate a configuration file (errors name the file, line and field path)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read configuration: {exc.strerror or exc}", path=p) from None
    return parse_config(text, source=str(p))


_default: tuple[str, ContextConfig] | None = None
"""The bundled file's text and its configuration, parsed once (every replay without a
configuration asks for it; parsing the YAML took longer than replaying a short session's step)."""


def default_config() -> ContextConfig:
    """The bundled default configuration (``iris/defaults/config.yaml``)."""
    global _default
    text = resources.files("iris").joinpath("defaults/config.yaml").read_text(encoding="utf-8")
    if _default is None or _default[0] != text:
        _default = (text, parse_config(text, source="iris/defaults/config.yaml"))
    return _default[1]


def _plain(config: ContextConfig) -> dict[str, Any]:
    return config.model_dump(mode="json", exclude={"warnings"})


def config_to_yaml(config: ContextConfig) -> str:
    """YAML text that :func:`parse_config` reads back into an equal configuration."""
    return yaml.safe_dump(_plain(config), sort_keys=False, allow_unicode=True)


def config_hash(config: ContextConfig) -> str:
    """``sha256:<hex>`` over the canonical JSON of the effective configuration."""
    return content_hash(_plain(config))
