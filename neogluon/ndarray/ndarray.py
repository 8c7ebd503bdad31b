"""NDArray: one torch.Tensor and the Context it belongs to.

The class is deliberately thin (``__slots__``, no checks that torch already does) so that a
training loop written on NDArrays costs about what the same loop costs in plain torch.

Grad-mode rule: outside ``autograd.record()`` no graph is built. Ops whose inputs require
grad (attached variables) then run with torch's grad mode off; ops on plain arrays run as is.
"""
from __future__ import annotations

import ctypes
import math
import numbers
import warnings
import weakref

import numpy as np
import torch

from .. import autograd as _ag_mod
from ..base import MXNetError, MXNetValueError, to_numpy_dtype, to_torch_dtype
from ..base import bfloat16 as _np_bfloat16
from ..context import Context, current_context, context_of_device
from . import _failure

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "linspace", "eye",
           "from_torch",
           "to_torch", "from_numpy", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write",
           "waitall", "concat", "stack"]

# MXNet's storage type ids (programs and tests import this table from here).
_STORAGE_TYPE_STR_TO_ID = {"_undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}

# The builtin slice, under the name MXNet's ndarray module gives it (its ``slice`` is the op).
py_slice = slice

_state = _ag_mod._state
_UNVERSIONED_WRITES = _ag_mod._UNVERSIONED_WRITES
_object_new = object.__new__
_is_grad_enabled = torch.is_grad_enabled
_set_grad_enabled = torch._C._set_grad_enabled
_Tensor = torch.Tensor
_wref = weakref.ref
# True while some thread records (autograd keeps it so); arrays made then whose tensor has a
# history go into autograd's _tracked (weakly) for the lifetimes rule, see autograd._consume.
_TRACK = False
_tracked_append = _ag_mod._tracked.append
_ag_mod._TRACK_HOLDERS.append(globals())

# MXNet's dtype codes (the ``__dtype__`` attribute of symbol variables, the type_flag of its
# files), under MXNet's names: code readers such as Module's executor group use them.
_DTYPE_NP_TO_MX = {None: -1, np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3,
                   np.int32: 4, np.int8: 5, np.int64: 6, np.bool_: 7, _np_bfloat16: 12}
_DTYPE_MX_TO_NP = {v: k for k, v in _DTYPE_NP_TO_MX.items()}


def _new(t: torch.Tensor, ctx: Context) -> "NDArray":
    """Wrap a tensor without copying (internal fast constructor)."""
    a = _object_new(NDArray)
    a._t = t
    a._ctx = ctx
    a._ag = None
    if _TRACK and t.requires_grad:
        # a recorded result: after a backward without retain_graph that reaches it, it
        # becomes a constant (autograd._consume)
        _tracked_append(_wref(a))
    return a


def _call_nograd(fn, *args, **kwargs):
    prev = _is_grad_enabled()
    _set_grad_enabled(False)
    try:
        return fn(*args, **kwargs)
    finally:
        _set_grad_enabled(prev)


def _run(fn, *args, **kwargs):
    """Run a torch function under neogluon's grad-mode rule."""
    if _state.recording:
        return fn(*args, **kwargs)
    r = _call_nograd(fn, *args, **kwargs)
    # A view of a variable made with grad mode off still says requires_grad; cut it loose.
    if type(r) is _Tensor and r.requires_grad:
        return r.detach()
    return r


def _shape_str(shape):
    return "x".join(str(s) for s in shape)


# id -> array, for the arrays handed out as ctypes handles (NDArray._as_parameter_)
_HANDLES = weakref.WeakValueDictionary()


class _BF16Trunc(torch.autograd.Function):
    """float -> bfloat16 keeping the upper 16 bits of the float32 value (MXNet's Cast); the
    gradient passes through as a plain cast's."""

    @staticmethod
    def forward(ctx, t):
        ctx.src = t.dtype
        f = t.detach().to(torch.float32).contiguous()
        return (f.view(torch.int32) >> 16).to(torch.int16).view(torch.bfloat16)

    @staticmethod
    def backward(ctx, g):
        return g.to(ctx.src)


class NDArray:
    """An n-dimensional array on a Context, backed by one ``torch.Tensor``.

    Create arrays with :func:`neogluon.nd.array`, ``nd.zeros`` and friends. The tensor is
    reachable, without a copy, through :func:`neogluon.nd.to_torch`.
    """

    # _home: set (True) only on arrays made on cpu_pinned/cpu_shared by a creation function, a
    # copy or a view; left unset everywhere else (see ``context``).
    __slots__ = ("_t", "_ctx", "_ag", "_home", "__weakref__")
    __array_priority__ = 1000.0

    # ------------------------------------------------------------------ construction
    def __init__(self, data=None, ctx=None, dtype=None, writable=True):
        if isinstance(data, torch.Tensor):
            t = data
        elif isinstance(data, ctypes.c_void_p):
            # MXNet's NDArray(handle): the array the handle was taken from (_as_parameter_)
            src = _HANDLES.get(data.value or 0)
            if src is None:
                raise MXNetError(f"NDArray: {data!r} is not the handle of a live NDArray")
            self._t, self._ctx, self._ag = src._t, src._ctx, None
            if getattr(src, "_home", False):
                self._home = True
            return
        elif data is None:
            # MXNet pickles an array as ``NDArray(None)`` followed by ``__setstate__``: an
            # empty placeholder that the state fills in.
            t = torch.empty((0,), dtype=to_torch_dtype(dtype))
        else:
            # A copy: the array never writes into the caller's numpy data, and a read-only
            # source (np.broadcast_to, a memmap opened 'r') raises no torch warning.
            t = torch.tensor(np.asarray(data), dtype=to_torch_dtype(dtype))
        ctx = ctx or (context_of_device(t.device) if t.device.type == "cuda" else current_context())
        self._t = t if t.device == ctx.torch_device else t.to(ctx.torch_device)
        self._ctx = ctx
        self._ag = None
        if ctx.device_typeid > 2:
            self._home = True

    @property
    def _as_parameter_(self):
        """The array as a ctypes argument (``ctypes.cast(arr, NDArrayHandle)``): a value
        that ``NDArray(handle)`` turns back into this array while it lives."""
        _HANDLES[id(self)] = self
        return id(self)

    # ------------------------------------------------------------------ properties
    @property
    def shape(self):
        return tuple(self._t.shape)

    @property
    def dtype(self):
        return to_numpy_dtype(self._t.dtype)

    @property
    def size(self):
        return self._t.numel()

    @property
    def ndim(self):
        return self._t.dim()

    @property
    def context(self):
        """The Context of this array.

        As in MXNet, only arrays created on ``cpu_pinned(i)``/``cpu_shared(i)`` (and copies,
        reshapes and contiguous slices of them) report that context; what operators compute
        from them lives in ordinary memory and reports ``cpu(i)``.
        """
        ctx = self._ctx
        if ctx.device_typeid > 2 and not getattr(self, "_home", False):
            return _plain_cpu(ctx.device_id)
        return ctx

    ctx = context

    @property
    def stype(self):
        return "default"

    @property
    def T(self):
        if self._t.dim() < 2:
            return self
        t = self._t
        return _new(_fresh(_run(t.permute, *range(t.dim() - 1, -1, -1)), t), self._ctx)

    @property
    def handle(self):
        return self._t

    @property
    def writable(self):
        return True

    # --------------------------------------------------------------- autograd
    @property
    def grad(self):
        ag = self._ag
        return None if ag is None else ag.grad

    @property
    def _fresh_grad(self):
        ag = self._ag
        return ag is not None and ag.fresh

    @_fresh_grad.setter
    def _fresh_grad(self, value):
        if self._ag is not None:
            self._ag.fresh = bool(value)

    def attach_grad(self, grad_req="write", stype=None):
        """Allocate a gradient buffer and make this array a variable for ``backward``."""
        if stype not in (None, "default"):
            from .sparse import _attach_sparse_grad  # noqa: WPS433 - optional layer
            return _attach_sparse_grad(self, grad_req, stype)
        _ag_mod._attach(self, grad_req)
        return None

    def detach(self):
        """A new array with the same data, cut from the recorded graph."""
        return _keep_home(self, _new(self._t.detach(), self._ctx))

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Compute the gradients of this array with respect to attached variables."""
        _ag_mod.backward([self], None if out_grad is None else [out_grad],
                         retain_graph=retain_graph, train_mode=train_mode)

    # ------------------------------------------------------------------ conversion
    def asnumpy(self):
        """A numpy copy of the data."""
        t = self._t
        if type(t) is not _Tensor:
            _failure.check(t)  # an operator error MXNet's engine reports here
        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype is torch.bfloat16:
            # as MXNet 1.9.1: the raw bits, in its structured bfloat16 dtype (numpy has none);
            # .astype('float32').asnumpy() gives the values
            return t.contiguous().view(torch.int16).numpy().copy().view(_np_bfloat16)
        return t.numpy().copy()

    def asscalar(self):
        """The value of a one-element array, as a numpy scalar."""
        if self._t.numel() != 1:
            raise ValueError(f"The current array is not a scalar: shape {self.shape}")
        return self.asnumpy().reshape(())[()]

    def item(self):
        """The value of a one-element array (as ``asscalar``)."""
        return self.asscalar()

    def astype(self, dtype, copy=True):
        """This array converted to ``dtype`` (a copy unless ``copy=False`` and equal)."""
        td = to_torch_dtype(dtype)
        if td is self._t.dtype and not copy:
            return self
        if td is torch.bfloat16 and self._t.dtype is not torch.bfloat16:
            # MXNet 1.9.1's Cast to bfloat16 truncates the float32 bits (amp_cast rounds)
            return _keep_home(self, _new(_run(_BF16Trunc.apply, self._t), self._ctx))
        return _keep_home(self, _new(_run(self._t.to, td, copy=True), self._ctx))

    def copy(self):
        """A deep copy on the same context."""
        return _keep_home(self, _new(_run(torch.clone, self._t), self._ctx))

    def copyto(self, other):
        """Copy into another array (in place) or onto a Context (a new array)."""
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.stype != "default":
                from .sparse import _copy_into
                return _copy_into(self, other)
            if other.shape != self.shape:
                raise MXNetError(f"copyto: shape mismatch, source {self.shape} and "
                                 f"target {other.shape}")
            if _state.recording:
                dst = other._t
            else:
                dst = other._t.data
                _UNVERSIONED_WRITES[0] += 1
            _call_nograd(dst.copy_, self._t.detach())
            return other
        if isinstance(other, Context):
            t = self._t.detach().to(other.torch_device, copy=True)
            return _new_on(t, other)
        raise TypeError(f"copyto does not support type {type(other).__name__}")

    def as_in_context(self, context):
        """This array on ``context`` (itself if it is there already)."""
        if context == self.context:
            return self
        return _new_on(_run(self._t.to, context.torch_device, copy=True), context)

    as_in_ctx = as_in_context

    def tostype(self, stype):
        """This array in storage type ``stype`` ('default', 'row_sparse' or 'csr')."""
        if stype == "default":
            return self
        from . import sparse
        return sparse.cast_storage(self, stype)

    def wait_to_read(self):
        """Block until pending work on this array has finished; raise the error of a failed
        operator it depends on, as MXNet does."""
        if type(self._t) is not _Tensor:
            _failure.check(self._t)
        if self._t.device.type == "cuda":
            torch.cuda.synchronize(self._t.device)

    wait_to_write = wait_to_read

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def __dlpack__(self, stream=None):
        return self._t.detach().__dlpack__()

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()

    def __getstate__(self):
        """``{'handle': bytes}``: the array as one record of MXNet's binary format (what
        MXNet's ``__getstate__`` gives)."""
        from .io import _record
        return {"handle": bytearray(_record(self, "__getstate__"))}

    def __setstate__(self, state):
        """Become the array in ``state`` (from ``__getstate__``, MXNet's included); an array
        saved on a GPU loads on the CPU when there is none."""
        from .io import _load_record
        handle = state.get("handle") if isinstance(state, dict) else None
        if handle is None:
            raise MXNetError("__setstate__: expected a dict with the array's 'handle' bytes")
        src = _load_record(bytes(handle))
        self._t = src._t
        self._ctx = src._ctx
        self._ag = None

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), str(self._t.dtype).split(".")[1],
                           self._ctx.device_type, self._ctx.device_id))

    def __len__(self):
        if self._t.dim() == 0:
            raise TypeError("len() of a 0-d array")
        return self._t.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        n = self._t.numel()
        if n == 0:
            return False
        if n == 1:
            return bool(self._t.item())
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    def __float__(self):
        return float(self.asscalar())

    def __int__(self):
        return int(self.asscalar())

    def __index__(self):
        if self._t.is_floating_point() or self._t.numel() != 1:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._t.item())

    def __hash__(self):
        return id(self)

    def __repr__(self):
        body = str(self.asnumpy())
        return f"\n{body}\n<{type(self).__name__} {_shape_str(self.shape)} @{self.context}>"

    __str__ = __repr__

    # ------------------------------------------------------------------ arithmetic
    def _operand(self, other):
        if type(other) is NDArray or (isinstance(other, NDArray) and
                                      other.stype == "default"):
            # (dense subclasses too: the arrays hybridize captures a forward pass with)
            o = other._t
            if o.dtype is not self._t.dtype:
                raise MXNetError(
                    f"dtype mismatch: {self.dtype.__name__} array with shape {self.shape} and "
                    f"{other.dtype.__name__} array with shape {other.shape}; cast one with "
                    "astype() first")
            return o
        if isinstance(other, (int, float, bool)):
            # MXNet casts a scalar to the array's dtype first: int32 array * 1.5 == * 1.
            if type(other) is float and not self._t.is_floating_point():
                return int(other)
            return other
        if isinstance(other, NDArray):  # sparse arrays and subclasses
            return other.tostype("default")._t
        if isinstance(other, np.ndarray):
            return _np_tensor(other, self._t.dtype, self._t.device)
        if isinstance(other, numbers.Number):
            v = other.item() if hasattr(other, "item") else other
            if isinstance(v, float) and not self._t.is_floating_point():
                return int(v)
            return v
        return None

    def _binary(self, other, fn):
        t = self._t
        o = self._operand(other)
        if o is None:
            return NotImplemented
        try:
            if _state.recording or not (t.requires_grad or (type(o) is _Tensor and o.requires_grad)):
                r = fn(t, o)
            else:
                r = _call_nograd(fn, t, o)
        except RuntimeError as err:
            raise _shape_error(fn, self, other, err) from None
        if r.dtype is not t.dtype:
            r = r.to(t.dtype)  # int ** int scalar and friends stay in the array's dtype
        return _new(r, self._ctx)

    def _rbinary(self, other, fn):
        o = self._operand(other)
        if o is None:
            return NotImplemented
        t = self._t
        if type(o) is not _Tensor:
            o = torch.tensor(o, dtype=t.dtype, device=t.device)
        try:
            if _state.recording or not (t.requires_grad or o.requires_grad):
                r = fn(o, t)
            else:
                r = _call_nograd(fn, o, t)
        except RuntimeError as err:
            raise _shape_error(fn, other, self, err) from None
        if r.dtype is not t.dtype:
            r = r.to(t.dtype)
        return _new(r, self._ctx)

    def _inplace(self, other, fn):
        o = self._operand(other)
        if o is None:
            return NotImplemented
        t = self._t
        if _state.recording and type(o) is _Tensor and o.requires_grad and not t.requires_grad:
            raise MXNetError(_INPLACE_MSG + " (an operand needs a gradient)")
        if not _state.recording:
            # Outside record() (or under pause()) the write bypasses the version counter that
            # torch's autograd checks: as in MXNet, a recorded graph that saved this array reads
            # the new values when backward() runs, instead of failing.
            _UNVERSIONED_WRITES[0] += 1
            try:
                if t.requires_grad or (type(o) is _Tensor and o.requires_grad):
                    _call_nograd(fn, t.data, o)
                else:
                    fn(t.data, o)
            except RuntimeError as err:
                raise _shape_error(fn, self, other, err) from None
        elif t.requires_grad:
            raise MXNetError("In-place operations (+=, -=, x[:]=, ...) on a variable with "
                             "an attached gradient are not supported while recording")
        else:
            try:
                fn(t, o)
            except RuntimeError as err:
                raise _shape_error(fn, self, other, err) from None
        return self

    # The four common operators have a fast path (same-dtype arrays, or a Python scalar that
    # needs no cast); everything else, including every error, goes through _binary /
    # _rbinary. Outside record() a result that picked up a graph (a variable's input) is
    # detached after the fact, which is cheaper than checking both inputs first.
    def __add__(self, other):
        t = self._t
        if type(other) is NDArray:
            o = other._t
            if o.dtype is t.dtype:
                try:
                    r = t + o
                except RuntimeError:
                    return self._binary(other, torch.add)
                a = _object_new(NDArray)
                a._ctx = self._ctx
                a._ag = None
                if r.requires_grad:
                    if not _state.recording:
                        r = r.detach()  # a variable outside record(): no graph is kept
                    elif _TRACK:
                        _tracked_append(_wref(a))  # see autograd._consume
                a._t = r
                return a
        elif (type(other) is int or (type(other) is float and t.is_floating_point())) and (
                not t.requires_grad or _state.recording):
            try:
                r = t + other
            except RuntimeError:
                return self._binary(other, torch.add)
            a = _object_new(NDArray)
            a._t = r
            a._ctx = self._ctx
            a._ag = None
            if _TRACK and r.requires_grad:
                _tracked_append(_wref(a))
            return a
        return self._binary(other, torch.add)

    __radd__ = __add__

    def __sub__(self, other):
        t = self._t
        if type(other) is NDArray:
            o = other._t
            if o.dtype is t.dtype:
                try:
                    r = t - o
                except RuntimeError:
                    return self._binary(other, torch.sub)
                a = _object_new(NDArray)
                a._ctx = self._ctx
                a._ag = None
                if r.requires_grad:
                    if not _state.recording:
                        r = r.detach()  # a variable outside record(): no graph is kept
                    elif _TRACK:
                        _tracked_append(_wref(a))  # see autograd._consume
                a._t = r
                return a
        elif (type(other) is int or (type(other) is float and t.is_floating_point())) and (
                not t.requires_grad or _state.recording):
            try:
                r = t - other
            except RuntimeError:
                return self._binary(other, torch.sub)
            a = _object_new(NDArray)
            a._t = r
            a._ctx = self._ctx
            a._ag = None
            if _TRACK and r.requires_grad:
                _tracked_append(_wref(a))
            return a
        return self._binary(other, torch.sub)

    def __rsub__(self, other):
        t = self._t
        if (type(other) is int or (type(other) is float and t.is_floating_point())) and (
                not t.requires_grad or _state.recording):
            try:
                r = other - t
            except RuntimeError:
                return self._rbinary(other, torch.sub)
            a = _object_new(NDArray)
            a._t = r
            a._ctx = self._ctx
            a._ag = None
            if _TRACK and r.requires_grad:
                _tracked_append(_wref(a))
            return a
        return self._rbinary(other, torch.sub)

    def __mul__(self, other):
        t = self._t
        if type(other) is NDArray:
            o = other._t
            if o.dtype is t.dtype:
                try:
                    r = t * o
                except RuntimeError:
                    return self._binary(other, torch.mul)
                a = _object_new(NDArray)
                a._ctx = self._ctx
                a._ag = None
                if r.requires_grad:
                    if not _state.recording:
                        r = r.detach()  # a variable outside record(): no graph is kept
                    elif _TRACK:
                        _tracked_append(_wref(a))  # see autograd._consume
                a._t = r
                return a
        elif (type(other) is int or (type(other) is float and t.is_floating_point())) and (
                not t.requires_grad or _state.recording):
            try:
                r = t * other
            except RuntimeError:
                return self._binary(other, torch.mul)
            a = _object_new(NDArray)
            a._t = r
            a._ctx = self._ctx
            a._ag = None
            if _TRACK and r.requires_grad:
                _tracked_append(_wref(a))
            return a
        return self._binary(other, torch.mul)

    __rmul__ = __mul__

    def __truediv__(self, other):
        t = self._t
        if not t.is_floating_point():
            return self._binary(other, _int_div)
        if type(other) is NDArray:
            o = other._t
            if o.dtype is t.dtype:
                try:
                    r = t / o
                except RuntimeError:
                    return self._binary(other, torch.div)
                a = _object_new(NDArray)
                a._ctx = self._ctx
                a._ag = None
                if r.requires_grad:
                    if not _state.recording:
                        r = r.detach()  # a variable outside record(): no graph is kept
                    elif _TRACK:
                        _tracked_append(_wref(a))  # see autograd._consume
                a._t = r
                return a
        elif (type(other) is int or type(other) is float) and (
                not t.requires_grad or _state.recording):
            try:
                r = t / other
            except RuntimeError:
                return self._binary(other, torch.div)
            a = _object_new(NDArray)
            a._t = r
            a._ctx = self._ctx
            a._ag = None
            if _TRACK and r.requires_grad:
                _tracked_append(_wref(a))
            return a
        return self._binary(other, torch.div)

    def __rtruediv__(self, other):
        if not self._t.is_floating_point():
            return self._rbinary(other, _int_div)
        return self._rbinary(other, torch.div)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __floordiv__(self, other):
        return self._binary(other, torch.floor_divide)

    def __rfloordiv__(self, other):
        return self._rbinary(other, torch.floor_divide)

    # MXNet's % takes the divisor's sign, as Python's does.
    def __mod__(self, other):
        return self._binary(other, mx_mod)

    def __rmod__(self, other):
        return self._rbinary(other, mx_mod)

    def __pow__(self, other):
        return self._binary(other, torch.pow)

    def __rpow__(self, other):
        return self._rbinary(other, torch.pow)

    def __neg__(self):
        return _new(_run(torch.neg, self._t), self._ctx)

    def __pos__(self):
        return self

    def __abs__(self):
        return _new(_run(torch.abs, self._t), self._ctx)

    def __iadd__(self, other):
        return self._inplace(other, _Tensor.add_)

    def __isub__(self, other):
        return self._inplace(other, _Tensor.sub_)

    def __imul__(self, other):
        return self._inplace(other, _Tensor.mul_)

    def __itruediv__(self, other):
        # an integer array keeps its dtype: MXNet divides and truncates, as ``x / y`` does
        return self._inplace(other, _Tensor.div_ if self._t.is_floating_point() else _idiv_trunc)

    __idiv__ = __itruediv__

    def __imod__(self, other):
        return self._inplace(other, _imod)

    # Comparisons return 0/1 in the array's own dtype, as MXNet does.
    def _compare(self, other, fn):
        o = self._operand(other)
        if o is None:
            return NotImplemented
        try:
            r = fn(self._t.detach(), o.detach() if type(o) is _Tensor else o)
        except RuntimeError as err:
            raise _shape_error(fn, self, other, err) from None
        return _new(r.to(self._t.dtype), self._ctx)

    def __eq__(self, other):
        if other is None:
            return False
        return self._compare(other, torch.eq)

    def __ne__(self, other):
        if other is None:
            return True
        return self._compare(other, torch.ne)

    def __gt__(self, other):
        return self._compare(other, torch.gt)

    def __ge__(self, other):
        return self._compare(other, torch.ge)

    def __lt__(self, other):
        return self._compare(other, torch.lt)

    def __le__(self, other):
        return self._compare(other, torch.le)

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, key):
        t = self._t
        tk = type(key)
        if (tk is int or (tk is slice and key.step is None)) and not t.requires_grad:
            # Fast path for x[i] and x[a:b] on a plain array.
            try:
                r = t[key]
            except IndexError:
                pass  # the general path below words the error
            else:
                a = _object_new(NDArray)
                a._t = r.reshape(1) if r.dim() == 0 else r
                a._ctx = self._ctx
                a._ag = None
                if self._ctx.device_typeid > 2:
                    _keep_home(self, a)  # a contiguous view: MXNet keeps the context
                return a
        r = _indexed(t, key)
        if r.dim() == 0:
            r = r.reshape(1)  # MXNet 1.x has no 0-d arrays: x[i] of a vector has shape (1,)
        elif r._is_view() and not r.is_contiguous():
            # MXNet gives a view only of a contiguous block; a strided one is a copy, so
            # writing into it leaves this array as it is.
            r = r.contiguous()
        a = _new(r, self._ctx)
        if self._ctx.device_typeid > 2 and r._is_view() and r.is_contiguous():
            _keep_home(self, a)  # MXNet keeps the context for contiguous views only
        return a

    def __setitem__(self, key, value):
        t = self._t
        k, flips = _keyed(t, key)
        if flips:
            # Write through the positions the key selects: torch has no view with negative
            # steps to assign into.
            pos = torch.arange(t.numel(), device=t.device).reshape(t.shape).flip(flips)[k]
            t, k = t.view(-1), pos
        value_in_graph = False
        if isinstance(value, NDArray):
            v = value._t
            value_in_graph = v.requires_grad
            if v.dtype is not t.dtype:
                v = v.to(t.dtype)
            if v.device != t.device:
                v = v.to(t.device)
            if v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr():
                # a view of the same array (``z[1:3] = z[0:2]``): read it before writing,
                # as numpy does (MXNet 1.9.1 copies element by element over the overlap and
                # gives [0, 0, 0, 3] for z = arange(4) there)
                v = v.clone()
        elif isinstance(value, (int, float, bool)):
            v = value
        elif isinstance(value, np.generic):
            v = value.item()
        else:
            v = _np_tensor(np.asarray(value), t.dtype, t.device)
        if _state.recording:
            if t.requires_grad:
                raise MXNetError("In-place assignment to a variable with an attached gradient is "
                                 "not supported while recording")
            if value_in_graph:
                if not _whole_key(key) or not t.is_floating_point():
                    # (an integer array cannot carry the value's gradient either)
                    raise MXNetError(_INPLACE_MSG + f" (x[{_key_repr(key)}] = a value that "
                                     "needs a gradient)")
                _ag_mod._track(self)  # the array takes the value's history
        try:
            if not _state.recording:
                # As in _inplace: no version bump, so a recorded graph that saved this array
                # sees the new values at backward() (MXNet's behaviour) instead of failing.
                _UNVERSIONED_WRITES[0] += 1
                if t.requires_grad or (type(v) is _Tensor and v.requires_grad):
                    _call_nograd(t.data.__setitem__, k, v)
                else:
                    t.data[k] = v
            elif t.requires_grad:
                _call_nograd(t.__setitem__, k, v)
            else:
                t[k] = v
        except IndexError as err:
            raise _index_error(key, self.shape, err) from None
        except RuntimeError as err:
            try:
                target = tuple(t[k].shape)
            except (IndexError, RuntimeError):
                target = "?"
            raise MXNetValueError(
                f"cannot assign a value of shape {tuple(getattr(v, 'shape', ()))} to a region "
                f"of shape {target} of an array with shape {self.shape}: {err}") from None

    # ------------------------------------------------------------------ shape ops
    def reshape(self, *shape, **kwargs):
        """Reshape, with MXNet's special codes 0, -1, -2, -3, -4 and ``reverse``."""
        reverse = kwargs.pop("reverse", False)
        if "shape" in kwargs:
            shape = kwargs.pop("shape")
        elif len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        if kwargs:
            raise TypeError(f"reshape got unexpected arguments {sorted(kwargs)}")
        target = infer_reshape(self.shape, tuple(shape), reverse)
        return _keep_home(self, _new(_run(self._t.reshape, target), self._ctx))

    def reshape_like(self, *args, **kwargs):
        """This array reshaped to the shape of ``rhs`` (or a range of its axes; see
        ``nd.reshape_like``)."""
        from .ops import reshape_like
        return reshape_like(self, *args, **kwargs)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether basic indexing with the slices ``slc_key`` (one per axis of ``shape``)
        selects a C-contiguous block, as numpy's ``flags.contiguous`` says of the result;
        MXNet returns a view for such a block and a copy otherwise."""
        dims, strides = [], []
        stride = 1
        for n, k in reversed(list(zip(shape, tuple(slc_key) + (slice(None),) *
                                      (len(shape) - len(slc_key))))):
            start, stop, step = k.indices(n)
            dims.append(len(range(start, stop, step)))
            strides.append(stride * step)
            stride *= n
        if 0 in dims:
            return True
        expect = 1
        for d, st in zip(dims, strides):  # innermost first
            if d != 1:
                if st != expect:
                    return False
                expect *= d
        return True

    def flatten(self, inplace=False):
        """Collapse every axis but the first.

        Parameters
        ----------
        inplace : bool
            If True, the result is a view sharing this array's memory (as ``reshape``);
            otherwise a new array (the ``flatten`` operator).
        """
        t = self._t
        n = t.shape[0] if t.dim() else 1
        rest = 1
        for d in t.shape[1:]:
            rest *= d
        # The width is spelt out: reshape(0, -1) of a zero-size batch is ambiguous to torch.
        r = _run(t.reshape, n, rest)
        return _new(r, self._ctx) if inplace else _new(_fresh(r, t), self._ctx)

    def expand_dims(self, axis, inplace=False):
        """Insert an axis of size 1 at ``axis``.

        Parameters
        ----------
        axis : int
            Where the new axis goes, in ``[-ndim-1, ndim]``.
        inplace : bool
            If True, the result is a view sharing this array's memory; otherwise a new array.
        """
        nd_ = self._t.dim()
        if not -nd_ - 1 <= axis <= nd_:
            raise MXNetError(f"expand_dims: axis {axis} is out of range for an array of shape "
                             f"{self.shape}")
        r = _run(self._t.unsqueeze, axis)
        return _new(r, self._ctx) if inplace else _new(_fresh(r, self._t), self._ctx)

    def squeeze(self, axis=None, inplace=False):
        """Remove axes of size 1 (all of them, or those in ``axis``).

        Parameters
        ----------
        axis : int, tuple of int or None
            The axes to remove; each must have size 1.
        inplace : bool
            If True, the result is a view sharing this array's memory; otherwise a new array.
        """
        from .ops import squeeze as _squeeze_op
        r = _squeeze_op(self, axis=axis)
        if inplace:
            return _new(_run(self._t.reshape, r.shape), self._ctx)
        return r

    def zeros_like(self):
        """Zeros with this array's shape, dtype and context."""
        return _new(torch.zeros_like(self._t, requires_grad=False), self._ctx)

    def ones_like(self):
        """Ones with this array's shape, dtype and context."""
        return _new(torch.ones_like(self._t, requires_grad=False), self._ctx)

    def as_nd_ndarray(self):
        """This array (already an ``mx.nd`` array)."""
        return self

    def to_dlpack_for_read(self):
        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        return to_dlpack_for_write(self)


