"""The pages' one error boundary and the one place that touches the browser session (UX.md: errors
in the user's words, the traceback only on demand)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _boundary_page() -> None:
    import streamlit as st

    from workbench.ui.guards import error_boundary

    with error_boundary("read the thing", stop=False):
        raise ValueError("the file is damaged at line 3")
    st.write("after the first block")
    with error_boundary("stop here", message="Custom: {exc}"):
        raise KeyError("x")
    st.write("never shown")


def _stop_page() -> None:
    import streamlit as st

    from workbench.ui.guards import error_boundary

    with error_boundary("not an error"):
        st.write("inside")
        st.stop()
    st.write("never shown")


def _state_page() -> None:
    import streamlit as st

    from workbench.ui import state

    state.put("n", state.get("n", 0) + 1)
    if state.get("n") == 2:
        state.forget("n", "absent")
    st.write(f"n={state.get('n', 'gone')}")


def test_error_boundary_shows_one_line_and_the_traceback_on_demand():
    at = AppTest.from_function(_boundary_page).run()
    assert not at.exception
    assert [e.value for e in at.error] == ["Could not read the thing: the file is damaged at line 3",
                                           "Custom: 'x'"]
    assert [m.value for m in at.markdown] == ["after the first block"]  # stop=True ends the run
    assert [x.label for x in at.expander] == ["Traceback (for developers)"] * 2
    assert "ValueError" in at.expander[0].code[0].value


def test_error_boundary_lets_streamlit_stop_through():
    at = AppTest.from_function(_stop_page).run()
    assert not at.exception and not at.error
    assert [m.value for m in at.markdown] == ["inside"]


def _step_page() -> None:
    import streamlit as st

    from workbench.ui.guards import require_step

    _, session_id, replay_id, step = require_step()
    st.write(f"{session_id} {replay_id} {step}")


def _progress_page() -> None:
    import streamlit as st

    from workbench.ui.guards import error_boundary, progress_bar

    with progress_bar("starting") as report, error_boundary("count", stop=False):
        report(-0.5, "below")  # out-of-range fractions are clamped, never an exception
        report(1.5, "above")
        raise ValueError("broken")
    st.write("after")


def test_require_step_asks_for_a_session_then_a_replay_then_gives_the_selection():
    at = AppTest.from_function(_step_page).run()
    assert "Sessions page" in at.info[0].value and not at.markdown
    at.session_state["wb_session"], at.session_state["wb_replay"] = "s1", "r1"
    at.run()
    assert at.info[0].value.startswith("This session has no replay yet") and not at.markdown
    at.session_state["wb_step"] = 4
    at.run()
    assert not at.info and [m.value for m in at.markdown] == ["s1 r1 4"]


def test_progress_bar_clamps_and_is_removed_when_its_block_ends():
    at = AppTest.from_function(_progress_page).run()
    assert not at.exception
    assert [e.value for e in at.error] == ["Could not count: broken"]
    assert not at.get("progress")  # removed, also after an error
    assert [m.value for m in at.markdown] == ["after"]


def test_state_get_put_forget_keep_values_across_runs():
    at = AppTest.from_function(_state_page).run()
    assert [m.value for m in at.markdown] == ["n=1"]
    at.run()
    assert [m.value for m in at.markdown] == ["n=gone"]


def test_pages_reach_the_session_state_and_show_errors_only_through_the_shared_modules():
    """workbench/ui/state.py is the only module that touches ``st.session_state``; no page writes
    its own traceback expander (workbench.ui.guards.error_boundary does)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sources = {p: p.read_text("utf-8") for p in [*(root / "pages").glob("*.py"),
                                                 *(root / "workbench").rglob("*.py")]}
    touching = sorted(str(p.relative_to(root)) for p, text in sources.items()
                      if "session_state" in text and p.name != "state.py")
    assert touching == []
    own_boundaries = sorted(str(p.relative_to(root)) for p, text in sources.items()
                            if "traceback.format_exc()" in text and p.name != "guards.py")
    assert own_boundaries == []


def _many_reports_page() -> None:
    import streamlit as st

    from workbench.ui import guards

    guards.PROGRESS_SECONDS = 3600.0  # every report after the first falls inside one window
    try:
        with guards.progress_bar("re-running…") as report:
            for k in range(100):
                report(k / 100, f"step {k}")
            if st.checkbox("finish", key="finish"):
                report(1.0, "step 100")
            st.stop()  # the bar as the reports left it
    finally:
        guards.PROGRESS_SECONDS = 0.25


def test_r_ui_4_progress_bar_draws_the_first_and_last_report_not_every_one():
    """A re-run reports every step; the bar draws the first report, then at most one per
    PROGRESS_SECONDS, and always the last (each drawn one is a message the browser renders)."""
    at = AppTest.from_function(_many_reports_page, default_timeout=30).run()
    bar = at.get("progress")[0].proto
    assert (bar.value, bar.text) == (0, "step 0")
    at.checkbox(key="finish").check().run()
    bar = at.get("progress")[0].proto
    assert (bar.value, bar.text) == (100, "step 100")
