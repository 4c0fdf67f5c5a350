"""Iris: an LLM agent's context engine (static context, dynamic snapshots, reduction, compaction,
prepared-request records). Pure Python; never imports Streamlit."""

__version__ = "0.1.0"
