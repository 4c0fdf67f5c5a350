"""``ContextBuilder``: render the three static context positions into messages (R-BUILD-4, -5).

Without a template a section is rendered by the default XML renderer; with one, the template gets
``slots`` (enabled, sorted, as dicts) and renders as plain text in the shared sandbox. A rendered
section over ``max_chars`` is an error: static context is never silently truncated.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from .model import POSITIONS, ContextBuildInput, ContextBuildOutput, ContextMessage, ContextSection
from .renderer import TemplateRenderer
from .xml import render_slots

__all__ = ["ContextBuilder"]


class ContextBuilder:
    """Stateless builder; templates are read and compiled on each build (edits apply next build)."""

    def render_section(self, section: ContextSection, position: str,
                       source_path: str | None = None) -> str:
        """The section's text; raises when it exceeds ``max_chars``."""
        slots = section.enabled_slots()
        if section.template is not None:
            # Trailing whitespace (loop newlines) is layout; it never counts against max_chars.
            text = self._render_template(section.template,
                                         [s.as_template_dict() for _, s in slots]).rstrip()
        else:
            try:
                text = render_slots(slots, position)
            except ConfigError as exc:
                raise ConfigError(exc.problem, path=source_path, field=exc.field) from None
        if section.max_chars is not None and len(text) > section.max_chars:
            raise ConfigError(f"rendered section has {len(text)} characters, more than max_chars "
                              f"{section.max_chars} (static context is never truncated)",
                              path=source_path, field=f"{position}.max_chars")
        return text

    @staticmethod
    def _render_template(template_path: str, slots: list[dict[str, Any]]) -> str:
        return TemplateRenderer().render_slots(template_path, slots)

    def build(self, input_data: ContextBuildInput, *, system_addendum: str = "") -> ContextBuildOutput:
        """Messages for ``system`` (system role) and the two user-role context positions."""
        messages: dict[str, ContextMessage | None] = {}
        for position in POSITIONS:
            section = input_data.section(position)
            if section is None:
                messages[position] = None
                continue
            text = self.render_section(section, position, input_data.source_path)
            if position == "system":
                if system_addendum:
                    text = f"{text}\n\n{system_addendum}" if text else system_addendum
                messages[position] = ContextMessage(position="system", role="system", sender="system",
                                                    text=text)
            elif text.strip():
                messages[position] = ContextMessage(position=position, role="user", sender="context",
                                                    text=text)
            else:
                messages[position] = None  # an empty optional section produces no message
        return ContextBuildOutput.model_validate(messages)
