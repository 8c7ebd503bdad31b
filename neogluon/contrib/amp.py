"""``mx.contrib.amp``: the same module as :mod:`neogluon.amp`."""
import sys as _sys

from .. import amp as _amp

# Importing this name gives neogluon.amp itself, so both spellings share one module's state.
_sys.modules[__name__] = _amp
