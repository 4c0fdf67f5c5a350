"""One small adapter per collaborator the pipeline calls (context, selection, reduction, compaction).

The stages never import the other engine packages directly: each call goes through one function
here, so the contract with ``iris.context``, ``iris.reduction``, ``iris.compaction``, ``iris.config``
and ``iris.prompts`` is visible in one place and a change of signature is a one-line fix.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..session import Message, ModelLimits, Session

__all__ = [
    "build_context_messages",
    "collect_contributions",
    "compact_history",
    "config_snapshot_id",
    "contribution_message",
    "default_config",
    "default_prompts",
    "default_summarizer",
    "recorded_context_source",
    "reduce_history",
    "resolve_thresholds",
    "select_contributions",
    "tool_kind_map",
]


def default_config() -> Any:
    from ..config import default_config as _default

    return _default()


def default_prompts(config: Any = None, workspace_root: Any = None) -> Any:
    """The templates of ``config.prompts.root`` under ``workspace_root`` (R-PRM-1)."""
    from ..prompts import configured_snapshot

    return configured_snapshot(config, workspace_root)


def default_summarizer() -> Any:
    from ..compaction import ExtractiveSummarizer

    return ExtractiveSummarizer()


def config_snapshot_id(config: Any, prompts: Any) -> str:
    """Hash of the validated configuration plus the template snapshot (issue 6 item 1)."""
    from ..config import config_hash
    from .records import content_hash

    return content_hash({"configuration": config_hash(config),
                         "templates": getattr(prompts, "snapshot_id", None)})


def resolve_thresholds(config: Any, limits: ModelLimits | None, model: str | None = None) -> Any:
    from ..compaction import thresholds

    return thresholds(config, limits, model)


def build_context_messages(context_input: Any) -> tuple[tuple[str, Message], ...]:
    """The static context messages as ``(position, message)`` pairs, in request order."""
    from ..context import ContextBuilder

    output = ContextBuilder().build(context_input)
    return tuple((m.position, m.to_message()) for m in output.messages)


def contribution_message(contribution: Any) -> Message:
    """How a selected dynamic contribution appears in the request: one synthetic user message."""
    from ..context import escape_attribute
    from ..session import TextBlock

    text = (f'<context_contribution key="{escape_attribute(contribution.key)}">\n'
            f"{contribution.text}\n</context_contribution>")
    return Message(role="user", content=(TextBlock(text=text),), synthetic=True)


def recorded_context_source(session: Session) -> Any:
    from ..context import RecordedContextSource

    return RecordedContextSource(session)


def collect_contributions(source: Any, run: Callable[[Any], Any], *, session_id: str,
                          run_id: str, step_index: int, workspace_root: str | None,
                          run_input: str) -> tuple[Any, ...]:
    """Ask the context source for this step's snapshot (R-DYN-1); the snapshot is the whole state.

    ``run`` drives the coroutine to completion (the replay's own event loop)."""
    from ..context import ContextBuildScope

    scope = ContextBuildScope(session_id=session_id, run_id=run_id, step_index=step_index,
                              workspace_root=workspace_root, run_input=run_input)
    snapshot = run(source.collect(scope))
    return tuple(snapshot.contributions)


def select_contributions(contributions: tuple[Any, ...], allowance: int, estimator: Any,
                         ) -> tuple[set[str], dict[str, str]]:
    """Kept keys and ``{removed key: reason}`` from the R-DYN-4 selection function."""
    from ..context import ContextSnapshot
    from ..context import select_contributions as _select

    result = _select(ContextSnapshot(contributions=contributions), allowance, estimator=estimator)
    kept = {_key(item) for item in result.kept}
    removed = {_key(item): getattr(item, "reason", "removed under budget pressure")
               for item in result.removed}
    return kept, removed


def _key(item: Any) -> str:
    return item.key if hasattr(item, "key") else item.contribution.key


#: Formats whose tools follow the OpenAI chat agents' names (bash, read_file, str_replace_editor…).
_CHAT_TOOL_NAMES = {"swe_agent", "otel"}


def tool_kind_map(source_format: str) -> Any:
    from ..errors import ConfigError
    from ..reduction import ToolKindMap

    try:
        return ToolKindMap(format="openai_chat" if source_format in _CHAT_TOOL_NAMES else source_format)
    except ConfigError:  # a format without its own table uses the common (Claude Code) names
        return ToolKindMap(format="native")


def reduce_history(messages: tuple[Message, ...], *, config: Any, state: Any,
                   session_dir: Path | None, context_read_available: bool, tool_kinds: Any,
                   estimator: Any, todos_completed: bool = False) -> Any:
    """One call of the reduction engine over the working history (R-RED-1, R-POL-2);
    ``todos_completed`` grants the wrap-up grace of R-RED-9."""
    from ..reduction import reduce_request

    return reduce_request(messages, config=config.reduction, policy=config.context_policy,
                          state=state, session_dir=session_dir,
                          context_read_available=context_read_available, tool_kinds=tool_kinds,
                          todos_completed=todos_completed, estimator=estimator)


def compact_history(history: tuple[Message, ...], *, current_request: Message | None,
                    config: Any, thresholds: Any, prompts: Any, summarizer: Any,
                    session_dir: Path | None, estimator: Any, request_tokens: int,
                    tools: tuple[dict, ...], previous: Any) -> Any:
    """One call of the compaction engine (R-CMP-5…9)."""
    from ..compaction import compact

    return compact(history, current_request=current_request, config=config,
                   thresholds=thresholds, prompts=prompts, summarizer=summarizer,
                   session_dir=session_dir, estimator=estimator, request_tokens=request_tokens,
                   tools=tools, trigger="auto", previous=previous)
