"""Iris: an LLM agent's context engine (static context, dynamic snapshots, reduction, compaction,
prepared-request records). Pure Python; never imports Streamlit.

The names a reader of the seed uses are importable from ``iris`` itself::

    from iris import ContextBuilder, ContextConfig, Session, load_context_build_input

Each is loaded from its module on first use (``import iris.session`` stays as cheap as the
session module; the replay runner loads the token encoder), and is the very same object as in its
module. The replay function is ``iris.replay.replay``: ``iris.replay`` is the runner's module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_attributes

if TYPE_CHECKING:
    from .config import ContextConfig, default_config, load_config, parse_config
    from .context import (
        ContextBuilder,
        ContextBuildInput,
        ContextBuildOutput,
        ContextBuildScope,
        ContextContribution,
        ContextPolicy,
        ContextReadPage,
        ContextSearchMatch,
        ContextSearchPage,
        ContextSnapshot,
        ContextSource,
        load_context_build_input,
        parse_context_build_input,
    )
    from .errors import ConfigError, IrisError, PreparationError, SessionFormatError, TemplateError
    from .preparation.records import ContextPreparation, PreparedRequest
    from .prompts import PromptSnapshot, PromptSource, PromptTemplates
    from .replay import Replay, ReplayOptions
    from .session import Message, Session, Usage
    from .tokens import TokenEstimator, default_estimator

__version__ = "0.1.0"

_HOMES = {
    "iris.config": ("ContextConfig", "default_config", "load_config", "parse_config"),
    "iris.context": ("ContextBuilder", "ContextBuildInput", "ContextBuildOutput", "ContextBuildScope",
                     "ContextContribution", "ContextPolicy", "ContextReadPage", "ContextSearchMatch",
                     "ContextSearchPage", "ContextSnapshot", "ContextSource",
                     "load_context_build_input", "parse_context_build_input"),
    "iris.errors": ("ConfigError", "IrisError", "PreparationError", "SessionFormatError",
                    "TemplateError"),
    "iris.preparation.records": ("ContextPreparation", "PreparedRequest"),
    "iris.prompts": ("PromptSnapshot", "PromptSource", "PromptTemplates"),
    "iris.replay": ("Replay", "ReplayOptions"),
    "iris.session": ("Message", "Session", "Usage"),
    "iris.tokens": ("TokenEstimator", "default_estimator"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "ConfigError",
    "ContextBuildInput",
    "ContextBuildOutput",
    "ContextBuildScope",
    "ContextBuilder",
    "ContextConfig",
    "ContextContribution",
    "ContextPolicy",
    "ContextPreparation",
    "ContextReadPage",
    "ContextSearchMatch",
    "ContextSearchPage",
    "ContextSnapshot",
    "ContextSource",
    "IrisError",
    "Message",
    "PreparationError",
    "PreparedRequest",
    "PromptSnapshot",
    "PromptSource",
    "PromptTemplates",
    "Replay",
    "ReplayOptions",
    "Session",
    "SessionFormatError",
    "TemplateError",
    "TokenEstimator",
    "Usage",
    "default_config",
    "default_estimator",
    "load_config",
    "load_context_build_input",
    "parse_config",
    "parse_context_build_input",
]


#: Marks this package as the Context Workbench engine: another distribution also installs a
#: top-level ``iris`` (SciTools Iris), and ``workbench`` checks for this name to say which one won.
__context_workbench_engine__ = True

__getattr__ = lazy_attributes("iris", _MODULE_OF, globals())

# The helpers this module needed are not part of what ``iris`` offers (``dir(iris)``, completion).
del TYPE_CHECKING, annotations, lazy_attributes


def __dir__() -> list[str]:
    return sorted({*__all__, "__version__"})
