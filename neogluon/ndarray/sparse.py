"""Sparse arrays: ``row_sparse`` (a few non-zero rows of a tall array) and ``csr`` matrices.

Storage
-------
Each sparse array keeps explicit torch tensors rather than a torch sparse tensor:

* ``RowSparseNDArray``: ``_sdata`` of shape ``(nnz_rows,) + shape[1:]`` and one aux tensor, the
  sorted int64 row ``indices``. A lazy optimizer update or a KVStore row pull is then a plain
  ``index_select`` / ``index_copy_`` on the dense table, with no coalescing or layout rules of
  torch's sparse kernels in the way, and it works for every dtype and device torch indexes.
* ``CSRNDArray``: ``_sdata`` of shape ``(nnz,)`` and the aux tensors ``indptr`` and ``indices``
  (MXNet's aux order), both int64.

``arr._t`` of a sparse array is its dense equivalent, computed on access. That is MXNet's
*storage fallback*: any operator without a sparse kernel runs on the dense form and returns a
dense result. Operators with sparse kernels (arithmetic, ``dot``, ``add_n``, zero-preserving
unary functions, ``retain``) live here and keep the storage type MXNet 1.9.1 gives.

Autograd: a dense array may carry a sparse gradient buffer (``attach_grad(stype=...)``); a
sparse array may itself be a variable, in which case its values tensor ``_sdata`` is the torch
leaf. ``neogluon.autograd.backward`` hands sparse results to :func:`_write_grad`.
"""
from __future__ import annotations

import builtins
import weakref

import numpy as np
import torch

from .. import autograd as _ag_mod
from ..base import MXNetError, NotSupportedForSparseNDArray, to_torch_dtype, to_numpy_dtype
from ..context import Context, current_context
from .ndarray import NDArray, _new, _call_nograd

__all__ = ["BaseSparseNDArray", "RowSparseNDArray", "CSRNDArray", "row_sparse_array",
           "csr_matrix", "zeros", "empty", "array", "zeros_like", "cast_storage", "dot",
           "add_n", "retain", "slice", "add", "subtract", "multiply", "divide", "elemwise_add",
           "elemwise_sub", "elemwise_mul", "negative", "square", "sqrt", "abs", "sign", "relu",
           "clip", "round", "rint", "ceil", "floor", "trunc", "fix", "sin", "tan", "arcsin",
           "arctan", "sinh", "tanh", "arcsinh", "arctanh", "expm1", "log1p", "degrees",
           "radians", "cbrt", "Embedding", "sgd_update", "sgd_mom_update", "adam_update",
           "adagrad_update", "ftrl_update", "LinearRegressionOutput", "LogisticRegressionOutput",
           "MAERegressionOutput"]

_state = _ag_mod._state
_I64 = torch.int64
_STYPES = ("default", "row_sparse", "csr")


# ---------------------------------------------------------------------------- helpers
def _ctx_of(ctx):
    return ctx if ctx is not None else current_context()


def _grad_guard(fn, *args):
    """Run ``fn`` with torch's grad mode off unless recording (neogluon's grad-mode rule)."""
    if _state.recording:
        return fn(*args)
    return _call_nograd(fn, *args)


def _make_rsp(data, indices, shape, ctx):
    a = object.__new__(RowSparseNDArray)
    a._sdata = data
    a._aux = (indices,)
    a._sshape = tuple(shape)
    a._ctx = ctx
    a._ag = None
    a._gr = None
    a._full = None
    a._extra = None
    a._shadow = None
    return a


def _make_csr(data, indptr, indices, shape, ctx):
    a = object.__new__(CSRNDArray)
    a._sdata = data
    a._aux = (indptr, indices)
    a._sshape = tuple(shape)
    a._ctx = ctx
    a._ag = None
    a._gr = None
    a._full = None
    a._extra = None
    a._shadow = None
    return a


def _csr_rows(indptr):
    """Row id of every stored element of a CSR matrix."""
    n = indptr.numel() - 1
    return torch.repeat_interleave(torch.arange(n, device=indptr.device), torch.diff(indptr))


def _rsp_dense_t(data, idx, shape):
    out = torch.zeros(shape, dtype=data.dtype, device=data.device)
    if idx.numel():
        out = out.index_copy(0, idx, data)
    return out


def _csr_dense_t(data, indptr, indices, shape):
    out = torch.zeros(shape, dtype=data.dtype, device=data.device)
    if indices.numel():
        out = out.index_put((_csr_rows(indptr), indices), data, accumulate=True)
    return out


def _dense_to_rsp_t(t):
    """(values, row indices) of the rows of ``t`` holding a non-zero."""
    n = t.shape[0]
    flat = t.detach().reshape(n, -1)
    idx = flat.ne(0).any(1).nonzero().reshape(-1)
    return t.index_select(0, idx), idx


def _dense_to_csr_t(t):
    if t.dim() != 2:
        raise ValueError("To convert to a CSR, the NDArray should be 2 Dimensional. Current "
                         f"shape is {tuple(t.shape)}")
    n = t.shape[0]
    rows, cols = t.detach().ne(0).nonzero(as_tuple=True)
    data = t[rows, cols]
    indptr = torch.zeros(n + 1, dtype=_I64, device=t.device)
    if rows.numel():
        indptr[1:] = torch.cumsum(torch.bincount(rows, minlength=n), 0)
    return data, indptr, cols.to(_I64)


def _as_tensor(x, dtype, device):
    if isinstance(x, NDArray):
        t = x._t.detach()
        return t.to(device=device, dtype=dtype or t.dtype)
    if isinstance(x, torch.Tensor):
        return x.detach().to(device=device, dtype=dtype or x.dtype)
    a = np.asarray(x)
    return torch.as_tensor(a, device=device, dtype=dtype)


def _source_dtype(x, dtype):
    """dtype MXNet picks for data given as ``x``: an explicit dtype, else the array's own, else
    float32 (for Python lists)."""
    if dtype is not None:
        return to_torch_dtype(dtype)
    if isinstance(x, NDArray):
        return x._t.dtype if not isinstance(x, BaseSparseNDArray) else x._sdata.dtype
    if isinstance(x, np.ndarray):
        return to_torch_dtype(x.dtype)
    if isinstance(x, torch.Tensor):
        return x.dtype
    return torch.float32


def _not_supported(name, *args):
    kinds = ", ".join(str(type(a)) for a in args)
    return NotSupportedForSparseNDArray(
        f"Function {name} with arguments ({kinds}) is not supported for SparseNDArray and only "
        "available in NDArray.")


# ------------------------------------------------------------------------- classes
class BaseSparseNDArray(NDArray):
    """Common behaviour of :class:`RowSparseNDArray` and :class:`CSRNDArray`.

    ``_t`` is the dense equivalent, built on access (MXNet's storage fallback); the stored
    tensors are ``_sdata`` and ``_aux``.
    """

    # _shadow: for the result of a sparse operator recorded from inputs with a graph, the same
    # result computed densely from the inputs' dense forms (with its graph). MXNet
    # differentiates the dense array, so the gradient reaches positions neither the result nor
    # the variable store (d(2x)/dx is 2 everywhere); backward through a sparse head, and dense
    # ops reading the result inside record(), go through the shadow.
    __slots__ = ("_sdata", "_aux", "_sshape", "_gr", "_full", "_extra", "_shadow")

    # ----------------------------------------------------------------- storage
    def _dense_t(self):
        raise NotImplementedError

    def _get_t(self):
        d = self._sdata
        if _state.recording:
            shadow = getattr(self, "_shadow", None)
            if shadow is not None:
                return shadow
        if d.requires_grad:
            if _state.recording:
                self._gr = True  # a dense op saw every row: the gradient may touch all of them
                if self.stype == "row_sparse" and self._aux[0].numel() != self._sshape[0]:
                    return _RspDenseView.apply(d, self._aux[0], self._sshape,
                                               weakref.ref(self))
                if self.stype == "csr" and self._ag is not None:
                    return _CsrDenseView.apply(d, self._aux[0], self._aux[1], self._sshape,
                                               weakref.ref(self))
                return self._dense_t()
            return _call_nograd(self._dense_t)
        return self._dense_t()

    def _set_t(self, value):
        raise MXNetError(f"cannot replace the storage of a {type(self).__name__} with a dense "
                         "tensor; assign with arr[:] = value or copyto")

    _t = property(_get_t, _set_t)

    @property
    def shape(self):
        return self._sshape

    @property
    def dtype(self):
        return to_numpy_dtype(self._sdata.dtype)

    @property
    def ndim(self):
        return len(self._sshape)

    @property
    def size(self):
        raise NotImplementedError()

    @property
    def data(self):
        """The stored values (shares memory with this array)."""
        return _new(self._sdata, self._ctx)

    @property
    def indices(self):
        """The int64 indices of the stored rows (row_sparse) or columns (csr)."""
        return _new(self._aux[-1], self._ctx)

    @property
    def _num_aux(self):
        return len(self._aux)

    @property
    def _aux_types(self):
        return [np.int64] * len(self._aux)

    def _aux_type(self, i):
        return np.int64

    def __len__(self):
        return self._sshape[0]

    def __repr__(self):
        shape = "x".join(str(s) for s in self._sshape)
        return f"\n<{type(self).__name__} {shape} @{self._ctx}>"

    __str__ = __repr__

    def __reduce__(self):
        return (_rebuild_sparse, (self.stype, self._sdata.detach().cpu().numpy(),
                                  tuple(a.cpu().numpy() for a in self._aux), self._sshape,
                                  self._ctx.device_type, self._ctx.device_id))

    # ----------------------------------------------------------------- conversion
    def asnumpy(self):
        """A dense numpy copy."""
        t = self._dense_t().detach()
        if t.dtype is torch.bfloat16:
            t = t.float()
        return t.cpu().numpy().copy()

    def tostype(self, stype):
        """This array in storage type ``stype`` ('default', 'row_sparse' or 'csr')."""
        return cast_storage(self, stype)

    def astype(self, dtype, copy=True):
        """A copy with values of ``dtype`` and the same storage type."""
        td = to_torch_dtype(dtype)
        if td is self._sdata.dtype and not copy:
            return self
        return self._with(self._sdata.detach().to(td, copy=True),
                          tuple(a.clone() for a in self._aux), self._ctx)

    def copy(self):
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy into ``other`` (an array, whose storage type is kept) or onto a Context."""
        if isinstance(other, Context):
            dev = other.torch_device
            return self._with(self._sdata.detach().to(dev, copy=True),
                              tuple(a.to(dev, copy=True) for a in self._aux), other)
        if isinstance(other, NDArray):
            if other is self:
                return other
            return _copy_into(self, other)
        raise TypeError(f"copyto does not support type {type(other).__name__}")

    def as_in_context(self, context):
        """This array on ``context`` (itself if it is there already)."""
        if context == self._ctx:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def zeros_like(self, *args, **kwargs):
        return zeros(self.stype, self._sshape, ctx=self._ctx, dtype=self._sdata.dtype)

    def detach(self):
        return self._with(self._sdata.detach(), self._aux, self._ctx)

    def attach_grad(self, grad_req="write", stype=None):
        """Make this array a variable; its gradient has storage ``stype`` (default: its own)."""
        return _attach_sparse_grad(self, grad_req, stype)

    def wait_to_read(self):
        if self._sdata.device.type == "cuda":
            torch.cuda.synchronize(self._sdata.device)

    wait_to_write = wait_to_read

    def check_format(self, full_check=True):
        """Raise MXNetError if the aux data do not describe a valid array of this shape."""
        _check_format(self, full_check)

    # ----------------------------------------------------------------- storage swap
    def _with(self, data, aux, ctx):
        raise NotImplementedError

    def _replace(self, src):
        """Take over ``src``'s storage (same stype), keeping this object (and its autograd
        state) alive; values are converted to this array's dtype and device."""
        d = src._sdata.detach()
        own = self._sdata
        dev = own.device
        if d.dtype is not own.dtype or d.device != dev:
            d = d.to(device=dev, dtype=own.dtype)
        aux = tuple(a.to(dev) for a in src._aux)
        if own.requires_grad:
            d = d.clone().requires_grad_(True) if d is src._sdata else d.requires_grad_(True)
        self._sdata = d
        self._aux = aux
        self._gr = None
        self._shadow = None

    def _assign(self, value):
        """``self[:] = value`` with MXNet's conversions into this array's storage type."""
        if isinstance(value, BaseSparseNDArray):
            if value.shape != self.shape:
                raise MXNetError(f"cannot assign a {value.stype} array of shape {value.shape} "
                                 f"to a {self.stype} array of shape {self.shape}")
            if value.stype != self.stype:
                raise TypeError(f"copyto does not support destination NDArray stype {self.stype}")
            if value is self:
                return
            self._replace(value.copyto(self._ctx) if value._ctx != self._ctx else
                          value._with(value._sdata.detach().clone(),
                                      tuple(a.clone() for a in value._aux), self._ctx))
            return
        if isinstance(value, NDArray):
            t = value._t.detach()
        elif isinstance(value, (int, float, bool, np.generic)):
            if self.stype == "row_sparse":
                # MXNet stores every row when a scalar is assigned, zero included
                dev = self._sdata.device
                n = self.shape[0]
                self._replace(_make_rsp(self._full_t(value), torch.arange(n, device=dev),
                                        self.shape, self._ctx))
                return
            t = self._full_t(value)
        else:
            t = torch.as_tensor(np.asarray(value), dtype=self._sdata.dtype)
        t = t.to(device=self._sdata.device, dtype=self._sdata.dtype)
        if tuple(t.shape) != self.shape:
            try:
                t = t.expand(self.shape)
            except RuntimeError:
                raise MXNetError(f"cannot assign a value of shape {tuple(t.shape)} to a "
                                 f"{self.stype} array of shape {self.shape}") from None
        self._replace(_from_dense_t(t, self.stype, self._ctx))

    def _full_t(self, value):
        return torch.full(self.shape, value, dtype=self._sdata.dtype, device=self._sdata.device)

    # ----------------------------------------------------------------- indexing
    def __setitem__(self, key, value):
        if not (isinstance(key, builtins.slice) and key == builtins.slice(None)):
            raise ValueError(f"{type(self).__name__} only supports [:] for assignment")
        if self._sdata.requires_grad and _state.recording:
            raise MXNetError("In-place assignment to a variable with an attached gradient is "
                             "not supported while recording")
        self._assign(value)

    # ----------------------------------------------------------------- arithmetic
    def __add__(self, other):
        return _binary("add", self, other)

    def __radd__(self, other):
        return _binary("add", other, self)

    def __sub__(self, other):
        return _binary("sub", self, other)

    def __rsub__(self, other):
        return _binary("sub", other, self)

    def __mul__(self, other):
        return _binary("mul", self, other)

    def __rmul__(self, other):
        return _binary("mul", other, self)

    def __truediv__(self, other):
        return _binary("div", self, other)

    def __rtruediv__(self, other):
        return _binary("div", other, self)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __neg__(self):
        return _unary_sparse(torch.neg, self)

    # Comparisons with a scalar keep the storage type where comparing 0 gives 0 (then only the
    # stored values need comparing), as MXNet's; everything else compares the dense form.
    def _compare(self, other, fn):
        if isinstance(other, (int, float, np.number)) and not isinstance(other, bool):
            d = self._sdata.detach()
            if not bool(fn(torch.zeros((), dtype=d.dtype), other)):
                return self._with(fn(d, other).to(d.dtype), self._aux, self._ctx)
        return NDArray._compare(self, other, fn)

    def __abs__(self):
        return _unary_sparse(torch.abs, self)

    def _inplace_op(self, op, other):
        if self._sdata.requires_grad and _state.recording:
            raise MXNetError("In-place operations on a variable with an attached gradient are "
                             "not supported while recording")
        r = _binary(op, self, other)
        if r is NotImplemented:
            return r
        if r is not self:
            self._assign(r)
        return self

    def __iadd__(self, other):
        return self._inplace_op("add", other)

    def __isub__(self, other):
        return self._inplace_op("sub", other)

    def __imul__(self, other):
        return self._inplace_op("mul", other)

    def __itruediv__(self, other):
        return self._inplace_op("div", other)

    __idiv__ = __itruediv__

    # ----------------------------------------------------------------- dense-only methods
    def reshape(self, *shape, **kwargs):
        raise _not_supported("reshape", shape)

    # (reshape_like, expand_dims, broadcast_to, flatten & co run on the dense form, as
    # MXNet's operators fall back to dense storage; only reshape is refused, as in MXNet)

    def to_dlpack_for_read(self):
        raise _not_supported("to_dlpack_for_read")

    def to_dlpack_for_write(self):
        raise _not_supported("to_dlpack_for_write")

    def __dlpack__(self, stream=None):
        raise _not_supported("__dlpack__")


