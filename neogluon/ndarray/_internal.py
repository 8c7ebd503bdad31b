"""``nd._internal``: MXNet's underscore-named operators that programs call directly.

Names not defined here resolve to the public operator of the same name without its
leading underscore (``_internal._copy`` is ``nd.identity``'s alias ``_copy``, ``_zeros`` is
``nd.zeros``), as far as such an operator exists.
"""
from __future__ import annotations

import builtins
import math

import numpy as np
import torch

from ..base import MXNetError
from ..context import current_context
from ..random import generator
from .ndarray import _new_on, _assign_out

__all__ = ["_crop_assign", "_slice_assign", "_crop_assign_scalar", "_slice_assign_scalar",
           "_sample_unique_zipfian"]


def _region(shape, begin, end, step):
    step = step or [None] * len(begin)
    if not len(begin) == len(end) == len(step) or len(begin) > len(shape):
        raise MXNetError(f"slice assignment: begin {begin}, end {end} and step {step} must have "
                         f"the same length, at most the rank of shape {shape}")
    return tuple(builtins.slice(b, e, s) for b, e, s in zip(begin, end, step))


def _slice_assign(lhs, rhs, begin, end, step=None, out=None, name=None):
    """A copy of ``lhs`` whose region ``begin:end:step`` is replaced by ``rhs``.

    Parameters
    ----------
    lhs, rhs : NDArray
        ``rhs`` has the region's shape.
    begin, end : tuple
        Per-axis bounds (None for the whole axis).
    step : tuple, optional
    out : NDArray, optional
    """
    r = lhs.copy()
    key = _region(lhs.shape, begin, end, step)
    if tuple(r[key].shape) != tuple(rhs.shape):
        raise MXNetError(f"_slice_assign: rhs of shape {rhs.shape} does not fit the region "
                         f"{key} of an array with shape {lhs.shape}")
    r[key] = rhs
    return _assign_out(r, out)


def _slice_assign_scalar(data, scalar=0.0, begin=(), end=(), step=None, out=None, name=None):
    """A copy of ``data`` whose region ``begin:end:step`` is set to ``scalar``.

    Parameters
    ----------
    data : NDArray
    scalar : float
    begin, end : tuple
    step : tuple, optional
    out : NDArray, optional
    """
    r = data.copy()
    r[_region(data.shape, begin, end, step)] = scalar
    return _assign_out(r, out)


_crop_assign = _slice_assign
_crop_assign_scalar = _slice_assign_scalar


