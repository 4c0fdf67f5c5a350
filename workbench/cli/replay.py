"""``workbench replay PATH_OR_SESSION_ID [--config FILE] [--json OUT] [--name NAME]`` and
``workbench replay --defaults`` (R-UI-9).

Replays a transcript file or a stored session headless. ``--json`` writes the preparations, one
JSON object per line in step order (``-`` for standard output, the summary then goes to standard
error); ``--name`` saves the replay in the store under that name (a file is imported first), where
the app's replay picker finds it. Without either, only the summary is printed.
``--summariser offline|recorded|remote`` and ``--prompts DIR`` choose who writes compaction
summaries and the prompt templates (:mod:`workbench.services.summarisers`). ``--defaults``
makes the ``default`` (and ``budget 96k``) replays of every stored session that lacks them, the
same ones the app makes on a session's first open. A replay never fails silently (R-TWIN-9): with
any failed step the exit code is 2 (``--allow-failed``: 0) and the summary names the first; a bad
input or configuration exits 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, TextIO

from iris.errors import IrisError, StorageError
from iris.replay import Replay
from iris.safe_files import write_file

from ..services.presets import PRESET_NAMES
from ..services.summarisers import add_summariser_options, load_prompts, make_summariser, summary_usage_line
from ..views.terminal import progress_bar

__all__ = ["UsageError", "register", "summary_lines"]


class UsageError(IrisError):
    """The command line was incomplete."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay a session headless and print (or save) its preparations")
    p.add_argument("target", metavar="PATH_OR_SESSION_ID", nargs="?",
                   help="a transcript file ('-': standard input), or the id of a stored session "
                        "(see `workbench sessions`)")
    p.add_argument("--defaults", action="store_true",
                   help="make the default replays of every stored session that lacks them")
    p.add_argument("--config", metavar="FILE_OR_PRESET",
                   help=f"context configuration YAML ('-': standard input) or a preset name "
                        f"({', '.join(PRESET_NAMES)}; default: bundled)")
    p.add_argument("--json", metavar="OUT", help="write preparations as JSON lines ('-': stdout)")
    p.add_argument("--name", help="save the replay in the store under this name")
    p.add_argument("--format", help="transcript format of PATH (default: detect)")
    p.add_argument("--summary-json", metavar="OUT",
                   help="write one JSON object: budget and its source, overhead, calibration, "
                        "compactions (replay and recorded), estimate error, cost ('-': stdout)")
    p.add_argument("--baseline", choices=("engine", "recorded"), default="engine",
                   help="'recorded': the as-recorded baseline (what the agent really sent, no "
                        "engine reduction or compaction)")
    p.add_argument("--allow-failed", action="store_true",
                   help="exit 0 even when some steps failed (default: exit 2)")
    add_summariser_options(p)
    p.set_defaults(handler=_replay, opens_store=_opens_store)


def _opens_store(args: argparse.Namespace) -> bool:
    """Whether the command opens the store: to save (``--name``), for ``--defaults`` or to find a
    stored session. A file replayed without ``--name`` is only read, and the process then never
    imports sqlite-utils or opens (and migrates) the store."""
    return bool(args.defaults or args.name
                or (args.target not in (None, "-") and not Path(args.target).is_file()))


def summary_lines(result: Replay, seconds: float, *, compaction_request: bool = False) -> list[str]:
    """The printed summary: steps, phases, compactions applied (tokens before → after on the
    whole-request basis of :mod:`workbench.analysis.figures`), the final request, the estimate error.
    ``compaction_request``: the session is an agent's recorded compaction call (its unheld prompt
    is named as the compaction's input)."""
    from ..analysis.figures import applied_compactions, error_words, estimate_error
    from ..analysis.words import counted

    preps = result.preparations
    phases = [p.phase for p in preps]
    last = preps[-1] if preps else None
    final = last.final_input_tokens if last else 0
    whole = last.whole_request_tokens if last and last.whole_request_tokens is not None else final
    t = result.thresholds
    compactions = applied_compactions(preps)
    error = estimate_error(preps, [m.step for m in result.recorded_compactions])
    lines = [
        f"replayed {result.session_id}: {counted(len(preps), 'step')} in {seconds:.2f} s",
        (f"  ready {phases.count('ready')} · failed {phases.count('failed')} · "
         f"cancelled {phases.count('cancelled')}"),
        f"  compactions applied: {len(compactions)}" + "".join(
            f"\n    step {c.step}: {c.tokens_before or 0:,} → {c.tokens_after or 0:,} "
            "tokens (whole request as sent)" for c in compactions),
        (f"  final request: {whole:,} tokens, whole request (raw local estimate {final:,}); "
         f"budget {t.input_budget:,} from {t.budget_source}, pressure line {t.pressure_line:,}"),
        f"  budget source: {t.budget_detail}" if t.budget_detail else "",
        _overhead_line(result, compaction_request),
        f"  estimate error: {error_words(error)}",
    ]
    return [line for line in lines if line]


