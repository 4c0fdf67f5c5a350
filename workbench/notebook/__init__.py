"""The Jupyter API (R-UI-8): the workbench's views from Python, as pandas DataFrames and plotly figures.

    import workbench as wb
    s = wb.load_session("sample_sessions/long_session.jsonl")   # a path or a stored session id
    r = wb.replay(s, "cost-first")          # None, a YAML path, a preset name or a ContextConfig
    r.stages(); r.decisions(); r.usage()    # DataFrames (columns documented on each method)
    r.figure("usage"); r.figure("timeline")  # plotly figures, the same functions the pages use
    r.step(12)                               # one preparation, rendered in Jupyter
    wb.compare(r, wb.replay(s)).figure()     # two configurations on one chart

Nothing here recomputes a decision: every table and figure is a view function of
``workbench.views`` applied to the engine's records, so a notebook shows what the app shows.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from iris.config import ContextConfig, config_hash
from iris.frozen import UNCHANGED
from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.prompts import PromptSnapshot
from iris.replay import Replay
from iris.session import Session
from iris.tokens import default_estimator

from ..analysis.fidelity import fidelity_rows, lost_rows, replay_losses
from ..analysis.figures import EstimateError, estimate_error, replay_calibration_ratio
from ..analysis.replay_reader import replay_facts
from ..analysis.summariser_info import summariser_info, templates_ignored
from ..analysis.words import counted
from ..progress import Progress
from ..records import recorded_marks
from ..services.imports import SAMPLES_DIR
from ..services.presets import PRESET_NAMES, config_label, resolve_config
from ..services.replay import replay_session, summariser_name
from ..services.summarisers import make_summariser
from ..views.breakdown import breakdown_figure, breakdown_frame, call_names, step_breakdown
from ..views.compaction import attempts_table, compactions_table, replay_bands, timeline_figure
from ..views.compare import (
    ComparedRun,
    compare_figure,
    compared_run,
    steps_table,
    totals_table,
)
from ..views.compare import compactions_table as compared_compactions
from ..views.failures import failures_table
from ..views.rich_html import comparison_html, replay_html, step_html
from ..views.search import SearchQuery, block_frame, message_states, search
from ..views.step_through import decision_table, request_messages, stage_table, step_header
from ..views.usage import summary_usage_table, usage_figure, usage_table
from .frames import NotebookFigure, notebook_figure, rows_frame, typed
from .tables import load_session, request_frame

__all__ = ["FIGURES", "Comparison", "NotebookReplay", "StepView", "compare", "config_label",
           "export_otlp", "load_session", "preset_names", "replay", "resolve_config", "sample_path"]

#: Figure kinds :meth:`NotebookReplay.figure` draws.
FIGURES: tuple[str, ...] = ("usage", "timeline", "breakdown")


def sample_path(name: str = "long_session") -> Path:
    """A bundled sample session (``bugfix``, ``long_session``, ``unanswered``)."""
    path = SAMPLES_DIR / f"{name.removesuffix('.jsonl')}.jsonl"
    if not path.is_file():
        names = sorted(p.stem for p in SAMPLES_DIR.glob("*.jsonl"))
        raise FileNotFoundError(f"no bundled sample {name!r} (bundled: {', '.join(names) or 'none'})")
    return path


def preset_names() -> tuple[str, ...]:
    """Names of the bundled configuration presets (``workbench/presets/*.yaml``)."""
    return PRESET_NAMES


class StepView:
    """One preparation: its header, stage table, decisions and final request (rich in Jupyter)."""

    def __init__(self, preparation: ContextPreparation, request: PreparedRequest | None,
                 session: Session) -> None:
        self.preparation, self.request, self._session = preparation, request, session

    @property
    def header(self):
        """:class:`workbench.views.step_through.StepHeader` (phase, tokens, pressure colour)."""
        return step_header(self.preparation)

    def stages(self) -> pd.DataFrame:
        """stage, status, before_tokens, after_tokens, change (whole requests, the header's
        basis), decisions, decision_kinds (``{kind: count}``), note, local_before_tokens,
        local_after_tokens (detail: the raw local estimates)."""
        return typed(stage_table(self.preparation), "stages")

    def decisions(self) -> pd.DataFrame:
        """stage, kind, what (plain words with numbers), reason, message (session index), ref."""
        return typed(decision_table(self.preparation), "decisions")

    def _request_messages(self) -> tuple:
        if self.request is None:
            return ()
        return request_messages(self.request, self._session.messages)

    def breakdown(self) -> pd.DataFrame:
        """What this step's request is made of, like Claude Code's ``/context``: ``part, tokens,
        share`` — the unrecorded overhead (system prompt and tools), engine tools and framing,
        context and notices, the checkpoint, user text, assistant text, tool calls, tool results by
        tool, reduced/externalised outputs. ``tokens`` sums to the step's whole request (the
        header's figure)."""
        return step_breakdown(self.preparation, self.request, default_estimator(),
                              call_names(self._session.messages))

    def messages(self) -> pd.DataFrame:
        """The final request message by message: position, role, origin, label, marks (a list),
        chars, history_index, changed, text, original_text (the recorded text of a changed one);
        no rows for a failed step."""
        return request_frame(self._request_messages())

    def __repr__(self) -> str:
        p = self.preparation
        return (f"<StepView step {p.step_index} {p.phase}: {p.final_input_tokens:,} of "
                f"{p.input_budget:,} tokens, {len(p.stages)} stages>")

    def _repr_html_(self) -> str:
        return step_html(self.preparation, self.header, self.stages(), self.decisions(),
                         self._request_messages())


class NotebookReplay:
    """A replay of one session under one configuration, with DataFrame and figure views."""

    def __init__(self, session: Session, config: ContextConfig, result: Replay, *,
                 label: str = "replay", summariser: str = "extractive",
                 request_of: Callable[[ContextPreparation], PreparedRequest | None] | None = None,
                 saved_id: str | None = None, template_snapshot_id: str | None = None,
                 cost_of: Callable[[], Any] | None = None) -> None:
        self.session, self.config, self.result, self.label = session, config, result, label
        self.summariser = summariser
        """The summariser's kind (``extractive``, ``recorded``, ``remote``, ``custom``)."""
        self.template_snapshot_id = template_snapshot_id
        """The prompt template snapshot the replay rendered with (None: not known)."""
        self.saved_id = saved_id
        """The id of the saved replay these records were read from (None: computed here)."""
        self._request_of = request_of or result.request
        self._cost_of = cost_of

    def request(self, preparation: ContextPreparation) -> PreparedRequest | None:
        """The final request of ``preparation`` (read from the store for a saved replay)."""
        return self._request_of(preparation)

    @property
    def preparations(self) -> tuple[ContextPreparation, ...]:
        return self.result.preparations

    def __len__(self) -> int:
        return len(self.result.preparations)

    @property
    def _steps(self) -> Sequence[Any]:
        """The preparations as the views' step protocols read them (attribute by attribute)."""
        return self.result.preparations

    def stages(self) -> pd.DataFrame:
        """One row per (step, stage): ``step`` + the columns of :meth:`StepView.stages`."""
        return typed(_per_step(self.preparations, stage_table), "stages")

    def decisions(self) -> pd.DataFrame:
        """One row per decision: ``step`` + the columns of :meth:`StepView.decisions`."""
        return typed(_per_step(self.preparations, decision_table), "decisions")

    def usage(self) -> pd.DataFrame:
        """Per step: step, phase, local_estimate, provider_tokens, estimated (a frozen estimate),
        difference, ratio, compaction_applied, pressure_line, reminder_line, as_recorded_estimate,
        error_pct, replayed_request, trigger_tokens, trigger_basis."""
        return typed(usage_table(self._steps), "usage")

    def summary_usage(self) -> pd.DataFrame:
        """Main model and summary (compaction) calls apart: kind, calls, prompt/input/output tokens."""
        return summary_usage_table(self.result.run_usage)

    def _compaction_decisions(self) -> tuple:
        return tuple((p.step_index, s.name, d) for p in self.preparations for s in p.stages
                     for d in s.decisions if d.kind.startswith("compaction-"))

    def compactions(self) -> pd.DataFrame:
        """Applied compactions: n, step, cut_index, tokens_before, tokens_after (this request as
        sent, whole request), trigger_value, trigger_basis, history_tokens_before,
        history_tokens_after (detail: the untrimmed durable history), checkpoint_tokens, archive,
        reason."""
        return typed(compactions_table(self._compaction_decisions(), self.preparations),
                     "compactions")

    def estimate_error(self) -> EstimateError:
        """The as-recorded estimate's error against the provider (:func:`workbench.analysis.figures.
        estimate_error`): ``median_abs_pct``, ``p90_abs_pct``, ``responses``, ``basis``."""
        return estimate_error(self.preparations,
                              [m.step for m in self.result.recorded_compactions])

    def calibration_ratio(self) -> float:
        """Provider tokens per local token at the end of the replay."""
        return replay_calibration_ratio(self.result.calibration, self.preparations)

    def attempts(self) -> pd.DataFrame:
        """Every compaction plan, candidate, rejection and commit: step, outcome, attempt, what, reason."""
        return typed(attempts_table(self._compaction_decisions()), "attempts")

    def fidelity(self) -> pd.DataFrame:
        """What each compaction lost (docs/fidelity.md), the agent's recorded ones and the
        replay's own: source (``recorded`` or ``replay``), n, step, kind (a fact kind, or ``all``),
        facts, kept, needed_later, needed_later_kept, recall_needed_later, never_recovered (lost
        facts the session never got back), recovery_tokens (what getting the others back cost)."""
        return rows_frame(fidelity_rows(replay_losses(self.session, self.result)), "fidelity")

    def lost(self) -> pd.DataFrame:
        """The facts each compaction lost though the session needed them again, the
        never-recovered ones first: source, n, step (of the compaction), kind, fact,
        stated_at_message, needed_at_step, needed_at_message, recovered_at_step (empty: never),
        recovered_by (``re-read``, ``re-run``, ``tool result``, ``user``), recovery_tokens."""
        rows = [{"source": r.source, "n": r.n, "step": r.step, **row}
                for r in replay_losses(self.session, self.result).all for row in lost_rows(r)]
        return rows_frame(rows, "lost")

    def failures(self) -> pd.DataFrame:
        """Failed and cancelled steps: step, phase, stage, kind, error, link (to the app's step)."""
        return typed(failures_table(self._steps, session_id=self.result.session_id,
                                    replay_id=self.label), "failures")

    def figure(self, kind: str = "usage") -> NotebookFigure:
        """``usage`` (tokens per step with the pressure lines), ``timeline`` (compaction bands) or
        ``breakdown`` (each step's request by part, stacked), titled with this replay's label."""
        if kind == "usage":
            fig = usage_figure(self._steps,
                               recorded=recorded_marks(self.session.compactions, self.preparations))
            return notebook_figure(fig, f"Tokens per step · {self.label}")
        if kind in ("timeline", "compaction"):
            return notebook_figure(timeline_figure(self.bands()), f"Compaction timeline · {self.label}")
        if kind == "breakdown":
            return notebook_figure(breakdown_figure(self.breakdown()),
                                   f"What each request is made of · {self.label}")
        raise ValueError(f"unknown figure {kind!r}; choose one of {', '.join(FIGURES)}")

    def bands(self) -> tuple:
        """One :class:`~workbench.views.compaction.CompactionBand` per applied compaction."""
        return replay_bands(replay_facts(self.result).compactions, request_at=self._request_at,
                            session_messages=self.session.messages,
                            checkpoints={n: c.checkpoint_text
                                         for n, c in enumerate(self.result.checkpoints, start=1)})

    def _request_at(self, step: int) -> PreparedRequest | None:
        return self.request(self.preparations[step])

    def breakdown(self) -> pd.DataFrame:
        """Every step's request by part (``step, part, tokens``; the parts of a step sum to its
        whole request, :meth:`StepView.breakdown`); tool results of all but the six largest tools
        are summed as "tool results: other"."""
        return breakdown_frame(((p, self.request(p)) for p in self.preparations),
                               default_estimator(), call_names(self.session.messages))

    def search(self, text: str = "", *, role: Sequence[str] = (), tool: Sequence[str] = (),
               errors: bool = False, state: Sequence[str] = (), step: int = -1) -> pd.DataFrame:
        """The session's content blocks that match: ``text`` (case-insensitive, in the text, the
        tool's name, arguments and file paths), ``role``, ``tool``, ``errors`` only, and ``state``
        (what step ``step``'s request did with the message: sent whole, reduced, left out, not sent
        yet). Columns: message, step (the step that first sent it), role, kind, tool, paths, error,
        state, match (a snippet), link (to the message on the Messages page)."""
        prep = self.step(step).preparation
        states = message_states(self.request(prep), prep.response_message_index,
                                len(self.session.messages))
        query = SearchQuery(text=text, roles=tuple(role), tools=tuple(tool), errors_only=errors,
                            states=tuple(state))
        return search(block_frame(self.session), query, states=states,
                      session_id=self.session.header.session_id)

    def step(self, n: int) -> StepView:
        """The preparation of step ``n`` (0-based; negative counts from the end)."""
        count = len(self.preparations)
        if not -count <= n < count:
            raise IndexError(f"step {n} is out of range: this replay has {count} steps (0…{count - 1})")
        prep = self.preparations[n]
        return StepView(prep, self.request(prep), self.session)

    def compared_run(self) -> ComparedRun:
        """What a comparison needs of this replay (:class:`workbench.views.compare.ComparedRun`)."""
        return compared_run(self.label, self.result,
                           configuration_hash=config_hash(self.config))

    def cost(self) -> Any:
        """What the replay costs next to what the session was billed
        (:class:`workbench.pricing.ReplayCost`: ``recorded_billed_usd``, ``replay_usd``,
        ``saved_usd``, ``saved_pct``…), the figures ``--summary-json`` writes under ``cost`` and
        the Usage page states; a saved replay's as the Usage page prices it from the store."""
        if self._cost_of is not None:
            return self._cost_of()
        from ..pricing import replay_cost

        return replay_cost(self.session, self.result)

    def export_otlp(self, path: str | Path) -> Path:
        """Write the preparations as OpenTelemetry GenAI spans (OTLP JSON) for a tracing tool;
        see :mod:`workbench.views.otlp_export` for what each span carries."""
        return export_otlp(self, path)

    def totals(self) -> pd.DataFrame:
        """Replay-wide figures as one row, the Configuration page's totals row and a row of
        :meth:`Comparison.totals`: configuration, steps, failed_steps, tokens_sent, compactions,
        cut_points, reduction_saved, fold_saved, summary_calls, summary_input_tokens,
        summary_output_tokens, input_budget, budget_source, pressure_line."""
        return typed(totals_table([self.compared_run()]), "totals")

    def __repr__(self) -> str:
        t = self.totals().iloc[0]
        return (f"<NotebookReplay {self.label!r} of {self.result.session_id!r}: "
                f"{counted(int(t['steps']), 'step')}, {counted(int(t['compactions']), 'compaction')}, "
                f"{int(t['failed_steps']):,} failed>")

    def _repr_html_(self) -> str:
        totals = {str(name): value for name, value in self.totals().iloc[0].items()}
        return replay_html(self.result.session_id, totals, self.result.thresholds)


def export_otlp(replay: NotebookReplay, path: str | Path, *, shift_to_now: bool = False) -> Path:
    """Write a notebook replay as OpenTelemetry GenAI spans in an OTLP JSON file (the spans are
    :func:`workbench.views.otlp_export.otlp_spans`; the file write is
    :func:`workbench.services.otlp.write_otlp`)."""
    # the OpenTelemetry SDK and protobuf load only for an export
    from ..services.otlp import write_otlp
    from ..views.otlp_export import otlp_document

    return write_otlp(path, otlp_document(replay.session, replay.preparations, replay.request,
                                          replay_name=replay.label, shift_to_now=shift_to_now))


def _per_step(preps: tuple[ContextPreparation, ...],
              table: Callable[[ContextPreparation], pd.DataFrame]) -> pd.DataFrame:
    """``table`` of every step stacked, with a leading ``step`` column."""
    frames = [table(p) for p in preps]
    frames = [f.assign(step=p.step_index) for f, p in zip(frames, preps) if not f.empty]
    if not frames:
        blank = ContextPreparation(configuration_snapshot_id="", run_id="", session_id="",
                                   activation="", step_index=0, response_message_index=0,
                                   input_budget=0, pressure_line=0)
        frames = [table(blank).assign(step=pd.Series(dtype="int64"))]
    merged = pd.concat(frames, ignore_index=True)
    for column in merged.columns[merged.dtypes == object]:  # one missing marker: None, not NaN
        merged[column] = merged[column].astype(object).where(merged[column].notna(), None)
    return merged.loc[:, ["step", *(c for c in merged.columns if c != "step")]]


def replay(session: Session | str | Path, config: Any = None, *,
           prompts: PromptSnapshot | None = None, summariser: Any = None,
           label: str | None = None,
           progress: Progress | None = None,
           workspace_root: str | Path | None = None) -> NotebookReplay:
    """Replay ``session`` (a Session, a path or a stored id) under ``config``.

    ``config`` is None (bundled default), a YAML path, a preset name, a mapping or a
    :class:`~iris.config.ContextConfig`; ``label`` names it in comparisons (default: the preset
    name or file stem). ``summariser`` is a summariser object or the command line's name for one
    (``offline``, ``recorded``, ``remote``; None: offline). Without ``prompts`` the templates come
    from the configuration's ``prompts.root`` under ``workspace_root`` (default: the workbench
    workspace).
    """
    if not isinstance(session, Session):
        session = load_session(session)
    resolved = resolve_config(config)
    if summariser is None or isinstance(summariser, str):
        summariser = make_summariser(summariser, session)
    result, bundle = replay_session(session, config=resolved, prompts=prompts,
                                    summariser=summariser,
                                    progress=progress or (lambda fraction, text: None),
                                    workspace_root=workspace_root)
    return NotebookReplay(session, resolved, result, label=label or config_label(config),
                          summariser=summariser_name(summariser),
                          template_snapshot_id=bundle.template_snapshot_id)


class Comparison:
    """Replays of the same session side by side (R-UI-6 from Python), drawn by the same view
    functions as the Configuration page (:mod:`workbench.views.compare`)."""

    def __init__(self, *replays: NotebookReplay) -> None:
        if len(replays) < 2:
            raise ValueError("compare needs at least two replays")
        sessions = sorted({r.result.session_id for r in replays})
        if len(sessions) > 1:
            raise ValueError(f"compare needs replays of one session, got {', '.join(map(repr, sessions))}")
        labels = [r.label for r in replays]
        if len(set(labels)) < len(labels):  # e.g. two custom configurations: tell them apart
            labels = [f"{label} ({chr(ord('a') + i)})" for i, label in enumerate(labels)]
        self.replays = replays
        self.labels: tuple[str, ...] = tuple(labels)
        self.runs: tuple[ComparedRun, ...] = tuple(
            r.compared_run().evolve(**UNCHANGED, label=label) for r, label in zip(replays, labels))
        self.warnings: tuple[str, ...] = _template_warnings(replays)
        """Why the comparison may compare less than it seems (R-FID-6): template snapshots that
        differ under a summariser that does not read templates. Also issued with warnings.warn."""
        for text in self.warnings:
            warnings.warn(text, UserWarning, stacklevel=3)

    def steps(self) -> pd.DataFrame:
        """Per step: step, ``tokens · <label>`` per replay and, for two, ``difference (B − A)``."""
        return typed(steps_table(self.runs), "steps")

    def totals(self) -> pd.DataFrame:
        """One row per replay: the columns of :meth:`NotebookReplay.totals`."""
        return typed(totals_table(self.runs), "totals")

    def compactions(self) -> pd.DataFrame:
        """Every applied compaction of every replay with its cut point: configuration, n, step,
        cut_index, first_kept_message, archived_messages, summary_input_tokens,
        summary_output_tokens."""
        return typed(compared_compactions(self.runs), "compared_compactions")

    def figure(self) -> NotebookFigure:
        """Per-step tokens of every replay on one chart, each one's pressure line and compactions,
        and the agent's recorded compactions."""
        first = self.replays[0]
        fig = compare_figure(self.runs, recorded=recorded_marks(first.session.compactions,
                                                                first.preparations))
        return notebook_figure(fig, "Tokens per step · " + " vs ".join(self.labels))

    def __repr__(self) -> str:
        return f"<Comparison {' vs '.join(map(repr, self.labels))}>"

    def _repr_html_(self) -> str:
        return comparison_html(self.labels, self.totals())


def _template_warnings(replays: Sequence[NotebookReplay]) -> tuple[str, ...]:
    snapshots = {r.template_snapshot_id for r in replays if r.template_snapshot_id}
    if len(snapshots) < 2:
        return ()
    ignored = {r.summariser: text for r in replays
               if (text := templates_ignored(summariser_info(r.summariser))) is not None}
    return tuple(ignored.values())


def compare(first: NotebookReplay, second: NotebookReplay, *more: NotebookReplay) -> Comparison:
    """Compare replays of the same session (two presets, or two template snapshots, …)."""
    return Comparison(first, second, *more)
