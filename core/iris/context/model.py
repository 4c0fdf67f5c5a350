"""Typed static context (R-BUILD-1…3, R-BUILD-5): slots, sections, the build input and output.

These are the public construction types of ``iris.context``. Validation lives on the models, so a
section built in code gets the same checks as one read from ``context.yaml``; the loader only adds
file-relative template resolution and field paths with line numbers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from ..frozen import FrozenModel
from ..session import Message, TextBlock
from .xml import is_xml_name

__all__ = [
    "POSITIONS",
    "ContextBuildInput",
    "ContextBuildOutput",
    "ContextMessage",
    "ContextSection",
    "ContextSlot",
    "Position",
]

Position = Literal["system", "memory", "before_current_input"]
POSITIONS: tuple[Position, ...] = ("system", "memory", "before_current_input")


_Frozen = FrozenModel


def _check_content(value: Any, where: str) -> None:
    """Mapping keys inside content become element names, so they must be XML names too."""
    if isinstance(value, Mapping):
        for key, item in cast("Mapping[object, object]", value).items():
            if not is_xml_name(key):
                raise ValueError(f"mapping key {key!r} in {where} is not a valid XML name")
            _check_content(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(cast("Sequence[object]", value)):
            _check_content(item, f"{where}[{i}]")


class ContextSlot(_Frozen):
    """One named piece of static context, rendered as an XML element by default."""

    name: StrictStr
    """A valid XML tag name (no namespace prefix)."""
    content: Any
    """Text, a list, a mapping or another scalar (see the XML renderer's rules)."""
    order: StrictInt = 100
    """Slots sort by ``order``, then by ``name``."""
    attributes: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    """String attribute values; names must be valid XML names."""
    enabled: StrictBool = True
    """A disabled slot is not rendered (and not passed to custom templates)."""

    @field_validator("name")
    @classmethod
    def _name_is_xml(cls, value: str) -> str:
        if not is_xml_name(value):
            raise ValueError(f"{value!r} is not a valid XML tag name")
        return value

    @field_validator("attributes", mode="before")
    @classmethod
    def _attributes(cls, value: Any) -> Any:
        """Report every bad attribute name and non-string value at once."""
        if not isinstance(value, Mapping):
            return value  # pydantic reports the type
        given = cast("Mapping[object, object]", value)
        problems = [f"attribute name {key!r} is not a valid XML name"
                    for key in given if not is_xml_name(key)]
        problems += [f"attribute {key!r} must be a string, got {type(v).__name__} {v!r} (quote it)"
                     for key, v in given.items() if not isinstance(v, str)]
        if problems:
            raise ValueError("; ".join(problems))
        return given

    @field_validator("content")
    @classmethod
    def _content_keys(cls, value: Any) -> Any:
        _check_content(value, "content")
        return value

    def as_template_dict(self) -> dict[str, Any]:
        return {"name": self.name, "content": self.content, "order": self.order,
                "attributes": dict(self.attributes), "enabled": self.enabled}


class ContextSection(_Frozen):
    """Slots of one position plus an optional custom template and character limit."""

    slots: tuple[ContextSlot, ...] = ()
    template: StrictStr | None = None
    """Absolute path of a custom Jinja template (the YAML loader resolves relative paths)."""
    max_chars: StrictInt | None = Field(default=None, gt=0)
    """Upper bound on the rendered section; exceeding it is an error, never a truncation."""

    @field_validator("template")
    @classmethod
    def _template_absolute(cls, value: str | None) -> str | None:
        if value is not None and not os.path.isabs(value):
            raise ValueError(f"template {value!r} must be an absolute path when a section is "
                             "constructed directly (context.yaml resolves it relative to the file)")
        return value

    def enabled_slots(self) -> list[tuple[int, ContextSlot]]:
        """``(original index, slot)`` of enabled slots, sorted by order then name."""
        pairs = [(i, s) for i, s in enumerate(self.slots) if s.enabled]
        return sorted(pairs, key=lambda pair: (pair[1].order, pair[1].name))


class ContextBuildInput(_Frozen):
    """The three positions of static context; ``system`` needs at least one enabled slot."""

    system: ContextSection
    memory: ContextSection | None = None
    before_current_input: ContextSection | None = None
    source_path: str | None = Field(default=None, exclude=True)
    """Where it was loaded from (for error messages); not a context.yaml key."""

    @model_validator(mode="after")
    def _system_has_enabled_slot(self) -> ContextBuildInput:
        if not any(slot.enabled for slot in self.system.slots):
            raise ValueError("system must have at least one enabled slot")
        return self

    def section(self, position: Position) -> ContextSection | None:
        return getattr(self, position)


class ContextMessage(_Frozen):
    """One built message: ``system`` role for the system position, else a user message."""

    position: Position
    role: Literal["system", "user"]
    sender: Literal["system", "context"]
    """``context``: the context sender of user-role static context messages."""
    text: str

    def to_message(self) -> Message:
        """As a session message (what the preparation pipeline assembles)."""
        return Message(role=self.role, content=(TextBlock(text=self.text),), synthetic=True)


class ContextBuildOutput(_Frozen):
    """The messages for the three positions; an empty optional section has none."""

    system: ContextMessage
    memory: ContextMessage | None = None
    before_current_input: ContextMessage | None = None

    @property
    def messages(self) -> tuple[ContextMessage, ...]:
        return tuple(m for m in (self.system, self.memory, self.before_current_input) if m is not None)