class RowSparseNDArray(BaseSparseNDArray):
    """An array whose only non-zero slices along the first axis are the rows ``indices``.

    ``data[i]`` is row ``indices[i]`` of the dense array. This is the storage MXNet uses for the
    gradients of embedding tables: a batch touches a few rows of a table with millions.
    """

    __slots__ = ()

    @property
    def stype(self):
        return "row_sparse"

    def _dense_t(self):
        if self._aux[0].numel() == self._sshape[0]:
            # every row is stored (sorted, unique): the values are the dense array itself, so
            # dense readers (and in-place dense writers) work on the storage without a copy
            return self._sdata
        return _rsp_dense_t(self._sdata, self._aux[0], self._sshape)

    def _with(self, data, aux, ctx):
        return _make_rsp(data, aux[0], self._sshape, ctx)

    def __getitem__(self, key):
        if isinstance(key, int):
            raise Exception("__getitem__ with int key is not implemented for RowSparseNDArray "
                            "yet")
        if isinstance(key, builtins.slice) and key == builtins.slice(None):
            return self
        raise Exception("RowSparseNDArray only supports [:] for __getitem__")

    def retain(self, *args, **kwargs):
        """Keep only the rows in ``indices`` (see :func:`retain`)."""
        return retain(self, *args, **kwargs)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D matrix in compressed sparse row format: row ``i`` holds ``data[indptr[i]:
    indptr[i+1]]`` at the columns ``indices[indptr[i]:indptr[i+1]]``."""

    __slots__ = ()

    @property
    def stype(self):
        return "csr"

    @property
    def indptr(self):
        """The int64 row pointers (length ``shape[0] + 1``)."""
        return _new(self._aux[0], self._ctx)

    def _dense_t(self):
        return _csr_dense_t(self._sdata, self._aux[0], self._aux[1], self._sshape)

    def _with(self, data, aux, ctx):
        return _make_csr(data, aux[0], aux[1], self._sshape, ctx)

    def _full_t(self, value):
        return torch.full(self.shape, value, dtype=self._sdata.dtype, device=self._sdata.device)

    def __getitem__(self, key):
        """Rows of the matrix, as a CSRNDArray: ``x[i]`` (shape (1, n)) or ``x[a:b]``."""
        n = self._sshape[0]
        if isinstance(key, (int, np.integer)):
            i = int(key)
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
            i %= n
            begin, end = i, i + 1
        elif isinstance(key, builtins.slice):
            if key.step not in (None, 1):
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            begin, end, _ = key.indices(n)
            end = max(begin, end)
        else:
            raise ValueError(f"Undefined behaviour for {type(self).__name__} __getitem__ with "
                             f"key {key!r}")
        indptr = self._aux[0]
        lo, hi = int(indptr[begin]), int(indptr[end])
        return _make_csr(self._sdata[lo:hi], indptr[begin:end + 1] - lo,
                         self._aux[1][lo:hi], (end - begin, self._sshape[1]), self._ctx)

    def asscipy(self):
        """This matrix as a ``scipy.sparse.csr_matrix``."""
        import scipy.sparse as sps
        data = self._sdata.detach().cpu().numpy()
        return sps.csr_matrix((data, self._aux[1].cpu().numpy(), self._aux[0].cpu().numpy()),
                              shape=self._sshape)

    @property
    def T(self):
        return _new(self._dense_t().t(), self._ctx)


class _RspDenseView(torch.autograd.Function):
    """The dense form of a row_sparse variable inside ``record()``. Its backward passes the
    stored rows' gradient to the values tensor and keeps the full dense gradient on the array:
    MXNet's storage fallback differentiates the whole dense array, so rows the variable does not
    store get gradients too (see ``_grad_source``)."""

    @staticmethod
    def forward(ctx, data, idx, shape, owner):
        ctx.save_for_backward(idx)
        ctx.owner = owner
        return _rsp_dense_t(data, idx, shape)

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        arr = ctx.owner()
        if arr is not None:
            arr._full = g.clone() if arr._full is None else arr._full + g
        return g.index_select(0, idx), None, None, None


class _CsrDenseView(torch.autograd.Function):
    """The dense form of a csr variable inside ``record()``: like :class:`_RspDenseView`, the
    stored values get their part of the gradient and the full dense gradient is kept on the
    array for the positions it does not store."""

    @staticmethod
    def forward(ctx, data, indptr, indices, shape, owner):
        rows = _csr_rows(indptr)
        ctx.save_for_backward(rows, indices)
        ctx.owner = owner
        return _csr_dense_t(data, indptr, indices, shape)

    @staticmethod
    def backward(ctx, g):
        rows, cols = ctx.saved_tensors
        arr = ctx.owner()
        if arr is not None:
            arr._full = g.clone() if arr._full is None else arr._full + g
        return g[rows, cols], None, None, None, None


def _needs_shadow(*operands):
    """Whether a sparse result of these operands, made inside ``record()``, needs a shadow."""
    if not _state.recording:
        return False
    for a in operands:
        if isinstance(a, BaseSparseNDArray):
            if a._sdata.requires_grad or getattr(a, "_shadow", None) is not None:
                return True
        elif isinstance(a, NDArray) and a._t.requires_grad:
            return True
    return False


def _rebuild_sparse(stype, data, aux, shape, dev_type, dev_id):
    ctx = Context(dev_type, dev_id)
    dev = ctx.torch_device
    d = torch.as_tensor(data).to(dev)
    a = [torch.as_tensor(x).to(dev) for x in aux]
    if stype == "row_sparse":
        return _make_rsp(d, a[0], shape, ctx)
    return _make_csr(d, a[0], a[1], shape, ctx)


def _check_format(arr, full_check=True):
    shape = arr.shape
    if arr.stype == "row_sparse":
        idx = arr._aux[0]
        if idx.dim() != 1 or arr._sdata.shape[0] != idx.numel() or \
                tuple(arr._sdata.shape[1:]) != tuple(shape[1:]):
            raise MXNetError(f"row_sparse array of shape {shape}: data shape "
                             f"{tuple(arr._sdata.shape)} does not match indices shape "
                             f"{tuple(idx.shape)}")
        if full_check and idx.numel():
            if int(idx.min()) < 0 or int(idx.max()) >= shape[0] or \
                    (idx.numel() > 1 and bool((torch.diff(idx) <= 0).any())):
                raise MXNetError("Indices of row_sparse NDArray should be non-negative, less "
                                 "than the size of first dimension and in ascending order")
        return
    indptr, indices = arr._aux
    if indptr.numel() != shape[0] + 1 or indices.numel() != arr._sdata.numel():
        raise MXNetError(f"csr array of shape {shape}: indptr has {indptr.numel()} entries "
                         f"(expected {shape[0] + 1}), indices {indices.numel()} and data "
                         f"{arr._sdata.numel()} (expected equal)")
    if full_check:
        if int(indptr[0]) != 0 or int(indptr[-1]) != indices.numel() or \
                bool((torch.diff(indptr) < 0).any()):
            raise MXNetError("indptr of csr NDArray should start with 0, be non-decreasing "
                             "and end with the number of stored values")
        if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= shape[1]):
            raise MXNetError("indices of csr NDArray should be non-negative and less than "
                             "the number of columns")
        if indices.numel() > 1:
            rows = _csr_rows(indptr)
            same_row = rows[1:] == rows[:-1]
            if bool((same_row & (torch.diff(indices) <= 0)).any()):
                raise MXNetError("indices of csr NDArray should be in ascending order per row")


# ------------------------------------------------------------------------ creation
def _from_dense_t(t, stype, ctx):
    if stype == "row_sparse":
        if t.dim() == 0:
            t = t.reshape(1)
        data, idx = _dense_to_rsp_t(t)
        return _make_rsp(data, idx, tuple(t.shape), ctx)
    if stype == "csr":
        data, indptr, indices = _dense_to_csr_t(t)
        return _make_csr(data, indptr, indices, tuple(t.shape), ctx)
    return _new(t, ctx)


def cast_storage(data, stype):
    """Convert an array to another storage type.

    Parameters
    ----------
    data : NDArray
        Any array (dense or sparse).
    stype : {'default', 'row_sparse', 'csr'}
        The storage type wanted. Dense to row_sparse keeps the rows holding a non-zero; dense
        to csr (2-D only) keeps the non-zero values. row_sparse and csr do not convert into
        each other (ValueError, as in MXNet).

    Returns
    -------
    NDArray
        A new array (a copy, also when ``stype`` is the array's own sparse type).
    """
    if stype not in _STYPES:
        raise MXNetError(f"Invalid Input: {stype!r}, valid values are: {{'csr', 'default', "
                         f"'row_sparse'}}, in operator cast_storage(stype={stype!r})")
    src = data.stype
    if src == stype:
        if src == "default":
            return data
        res = data._with(_grad_guard(torch.clone, data._sdata), tuple(a.clone() for a in
                                                                      data._aux), data._ctx)
        if _needs_shadow(data):
            # the copy's gradient is the head gradient everywhere (MXNet's backward of
            # cast_storage is an identity on the dense form)
            res._shadow = data._t.clone()
        return res
    if stype == "default":
        t = data._t
        if t is data._sdata:
            t = _grad_guard(torch.clone, t)
        return _new(t, data._ctx)
    if src != "default":
        raise ValueError(f"cast_storage from {src} to {stype} is not supported")
    return _grad_guard(lambda: _from_dense_t(data._t, stype, data._ctx))


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of a given storage type.

    Parameters
    ----------
    stype : {'row_sparse', 'csr', 'default'}
    shape : int or tuple of int
    ctx : Context, optional
        Defaults to the current context.
    dtype : str or numpy dtype, optional
        Defaults to float32.

    Returns
    -------
    NDArray
        For the sparse types, an array that stores nothing.
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    ctx = _ctx_of(ctx)
    dt = to_torch_dtype(dtype)
    dev = ctx.torch_device
    if stype == "row_sparse":
        return _make_rsp(torch.zeros((0,) + shape[1:], dtype=dt, device=dev),
                         torch.zeros(0, dtype=_I64, device=dev), shape, ctx)
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"a csr array must be 2-D, got shape {shape}")
        return _make_csr(torch.zeros(0, dtype=dt, device=dev),
                         torch.zeros(shape[0] + 1, dtype=_I64, device=dev),
                         torch.zeros(0, dtype=_I64, device=dev), shape, ctx)
    if stype in (None, "default"):
        return _new(torch.zeros(shape, dtype=dt, device=dev), ctx)
    raise ValueError(f"unknown storage type {stype!r}; expected one of {_STYPES}")


def empty(stype, shape, ctx=None, dtype=None):
    """An array of storage type ``stype`` (zeros: sparse arrays store nothing)."""
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def zeros_like(data, out=None):
    r = zeros(data.stype, data.shape, ctx=data.context, dtype=data.dtype)
    if out is not None:
        out[:] = r
        return out
    return r


def _is_scipy_sparse(x):
    mod = type(x).__module__ or ""
    return mod.startswith("scipy.sparse")


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """Create a RowSparseNDArray.

    Parameters
    ----------
    arg1 : tuple, NDArray, numpy.ndarray or RowSparseNDArray
        ``(data, indices)`` with ``data[i]`` the row ``indices[i]``; or a shape tuple
        ``(D0, D1, ...)`` for an empty array; or a dense array, converted; or a RowSparseNDArray,
        copied. The indices must be sorted, unique and in range (``check_format`` checks).
    shape : tuple, optional
        The dense shape; inferred from ``(data, indices)`` when missing.
    ctx : Context, optional
    dtype : str or numpy dtype, optional
        Defaults to the dtype of ``data`` when it is an array, else float32.

    Returns
    -------
    RowSparseNDArray
    """
    ctx = _ctx_of(ctx)
    if isinstance(arg1, tuple):
        n = len(arg1)
        if n < 2:
            raise ValueError(f"Unexpected length of input tuple: {n}")
        if n > 2 or all(isinstance(x, (int, np.integer)) for x in arg1):
            _check_shape(arg1, shape)
            return zeros("row_sparse", tuple(int(x) for x in arg1), ctx=ctx, dtype=dtype)
        data, indices = arg1
        dt = _source_dtype(data, dtype)
        dev = ctx.torch_device
        d = _as_tensor(data, dt, dev)
        idx = _as_tensor(indices, None, dev).reshape(-1).to(_I64)
        if d.dim() == 0 or d.shape[0] != idx.numel():
            raise MXNetError(f"row_sparse_array: data of shape {tuple(d.shape)} does not match "
                             f"{idx.numel()} indices (one row of data per index)")
        if shape is None:
            if not idx.numel():
                raise ValueError("row_sparse_array: cannot infer the shape without indices; "
                                 "pass shape=")
            shape = (int(idx.max()) + 1,) + tuple(d.shape[1:])
        shape = tuple(int(s) for s in shape)
        if tuple(d.shape[1:]) != shape[1:]:
            raise MXNetError(f"row_sparse_array: data rows of shape {tuple(d.shape[1:])} do "
                             f"not match shape {shape}")
        # As in MXNet the indices are taken as given (sorted, unique, in range is the
        # caller's promise); check_format() verifies them.
        return _make_rsp(d.contiguous(), idx.contiguous(), shape, ctx)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        r = arg1.copyto(ctx)
        return r if dtype is None else r.astype(dtype, copy=False)
    if isinstance(arg1, CSRNDArray):
        raise ValueError("Unexpected input type: CSRNDArray (convert it with tostype first)")
    if _is_scipy_sparse(arg1):
        raise ValueError(f"Unexpected input type: {type(arg1).__name__}")
    dense = _dense_source(arg1, ctx, dtype)
    _check_shape(dense.shape, shape)
    return dense.tostype("row_sparse")


def _check_shape(got, shape):
    """MXNet's check that an explicit ``shape`` agrees with the one the source implies."""
    if shape is not None and tuple(int(x) for x in got) != tuple(int(x) for x in shape):
        raise ValueError(f"Shape mismatch detected. {tuple(got)} v.s. {tuple(shape)}")


def _dense_source(arg1, ctx, dtype):
    from .ndarray import array as dense_array
    if isinstance(arg1, NDArray):
        return dense_array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, np.ndarray):
        # sparse constructors keep a numpy array's dtype (nd.array would make it float32)
        return dense_array(arg1, ctx=ctx, dtype=arg1.dtype if dtype is None else dtype)
    if isinstance(arg1, (list, torch.Tensor)):
        return dense_array(arg1, ctx=ctx, dtype=dtype)
    raise ValueError(f"Unexpected input type: {type(arg1).__name__}")


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """Create a CSRNDArray, a 2-D matrix in compressed sparse row format.

    Parameters
    ----------
    arg1 : tuple, NDArray, numpy.ndarray, scipy.sparse matrix or CSRNDArray
        ``(data, indices, indptr)``; ``(data, (row, col))`` in coordinate form (duplicates are
        summed); a shape ``(M, N)`` for an empty matrix; a dense 2-D array, converted; a scipy
        sparse matrix; or a CSRNDArray, copied.
    shape : tuple, optional
        ``(M, N)``; inferred from the indices when missing.
    ctx : Context, optional
    dtype : str or numpy dtype, optional
        Defaults to the dtype of ``data`` when it is an array, else float32.

    Returns
    -------
    CSRNDArray
    """
    ctx = _ctx_of(ctx)
    dev = ctx.torch_device
    if isinstance(arg1, tuple):
        n = len(arg1)
        if n == 2 and all(isinstance(x, (int, np.integer)) for x in arg1):
            _check_shape(arg1, shape)
            return zeros("csr", tuple(int(x) for x in arg1), ctx=ctx, dtype=dtype)
        if n == 2:
            data, rc = arg1
            if not (isinstance(rc, (tuple, list)) and len(rc) == 2):
                raise ValueError("csr_matrix: expected (data, (row, col)) for coordinate input")
            return _csr_from_coo(data, rc[0], rc[1], shape, ctx, dtype)
        if n != 3:
            raise ValueError(f"Unexpected length of input tuple: {n}")
        data, indices, indptr = arg1
        dt = _source_dtype(data, dtype)
        d = _as_tensor(data, dt, dev).reshape(-1)
        ind = _as_tensor(indices, None, dev).reshape(-1).to(_I64)
        ptr = _as_tensor(indptr, None, dev).reshape(-1).to(_I64)
        if shape is None:
            if not ind.numel():
                raise ValueError("csr_matrix: cannot infer the shape without indices; pass "
                                 "shape=")
            shape = (ptr.numel() - 1, int(ind.max()) + 1)
        shape = tuple(int(s) for s in shape)
        if len(shape) != 2:
            raise ValueError(f"csr_matrix: shape must be 2-D, got {shape}")
        if d.numel() != ind.numel():
            raise MXNetError(f"csr_matrix: {d.numel()} values but {ind.numel()} column indices")
        # (otherwise taken as given, as MXNet does; check_format() verifies the structure)
        return _make_csr(d.contiguous(), ptr.contiguous(), ind.contiguous(), shape, ctx)
    if isinstance(arg1, CSRNDArray):
        _check_shape(arg1.shape, shape)
        r = arg1.copyto(ctx)
        return r if dtype is None else r.astype(dtype, copy=False)
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError("Unexpected input type: RowSparseNDArray (convert it with tostype "
                         "first)")
    if _is_scipy_sparse(arg1):
        _check_shape(arg1.shape, shape)
        m = arg1.tocsr(copy=True)
        m.sum_duplicates()
        m.sort_indices()
        dt = to_torch_dtype(dtype if dtype is not None else m.dtype)
        return _make_csr(torch.as_tensor(m.data).to(dev, dt),
                         torch.as_tensor(m.indptr).to(dev, _I64),
                         torch.as_tensor(m.indices).to(dev, _I64), tuple(m.shape), ctx)
    dense = _dense_source(arg1, ctx, dtype)
    _check_shape(dense.shape, shape)
    return dense.tostype("csr")


