"""The Templates page's Streamlit parts (R-UI-4) on their own, each in a one-function app: a replay
that cannot be walked is a reason (the editor keeps working), the re-run progress reads "step N of
M", the re-run buttons report what was pressed, and a step comparison shows its table, diffs and
both sides with the fallbacks for empty texts."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _target_page() -> None:
    import streamlit as st

    from workbench.ui.templates import find_target

    st.write(f"target: {find_target()}")


def test_r_ui_4_a_replay_that_cannot_be_walked_is_a_reason_not_a_crash():
    at = AppTest.from_function(_target_page, default_timeout=30)
    at.session_state["wb_session"] = "no-such-session"
    at.session_state["wb_replay"] = "no-such-replay"
    at.run()
    assert not at.exception and not at.error
    assert at.markdown[0].value.startswith("target: Could not walk the selected replay: ")
    at.session_state["wb_replay"] = None
    at.run()
    assert "pick a replay in the sidebar" in at.markdown[0].value


def _progress_page() -> None:
    import streamlit as st

    from workbench.ui.guards import progress_bar
    from workbench.ui.templates import step_progress

    done = st.number_input("done", value=0, key="done")
    with progress_bar("re-running…") as bar:
        step_progress(bar)(int(done), 1200)
        if st.checkbox("hold", key="hold"):
            st.stop()  # the bar as the re-run left it


def test_r_ui_4_rerun_progress_reads_steps_done_of_total():
    at = AppTest.from_function(_progress_page, default_timeout=30).run()
    assert not at.exception and not at.get("progress")  # removed when the block ends
    at.checkbox(key="hold").check().run()
    bar = at.get("progress")[0].proto
    assert (bar.value, bar.text) == (0, "step 0 of 1,200")
    at.number_input(key="done").set_value(300).run()
    bar = at.get("progress")[0].proto
    assert (bar.value, bar.text) == (25, "step 300 of 1,200")
    at.number_input(key="done").set_value(5000).run()
    assert at.get("progress")[0].proto.value == 100  # never past the end


def _buttons_page() -> None:
    import streamlit as st

    from workbench.ui.templates import rerun_buttons

    st.write(f"pressed: {rerun_buttons(12)}")


def test_r_ui_4_rerun_buttons_report_which_was_pressed():
    at = AppTest.from_function(_buttons_page, default_timeout=30).run()
    assert at.markdown[0].value == "pressed: []"
    assert at.button(key="tpl_rerun_step").label == "Re-run step 12"
    at.button(key="tpl_rerun_all").click().run()
    assert at.markdown[0].value == "pressed: ['replay']"
    at.button(key="tpl_rerun_step").click().run()
    assert at.markdown[0].value == "pressed: ['step']"


def _comparison_page() -> None:
    from workbench.services.rerun import StepComparison, StepOutcome
    from workbench.ui.templates import show_comparison

    original = StepOutcome(label="original templates", step_index=12, snapshot_id="sha256:" + "a" * 64,
                           status="applied", summary_request="Summarise.", summary_text="S",
                           checkpoint_text="## Goal\nShip it.", tokens_before=1000,
                           tokens_after=400, pressure_line=800, success=True,
                           success_reason="400 ≤ 800")
    edited = original.model_copy(update={"label": "edited templates", "checkpoint_text": "",
                                         "summary_text": "too long", "status": "rejected"})
    show_comparison(StepComparison(step_index=12, original=original, edited=edited,
                                   prompt_diff="", checkpoint_diff="--- a\n+++ b\n-x\n+y\n"))


def test_r_ui_4_step_comparison_shows_the_table_the_diffs_and_both_sides():
    at = AppTest.from_function(_comparison_page, default_timeout=30).run()
    assert not at.exception, at.exception
    table = at.table[0].value
    assert table.loc["compaction stage", "original"] == "applied"
    assert table.loc["compaction stage", "edited"] == "rejected"
    assert [c.value for c in at.caption] == [
        "The rendered summary request is identical.",
        "No committed checkpoint with a loss record at this step: nothing to score."]
    labels = [e.label for e in at.expander]
    assert labels == ["original templates: summary request (10 chars)",
                      "edited templates: summary request (10 chars)",
                      "original templates: checkpoint (16 chars)",
                      "edited templates: checkpoint (0 chars)"]
    codes = [c.value for c in at.code]
    assert codes[-3:] == ["--- a\n+++ b\n-x\n+y", "## Goal\nShip it.", "too long"]
