"""More of ``nd._internal``'s operators under MXNet 1.9.1's names: the flat-argument forms of
the contrib optimizer kernels, the ``_scatter_*`` operators, the deprecated ``_imdecode``, the
float path of oneDNN's fused self-attention nodes, and the control-flow graph nodes (which
refuse an imperative call, pointing to ``nd.contrib``). :mod:`._internal` re-exports them;
``sym._internal``'s twins follow.
"""
from __future__ import annotations

import numpy as np
import torch

from ..base import MXNetError
from .ndarray import NDArray, _assign_out

__all__ = ["_adamw_update", "_mp_adamw_update", "_multi_adamw_update",
           "_multi_mp_adamw_update", "_multi_lamb_update", "_multi_mp_lamb_update",
           "_scatter_plus_scalar", "_scatter_minus_scalar", "_scatter_elemwise_div",
           "_scatter_set_nd", "_imdecode", "_sg_mkldnn_selfatt_qk",
           "_sg_mkldnn_selfatt_valatt", "_foreach", "_while_loop", "_cond"]


def _ops():
    from . import optimizer_ops
    return optimizer_ops


def _required(op, **values):
    missing = [k for k, v in values.items() if v is None]
    if missing:
        raise MXNetError(f"Required parameter {missing[0]} is not presented, in operator {op}")


# ------------------------------------------------------------------ optimizer kernels
# MXNet's nd.contrib.adamw_update & co. are Python wrappers over these: the rescale factor
# is an array input (the update is skipped when it is 0, NaN or Inf) and the multi-tensor forms
# take their arrays flattened, weight by weight.
def _adamw_update(weight=None, grad=None, mean=None, var=None, rescale_grad=None, lr=None,
                  beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0, eta=None, clip_gradient=-1.0,
                  out=None, name=None):
    """MXNet's ``_adamw_update``, the kernel of :func:`nd.contrib.adamw_update` (same
    arguments; ``mean`` and ``var`` are updated in place)."""
    _required("_adamw_update", lr=lr, eta=eta, rescale_grad=rescale_grad)
    return _ops().adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=beta1,
                               beta2=beta2, epsilon=epsilon, wd=wd,
                               clip_gradient=clip_gradient, out=out)


def _mp_adamw_update(weight=None, grad=None, mean=None, var=None, weight32=None,
                     rescale_grad=None, lr=None, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
                     eta=None, clip_gradient=-1.0, out=None, name=None):
    """MXNet's ``_mp_adamw_update``, the kernel of :func:`nd.contrib.mp_adamw_update`."""
    _required("_mp_adamw_update", lr=lr, eta=eta, rescale_grad=rescale_grad)
    return _ops().mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta,
                                  beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                  clip_gradient=clip_gradient, out=out)


def _split(op, data, per, count, count_name, extra=0):
    """``data`` (flattened groups of ``per`` arrays, then ``extra`` more) as lists by role."""
    n = (len(data) - extra) // per
    if count is not None and int(count) != n or n * per + extra != len(data) or n == 0:
        raise MXNetError(f"{op}: {len(data)} input arrays for {count_name}={count}: expected "
                         f"{per} per weight" + (f" and {extra} more" if extra else ""))
    return [list(data[k:n * per:per]) for k in range(per)]


def _multi_adamw_update(*data, lrs=None, wds=None, etas=None, beta1=0.9, beta2=0.999,
                        epsilon=1e-8, clip_gradient=-1.0, num_weights=1, out=None, name=None):
    """MXNet's ``_multi_adamw_update``: ``data`` is ``weight_0, grad_0, mean_0, var_0,
    weight_1, ..., rescale_grad``, as :func:`nd.contrib.multi_adamw_update` passes them."""
    op = "_multi_adamw_update"
    _required(op, lrs=lrs, wds=wds, etas=etas)
    w, g, m, v = _split(op, data, 4, num_weights, "num_weights", extra=1)
    return _ops().multi_adamw_update(w, g, m, v, data[-1], lrs, wds, etas, out=out,
                                     size=len(w), beta1=beta1, beta2=beta2, epsilon=epsilon,
                                     clip_gradient=clip_gradient)