def _csr_from_coo(data, row, col, shape, ctx, dtype):
    dev = ctx.torch_device
    d = _as_tensor(data, _source_dtype(data, dtype), dev).reshape(-1)
    r = _as_tensor(row, None, dev).reshape(-1).to(_I64)
    c = _as_tensor(col, None, dev).reshape(-1).to(_I64)
    if not (d.numel() == r.numel() == c.numel()):
        raise MXNetError(f"csr_matrix: data, row and col must have the same length, got "
                         f"{d.numel()}, {r.numel()} and {c.numel()}")
    if shape is None:
        shape = ((int(r.max()) + 1) if r.numel() else 0, (int(c.max()) + 1) if c.numel() else 0)
    m, n = (int(s) for s in shape)
    if r.numel() and (int(r.min()) < 0 or int(r.max()) >= m or int(c.min()) < 0
                      or int(c.max()) >= n):
        raise MXNetError(f"csr_matrix: coordinates out of range for shape {(m, n)}")
    key = r * n + c
    uniq, inv = torch.unique(key, sorted=True, return_inverse=True)
    vals = torch.zeros(uniq.numel(), dtype=d.dtype, device=dev).index_add_(0, inv, d)
    rows = torch.div(uniq, max(n, 1), rounding_mode="floor")
    indptr = torch.zeros(m + 1, dtype=_I64, device=dev)
    if rows.numel():
        indptr[1:] = torch.cumsum(torch.bincount(rows, minlength=m), 0)
    return _make_csr(vals, indptr, uniq - rows * n, (m, n), ctx)


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a sparse source (a sparse NDArray or a scipy.sparse matrix)."""
    if isinstance(source_array, RowSparseNDArray):
        return row_sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, CSRNDArray) or _is_scipy_sparse(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise ValueError("Please use mx.nd.array to create an NDArray with source_array of type "
                     f"{type(source_array)}")


def _copy_into(src, dst):
    """``src.copyto(dst)`` where at least one of them is sparse."""
    if src.shape != dst.shape:
        raise MXNetError(f"copyto: shape mismatch, source {src.shape} and target {dst.shape}")
    if isinstance(dst, BaseSparseNDArray):
        if isinstance(src, BaseSparseNDArray) and src.stype != dst.stype:
            raise TypeError(f"copyto does not support destination NDArray stype {dst.stype}")
        dst._assign(src)
        return dst
    _call_nograd(dst._t.copy_, src._t.detach())
    return dst


# ---------------------------------------------------------------------- arithmetic
def _scalar(x):
    if isinstance(x, (int, float, bool)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    return None


def _same_dtype(a, b):
    if a.dtype != b.dtype:
        raise MXNetError(f"dtype mismatch: {a.dtype.__name__} {a.stype} array with shape "
                         f"{a.shape} and {b.dtype.__name__} {b.stype} array with shape "
                         f"{b.shape}; cast one with astype() first")


_TORCH_OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}


def _dense_result(op, lhs, rhs):
    """The storage fallback: compute on dense forms, return a dense array."""
    a = lhs._t if isinstance(lhs, NDArray) else lhs
    b = rhs._t if isinstance(rhs, NDArray) else rhs
    ref = lhs if isinstance(lhs, NDArray) else rhs
    if not isinstance(a, torch.Tensor):
        a = torch.tensor(a, dtype=b.dtype, device=b.device)
    fn = _TORCH_OPS[op]
    try:
        r = _grad_guard(fn, a, b)
    except RuntimeError as err:
        raise MXNetError(f"{op}: operands with shapes {getattr(lhs, 'shape', 'scalar')} and "
                         f"{getattr(rhs, 'shape', 'scalar')} cannot be combined ({err})") from None
    return _new(r, ref._ctx)


def _union(op, a, b):
    """add/sub of two sparse arrays of one stype: stored where either stores."""
    if a.stype == "row_sparse":
        ka, kb = a._aux[0], b._aux[0]
    else:
        n = a.shape[1]
        ka = _csr_rows(a._aux[0]) * n + a._aux[1]
        kb = _csr_rows(b._aux[0]) * n + b._aux[1]
    keys, inv = torch.unique(torch.cat([ka, kb]), sorted=True, return_inverse=True)
    bd = b._sdata if op == "add" else -b._sdata
    vals = torch.cat([a._sdata, bd])
    data = torch.zeros((keys.numel(),) + tuple(a._sdata.shape[1:]), dtype=vals.dtype,
                       device=vals.device).index_add(0, inv, vals)
    return _with_keys(a, data, keys)


def _with_keys(like, data, keys):
    if like.stype == "row_sparse":
        return _make_rsp(data, keys, like.shape, like._ctx)
    m, n = like.shape
    rows = torch.div(keys, max(n, 1), rounding_mode="floor")
    indptr = torch.zeros(m + 1, dtype=_I64, device=keys.device)
    if rows.numel():
        indptr[1:] = torch.cumsum(torch.bincount(rows, minlength=m), 0)
    return _make_csr(data, indptr, keys - rows * n, like.shape, like._ctx)


def _rsp_mul(a, b):
    """row_sparse * row_sparse: MXNet stores the union of the rows (zeros where only one
    operand has the row)."""
    ka, kb = a._aux[0], b._aux[0]
    keys = torch.unique(torch.cat([ka, kb]), sorted=True)
    return _make_rsp(_gather_rows(a, keys)._sdata * _gather_rows(b, keys)._sdata, keys,
                     a.shape, a._ctx)


def _intersection_mul(a, b):
    if a.stype == "row_sparse":
        ka, kb = a._aux[0], b._aux[0]
    else:
        n = a.shape[1]
        ka = _csr_rows(a._aux[0]) * n + a._aux[1]
        kb = _csr_rows(b._aux[0]) * n + b._aux[1]
    ma = torch.isin(ka, kb)
    mb = torch.isin(kb, ka)
    data = a._sdata[ma] * b._sdata[mb]
    return _with_keys(a, data, ka[ma])


def _mul_dense(sp, dense_t):
    """sparse * dense of the same shape: stored where the sparse array stores."""
    if sp.stype == "row_sparse":
        return _make_rsp(sp._sdata * dense_t.index_select(0, sp._aux[0]), sp._aux[0], sp.shape,
                         sp._ctx)
    rows = _csr_rows(sp._aux[0])
    return _make_csr(sp._sdata * dense_t[rows, sp._aux[1]], sp._aux[0], sp._aux[1], sp.shape,
                     sp._ctx)


def _binary(op, lhs, rhs):
    """Arithmetic where at least one operand is sparse, with MXNet 1.9.1's output storage."""
    res = _binary_impl(op, lhs, rhs)
    if isinstance(res, BaseSparseNDArray) and res is not lhs and res is not rhs and \
            _needs_shadow(lhs, rhs):
        res._shadow = _dense_result(op, lhs, rhs)._t
    return res


