"""Recovery files for reduced and oversized tool outputs (R-RED-7, R-RED-8).

* ``reduced-artifacts/<tool>-<12 hex>.txt``: the exact original bytes of an output that a lossy
  summary replaced; content-addressed (sha256), so the same content is written once.
* ``tool-outputs/<tool>-<12 hex>.txt``: results over the 50 KiB inline budget, replaced on first
  entry by a bounded preview plus a stable reference to that file.

The reduction engine only ever names these files under the logical root ``<session_dir>``
(:data:`LOGICAL_ROOT`): the text it renders and counts, and every record made from it, is the same
wherever the session directory is on disk. :class:`ArtifactWriter` is the host-side writer that maps
the logical root to a directory and writes the files there.

File names are sanitised and resolved so that nothing escapes the session directory, whatever the
tool name contains.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..errors import StorageError
from ..frozen import UNCHANGED
from ..safe_files import write_file
from ..session import ToolResultBlock

__all__ = [
    "INLINE_BUDGET_BYTES", "LOGICAL_ROOT", "PREVIEW_BYTES", "PREVIEW_MAX_LINES", "REDUCED_DIR",
    "TOOL_OUTPUTS_DIR", "ArtifactWriter", "DeferredArtifactWriter", "artifact_path", "as_writer",
    "externalize_large_result",
    "logical_path", "safe_tool_name", "write_artifact",
]

LOGICAL_ROOT = "<session_dir>"
"""How the engine writes the session directory in marker text, decisions and references."""
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


def _file_name(tool_name: str, text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{safe_tool_name(tool_name)}-{digest}.txt"


def logical_path(kind_dir: str, tool_name: str, text: str) -> str:
    """The machine-independent name of the file for ``text``: ``<session_dir>/<kind>/<file>``."""
    return f"{LOGICAL_ROOT}/{kind_dir}/{_file_name(tool_name, text)}"


def artifact_path(work_dir: Path | str, kind_dir: str, tool_name: str, text: str) -> Path:
    """Where the content-addressed file for ``text`` lives on disk (it need not exist yet)."""
    root = (Path(work_dir) / kind_dir).resolve()
    path = (root / _file_name(tool_name, text)).resolve()
    if path.parent != root:  # cannot happen with a sanitised name; refuse rather than escape
        raise StorageError(f"artifact path {str(path)!r} escapes {str(root)!r}")
    return path


def write_artifact(work_dir: Path | str, kind_dir: str, tool_name: str, text: str) -> Path:
    """Write ``text`` exactly (UTF-8 bytes, no newline translation) unless the same content exists."""
    target = Path(work_dir) / kind_dir / _file_name(tool_name, text)
    if target.is_file() and not target.is_symlink() and not target.parent.is_symlink():
        return artifact_path(work_dir, kind_dir, tool_name, text)
    try:
        write_file(target, text.encode(), root=work_dir)  # refuses links on the way
    except OSError as exc:
        raise StorageError(f"cannot write artifact {str(target)!r}: {exc}") from exc
    return artifact_path(work_dir, kind_dir, tool_name, text)


class ArtifactWriter:
    """Host-side writer: maps :data:`LOGICAL_ROOT` to ``root`` on disk."""

    __slots__ = ("root",)

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"ArtifactWriter({str(self.root)!r})"

    def write(self, kind_dir: str, tool_name: str, text: str) -> str:
        """Write ``text`` under ``root`` (content-addressed) and return its logical path."""
        write_artifact(self.root, kind_dir, tool_name, text)
        return logical_path(kind_dir, tool_name, text)

    def resolve(self, logical: str) -> Path:
        """The file on disk for a logical path; a path outside the logical root is an error."""
        prefix = f"{LOGICAL_ROOT}/"
        if not logical.startswith(prefix):
            raise StorageError(f"artifact {logical!r} is not under {LOGICAL_ROOT}")
        root = self.root.resolve()
        path = (root / logical[len(prefix):]).resolve()
        if not path.is_relative_to(root):
            raise StorageError(f"artifact {logical!r} escapes {str(root)!r}")
        return path


class DeferredArtifactWriter(ArtifactWriter):
    """A writer that records its writes as values instead of performing them.

    :attr:`pending` maps each logical path to ``(kind_dir, tool_name, text)``; the host decides:
    :meth:`flush` writes them under ``root`` (content-addressed, as :class:`ArtifactWriter` would),
    :meth:`discard` drops them. A replay into its own temporary folder, which is removed when the
    replay ends and from which nothing reads artifacts, discards them after every step."""

    __slots__ = ("pending",)

    def __init__(self, root: Path | str) -> None:
        super().__init__(root)
        self.pending: dict[str, tuple[str, str, str]] = {}

    def __repr__(self) -> str:
        return f"DeferredArtifactWriter({str(self.root)!r}, {len(self.pending)} pending)"

    def write(self, kind_dir: str, tool_name: str, text: str) -> str:
        logical = logical_path(kind_dir, tool_name, text)
        self.pending.setdefault(logical, (kind_dir, tool_name, text))
        return logical

    def flush(self) -> int:
        """Write every pending file; returns how many were pending."""
        done = 0
        for logical, (kind_dir, tool_name, text) in list(self.pending.items()):
            write_artifact(self.root, kind_dir, tool_name, text)
            del self.pending[logical]
            done += 1
        return done

    def discard(self) -> None:
        self.pending.clear()


def as_writer(work_dir: ArtifactWriter | Path | str | None) -> ArtifactWriter | None:
    """The writer for a session directory argument (a directory is wrapped; None stays None)."""
    if work_dir is None or isinstance(work_dir, ArtifactWriter):
        return work_dir
    return ArtifactWriter(work_dir)


def _preview(text: str) -> str:
    out: list[str] = []
    used = 0
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


def externalize_large_result(block: ToolResultBlock, *, work_dir: ArtifactWriter | Path | str,
                             tool_name: str) -> tuple[ToolResultBlock, str | None]:
    """Save a result over :data:`INLINE_BUDGET_BYTES` to ``tool-outputs/`` and return the preview
    block (``artifact_path`` set to the logical path) and that logical path; smaller results come
    back unchanged with None."""
    size = len(block.text.encode())
    if size <= INLINE_BUDGET_BYTES or block.artifact_path:
        return block, None
    writer = as_writer(work_dir)
    assert writer is not None
    path = writer.write(TOOL_OUTPUTS_DIR, tool_name, block.text)
    preview = _preview(block.text)
    lines = len(block.text.splitlines())
    shown = len(preview.splitlines())
    note = (f"[Output truncated at the {INLINE_BUDGET_BYTES // 1024} KiB inline budget: "
            f"{size:,} bytes, {lines:,} lines; the first {shown:,} lines are shown above. "
            f"Full output saved to {path}]")
    return block.evolve(**UNCHANGED, text=f"{preview}\n{note}", artifact_path=path), path
