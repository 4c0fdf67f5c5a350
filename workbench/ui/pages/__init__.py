"""The workbench's Streamlit pages, one file a page; installed as ``workbench.ui.pages``."""