def _binary_impl(op, lhs, rhs):
    ls = _scalar(lhs)
    rs = _scalar(rhs)
    if ls is None and not isinstance(lhs, NDArray) or rs is None and not isinstance(rhs, NDArray):
        if isinstance(lhs, np.ndarray) or isinstance(rhs, np.ndarray):
            from .ndarray import array as dense_array
            ref = lhs if isinstance(lhs, NDArray) else rhs
            lhs = dense_array(lhs, ctx=ref._ctx, dtype=ref.dtype) if ls is None and not \
                isinstance(lhs, NDArray) else lhs
            rhs = dense_array(rhs, ctx=ref._ctx, dtype=ref.dtype) if rs is None and not \
                isinstance(rhs, NDArray) else rhs
        else:
            return NotImplemented
    # sparse with scalar
    if rs is not None or ls is not None:
        sp = lhs if rs is not None else rhs
        s = rs if rs is not None else ls
        if op == "mul" or (op == "div" and rs is not None):
            fn = torch.mul if op == "mul" else torch.div
            d = sp._sdata
            vals = _grad_guard(fn, d, s)
            if vals.dtype is not d.dtype and not d.is_floating_point():
                vals = vals.to(d.dtype)
            return sp._with(vals, sp._aux, sp._ctx)
        return _dense_result(op, lhs, rhs)
    lsp = isinstance(lhs, BaseSparseNDArray)
    rsp = isinstance(rhs, BaseSparseNDArray)
    if lsp and rsp:
        if lhs.stype != rhs.stype:
            return _dense_result(op, lhs, rhs)
        if lhs.shape != rhs.shape:
            # MXNet broadcasts arrays of different shapes with its dense broadcast_* ops
            return _dense_result(op, lhs, rhs)
        _same_dtype(lhs, rhs)
        if op in ("add", "sub"):
            return _grad_guard(_union, op, lhs, rhs)
        if op == "mul":
            return _grad_guard(_rsp_mul if lhs.stype == "row_sparse" else _intersection_mul,
                               lhs, rhs)
        return _dense_result(op, lhs, rhs)
    if lsp and op == "mul" and lhs.shape == rhs.shape:
        _same_dtype(lhs, rhs)
        return _grad_guard(_mul_dense, lhs, rhs._t)
    return _dense_result(op, lhs, rhs)


_ELEMWISE_FNS = {"elemwise_add": torch.add, "elemwise_sub": torch.sub,
                  "elemwise_mul": torch.mul, "elemwise_div": torch.div,
                  # MXNet's gradients at ties: all to lhs (lhs >= rhs for maximum)
                  "maximum": lambda a, b: torch.where(a >= b, a, b),
                  "minimum": lambda a, b: torch.where(a <= b, a, b), "hypot": torch.hypot}


def _sorted_keys(x):
    """(sorted linear keys, values in that order) of what a sparse array stores: row ids for
    row_sparse, ``row * ncols + col`` for csr (whose columns may be unsorted in a row)."""
    if x.stype == "row_sparse":
        k, v = x._aux[0], x._sdata
    else:
        k = _csr_rows(x._aux[0]) * x.shape[1] + x._aux[1]
        v = x._sdata
    if k.numel() > 1 and bool((torch.diff(k) <= 0).any()):
        k, order = torch.sort(k)
        v = v.index_select(0, order)
    return k, v


def _values_at(x, keys):
    """The values of sparse ``x`` at the sorted linear ``keys`` (zeros where it stores none)."""
    k, v = _sorted_keys(x)
    out = torch.zeros((keys.numel(),) + tuple(v.shape[1:]), dtype=v.dtype, device=v.device)
    if k.numel() and keys.numel():
        pos = torch.searchsorted(k, keys).clamp_(max=k.numel() - 1)
        hit = k.index_select(0, pos) == keys
        sel = hit.nonzero().reshape(-1)
        out = out.index_put((sel,), v.index_select(0, pos.index_select(0, sel)))
    return out


def _union_apply(fn, a, b):
    """``fn`` (mapping (0, 0) to 0) on what either of two same-type sparse arrays stores."""
    keys = torch.unique(torch.cat([_sorted_keys(a)[0], _sorted_keys(b)[0]]), sorted=True)
    return _with_keys(a, fn(_values_at(a, keys), _values_at(b, keys)), keys)


def _elemwise(name, lhs, rhs):
    """MXNet's same-shape elementwise operators (``elemwise_add/sub/mul/div``, ``_maximum``,
    ``_minimum``, ``_hypot``) with a sparse operand, with the output storage MXNet 1.9.1's
    storage-type inference gives: two arrays of one sparse type stay sparse (not for div);
    ``elemwise_mul`` of a sparse and a dense array has the sparse operand's type; the rest
    is dense."""
    fn = _ELEMWISE_FNS[name]
    ls, rs = lhs.stype, rhs.stype
    if lhs.shape != rhs.shape:
        raise MXNetError(f"{name}: the inputs must have the same shape, got {lhs.shape} and "
                         f"{rhs.shape}")
    res = None
    if ls == rs and ls != "default" and name != "elemwise_div":
        _same_dtype(lhs, rhs)
        if name in ("elemwise_add", "elemwise_sub"):
            res = _grad_guard(_union, "add" if name == "elemwise_add" else "sub", lhs, rhs)
        else:
            res = _grad_guard(_union_apply, fn, lhs, rhs)
    elif name == "elemwise_mul" and "default" in (ls, rs):
        _same_dtype(lhs, rhs)
        sp, dn = (lhs, rhs) if ls != "default" else (rhs, lhs)
        res = _grad_guard(_mul_dense, sp, dn._t)
    if res is None:
        return _new(_grad_guard(fn, lhs._t, rhs._t), lhs._ctx)
    if _needs_shadow(lhs, rhs):
        res._shadow = fn(lhs._t, rhs._t)
    return res


def add(lhs, rhs):
    """``lhs + rhs`` with MXNet 1.9.1's output storage types.

    Parameters
    ----------
    lhs, rhs : NDArray or scalar

    Returns
    -------
    NDArray
        Sparse + same sparse type is sparse (the union of what either stores); anything with
        a dense array or a scalar is dense.
    """
    return _arith("add", "elemwise_add", lhs, rhs)