_PLAIN_CPU = {}


def _plain_cpu(device_id):
    c = _PLAIN_CPU.get(device_id)
    if c is None:
        c = _PLAIN_CPU[device_id] = Context("cpu", device_id)
    return c


def _new_on(t, ctx):
    """Wrap a tensor that a creation function (not an operator) made on ``ctx``.

    On ``cpu_pinned``/``cpu_shared`` the array is marked to report that context.
    """
    a = _new(t, ctx)
    if ctx.device_typeid > 2:
        a._home = True
    return a


def _keep_home(src, dst):
    """``dst``, a copy or view of ``src`` made without an operator, reports ``src``'s
    context (MXNet keeps ``cpu_shared``/``cpu_pinned`` there)."""
    if src._ctx.device_typeid > 2 and getattr(src, "_home", False):
        dst._home = True
    return dst


def _np_tensor(a, dtype, device):
    """A tensor with the values of numpy array ``a`` (it may share ``a``'s memory, so only for
    reading). torch cannot wrap read-only memory (np.broadcast_to results, memmaps opened
    'r') and warns when asked to; such an array is copied first."""
    if not a.flags["WRITEABLE"]:
        a = np.array(a, copy=True)
    return torch.as_tensor(a, dtype=dtype, device=device)


_INPLACE_MSG = ("Inplace operations (+=, -=, x[:]=, etc) are not supported when recording "
                "with autograd")


