"""``workbench twin-check``: does the agent profile replay a transcript as the agent ran it?

Every Claude Code or Codex transcript under the given paths (``.jsonl`` and ``.jsonl.gz``) is
imported in strict mode and replayed with its agent profile (``claude-code`` or ``codex``, by the
detected format) and the recorded summariser. Each of the agent's recorded compactions becomes a
:class:`TwinCompaction` (the agent's step and tokens before → after next to the profile's nearest
compaction); each file a :class:`TwinFile` (responses in the file against those imported, failed
steps, the bill of the file's usage fields against the replay's ``recorded_billed_usd``); the
whole run a :class:`TwinTotals` with the shares the project's corpus test holds to.

"At the agent's step" is within :data:`STEP_TOLERANCE` steps (Claude Code ±1, Codex ±3: a Codex
step is one model call and its compaction can fall between the calls of one turn); "within 15 %
after" compares the first request after the compaction, the profile's with the agent's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from iris.errors import IrisError
from iris.frozen import UNCHANGED, FrozenModel
from iris.session import Session

from ..progress import Progress, no_progress
from .twin_raw import file_facts

__all__ = ["AFTER_TOLERANCE", "BILL_TOLERANCE", "PROFILES", "STEP_TOLERANCE", "TwinCompaction",
           "TwinFile", "TwinReport", "TwinTotals", "check_file", "transcript_files", "twin_check"]

#: The agent profile of each importer format.
PROFILES = {"claude_code": "claude-code", "codex": "codex"}
#: How many steps from the agent's compaction still count as "at the agent's step".
STEP_TOLERANCE = {"claude_code": 1, "codex": 3}
#: The largest relative difference of the first request after a compaction that counts as close.
AFTER_TOLERANCE = 0.15
#: The largest relative difference between the usage fields' bill and the import's.
BILL_TOLERANCE = 0.02


class TwinCompaction(FrozenModel):
    """One of the agent's recorded compactions next to the profile's nearest one."""

    file: str
    n: int
    """1-based, in the file's order."""
    trigger: str
    agent_step: int
    profile_step: int | None
    """None: the profile made no compaction to pair with this one."""
    agent_before: int | None
    agent_after: int | None
    profile_before: int | None
    """What the profile's trigger compared at its compaction (as the agent's ``preTokens`` is its
    own count before it compacted); the request as sent where no trigger value was kept. A
    clearing in the same step (Claude Code's microcompaction) makes the request sent smaller."""
    profile_after: int | None
    after_delta_pct: float | None
    """(profile after − agent after) ÷ agent after, in percent (one decimal)."""
    at_step: bool
    within_after: bool


class TwinFile(FrozenModel):
    """One transcript: what it holds, what the import kept and how its profile replay went."""

    file: str
    agent: str | None
    version: str | None
    profile: str | None
    session_id: str | None = None
    responses_in_file: int = 0
    responses_imported: int = 0
    steps: int = 0
    failed_steps: int = 0
    first_failure: str = ""
    usage_billed_usd: float | None = None
    """The file's usage fields at list price (:mod:`workbench.corpus.twin_raw`)."""
    recorded_billed_usd: float | None = None
    """The replay's ``cost.recorded_billed_usd``."""
    bill_delta_pct: float | None = None
    subagents: int = 0
    """Sub-agent conversations (files in ``<session>/subagents/``, else ``agent_progress`` copies)."""
    subagent_responses_in_file: int = 0
    """Sub-agent responses the file's ``agent_progress`` lines carry (raw count)."""
    subagent_responses_imported: int = 0
    """Responses with usage of the sub-agent sessions imported (from its files or those lines)."""
    subagents_billed_usd: float | None = None
    """The replay's ``cost.subagents_billed_usd``: their bill, beside the main one."""
    profile_compactions: int = 0
    """Compactions the profile made (paired with a recorded one or not)."""
    compactions: tuple[TwinCompaction, ...] = ()
    error: str = ""
    """Why the file could not be replayed (the strict import refused it); empty if it was."""
    skipped: str = ""
    """Why the file was left out: not a Claude Code or Codex transcript; empty if it was not."""


