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

# dtypes and constants, as NumPy's
bool_ = _onp.bool_
bool = _onp.bool_  # noqa: A001 - MXNet's mx.np.bool
int8, uint8, int16, int32, int64 = _onp.int8, _onp.uint8, _onp.int16, _onp.int32, _onp.int64
float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
dtype = _onp.dtype
finfo, iinfo = _onp.finfo, _onp.iinfo
promote_types, result_type, min_scalar_type = (_onp.promote_types, _onp.result_type,
                                               _onp.min_scalar_type)
pi, e, euler_gamma = _onp.pi, _onp.e, _onp.euler_gamma
inf = PINF = _onp.inf
NINF = -_onp.inf
nan = NAN = NaN = _onp.nan
PZERO, NZERO = 0.0, -0.0
newaxis = None
set_printoptions = _onp.set_printoptions

product = _op.prod
alltrue = _op.all
sometrue = _op.any

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