def _whole_key(key):
    """Whether ``x[key] = v`` writes the whole array (MXNet copies then, which records)."""
    keys = key if type(key) is tuple else (key,)
    return all(k is None or k is Ellipsis or (type(k) is slice and k == slice(None))
               for k in keys)


def _fresh(r, src):
    """``r``, or a copy of it when it shares memory with ``src``: MXNet's operators always
    write a new array, so a later write into the input must not show through."""
    if r._is_view():
        return r.clone(memory_format=torch.contiguous_format)
    try:
        shared = r.numel() and r.data_ptr() == src.data_ptr()
    except RuntimeError:   # tracing (fake tensors have no data): a non-view is a new tensor
        shared = r is src
    return r.clone(memory_format=torch.contiguous_format) if shared else r


def _int_div(a, b):
    return torch.div(a, b, rounding_mode="trunc")


def _idiv_trunc(t, o):
    return t.div_(o, rounding_mode="trunc")


def mx_mod(a, b):
    """MXNet's ``mod``: the remainder with the divisor's sign (``torch.remainder``), and 0
    where the divisor is 0 (torch gives NaN for floats and raises for integers).

    An integer mod has a zero gradient in MXNet: integer operands that are in the autograd
    graph (see _intgrad) give a result that is in it with a zero gradient."""
    from ._intgrad import IntVarTensor, carrier
    if isinstance(a, IntVarTensor) or isinstance(b, IntVarTensor):
        carriers = [c for c in (carrier(a), carrier(b)) if c is not None]
        with torch._C.DisableTorchFunctionSubclass():
            pa = a.as_subclass(_Tensor) if isinstance(a, _Tensor) else a
            pb = b.as_subclass(_Tensor) if isinstance(b, _Tensor) else b
            r = mx_mod(pa, pb)
            if not carriers or not _state.recording or r.is_floating_point():
                return r
            twin = r.to(torch.float64)
            for c in carriers:
                twin = twin + (c - c.detach()).sum() * 0
            out = r.as_subclass(IntVarTensor)
        out._carrier = twin
        return out
    if isinstance(b, _Tensor):
        zero = b == 0
        return torch.remainder(a, b.masked_fill(zero, 1)).masked_fill(zero, 0)
    if b == 0:
        return torch.zeros_like(a)
    return torch.remainder(a, b)


