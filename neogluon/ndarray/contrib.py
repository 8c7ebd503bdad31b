"""``nd.contrib``: operators MXNet keeps under contrib."""
from __future__ import annotations

import math

import torch

from ..base import MXNetError
from .ndarray import NDArray, _new, _run, _assign_out
from .ops import isnan, isinf, isfinite  # noqa: F401
from ._deformable import DeformableConvolution, ModulatedDeformableConvolution  # noqa: F401

__all__ = ["isnan", "isinf", "isfinite", "DeformableConvolution",
           "ModulatedDeformableConvolution", "arange_like", "boolean_mask", "index_copy",
           "div_sqrt_dim"]


def _t(x, op, what="data"):
    if isinstance(x, NDArray):
        return x._t
    raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")


def arange_like(data, start=0.0, step=1.0, repeat=1, axis=None, ctx=None, out=None,
                name=None):
    """``start, start + step, ...`` shaped like ``data`` (or as long as its ``axis``)."""
    t = _t(data, "arange_like")
    n = t.numel() if axis is None else t.shape[axis]
    vals = start + step * torch.div(torch.arange(n, dtype=torch.float64, device=t.device),
                                    repeat, rounding_mode="floor")
    vals = vals.to(t.dtype)
    if axis is None:
        vals = vals.reshape(t.shape)
    return _assign_out(_new(vals, data._ctx), out)


def boolean_mask(data, index, axis=0, out=None, name=None):
    """The slices of ``data`` along ``axis`` where ``index`` is non-zero."""
    t = _t(data, "boolean_mask")
    m = _t(index, "boolean_mask", "index").detach()
    if m.dim() != 1 or m.shape[0] != t.shape[axis]:
        raise MXNetError(f"boolean_mask: index of shape {index.shape} must be 1-D with "
                         f"{t.shape[axis]} entries (axis {axis} of data shape {data.shape})")
    keep = torch.nonzero(m != 0).reshape(-1)
    return _assign_out(_new(_run(torch.index_select, t, axis, keep), data._ctx), out)


def index_copy(old_tensor, index_vector, new_tensor, out=None, name=None):
    """A copy of ``old_tensor`` whose rows ``index_vector`` are replaced by ``new_tensor``."""
    t = _t(old_tensor, "index_copy")
    idx = _t(index_vector, "index_copy", "index_vector").detach().long()
    v = _t(new_tensor, "index_copy", "new_tensor")
    return _assign_out(_new(_run(torch.index_copy, t, 0, idx, v), old_tensor._ctx), out)


def div_sqrt_dim(data, out=None, name=None):
    """``data / sqrt(data.shape[-1])``."""
    t = _t(data, "div_sqrt_dim")
    return _assign_out(_new(_run(torch.div, t, math.sqrt(t.shape[-1])), data._ctx), out)


def getnnz(data=None, axis=None, out=None, name=None):
    """The number of stored values of a CSR matrix: in all (``axis=None``, a one-element
    int64 array) or per row (``axis=1``).

    Parameters
    ----------
    data : CSRNDArray
    axis : None or 1
        MXNet 1.9.1 supports no other axis.
    out : NDArray, optional
    """
    if getattr(data, "stype", None) != "csr":
        raise MXNetError(f"getnnz: data must be a CSRNDArray, got "
                         f"{getattr(data, 'stype', type(data).__name__)}")
    indptr = data.indptr._t.long()
    if axis is None:
        r = indptr[-1:].clone()
    elif axis in (1, -1):
        r = indptr[1:] - indptr[:-1]
    else:
        raise MXNetError(f"getnnz with axis = {axis} is not supported")
    return _assign_out(_new(r, data._ctx), out)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` classes (with replacement) from the log-uniform distribution
    ``P(c) = log((c+2)/(c+1)) / log(range_max+1)`` over ``[0, range_max)``.

    Parameters
    ----------
    true_classes : NDArray
        The target classes, for their expected counts.
    num_sampled : int
    range_max : int
    ctx : Context, optional
        Where the samples go (``true_classes``' context by default).

    Returns
    -------
    sampled_classes : NDArray
        int64, ``(num_sampled,)``.
    expected_count_true : NDArray
        float64, the expected count of each true class among ``num_sampled`` draws.
    expected_count_sampled : NDArray
        float64, the same for each sampled class.
    """
    from . import random as _random
    ctx = ctx or true_classes.context
    log_range = math.log(range_max + 1)
    u = _random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)._t
    sampled = (torch.exp(u) - 1).long() % range_max

    def expected(c):
        c = c.double()
        return torch.log((c + 2.0) / (c + 1.0)) / log_range * num_sampled
    true_t = true_classes._t.detach().to(ctx.torch_device)
    return (_new(sampled, ctx), _new(expected(true_t), ctx), _new(expected(sampled), ctx))
