"""``mx.test_utils``: the helpers MXNet's own tests and MXNet users' tests call.

The names, signatures and semantics are MXNet 1.9.1's: dtype-dependent default tolerances
(``float16`` rtol 1e-2 / atol 1e-1, ``float32`` 1e-4 / 1e-3, ``float64`` 1e-5 / 1e-20, integer
and bool types exact), random array and sparse array generators that draw from NumPy's global
generator (so ``np.random.seed`` makes them repeat), the chi-square checks of random generators
and the optimizer comparison. ``from mxnet.test_utils import *`` exports everything in the module,
the imported modules ``mx``, ``np``, ``os``, ``sys``, ``time``, ``json`` ... included, as MXNet's
does; test files rely on that.

Symbol-based checks (:func:`check_symbolic_forward`, :func:`check_symbolic_backward`,
:func:`check_numeric_gradient`, :func:`simple_forward`) evaluate the symbol eagerly
(``sym.eval``) under autograd instead of binding an executor; they also accept a Gluon
``Block`` or any callable that maps NDArrays to NDArrays (its positional parameter names are
the argument names).

Differences from MXNet: ``use_np`` scopes MXNet's NumPy switches (:mod:`neogluon.util`) but
neogluon has no ``mx.np`` array type; :func:`download` really downloads (through ``requests``)
and, offline, raises the network error with a note saying so; :func:`check_speed` and
:func:`check_consistency` run through ``sym.eval`` rather than ``simple_bind``.
"""
# The star-export of this module is part of its API (see the module docstring), so the
# standard modules below are imported under their plain names on purpose.
import bz2
import errno
import gzip
import importlib
import json
import logging
import numbers
import os
import platform
import struct
import sys
import time
import traceback
import types
import zipfile
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np
import numpy.random as rnd

import neogluon as mx
from .base import MXNetError
from .context import Context, current_context
from .ndarray import array
from .ndarray.ndarray import NDArray
from .runtime import Features
from .util import use_np, getenv, setenv, get_cuda_compute_capability

try:  # mx.io is optional here: DummyIter subclasses its DataIter when it exists
    from .io import DataIter as _DataIterBase
except ImportError:  # pragma: no cover - depends on the tree
    _DataIterBase = object

try:
    from .symbol import Symbol
except ImportError:  # pragma: no cover - depends on the tree
    Symbol = None

_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}


class _LazyModule(types.ModuleType):
    """Stands for a heavy optional module (scipy.stats, requests, numpy.testing) that MXNet's
    test_utils exports, importing it on first attribute access so that
    ``from mxnet.test_utils import *`` stays fast. Falsy when the module is not installed
    (MXNet's ``ss`` is None without scipy)."""

    def __init__(self, target):
        super().__init__(target)
        self.__dict__["_lazy_target"] = target

    def _load(self):
        return importlib.import_module(self.__dict__["_lazy_target"])

    def __getattr__(self, attr):
        return getattr(self._load(), attr)

    def __dir__(self):
        return dir(self._load())

    def __bool__(self):
        try:
            self._load()
        except ImportError:
            return False
        return True

    def __repr__(self):
        return f"<lazily imported module {self.__dict__['_lazy_target']!r}>"


ss = _LazyModule("scipy.stats")
requests = _LazyModule("requests")
npt = _LazyModule("numpy.testing")


# ---------------------------------------------------------------------------- defaults
def default_context():
    """The context tests run on: the current context (``cpu(0)`` unless set)."""
    return current_context()


def set_default_context(ctx):
    """Make ``ctx`` the default (and current) context of this thread."""
    Context._default.value = ctx


def default_dtype():
    """The default dtype of test data: ``numpy.float32``."""
    return np.float32


_INT_TYPES = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)


def default_rtols():
    """Default relative tolerance of each dtype (a dict ``np.dtype -> float``)."""
    tols = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5,
            np.dtype(np.bool_): 0}
    tols.update({np.dtype(t): 0 for t in _INT_TYPES})
    return tols


def default_atols():
    """Default absolute tolerance of each dtype (a dict ``np.dtype -> float``)."""
    tols = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20,
            np.dtype(np.bool_): 0}
    tols.update({np.dtype(t): 0 for t in _INT_TYPES})
    return tols


def default_numeric_eps():
    """Default finite-difference step of each float dtype (powers of two: exact deltas)."""
    return {np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float32): 2.0 ** -9,
            np.dtype(np.float64): 2.0 ** -14}


def _tf32_in_use(ctx):
    """Whether float32 matmul/conv results on ``ctx`` may come from TF32 arithmetic."""
    if ctx is None or getattr(ctx, "device_type", None) != "gpu":
        return False
    try:
        import torch
        if os.environ.get("NVIDIA_TF32_OVERRIDE") == "0":
            return False
        if not (torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32):
            return False
        return get_cuda_compute_capability(ctx) >= 80
    except Exception:  # no such GPU: no TF32 either
        return False


def effective_dtype(dat):
    """The dtype whose tolerances fit comparisons of ``dat``.

    That is ``dat.dtype``, except float32 data on a GPU that computes float32 products in TF32
    (compute capability >= 8.0 with TF32 enabled in torch), whose precision is float16's.

    Parameters
    ----------
    dat : np.ndarray or NDArray
    """
    dtype = np.dtype(dat.dtype)
    if dtype == np.dtype(np.float32) and _tf32_in_use(getattr(dat, "ctx", None)):
        return np.dtype(np.float16)
    return dtype


def get_tolerance(dat, tol, default_tol):
    """The tolerance to compare ``dat`` with.

    Parameters
    ----------
    dat : np.ndarray or NDArray
    tol : None, float, or dict of dtype -> float
        A number is returned as is; a dict entry for ``dat``'s effective dtype wins over
        ``default_tol``.
    default_tol : dict of dtype -> float
    """
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    if tol is not None and dtype in tol:
        return tol[dtype]
    try:
        return default_tol[dtype]
    except KeyError:
        raise TypeError(f"no default tolerance for dtype {dtype}; pass rtol/atol explicitly") from None


def _with_dtype(x):
    if isinstance(x, numbers.Number):
        return np.array(x)
    if not hasattr(x, "dtype"):
        return np.asarray(x)
    return x


def get_tols(x, y, rtol, atol):
    """``(rtol, atol)`` for comparing ``x`` and ``y``: the given values, or the larger default
    of the two inputs' (effective) dtypes."""
    x, y = _with_dtype(x), _with_dtype(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype`` when it is None."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype`` when it is None."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol=None):
    """``etol``, or 0 (no mismatching elements allowed) when it is None."""
    return 0 if etol is None else etol


# ---------------------------------------------------------------------------- random data
def random_arrays(*shapes):
    """Standard-normal float32 numpy arrays of the given shapes (one array when one shape)."""
    arrays = []
    for shape in shapes:
        if len(shape) == 0:
            arrays.append(np.array(np.random.randn(), dtype=default_dtype()))
        else:
            arrays.append(np.random.randn(*shape).astype(default_dtype()))
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    """A list of uniform numpy arrays of the given shapes.

    Parameters
    ----------
    *shapes : tuple of int
    low, high : float, optional
        The range (default [0, 1)).
    dtype : optional
        Default float32.
    """
    low = kwargs.pop("low", 0.0)
    high = kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if kwargs:
        raise TypeError("Got unexpected argument/s : " + str(kwargs.keys()))
    return [np.random.uniform(low, high, size=shape).astype(dtype) for shape in shapes]


def random_sample(population, k):
    """``k`` elements of the list ``population`` in random order (no repeats)."""
    assert 0 <= k <= len(population)
    shuffled = population[:]
    np.random.shuffle(shuffled)
    return shuffled[:k]


def _sorted_items(d):
    return sorted(d.items(), key=lambda kv: kv[0])


def _sorted_dict(d):
    return OrderedDict(_sorted_items(d))


def _validate_csr_generation_inputs(num_rows, num_cols, density, distribution="uniform"):
    if density < 0 or density > 1:
        raise ValueError("density has to be between 0 and 1")
    if num_rows <= 0 or num_cols <= 0:
        raise ValueError("num_rows or num_cols should be greater than 0")
    if distribution == "powerlaw" and int(num_rows * num_cols * density) < 2 * num_rows:
        raise ValueError(f"not supported for this density: {density} for this shape "
                         f"({num_rows}, {num_cols}) Please keep : "
                         "num_rows * num_cols * density >= 2 * num_rows")


