"""The unit of corpus evaluation: one session file under one configuration -> five tidy tables.

:func:`replay_one` is a plain top-level function of picklable arguments returning plain data, so
the same call runs in-process, in a worker process of a pool, or on a Dask worker on another
machine. It reads the transcript file itself and never touches the SQLite store. A session that
cannot be read or replayed is a result too: its ``sessions`` row carries the error and the other
tables are empty.

Tables (one list of row dicts each; column types in :data:`SCHEMAS`):

* ``steps``: one row per step of the replay;
* ``compactions``: one row per compaction, the replay's own (``source='replay'``) and the
  agent's recorded ones (``source='recorded'``);
* ``decisions``: one row per (stage, decision kind) with its count;
* ``fidelity``: what each compaction lost (docs/fidelity.md), per compaction (the replay's and the
  agent's) and fact kind plus an ``all`` row: facts, kept, needed later, kept of those, recall;
* ``sessions``: one row of totals (tokens sent and saved, compactions, failed preparations,
  summary calls and cost, real-vs-replay compaction steps, budget and its source, error).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from ..pricing import ReplayCost

__all__ = ["SCHEMAS", "TABLES", "replay_one", "to_arrow"]

TABLES = ("sessions", "steps", "compactions", "decisions", "fidelity")

_KEYS = [("configuration", pa.string()), ("session", pa.string())]
SCHEMAS: dict[str, pa.Schema] = {
    "steps": pa.schema(_KEYS + [
        ("step", pa.int64()), ("phase", pa.string()), ("final_tokens", pa.int64()),
        ("whole_request_tokens", pa.int64()), ("recorded_request_tokens", pa.int64()),
        ("provider_tokens", pa.int64()), ("trigger_tokens", pa.int64()),
        ("trigger_basis", pa.string()), ("compaction_applied", pa.bool_()),
        ("input_budget", pa.int64()), ("pressure_line", pa.int64())]),
    "compactions": pa.schema(_KEYS + [
        ("source", pa.string()), ("n", pa.int64()), ("step", pa.int64()),
        ("tokens_before", pa.int64()), ("tokens_after", pa.int64()),
        ("trigger_value", pa.int64()), ("trigger_basis", pa.string()),
        ("history_tokens_before", pa.int64()), ("history_tokens_after", pa.int64())]),
    "decisions": pa.schema(_KEYS + [
        ("stage", pa.string()), ("kind", pa.string()), ("count", pa.int64())]),
    "fidelity": pa.schema(_KEYS + [
        ("source", pa.string()), ("n", pa.int64()), ("step", pa.int64()), ("kind", pa.string()),
        ("facts", pa.int64()), ("kept", pa.int64()), ("needed_later", pa.int64()),
        ("needed_later_kept", pa.int64()), ("recall_needed_later", pa.float64())]),
    "sessions": pa.schema(_KEYS + [
        ("path", pa.string()), ("parent_id", pa.string()), ("model", pa.string()), ("steps", pa.int64()),
        ("failed_preparations", pa.int64()), ("tokens_sent", pa.int64()),
        ("tokens_recorded", pa.int64()), ("tokens_saved", pa.int64()),
        ("compactions", pa.int64()), ("recorded_compactions", pa.int64()),
        ("replay_compaction_steps", pa.list_(pa.int64())),
        ("recorded_compaction_steps", pa.list_(pa.int64())),
        ("summary_calls", pa.int64()), ("summary_input_tokens", pa.int64()),
        ("summary_output_tokens", pa.int64()), ("replay_usd", pa.float64()),
        ("saved_usd", pa.float64()), ("recorded_billed_usd", pa.float64()),
        ("prices_as_of", pa.string()),
        ("input_budget", pa.int64()), ("budget_source", pa.string()),
        ("calibration_ratio", pa.float64()), ("estimate_error_median_pct", pa.float64()),
        ("estimate_error_p90_pct", pa.float64()), ("estimate_error_responses", pa.int64()),
        ("error", pa.string()), ("seconds", pa.float64())]),
}


def to_arrow(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows of table ``name`` as an Arrow table with its fixed schema (empty tables keep types)."""
    return pa.Table.from_pylist(rows, schema=SCHEMAS[name])


def replay_one(path: str | Path, config: Any = None, *, label: str | None = None,
               summariser: str | None = None) -> dict[str, list]:
    """Replay the session file ``path`` under ``config`` (None, a preset name, a YAML path or a
    ``ContextConfig``) with the summariser named ``summariser`` (``offline``, the default;
    ``recorded``; ``remote``) and return its rows by table name. Never raises for a bad session."""
    from ..services.presets import config_label, resolve_config

    started = time.perf_counter()
    name = label or config_label(config)
    path = str(path)
    try:
        resolved = resolve_config(config)
        return _tables(path, resolved, name, started, summariser)
    except Exception as exc:  # noqa: BLE001 - a failing session is a recorded result
        row: dict[str, object] = {c: None for c in SCHEMAS["sessions"].names}
        row.update(configuration=name, session=Path(path).name, path=path,
                   error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - started)
        return {"sessions": [row], "steps": [], "compactions": [], "decisions": [], "fidelity": []}


