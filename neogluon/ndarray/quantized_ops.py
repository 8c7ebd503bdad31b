"""MXNet 1.9.1's unfused quantized operators (``nd.contrib.quantize``, ``quantize_asym``,
``quantized_conv``, ``quantized_fully_connected``, ``quantized_act``,
``quantized_batch_norm``, ``quantized_elemwise_add``, ``quantized_elemwise_mul``,
``quantized_embedding``, ``quantized_rnn``), as its CPU build (oneDNN) computes them.

They work on int8/uint8 codes with a float range ``(min, max)`` of shape ``(1,)`` each, and
return the codes (or int32 sums) and their range. The shared helpers (rounding, saturation,
zero gradients, the non-VNNI int16 saturation of oneDNN's u8 x s8 kernels) live in
:mod:`neogluon.ndarray.quantization`. The float steps follow MXNet's float32 order of
operations. Notable MXNet behaviours kept:

- ``quantize`` scales by ``127 / max(|min|, |max|)`` (int8, range out ``(-r, r)``) or
  ``255 / r`` (uint8, range out as given), rounding half to even (oneDNN's reorder); the
  default ``out_type`` is uint8.
- ``quantized_conv`` takes uint8 data only, adds the int8 bias codes as they are (no
  rescale), and reports the int8 x int8 range; ``quantized_fully_connected`` rescales the
  bias to ``data_scale * weight_scale`` and truncates it to int32.
- ``quantized_act`` is ReLU only and always returns int8: uint8 codes are read back as int8.
- ``quantized_batch_norm`` needs a calibrated output range and ignores ``fix_gamma``.
- ``quantized_elemwise_mul`` truncates its int8 results (keeping the low byte on overflow);
  on MXNet 1.9.1 its ``nd`` form fails (an imperative shape-check bug; the symbol form works),
  here both work.
- ``quantized_rnn``: MXNet 1.9.1's CPU build refuses every mode but LSTM, and its LSTM
  kernel fails at run time on this build (oneDNN: 'could not create a primitive descriptor
  for a reorder primitive'); both are errors here too.
- ``quantize_asym`` crashes MXNet 1.9.1 (a segmentation fault, with and without oneDNN);
  this computes what its source describes: ``uint8(x * scale + shift + 0.5)`` with
  ``scale = 255 / (max - min)``, ``shift = 255 - max * scale`` (saturated to [0, 255]).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..base import MXNetError
from .ndarray import NDArray, _new
from . import quantization as _q

__all__ = ["quantize", "quantize_asym", "quantized_act", "quantized_batch_norm",
           "quantized_conv", "quantized_fully_connected", "quantized_elemwise_add",
           "quantized_elemwise_mul", "quantized_embedding", "quantized_rnn"]

_F32 = np.float32
_INT8_RANGE = _F32(127.5)      # kInt8Range
_UINT8_RANGE = _F32(255.5)     # kUint8Range
_INT32_RANGE = _F32(2147483647.0)   # kInt32Range (size_t 0x7fffffff as a float: 2**31)


def _dt(t):
    return str(t.dtype).replace("torch.", "")


def _meta(*ts):
    return any(t.device.type == "meta" for t in ts)


def _meta_out(shape, dtype, ctx, n=3):
    r = _new(torch.empty(tuple(shape), dtype=dtype, device="meta"), ctx)
    return [r] + [_q._meta_range(ctx) for _ in range(n - 1)] if n > 1 else r


def _range_mult(min_a, max_a, min_b, max_b, b_signed=True):
    """MXNet's QuantizationRangeForMultiplication into int32 (s8 x s8, or s8 x u8 when
    ``b_signed`` is False): ``(-m, m)``."""
    a_lvl = _F32(_q._max_abs(min_a, max_a) / _F32(127))
    b_lvl = _F32(_q._max_abs(min_b, max_b) / (_F32(127) if b_signed else _F32(255)))
    m = _F32(_F32(a_lvl * b_lvl) * _INT32_RANGE)
    return -m, m


def _to_int32(v):
    """float -> int32 as oneDNN writes s32 outputs: round half to even, saturate."""
    r = torch.nan_to_num(torch.round(v.to(torch.float64)), nan=0.0)
    return r.clamp_(-2147483648.0, 2147483647.0).to(torch.int32)


def _trunc_wrap_int8(v):
    """float -> int8 as C's ``static_cast<int8_t>``: truncate, keep the low byte."""
    i = torch.nan_to_num(v.to(torch.float64), nan=0.0).trunc()
    i = i.clamp_(-2147483648.0, 2147483647.0).to(torch.int64)
    return (i & 0xFF).to(torch.uint8).view(torch.int8)