def shuffle_csr_column_indices(csr):
    """Shuffle, in place, the column indices within each row of a scipy CSR matrix (valid CSR
    does not require sorted columns; this exercises code paths that must not assume it)."""
    for row in range(len(csr.indptr) - 1):
        begin, end = csr.indptr[row], csr.indptr[row + 1]
        cols = np.array(csr.indices[begin:end])
        np.random.shuffle(cols)
        csr.indices[begin:end] = cols


def _get_uniform_dataset_csr(num_rows, num_cols, density=0.1, dtype=None, data_init=None,
                             shuffle_csr_indices=False):
    """A CSRNDArray with ``density`` of its entries set, at uniformly random positions."""
    _validate_csr_generation_inputs(num_rows, num_cols, density, distribution="uniform")
    try:
        from scipy import sparse as spsp
    except ImportError:
        if data_init is not None or shuffle_csr_indices:
            raise ValueError("data_init and shuffle_csr_indices need scipy") from None
        dense = mx.nd.random.uniform(shape=(num_rows, num_cols), dtype=dtype)
        return (dense * (dense < density)).tostype("csr")
    csr = spsp.rand(num_rows, num_cols, density, dtype=dtype, format="csr")
    if data_init is not None:
        csr.data.fill(data_init)
    if shuffle_csr_indices is True:
        shuffle_csr_column_indices(csr)
    return mx.nd.sparse.csr_matrix((csr.data, csr.indices, csr.indptr),
                                   shape=(num_rows, num_cols), dtype=dtype)


def _get_powerlaw_dataset_csr(num_rows, num_cols, density=0.1, dtype=None):
    """A CSRNDArray whose row ``i`` holds about twice as many entries as row ``i - 1``.

    Every row first gets one entry (column 0); then row ``i`` is filled up to ``2 ** (i + 1)``
    columns, whole rows once that reaches the width, until ``num_rows * num_cols * density``
    entries are placed."""
    _validate_csr_generation_inputs(num_rows, num_cols, density, distribution="powerlaw")
    left = int(num_rows * num_cols * density)
    dense = np.zeros((num_rows, num_cols), dtype=dtype)

    def done():
        return mx.nd.array(dense).tostype("csr")

    for row in range(num_rows):
        dense[row][0] = 1 + rnd.uniform(0.001, 2)
        left -= 1
        if left <= 0:
            return done()
    width = 2
    for row in range(num_rows):
        limit = min(num_cols, width)
        if limit == num_cols and left > limit:
            dense[row] = 1 + rnd.uniform(0.001, 2)
            left -= limit - 1
            if left <= 0:
                return done()
            continue
        for col in range(1, limit):
            dense[row][col] = 1 + rnd.uniform(0.001, 2)
            left -= 1
            if left <= 0:
                return done()
        width *= 2
    if left > 0:
        raise ValueError(f"not supported for this density: {density} for this shape "
                         f"({num_rows},{num_cols})")
    return done()


def assign_each(the_input, function):
    """``function`` applied to each element of numpy array ``the_input`` (a float64 array of
    the same shape); a copy of ``the_input`` when ``function`` is None."""
    if function is None:
        return np.array(the_input)
    out = np.zeros(the_input.shape)
    flat_in = np.asarray(the_input).reshape(-1)
    flat_out = out.reshape(-1)
    for i, value in enumerate(flat_in):
        flat_out[i] = function(value)
    return out


