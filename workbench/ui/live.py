"""The live view's part of every page (R-LIVE-1): while ``workbench watch`` follows the selected
session, a fragment in the sidebar looks at the store every second, reruns the whole app when the
session grew or its ``default`` replay was made again (keeping the last step in view when it was in
view), and says how close the session is to its agent's own compaction line.

The follower, the liveness and the line are ``workbench.services.live``; the words
``workbench.views.live``.
"""

from __future__ import annotations

import streamlit as st

from workbench.services.live import LiveVersion, agent_line, is_live, live_version
from workbench.services.replay import DEFAULT_REPLAY_NAME
from workbench.storage.store import Store
from workbench.ui import state
from workbench.views.live import line_caption, line_level

__all__ = ["REFRESH_SECONDS", "follow_live", "live_mark"]

#: How often the fragment looks at the store: a new response shows within two seconds.
REFRESH_SECONDS = 1.0
_SEEN = "_wb_live_seen"
_FOLLOW = "_wb_live_follow"
_PENDING = "_wb_live_pending"


def live_mark(store: Store, session_id: str | None) -> tuple[str, LiveVersion, int | None] | None:
    """What the page is about to show of a live session (taken before the sidebar reads the store,
    so a change made while the page is drawn is a change the fragment sees); None otherwise."""
    if session_id is None or not is_live(session_id):
        return None
    last = _last_step(store, session_id)
    if state.get(_FOLLOW) == session_id and last is not None:
        state.request_step(last)  # the sidebar below applies it to the replay it reads
    return session_id, live_version(store, session_id), last


def follow_live(store: Store, session_id: str | None,
                mark: tuple[str, LiveVersion, int | None] | None) -> None:
    """Follow the selected session while it is live (``mark``: :func:`live_mark` taken before
    the sidebar); nothing for any other session."""
    if session_id is None or not is_live(session_id):
        return
    if mark is None or mark[0] != session_id:
        mark = live_mark(store, session_id)
    state.put(_SEEN, mark)
    if state.get(_FOLLOW) == session_id and state.current_step() == _last_step(store, session_id):
        state.forget(_FOLLOW)  # on the newest step again
    with st.sidebar:
        _live_fragment(store, session_id)


def _last_step(store: Store, session_id: str) -> int | None:
    replay = store.replays.find(session_id, DEFAULT_REPLAY_NAME)
    return replay.step_count - 1 if replay is not None and replay.step_count else None


@st.fragment(run_every=REFRESH_SECONDS)
def _live_fragment(store: Store, session_id: str) -> None:
    seen = state.get(_SEEN)
    if seen is None or seen[0] != session_id or state.current_session_id() != session_id:
        return
    following = state.get(_FOLLOW) == session_id
    now = live_version(store, session_id)
    # Rerun once the default replay covers the grown session, or when the same change is seen
    # twice (a watch without replays, or a replay that failed): never on half an update.
    if now != seen[1] and (now.settled or state.get(_PENDING) == now):
        if seen[2] is not None and state.current_step() == seen[2]:
            state.put(_FOLLOW, session_id)  # the user watched the newest step: keep it in view
        st.rerun(scope="app")
    state.put(_PENDING, now)
    if following and state.current_step() != _last_step(store, session_id):
        st.rerun(scope="app")  # the newest step changed while the page was drawn
    line = agent_line(store, session_id)
    if line is None:
        st.caption("Live: following this session")
        return
    show = {"over": st.error, "near": st.warning}.get(line_level(line.tokens, line.line), st.info)
    show(line_caption(line), icon="🔴")
