"""The one place pages reach ``st.session_state``: the current session, replay and step, mirrored in
the URL query (``?session=…&replay=…&step=…``) so a link reopens the same view, and the sidebar that
is the same on every page (UX.md "Layout").

The sidebar is drawn by :func:`render_sidebar` from ``app.py`` before the page runs: the session
picker, then the session's replay picker (a session opened for the first time gets its ``default``
replay there, with a progress bar), the step selector with ◀ ▶ (Shift+Left / Shift+Right), the
jumps to the previous and next compaction (Shift+Up / Shift+Down), and the notices of links whose
parameters named nothing that exists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import streamlit as st

from ..services.imports import ImportReport
from ..storage.store import Store, default_db_path
from ..views import query
from ..views.markup import plain

__all__ = [
    "PAGES_DIR",
    "QUERY_KEYS",
    "app_page",
    "current_replay_id",
    "current_session_id",
    "current_step",
    "follow_timeline_click",
    "forget",
    "get",
    "get_store",
    "import_reports",
    "keep_result",
    "pending_delete",
    "put",
    "render_sidebar",
    "request_session",
    "request_step",
    "session_result",
    "set_import_reports",
    "set_pending_delete",
    "sidebar_compaction_jumps",
    "sidebar_replay_and_step",
    "sidebar_replay_picker",
    "sidebar_session_picker",
    "sidebar_step_selector",
    "switch_to",
]

SESSION_KEY = "wb_session"
REPLAY_KEY = "wb_replay"
_LABELS_KEY = "_wb_picker_labels"
STEP_KEY = "wb_step"
_REQUEST_KEY = "_wb_session_request"
_LOADED_KEY = "_wb_query_loaded"
_REPORTS_KEY = "_wb_import_reports"
_DELETE_KEY = "_wb_pending_delete"
_STEP_REQUEST_KEY = "_wb_step_request"
_STEPS_KEY = "_wb_step_count"
"""The replay's step count the step selector last drew with (its widgets' callbacks clamp to it)."""
_DRAWN_KEY = "_wb_step_drawn"
"""The step the step selector's widgets were last drawn with."""
_MOVED_KEY = "_wb_step_moved"
_STALE_KEY = "_wb_step_stale"
_STEP_WIDGETS = ("_wb_step_slider", "_wb_step_number")
_TIMELINE_KEY = "_wb_timeline_done"
_RESULTS_KEY = "_wb_results"
_ASKED_KEY = "_wb_url_asked"
_NOTICES_KEY = "_wb_url_notices"
#: session_state key -> URL query parameter.
QUERY_KEYS = {SESSION_KEY: "session", REPLAY_KEY: "replay", STEP_KEY: "step"}


@st.cache_resource(show_spinner=False)
def _store_at(path: str) -> Store:
    return Store(path)

# The pages are the package ``workbench.pages`` (in a checkout, a link to the top-level ``pages/``),
# one floor above this one, in a checkout and in a wheel alike.
PAGES_DIR = Path(__file__).resolve().parents[1] / "pages"


def app_page(file: str, **options: Any) -> st.Page:
    """The app's page of ``file`` in ``PAGES_DIR`` (its URL path is the file's stem with dashes)."""
    return st.Page(PAGES_DIR / file, url_path=file.removesuffix(".py").replace("_", "-"), **options)


def switch_to(file: str, **params: str | int) -> NoReturn:
    """Open page ``file`` with these query parameters in the same document (``st.switch_page``):
    the browser keeps Streamlit's front end, where following the page's address loads and starts
    it again as a new document."""
    st.switch_page(app_page(file), query_params={k: str(v) for k, v in params.items()})


def get_store() -> Store:
    """The store of ``$WORKBENCH_HOME`` (one connection per database file per server)."""
    return _store_at(str(default_db_path()))


def _load_query_once() -> None:
    """On the first run of a browser session, take the selection from the URL. What the URL asked
    for is kept until the pickers have checked it (:func:`_asked`); a step that is not a number
    is refused here with a notice."""
    if st.session_state.get(_LOADED_KEY):
        return
    st.session_state[_LOADED_KEY] = True
    asked: dict[str, Any] = {}
    for key, param in QUERY_KEYS.items():
        value: Any = st.query_params.get(param)
        if value is None or key in st.session_state:
            continue
        if key == STEP_KEY and (value := _url_step(value)) is None:
            continue
        st.session_state[key] = asked[param] = value
    st.session_state[_ASKED_KEY] = asked


