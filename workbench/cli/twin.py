"""``workbench twin-check PATH… [--json OUT]``: replay every Claude Code and Codex transcript under
the paths with its agent profile and the recorded summariser, and print, per recorded compaction,
where the agent and the profile compacted and what each sent after (R-TWIN-3, R-TWIN-8, R-TWIN-9;
:mod:`workbench.corpus.twin_check`).

Prints a table of the compactions, a table of the files (responses in the file / imported, failed
steps, the bill of the usage fields / ``recorded_billed_usd``, the sub-agents and their bill) and
one summary line. Exit code 0
when every file was imported and replayed, 1 when one was not (the others are still checked).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from iris.errors import StorageError
from iris.safe_files import write_file

from ..views.terminal import progress_bar, write_rows

__all__ = ["register", "report_lines"]

COMPACTION_COLUMNS = ("file", "n", "trigger", "agent_step", "profile_step", "agent_before",
                      "agent_after", "profile_before", "profile_after", "after_delta_pct")
FILE_COLUMNS = ("file", "agent", "version", "responses_in_file", "responses_imported",
                "failed_steps", "usage_billed_usd", "recorded_billed_usd", "bill_delta_pct",
                "subagents", "subagent_responses_in_file", "subagent_responses_imported",
                "subagents_billed_usd")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("twin-check",
                       help="replay transcripts with their agent profile and compare each "
                            "compaction with the agent's")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="transcript files or folders (searched recursively for .jsonl and .jsonl.gz)")
    p.add_argument("--json", metavar="OUT",
                   help="write the files, their compaction rows and the summary as JSON ('-': stdout)")
    p.set_defaults(handler=_twin_check)


def _short(name: str) -> str:
    name = Path(name).name.removesuffix(".gz").removesuffix(".jsonl")
    return name.removeprefix("rollout-")[-36:][:13] if name.startswith("rollout-") else name[:13]


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{value:+.1f} %"


def _usd(value: float | None) -> str | None:
    return None if value is None else f"${value:,.2f}"


def report_lines(report) -> str:
    """The summary line of a :class:`~workbench.corpus.twin_check.TwinReport`."""
    s = report.summary

    def share(value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    return (f"twin-check: {s.files} files ({s.files_failed} not replayed, {s.files_skipped} not an "
            f"agent's), {s.compactions} recorded "
            f"compactions: {s.at_step} at the agent's step ({share(s.at_step_share)}; ±1, Codex ±3), "
            f"{s.within_after} within 15 % on the first request after "
            f"({share(s.within_after_share)}); {s.failed_steps} failed steps; "
            f"{s.responses_missing} responses not imported ({s.subagent_responses_missing} of "
            f"sub-agents); {s.bills_off} bills off by more than 2 %")


def _twin_check(args: argparse.Namespace) -> int:
    from ..corpus.twin_check import twin_check

    with progress_bar("twin-check") as progress:
        report = twin_check(args.paths, progress)
    out = sys.stderr if args.json == "-" else sys.stdout
    compactions = [{**c.model_dump(), "file": _short(c.file),
                    "after_delta_pct": _pct(c.after_delta_pct)}
                   for f in report.files for c in f.compactions]
    files = [{**f.model_dump(), "file": _short(f.file), "bill_delta_pct": _pct(f.bill_delta_pct),
              "usage_billed_usd": _usd(f.usage_billed_usd),
              "recorded_billed_usd": _usd(f.recorded_billed_usd),
              "subagents_billed_usd": _usd(f.subagents_billed_usd)} for f in report.files]
    write_rows(compactions, COMPACTION_COLUMNS, "table", out)
    print(file=out)
    write_rows(files, FILE_COLUMNS, "table", out)
    for f in report.files:
        if f.error or f.skipped:
            print(f"  {'not replayed' if f.error else 'skipped'} {f.file}: {f.error or f.skipped}",
                  file=out)
        elif f.first_failure:
            print(f"  {_short(f.file)}: {f.failed_steps} failed steps, first {f.first_failure}",
                  file=out)
    print(report_lines(report), file=out)
    if args.json:
        text = json.dumps(report.model_dump(), indent=2, ensure_ascii=False) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            try:
                write_file(Path(args.json), text)
            except OSError as exc:
                raise StorageError(f"{args.json}: cannot write the rows ({exc.strerror or exc})") from None
    return 1 if report.summary.files_failed else 0
