"""``mx.np.ndarray``: MXNet's NumPy-compatible array, on the same storage as ``nd.NDArray``.

An ``ndarray`` is an :class:`~neogluon.nd.NDArray` (as in MXNet, it subclasses it) whose
operators follow NumPy's rules: 0-d arrays, boolean and advanced indexing, comparisons that
give ``bool`` arrays, ``dtype`` reported as a ``numpy.dtype``. Both classes hold one
``torch.Tensor``; ``as_np_ndarray()`` / ``as_nd_ndarray()`` wrap the same tensor, no copy.

Dtype rules follow MXNet 1.9.1's NumPy interface where it differs from NumPy:

* creation from Python numbers gives float32 (``np.array([1, 2])``, ``np.arange(3)``,
  ``np.full(2, 3)``); from a NumPy array, its dtype; ``dtype=int``/``float`` mean int64/float64;
* an array with a Python scalar keeps the array's dtype (the scalar is cast to it first, so an
  int32 array times 1.5 is an int32 array times 1); a bool array with a number gives float32;
* two arrays of different dtypes: an integer or bool array with a float array gives that float
  dtype; bool with an integer gives float32; two integer dtypes give the wider one (int32 at
  least); ``/`` of integers gives float32;
* math functions (``sqrt``, ``exp``, ...) keep an integer array's dtype and give float32 for bool;
  ``mean`` of integers is float32; ``sum``/``prod``/``max``/``cumsum`` keep the dtype.
"""
from __future__ import annotations

import numbers

import numpy as _onp
import torch

from ..base import MXNetError, MXNetValueError, to_torch_dtype
from ..context import Context, current_context
from ..ndarray import ndarray as _ndmod
from ..ndarray.ndarray import (NDArray, _run, _call_nograd, _indexed, _np_tensor,
                               _UNVERSIONED_WRITES)
from .. import autograd as _ag_mod

__all__ = ["ndarray", "array", "asarray", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "arange", "linspace", "logspace", "eye",
           "identity", "tri"]

_state = _ag_mod._state
_Tensor = torch.Tensor
_object_new = object.__new__
_wref = __import__("weakref").ref
_tracked_append = _ag_mod._tracked.append

# the torch dtype -> the numpy.dtype ``ndarray.dtype`` reports
_NP_DTYPE = {}


def _np_dtype(td):
    d = _NP_DTYPE.get(td)
    if d is None:
        if td is torch.bfloat16:
            d = _onp.dtype([("bfloat16", _onp.uint16)])
        else:
            d = _onp.dtype(torch.empty((), dtype=td).numpy().dtype)
        _NP_DTYPE[td] = d
    return d


def _torch_dtype(dtype, default=torch.float32):
    """torch dtype for a NumPy-interface ``dtype=`` argument (``int`` is int64, ``float``
    float64, as NumPy says; None the default)."""
    if dtype is None:
        return default
    if dtype is int:
        return torch.int64
    if dtype is float:
        return torch.float64
    if dtype is bool:
        return torch.bool
    try:
        return to_torch_dtype(dtype)
    except TypeError:
        pass
    try:
        # NumPy's spellings ('int', 'float', 'i4', np.dtype objects...)
        return to_torch_dtype(_onp.dtype(dtype))
    except TypeError:
        raise TypeError(f"data type {dtype!r} not understood") from None


def _wrap(t, ctx):
    """An ``ndarray`` around tensor ``t`` (no copy)."""
    a = _object_new(ndarray)
    a._t = t
    a._ctx = ctx
    a._ag = None
    if _ndmod._TRACK and t.requires_grad:
        _tracked_append(_wref(a))
    return a


def _same_seq(like, items):
    """``items`` as a sequence of ``like``'s type (named tuples such as NumPy 2's EighResult
    take their fields positionally)."""
    t = type(like)
    if t in (list, tuple):
        return t(items)
    if hasattr(like, "_fields"):
        return t(*items)
    try:
        return t(items)
    except TypeError:
        return tuple(items)