def _multi_mp_adamw_update(*data, lrs=None, wds=None, etas=None, beta1=0.9, beta2=0.999,
                           epsilon=1e-8, clip_gradient=-1.0, num_weights=1, out=None,
                           name=None):
    """MXNet's ``_multi_mp_adamw_update``: ``data`` is ``weight_0, grad_0, mean_0, var_0,
    weight32_0, weight_1, ..., rescale_grad``."""
    op = "_multi_mp_adamw_update"
    _required(op, lrs=lrs, wds=wds, etas=etas)
    w, g, m, v, w32 = _split(op, data, 5, num_weights, "num_weights", extra=1)
    return _ops().multi_mp_adamw_update(w, g, m, v, w32, data[-1], lrs, wds, etas, out=out,
                                        size=len(w), beta1=beta1, beta2=beta2,
                                        epsilon=epsilon, clip_gradient=clip_gradient)


def _multi_lamb_update(*data, learning_rates=None, wds=None, step_count=None, beta1=0.9,
                       beta2=0.999, epsilon=1e-6, rescale_grad=1.0, lower_bound=-1.0,
                       upper_bound=-1.0, clip_gradient=-1.0, bias_correction=True,
                       num_tensors=1, out=None, name=None):
    """MXNet's ``_multi_lamb_update``: ``data`` is ``weight_0, grad_0, mean_0, var_0,
    weight_1, ...``, as :func:`nd.contrib.multi_lamb_update` passes them."""
    op = "_multi_lamb_update"
    _required(op, learning_rates=learning_rates, wds=wds, step_count=step_count)
    w, g, m, v = _split(op, data, 4, num_tensors, "num_tensors")
    return _ops().multi_lamb_update(w, g, m, v, step_count, learning_rates, wds, out=out,
                                    beta1=beta1, beta2=beta2, epsilon=epsilon,
                                    rescale_grad=rescale_grad, lower_bound=lower_bound,
                                    upper_bound=upper_bound, clip_gradient=clip_gradient,
                                    bias_correction=bias_correction)


def _multi_mp_lamb_update(*data, learning_rates=None, wds=None, step_count=None, beta1=0.9,
                          beta2=0.999, epsilon=1e-6, rescale_grad=1.0, lower_bound=-1.0,
                          upper_bound=-1.0, clip_gradient=-1.0, bias_correction=True,
                          num_tensors=1, out=None, name=None):
    """MXNet's ``_multi_mp_lamb_update``: ``data`` is ``weight_0, grad_0, mean_0, var_0,
    weight32_0, weight_1, ...``."""
    op = "_multi_mp_lamb_update"
    _required(op, learning_rates=learning_rates, wds=wds, step_count=step_count)
    w, g, m, v, w32 = _split(op, data, 5, num_tensors, "num_tensors")
    return _ops().multi_mp_lamb_update(w, g, m, v, w32, step_count, learning_rates, wds,
                                       out=out, beta1=beta1, beta2=beta2, epsilon=epsilon,
                                       rescale_grad=rescale_grad, lower_bound=lower_bound,
                                       upper_bound=upper_bound, clip_gradient=clip_gradient,
                                       bias_correction=bias_correction)


# --------------------------------------------------------------------- scatter operators
# On a sparse left operand only its stored values are computed (the result keeps its storage
# type and its stored positions: adding 2 does not fill the missing zeros); otherwise they
# are the ordinary operators.
def _is_sparse(x):
    return getattr(x, "stype", "default") != "default"


def _scatter_scalar(opname, sign):
    def op(data=None, scalar=1.0, is_int=True, out=None, name=None):
        from . import _internal, sparse
        if not _is_sparse(data):
            dense = _internal._plus_scalar if sign > 0 else _internal._minus_scalar
            return dense(data, scalar=scalar, is_int=is_int, out=out)
        s = int(scalar) if is_int and float(scalar).is_integer() else float(scalar)
        res = sparse._unary_sparse(lambda t: t + sign * s, data)
        if out is not None:
            out[:] = res
            return out
        return res
    op.__name__ = op.__qualname__ = opname
    op.__doc__ = (f"MXNet's ``{opname}``: ``data {'+' if sign > 0 else '-'} scalar``; on a "
                  "row_sparse or csr ``data`` only the stored values change (the result keeps "
                  "the storage type), otherwise as ``_plus_scalar``/``_minus_scalar``.")
    return op


_scatter_plus_scalar = _scatter_scalar("_scatter_plus_scalar", 1)
_scatter_minus_scalar = _scatter_scalar("_scatter_minus_scalar", -1)


