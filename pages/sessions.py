"""Sessions page: which recorded sessions are stored, and how to add (or remove) one."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from workbench import state
from workbench.importers import formats
from workbench.services import imports
from workbench.views import sessions as view

st.title("Sessions")
st.caption("Which recorded agent sessions are in the store? Import a transcript, open a sample, "
           "or delete one.")
store = state.get_store()


def run_imports(paths: list[str], lenient: bool, fmt: str | None) -> None:
    bar = st.progress(0.0, text="Starting import…")

    def progress(i: int, n: int, fraction: float, label: str) -> None:
        bar.progress(min(1.0, (i + fraction) / n), text=f"{Path(paths[i]).name}: {label}")

    reports = imports.import_paths(store, paths, lenient=lenient, format=fmt, progress=progress)
    bar.empty()
    state.set_import_reports(reports)
    if any(r.outcome for r in reports):
        state.request_session(next(r.outcome.session_id for r in reports if r.outcome))
    st.rerun()


def show_reports() -> None:
    for report in state.import_reports():
        if report.error is not None:
            st.error(f"Import failed — {report.error.message}")
            with st.expander("Traceback (for developers)"):
                st.code(report.error.traceback, language=None)
            continue
        outcome = report.outcome
        if outcome is None:  # a report holds an outcome or an error
            continue
        verb = "Imported" if outcome.created else "Already stored (same content)"
        st.success(f"{verb}: {outcome.title or outcome.session_id} — {outcome.format}, "
                   f"{outcome.message_count} messages")
        if outcome.skipped:
            st.warning(f"{len(outcome.skipped)} line(s) of {report.path} were skipped:")
            st.dataframe(view.skipped_frame(outcome), hide_index=True)


summaries = store.list_sessions()
samples = imports.bundled_samples()
if not summaries:
    st.info("No sessions yet. Import a transcript or the bundled samples.", icon="👋")
    # A new user's one next step: three realistic sessions, one of which compacts.
    st.markdown("New here? Open the bundled samples (a bug fix, a long refactor that compacts, an "
                "interrupted run), then go to **Step-through** in the sidebar.")
    if st.button("Open the bundled samples", key="wb_empty_samples", type="primary",
                 disabled=not samples):
        run_imports([str(p) for p in samples], False, None)
else:
    st.dataframe(view.sessions_frame(summaries), hide_index=True, key="wb_sessions_table",
                 column_config={"Tokens (est.)": st.column_config.NumberColumn(format="localized")})
    st.caption("Pick a session in the sidebar, then open **Step-through** (one preparation, stage "
               "by stage), **Compaction** or **Usage**.")

show_reports()
st.subheader("Import")
upload_tab, path_tab, samples_tab = st.tabs(["Upload a file", "From a path", "Bundled samples"])
options = st.columns(2)
lenient = options[0].checkbox("Lenient: skip bad lines and list them", key="wb_import_lenient")
fmt = options[1].selectbox("Format", ["detect automatically", *formats()], key="wb_import_format")
fmt = None if fmt == "detect automatically" else fmt
with upload_tab:
    upload = st.file_uploader("Transcript (.jsonl, .json, .traj; also .gz)", key="wb_upload")
    if st.button("Import upload", key="wb_import_upload", disabled=upload is None) and upload:
        target = Path(tempfile.mkdtemp(prefix="workbench-upload-")) / imports.safe_upload_name(upload.name)
        target.write_bytes(upload.getvalue())
        run_imports([str(target)], lenient, fmt)
with path_tab:
    text = st.text_area("Paths (files or folders), one per line", key="wb_import_path", height=80,
                        placeholder="~/.claude/projects/my-project/0a1b2c.jsonl")
    paths = [str(Path(p.strip()).expanduser()) for p in text.splitlines() if p.strip()]
    if st.button("Import path", key="wb_import_path_button", disabled=not paths):
        run_imports(paths, lenient, fmt)
with samples_tab:
    st.caption(" · ".join(p.name for p in samples) or "No bundled samples found.")
    if st.button("Import the bundled samples", key="wb_import_samples", disabled=not samples):
        run_imports([str(p) for p in samples], lenient, fmt)

if summaries:
    st.subheader("Delete")
    titles = {s.id: s.title for s in summaries}
    victim = st.selectbox("Session to delete", list(titles), format_func=lambda sid: titles[sid],
                          key="wb_delete_choice")
    if st.button("Delete…", key="wb_delete"):
        state.set_pending_delete(victim)
    pending = state.pending_delete()
    if pending in titles:
        st.warning(f"Delete “{titles[pending]}” and all its messages from the store? This cannot be undone.")
        yes, no = st.columns(2)
        if yes.button("Yes, delete", key="wb_delete_confirm", type="primary"):
            store.delete_session(pending)
            state.set_pending_delete(None)
            st.rerun()
        if no.button("Cancel", key="wb_delete_cancel"):
            state.set_pending_delete(None)
            st.rerun()
