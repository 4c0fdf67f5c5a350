"""Old import path of :mod:`workbench.storage.store` (kept importable)."""

from .storage.store import *
from .storage.store import __all__  # noqa: F401
