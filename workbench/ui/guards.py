"""The shared empty states and the one error boundary of the pages (UX.md: "an empty state on every
page tells a new user the one thing to do next"; errors without a traceback, the traceback in an
expander for developers). Streamlit-only; pages call these instead of repeating them."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Generator
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException

from workbench.storage.store import Store
from workbench.ui import state
from workbench.views.markup import plain

__all__ = ["error_boundary", "finish_first", "progress_bar", "require_replay", "require_step",
           "show_error"]

#: Seconds between two drawn updates of a progress bar.
PROGRESS_SECONDS = 0.25
_NO_REPLAY = ("This session has no replay yet: it is made when the session is opened (see the "
              "sidebar), or run `workbench replay SESSION_ID --name default`.")


def require_replay() -> tuple[Store, str, str]:
    """The store, session id and replay id the sidebar selected; stops the page with the empty
    state a new user needs when either is missing."""
    store = state.get_store()
    session_id, replay_id = state.current_session_id(), state.current_replay_id()
    if session_id is None:
        st.info("No session yet: import a transcript or open a sample on the Sessions page.", icon="👋")
        st.stop()
    if replay_id is None:
        st.info(_NO_REPLAY)
        st.stop()
    return store, session_id, replay_id


def require_step() -> tuple[Store, str, str, int]:
    """:func:`require_replay` plus the step the sidebar selected (a replay without steps gets the
    same empty state as no replay)."""
    store, session_id, replay_id = require_replay()
    step = state.current_step()
    if step is None:
        st.info(_NO_REPLAY)
        st.stop()
    return store, session_id, replay_id, step


def show_error(what: str, exc: BaseException, *, message: str | None = None) -> None:
    """One error line in the user's words, the traceback on demand; call inside ``except``.

    ``message`` replaces the default "Could not <what>: <error>" line."""
    st.error(message if message is not None else f"Could not {what}: {plain(exc)}")
    with st.expander("Traceback (for developers)"):
        st.code(traceback.format_exc(), language=None)


@contextmanager
def error_boundary(what: str, *, stop: bool = True, message: str | None = None) -> Generator[None]:
    """The UI boundary: any error raised inside is shown as one line ("Could not <what>: …", or
    ``message`` formatted with ``{exc}``) with the traceback in an expander, never a bare
    traceback. ``stop`` ends the page run there; otherwise the page goes on after the block.
    Streamlit's own stop and rerun signals pass through."""
    try:
        yield
    except ScriptControlException:
        raise
    except Exception as exc:  # noqa: BLE001 - the UI boundary shows every error, never crashes
        show_error(what, exc, message=None if message is None else message.format(exc=plain(exc)))
        if stop:
            st.stop()


@contextmanager
def finish_first(report: Callable[[float, str], None]) -> Generator[Callable[[float, str], None]]:
    """Work that must not be lost half-way (a replay that is saved at its end). Streamlit stops or
    restarts a page run at its next drawing call when the browser reloads, disconnects or sends a
    widget change; here the progress ``report`` yielded swallows that signal (the bar stops
    moving), the work goes on to its end, and the signal is raised when the block has finished,
    so the stop or rerun still happens, after the result is stored. An error of the work itself
    goes out as it is."""
    pending: list[ScriptControlException] = []

    def guarded(fraction: float, label: str) -> None:
        if pending:
            return
        try:
            report(fraction, label)
        except ScriptControlException as signal:
            pending.append(signal)
    yield guarded
    if pending:
        raise pending[0]


@contextmanager
def progress_bar(text: str) -> Generator[Callable[[float, str], None]]:
    """A progress bar starting at 0 with ``text``; yields ``report(fraction, label)`` (the
    fraction clamped to 0…1) and removes the bar when the block ends, however it ends. The first
    report and the last (fraction 1) are drawn, others at most every :data:`PROGRESS_SECONDS`:
    each drawn one is a message the browser renders (a re-run of a 2,000-step replay reported
    4,000 times)."""
    bar = st.progress(0.0, text=text)
    last: list[float] = []

    def report(fraction: float, label: str) -> None:
        now = time.monotonic()
        if last and fraction < 1.0 and now - last[0] < PROGRESS_SECONDS:
            return
        last[:] = [now]
        bar.progress(min(max(fraction, 0.0), 1.0), text=label)
    try:
        yield report
    finally:
        bar.empty()
