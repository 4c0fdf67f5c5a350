"""Recovery files for reduced and oversized tool outputs (R-RED-7, R-RED-8).

* ``reduced-artifacts/<tool>-<12 hex>.txt``: the exact original bytes of an output that a lossy
  summary replaced; content-addressed (sha256), so the same content is written once.
* ``tool-outputs/<tool>-<12 hex>.txt``: results over the 50 KiB inline budget, replaced on first
  entry by a bounded preview plus a stable reference to that file.

File names are sanitised and resolved so that nothing escapes the session directory, whatever the
tool name contains.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ..errors import StorageError
from ..session import ToolResultBlock

__all__ = [
    "INLINE_BUDGET_BYTES", "PREVIEW_BYTES", "PREVIEW_MAX_LINES", "REDUCED_DIR", "TOOL_OUTPUTS_DIR",
    "artifact_path", "externalize_large_result", "safe_tool_name", "write_artifact",
]

REDUCED_DIR = "reduced-artifacts"
TOOL_OUTPUTS_DIR = "tool-outputs"
INLINE_BUDGET_BYTES = 50 * 1024
"""Results larger than this are saved to ``tool-outputs/`` on first entry (R-RED-8)."""
PREVIEW_BYTES = 8 * 1024
"""Size of the preview that replaces an externalised result."""
PREVIEW_MAX_LINES = 2000
PREVIEW_LINE_CHARS = 2000
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_tool_name(tool_name: str) -> str:
    """A file-name-safe, lowercase form of a tool name (no separators, no leading dots)."""
    name = _UNSAFE.sub("_", tool_name.lower()).strip("._")[:40]
    return name or "tool"


def artifact_path(session_dir: Path | str, kind_dir: str, tool_name: str, text: str) -> Path:
    """Where the content-addressed file for ``text`` lives (it need not exist yet)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    root = (Path(session_dir) / kind_dir).resolve()
    path = (root / f"{safe_tool_name(tool_name)}-{digest}.txt").resolve()
    if path.parent != root:  # cannot happen with a sanitised name; refuse rather than escape
        raise StorageError(f"artifact path {str(path)!r} escapes {str(root)!r}")
    return path


def write_artifact(session_dir: Path | str, kind_dir: str, tool_name: str, text: str) -> Path:
    """Write ``text`` exactly (UTF-8 bytes, no newline translation) unless the same content exists."""
    path = artifact_path(session_dir, kind_dir, tool_name, text)
    if path.exists():
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(text.encode())
        tmp.replace(path)
    except OSError as exc:
        raise StorageError(f"cannot write artifact {str(path)!r}: {exc}") from exc
    return path


def _preview(text: str) -> str:
    out, used = [], 0
    for i, line in enumerate(text.splitlines()):
        if i >= PREVIEW_MAX_LINES:
            break
        line = line[:PREVIEW_LINE_CHARS]
        size = len(line.encode()) + 1
        if used + size > PREVIEW_BYTES:
            break
        out.append(line)
        used += size
    return "\n".join(out)


def externalize_large_result(block: ToolResultBlock, *, session_dir: Path | str,
                             tool_name: str) -> tuple[ToolResultBlock, Path | None]:
    """Save a result over :data:`INLINE_BUDGET_BYTES` to ``tool-outputs/`` and return the preview
    block (with ``artifact_path`` set) and the file; smaller results come back unchanged with None."""
    size = len(block.text.encode())
    if size <= INLINE_BUDGET_BYTES or block.artifact_path:
        return block, None
    path = write_artifact(session_dir, TOOL_OUTPUTS_DIR, tool_name, block.text)
    preview = _preview(block.text)
    lines = len(block.text.splitlines())
    shown = len(preview.splitlines())
    note = (f"[Output truncated at the {INLINE_BUDGET_BYTES // 1024} KiB inline budget: "
            f"{size:,} bytes, {lines:,} lines; the first {shown:,} lines are shown above. "
            f"Full output saved to {path}]")
    return block.model_copy(update={"text": f"{preview}\n{note}", "artifact_path": str(path)}), path