def _imod(t, o):
    return t.copy_(mx_mod(t, o))


def _rebuild(data, dtype, dev_type, dev_id):
    ctx = Context(dev_type, dev_id)
    if isinstance(data, np.ndarray) and data.dtype == _np_bfloat16:   # bfloat16 bits
        t = torch.from_numpy(np.ascontiguousarray(data).view(np.int16).copy())
        return _new_on(t.view(torch.bfloat16).to(ctx.torch_device), ctx)
    return _new_on(torch.as_tensor(data).to(getattr(torch, dtype)).to(ctx.torch_device), ctx)


def _shape_error(fn, a, b, err):
    ashape = getattr(a, "shape", "scalar")
    bshape = getattr(b, "shape", "scalar")
    name = getattr(fn, "__name__", str(fn))
    msg = str(err).splitlines()[0] if str(err) else type(err).__name__
    if "size" in msg or "shape" in msg or "broadcast" in msg:
        return MXNetError(f"{name}: operands with shapes {ashape} and {bshape} cannot be "
                          f"broadcast together ({msg})")
    return MXNetError(f"{name}: not supported for operands with shapes {ashape} and {bshape} "
                      f"({msg})")


def _key_repr(key):
    """An indexing key for an error message: NDArray keys as their shape and values, on one
    line (an NDArray's repr spans several)."""
    if isinstance(key, tuple):
        inner = ", ".join(_key_repr(k) for k in key)
        return f"({inner},)" if len(key) == 1 else f"({inner})"
    if isinstance(key, NDArray):
        vals = np.array2string(key.asnumpy(), threshold=8, edgeitems=3, separator=", ")
        return f"NDArray{key.shape} {' '.join(vals.split())}"
    return repr(key)


