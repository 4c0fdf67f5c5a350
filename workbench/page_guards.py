"""The shared empty states and the one error boundary of the pages (UX.md: "an empty state on every
page tells a new user the one thing to do next"; errors without a traceback, the traceback in an
expander for developers). Streamlit-only; pages call these instead of repeating them."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException

from workbench import state
from workbench.store import Store

__all__ = ["error_boundary", "require_replay", "show_error"]


def require_replay() -> tuple[Store, str, str]:
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


def show_error(what: str, exc: BaseException, *, message: str | None = None) -> None:
    """One error line in the user's words, the traceback on demand; call inside ``except``.

    ``message`` replaces the default "Could not <what>: <error>" line."""
    st.error(message if message is not None else f"Could not {what}: {exc}")
    with st.expander("Traceback (for developers)"):
        st.code(traceback.format_exc(), language=None)


@contextmanager
def error_boundary(what: str, *, stop: bool = True, message: str | None = None) -> Iterator[None]:
    """The UI boundary: any error raised inside is shown as one line ("Could not <what>: …", or
    ``message`` formatted with ``{exc}``) with the traceback in an expander, never a bare
    traceback. ``stop`` ends the page run there; otherwise the page goes on after the block.
    Streamlit's own stop and rerun signals pass through."""
    try:
        yield
    except ScriptControlException:
        raise
    except Exception as exc:  # noqa: BLE001 - the UI boundary shows every error, never crashes
        show_error(what, exc, message=None if message is None else message.format(exc=exc))
        if stop:
            st.stop()
