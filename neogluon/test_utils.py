"""``mx.test_utils``: the helpers MXNet users' own tests call."""
from __future__ import annotations

import numpy as np
from contextlib import contextmanager as _contextmanager

from .context import Context, current_context
from .ndarray.ndarray import NDArray, array

__all__ = ["default_context", "set_default_context", "assert_almost_equal", "almost_equal",
           "same", "rand_ndarray", "rand_shape_2d", "rand_shape_3d", "rand_shape_nd",
           "assert_exception", "environment", "discard_stderr", "getenv", "setenv"]

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


def getenv(name):
    """The value of environment variable ``name``, or None when it is unset."""
    import os
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` to ``value``; ``None`` unsets it."""
    import os
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


@_contextmanager
def environment(*args):
    """Set environment variables for the ``with`` block and restore them afterwards.

    ``environment('NAME', 'value')`` sets one variable, ``environment({'A': '1', 'B': None})``
    several; a value of ``None`` unsets the variable inside the block."""
    if len(args) == 2:
        updates = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        updates = dict(args[0])
    else:
        raise ValueError("environment() takes (name, value) or one dict of {name: value}; "
                         f"got {len(args)} positional argument(s)")
    saved = {name: getenv(name) for name in updates}
    try:
        for name, value in updates.items():
            setenv(name, value)
        yield
    finally:
        for name, value in saved.items():
            setenv(name, value)


@_contextmanager
def discard_stderr():
    """Silence everything written to the process's stderr (file descriptor 2) in the block,
    output of C code included."""
    import os
    import sys
    try:
        sys.stderr.flush()
    except Exception:  # pragma: no cover - a closed stream
        pass
    saved_fd = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        try:
            sys.stderr.flush()
        except Exception:  # pragma: no cover
            pass
        os.dup2(saved_fd, 2)
        os.close(saved_fd)
        os.close(devnull)