class TwinTotals(FrozenModel):
    """The whole run's shares (None without any recorded compaction)."""

    files: int
    files_failed: int
    files_skipped: int
    compactions: int
    at_step: int
    within_after: int
    at_step_share: float | None
    within_after_share: float | None
    failed_steps: int
    responses_missing: int
    """Responses in the files that the imports do not hold (summed over the files)."""
    subagent_responses_missing: int = 0
    """Sub-agent responses the ``agent_progress`` lines carry that the sub-agent sessions do not
    hold (files whose sub-agents come from those lines)."""
    bills_off: int
    """Files whose two bills differ by more than :data:`BILL_TOLERANCE`."""


class TwinReport(FrozenModel):
    files: tuple[TwinFile, ...]
    summary: TwinTotals

    def rows(self) -> list[dict[str, object]]:
        """One JSON object per recorded compaction (``--json OUT``)."""
        return [c.model_dump() for f in self.files for c in f.compactions]


def transcript_files(paths: Iterable[str | Path]) -> list[Path]:
    """The ``.jsonl`` / ``.jsonl.gz`` files among ``paths`` (folders searched recursively,
    hidden ones skipped), in path order per argument. A path that does not exist is an error."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and _transcript(p, path))
        else:
            raise IrisError(f"{raw}: no such file or folder")
    return found


def _transcript(path: Path, root: Path) -> bool:
    """A transcript file under ``root``: not hidden, and not a Claude Code sub-agent's (its
    responses are billed with its parent's, beside the main conversation)."""
    parts = path.relative_to(root).parts
    if any(part.startswith(".") for part in parts) or "subagents" in parts[:-1]:
        return False
    name = path.name.lower()
    return name.endswith((".jsonl", ".jsonl.gz"))


def _pair(recorded: Sequence[tuple[int, int | None, int | None, str]],
          own: Sequence[tuple[int, int | None, int | None]], agent: str, file: str
          ) -> list[TwinCompaction]:
    """Each recorded compaction with the nearest profile compaction not paired yet."""
    free = list(own)
    rows = []
    for n, (step, before, after, trigger) in enumerate(recorded, start=1):
        match = min(free, key=lambda c: (abs(c[0] - step), c[0]), default=None)
        if match is not None:
            free.remove(match)
        p_step, p_before, p_after = match if match is not None else (None, None, None)
        delta = (None if p_after is None or not after
                 else round(100 * (p_after - after) / after, 1))
        rows.append(TwinCompaction(
            file=file, n=n, trigger=trigger, agent_step=step, profile_step=p_step,
            agent_before=before, agent_after=after, profile_before=p_before, profile_after=p_after,
            after_delta_pct=delta,
            at_step=p_step is not None and abs(p_step - step) <= STEP_TOLERANCE.get(agent, 1),
            within_after=delta is not None and abs(delta) <= 100 * AFTER_TOLERANCE))
    return rows


