"""Choosing the summariser and the prompt templates of a replay outside the Templates page.

``workbench replay`` and ``workbench report`` take ``--summariser offline|recorded|remote`` and
``--prompts DIR``; the Configuration page's "Replay and save" offers the same summarisers. The
remote summariser reads ``WORKBENCH_SUMMARY_BASE_URL``, ``WORKBENCH_SUMMARY_MODEL`` and
``WORKBENCH_SUMMARY_API_KEY`` (as the notebook and the Templates page do) and keeps its answers in
``<WORKBENCH_HOME>/summary-cache/`` as well as in memory, so an unchanged summary request is never
paid for twice (delete the folder to empty it).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from iris.errors import SummariserError, TemplateError

if TYPE_CHECKING:  # the CLI builds this module's options at start-up: the engine loads on use
    from iris.compaction import RunUsage, Summariser, SummariserKind
    from iris.prompts import PromptSnapshot
    from iris.session import Session

    from ..storage.store import Store

__all__ = ["CLI_SUMMARISERS", "ENDPOINT_ENV", "SUMMARISERS", "SUMMARISER_LABELS",
           "add_summariser_options", "endpoint_status", "load_prompts", "make_summariser",
           "own_summariser_index",
           "stored_summariser", "stored_summariser_options", "summariser_options",
           "summary_cache_dir", "summary_usage_line"]

#: The summarisers a replay or a re-run can use, by the kind each declares
#: (``iris.compaction.SummariserKind``); ``remote`` needs the endpoint environment variables.
SUMMARISERS: tuple[SummariserKind, ...] = ("extractive", "recorded", "remote")
#: ``--summariser`` values: the kinds, with the extractive one named ``offline`` (no model, no
#: network); :func:`make_summariser` takes either name.
CLI_SUMMARISERS = tuple("offline" if kind == "extractive" else kind for kind in SUMMARISERS)
#: The endpoint's environment variables (``OpenAICompatibleSummariser.ENV``).
ENDPOINT_ENV = ("WORKBENCH_SUMMARY_BASE_URL", "WORKBENCH_SUMMARY_MODEL", "WORKBENCH_SUMMARY_API_KEY")


def add_summariser_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summariser", "--summarizer",  # both spellings are accepted
        choices=CLI_SUMMARISERS, default="offline",
        help="who writes compaction summaries: offline (extractive, the default), recorded (the "
             "session's own compaction summaries) or remote (the OpenAI-compatible endpoint in "
             f"{', '.join(ENDPOINT_ENV)})")
    parser.add_argument(
        "--prompts", metavar="DIR",
        help="folder of prompt templates named <id>.j2 (e.g. .iris/prompts); ids without a file "
             "use the packaged defaults")


def summary_cache_dir() -> Path:
    """Where the remote summariser keeps its answers on disk: ``<WORKBENCH_HOME>/summary-cache``."""
    from ..storage.store import workbench_home

    return workbench_home() / "summary-cache"


def endpoint_status() -> str:
    """Whether an OpenAI-compatible summary endpoint is configured in the environment."""
    base, model, key = (os.environ.get(n, "").strip() for n in ENDPOINT_ENV)
    if base and model:
        return f"configured: {base} · model {model}" + (" · API key set" if key else " · no API key")
    return (f"not configured (set {ENDPOINT_ENV[0]} and {ENDPOINT_ENV[1]}, and {ENDPOINT_ENV[2]} "
            "if the endpoint needs one)")


def make_summariser(kind: str | None, session: Session | None, *,
                    persist_cache: bool = True) -> Summariser:
    """The summariser named ``kind``: ``extractive`` (also ``offline`` and None, the default),
    ``recorded`` (the session's own summaries; the session must hold one) or ``remote`` (the
    endpoint of :data:`ENDPOINT_ENV`; its answers kept in :func:`summary_cache_dir` unless
    ``persist_cache`` is off). Raises SummariserError naming what is missing."""
    from iris.compaction import ExtractiveSummariser, OpenAICompatibleSummariser, RecordedSummariser

    if kind in (None, "offline", "extractive"):
        return ExtractiveSummariser()
    if kind == "recorded":
        if session is None:
            raise SummariserError("the recorded summariser needs the session")
        if not (session.compactions or any(m.is_compaction_summary for m in session.messages)):
            raise SummariserError(f"--summariser recorded: session {session.header.session_id!r} "
                                  "holds no recorded compaction summary")
        return RecordedSummariser(session)
    if kind == "remote":
        client = OpenAICompatibleSummariser.from_env(
            cache_dir=summary_cache_dir() if persist_cache else None)
        if client is None:
            raise SummariserError(f"--summariser remote needs {ENDPOINT_ENV[0]} and {ENDPOINT_ENV[1]} "
                                  f"to be set (and {ENDPOINT_ENV[2]} if the endpoint needs a key): "
                                  f"the endpoint is {endpoint_status()}")
        return client
    raise SummariserError(f"unknown summariser {kind!r}; expected one of "
                          f"{', '.join(dict.fromkeys((*SUMMARISERS, *CLI_SUMMARISERS)))}")


def summariser_options(session: Session) -> tuple[SummariserKind, ...]:
    """Summarisers that can run for ``session``: recorded only when it holds readable recorded
    summaries (not encrypted ones), remote only when the endpoint is configured."""
    from iris.compaction import RecordedSummariser

    return _options(recorded=RecordedSummariser(session).available)


def own_summariser_index(options: tuple[str, ...], saved: str | None) -> int:
    """Where a saved replay's own summariser ``saved`` is among ``options`` (0, the extractive
    one, when it cannot run now, e.g. a remote replay without the endpoint): a re-run then starts
    from the replay as it was saved."""
    return options.index(saved) if saved in options else 0


def _options(*, recorded: bool) -> tuple[SummariserKind, ...]:
    from iris.compaction import OpenAICompatibleSummariser

    remote = OpenAICompatibleSummariser.from_env() is not None
    usable = {"extractive": True, "recorded": recorded, "remote": remote}
    return tuple(k for k in SUMMARISERS if usable[k])


def load_prompts(folder: str | Path | None) -> PromptSnapshot | None:
    """The templates of ``folder`` (``<id>.j2`` files; the defaults for the others), or None."""
    if folder is None:
        return None
    from iris.prompts import PROMPT_IDS, PromptSource

    path = Path(folder)
    if not path.is_dir():
        raise TemplateError(f"--prompts {folder}: not a folder")
    source = PromptSource(path, ".")
    if not source.saved_ids():
        raise TemplateError(f"--prompts {folder}: holds none of the template files "
                            f"{', '.join(f'{pid}.j2' for pid in PROMPT_IDS)}")
    return source.snapshot()


def summary_usage_line(run_usage: RunUsage) -> str | None:
    """One line on the summary calls of a replay (None when no summary call was attempted)."""
    u = run_usage.compaction
    if not (u.calls or u.refused or u.cache_hits):
        return None
    parts = [f"{u.attempts} attempts" if u.attempts else None,
             f"{u.failures} failed" if u.failures else None,
             f"{u.refused} refused by the open circuit breaker" if u.refused else None,
             f"{u.cache_hits} from the summary cache" if u.cache_hits else None]
    detail = ", ".join(p for p in parts if p)
    return (f"  summary calls: {u.calls}" + (f" ({detail})" if detail else "")
            + f"; {u.input_tokens:,} input / {u.output_tokens:,} output tokens")


#: How the pages name each summariser (the Configuration page's choice before "Replay and save").
SUMMARISER_LABELS = {
    "extractive": "extractive (offline, no model)",
    "recorded": "recorded (the session's own summaries)",
    "remote": "remote (the configured endpoint writes new summaries)",
}


def stored_summariser_options(store: Store, session_id: str) -> tuple[SummariserKind, ...]:
    """:func:`summariser_options` of a stored session (whether it holds recorded summaries is
    kept in the store's cache; the endpoint is asked each time)."""
    from iris.compaction import RecordedSummariser

    recorded = store.cached(session_id, "has recorded summaries",
                            lambda: RecordedSummariser(store.session(session_id)).available)
    return _options(recorded=recorded)


def stored_summariser(store: Store, session_id: str, kind: str) -> Summariser:
    """:func:`make_summariser` for a stored session (the session is read only for ``recorded``)."""
    session = store.session(session_id) if kind == "recorded" else None
    return make_summariser(kind, session)