def _scatter_elemwise_div(lhs=None, rhs=None, out=None, name=None):
    """MXNet's ``_scatter_elemwise_div``: ``lhs / rhs``; a row_sparse ``lhs`` gives a
    row_sparse result over its own rows (the rows it does not store stay zero, also where
    ``rhs`` is 0), every other combination the dense ``elemwise_div``."""
    from . import sparse
    from .. import ndarray as _nd
    if getattr(lhs, "stype", "default") != "row_sparse":
        return _assign_out(_nd.elemwise_div(_dense(lhs), _dense(rhs)), out)
    rows = lhs._aux[0]
    divisor = _dense(rhs)._t.index_select(0, rows)
    res = lhs._with(sparse._grad_guard(torch.div, lhs._sdata, divisor), lhs._aux, lhs._ctx)
    if out is not None:
        out[:] = res
        return out
    return res


def _dense(x):
    return x.tostype("default") if _is_sparse(x) else x


def _scatter_set_nd(lhs=None, rhs=None, indices=None, shape=None, out=None, name=None):
    """MXNet's ``_scatter_set_nd``: ``scatter_nd`` that keeps the elements ``indices`` does
    not name. It writes in place: ``out`` must be given and be ``lhs`` (as in MXNet).

    Parameters
    ----------
    lhs : NDArray
        The array written into (and returned).
    rhs : NDArray
        The values, one per index column.
    indices : NDArray
        ``(M, N)``: column ``j`` indexes the first ``M`` axes of ``lhs`` for ``rhs[j]``.
    shape : tuple
        The shape of ``lhs`` (required).
    """
    op = "_scatter_set_nd"
    _required(op, shape=shape)
    if out is None or out is not lhs:
        raise MXNetError(f"{op} writes into its input: out must be given and be lhs "
                         "(MXNet checks that both are the same memory)")
    if tuple(lhs.shape) != tuple(shape):
        raise MXNetError(f"{op}: shape {tuple(shape)} is not lhs's shape {tuple(lhs.shape)}")
    idx = indices._t.long() if isinstance(indices, NDArray) else torch.as_tensor(indices).long()
    if idx.dim() == 1:
        idx = idx.reshape(-1, 1)
    m = idx.shape[0]
    if m > len(shape):
        raise MXNetError(f"{op}: indices index {m} axes of a {len(shape)}-D array")
    t = lhs._t
    values = rhs._t.detach().to(t.dtype) if isinstance(rhs, NDArray) else \
        torch.as_tensor(rhs, dtype=t.dtype)
    with torch.no_grad():
        t.index_put_(tuple(idx[k].to(t.device) for k in range(m)),
                     values.to(t.device).reshape((idx.shape[1],) + tuple(shape[m:])))
    return lhs


# ---------------------------------------------------------------------------- imdecode
def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """Decode an image into a ``(channels, h, w)`` float32 array (MXNet 1.x's deprecated
    ``nd.imdecode``; ``mx.image.imdecode`` is the one to use).

    Unlike ``mx.image.imdecode`` the channels keep OpenCV's order (BGR) and the layout is
    channel-first, as MXNet's operator wrote them. In MXNet 1.9.1 on Python 3 this function
    fails on every call (the placeholder ``mean`` has an unknown shape, and the bytes reach
    the decoder as their ``str()``); neogluon does what the operator is documented to do.

    Parameters
    ----------
    str_img : bytes
        The encoded image.
    clip_rect : (x0, y0, x1, y1)
        Keep only this rectangle; ``y0 == y1`` keeps the whole image.
    out : NDArray, optional
        ``(channels, h, w)``, or ``(n, channels, h, w)`` written at ``index``.
    index : int
    channels : int
        3 (colour) or 1 (gray).
    mean : NDArray, optional
        ``(channels, h, w)``, subtracted.
    """
    return _imdecode(mean, index, *clip_rect, channels, len(str_img), str_img=str_img, out=out)


