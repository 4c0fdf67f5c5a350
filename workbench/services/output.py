"""Where a command's output goes: a file (written atomically; a symbolic link at the target is
refused) or standard output (``-``). ``workbench replay --json/--summary-json``, ``report --out``
and ``export --otlp`` write through it; the text itself comes from the views."""

from __future__ import annotations

import sys
from pathlib import Path

from iris.errors import StorageError
from iris.safe_files import write_file

__all__ = ["STDOUT", "write_output"]

#: The output path that means standard output, for every command that writes a file
#: (``replay --json``/``--summary-json``, ``report --out``, ``export --otlp``).
STDOUT = "-"


def write_output(target: str | Path, text: str, what: str) -> Path | None:
    """Write ``text`` to the file ``target`` (atomically; a symbolic link there is refused), or to
    standard output when ``target`` is :data:`STDOUT` (then None is returned). A file that cannot
    be written raises StorageError naming it and ``what`` it was to hold."""
    if str(target) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return None
    path = Path(target)
    try:
        write_file(path, text)
    except OSError as exc:
        raise StorageError(f"{path}: cannot write {what} ({exc.strerror or exc})") from None
    return path
