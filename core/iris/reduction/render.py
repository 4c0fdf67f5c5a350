"""Turn a verdict into the text sent in place of a tool result, with its recovery lines.

Archiving (R-RED-7): every lossy rendering of an output over :data:`ARCHIVE_MIN_BYTES` gets the full
original in ``reduced-artifacts/`` and the line ``Full output saved to <path>``, except renderings
that already have a recovery path (superseded reads, reads made stale by an edit, diagnostics,
confirmations, results that already carry an artifact — for those the existing artifact is named
instead). Every copy of a repeated output names the one content-addressed archive its copies share.
"""

from __future__ import annotations

from typing import assert_never

from . import summaries as S
from .artifacts import REDUCED_DIR, ArtifactWriter, logical_path
from .classify import ResultInfo, Verdict

__all__ = ["ARCHIVE_MIN_BYTES", "Rendering", "archive_exempt", "render_base", "render_verdict"]

ARCHIVE_MIN_BYTES = 2000
"""SPEC R-RED-7: summaries of outputs over 2000 bytes are archived first."""


def render_base(verdict: Verdict, info: ResultInfo) -> str:
    """The marker/summary text for ``verdict.render`` (no recovery lines)."""
    tool, text, facts = info.tool_name, info.text, info.facts
    match verdict.render:
        case "stale_read":
            return S.stale_read_marker(text, read_range=facts.read_range, total=facts.total_lines,
                                       why=verdict.why or "modified")
        case "repeat":
            return S.repeated_marker(tool)
        case "confirmation":
            return S.confirmation_marker()
        case "error":
            return S.error_summary(tool, text)
        case "diagnostics":
            return S.diagnostics_summary(tool, text)
        case "diff":
            return S.diff_summary(tool, text)
        case "search":
            return S.search_summary(tool, text, info.arguments)
        case "json":
            return S.json_summary(tool, text)
        case "read_like":
            where = facts.path or info.arguments.get("url")
            return S.read_like_summary(tool, text, path=str(where) if where else None,
                                       read_range=facts.read_range)
        case "shell_log":
            return S.log_summary(text)
        case "shell_success":
            return S.shell_success_summary(text)
        case "skill":
            return S.skill_summary(text) or text
        case "generic":
            return S.generic_summary(tool, text)
        case "trim" | None:  # the trim stage writes its preview itself; a kept result is not rendered
            raise ValueError(f"render_base has no summary for render={verdict.render!r}")
        case _:
            assert_never(verdict.render)


def archive_exempt(verdict: Verdict, info: ResultInfo) -> bool:
    """True when the rendering already has a recovery path and must not be archived."""
    if verdict.render in ("confirmation", "diagnostics"):
        return True
    if verdict.render == "stale_read" and verdict.why in ("superseded", "modified"):
        return True
    return info.has_artifact


class Rendering:
    """A rendered replacement and where its full original can be recovered."""

    __slots__ = ("artifact", "text", "write")

    def __init__(self, text: str, artifact: str | None, write: bool) -> None:
        self.text = text
        self.artifact = artifact
        self.write = write


def render_verdict(verdict: Verdict, info: ResultInfo, *, work_dir: ArtifactWriter | None,
                   existing_artifact: str | None) -> Rendering:
    """Render and decide the recovery path (a logical ``<session_dir>/…`` path, so the text does
    not depend on where the directory is); the archive is written only by :func:`commit`."""
    base = render_base(verdict, info)
    if existing_artifact:
        return Rendering(f"{base}\nFull output saved to {existing_artifact}", existing_artifact, False)
    if archive_exempt(verdict, info) or info.bytes <= ARCHIVE_MIN_BYTES or work_dir is None:
        return Rendering(base, None, False)
    path = logical_path(REDUCED_DIR, info.tool_name, info.text)
    return Rendering(f"{base}\nFull output saved to {path}", path, True)


def commit(rendering: Rendering, info: ResultInfo, work_dir: ArtifactWriter | None) -> None:
    """Write the archive of an applied rendering (content-addressed; a no-op when it exists)."""
    if rendering.write and work_dir is not None:
        work_dir.write(REDUCED_DIR, info.tool_name, info.text)
