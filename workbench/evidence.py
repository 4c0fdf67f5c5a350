"""Old import path of :mod:`workbench.storage.replays` (kept importable)."""

from .storage.replays import *  # noqa: F403
from .storage.replays import __all__  # noqa: F401
