"""The seed's public names for the static context's template rendering and built messages.

* :data:`Msg` is the message :meth:`ContextBuilder.build` returns for each position (the
  ``system`` message with the system role, ``memory`` and ``before_current_input`` as user
  messages of the context sender): the same class as :class:`ContextMessage`.
* :class:`TemplateRenderer` renders a custom section template the way the builder does: plain
  text (nothing is escaped, so a template that writes XML escapes values itself with
  ``escape_text`` / ``escape_attribute``), in the shared sandbox with its time and size limits,
  errors naming the template and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import TemplateError
from ..prompts.render import compile_template, render_template
from .model import ContextMessage

__all__ = ["Msg", "TemplateRenderer"]

Msg = ContextMessage
"""One built context message (``position``, ``role``, ``sender``, ``text``; ``to_message()``)."""


class TemplateRenderer:
    """Renders Jinja templates as plain text in the sandbox (stateless; compiles on each call,
    so an edited file applies at the next render)."""

    def render(self, source: str, variables: Mapping[str, Any], *, name: str = "<template>") -> str:
        """Render template text ``source`` with ``variables``."""
        return render_template(compile_template(source, name), variables, name)

    def render_file(self, path: str | Path, variables: Mapping[str, Any]) -> str:
        """Render the template file at ``path`` (UTF-8)."""
        try:
            source = Path(path).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TemplateError(f"cannot read template: {exc}", template=str(path)) from None
        return self.render(source, variables, name=str(path))

    def render_slots(self, path: str | Path, slots: list[dict[str, Any]]) -> str:
        """A section template: it receives ``slots`` (enabled, sorted slot dictionaries)."""
        return self.render_file(path, {"slots": slots})
