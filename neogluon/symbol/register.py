"""``mxnet.symbol.register``: in MXNet the code that generates the symbol functions from
libmxnet's registry. neogluon's symbol functions are made from its nd operators; the module
keeps the names programs import from it."""
from ..attribute import AttrScope  # noqa: F401
from ..base import py_str  # noqa: F401
from ..name import NameManager  # noqa: F401
from . import contrib as _contrib

adamw_update = _contrib.adamw_update
mp_adamw_update = _contrib.mp_adamw_update

__all__ = ["AttrScope", "NameManager", "adamw_update", "mp_adamw_update", "py_str"]