# ------------------------------------------------------------------------------ quantize
def quantize(data, min_range, max_range, out_type="uint8", out=None, name=None):
    """float32 ``data`` to int8/uint8 codes for the range ``[min_range, max_range]``, as MXNet
    1.9.1's CPU ``quantize`` (oneDNN): ``rint(x * 255 / r)`` for uint8 (range out as given)
    or ``rint(x * 127 / r)`` for int8 (range out ``(-r, r)``), ``r = max(|min|, |max|)``,
    saturated. Returns ``[codes, min, max]``."""
    op = "quantize"
    if out_type not in ("int8", "uint8"):
        raise MXNetError(f"{op}: out_type {out_type!r} is not one of 'int8', 'uint8'")
    x = _q._t(data, op)
    if not _meta(x) and (x.dtype != torch.float32):
        raise MXNetError(f"{op}: data must be float32, got {_dt(x)}")
    signed = out_type == "int8"
    qt = torch.int8 if signed else torch.uint8
    ctx = data._ctx
    mn = _q._scalar(min_range, op, "min_range")
    mx = _q._scalar(max_range, op, "max_range")
    if _meta(x) or mn is None or mx is None:
        return _q._assign_outs(_meta_out(x.shape, qt, ctx), out)
    r = _q._max_abs(mn, mx)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = _F32(_F32(127 if signed else 255) / r)
    with torch.no_grad():
        codes = _q._codes(x * float(scale), signed)
    omin, omax = (-r, r) if signed else (mn, mx)
    return _q._assign_outs(_q._outputs(op, codes, omin, omax, [data, min_range, max_range],
                                       ctx), out)


def quantize_asym(data, min_calib_range=None, max_calib_range=None, out=None, name=None):
    """Asymmetric quantization to uint8: ``uint8(x * scale + shift + 0.5)`` with
    ``scale = 255 / (max - min)`` and ``shift = 255 - max * scale``, ``(min, max)`` the
    calibrated range or else the data's own (saturated to [0, 255]). int8 data becomes
    ``q + 128`` (scale 1, shift 128), uint8 data passes (scale 1, shift 0). Returns
    ``[codes, scale, shift]``. (MXNet 1.9.1 itself crashes on this operator.)"""
    op = "quantize_asym"
    x = _q._t(data, op)
    ctx = data._ctx
    if not _meta(x) and (x.dtype not in (torch.float32, torch.int8, torch.uint8)):
        raise MXNetError(f"{op}: data must be float32, int8 or uint8, got {_dt(x)}")
    if _meta(x):
        return _q._assign_outs(_meta_out(x.shape, torch.uint8, ctx), out)
    with torch.no_grad():
        if x.dtype == torch.uint8:
            q, scale, shift = x.clone(), _F32(1), _F32(0)
        elif x.dtype == torch.int8:
            q, scale, shift = (x.to(torch.int16) + 128).to(torch.uint8), _F32(1), _F32(128)
        else:
            if min_calib_range is not None and max_calib_range is not None:
                lo, hi = _F32(float(min_calib_range)), _F32(float(max_calib_range))
            elif x.numel():
                lo, hi = _F32(x.min().item()), _F32(x.max().item())
            else:
                lo, hi = _F32(0), _F32(0)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                scale = _F32(_F32(255) / _F32(hi - lo))
                shift = _F32(_F32(255) - _F32(hi * scale))
            v = (x * float(scale) + float(shift)).to(torch.float64) + 0.5
            v = torch.nan_to_num(v, nan=0.0).trunc().clamp_(0.0, 255.0)
            q = v.to(torch.uint8)
    return _q._assign_outs(_q._outputs(op, q, scale, shift, [data], ctx), out)