def subtract(lhs, rhs):
    """``lhs - rhs`` with MXNet's output storage types."""
    return _arith("sub", "elemwise_sub", lhs, rhs)


def multiply(lhs, rhs):
    """``lhs * rhs`` with MXNet 1.9.1's output storage types.

    Parameters
    ----------
    lhs, rhs : NDArray or scalar

    Returns
    -------
    NDArray
        Sparse when the left operand is sparse and the right one is a scalar, a dense array of
        the same shape, or an array of the same sparse type; dense otherwise.
    """
    return _arith("mul", "elemwise_mul", lhs, rhs)


def divide(lhs, rhs):
    """``lhs / rhs`` with MXNet's output storage types."""
    return _arith("div", "elemwise_div", lhs, rhs)


def _arith(op, name, lhs, rhs):
    """``sparse.add`` & co: two arrays of one shape run MXNet's ``elemwise_*`` operator (with
    its storage types), anything else the broadcasting / scalar forms."""
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape == rhs.shape and \
            (lhs.stype != "default" or rhs.stype != "default"):
        return _elemwise(name, lhs, rhs)
    return _binary(op, lhs, rhs)


elemwise_add = add
elemwise_sub = subtract
elemwise_mul = multiply


def _unary_sparse(fn, x, *args):
    """A zero-preserving elementwise function: applied to the stored values only."""
    if not isinstance(x, BaseSparseNDArray):
        return _new(_grad_guard(fn, x._t, *args), x._ctx)
    res = x._with(_grad_guard(fn, x._sdata, *args), x._aux, x._ctx)
    if _needs_shadow(x):
        res._shadow = fn(x._t, *args)
    return res


def _make_unary(name, fn):
    def op(data, out=None, name=None):
        r = _unary_sparse(fn, data)
        if out is not None:
            out[:] = r
            return out
        return r
    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}``; on a sparse array it maps the stored values and "
                  "keeps the storage type (the function maps 0 to 0).")
    return op


_ZERO_PRESERVING = {
    "negative": torch.neg, "square": torch.square, "sqrt": torch.sqrt, "abs": torch.abs,
    "sign": torch.sign, "relu": torch.relu, "round": torch.round, "rint": torch.round,
    "ceil": torch.ceil, "floor": torch.floor, "trunc": torch.trunc, "fix": torch.trunc,
    "sin": torch.sin, "tan": torch.tan, "arcsin": torch.asin, "arctan": torch.atan,
    "sinh": torch.sinh, "tanh": torch.tanh, "arcsinh": torch.asinh, "arctanh": torch.atanh,
    "expm1": torch.expm1, "log1p": torch.log1p, "degrees": torch.rad2deg,
    "radians": torch.deg2rad,
    "cbrt": lambda x: _ops_cbrt(x),
}
for _n, _f in _ZERO_PRESERVING.items():
    globals()[_n] = _make_unary(_n, _f)


def _ops_cbrt(x):
    from .ops import _cbrt
    return _cbrt(x)


def _nd_unary(name, fn, data, out=None):
    """``nd.<name>(data)`` for a sparse ``data``: sparse when the function maps 0 to 0 (as
    MXNet's sparse kernels), else computed on the dense form."""
    if name in _ZERO_PRESERVING:
        return globals()[name](data, out=out)
    t = data._t
    r = _grad_guard(fn, t)
    if r.dtype is not t.dtype:
        r = r.to(t.dtype)
    r = _new(r, data._ctx)
    if out is not None:
        out[:] = r
        return out
    return r


def clip(data, a_min, a_max, out=None, name=None):
    """Clip values into [a_min, a_max]; a sparse array keeps its storage type (the interval
    must hold 0, as in MXNet)."""
    if isinstance(data, BaseSparseNDArray):
        if not a_min <= 0 <= a_max:
            raise MXNetError(f"clip of a {data.stype} array needs a_min <= 0 <= a_max (zeros "
                             f"must stay zeros), got a_min={a_min}, a_max={a_max}")
        r = _unary_sparse(torch.clamp, data, a_min, a_max)
    else:
        r = _new(_grad_guard(torch.clamp, data._t, a_min, a_max), data._ctx)
    if out is not None:
        out[:] = r
        return out
    return r


def add_n(*args, out=None, name=None):
    """Elementwise sum of arrays of one shape.

    Parameters
    ----------
    *args : NDArray
        The arrays (or one list of them).
    out : NDArray, optional
        Where to write the result.

    Returns
    -------
    NDArray
        row_sparse (the union of the rows) when every argument is row_sparse, else dense.
    """
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if not args:
        raise MXNetError("add_n needs at least one array")
    stypes = {a.stype for a in args}
    if stypes == {"row_sparse"}:  # MXNet sums csr arrays on the dense form
        r = args[0]
        for a in args[1:]:
            if a.shape != r.shape:
                raise MXNetError(f"add_n: shapes {r.shape} and {a.shape} differ")
            _same_dtype(r, a)
        if len(args) == 1:
            r = r.copy()
        else:
            r = _grad_guard(_union_many, args)
        if _needs_shadow(*args):
            # differentiated densely, as MXNet: every input gets the whole head gradient
            t = args[0]._t
            for a in args[1:]:
                t = t + a._t
            r._shadow = t if len(args) > 1 else t.clone()
    else:
        t = args[0]._t
        for a in args[1:]:
            t = _grad_guard(torch.add, t, a._t)
        if len(args) == 1:
            t = t.clone()
        r = _new(t, args[0]._ctx)
    if out is not None:
        out[:] = r
        return out
    return r


def _union_many(arrs):
    first = arrs[0]
    if first.stype == "row_sparse":
        keys = [a._aux[0] for a in arrs]
    else:
        n = first.shape[1]
        keys = [_csr_rows(a._aux[0]) * n + a._aux[1] for a in arrs]
    uniq, inv = torch.unique(torch.cat(keys), sorted=True, return_inverse=True)
    vals = torch.cat([a._sdata for a in arrs])
    data = torch.zeros((uniq.numel(),) + tuple(first._sdata.shape[1:]), dtype=vals.dtype,
                       device=vals.device).index_add(0, inv, vals)
    return _with_keys(first, data, uniq)


def retain(data, indices=None, out=None, name=None, **kwargs):
    """Select rows of a row_sparse array.

    Parameters
    ----------
    data : RowSparseNDArray
    indices : NDArray or array-like of int
        Row ids (any order, repeats allowed).

    Returns
    -------
    RowSparseNDArray
        Stores exactly the requested rows (sorted, without repeats), zero where ``data`` stores
        none.
    """
    if kwargs:
        raise MXNetError(f"retain: unknown arguments {sorted(kwargs)}")
    if indices is None:
        raise MXNetError("retain: indices are required")
    if not isinstance(data, RowSparseNDArray):
        raise MXNetError(f"retain expects a row_sparse array, got storage type "
                         f"{getattr(data, 'stype', type(data).__name__)}")
    dev = data._sdata.device
    want = _as_tensor(indices, None, dev).reshape(-1).to(_I64)
    want = torch.unique(want, sorted=True)
    if want.numel() and (int(want.min()) < 0 or int(want.max()) >= data.shape[0]):
        raise MXNetError(f"retain: row ids must lie in [0, {data.shape[0]}) for an array of "
                         f"shape {data.shape}")
    res = _grad_guard(_gather_rows, data, want)
    if _needs_shadow(data):
        # the gradient reaches every requested row, stored by ``data`` or not
        dense = data._t
        keep = torch.zeros(dense.shape[0], dtype=torch.bool, device=dense.device)
        keep[want] = True
        res._shadow = dense * keep.reshape((-1,) + (1,) * (dense.dim() - 1)).to(dense.dtype)
    if out is not None:
        out[:] = res
        return out
    return res


def _gather_rows(rsp, want):
    """Rows ``want`` (sorted int64) of a row_sparse array, as a row_sparse array."""
    idx = rsp._aux[0]
    d = rsp._sdata
    if idx.numel() == rsp._sshape[0]:
        # every row stored (sorted): row i is at position i (a KVStore's full table)
        return _make_rsp(d.index_select(0, want), want, rsp.shape, rsp._ctx)
    out = torch.zeros((want.numel(),) + tuple(d.shape[1:]), dtype=d.dtype, device=d.device)
    if idx.numel() and want.numel():
        pos = torch.searchsorted(idx, want).clamp_(max=idx.numel() - 1)
        hit = idx[pos] == want
        out = out.index_put((hit.nonzero().reshape(-1),), d.index_select(0, pos[hit]))
    return _make_rsp(out, want, rsp.shape, rsp._ctx)


# ----------------------------------------------------------------------------- dot
def _wants_rsp_grad(x):
    ag = x._ag
    return (ag is not None and _state.recording and x._t.requires_grad
            and ag.grad.stype == "row_sparse")


class _CsrDenseDot(torch.autograd.Function):
    """``csr @ w`` whose gradient for ``w`` is a sparse COO tensor with the csr's columns as
    rows: MXNet's row_sparse gradient of ``dot(csr, weight)``."""

    @staticmethod
    def forward(ctx, w, rows, cols, vals, m):
        ctx.save_for_backward(rows, cols, vals)
        ctx.k = w.shape[0]
        out = torch.zeros((m,) + tuple(w.shape[1:]), dtype=w.dtype, device=w.device)
        return out.index_add_(0, rows, _scale_rows(w.index_select(0, cols), vals))

    @staticmethod
    def backward(ctx, g):
        rows, cols, vals = ctx.saved_tensors
        uniq, inv = torch.unique(cols, sorted=True, return_inverse=True)
        contrib = _scale_rows(g.index_select(0, rows), vals)
        data = torch.zeros((uniq.numel(),) + tuple(g.shape[1:]), dtype=g.dtype,
                           device=g.device).index_add_(0, inv, contrib)
        grad = torch.sparse_coo_tensor(uniq.reshape(1, -1), data, (ctx.k,) + tuple(g.shape[1:]),
                                       is_coalesced=True, check_invariants=False)
        return grad, None, None, None, None


def _scale_rows(x, vals):
    return x * vals.reshape((-1,) + (1,) * (x.dim() - 1))


def _csr_parts(c):
    return _csr_rows(c._aux[0]), c._aux[1], c._sdata


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, out=None,
        name=None):
    """Matrix product with sparse operands, with MXNet 1.9.1's output storage types.

    Parameters
    ----------
    lhs, rhs : NDArray
        2-D operands (either may be sparse).
    transpose_a, transpose_b : bool
        Use the transpose of ``lhs`` / ``rhs``.
    forward_stype : str, optional
        Convert the result to this storage type.
    out : NDArray, optional
        Where to write the result.

    Returns
    -------
    NDArray
        ``dot(csr, dense)``: dense; ``dot(csr.T, dense)``: row_sparse;
        ``dot(csr, row_sparse)``: dense; ``dot(csr.T, row_sparse)``: row_sparse;
        ``dot(dense, csr)`` and ``dot(dense, csr.T)``: csr; anything else runs on the dense
        forms and is dense.

    Notes
    -----

    Under ``autograd.record()``, the gradient of ``dot(csr, w)`` with respect to a weight whose
    gradient buffer is row_sparse is row_sparse (only the rows the csr's columns name).
    """
    r = _dot(lhs, rhs, transpose_a, transpose_b)
    if forward_stype is not None and r.stype != forward_stype:
        r = cast_storage(r, "default").tostype(forward_stype) if forward_stype != "default" \
            else cast_storage(r, "default")
    if out is not None:
        out[:] = r
        return out
    return r


