"""NumPy 1 names and behaviours that MXNet 1.x programs use and NumPy 2 removed.

MXNet 1.9.1 ran on NumPy < 1.24; programs written for it call ``np.fromstring`` on bytes
(MNIST readers, MXNet's own ``train_mnist.py``), and use the aliases NumPy 1.24 and 2.0
removed (``np.float``, ``np.int``, ``np.bool``, ``np.object``, ``np.str``, ``np.float_``,
``np.NaN``, ``np.Inf``, ``np.asscalar``, ``np.product``...). ``python -m neogluon.run``
installs them before the program starts, so such programs run unchanged next to a current
NumPy; ``NEOGLUON_NUMPY1_COMPAT=0`` turns this off. Only what is missing is added (a NumPy
that still has a name keeps its own), and neogluon itself never relies on any of it.
"""
from __future__ import annotations

import builtins

import numpy as np

__all__ = ["install"]

# removed alias -> what NumPy 1 gave for it
_ALIASES = {
    "float": builtins.float, "int": builtins.int, "bool": builtins.bool,
    "object": builtins.object, "str": builtins.str, "complex": builtins.complex,
    "long": builtins.int, "unicode": builtins.str,
    "float_": np.float64, "complex_": np.complex128, "int_": np.int_, "bool8": np.bool_,
    "string_": np.bytes_, "unicode_": np.str_, "object0": np.object_,
    "NaN": np.nan, "NAN": np.nan, "Inf": np.inf, "Infinity": np.inf, "infty": np.inf,
    "PINF": np.inf, "NINF": -np.inf, "PZERO": 0.0, "NZERO": -0.0,
}


def _asscalar(a):
    """NumPy 1's ``np.asscalar``: ``a.item()``."""
    return a.item()


def _fromstring(original):
    def fromstring(string, dtype=float, count=-1, *, sep="", like=None):
        # NumPy 1 read raw bytes here (deprecated since 1.14, removed in 2.3): a copy, as
        # fromstring returned a new array
        if sep == "" and isinstance(string, (bytes, bytearray, memoryview)):
            return np.frombuffer(string, dtype=dtype, count=count).copy()
        if like is None:
            return original(string, dtype=dtype, count=count, sep=sep)
        return original(string, dtype=dtype, count=count, sep=sep, like=like)
    fromstring.__doc__ = original.__doc__
    return fromstring


def _arange(original):
    def arange(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except OverflowError:
            # NumPy 1 wrapped Python ints outside an integer dtype (arange(-100, 100,
            # dtype=uint8) counted 156, 157, ...); NumPy 2 refuses them (NEP 50)
            dtype = kwargs.get("dtype")
            if dtype is None and len(args) == 4:
                dtype = args[3]
            if dtype is None or np.dtype(dtype).kind not in "iu":
                raise
            kw = dict(kwargs, dtype=np.int64)
            return original(*args[:3], **kw).astype(dtype)
    arange.__doc__ = original.__doc__
    arange._neogluon_numpy1 = True
    return arange


def _interpolation(original):
    """``np.quantile``/``np.percentile`` with NumPy 1's ``interpolation=`` (renamed
    ``method=`` in 1.22, removed in 2.0)."""
    def fn(*args, **kwargs):
        if "interpolation" in kwargs:
            kwargs.setdefault("method", kwargs.pop("interpolation"))
        return original(*args, **kwargs)
    fn.__doc__ = original.__doc__
    fn.__name__ = original.__name__
    fn._neogluon_numpy1 = True
    return fn


def _nonzero(original):
    """``np.nonzero`` of a 0-d array: NumPy 1 took it as a 1-element vector (deprecated in
    1.17); NumPy 2 raises."""
    def nonzero(a):
        if isinstance(a, np.ndarray) and a.ndim == 0:
            a = a.reshape(1)
        return original(a)
    nonzero.__doc__ = original.__doc__
    nonzero._neogluon_numpy1 = True
    return nonzero


def install():
    """Add the missing NumPy 1 names and the bytes mode of ``np.fromstring``; returns the
    names added."""
    added = []
    for name, value in _ALIASES.items():
        if name not in np.__dict__:
            setattr(np, name, value)
            added.append(name)
    functions = {"asscalar": _asscalar, "product": np.prod, "cumproduct": np.cumprod,
                 "sometrue": np.any, "alltrue": np.all, "round_": np.round}
    for name, fn in functions.items():
        if name not in np.__dict__:
            setattr(np, name, fn)
            added.append(name)
    try:
        np.fromstring(b"\0", dtype=np.uint8)
    except ValueError:
        np.fromstring = _fromstring(np.fromstring)
        added.append("fromstring(bytes)")
    try:
        np.quantile([1.0], 0.5, interpolation="linear")
    except TypeError:
        for name in ("quantile", "percentile", "nanquantile", "nanpercentile"):
            if not getattr(getattr(np, name), "_neogluon_numpy1", False):
                setattr(np, name, _interpolation(getattr(np, name)))
                added.append(f"{name}(interpolation=)")
    try:
        np.nonzero(np.array(1))
    except ValueError:
        if not getattr(np.nonzero, "_neogluon_numpy1", False):
            np.nonzero = _nonzero(np.nonzero)
            added.append("nonzero(0-d)")
    try:
        np.arange(-1, 1, dtype=np.uint8)
    except OverflowError:
        if not getattr(np.arange, "_neogluon_numpy1", False):
            np.arange = _arange(np.arange)
            added.append("arange(wrapping ints)")
    return added
