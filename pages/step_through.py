"""Step-through page (R-UI-2, UX.md "the heart"): one preparation, stage by stage, with every
decision and the final request as it would be sent."""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from workbench import state
from workbench.page_guards import error_boundary
from workbench.records import recorded_marks
from workbench.replay_service import open_saved, session_messages
from workbench.services.truth import recorded_compactions, truth_steps
from workbench.views.colors import MARK_COLOURS, STATUS_COLOURS
from workbench.views.display import display_frame
from workbench.views.recorded import budget_label
from workbench.views.step_through import (
    STAGE_EXPLANATIONS,
    RequestMessage,
    decision_table,
    focus_messages,
    message_overview,
    page_of,
    plain,
    request_messages,
    stage_table,
    step_header,
    step_timeline_figure,
)

st.title("Step-through")
st.caption("What did the preparation of this step decide, and why? Pick a session, a replay and a "
           "step in the sidebar (◀ ▶ or Shift+Left / Shift+Right move one step).")

store = state.get_store()
session_id, replay_id, step = state.current_session_id(), state.current_replay_id(), state.current_step()
if session_id is None:
    st.info("No session yet: import a transcript or open a sample on the Sessions page.", icon="👋")
    st.stop()
if replay_id is None or step is None:
    st.info("This session has no replay yet: it is made when the session is opened (see the "
            "sidebar), or run `workbench replay SESSION_ID --name default`.")
    st.stop()

LONG = 3000
FEW = 12
PAGE_SIZE = 10
LAST = 5
BADGE = {"ready": "green", "failed": "red", "cancelled": "gray"}
PRESSURE = {"green": "green", "orange": "orange", "red": "red"}

with error_boundary(f"open step {step} of this replay"):
    replay = open_saved(store, replay_id)
    prep = replay.preparation(step)
    request = replay.request(prep.final_request_ref) if prep.final_request_ref else None
    originals = session_messages(store, session_id)


def timeline_spec(replay, session_id: str) -> dict:
    """The replay's step timeline, built once per saved replay (kept in the store's cache): its
    2,000 bars are the same at every step, so only the current-step line changes from one step
    to the next. It carries the trigger value, the pressure line and the agent's recorded
    compactions."""
    def build() -> dict:
        steps = truth_steps(replay)
        marks = recorded_marks(recorded_compactions(store, session_id, replay), steps)
        return step_timeline_figure(steps, recorded=marks).to_plotly_json()
    return store.replays.cached(replay.id, "step timeline", build)


def timeline_at(spec: dict, current: int) -> dict:
    """The cached timeline with the current step drawn as a line (a new layout, shared data)."""
    line = {"type": "line", "xref": "x", "yref": "paper", "x0": current, "x1": current,
            "y0": 0, "y1": 1, "line": {"color": STATUS_COLOURS["candidate"], "width": 2}}
    shapes = [*spec["layout"].get("shapes", ()), line]
    return {"data": spec["data"], "layout": {**spec["layout"], "shapes": shapes}}


# The timeline of a 2,000-step replay is 2,000 bars: drawing it again on every step took most of
# the seconds "next step" needed in the browser, so it is drawn only while its expander is open
# (the open state is kept across steps).
timeline = st.expander("Step timeline: every step's final request (click a bar to open that "
                       "step)", key="st_timeline_open", on_change="rerun")
clicked = timeline.plotly_chart(
    timeline_at(timeline_spec(replay, session_id), step),
    key="st_timeline", on_select="rerun", selection_mode="points") if timeline.open else None
state.follow_timeline_click(clicked.selection.points if clicked else [], step)
head = step_header(prep)
st.subheader(f"Step {head.step_index} of {len(replay) - 1} · response message "
             f"#{prep.response_message_index}")
cols = st.columns([1, 3, 2, 3, 2])
cols[0].badge(head.phase, color=BADGE[head.phase])
final = head.final_input_tokens if head.whole_request_tokens is None else head.whole_request_tokens
cols[1].markdown(f"**Final input{' (whole request)' if head.whole_request_tokens else ''}** "
                 f":{PRESSURE[head.pressure]}[{final:,}] of {head.input_budget:,} "
                 f"({head.percent_of_budget}%)")
reminder = f"{prep.reminder_line:,}" if prep.reminder_line is not None else "off"
cols[2].markdown(f"Pressure line {prep.pressure_line:,} · reminder {reminder}")
cols[3].markdown(f"**Trigger compared** {head.trigger_label}")
cols[4].markdown(f"**Provider usage of this response** {head.provider_label}"
                 + (" (frozen estimate)" if head.provider_label.startswith("≈") else ""))
thresholds = replay.thresholds
budget = (budget_label(thresholds.input_budget, thresholds.budget_source, thresholds.budget_detail)
          if thresholds else budget_label(head.input_budget, None, ""))
st.caption(" · ".join(filter(None, [head.whole_request_words, f"Budget {budget}"])))
if head.error:
    st.error(f"This preparation is **{head.phase}** in stage `{head.error_stage or '—'}`: "
             f"{head.error}")

st.markdown("#### Stages")
st.caption("Before → after are raw local estimates of the replayed messages at each stage "
           "boundary (no calibration, no unrecorded overhead), not costs that add up; the header's "
           "trigger value and whole request are on the whole-request basis the lines are "
           "compared on.")
