"""Which summariser wrote a replay's checkpoints, and whether it reads the prompt templates
(R-FID-6): a template A/B says what it compared.

Only a summariser that sends the rendered ``compaction`` templates to a model reads them (the
``remote`` one, an OpenAI-compatible endpoint). The offline (extractive) summariser reads the
archived messages and the recorded one the agent's own summaries: with either, two template
snapshots give byte-identical checkpoints, and every surface that compares templates says so.
"""

from __future__ import annotations

from typing import Any, Literal

from iris.frozen import FrozenModel

__all__ = ["SummariserInfo", "summariser_info", "templates_ignored"]

SummariserLabel = Literal["offline", "recorded", "remote", "custom"]
_LABELS: dict[str, SummariserLabel] = {"extractive": "offline", "offline": "offline",
                                       "recorded": "recorded", "remote": "remote"}


class SummariserInfo(FrozenModel):
    """The ``summariser`` object of ``--summary-json``."""

    kind: SummariserLabel
    """``offline`` (extractive), ``recorded`` (the agent's own summaries), ``remote`` (an
    OpenAI-compatible endpoint) or ``custom``."""
    model: str | None = None
    """The endpoint's model (remote only)."""
    base_url: str | None = None
    """The endpoint (remote only)."""
    reads_templates: bool
    """Whether the checkpoint text depends on the prompt templates."""


def summariser_info(summariser: Any) -> SummariserInfo:
    """What ``summariser`` (a summariser object, its kind or CLI name, or None for the engine's
    offline default) is: a custom summariser is taken to read the templates unless it says
    otherwise (a ``reads_templates`` attribute)."""
    if summariser is None:
        kind = "extractive"
    elif isinstance(summariser, str):
        kind = summariser
    else:
        kind = str(getattr(summariser, "kind", "") or "")
    label = _LABELS.get(kind, "custom")
    reads = getattr(summariser, "reads_templates", label in ("remote", "custom"))
    return SummariserInfo(kind=label, model=getattr(summariser, "model", None) if label == "remote"
                          else None,
                          base_url=getattr(summariser, "base_url", None) if label == "remote"
                          else None,
                          reads_templates=bool(reads))


def templates_ignored(info: SummariserInfo) -> str | None:
    """The warning a template comparison shows when ``info``'s summariser does not read templates
    (None when it does)."""
    if info.reads_templates:
        return None
    who = {"offline": "the offline (extractive) summariser reads the archived messages",
           "recorded": "the recorded summariser reuses the agent's own summaries"}.get(
               info.kind, f"the {info.kind} summariser does not read them")
    return (f"Templates not compared: {who}, not the prompt templates, so two template snapshots "
            "give the same checkpoints. Use the remote summariser (an OpenAI-compatible "
            "endpoint, docs/summarisers.md) for a template A/B.")
