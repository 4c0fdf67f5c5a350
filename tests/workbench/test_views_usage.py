"""Usage views (R-UI-5, R-TOK-6): estimate vs provider, ≈ marked, summary apart, the chart."""

from __future__ import annotations

from evidence_builders import bundle
from figures import figure_traces
from iris.compaction.usage import RunUsage

from workbench.views.display import display_frame
from workbench.views.usage import REPLAYED, summary_usage_table, usage_figure, usage_table


def test_r_ui_5_usage_table_difference_ratio_and_frozen_estimates():
    preps = bundle().preparations
    table = usage_table(preps)
    assert list(table.columns[:7]) == ["step", "phase", "local_estimate", "provider_tokens",
                                       "estimated", "difference", "ratio"]
    first = table.iloc[0]
    assert (first["local_estimate"], first["provider_tokens"]) == (360, 1100)
    assert first["difference"] == 740 and first["ratio"] == 3.056
    last = table.iloc[4]
    assert bool(last["estimated"])
    shown = display_frame(table)  # the label is made when shown, in the provider column's place
    assert list(shown.columns[:5]) == ["step", "phase", "local_estimate", "provider_label", "difference"]
    assert shown["provider_label"].loc[0] == "1,100" and shown["provider_label"].loc[4].startswith("≈")
    assert list(table["compaction_applied"]) == [False, False, True, False, False]


def test_r_tok_6_summary_usage_is_a_separate_row():
    table = summary_usage_table(RunUsage.model_validate(
        {"main": {"calls": 5, "prompt_tokens": 900},
         "compaction": {"calls": 1, "prompt_tokens": 500, "output_tokens": 40}}))
    assert list(table["kind"]) == ["main model", "summary (compaction)"]
    assert table.iloc[1]["prompt_tokens"] == 500 and table.iloc[1]["output_tokens"] == 40
    assert list(summary_usage_table(None)["calls"]) == [0, 0]


def test_r_ui_5_chart_lines_hollow_estimates_and_compaction_markers():
    """R-UI-5: estimate and provider lines, pressure/reminder lines, ≈ hollow, compaction marked."""
    fig = usage_figure(bundle().preparations)
    traces = {t.name: t for t in figure_traces(fig)}
    assert set(traces) == {REPLAYED, "provider", "provider ≈", "pressure line",
                           "reminder line", "compaction applied"}
    assert traces["provider ≈"].marker.symbol == "circle-open"
    assert list(traces["provider ≈"].x) == [4]
    assert list(traces["compaction applied"].x) == [2]
    assert set(traces["pressure line"].y) == {1600.0}
    assert [s.x0 for s in fig.layout.shapes] == [2]
    assert all(t.type != "pie" for t in figure_traces(fig))  # R-TOK-2: never a pie of stage tokens
