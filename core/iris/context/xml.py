"""The default XML renderer of static context sections (R-BUILD-3, R-BUILD-4) and XML name rules.

Rules (documented in docs/context-yaml.md):

* a slot becomes ``<name a="v">content</name>``; attributes keep their given order;
* text is escaped (``&``, ``<``, ``>``); quotes in text stay literal (valid XML, easier to read);
  attribute values additionally escape ``"`` and turn newlines and tabs into character references;
* single-line text stays inline, multi-line text goes on its own lines between the tags (one
  trailing newline, as YAML block scalars add, is dropped);
* a list renders each item as an ``<item>`` child (recursively), a mapping renders each key as a
  child element (keys must be valid XML names), ``None`` or ``""`` gives an empty element ``<name/>``,
  booleans become ``true``/``false`` and other scalars their ``str()``;
* nothing is indented, so multi-line text is reproduced exactly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, cast

from ..errors import ConfigError

__all__ = ["escape_attribute", "escape_text", "is_xml_name", "render_element", "render_slots"]

# XML 1.0 (5th ed.) NameStartChar / NameChar without ":" (an NCName: prefixes would need namespaces).
_START = ("A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D"
          "\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF")
_REST = _START + r"\-.0-9\u00B7\u0300-\u036F\u203F-\u2040"


@cache
def _name() -> re.Pattern[str]:
    """The pattern of a name, compiled when first used (its character ranges take milliseconds
    to compile, and most processes that import the engine never check a name)."""
    return re.compile(f"[{_START}][{_REST}]*")


def is_xml_name(name: object) -> bool:
    """True when ``name`` can be an XML element or attribute name (no namespace prefix)."""
    return isinstance(name, str) and _name().fullmatch(name) is not None


def escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attribute(value: str) -> str:
    return (escape_text(value).replace('"', "&quot;").replace("\n", "&#10;")
            .replace("\r", "&#13;").replace("\t", "&#9;"))


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _inner(content: Any, field: str) -> str:
    """The rendered inside of an element ("" when empty)."""
    if content is None:
        return ""
    if isinstance(content, Mapping):
        parts: list[str] = []
        for key, value in cast("Mapping[object, object]", content).items():
            if not is_xml_name(key):
                raise ConfigError(f"mapping key {key!r} is not a valid XML name", field=field)
            parts.append(render_element(str(key), value, field=f"{field}.{key}"))
        return "\n".join(parts)
    if isinstance(content, (list, tuple)):
        return "\n".join(render_element("item", item, field=f"{field}[{i}]")
                         for i, item in enumerate(cast("Sequence[object]", content)))
    # A YAML block scalar ends with one newline; it is layout, not content.
    return escape_text(_scalar(content).removesuffix("\n"))


def render_element(name: str, content: Any, attributes: Mapping[str, str] | None = None, *,
                   field: str = "") -> str:
    """One element; ``field`` is the config path used in error messages."""
    attrs = "".join(f' {key}="{escape_attribute(value)}"' for key, value in (attributes or {}).items())
    inner = _inner(content, field)
    if inner == "":
        return f"<{name}{attrs}/>"
    structured = isinstance(content, (Mapping, list, tuple))
    if structured or "\n" in inner:
        return f"<{name}{attrs}>\n{inner}\n</{name}>"
    return f"<{name}{attrs}>{inner}</{name}>"


def render_slots(indexed_slots: list[tuple[int, Any]], section: str) -> str:
    """Render ``(index, ContextSlot)`` pairs (enabled, sorted), one element per slot."""
    return "\n".join(render_element(slot.name, slot.content, slot.attributes,
                                    field=f"{section}.slots[{index}].content")
                     for index, slot in indexed_slots)