def _tables(path: str, config: Any, name: str, started: float,
            summariser: str | None = None) -> dict[str, list]:
    from iris.replay import ReplayObservers, ReplayOptions, replay

    from ..analysis.fidelity import fidelity_rows, replay_losses
    from ..importers import load_session
    from ..pricing import prefix_sink, replay_cost
    from ..services.summarisers import make_summariser

    session = load_session(path).session
    # the tables read no request or archive; the sink keeps what the cost's prompt-cache model
    # needs of each request (how it starts compared with the one before)
    sink = prefix_sink(session)
    result = replay(session, config, summariser=make_summariser(summariser, session),
                    options=ReplayOptions(keep_bodies=False), observers=ReplayObservers(sink=sink))
    keys = {"configuration": name, "session": result.session_id}
    steps = [_step_row(keys, p) for p in result.preparations]
    compactions = _compaction_rows(keys, result)
    counts = Counter((s.name, d.kind) for p in result.preparations for s in p.stages
                     for d in s.decisions)
    decisions = [{**keys, "stage": stage, "kind": kind, "count": n}
                 for (stage, kind), n in sorted(counts.items())]
    cost = replay_cost(session, result, prefixes=sink.prefixes)
    total = _session_row(keys, path, session, result, steps, compactions, cost)
    total["seconds"] = time.perf_counter() - started
    fidelity = fidelity_rows(replay_losses(session, result), **keys)
    return {"sessions": [total], "steps": steps, "compactions": compactions, "decisions": decisions,
            "fidelity": fidelity}


def _step_row(keys: dict[str, str], p: Any) -> dict[str, Any]:
    return {**keys, "step": p.step_index, "phase": p.phase, "final_tokens": p.final_input_tokens,
            "whole_request_tokens": p.whole_request_tokens,
            "recorded_request_tokens": p.recorded_request_whole,
            "provider_tokens": p.provider_prompt_tokens, "trigger_tokens": p.trigger_tokens,
            "trigger_basis": p.trigger_basis, "compaction_applied": p.compaction_applied,
            "input_budget": p.input_budget, "pressure_line": p.pressure_line}


def _compaction_rows(keys: dict[str, str], result: Any) -> list[dict[str, Any]]:
    """The replay's compactions on the one basis of :mod:`workbench.analysis.figures`, then the agent's."""
    from ..analysis.figures import applied_compactions

    rows = [{**keys, "source": "replay", "n": n, **c.model_dump()}
            for n, c in enumerate(applied_compactions(result.preparations), start=1)]
    for n, mark in enumerate(result.recorded_compactions, start=1):
        rows.append({**keys, "source": "recorded", "n": n, "step": mark.step,
                     "tokens_before": mark.tokens_before, "tokens_after": mark.tokens_after})
    return rows


def _session_row(keys: dict[str, str], path: str, session: Any, result: Any, steps: list[dict],
                 compactions: list[dict], cost: ReplayCost) -> dict[str, Any]:
    def sent(row: dict[str, Any]) -> int:
        return row["whole_request_tokens"] if row["whole_request_tokens"] is not None else row["final_tokens"]

    compared = [r for r in steps if r["recorded_request_tokens"] is not None]
    usage = result.run_usage.compaction
    t = result.thresholds
    return {**keys, "path": path, "parent_id": session.header.parent_id, "model": session.header.model,
            "steps": len(steps),
            "failed_preparations": sum(1 for r in steps if r["phase"] != "ready"),
            "tokens_sent": sum(sent(r) for r in steps),
            "tokens_recorded": sum(r["recorded_request_tokens"] for r in compared),
            "tokens_saved": sum(r["recorded_request_tokens"] - sent(r) for r in compared),
            "compactions": sum(1 for c in compactions if c["source"] == "replay"),
            "recorded_compactions": sum(1 for c in compactions if c["source"] == "recorded"),
            "replay_compaction_steps": [c["step"] for c in compactions if c["source"] == "replay"],
            "recorded_compaction_steps": [c["step"] for c in compactions if c["source"] == "recorded"],
            "summary_calls": usage.calls, "summary_input_tokens": usage.input_tokens,
            "summary_output_tokens": usage.output_tokens, "replay_usd": cost.replay_usd,
            "saved_usd": cost.saved_usd, "recorded_billed_usd": cost.recorded_billed_usd,
            "prices_as_of": cost.prices_as_of, "input_budget": t.input_budget,
            "budget_source": getattr(t, "budget_source", None), "error": None,
            **_truth_figures(result)}


def _truth_figures(result: Any) -> dict[str, Any]:
    """The calibration ratio and the estimate error, as :mod:`workbench.analysis.figures` defines them."""
    from ..analysis.figures import estimate_error, replay_calibration_ratio

    error = estimate_error(result.preparations, [m.step for m in result.recorded_compactions])
    return {"calibration_ratio": replay_calibration_ratio(result.calibration, result.preparations),
            "estimate_error_median_pct": error.median_abs_pct,
            "estimate_error_p90_pct": error.p90_abs_pct,
            "estimate_error_responses": error.responses}
