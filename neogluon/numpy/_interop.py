"""``mx.np.ndarray.__array_ufunc__`` / ``__array_function__``: see
:mod:`neogluon.numpy_dispatch_protocol` (the registries live there)."""
from .. import autograd as _ag
from ._fallback import _to_np, _ctx, _from_np as _to_mx


def _fallback(name, fn, args, kwargs):
    if _ag.is_recording():
        raise ValueError(f"Falling back to NumPy operator {name} with autograd active is not "
                         "supported. Please consider moving the operator to the outside of "
                         "the autograd scope.")
    return _to_mx(fn(*_to_np(args), **_to_np(kwargs)), _ctx(args))


def array_ufunc(ufunc, method, inputs, kwargs):
    from .. import numpy_dispatch_protocol as proto
    if "out" in kwargs:
        out = kwargs["out"]
        if isinstance(out, tuple):
            if len(out) != 1:
                raise ValueError("The `out` parameter must have exactly one ndarray")
            kwargs["out"] = out[0]
    if method != "__call__":
        return NotImplemented
    mx_fn = proto._NUMPY_ARRAY_UFUNC_DICT.get(ufunc.__name__)
    if mx_fn is None:
        return _fallback(ufunc.__name__, ufunc, inputs, kwargs)
    return mx_fn(*inputs, **kwargs)


def array_function(func, types, args, kwargs):
    from .. import numpy_dispatch_protocol as proto
    from .multiarray import ndarray
    mx_fn = proto._NUMPY_ARRAY_FUNCTION_DICT.get(func)
    if mx_fn is None:
        return _fallback(getattr(func, "__name__", str(func)), func, args, kwargs)
    if not all(issubclass(t, ndarray) for t in types):
        return NotImplemented
    return mx_fn(*args, **kwargs)
