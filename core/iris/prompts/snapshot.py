"""Frozen prompt template sources and rendering from them (R-PRM-3, R-PRM-4).

A :class:`PromptSnapshot` holds the source text of all 15 templates. It never changes: an edit makes
a new snapshot with :meth:`PromptSnapshot.with_template` and nothing is written to disk, so every
complete operation can render from the snapshot it started with. ``snapshot_id`` is a content hash
over the sorted sources; replays record it to say exactly which templates they used.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, lru_cache
from importlib import resources
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..errors import TemplateError
from ..hashing import content_hash
from .ids import PROMPT_IDS, PROMPT_VARIABLES

if TYPE_CHECKING:  # Jinja is imported where a template is compiled or rendered
    import jinja2

__all__ = ["PromptSnapshot", "check_prompt_id", "default_template_source"]


def check_prompt_id(prompt_id: str) -> None:
    """TemplateError unless ``prompt_id`` is a known prompt id."""
    if prompt_id not in PROMPT_VARIABLES:
        raise TemplateError(f"unknown prompt id {prompt_id!r}; known ids: {', '.join(PROMPT_IDS)}",
                            template=prompt_id)


@cache
def default_template_source(prompt_id: str) -> str:
    """The packaged default source of one id (read from package data, cached)."""
    check_prompt_id(prompt_id)
    return (resources.files("iris.prompts") / "defaults" / f"{prompt_id}.j2").read_text("utf-8")


def _compile_checked(prompt_id: str, source: str) -> jinja2.Template:
    """Compile and refuse names the consuming code never provides (caught at edit time)."""
    from jinja2 import meta

    from .render import compile_template, sandbox_environment

    template = compile_template(source, prompt_id)
    used = meta.find_undeclared_variables(sandbox_environment().parse(source))
    unknown = sorted(used - set(PROMPT_VARIABLES[prompt_id]))
    if unknown:
        raise TemplateError(
            f"uses variables not provided for this id: {', '.join(unknown)}; "
            f"available: {', '.join(PROMPT_VARIABLES[prompt_id])}", template=prompt_id)
    return template


class PromptSnapshot:
    """Immutable sources of all prompt ids, compiled once; render with :meth:`render`.

    Sources given here are compiled and checked at once (an edit is refused when it is made).
    The packaged defaults (:meth:`defaults`) are compiled when first rendered: they are checked
    by the tests, and most replays render none of them (compiling all 15 took about a tenth of
    a replay process's start-up)."""

    __slots__ = ("_compiled", "_snapshot_id", "_sources")

    def __init__(self, sources: Mapping[str, str],
                 _compiled: Mapping[str, jinja2.Template | None] | None = None) -> None:
        missing = [pid for pid in PROMPT_IDS if pid not in sources]
        extra = sorted(set(sources) - set(PROMPT_IDS))
        if extra:
            check_prompt_id(extra[0])
        if missing:
            raise TemplateError(f"snapshot lacks sources for: {', '.join(missing)}")
        ordered = {pid: str(sources[pid]) for pid in PROMPT_IDS}
        # with_template passes the unchanged ids' compiled templates (None: a default not yet
        # compiled, see render)
        reuse = _compiled or {}
        self._compiled: dict[str, jinja2.Template | None] = {
            pid: reuse[pid] if pid in reuse else _compile_checked(pid, src)
            for pid, src in ordered.items()}
        self._sources = MappingProxyType(ordered)
        self._snapshot_id = content_hash(ordered)

    def __reduce__(self) -> tuple[type[PromptSnapshot], tuple[dict[str, str]]]:
        """Pickle as sources only (compiled templates are rebuilt), e.g. for caches."""
        return (PromptSnapshot, (dict(self._sources),))

    @classmethod
    def defaults(cls) -> PromptSnapshot:
        """The packaged default templates, without touching the workspace."""
        return _default_snapshot()

    @property
    def sources(self) -> Mapping[str, str]:
        """Read-only mapping id → template source, in ``PROMPT_IDS`` order."""
        return self._sources

    @property
    def snapshot_id(self) -> str:
        """``sha256:<hex>`` over the canonical JSON of the sorted sources."""
        return self._snapshot_id

    def template_source(self, prompt_id: str) -> str:
        check_prompt_id(prompt_id)
        return self._sources[prompt_id]

    def with_template(self, prompt_id: str, source: str) -> PromptSnapshot:
        """A new snapshot with one source replaced; this snapshot and the disk stay unchanged."""
        check_prompt_id(prompt_id)
        if self._sources[prompt_id] == source:
            return self
        compiled = {pid: t for pid, t in self._compiled.items() if pid != prompt_id}
        return PromptSnapshot({**self._sources, prompt_id: source}, compiled)

    def edited_ids(self, base: PromptSnapshot) -> tuple[str, ...]:
        """Ids whose source differs from ``base`` (e.g. from the packaged defaults)."""
        return tuple(pid for pid in PROMPT_IDS if self._sources[pid] != base.sources[pid])

    def render(self, prompt_id: str, variables: Mapping[str, Any]) -> str:
        """Render one id; every declared variable is required and no other name is accepted."""
        check_prompt_id(prompt_id)
        declared = PROMPT_VARIABLES[prompt_id]
        missing = [name for name in declared if name not in variables]
        if missing:
            raise TemplateError(f"missing variables: {', '.join(missing)}", template=prompt_id)
        unknown = sorted(set(variables) - set(declared))
        if unknown:
            raise TemplateError(f"unexpected variables: {', '.join(unknown)}; "
                                f"declared: {', '.join(declared)}", template=prompt_id)
        template = self._compiled[prompt_id]
        if template is None:
            template = self._compiled[prompt_id] = _compile_checked(prompt_id, self._sources[prompt_id])
        from .render import render_template

        text = render_template(template, variables, prompt_id)
        return text.strip() + "\n"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PromptSnapshot) and other._snapshot_id == self._snapshot_id

    def __hash__(self) -> int:
        return hash(self._snapshot_id)

    def __repr__(self) -> str:
        return f"PromptSnapshot({self._snapshot_id[:19]}…)"


@lru_cache(maxsize=1)
def _default_snapshot() -> PromptSnapshot:
    sources = {pid: default_template_source(pid) for pid in PROMPT_IDS}
    return PromptSnapshot(sources, dict.fromkeys(PROMPT_IDS))  # compiled when first rendered
