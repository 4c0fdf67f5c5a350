"""iris.runner: run the engine live, not only in replays.

``AgentRunner.from_config(config, context_source=source, tools=[...])`` (or
``from_config_file(path, ...)``) binds a dynamic context source, the host's tools and a model
client for an OpenAI-compatible chat-completions endpoint; ``runner.run(text)`` runs one
conversation turn through the same preparation pipeline a replay uses, records every
``ContextPreparation`` and writes the session in the native format the workbench imports.
Several runners (sessions) may share one context source, also from different threads.
``TemplateRenderer`` and ``Msg`` are the seed's names for the static context's template
rendering and built messages (see :mod:`iris.context.renderer`).
"""

from ..context.renderer import Msg, TemplateRenderer
from .agent import AgentRunner, RunResult
from .config import EndpointConfig, RunnerConfig, load_runner_config, parse_runner_config
from .model import ChatModel, ModelCallFailed, ModelReply, OpenAIChatModel
from .record import PREPARATIONS_FILE, SESSION_FILE, SessionRecord
from .tools import Tool
from .wire import real_paths

__all__ = [
    "PREPARATIONS_FILE",
    "SESSION_FILE",
    "AgentRunner",
    "ChatModel",
    "EndpointConfig",
    "ModelCallFailed",
    "ModelReply",
    "Msg",
    "OpenAIChatModel",
    "RunResult",
    "RunnerConfig",
    "SessionRecord",
    "TemplateRenderer",
    "Tool",
    "load_runner_config",
    "parse_runner_config",
    "real_paths",
]
