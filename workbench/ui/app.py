"""Streamlit entry point: builds the navigation over the page files of ``workbench.pages`` and the
shared sidebar, nothing else.

Pages are listed in a fixed order and included only when their file exists. Run with
``workbench run`` (or ``make run``).

The pages are ``pages/`` at the top of the checkout; ``workbench/pages`` links to it, so a wheel
installs them as ``workbench/pages``. No ``pages/`` folder may sit beside this file: Streamlit takes
an entry script with one for an old-style multipage app until the script has called
``st.navigation`` once in the process (``AppTest`` forgets that before every run), and then runs a
page file on its own, without this script: no sidebar, and the session picker's choice dropped as a
widget that was not drawn.
"""

from __future__ import annotations

import streamlit as st
from iris.errors import IrisError

from workbench.ui.live import follow_live, live_mark
from workbench.ui.state import PAGES_DIR, app_page, current_session_id, get_store, render_sidebar
from workbench.views.markup import plain

__all__ = ["PAGES", "PAGES_DIR", "run_app"]

PAGES = (
    ("sessions.py", "Sessions"), ("messages.py", "Messages"), ("step_through.py", "Step-through"),
    ("compaction.py", "Compaction"), ("reduction.py", "Reduction"), ("usage.py", "Usage"),
    ("templates.py", "Templates"), ("configuration.py", "Configuration"), ("failures.py", "Failures"),
    ("context.py", "Context"), ("corpus.py", "Corpus"),
)


def run_app() -> None:
    """The navigation, the shared sidebar, then the selected page."""
    st.set_page_config(page_title="Context Workbench", layout="wide")
    navigation = st.navigation([
        app_page(name, title=title, default=(i == 0))
        for i, (name, title) in enumerate(p for p in PAGES if (PAGES_DIR / p[0]).is_file())
    ])
    try:
        shown = live_mark(get_store(), current_session_id())  # before the sidebar reads the store
        render_sidebar()
        follow_live(get_store(), current_session_id(), shown)  # reruns while `workbench watch` runs
    except IrisError as exc:  # e.g. a damaged store: say which file, without a traceback
        st.error(plain(exc))
        st.stop()
    navigation.run()


if __name__ == "__main__":  # Streamlit runs the entry script as ``__main__``; tests import it
    run_app()
