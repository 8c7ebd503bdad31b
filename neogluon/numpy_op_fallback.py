"""``mxnet.numpy_op_fallback``: NumPy functions that MXNet 1.9.1 runs as custom operators
(``empty_like``, ``resize``, ``unravel_index``, ``random.multivariate_normal``), registered
under the op types ``empty_like_fallback``, ``resize_fallback``, ``unravel_index_fallback`` and
``mvn_fallback`` and reachable as ``mx.nd.np._internal.<op type>(...)``
(``mx.nd.Custom(..., op_type=...)``). None of them has a gradient.
"""
import ast
import functools

import numpy as np

from . import operator
from . import numpy as _mx_np
from .util import np_array, use_np
from .numpy.utils import _STR_2_DTYPE_
from .numpy import _internal as _nd_npi

__all__ = []


def _literal(v):
    """A keyword as the custom-op machinery hands it over (a string) or as given."""
    return ast.literal_eval(v) if isinstance(v, str) else v


def register(op_name, imperative=True, symbolic=True):
    """Class decorator: register a CustomOpProp under ``op_name`` (in NumPy-array mode) and
    expose ``mx.nd.np._internal.<op_name>``, a ``Custom`` call with that op type. (The
    symbolic twin ``mx.sym.np._internal.<op_name>`` follows from it.)"""
    def helper(prop_cls):
        with np_array():
            prop_cls = operator.register(op_name)(prop_cls)
        if imperative:
            if hasattr(_nd_npi, op_name):
                raise ValueError(f"Duplicate name {op_name} found in module {_nd_npi}")
            setattr(_nd_npi, op_name, functools.partial(_custom, op_type=op_name))
        return prop_cls
    return helper


def _custom(*args, op_type, **kwargs):
    from . import ndarray as _nd
    from .numpy.multiarray import _np_tree, _nd_tree
    return _np_tree(_nd.Custom(*_nd_tree(args), op_type=op_type, **kwargs))


def _no_grad(name):
    raise NotImplementedError(f"Operator {name} does not support gradient computation")


@use_np
class EmptyLike(operator.CustomOp):
    """NumPy's empty_like on the input's data."""

    def __init__(self, dtype, order, subok, shape):
        super().__init__()
        self._dtype, self._order, self._subok, self._shape = dtype, order, subok, shape

    def forward(self, is_train, req, in_data, out_data, aux):
        out = np.empty_like(in_data[0].asnumpy(), dtype=self._dtype, order=self._order,
                            subok=self._subok)
        self.assign(out_data[0], req[0], _mx_np.array(out, ctx=in_data[0].ctx))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _no_grad("empty_like")


