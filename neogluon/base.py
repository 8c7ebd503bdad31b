"""Errors, dtype tables and small helpers shared by every layer of neogluon."""
from __future__ import annotations

import ctypes
import os
import platform

import numpy as np
import torch

__all__ = ["MXNetError", "MXNetValueError", "NotSupportedForSparseNDArray", "NotImplementedForSymbol",
           "numeric_types", "integer_types", "string_types", "to_torch_dtype", "to_numpy_dtype",
           "dtype_name", "py_str", "mx_real_t", "data_dir", "data_dir_default"]

# MXNet's C handle type for arrays. An NDArray converts to one (``ctypes.cast(arr,
# NDArrayHandle)``, as a monitor callback in MXNet's tests does with the handle it gets) and
# ``NDArray(handle)`` gives that array back (the value names a live array, nothing else).
NDArrayHandle = ctypes.c_void_p

# The MXNet release whose API neogluon implements: ``mxnet.__version__`` under the alias,
# ``neogluon.__mxnet_version__``, and (as MXNet's ``major*10000 + minor*100 + patch``) the
# ``mxnet_version`` that symbol JSON files carry. neogluon's own release is
# ``neogluon.__version__``.
MXNET_API_VERSION = "1.9.1"
MXNET_API_VERSION_INT = 10901


class MXNetError(RuntimeError):
    """The error neogluon raises where MXNet 1.x raises ``mxnet.base.MXNetError``."""


class MXNetValueError(MXNetError, ValueError):
    """An error MXNet reports as ``ValueError`` (bad shapes in reshape, assignment, ...);
    catchable as either."""


class NotSupportedForSparseNDArray(MXNetError):
    """An operation that a sparse array does not support."""


class NotImplementedForSymbol(MXNetError):
    """An NDArray-only function was called with an ``mx.sym.Symbol``.

    Parameters
    ----------
    function : callable
        The function that was called.
    alias : str or None
        The operator name it stands for, if any.
    *args
        The arguments it was called with (only their types are reported).
    """

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        parts = [f"Function {self.function}"]
        if self.alias:
            parts.append(f' (namely operator "{self.alias}")')
        if self.args:
            parts.append(f" with arguments ({', '.join(self.args)})")
        parts.append(" is not implemented for Symbol and only available in NDArray.")
        return "".join(parts)


class _NullType:
    """Marks an operator argument that was not given (MXNet's ``_Null``)."""

    def __repr__(self):
        return "_Null"


_Null = _NullType()

mx_real_t = np.float32  # MXNet's default real type
mx_uint = np.uint32
mx_float = np.float32


def py_str(x) -> str:
    """Decode the UTF-8 bytes ``x`` into a str (MXNet's helper for C strings); a str is
    returned as it is."""
    return x if isinstance(x, str) else x.decode("utf-8")


