"""The runner's configuration: the model endpoint, the step limit, where sessions go, and which
context configuration and static context the live run uses.

A runner file is YAML (every relative path in it is read relative to the file)::

    endpoint:
      base_url: http://127.0.0.1:8000/v1   # an OpenAI-compatible chat-completions endpoint
      model: my-model
      api_key_env: OPENAI_API_KEY          # the NAME of the variable holding the key, never the key
      timeout_seconds: 120                 # deadline of one call: connect, headers and body
    max_steps: 30                          # model calls per run before it stops
    sessions_dir: .iris/sessions           # each session gets <sessions_dir>/<session id>/
    context: context.yaml                  # static context (optional)
    engine: engine.yaml                    # the context configuration (path or mapping; optional)
    limits: {context: 128000, output: 8000}
    summariser: extractive                 # or endpoint: the model writes compaction summaries

Errors are :class:`~iris.errors.ConfigError` naming the file, line and field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import ConfigDict, Field, ValidationError, field_validator

from ..config import ContextConfig, default_config, load_config, parse_config
from ..context import ContextBuildInput, load_context_build_input
from ..errors import ConfigError
from ..frozen import FrozenModel
from ..session import ModelLimits
from ..yaml_errors import read_yaml, relocated

__all__ = ["DEFAULT_MAX_ANSWER_BYTES", "EndpointConfig", "RunnerConfig", "load_runner_config",
           "parse_runner_config"]

DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""Largest model answer read (16 MiB): a chat answer with tool calls is far smaller."""


class EndpointConfig(FrozenModel):
    """An OpenAI-compatible chat-completions endpoint (``<base_url>/chat/completions``)."""

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    """Name of the environment variable that holds the API key (None: no key is sent)."""
    timeout_seconds: float = Field(default=120.0, gt=0)
    """Deadline of one model call, covering connect, headers and the whole body of every attempt
    and the waits between them."""
    max_attempts: int = Field(default=3, gt=0)
    """HTTP attempts per model call (HTTP 408/409/429/5xx and connection errors are retried)."""
    initial_backoff: float = Field(default=0.5, ge=0)
    """First wait between attempts (doubled each time, at most 8 s) unless the server sends
    ``Retry-After``."""
    max_answer_bytes: int = Field(default=DEFAULT_MAX_ANSWER_BYTES, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    """Sent as ``max_tokens`` when set."""
    temperature: float | None = None

    @field_validator("timeout_seconds")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number of seconds")
        return value


class RunnerConfig(FrozenModel):
    """What one :class:`~iris.runner.AgentRunner` runs with (paths already resolved)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # frozen, extra="forbid" from FrozenModel

    endpoint: EndpointConfig | None = None
    """None: the host passes its own model client to ``from_config(..., model=...)``."""
    max_steps: int = Field(default=50, gt=0)
    sessions_dir: Path = Path(".iris/sessions")
    workspace_root: Path | None = None
    context: ContextBuildInput | None = None
    """The static context (context.yaml), rendered once per runner."""
    engine: ContextConfig = Field(default_factory=default_config)
    """The context configuration: reduction, compaction, context policy, prompts."""
    limits: ModelLimits | None = None
    """The model's token limits (the input budget follows them unless ``engine`` sets it)."""
    summariser: Literal["extractive", "endpoint"] = "extractive"
    """Who writes compaction summaries: the offline extractive summariser, or the endpoint's model
    through the summary client (retries, breaker, bounded deadline; docs/summarisers.md)."""
    title: str = ""


_FIELDS = ("endpoint", "max_steps", "sessions_dir", "workspace_root", "context", "engine",
           "limits", "summariser", "title")


def _path(value: object, base: Path, field: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"must be a path (text), got {value!r}", field=field)
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p


def _engine(value: object, base: Path, source: str) -> ContextConfig:
    if value is None:
        return default_config()
    if isinstance(value, str):
        return load_config(_path(value, base, "engine"))
    if isinstance(value, Mapping):
        try:
            return parse_config(cast("Mapping[str, Any]", value), source=source)
        except ConfigError as exc:
            raise ConfigError(exc.problem, field=f"engine.{exc.field}" if exc.field else "engine"
                              ) from None
    raise ConfigError(f"must be a path or a mapping, got {type(value).__name__}", field="engine")


def _build(data: Mapping[str, Any], base: Path, source: str) -> RunnerConfig:
    unknown = sorted(str(k) for k in data if k not in _FIELDS)
    if unknown:
        raise ConfigError(f"unknown field (expected one of {', '.join(_FIELDS)})", field=unknown[0])
    values: dict[str, Any] = {k: data[k] for k in ("endpoint", "max_steps", "limits", "summariser",
                                                   "title")
                              if data.get(k) is not None}
    values["sessions_dir"] = _path(data.get("sessions_dir", ".iris/sessions"), base, "sessions_dir")
    if data.get("workspace_root") is not None:
        values["workspace_root"] = _path(data["workspace_root"], base, "workspace_root")
    if data.get("context") is not None:
        values["context"] = load_context_build_input(_path(data["context"], base, "context"))
    values["engine"] = _engine(data.get("engine"), base, source)
    try:
        return RunnerConfig.model_validate(values)
    except ValidationError as exc:
        raise ConfigError.from_validation(exc) from None


def parse_runner_config(data: str | Mapping[str, Any], *, base_dir: str | Path = ".",
                        source: str = "<runner config>") -> RunnerConfig:
    """Validate a runner configuration given as YAML text or a mapping; relative paths are read
    against ``base_dir``."""
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
        return _build(cast("Mapping[str, Any]", parsed), Path(base_dir), source)
    except ConfigError as exc:
        if exc.path is not None and exc.path != source:  # a file it names (engine, context)
            raise
        raise relocated(exc, source, root) from None


def load_runner_config(path: str | Path) -> RunnerConfig:
    """Read and validate a runner file (errors name the file, line and field)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read runner configuration: {exc.strerror or exc}", path=p) from None
    return parse_runner_config(text, base_dir=p.resolve().parent, source=str(p))