def _dot(lhs, rhs, transpose_a, transpose_b):
    ls, rs = lhs.stype, rhs.stype
    if ls == "csr" and rhs.ndim == 2:
        if rs == "default":
            b = rhs._t.t() if transpose_b else rhs._t
            _check_inner(lhs, rhs, transpose_a, transpose_b, b.shape[0])
            rows, cols, vals = _csr_parts(lhs)
            if transpose_a:
                return _grad_guard(_csrT_dense, lhs, rows, cols, vals, b)
            if not transpose_b and _wants_rsp_grad(rhs):
                return _new(_CsrDenseDot.apply(b, rows, cols, vals.detach(), lhs.shape[0]),
                            lhs._ctx)
            out = torch.zeros((lhs.shape[0], b.shape[1]), dtype=b.dtype, device=b.device)
            return _new(_grad_guard(lambda: out.index_add(
                0, rows, _scale_rows(b.index_select(0, cols), vals))), lhs._ctx)
        if rs == "row_sparse" and not transpose_b:
            _check_inner(lhs, rhs, transpose_a, transpose_b, rhs.shape[0])
            _same_dtype(lhs, rhs)
            res = _grad_guard(_csr_rsp, lhs, rhs, transpose_a)
            if transpose_a and _needs_shadow(rhs):
                # MXNet differentiates dot(csr.T, w) densely: the whole head gradient reaches
                # every row of w the csr names (csr @ g), stored by w or not
                res._shadow = lhs._dense_t().detach().t() @ rhs._t
            return res
    if ls == "default" and rs == "csr" and lhs.ndim == 2 and not transpose_a:
        inner = rhs.shape[1] if transpose_b else rhs.shape[0]
        if lhs.shape[1] != inner:
            raise MXNetError(f"dot: shapes {lhs.shape} and {rhs.shape} (transpose_a="
                             f"{transpose_a}, transpose_b={transpose_b}) are not aligned")
        return _grad_guard(_dense_csr, lhs, rhs, transpose_b)
    from . import ops
    a = lhs if ls == "default" else _new(lhs._t, lhs._ctx)
    b = rhs if rs == "default" else _new(rhs._t, rhs._ctx)
    return ops.dot(a, b, transpose_a=transpose_a, transpose_b=transpose_b)


def _check_inner(lhs, rhs, ta, tb, inner):
    k = lhs.shape[0] if ta else lhs.shape[1]
    if k != inner:
        raise MXNetError(f"dot: shapes {lhs.shape} and {rhs.shape} (transpose_a={ta}, "
                         f"transpose_b={tb}) are not aligned")


def _csrT_dense(lhs, rows, cols, vals, b):
    uniq, inv = torch.unique(cols, sorted=True, return_inverse=True)
    contrib = _scale_rows(b.index_select(0, rows), vals)
    data = torch.zeros((uniq.numel(), b.shape[1]), dtype=b.dtype,
                       device=b.device).index_add(0, inv, contrib)
    return _make_rsp(data, uniq, (lhs.shape[1], b.shape[1]), lhs._ctx)


class _CsrRspDot(torch.autograd.Function):
    """``dot(csr, w)`` for a row_sparse variable ``w``. The gradient of the rows ``w`` stores
    goes to its values; MXNet's gradient (``dot(csr.T, ograd)``) also names the csr columns
    ``w`` does not store: those rows are kept on ``w`` (``_extra``) for ``_grad_source``."""

    @staticmethod
    def forward(ctx, rdata, pos, hit, meet, other, vals, m, owner):
        ctx.save_for_backward(pos, hit, meet, other, vals)
        ctx.owner = owner
        ctx.nrows = rdata.shape[0]
        contrib = _scale_rows(rdata.index_select(0, pos.index_select(0, hit)),
                              vals.index_select(0, hit))
        out = torch.zeros((m,) + tuple(rdata.shape[1:]), dtype=rdata.dtype, device=rdata.device)
        return out.index_add_(0, other.index_select(0, hit), contrib)

    @staticmethod
    def backward(ctx, g):
        pos, hit, meet, other, vals = ctx.saved_tensors
        contrib = _scale_rows(g.index_select(0, other), vals)
        grad = torch.zeros((ctx.nrows,) + tuple(g.shape[1:]), dtype=g.dtype, device=g.device)
        grad.index_add_(0, pos.index_select(0, hit), contrib.index_select(0, hit))
        miss = torch.ones(meet.numel(), dtype=torch.bool, device=meet.device)
        miss[hit] = False
        arr = ctx.owner()
        if arr is not None and bool(miss.any()):
            uniq, inv = torch.unique(meet[miss], sorted=True, return_inverse=True)
            data = torch.zeros((uniq.numel(),) + tuple(g.shape[1:]), dtype=g.dtype,
                               device=g.device).index_add_(0, inv, contrib[miss])
            arr._extra = (arr._extra or []) + [(uniq, data)]
        return grad, None, None, None, None, None, None, None


def _csr_rsp(lhs, rhs, transpose_a):
    rows, cols, vals = _csr_parts(lhs)
    ridx, rdata = rhs._aux[0], rhs._sdata
    # the csr dimension that meets the row_sparse rows
    meet, other = (rows, cols) if transpose_a else (cols, rows)
    n = rdata.shape[1]
    if rhs._sdata.requires_grad and _state.recording and rhs._gr is not True:
        # MXNet's gradient of dot(csr, w) names only the rows the csr reaches
        rhs._gr = (rhs._gr or []) + [meet]
    if ridx.numel():
        pos = torch.searchsorted(ridx, meet).clamp_(max=ridx.numel() - 1)
        hit = (ridx[pos] == meet).nonzero().reshape(-1)
    else:
        pos = hit = torch.zeros(0, dtype=_I64, device=rdata.device)
    if not transpose_a and rdata.requires_grad and _state.recording:
        out = _CsrRspDot.apply(rdata, pos, hit, meet, other, vals.detach(), lhs.shape[0],
                               weakref.ref(rhs))
        return _new(out, lhs._ctx)
    contrib = _scale_rows(rdata.index_select(0, pos.index_select(0, hit)), vals.index_select(0, hit))
    tgt = other.index_select(0, hit)
    if not transpose_a:
        out = torch.zeros((lhs.shape[0], n), dtype=rdata.dtype, device=rdata.device)
        return _new(out.index_add(0, tgt, contrib), lhs._ctx)
    uniq, inv = torch.unique(tgt, sorted=True, return_inverse=True)
    data = torch.zeros((uniq.numel(), n), dtype=rdata.dtype,
                       device=rdata.device).index_add(0, inv, contrib)
    return _make_rsp(data, uniq, (lhs.shape[1], n), lhs._ctx)


def _dense_csr(lhs, rhs, transpose_b):
    a = lhs._t
    # rhs._t: inside record() the dense view of a csr variable, whose gradient (lhs.T @ g)
    # reaches the positions the csr does not store too, as MXNet's
    c = rhs._t
    if transpose_b:
        prod = a @ c.t()
        structural = torch.diff(rhs._aux[0]).ne(0).nonzero().reshape(-1)
    else:
        prod = a @ c
        structural = torch.unique(rhs._aux[1], sorted=True)
    m = a.shape[0]
    k = structural.numel()
    data = prod.index_select(1, structural).reshape(-1)
    indptr = torch.arange(m + 1, dtype=_I64, device=a.device) * k
    indices = structural.repeat(m)
    return _make_csr(data, indptr, indices, (m, prod.shape[1]), lhs._ctx)


# ----------------------------------------------------------------------- Embedding
def Embedding(data, weight, input_dim=None, output_dim=None, dtype="float32", sparse_grad=False,
              out=None, name=None):
    """Rows ``weight[data]``; with ``sparse_grad`` the gradient of ``weight`` is row_sparse
    (the rows the batch used), which the weight's gradient buffer must be."""
    if isinstance(weight, BaseSparseNDArray):
        r = _embedding_sparse_weight(data, weight, input_dim, output_dim, sparse_grad)
        if out is not None:
            out[:] = r
            return out
        return r
    w = weight._t
    idx = data._t.detach()
    if idx.is_floating_point():
        idx = idx.to(_I64)
    idx = idx.clamp(0, w.shape[0] - 1)  # MXNet clips out-of-range ids
    sparse = bool(sparse_grad)
    if sparse:
        _check_sparse_embedding(weight)
    r = _grad_guard(_sparse_embedding if sparse else torch.nn.functional.embedding, idx, w)
    r = _new(r, data._ctx)
    if out is not None:
        out[:] = r
        return out
    return r


class _SparseEmbedding(torch.autograd.Function):
    """``weight[idx]`` whose weight gradient is a coalesced sparse COO tensor: the distinct ids,
    sorted, with their summed output gradients (MXNet's row_sparse embedding gradient), built
    directly rather than through torch's generic coalesce."""

    @staticmethod
    def forward(ctx, idx, weight):
        ctx.save_for_backward(idx)
        ctx.wshape = tuple(weight.shape)
        return torch.nn.functional.embedding(idx, weight)

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        flat = idx.reshape(-1)
        rows = g.reshape(flat.numel(), -1)
        uniq, inv = torch.unique(flat, sorted=True, return_inverse=True)
        data = torch.zeros((uniq.numel(), rows.shape[1]), dtype=g.dtype,
                           device=g.device).index_add_(0, inv, rows)
        grad = torch.sparse_coo_tensor(uniq.reshape(1, -1), data, ctx.wshape, is_coalesced=True,
                                       check_invariants=False)
        return None, grad


def _sparse_embedding(idx, weight):
    """Embedding lookup with a row_sparse weight gradient (see :class:`_SparseEmbedding`)."""
    if not (_state.recording and weight.requires_grad):
        return torch.nn.functional.embedding(idx, weight)
    return _SparseEmbedding.apply(idx, weight)


def _embedding_sparse_weight(data, weight, input_dim=None, output_dim=None, sparse_grad=False):
    """``Embedding`` of a row_sparse weight (e.g. rows pulled with ``row_sparse_data``): ids
    whose row the weight does not store give zeros. Differentiable with respect to the stored
    rows; the gradient names the rows the batch used (MXNet's row_sparse embedding gradient)."""
    if weight.stype != "row_sparse" or len(weight.shape) != 2:
        raise MXNetError(f"Embedding: a {weight.stype} weight of shape {weight.shape} is not "
                         "supported (row_sparse 2-D weights are)")
    if (input_dim is not None and weight.shape[0] != input_dim) or (
            output_dim is not None and weight.shape[1] != output_dim):
        raise MXNetError(f"Embedding: weight shape {weight.shape} does not match "
                         f"input_dim={input_dim}, output_dim={output_dim}")
    if sparse_grad:
        _check_sparse_embedding(weight)
    ids = data._t.detach()
    ids = ids.to(_I64).clamp(0, weight.shape[0] - 1)
    ridx, d = weight._aux[0], weight._sdata
    if d.requires_grad and _state.recording and weight._gr is not True:
        weight._gr = (weight._gr or []) + [ids.reshape(-1)]
    if d.requires_grad and _state.recording:
        # MXNet's gradient names every row the batch used, stored by the weight or not
        return _new(_RspEmbedding.apply(d, ridx, ids, weakref.ref(weight)), data._ctx)
    if ridx.numel() == 0:
        return _new(torch.zeros(tuple(ids.shape) + (weight.shape[1],), dtype=d.dtype,
                                device=d.device), data._ctx)
    pos = torch.searchsorted(ridx, ids).clamp_(max=ridx.numel() - 1)
    hit = (ridx[pos] == ids).unsqueeze(-1).to(d.dtype)

    def lookup():
        return torch.nn.functional.embedding(pos, d) * hit
    return _new(_grad_guard(lookup), data._ctx)


