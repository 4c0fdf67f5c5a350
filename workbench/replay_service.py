"""Old import path of :mod:`workbench.services.replay` (the same module object)."""

import sys

from .services import replay as _replay

sys.modules[__name__] = _replay