def _wrap_all(out, ctx):
    if isinstance(out, _Tensor):
        return _wrap(out, ctx)
    if isinstance(out, (tuple, list)):
        return _same_seq(out, [_wrap_all(o, ctx) for o in out])
    return out


def _ctx_arg(ctx=None, device=None):
    c = ctx if ctx is not None else device
    if c is None:
        return current_context()
    if isinstance(c, str):
        name, _, idx = c.partition(":")
        return Context(name if name != "cuda" else "gpu", int(idx or 0))
    if not isinstance(c, Context):
        raise MXNetError(f"ctx must be an mx.Context, got {type(c).__name__}")
    return c


def _ctx_of(*xs):
    for x in xs:
        if isinstance(x, NDArray):
            return x._ctx
        if isinstance(x, (list, tuple)):
            c = _ctx_of(*x)
            if c is not None:
                return c
    return None


def _from_py(obj, dtype, device):
    """Tensor for Python data (nested lists, numbers, NumPy arrays, arrays inside lists)."""
    if isinstance(obj, _onp.ndarray):
        td = _torch_dtype(dtype, None) if dtype is not None else None
        if obj.dtype == _onp.float64 and td is None:
            td = torch.float64
        return _np_tensor(obj, td, device) if td is not None else _np_tensor(obj, None, device)
    if isinstance(obj, (list, tuple)) and any(isinstance(o, NDArray) for o in obj):
        parts = [_from_py(o, dtype, device) if not isinstance(o, NDArray) else o._t.detach()
                 for o in obj]
        return torch.stack([p.to(device) for p in parts])
    a = _onp.asarray(obj)
    if dtype is None:
        # MXNet 1.9.1: Python data (numbers and bools alike) becomes float32
        td = torch.float32
    else:
        td = _torch_dtype(dtype)
    if a.dtype == object:
        raise TypeError(f"cannot make an array of {type(obj).__name__} {obj!r}")
    return torch.as_tensor(a, device=device).to(td)


def _as_tensor(x, device=None, what="input"):
    """The tensor behind an array argument (NumPy arrays and lists are converted)."""
    if isinstance(x, NDArray):
        if x.stype != "default":
            return x.tostype("default")._t
        return x._t
    if isinstance(x, (numbers.Number, _onp.generic)):
        return torch.as_tensor(x, device=device)
    if isinstance(x, (_onp.ndarray, list, tuple)):
        return _from_py(x, None, device or "cpu")
    raise TypeError(f"{what}: expected an mx.np.ndarray, got {type(x).__name__}")