def _as_list(obj):
    """``obj`` itself when it is a list or tuple, else ``[obj]``."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


def data_dir_default() -> str:
    """Where MXNet stores downloaded data by default: ``%APPDATA%/mxnet`` on Windows,
    ``~/.mxnet`` elsewhere."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """The data directory: ``$MXNET_HOME`` when set, else :func:`data_dir_default`."""
    return os.getenv("MXNET_HOME", data_dir_default())


numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
string_types = (str,)

#: MXNet 1.9.1's bfloat16 dtype: numpy has none, so MXNet spells it as a structured 2-byte
#: dtype (``mxnet.contrib.amp.amp.bfloat16``); a bfloat16 NDArray's ``.dtype`` is this, and
#: its ``asnumpy()`` holds the raw bits in it.
bfloat16 = np.dtype([("bfloat16", np.uint16)])

_NP2TORCH = {
    np.dtype("float32"): torch.float32,
    np.dtype("float64"): torch.float64,
    np.dtype("float16"): torch.float16,
    np.dtype("uint8"): torch.uint8,
    np.dtype("int8"): torch.int8,
    np.dtype("int16"): torch.int16,
    np.dtype("int32"): torch.int32,
    np.dtype("int64"): torch.int64,
    np.dtype("bool"): torch.bool,
    bfloat16: torch.bfloat16,
}
_TORCH2NP = {v: k for k, v in _NP2TORCH.items()}
_NAMES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
          "int64": torch.int64, "bool": torch.bool, "bfloat16": torch.bfloat16,
          "float": torch.float32, "double": torch.float64, "half": torch.float16}


def to_torch_dtype(dtype) -> torch.dtype:
    """Map a numpy dtype, a dtype name or a torch dtype to a torch dtype."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        try:
            return _NAMES[dtype]
        except KeyError:
            raise TypeError(f"unsupported dtype {dtype!r}; expected one of "
                            f"{sorted(_NAMES)}") from None
    try:
        return _NP2TORCH[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported dtype {dtype!r}") from None


def to_numpy_dtype(dtype: torch.dtype):
    """Map a torch dtype to the numpy dtype *type* MXNet reports (``numpy.float32`` ...);
    bfloat16 is MXNet's structured dtype :data:`bfloat16` itself (a dtype, not a type)."""
    if dtype is torch.bfloat16:
        return bfloat16
    return _TORCH2NP[dtype].type


def dtype_name(dtype) -> str:
    """Canonical name ('float32', ...) of any dtype spelling."""
    t = to_torch_dtype(dtype)
    if t is torch.bfloat16:
        return "bfloat16"
    return _TORCH2NP[t].name


# ------------------------------------------------------------- MXNet base.py's Python helpers
# Names of ``mxnet.base`` that programs and MXNet-era packages import (no C library involved).
mx_real_t = np.float32
error_types = {}   # error name -> class, filled by register_error (MXNet's FFI error registry)


def register_error(func_name=None, cls=None):
    """MXNet's ``base.register_error`` (``mx.error.register``): record an error class under a
    name in :data:`error_types`. Used as ``@register_error``, ``@register_error("Name")`` or
    ``register_error("Name", cls)``; returns the class (or the decorator)."""
    if callable(func_name):
        cls, func_name = func_name, func_name.__name__

    def record(klass):
        error_types[func_name if isinstance(func_name, str) else klass.__name__] = klass
        return klass
    return record if cls is None else record(cls)


class _ClassProperty:
    """A property read (and optionally written) on the class as well as on instances."""

    def __init__(self, fget, fset=None):
        self.fget, self.fset = fget, fset

    def __get__(self, obj, klass=None):
        return self.fget.__get__(obj, type(obj) if klass is None else klass)()

    def __set__(self, obj, value):
        if not self.fset:
            raise MXNetError(f"cannot use the setter: {getattr(obj, '__name__', obj)} to set "
                             "attribute")
        klass = obj if isinstance(obj, type) else type(obj)
        return self.fset.__get__(None if klass is obj else obj, klass)(value)

    def setter(self, func):
        self.fset = func if isinstance(func, (classmethod, staticmethod)) else classmethod(func)
        return self


class _ClassPropertyMeta(type):
    """Metaclass under which a class-level write reaches a :func:`classproperty` setter."""

    def __setattr__(cls, key, value):
        prop = cls.__dict__.get(key)
        if isinstance(prop, _ClassProperty):
            return prop.__set__(cls, value)
        return super().__setattr__(key, value)


def classproperty(func):
    """MXNet's ``base.classproperty``: ``func`` (made a classmethod) read as a property of the
    class; combine with ``with_metaclass(_ClassPropertyMeta)`` for class-level setters."""
    return _ClassProperty(func if isinstance(func, (classmethod, staticmethod))
                          else classmethod(func))


def with_metaclass(meta, *bases):
    """MXNet's ``base.with_metaclass`` (six's): a base class that makes the class defined on it
    an instance of ``meta`` with ``bases``."""
    class _Temporary(meta):
        def __new__(mcs, name, _bases, namespace):
            return meta(name, bases, namespace)

        @classmethod
        def __prepare__(mcs, name, _bases):
            return meta.__prepare__(name, bases)
    return type.__new__(_Temporary, "temporary_class", (), {})


def build_param_doc(arg_names, arg_types, arg_descs, remove_dup=True):
    """MXNet's ``base.build_param_doc``: the numpydoc ``Parameters`` section for arguments
    given as parallel lists of names, type strings and descriptions (repeated names are
    listed once when ``remove_dup``)."""
    seen = set()
    lines = []
    for name, typ, desc in zip(arg_names, arg_types, arg_descs):
        if name in seen and remove_dup:
            continue
        if name == "num_args":
            continue
        seen.add(name)
        lines.append(f"{name} : {typ}")
        if desc:
            lines.append("    " + desc)
    return "Parameters\n----------\n" + "\n".join(lines) + "\n"


# MXNet's operator-name prefixes of its NumPy interface (``_np_random_uniform`` lives in
# mx.np.random, ``_npx_image_resize`` in mx.npx.image); numpy_op_signature reads them.
_NP_OP_PREFIX = "_np_"
_NP_OP_SUBMODULE_LIST = ["_random_", "_linalg_"]
_NP_EXT_OP_PREFIX = "_npx_"
_NP_EXT_OP_SUBMODULE_LIST = ["_image_", "_random_"]
_NP_INTERNAL_OP_PREFIX = "_npi_"


def _np_modules_getattr(module_name):
    """A module ``__getattr__`` giving ``mx_np``/``mx_npx`` (mx.np and mx.npx, as MXNet's
    NumPy-protocol modules import them), imported on first use: those modules load while
    mx.np itself does."""
    def __getattr__(name):
        import importlib
        if name == "mx_np":
            return importlib.import_module("neogluon.numpy")
        if name == "mx_npx":
            return importlib.import_module("neogluon.numpy_extension")
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
    return __getattr__