def _index_error(key, shape, err):
    what = "has too many indices" if "too many indices" in str(err) else "is out of bounds"
    return IndexError(f"index {_key_repr(key)} {what} for an array of shape {shape}: {err}")


def _convert_key(key, device, shape):
    """torch form of an MXNet index, and the input axes to flip first.

    torch slices only with positive steps: a slice with a negative step over an axis becomes a
    positive one over that axis reversed. Returns ``(key, flip_axes)``; index
    ``t.flip(flip_axes)`` with ``key`` when ``flip_axes`` is not empty.
    """
    if type(key) is not tuple:
        k = _convert_one(key, device)
        if type(k) is slice and k.step is not None and k.step < 0:
            return _positive_slice(k, shape[0]), (0,)
        return k, ()
    conv = [_convert_one(k, device) for k in key]
    if not any(type(k) is slice and k.step is not None and k.step < 0 for k in conv):
        return tuple(conv), ()
    ndim = len(shape)
    n_real = sum(1 for k in conv if k is not None and k is not Ellipsis)
    out, flips, axis = [], [], 0
    for k in conv:
        if k is Ellipsis:
            axis += ndim - n_real
        elif k is None:
            pass
        else:
            if type(k) is slice and k.step is not None and k.step < 0:
                flips.append(axis)
                k = _positive_slice(k, shape[axis])
            axis += 1
        out.append(k)
    return tuple(out), tuple(flips)