def _overhead_line(result: Replay, compaction_request: bool) -> str:
    c = result.calibration
    where = (f"measured at step {c.overhead_step}" if c.overhead_step is not None
             else c.overhead_source)
    # An agent's compaction call holds only its last messages: the rest of its prompt is the
    # parent's conversation (the compaction's input), not system prompt or tool schemas.
    prompt = next((p.provider_prompt_tokens for p in reversed(result.preparations)
                   if p.provider_prompt_tokens), None)
    if compaction_request and prompt is not None:
        gap = (f"compaction input (the parent's conversation) {prompt:,} prompt tokens, "
               f"{c.overhead:,} of them not in this transcript")
    else:
        gap = ("compaction input (the parent's conversation, not in this transcript)"
               if compaction_request else "unrecorded overhead") + f" {c.overhead:,} tokens"
    return (f"  {gap} ({where}); calibration ratio "
            f"{c.ratio:.3f} ({c.samples} samples)" + (" · as-recorded baseline"
                                                      if result.baseline == "recorded" else ""))


def _defaults() -> int:
    from ..services.replay import ensure_default_replays
    from ..storage.store import open_store

    with open_store() as store:
        with progress_bar("default replays") as progress:
            infos = ensure_default_replays(store, progress=progress)
        for info in infos:
            print(_defaults_line(info.session_id, store.replays.list(info.session_id)))
    return 0


def _defaults_line(session_id: str, replays: Sequence[Any]) -> str:
    """One line per session naming each of its default replays (``default``, ``as recorded`` and,
    when made, ``budget 96k``) with its steps and compactions."""
    from ..analysis.words import counted
    from ..services.replay import BUDGET_REPLAY_NAME, DEFAULT_REPLAY_NAME, RECORDED_REPLAY_NAME

    by_name = {r.name: r for r in replays}
    parts = [f"{name!r} ({counted(by_name[name].step_count, 'step')}, "
             f"{counted(by_name[name].compactions_applied, 'compaction')} applied)"
             for name in (DEFAULT_REPLAY_NAME, RECORDED_REPLAY_NAME, BUDGET_REPLAY_NAME)
             if name in by_name]
    return f"{session_id}: replays ready: " + ", ".join(parts)


