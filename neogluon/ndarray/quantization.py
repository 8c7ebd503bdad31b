"""MXNet 1.9.1's quantized (int8) operators, as its CPU build (oneDNN 2.4) computes them.

GluonCV's ``*_int8`` models are graphs of these: ``_contrib_quantize_v2`` turns float data into
int8/uint8 codes, ``_sg_mkldnn_conv`` (a Convolution with its BatchNorm, activation and
residual addition fused, holding the float graph it replaces as a ``subgraphs`` entry) works
on the codes, ``_contrib_quantized_pooling`` / ``_contrib_quantized_concat`` keep them, and
``_contrib_dequantize`` turns them back into floats. Each quantized operator returns three
arrays: the codes and the float range ``(min, max)`` they stand for (shape ``(1,)`` each).

The integer arithmetic is done exactly (codes as float64, whose sums of int8 x uint8 products
are exact), and the float steps follow MXNet's float32 order of operations:

- A range ``r = max(|min|, |max|)`` gives the scale ``127.5 / r`` for int8 and ``255.5 / r``
  for uint8 (MXNet's ``kInt8Range`` / ``kUint8Range``). Codes are ``rint(x * scale)``
  (round half to even) saturated to [-128, 127] or [0, 255]; decoding is ``q * (r / 127.5)``
  (``r / 255.5`` for uint8). ``out_type='auto'`` gives uint8 when the calibrated minimum is
  >= 0, else int8 (and int8 when there is no calibration range).
- ``_sg_mkldnn_conv``: BatchNorm is folded into the float32 weights and bias first (``alpha =
  gamma / sqrt(var + eps)`` in double, stored as float32). With a calibrated output range
  the weights are quantized per output channel (scale ``127.5 / max|w_c|``), the bias to
  int32 with scale ``weight_scale_c * data_scale``; the int32 sums, plus bias, times
  ``out_scale / data_scale / weight_scale_c`` give the output, with the activation, then the
  residual (``out_scale / sum_scale`` times its codes), then the post-sum activation applied
  in float32 before rounding. Without a calibrated range the output is the int32 sum, with
  per-tensor weight scaling and MXNet's range formula.
- oneDNN's int8 kernels on processors without VNNI (AVX2 / AVX-512 without VNNI) do two
  things MXNet's numbers inherit: with int8 (signed) data the weights are quantized with an
  extra factor 0.5 (the bias too, and the output scale doubled), and with uint8 data the
  products of neighbouring input channels are summed in saturating int16 (``vpmaddubsw``)
  before the int32 accumulation. Both are emulated when this processor has no VNNI (as the
  MXNet 1.9.1 wheel run here would do); ``NEOGLUON_INT8_ISA=vnni`` or ``=avx2`` picks one.
- MXNet 1.9.1 bugs kept: a grouped (not depthwise) convolution quantizes the weights of
  group ``g`` with the scale of output channel ``g``; a residual input whose type (int8 /
  uint8) differs from the output's makes the output saturate to the residual's type and be
  read as the output's type.

Gradients: MXNet gives these operators zero gradients (``MakeZeroGradNodes``), so a model
can be recorded and differentiated; the float layers around them get their gradients, the
quantized ones get zeros. A max ``quantized_pooling`` in training mode computes what it does
in inference mode; MXNet 1.9.1 there often fails ('MKLDNN Pooling: incorrect workspace
input', reported at the first read of anything computed from it: oneDNN's training-mode
pooling wants a workspace output the quantized operator does not have), a bug not kept.
"""
from __future__ import annotations

import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from .. import autograd as _ag_mod
from ..base import MXNetError
from .ndarray import NDArray, _new

__all__ = ["quantize_v2", "dequantize", "quantized_pooling", "quantized_concat",
           "quantized_flatten", "_sg_mkldnn_conv", "_sg_mkldnn_fully_connected", "requantize",
           "int8_isa"]

_KINT8 = np.float32(127.5)
_KUINT8 = np.float32(255.5)
_F32 = np.float32
_QTYPES = (torch.int8, torch.uint8)
_INT32_MAX_F = np.float32(2147483647.0)   # (float)INT_MAX, as C++ converts it: 2**31


# ------------------------------------------------------------------------------ helpers
def int8_isa():
    """'vnni' or 'avx2': which of oneDNN's int8 kernels MXNet 1.9.1 would use on this CPU.

    ``NEOGLUON_INT8_ISA`` overrides; otherwise 'vnni' where /proc/cpuinfo lists avx512_vnni
    or amx_int8 (oneDNN 2.4's VNNI and AMX kernels), else 'avx2' (the AVX2, AVX-512 and SSE4.1
    kernels, which share the non-VNNI behaviour described in the module docstring)."""
    env = os.environ.get("NEOGLUON_INT8_ISA", "").strip().lower()
    if env:
        if env not in ("vnni", "avx2"):
            raise MXNetError(f"NEOGLUON_INT8_ISA must be 'vnni' or 'avx2', got {env!r}")
        return env
    global _ISA
    if _ISA is None:
        flags = ""
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("flags"):
                        flags = line
                        break
        except OSError:
            pass
        words = set(flags.split())
        _ISA = "vnni" if ({"avx512_vnni", "amx_int8"} & words) else "avx2"
    return _ISA


_ISA = None


def _t(x, op, what="data"):
    if not isinstance(x, NDArray):
        raise MXNetError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")
    t = x._t
    if type(t) is not torch.Tensor:
        with torch._C.DisableTorchFunctionSubclass():
            t = t.as_subclass(torch.Tensor)
    return t


def _scalar(x, op, what):
    """A (1,)-shaped float range input as a numpy float32."""
    t = _t(x, op, what)
    if t.numel() != 1:
        raise MXNetError(f"{op}: {what} must have shape (1,), got {tuple(t.shape)}")
    if t.device.type == "meta":
        return None
    return _F32(t.reshape(()).to(torch.float32).item())


def _max_abs(a, b):
    return max(abs(_F32(a)), abs(_F32(b)))


def _scale(signed, mn, mx):
    """MXNet's GetQuantizeScale: 127.5 (int8) or 255.5 (uint8) over max(|min|, |max|)."""
    r = _max_abs(mn, mx)
    q = _KINT8 if signed else _KUINT8
    if r == 0:
        return _F32(np.inf)
    with np.errstate(over="ignore"):
        return _F32(q / r)


def _codes(v, signed):
    """float32 -> int8/uint8 codes: rint, saturation (NaN to the top, as oneDNN's min/max)."""
    lo, hi = (-128.0, 127.0) if signed else (0.0, 255.0)
    v = torch.nan_to_num(torch.round(v), nan=hi, posinf=hi, neginf=lo).clamp_(lo, hi)
    return v.to(torch.int8 if signed else torch.uint8)


def _range_nd(v, ctx, device):
    return _new(torch.tensor([float(v)], dtype=torch.float32, device=device), ctx)


def _meta_range(ctx):
    return _new(torch.empty((1,), dtype=torch.float32, device="meta"), ctx)


