"""Seed 000 (Iris) API as the seed writes it: positional construction of the context objects.

Seed 000 "每步动态快照" writes ``ContextBuildScope(session_id, run_id, step_index, workspace_root,
run_input)`` and ``ContextContribution(key, text, required=True, priority=100)``; "回读与搜索工具"
writes ``ContextReadPage(ref, representation, offset, next_offset, has_more, content)`` and
``ContextSearchPage(matches, next_after, has_more)``.
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
        root = Path(scope.workspace_root)
        return ContextSnapshot((
            ContextContribution("git_status", f"clean tree at {root.name}"),
            ContextContribution("ci", "CI green", False, 10),
        ))


def test_r_dyn_1_seed_positional_scope_and_contribution():
    """R-DYN-1 (seed 000 每步动态快照): the seed's positional forms construct; keywords still work."""
    scope = ContextBuildScope("s1", "r1", 3, Path("/work/project"), "fix the parser")
    assert (scope.session_id, scope.run_id, scope.step_index, scope.run_input) == (
        "s1", "r1", 3, "fix the parser")
    assert Path(scope.workspace_root) == Path("/work/project")
    assert scope == ContextBuildScope(session_id="s1", run_id="r1", step_index=3,
                                      workspace_root="/work/project", run_input="fix the parser")
    c = ContextContribution("key", "text")
    assert (c.key, c.text, c.required, c.priority) == ("key", "text", True, 100)
    assert ContextContribution("k", "t", False, 5) == ContextContribution(key="k", text="t",
                                                                          required=False, priority=5)
    snapshot = asyncio.run(GitStatusSource().collect(scope))
    assert snapshot.keys == ("git_status", "ci") and snapshot.contributions[1].priority == 10


def test_r_dyn_1_positional_forms_keep_their_checks():
    """Positional values are validated like keywords; extra or doubled arguments are TypeErrors."""
    with pytest.raises(TypeError, match="at most 4 positional"):
        ContextContribution("k", "t", True, 100, "extra")
    with pytest.raises(TypeError, match="multiple values for argument 'key'"):
        ContextContribution("k", "t", key="other")
    with pytest.raises(ValidationError, match="required"):
        ContextContribution("k", "t", "yes")
    with pytest.raises(ValidationError, match="step_index"):
        ContextBuildScope("s", "r", -1)
    with pytest.raises(ValidationError, match="workspace_root"):
        ContextBuildScope("s", "r", 0, 42)


def test_r_pol_4_seed_positional_read_and_search_pages():
    """R-POL-4/R-POL-5 (seed 000 回读与搜索工具): the read and search pages in the seed's order."""
    page = ContextReadPage("result:3:0", "text", 0, 4000, True, "body")
    assert (page.ref, page.representation, page.offset, page.next_offset, page.has_more,
            page.content) == ("result:3:0", "text", 0, 4000, True, "body")
    match = ContextSearchMatch("result:3:0", "tool", "Read", "…parser…")
    found = ContextSearchPage((match,), 200, True)
    assert found.matches[0].tool_name == "Read" and (found.next_after, found.has_more) == (200, True)
    assert found == ContextSearchPage(matches=(match,), next_after=200, has_more=True)