def _replay(args: argparse.Namespace) -> int:
    from ..analysis.words import counted
    from ..services.replay import load_configuration, stream_replay
    from ..storage.store import open_store

    if args.defaults:
        return _defaults()
    if args.target is None:
        raise UsageError("give PATH_OR_SESSION_ID, or --defaults")
    if args.target == "-":
        from . import stdin_file

        args.target = str(stdin_file())

    config = load_configuration(args.config)
    prompts = load_prompts(args.prompts)
    out: TextIO = sys.stderr if "-" in (args.json, args.summary_json) else sys.stdout
    with open_store() if _opens_store(args) else nullcontext() as store:
        session_id, session = _resolve(store, args)
        summariser = make_summariser(args.summariser, session)
        started = time.perf_counter()
        with progress_bar("replay") as progress:
            # --name: each step goes into the store as it is made. Only each step's figures stay
            # (whole records for --json), and, for the summary, the cache prefixes a replay that
            # kept its request bodies is priced with
            streamed = stream_replay(session, store=store if args.name else None,
                                     session_id=session_id, name=args.name or "", config=config,
                                     prompts=prompts, summariser=summariser, progress=progress,
                                     baseline=args.baseline, keep_records=bool(args.json),
                                     prefixes=bool(args.summary_json))
        result, info = streamed.result, streamed.info
        elapsed = time.perf_counter() - started
        # a stored session: keep its estimate, counted by the replay just now
        if store is not None and (args.name or not Path(args.target).is_file()):
            store.session_tokens(session_id, session.messages)
    lines = summary_lines(result, elapsed, compaction_request=session.header.is_compaction_request)
    if (usage := summary_usage_line(result.run_usage)) is not None:
        lines.append(usage)
    if args.prompts and (ignored := _templates_ignored(summariser)) is not None:
        lines.append(f"  warning: --prompts {args.prompts}: {ignored}")
    if args.name and info is not None:
        lines.append(f"  saved as {args.name!r} ({info.id}) for session {session_id!r}")
    if args.json:
        _write_json(args.json, result)
        if args.json != "-":
            lines.append(f"  wrote {len(result.preparations)} preparations to {args.json}")
    if args.summary_json:
        _write_summary(args.summary_json, session, result, streamed.prefixes,
                       _subagents(store, args, session_id, session),
                       summariser=summariser, template_snapshot_id=streamed.template_snapshot_id)
        if args.summary_json != "-":
            lines.append(f"  wrote the summary to {args.summary_json}")
    failed = [p for p in result.preparations if p.phase == "failed"]
    if failed:
        first = failed[0]
        why = first.error.message if first.error is not None else "failed"
        lines.append(f"  {counted(len(failed), 'failed step')} (first: step {first.step_index}: {why}); "
                     + ("--allow-failed: exit code 0" if args.allow_failed
                        else "exit code 2 (--allow-failed: 0)"))
    print("\n".join(lines), file=out)
    return 2 if failed and not args.allow_failed else 0


def _templates_ignored(summariser: Any) -> str | None:
    from ..analysis.summariser_info import summariser_info, templates_ignored

    return templates_ignored(summariser_info(summariser))


def _resolve(store, args: argparse.Namespace):
    """``(session_id, session)``: a file is loaded (and imported with ``--name``); else a stored id."""
    from ..services.imports import path_or_stored_id

    path = Path(args.target)
    if path.is_file() and args.name:
        outcome = store.import_file(path, format=args.format)
        return outcome.session_id, store.session(outcome.session_id)
    return path_or_stored_id(args.target, lambda: nullcontext(store), format=args.format)


def _subagents(store, args: argparse.Namespace, session_id: str, session) -> tuple[Any, ...]:
    """The session's sub-agents, billed beside it in the summary: those of the transcript file
    (its ``subagents/`` folder or its ``agent_progress`` lines), else the stored session's."""
    from ..importers.claude_progress import subagent_sessions

    path = Path(args.target)
    if path.is_file():
        main_transcript = (session.header.source_format == "claude_code"
                           and session.header.parent_id is None)
        return subagent_sessions(path) if main_transcript else ()
    if store is None:
        return ()
    from ..services.costs import session_subagents

    return session_subagents(store, session_id)


def _write_summary(target: str, session, result: Replay, prefixes: Any = None,
                   subagents: Sequence[Any] = (), *, summariser: Any = None,
                   template_snapshot_id: str | None = None) -> None:
    from ..analysis.replay_report import replay_report

    text = replay_report(session, result, prefixes=prefixes, subagents=subagents,
                         summariser=summariser,
                         template_snapshot_id=template_snapshot_id).json_text()
    if target == "-":
        sys.stdout.write(text)
        return
    try:
        write_file(Path(target), text)
    except OSError as exc:
        raise StorageError(f"{target}: cannot write the summary ({exc.strerror or exc})") from None


def _write_json(target: str, result: Replay) -> None:
    lines = "".join(p.model_dump_json() + "\n" for p in result.preparations)
    if target == "-":
        sys.stdout.write(lines)
        return
    try:
        write_file(Path(target), lines)  # atomic; refuses a symbolic link at the target
    except OSError as exc:
        raise StorageError(f"{target}: cannot write the preparations ({exc.strerror or exc})") from None