def _indexed(t, key):
    """``t[key]`` with MXNet's index forms (negative steps, NDArray keys), under the grad-mode
    rule; a bad key is an IndexError naming it and the shape. Views stay views."""
    k, flips = _keyed(t, key)
    try:
        src = t if (_state.recording or not t.requires_grad) else t.detach()
        return (src.flip(flips) if flips else src)[k]
    except IndexError as err:
        raise _index_error(key, tuple(t.shape), err) from None
    except (RuntimeError, TypeError, ValueError) as err:
        raise IndexError(f"invalid index {_key_repr(key)} for an array of shape "
                         f"{tuple(t.shape)}: {err}") from None


def _keyed(t, key):
    """``_convert_key`` for tensor ``t``."""
    return _convert_key(key, t.device, tuple(t.shape))


def _positive_slice(slc, n):
    """The slice of the reversed axis (length ``n``) that selects what the negative-step
    ``slc`` selects, in the same order."""
    idx = range(*slc.indices(n))
    if not len(idx):
        return slice(0, 0)
    return slice(n - 1 - idx[0], n - idx[-1], -slc.step)


def _convert_one(k, device):
    if isinstance(k, NDArray):
        t = k._t.detach()
        return t if t.dtype is torch.bool else t.long()
    if isinstance(k, np.ndarray):
        return torch.as_tensor(k if k.dtype == bool else k.astype(np.int64), device=device)
    if isinstance(k, list):
        return torch.as_tensor(np.asarray(k, dtype=np.int64), device=device)
    if isinstance(k, np.integer):
        return int(k)
    return k


def infer_reshape(src, target, reverse=False):
    """Output shape of MXNet's ``reshape`` for input shape ``src`` and ``target`` codes.

    Codes: 0 copies an input dimension, -1 infers one, -2 copies all remaining dimensions,
    -3 merges two consecutive dimensions, -4 splits one into the next two values (one may be
    -1). With ``reverse`` the codes are matched from the right.
    """
    src = list(src)
    tgt = list(target)
    shape_in = tuple(src)
    if reverse:
        # MXNet reverses both lists and reads them left to right, so with ``reverse`` a -4
        # comes after its two values: (0, 3, 4, -4) splits the last axis into (3, 4).
        src = src[::-1]
        tgt = tgt[::-1]
    out = []
    si = 0
    i = 0
    infer_at = -1
    try:
        while i < len(tgt):
            code = tgt[i]
            if code > 0:
                out.append(code)
                si += 1
            elif code == 0:
                out.append(src[si])
                si += 1
            elif code == -1:
                if infer_at >= 0:
                    raise MXNetValueError(f"reshape: more than one -1 in target shape {tuple(target)}")
                infer_at = len(out)
                out.append(-1)
                si += 1
            elif code == -2:
                out.extend(src[si:])
                si = len(src)
            elif code == -3:
                out.append(src[si] * src[si + 1])
                si += 2
            elif code == -4:
                if i + 2 >= len(tgt):
                    raise MXNetValueError(f"reshape: -4 in target shape {tuple(target)} needs "
                                          "the two dimensions it splits into"
                                          + (" before it (reverse=True)" if reverse else
                                             " after it") + f", input shape {shape_in}")
                d = src[si]
                a, b = tgt[i + 1], tgt[i + 2]
                if a == -1:
                    a = d // b
                if b == -1:
                    b = d // a
                if a * b != d:
                    raise MXNetValueError(f"reshape: cannot split dimension {d} into ({tgt[i + 1]}, "
                                     f"{tgt[i + 2]}) for input shape {tuple(src)}")
                out.extend([a, b])
                si += 1
                i += 2
            else:
                raise MXNetValueError(f"reshape: invalid code {code} in target shape {tuple(target)}")
            i += 1
    except IndexError:
        raise MXNetValueError(f"reshape: target shape {tuple(target)} refers to more dimensions "
                         f"than input shape {tuple(src[::-1] if reverse else src)} has") from None
    total = 1
    for d in src:
        total *= d
    if infer_at >= 0:
        known = 1
        for j, d in enumerate(out):
            if j != infer_at:
                known *= d
        if known == 0 or total % known:
            # (known == 0: MXNet 1.9.1 dies dividing by zero; any size would do, so refuse)
            raise MXNetValueError(f"reshape: cannot infer -1 in {tuple(target)} for input shape "
                             f"{tuple(src[::-1]) if reverse else tuple(src)}")
        out[infer_at] = total // known
    prod = 1
    for d in out:
        prod *= d
    if prod != total:
        shown_src = tuple(src[::-1]) if reverse else tuple(src)
        shown_out = tuple(out[::-1]) if reverse else tuple(out)
        raise MXNetValueError(f"reshape: cannot reshape array of shape {shown_src} "
                         f"({total} elements) into {shown_out} ({prod} elements)")
    return tuple(out[::-1]) if reverse else tuple(out)


# ---------------------------------------------------------------------- creation
def _ctx_dtype(ctx, dtype):
    return (ctx if ctx is not None else current_context()), to_torch_dtype(dtype)