def _sample_unique_zipfian(range_max, shape=(1,), ctx=None, out=None, name=None):
    """Sample ``shape[1]`` distinct classes per row from the log-uniform (Zipfian)
    distribution over ``[0, range_max)``, ``P(c) = log((c+2)/(c+1)) / log(range_max+1)``.

    Returns
    -------
    (classes, num_trials) : int64 arrays of shape ``shape`` and ``(shape[0],)``; the number
    of draws each row needed to collect its distinct classes.
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if len(shape) != 2:
        raise MXNetError(f"_sample_unique_zipfian: shape must be (batch_size, num_sampled), "
                         f"got {shape}")
    batch, num_sampled = shape
    if num_sampled > range_max:
        raise MXNetError(f"_sample_unique_zipfian: cannot draw {num_sampled} distinct classes "
                         f"from range_max={range_max}")
    ctx = ctx or current_context()
    gen = generator(torch.device("cpu"))
    log_range = math.log(range_max + 1)
    classes = np.empty(shape, dtype=np.int64)
    trials = np.empty((batch,), dtype=np.int64)
    for b in range(batch):
        seen, order, n = set(), [], 0
        while len(order) < num_sampled:
            want = max(num_sampled - len(order), 64)
            u = torch.rand(want, generator=gen, dtype=torch.float64).numpy()
            draws = (np.exp(u * log_range) - 1).astype(np.int64) % range_max
            for c in draws:
                n += 1
                if c not in seen:
                    seen.add(c)
                    order.append(c)
                    if len(order) == num_sampled:
                        break
        classes[b] = order
        trials[b] = n
    dev = ctx.torch_device
    res = (_new_on(torch.from_numpy(classes).to(dev), ctx),
           _new_on(torch.from_numpy(trials).to(dev), ctx))
    if out is not None:
        out[0][:] = res[0]
        out[1][:] = res[1]
        return out
    return res


def _identity_with_attr_like_rhs(lhs, rhs, out=None, name=None):
    """``lhs`` unchanged; ``rhs`` must have its shape (symbolic graphs use the operator to tie
    one array's shape to another's during shape inference). Gradients reach ``lhs`` only.

    Parameters
    ----------
    lhs, rhs : NDArray
    """
    if tuple(lhs.shape) != tuple(rhs.shape):
        raise MXNetError(f"_identity_with_attr_like_rhs: lhs has shape {tuple(lhs.shape)}, rhs "
                         f"{tuple(rhs.shape)}; they must be equal")
    from .. import ndarray as _nd   # (the package imports this module)
    return _assign_out(_nd.identity(lhs), out)


# MXNet's internal names of the same-shape elementwise operators (GluonNLP's LSTMPCellWithClip
# calls F._internal._plus and _mul).
_ELEMWISE = {"_plus": "elemwise_add", "_Plus": "elemwise_add", "_grad_add": "elemwise_add",
             "_minus": "elemwise_sub", "_Minus": "elemwise_sub", "_mul": "elemwise_mul",
             "_Mul": "elemwise_mul", "_div": "elemwise_div", "_Div": "elemwise_div"}


def __getattr__(name):
    if name == "CachedOp":
        from ..symbol.symbol import CachedOp
        return CachedOp
    if name.startswith("_") and not name.startswith("__"):
        canonical = _registry_alias(name)
        if canonical is not None and canonical in globals():
            return globals()[canonical]
        if name in ("_cvimdecode", "_cvimread", "_cvimresize", "_cvcopyMakeBorder"):
            return _image_ops()[name]
        from .. import ndarray as _nd
        for cand in (name, name[1:], _ELEMWISE.get(name, name), canonical or name):
            fn = getattr(_nd, cand, None)
            if callable(fn) and not isinstance(fn, type):
                return fn
    raise AttributeError(f"module 'neogluon.ndarray._internal' has no attribute {name!r}")



def _square_sum(data, axis=None, keepdims=False, exclude=False, out=None, name=None):
    """``sum(square(data), axis)``: MXNet's fused operator for row-sparse arrays (the
    factorization-machine models use it on a row-sparse weight). A row-sparse input summed
    over axis 1 with ``keepdims`` gives a row-sparse result, as in MXNet; the gradient
    reaches the input's stored rows.

    Parameters
    ----------
    data : NDArray
    axis : int or tuple of int, optional
    keepdims, exclude : bool
    """
    from .. import ndarray as _nd   # (the package imports this module)
    res = _nd.sum(_nd.square(data), axis=axis, keepdims=keepdims, exclude=exclude)
    if getattr(data, "stype", "default") == "row_sparse" and keepdims and \
            axis in (1, (1,), -1) and data.ndim == 2:
        res = res.tostype("row_sparse")
    return _assign_out(res, out)


# ---------------------------------------------------------------- scalar operators
# MXNet's ``<op>_scalar`` operators: what ``NDArray <op> number`` computes (``x + 2`` is
# ``_plus_scalar(x, scalar=2)``); the ``r`` forms take the scalar on the left.
def _scalar_operator(opname, compute):
    def op(data, scalar=0.0, is_int=None, out=None, name=None):
        if is_int and float(scalar).is_integer():
            scalar = int(scalar)
        return _assign_out(compute(data, scalar), out)
    op.__name__ = op.__qualname__ = opname
    op.__doc__ = (f"MXNet's ``{opname}``: the array and a Python scalar (what the NDArray "
                  "operator with a number computes).\n\n    Parameters\n    ----------\n"
                  "    data : NDArray\n    scalar : float\n    is_int : bool, optional\n"
                  "        the scalar is an integer (MXNet 1.9.1's flag)\n")
    return op


def _nd_fn(fname):
    def call(x, s):
        from .. import ndarray as _nd   # (the package imports this module)
        return getattr(_nd, fname)(x, s)
    return call


_SCALAR_OPS = {
    "_plus_scalar": lambda x, s: x + s, "_minus_scalar": lambda x, s: x - s,
    "_rminus_scalar": lambda x, s: s - x, "_mul_scalar": lambda x, s: x * s,
    "_div_scalar": lambda x, s: x / s, "_rdiv_scalar": lambda x, s: s / x,
    "_mod_scalar": lambda x, s: x % s, "_rmod_scalar": lambda x, s: s % x,
    "_power_scalar": lambda x, s: x ** s, "_rpower_scalar": lambda x, s: s ** x,
    "_equal_scalar": lambda x, s: x == s, "_not_equal_scalar": lambda x, s: x != s,
    "_greater_scalar": lambda x, s: x > s, "_greater_equal_scalar": lambda x, s: x >= s,
    "_lesser_scalar": lambda x, s: x < s, "_lesser_equal_scalar": lambda x, s: x <= s,
    "_maximum_scalar": _nd_fn("maximum"), "_minimum_scalar": _nd_fn("minimum"),
    "_hypot_scalar": lambda x, s: _nd_fn("hypot")(x, x * 0 + s), "_logical_and_scalar": _nd_fn("logical_and"),
    "_logical_or_scalar": _nd_fn("logical_or"), "_logical_xor_scalar": _nd_fn("logical_xor"),
}
for _opname, _compute in _SCALAR_OPS.items():
    globals()[_opname] = _scalar_operator(_opname, _compute)
__all__ += list(_SCALAR_OPS)

# Same-shape binary operators by their internal names (MXNet's elemwise forms; the broadcast
# functions they resolve to give the same values on equal shapes, which are checked).
_SAME_SHAPE = {"_equal": "equal", "_not_equal": "not_equal", "_greater": "greater",
               "_greater_equal": "greater_equal", "_lesser": "lesser",
               "_lesser_equal": "lesser_equal", "_logical_and": "logical_and",
               "_logical_or": "logical_or", "_logical_xor": "logical_xor",
               "_maximum": "maximum", "_minimum": "minimum", "_power": "power",
               "_hypot": "hypot", "_mod": "modulo"}


def _same_shape_operator(opname, fname):
    def op(lhs, rhs, out=None, name=None):
        if tuple(lhs.shape) != tuple(rhs.shape):
            raise MXNetError(f"{opname}: the operands must have the same shape, got "
                             f"{tuple(lhs.shape)} and {tuple(rhs.shape)} (use broadcast_* "
                             "for broadcasting)")
        from .. import ndarray as _nd   # (the package imports this module)
        return _assign_out(getattr(_nd, fname)(lhs, rhs), out)
    op.__name__ = op.__qualname__ = opname
    op.__doc__ = f"MXNet's ``{opname}``: ``nd.{fname}`` of two arrays of the same shape."
    return op


for _opname, _fname in _SAME_SHAPE.items():
    globals()[_opname] = _same_shape_operator(_opname, _fname)
__all__ += list(_SAME_SHAPE)


def _copyto(data, out=None, name=None):
    """MXNet's ``_copyto``: a copy of ``data``, written into ``out`` when given (which may be
    on another context)."""
    if out is None:
        return data.copy()
    return data.copyto(out)


def _set_value(src=0.0, out=None, name=None):
    """MXNet's ``_set_value``: every element of ``out`` set to the scalar ``src``."""
    if out is None:
        raise MXNetError("_set_value writes into an array: pass out=")
    out[:] = src
    return out


