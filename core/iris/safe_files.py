"""Writing files into a workspace or an artifact folder without following symbolic links.

Every file the engine and the workbench write (saved prompt templates, compaction archives
``history-N.md``, tool-output and reduced artifacts, HTML reports, exported JSONL) goes through
:func:`write_file`:

* the folders from ``root`` down to the file are opened one by one relative to the previous one
  with ``O_DIRECTORY | O_NOFOLLOW`` (and created when missing), so a folder on the way that is a
  symbolic link is refused instead of followed; ``root`` itself is taken as given;
* the target is refused when it is a symbolic link;
* the content goes to a temporary file with a random name, created with
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` in the destination folder, and is then moved over the target
  with ``os.replace`` (atomic: a reader sees the old or the new file, never half of one); with
  ``overwrite=False`` it is hard-linked instead, which fails when the target exists.

A refusal raises :class:`SymlinkRefusedError` naming the path. Platforms without ``dir_fd`` support
(Windows) get the same checks on paths, without the protection against a link planted between the
check and the write.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from .errors import StorageError

__all__ = ["SymlinkRefusedError", "ensure_dir", "ensure_private_dir", "write_file"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_HAS_DIR_FD = os.open in os.supports_dir_fd and bool(_NOFOLLOW and _DIRECTORY)


class SymlinkRefusedError(StorageError):
    """A path the project was about to write through is a symbolic link (or not a plain folder)."""

    def __init__(self, path: object, what: str = "file") -> None:
        self.path = str(path)
        self.what = what
        super().__init__(f"{self.path}: refusing to write: this {what} is a symbolic link "
                         "(files are never written through links; remove the link and retry)")


def _parts(root: Path, folder: Path) -> tuple[str, ...]:
    """The names from ``root`` down to ``folder`` (which must lie inside ``root``)."""
    rel = os.path.relpath(os.path.normpath(folder), os.path.normpath(root))
    if rel == ".":
        return ()
    parts = tuple(Path(rel).parts)
    if parts[0] == os.pardir or os.path.isabs(rel):
        raise StorageError(f"{folder}: not inside {root}; refusing to write there")
    return parts


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except FileNotFoundError:
        return False


def _open_child_dir(parent_fd: int, name: str, shown: Path, create: bool) -> int:
    """Open (creating it if asked) the folder ``name`` under ``parent_fd`` without following it."""
    if _is_link(name, parent_fd):
        raise SymlinkRefusedError(shown, "folder")
    if create:
        try:
            os.mkdir(name, 0o777, dir_fd=parent_fd)
        except FileExistsError:
            pass
    try:
        return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, parent_fd):
            raise SymlinkRefusedError(shown, "folder") from None
        raise


def _open_folder(root: Path, parts: tuple[str, ...], create: bool) -> int:
    """A descriptor of ``root/parts…``; every part is opened without following links."""
    if create:
        root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    shown = root
    try:
        for name in parts:
            shown = shown / name
            child = _open_child_dir(fd, name, shown, create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def ensure_dir(folder: str | os.PathLike[str], *, root: str | os.PathLike[str]) -> Path:
    """Create ``folder`` (and the folders between ``root`` and it), refusing links on the way."""
    folder, root = Path(folder), Path(root)
    if not _HAS_DIR_FD:
        _check_path_without_fd(root, folder / "_", "folder")
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    os.close(_open_folder(root, _parts(root, folder), create=True))
    return folder


def ensure_private_dir(folder: str | os.PathLike[str]) -> Path:
    """A folder only this user can use (mode 0700), e.g. a fixed name under the temporary folder;
    refused when it is a symbolic link or another user owns it."""
    folder = Path(folder)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        raise SymlinkRefusedError(folder, "folder")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise StorageError(f"{folder}: owned by another user (uid {info.st_uid}); refusing to use it")
    return folder


def write_file(path: str | os.PathLike[str], data: str | bytes, *,
               root: str | os.PathLike[str] | None = None, overwrite: bool = True) -> Path:
    """Write ``data`` (``str`` as UTF-8, no newline translation) to ``path`` atomically.

    ``root`` is the trusted folder (the workspace or the session's artifact folder); the folders
    below it are created when missing and must not be links. Without ``root`` only the target's own
    folder is trusted. ``overwrite=False`` raises ``FileExistsError`` when the target exists.
    """
    path = Path(path)
    root = Path(root) if root is not None else path.parent
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if not _HAS_DIR_FD:
        return _write_without_fd(path, root, payload, overwrite)
    dir_fd = _open_folder(root, _parts(root, path.parent), create=True)
    try:
        _write_in(dir_fd, path, payload, overwrite)
    finally:
        os.close(dir_fd)
    return path


def _write_in(dir_fd: int, path: Path, payload: bytes, overwrite: bool) -> None:
    name = path.name
    if _is_link(name, dir_fd):
        raise SymlinkRefusedError(path, "target file")
    if not overwrite and _exists(name, dir_fd):
        raise FileExistsError(errno.EEXIST, "file exists", str(path))
    tmp, fd = _create_temp(dir_fd, path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        if overwrite:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            _link_new(tmp, name, dir_fd, path)
    finally:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass


def _create_temp(dir_fd: int, path: Path) -> tuple[str, int]:
    """A new temporary file next to ``path`` (random name, exclusive, never through a link)."""
    for _ in range(8):
        tmp = f".{path.name}.{secrets.token_hex(8)}.tmp"
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                                0o666, dir_fd=dir_fd)
        except FileExistsError:
            if _is_link(tmp, dir_fd):
                raise SymlinkRefusedError(path.with_name(tmp), "temporary file") from None
    raise StorageError(f"{path}: cannot create a temporary file next to it")


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    return True


def _link_new(tmp: str, name: str, dir_fd: int, path: Path) -> None:
    """Give the finished temporary file its name only if that name is still free."""
    try:
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "file exists", str(path)) from None
    except OSError as exc:  # a file system without hard links: check, then rename
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK,
                             errno.ENOSYS):
            raise
        if _exists(name, dir_fd):
            raise FileExistsError(errno.EEXIST, "file exists", str(path)) from None
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _check_path_without_fd(root: Path, path: Path, what: str) -> None:
    current = root
    for name in _parts(root, path.parent):
        current = current / name
        if current.is_symlink():
            raise SymlinkRefusedError(current, "folder")
    if what == "file" and path.is_symlink():
        raise SymlinkRefusedError(path, "target file")


def _write_without_fd(path: Path, root: Path, payload: bytes, overwrite: bool) -> Path:
    _check_path_without_fd(root, path, "file")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not overwrite and path.exists():
        raise FileExistsError(errno.EEXIST, "file exists", str(path))
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