class ndarray(NDArray):
    """An array with NumPy semantics, held in one ``torch.Tensor`` on a Context."""

    __slots__ = ()

    def __init__(self, data=None, ctx=None, dtype=None):  # noqa: D107 - rare direct use
        if isinstance(data, _Tensor):
            NDArray.__init__(self, data, ctx)
            return
        c = _ctx_arg(ctx)
        t = _from_py(data if data is not None else [], dtype, c.torch_device)
        NDArray.__init__(self, t, c)

    # ---------------------------------------------------------------- properties
    @property
    def dtype(self):
        return _np_dtype(self._t.dtype)

    @property
    def T(self):
        return self.transpose()

    @property
    def device(self):
        return self.context

    @property
    def itemsize(self):
        return self._t.element_size()

    @property
    def nbytes(self):
        return self._t.element_size() * self._t.numel()

    @property
    def strides(self):
        return tuple(s * self._t.element_size() for s in self._t.stride())

    # ---------------------------------------------------------------- conversion
    def as_np_ndarray(self):
        return self

    def as_nd_ndarray(self):
        """An ``mx.nd.NDArray`` over the same tensor (no copy)."""
        a = _object_new(NDArray)
        a._t = self._t
        a._ctx = self._ctx
        a._ag = self._ag
        return a

    def asnumpy(self):
        return NDArray.asnumpy(self)

    def item(self, *args):
        if args:
            return self.asnumpy().item(*args)
        if self._t.numel() != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self._t.detach().cpu().reshape(()).item()

    def tolist(self):
        return self.asnumpy().tolist()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        td = _torch_dtype(dtype)
        if td is self._t.dtype and not copy:
            return self
        from ._op import _to_dtype
        t = self._t
        if td is t.dtype:
            r = _run(torch.clone, t)
        elif td.is_floating_point or not (_state.recording and t.requires_grad):
            r = _run(t.to, td)
        else:   # an integer cast of a recorded value stays in the graph (as MXNet's)
            r = _to_dtype(t, td)
        return _wrap(r, self._ctx)

    def copy(self, order="C"):
        _c_order(order, "ndarray.copy")
        return _wrap(_run(torch.clone, self._t), self._ctx)

    def copyto(self, other):
        if isinstance(other, Context):
            return _wrap(self._t.detach().to(other.torch_device, copy=True), other)
        return NDArray.copyto(self, other)

    def as_in_context(self, context):
        if context == self.context:
            return self
        return _wrap(_run(self._t.to, context.torch_device, copy=True), context)

    as_in_ctx = as_in_context
    to_device = as_in_context

    def detach(self):
        return _wrap(self._t.detach(), self._ctx)

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        # MXNet's form: NumPy's repr, without the dtype for float32 and bool (its defaults)
        # and with it for every other dtype; the context when it is not the CPU
        a = self.asnumpy()
        body = _onp.array2string(a, separator=", ", prefix="array(")
        extra = ""
        if a.dtype not in (_onp.float32, _onp.bool_):
            extra += f", dtype={a.dtype}"
        if self._ctx.device_type != "cpu":
            extra += f", ctx={self._ctx}"
        return f"array({body}{extra})"

    def __str__(self):
        return str(self.asnumpy())

    def __format__(self, spec):
        if self._t.dim() == 0:
            return format(self.asnumpy()[()], spec)
        if spec:
            raise TypeError("Cannot format mxnet.numpy.ndarray with format_spec")
        return str(self)

    def __len__(self):
        if self._t.dim() == 0:
            raise TypeError("len() of unsized object")
        return self._t.shape[0]

    def __bool__(self):
        n = self._t.numel()
        if n == 1:
            return bool(self._t.item())
        if n == 0:
            return False
        raise ValueError("The truth value of an ndarray with more than one element is "
                         "ambiguous. Use a.any() or a.all()")

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self._t.is_floating_point() or self._t.numel() != 1 or self._t.dim() != 0 and \
                self._t.dtype is torch.bool:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._t.item())

    def __hash__(self):
        return id(self)

    def __reduce__(self):
        return (_rebuild_np, (self.asnumpy(), self._ctx.device_type, self._ctx.device_id))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from . import _interop
        return _interop.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from . import _interop
        return _interop.array_function(func, types, args, kwargs)

    # ---------------------------------------------------------------- operators
    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.subtract(self, other)

    def __rsub__(self, other):
        return _ops.subtract(other, self)

    def __mul__(self, other):
        return _ops.multiply(self, other)

    def __rmul__(self, other):
        return _ops.multiply(other, self)

    def __truediv__(self, other):
        return _ops.true_divide(self, other)

    def __rtruediv__(self, other):
        return _ops.true_divide(other, self)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __floordiv__(self, other):
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops.floor_divide(other, self)

    def __mod__(self, other):
        return _ops.mod(self, other)

    def __rmod__(self, other):
        return _ops.mod(other, self)

    def __pow__(self, other):
        return _ops.power(self, other)

    def __rpow__(self, other):
        return _ops.power(other, self)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(other, self)

    def __neg__(self):
        return _ops.negative(self)

    def __pos__(self):
        return self.copy()

    def __abs__(self):
        return _ops.absolute(self)

    def __invert__(self):
        return _ops.invert(self)

    def __and__(self, other):
        return _ops.bitwise_and(self, other)

    __rand__ = __and__

    def __or__(self, other):
        return _ops.bitwise_or(self, other)

    __ror__ = __or__

    def __xor__(self, other):
        return _ops.bitwise_xor(self, other)

    __rxor__ = __xor__

    def __lshift__(self, other):
        return _ops.left_shift(self, other)

    def __rshift__(self, other):
        return _ops.right_shift(self, other)

    def __eq__(self, other):
        if other is None:
            return False
        return _ops.equal(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return _ops.not_equal(self, other)

    def __lt__(self, other):
        return _ops.less(self, other)

    def __le__(self, other):
        return _ops.less_equal(self, other)

    def __gt__(self, other):
        return _ops.greater(self, other)

    def __ge__(self, other):
        return _ops.greater_equal(self, other)

    def _inplace_op(self, other, op):
        r = op(self, other)
        t = self._t
        if r._t.dtype is not t.dtype:
            r = r.astype(t.dtype)
        if _state.recording:
            if t.requires_grad:
                raise MXNetError("In-place operations (+=, -=, ...) on an array with an "
                                 "attached gradient are not supported while recording")
            if r._t.requires_grad:
                # the array takes the result's history
                self._t = r._t
                _ag_mod._track(self)
                return self
            t.copy_(r._t.expand_as(t) if r._t.shape != t.shape else r._t)
            return self
        if r._t.shape != t.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} "
                             f"doesn't match the broadcast shape {r.shape}")
        _UNVERSIONED_WRITES[0] += 1
        _call_nograd(t.data.copy_, r._t.detach())
        return self

    def __iadd__(self, other):
        return self._inplace_op(other, _ops.add)

    def __isub__(self, other):
        return self._inplace_op(other, _ops.subtract)

    def __imul__(self, other):
        return self._inplace_op(other, _ops.multiply)

    def __itruediv__(self, other):
        return self._inplace_op(other, _ops.true_divide)

    __idiv__ = __itruediv__

    def __ifloordiv__(self, other):
        return self._inplace_op(other, _ops.floor_divide)

    def __imod__(self, other):
        return self._inplace_op(other, _ops.mod)

    def __ipow__(self, other):
        return self._inplace_op(other, _ops.power)

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key):
        r = _indexed(self._t, _np_key(key))
        if r._is_view() and not r.is_contiguous():
            r = r.contiguous()
        return _wrap(r, self._ctx)

    def __setitem__(self, key, value):
        key = _np_key(key)
        if isinstance(value, (list, tuple)) or (isinstance(value, _onp.ndarray)):
            value = _onp.asarray(value)
        NDArray.__setitem__(self, key, value)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # ---------------------------------------------------------------- methods
    def reshape(self, *shape, order="C", **kwargs):
        if "newshape" in kwargs:
            shape = (kwargs.pop("newshape"),)
        if kwargs:
            raise TypeError(f"reshape() got unexpected arguments {sorted(kwargs)}")
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        return _ops.reshape(self, shape, order=order)

    def reshape_like(self, other):
        return _ops.reshape(self, other.shape)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)) or axes == (None,):
            axes = axes[0]
        return _ops.transpose(self, axes if axes else None)

    def flatten(self, order="C"):
        return _ops.reshape(self, (-1,)).copy()

    def ravel(self, order="C"):
        return _ops.ravel(self, order=order)

    def squeeze(self, axis=None):
        return _ops.squeeze(self, axis=axis)

    def expand_dims(self, axis):
        return _ops.expand_dims(self, axis)

    def swapaxes(self, axis1, axis2):
        return _ops.swapaxes(self, axis1, axis2)

    def broadcast_to(self, shape):
        return _ops.broadcast_to(self, shape)

    def repeat(self, repeats, axis=None):
        return _ops.repeat(self, repeats, axis=axis)

    def tile(self, reps):
        return _ops.tile(self, reps)

    def take(self, indices, axis=None, mode="raise"):
        return _ops.take(self, indices, axis=axis, mode=mode)

    def dot(self, b, out=None):
        return _ops.dot(self, b, out=out)

    def clip(self, min=None, max=None, out=None):  # noqa: A002 - NumPy's names
        return _ops.clip(self, min, max, out=out)

    def round(self, decimals=0, out=None):
        return _ops.round(self, decimals=decimals, out=out)

    def nonzero(self):
        return _ops.nonzero(self)

    def sort(self, axis=-1, kind=None, order=None):
        # NumPy sorts in place; MXNet's ndarray.sort returns the sorted array
        return _ops.sort(self, axis=axis)

    def argsort(self, axis=-1, kind=None, order=None):
        return _ops.argsort(self, axis=axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _ops.diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return _ops.trace(self, offset, axis1, axis2, dtype=dtype, out=out)

    def fill(self, value):
        self[...] = value

    def zeros_like(self):
        return _ops.zeros_like(self)

    def ones_like(self):
        return _ops.ones_like(self)

    def attach_grad(self, grad_req="write", stype=None):
        r = NDArray.attach_grad(self, grad_req, stype)
        ag = self._ag
        if ag is not None and ag.grad is not None and type(ag.grad) is NDArray:
            ag.grad.__class__ = ndarray
        return r

    @property
    def grad(self):
        ag = self._ag
        if ag is None or ag.grad is None:
            return None
        g = ag.grad
        if type(g) is NDArray:
            g.__class__ = ndarray
        return g


def _make_reduction_method(name):
    def method(self, *args, **kwargs):
        return getattr(_ops, name)(self, *args, **kwargs)
    method.__name__ = name
    method.__qualname__ = f"ndarray.{name}"
    return method


for _name in ("sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "all",
              "any", "cumsum", "ptp"):
    setattr(ndarray, _name, _make_reduction_method(_name))

def _rebuild_np(data, dev_type, dev_id):
    ctx = Context(dev_type, dev_id)
    return _wrap(torch.as_tensor(data).to(ctx.torch_device), ctx)


def _np_key(key):
    """NumPy index keys in the form neogluon's NDArray indexing takes (lists of ints as
    integer arrays, NumPy arrays as tensors)."""
    if type(key) is tuple:
        return tuple(_np_key_one(k) for k in key)
    return _np_key_one(key)


def _np_key_one(k):
    if isinstance(k, list):
        a = _onp.asarray(k)
        if a.dtype == object:
            raise IndexError(f"invalid index {k!r}")
        return _wrap(torch.as_tensor(a), current_context())
    if isinstance(k, _onp.ndarray):
        return _wrap(torch.as_tensor(k), current_context())
    if isinstance(k, _onp.integer):
        return int(k)
    return k


# ---------------------------------------------------------------------------- creation
def array(object, dtype=None, ctx=None, device=None):  # noqa: A002 - NumPy's name
    """An array with a copy of ``object`` (nested lists, numbers, NumPy or mx arrays)."""
    c = _ctx_arg(ctx, device)
    if isinstance(object, NDArray):
        t = object._t.detach()
        td = _torch_dtype(dtype, t.dtype)
        return _wrap(t.to(device=c.torch_device, dtype=td, copy=True), c)
    return _wrap(_from_py(object, dtype, c.torch_device), c)


def asarray(obj, dtype=None, ctx=None, device=None):
    """``obj`` as an array (itself when it already is one of that dtype)."""
    if isinstance(obj, ndarray) and (dtype is None or _torch_dtype(dtype) is obj._t.dtype):
        return obj
    if isinstance(obj, NDArray) and dtype is None:
        return obj.as_np_ndarray()
    return array(obj, dtype=dtype, ctx=ctx, device=device)


def _shape_arg(shape):
    if isinstance(shape, (int, _onp.integer)):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None


def _c_order(order, fname):
    if order != "C":
        raise NotImplementedError(f"{fname} only supports order='C', while received {order}")


def _check_shape(shape, fname):
    if any(s < 0 for s in shape):
        raise ValueError(f"{fname}: negative dimensions are not allowed (shape {shape})")


def _create(fn, fname, shape, dtype, order, ctx, device):
    _c_order(order, fname)
    c = _ctx_arg(ctx, device)
    shape = _shape_arg(shape)
    _check_shape(shape, fname)
    return _wrap(fn(shape, dtype=_torch_dtype(dtype), device=c.torch_device), c)


def zeros(shape, dtype=None, order="C", ctx=None, device=None):
    """An array of zeros (float32 unless ``dtype``)."""
    return _create(torch.zeros, "zeros", shape, dtype, order, ctx, device)


def ones(shape, dtype=None, order="C", ctx=None, device=None):
    """An array of ones (float32 unless ``dtype``)."""
    return _create(torch.ones, "ones", shape, dtype, order, ctx, device)


def empty(shape, dtype=None, order="C", ctx=None, device=None):
    """An uninitialised array (float32 unless ``dtype``)."""
    return _create(torch.empty, "empty", shape, dtype, order, ctx, device)


def full(shape, fill_value, dtype=None, order="C", ctx=None, device=None, out=None):
    _c_order(order, "full")
    c = _ctx_arg(ctx, device)
    shape = _shape_arg(shape)
    _check_shape(shape, "full")
    if isinstance(fill_value, NDArray):
        td = _torch_dtype(dtype, fill_value._t.dtype)
        r = _wrap(fill_value._t.detach().to(c.torch_device, td).expand(shape).clone(), c)
    else:
        if dtype is None and isinstance(fill_value, bool):
            td = torch.bool
        else:
            td = _torch_dtype(dtype)
        r = _wrap(torch.full(shape, fill_value, dtype=td, device=c.torch_device), c)
    if out is not None:
        out[...] = r
        return out
    return r


def _like(fn):
    def like(a, dtype=None, order="C", subok=True, shape=None, ctx=None, device=None,
             out=None):
        t = _as_tensor(a)
        c = _ctx_arg(ctx, device) if (ctx or device) else (_ctx_of(a) or current_context())
        td = _torch_dtype(dtype, t.dtype)
        r = _wrap(fn(tuple(t.shape) if shape is None else _shape_arg(shape), td,
                     c.torch_device), c)
        if out is not None:
            out[...] = r
            return out
        return r
    return like


zeros_like = _like(lambda s, d, dev: torch.zeros(s, dtype=d, device=dev))
ones_like = _like(lambda s, d, dev: torch.ones(s, dtype=d, device=dev))
empty_like = _like(lambda s, d, dev: torch.empty(s, dtype=d, device=dev))
zeros_like.__name__, ones_like.__name__, empty_like.__name__ = "zeros_like", "ones_like", \
    "empty_like"


def full_like(a, fill_value, dtype=None, order="C", subok=True, shape=None, ctx=None,
              device=None, out=None):
    t = _as_tensor(a)
    c = _ctx_arg(ctx, device) if (ctx or device) else (_ctx_of(a) or current_context())
    td = _torch_dtype(dtype, t.dtype)
    r = _wrap(torch.full(tuple(t.shape) if shape is None else _shape_arg(shape), fill_value,
                         dtype=td, device=c.torch_device), c)
    if out is not None:
        out[...] = r
        return out
    return r


def arange(start, stop=None, step=1, dtype=None, ctx=None, device=None):
    c = _ctx_arg(ctx, device)
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be 0")
    td = _torch_dtype(dtype)
    vals = _onp.arange(start, stop, step, dtype=_onp.float64 if td.is_floating_point
                       else _onp.int64)
    return _wrap(torch.as_tensor(vals).to(device=c.torch_device, dtype=td), c)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None,
             device=None):
    c = _ctx_arg(ctx, device)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    vals, step = _onp.linspace(start, stop, num, endpoint=endpoint, retstep=True)
    r = _wrap(torch.as_tensor(vals).to(device=c.torch_device, dtype=_torch_dtype(dtype)), c)
    return (r, step) if retstep else r


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None,
             device=None):
    c = _ctx_arg(ctx, device)
    vals = _onp.logspace(start, stop, num, endpoint=endpoint, base=base)
    return _wrap(torch.as_tensor(vals).to(device=c.torch_device, dtype=_torch_dtype(dtype)), c)