# ------------------------------------------------------------------------------ act
def quantized_act(data, min_data, max_data, act_type=None, out=None, name=None):
    """ReLU of int8/uint8 codes (the only activation MXNet 1.9.1 quantizes); the output is
    int8 (uint8 codes are read back as int8, as MXNet does) and the range passes through."""
    op = "_contrib_quantized_act"
    if act_type is None:
        raise MXNetError(f"{op}: act_type is required")
    if act_type not in ("relu", "sigmoid", "softrelu", "softsign", "tanh"):
        raise MXNetError(f"{op}: act_type {act_type!r} is not one of 'relu', 'sigmoid', "
                         "'softrelu', 'softsign', 'tanh'")
    if act_type != "relu":
        raise MXNetError(f"{op} only supports act_type=relu for now")
    x = _q._t(data, op)
    if not _meta(x) and (x.dtype not in _q._QTYPES):
        raise MXNetError(f"{op} op only supports uint8 and int8 as input type, got {_dt(x)}")
    ctx = data._ctx
    mn = _q._scalar(min_data, op, "min_data")
    mx = _q._scalar(max_data, op, "max_data")
    if _meta(x) or mn is None or mx is None:
        return _q._assign_outs(_meta_out(x.shape, torch.int8, ctx), out)
    with torch.no_grad():
        r = x.clamp_min(0) if x.dtype == torch.int8 else x.clone().view(torch.int8)
    return _q._assign_outs(_q._outputs(op, r, mn, mx, [data, min_data, max_data], ctx), out)


# ------------------------------------------------------------------------------ batch norm
def quantized_batch_norm(data, gamma, beta, moving_mean, moving_var, min_data, max_data,
                         eps=1e-3, momentum=0.9, fix_gamma=True, use_global_stats=False,
                         output_mean_var=False, axis=1, cudnn_off=False, min_calib_range=None,
                         max_calib_range=None, out=None, name=None):
    """Inference BatchNorm on int8 codes to int8 codes for the calibrated output range
    ``[min_calib_range, max_calib_range]`` (required), as MXNet 1.9.1's oneDNN kernel:
    per channel ``w = gamma / sqrt(var + eps) * r_in / r_out`` and
    ``b = (beta - mean * gamma / sqrt(var + eps)) * 127.5 / r_out``, then
    ``rint(w * q / sqrt(1 + eps) + b)`` saturated. ``fix_gamma`` is ignored, as in MXNet;
    uint8 data is first rescaled to int8 (``rint(q * 127.5 / 255.5)``)."""
    op = "_contrib_quantized_batch_norm"
    x = _q._t(data, op)
    if not _meta(x) and (x.dtype not in _q._QTYPES):
        raise MXNetError(f"{op}: data must be int8 or uint8, got {_dt(x)}")
    params = {k: _q._t(v, op, k) for k, v in (("gamma", gamma), ("beta", beta),
                                              ("moving_mean", moving_mean),
                                              ("moving_var", moving_var))}
    ax = int(axis)
    ax = ax + x.dim() if ax < 0 else ax
    if not 0 <= ax < max(x.dim(), 1):
        raise MXNetError(f"{op}: axis {axis} is out of range for {x.dim()}-D data")
    C = x.shape[ax]
    for k, t in params.items():
        if tuple(t.shape) != (C,):
            raise MXNetError(f"{op}: {k} must have shape ({C},), got {tuple(t.shape)}")
    if min_calib_range is None or max_calib_range is None:
        raise MXNetError(f"{op}: min_calib_range or max_calib_range is not available. "
                         "Quantized BN currently don't support calib_mode=None")
    ctx = data._ctx
    mn = _q._scalar(min_data, op, "min_data")
    mx = _q._scalar(max_data, op, "max_data")
    if _meta(x, *params.values()) or mn is None or mx is None:
        return _q._assign_outs(_meta_out(x.shape, torch.int8, ctx), out)
    omin, omax = _F32(float(min_calib_range)), _F32(float(max_calib_range))
    with torch.no_grad():
        r_in = _q._max_abs(mn, mx)
        r_out = _q._max_abs(omin, omax)
        g = params["gamma"].to(torch.float32)
        var = params["moving_var"].to(torch.float32)
        invstd = (1.0 / torch.sqrt(var.to(torch.float64) + float(eps))).to(torch.float32)
        w = g * invstd * float(r_in) / float(r_out)
        b = (params["beta"].to(torch.float32) - params["moving_mean"].to(torch.float32) *
             g * invstd) * float(_INT8_RANGE) / float(r_out)
        if x.dtype == torch.uint8:
            xs = _q._codes(x.to(torch.float32) * float(_F32(_INT8_RANGE / _UINT8_RANGE)), True)
        else:
            xs = x
        shape = [1] * x.dim()
        shape[ax] = C
        norm = _F32(1.0 / np.sqrt(np.float64(1.0) + np.float64(_F32(eps))))
        v = xs.to(torch.float32) * float(norm) * w.reshape(shape) + b.reshape(shape)
        r = _q._codes(v, True)
    ins = [data, gamma, beta, moving_mean, moving_var, min_data, max_data]
    return _q._assign_outs(_q._outputs(op, r, omin, omax, ins, ctx), out)


