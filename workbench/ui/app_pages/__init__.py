"""The workbench's Streamlit pages, one file a page; installed as ``workbench.ui.app_pages``."""