def assign_each2(input1, input2, function):
    """``function(a, b)`` for each pair of elements of two same-shaped numpy arrays; a copy of
    ``input1`` when ``function`` is None."""
    if function is None:
        return np.array(input1)
    assert input1.shape == input2.shape
    out = np.zeros(input1.shape)
    flat_out = out.reshape(-1)
    for i, (a, b) in enumerate(zip(np.asarray(input1).reshape(-1), np.asarray(input2).reshape(-1))):
        flat_out[i] = function(a, b)
    return out


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A ``rows x columns`` NDArray whose row ``i`` is all ``i``."""
    col = mx.nd.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return mx.nd.broadcast_to(col, shape=(col.shape[0], columns))


def create_vector(size, dtype=np.int64):
    """``0, 1, ..., size - 1`` as an NDArray."""
    return mx.nd.arange(0, size, dtype=dtype)


def get_identity_mat(size):
    """The ``size x size`` identity as a float32 NDArray."""
    return mx.nd.array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size):
    """A batch of two ``size x size`` identities."""
    eye = np.eye(size, dtype=np.float32)
    return mx.nd.array(np.stack([eye, eye]))


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random sparse NDArray and the numpy data it was built from.

    Parameters
    ----------
    shape : tuple of int
    stype : {'row_sparse', 'csr'}
    density : float, optional
        Fraction of rows ('row_sparse') or entries ('csr') that are set; random when None.
    dtype : optional
        Default float32.
    distribution : {'uniform', 'powerlaw'}, optional
        'powerlaw' (csr only): row ``i`` holds twice as many entries as row ``i - 1``.
    data_init : float, optional
        Fill the stored values with this number.
    rsp_indices : array of int, optional
        The stored rows ('row_sparse'), instead of random ones.
    modifier_func : callable, optional
        Applied to each stored value ('row_sparse').
    shuffle_csr_indices : bool
        Shuffle the column indices within each row ('csr', uniform).
    ctx : Context, optional

    Returns
    -------
    tuple
        ``(arr, (values, row_indices))`` for 'row_sparse' (numpy arrays);
        ``(arr, (indptr, indices, data))`` for 'csr' (NDArrays).
    """
    ctx = ctx if ctx else default_context()
    density = rnd.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = "uniform" if distribution is None else distribution
    if stype == "row_sparse":
        assert distribution == "uniform", f"Distribution {distribution} not supported for row_sparse"
        if rsp_indices is not None:
            indices = rsp_indices
            assert len(indices) <= shape[0]
        else:
            indices = np.argwhere(rnd.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            empty = mx.nd.zeros(shape, stype="row_sparse", dtype=dtype, ctx=ctx)
            return empty, (np.array([], dtype=dtype), np.array([]))
        values = rnd.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            values.fill(data_init)
        if modifier_func is not None:
            values = assign_each(values, modifier_func)
        arr = mx.nd.sparse.row_sparse_array((values, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (values, indices)
    if stype == "csr":
        assert len(shape) == 2
        if distribution == "uniform":
            csr = _get_uniform_dataset_csr(shape[0], shape[1], density, data_init=data_init,
                                           shuffle_csr_indices=shuffle_csr_indices, dtype=dtype)
        elif distribution == "powerlaw":
            csr = _get_powerlaw_dataset_csr(shape[0], shape[1], density=density, dtype=dtype)
        else:
            raise AssertionError(f"Distribution not supported: {distribution}")
        csr = csr.as_in_context(ctx)
        return csr, (csr.indptr, csr.indices, csr.data)
    raise AssertionError(f"unknown storage type {stype!r}")


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random NDArray: standard normal values for ``stype='default'``, else as
    :func:`rand_sparse_ndarray` (without the numpy data)."""
    ctx = ctx if ctx else default_context()
    if stype == "default":
        return mx.nd.array(random_arrays(shape), dtype=dtype, ctx=ctx)
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func,
                                 dtype=dtype, shuffle_csr_indices=shuffle_csr_indices,
                                 distribution=distribution, ctx=ctx)
    return arr


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random sparse NDArray; ``rsp_indices`` are sorted first (canonical row_sparse)."""
    if stype == "row_sparse":
        indices = None
        if rsp_indices is not None:
            indices = np.sort(np.asarray(rsp_indices))
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                     rsp_indices=indices, dtype=dtype, modifier_func=modifier_func)
    elif stype == "csr":
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                     dtype=dtype, modifier_func=modifier_func,
                                     shuffle_csr_indices=shuffle_csr_indices)
    else:
        raise AssertionError("Unknown storage type: " + str(stype))
    return arr


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None, dtype=None,
                           modifier_func=None, shuffle_csr_indices=False):
    """As :func:`create_sparse_array`, but a 'row_sparse' array holds exactly the rows
    ``rsp_indices`` (none when it is None)."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None:
            assert len(rsp_indices) <= shape[0]
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape with sizes in ``[1, dim]`` (``[0, dim]`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape with sizes in ``[1, dim]`` (``[0, dim]`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape of ``num_dim`` dimensions with sizes in ``[1, dim]`` (``[0, dim]`` with
    ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return tuple(rnd.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random integer point with ``x`` in ``[x_low, x_high)`` and ``y`` in ``[y_low, y_high)``."""
    x = np.random.randint(x_low, x_high, dtype=np.int64)
    y = np.random.randint(y_low, y_high, dtype=np.int64)
    return x, y


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce numpy array ``dat`` over ``axis`` (None, an int or several) one axis at a time
    with ``numpy_reduce_func`` (``np.sum``, ``np.max`` ...), keeping reduced axes as size 1
    when ``keepdims``."""
    if isinstance(axis, int):
        axes = [axis]
    elif axis is None:
        axes = list(range(len(dat.shape)))
    else:
        axes = list(axis)
    out = dat
    for ax in sorted(axes, reverse=True):
        out = numpy_reduce_func(out, axis=ax)
    if keepdims:
        kept = list(dat.shape)
        for ax in axes:
            kept[ax] = 1
        out = out.reshape(tuple(kept))
    return out


# ---------------------------------------------------------------------------- comparisons
def _find_max_violation(a, b, rtol, atol):
    """Index and size of the largest ``|a - b| / (atol + rtol * |b|)`` (equal infs count as 0)."""
    with np.errstate(invalid="ignore", over="ignore"):
        absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))
        violation = absdiff / (atol + rtol * np.abs(b) + 1e-20)
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(violation), violation.shape))
    return idx, np.max(violation)


def same(a, b):
    """Whether two arrays are exactly equal (shape and values)."""
    return np.array_equal(_as_np(a), _as_np(b))


def checkShapes(a, b):
    """Raise AssertionError when ``a`` and ``b`` have different shapes."""
    if a.shape != b.shape:
        msg = npt.build_err_msg(
            [a, b], err_msg=f"a.shape = {a.shape} and b.shape = {b.shape} are not equal")
        raise AssertionError(msg)


def _as_np(x):
    if isinstance(x, NDArray) or (hasattr(x, "asnumpy") and not isinstance(x, np.ndarray)):
        return x.asnumpy()
    if type(x).__module__.startswith("torch"):
        return x.detach().cpu().numpy()
    return x


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (``np.allclose``).

    Defaults are float64's tolerances (rtol 1e-5, atol 1e-20); NDArrays are accepted."""
    a, b = _as_np(a), _as_np(b)
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_rtol(rtol), get_atol(atol)
    fast = _allclose_large(a, b, rtol, atol)
    if fast is not None:
        return fast
    return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _allclose_large(a, b, rtol, atol):
    """``np.allclose`` for big finite float arrays of one shape, computed by torch.

    numpy's isclose makes several full-size temporaries and runs on one thread; suites that
    compare millions of elements per check (MXNet's optimizer tests) spend most of their time
    there. Same formula, same dtype (numpy's ``result_type(a, b, 1.0)``); None when the inputs
    are not such arrays or when they are not all close (numpy then decides, with its NaN/inf
    rules, so a failure is reported exactly as numpy sees it)."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape \
            or a.size < (1 << 16) or a.dtype.kind != "f" or b.dtype.kind != "f":
        return None
    import torch
    dtype = np.result_type(a, b, 1.0)
    if dtype not in (np.float16, np.float32, np.float64):
        return None
    x = torch.from_numpy(np.ascontiguousarray(a, dtype=dtype))
    y = torch.from_numpy(np.ascontiguousarray(b, dtype=dtype))
    # A NaN or an infinity makes its element compare False here; only numpy's rules can say
    # whether that element is close, so any False goes back to numpy.
    return True if bool(((x - y).abs_() <= atol + rtol * y.abs()).all()) else None


def locationError(a, b, index, names, maxError=False):
    """The message part that names a mismatching element of ``a`` and ``b``."""
    what = "maximum error" if maxError else "error"
    return "Location of %s: %s, %s=%.8f, %s=%.8f" % (what, str(index), names[0], a[index],
                                                     names[1], b[index])


def _mismatch_error(a, b, rtol, atol, names, equal_nan, mismatches, etol_text=""):
    """The AssertionError describing where ``a`` and ``b`` differ (prints the worst ones)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    index, rel = _find_max_violation(a, b, rtol, atol)
    if index != ():
        worst_index, worst = index, rel
        print(f"\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n")
        a_left, b_left = a.copy(), b.copy()
        count = 1
        while count <= a.size:
            if count <= mismatches[0]:
                print("%3d: Error %f  %s" % (count, rel, locationError(a, b, index, names)))
            a_left[index] = b_left[index] = 0
            if almost_equal(a_left, b_left, rtol, atol, equal_nan=equal_nan):
                break
            count += 1
            if count <= mismatches[1] or mismatches[1] <= 0:
                index, rel = _find_max_violation(a_left, b_left, rtol, atol)
            else:
                break
        degree = "at least " if mismatches[1] > 0 and count > mismatches[1] else ""
        text = ("Error %f exceeds tolerance rtol=%e, atol=%e%s (mismatch %s%f%%).\n%s"
                % (worst, rtol, atol, etol_text, degree, 100 * count / a.size,
                   locationError(a, b, worst_index, names, maxError=True)))
    else:
        text = "Error %f exceeds tolerance rtol=%e, atol=%e%s.\n" % (rel, rtol, atol, etol_text)
    with np.printoptions(threshold=4, suppress=True):
        msg = npt.build_err_msg([a, b], err_msg=text, names=tuple(names))
    return AssertionError(msg)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Assert that ``|a - b| <= atol + rtol * |b|`` everywhere.

    Parameters
    ----------
    a, b : np.ndarray or NDArray (or numbers)
    rtol, atol : None, float, or dict of dtype -> float
        None takes the larger default of the two inputs' dtypes (float16 1e-2 / 1e-1,
        float32 1e-4 / 1e-3, float64 1e-5 / 1e-20, integers and bool 0).
    names : tuple of str
        How the message calls ``a`` and ``b``.
    equal_nan : bool
        Whether NaNs in the same places count as equal.
    use_broadcast : bool
        False requires equal shapes.
    mismatches : tuple of int
        How many mismatches to print, and how many to count (<= 0: all).

    Raises
    ------
    AssertionError
        Naming the largest error, its location and both values.
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _as_np(a), _as_np(b)
    if getattr(a, "dtype", None) == np.bool_ and getattr(b, "dtype", None) == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    raise _mismatch_error(a, b, rtol, atol, names, equal_nan, mismatches)


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """:func:`assert_almost_equal` with ``numpy.testing.assert_allclose``'s defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """Assert that at most a fraction ``etol`` of the elements of ``a`` and ``b`` differ by
    more than the tolerances (``etol`` None or 0: none may, as :func:`assert_almost_equal`)."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _as_np(a), _as_np(b)
    close = np.isclose(a, b, rtol=rtol, atol=atol)
    err = 1 - np.count_nonzero(close) / close.size
    if err > etol:
        raise _mismatch_error(a, b, rtol, atol, names, equal_nan, mismatches)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """:func:`assert_almost_equal` ignoring every position where either input is NaN."""
    a = np.copy(_as_np(a))
    b = np.copy(_as_np(b))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{getattr(exception_type, '__name__', exception_type)}")