# ------------------------------------------------------------------------------ conv & fc
_CONV_NAMES = ["data", "weight", "bias", "min_data", "max_data", "min_weight", "max_weight",
               "min_bias", "max_bias"]


def _named_inputs(op, given, no_bias):
    """The operator's inputs by name: the arrays given, in order (a call without bias passes
    six arrays, positionally or by name)."""
    names = [n for n in _CONV_NAMES if not (no_bias and "bias" in n)]
    arrays = [a for a in given if a is not None]
    if len(arrays) != len(names):
        raise MXNetError(f"{op}: expects {len(names)} inputs ({', '.join(names)}), got "
                         f"{len(arrays)}")
    return dict(zip(names, arrays))


def quantized_conv(data=None, weight=None, bias=None, min_data=None, max_data=None,
                   min_weight=None, max_weight=None, min_bias=None, max_bias=None, kernel=(),
                   stride=(), dilate=(), pad=(), num_filter=None, num_group=1, workspace=1024,
                   no_bias=False, cudnn_tune=None, cudnn_off=False, layout=None, out=None,
                   name=None):
    """Convolution of uint8 data codes with int8 weight codes into int32 sums, as MXNet
    1.9.1's oneDNN ``quantized_conv``: the int8 bias codes are added as they are, and the
    range is MXNet's int8 x int8 one, ``max|data| / 127 * max|weight| / 127 * 2**31``.
    2-D (NCHW) and 3-D (NCDHW) kernels, ``num_group`` 1."""
    op = "_contrib_quantized_conv"
    no_bias = _q._truthy(no_bias)
    arr = _named_inputs(op, [data, weight, bias, min_data, max_data, min_weight, max_weight,
                             min_bias, max_bias], no_bias)
    ts = {k: _q._t(v, op, k) for k, v in arr.items()}
    x, w = ts["data"], ts["weight"]
    if int(num_group or 1) != 1:
        raise MXNetError(f"{op}: quantized_conv only supports num_group=1 for now")
    if layout not in (None, "None", "NCHW", "NCDHW"):
        raise MXNetError(f"{op}: mkldnn quantized_conv now supports NCHW or NCDHW for now, got "
                         f"layout {layout!r}")
    k = tuple(int(v) for v in ((kernel,) if isinstance(kernel, int) else kernel))
    if len(k) not in (2, 3):
        raise MXNetError(f"{op}: mkldnn quantized_conv only supports 2d or 3d kernel for now, "
                         f"got kernel {k}")
    nd_ = len(k)
    if x.dim() != nd_ + 2:
        raise MXNetError(f"{op}: mkldnn quantized_conv only supports 4d or 5d layout for now; "
                         f"data of shape {tuple(x.shape)} does not fit kernel {k}")
    if num_filter is None:
        raise MXNetError(f"{op}: num_filter is required")
    nf = int(num_filter)
    s = _q._pair(stride, nd_, 1)
    p = _q._pair(pad, nd_, 0)
    d = _q._pair(dilate, nd_, 1)
    wshape = (nf, x.shape[1]) + k
    if tuple(w.shape) != wshape:
        raise MXNetError(f"{op}: weight must have shape {wshape}, got {tuple(w.shape)}")
    if not no_bias and tuple(ts["bias"].shape) != (nf,):
        raise MXNetError(f"{op}: bias must have shape ({nf},), got {tuple(ts['bias'].shape)}")
    if not _meta(w) and (w.dtype != torch.int8 or
                         (not no_bias and ts["bias"].dtype != torch.int8)):
        raise MXNetError(f"{op}: weight and bias must be int8, got {_dt(w)}" +
                         ("" if no_bias else f" and {_dt(ts['bias'])}"))
    if not _meta(x) and (x.dtype != torch.uint8):
        raise MXNetError(f"{op}: mkldnn_quantized_conv op only supports uint8 as input type, "
                         f"got {_dt(x)}")
    oshape = [x.shape[0], nf]
    for i in range(nd_):
        span = x.shape[2 + i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)
        if span < 0:
            raise MXNetError(f"{op}: kernel {k} (dilate {d}, pad {p}) is larger than the "
                             f"data's spatial shape {tuple(x.shape[2:])}")
        oshape.append(span // s[i] + 1)
    ctx = arr["data"]._ctx
    rng = [_q._scalar(arr[n], op, n) for n in ("min_data", "max_data", "min_weight",
                                                "max_weight")]
    if _meta(x, w) or any(v is None for v in rng):
        return _q._assign_outs(_meta_out(oshape, torch.int32, ctx), out)
    with torch.no_grad():
        xq, wq = x.to(torch.float64), w.to(torch.float64)
        conv = F.conv2d if nd_ == 2 else F.conv3d
        acc = conv(xq, wq, None, s, p, d, 1)
        if nd_ == 2 and _q.int8_isa() != "vnni":
            acc = _q._saturation_fix(acc, xq, wq, s, p, d, 1)
        if not no_bias:
            acc = acc + ts["bias"].to(torch.float64).reshape((1, -1) + (1,) * nd_)
        r = _to_int32(acc)
    omin, omax = _range_mult(*rng)
    return _q._assign_outs(_q._outputs(op, r, omin, omax, list(arr.values()), ctx), out)


def quantized_fully_connected(data=None, weight=None, bias=None, min_data=None, max_data=None,
                              min_weight=None, max_weight=None, min_bias=None, max_bias=None,
                              num_hidden=None, no_bias=False, flatten=True, out=None,
                              name=None):
    """FullyConnected of int8/uint8 data codes with int8 weight codes into int32 sums, as
    MXNet 1.9.1's oneDNN ``quantized_fully_connected``: the int8 bias is rescaled to
    ``data_scale * weight_scale`` (scales ``127.5 / r``, ``255.5 / r`` for uint8 data) and
    truncated to int32; the range is MXNet's int8 x int8 (or x uint8) one."""
    op = "_contrib_quantized_fully_connected"
    no_bias = _q._truthy(no_bias)
    arr = _named_inputs(op, [data, weight, bias, min_data, max_data, min_weight, max_weight,
                             min_bias, max_bias], no_bias)
    ts = {k: _q._t(v, op, k) for k, v in arr.items()}
    x, w = ts["data"], ts["weight"]
    if num_hidden is None:
        raise MXNetError(f"{op}: num_hidden is required")
    nh = int(num_hidden)
    if not _meta(x) and (x.dtype not in _q._QTYPES):
        raise MXNetError(f"{op}: data must be int8 or uint8, got {_dt(x)}")
    if not _meta(w) and (w.dtype != torch.int8 or
                         (not no_bias and ts["bias"].dtype != torch.int8)):
        raise MXNetError(f"{op}: weight and bias must be int8, got {_dt(w)}" +
                         ("" if no_bias else f" and {_dt(ts['bias'])}"))
    if x.dim() < 1:
        raise MXNetError(f"{op}: data must have at least one axis")
    xf = x.reshape(x.shape[0], -1) if _q._truthy(flatten) else x
    if tuple(w.shape) != (nh, xf.shape[-1]):
        raise MXNetError(f"{op}: weight must have shape {(nh, xf.shape[-1])} for data of shape "
                         f"{tuple(x.shape)}, got {tuple(w.shape)}")
    if not no_bias and tuple(ts["bias"].shape) != (nh,):
        raise MXNetError(f"{op}: bias must have shape ({nh},), got {tuple(ts['bias'].shape)}")
    ctx = arr["data"]._ctx
    oshape = tuple(xf.shape[:-1]) + (nh,)
    names = ["min_data", "max_data", "min_weight", "max_weight"] + \
        ([] if no_bias else ["min_bias", "max_bias"])
    rng = {n: _q._scalar(arr[n], op, n) for n in names}
    if _meta(x, w) or any(v is None for v in rng.values()):
        return _q._assign_outs(_meta_out(oshape, torch.int32, ctx), out)
    signed = x.dtype == torch.int8
    with torch.no_grad():
        acc = xf.to(torch.float64) @ w.to(torch.float64).t()
        if not no_bias:
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                dsc = _F32((_INT8_RANGE if signed else _UINT8_RANGE) /
                           _q._max_abs(rng["min_data"], rng["max_data"]))
                wsc = _F32(_INT8_RANGE / _q._max_abs(rng["min_weight"], rng["max_weight"]))
                resc = _F32(_F32(_F32(dsc * wsc) * _q._max_abs(rng["min_bias"],
                                                              rng["max_bias"])) / _INT8_RANGE)
            bq = (ts["bias"].to(torch.float32) * float(resc)).to(torch.float64)
            bq = torch.nan_to_num(bq, nan=0.0).trunc().clamp_(-2147483648.0, 2147483647.0)
            acc = acc + bq
        r = _to_int32(acc)
    omin, omax = _range_mult(rng["min_weight"], rng["max_weight"], rng["min_data"],
                             rng["max_data"], b_signed=signed)
    return _q._assign_outs(_q._outputs(op, r, omin, omax, list(arr.values()), ctx), out)


# ------------------------------------------------------------------------------ elementwise
def _pair_inputs(op, lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max):
    a, b = _q._t(lhs, op, "lhs"), _q._t(rhs, op, "rhs")
    if tuple(a.shape) != tuple(b.shape):
        raise MXNetError(f"{op}: lhs and rhs must have the same shape (no broadcasting), got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    rng = [_q._scalar(v, op, n) for v, n in ((lhs_min, "lhs_min"), (lhs_max, "lhs_max"),
                                             (rhs_min, "rhs_min"), (rhs_max, "rhs_max"))]
    return a, b, rng


