"""The shared empty states and error boundary of the replay pages (UX.md: "an empty state on every
page tells a new user the one thing to do next"; errors without a traceback, the traceback in an
expander for developers). Streamlit-only; pages call these instead of repeating them."""

from __future__ import annotations

import traceback

import streamlit as st

from workbench import state

__all__ = ["require_replay", "show_error"]


def require_replay() -> tuple[object, str, str]:
    """The store, session id and replay id the sidebar selected; stops the page with the empty
    state a new user needs when either is missing."""
    store = state.get_store()
    session_id, replay_id = state.current_session_id(), state.current_replay_id()
    if session_id is None:
        st.info("No session yet: import a transcript or open a sample on the Sessions page.", icon="👋")
        st.stop()
    if replay_id is None:
        st.info("This session has no replay yet: it is made when the session is opened (see the "
                "sidebar), or run `workbench replay SESSION_ID --name default`.")
        st.stop()
    return store, session_id, replay_id


def show_error(what: str, exc: BaseException) -> None:
    """One error line in the user's words, the traceback on demand; call inside ``except``."""
    st.error(f"Could not {what}: {exc}")
    with st.expander("Traceback (for developers)"):
        st.code(traceback.format_exc(), language=None)
