"""``mx.util``: NumPy-semantics switches, environment variables and GPU queries.

MXNet 1.x keeps two switches for its NumPy-compatible mode: *NumPy shape* semantics (``()`` is
a scalar's shape and ``0`` in a shape means zero elements rather than "unknown") and *NumPy
array* semantics (Gluon creates ``mx.np.ndarray`` instead of ``mx.nd.NDArray``). neogluon's
arrays always have NumPy shape semantics (torch's), and it provides no ``mx.np`` array type;
the switches are still kept, per thread as in MXNet, so that code which sets and queries them
(``with mx.np_shape(True):``, ``@use_np``, ``is_np_array()``) runs unchanged and sees the
values it set.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import threading

__all__ = ["get_gpu_count", "get_gpu_memory", "set_np_shape", "is_np_shape", "np_shape",
           "use_np_shape", "np_array", "is_np_array", "use_np_array", "use_np", "set_np",
           "reset_np", "set_module", "getenv", "setenv", "get_cuda_compute_capability"]

_state = threading.local()
_logged = set()


def _log_once(key, message):
    if key not in _logged:
        _logged.add(key)
        logging.info(message)


def get_gpu_count() -> int:
    """Number of GPUs (CUDA devices torch can use)."""
    import torch
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def get_gpu_memory(gpu_dev_id: int):
    """``(free, total)`` bytes of memory of GPU ``gpu_dev_id``.

    Raises
    ------
    MXNetError
        When there is no such GPU.
    """
    from .context import gpu_memory_info
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(ctx) -> int:
    """The CUDA compute capability of GPU context ``ctx`` as an int (70 for ``sm_70``).

    Raises
    ------
    ValueError
        When ``ctx`` is not a GPU context.
    MXNetError
        When the GPU does not exist.
    """
    if getattr(ctx, "device_type", None) != "gpu":
        raise ValueError(f"Expecting a gpu context to get cuda compute capability, while received "
                         f"ctx {ctx}")
    import torch
    ctx.torch_device  # a clear MXNetError when the GPU is missing
    major, minor = torch.cuda.get_device_capability(ctx.device_id)
    return major * 10 + minor


# ---------------------------------------------------------------------------- NumPy shape
def is_np_shape() -> bool:
    """Whether NumPy shape semantics is on in this thread (off by default)."""
    return getattr(_state, "np_shape", False)


def set_np_shape(active) -> bool:
    """Turn NumPy shape semantics on or off in this thread.

    Parameters
    ----------
    active : bool

    Returns
    -------
    bool
        The previous state.

    Raises
    ------
    ValueError
        When turning it off while NumPy array semantics is on.
    """
    if active:
        _log_once("shape", "NumPy-shape semantics has been activated in your code.")
    elif is_np_array():
        raise ValueError("Deactivating NumPy shape semantics while NumPy array semantics is still"
                         " active is not allowed. Please consider calling `npx.reset_np()` to"
                         " deactivate both of them.")
    prev = is_np_shape()
    _state.np_shape = bool(active)
    return prev


class _NumpyShapeScope:
    """``with`` scope that sets NumPy shape semantics and restores the previous state."""

    def __init__(self, active):
        self._active = active
        self._prev = None

    def __enter__(self):
        if self._active is not None:
            self._prev = set_np_shape(self._active)
        return self

    def __exit__(self, *exc):
        if self._active is not None and self._prev != self._active:
            set_np_shape(self._prev)


def np_shape(active=True):
    """A ``with`` scope in which NumPy shape semantics is ``active``.

    Parameters
    ----------
    active : bool or None
        ``None`` leaves the current state unchanged.
    """
    return _NumpyShapeScope(active)


def _scoped(func, make_scope, decorator_name):
    """Wrap a callable, or every method and property of a class, in ``make_scope()``."""
    if inspect.isclass(func):
        def wanted(member):
            return inspect.isfunction(member) or inspect.ismethod(member) or isinstance(member, property)
        for name, member in inspect.getmembers(func, predicate=wanted):
            if isinstance(member, property):
                wrapped = property(_scoped(member.__get__, make_scope, decorator_name),
                                   member.__set__, member.__delete__, member.__doc__)
            else:
                wrapped = _scoped(member, make_scope, decorator_name)
            setattr(func, name, wrapped)
        return func
    if callable(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with make_scope():
                return func(*args, **kwargs)
        return wrapper
    raise TypeError(f"{decorator_name} can only decorate classes and callable objects, "
                    f"while received a {type(func)}")


def use_np_shape(func):
    """Decorator: run ``func`` (or every method and property of a class) with NumPy shape
    semantics on."""
    return _scoped(func, lambda: np_shape(True), "use_np_shape")


# ---------------------------------------------------------------------------- NumPy array
def is_np_array() -> bool:
    """Whether NumPy array semantics is on in this thread (off by default)."""
    scope = getattr(_NumpyArrayScope._current, "value", None)
    return bool(scope._is_np_array) if scope is not None else False


def _set_np_array(active) -> bool:
    if active:
        _log_once("array", "NumPy array semantics has been activated in your code.")
    prev = is_np_array()
    _NumpyArrayScope._current.value = _NumpyArrayScope(active)
    return prev


class _NumpyArrayScope:
    """``with`` scope that sets NumPy array semantics and restores the previous state.

    As in MXNet, the scope in effect is ``_NumpyArrayScope._current.value`` (a thread-local
    by default) and its ``_is_np_array`` is what :func:`is_np_array` answers."""
    _current = threading.local()

    def __init__(self, is_np_array):
        self._old_scope = None
        self._is_np_array = bool(is_np_array)

    def __enter__(self):
        if getattr(_NumpyArrayScope._current, "value", None) is None:
            _NumpyArrayScope._current.value = _NumpyArrayScope(False)
        self._old_scope = _NumpyArrayScope._current.value
        _NumpyArrayScope._current.value = self
        return self

    def __exit__(self, *exc):
        _NumpyArrayScope._current.value = self._old_scope


def np_array(active=True):
    """A ``with`` scope in which NumPy array semantics is ``active``."""
    return _NumpyArrayScope(active)


def use_np_array(func):
    """Decorator: run ``func`` (or every method and property of a class) with NumPy array
    semantics on."""
    return _scoped(func, lambda: np_array(True), "use_np_array")


def use_np(func):
    """Decorator: run ``func`` (or a class's methods) with both NumPy shape and NumPy array
    semantics on, as MXNet's ``use_np`` does.

    neogluon provides no ``mx.np`` array type: the decorated code still gets ``mx.nd`` arrays,
    but :func:`is_np_shape` and :func:`is_np_array` report True inside it.
    """
    return use_np_shape(use_np_array(func))


def set_np(shape=True, array=True):
    """Set NumPy shape and NumPy array semantics for this thread.

    Raises
    ------
    ValueError
        For ``array=True`` with ``shape=False`` (array semantics needs shape semantics).
    """
    if array and not shape:
        raise ValueError("NumPy Shape semantics is required in using NumPy array semantics.")
    _set_np_array(array)
    set_np_shape(shape)


def reset_np():
    """Turn both NumPy shape and NumPy array semantics off."""
    set_np(shape=False, array=False)


# The keyword arguments of a NumPy ufunc and their defaults; MXNet's ufuncs accept each only
# at its default.
_np_ufunc_default_kwargs = {"where": True, "casting": "same_kind", "order": "K", "dtype": None,
                            "subok": True}

_UFUNC_DTYPES = ("int8", "uint8", "int32", "int64", "float16", "float32", "float64")


def np_ufunc_legal_option(key, value):
    """Whether ``key=value`` is a value NumPy's ufuncs accept for that keyword (MXNet's helper:
    True for ``where``, a known ``casting`` rule, a string ``order``, one of MXNet's dtypes,
    a bool ``subok``; False for anything else)."""
    import numpy as _onp
    if key == "where":
        return True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        if isinstance(value, str):
            return value in _UFUNC_DTYPES
        return value in tuple(getattr(_onp, n) for n in _UFUNC_DTYPES)
    if key == "subok":
        return isinstance(value, bool)
    return False


def _check_ufunc_kwargs(name, kwargs, binary):
    for key, value in kwargs.items():
        if key not in _np_ufunc_default_kwargs:
            raise TypeError(f"{key} is an invalid keyword to function '{name}'")
        if value != _np_ufunc_default_kwargs[key]:
            if np_ufunc_legal_option(key, value):
                raise NotImplementedError(f"{key}={value} is not implemented yet" if binary
                                          else f"{key}={value} is not implemented yet for "
                                          f"operator {name}")
            raise TypeError(f"{key} {value} not understood" if binary
                            else f"{key}={value} not understood for operator {name}")


def wrap_np_unary_func(func):
    """Decorator of a unary NumPy-style function ``func(x, out=None)``: the ufunc keywords
    (``where``, ``casting``, ``order``, ``dtype``, ``subok``) are accepted at their defaults;
    another legal value raises NotImplementedError, anything else TypeError (MXNet's rule)."""
    @functools.wraps(func)
    def wrapped(x, out=None, **kwargs):
        if kwargs:
            _check_ufunc_kwargs(func.__name__, kwargs, binary=False)
        return func(x, out=out)
    return wrapped


def wrap_np_binary_func(func):
    """As :func:`wrap_np_unary_func` for a binary function ``func(x1, x2, out=None)``."""
    @functools.wraps(func)
    def wrapped(x1, x2, out=None, **kwargs):
        if kwargs:
            _check_ufunc_kwargs(func.__name__, kwargs, binary=True)
        return func(x1, x2, out=out)
    return wrapped


def set_module(module):
    """Decorator that sets ``__module__`` of a function or class to ``module`` (for docs)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


# ---------------------------------------------------------------------------- environment
def getenv(name):
    """The value of environment variable ``name``, or None when it is unset."""
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` to the string ``value``; ``None`` unsets it.

    Raises
    ------
    TypeError
        When ``value`` is neither a str nor None.
    """
    if value is None:
        os.environ.pop(name, None)
        return
    if not isinstance(value, str):
        raise TypeError(f"setenv: the value of {name!r} must be a str or None, got "
                        f"{type(value).__name__}")
    os.environ[name] = value


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .base import py_str  # noqa: E402,F401
