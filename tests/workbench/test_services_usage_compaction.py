"""The Usage and Compaction pages' services and views (R-UI-5, R-TOK-6, R-UI-3): a saved replay
read from a real store with its truth rows, the agent's recorded compactions, the compaction
decisions and archives, and the words the pages show of them."""

from __future__ import annotations

from pathlib import Path

from truth_helpers import RECORDED_STEP, store_long_with_recorded_compaction

from workbench.analysis.replay_report import ErrorMeaning
from workbench.services.compaction import open_compaction
from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.services.usage import open_usage
from workbench.storage.store import Store
from workbench.views.compaction import COMPACTION_KINDS, archive_preview, compaction_budget_caption
from workbench.views.usage import usage_budget_caption, usage_metrics

LONG = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"


def test_r_ui_5_open_usage_reads_steps_recorded_marks_run_and_error_meaning(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        session_id = store_long_with_recorded_compaction(store)
        info, _ = replay_and_save(store, session_id, name="default")
        opened = open_usage(store, session_id, info.id)
        assert len(opened.steps) == info.step_count and opened.replay.id == info.id
        assert [m.step for m in opened.marks] == [RECORDED_STEP]
        assert [r["label"] for r in opened.runs] == ["default"]
        assert opened.meaning == ErrorMeaning(meaningful=True, text_redacted=None, note="")
        metrics = usage_metrics(opened.steps)
        assert [m.label for m in metrics] == ["Estimate error, median", "Estimate error, p90",
                                              "Unrecorded overhead", "Calibration ratio"]
        assert metrics[0].value.endswith("%")
        assert "responses with trusted usage" in (metrics[0].help or "")
        assert metrics[1].help is None and metrics[3].value.count(".") == 1


def test_r_tok_6_budget_caption_falls_back_to_the_last_steps_pressure_line():
    assert usage_budget_caption(None, 123_456).endswith("· pressure line 123,456")


def test_r_ui_3_open_compaction_reads_decisions_archives_and_requests(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        session_id = store.import_file(LONG).session_id
        info, _ = replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME,
                                  config=budget_96k_config())
        opened = open_compaction(store, session_id, info.id, COMPACTION_KINDS)
        assert {type(d).__name__ for _, _, d in opened.decisions} >= {"CompactionPlan",
                                                                     "CompactionApplied"}
        assert opened.archives and set(opened.checkpoint_texts()) == {a.n for a in opened.archives}
        assert all(t.startswith("[Context Summary]") for t in opened.checkpoint_texts().values())
        step = opened.replay.checkpoints[0].step_index
        request = opened.request_at(step)
        assert request is not None
        assert request.ref == opened.replay.preparation(step).final_request_ref
        assert len(opened.originals) == store.row_of(session_id).message_count
        caption = compaction_budget_caption(opened.replay.thresholds, "extractive")
        assert caption is not None and "summariser **extractive** (offline extractive" in caption
    assert compaction_budget_caption(None, "extractive") is None


def test_r_ui_3_archive_preview_cuts_long_archives_unless_whole():
    text = "x" * 25
    assert archive_preview(text, whole=False, limit=10) == "x" * 10 + (
        "\n… [15 more characters: switch on “Show the whole archive”]")
    assert archive_preview(text, whole=True, limit=10) == text
    assert archive_preview(text, whole=False, limit=25) == text
