"""The Sessions page's parts (R-UI-1, R-SES-5): the stored sessions (or the first-run empty
state), each import's report, the three ways to import and the confirmed delete.

Imports are ``workbench.services.imports``; the tables and lines come from
``workbench.views.sessions``; the import reports and the pending delete move through
``workbench.ui.state``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from workbench.analysis.words import counted
from workbench.importers import formats
from workbench.services import imports
from workbench.storage.store import SessionRow, Store
from workbench.ui import state
from workbench.ui.guards import progress_bar
from workbench.ui.tables import dashed_table, draw
from workbench.views import sessions as view
from workbench.views.markup import one_line, plain

__all__ = ["import_forms", "run_imports", "show_deletion", "show_reports", "show_sessions"]


def run_imports(store: Store, paths: list[str], lenient: bool, fmt: str | None,
                names: dict[str, str] | None = None) -> None:
    """Import ``paths`` under a progress bar, keep the reports (a temporary upload named by the
    file the user chose, ``names``), select the first imported session and run the page again."""
    files = imports.session_paths(paths)
    shown = names or {}
    with progress_bar("Starting import…") as report:
        reports = imports.import_paths(
            store, files, lenient=lenient, format=fmt,
            progress=lambda i, n, fraction, label: report(
                (i + fraction) / n, f"{shown.get(files[i], Path(files[i]).name)}: {label}"))
    state.set_import_reports([imports.shown_as(r, shown) for r in reports])
    if (session_id := imports.first_imported(reports)) is not None:
        state.request_session(session_id)
    st.rerun()


def show_sessions(store: Store, rows: Sequence[SessionRow], samples: list[Path]) -> None:
    """The table of stored sessions, or for an empty store the one next step of a new user."""
    if not rows:
        st.info("No sessions yet. Import a transcript or the bundled samples.", icon="👋")
        st.markdown("New here? Open the bundled samples (a bug fix, a long refactor that compacts, an "
                    "interrupted run), then go to **Step-through** in the sidebar.")
        if st.button("Open the bundled samples", key="wb_empty_samples", type="primary",
                     disabled=not samples):
            run_imports(store, [str(p) for p in samples], False, None)
        return
    # A long first prompt as title pushed every other column off the table's right edge.
    dashed_table(view.sessions_frame(rows), key="wb_sessions_table",
                 config={"Tokens (est.)": st.column_config.NumberColumn(format="localized"),
                         "Title": st.column_config.TextColumn(width="medium")})
    for row in rows:
        if row.unplaced_count:
            with st.expander(f"“{one_line(row.title)}”: {counted(row.unplaced_count, 'unplaced line')}"):
                draw.dataframe(view.unplaced_frame(store.unplaced(row.id)), hide_index=True)
    st.caption("Pick a session in the sidebar, then open **Step-through** (one preparation, stage "
               "by stage), **Compaction** or **Usage**.")


def show_reports() -> None:
    """What the last imports did: one line each, skipped lines as a table, errors with the
    traceback in an expander."""
    for report in state.import_reports():
        if report.error is not None:
            st.error(f"Import failed — {plain(report.error.message)}")
            with st.expander("Traceback (for developers)"):
                st.code(report.error.traceback, language=None)
            continue
        outcome = report.outcome
        if outcome is None:  # a report holds an outcome or an error
            continue
        st.success(view.import_line(outcome))
        if outcome.unplaced:
            st.warning(f"{counted(len(outcome.unplaced), 'line')} of {plain(report.path)} could not be placed in the "
                       "conversation:")
            draw.dataframe(view.unplaced_frame(outcome.unplaced), hide_index=True)
        if outcome.skipped:
            st.warning(f"{counted(len(outcome.skipped), 'line')} of {plain(report.path)} "
                       f"{'was' if len(outcome.skipped) == 1 else 'were'} skipped:")
            draw.dataframe(view.skipped_frame(outcome), hide_index=True)


def import_forms(store: Store, samples: list[Path]) -> None:
    """Upload a file, import paths or the bundled samples, with the lenient and format options."""
    st.subheader("Import")
    # keyed and tracked, so the tab the user chose stays open across the rerun an import makes
    upload_tab, path_tab, samples_tab = st.tabs(["Upload a file", "From a path", "Bundled samples"],
                                                key="wb_import_tab", on_change="rerun")
    options = st.columns(2)
    lenient = options[0].checkbox("Lenient: skip bad lines and list them", key="wb_import_lenient")
    fmt = view.chosen_format(options[1].selectbox("Format", [view.AUTO_FORMAT, *formats()],
                                                  key="wb_import_format"))
    with upload_tab:
        upload = st.file_uploader("Transcript (.jsonl, .json, .traj; also .gz)", key="wb_upload")
        if st.button("Import upload", key="wb_import_upload", disabled=upload is None) and upload:
            with imports.uploaded(upload.name, upload.getvalue()) as copy:
                run_imports(store, [str(copy)], lenient, fmt, names={str(copy): upload.name})
    with path_tab:
        text = st.text_area("Paths (files or folders), one per line", key="wb_import_path", height=80,
                            placeholder="~/.claude/projects/my-project/0a1b2c.jsonl")
        paths = view.paths_from_text(text)
        if st.button("Import path", key="wb_import_path_button", disabled=not paths):
            run_imports(store, paths, lenient, fmt)
    with samples_tab:
        st.caption(" · ".join(plain(p.name) for p in samples) or "No bundled samples found.")
        if st.button("Import the bundled samples", key="wb_import_samples", disabled=not samples):
            run_imports(store, [str(p) for p in samples], lenient, fmt)


def show_deletion(store: Store, rows: Sequence[SessionRow]) -> None:
    """Pick a session to delete; it is deleted only after a second, confirming click."""
    st.subheader("Delete")
    titles = {s.id: s.title for s in rows}
    victim = st.selectbox("Session to delete", list(titles), format_func=lambda sid: titles[sid],
                          key="wb_delete_choice")
    if st.button("Delete…", key="wb_delete"):
        state.set_pending_delete(victim)
    pending = state.pending_delete()
    if pending not in titles:
        return
    st.warning(f"Delete “{one_line(titles[pending])}” and all its messages from the store? This cannot be undone.")
    yes, no = st.columns(2)
    if yes.button("Yes, delete", key="wb_delete_confirm", type="primary"):
        store.delete_session(pending)
        state.set_pending_delete(None)
        st.rerun()
    if no.button("Cancel", key="wb_delete_cancel"):
        state.set_pending_delete(None)
        st.rerun()
