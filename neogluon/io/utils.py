"""Helpers shared by the data iterators: canonical input lists and shuffled copies."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch

from ..ndarray.ndarray import NDArray, _new, array
from ..ndarray import sparse as _sparse

try:  # h5py datasets are read lazily by NDArrayIter, as in MXNet
    import h5py
except ImportError:  # pragma: no cover - optional dependency
    h5py = None

__all__ = []


def _h5py_dataset(obj) -> bool:
    return h5py is not None and isinstance(obj, h5py.Dataset)


def _init_data(data, allow_empty, default_name):
    """Turn an array, a list of arrays or a dict of them into a sorted list of (name, array).

    A single array is named ``default_name``; the i-th array of a list of several is named
    ``'_%d_%s' % (i, default_name)``. Values that are not NDArrays (numpy arrays, lists) are
    converted with ``nd.array``.
    """
    assert data is not None or allow_empty
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)) or _h5py_dataset(data):
        data = [data]
    if isinstance(data, list):
        if not allow_empty:
            assert len(data) > 0
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([("_%d_%s" % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, h5py.Dataset a list of them or "
                        f"dict with them as values, got {type(data).__name__}")
    data = dict(data)
    for k, v in data.items():
        if not isinstance(v, NDArray) and not _h5py_dataset(v):
            try:
                data[k] = _as_ndarray(v)
            except Exception:  # noqa: BLE001 - any conversion failure is the caller's type
                raise TypeError(f"Invalid type '{type(v)}' for {k}, should be NDArray, "
                                "numpy.ndarray or h5py.Dataset") from None
    return list(sorted(data.items()))


def _as_ndarray(value):
    try:
        import scipy.sparse as sp
        if sp.issparse(value):
            return _sparse.array(value.tocsr())
    except ImportError:  # pragma: no cover
        pass
    return array(value)


def _has_instance(data, dtype):
    """Whether any array of the (name, array) list ``data`` is a ``dtype``."""
    return any(isinstance(arr, dtype) for _, arr in data)


def _getdata_by_idx(data, idx):
    """The (name, array) list with every array's rows taken in the order ``idx``."""
    out = []
    for k, v in data:
        if _h5py_dataset(v):
            out.append((k, v))
        elif isinstance(v, _sparse.CSRNDArray):
            out.append((k, _sparse.array(v.asscipy()[idx], ctx=v.context)))
        elif type(v) is NDArray:
            # rows gathered by torch on the array's own tensor: one copy (through NumPy it
            # was three, a noticeable pause between the epochs of a large dataset)
            t = v._t.detach()
            rows = torch.as_tensor(np.asarray(idx, dtype=np.int64), device=t.device)
            out.append((k, _new(t.index_select(0, rows), v._ctx)))
        else:
            out.append((k, array(v.asnumpy()[idx], ctx=v.context, dtype=v.dtype)))
    return out


def _slice_along_batch_axis(data, s, batch_axis):
    """Rows ``s`` of ``data`` along ``batch_axis`` (a CSR array stays CSR on axis 0)."""
    if isinstance(data, _sparse.CSRNDArray) and batch_axis == 0:
        return data[s.start:s.stop]
    return data.slice_axis(axis=batch_axis, begin=s.start, end=s.stop)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from ..ndarray.sparse import CSRNDArray  # noqa: E402,F401
from ..ndarray.sparse import array as sparse_array  # noqa: E402,F401
