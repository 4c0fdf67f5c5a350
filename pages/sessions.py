"""Sessions page (R-UI-1, R-SES-5): which recorded sessions are stored, and how to add (or
remove) one.

Imports are ``workbench.services.imports``; the tables and lines ``workbench.views.sessions``;
the widgets are ``workbench.ui.sessions``.
"""

from __future__ import annotations

import streamlit as st

from workbench.services.imports import bundled_samples
from workbench.services.sessions import session_rows
from workbench.ui import sessions as ui
from workbench.ui import state

st.title("Sessions")
st.caption("Which recorded agent sessions are in the store? Import a transcript, open a sample, "
           "or delete one.")
store = state.get_store()
rows = session_rows(store)
samples = bundled_samples()

ui.show_sessions(store, rows, samples)
ui.show_reports()
ui.import_forms(store, samples)
if rows:
    ui.show_deletion(store, rows)
