"""``mx.test_utils``: the helpers MXNet users' own tests call."""
from __future__ import annotations

import numpy as np

from .context import Context, current_context
from .ndarray.ndarray import NDArray, array

__all__ = ["default_context", "set_default_context", "assert_almost_equal", "almost_equal",
           "same", "rand_ndarray", "rand_shape_2d", "rand_shape_3d", "rand_shape_nd",
           "assert_exception"]

_default_ctx = [None]


def default_context() -> Context:
    """The context tests run on (``cpu(0)`` unless set)."""
    return _default_ctx[0] or current_context()


def set_default_context(ctx: Context) -> None:
    _default_ctx[0] = ctx


def _np(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    return np.asarray(x)


def same(a, b) -> bool:
    """Whether two arrays are exactly equal."""
    return np.array_equal(_np(a), _np(b))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False) -> bool:
    return np.allclose(_np(a), _np(b), rtol=1e-5 if rtol is None else rtol,
                       atol=1e-20 if atol is None else atol, equal_nan=equal_nan)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False):
    """Raise AssertionError naming the worst element when ``a`` and ``b`` differ."""
    a_np, b_np = _np(a), _np(b)
    rtol = 1e-5 if rtol is None else rtol
    atol = 1e-20 if atol is None else atol
    if a_np.shape != b_np.shape:
        raise AssertionError(f"shape mismatch: {names[0]} {a_np.shape} vs {names[1]} {b_np.shape}")
    if np.allclose(a_np, b_np, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    err = np.abs(a_np - b_np) / (atol + rtol * np.abs(b_np))
    idx = np.unravel_index(np.nanargmax(err), err.shape) if err.size else ()
    raise AssertionError(
        f"arrays differ (rtol={rtol}, atol={atol}): worst at {idx}, {names[0]}="
        f"{a_np[idx]!r} {names[1]}={b_np[idx]!r}")


def rand_shape_2d(dim0=10, dim1=10):
    return np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10):
    return (np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1),
            np.random.randint(1, dim2 + 1))


def rand_shape_nd(num_dim, dim=10):
    return tuple(np.random.randint(1, dim + 1, size=num_dim).tolist())


def rand_ndarray(shape, stype="default", density=None, dtype=None, ctx=None):
    """A random array (uniform in [0, 1)); sparse storage types keep ``density`` of rows/values."""
    data = np.random.uniform(size=shape).astype(dtype or np.float32)
    if stype != "default":
        density = 0.5 if density is None else density
        if stype == "row_sparse":
            data[np.random.uniform(size=shape[0]) > density] = 0
        else:
            data[np.random.uniform(size=shape) > density] = 0
        return array(data, ctx=ctx or default_context()).tostype(stype)
    return array(data, ctx=ctx or default_context())


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type.__name__}")
