"""``nd.save`` / ``nd.load`` in MXNet 1.x's binary NDArray-list format.

A file written here loads in MXNet 1.9.1 (``mx.nd.load``) and the other way round. The format
(little-endian):

- ``uint64`` list magic ``0x112``, ``uint64`` reserved 0, ``uint64`` number of arrays;
- per array a V2 record: ``uint32`` magic ``0xF993FAC9``, ``int32`` storage type (0 dense,
  1 row_sparse, 2 csr); for sparse arrays the storage shape; the shape (``uint32`` ndim, then
  ``int64`` dims); the context (``int32`` device type, ``int32`` device id); ``int32`` dtype
  flag; for sparse arrays each aux array's dtype flag and shape; the raw data; for sparse
  arrays the raw aux data;
- ``uint64`` number of names, then each name as ``uint64`` length and UTF-8 bytes.

Loading reads only numbers and names; it never runs code. Older V1 (``0xF993FAC8``) and
pre-V1 records are read too.
"""
from __future__ import annotations

import os
import struct

import numpy as np
import torch

from .._fileio import write_bytes
from ..base import MXNetError
from ..context import Context, num_gpus
from .ndarray import NDArray, _new

__all__ = ["save", "load", "load_frombuffer"]

_LIST_MAGIC = 0x112
_V1_MAGIC = 0xF993FAC8
_V2_MAGIC = 0xF993FAC9
_V3_MAGIC = 0xF993FACA

_FLAG2DT = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
            5: np.int8, 6: np.int64, 7: np.bool_, 8: np.int16}
_DT2FLAG = {np.dtype(v): k for k, v in _FLAG2DT.items()}
_BF16_FLAG = 12
_STYPES = {0: "default", 1: "row_sparse", 2: "csr"}
_STYPE_IDS = {v: k for k, v in _STYPES.items()}


# ------------------------------------------------------------------------------ writing
def _dtype_flag(arr, fname):
    t = arr._t
    if t.dtype is torch.bfloat16:
        return _BF16_FLAG
    flag = _DT2FLAG.get(np.dtype(arr.dtype))
    if flag is None:
        raise MXNetError(f"nd.save({fname!r}): dtype {arr.dtype} cannot be saved")
    return flag


def _raw_bytes(t):
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    if t.dtype is torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def _shape_bytes(shape):
    return struct.pack("<I", len(shape)) + struct.pack(f"<{len(shape)}q", *shape)


def _ctx_bytes(ctx):
    return struct.pack("<ii", ctx.device_typeid if ctx.device_typeid in (1, 2) else 1,
                       ctx.device_id)


def _record(arr, fname, np_shape=False):
    stype = getattr(arr, "stype", "default")
    if stype not in _STYPE_IDS:
        raise MXNetError(f"nd.save({fname!r}): storage type {stype!r} cannot be saved")
    # Under NumPy shape semantics MXNet writes V3 records (a rank of 0 is a scalar there).
    parts = [struct.pack("<Ii", _V3_MAGIC if np_shape else _V2_MAGIC, _STYPE_IDS[stype])]
    flag = _dtype_flag(arr, fname)
    if stype == "default":
        parts += [_shape_bytes(arr.shape), _ctx_bytes(arr.context), struct.pack("<i", flag),
                  _raw_bytes(arr._t)]
        return b"".join(parts)
    data = arr.data
    if stype == "row_sparse":
        aux = [arr.indices]
    else:
        aux = [arr.indptr, arr.indices]
    parts += [_shape_bytes(data.shape), _shape_bytes(arr.shape), _ctx_bytes(arr.context),
              struct.pack("<i", flag)]
    for a in aux:
        parts += [struct.pack("<i", _dtype_flag(a, fname)), _shape_bytes(a.shape)]
    parts.append(_raw_bytes(data._t))
    for a in aux:
        parts.append(_raw_bytes(a._t))
    return b"".join(parts)


