"""Old import path of :mod:`workbench.services.rerun` (the same module object)."""

import sys

from .services import rerun as _rerun
from .services.rerun import *  # the names, for type checkers

sys.modules[__name__] = _rerun
