"""The one YAML reader of the project, and the one conversion of a YAML error into a
:class:`~iris.errors.ConfigError`.

Every YAML text the project reads from a user (configurations, presets, context.yaml, the
Configuration page's editor) goes through :func:`read_yaml`. A syntax error reads
``invalid YAML: <problem>`` with the file and the 1-based line of the problem. Alias expansion is
bounded (R-BOUND-1): a document whose aliases, each counted as the whole node it repeats, add more
than :data:`MAX_YAML_NODES` nodes is refused at the alias that passes the bound ("billion laughs":
550 bytes of nested aliases expand to 10⁹ strings, and everything that walks them spins), as is
an alias inside its own anchor (a cyclic document). Nesting deeper than :data:`MAX_YAML_DEPTH`
levels is refused with the file, line and field where it passes the bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import yaml

from .errors import ConfigError

__all__ = ["MAX_YAML_DEPTH", "MAX_YAML_NODES", "node_line", "read_yaml", "relocated", "yaml_error"]

MAX_YAML_NODES = 100_000
"""Most nodes a document's aliases may repeat, each alias counted as the whole node it repeats (a
configuration has a few hundred nodes; plain nodes written out are not counted: their parse is
linear in the text)."""
MAX_YAML_DEPTH = 100
"""Deepest nesting of mappings and sequences (composing and building a document recurses per
level: 3,000 levels were a RecursionError)."""
#: Keys of a field path shown in the error of a document nested too deep.
_FIELD_PARTS = 8


def _expanded(node: yaml.Node, sizes: dict[int, int]) -> int:
    """Nodes under ``node`` with aliases expanded, memoised by node (each anchor counted once)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    size = 1
    value: object = node.value
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded(child, sizes) for child in cast("list[yaml.Node]", value))
    elif isinstance(node, yaml.MappingNode):
        pairs = cast("list[tuple[yaml.Node, yaml.Node]]", value)
        size += sum(_expanded(k, sizes) + _expanded(v, sizes) for k, v in pairs)
    sizes[id(node)] = min(size, MAX_YAML_NODES + 1)
    return sizes[id(node)]


def _field(path: Sequence[object]) -> str:
    """``a.b[0].c`` for the keys and indices of ``path`` (the first few, when it is long)."""
    shown = path[:_FIELD_PARTS]
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in shown).lstrip(".")
    return text + ("…" if len(path) > len(shown) else "")


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, counting the nodes its aliases repeat and the depth of its collections
    as it composes them."""

    def __init__(self, text: str, path: str | None) -> None:
        super().__init__(text)
        self.path = path
        self.nodes = 0
        self.sizes: dict[int, int] = {}
        self.open_anchors: set[str] = set()
        self.keys: list[object] = []
        """Key (or sequence index) of each collection being composed, outermost first."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = cast("yaml.Event", self.peek_event())  # pyright: ignore[reportUnknownMemberType]
        mark = cast("yaml.Mark | None", event.start_mark)
        line = mark.line + 1 if mark is not None else None
        if isinstance(event, yaml.AliasEvent):
            anchor = str(event.anchor)
            if anchor in self.open_anchors:
                raise ConfigError(f"alias *{anchor} refers to the node that contains it (a "
                                  "recursive document is not supported)", path=self.path,
                                  line=line)
            target = self.anchors.get(anchor)
            self._count(_expanded(target, self.sizes) if target is not None else 1, line)
            return super().compose_node(parent, index)  # pyright: ignore[reportUnknownMemberType]
        collection = isinstance(event, yaml.CollectionStartEvent)
        if collection:
            self._enter(index, line)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self.open_anchors.add(str(anchor))
        try:
            return super().compose_node(parent, index)  # pyright: ignore[reportUnknownMemberType]
        finally:
            if anchor is not None:
                self.open_anchors.discard(str(anchor))
            if collection:
                self.keys.pop()

    def _enter(self, index: object, line: int | None) -> None:
        key = index.value if isinstance(index, yaml.ScalarNode) else index
        self.keys.append(key if isinstance(key, (str, int)) else "?")
        if len(self.keys) > MAX_YAML_DEPTH:
            raise ConfigError(f"nested more than {MAX_YAML_DEPTH} levels deep (a configuration "
                              "nests a few levels)", path=self.path, line=line,
                              field=_field(self.keys[1:]) or None)

    def _count(self, nodes: int, line: int | None) -> None:
        self.nodes += nodes
        if self.nodes > MAX_YAML_NODES:
            raise ConfigError(f"aliases expand to more than {MAX_YAML_NODES:,} nodes (a document "
                              "that repeats its anchors this often is refused)", path=self.path,
                              line=line)


def yaml_error(exc: yaml.YAMLError, path: str | None) -> ConfigError:
    """``exc`` as a ConfigError naming ``path`` and the line of the problem (when YAML knows it)."""
    mark = getattr(exc, "problem_mark", None)
    line = getattr(mark, "line", None)
    problem = getattr(exc, "problem", None) or exc
    return ConfigError(f"invalid YAML: {problem}", path=path,
                       line=line + 1 if isinstance(line, int) else None)


def read_yaml(text: str, path: str | None) -> tuple[object, yaml.Node | None]:
    """The document in ``text`` (safe loader) and its node tree; a syntax error is the
    :class:`~iris.errors.ConfigError` of :func:`yaml_error` naming ``path``."""
    try:
        loader = _BoundedLoader(text, path)
        try:
            node = loader.get_single_node()
            data = cast("object", loader.construct_document(node)  # pyright: ignore[reportUnknownMemberType]
                        ) if node is not None else None
        finally:  # the stub leaves Parser.dispose() unannotated (it returns None)
            loader.dispose()  # pyright: ignore[reportUnknownMemberType]
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path) from None
    return data, node


def node_line(root: yaml.Node | None, path: Sequence[object]) -> int | None:
    """The 1-based line an error at ``path`` (mapping keys and sequence indices, as a validation
    error locates a field) points to: the line of the entry's key, or of the sequence item; when
    the path leaves the document, the line of its deepest existing ancestor. The one mapping from
    a field path to a line (configurations, runner configurations, context.yaml)."""
    if root is None:
        return None
    node, line = root, root.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode):
            pairs = cast("list[tuple[yaml.Node, yaml.Node]]", node.value)
            hit = next(((k, v) for k, v in pairs
                        if isinstance(k, yaml.ScalarNode) and k.value == part), None)
            if hit is None:
                break
            node, line = hit[1], hit[0].start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            items = cast("list[yaml.Node]", node.value)
            if not 0 <= part < len(items):
                break
            node = items[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def relocated(exc: ConfigError, source: str, root: yaml.Node | None) -> ConfigError:
    """``exc`` (raised while building a configuration from a parsed document) restated against
    the document's file ``source`` with the line its field path points to."""
    keys = tuple((exc.field or "").replace("[", ".").split(".")) if exc.field else ()
    return ConfigError(exc.problem, path=source, field=exc.field, line=node_line(root, keys))