def eye(N, M=None, k=0, dtype=None, ctx=None, device=None, **kwargs):
    c = _ctx_arg(ctx, device)
    if N < 0 or (M is not None and M < 0):
        raise MXNetValueError(f"eye: negative dimensions are not allowed (N={N}, M={M})")
    vals = _onp.eye(N, M, k)
    return _wrap(torch.as_tensor(vals).to(device=c.torch_device, dtype=_torch_dtype(dtype)), c)


def identity(n, dtype=None, ctx=None, device=None):
    return eye(n, dtype=dtype, ctx=ctx, device=device)


def tri(N, M=None, k=0, dtype=None, ctx=None, device=None):
    c = _ctx_arg(ctx, device)
    vals = _onp.tri(N, M, k)
    return _wrap(torch.as_tensor(vals).to(device=c.torch_device, dtype=_torch_dtype(dtype)), c)


def _np_tree(x):
    """``x`` with every plain ``nd.NDArray`` (in nested lists/tuples) as an mx.np array over
    the same tensor and autograd record."""
    if type(x) is NDArray:
        return _as_np_ndarray(x)
    if isinstance(x, (list, tuple)):
        return _same_seq(x, [_np_tree(v) for v in x])
    return x


def _nd_tree(x):
    """``x`` with every mx.np array (in nested lists/tuples) as an ``nd.NDArray`` view."""
    if type(x) is ndarray:
        return x.as_nd_ndarray()
    if isinstance(x, (list, tuple)):
        return _same_seq(x, [_nd_tree(v) for v in x])
    return x


