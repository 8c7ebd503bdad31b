"""``mx.np.utils``: the dtypes and constants ``mx.np`` exposes (NumPy's own objects, as in
MXNet)."""
import numpy as _onp

__all__ = ["float16", "float32", "float64", "uint8", "int32", "int8", "int64", "bool",
           "bool_", "pi", "inf", "nan", "PZERO", "NZERO", "newaxis", "finfo", "e", "NINF",
           "PINF", "NAN", "NaN", "_STR_2_DTYPE_"]

float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
uint8, int8, int32, int64 = _onp.uint8, _onp.int8, _onp.int32, _onp.int64
bool_ = _onp.bool_
import builtins as _builtins
bool = _builtins.bool  # noqa: A001 - MXNet's mx.np.bool is Python's bool
pi, e = _onp.pi, _onp.e
inf = PINF = _onp.inf
NINF = -_onp.inf
nan = NAN = NaN = _onp.nan
PZERO, NZERO = 0.0, -0.0
newaxis = None
finfo = _onp.finfo

# dtype names as strings -> dtypes (MXNet's table; None stays None)
_STR_2_DTYPE_ = {"float16": float16, "float32": float32, "float64": float64, "float": float64,
                 "uint8": uint8, "int8": int8, "int32": int32, "int64": int64, "int": int64,
                 "bool": bool, "bool_": bool_, "None": None}