def _imdecode(mean=None, index=0, x0=0, y0=0, x1=0, y1=0, c=3, size=None, str_img=None,
              out=None, name=None):
    """MXNet's ``_imdecode`` operator behind :func:`imdecode` (same order of arguments)."""
    from ..image.image import _decode
    op = "_imdecode"
    if str_img is None:
        raise MXNetError(f"{op}: str_img (the encoded image) is required")
    buf = str_img.encode("latin-1") if isinstance(str_img, str) else bytes(str_img)
    if size is not None:
        buf = buf[:int(size)]
    c = int(c)
    if c not in (1, 3):
        raise MXNetError(f"{op}: c (channels) must be 1 or 3, got {c}")
    img = _decode(buf, 0 if c == 1 else 1, op)
    img = img.reshape(img.shape[0], img.shape[1], -1)
    if c == 3:
        img = img[:, :, ::-1]   # OpenCV's order, as the operator leaves it
    rows, cols = img.shape[:2]
    x0, y0, x1, y1 = (int(v) for v in (x0, y0, x1, y1))
    if y1 - y0 == 0:
        x0, y0, x1, y1 = 0, 0, cols, rows
    if not (0 <= x0 < x1 <= cols and 0 <= y0 < y1 <= rows):
        raise MXNetError(f"{op}: clip_rect ({x0}, {y0}, {x1}, {y1}) is not inside the "
                         f"{cols}x{rows} image")
    chw = np.ascontiguousarray(img[y0:y1, x0:x1].transpose(2, 0, 1))
    dtype = np.float32 if mean is None else mean.dtype
    res = chw.astype(dtype)
    if mean is not None:
        if tuple(mean.shape) != res.shape:
            raise MXNetError(f"{op}: mean has shape {tuple(mean.shape)}, the image "
                             f"{res.shape}")
        res = res - mean.asnumpy()
    if out is None:
        from .. import ndarray as _nd
        return _nd.array(res, dtype=dtype)
    if out.ndim == 3:
        target = out
    elif out.ndim == 4:
        target = out[int(index)]
    else:
        raise MXNetError(f"{op}: out must be 3-D (c, h, w) or 4-D (n, c, h, w), got shape "
                         f"{tuple(out.shape)}")
    if tuple(target.shape) != res.shape:
        raise MXNetError(f"{op}: out{'[index]' if out.ndim == 4 else ''} has shape "
                         f"{tuple(target.shape)}, the image {res.shape}")
    target[:] = res
    return out


# ------------------------------------------------------------------ fused self-attention
def _selfatt_float(op, quantized, enable_float_output, min_calib_range, max_calib_range):
    if quantized:
        raise MXNetError(f"{op}(quantized=True): the int8 oneDNN kernel of quantized BERT "
                         "graphs is not provided; the float node (quantized=False) computes "
                         "contrib.interleaved_matmul_selfatt_*")


def _sg_mkldnn_selfatt_qk(queries_keys_values=None, heads=None, quantized=False,
                          enable_float_output=False, min_calib_range=None,
                          max_calib_range=None, out=None, name=None):
    """oneDNN's fused node for ``contrib.interleaved_matmul_selfatt_qk`` (MXNet's subgraph
    pass makes it): the same scaled ``Q Kᵀ`` per head on the float path."""
    op = "_sg_mkldnn_selfatt_qk"
    _required(op, heads=heads)
    _selfatt_float(op, quantized, enable_float_output, min_calib_range, max_calib_range)
    from . import contrib
    return contrib.interleaved_matmul_selfatt_qk(queries_keys_values, heads=heads, out=out)


def _sg_mkldnn_selfatt_valatt(queries_keys_values=None, attention=None, heads=None,
                              quantized=False, enable_float_output=False,
                              min_calib_range=None, max_calib_range=None, out=None,
                              name=None):
    """oneDNN's fused node for ``contrib.interleaved_matmul_selfatt_valatt``: the attention
    maps applied to the values per head, on the float path."""
    op = "_sg_mkldnn_selfatt_valatt"
    _required(op, heads=heads)
    _selfatt_float(op, quantized, enable_float_output, min_calib_range, max_calib_range)
    from . import contrib
    return contrib.interleaved_matmul_selfatt_valatt(queries_keys_values, attention,
                                                     heads=heads, out=out)


# ------------------------------------------------------------------------ control flow
def _control_flow(opname, public):
    def op(*data, **kwargs):
        raise MXNetError(f"{opname} is the graph node MXNet records for contrib.{public}, "
                         f"holding its body as a subgraph; it cannot be called on arrays. "
                         f"Call mx.nd.contrib.{public} (or mx.sym.contrib.{public}) instead")
    op.__name__ = op.__qualname__ = opname
    op.__doc__ = (f"MXNet's ``{opname}`` graph node: not callable on arrays (MXNetError); "
                  f"use ``nd.contrib.{public}``.")
    return op


_foreach = _control_flow("_foreach", "foreach")
_while_loop = _control_flow("_while_loop", "while_loop")
_cond = _control_flow("_cond", "cond")
