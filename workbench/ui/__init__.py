"""Streamlit parts of the pages: small render functions a page composes (one module per page).

Like ``workbench.ui.state`` and ``workbench.ui.guards`` these import Streamlit; the words, tables
and figures they show come from ``workbench.views`` and the work from ``workbench.services``.
Views and services never import this package (import-linter contracts in pyproject.toml).
"""
