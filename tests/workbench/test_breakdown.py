"""The context breakdown at a step (R-UI-2, R-UI-8, R-REAL-1), Claude Code's ``/context`` question:
the parts of each request (unrecorded overhead, checkpoint, user and assistant text, tool results by
tool, reduced outputs) add up to the step's whole request as the Step-through header states it, on a
real Claude Code session and a compacting sample; the notebook's ``step.breakdown()`` and the
Step-through page (AppTest) show them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.tokens import default_estimator
from streamlit.testing.v1 import AppTest

import workbench as wb
from workbench.importers import load_session
from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store
from workbench.views.breakdown import (
    CHECKPOINT,
    OVERHEAD,
    REDUCED,
    breakdown_frame,
    call_names,
    step_breakdown,
    whole_of,
)
from workbench.views.step_page import header_text

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
LONG = ROOT / "sample_sessions" / "long_session.jsonl"
REAL = ROOT.parent / "shared" / "real-sessions" / "claude_code" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl.gz"


@pytest.fixture(scope="module")
def real_replay():
    if not REAL.is_file():
        pytest.skip("../shared/real-sessions is absent")
    return wb.replay(load_session(REAL).session)


def test_r_real_1_parts_sum_to_the_header_whole_request_at_every_step(real_replay):
    """R-REAL-1: at every step of the real session the parts sum to the whole request the header
    states, the overhead is the measured unrecorded overhead, and no part is negative."""
    estimator = default_estimator()
    names = call_names(real_replay.session.messages)
    frame = breakdown_frame(((p, real_replay.result.request(p)) for p in real_replay.preparations),
                            estimator, names)
    per_step: dict[int, int] = {}
    for step_index, tokens in zip(frame["step"], frame["tokens"], strict=True):
        per_step[int(step_index)] = per_step.get(int(step_index), 0) + int(tokens)
    for prep in real_replay.preparations:
        assert per_step[prep.step_index] == whole_of(prep) == prep.whole_request_tokens
        header = header_text(prep, len(real_replay), real_replay.result.thresholds)
        assert f"{whole_of(prep):,}" in " ".join(header.cells)
    assert all(int(t) >= 0 for t in frame["tokens"])
    step = real_replay.step(150)
    parts = _parts(step.breakdown())
    assert parts[OVERHEAD] == step.preparation.unrecorded_overhead_tokens > 0
    assert sum(parts.values()) == step.preparation.whole_request_tokens
    assert {"user text", "assistant text", "tool calls"} <= set(parts)
    assert any(p.startswith("tool results: ") for p in parts)
    assert parts.get(REDUCED, 0) > 0  # the default replay reduces old outputs on this session
    assert sum(float(x) for x in step.breakdown()["share"]) == pytest.approx(1.0)


def _parts(frame) -> dict[str, int]:
    return {str(p): int(t) for p, t in zip(frame["part"], frame["tokens"], strict=True)}


def test_r_ui_2_a_compacted_request_shows_its_checkpoint_part():
    """R-UI-2: the step after an applied compaction has a checkpoint part; a failed or unready
    step still sums to its whole request."""
    result = wb.replay(LONG, {"compaction": {"input_budget_tokens": 96000}})
    applied = next(p.step_index for p in result.preparations if p.compaction_applied)
    parts = _parts(result.step(applied).breakdown())
    assert parts[CHECKPOINT] > 0
    assert sum(parts.values()) == whole_of(result.preparations[applied])
    prep = result.preparations[applied]
    unready = step_breakdown(prep, None, default_estimator())
    assert sum(_parts(unready).values()) == whole_of(prep)
    figure = result.figure("breakdown").to_dict()
    assert figure["layout"]["barmode"] == "stack"
    assert {t["name"] for t in figure["data"]} >= {OVERHEAD, CHECKPOINT}


def test_r_ui_2_step_through_shows_the_breakdown_and_the_chart_over_steps():
    """R-UI-2: with its expander open, Step-through lists the parts of the step (summing to the
    header's figure) and draws a stacked bar per step."""
    with open_store() as store:
        session_id = store.import_file(LONG).session_id
        replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME, config=budget_96k_config())
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["step"] = "40"
    at.run()
    at.session_state["st_breakdown_open"] = True
    at.switch_page("../pages/step_through.py").run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["part", "tokens", "share"])
    assert table["part"].iloc[0] == OVERHEAD
    replay_id = at.session_state["wb_replay"]
    with open_store() as store:
        saved = store.replays.open(replay_id)
        prep, steps = saved.preparation(40), len(saved)
    assert sum(_parts(table).values()) == whole_of(prep)
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    stacked = [layer for c in charts for layer in c["layer"]
               if layer["encoding"].get("y", {}).get("stack") == "zero"]
    assert stacked and {r["series"] for r in stacked[0]["data"]["values"]} >= {OVERHEAD}
    assert {r["x"] for r in stacked[0]["data"]["values"]} == set(range(steps))


def test_r_ui_2_every_part_of_the_breakdown_has_its_own_colour():
    """R-UI-2: the chart of what each request is made of gives each part a distinct colour (the
    default cycle of ten gave three pairs of parts one colour)."""
    import pandas as pd

    from workbench.views.breakdown import breakdown_figure

    parts = [f"tool results: tool{i}" for i in range(6)] + [
        "tool results: other", "system prompt & tools (unrecorded overhead)",
        "engine tools & request framing", "context & notices", "checkpoint", "user text",
        "assistant text", "tool calls", "reduced / externalised outputs"]
    frame = pd.DataFrame([{"step": s, "part": p, "tokens": 10 + i} for s in range(3)
                          for i, p in enumerate(parts)])
    colours = [trace.marker.color for trace in breakdown_figure(frame).data]  # pyright: ignore[reportAttributeAccessIssue] -- plotly's stubs type data loosely
    assert len(colours) == len(parts) == 15
    assert all(colours) and len(set(colours)) == len(colours)
