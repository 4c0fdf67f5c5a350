"""Old import path of :mod:`workbench.services.replay` (the same module object)."""

import sys

from .services import replay as _replay
from .services.replay import *  # the names, for type checkers

sys.modules[__name__] = _replay