def quantized_elemwise_add(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, min_calib_range=None,
                           max_calib_range=None, out=None, name=None):
    """Sum of two int8/uint8 code arrays, as MXNet 1.9.1's oneDNN kernel: each is scaled to
    the output (int32 for the range ``+-(r_lhs + r_rhs)``, or int8/uint8 codes for the
    calibrated range) and the float32 sum rounded half to even and saturated. With one int8
    and one uint8 input, the uint8 one is first rescaled into int8 codes (saturating), and
    a calibrated output is int8."""
    op = "_contrib_quantized_elemwise_add"
    a, b, rng = _pair_inputs(op, lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max)
    for t, n in ((a, "lhs"), (b, "rhs")):
        if not _meta(t) and (t.dtype not in _q._QTYPES):
            raise MXNetError(f"{op}: {n} must be int8 or uint8, got {_dt(t)}")
    calib = min_calib_range is not None and max_calib_range is not None
    a8, b8 = a.dtype == torch.int8, b.dtype == torch.int8
    if calib:
        otype = a.dtype if a.dtype == b.dtype else torch.int8
    else:
        otype = torch.int32
    ctx = lhs._ctx
    if _meta(a, b) or any(v is None for v in rng):
        return _q._assign_outs(_meta_out(a.shape, otype, ctx), out)
    amin, amax, bmin, bmax = rng
    ra, rb = _q._max_abs(amin, amax), _q._max_abs(bmin, bmax)
    a_rng = _INT8_RANGE if a8 else _UINT8_RANGE
    b_rng = _INT8_RANGE if b8 else _UINT8_RANGE
    out_rng = {torch.int8: _INT8_RANGE, torch.uint8: _UINT8_RANGE}.get(otype, _INT32_RANGE)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        a_sc, b_sc = _F32(a_rng / ra), _F32(b_rng / rb)
        if calib:
            omin, omax = _F32(float(min_calib_range)), _F32(float(max_calib_range))
            o_sc = _F32(out_rng / _q._max_abs(omin, omax))
        else:
            omax = _F32(ra + rb)
            omin = -omax
        tot = _F32(ra + rb)
        s0 = s1 = _F32(1)
        reorder = None
        if a.dtype != b.dtype:
            if calib:
                if a8:
                    reorder, s0 = _F32(o_sc / b_sc), _F32(o_sc / a_sc)
                else:
                    reorder, s1 = _F32(o_sc / a_sc), _F32(o_sc / b_sc)
            else:
                if a8:
                    reorder = _F32(_F32(rb * out_rng) / _F32(tot * _UINT8_RANGE))
                    s0 = _F32(_F32(ra * out_rng) / _F32(tot * a_rng))
                else:
                    reorder = _F32(_F32(ra * out_rng) / _F32(tot * a_rng))
                    s1 = _F32(_F32(rb * out_rng) / _F32(tot * _INT8_RANGE))
        elif calib:
            s0, s1 = _F32(o_sc / a_sc), _F32(o_sc / b_sc)
        else:
            s0 = _F32(_F32(ra * out_rng) / _F32(tot * a_rng))
            s1 = _F32(_F32(rb * out_rng) / _F32(tot * a_rng))
    with torch.no_grad():
        av, bv = a.to(torch.float32), b.to(torch.float32)
        if reorder is not None:   # the uint8 input, rescaled into int8 codes
            if a8:
                bv = _q._codes(bv * float(reorder), True).to(torch.float32)
            else:
                av = _q._codes(av * float(reorder), True).to(torch.float32)
        v = av * float(s0) + bv * float(s1)
        if otype == torch.int32:
            r = _to_int32(v)
        else:
            r = _q._codes(v, otype == torch.int8)
    ins = [lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max]
    return _q._assign_outs(_q._outputs(op, r, omin, omax, ins, ctx), out)


