"""iris.context: static context (context.yaml → three messages) and dynamic per-step snapshots.

Static: ``load_context_build_input`` reads a context.yaml into ``ContextBuildInput``;
``ContextBuilder.build`` renders the ``system``, ``memory`` and ``before_current_input`` messages
(R-BUILD-1…5). Dynamic: ``ContextSource.collect(scope)`` returns a ``ContextSnapshot`` of keyed
contributions; ``select_contributions`` applies the R-DYN-4 removal order under an allowance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .access import (
        ContextAccessPort,
        ContextReadPage,
        ContextReadParams,
        ContextSearchMatch,
        ContextSearchPage,
        ContextSearchParams,
    )
    from .build import ContextBuilder
    from .load import ContextValidationError, load_context_build_input, parse_context_build_input
    from .model import (
        ContextBuildInput,
        ContextBuildOutput,
        ContextMessage,
        ContextSection,
        ContextSlot,
    )
    from .policy import ContextPolicy
    from .renderer import Msg, TemplateRenderer
    from .selection import (
        ContributionSelection,
        KeptContribution,
        RemovedContribution,
        select_contributions,
    )
    from .sources import (
        ContextBuildScope,
        ContextContribution,
        ContextSnapshot,
        ContextSource,
        RecordedContextSource,
        StaticContextSource,
    )
    from .xml import escape_attribute, escape_text, is_xml_name

# Each name is loaded from its module on first use: a replay needs the sources and the policy,
# not the builder with its Jinja renderer, the context.yaml loader or the access port (with the
# reduction package behind it), which together took tens of milliseconds of every start.
_HOMES = {
    "access": ("ContextAccessPort", "ContextReadPage", "ContextReadParams", "ContextSearchMatch",
               "ContextSearchPage", "ContextSearchParams"),
    "build": ("ContextBuilder",),
    "load": ("ContextValidationError", "load_context_build_input", "parse_context_build_input"),
    "model": ("ContextBuildInput", "ContextBuildOutput", "ContextMessage", "ContextSection",
              "ContextSlot"),
    "policy": ("ContextPolicy",),
    "renderer": ("Msg", "TemplateRenderer"),
    "selection": ("ContributionSelection", "KeptContribution", "RemovedContribution",
                  "select_contributions"),
    "sources": ("ContextBuildScope", "ContextContribution", "ContextSnapshot", "ContextSource",
                "RecordedContextSource", "StaticContextSource"),
    "xml": ("escape_attribute", "escape_text", "is_xml_name"),
}
_MODULE_OF = {name: f"{__name__}.{module}" for module, names in _HOMES.items() for name in names}
__getattr__ = lazy_attributes(__name__, _MODULE_OF, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "ContextAccessPort",
    "ContextBuildInput",
    "ContextBuildOutput",
    "ContextBuildScope",
    "ContextBuilder",
    "ContextContribution",
    "ContextMessage",
    "ContextPolicy",
    "ContextReadPage",
    "ContextReadParams",
    "ContextSearchMatch",
    "ContextSearchPage",
    "ContextSearchParams",
    "ContextSection",
    "ContextSlot",
    "ContextSnapshot",
    "ContextSource",
    "ContextValidationError",
    "ContributionSelection",
    "KeptContribution",
    "Msg",
    "RecordedContextSource",
    "RemovedContribution",
    "StaticContextSource",
    "TemplateRenderer",
    "escape_attribute",
    "escape_text",
    "is_xml_name",
    "load_context_build_input",
    "parse_context_build_input",
    "select_contributions",
]
