"""Follow-ups on the whole-request basis: Compare's totals and steps table use the figure every
chart plots (R-TOK-2), and a report of a session with no model call renders (R-UI-9)."""

from __future__ import annotations

import json

import workbench as wb
from workbench.views.compare import RunSummary, StepPoint, steps_table, totals_table


def _run(label: str, figures: list[tuple[int, int | None]]) -> RunSummary:
    steps = tuple(StepPoint(step=i, phase="ready", final_input_tokens=raw,
                            whole_request_tokens=whole)
                  for i, (raw, whole) in enumerate(figures))
    return RunSummary(label=label, input_budget=200_000, pressure_line=160_000, steps=steps)


def test_r_tok_2_compare_totals_use_the_whole_request_basis():
    """Tokens sent is the sum of the plotted whole-request figures, not of the raw estimate."""
    a = _run("A", [(1_000, 27_000), (2_000, 28_300)])
    b = _run("B", [(1_500, None)])  # an older record without whole-request figures: raw estimate
    totals = totals_table([a, b]).set_index("configuration")
    assert totals.loc["A", "tokens_sent"] == 55_300
    assert totals.loc["B", "tokens_sent"] == 1_500


def test_r_tok_2_compare_steps_table_uses_the_whole_request_basis():
    a = _run("A", [(1_000, 27_000), (2_000, 28_300)])
    b = _run("B", [(900, 26_000), (1_000, 26_100)])
    table = steps_table([a, b])
    assert list(table["tokens · A"]) == [27_000, 28_300]
    assert list(table["difference (B − A)"]) == [-1_000, -2_200]


def test_r_ui_9_report_of_a_one_message_session(tmp_path):
    """A session with one user message and no model call has no step: the report still renders
    (its usage chart has nothing to plot) instead of raising KeyError."""
    transcript = tmp_path / "one.jsonl"
    transcript.write_text(json.dumps({
        "type": "user", "uuid": "u1", "sessionId": "s-one", "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "hello"}}) + "\n", encoding="utf-8")
    session = wb.load_session(transcript)
    out = wb.write_report(session, tmp_path / "one.html")
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and 'id="wb-usage"' in html
