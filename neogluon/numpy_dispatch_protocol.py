"""NumPy's dispatch protocols for ``mx.np.ndarray`` (NEP 13 ``__array_ufunc__`` and NEP 18
``__array_function__``): official NumPy functions called on mx arrays run mx.np's version.

The two lists name the functions MXNet 1.9.1 dispatches (the same ones here); any other NumPy
function or ufunc given an mx array runs in NumPy on a copy of the data and its array result
comes back as an mx.np array on the inputs' context (refused while autograd records, as in
MXNet, since no gradient could flow through it).
"""
import functools

import numpy as _onp

from .base import _np_modules_getattr

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol"]

_NUMPY_ARRAY_FUNCTION_LIST = [
    "all", "any", "sometrue", "argmin", "argmax", "around", "round", "round_", "argsort", "sort",
    "append", "broadcast_arrays", "broadcast_to", "clip", "concatenate", "copy", "cumsum",
    "diag", "diagonal", "diagflat", "dot", "expand_dims", "fix", "flip", "flipud", "fliplr",
    "inner", "insert", "max", "amax", "mean", "min", "amin", "nonzero", "ones_like",
    "atleast_1d", "atleast_2d", "atleast_3d", "prod", "product", "ravel", "repeat", "reshape",
    "roll", "split", "array_split", "hsplit", "vsplit", "dsplit", "squeeze", "stack", "std",
    "sum", "swapaxes", "take", "tensordot", "tile", "transpose", "unique", "unravel_index",
    "diag_indices_from", "delete", "var", "vdot", "vstack", "column_stack", "hstack", "dstack",
    "zeros_like", "linalg.norm", "linalg.cholesky", "linalg.inv", "linalg.solve",
    "linalg.tensorinv", "linalg.tensorsolve", "linalg.pinv", "linalg.eigvals", "linalg.eig",
    "linalg.eigvalsh", "linalg.eigh", "shape", "trace", "tril", "meshgrid", "outer", "einsum",
    "polyval", "shares_memory", "may_share_memory", "quantile", "percentile", "diff",
    "ediff1d", "resize", "where", "full_like", "bincount", "empty_like", "nan_to_num", "isnan",
    "isfinite", "isposinf", "isneginf", "isinf", "pad"]

_NUMPY_ARRAY_UFUNC_LIST = [
    "abs", "fabs", "add", "arctan2", "copysign", "degrees", "hypot", "lcm", "subtract",
    "multiply", "true_divide", "negative", "power", "mod", "matmul", "absolute", "rint", "sign",
    "exp", "log", "log2", "log10", "expm1", "sqrt", "square", "cbrt", "reciprocal", "invert",
    "bitwise_not", "remainder", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
    "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "maximum", "minimum", "ceil", "trunc",
    "floor", "bitwise_and", "bitwise_xor", "bitwise_or", "logical_not", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal"]

# official NumPy function -> mx.np function; ufunc name -> mx.np function
_NUMPY_ARRAY_FUNCTION_DICT = {}
_NUMPY_ARRAY_UFUNC_DICT = {}


def _protocol_runner(func, what):
    @functools.wraps(func)
    def run(*args, **kwargs):
        try:
            func(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - reported as MXNet does
            raise RuntimeError(f"Running function {func.__name__} with NumPy array {what} "
                               f"protocol failed with exception {err}") from err
    return run


def with_array_function_protocol(func):
    """Decorator for tests that need NumPy's ``__array_function__`` protocol (always there on
    the NumPy versions neogluon supports); failures are re-raised as RuntimeError."""
    return _protocol_runner(func, "function")


def with_array_ufunc_protocol(func):
    """Decorator for tests that need NumPy's ``__array_ufunc__`` protocol."""
    return _protocol_runner(func, "ufunc")


def _register():
    from . import numpy as mx_np
    for name in _NUMPY_ARRAY_FUNCTION_LIST:
        mod_mx, mod_np, leaf = mx_np, _onp, name
        if "." in name:
            sub, leaf = name.split(".")
            mod_mx, mod_np = getattr(mx_np, sub), getattr(_onp, sub)
        onp_fn = getattr(mod_np, leaf, None)
        if onp_fn is not None:
            _NUMPY_ARRAY_FUNCTION_DICT[onp_fn] = getattr(mod_mx, leaf)
    for name in _NUMPY_ARRAY_UFUNC_LIST:
        _NUMPY_ARRAY_UFUNC_DICT[name] = getattr(mx_np, name)


_register()


# MXNet's module imports mx.np (and mx.npx) as mx_np / mx_npx; looked up on first use here
# (this module is imported while mx.np itself loads)
__getattr__ = _np_modules_getattr(__name__)