class _RspEmbedding(torch.autograd.Function):
    """Rows ``ids`` of a row_sparse variable (zeros for rows it does not store). The summed
    gradient of the stored rows goes to its values; that of the used rows it does not store is
    kept on the array (``_extra``) for ``_grad_source``, as for :class:`_CsrRspDot`."""

    @staticmethod
    def forward(ctx, d, ridx, ids, owner):
        ctx.owner = owner
        ctx.nrows = d.shape[0]
        ctx.save_for_backward(ridx, ids)
        out = torch.zeros(tuple(ids.shape) + tuple(d.shape[1:]), dtype=d.dtype,
                          device=d.device)
        if ridx.numel() == 0:
            return out
        pos = torch.searchsorted(ridx, ids).clamp_(max=ridx.numel() - 1)
        hit = (ridx[pos] == ids).unsqueeze(-1).to(d.dtype)
        return torch.nn.functional.embedding(pos, d) * hit

    @staticmethod
    def backward(ctx, g):
        ridx, ids = ctx.saved_tensors
        flat = ids.reshape(-1)
        rows = g.reshape((flat.numel(),) + tuple(g.shape[ids.dim():]))
        uniq, inv = torch.unique(flat, sorted=True, return_inverse=True)
        summed = torch.zeros((uniq.numel(),) + tuple(rows.shape[1:]), dtype=g.dtype,
                             device=g.device).index_add_(0, inv, rows)
        grad = torch.zeros((ctx.nrows,) + tuple(rows.shape[1:]), dtype=g.dtype,
                           device=g.device)
        stored = torch.isin(uniq, ridx)
        if bool(stored.any()):
            grad.index_add_(0, torch.searchsorted(ridx, uniq[stored]), summed[stored])
        arr = ctx.owner()
        if arr is not None and not bool(stored.all()):
            arr._extra = (arr._extra or []) + [(uniq[~stored], summed[~stored])]
        return grad, None, None, None


def _check_sparse_embedding(weight):
    """MXNet's checks for ``Embedding(sparse_grad=True)`` on a weight being differentiated."""
    ag = weight._ag
    if not (_state.recording and ag is not None and ag.grad_req != "null"):
        return
    if ag.grad.stype == "default":
        raise MXNetError("Cannot use sparse_grad = True, while stype of gradients w.r.t "
                         "embedding weight is default")
    if ag.grad_req == "add":
        raise MXNetError("SparseEmbedding layer doesn't support weight gradient calculation "
                         "with req != write")


# ------------------------------------------------------------------------ autograd
def _attach_sparse_grad(arr, grad_req="write", stype=None):
    """``attach_grad`` with a gradient buffer of storage type ``stype``."""
    if stype is None:
        stype = arr.stype
    if stype not in _STYPES:
        raise MXNetError(f"attach_grad: invalid stype {stype!r}; expected one of {_STYPES}")
    buf = zeros(stype, arr.shape, ctx=arr._ctx, dtype=arr.dtype)
    _ag_mod._attach(arr, grad_req, buf)


def _attach_sparse_var(arr, grad_req, grad_buf, register=True):
    """Make the sparse array ``arr`` a variable: its values tensor becomes the torch leaf."""
    if grad_req not in _ag_mod._GRAD_REQS:
        raise ValueError(f"grad_req must be one of {_ag_mod._GRAD_REQS}, got {grad_req!r}")
    d = arr._sdata
    if d.requires_grad or d.grad_fn is not None:
        d = d.detach()
    if grad_req != "null" and (d.is_floating_point() or d.is_complex()):
        d.requires_grad_(True)
    arr._sdata = d
    arr._gr = None
    arr._shadow = None
    if grad_buf is None:
        grad_buf = zeros(arr.stype, arr.shape, ctx=arr._ctx, dtype=arr.dtype)
    arr._ag = _ag_mod._AutogradInfo(grad_buf, grad_req)
    if register:
        _ag_mod._variables.add(arr)


def _grad_source(v, g):
    """The gradient ``g`` torch computed for variable ``v``, as an NDArray of any stype."""
    if isinstance(v, BaseSparseNDArray):
        full, v._full = v._full, None
        if v.stype == "row_sparse" and full is not None:
            # a dense op used the variable: the gradient is dense over every row, with the
            # stored rows' total (dense and sparse ops) in g
            full = full.index_copy(0, v._aux[0], g)
            return _from_dense_t(full, "row_sparse", v._ctx)
        if v.stype == "row_sparse":
            src = _make_rsp(g, v._aux[0], v.shape, v._ctx)
            touched = v._gr
            if isinstance(touched, list):
                keep = torch.unique(torch.cat(touched), sorted=True)
                src = _gather_rows(src, keep[torch.isin(keep, v._aux[0])])
            extra, v._extra = v._extra, None
            if extra:
                src = add_n(src, *[_make_rsp(d, u, v.shape, v._ctx) for u, d in extra])
            return src
        if full is not None:
            full = full.index_put((_csr_rows(v._aux[0]), v._aux[1]), g)
            return _from_dense_t(full, "csr", v._ctx)
        return _make_csr(g, v._aux[0], v._aux[1], v.shape, v._ctx)
    if g.layout is torch.sparse_coo:
        g = g.coalesce()
        if g.sparse_dim() == 1:
            return _make_rsp(g.values(), g.indices()[0], tuple(g.shape), v._ctx)
        return _new(g.to_dense(), v._ctx)
    if g.layout is not torch.strided:
        return _new(g.to_dense(), v._ctx)
    return _new(g, v._ctx)


def _write_grad(v, g):
    """Store the gradient ``g`` of variable ``v`` into its buffer (write or add), converting it
    to the buffer's storage type; called by ``autograd.backward`` for sparse cases."""
    ag = v._ag
    buf = ag.grad
    src = _grad_source(v, g)
    add_req = ag.grad_req == "add"
    if buf.stype == "default":
        t = src._t
        if add_req:
            buf._t.add_(t)
        else:
            buf._t.copy_(t)
        return
    if add_req:
        src = add_n(buf, src) if src.stype == buf.stype else _new(buf._t + src._t, buf._ctx)
    if src.stype == buf.stype:
        buf._replace(src)
    else:
        buf._replace(_from_dense_t(src._t, buf.stype, buf._ctx))


def _grad_result(v, g):
    """``autograd.grad``'s result for variable ``v``: an NDArray of the gradient's stype."""
    if g is None:
        return zeros(v.stype, v.shape, ctx=v._ctx, dtype=v.dtype)
    return _grad_source(v, g)


def _head_grad(h, g):
    """The head gradient for a sparse head ``h``: all of ``g`` (dense) when the head has a
    shadow (see ``BaseSparseNDArray``), else ``g`` at the positions ``h`` stores (the head's
    torch tensor is then its stored values)."""
    gt = g._t.detach()
    if getattr(h, "_shadow", None) is not None:
        return gt
    if h.stype == "row_sparse":
        return gt.index_select(0, h._aux[0])
    return gt[_csr_rows(h._aux[0]), h._aux[1]]


# ----------------------------------------------------------------- optimizer kernels
# Lazy updates with a row_sparse gradient: only the rows named by ``grad.indices`` of the
# weight and of its states change, in place. The optimizers call these when
# ``grad.stype == 'row_sparse'`` (and ``lazy_update``); every other sparse case is the dense
# update on the densified gradient, which is what MXNet 1.9.1 computes too.
def _full_rows(arr):
    """The dense row tensor behind a weight or state, updated in place by the kernels: the
    tensor of a dense array, or the values of a row_sparse array made to store every row."""
    if not isinstance(arr, BaseSparseNDArray):
        return arr._t
    if arr.stype != "row_sparse":
        raise MXNetError(f"optimizer: a {arr.stype} weight or state cannot be updated lazily")
    n = arr.shape[0]
    if arr._aux[0].numel() != n:
        # MXNet fills the rows a row_sparse state does not store with zeros before updating
        d = arr._sdata
        full = _rsp_dense_t(d.detach(), arr._aux[0], arr._sshape)
        if d.requires_grad:
            full.requires_grad_(True)
        arr._sdata = full
        arr._aux = (torch.arange(n, device=full.device),)
    return arr._sdata


def _grad_rows(grad, rescale, clip):
    """(row ids, rescaled and clipped gradient rows) of a row_sparse gradient."""
    g = grad._sdata.detach()
    if rescale != 1.0:
        g = g * rescale
    if clip is not None and clip > 0:
        g = g.clamp(-clip, clip)
    return grad._aux[0], g


@torch.no_grad()
def lazy_sgd_update(weight, grad, mom, lr, wd=0.0, momentum=0.0, rescale_grad=1.0,
                    clip_gradient=None):
    """SGD on the rows of ``grad`` only: ``w = (1 - lr*wd) * w - lr * g`` or, with momentum,
    ``mom = momentum * mom - lr*wd*w - lr*g; w += mom``."""
    idx, g = _grad_rows(grad, rescale_grad, clip_gradient)
    if idx.numel() == 0:
        return
    w = _full_rows(weight)
    wr = w.index_select(0, idx)
    if mom is None or momentum == 0.0:
        w.index_copy_(0, idx, (1.0 - lr * wd) * wr - lr * g)
        return
    m = _full_rows(mom)
    mr = m.index_select(0, idx).mul_(momentum).sub_(wr, alpha=lr * wd).sub_(g, alpha=lr)
    m.index_copy_(0, idx, mr)
    w.index_add_(0, idx, mr)  # cheaper than index_copy_ of wr + mr on CPU


@torch.no_grad()
def lazy_adam_update(weight, grad, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8,
                     wd=0.0, rescale_grad=1.0, clip_gradient=None):
    """Adam on the rows of ``grad`` only (``lr`` already bias-corrected by the caller)."""
    idx = grad._aux[0]
    if idx.numel() == 0:
        return
    w = _full_rows(weight)
    wr = w.index_select(0, idx)
    g = grad._sdata.detach() * rescale_grad + wd * wr
    if clip_gradient is not None and clip_gradient > 0:
        g = g.clamp(-clip_gradient, clip_gradient)
    m = _full_rows(mean)
    v = _full_rows(var)
    mr = beta1 * m.index_select(0, idx) + (1.0 - beta1) * g
    vr = beta2 * v.index_select(0, idx) + (1.0 - beta2) * g * g
    m.index_copy_(0, idx, mr)
    v.index_copy_(0, idx, vr)
    w.index_add_(0, idx, mr.div(vr.sqrt().add_(epsilon)).mul_(-lr))  # w - x, exactly


@torch.no_grad()
def sparse_adagrad_update(weight, grad, history, lr, epsilon=1e-7, wd=0.0, rescale_grad=1.0,
                          clip_gradient=None):
    """AdaGrad on the rows of ``grad`` only; MXNet supports no weight decay here."""
    if wd != 0:
        raise MXNetError(f"sparse adagrad_update does not support weight decay (wd={wd}); "
                         "use wd=0")
    idx, g = _grad_rows(grad, rescale_grad, clip_gradient)
    if idx.numel() == 0:
        return
    w = _full_rows(weight)
    h = _full_rows(history)
    hr = h.index_select(0, idx) + g * g
    h.index_copy_(0, idx, hr)
    w.index_add_(0, idx, g.div((hr + epsilon).sqrt()).mul_(-lr))


@torch.no_grad()
def sparse_group_adagrad_update(weight, grad, history, lr, epsilon=1e-5, rescale_grad=1.0,
                                clip_gradient=None):
    """Group AdaGrad on the rows of ``grad``: one accumulator per row (``history`` is
    ``(rows, 1)``)."""
    idx, g = _grad_rows(grad, rescale_grad, clip_gradient)
    if idx.numel() == 0:
        return
    w = _full_rows(weight)
    h = _full_rows(history)
    hr = h.index_select(0, idx) + (g * g).mean(dim=tuple(range(1, g.dim())), keepdim=True) \
        .reshape(-1, *h.shape[1:])
    h.index_copy_(0, idx, hr)
    w.index_add_(0, idx, g.div((hr + epsilon).sqrt()).mul_(-lr))


@torch.no_grad()
def sparse_ftrl_update(weight, grad, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
                       clip_gradient=None):
    """FTRL on the rows of ``grad`` only (MXNet does this when weight, z and n are all
    row_sparse)."""
    idx, g = _grad_rows(grad, rescale_grad, clip_gradient)
    if idx.numel() == 0:
        return
    w = _full_rows(weight)
    zt = _full_rows(z)
    nt = _full_rows(n)
    wr = w.index_select(0, idx)
    nr = nt.index_select(0, idx)
    zr = zt.index_select(0, idx) + g - ((nr + g * g).sqrt() - nr.sqrt()) * wr / lr
    nr = nr + g * g
    zt.index_copy_(0, idx, zr)
    nt.index_copy_(0, idx, nr)
    new_w = (torch.sign(zr) * lamda1 - zr) / ((beta + nr.sqrt()) / lr + wd) * \
        (zr.abs() > lamda1).to(zr.dtype)
    w.index_copy_(0, idx, new_w)


