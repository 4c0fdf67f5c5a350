"""The process ``workbench run`` starts: it imports what every first page run needs (pandas,
plotly, the app's modules and through them the engine and the store) and then hands over to
Streamlit's own command line, which serves the app in this process.

Streamlit runs each page in the server's process, so a module imported here is not imported again
when the first visitor arrives; without this, the first page load paid about a second of CPU for
pandas alone.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["PRELOADED", "main", "preload"]

#: Imported before the server starts (the first run of any page imports all of them).
PRELOADED = ("pandas", "plotly.graph_objects", "workbench.ui.app", "workbench.ui.sessions",
             "workbench.ui.messages", "workbench.ui.step_through", "workbench.ui.usage")


def preload() -> None:
    """Import :data:`PRELOADED`."""
    for name in PRELOADED:
        importlib.import_module(name)


def main() -> None:
    """``python -m workbench.ui.serve run APP [OPTIONS]``: Streamlit's command line, after
    :func:`preload`."""
    preload()
    from streamlit.web.cli import main as streamlit_main

    sys.argv = ["streamlit", *sys.argv[1:]]
    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