def check_file(path: str | Path, progress: Progress = no_progress) -> TwinFile:
    """Import ``path`` strictly, replay it with its agent profile and the recorded summariser
    (the offline one when it records no compaction), and compare (see the module docstring)."""
    from iris.errors import SessionFormatError

    from ..analysis.replay_report import replay_report
    from ..importers import load_session
    from ..importers.claude_progress import subagent_sessions
    from ..importers.detect import detect
    from ..services.presets import load_preset
    from ..services.replay import stream_replay
    from ..services.summarisers import make_summariser

    path = Path(path)
    facts = file_facts(path)
    base = TwinFile(file=str(path), agent=facts.agent, version=facts.version,
                    profile=PROFILES.get(facts.agent or ""), responses_in_file=facts.responses,
                    usage_billed_usd=facts.billed_usd)
    if facts.agent is None:  # not a Claude Code or Codex transcript: say what it is instead
        try:
            found = detect(path)
        except SessionFormatError as exc:
            return base.evolve(**UNCHANGED, skipped=f"not an agent transcript: {exc.problem}")
        if found not in PROFILES:
            return base.evolve(**UNCHANGED, skipped=f"no agent profile for the {found} format")
    try:
        loaded = load_session(path)
    except SessionFormatError as exc:
        return base.evolve(**UNCHANGED, error=f"strict import refused it: {exc}")
    session = loaded.session
    profile = PROFILES.get(loaded.format)
    if profile is None:
        return base.evolve(**UNCHANGED, skipped=f"no agent profile for the {loaded.format} format")
    imported = _responses(session)
    recorded = bool(session.compactions)
    summariser = make_summariser("recorded" if recorded else "offline", session)
    streamed = stream_replay(session, config=load_preset(profile), summariser=summariser,
                             progress=progress)
    result = streamed.result
    subagents = (subagent_sessions(path) if loaded.format == "claude_code"
                 and session.header.parent_id is None else ())
    report = replay_report(session, result, subagents=subagents)
    failed = [p for p in result.preparations if p.phase == "failed"]
    first = failed[0].error if failed else None
    billed = report.cost.recorded_billed_usd
    usage_bill = facts.billed_usd
    delta = (round(100 * (billed - usage_bill) / usage_bill, 2)
             if billed is not None and usage_bill else None)
    rows = _pair([(m.step, m.tokens_before, m.tokens_after, m.trigger)
                  for m in report.recorded_compactions if m.trigger != "clear"],
                 [(c.step, c.trigger_value if c.trigger_value is not None else c.tokens_before,
                   c.tokens_after) for c in report.compactions],
                 loaded.format, path.name)
    return base.evolve(**UNCHANGED, profile=profile, session_id=session.header.session_id,
                       responses_imported=imported, steps=len(result.preparations),
                       failed_steps=len(failed),
                       first_failure=(f"step {failed[0].step_index}: {first.message}"
                                      if failed and first is not None else ""),
                       recorded_billed_usd=billed, bill_delta_pct=delta,
                       subagents=len(subagents),
                       subagent_responses_in_file=facts.subagent_responses,
                       subagent_responses_imported=sum(_responses(s) for s in subagents),
                       subagents_billed_usd=report.cost.subagents_billed_usd,
                       profile_compactions=len(report.compactions), compactions=tuple(rows))


def _responses(session: Session) -> int:
    """Model responses with usage (not ``<synthetic>``, not a compaction's kept copies)."""
    return sum(1 for m in session.messages if m.role == "assistant" and m.usage is not None
               and m.model != "<synthetic>" and not m.compaction_provided)


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def twin_totals(files: Sequence[TwinFile]) -> TwinTotals:
    rows = [c for f in files for c in f.compactions]
    at, close = sum(c.at_step for c in rows), sum(c.within_after for c in rows)
    return TwinTotals(
        files=len(files), files_failed=sum(bool(f.error) for f in files),
        files_skipped=sum(bool(f.skipped) for f in files), compactions=len(rows),
        at_step=at, within_after=close, at_step_share=_share(at, len(rows)),
        within_after_share=_share(close, len(rows)),
        failed_steps=sum(f.failed_steps for f in files),
        responses_missing=sum(max(f.responses_in_file - f.responses_imported, 0)
                              for f in files if not (f.error or f.skipped)),
        subagent_responses_missing=sum(max(f.subagent_responses_in_file
                                           - f.subagent_responses_imported, 0)
                                       for f in files if not (f.error or f.skipped)),
        bills_off=sum(f.bill_delta_pct is not None and abs(f.bill_delta_pct) > 100 * BILL_TOLERANCE
                      for f in files))


def twin_check(paths: Iterable[str | Path], progress: Progress = no_progress) -> TwinReport:
    """Check every transcript under ``paths`` (see the module docstring)."""
    found = transcript_files(paths)
    files = []
    for i, path in enumerate(found):
        def within(fraction: float, label: str, /, i: int = i, name: str = path.name) -> None:
            progress((i + fraction) / len(found), f"{name[:24]} {label}")
        within(0.0, "importing")
        files.append(check_file(path, within))
    progress(1.0, "done")
    return TwinReport(files=tuple(files), summary=twin_totals(files))
