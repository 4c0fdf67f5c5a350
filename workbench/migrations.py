"""Old import path of :mod:`workbench.storage.migrations` (kept importable)."""

from .storage.migrations import *
from .storage.migrations import __all__  # noqa: F401