def _encode(data, fname):
    if isinstance(data, NDArray):
        arrays, names = [data], []
    elif isinstance(data, dict):
        names, arrays = [], []
        for k, v in data.items():
            if not isinstance(k, str) or not isinstance(v, NDArray):
                raise ValueError("data needs to either be a NDArray, dict of (str, NDArray) "
                                 f"pairs or a list of NDArrays; got key {k!r} with a value of "
                                 f"type {type(v).__name__}")
            names.append(k)
            arrays.append(v)
    elif isinstance(data, (list, tuple)):
        for v in data:
            if not isinstance(v, NDArray):
                raise ValueError("data needs to either be a NDArray, dict of (str, NDArray) "
                                 f"pairs or a list of NDArrays; got a list item of type "
                                 f"{type(v).__name__}")
        arrays, names = list(data), []
    else:
        raise ValueError("data needs to either be a NDArray, dict of (str, NDArray) pairs or "
                         f"a list of NDArrays; got {type(data).__name__}")
    out = [struct.pack("<QQQ", _LIST_MAGIC, 0, len(arrays))]
    from ..util import is_np_shape
    np_shape = is_np_shape()
    out += [_record(a, fname, np_shape) for a in arrays]
    out.append(struct.pack("<Q", len(names)))
    for n in names:
        b = n.encode("utf-8")
        out.append(struct.pack("<Q", len(b)) + b)
    return b"".join(out)


def save(fname, data):
    """Save an NDArray, a list of NDArrays or a dict of str to NDArray, in MXNet's format.

    The file is written to a temporary file in the same directory and then moved into place,
    so a failed save never leaves a half-written file behind.

    Parameters
    ----------
    fname : str
        Path of the file.
    data : NDArray, list of NDArray or dict of str to NDArray
    """
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError(f"fname must be a str path, got {type(fname).__name__}")
    fname = os.fspath(fname)
    write_bytes(fname, _encode(data, fname))


# ------------------------------------------------------------------------------ reading
class _Reader:
    __slots__ = ("buf", "pos", "fname")

    def __init__(self, buf, fname):
        self.buf = buf
        self.pos = 0
        self.fname = fname

    def take(self, n, what):
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise MXNetError(f"nd.load({self.fname!r}): the file is truncated or corrupt "
                             f"(wanted {n} bytes for {what} at offset {self.pos}, the file "
                             f"has {len(self.buf)})")
        b = self.buf[self.pos:end]
        self.pos = end
        return b

    def unpack(self, fmt, what):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def shape(self, wide=True):
        (ndim,) = self.unpack("<i", "a shape's rank")
        if ndim == -1:
            return None  # (V3: an array with an unknown shape)
        if not 0 <= ndim <= 32:
            raise MXNetError(f"nd.load({self.fname!r}): corrupt file (an array of rank {ndim})")
        fmt = f"<{ndim}{'q' if wide else 'I'}"
        dims = self.unpack(fmt, "a shape")
        return self.checked(dims)

    def checked(self, dims):
        if any(d < 0 for d in dims):
            raise MXNetError(f"nd.load({self.fname!r}): corrupt file (shape {dims})")
        # Data sizes are checked against the bytes left before anything is allocated; a
        # zero-size shape holds no data, but its other dims must still describe an array.
        span = 1
        for d in dims:
            span *= max(d, 1)
        if span > 2 ** 48:
            raise MXNetError(f"nd.load({self.fname!r}): corrupt file (shape {dims} is larger "
                             "than any array)")
        return tuple(dims)


def _dtype_of(flag, fname):
    if flag == _BF16_FLAG:
        return "bfloat16"
    dt = _FLAG2DT.get(flag)
    if dt is None:
        raise MXNetError(f"nd.load({fname!r}): unsupported dtype flag {flag}")
    return np.dtype(dt)


def _raw(r, shape, dtype, what):
    n = 1
    for d in shape:
        n *= d
    if dtype == "bfloat16":
        b = r.take(2 * n, what)
        t = torch.from_numpy(np.frombuffer(b, dtype=np.int16).copy()).view(torch.bfloat16)
        return t.reshape(shape)
    b = r.take(dtype.itemsize * n, what)
    return torch.from_numpy(np.frombuffer(b, dtype=dtype).copy().reshape(shape))


def _target_ctx(dev_type, dev_id, ctx):
    if ctx is not None:
        return ctx
    # As MXNet: CPU records load on cpu(0); GPU records on their GPU when there is one.
    if dev_type == 2 and dev_id < num_gpus():
        return Context("gpu", dev_id)
    return Context("cpu", 0)


