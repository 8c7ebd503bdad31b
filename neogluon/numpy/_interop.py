"""NumPy's dispatch protocols for ``mx.np.ndarray``: ``onp.sum(x)`` / ``onp.exp(x)`` on an mx
array run mx.np's function and return an mx array, as in MXNet; a function mx.np lacks runs in
NumPy on a copy (and returns NumPy's result)."""
import numpy as _onp

from ..ndarray.ndarray import NDArray


def _mx(name, module):
    from .. import numpy as mxnp
    target = mxnp
    sub = module.split(".")[1:] if module and module.startswith("numpy.") else []
    for s in sub:
        target = getattr(target, s, None)
        if target is None:
            return None
    fn = getattr(target, name, None)
    return fn if callable(fn) and not isinstance(fn, type) else None


def _to_np(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_np(v) for v in x)
    return x


def array_ufunc(ufunc, method, inputs, kwargs):
    if method == "__call__":
        fn = _mx(ufunc.__name__, "numpy")
        if fn is not None and "out" not in kwargs:
            return fn(*inputs, **kwargs)
    return getattr(ufunc, method)(*_to_np(inputs), **{k: _to_np(v) for k, v in kwargs.items()})


def array_function(func, types, args, kwargs):
    fn = _mx(func.__name__, getattr(func, "__module__", "numpy"))
    if fn is not None:
        return fn(*args, **kwargs)
    return func(*_to_np(args), **{k: _to_np(v) for k, v in kwargs.items()})
