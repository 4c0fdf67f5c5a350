"""Output helpers for the command line: one progress bar (tqdm) and one table/JSON/CSV writer.

Progress is drawn only on a terminal (standard error is a TTY), so scripts and CI logs get the
results and nothing else. Listings follow the conventions of sqlite-utils and llm: an aligned table
by default, ``--json`` (one array), ``--nl`` (one JSON object per line) or ``--csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from ..progress import Progress, no_progress

__all__ = ["add_format_options", "printable", "progress_bar", "write_rows"]

FORMATS = ("table", "json", "nl", "csv")

#: Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts colour,
#: cursor and title sequences; 0x9B is an 8-bit CSI), DEL, and the bidirectional overrides and
#: isolates that reorder what is shown.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on spelled as JSON spells it
    (``\\u001b``), as ``workbench inspect`` prints a title."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@contextmanager
def progress_bar(name: str, *, quiet: bool = False,
                 stream: TextIO | None = None) -> Iterator[Progress]:
    """A ``(fraction, label)`` progress callback drawing a tqdm bar on a terminal, else nothing."""
    out = stream or sys.stderr
    if quiet or not out.isatty():
        yield no_progress
        return
    import shutil

    from tqdm import tqdm

    # A terminal that reports no size (0 columns) would get an empty bar: fall back to 100.
    width = shutil.get_terminal_size((100, 24)).columns or 100
    with tqdm(total=1000, desc=name, file=out, leave=False, unit="‰", ncols=width,
              bar_format="{desc}: {percentage:3.0f}%|{bar}| {postfix}") as bar:
        def report(fraction: float, label: str, /) -> None:
            bar.n = max(0, min(1000, int(fraction * 1000)))
            bar.set_postfix_str(label[:40], refresh=False)
            bar.refresh()
        yield report


def add_format_options(parser: argparse.ArgumentParser) -> None:
    """``--json`` / ``--nl`` / ``--csv`` (mutually exclusive; default: an aligned table)."""
    group = parser.add_mutually_exclusive_group()
    for fmt, text in (("json", "a JSON array"), ("nl", "one JSON object per line"), ("csv", "CSV")):
        group.add_argument(f"--{fmt}", dest="output_format", action="store_const", const=fmt,
                           help=f"output {text}")
    parser.set_defaults(output_format="table")


def write_rows(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], fmt: str,
               out: TextIO | None = None) -> None:
    """Write ``rows`` (dicts with at least ``columns``) as a table, JSON, JSON lines or CSV."""
    stream: TextIO = out or sys.stdout
    if fmt == "json":
        json.dump([{c: r[c] for c in columns} for r in rows], stream, indent=2, ensure_ascii=False)
        stream.write("\n")
    elif fmt == "nl":
        stream.writelines(json.dumps({c: r[c] for c in columns}, ensure_ascii=False) + "\n" for r in rows)
    elif fmt == "csv":
        writer = csv.DictWriter(stream, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows({c: printable(v) if isinstance(v, str) else v for c, v in r.items()}
                         for r in rows)
    else:
        _write_table(rows, columns, stream)


def _write_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], out: TextIO) -> None:
    def cell(value: Any) -> str:
        if value is None:
            return "—"
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) \
            else printable(str(value))

    table = [[c.upper().replace("_", " ") for c in columns]]
    table += [[cell(r[c]) for c in columns] for r in rows]
    numeric = [all(isinstance(r[c], int | float) for r in rows) and bool(rows) for c in columns]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    out.writelines("  ".join(v.rjust(w) if num else v.ljust(w)
                            for v, w, num in zip(line, widths, numeric)).rstrip() + "\n" for line in table)
