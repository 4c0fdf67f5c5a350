"""Old import path of :mod:`workbench.storage.sink` (kept importable)."""

from .storage.sink import *  # noqa: F403
from .storage.sink import __all__  # noqa: F401