class _ZeroGrad(torch.autograd.Function):
    """Connects a result to its differentiable inputs with zero gradients (MXNet's
    ``MakeZeroGradNodes``)."""

    @staticmethod
    def forward(ctx, box, *inputs):
        ctx.meta = [(i.shape, i.dtype, i.device) for i in inputs]
        return box.value

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(torch.zeros(s, dtype=d, device=dev) for s, d, dev in ctx.meta)


class _Box:
    """Carries the result past autograd.Function's tensor arguments (it is not an input)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _grad_sources(arrays):
    srcs = []
    for a in arrays:
        if not isinstance(a, NDArray):
            continue
        t = a._t
        c = getattr(t, "_carrier", None)
        if c is not None and c.requires_grad:
            srcs.append(c)
        elif type(t) is torch.Tensor and t.requires_grad:
            srcs.append(t)
    return srcs


def _link(result, inputs, ctx):
    """NDArray of ``result`` (a plain tensor), in the autograd graph with zero gradients
    towards ``inputs`` while recording."""
    if not (_ag_mod._state.recording and torch.is_grad_enabled()) or \
            result.device.type == "meta":
        return _new(result, ctx)
    srcs = _grad_sources(inputs)
    if not srcs:
        return _new(result, ctx)
    if result.is_floating_point():
        return _new(_ZeroGrad.apply(_Box(result.detach()), *srcs), ctx)
    from ._intgrad import IntVarTensor
    twin = _ZeroGrad.apply(_Box(result.detach().to(torch.float64)), *srcs)
    r = result.as_subclass(IntVarTensor)
    r._carrier = twin
    return _new(r, ctx)


def _outputs(op, q, mn, mx, inputs, ctx):
    """The three results of a quantized operator: codes, min and max."""
    dev = q.device
    if dev.type == "meta":
        return [_new(q, ctx), _meta_range(ctx), _meta_range(ctx)]
    return [_link(q, inputs, ctx), _link(torch.tensor([float(mn)], device=dev), inputs,
                                               ctx),
            _link(torch.tensor([float(mx)], device=dev), inputs, ctx)]


def _assign_outs(res, out):
    if out is None:
        return res
    outs = out if isinstance(out, (list, tuple)) else [out]
    for o, r in zip(outs, res if isinstance(res, list) else [res]):
        o[:] = r
    return out


# ------------------------------------------------------------------------------ quantize
_OUT_TYPES = ("auto", "int8", "uint8")


def _out_signed(out_type, mn, mx):
    if out_type == "int8":
        return True
    if out_type == "uint8":
        return False
    if mn is not None and mx is not None:
        return float(mn) < 0
    return True


def quantize_v2(data, out_type="int8", min_calib_range=None, max_calib_range=None, out=None,
                name=None):
    """Quantize float32 ``data`` to int8/uint8 codes, as MXNet 1.9.1's ``quantize_v2``.

    Parameters
    ----------
    data : NDArray
        float32 (int8/uint8 data passes through with its range).
    out_type : {'int8', 'uint8', 'auto'}
        'auto': uint8 when ``min_calib_range >= 0``, else int8 (int8 without a range).
    min_calib_range, max_calib_range : float, optional
        The calibrated range; without both, the range of ``data`` itself.

    Returns
    -------
    [codes, min, max]
    """
    op = "quantize_v2"
    if out_type not in _OUT_TYPES:
        raise MXNetError(f"{op}: out_type {out_type!r} is not one of 'auto', 'int8', 'uint8'")
    x = _t(data, op)
    calib = min_calib_range is not None and max_calib_range is not None
    cmin = _F32(float(min_calib_range)) if calib else None
    cmax = _F32(float(max_calib_range)) if calib else None
    signed = _out_signed(out_type, cmin, cmax)
    ctx = data._ctx
    if x.dtype in _QTYPES:   # already quantized: the codes pass through
        q = x.clone() if x.dtype == (torch.int8 if signed else torch.uint8) else \
            x.view(torch.int8 if signed else torch.uint8).clone()
        if calib:
            mn, mx = cmin, cmax
        elif x.dtype == torch.uint8:
            mn, mx = _F32(0), _KUINT8
        else:
            mn, mx = -_KINT8, _KINT8
        return _assign_outs(_outputs(op, q, mn, mx, [data], ctx), out)
    if x.dtype != torch.float32:
        raise MXNetError(f"{op}: data must be float32 (or int8/uint8), got "
                         f"{str(x.dtype).replace('torch.', '')}")
    if x.device.type == "meta":
        q = torch.empty(x.shape, dtype=torch.int8 if signed else torch.uint8, device="meta")
        return [_new(q, ctx), _meta_range(ctx), _meta_range(ctx)]
    with torch.no_grad():
        if calib:
            dmin, dmax = cmin, cmax
        elif x.numel():
            dmin, dmax = _F32(x.min().item()), _F32(x.max().item())
        else:
            dmin, dmax = _F32(np.finfo(np.float32).max), _F32(-np.finfo(np.float32).max)
        if signed:
            r = _max_abs(dmin, dmax)
            mn, mx = -r, r
        else:
            mn, mx = dmin, dmax
        sc = _scale(signed, dmin, dmax)
        q = _codes(x * float(sc), signed)
    return _assign_outs(_outputs(op, q, mn, mx, [data], ctx), out)


def dequantize(data, min_range, max_range, out_type="float32", out=None, name=None):
    """int8/uint8 codes back to float32: ``q * max(|min|, |max|) / 127.5`` (uint8: 255.5)."""
    op = "dequantize"
    if out_type != "float32":
        raise MXNetError(f"{op}: out_type {out_type!r} is not supported (only 'float32')")
    q = _t(data, op)
    if q.dtype not in _QTYPES:
        raise MXNetError(f"{op}: data must be int8 or uint8, got "
                         f"{str(q.dtype).replace('torch.', '')}")
    mn = _scalar(min_range, op, "min_range")
    mx = _scalar(max_range, op, "max_range")
    ctx = data._ctx
    if q.device.type == "meta" or mn is None or mx is None:
        return _new(torch.empty(q.shape, dtype=torch.float32, device=q.device), ctx)
    with torch.no_grad():
        step = _F32(_max_abs(mn, mx) / (_KINT8 if q.dtype == torch.int8 else _KUINT8))
        r = q.to(torch.float32) * float(step)
    return _assign_outs(_link(r, [data, min_range, max_range], ctx), out)


def requantize(data, min_range, max_range, out_type="int8", min_calib_range=None,
               max_calib_range=None, out=None, name=None):
    """int32 sums (standing for ``[min_range, max_range]``) to int8/uint8 codes, as MXNet
    1.9.1's oneDNN ``requantize``: for the range ``r`` = max(|calibrated min|, |max|) when
    calibrated, else the largest |sum| times ``max(|min_range|, |max_range|) / 2**31``; the
    codes are ``rint(q * (R_in / 2**31) * (127 / r))`` (255 for uint8), saturated, and the
    range out is ``(-r, r)`` (int8) or ``(0, r)`` (uint8)."""
    op = "requantize"
    if out_type not in _OUT_TYPES:
        raise MXNetError(f"{op}: out_type {out_type!r} is not one of 'auto', 'int8', 'uint8'")
    q = _t(data, op)
    if q.dtype != torch.int32 and q.device.type != "meta":
        raise MXNetError(f"{op}: data must be int32, got {str(q.dtype).replace('torch.', '')}")
    calib = min_calib_range is not None and max_calib_range is not None
    cmin = _F32(float(min_calib_range)) if calib else None
    cmax = _F32(float(max_calib_range)) if calib else None
    signed = _out_signed(out_type, cmin, cmax)
    ctx = data._ctx
    if q.device.type == "meta":
        r = torch.empty(q.shape, dtype=torch.int8 if signed else torch.uint8, device="meta")
        return _assign_outs(_outputs(op, r, 0, 0, [], ctx), out)
    imin = _scalar(min_range, op, "min_range")
    imax = _scalar(max_range, op, "max_range")
    with torch.no_grad(), np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        in_range = _max_abs(imin, imax)
        first = _F32(in_range / _INT32_MAX_F)
        if calib:
            real = _max_abs(cmin, cmax)
        else:
            qd = q.to(torch.int64)
            big = max(abs(int(qd.min())), abs(int(qd.max()))) if q.numel() else 0
            real = _F32(_F32(_F32(big) * in_range) / _INT32_MAX_F)
        mn, mx = (-real, real) if signed else (_F32(0), real)
        second = _F32(_F32(127 if signed else 255) / real)
        sc = _F32(first * second)
        r = _codes(q.to(torch.float32) * float(sc), signed)
    return _assign_outs(_outputs(op, r, mn, mx, [data, min_range, max_range], ctx), out)


# ------------------------------------------------------------------------------ pooling & co
def _pair(v, n, default):
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return (default,) * n
    if isinstance(v, int):
        return (v,) * n
    return tuple(int(a) for a in v)


def quantized_pooling(data, min_data, max_data, kernel=(), pool_type="max", global_pool=False,
                      cudnn_off=False, pooling_convention="valid", stride=(), pad=(),
                      p_value=None, count_include_pad=None, layout=None, out=None, name=None):
    """Max or average pooling of int8/uint8 codes (NCHW); the range passes through.

    Average pooling rounds ``sum / count`` half to even; with ``count_include_pad`` (the
    default) the count is the whole kernel, also where 'full' windows pass the padded edge
    (oneDNN's rule)."""
    op = "quantized_pooling"
    q = _t(data, op)
    if q.dtype not in _QTYPES:
        raise MXNetError(f"{op}: data must be int8 or uint8, got "
                         f"{str(q.dtype).replace('torch.', '')} (MXNet's quantized pooling "
                         "only takes int8 and uint8)")
    if q.dim() != 4:
        raise MXNetError(f"{op}: data must be 4-D (NCHW), got shape {tuple(q.shape)}")
    if layout not in (None, "NCHW", "None"):
        raise MXNetError(f"{op}: layout {layout!r} is not supported (only NCHW)")
    if pool_type not in ("max", "avg"):
        raise MXNetError(f"{op}: pool_type {pool_type!r} is not supported (only 'max' and "
                         "'avg')")
    if pooling_convention not in ("valid", "full"):
        raise MXNetError(f"{op}: pooling_convention {pooling_convention!r} is not supported "
                         "(only 'valid' and 'full')")
    mn = _scalar(min_data, op, "min_data")
    mx = _scalar(max_data, op, "max_data")
    H, W = q.shape[2], q.shape[3]
    if global_pool:
        k, s, p = (H, W), (1, 1), (0, 0)
    else:
        k = _pair(kernel, 2, 1)
        if len(k) != 2:
            raise MXNetError(f"{op}: kernel {tuple(kernel)} must have 2 sizes")
        s = _pair(stride, 2, 1)
        p = _pair(pad, 2, 0)
    outs = []
    for i, size in enumerate((H, W)):
        span = size + 2 * p[i] - k[i]
        if span < 0:
            raise MXNetError(f"{op}: kernel {k} with pad {p} is larger than the input's "
                             f"spatial shape {(H, W)}")
        n = (-(-span // s[i]) if pooling_convention == "full" else span // s[i]) + 1
        outs.append(n)
    ctx = data._ctx
    if q.device.type == "meta":
        r = torch.empty((q.shape[0], q.shape[1]) + tuple(outs), dtype=q.dtype, device="meta")
        return _assign_outs(_outputs(op, r, 0, 0, [], ctx), out)
    with torch.no_grad():
        extra = [max((outs[i] - 1) * s[i] + k[i] - ((H, W)[i] + 2 * p[i]), 0) for i in range(2)]
        xf = q.to(torch.float32)
        # zero padding: left p, right p + what the 'full' windows pass
        padded = F.pad(xf, (p[1], p[1] + extra[1], p[0], p[0] + extra[0]),
                       value=-math.inf if pool_type == "max" else 0.0)
        if pool_type == "max":
            r = F.max_pool2d(padded, k, s)
        else:
            sums = F.avg_pool2d(padded, k, s, divisor_override=1)
            if count_include_pad is None or _truthy(count_include_pad):
                cnt = float(k[0] * k[1])
                r = sums / cnt
            else:
                ones = F.pad(torch.ones((1, 1, H, W), dtype=torch.float32, device=q.device),
                             (p[1], p[1] + extra[1], p[0], p[0] + extra[0]))
                cnt = F.avg_pool2d(ones, k, s, divisor_override=1)
                r = sums / cnt
            r = torch.round(r)
        r = r[:, :, :outs[0], :outs[1]].to(q.dtype)
    return _assign_outs(_outputs(op, r, mn, mx, [data, min_data, max_data], ctx), out)


def _truthy(v):
    if isinstance(v, str):
        return v.lower() in ("true", "1")
    return bool(v)


def quantized_concat(*data, num_args=None, dim=1, out=None, name=None):
    """Concatenate int8/uint8 codes: ``data`` is the ``num_args`` arrays, then their
    ``(min, max)`` pairs. The result's range is (smallest min, largest max), int8 when any
    input is int8; inputs with another scale are rescaled (``rint``, saturated)."""
    op = "quantized_concat"
    if num_args is None:
        if len(data) % 3:
            raise MXNetError(f"{op}: takes the arrays and then a (min, max) pair for each; got "
                             f"{len(data)} inputs")
        num_args = len(data) // 3
    num_args = int(num_args)
    if num_args < 1 or len(data) != 3 * num_args:
        raise MXNetError(f"{op}: num_args={num_args} needs {3 * num_args} inputs (arrays, then "
                         f"a min and a max for each), got {len(data)}")
    arrs = [_t(a, op, f"data[{i}]") for i, a in enumerate(data[:num_args])]
    for i, a in enumerate(arrs):
        if a.dtype not in _QTYPES:
            raise MXNetError(f"{op}: data[{i}] must be int8 or uint8, got "
                             f"{str(a.dtype).replace('torch.', '')}")
    nd0 = arrs[0].dim()
    ax = int(dim) + nd0 if int(dim) < 0 else int(dim)
    if not 0 <= ax < nd0:
        raise MXNetError(f"{op}: dim {dim} is out of range for {nd0}-D data")
    for i, a in enumerate(arrs[1:], 1):
        if a.dim() != nd0 or any(a.shape[j] != arrs[0].shape[j] for j in range(nd0) if j != ax):
            raise MXNetError(f"{op}: data[{i}] of shape {tuple(a.shape)} does not concatenate "
                             f"with shape {tuple(arrs[0].shape)} along dim {dim}")
    ctx = data[0]._ctx
    signed = any(a.dtype == torch.int8 for a in arrs)
    otype = torch.int8 if signed else torch.uint8
    if any(a.device.type == "meta" for a in arrs):
        r = torch.cat([torch.empty(a.shape, dtype=otype, device="meta") for a in arrs], ax)
        return _assign_outs(_outputs(op, r, 0, 0, [], ctx), out)
    mins = [_scalar(data[num_args + 2 * i], op, f"min[{i}]") for i in range(num_args)]
    maxs = [_scalar(data[num_args + 2 * i + 1], op, f"max[{i}]") for i in range(num_args)]
    omin, omax = min(mins), max(maxs)
    osc = _scale(signed, omin, omax)
    parts = []
    with torch.no_grad():
        for a, mn, mx in zip(arrs, mins, maxs):
            isc = _scale(a.dtype == torch.int8, mn, mx)
            if isc == osc and a.dtype == otype:
                parts.append(a)
            else:
                parts.append(_codes(a.to(torch.float32) * float(_F32(osc / isc)), signed))
        r = torch.cat(parts, ax)
    return _assign_outs(_outputs(op, r, omin, omax, list(data), ctx), out)


def quantized_flatten(data, min_data, max_data, out=None, name=None):
    """Flatten int8/uint8 codes to 2-D (N, rest); the range passes through."""
    op = "quantized_flatten"
    q = _t(data, op)
    if q.dtype not in _QTYPES:
        raise MXNetError(f"{op}: data must be int8 or uint8, got "
                         f"{str(q.dtype).replace('torch.', '')}")
    r = q.reshape(q.shape[0] if q.dim() else 1, -1).clone()
    mn = _scalar(min_data, op, "min_data")
    mx = _scalar(max_data, op, "max_data")
    return _assign_outs(_outputs(op, r, mn or 0, mx or 0, [data, min_data, max_data],
                                 data._ctx), out)


# ------------------------------------------------------------------------------ fused conv
_ACTS = ("relu", "sigmoid", "tanh", "softrelu")


def _act(v, kind):
    if kind == "relu":
        return torch.clamp_min(v, 0.0)
    if kind == "sigmoid":
        return torch.sigmoid(v)
    if kind == "tanh":
        return torch.tanh(v)
    if kind == "softrelu":
        return F.softplus(v)
    raise MXNetError(f"_sg_mkldnn_conv: activation {kind!r} is not supported")


def _conv_inputs(no_bias, with_bn, with_sum, quantized):
    names = ["data", "weight"]
    if not no_bias:
        names.append("bias")
    if with_bn:
        names += ["gamma", "beta", "mean", "var"]
    if with_sum:
        names.append("sum")
    if quantized:
        names += ["data_min", "data_max"]
        if with_sum:
            names += ["sum_min", "sum_max"]
    return names


def sg_conv_input_names(attrs):
    """Input names of an ``_sg_mkldnn_conv`` node with these (evaluation) attributes."""
    return _conv_inputs(_truthy(attrs.get("no_bias", False)), _truthy(attrs.get("with_bn")),
                        _truthy(attrs.get("with_sum")), _truthy(attrs.get("quantized")))


def _fold_bn(w, b, gamma, beta, mean, var, eps, fix_gamma):
    """MXNet's UpdateConvWeightBias in float32 (alpha in double, stored as float32)."""
    g = torch.ones_like(gamma, dtype=torch.float64) if fix_gamma else gamma.to(torch.float64)
    alpha = (g / torch.sqrt(var.to(torch.float64) + float(eps))).to(torch.float32)
    shape = (-1,) + (1,) * (w.dim() - 1)
    w2 = w * alpha.reshape(shape)
    if b is None:
        b2 = beta - alpha * mean
    else:
        b2 = beta + alpha * (b - mean)
    return w2, b2


def _weight_scales(w, b, data_scale, channelwise):
    """Per output channel (or one) float32 scales, as MXNet's GetWeightScales."""
    oc = w.shape[0]
    flat = w.reshape(oc, -1)
    wmin = flat.min(1).values.numpy().astype(np.float32)
    wmax = flat.max(1).values.numpy().astype(np.float32)
    if not channelwise:
        tmin, tmax = _F32(wmin.min()), _F32(wmax.max())
        return np.array([_scale(True, tmin, tmax)], dtype=np.float32), tmin, tmax
    scales = np.array([_scale(True, a, c) for a, c in zip(wmin, wmax)], dtype=np.float32)
    if b is not None:
        bv = b.numpy().astype(np.float32)
        with np.errstate(over="ignore", divide="ignore"):
            for c in range(oc):
                if bv[c]:
                    lim = _INT32_MAX_F if bv[c] > 0 else -_INT32_MAX_F
                    smax = _F32(_F32(_F32(lim / _F32(2)) / bv[c]) / data_scale)
                    scales[c] = min(scales[c], smax)
    return scales, None, None


def _conv_f64(x, w, stride, pad, dilate, groups):
    return F.conv2d(x.to(torch.float64), w.to(torch.float64), None, stride, pad, dilate, groups)


def _saturation_fix(acc, xq, wq, stride, pad, dilate, groups):
    """Add what oneDNN's non-VNNI u8 x s8 kernels lose: each pair of neighbouring input
    channels (2j, 2j+1) of a kernel tap is summed in saturating int16 (vpmaddubsw) before the
    int32 accumulation. Only (position, pair, tap) triples whose data could reach the int16
    limit with this pair's largest weights are looked at."""
    O, Cg, kh, kw = wq.shape
    og = O // groups
    T = kh * kw
    N, _, Ho, Wo = acc.shape
    out = acc.reshape(N, O, Ho * Wo)
    for g in range(groups):
        xg = xq[:, g * Cg:(g + 1) * Cg]
        wg = wq[g * og:(g + 1) * og]
        if Cg % 2:
            xg = torch.cat([xg, torch.zeros_like(xg[:, :1])], 1)
            wg = torch.cat([wg, torch.zeros_like(wg[:, :1])], 1)
        J = xg.shape[1] // 2
        wa = wg[:, 0::2].reshape(og, J, T)
        wb = wg[:, 1::2].reshape(og, J, T)
        amax, bmax = wa.abs().amax(0), wb.abs().amax(0)          # (J, T)
        xmax = float(xg.max()) if xg.numel() else 0.0
        if float((amax + bmax).max()) * xmax <= 32767:
            continue
        step = max(1, 64 // T)
        for j0 in range(0, J, step):
            j1 = min(J, j0 + step)
            cols = F.unfold(xg[:, 2 * j0:2 * j1], (kh, kw), dilation=dilate, padding=pad,
                            stride=stride).reshape(N, j1 - j0, 2, T, -1)
            xa, xb = cols[:, :, 0], cols[:, :, 1]                  # (N, cj, T, L)
            bound = xa * amax[j0:j1, :, None] + xb * bmax[j0:j1, :, None]
            n_i, j_i, t_i, l_i = (bound > 32767).nonzero(as_tuple=True)
            if not n_i.numel():
                continue
            va, vb = xa[n_i, j_i, t_i, l_i], xb[n_i, j_i, t_i, l_i]
            jj = j_i + j0
            chunk = max(1, (1 << 22) // og)
            for k0 in range(0, n_i.numel(), chunk):
                sl = slice(k0, k0 + chunk)
                pair = wa[:, jj[sl], t_i[sl]] * va[sl] + wb[:, jj[sl], t_i[sl]] * vb[sl]
                corr = pair.clamp(-32768, 32767) - pair             # (og, K)
                hit = (corr != 0).nonzero(as_tuple=True)
                if not hit[0].numel():
                    continue
                o_idx = hit[0] + g * og
                k_idx = hit[1] + k0
                out.index_put_((n_i[k_idx], o_idx, l_i[k_idx]), corr[hit], accumulate=True)
    return out.reshape(acc.shape)


def _sg_mkldnn_conv(*inputs, kernel=(), stride=(), pad=(), dilate=(), num_filter=None,
                    num_group=1, no_bias=False, layout=None, quantized=False, with_bn=False,
                    with_act=False, with_sum=False, with_postsum_act=False,
                    min_calib_range=None, max_calib_range=None, act_type=None,
                    postsum_act_type=None, bn_eps=1e-3, bn_fix_gamma=True, out=None,
                    name=None):
    """MXNet's fused (oneDNN subgraph) convolution ``_sg_mkldnn_conv``.

    Inputs, in order: data, weight, [bias], [gamma, beta, mean, var] (``with_bn``), [sum]
    (``with_sum``), and when ``quantized``: data_min, data_max, [sum_min, sum_max]. The
    keyword arguments are the node's own (quantized, with_bn, with_act, with_sum,
    with_postsum_act, min/max_calib_range) and those of the Convolution, BatchNorm
    (``bn_eps``, ``bn_fix_gamma``) and Activations (``act_type``, ``postsum_act_type``) of the
    graph the node fuses. Quantized: returns [codes, min, max]; else the float32 output."""
    op = "_sg_mkldnn_conv"
    quantized, with_bn = _truthy(quantized), _truthy(with_bn)
    with_act, with_sum = _truthy(with_act), _truthy(with_sum)
    with_postsum_act, no_bias = _truthy(with_postsum_act), _truthy(no_bias)
    names = _conv_inputs(no_bias, with_bn, with_sum, quantized)
    if len(inputs) != len(names):
        raise MXNetError(f"{op}: expects {len(names)} inputs ({', '.join(names)}), got "
                         f"{len(inputs)}")
    arr = dict(zip(names, inputs))
    ts = {k: _t(v, op, k) for k, v in arr.items()}
    x = ts["data"]
    if x.dim() != 4:
        raise MXNetError(f"{op}: data must be 4-D (NCHW), got shape {tuple(x.shape)}")
    if layout not in (None, "NCHW", "None"):
        raise MXNetError(f"{op}: layout {layout!r} is not supported (only NCHW)")
    k = _pair(kernel, 2, 1)
    s = _pair(stride, 2, 1)
    p = _pair(pad, 2, 0)
    d = _pair(dilate, 2, 1)
    groups = int(num_group or 1)
    w = ts["weight"]
    if w.dim() != 4:
        raise MXNetError(f"{op}: weight must be 4-D, got shape {tuple(w.shape)}")
    nf = int(num_filter) if num_filter is not None else w.shape[0]
    if w.shape[0] != nf or x.shape[1] != w.shape[1] * groups or tuple(w.shape[2:]) != k:
        raise MXNetError(f"{op}: weight shape {tuple(w.shape)} does not fit data shape "
                         f"{tuple(x.shape)}, kernel {k}, num_filter {nf}, num_group {groups}")
    for kind, flag in ((act_type, with_act), (postsum_act_type, with_postsum_act)):
        if flag and kind not in _ACTS:
            raise MXNetError(f"{op}: activation {kind!r} is not supported (relu, sigmoid, "
                             "tanh, softrelu)")
    ctx = inputs[0]._ctx
    out_signed = not ((with_act and not with_sum and act_type in ("relu", "sigmoid",
                                                                 "softrelu")) or
                      (with_postsum_act and postsum_act_type in ("relu", "sigmoid",
                                                                  "softrelu")))
    calib = min_calib_range is not None and max_calib_range is not None
    if quantized and x.dtype not in _QTYPES:
        raise MXNetError(f"{op}: quantized data must be int8 or uint8, got "
                         f"{str(x.dtype).replace('torch.', '')}")
    if not quantized and x.dtype != torch.float32:
        raise MXNetError(f"{op}: data must be float32, got {str(x.dtype).replace('torch.', '')}")
    for key in ("weight", "bias", "gamma", "beta", "mean", "var"):
        if key in ts and ts[key].dtype != torch.float32:
            raise MXNetError(f"{op}: {key} must be float32, got "
                             f"{str(ts[key].dtype).replace('torch.', '')}")
    if x.device.type == "meta" or w.device.type == "meta":
        shp = F.conv2d(torch.empty(x.shape, device="meta"), torch.empty(w.shape, device="meta"),
                       None, s, p, d, groups).shape
        if not quantized:
            return _new(torch.empty(shp, device="meta"), ctx)
        otype = (torch.int8 if out_signed else torch.uint8) if calib else torch.int32
        return [_new(torch.empty(shp, dtype=otype, device="meta"), ctx), _meta_range(ctx),
                _meta_range(ctx)]
    with torch.no_grad():
        wf = w.to(torch.float32)
        bf = None if no_bias else ts["bias"].to(torch.float32)
        if with_bn:
            wf, bf = _fold_bn(wf, bf, ts["gamma"], ts["beta"], ts["mean"], ts["var"], bn_eps,
                              _truthy(bn_fix_gamma))
        if not quantized:
            r = F.conv2d(x, wf, bf, s, p, d, groups)
            if with_act:
                r = _act(r, act_type)
            if with_sum:
                r = r + ts["sum"].to(torch.float32)
                if with_postsum_act:
                    r = _act(r, postsum_act_type)
            return _assign_outs(_link(r, list(inputs), ctx), out)
        r, omin, omax, sum_t = _quantized_conv(
            op, x, wf, bf, ts, s, p, d, groups, with_act, act_type, with_sum,
            with_postsum_act, postsum_act_type, calib, min_calib_range, max_calib_range,
            out_signed)
    res = _outputs(op, r, omin, omax, list(inputs), ctx)
    return _assign_outs(res, out)


def _quantized_conv(op, x, wf, bf, ts, s, p, d, groups, with_act, act_type, with_sum,
                    with_postsum_act, postsum_act_type, calib, min_calib_range,
                    max_calib_range, out_signed):
    dmin = _F32(ts["data_min"].reshape(()).item())
    dmax = _F32(ts["data_max"].reshape(()).item())
    x_signed = x.dtype == torch.int8
    if dmin < 0 and not x_signed:
        raise MXNetError(f"{op}: data_min {float(dmin)} < 0 needs int8 data, got uint8 "
                         "(MXNet: 'Expect int8 when data_min < 0.0')")
    vnni = int8_isa() == "vnni"
    adj = _F32(0.5) if (x_signed and not vnni) else _F32(1.0)
    dsc = _scale(x_signed, dmin, dmax)
    oc = wf.shape[0]
    scales, tmin, tmax = _weight_scales(wf, bf, dsc, channelwise=calib)
    wsc = scales if calib else np.repeat(scales, oc)
    # weights to int8 codes (oneDNN reorder: rint, saturate); a grouped (not depthwise)
    # convolution takes the scale of output channel g for every channel of group g
    wq_sc = wsc
    if calib and 1 < groups and not (groups == oc and groups == x.shape[1]):
        wq_sc = np.repeat(wsc[:groups], oc // groups)
    wq = _codes(wf * torch.from_numpy((wq_sc * adj).astype(np.float32)).reshape(-1, 1, 1, 1),
                True).to(torch.float64)
    xq = x.to(torch.float64)
    acc = _conv_f64(xq, wq, s, p, d, groups)
    depthwise = groups == oc == x.shape[1]
    if not vnni and not x_signed and not depthwise:
        acc = _saturation_fix(acc, xq, wq, s, p, d, groups)
    v = acc.to(torch.float32)
    if bf is not None:
        bsc = torch.from_numpy((wsc * dsc).astype(np.float32))
        bq = torch.round(bf * bsc).clamp_(-2147483648.0, 2147483647.0)
        v = v + (bq * float(adj)).reshape(1, -1, 1, 1)
    if calib:
        omin, omax = _F32(float(min_calib_range)), _F32(float(max_calib_range))
        osc = _scale(out_signed, omin, omax)
        rq = ((osc / dsc) / wsc).astype(np.float32) / adj
        v = v * torch.from_numpy(rq.astype(np.float32)).reshape(1, -1, 1, 1)
    else:
        # int32 output: MXNet's range for an s8 x (u8|s8) product, per-tensor weights
        wr = _max_abs(tmin, tmax)
        dr = _max_abs(dmin, dmax)
        a_level = _F32(wr / _F32(127))
        b_level = _F32(dr / (_F32(127) if x_signed else _F32(255)))
        omax = _F32(_F32(a_level * b_level) * _INT32_MAX_F)
        omin = -omax
        osc = _F32(dsc * _F32(wsc[0]))
        if adj != 1:
            v = v * float(_F32(1) / adj)
    if with_act:
        v = _act(v, act_type)
    sum_t = None
    if with_sum:
        sum_t = ts["sum"]
        smin = _F32(ts["sum_min"].reshape(()).item())
        smax = _F32(ts["sum_max"].reshape(()).item())
        if sum_t.dtype not in _QTYPES + (torch.int32,):
            raise MXNetError(f"{op}: the sum input must be int8 or uint8, got "
                             f"{str(sum_t.dtype).replace('torch.', '')}")
        ssc = _scale(sum_t.dtype == torch.int8, smin, smax)
        sum_scale = _F32(osc / ssc)
        prev = sum_t.to(torch.float64)
        if sum_scale == 1:
            v = (v.to(torch.float64) + prev).to(torch.float32)
        else:
            v = (v.to(torch.float64) + prev * float(sum_scale)).to(torch.float32)
        if with_postsum_act:
            v = _act(v, postsum_act_type)
    if not calib:
        r = torch.nan_to_num(torch.round(v.to(torch.float64)), nan=2147483647.0)
        r = r.clamp_(-2147483648.0, 2147483647.0).to(torch.int32)
        return r, omin, omax, sum_t
    if with_sum and sum_t.dtype in _QTYPES and (sum_t.dtype == torch.int8) != out_signed:
        # MXNet 1.9.1 writes into the sum's buffer with the sum's type and reads it back as
        # the output's type
        r = _codes(v, sum_t.dtype == torch.int8).view(torch.int8 if out_signed
                                                      else torch.uint8)
    else:
        r = _codes(v, out_signed)
    return r, omin, omax, sum_t


def _fc_input_names(no_bias, quantized, channel_wise):
    names = ["data", "weight"] + ([] if no_bias else ["bias"])
    if quantized:
        names += ["data_min", "data_max"]
        if not channel_wise:
            names += ["weight_min", "weight_max"] + ([] if no_bias else ["bias_min", "bias_max"])
    return names


def sg_fc_input_names(attrs):
    """Input names of an ``_sg_mkldnn_fully_connected`` node with these attributes."""
    return _fc_input_names(_truthy(attrs.get("no_bias", False)),
                           _truthy(attrs.get("quantized", False)),
                           _truthy(attrs.get("channel_wise_quantize", False)))


def _sg_mkldnn_fully_connected(*inputs, num_hidden=None, no_bias=False, flatten=True,
                               with_eltwise=False, eltwise_act="relu", quantized=False,
                               min_calib_range=None, max_calib_range=None,
                               enable_float_output=False, channel_wise_quantize=False,
                               out=None, name=None):
    """MXNet's fused (oneDNN subgraph) FullyConnected, with its activation when
    ``with_eltwise``.

    Float: inputs data, weight, [bias]. Quantized (``quantized=True``, as
    ``mx.contrib.quantization`` writes it): data codes, the int8 weight (and bias) codes
    quantized offline, data_min, data_max, weight_min, weight_max, [bias_min, bias_max]; with
    ``channel_wise_quantize`` the float weight and bias (quantized per output channel here)
    and data_min, data_max. The output: codes and range with a calibrated range,
    float32 with ``enable_float_output``, else the int32 sums and MXNet's range."""
    op = "_sg_mkldnn_fully_connected"
    quantized, no_bias = _truthy(quantized), _truthy(no_bias)
    chw = _truthy(channel_wise_quantize)
    names = _fc_input_names(no_bias, quantized, chw)
    if len(inputs) != len(names):
        raise MXNetError(f"{op}: expects {len(names)} inputs ({', '.join(names)}), got "
                         f"{len(inputs)}")
    ts = {k: _t(v, op, k) for k, v in zip(names, inputs)}
    x, w = ts["data"], ts["weight"]
    b = None if no_bias else ts["bias"]
    if not quantized and x.dtype != torch.float32:
        raise MXNetError(f"{op}: data must be float32, got {str(x.dtype).replace('torch.', '')}")
    xf = x.reshape(x.shape[0], -1) if _truthy(flatten) else x
    if w.dim() != 2 or xf.shape[-1] != w.shape[1] or \
            (num_hidden is not None and int(num_hidden) != w.shape[0]):
        raise MXNetError(f"{op}: weight shape {tuple(w.shape)} does not fit data shape "
                         f"{tuple(x.shape)} and num_hidden {num_hidden}")
    ctx = inputs[0]._ctx
    oshape = tuple(xf.shape[:-1]) + (w.shape[0],)
    calib = min_calib_range is not None and max_calib_range is not None
    float_out = _truthy(enable_float_output)
    if x.device.type == "meta":
        if not quantized or float_out:
            return _new(torch.empty(oshape, device="meta"), ctx)
        dt = torch.int32 if not calib else (
            torch.uint8 if _fc_out_unsigned(with_eltwise, eltwise_act) else torch.int8)
        return [_new(torch.empty(oshape, dtype=dt, device="meta"), ctx), _meta_range(ctx),
                _meta_range(ctx)]
    if not quantized:
        # a float operator, but MXNet gives it zero gradients (MakeZeroGradNodes) as well
        with torch.no_grad():
            r = F.linear(xf, w, b)
            if _truthy(with_eltwise):
                r = _act(r, eltwise_act)
        return _assign_outs(_link(r, list(inputs), ctx), out)
    with torch.no_grad():
        r, omin, omax = _quantized_fc(op, xf, w, b, ts, chw, calib, min_calib_range,
                                      max_calib_range, float_out, _truthy(with_eltwise),
                                      eltwise_act)
    if float_out:
        return _assign_outs(_link(r, list(inputs), ctx), out)
    return _assign_outs(_outputs(op, r, omin, omax, list(inputs), ctx), out)


def _fc_out_unsigned(with_eltwise, act):
    return _truthy(with_eltwise) and act in ("relu", "sigmoid", "softrelu")


def _quantized_fc(op, xf, w, b, ts, chw, calib, min_calib_range, max_calib_range, float_out,
                  with_eltwise, act):
    if xf.dtype not in _QTYPES:
        raise MXNetError(f"{op}: quantized data must be int8 or uint8, got "
                         f"{str(xf.dtype).replace('torch.', '')}")
    dmin = _F32(ts["data_min"].reshape(()).item())
    dmax = _F32(ts["data_max"].reshape(()).item())
    x_signed = xf.dtype == torch.int8
    dsc = _scale(x_signed, dmin, dmax)
    if chw:
        wf = w.to(torch.float32)
        bf = None if b is None else b.to(torch.float32)
        wsc, _, _ = _weight_scales(wf, bf, dsc, channelwise=True)
        wq = _codes(wf * torch.from_numpy(wsc).reshape(-1, 1), True).to(torch.float64)
        bq = None
        if bf is not None:
            bq = torch.round(bf * torch.from_numpy((wsc * dsc).astype(np.float32)))
            bq = bq.clamp_(-2147483648.0, 2147483647.0)
        wr = None
    else:
        if w.dtype != torch.int8:
            raise MXNetError(f"{op}: the quantized weight must be int8 codes, got "
                             f"{str(w.dtype).replace('torch.', '')}")
        wmin = _F32(ts["weight_min"].reshape(()).item())
        wmax = _F32(ts["weight_max"].reshape(()).item())
        ws = _scale(True, wmin, wmax)
        wq = w.to(torch.float64)
        bq = None
        if b is not None:
            bmin = _F32(ts["bias_min"].reshape(()).item())
            bmax = _F32(ts["bias_max"].reshape(()).item())
            bsc = _scale(True, bmin, bmax)
            resc = _F32(_F32(dsc * ws) / bsc)
            # oneDNN mishandles INT_MAX in the bias: MXNet caps the rescale at INT_MAX / 2
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                cap = _F32(_F32(_F32(_F32(2147483647 // 2) / _max_abs(bmin, bmax))) / bsc)
            if resc > cap:
                wres = _F32(_F32(_F32(cap * bsc) / dsc) / ws)
                wq = _codes((wq * float(wres)).to(torch.float32), True).to(torch.float64)
                ws = _F32(ws * wres)
                resc = cap
            bq = torch.round(b.to(torch.float32) * float(resc))
        wsc = np.array([ws], dtype=np.float32)
        wr = _max_abs(wmin, wmax)
    acc = xf.to(torch.float64) @ wq.t()
    v = acc.to(torch.float32)
    if bq is not None:
        v = v + bq.to(torch.float32)
    if float_out:
        rq = (_F32(1) / dsc / wsc).astype(np.float32)
        return v * torch.from_numpy(rq), None, None
    if calib:
        omin, omax = _F32(float(min_calib_range)), _F32(float(max_calib_range))
        unsigned = _fc_out_unsigned(with_eltwise, act)
        osc = _scale(not unsigned, omin, omax)
        rq = ((osc / dsc) / wsc).astype(np.float32)
        v = v * torch.from_numpy(rq)
        if with_eltwise:
            v = _act(v, act)
        return _codes(v, not unsigned), omin, omax
    # int32 output, MXNet's range for an s8 x (u8|s8) product
    if wr is None:
        raise MXNetError(f"{op}: channel-wise quantization needs a calibrated output range")
    dr = _max_abs(dmin, dmax)
    a_level = _F32(wr / _F32(127))
    b_level = _F32(dr / (_F32(127) if x_signed else _F32(255)))
    omax = _F32(_F32(a_level * b_level) * _INT32_MAX_F)
    if with_eltwise:
        v = _act(v, act)
    r = torch.nan_to_num(torch.round(v.to(torch.float64)), nan=2147483647.0)
    return r.clamp_(-2147483648.0, 2147483647.0).to(torch.int32), -omax, omax


# ------------------------------------------------------------------------------ symbol loading
def _sub_nodes(sub, node_name, op):
    if not isinstance(sub, dict) or not isinstance(sub.get("nodes"), list):
        raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): its subgraph is not "
                         "a symbol graph")
    return sub["nodes"]


def _sub_attrs(n):
    a = {}
    for key in ("param", "attr", "attrs"):
        part = n.get(key)
        if isinstance(part, dict):
            a.update({k: str(v) for k, v in part.items()})
    return a


def subgraph_attrs(op, attrs, subgraphs, node_name, parse):
    """The keyword arguments that evaluate an ``_sg_mkldnn_*`` node: its own attributes
    (``attrs``, already parsed) merged with those of the graph it fuses. ``parse`` turns
    MXNet attribute strings into Python values."""
    if not subgraphs or len(subgraphs) != 1:
        raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}) needs exactly one "
                         f"subgraph, got {len(subgraphs or [])}")
    nodes = _sub_nodes(subgraphs[0], node_name, op)
    a = dict(attrs)
    for old, new in (("with_relu", "with_act"), ("with_postsum_relu", "with_postsum_act")):
        if old in a:
            a[new] = a.pop(old)
    if op == "_sg_mkldnn_fully_connected":
        known = {"quantized", "with_eltwise", "min_calib_range", "max_calib_range",
                 "enable_float_output", "channel_wise_quantize"}
        for k2 in a:
            if k2 not in known:
                raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): unknown "
                                 f"attribute {k2}")
        fc = [n for n in nodes if n.get("op") == "FullyConnected"]
        if len(fc) != 1:
            raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): its subgraph "
                             "must hold one FullyConnected")
        fa = {k: parse(v) for k, v in _sub_attrs(fc[0]).items()}
        a["num_hidden"] = fa.get("num_hidden")
        a["no_bias"] = _truthy(fa.get("no_bias", False))
        a["flatten"] = _truthy(fa.get("flatten", True))
        acts = [n for n in nodes if n.get("op") == "Activation"]
        if _truthy(a.get("with_eltwise", False)):
            if len(acts) != 1:
                raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): "
                                 "with_eltwise needs one Activation in its subgraph")
            act = _sub_attrs(acts[0]).get("act_type", "relu")
            if act not in _ACTS:
                raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): "
                                 f"activation {act!r} is not supported")
            a["eltwise_act"] = act
        return a
    known = {"quantized", "with_bn", "with_act", "with_sum", "with_postsum_act",
             "min_calib_range", "max_calib_range", "dedup_sum"}
    for k2 in a:
        if k2 not in known:
            raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): unknown "
                             f"attribute {k2}")
    a.pop("dedup_sum", None)
    conv = [n for n in nodes if n.get("op") == "Convolution"]
    if len(conv) != 1:
        raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): its subgraph must "
                         "hold one Convolution")
    ca = {k: parse(v) for k, v in _sub_attrs(conv[0]).items() if not k.startswith("__")}
    for k2, v in ca.items():
        if k2 in ("kernel", "stride", "pad", "dilate", "num_filter", "num_group", "no_bias",
                  "layout"):
            a[k2] = v
        elif k2 not in ("workspace", "cudnn_tune", "cudnn_off"):
            raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): Convolution "
                             f"attribute {k2}={v!r} is not supported")
    if len(_pair(a.get("kernel", ()), 2, 1)) != 2:
        raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): only 2-D "
                         f"convolutions are supported, kernel {a.get('kernel')}")
    bn = [n for n in nodes if n.get("op") == "BatchNorm"]
    if _truthy(a.get("with_bn", False)) != bool(bn):
        raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): with_bn="
                         f"{a.get('with_bn', False)} but its subgraph has {len(bn)} BatchNorm")
    if bn:
        ba = {k: parse(v) for k, v in _sub_attrs(bn[0]).items()}
        a["bn_eps"] = float(ba.get("eps", 1e-3))
        a["bn_fix_gamma"] = _truthy(ba.get("fix_gamma", True))
    # activations in graph order: the one before the sum is act_type, the one after it
    # postsum_act_type
    acts = []
    seen_sum = False
    for n in nodes:
        if n.get("op") == "elemwise_add":
            seen_sum = True
        elif n.get("op") in ("Activation", "LeakyReLU", "clip"):
            if n.get("op") != "Activation":
                raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): fused "
                                 f"{n.get('op')} is not supported")
            kind = _sub_attrs(n).get("act_type", "relu")
            if kind not in _ACTS:
                raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): activation "
                                 f"{kind!r} is not supported")
            acts.append((seen_sum, kind))
    if _truthy(a.get("with_act", False)):
        pre = [k2 for post, k2 in acts if not post]
        if not pre:
            raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): with_act but "
                             "no Activation before the sum in its subgraph")
        a["act_type"] = pre[0]
    if _truthy(a.get("with_postsum_act", False)):
        post = [k2 for p2, k2 in acts if p2]
        if not post:
            raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): "
                             "with_postsum_act but no Activation after the sum")
        a["postsum_act_type"] = post[0]
    if _truthy(a.get("with_sum", False)) != seen_sum:
        raise MXNetError(f"load_json: operator {op!r} (node {node_name!r}): with_sum="
                         f"{a.get('with_sum', False)} does not match its subgraph")
    return a


