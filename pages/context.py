"""Context page: what static context does a context.yaml produce? (R-BUILD).

Thin page: reads the widgets, calls ``workbench.services.context``, renders the tables of
``workbench.views.context`` (messages or problems).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from workbench.services.context import (
    ContextView,
    bundled_examples,
    context_view,
    context_view_from_path,
)
from workbench.ui.guards import error_boundary
from workbench.ui.tables import draw
from workbench.views.context import messages_frame, problems_frame
from workbench.views.markup import code_span, plain

st.title("Context")
st.write("What static context does a `context.yaml` produce? Load one to see the system, memory and "
         "before-current-input messages it builds, with their sizes and local token estimates.")

examples = bundled_examples()
mode = st.radio("Load from", ["Bundled example", "Upload", "Path"], horizontal=True, key="ctx_mode")
addendum = st.text_input("System addendum (appended to the system message by the runner)",
                         key="ctx_addendum")


def _load() -> ContextView | None:
    if mode == "Bundled example":
        # no example shipped: no option, and no choice
        name = st.selectbox("Example", list(examples), index=0 if examples else None, key="ctx_example")
        return None if name is None else context_view_from_path(examples[name], system_addendum=addendum)
    if mode == "Upload":
        upload = st.file_uploader("context.yaml", type=["yaml", "yml"], key="ctx_upload")
        if upload is None:
            return None
        st.caption(f"Relative template paths in an uploaded file resolve against `{Path.cwd()}`; "
                   "give a path instead to resolve them next to the file.")
        text = upload.getvalue().decode("utf-8", errors="replace")
        return context_view(text, base_dir=Path.cwd(), source=upload.name, system_addendum=addendum)
    path = st.text_input("Path of a context.yaml", key="ctx_path").strip()
    return context_view_from_path(path, system_addendum=addendum) if path else None


with error_boundary("build the context",
                    message="Unexpected error while building the context: {exc}"):
    view = _load()

if view is None:
    st.info("Pick a bundled example, upload a context.yaml, or type the path of one.")
    st.stop()

st.caption(f"Source: {code_span(view.source)}")
if not view.ok:
    lines = [f"- {code_span(p.field or '(file)')}" + (f" (line {p.line})" if p.line else "") + f": {plain(p.problem)}"
             for p in view.problems]
    st.error(f"{len(view.problems)} problem(s) in {code_span(view.source)}:\n" + "\n".join(lines))
    draw.table(problems_frame(view), hide_index=True)
    st.stop()

frame = messages_frame(view)
draw.table(frame, hide_index=True)  # three rows at most: a static table shows at once
st.caption(f"{int(frame.loc[:, 'characters'].sum()):,} characters, "
           f"{int(frame.loc[:, 'tokens (local estimate)'].sum()):,} tokens (local estimate, per message "
           "including framing). An empty optional section produces no message.")
for measured in view.messages:
    message = measured.message
    st.subheader(f"{message.position} · {message.role}"
                 + (" (context sender)" if message.sender == "context" else ""))
    st.caption(f"{measured.chars:,} characters · {measured.tokens:,} tokens (local estimate)")
    st.code(message.text, language=None, wrap_lines=True)
