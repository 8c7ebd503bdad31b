"""``mx.contrib.symbol`` / ``mx.contrib.sym``: the symbolic contrib operators, the same
namespace as ``mx.sym.contrib``."""
import sys as _sys

from ..symbol import contrib as _contrib

_sys.modules[__name__] = _contrib
