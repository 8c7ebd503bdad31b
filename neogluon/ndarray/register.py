"""``mxnet.ndarray.register``: in MXNet the code that generates the operator functions from
libmxnet's registry. neogluon's operators are Python functions already; the module keeps the
names programs import from it."""
from ..base import py_str  # noqa: F401
from ..util import use_np_shape  # noqa: F401
from .contrib import adamw_update, mp_adamw_update  # noqa: F401

__all__ = ["adamw_update", "mp_adamw_update", "py_str", "use_np_shape"]
