"""Importers: every supported transcript format becomes one :class:`iris.session.Session`."""
