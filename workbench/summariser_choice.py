"""Old import path of :mod:`workbench.services.summarisers` (the same module object)."""

import sys

from .services import summarisers as _summarisers
from .services.summarisers import *  # the names, for type checkers

sys.modules[__name__] = _summarisers
