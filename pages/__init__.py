"""The workbench's Streamlit pages, one file a page: ``pages/`` at the top of the checkout,
installed as ``workbench.pages`` (``workbench/pages`` links to it)."""
