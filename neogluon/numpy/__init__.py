"""``mx.np``: MXNet 1.9.1's NumPy-compatible array interface, on torch.

``mx.np.ndarray`` subclasses ``mx.nd.NDArray`` and shares its storage (one torch.Tensor);
the functions here follow NumPy's names and semantics with MXNet's dtype rules (see
:mod:`neogluon.numpy.multiarray`). Functions MXNet forwards to official NumPy ("fallback"
functions: ``cov``, ``polyfit``, ``searchsorted``...) run NumPy on a copy of the data and
return mx.np arrays; they record no gradient, as in MXNet.
"""
import numpy as _onp

from .multiarray import *  # noqa: F401,F403
from .multiarray import ndarray, array, _wrap  # noqa: F401
from ._op import *  # noqa: F401,F403
from . import _op
from . import random, linalg  # noqa: F401
from . import _fallback
from . import _internal  # noqa: F401  (F.np._internal in hybrid_forward)
from . import multiarray  # noqa: F401

# dtypes and constants, as NumPy's (mx.np.bool is Python's bool, as in MXNet)
from .utils import *  # noqa: F401,F403,E402
from .utils import bool  # noqa: F401,A001
int16 = _onp.int16
dtype = _onp.dtype
iinfo = _onp.iinfo
promote_types, result_type, min_scalar_type = (_onp.promote_types, _onp.result_type,
                                               _onp.min_scalar_type)
euler_gamma = _onp.euler_gamma
from .arrayprint import set_printoptions  # noqa: F401,E402
from . import arrayprint, fallback, fallback_linalg, function_base, io, stride_tricks  # noqa: F401,E402,E501
from . import utils  # noqa: F401,E402

alltrue = _op.all

globals().update({n: _fallback.make(n) for n in _fallback.NAMES if n not in globals()})

# every function goes through the capture hook (a hybridized block records mx.np calls)
from . import _hooks  # noqa: E402
_hooks.hook_module(globals(), [n for n in list(globals()) if not n.startswith("_") and
                               n not in ("random", "linalg", "multiarray", "dtype", "finfo",
                                         "iinfo", "promote_types", "result_type",
                                         "min_scalar_type", "set_printoptions")],
                   "numpy")
_hooks.hook_module(vars(random), random.__all__, "numpy.random")
_hooks.hook_module(vars(linalg), linalg.__all__, "numpy.linalg")

# MXNet's mx.np.multiarray defines every mx.np function (its mx.np re-exports them), and
# mxnet.ndarray.numpy._op (which the alias maps to this package's _op) holds them all too: the
# same (hooked) functions are reachable as attributes of both modules. A module __getattr__,
# not new globals, so that the modules' own code keeps Python's builtins (any, all, abs...).
_SUBMODULES = ("multiarray", "random", "linalg", "fallback", "fallback_linalg", "arrayprint",
               "function_base", "io", "stride_tricks", "utils")


def _package_name(module):
    def __getattr__(name):
        if not name.startswith("_") and name not in _SUBMODULES:
            value = globals().get(name, _MISSING)
            if value is not _MISSING and not isinstance(value, type(_onp)):
                return value
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
    return __getattr__


_MISSING = object()
multiarray.__getattr__ = _package_name(multiarray)
_op.__getattr__ = _package_name(_op)