def quantized_elemwise_mul(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, min_calib_range=None,
                           max_calib_range=None, enable_float_output=False, out=None,
                           name=None):
    """Product of two int8 code arrays, as MXNet 1.9.1's CPU kernel: int32 products with
    MXNet's int8 x int8 range; with a calibrated range, int8 codes
    ``int8(qa * qb * scale)`` (truncated, the low byte kept on overflow); with
    ``enable_float_output`` the float32 products (one output)."""
    op = "_contrib_quantized_elemwise_mul"
    a, b, rng = _pair_inputs(op, lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max)
    for t, n in ((a, "lhs"), (b, "rhs")):
        if not _meta(t) and (t.dtype != torch.int8):
            raise MXNetError(f"{op}: currently, quantized elemwise mul only support int8 "
                             f"inputs; {n} is {_dt(t)}")
    float_out = _q._truthy(enable_float_output)
    calib = min_calib_range is not None and max_calib_range is not None
    ctx = lhs._ctx
    ins = [lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max]
    if _meta(a, b) or any(v is None for v in rng):
        if float_out:
            return _q._assign_outs(_meta_out(a.shape, torch.float32, ctx, n=1), out)
        return _q._assign_outs(_meta_out(a.shape, torch.int8 if calib else torch.int32, ctx),
                               out)
    amin, amax, bmin, bmax = rng
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        a_sc = _F32(_INT8_RANGE / _q._max_abs(amin, amax))
        b_sc = _F32(_INT8_RANGE / _q._max_abs(bmin, bmax))
    with torch.no_grad():
        prod = a.to(torch.float32) * b.to(torch.float32)     # exact (|q*q| <= 16384)
        if float_out:
            sc = _F32(np.float64(1.0) / np.float64(a_sc) / np.float64(b_sc))
            return _q._assign_outs(_q._link(prod * float(sc), ins, ctx), out)
        if calib:
            omin, omax = _F32(float(min_calib_range)), _F32(float(max_calib_range))
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                o_sc = _F32(_INT8_RANGE / _q._max_abs(omin, omax))
                sc = _F32(_F32(o_sc / a_sc) / b_sc)
            r = _trunc_wrap_int8(prod * float(sc))
        else:
            omin, omax = _range_mult(amin, amax, bmin, bmax)
            r = prod.to(torch.int32)
    return _q._assign_outs(_q._outputs(op, r, omin, omax, ins, ctx), out)


