"""``mx.contrib.ndarray`` / ``mx.contrib.nd``: the same module as ``mx.nd.contrib``."""
import sys as _sys

from ..ndarray import contrib as _contrib

_sys.modules[__name__] = _contrib
