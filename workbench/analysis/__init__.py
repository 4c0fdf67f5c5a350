"""Figures and summaries derived from a replay: the one basis of each figure, fidelity, the
saved-replay reader, redaction and session counts. No store, no Streamlit."""