def _url_step(value: str) -> int | None:
    step = query.parse_index(value)
    if step is None:
        _notice(query.bad_number("step", value, "the first step"))
    return step


def _asked(param: str) -> Any:
    """What the URL asked for ``param`` (once: the first picker run after the URL was read)."""
    return st.session_state.get(_ASKED_KEY, {}).pop(param, None)


def _notice(line: str) -> None:
    """A line about the URL shown above the page until another session or replay is picked."""
    st.session_state.setdefault(_NOTICES_KEY, {"for": None, "lines": []})["lines"].append(line)


def _show_notices() -> None:
    notices = st.session_state.get(_NOTICES_KEY)
    if not notices:
        return
    selection = (st.session_state.get(SESSION_KEY), st.session_state.get(REPLAY_KEY))
    if notices["for"] is None:
        notices["for"] = selection
    if notices["for"] != selection:
        del st.session_state[_NOTICES_KEY]
        return
    for line in notices["lines"]:
        st.warning(line, icon="🔗")


def _mirror_query() -> None:
    for key, param in QUERY_KEYS.items():
        value = st.session_state.get(key)
        if value is None:
            if param in st.query_params:
                del st.query_params[param]
        elif st.query_params.get(param) != str(value):
            st.query_params[param] = str(value)


def get(key: str, default: Any = None) -> Any:
    """A page's own value in the browser session (widget keys included), or ``default``."""
    return st.session_state.get(key, default)


def put(key: str, value: Any) -> None:
    """Keep a page's own value in the browser session (survives reruns and page switches)."""
    st.session_state[key] = value


def forget(*keys: str) -> None:
    """Drop a page's values (e.g. a widget's, so it takes its default again on the next run)."""
    for key in keys:
        st.session_state.pop(key, None)


def current_session_id() -> str | None:
    return st.session_state.get(SESSION_KEY)


def current_replay_id() -> str | None:
    return st.session_state.get(REPLAY_KEY)


def current_step() -> int | None:
    return st.session_state.get(STEP_KEY)


def request_session(session_id: str | None) -> None:
    """Select a session from a page (applied by the picker on the next run; call ``st.rerun()``)."""
    st.session_state[_REQUEST_KEY] = session_id


def request_step(step: int) -> None:
    """Go to ``step`` from a page (applied by the step selector on the next run; call ``st.rerun()``)."""
    st.session_state[_STEP_REQUEST_KEY] = int(step)


def follow_timeline_click(points: Sequence[Mapping[str, Any]], current: int) -> None:
    """Go to the step a timeline chart's selection points at. A selection stays until the next
    click, so each clicked step is acted on once (prev/next keep working after a click)."""
    target = int(points[0]["x"]) if points else None
    if target is None or target == st.session_state.get(_TIMELINE_KEY):
        return
    st.session_state[_TIMELINE_KEY] = target
    if target != current:
        request_step(target)
        st.rerun()


def keep_result(name: str, value: Any, *, session_id: str | None = None) -> None:
    """Keep a page's computed result (a re-run, a comparison) as belonging to ``session_id``
    (default: the session selected now). It is dropped when another session is selected."""
    owner = session_id if session_id is not None else current_session_id()
    st.session_state.setdefault(_RESULTS_KEY, {})[name] = (owner, value)


def session_result(name: str) -> Any:
    """The result ``name`` if it was computed for the selected session, else None."""
    results = st.session_state.get(_RESULTS_KEY, {})
    owner, value = results.get(name, (None, None))
    if name in results and owner != current_session_id():
        del results[name]
        return None
    return value


def _forget_other_sessions(session_id: str | None) -> None:
    """Drop every kept result computed for a session other than ``session_id``."""
    results = st.session_state.get(_RESULTS_KEY, {})
    for name in [n for n, (owner, _) in results.items() if owner != session_id]:
        del results[name]


def set_import_reports(reports: list[ImportReport]) -> None:
    """Keep the outcome of the last import so it survives the rerun that refreshes the list."""
    st.session_state[_REPORTS_KEY] = list(reports)


def import_reports() -> list[ImportReport]:
    return st.session_state.get(_REPORTS_KEY, [])


def set_pending_delete(session_id: str | None) -> None:
    """A delete waiting for confirmation (None: nothing pending)."""
    st.session_state[_DELETE_KEY] = session_id


def pending_delete() -> str | None:
    return st.session_state.get(_DELETE_KEY)


