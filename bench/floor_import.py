"""The floor of an import: start Python, read the transcript and parse every line, nothing else.

``workbench import FILE`` cannot do less: it must start, read each line and parse its JSON before
it can store anything. This script does exactly that (no records, no validation, no store, no
vocabulary), so ``make bench`` (case ``import_process``) reports the whole import process as a
multiple of it, measured in the same run.

    python bench/floor_import.py TRANSCRIPT      # prints the lines parsed
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from floor import FloorError, transcript_lines


def parse_all(path: Path) -> int:
    """Parse every non-empty line of ``path`` (a damaged line is parsed and skipped)."""
    n_lines = 0
    for raw in transcript_lines(path):
        if not raw.strip():
            continue
        n_lines += 1
        try:
            json.loads(raw)
        except ValueError:
            continue
    return n_lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python bench/floor_import.py TRANSCRIPT", file=sys.stderr)
        return 2
    try:
        print(f"{parse_all(Path(args[0]))} lines")
    except FloorError as exc:
        print(f"floor_import: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
