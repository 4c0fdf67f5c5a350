"""Configuration page (R-UI-6): which configuration prepares this session best?

Edit the whole configuration as YAML (validated on every change: field path, line and reason;
Chord-style fallbacks as warnings) or its common fields in a form kept in sync with the text;
replay the session with it (saved under a name, with progress); compare two configurations (the
editor's, a preset, or a saved replay) on one chart with a totals table. Nothing touches disk
except the explicit "Replay and save". The replay is ``workbench.services.configuration``, the
comparison ``workbench.services.compare``; the widgets are ``workbench.ui.configuration``.
"""

from __future__ import annotations

import streamlit as st

from workbench.services.compare import compare_choices, compare_pair
from workbench.services.configuration import replay_setup, replay_with
from workbench.ui import configuration as ui
from workbench.ui import state
from workbench.ui.guards import error_boundary, finish_first, progress_bar
from workbench.views.configuration import saved_replay_line

st.title("Configuration")
st.write("Which configuration prepares this session best? Edit the YAML or the common fields, "
         "replay the session with it, and compare two configurations on one chart.")

check = ui.editor()
store, session_id = state.get_store(), state.current_session_id()
st.divider()
if session_id is None:
    st.info("No session yet: import a transcript or open a sample on the Sessions page, then "
            "replay it here with this configuration.", icon="👋")
    st.stop()
setup = replay_setup(store, session_id, check.config)
templates = setup.templates.snapshot
summariser = ui.summariser_choice(setup)

if (name := ui.replay_name(check)) is not None:
    # A reload or a widget change during the replay would stop the run and lose it: it finishes
    # and is saved first (finish_first), then the page reruns and shows the saved line.
    with progress_bar("replaying…") as bar, \
            error_boundary("replay", stop=False, message="Replay failed: {exc}"), \
            finish_first(bar) as report:
        saved = replay_with(store, session_id, name, config=check.config, templates=templates,
                            summariser=summariser, progress=report)
        state.keep_result("cfg_last", saved, session_id=session_id)
if (last := state.session_result("cfg_last")) is not None:  # this session's replay only
    st.success(saved_replay_line(*last))

choices = compare_choices(store, session_id)
a, b = ui.compare_pickers(choices)
if st.button("Compare", key="cfg_compare"):
    with progress_bar("replaying A…") as report, \
            error_boundary("compare", stop=False, message="Comparison failed: {exc}"):
        compared = compare_pair(store, session_id, a, b, choices=choices, editor=check.config,
                                templates=templates, cache=ui.run_cache(), progress=report)
        state.keep_result("cfg_compared", compared, session_id=session_id)
if (compared := state.session_result("cfg_compared")) is None:  # this session's comparison only
    st.caption("Pick A and B and press Compare.")
    st.stop()
ui.show_comparison(compared)
