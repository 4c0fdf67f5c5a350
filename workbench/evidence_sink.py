"""Old import path of :mod:`workbench.storage.sink` (kept importable)."""

from .storage.sink import *
from .storage.sink import __all__  # noqa: F401