def _read_array(r, ctx):
    (magic,) = r.unpack("<I", "an array header")
    from ..util import is_np_shape
    if (magic == _V3_MAGIC) != is_np_shape():
        if magic == _V3_MAGIC:
            raise MXNetError(f"nd.load({r.fname!r}): the arrays were saved under NumPy shape "
                             "semantics and must be loaded under them too (with "
                             "mx.np_shape(True) / mx.util.use_np_shape)")
        raise MXNetError(f"nd.load({r.fname!r}): the arrays were not saved under NumPy shape "
                         "semantics but are being loaded under them; load them with "
                         "mx.np_shape(False)")
    if magic in (_V2_MAGIC, _V3_MAGIC):
        (stype,) = r.unpack("<i", "a storage type")
        if stype not in _STYPES:
            raise MXNetError(f"nd.load({r.fname!r}): unknown storage type {stype}")
        sshape = r.shape() if stype != 0 else None
        shape = r.shape()
    elif magic == _V1_MAGIC:
        stype, sshape = 0, None
        shape = r.shape()
    else:
        # Pre-V1 records start with the rank and have 32-bit dims.
        stype, sshape = 0, None
        ndim = magic
        if ndim > 32:
            raise MXNetError(f"nd.load({r.fname!r}): not an MXNet NDArray record (magic "
                             f"{magic:#x})")
        shape = r.checked(tuple(r.unpack(f"<{ndim}I", "a shape")))
    if shape is None or (len(shape) == 0 and magic != _V3_MAGIC):
        return None  # an empty (none) array
    dev_type, dev_id = r.unpack("<ii", "a context")
    (flag,) = r.unpack("<i", "a dtype flag")
    dtype = _dtype_of(flag, r.fname)
    target = _target_ctx(dev_type, dev_id, ctx)
    if stype == 0:
        t = _raw(r, shape, dtype, "array data")
        if target.device_typeid == 2:
            t = t.to(target.torch_device)
        return _new(t, target)
    naux = 1 if stype == 1 else 2
    aux_meta = []
    for _ in range(naux):
        (aflag,) = r.unpack("<i", "an aux dtype flag")
        aux_meta.append((_dtype_of(aflag, r.fname), r.shape()))
    if sshape is None or any(s is None for _, s in aux_meta):
        raise MXNetError(f"nd.load({r.fname!r}): corrupt {_STYPES[stype]} array (its data or "
                         "indices have an unknown shape)")
    data = _raw(r, sshape, dtype, "sparse data")
    aux = [_raw(r, s, d, "sparse indices") for d, s in aux_meta]
    _check_sparse(r.fname, stype, shape, sshape, aux)
    from . import sparse  # noqa: WPS433 - only sparse files need it
    d_nd = _new(data, Context("cpu", 0))
    aux_nd = [_new(a, Context("cpu", 0)) for a in aux]
    np_dtype = np.float32 if dtype == "bfloat16" else dtype
    try:
        if stype == 1:
            return sparse.row_sparse_array((d_nd, aux_nd[0]), shape=shape, ctx=target,
                                           dtype=np_dtype)
        return sparse.csr_matrix((d_nd, aux_nd[1], aux_nd[0]), shape=shape, ctx=target,
                                 dtype=np_dtype)
    except (MXNetError, ValueError) as err:
        # (the sparse constructors check data, indices and shape against each other)
        raise MXNetError(f"nd.load({r.fname!r}): corrupt {_STYPES[stype]} array: "
                         f"{err}") from None


def _check_sparse(fname, stype, shape, sshape, aux):
    """Refuse a sparse record whose indices do not describe ``shape`` (they would index out
    of bounds later): row_sparse rows sorted, unique and in range; csr 2-D with a
    non-decreasing ``indptr`` from 0 to the number of values and columns in range."""
    def bad(msg):
        return MXNetError(f"nd.load({fname!r}): corrupt {_STYPES[stype]} array of shape "
                          f"{shape}: {msg}")
    if any(t.is_floating_point() or t.dtype is torch.bool for t in aux):
        raise bad("its indices are not integers")
    if stype == 1:
        idx = aux[0].reshape(-1).to(torch.int64)
        if not shape or sshape is None or len(sshape) != len(shape) or \
                tuple(sshape[1:]) != tuple(shape[1:]) or sshape[0] != idx.numel():
            raise bad(f"data of shape {sshape} does not match {idx.numel()} row indices")
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= shape[0] or
                            bool((idx[1:] <= idx[:-1]).any())):
            raise bad("its row indices are not sorted, unique and within the rows")
        return
    if len(shape) != 2 or sshape is None or len(sshape) != 1:
        raise bad("a csr array must be 2-D with 1-D data")
    ptr = aux[0].reshape(-1).to(torch.int64)
    ind = aux[1].reshape(-1).to(torch.int64)
    nnz = sshape[0]
    if ptr.numel() != shape[0] + 1 or ind.numel() != nnz:
        raise bad(f"indptr has {ptr.numel()} entries and indices {ind.numel()} for "
                  f"{shape[0]} rows and {nnz} values")
    if int(ptr[0]) != 0 or int(ptr[-1]) != nnz or bool((ptr[1:] < ptr[:-1]).any()):
        raise bad("indptr does not rise from 0 to the number of values")
    if ind.numel() and (int(ind.min()) < 0 or int(ind.max()) >= shape[1]):
        raise bad("a column index is out of range")