def array(source_array, ctx=None, dtype=None):
    """Create an array from a list, a numpy array, an NDArray or a tensor.

    The default dtype is float32, except that an NDArray keeps its dtype. The data is always
    copied (a read-only numpy array included), onto ``ctx`` or else the current context,
    whatever context an NDArray source is on, as in MXNet.
    """
    if isinstance(source_array, NDArray) and source_array.stype != "default" or \
            getattr(source_array, "format", None) == "csr" and \
            type(source_array).__module__.startswith("scipy.sparse"):
        from . import sparse  # MXNet: a sparse source gives a sparse array
        return sparse.array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, NDArray):
        dt = source_array._t.dtype if dtype is None else to_torch_dtype(dtype)
        ctx = ctx or current_context()  # as MXNet: not the source's context
        return _new_on(source_array._t.detach().to(ctx.torch_device, dt, copy=True), ctx)
    ctx = ctx if ctx is not None else current_context()
    if isinstance(source_array, torch.Tensor):
        dt = source_array.dtype if dtype is None else to_torch_dtype(dtype)
        return _new_on(source_array.detach().to(ctx.torch_device, dt, copy=True), ctx)
    if isinstance(source_array, np.ndarray) and source_array.dtype == _np_bfloat16:
        # bfloat16 bits (what a bfloat16 array's asnumpy() gives, as in MXNet 1.9.1)
        bits = np.ascontiguousarray(source_array).view(np.int16)
        t = torch.from_numpy(bits.copy()).view(torch.bfloat16)
        return _new_on(t.to(ctx.torch_device, to_torch_dtype(dtype or _np_bfloat16)), ctx)
    if isinstance(source_array, np.ndarray):
        # As in MXNet 1.x, a numpy array becomes float32 unless a dtype is given.
        dt = to_torch_dtype(dtype)
        np_arr = source_array
    else:
        dt = to_torch_dtype(dtype)
        try:
            np_arr = np.array(source_array, dtype=np.float32 if dtype is None else None)
        except (ValueError, TypeError) as err:
            raise TypeError(f"cannot create an NDArray from {type(source_array).__name__}: "
                            f"{err}") from None
    if np_arr.dtype == object:
        # MXNet converts an object array element by element (np.array([1, 2.5], dtype=object)
        # is fine); only elements that are not numbers fail, with numpy's ValueError.
        try:
            np_arr = np_arr.astype(np.float32 if dtype is None else to_numpy_dtype(dtype))
        except (ValueError, TypeError) as err:
            raise ValueError(f"cannot create an NDArray from an object array: {err}") from None
    if not np_arr.flags["C_CONTIGUOUS"] or not np_arr.flags["WRITEABLE"]:
        # (ascontiguousarray would turn a 0-d array into 1-d; torch warns on read-only data)
        np_arr = np.array(np_arr, order="C", copy=True)
    t = torch.from_numpy(np_arr).to(ctx.torch_device, dt, copy=True)
    return _new_on(t, ctx)


def _shape(shape):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(d < 0 for d in shape):
        raise MXNetError(f"shape {shape} has a negative dimension")
    return shape


def _known_shape(op, shape):
    """``shape`` for the creation operator ``op`` (``_zeros``, ``_ones``): outside NumPy shape
    mode MXNet reads a 0 dimension as unknown and a () shape as unknown too, so such a shape
    cannot make an array there (``mx.np_shape()`` / ``mx.npx.set_np()`` lets it)."""
    shape = _shape(shape)
    if (len(shape) == 0 or 0 in shape) and not _np_shape_on():
        raise MXNetError(f"Operator {op} inferring shapes failed: shape {shape} has "
                         f"{'no dimensions' if not shape else 'a zero (unknown) dimension'}; "
                         "scalar and zero-size arrays need NumPy shape semantics "
                         "(mx.np_shape() or mx.npx.set_np())")
    return shape


def _zeros_buffer(shape, ctx=None, dtype=None):
    """Zeros of any shape (scalar and zero-size included) for neogluon's own buffers (an
    executor's outputs and gradients), which MXNet allocates without the ``_zeros``
    operator's shape check."""
    ctx, dt = _ctx_dtype(ctx, dtype)
    return _new_on(torch.zeros(_shape(shape), dtype=dt, device=ctx.torch_device), ctx)


def _np_shape_on():
    from ..util import is_np_shape
    return is_np_shape()


def empty(shape, ctx=None, dtype=None, stype=None):
    """An uninitialised array.

    Parameters
    ----------
    shape : int or tuple of int
    ctx : Context, optional
        The current context by default.
    dtype : str or numpy dtype, optional
        float32 by default.
    stype : str, optional
        'row_sparse' or 'csr' for an (empty) sparse array.
    """
    if stype not in (None, "default"):
        from . import sparse
        return sparse.empty(stype, shape, ctx=ctx, dtype=dtype)
    ctx, dt = _ctx_dtype(ctx, dtype)
    return _new_on(torch.empty(_shape(shape), dtype=dt, device=ctx.torch_device), ctx)


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """An array of zeros (a sparse one for ``stype='row_sparse'``/``'csr'``).

    As in MXNet, a () shape or a shape with a 0 dimension raises MXNetError unless NumPy
    shape semantics are on (``mx.np_shape()``); ``empty`` and ``full`` make such arrays.

    Parameters
    ----------
    shape : int or tuple of int
    ctx : Context, optional
        The current context by default.
    dtype : str or numpy dtype, optional
        float32 by default.
    stype : str, optional
        Storage type.
    out : NDArray, optional (keyword)
        Write the zeros into this array instead.
    """
    if stype not in (None, "default"):
        from . import sparse
        return sparse.zeros(stype, shape, ctx=ctx, dtype=dtype, **kwargs)
    out = kwargs.pop("out", None)
    ctx, dt = _ctx_dtype(ctx, dtype)
    return _assign_out(_new_on(torch.zeros(_known_shape("_zeros", shape), dtype=dt,
                                           device=ctx.torch_device), ctx), out)


def ones(shape, ctx=None, dtype=None, **kwargs):
    """An array of ones.

    As in MXNet, a () shape or a shape with a 0 dimension raises MXNetError unless NumPy
    shape semantics are on (``mx.np_shape()``).

    Parameters
    ----------
    shape : int or tuple of int
    ctx : Context, optional
        The current context by default.
    dtype : str or numpy dtype, optional
        float32 by default.
    """
    out = kwargs.pop("out", None)
    ctx, dt = _ctx_dtype(ctx, dtype)
    return _assign_out(_new_on(torch.ones(_known_shape("_ones", shape), dtype=dt,
                                          device=ctx.torch_device), ctx), out)