def sidebar_session_picker(store: Store) -> str | None:
    """The session picker; defaults to the most recently imported session."""
    summaries = store.list_sessions()
    titles = {s.id: f"{s.title} · {s.message_count} msgs" for s in summaries}
    if _REQUEST_KEY in st.session_state:
        st.session_state[SESSION_KEY] = st.session_state.pop(_REQUEST_KEY)
    asked = _asked("session")
    if (wanted := st.session_state.get(SESSION_KEY)) not in titles:
        st.session_state[SESSION_KEY] = summaries[0].id if summaries else None
        if wanted is not None and wanted == asked:
            _notice(query.unknown_session(wanted, titles.get(st.session_state[SESSION_KEY]) or None))
    if not summaries:
        st.sidebar.caption("No sessions yet: import one on the Sessions page.")
        return None

    def title(sid: str) -> str:
        return titles.get(sid, sid)

    _resend_if_relabelled(SESSION_KEY, titles)
    return st.sidebar.selectbox("Session", list(titles), key=SESSION_KEY, format_func=title)


def _resend_if_relabelled(key: str, labels: Mapping[str, str]) -> None:
    """The browser keeps a picker's chosen label as its value: when the chosen option's label
    changed (a session grew, a replay was saved again with more steps, e.g. while `workbench
    watch` follows the session), setting the choice again makes Streamlit send the new label."""
    label = labels.get(st.session_state[key])
    if st.session_state.get(_LABELS_KEY, {}).get(key, label) != label:
        st.session_state[key] = st.session_state[key]
    st.session_state[_LABELS_KEY] = {**st.session_state.get(_LABELS_KEY, {}), key: label}


def sidebar_replay_picker(options: Mapping[str, str]) -> str | None:
    """Pick a replay (configuration + template snapshot); ``options`` maps id -> label."""
    asked = _asked("replay")
    if (wanted := st.session_state.get(REPLAY_KEY)) not in options:
        st.session_state[REPLAY_KEY] = next(iter(options), None)
        if wanted is not None and wanted == asked:
            _notice(query.unknown_replay(wanted, str(current_session_id()),
                                         options.get(st.session_state[REPLAY_KEY])))
    if not options:
        return None
    _resend_if_relabelled(REPLAY_KEY, options)
    return st.sidebar.selectbox("Replay", list(options), key=REPLAY_KEY,
                                format_func=lambda rid: options.get(rid, rid))


def _set_step(value: int, n_steps: int | None = None) -> None:
    """Select step ``value`` within the replay's steps: ``n_steps``, or (for a widget's callback)
    the count the step selector last drew with. A callback runs at the start of the next run, and
    a widget the browser still shows from an earlier run (a slider whose maximum grew is a new
    widget) reports through its own callback: counting with that run's steps clamped the step
    one below the new newest step, and a live viewer stopped following the session."""
    count = n_steps if n_steps is not None else st.session_state.get(_STEPS_KEY, 1)
    step = min(max(int(value), 0), count - 1)
    st.session_state[STEP_KEY] = step
    st.session_state["_wb_step_slider"] = step
    st.session_state["_wb_step_number"] = step


def _widget_moved(key: str) -> None:
    """The slider's or the number box's callback: the user's move, unless the browser is
    reporting what the widget showed before the app changed it. It reports a widget it still
    shows from an earlier run (one whose maximum grew is a new widget) with the value it was
    drawn with, and a widget the app has just set (the number box after a slider move, or both
    after the live view selected the newest step) with its value before: taking either moved a
    viewer off the step the app had just selected, and a live viewer stopped following."""
    value = st.session_state[key]
    if value == st.session_state.get(_DRAWN_KEY) or \
            st.session_state.get(_STALE_KEY, {}).get(key) == value:
        return
    st.session_state[_MOVED_KEY] = key
    _set_step(value)


def _drawn(step: int) -> None:
    """Record that the selector's widgets show ``step``; each widget the user did not move in
    this run may report the step they showed before once (see :func:`_widget_moved`)."""
    before, moved = st.session_state.get(_DRAWN_KEY), st.session_state.pop(_MOVED_KEY, None)
    st.session_state[_STALE_KEY] = ({k: before for k in _STEP_WIDGETS if k != moved}
                                    if before is not None and before != step else {})
    st.session_state[_DRAWN_KEY] = step