def _load_record(buf):
    """One array record (``NDArray.__getstate__``'s bytes)."""
    r = _Reader(memoryview(buf), "<array bytes>")
    arr = _read_array(r, None)
    if arr is None or r.pos != len(buf):
        raise MXNetError("the bytes do not hold exactly one MXNet NDArray record")
    return arr


def _decode(buf, fname, ctx=None):
    r = _Reader(memoryview(buf), fname)
    if len(buf) < 24:
        raise MXNetError(f"nd.load({fname!r}): the file is too short ({len(buf)} bytes) to be "
                         "an MXNet NDArray file")
    magic, _reserved, count = r.unpack("<QQQ", "the header")
    if magic != _LIST_MAGIC:
        raise MXNetError(f"nd.load({fname!r}): not an MXNet NDArray file (magic {magic:#x}, "
                         f"expected {_LIST_MAGIC:#x})")
    if count > (len(buf) - r.pos) // 4:   # (a record takes at least 4 bytes)
        raise MXNetError(f"nd.load({fname!r}): corrupt file (claims {count} arrays in "
                         f"{len(buf) - r.pos} bytes)")
    arrays = []
    for k in range(count):
        try:
            arrays.append(_read_array(r, ctx))
        except MXNetError as err:
            raise MXNetError(f"{err} (in array record {k} of {count})") from None
    (nnames,) = r.unpack("<Q", "the name count")
    if nnames not in (0, count):
        raise MXNetError(f"nd.load({fname!r}): corrupt file ({nnames} names for {count} "
                         "arrays)")
    names = []
    for _ in range(nnames):
        (n,) = r.unpack("<Q", "a name's length")
        try:
            names.append(bytes(r.take(n, "a name")).decode("utf-8"))
        except UnicodeDecodeError:
            raise MXNetError(f"nd.load({fname!r}): corrupt file (a name is not UTF-8)") from None
    if r.pos != len(buf):
        raise MXNetError(f"nd.load({fname!r}): {len(buf) - r.pos} unexpected bytes after the "
                         "data")
    if names:
        return dict(zip(names, arrays))
    return arrays


def load(fname, ctx=None):
    """Load what :func:`save` (or MXNet's ``nd.save``) wrote.

    Parameters
    ----------
    fname : str
        Path of the file.
    ctx : Context, optional
        Put the arrays on this context. By default arrays saved on a CPU load on ``cpu(0)``
        and arrays saved on a GPU on that GPU when it exists (else on ``cpu(0)``), as in MXNet.

    Returns
    -------
    list of NDArray or dict of str to NDArray
        A dict when the file has names, a list otherwise.
    """
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError(f"fname must be a str path, got {type(fname).__name__}")
    fname = os.fspath(fname)
    try:
        with open(fname, "rb") as f:
            buf = f.read()
    except FileNotFoundError:
        raise MXNetError(f"nd.load: no such file {fname!r}") from None
    except IsADirectoryError:
        raise MXNetError(f"nd.load: {fname!r} is a directory, not a file") from None
    return _decode(buf, fname, ctx)


def load_frombuffer(buf):
    """Load arrays from bytes in the format :func:`save` writes."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"buf must be bytes, got {type(buf).__name__}")
    return _decode(bytes(buf), "<buffer>")


def save_tobuffer(data):
    """The bytes :func:`save` would write (used by code that keeps arrays in memory)."""
    return _encode(data, "<buffer>")
