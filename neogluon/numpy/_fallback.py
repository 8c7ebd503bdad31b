"""NumPy functions that MXNet 1.9.1's ``mx.np`` runs on official NumPy (its "fallback" list):
the inputs are copied to NumPy, the function runs there, and array results come back as
``mx.np.ndarray`` on the inputs' context. No gradient is recorded through them (as in MXNet).
"""
import functools

import numpy as _onp

from ..ndarray.ndarray import NDArray

NAMES = ("apply_along_axis", "apply_over_axes", "argpartition", "array_equiv", "choose",
         "compress", "corrcoef", "correlate", "cov", "diag_indices_from", "digitize",
         "divmod", "extract", "float_power", "frexp", "genfromtxt", "heaviside",
         "histogram2d", "histogram_bin_edges", "histogramdd", "i0", "in1d", "intersect1d",
         "isin", "ix_", "lexsort", "modf", "msort", "nanargmax", "nanargmin", "nancumprod",
         "nancumsum", "nanmax", "nanmedian", "nanmin", "nanpercentile", "nanprod",
         "nanquantile", "packbits", "partition", "piecewise", "poly", "polyadd", "polydiv",
         "polyfit", "polyint", "polymul", "polysub", "real", "roots", "searchsorted",
         "select", "setdiff1d", "setxor1d", "spacing", "trapz", "tril_indices_from",
         "trim_zeros", "triu_indices_from", "union1d", "unpackbits", "unwrap", "vander",
         "npv", "mirr", "pv", "ppmt", "rate")


def _to_np(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_np(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_np(v) for k, v in x.items()}
    return x


def _ctx(args):
    for a in args:
        if isinstance(a, NDArray):
            return a.context
        if isinstance(a, (list, tuple)):
            c = _ctx(a)
            if c is not None:
                return c
    return None


def _from_np(r, ctx):
    """NumPy arrays in a result as mx.np arrays on ``ctx`` (sequences keep their type)."""
    from .multiarray import array, _same_seq
    if isinstance(r, _onp.ndarray):
        return array(r, dtype=r.dtype if r.dtype != object else None, ctx=ctx)
    if isinstance(r, (tuple, list)):
        return _same_seq(r, [_from_np(v, ctx) for v in r])
    return r


def make(name):
    np_fn = getattr(_onp, name, None)
    if np_fn is None:
        np_fn = _legacy(name)

    @functools.wraps(np_fn)
    def fallback(*args, **kwargs):
        out = kwargs.pop("out", None)
        r = np_fn(*_to_np(args), **_to_np(kwargs))
        res = _from_np(r, _ctx(args) or _ctx(list(kwargs.values())))
        if out is not None:
            out[...] = res
            return out
        return res
    fallback.__module__ = "mxnet.numpy"
    return fallback


def _legacy(name):
    """Functions newer NumPy removed (financial functions, msort, in1d...)."""
    def missing(*args, **kwargs):
        if name == "msort":
            return _onp.sort(args[0], axis=0)
        if name == "in1d":
            return _onp.isin(*args, **kwargs).ravel()
        if name == "trapz":
            return _onp.trapezoid(*args, **kwargs)
        raise NotImplementedError(f"mx.np.{name}: this NumPy ({_onp.__version__}) no longer "
                                  "provides it (numpy_financial has the financial functions)")
    missing.__name__ = name
    return missing
