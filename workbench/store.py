"""Old import path of :mod:`workbench.storage.store` (kept importable)."""

from .storage.store import *  # noqa: F403
from .storage.store import __all__  # noqa: F401