# ------------------------------------------------------------------------------ embedding
def quantized_embedding(data, weight, min_weight, max_weight, input_dim=None, output_dim=None,
                        dtype="float32", sparse_grad=False, out=None, name=None):
    """Rows of the int8 ``weight`` (``(input_dim, output_dim)``) picked by the indices in
    ``data`` (truncated, clipped to ``[0, input_dim - 1]``, as Embedding); the weight's range
    passes through."""
    op = "_contrib_quantized_embedding"
    if input_dim is None or output_dim is None:
        raise MXNetError(f"{op}: input_dim and output_dim are required")
    idx = _q._t(data, op)
    w = _q._t(weight, op, "weight")
    n_in, n_out = int(input_dim), int(output_dim)
    if tuple(w.shape) != (n_in, n_out):
        raise MXNetError(f"{op}: weight must have shape ({n_in}, {n_out}), got "
                         f"{tuple(w.shape)}")
    if not _meta(w) and (w.dtype != torch.int8):
        raise MXNetError(f"{op}: weight must be int8, got {_dt(w)}")
    ctx = data._ctx
    mn = _q._scalar(min_weight, op, "min_weight")
    mx = _q._scalar(max_weight, op, "max_weight")
    oshape = tuple(idx.shape) + (n_out,)
    if _meta(idx, w) or mn is None or mx is None:
        return _q._assign_outs(_meta_out(oshape, torch.int8, ctx), out)
    with torch.no_grad():
        i = idx.to(torch.float64).trunc().clamp_(0, n_in - 1).to(torch.int64)
        r = w[i.reshape(-1)].reshape(oshape)
    return _q._assign_outs(_q._outputs(op, r, mn, mx, [data, weight, min_weight, max_weight],
                                       ctx), out)


