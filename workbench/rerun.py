"""Old import path of :mod:`workbench.services.rerun` (the same module object)."""

import sys

from .services import rerun as _rerun

sys.modules[__name__] = _rerun