@register("empty_like_fallback")
class EmptyLikeProp(operator.CustomOpProp):
    """Properties of the empty_like fallback (one input, ``prototype``)."""

    def __init__(self, dtype, order, subok, shape):
        super().__init__(need_top_grad=True)
        self._dtype = None if dtype in ("None", None) else dtype
        self._order = order
        self._subok = _literal(subok)
        self._shape = _literal(shape)

    def list_arguments(self):
        return ["prototype"]

    def infer_shape(self, in_shape):
        return (in_shape[0],), (in_shape[0],), ()

    def infer_type(self, in_type):
        out = in_type[0] if self._dtype is None else _STR_2_DTYPE_[self._dtype]
        return (in_type[0],), (out,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return EmptyLike(self._dtype, self._order, self._subok, self._shape)


@use_np
class Resize(operator.CustomOp):
    """NumPy's resize (repeats the data to fill the new shape)."""

    def __init__(self, new_shape):
        super().__init__()
        self._new_shape = new_shape

    def forward(self, is_train, req, in_data, out_data, aux):
        out = np.resize(in_data[0].asnumpy(), self._new_shape)
        self.assign(out_data[0], req[0], _mx_np.array(out, dtype=out.dtype,
                                                      ctx=out_data[0].ctx))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _no_grad("resize")


@register("resize_fallback")
class ResizeProp(operator.CustomOpProp):
    """Properties of the resize fallback (one input, ``a``)."""

    def __init__(self, new_shape):
        super().__init__(need_top_grad=True)
        self._new_shape = _literal(new_shape)

    def list_arguments(self):
        return ["a"]

    def infer_shape(self, in_shape):
        shape = self._new_shape
        out = (shape,) if np.isscalar(shape) else tuple(shape)
        return (in_shape[0],), (out,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Resize(self._new_shape)


@use_np
class Unravel_index(operator.CustomOp):  # noqa: N801 - MXNet's name
    """NumPy's unravel_index: one row of coordinates per axis of ``shape``."""

    def __init__(self, shape):
        super().__init__()
        self._shape = shape

    def forward(self, is_train, req, in_data, out_data, aux):
        out = np.unravel_index(in_data[0].asnumpy(), self._shape)
        self.assign(out_data[0], req[0], _mx_np.array(np.stack(out), dtype=out[0].dtype,
                                                      ctx=out_data[0].ctx))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _no_grad("Unravel_index")


@register("unravel_index_fallback")
class Unravel_indexProp(operator.CustomOpProp):  # noqa: N801 - MXNet's name
    """Properties of the unravel_index fallback (one input, ``indices``)."""

    def __init__(self, shape):
        super().__init__(need_top_grad=True)
        self._shape = _literal(shape)

    def list_arguments(self):
        return ["indices"]

    def infer_shape(self, in_shape):
        rows = 1 if np.isscalar(self._shape) else len(self._shape)
        return (in_shape[0],), ((rows,) + tuple(in_shape[0]),), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Unravel_index(self._shape)


@use_np
class MultivariateNormal(operator.CustomOp):
    """Draws ``mean + cholesky(cov) @ noise`` with standard-normal noise."""

    def __init__(self, size=None):
        super().__init__()
        self._size = size

    def forward(self, is_train, req, in_data, out_data, aux):
        loc, cov = in_data[0], in_data[1]
        if cov.dtype == np.float16:   # no half-precision Cholesky: factor in float32
            scale = _mx_np.linalg.cholesky(cov.astype(np.float32)).astype(np.float16)
        else:
            scale = _mx_np.linalg.cholesky(cov)
        noise = _mx_np.random.normal(size=out_data[0].shape, dtype=loc.dtype, ctx=loc.ctx)
        self.assign(out_data[0], req[0], loc + _mx_np.einsum("...jk,...j->...k", scale, noise))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _no_grad("random.multivariate_normal")


@register("mvn_fallback")
class MultivariateNormalProp(operator.CustomOpProp):
    """Properties of the multivariate-normal fallback (inputs ``mean`` and ``cov``)."""

    def __init__(self, size=None):
        super().__init__(need_top_grad=True)
        self._size = _literal(size) if size is not None else None

    def list_arguments(self):
        return ["mean", "cov"]

    def infer_shape(self, in_shape):
        loc, cov = tuple(in_shape[0]), tuple(in_shape[1])
        if len(loc) < 1:
            raise ValueError("mean must be at least 1 dimensional")
        if len(cov) < 2:
            raise ValueError("cov must be at least 2 dimensional")
        if cov[-1] != cov[-2]:
            raise ValueError("the last two dimentions of the parameter cov have to be the same,"
                             f" whereas the shape of cov is {cov}")
        if cov[-1] != loc[-1]:
            raise ValueError(f"mean and cov must have same length.The shape of mean is "
                             f"{loc[-1:]} but the shape of cov is {cov[-2:]}")
        batch = np.broadcast_shapes(loc[:-1], cov[:-2])
        size = self._size
        if size is None:
            out = batch + loc[-1:]
        else:
            size = (size,) if isinstance(size, int) else tuple(size)
            out = size + batch + loc[-1:]
        return (loc, cov), (out,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return MultivariateNormal(self._size)