def full(shape, val, ctx=None, dtype=None, out=None):
    """An array filled with ``val`` (cast to ``dtype``, float32 by default).

    Parameters
    ----------
    shape : int or tuple of int
    val : scalar
    ctx : Context, optional
    dtype : str or numpy dtype, optional
    out : NDArray, optional
        Write into this array instead.
    """
    ctx, dt = _ctx_dtype(ctx, dtype)
    if isinstance(val, str):  # MXNet parses a numeric string
        try:
            val = float(val)
        except ValueError:
            raise TypeError(f"full: fill value {val!r} is not a number") from None
    r = _new_on(torch.full(_shape(shape), val, dtype=dt, device=ctx.torch_device), ctx)
    if out is not None:
        out[:] = r
        return out
    return r


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=None):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise MXNetError(f"arange: step must not be 0 (start={start}, stop={stop})")
    if int(repeat) != repeat or repeat < 1:
        raise MXNetError(f"arange: repeat must be a positive integer, got {repeat}")
    if math.ceil((stop - start) / step) <= 0:
        raise MXNetError(f"arange: the range from {start} to {stop} by {step} is empty "
                         "(MXNet makes no empty arange)")
    ctx, dt = _ctx_dtype(ctx, dtype)
    if dt.is_floating_point or dt.is_complex:
        t = torch.arange(start, stop, step, dtype=torch.float64,
                         device=ctx.torch_device).to(dt)
    else:
        # As MXNet: the count follows from the real range, the values from start and step
        # each converted to the integer type first (arange(1.3, 9, 1.7, dtype=int32): 1..5)
        n = math.ceil((stop - start) / step)
        t = (int(start) + int(step) * torch.arange(n, dtype=torch.int64,
                                                   device=ctx.torch_device)).to(dt)
    if repeat != 1:
        t = t.repeat_interleave(repeat)
    return _new_on(t, ctx)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included with ``endpoint``)."""
    ctx, dt = _ctx_dtype(ctx, dtype)
    if int(num) != num:
        raise MXNetError(f"linspace: num must be an integer, got {num}")
    num = int(num)
    if num < 0:
        raise MXNetError(f"linspace: num must be non-negative, got {num}")
    if endpoint:
        t = torch.linspace(start, stop, num, dtype=torch.float64, device=ctx.torch_device)
    else:
        step = (stop - start) / num if num else 0.0
        t = start + step * torch.arange(num, dtype=torch.float64, device=ctx.torch_device)
    return _new_on(t.to(dt), ctx)


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs):
    """A 2-D array with ones on the ``k``-th diagonal (``M`` columns, ``N`` when 0)."""
    ctx, dt = _ctx_dtype(ctx, dtype)
    n, m = int(N), int(M) if M else int(N)
    if n < 0 or m < 0:
        raise MXNetError(f"eye: shape ({n}, {m}) has a negative dimension (N={N}, M={M})")
    t = torch.zeros((n, m), dtype=dt, device=ctx.torch_device)
    if -n < k < m:
        t.diagonal(k).fill_(1)
    return _new_on(t, ctx)


def from_torch(tensor: torch.Tensor, ctx=None) -> NDArray:
    """Wrap a torch tensor as an NDArray without copying."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"from_torch expects a torch.Tensor, got {type(tensor).__name__}")
    if ctx is None:
        ctx = context_of_device(tensor.device)
    elif ctx.torch_device != tensor.device:
        raise MXNetError(f"tensor on {tensor.device} cannot be wrapped as an array on {ctx}")
    return _new_on(tensor, ctx)


def to_torch(arr: NDArray) -> torch.Tensor:
    """The torch tensor behind an NDArray (shared memory, no copy)."""
    if not isinstance(arr, NDArray):
        raise TypeError(f"to_torch expects an NDArray, got {type(arr).__name__}")
    return arr._t


# numpy arrays that from_numpy made read-only, by id (weakly held)
_LOCKED_BY_US = weakref.WeakValueDictionary()


def from_numpy(ndarray, zero_copy=True, ctx=None):
    """An NDArray with the values of a numpy array, keeping its dtype.

    Parameters
    ----------
    ndarray : numpy.ndarray
    zero_copy : bool
        Share the numpy array's memory (it must be C-contiguous, else ValueError). As in
        MXNet, the numpy array is made read-only: writes go through the NDArray. An array
        that was read-only already (and not made so by ``from_numpy``) is copied: neogluon
        never writes into memory its owner locked (MXNet 1.9.1 does).
    ctx : Context, optional
        cpu(0) by default.
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(ndarray).__name__}")
    if zero_copy and not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    if zero_copy and ndarray.flags["WRITEABLE"]:
        t = torch.from_numpy(ndarray)
        ndarray.flags["WRITEABLE"] = False
        _LOCKED_BY_US[id(ndarray)] = ndarray
    elif zero_copy and _LOCKED_BY_US.get(id(ndarray)) is ndarray:
        # (read-only because an earlier from_numpy shares it: the memory is the arrays' to
        # write, which torch would warn about)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            t = torch.from_numpy(ndarray)
    else:
        t = torch.from_numpy(np.array(ndarray, copy=True, order="C"))
    ctx = ctx or Context("cpu", 0)
    if ctx.torch_device.type != "cpu":
        t = t.to(ctx.torch_device)
    return _new_on(t, ctx)


def from_dlpack(dlpack):
    """An NDArray that shares memory with a DLPack capsule or an object with ``__dlpack__``."""
    t = torch.utils.dlpack.from_dlpack(dlpack)
    return _new(t, context_of_device(t.device))


def to_dlpack_for_read(data: NDArray):
    """A DLPack capsule sharing ``data``'s memory (for reading)."""
    return torch.utils.dlpack.to_dlpack(data._t.detach())


def to_dlpack_for_write(data: NDArray):
    """A DLPack capsule sharing ``data``'s memory (writes through it show in ``data``)."""
    return torch.utils.dlpack.to_dlpack(data._t.detach())


def waitall():
    """Wait until every pending computation has finished; raise the error of an operator that
    failed since the last wait (once), as MXNet does."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    _failure.raise_pending()


def _tensors(arrays, what):
    ts = []
    for a in arrays:
        if not isinstance(a, NDArray):
            raise TypeError(f"{what} expects NDArrays, got {type(a).__name__}")
        ts.append(a._t)
    if not ts:
        raise MXNetError(f"{what} needs at least one array")
    dt = ts[0].dtype
    for a, t in zip(arrays, ts):
        if t.dtype is not dt:
            raise MXNetError(f"{what}: all arrays must have the same dtype, got "
                             f"{arrays[0].dtype.__name__} and {a.dtype.__name__}")
    return ts


def concat(*data, dim=1, num_args=None, out=None, name=None):
    """Join arrays along an existing axis (``dim``, default 1 as in MXNet). ``name`` is
    accepted and ignored, as by every MXNet ``nd`` operator."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    ts = _tensors(data, "concat")
    try:
        r = _run(torch.cat, ts, dim)
    except (RuntimeError, IndexError) as err:
        raise MXNetError(f"concat along dim {dim} of shapes {[a.shape for a in data]}: "
                         f"{err}") from None
    return _assign_out(_new(r, data[0]._ctx), out)


def stack(*data, axis=0, num_args=None, out=None, name=None):
    """Join arrays along a new axis (``name`` accepted and ignored, as in MXNet)."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    ts = _tensors(data, "stack")
    try:
        r = _run(torch.stack, ts, axis)
    except (RuntimeError, IndexError) as err:
        raise MXNetError(f"stack along axis {axis} of shapes {[a.shape for a in data]}: "
                         f"{err}") from None
    return _assign_out(_new(r, data[0]._ctx), out)


def _assign_out(result, out):
    if out is None:
        return result
    out[:] = result
    return out


# ------------------------------------------- names MXNet 1.9.1's ndarray/ndarray.py exposes
# Storage-type codes and gradient-request codes under MXNet's names.
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_GRAD_REQ_MAP = {"null": 0, "write": 1, "add": 3}

# Functions MXNet defines in this module and neogluon in the package (``mx.nd.add`` ...):
# ``from mxnet.ndarray.ndarray import add`` gives the package's function.
_PACKAGE_FUNCTIONS = frozenset({
    "add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum",
    "minimum", "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
    "logical_and", "logical_or", "logical_xor", "concatenate", "histogram", "moveaxis",
    "onehot_encode", "split_v2", "imdecode"})


def __getattr__(name):
    if name in _PACKAGE_FUNCTIONS:
        from .. import ndarray as _package
        try:
            return getattr(_package, name)
        except AttributeError:
            pass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)


# The array classes whose objects are always dense (default storage, one tensor): NDArray and,
# once mx.np is imported, mx.np.ndarray. Fast paths (the optimizer's) test ``type(a)`` against
# this set instead of reading ``stype``/``shape``/``dtype`` properties.
_DENSE_TYPES = {NDArray}