def retry(n):
    """Decorator: run a stochastic test up to ``n`` times until it passes (only
    AssertionError counts as failing; the last one is raised)."""
    assert n > 0

    def decorate(f):
        import functools

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for attempt in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if attempt == n - 1:
                        raise
                    mx.nd.waitall()
        return wrapper
    return decorate


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """Assert that two (nested tuples of) arrays are almost equal; None on either side skips."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Assert that optimizers ``opt1`` and ``opt2`` make the same update.

    One random weight and gradient of ``shape`` (storage types ``w_stype`` / ``g_stype``; opt1
    gets dense copies) are updated once by each, through ``create_state_multi_precision`` and
    ``update_multi_precision``; states (when ``compare_states``) and weights must agree. With
    a list of shapes, ``opt2`` updates ``ntensors`` tensors in one multi-tensor call and
    ``opt1`` one at a time.
    """
    ctx = default_context()
    if not isinstance(shape, list):
        assert ntensors == 1

        def pair(stype, density):
            if stype == "default":
                second = mx.random.uniform(shape=shape, ctx=ctx, dtype=dtype)
                return second.copyto(ctx), second
            if stype in ("row_sparse", "csr"):
                second = rand_ndarray(shape, stype, density=density, dtype=dtype)
                return second.copyto(ctx).tostype("default"), second
            raise Exception("type not supported yet")

        w1, w2 = pair(w_stype, 1)
        g1, g2 = pair(g_stype, None)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1, g1 = [], []
    for s in shape:
        w1.append(mx.random.uniform(shape=s, ctx=ctx, dtype=dtype))
        g1.append(mx.random.uniform(shape=s, ctx=ctx, dtype=dtype))
    w2 = tuple(w.copy() for w in w1)
    g2 = tuple(g.copy() for g in g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


def same_array(array1, array2):
    """Whether two NDArrays share memory (a change through one shows through the other)."""
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def collapse_sum_like(a, shape):
    """Sum numpy array ``a`` over the axes that ``shape`` broadcasts along, giving ``shape``."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, size in enumerate(shape):
        if size != a.shape[lead + i]:
            assert size == 1
            axes.append(lead + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


# ---------------------------------------------------------------------------- symbols
def _is_symbol(obj):
    return hasattr(obj, "list_arguments") and hasattr(obj, "list_outputs")


class _Runner:
    """Runs the thing under test on named NDArray inputs: an ``mx.sym`` Symbol (evaluated
    eagerly), a Gluon Block or a plain callable."""

    def __init__(self, target, ctx):
        self.target = target
        self.ctx = ctx
        self.is_symbol = _is_symbol(target)
        if self.is_symbol:
            self.arg_names = list(target.list_arguments())
            self.output_names = list(target.list_outputs())
            aux = getattr(target, "list_auxiliary_states", None)
            self.aux_names = list(aux()) if aux is not None else []
        elif callable(target):
            self.arg_names = self._callable_names(target)
            self.output_names = None
            self.aux_names = []
        else:
            raise TypeError(f"expected an mx.sym Symbol, a Block or a callable, got "
                            f"{type(target).__name__}")

    @staticmethod
    def _callable_names(target):
        """Positional parameter names of a plain callable; None for a Block (its inputs are
        named ``data`` / ``data0, data1 ...`` after the location given)."""
        import inspect
        from .gluon import Block
        if isinstance(target, Block):
            return None
        try:
            params = list(inspect.signature(target).parameters.values())
        except (TypeError, ValueError):
            return None
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            return None
        return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.default is p.empty]

    def names_for(self, location):
        """Argument names matching ``location`` (a list in argument order, or a dict)."""
        if isinstance(location, dict):
            if self.arg_names is not None and set(location) != set(self.arg_names):
                raise ValueError("Symbol arguments and keys of the given location do not match."
                                 f"symbol args:{set(self.arg_names)}, location.keys():"
                                 f"{set(location)}")
            return list(self.arg_names) if self.arg_names is not None else list(location)
        if self.arg_names is None or len(self.arg_names) < len(location):
            self.arg_names = ["data"] if len(location) == 1 else \
                [f"data{i}" for i in range(len(location))]
        return self.arg_names[:len(location)]

    def __call__(self, args, aux=None, is_train=False):
        """Outputs (a list of NDArrays) for the NDArray inputs ``args`` (name -> array)."""
        from . import autograd
        scope = autograd.train_mode() if is_train else autograd.predict_mode()
        with scope:
            if self.is_symbol:
                inputs = dict(args)
                if aux:
                    inputs.update(aux)
                out = self.target.eval(ctx=self.ctx, **inputs)
            else:
                out = self.target(*[args[name] for name in self.arg_names])
        if isinstance(out, (list, tuple)):
            return list(out)
        return [out]


def _to_nd(value, ctx, dtype):
    if isinstance(value, np.ndarray) or isinstance(value, numbers.Number):
        value = np.asarray(value)
        return mx.nd.array(value, ctx=ctx, dtype=value.dtype if dtype == "asnumpy" else dtype)
    return value


def _parse_location(sym, location, ctx, dtype=default_dtype()):
    """``location`` (a list in ``sym.list_arguments()`` order, or a dict) as an ordered dict of
    argument name -> NDArray (numpy inputs converted to ``dtype``, or kept with 'asnumpy')."""
    assert isinstance(location, (dict, list, tuple))
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    runner = sym if isinstance(sym, _Runner) else _Runner(sym, ctx)
    names = runner.names_for(location)
    if not isinstance(location, dict):
        location = dict(zip(names, location))
    return _sorted_dict({k: _to_nd(v, ctx, dtype) for k, v in location.items()})


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    """``aux_states`` (a list in ``sym.list_auxiliary_states()`` order, or a dict) as a dict of
    name -> NDArray, or None."""
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    if aux_states is None:
        return None
    runner = sym if isinstance(sym, _Runner) else _Runner(sym, ctx)
    if isinstance(aux_states, dict):
        if set(aux_states) != set(runner.aux_names):
            raise ValueError("Symbol aux_states names and given aux_states do not match."
                             f"symbol aux_names:{set(runner.aux_names)}, aux_states.keys:"
                             f"{set(aux_states)}")
    else:
        aux_states = dict(zip(runner.aux_names, aux_states))
    return {k: _to_nd(v, ctx, dtype) for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """The outputs of ``sym`` for numpy ``inputs`` (by argument name), as numpy arrays (one
    array when there is one output)."""
    ctx = ctx or default_context()
    runner = _Runner(sym, ctx)
    args = {k: array(v, ctx=ctx) for k, v in inputs.items()}
    outputs = [o.asnumpy() for o in runner(args, is_train=is_train)]
    return outputs[0] if len(outputs) == 1 else outputs


def _copy_aux(aux):
    return None if aux is None else {k: v.copy() for k, v in aux.items()}


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):
    """Finite-difference gradients of the sum of the first output.

    Parameters
    ----------
    executor : Symbol, Block or callable
        What to differentiate (MXNet passes an Executor; neogluon has none and evaluates the
        symbol instead).
    location : dict of str -> numpy.ndarray
        The point; every argument's value.
    aux_states : dict of str -> numpy.ndarray, optional
    eps : float
        The step: each element moves by ``+-eps / 2``.
    use_forward_train : bool
        Evaluate in training mode.
    dtype : np.float16, np.float32 or np.float64

    Returns
    -------
    dict of str -> numpy.ndarray
        The approximate gradient of every float argument (zeros for the others).
    """
    assert dtype in (np.float16, np.float32, np.float64)
    runner = executor if isinstance(executor, _Runner) else _Runner(executor, default_context())
    stypes = {k: getattr(v, "stype", "default") for k, v in location.items()}
    location = {k: v.asnumpy() if hasattr(v, "asnumpy") else v for k, v in location.items()}
    return _numeric_grad(runner, location, aux_states, eps, use_forward_train, dtype,
                         stypes=stypes)


def _as_stype(value, stype, ctx, dtype):
    """The numpy ``value`` as an NDArray of storage type ``stype``."""
    arr = mx.nd.array(value, ctx=ctx, dtype=dtype)
    return arr if stype in (None, "default") else mx.nd.cast_storage(arr, stype=stype)


def _numeric_grad(runner, location, aux_states, eps, use_forward_train, dtype, weight=None,
                  stypes=None, aux_stypes=None):
    # Like MXNet's executor, each input keeps its storage type: the perturbed point is cast
    # back to it (a sparse input perturbed at a position it does not store stores it then).
    ctx = runner.ctx
    stypes = stypes or {}
    aux_stypes = aux_stypes or {}
    point = {k: np.array(v, order="C", copy=True) for k, v in location.items()}
    grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in point.items()}
    aux_nd = None if aux_states is None else \
        {k: _as_stype(v, aux_stypes.get(k), ctx, dtype) for k, v in aux_states.items()}

    def value():
        args = {k: _as_stype(v, stypes.get(k), ctx, dtype) for k, v in point.items()}
        out = runner(args, _copy_aux(aux_nd), is_train=use_forward_train)[0]
        if weight is not None:
            out = out * weight
        return out.asnumpy()

    for name, v in point.items():
        if v.dtype.kind != "f":
            continue
        flat = v.reshape(-1)
        for i in range(flat.size):
            original = flat[i]
            flat[i] = original + eps / 2.0
            plus = value()
            flat[i] = original - eps / 2.0
            minus = value()
            grads[name].reshape(-1)[i] = (plus - minus).sum() / eps
            flat[i] = original
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Check the gradients autograd computes for ``sym`` against finite differences.

    The checked function is ``sum(out * P)`` for the (single) output ``out`` and a random
    projection ``P`` with elements in [0.1, 1.1).

    Parameters
    ----------
    sym : Symbol, Block or callable
    location : list or dict of numpy.ndarray
        Every argument's value (a list in argument order).
    aux_states : list or dict, optional
    numeric_eps : float or dict of dtype -> float, optional
        Finite-difference step (default by the output dtype: 2**-6, 2**-9, 2**-14).
    rtol, atol : float, optional
    grad_nodes : list of names or dict of name -> grad_req, optional
        The arguments to check (default all, 'write').
    use_forward_train : bool
        Evaluate the finite differences in training mode.
    ctx : Context, optional
    grad_stype_dict : dict of str -> str, optional
        Storage type of each argument's gradient.
    dtype : np.float16, np.float32 or np.float64
    """
    from . import autograd
    assert dtype in (np.float16, np.float32, np.float64)
    ctx = ctx or default_context()
    runner = _Runner(sym, ctx)
    location = _parse_location(runner, location, ctx, dtype=dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(runner, aux_states, ctx, dtype=dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    if grad_nodes is None:
        grad_nodes = list(location)
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
        grad_nodes = list(grad_nodes)
    else:
        raise ValueError(f"grad_nodes must be None, a list of names or a dict, got "
                         f"{type(grad_nodes).__name__}")
    for name in grad_nodes:
        if name not in location:
            raise ValueError(f"grad_nodes: {name!r} is not an argument ({list(location)})")

    outputs = runner(location, _copy_aux(aux_states), is_train=True)
    if len(outputs) != 1:
        raise ValueError(f"check_numeric_gradient needs a single output, got {len(outputs)}")
    out_shape = outputs[0].shape
    proj = mx.nd.array(np.random.rand(*out_shape) + 0.1, ctx=ctx, dtype=dtype)
    args_grad_npy = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    np.random.normal(0, 0.01, size=out_shape)  # MXNet also draws the projection's grad buffer

    eps = get_tolerance(outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16):
        assert eps >= 1e-5

    inputs = {k: v.copy() for k, v in location.items()}
    for name, arr in inputs.items():
        req = grad_req.get(name, "null")
        if req not in ("write", "add", "null"):
            raise ValueError(f"Invalid grad_req {req} for argument {name}")
        if req != "null" and np.dtype(arr.dtype).kind == "f":
            stype = (grad_stype_dict or {}).get(name)
            # MXNet's gradient buffers are dense unless a storage type is given
            arr.attach_grad(stype=stype or "default")
    with autograd.record(train_mode=True):
        out = runner(inputs, _copy_aux(aux_states), is_train=True)[0]
        loss = out * proj
    if autograd._head_t(loss).requires_grad:  # every grad_req 'null': nothing to differentiate
        loss.backward()

    numeric = _numeric_grad(runner, location_npy, aux_npy, eps, use_forward_train, dtype,
                            weight=proj, stypes={k: v.stype for k, v in location.items()},
                            aux_stypes=None if aux_states is None else
                            {k: v.stype for k, v in aux_states.items()})
    for name in grad_nodes:
        req = grad_req[name]
        names = ("NUMERICAL_%s" % name, "BACKWARD_%s" % name)
        if req == "null":
            continue  # MXNet checks that the untouched gradient buffer kept its values
        sym_grad = inputs[name].grad
        if sym_grad is None:
            sym_grad = np.zeros(location_npy[name].shape, dtype=dtype)
        assert_almost_equal(numeric[name], sym_grad, rtol, atol, names)


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Assert that ``sym``'s outputs at ``location`` are ``expected``.

    Parameters
    ----------
    sym : Symbol, Block or callable
    location : list or dict of numpy.ndarray
        Every argument's value (a list in argument order).
    expected : list of numpy.ndarray, or dict of output name -> numpy.ndarray
    rtol, atol : float, optional
    aux_states : list or dict, optional
    ctx : Context, optional
    equal_nan : bool
    dtype : 'asnumpy', np.float16, np.float32 or np.float64
        The dtype of the inputs ('asnumpy': each numpy input's own).

    Returns
    -------
    list of NDArray
        The outputs.
    """
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    ctx = ctx or default_context()
    runner = _Runner(sym, ctx)
    location = _parse_location(runner, location, ctx, dtype=dtype)
    aux_states = _parse_aux_states(runner, aux_states, ctx, dtype=dtype)
    outputs = runner(location, aux_states, is_train=False)
    output_names = runner.output_names or [f"output{i}" for i in range(len(outputs))]
    if isinstance(expected, dict):
        expected = [expected[k] for k in output_names]
    for name, expect, output in zip(output_names, expected, outputs):
        assert_almost_equal(expect, output, rtol, atol, ("EXPECTED_%s" % name, "FORWARD_%s" % name),
                            equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Assert that the gradients of ``sym`` at ``location`` for head gradients ``out_grads``
    are ``expected``.

    Parameters
    ----------
    sym : Symbol, Block or callable
    location : list or dict of numpy.ndarray
    out_grads : None, list, or dict of output name -> array
        Head gradients (None: ones).
    expected : list (argument order) or dict of name -> numpy.ndarray
        Expected gradients.
    rtol, atol : float, optional
    aux_states : list or dict, optional
    grad_req : str, list or dict of str
        'write', 'add' (the gradient buffers start with random values that must be kept and
        added to) or 'null' (the buffers must stay unchanged).
    ctx : Context, optional
    grad_stypes : dict of str -> str, optional
        Storage type of each gradient.
    equal_nan : bool
    dtype : 'asnumpy', np.float16, np.float32 or np.float64

    Returns
    -------
    dict of str -> NDArray
        The gradient buffers.
    """
    from . import autograd
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    ctx = ctx or default_context()
    runner = _Runner(sym, ctx)
    location = _parse_location(runner, location, ctx, dtype=dtype)
    aux_states = _parse_aux_states(runner, aux_states, ctx, dtype=dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(runner.names_for(list(location.values())), expected))
    buffers_npy = {k: np.random.normal(size=np.shape(v)) for k, v in _sorted_items(expected)}
    arg_names = list(location)
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in arg_names}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(runner.names_for(list(location.values())), grad_req))

    inputs = {k: v.copy() for k, v in location.items()}
    for name, arr in inputs.items():
        req = grad_req.get(name, "null")
        if req not in ("write", "add", "null"):
            raise ValueError(f"Invalid grad_req {req} for argument {name}")
        if req != "null":
            stype = (grad_stypes or {}).get(name)
            # MXNet's gradient buffers are dense unless a storage type is given
            arr.attach_grad(stype=stype or "default")
    with autograd.record(train_mode=True):
        outputs = runner(inputs, aux_states, is_train=True)
    output_names = runner.output_names or [f"output{i}" for i in range(len(outputs))]
    if isinstance(out_grads, dict):
        out_grads = [out_grads[k] for k in output_names]
    if out_grads is None:
        heads = None
    else:
        # MXNet's executor reads one head gradient per output and ignores any beyond them.
        heads = [_to_nd(g, ctx, dtype) for g in list(out_grads)[:len(outputs)]]
    # MXNet's executor backward differentiates what it can: an output that depends on no
    # argument with a gradient (every grad_req 'null', or a constant output) contributes
    # nothing, and with no such output at all the backward is a no-op, not an error.
    in_graph = [autograd._head_t(o).requires_grad for o in outputs]
    if heads is not None and len(heads) == len(outputs):
        heads = [h for h, live in zip(heads, in_graph) if live]
    if any(in_graph):
        autograd.backward([o for o, live in zip(outputs, in_graph) if live], head_grads=heads)

    result = {}
    for name, start in buffers_npy.items():
        buf_dtype = expected[name].dtype if dtype == "asnumpy" else dtype
        req = grad_req.get(name, "null")
        grad = inputs[name].grad if name in inputs and req != "null" else None
        if req == "write":
            result[name] = grad if grad is not None else mx.nd.ndarray._zeros_buffer(
                start.shape, ctx=ctx, dtype=buf_dtype)
        elif req == "add":
            base = mx.nd.array(start, ctx=ctx, dtype=buf_dtype)
            result[name] = base + grad.tostype("default") if grad is not None else base
        else:
            result[name] = mx.nd.array(start, ctx=ctx, dtype=buf_dtype)
    for name in expected:
        req = grad_req.get(name, "null")
        names = ("EXPECTED_%s" % name, "BACKWARD_%s" % name)
        if req == "write":
            assert_almost_equal(expected[name], result[name], rtol, atol, names, equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(expected[name], result[name].asnumpy() - buffers_npy[name], rtol,
                                atol, names, equal_nan=equal_nan)
        elif req == "null":
            assert_almost_equal(buffers_npy[name], result[name], rtol, atol, names,
                                equal_nan=equal_nan)
        else:
            raise ValueError(f"Invalid grad_req {req} for argument {name}")
    return result


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per run of ``sym`` ('whole': forward and backward; 'forward': forward only).

    ``location`` gives the inputs (dict of numpy arrays); without it ``kwargs`` give input
    shapes (name=shape) and the inputs are random normal."""
    from . import autograd
    ctx = ctx or default_context()
    runner = _Runner(sym, ctx)
    aux = None
    if location is None:
        shapes = dict(kwargs)
        if runner.is_symbol and hasattr(sym, "infer_shape"):
            arg_shapes, _, aux_shapes = sym.infer_shape(**kwargs)
            if arg_shapes is not None:
                shapes = dict(zip(runner.arg_names, arg_shapes))
                aux = {k: mx.nd.zeros(shape, ctx=ctx) for k, shape in
                       zip(runner.aux_names, aux_shapes)}
        location = {k: np.random.normal(size=shape, scale=1.0) for k, shape in shapes.items()}
    else:
        assert isinstance(location, dict), 'Expect dict, get "location"=%s' % str(location)
    args = _parse_location(runner, location, ctx)
    if typ not in ("whole", "forward"):
        raise ValueError('typ can only be "whole" or "forward".')

    def once():
        if typ == "forward":
            return runner(args, aux, is_train=False)
        for arr in args.values():
            arr.attach_grad(grad_req or "write")
        with autograd.record():
            outs = runner(args, aux, is_train=True)
        autograd.backward(outs, head_grads=[o.copy() for o in outs])
        return outs

    for out in once():
        out.wait_to_read()
    tic = time.time()
    for _ in range(N):
        once()
    mx.nd.waitall()
    return (time.time() - tic) / N


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Check that ``sym`` gives the same outputs (and gradients) in several contexts/dtypes.

    Parameters
    ----------
    sym : Symbol or list of Symbols
    ctx_list : list of dict
        Each ``{'ctx': Context, '<arg name>': shape, ..., 'type_dict': {name: dtype}}``.
    scale : float
        Standard deviation (or half-range with ``use_uniform``) of the random inputs.
    grad_req : str
        'null' skips the gradient comparison.
    arg_params, aux_params : dict of name -> data, optional
    rtol, atol : float, optional
    raise_on_err : bool
    ground_truth : dict of name -> array, optional
    equal_nan : bool
    use_uniform : bool
    rand_type : dtype of the random inputs

    Returns
    -------
    dict
        The reference outputs and gradients by name.
    """
    from . import autograd
    assert len(ctx_list) > 1
    syms = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    assert len(syms) == len(ctx_list)
    runners = [_Runner(s, cfg.get("ctx", default_context())) for s, cfg in zip(syms, ctx_list)]
    arg_names = runners[0].arg_names
    output_names = runners[0].output_names
    for r in runners:
        assert r.arg_names == arg_names and r.output_names == output_names
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params

    def shapes_of(s, cfg):
        given = {k: v for k, v in cfg.items() if k not in ("ctx", "type_dict")}
        aux_names = _Runner(s, None).aux_names
        if set(arg_names) <= set(given) and not aux_names:
            return {k: tuple(given[k]) for k in arg_names}
        if not hasattr(s, "infer_shape"):
            raise ValueError("check_consistency: give the shape of every argument "
                             f"({arg_names}) in ctx_list")
        arg_shapes, _, aux_shapes = s.infer_shape(**given)
        if arg_shapes is None:
            raise ValueError(f"check_consistency: the shapes {given} do not determine every "
                             f"argument's shape ({arg_names})")
        return dict(zip(list(arg_names) + list(aux_names), list(arg_shapes) + list(aux_shapes)))

    shapes = shapes_of(syms[0], ctx_list[0])
    for name in sorted(arg_names):
        if name not in arg_params:
            if use_uniform:
                arg_params[name] = np.random.uniform(low=-0.92 * scale, high=0.92 * scale,
                                                     size=shapes[name]).astype(rand_type)
            else:
                arg_params[name] = np.random.normal(size=shapes[name],
                                                    scale=scale).astype(rand_type)
    for name in runners[0].aux_names:
        aux_params.setdefault(name, 0)

    def dtypes_of(s, runner, cfg):
        """Every argument's and aux state's dtype: ``type_dict``'s, the rest inferred from it
        (as simple_bind does), float32 where nothing says otherwise."""
        given = dict(cfg.get("type_dict", {}))
        names = list(arg_names) + list(runner.aux_names)
        found = {}
        if hasattr(s, "infer_type"):
            arg_types, _, aux_types = s.infer_type_partial(**given) \
                if hasattr(s, "infer_type_partial") else s.infer_type(**given)
            if arg_types is not None:
                found = dict(zip(names, list(arg_types) + list(aux_types or [])))
        return {k: np.dtype(given.get(k) or found.get(k) or np.float32) for k in names}

    def run(i, train, head_grads=None):
        cfg, runner = ctx_list[i], runners[i]
        types = dtypes_of(syms[i], runner, cfg)

        def dtype_of(_, name):
            return types[name]
        args = {k: mx.nd.array(np.asarray(arg_params[k]), ctx=runner.ctx, dtype=dtype_of(cfg, k))
                for k in arg_names}
        aux = {k: mx.nd.array(np.broadcast_to(np.asarray(aux_params[k]), shapes.get(k, ())),
                              ctx=runner.ctx, dtype=dtype_of(cfg, k)) for k in runner.aux_names}
        if not train:
            return runner(args, aux, is_train=False), {}
        for arr in args.values():
            arr.attach_grad()
        with autograd.record():
            outs = runner(args, aux, is_train=True)
        heads = [mx.nd.array(h, ctx=runner.ctx, dtype=o.dtype) for h, o in zip(head_grads, outs)]
        # outputs of operators with no gradient (argsort, topk's indices, one_hot...) send
        # none back, as in MXNet's bound executors (zeros)
        live = [(o, h) for o, h in zip(outs, heads) if autograd._head_t(o).requires_grad]
        if live:
            autograd.backward([o for o, _ in live], head_grads=[h for _, h in live])
        return outs, {k: args[k].grad for k in arg_names}

    results = [run(i, False)[0] for i in range(len(ctx_list))]
    dtypes = [np.dtype(outs[0].dtype) for outs in results]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))
    names = output_names or [f"output{i}" for i in range(len(results[0]))]
    gt = ground_truth
    if gt is None:
        gt = dict(zip(names, results[gt_idx]))

    def compare(arr, ref, what, i, rt, at):
        try:
            assert_almost_equal(arr, ref, rtol=rt, atol=at, equal_nan=equal_nan)
        except AssertionError as err:
            print("%s Err: ctx %d vs ctx %d at %s" % (what, i, gt_idx, ref_name[0]))
            traceback.print_exc()
            if raise_on_err:
                raise err
            print(str(err))

    ref_name = [None]
    for i, outs in enumerate(results):
        if i == gt_idx:
            continue
        for name, arr in zip(names, outs):
            ref_name[0] = name
            compare(arr, gt[name], "Predict", i, rtol, atol)

    if grad_req != "null":
        least = [o.dtype for o in results[0]]
        for outs in results:
            least = [o.dtype if np.dtype(o.dtype).itemsize < np.dtype(d).itemsize else d
                     for o, d in zip(outs, least)]
        golden = [o.astype(d).asnumpy() for o, d in zip(results[0], least)]
        trained = [run(i, True, golden) for i in range(len(ctx_list))]
        if ground_truth is None:
            gt = dict(zip(names, trained[gt_idx][0]))
            gt.update(trained[gt_idx][1])
        for i, (outs, grads) in enumerate(trained):
            if i == gt_idx:
                continue
            for name, arr in list(zip(names, outs)) + list(grads.items()):
                ref_name[0] = name
                if gt.get(name) is None:
                    assert arr is None
                    continue
                rt, at = rtol, atol
                smaller = arr.dtype if np.dtype(arr.dtype).itemsize < dtypes[i].itemsize else dtypes[i]
                if np.dtype(smaller) != np.dtype(arr.dtype):
                    rt, at = get_tols(arr.astype(smaller), gt[name], rtol, atol)
                compare(arr, gt[name], "Train", i, rt, at)
    return gt


def same_symbol_structure(sym1, sym2):
    """Whether two symbols' graphs have the same operator at every node."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(n1["op"] == n2["op"] for n1, n2 in zip(nodes1, nodes2))


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1E-4, atol=1E-4):
    """Check that a HybridBlock gives the same outputs (and input gradients) hybridized and
    not, and optionally the same as ``numpy_func``.

    Parameters
    ----------
    net_builder : callable
        ``net_builder(prefix='net_')`` builds the block.
    data_l : list of NDArray
        Inputs.
    numpy_func : callable, optional
        Reference implementation on numpy arrays.
    test_grad : bool
    rtol, atol : float
    """
    from . import autograd
    saved_out = None
    saved_grads = None
    params = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            net.initialize()
            if params is not None:
                for name, p in net.collect_params().items():
                    p.set_data(mx.nd.array(params[name]))
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if params is None:
                params = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                if saved_grads is None:
                    saved_grads = [x.grad.asnumpy() for x in inputs]
                else:
                    for x, g in zip(inputs, saved_grads):
                        assert_almost_equal(x.grad.asnumpy(), g, rtol=rtol, atol=atol)
    if numpy_func is not None:
        expected = numpy_func(*[x.asnumpy() for x in data_l])
        assert_almost_equal(saved_out, expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------- statistics
def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equal-probability buckets ``(ppf(i/n), ppf((i+1)/n))`` and their
    probabilities, for :func:`chi_square_check` of a continuous distribution with quantile
    function ``ppf``."""
    assert nbuckets > 0
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of ``generator(nsamples)`` lies within ``mu +- 3 sigma / sqrt(n)``."""
    samples = np.array(generator(nsamples))
    mean = samples.mean()
    half_width = 3 * sigma / np.sqrt(nsamples)
    return (mean > mu - half_width) and (mean < mu + half_width)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance of ``generator(nsamples)`` lies within
    ``sigma**2 +- 3 sqrt(2 sigma**4 / (n - 1))``."""
    samples = np.array(generator(nsamples))
    var = samples.var(ddof=1)
    half_width = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return (var > sigma ** 2 - half_width) and (var < sigma ** 2 + half_width)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Chi-square test of ``generator(nsamples)`` against bucket probabilities.

    Parameters
    ----------
    generator : callable
        ``generator(n)`` returns ``n`` i.i.d. samples.
    buckets : list
        ``(low, high)`` ranges (continuous; ascending, disjoint) or the possible values
        (discrete).
    probs : list of float
        Each bucket's probability.
    nsamples : int

    Returns
    -------
    tuple
        ``(p_value, observed_freq, expected_freq)``.
    """
    stats = ss
    if not stats:
        raise ImportError("scipy is not available. Please check if the scipy python bindings "
                          "are installed.")
    assert isinstance(buckets, list)
    samples = generator(nsamples)
    assert len(probs) == len(buckets)
    continuous = isinstance(buckets[0], (list, tuple))
    if continuous:
        edges = np.zeros((len(buckets) * 2,), dtype=np.float32)
        for i, (low, high) in enumerate(buckets):
            assert low <= high
            if i < len(buckets) - 1:
                assert high <= buckets[i + 1][0]
            edges[2 * i] = low
            edges[2 * i + 1] = high
        bucket_ids = np.searchsorted(edges, samples, side="right") // 2
    else:
        bucket_ids = np.array(samples)
    expected_freq = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    obs_freq = np.zeros(shape=len(buckets), dtype=np.int64)
    for i, bucket in enumerate(buckets):
        obs_freq[i] = (bucket_ids == (i if continuous else bucket)).sum()
    # Pearson's statistic and its chi2 tail with k - 1 degrees of freedom, computed here:
    # scipy >= 1.9's chisquare refuses observed and expected totals that differ, which they
    # do by design (expected counts are rounded down; samples outside the buckets are not
    # counted), while older scipy, as MXNet used it, computed exactly this.
    expected = expected_freq.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = np.sum((obs_freq - expected) ** 2 / expected)
    p = stats.chi2.sf(statistic, len(buckets) - 1)
    return p, obs_freq, expected_freq


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Run :func:`chi_square_check` ``nrepeat`` times; raise AssertionError unless at least
    ``success_rate`` of the runs give ``p > alpha``. Returns the p values."""
    p_values, observed, expected = [], [], []
    for _ in range(nrepeat):
        p, obs, exp = chi_square_check(generator=generator, buckets=buckets, probs=probs,
                                       nsamples=nsamples)
        p_values.append(p)
        observed.append(obs)
        expected.append(exp)
    if (np.array(p_values) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError("Generator test fails, Chi-square p=%s, obs_freq=%s, "
                             "expected_freq=%s.\nbuckets=%s, probs=%s"
                             % (str(p_values), str(observed), str(expected), str(buckets),
                                str(probs)))
    return p_values


# ---------------------------------------------------------------------------- environment
@contextmanager
def environment(*args):
    """Set environment variables for the ``with`` block and restore them afterwards (also
    when the block raises).

    ``environment('NAME', 'value')`` sets one variable, ``environment({'A': '1', 'B': None})``
    several; ``None`` unsets a variable inside the block."""
    if len(args) == 1 and isinstance(args[0], dict):
        updates = dict(args[0])
    else:
        assert len(args) == 2, "Expecting one dict arg or two args: env var name and value"
        updates = {args[0]: args[1]}
    saved = {name: os.environ.get(name) for name in updates}
    for name, value in updates.items():
        setenv(name, value)
    try:
        yield
    finally:
        mx.nd.waitall()
        for name, value in saved.items():
            setenv(name, value)


@contextmanager
def discard_stderr():
    """Silence everything written to the process's stderr (file descriptor 2) in the block,
    output of C code included."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        # stderr is not a real file here (captured, or a virtual stream): nothing to redirect.
        yield
        return
    try:
        sys.stderr.flush()
    except Exception:  # pragma: no cover - a closed stream
        pass
    saved_fd = os.dup(fd)
    with open(os.devnull, "w") as bit_bucket:
        os.dup2(bit_bucket.fileno(), fd)
        try:
            yield
        finally:
            try:
                sys.stderr.flush()
            except Exception:  # pragma: no cover
                pass
            os.dup2(saved_fd, fd)
            os.close(saved_fd)


def is_cd_run():
    """Whether this runs as part of MXNet's continuous delivery (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", 0) == "1"


def is_aarch64_run():
    """Whether this machine is aarch64."""
    return platform.machine() == "aarch64"


def has_tvm_ops():
    """Whether TVM-generated operators are available (never, in neogluon)."""
    return Features().is_enabled("TVM_OP")


def is_op_runnable():
    """Whether operators can run on the current context: always, in neogluon (MXNet only
    refuses TVM operators on old GPUs)."""
    return True


def list_gpus():
    """``range(n)`` for the ``n`` GPUs torch can use."""
    return range(mx.util.get_gpu_count())


# ---------------------------------------------------------------------------- data
class DummyIter(_DataIterBase):
    """A data iterator that returns the first batch of ``real_iter`` forever (for timing).

    Parameters
    ----------
    real_iter : DataIter
    """

    def __init__(self, real_iter):
        if _DataIterBase is not object:
            super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The first batch of the real iterator (StopIteration is never raised)."""
        return self.the_batch

    __next__ = next


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Download ``url`` into a file, unless it exists already.

    Parameters
    ----------
    url : str
    fname : str, optional
        The file (default: the URL's last component).
    dirname : str, optional
        Directory for ``fname`` (created when missing).
    overwrite : bool
        Download even when the file exists.
    retries : int
        Further attempts after a failure.

    Returns
    -------
    str
        The file name.

    Raises
    ------
    Exception
        The last attempt's error (``requests``' ConnectionError when there is no network,
        with a note saying that the file must then be provided locally).
    """
    assert retries >= 0, "Number of retries should be at least 0"
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname != "" and not os.path.exists(dirname):
        logging.info("create directory %s", dirname)
        try:
            os.makedirs(dirname)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise OSError("failed to create " + dirname) from exc
    if not overwrite and os.path.exists(fname):
        logging.info("%s exists, skipping download", fname)
        return fname
    left = retries
    while True:
        try:
            resp = requests.get(url, stream=True, timeout=60)
            if resp.status_code != 200:
                raise MXNetError(f"failed to open {url}: HTTP status {resp.status_code}")
            # written under a temporary name, so that a failed download leaves no partial
            # file that the next call would take for a complete one
            part = f"{fname}.part{os.getpid()}"
            try:
                with open(part, "wb") as f:
                    for chunk in resp.iter_content(chunk_size=1024):
                        if chunk:
                            f.write(chunk)
                os.replace(part, fname)
            finally:
                if os.path.exists(part):
                    os.remove(part)
            break
        except Exception as err:
            left -= 1
            if left <= 0:
                if isinstance(err, (requests.exceptions.ConnectionError,
                                    requests.exceptions.Timeout)):
                    err.add_note(f"could not reach {url}: without network access, put the "
                                 f"file at {fname!r} beforehand")
                raise
            print("download failed, retrying, {} attempt{} left".format(left, "s" if left > 1 else ""))
    logging.info("downloaded %s into %s successfully", url, fname)
    return fname


_MODEL_URL = "http://data.mxnet.io/models/"
_MODELS = {
    "imagenet1k-inception-bn": "imagenet/inception-bn/Inception-BN",
    "imagenet1k-resnet-18": "imagenet/resnet/18-layers/resnet-18",
    "imagenet1k-resnet-34": "imagenet/resnet/34-layers/resnet-34",
    "imagenet1k-resnet-50": "imagenet/resnet/50-layers/resnet-50",
    "imagenet1k-resnet-101": "imagenet/resnet/101-layers/resnet-101",
    "imagenet1k-resnet-152": "imagenet/resnet/152-layers/resnet-152",
    "imagenet1k-resnext-50": "imagenet/resnext/50-layers/resnext-50",
    "imagenet1k-resnext-101": "imagenet/resnext/101-layers/resnext-101",
    "imagenet1k-resnext-101-64x4d": "imagenet/resnext/101-layers/resnext-101-64x4d",
    "imagenet11k-resnet-152": "imagenet-11k/resnet-152/resnet-152",
    "imagenet11k-place365ch-resnet-152": "imagenet-11k-place365-ch/resnet-152",
    "imagenet11k-place365ch-resnet-50": "imagenet-11k-place365-ch/resnet-50",
}


def download_model(model_name, dst_dir="./", meta_info=None):
    """Download a model's ``-symbol.json`` and ``-0000.params`` into ``dst_dir``.

    Returns
    -------
    tuple
        ``(path prefix, 0)``, or ``(None, 0)`` for an unknown model.
    """
    if meta_info is None:
        meta_info = {}
        for name, stem in _MODELS.items():
            epoch_file = "Inception-BN-0126.params" if "inception-bn" in name else None
            params = _MODEL_URL + (stem.rsplit("/", 1)[0] + "/" + epoch_file if epoch_file
                                   else stem + "-0000.params")
            meta_info[name] = {"symbol": _MODEL_URL + stem + "-symbol.json", "params": params}
    meta_info = dict(meta_info)
    if model_name not in meta_info:
        return (None, 0)
    if not os.path.isdir(dst_dir):
        os.mkdir(dst_dir)
    meta = dict(meta_info[model_name])
    assert "symbol" in meta, "missing symbol url"
    prefix = os.path.join(dst_dir, model_name)
    download(meta["symbol"], prefix + "-symbol.json")
    assert "params" in meta, "mssing parameter file url"
    download(meta["params"], prefix + "-0000.params")
    return (prefix, 0)


_MNIST_URL = "http://data.mxnet.io/data/mnist/"


def _read_mnist(label_file, image_file):
    with gzip.open(label_file) as f:
        struct.unpack(">II", f.read(8))
        labels = np.frombuffer(f.read(), dtype=np.int8)
    with gzip.open(image_file, "rb") as f:
        _, _, rows, cols = struct.unpack(">IIII", f.read(16))
        images = np.frombuffer(f.read(), dtype=np.uint8).reshape(len(labels), rows, cols)
    return labels, images.reshape(images.shape[0], 1, 28, 28).astype(np.float32) / 255


def get_mnist():
    """MNIST as a dict of numpy arrays (``train_data``, ``train_label``, ``test_data``,
    ``test_label``; images float32 in [0, 1], shape (N, 1, 28, 28)), read from the
    ``*-ubyte.gz`` files in the current directory (downloaded first when missing)."""
    train_lbl, train_img = _read_mnist(download(_MNIST_URL + "train-labels-idx1-ubyte.gz"),
                                       download(_MNIST_URL + "train-images-idx3-ubyte.gz"))
    test_lbl, test_img = _read_mnist(download(_MNIST_URL + "t10k-labels-idx1-ubyte.gz"),
                                     download(_MNIST_URL + "t10k-images-idx3-ubyte.gz"))
    return {"train_data": train_img, "train_label": train_lbl,
            "test_data": test_img, "test_label": test_lbl}


def get_mnist_pkl():
    """Make sure ``data/mnist.pkl.gz`` exists (downloading it when missing)."""
    os.makedirs("data", exist_ok=True)
    if not os.path.exists("data/mnist.pkl.gz"):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _zip_into_data(names, url):
    os.makedirs("data", exist_ok=True)
    if not all(os.path.exists(os.path.join("data", n)) for n in names):
        with zipfile.ZipFile(download(url, dirname="data")) as zf:
            zf.extractall("data")


def get_mnist_ubyte():
    """Make sure the four MNIST ``*-ubyte`` files exist in ``data/`` (downloading and
    extracting ``mnist.zip`` when one is missing)."""
    _zip_into_data(["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                    "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"],
                   "http://data.mxnet.io/mxnet/data/mnist.zip")


def get_cifar10():
    """Make sure CIFAR-10's ``.rec``/``.lst`` files exist in ``data/cifar`` (local files
    first: when one is missing, a ``data/cifar10.zip`` already there is extracted, and only
    without it is the zip downloaded)."""
    _zip_into_data(["cifar/train.rec", "cifar/test.rec", "cifar/train.lst", "cifar/test.lst"],
                   "http://data.mxnet.io/mxnet/data/cifar10.zip")


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """Training and validation ``mx.io.MNISTIter`` over ``data/*-ubyte``."""
    get_mnist_ubyte()
    io = importlib.import_module(".io", "neogluon")
    if not hasattr(io, "MNISTIter"):
        raise MXNetError("get_mnist_iterator needs mx.io.MNISTIter, which neogluon does not "
                         "provide; use gluon.data.vision.MNIST with a gluon.data.DataLoader")
    flat = len(input_shape) != 3
    common = dict(input_shape=input_shape, batch_size=batch_size, flat=flat,
                  num_parts=num_parts, part_index=part_index)
    train = io.MNISTIter(image="data/train-images-idx3-ubyte",
                         label="data/train-labels-idx1-ubyte", shuffle=True, **common)
    val = io.MNISTIter(image="data/t10k-images-idx3-ubyte",
                       label="data/t10k-labels-idx1-ubyte", **common)
    return train, val


def get_zip_data(data_dir, url, data_origin_name):
    """Download the zip ``url`` into ``data_dir`` (as ``data_origin_name``) and extract it
    there, unless it is there already."""
    origin = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(origin):
        download(url, dirname=data_dir, overwrite=False)
        with zipfile.ZipFile(origin) as zf:
            zf.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download the bz2 file ``url`` into ``data_dir`` and decompress it to ``data_name``,
    unless that exists already."""
    target = os.path.join(data_dir, data_name)
    origin = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(target):
        download(url, fname=origin, dirname=data_dir, overwrite=False)
        with bz2.BZ2File(origin, "rb") as src, open(target, "wb") as dst:
            for line in src:
                dst.write(line)
        os.remove(origin)


def get_im2rec_path(home_env="MXNET_HOME"):
    """Path of MXNet's ``tools/im2rec.py`` (under ``$MXNET_HOME`` or next to the package).

    Raises
    ------
    IOError
        When it cannot be found (neogluon does not ship it).
    """
    root = os.environ.get(home_env, os.path.dirname(mx.__file__))
    for candidate in (os.path.join(root, "tools", "im2rec.py"),
                      os.path.join(root, "..", "..", "tools", "im2rec.py")):
        if os.path.isfile(candidate):
            return candidate
    raise IOError("Could not find path to tools/im2rec.py")


# ---------------------------------------------------------------------------- matrices
def new_matrix_with_real_eigvals_2d(n):
    """A well-conditioned ``n x n`` matrix with real eigenvalues in [-10, 10]."""
    shape = (n, n)
    while True:
        diag = np.diag(np.random.uniform(-1.0, 1.0, n))
        eye = np.eye(n).reshape(shape)
        v = np.random.uniform(-1., 1., n).reshape(shape[:-1] + (1,))
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        householder = eye - 2 * np.matmul(v, np.swapaxes(v, -1, -2))
        q = np.matmul(householder, diag)
        if np.linalg.cond(q, 2) < 3:
            break
    eigvals = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), eigvals), q)


def new_matrix_with_real_eigvals_nd(shape):
    """A batch of :func:`new_matrix_with_real_eigvals_2d` matrices of ``shape``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random ``n x n`` orthonormal matrix."""
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric ``n x n`` matrix with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    eigvals = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(q.T, eigvals), q)


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch of :func:`new_sym_matrix_with_real_eigvals_2d` matrices of ``shape``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)