def sg_param_shapes(op, attrs, shapes):
    """Shapes of an ``_sg_mkldnn_*`` node's parameter inputs from its data shape (for
    symbol shape inference): ``{input name: shape}``."""
    d = shapes.get("data")
    if op == "_sg_mkldnn_fully_connected":
        h = int(attrs.get("num_hidden"))
        fin = int(np.prod(d[1:])) if _truthy(attrs.get("flatten", True)) else d[-1]
        return {"weight": (h, fin), "bias": (h,), "data_min": (1,), "data_max": (1,),
                "weight_min": (1,), "weight_max": (1,), "bias_min": (1,), "bias_max": (1,)}
    nf = int(attrs.get("num_filter"))
    g = int(attrs.get("num_group", 1) or 1)
    k = _pair(attrs.get("kernel", ()), 2, 1)
    res = {"weight": (nf, d[1] // g) + tuple(k), "bias": (nf,), "gamma": (nf,), "beta": (nf,),
           "mean": (nf,), "var": (nf,), "data_min": (1,), "data_max": (1,), "sum_min": (1,),
           "sum_max": (1,)}
    return res


def sg_output_types(op, attrs, in_types):
    """Output dtypes (names) of a quantized / fused node for type inference, and the dtype
    its parameter inputs take."""
    if op == "_sg_mkldnn_fully_connected":
        if not _truthy(attrs.get("quantized", False)) or \
                _truthy(attrs.get("enable_float_output", False)):
            return ["float32"]
        if attrs.get("min_calib_range") is None or attrs.get("max_calib_range") is None:
            return ["int32", "float32", "float32"]
        u8 = _fc_out_unsigned(attrs.get("with_eltwise"), attrs.get("eltwise_act", "relu"))
        return ["uint8" if u8 else "int8", "float32", "float32"]
    if not _truthy(attrs.get("quantized", False)):
        return ["float32"]
    if attrs.get("min_calib_range") is None or attrs.get("max_calib_range") is None:
        return ["int32", "float32", "float32"]
    with_sum = _truthy(attrs.get("with_sum"))
    relu_like = ("relu", "sigmoid", "softrelu")
    u8 = (_truthy(attrs.get("with_act")) and not with_sum and attrs.get("act_type") in
          relu_like) or (_truthy(attrs.get("with_postsum_act")) and
                         attrs.get("postsum_act_type") in relu_like)
    return ["uint8" if u8 else "int8", "float32", "float32"]