# ------------------------------------------------------------------------------ rnn
def quantized_rnn(data, parameters, state, state_cell=None, min_data=None, max_data=None,
                  state_size=None, num_layers=None, bidirectional=False, mode=None, p=0.0,
                  state_outputs=False, projection_size=None, lstm_state_clip_min=None,
                  lstm_state_clip_max=None, lstm_state_clip_nan=False,
                  use_sequence_length=False, out=None, name=None):
    """MXNet 1.9.1's quantized LSTM. Its CPU build refuses the other modes, and its LSTM
    kernel fails on every input with this build ('could not create a primitive descriptor
    for a reorder primitive'); this does the same (shapes infer, running is an error)."""
    op = "_contrib_quantized_rnn"
    if mode not in ("gru", "lstm", "rnn_relu", "rnn_tanh"):
        raise MXNetError(f"{op}: mode {mode!r} is not one of 'gru', 'lstm', 'rnn_relu', "
                         "'rnn_tanh'")
    if mode != "lstm":
        raise MXNetError(f"{op}: Quantized recurrent neural network only supports LSTM "
                         f"operator on CPU (mode={mode!r})")
    if state_size is None or num_layers is None:
        raise MXNetError(f"{op}: state_size and num_layers are required")
    x = _q._t(data, op)
    if x.dim() != 3:
        raise MXNetError(f"{op}: data must be 3-D (seq_len, batch, input_size), got shape "
                         f"{tuple(x.shape)}")
    if x.device.type == "meta":
        dirs = 2 if _q._truthy(bidirectional) else 1
        H = int(projection_size) if projection_size else int(state_size)
        T, N = x.shape[0], x.shape[1]
        outs = [_new(torch.empty((T, N, dirs * H), device="meta"), data._ctx)]
        if _q._truthy(state_outputs):
            L = int(num_layers) * dirs
            outs += [_new(torch.empty((L, N, H), device="meta"), data._ctx),
                     _new(torch.empty((L, N, int(state_size)), device="meta"), data._ctx)]
        return outs if len(outs) > 1 else outs[0]
    raise MXNetError(f"{op}: MXNet 1.9.1's oneDNN quantized LSTM fails on CPU ('could not "
                     "create a primitive descriptor for a reorder primitive'); no quantized "
                     "RNN kernel is provided. Run the float RNN operator instead.")


# ------------------------------------------------------------------------------ symbol shapes
_RANGE_NAMES = ("min_data", "max_data", "min_weight", "max_weight", "min_bias", "max_bias",
                "min_range", "max_range", "lhs_min", "lhs_max", "rhs_min", "rhs_max")


def param_shapes(op, attrs, shapes):
    """Shapes of a node's parameter and range inputs from its data shape (for symbol shape
    inference): ``{input name: shape}``."""
    res = {n: (1,) for n in _RANGE_NAMES}
    d = shapes.get("data")
    if d is None or not len(d):
        return res
    if op == "_contrib_quantized_conv":
        nf = int(attrs.get("num_filter"))
        k = attrs.get("kernel", ())
        k = (int(k),) if isinstance(k, int) else tuple(int(v) for v in k)
        res.update(weight=(nf, d[1]) + k, bias=(nf,))
    elif op == "_contrib_quantized_fully_connected":
        nh = int(attrs.get("num_hidden"))
        fin = int(np.prod(d[1:])) if _q._truthy(attrs.get("flatten", True)) else d[-1]
        res.update(weight=(nh, fin), bias=(nh,))
    elif op == "_contrib_quantized_batch_norm":
        ax = int(attrs.get("axis", 1))
        c = d[ax]
        res.update(gamma=(c,), beta=(c,), moving_mean=(c,), moving_var=(c,))
    elif op == "_contrib_quantized_embedding":
        res.update(weight=(int(attrs.get("input_dim")), int(attrs.get("output_dim"))))
    return res