def _zeros_without_dtype(shape=(), ctx=None, dtype=-1, out=None, name=None):
    """MXNet's ``_zeros_without_dtype``: zeros of ``shape`` with the default dtype (float32)
    unless ``dtype`` (-1: unset) names one."""
    from .. import ndarray as _nd   # (the package imports this module)
    dtype = None if dtype in (-1, None, "None") else dtype
    return _assign_out(_nd.zeros(shape, ctx=ctx, dtype=dtype or "float32"), out)


__all__ += ["_copyto", "_set_value", "_zeros_without_dtype"]

# Other internal names of operators nd provides under a public name.
_ELEMWISE.update({"_copy": "identity", "_sub": "elemwise_sub", "_add": "elemwise_add"})


def _image_ops():
    from .. import image as _image   # mx.image's OpenCV-style functions call these
    return {"_cvimdecode": _image.imdecode, "_cvimread": _image.imread,
            "_cvimresize": _image.imresize, "_cvcopyMakeBorder": _image.copyMakeBorder}


def _registry_alias(name):
    """The canonical MXNet operator name of an alias in neogluon's operator table
    (``_PlusScalar`` -> ``_plus_scalar``), or None."""
    from .._opmodule import registry_aliases
    return registry_aliases().get(name)


# Optimizer kernels, _scatter_*, _imdecode, fused self-attention, control-flow nodes.
from ._internal_more import *  # noqa: E402,F401,F403
from . import _internal_more as _more  # noqa: E402
__all__ += _more.__all__