table = display_frame(stage_table(prep))
st.dataframe(
    table.style.map(lambda v: f"color: {STATUS_COLOURS.get(v, 'inherit')}", subset=["status"]),
    hide_index=True, key="st_stage_table",
    column_config={"before_tokens": st.column_config.NumberColumn("before", format="localized"),
                   "after_tokens": st.column_config.NumberColumn("after", format="localized"),
                   "change": st.column_config.NumberColumn("change", format="localized"),
                   "decision_kinds": "decision kinds"})



def message_url(index) -> str | None:
    """A link to one recorded message on the Messages page (a decision links to its message)."""
    if pd.isna(index):
        return None
    return f"messages?{urlencode({'session': session_id, 'message': int(index)})}"


def message_link(index) -> str:
    url = message_url(index)
    return f" · [message #{int(index)}]({url})" if url else ""


st.markdown("#### Why")
for stage in prep.stages:
    label = f"{stage.name} — {stage.status} · {len(stage.decisions)} decision(s)"
    with st.expander(label, expanded=stage.status in ("applied", "rejected", "candidate")):
        st.caption(STAGE_EXPLANATIONS[stage.name])
        if stage.note:
            st.text(stage.note)
        if 0 < len(stage.decisions) <= FEW:
            rows = decision_table(prep, stage=stage.name)
            st.markdown("\n".join(f"- **{plain(r.kind)}**: {plain(r.what)} — "
                                   f"{plain(r.reason)}{message_link(r.message)}"
                                   for r in rows.itertuples()))
        elif stage.decisions:
            rows = decision_table(prep, stage=stage.name)
            rows["open"] = [message_url(m) for m in rows["message"]]
            st.dataframe(rows, hide_index=True, key=f"st_decisions_{stage.name}",
                         column_config={"open": st.column_config.LinkColumn(
                             "message", display_text="open message", help="on the Messages page")})

st.markdown("#### Final request")
if request is None:
    st.info("No final request: this step did not become ready.")
    st.stop()
shown = request_messages(request, originals)
st.caption(f"{len(shown)} messages · tools: {', '.join(prep.final_tools) or 'none'} · dropped: "
           f"{', '.join(request.dropped) or 'nothing'}")
st.dataframe(message_overview(shown), hide_index=True, key="st_request_overview", height=240,
             column_config={"characters": st.column_config.NumberColumn(format="localized"),
                            "original": st.column_config.CheckboxColumn("original kept"),
                            "start": st.column_config.TextColumn("start of the text")})
controls = st.columns([3, 2, 2])
mode = controls[0].radio("Messages in full", ["This step", "Page by page"], horizontal=True,
                         key="st_message_mode",
                         help="This step: the checkpoint, the messages this step's decisions "
                              f"changed and the last {LAST}. Page by page: every message, "
                              f"{PAGE_SIZE} per page.")
only_changed = controls[1].toggle("Only marked messages", key="st_only_changed",
                                  disabled=mode != "Page by page")
full = controls[2].toggle("Show full texts", key="st_full_texts",
                          help=f"Texts over {LONG:,} characters are cut unless this is on.")
css = "\n".join(f'[class*="st-key-wbmsg-"][class*="-{k}"] {{border-left: 5px solid {c}; '
                f'padding-left: 0.6rem;}}' for k, c in MARK_COLOURS.items())
st.html(f"<style>{css}</style>")
if mode == "Page by page":
    pool = [m for m in shown if m.marks or not only_changed]
    pages = max(1, -(-len(pool) // PAGE_SIZE))
    # One page box per step and filter: the newest page opens first, as the end of a request is
    # what the model answers.
    page = st.number_input(f"Page (of {pages}, {PAGE_SIZE} messages each)", 1, pages, pages,
                           key=f"st_message_page_{step}_{only_changed}")
    visible = page_of(pool, page, PAGE_SIZE)
else:
    visible, left_out = focus_messages(prep, shown, last=LAST, cap=PAGE_SIZE)
    if len(visible) < len(shown):
        st.caption(f"Showing {len(visible)} of {len(shown)} messages: the checkpoint, what this "
                   f"step changed and the last {LAST}"
                   + (f" ({left_out} more changed ones page by page)" if left_out else "")
                   + ". Every message is in the table above and under “Page by page”.")


def cut(text: str) -> str:
    if full or len(text) <= LONG:
        return text
    return text[:LONG] + f"\n… [{len(text) - LONG:,} more characters: switch on “Show full texts”]"


def show_message(message: RequestMessage) -> None:
    """One message as text in a bordered box (left border coloured by its marks); the original
    is read only when its expander is opened, so closed ones cost nothing to send."""
    key = f"wbmsg-{message.position}" + "".join(f"-{m}" for m in message.marks)
    with st.container(border=True, key=key):
        marks = " ".join(f":{'violet' if m == 'summarised' else 'orange'}-badge[{m}]"
                         for m in message.marks)
        st.markdown(f"**{message.position} · {message.role}** · {plain(message.label)} {marks} · "
                    f"{message.chars:,} characters")
        st.code(cut(message.text), language=None, wrap_lines=True)
        if message.original_text is not None:
            box = st.expander(f"Original ({len(message.original_text):,} characters)",
                              key=f"st_original_{step}_{message.position}", on_change="rerun")
            if box.open:
                box.code(cut(message.original_text), language=None, wrap_lines=True)


for message in visible:
    show_message(message)