# NDArray.as_np_ndarray: the same tensor as an mx.np array
def _as_np_ndarray(self):
    a = _object_new(ndarray)
    a._t = self._t
    a._ctx = self._ctx
    a._ag = self._ag
    return a


NDArray.as_np_ndarray = _as_np_ndarray
_ndmod._DENSE_TYPES.add(ndarray)   # always default storage, as NDArray

from . import _op as _ops  # noqa: E402  (the functions the operators call)


def _np_ndarray_cls(handle, writable=True, stype=0):
    """MXNet's constructor of an mx.np array from a backend handle. Here the handle is what
    holds the data: an NDArray (viewed as mx.np.ndarray, sharing its storage) or a
    torch.Tensor. Only the default storage exists in NumPy mode (``stype`` 0), as in MXNet."""
    import torch as _torch
    from ..base import MXNetError as _Err
    if stype not in (0, -1, None, "default"):
        raise _Err(f"_np_ndarray_cls: only the default storage type is supported in NumPy "
                   f"mode, got stype={stype}")
    if isinstance(handle, NDArray):
        return handle.as_np_ndarray() if not isinstance(handle, ndarray) else handle
    if isinstance(handle, _torch.Tensor):
        dev = handle.device
        return _wrap(handle, Context("gpu", dev.index or 0) if dev.type == "cuda"
                     else Context("cpu", 0))
    raise TypeError(f"_np_ndarray_cls: handle must be an NDArray or a torch.Tensor, got "
                    f"{type(handle).__name__}")
