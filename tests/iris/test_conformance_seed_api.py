"""Seed 000 (Iris) API as the seed writes it: positional construction of the context objects.

Seed 000 "每步动态快照" writes ``ContextBuildScope(session_id, run_id, step_index, workspace_root,
run_input)`` and ``ContextContribution(key, text, required=True, priority=100)``; "回读与搜索工具"
writes ``ContextReadPage(ref, representation, offset, next_offset, has_more, content)`` and
``ContextSearchPage(matches, next_after, has_more)``.

The type checker sees only the keyword ``__init__`` pydantic's dataclass transform synthesises, not
the positional one :class:`iris.context.positional.PositionalModel` adds at run time, so each
positional construction below carries ``# pyright: ignore[reportCallIssue]``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from iris.context import (
    ContextBuildScope,
    ContextContribution,
    ContextReadPage,
    ContextSearchMatch,
    ContextSearchPage,
    ContextSnapshot,
)
from pydantic import ValidationError


class GitStatusSource:
    """A context source written the way a reader of the seed writes one."""

    async def collect(self, scope: ContextBuildScope) -> ContextSnapshot:
        assert scope.workspace_root is not None
        root = Path(scope.workspace_root)
        return ContextSnapshot((  # pyright: ignore[reportCallIssue]
            ContextContribution("git_status", f"clean tree at {root.name}"),  # pyright: ignore[reportCallIssue]
            ContextContribution("ci", "CI green", False, 10),  # pyright: ignore[reportCallIssue]
        ))


def test_r_dyn_1_seed_positional_scope_and_contribution():
    """R-DYN-1 (seed 000 每步动态快照): the seed's positional forms construct; keywords still work."""
    scope = ContextBuildScope("s1", "r1", 3, Path("/work/project"), "fix the parser")  # pyright: ignore[reportCallIssue]
    assert (scope.session_id, scope.run_id, scope.step_index, scope.run_input) == (
        "s1", "r1", 3, "fix the parser")
    assert scope.workspace_root is not None and Path(scope.workspace_root) == Path("/work/project")
    assert scope == ContextBuildScope(session_id="s1", run_id="r1", step_index=3,
                                      workspace_root="/work/project", run_input="fix the parser")
    c = ContextContribution("key", "text")  # pyright: ignore[reportCallIssue]
    assert (c.key, c.text, c.required, c.priority) == ("key", "text", True, 100)
    assert ContextContribution("k", "t", False, 5) == ContextContribution(key="k", text="t",  # pyright: ignore[reportCallIssue]
                                                                          required=False, priority=5)
    snapshot = asyncio.run(GitStatusSource().collect(scope))
    assert snapshot.keys == ("git_status", "ci") and snapshot.contributions[1].priority == 10


def test_r_dyn_1_positional_forms_keep_their_checks():
    """Positional values are validated like keywords; extra or doubled arguments are TypeErrors."""
    with pytest.raises(TypeError, match="at most 4 positional"):
        ContextContribution("k", "t", True, 100, "extra")  # pyright: ignore[reportCallIssue]
    with pytest.raises(TypeError, match="multiple values for argument 'key'"):
        ContextContribution("k", "t", key="other")  # pyright: ignore[reportCallIssue]
    with pytest.raises(ValidationError, match="required"):
        ContextContribution("k", "t", "yes")  # pyright: ignore[reportCallIssue]
    with pytest.raises(ValidationError, match="step_index"):
        ContextBuildScope("s", "r", -1)  # pyright: ignore[reportCallIssue]
    with pytest.raises(ValidationError, match="workspace_root"):
        ContextBuildScope("s", "r", 0, 42)  # pyright: ignore[reportCallIssue]


def test_r_pol_4_seed_positional_read_and_search_pages():
    """R-POL-4/R-POL-5 (seed 000 回读与搜索工具): the read and search pages in the seed's order."""
    page = ContextReadPage("result:3:0", "text", 0, 4000, True, "body")  # pyright: ignore[reportCallIssue]
    assert (page.ref, page.representation, page.offset, page.next_offset, page.has_more,
            page.content) == ("result:3:0", "text", 0, 4000, True, "body")
    match = ContextSearchMatch("result:3:0", "tool", "Read", "…parser…")  # pyright: ignore[reportCallIssue]
    found = ContextSearchPage((match,), 200, True)  # pyright: ignore[reportCallIssue]
    assert found.matches[0].tool_name == "Read" and (found.next_after, found.has_more) == (200, True)
    assert found == ContextSearchPage(matches=(match,), next_after=200, has_more=True)