# ------------------------------------------------------------- MXNet's update operators
# ``nd.sparse.sgd_update`` & co, with MXNet's signatures: lazy on the rows of a row_sparse
# gradient when ``lazy_update`` (MXNet's default), the dense formula otherwise. They update
# ``weight`` (and the states) in place; ``out`` must be ``weight`` or None, as MXNet's
# optimizers always pass ``out=weight``.
def _clip_arg(clip_gradient):
    return clip_gradient if clip_gradient is not None and clip_gradient >= 0 else None


def _dense_grad(grad, rescale_grad, clip):
    g = grad._t.detach() * rescale_grad
    return g.clamp(-clip, clip) if clip is not None else g


def _check_out(weight, out, op):
    if out is not None and out is not weight:
        raise MXNetError(f"{op}: out must be the weight array (the update is in place)")
    return weight


@torch.no_grad()
def sgd_update(weight, grad, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
               lazy_update=True, out=None, name=None):
    """SGD step ``weight = weight - lr * (clip(rescale_grad * grad) + wd * weight)``.

    Parameters
    ----------
    weight, grad : NDArray
        With a row_sparse ``grad`` and ``lazy_update``, only the rows it stores change.
    lr, wd, rescale_grad, clip_gradient : float
        ``clip_gradient < 0`` turns clipping off.
    lazy_update : bool
    out : NDArray, optional
        ``weight`` (the update is in place).

    Returns
    -------
    NDArray
        ``weight``.
    """
    _check_out(weight, out, "sgd_update")
    clip = _clip_arg(clip_gradient)
    if grad.stype == "row_sparse" and lazy_update:
        lazy_sgd_update(weight, grad, None, lr, wd, 0.0, rescale_grad, clip)
        return weight
    w = _full_rows(weight)
    w.mul_(1.0 - lr * wd).sub_(_dense_grad(grad, rescale_grad, clip), alpha=lr)
    return weight


@torch.no_grad()
def sgd_mom_update(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, lazy_update=True, out=None, name=None):
    """SGD with momentum: ``mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad *
    grad); weight += mom``.

    Parameters
    ----------
    weight, grad, mom : NDArray
        With a row_sparse ``grad`` and ``lazy_update``, only the rows it stores change (in the
        weight and in ``mom``).
    lr, momentum, wd, rescale_grad, clip_gradient : float
    lazy_update : bool
    out : NDArray, optional
        ``weight``.

    Returns
    -------
    NDArray
        ``weight``.
    """
    _check_out(weight, out, "sgd_mom_update")
    clip = _clip_arg(clip_gradient)
    if grad.stype == "row_sparse" and lazy_update:
        lazy_sgd_update(weight, grad, mom, lr, wd, momentum, rescale_grad, clip)
        return weight
    w = _full_rows(weight)
    m = _full_rows(mom)
    m.mul_(momentum).sub_(w, alpha=lr * wd).sub_(_dense_grad(grad, rescale_grad, clip), alpha=lr)
    w.add_(m)
    return weight


@torch.no_grad()
def adam_update(weight, grad, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
                rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True, out=None, name=None):
    """Adam step (``lr`` already bias-corrected by the caller, as MXNet's optimizer does).

    Parameters
    ----------
    weight, grad, mean, var : NDArray
        With a row_sparse ``grad`` and ``lazy_update``, only the rows it stores change.
    lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient : float
    lazy_update : bool
    out : NDArray, optional
        ``weight``.

    Returns
    -------
    NDArray
        ``weight``.
    """
    _check_out(weight, out, "adam_update")
    clip = _clip_arg(clip_gradient)
    if grad.stype == "row_sparse" and lazy_update:
        lazy_adam_update(weight, grad, mean, var, lr, beta1, beta2, epsilon, wd, rescale_grad,
                         clip)
        return weight
    w = _full_rows(weight)
    g = grad._t.detach() * rescale_grad + wd * w
    if clip is not None:
        g = g.clamp(-clip, clip)
    m = _full_rows(mean)
    v = _full_rows(var)
    m.mul_(beta1).add_(g, alpha=1.0 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1.0 - beta2)
    w.sub_(lr * m / (v.sqrt() + epsilon))
    return weight


@torch.no_grad()
def adagrad_update(weight, grad, history, lr, epsilon=1e-7, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, out=None, name=None):
    """AdaGrad step on the rows of a row_sparse ``grad`` (MXNet's sparse-only operator).

    Parameters
    ----------
    weight, history : NDArray
    grad : RowSparseNDArray
    lr, epsilon, rescale_grad, clip_gradient : float
    wd : float
        Must be 0 (MXNet supports no weight decay here).
    out : NDArray, optional
        ``weight``.

    Returns
    -------
    NDArray
        ``weight``.
    """
    _check_out(weight, out, "adagrad_update")
    if grad.stype != "row_sparse":
        raise MXNetError("adagrad_update: the gradient must be row_sparse (MXNet's sparse "
                         f"AdaGrad operator), got storage type '{grad.stype}'")
    sparse_adagrad_update(weight, grad, history, lr, epsilon, wd, rescale_grad,
                          _clip_arg(clip_gradient))
    return weight


@torch.no_grad()
def ftrl_update(weight, grad, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
                clip_gradient=-1.0, out=None, name=None):
    """FTRL step; lazy on the rows of a row_sparse ``grad`` when weight, z and n are all
    row_sparse (as MXNet), dense otherwise.

    Parameters
    ----------
    weight, grad, z, n : NDArray
    lr, lamda1, beta, wd, rescale_grad, clip_gradient : float
    out : NDArray, optional
        ``weight``.

    Returns
    -------
    NDArray
        ``weight``.
    """
    _check_out(weight, out, "ftrl_update")
    clip = _clip_arg(clip_gradient)
    if grad.stype == "row_sparse" and weight.stype == z.stype == n.stype == "row_sparse":
        sparse_ftrl_update(weight, grad, z, n, lr, lamda1, beta, wd, rescale_grad, clip)
        return weight
    dense = [_new(_full_rows(a) if a.stype == "default" else a._t.clone(), a._ctx)
             for a in (weight, z, n)]
    full = _make_rsp(grad._t.detach(), torch.arange(grad.shape[0], device=grad._t.device),
                     grad.shape, grad._ctx)
    sparse_ftrl_update(dense[0], full, dense[1], dense[2], lr, lamda1, beta, wd, rescale_grad,
                       clip)
    for orig, d in zip((weight, z, n), dense):
        if orig.stype != "default":
            orig._assign(d)
    return weight


def slice(data, begin, end, step=None, out=None, name=None):  # noqa: A001 - MXNet's name
    """``nd.slice`` for a CSR matrix: rows ``begin[0]:end[0]`` and, when given, columns
    ``begin[1]:end[1]``, as a CSRNDArray. A step other than 1, or another storage type, runs
    the dense operator (a dense result), as MXNet falls back.

    Parameters
    ----------
    data : NDArray
    begin, end : tuple
        Per-axis bounds (None for the whole axis).
    step : tuple, optional
    out : NDArray, optional
    """
    from . import ops
    steps = tuple(step or ())
    if getattr(data, "stype", "default") != "csr" or any(st not in (None, 1) for st in steps):
        return ops.slice(data.tostype("default") if data.stype != "default" else data,
                         begin, end, step=step, out=out)
    begin, end = tuple(begin), tuple(end)
    if not 1 <= len(begin) == len(end) <= 2:
        raise MXNetError(f"slice: a CSR matrix takes begin/end for 1 or 2 axes, got "
                         f"begin={begin}, end={end}")
    rows = data[builtins.slice(begin[0], end[0])]
    if len(begin) == 1 or (begin[1] in (None, 0) and end[1] in (None, data.shape[1])):
        res = rows
    else:
        c0, c1, _ = builtins.slice(begin[1], end[1]).indices(data.shape[1])
        c1 = max(c0, c1)
        cols = rows._aux[1]
        keep = (cols >= c0) & (cols < c1)
        nrows = rows.shape[0]
        row_of = torch.repeat_interleave(torch.arange(nrows, device=cols.device),
                                         rows._aux[0][1:] - rows._aux[0][:-1])
        counts = torch.bincount(row_of[keep], minlength=nrows)
        indptr = torch.zeros(nrows + 1, dtype=_I64, device=cols.device)
        indptr[1:] = torch.cumsum(counts, 0)
        res = _make_csr(rows._sdata[keep], indptr, cols[keep] - c0, (nrows, c1 - c0),
                        data._ctx)
    if out is not None:
        out[:] = res
        return out
    return res


def _csr_take(a, idx, mode):
    """Rows ``idx`` (clipped or wrapped into range) of a CSR matrix, as a CSR matrix."""
    n = a.shape[0]
    idx = idx.detach().long()
    idx = idx % n if mode == "wrap" else idx.clamp(0, n - 1)
    indptr, cols = a._aux
    starts, counts = indptr[idx], indptr[idx + 1] - indptr[idx]
    new_ptr = torch.zeros(idx.numel() + 1, dtype=_I64, device=indptr.device)
    new_ptr[1:] = torch.cumsum(counts, 0)
    # position of every stored element of the result in the source's stored arrays
    offs = torch.arange(int(new_ptr[-1]), device=indptr.device) - \
        torch.repeat_interleave(new_ptr[:-1], counts)
    src = torch.repeat_interleave(starts, counts) + offs
    return _make_csr(_grad_guard(a._sdata.index_select, 0, src), new_ptr,
                     cols.index_select(0, src), (idx.numel(), a.shape[1]), a._ctx)


def _regression_output(name):
    def op(data, label, grad_scale=1.0, out=None, name=None):
        from . import nn_legacy
        return getattr(nn_legacy, op.__name__)(data, label, grad_scale=grad_scale, out=out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``{name}`` with sparse inputs, as MXNet's: ``data`` (csr or dense) and "
                  "``label`` (dense, csr or row_sparse) give a dense output, the same values "
                  "and gradient as the dense operator; the gradient of a csr ``data`` is csr.")
    return op


LinearRegressionOutput = _regression_output("LinearRegressionOutput")
LogisticRegressionOutput = _regression_output("LogisticRegressionOutput")
MAERegressionOutput = _regression_output("MAERegressionOutput")


def _sparse_ste(kind):
    def op(data, out=None, name=None):
        from . import contrib_more
        dense = getattr(contrib_more, f"{kind}_ste")
        if not isinstance(data, BaseSparseNDArray):
            return dense(data, out=out)
        if not data._sdata.is_floating_point():
            r = _unary_sparse(torch.sign if kind == "sign" else torch.clone, data)
        else:
            r = _unary_sparse(lambda t: contrib_more._StraightThrough.apply(t, kind), data)
        if out is not None:
            out[:] = r
            return out
        return r
    op.__name__ = op.__qualname__ = f"_contrib_{kind}_ste"
    op.__doc__ = (f"``contrib.{kind}_ste`` keeping a sparse input's storage type (it maps 0 "
                  "to 0), as MXNet's: the gradient, ones, reaches every position.")
    return op


_contrib_round_ste = _sparse_ste("round")
_contrib_sign_ste = _sparse_ste("sign")


def __getattr__(name):
    # MXNet's nd.sparse namespace holds every operator; those without a sparse version here
    # are the dense ones (which take sparse inputs through the storage fallback).
    if name.startswith("__"):
        raise AttributeError(name)
    from . import ops, nn_ops
    for mod in (ops, nn_ops):
        if name in getattr(mod, "__all__", ()) or (hasattr(mod, name) and not name.startswith("_")
                                                    and callable(getattr(mod, name))):
            return getattr(mod, name)
    raise AttributeError(f"module 'neogluon.ndarray.sparse' has no attribute {name!r}")