def sidebar_step_selector(n_steps: int) -> int | None:
    """Slider + previous/next buttons + number box, all bound to one step (0-based)."""
    if (asked := _asked("step")) is not None and asked >= n_steps:
        _notice(query.unknown_step(asked, n_steps, max(n_steps - 1, 0)))
    if n_steps <= 0:
        st.session_state[STEP_KEY] = None
        return None
    if _STEP_REQUEST_KEY in st.session_state:  # a page asked for a step (e.g. a timeline click)
        st.session_state[STEP_KEY] = st.session_state.pop(_STEP_REQUEST_KEY)
    st.session_state[_STEPS_KEY] = n_steps  # what the widgets' callbacks count with
    _set_step(st.session_state.get(STEP_KEY) or 0, n_steps)
    _drawn(st.session_state[STEP_KEY])
    box = st.sidebar.container()
    if n_steps > 1:
        box.slider("Step", 0, n_steps - 1, key="_wb_step_slider",
                   on_change=_widget_moved, args=("_wb_step_slider",))
    # The number box gets its own row and the buttons the full width: the shortcut hints that
    # Streamlit prints on the buttons do not fit three narrow columns.
    box.number_input("Step number", 0, n_steps - 1, key="_wb_step_number",
                     label_visibility="collapsed",
                     on_change=_widget_moved, args=("_wb_step_number",))
    prev, nxt = box.columns(2)
    prev.button("◀", key="_wb_step_prev", help="previous step (Shift+Left)", shortcut="Shift+Left",
                width="stretch", on_click=lambda: _set_step(st.session_state[STEP_KEY] - 1))
    nxt.button("▶", key="_wb_step_next", help="next step (Shift+Right)", shortcut="Shift+Right",
               width="stretch", on_click=lambda: _set_step(st.session_state[STEP_KEY] + 1))
    return st.session_state[STEP_KEY]


def render_sidebar() -> None:
    """The sidebar every page shares."""
    _load_query_once()
    with st.sidebar:
        st.markdown("**Context Workbench**")
    store = get_store()
    session_id = sidebar_session_picker(store)
    _forget_other_sessions(session_id)
    sidebar_replay_and_step(store, session_id)
    _mirror_query()
    _show_notices()


def sidebar_replay_and_step(store: Store, session_id: str | None) -> None:
    """Replay picker and step selector. A session opened for the first time gets its
    ``default`` replay here, with a progress bar (see ``workbench.services.replay``)."""
    from ..services.replay import ensure_default_replay, open_saved, replay_choices, replay_id_named

    if session_id is None:
        st.session_state[REPLAY_KEY] = None
        st.session_state[STEP_KEY] = None
        return
    options = replay_choices(store, session_id)
    if not options:
        bar = st.sidebar.progress(0.0, text="Replaying this session for the first time…")

        def show(fraction: float, label: str) -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=label)
        try:
            ensure_default_replay(store, session_id, progress=show)
        except Exception as exc:  # noqa: BLE001 - the page still shows; the error stays visible
            st.sidebar.error(f"Replay failed: {plain(exc)}")
        bar.empty()
        options = replay_choices(store, session_id)
    wanted = st.session_state.get(REPLAY_KEY)
    if isinstance(wanted, str) and wanted not in options:  # a link may name the replay
        named = replay_id_named(store, session_id, wanted)
        if named in options:
            st.session_state[REPLAY_KEY] = named
    replay_id = sidebar_replay_picker(options)
    replay = open_saved(store, replay_id) if replay_id else None
    sidebar_step_selector(len(replay) if replay else 0)
    if replay is not None:
        sidebar_compaction_jumps(tuple(s.step_index for s in replay.steps if s.compaction_applied))


def _jump(targets: tuple[int, ...], direction: int) -> None:
    current = st.session_state.get(STEP_KEY) or 0
    ahead = [t for t in targets if (t > current if direction > 0 else t < current)]
    if ahead:
        _set_step(ahead[0] if direction > 0 else ahead[-1])


def sidebar_compaction_jumps(compaction_steps: tuple[int, ...]) -> None:
    """Jump to the previous / next step where compaction applied (Shift+Up / Shift+Down): the
    question most people open a replay with is "where did it compact, and why?"."""
    if not compaction_steps:
        return
    shown = ", ".join(map(str, compaction_steps[:6])) + (" …" if len(compaction_steps) > 6 else "")
    st.sidebar.caption(f"Compaction at step {shown}: jump with ▲ ▼")
    back, ahead = st.sidebar.columns(2)
    back.button("▲", key="_wb_cmp_prev", help="previous compaction (Shift+Up)",
                shortcut="Shift+Up", width="stretch", on_click=_jump,
                args=(compaction_steps, -1))
    ahead.button("▼", key="_wb_cmp_next", help="next compaction (Shift+Down)",
                 shortcut="Shift+Down", width="stretch", on_click=_jump,
                 args=(compaction_steps, 1))
