"""Context Workbench: storage, importers, views, CLI and notebook API on top of the Iris engine."""
