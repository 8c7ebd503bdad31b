"""Neural-network operators that the layers use (FullyConnected, Convolution, BatchNorm, ...).

MXNet 1.9.1's names, argument conventions and numerics, computed by torch.nn.functional.
Every op takes NDArrays, returns NDArrays on the data's context, and accepts ``out=``.
"""
from __future__ import annotations

import builtins
import numbers
import os

import torch
import torch.nn.functional as F

from .. import autograd as _ag_mod
from ..base import MXNetError, to_torch_dtype
from ..random import generator as _generator
from .ndarray import NDArray, _new, _run, _assign_out, _call_nograd
from . import _act_kernel, _conv_gemm, _conv_kernel, _pool_kernel

__all__ = ["FullyConnected", "Activation", "Convolution", "Deconvolution", "Pooling",
           "LeakyReLU", "BatchNorm", "LayerNorm", "InstanceNorm", "GroupNorm", "Dropout",
           "Embedding", "softmax_cross_entropy", "SequenceMask", "SequenceLast",
           "SequenceReverse", "Pad", "pad", "UpSampling", "L2Normalization", "smooth_l1",
           "SoftmaxActivation", "LRN", "CTCLoss", "ctc_loss"]

_state = _ag_mod._state


def _tt(x, op, what="data"):
    if isinstance(x, NDArray):
        return x._t
    raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")


def _ft(x, op, what="data"):
    """``_tt`` for operators MXNet runs on floating-point data only."""
    t = _tt(x, op, what)
    if not t.is_floating_point():
        raise MXNetError(f"{op}: this operator supports floating point types only, got "
                         f"{str(t.dtype).replace('torch.', '')}")
    return t


def _tuple(v, n, default):
    """MXNet's shape-tuple parameters: () means the default, an int repeats."""
    if v is None or v == () or v == []:
        return (default,) * n
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(a) for a in v)
    if len(v) != n:
        raise MXNetError(f"expected {n} values for a {n}-D operator, got {v}")
    return v


# ---------------------------------------------------------------- FullyConnected
def FullyConnected(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True,
                   out=None, name=None):
    """Fully connected layer: ``data @ weight.T + bias``.

    Parameters
    ----------
    data : NDArray
        Input; with ``flatten`` it is reshaped to ``(batch, -1)``, otherwise the last axis
        is contracted.
    weight : NDArray
        Shape ``(num_hidden, in_units)``.
    bias : NDArray, optional
        Shape ``(num_hidden,)``; ignored with ``no_bias``.
    num_hidden : int
        Number of output units (checked against ``weight``).
    no_bias : bool
    flatten : bool
    """
    x = data._t
    w = weight._t
    if flatten and x.dim() != 2:
        rest = 1
        for d in x.shape[1:]:
            rest *= d
        x = x.reshape(x.shape[0] if x.dim() else 1, rest)  # (0, -1) is ambiguous to torch
    if x.shape[-1] != w.shape[-1] or w.dim() != 2:
        raise MXNetError(f"FullyConnected: input has {x.shape[-1]} features (data shape "
                         f"{data.shape}) but weight has shape {weight.shape}")
    if num_hidden is not None and w.shape[0] != num_hidden:
        raise MXNetError(f"FullyConnected: num_hidden={num_hidden} but weight has shape "
                         f"{weight.shape}")
    b = None if (no_bias or bias is None) else bias._t
    if b is not None and b.dim() != 1:
        # MXNet takes a (num_hidden, 1, ...) bias too
        if b.dim() == 0 or b.shape[0] != w.shape[0] or b.numel() != w.shape[0]:
            raise MXNetError(f"FullyConnected: unexpected shape for bias {bias.shape} "
                             f"(num_hidden {w.shape[0]})")
        b = b.reshape(-1)
    if _state.recording or not (w.requires_grad or x.requires_grad or
                                (b is not None and b.requires_grad)):
        r = F.linear(x, w, b)   # (no input in a graph: grad mode changes nothing)
    else:
        r = _call_nograd(F.linear, x, w, b)
    if out is None:
        return _new(r, data._ctx)
    return _assign_out(_new(r, data._ctx), out)


# ---------------------------------------------------------------- Activation
_ACTS = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": _act_kernel.tanh,
         "softrelu": F.softplus, "softsign": F.softsign}


def Activation(data, act_type=None, out=None, name=None):
    """Elementwise activation: relu, sigmoid, tanh, softrelu or softsign (MXNet 1.9.1's set).

    Parameters
    ----------
    act_type : {'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required
        The activation; MXNet has no default for it.
    """
    if act_type is None:
        raise MXNetError("Required parameter act_type of string is not presented, in "
                         "operator Activation")
    fn = _ACTS.get(act_type)
    if fn is None:
        raise MXNetError(f"Activation: unknown act_type {act_type!r}; expected one of "
                         f"{sorted(_ACTS)}")
    return _assign_out(_new(_run(fn, _ft(data, "Activation")), data._ctx), out)


Activation._mx_required = ("act_type",)
FullyConnected._mx_required = ("num_hidden",)


# ---------------------------------------------------------------- convolution
_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_DECONV = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
_CHANNEL_FIRST = {"NCW": 1, "NCHW": 2, "NCDHW": 3}
_CHANNEL_LAST = {"NWC": 1, "NHWC": 2, "NDHWC": 3}


def _layout(layout, nd, op):
    """Whether ``layout`` puts channels last (checked against the kernel's rank)."""
    if layout is None:
        return False
    if layout in _CHANNEL_FIRST and _CHANNEL_FIRST[layout] == nd:
        return False
    if layout in _CHANNEL_LAST and _CHANNEL_LAST[layout] == nd:
        return True
    raise MXNetError(f"{op}: layout {layout!r} does not fit a {nd}-D kernel; expected "
                     f"{[k for k, v in _CHANNEL_FIRST.items() if v == nd]} or "
                     f"{[k for k, v in _CHANNEL_LAST.items() if v == nd]}")


def _to_cf(t):
    return t.movedim(-1, 1)


def _channels_last_mode():
    m = os.environ.get("NEOGLUON_CHANNELS_LAST", "auto").strip().lower() or "auto"
    return {"0": "off", "false": "off", "no": "off", "1": "on", "true": "on",
            "yes": "on"}.get(m, m if m in ("auto", "on", "off") else "auto")


_CL_MODE = [_channels_last_mode()]
_CL_MAX_CHANNELS = 32


def _oneDNN_channels_last(x):
    """Whether a 2-D CPU convolution of ``x`` runs on channels-last (NHWC) memory.

    oneDNN's NCHW convolutions on this kind of CPU reorder to a blocked layout and back on
    every call; on NHWC memory they run in place. For inputs of few channels that reorder is
    a large part of the work (one thread: ResNet-20 on 28x28 CIFAR images, 16-32 channels,
    forward and backward 1.2-2.7x faster per layer, its training step 399 -> 327 ms; LeNet's
    20-channel layer 13.1 -> 9.2 ms), for wide layers it is not (ResNet-18's 64-512 channels:
    no gain in the step). The output stays channels-last, so the next layers (BatchNorm,
    activations, the next convolution) read it without a copy. ``NEOGLUON_CHANNELS_LAST``:
    ``auto`` (inputs of at most 32 channels), ``on`` (every 2-D CPU convolution), ``off``.
    """
    mode = _CL_MODE[0]
    if mode == "off" or x.device.type != "cpu" or not x.is_floating_point():
        return False
    return mode == "on" or x.shape[1] <= _CL_MAX_CHANNELS


def _to_cl(t):
    return t.movedim(1, -1)


def Convolution(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(),
                num_filter=None, num_group=1, workspace=1024, no_bias=False, cudnn_tune=None,
                cudnn_off=False, layout=None, out=None, name=None):
    """1-D, 2-D or 3-D convolution (cross-correlation), as MXNet's ``Convolution``.

    Parameters
    ----------
    data : NDArray
        ``(batch, channel, *spatial)`` (or channels last with ``layout='NWC'/'NHWC'/'NDHWC'``).
    weight : NDArray
        ``(num_filter, channel // num_group, *kernel)`` (channels last with a channel-last
        layout).
    bias : NDArray, optional
        ``(num_filter,)``; ignored with ``no_bias``.
    kernel, stride, dilate, pad : tuple of int
        Per spatial axis; stride and dilate default to 1, pad to 0.
    num_filter : int
    num_group : int
        Number of groups the channels are split into.
    """
    x = _tt(data, "Convolution")
    w = _tt(weight, "Convolution", "weight")
    nd = len(kernel) if kernel else w.dim() - 2
    if nd not in _CONV:
        raise MXNetError(f"Convolution: only 1-D, 2-D and 3-D kernels are supported, got "
                         f"kernel={kernel}")
    cl = _layout(layout, nd, "Convolution")
    if x.dim() != nd + 2:
        raise MXNetError(f"Convolution: a {nd}-D kernel {tuple(kernel)} needs {nd + 2}-D data, "
                         f"got data of shape {data.shape}")
    if cl:
        x, w = _to_cf(x), _to_cf(w)
    stride = _tuple(stride, nd, 1)
    dilate = _tuple(dilate, nd, 1)
    pad = _tuple(pad, nd, 0)
    c = x.shape[1]
    if c % num_group or w.dim() != nd + 2 or w.shape[1] * num_group != c or (
            kernel and tuple(w.shape[2:]) != tuple(kernel)) or (
            num_filter is not None and w.shape[0] != num_filter):
        raise MXNetError(f"Convolution: weight shape {weight.shape} does not match data shape "
                         f"{data.shape} with kernel={tuple(kernel)}, num_filter={num_filter}, "
                         f"num_group={num_group}")
    b = None if (no_bias or bias is None) else bias._t
    try:
        # training a 2-D convolution's weight: a kernel or the products may be faster
        train_2d = nd == 2 and w.requires_grad and torch.is_grad_enabled()
        if train_2d and _conv_kernel.usable(x, w, stride, dilate, num_group):
            r = _run(_conv_kernel.conv2d, x, w, b, pad)
        elif train_2d and _conv_gemm.usable(x, w, stride, pad, dilate, num_group):
            r = _run(_conv_gemm.conv2d, x, w, b, stride, pad)
        else:
            if nd == 2 and _oneDNN_channels_last(x):
                cl_fmt = torch.channels_last
                x = x.contiguous(memory_format=cl_fmt)
                w = w.contiguous(memory_format=cl_fmt)
            r = _run(_CONV[nd], x, w, b, stride, pad, dilate, num_group)
    except RuntimeError as err:
        raise MXNetError(f"Convolution: data shape {data.shape}, weight shape {weight.shape}, "
                         f"stride={stride}, pad={pad}, dilate={dilate}: {err}") from None
    if cl:
        r = _to_cl(r)
    return _assign_out(_new(r, data._ctx), out)


def Deconvolution(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(), adj=(),
                  target_shape=(), num_filter=None, num_group=1, workspace=512, no_bias=True,
                  cudnn_tune=None, cudnn_off=False, layout=None, out=None, name=None):
    """Transposed convolution, as MXNet's ``Deconvolution``.

    The output size per axis is ``stride * (in - 1) + dilate * (kernel - 1) + 1 - 2 * pad +
    adj``. With ``target_shape`` (non-zero), ``pad`` and ``adj`` are derived from it the way
    MXNet does, so that the output has exactly that spatial shape. ``weight`` has shape
    ``(channel, num_filter // num_group, *kernel)``; ``no_bias`` defaults to True, as in MXNet.
    """
    x = _tt(data, "Deconvolution")
    w = _tt(weight, "Deconvolution", "weight")
    nd = len(kernel) if kernel else w.dim() - 2
    if nd not in _DECONV:
        raise MXNetError(f"Deconvolution: only 1-D, 2-D and 3-D kernels are supported, got "
                         f"kernel={kernel}")
    cl = _layout(layout, nd, "Deconvolution")
    if x.dim() != nd + 2:
        raise MXNetError(f"Deconvolution: a {nd}-D kernel {tuple(kernel)} needs {nd + 2}-D "
                         f"data, got data of shape {data.shape}")
    if cl:
        x, w = _to_cf(x), _to_cf(w)
    stride = _tuple(stride, nd, 1)
    dilate = _tuple(dilate, nd, 1)
    pad = list(_tuple(pad, nd, 0))
    adj = list(_tuple(adj, nd, 0))
    c = x.shape[1]
    if w.dim() != nd + 2 or w.shape[0] != c or c % num_group or (
            kernel and tuple(w.shape[2:]) != tuple(kernel)) or (
            num_filter is not None and w.shape[1] * num_group != num_filter):
        raise MXNetError(f"Deconvolution: weight shape {weight.shape} does not match data "
                         f"shape {data.shape} with kernel={tuple(kernel)}, num_filter="
                         f"{num_filter}, num_group={num_group}")
    ks = w.shape[2:]
    if target_shape and any(int(s) != 0 for s in target_shape):
        target_shape = _tuple(target_shape, nd, 0)
        for i in range(nd):
            full = stride[i] * (x.shape[2 + i] - 1) + dilate[i] * (ks[i] - 1) + 1
            if full < target_shape[i]:
                raise MXNetError(f"Deconvolution: target_shape {tuple(target_shape)} is too "
                                 f"big for data shape {data.shape} with stride {stride}")
            total = full - target_shape[i]
            adj[i] = total % 2
            pad[i] = (total + 1) // 2
    b = None if (no_bias or bias is None) else bias._t
    try:
        r = _run(_DECONV[nd], x, w, b, stride, tuple(pad), tuple(adj), num_group, dilate)
    except RuntimeError as err:
        raise MXNetError(f"Deconvolution: data shape {data.shape}, weight shape "
                         f"{weight.shape}, stride={stride}, pad={tuple(pad)}, adj={tuple(adj)}, "
                         f"dilate={dilate}: {err}") from None
    if cl:
        r = _to_cl(r)
    return _assign_out(_new(r, data._ctx), out)


# ---------------------------------------------------------------- pooling
_MAXPOOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVGPOOL = {2: F.avg_pool2d, 3: F.avg_pool3d}


def _max_pool(x, nd, kernel, stride, pad, outs, ceil):
    """torch's max pooling (``ceil_mode=ceil`` gives ``outs``), through the compiled CPU kernel
    where it applies (same bits, several times faster: ``_pool_kernel``).

    A channels-last input (a few-channel convolution's output, see ``_oneDNN_channels_last``)
    stays channels-last: torch's NHWC kernel runs along the channels with vector loads and is
    faster than either NCHW path (LeNet's 20-channel 8x8 maps: 0.08 ms against 1.4 ms for the
    copy to NCHW and the kernel), with the same values, positions and tie/NaN rule. The output
    stays channels-last only where a following convolution would choose that layout itself
    (at most ``_CL_MAX_CHANNELS`` channels); wider maps go back to NCHW (a copy of the pooled,
    smaller map), so the layers after a ResNet stem run as they did without the pooling
    change (the same summation order, hence the same float32 numbers)."""
    if nd == 2 and x.dim() == 4 and x.shape[1] > 1 and not x.is_contiguous() and \
            x.is_contiguous(memory_format=torch.channels_last):
        r = _MAXPOOL[2](x, kernel, stride, pad, 1, ceil)
        return r if x.shape[1] <= _CL_MAX_CHANNELS else r.contiguous()
    if nd == 2 and _pool_kernel.usable(x):
        return _pool_kernel.max_pool2d(x, kernel, stride, pad, outs, ceil)
    if nd == 1 and _pool_kernel.usable(x.unsqueeze(2)):
        return _pool_kernel.max_pool2d(x.unsqueeze(2), (1, kernel[0]), (1, stride[0]),
                                       (0, pad[0]), (1, outs[0]), ceil).squeeze(2)
    return _MAXPOOL[nd](x, kernel, stride, pad, 1, ceil)


def _pool_out(n, k, s, p, convention):
    if convention == "valid":
        return (n + 2 * p - k) // s + 1
    if convention == "full":
        return -((-(n + 2 * p - k)) // s) + 1
    return -(-n // s)  # 'same'


def _window_counts(n, k, s, p, out, lo, hi, device, dtype):
    """Per-window number of positions of a 1-D pooling window inside [lo, hi)."""
    starts = torch.arange(out, device=device, dtype=torch.int64) * s - p
    ends = starts + k
    return (ends.clamp(max=hi) - starts.clamp(min=lo)).clamp(min=0).to(dtype)


def _sum_pool(x, nd, kernel, stride, pads):
    """Window sums of ``x`` (zero padded ``pads`` = [(left, right), ...])."""
    flat_pad = []
    for lo, hi in reversed(pads):
        flat_pad += [lo, hi]
    xp = F.pad(x, flat_pad) if any(flat_pad) else x
    if nd == 1:
        r = F.avg_pool2d(xp.unsqueeze(-2), (1, kernel[0]), (1, stride[0]), divisor_override=1)
        r = r.squeeze(-2)
    else:
        r = _AVGPOOL[nd](xp, kernel, stride, divisor_override=1)
    return r


def _pool_general(x, nd, kernel, stride, pad, outs, pool_type, count_include_pad, p_value):
    """Pooling by explicit padding, for the cases torch's pooling cannot express."""
    spatial = x.shape[2:]
    pads = []
    for i in range(nd):
        need = (outs[i] - 1) * stride[i] + kernel[i]
        right = max(need - spatial[i] - pad[i], 0)
        pads.append((pad[i], right))
    if pool_type == "max":
        flat_pad = []
        for lo, hi in reversed(pads):
            flat_pad += [lo, hi]
        low = torch.finfo(x.dtype).min if x.is_floating_point() else torch.iinfo(x.dtype).min
        xp = F.pad(x, flat_pad, value=low) if any(flat_pad) else x
        if nd == 1:
            return F.max_pool2d(xp.unsqueeze(-2), (1, kernel[0]), (1, stride[0])).squeeze(-2)
        return _MAXPOOL[nd](xp, kernel, stride)
    src = x.pow(p_value) if pool_type == "lp" else x
    r = _sum_pool(src, nd, kernel, stride, pads)
    if pool_type == "lp":
        if p_value == 1:
            return r
        if p_value == 2:
            return r.sqrt()
        return r.sign() * r.abs().pow(1.0 / p_value)
    if pool_type == "sum":
        return r
    # avg: divide by the window's size inside the padded (or, without count_include_pad,
    # the original) extent, as MXNet does; windows wholly outside give 0.
    counts = None
    for i in range(nd):
        n = spatial[i]
        lo, hi = (-pad[i], n + pad[i]) if count_include_pad else (0, n)
        c = _window_counts(n, kernel[i], stride[i], pad[i], outs[i], lo, hi, x.device, x.dtype)
        shape = [1] * nd
        shape[i] = outs[i]
        c = c.reshape(shape)
        counts = c if counts is None else counts * c
    return torch.where(counts > 0, r / counts.clamp(min=1), torch.zeros_like(r))


def Pooling(data, kernel=(), pool_type="max", global_pool=False, cudnn_off=False,
            pooling_convention="valid", stride=(), pad=(), p_value=None,
            count_include_pad=None, layout=None, out=None, name=None):
    """Max, average, sum or Lp pooling over 1-3 spatial axes, as MXNet's ``Pooling``.

    Parameters
    ----------
    kernel, stride, pad : tuple of int
        Window size, step (default 1) and symmetric zero padding (default 0) per axis.
    pool_type : {'max', 'avg', 'sum', 'lp'}
    global_pool : bool
        Pool over the whole spatial extent (``kernel``, ``stride`` and ``pad`` are ignored).
    pooling_convention : {'valid', 'full', 'same'}
        Output size ``floor`` (valid) or ``ceil`` (full) of ``(in + 2 * pad - kernel) /
        stride + 1``; 'same' gives ``ceil(in / stride)``.
    count_include_pad : bool
        For 'avg', whether padded positions count in the divisor (default True).
    p_value : int
        The ``p`` of Lp pooling.
    """
    x = _ft(data, "Pooling")
    if pool_type not in ("max", "avg", "sum", "lp"):
        raise MXNetError(f"Pooling: pool_type must be 'max', 'avg', 'sum' or 'lp', got "
                         f"{pool_type!r}")
    if pooling_convention not in ("valid", "full", "same"):
        raise MXNetError(f"Pooling: pooling_convention must be 'valid', 'full' or 'same', got "
                         f"{pooling_convention!r}")
    nd = x.dim() - 2
    if nd not in (1, 2, 3):
        raise MXNetError(f"Pooling: data must be 3-D, 4-D or 5-D, got shape {data.shape}")
    cl = _layout(layout, nd, "Pooling")
    if cl:
        x = _to_cf(x)
    p_value = 2 if p_value is None else int(p_value)
    if count_include_pad is None:
        count_include_pad = True
    if global_pool:
        dims = tuple(range(2, x.dim()))
        if pool_type == "max":
            fn = lambda t: torch.amax(t, dim=dims, keepdim=True)  # noqa: E731
        elif pool_type == "avg":
            fn = lambda t: torch.mean(t, dim=dims, keepdim=True)  # noqa: E731
        elif pool_type == "sum":
            fn = lambda t: torch.sum(t, dim=dims, keepdim=True)  # noqa: E731
        else:
            def fn(t):
                s = t.pow(p_value).sum(dim=dims, keepdim=True)
                return s if p_value == 1 else s.sign() * s.abs().pow(1.0 / p_value)
        r = _run(fn, x)
    else:
        if isinstance(kernel, numbers.Integral):
            kernel = (int(kernel),)   # MXNet reads an int as a one-value shape
        if not kernel or len(kernel) != nd:
            raise MXNetError(f"Pooling: kernel {tuple(kernel)} must have one size per spatial "
                             f"axis of data shape {data.shape}")
        kernel = tuple(int(k) for k in kernel)
        stride = _tuple(stride, nd, 1)
        if isinstance(pad, (tuple, list)) and len(pad) > nd:
            # MXNet 1.9.1 reads the first nd values of a longer pad (GluonCV's DropBlock passes
            # (top, bottom, left, right) and gets (top, bottom)).
            pad = tuple(pad)[:nd]
        pad = _tuple(pad, nd, 0)
        spatial = x.shape[2:]
        if any(p >= k for p, k in zip(pad, kernel)):
            raise MXNetError(f"Pooling: pad {pad} must be smaller than kernel {kernel}")
        if pooling_convention == "same":
            if any(pad):
                raise MXNetError("Pooling: the 'same' pooling convention does not take pad, "
                                 f"got pad={pad}")
            outs = tuple(_pool_out(spatial[i], kernel[i], stride[i], 0, "same")
                         for i in range(nd))
            # Pad like 'SAME' elsewhere: the excess is split, the larger half on the right.
            pad = tuple(max((outs[i] - 1) * stride[i] + kernel[i] - spatial[i], 0) // 2
                        for i in range(nd))
        else:
            outs = tuple(_pool_out(spatial[i], kernel[i], stride[i], pad[i], pooling_convention)
                         for i in range(nd))
        if any(o <= 0 for o in outs):
            raise MXNetError(f"Pooling: kernel {kernel} with pad {pad} is larger than the "
                             f"input's spatial shape {tuple(spatial)}")
        fast = pooling_convention != "same" and all(2 * p <= k for p, k in zip(pad, kernel))
        ceil = pooling_convention == "full"
        if fast and ceil:
            # torch drops a last window that starts in the right padding; MXNet keeps it.
            fast = all((o - 1) * s < n + p for o, s, n, p in zip(outs, stride, spatial, pad))
        if fast and pool_type == "max":
            r = _run(_max_pool, x, nd, kernel, stride, pad, outs, ceil)
        elif fast and pool_type == "avg" and nd > 1:
            r = _run(_AVGPOOL[nd], x, kernel, stride, pad, ceil, count_include_pad)
        elif fast and pool_type == "avg":
            r = _run(F.avg_pool1d, x, kernel, stride, pad, ceil, count_include_pad)
        else:
            r = _run(_pool_general, x, nd, kernel, stride, pad, outs, pool_type,
                     count_include_pad, p_value)
    if cl:
        r = _to_cl(r)
    return _assign_out(_new(r, data._ctx), out)


# ---------------------------------------------------------------- LeakyReLU
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _prelu_gamma_shape(gshape, dshape):
    """Where prelu's gamma lies in the data: its axes, matched from the last, fill the data's
    axes 1 and 0 (a gamma axis of length 1 broadcasts); every other data axis broadcasts.
    So gamma (C,) is per channel and (N, C) per sample and channel, as in MXNet."""
    res = [1] * len(dshape)
    s = len(gshape) - 1
    for i in range(min(len(dshape) - 1, 1), -1, -1):
        if s >= 0 and (dshape[i] == gshape[s] or gshape[s] == 1):
            res[i] = gshape[s]
            s -= 1
    if s >= 0:
        raise MXNetError(f"LeakyReLU: prelu gamma of shape {gshape} does not match axes 0 and "
                         f"1 of data shape {dshape}")
    return tuple(res)


def LeakyReLU(data, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
              upper_bound=0.334, out=None, name=None):
    """Leaky rectifiers and relatives, as MXNet's ``LeakyReLU``.

    ``act_type``: 'leaky' (``x`` or ``slope * x``), 'prelu' (learned ``gamma`` per channel,
    axis 1), 'elu' (``slope * (exp(x) - 1)`` below 0), 'selu', 'gelu' (erf form) and 'rrelu'
    (random slope in [lower_bound, upper_bound) when training, their mean otherwise; returns
    ``[output, slopes]`` as MXNet does).
    """
    x = _tt(data, "LeakyReLU")
    ctx = data._ctx
    if act_type == "leaky":
        r = _run(F.leaky_relu, x, float(slope))
    elif act_type == "prelu":
        if gamma is None:
            raise MXNetError("LeakyReLU: act_type='prelu' needs the gamma array")
        g = gamma._t
        if g.numel() != 1:
            g = g.reshape(_prelu_gamma_shape(tuple(gamma.shape), tuple(data.shape)))
        else:
            g = g.reshape(())
        r = _run(lambda: torch.where(x > 0, x, x * g))
    elif act_type == "elu":
        r = _run(F.elu, x, float(slope))
    elif act_type == "selu":
        r = _run(F.selu, x)
    elif act_type == "gelu":
        r = _run(F.gelu, x)
    elif act_type == "rrelu":
        if _state.training:
            slopes = torch.empty_like(x, requires_grad=False).uniform_(
                lower_bound, upper_bound, generator=_generator(x.device))
        else:
            slopes = torch.zeros_like(x, requires_grad=False)
        s = slopes if _state.training else (lower_bound + upper_bound) / 2.0
        r = _run(lambda: torch.where(x > 0, x, x * s))
        res = _new(r, ctx)
        if out is not None:
            out[:] = res
            res = out
        return [res, _new(slopes, ctx)]
    else:
        raise MXNetError(f"LeakyReLU: unknown act_type {act_type!r}; expected one of "
                         "['elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu']")
    return _assign_out(_new(r, ctx), out)


# ---------------------------------------------------------------- normalisation
def _moving_update(mm, mv, mean, var, momentum):
    # MXNet folds the batch statistics into the moving ones in its backward pass (with the
    # biased variance), so the update runs from a hook on the output's gradient.

    def hook(grad):
        with torch.no_grad():
            _fold_moving(mm, mv, mean, var, momentum)
        return None
    return hook


def _fold_moving(mm, mv, mean, var, momentum):
    """``moving = moving * momentum + batch * (1 - momentum)`` for both statistics, in place
    (two kernels); the hook above and a CUDA-graphed backward (gluon._cudagraph) share it."""
    torch._foreach_mul_([mm, mv], momentum)
    torch._foreach_add_([mm, mv], [mean, var], alpha=1.0 - momentum)


# Free (batch mean, batch variance) scratch pairs for BatchNorm's fused kernel, per (channels,
# dtype, device): a training forward takes one and its gradient hook (_Fold) gives it back
# when the autograd graph that holds the hook is freed.
_BN_FREE: dict = {}


def _plain_eager(x):
    """Whether ops on ``x`` run eagerly on real memory (no tracing mode, no CUDA graph being
    captured): only then can BatchNorm reuse scratch buffers from one call to the next."""
    if torch._C._is_torch_function_mode_enabled() or torch._C._len_torch_dispatch_stack():
        return False
    return not (x.is_cuda and torch.cuda.is_current_stream_capturing())


class _Fold:
    """BatchNorm's moving-statistic update, queued from a hook on the output's gradient
    (MXNet folds the statistics in its backward) and made when that backward returns
    (``_fold_queued``): ``moving = moving * momentum + batch * (1 - momentum)`` with the biased
    batch variance, as ``_fold_moving``. ``st`` holds the batch mean and the unbiased variance
    that torch's fused kernel wrote (a scratch pair, the two rows of the (2, channels) buffer
    ``st[2]``, which its backward has saved: read only
    while the graph may run again). The kernel writes ``1 * batch + 0 * scratch``, so a pair
    is reused only when it holds zeros: after a backward that freed the graph, the fold zeroes
    the pairs it read (``clean``), and the pair goes back to ``free`` when the graph holding
    the hook is freed."""
    __slots__ = ("mm", "mv", "st", "momentum", "k", "free", "clean")

    def __init__(self, mm, mv, st, momentum, n, free):
        self.mm, self.mv, self.st, self.momentum, self.free = mm, mv, st, momentum, free
        self.k = (n - 1) / n if n > 1 else 0.0   # (n = 1: torch's unbiased variance is NaN)
        self.clean = False

    def __call__(self, grad):
        _ag_mod._AFTER.append(self)
        return None

    def __del__(self):
        if self.clean:
            self.free.append(self.st)


def _fold_queued(queue, retained=False):
    """Fold the moving statistics of every BatchNorm whose hook fired in a backward: three
    multi-tensor aten calls per (momentum, dtype, device) group for the whole network instead
    of a few per layer, and one more that zeroes the scratch pairs for reuse when the graph
    was not ``retained``. A layer used twice in the graph is folded in the order its hooks
    fired (a second round), as sequential updates would."""
    folds = queue[:]
    del queue[:len(folds)]
    rounds = []           # [(moving tensors seen, {group key: [folds]})]
    for f in folds:
        key = (f.momentum, f.mm.dtype, f.mv.dtype, f.mm.device)
        for rnd in rounds:
            if id(f.mm) not in rnd[0] and id(f.mv) not in rnd[0]:
                break
        else:
            rnd = (set(), {})
            rounds.append(rnd)
        rnd[0].update((id(f.mm), id(f.mv)))
        rnd[1].setdefault(key, []).append(f)
    with torch.no_grad():
        for _, groups in rounds:
            for (m, *_), fs in groups.items():
                uv = [f.st[1] for f in fs]
                if all(f.k for f in fs):
                    bv = torch._foreach_mul(uv, [f.k for f in fs])
                else:
                    bv = [u * f.k if f.k else torch.zeros_like(u) for f, u in zip(fs, uv)]
                moving = [t for f in fs for t in (f.mm, f.mv)]
                batch = [t for f, v in zip(fs, bv) for t in (f.st[0], v)]
                torch._foreach_mul_(moving, m)
                torch._foreach_add_(moving, batch, alpha=1.0 - m)
        if not retained:
            scratch = [f.st[2] for f in folds]
            if scratch:
                torch._foreach_zero_(scratch)
            for f in folds:
                f.clean = True


def BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
              fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
              cudnn_off=False, min_calib_range=None, max_calib_range=None, out=None,
              name=None):
    """Batch normalisation, as MXNet's ``BatchNorm``.

    In training mode (``autograd.is_training()``) and without ``use_global_stats`` the batch
    mean and biased variance normalise the data; ``moving_mean`` and ``moving_var`` are then
    updated in place (``moving = moving * momentum + batch * (1 - momentum)``) when the
    gradient flows back through the output, which is when MXNet 1.x updates them. Otherwise
    the moving statistics normalise the data. With ``fix_gamma`` gamma counts as 1 (and in
    training mode is set to 1 in place, as MXNet does). With ``output_mean_var`` the result is
    ``[out, mean, inverse std]``.
    """
    if fix_gamma:
        for arr, what in ((data, "data"), (gamma, "gamma"), (beta, "beta"),
                          (moving_mean, "moving_mean"), (moving_var, "moving_var")):
            st = getattr(arr, "stype", "default")
            if st != "default":
                # MXNet's storage-type inference refuses it (it would set gamma to 1 in place)
                raise MXNetError(f"BatchNorm: fix_gamma=True is not supported for sparse "
                                 f"ndarrays ({what} is {st}); use fix_gamma=False or dense "
                                 "inputs")
    x = _tt(data, "BatchNorm")
    g = _tt(gamma, "BatchNorm", "gamma")
    b = _tt(beta, "BatchNorm", "beta")
    mm = _tt(moving_mean, "BatchNorm", "moving_mean")
    mv = _tt(moving_var, "BatchNorm", "moving_var")
    nd = x.dim()
    ax = axis % nd if nd else 0
    c = x.shape[ax] if nd else 1
    for arr, what in ((g, "gamma"), (b, "beta"), (mm, "moving_mean"), (mv, "moving_var")):
        if arr.numel() != c:
            raise MXNetError(f"BatchNorm: {what} has shape {tuple(arr.shape)} but data shape "
                             f"{data.shape} has {c} channels on axis {axis}")
    training = _state.training and not use_global_stats
    if fix_gamma:
        if training:
            with torch.no_grad():
                g.fill_(1.0)
        if _state.recording and g.requires_grad:
            g = g * 0.0 + 1.0  # gamma's gradient is 0, as in MXNet
        else:
            g = torch.ones_like(g, requires_grad=False)
    xc = x if ax == 1 else x.movedim(ax, 1)
    if nd == 1:
        xc = x.reshape(1, -1)
    hooked = training and _state.recording and not output_mean_var and _plain_eager(x)
    if hooked:
        # The batch statistics come out of the fused kernel itself: with momentum 1 torch
        # writes the batch mean and the unbiased variance into a scratch pair (reused: the
        # forward issues the kernel alone); the hook folds them into the moving ones.
        key = (c, mm.dtype, x.device)
        free = _BN_FREE.get(key)
        if free is None:
            free = _BN_FREE.setdefault(key, [])
        try:
            st = free.pop()
        except IndexError:   # (mean, variance, the (2, c) buffer both are rows of)
            base = torch.zeros((2, c), dtype=mm.dtype, device=x.device)
            st = (*base.unbind(0), base)
        r = _run(torch.batch_norm, xc, g, b, st[0], st[1], True, 1.0, eps,
                 torch.backends.cudnn.enabled)
        if r.requires_grad:
            r.register_hook(_Fold(mm, mv, st, float(momentum), xc.numel() // max(c, 1), free))
    elif training:
        # As above, with new scratch buffers (a traced or captured graph, or no hook) and the
        # biased variance computed here (for output_mean_var, or for the compiled graph's
        # hook plans, gluon._compile).
        mean, uvar = torch.zeros((2, c), dtype=mm.dtype, device=x.device)  # (one fill)
        # torch.batch_norm, not F.batch_norm: the latter refuses one value per channel
        # (batch 1 after global pooling, as in GluonCV's PSPNet/DeepLab heads), which MXNet
        # normalises to beta.
        r = _run(torch.batch_norm, xc, g, b, mean, uvar, True, 1.0, eps,
                 torch.backends.cudnn.enabled)
        n = xc.numel() // max(c, 1)
        # MXNet uses the biased variance (torch saved uvar for backward: no in-place here).
        var = uvar * ((n - 1) / n) if n > 1 else torch.zeros_like(uvar)
        if _state.recording and r.requires_grad:
            r.register_hook(_moving_update(mm, mv, mean, var, float(momentum)))
    else:
        mean, var = mm, mv
        r = _run(F.batch_norm, xc, mm.detach(), mv.detach(), g, b, False, 0.0, eps)
    if nd == 1:
        r = r.reshape(x.shape)
    elif ax != 1:
        r = r.movedim(1, ax)
    res = _assign_out(_new(r, data._ctx), out)
    if output_mean_var:
        with torch.no_grad():
            invstd = torch.rsqrt(var.detach() + eps)
        return [res, _new(mean.detach().clone(), data._ctx), _new(invstd, data._ctx)]
    return res


def LayerNorm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False, out=None,
              name=None):
    """Layer normalisation over one ``axis``; with ``output_mean_var`` also returns the mean
    and standard deviation (``sqrt(var + eps)``), keeping the axis with size 1."""
    x = _tt(data, "LayerNorm")
    g = _tt(gamma, "LayerNorm", "gamma")
    b = _tt(beta, "LayerNorm", "beta")
    ax = axis % x.dim()
    n = x.shape[ax]
    if g.numel() != n or b.numel() != n:
        raise MXNetError(f"LayerNorm: gamma {gamma.shape} and beta {beta.shape} must have "
                         f"{n} elements for axis {axis} of data shape {data.shape}")
    if ax == x.dim() - 1:
        r = _run(F.layer_norm, x, (n,), g, b, eps)
    else:
        r = _run(lambda: F.layer_norm(x.movedim(ax, -1), (n,), g, b, eps).movedim(-1, ax))
    res = _assign_out(_new(r, data._ctx), out)
    if output_mean_var:
        with torch.no_grad():
            var, mean = torch.var_mean(x.detach(), dim=ax, unbiased=False, keepdim=True)
        return [res, _new(mean, data._ctx), _new(torch.sqrt(var + eps), data._ctx)]
    return res


def InstanceNorm(data, gamma, beta, eps=1e-3, out=None, name=None):
    """Instance normalisation: each (sample, channel) over its spatial axes, then
    ``gamma`` and ``beta`` per channel (axis 1)."""
    x = _tt(data, "InstanceNorm")
    g = _tt(gamma, "InstanceNorm", "gamma")
    b = _tt(beta, "InstanceNorm", "beta")
    if x.dim() < 3 or g.numel() != x.shape[1] or b.numel() != x.shape[1]:
        raise MXNetError(f"InstanceNorm: data shape {data.shape} needs at least 3 axes, and "
                         f"gamma {gamma.shape} / beta {beta.shape} one value per channel")
    if x[0, 0].numel() > 1:
        r = _run(F.instance_norm, x, None, None, g, b, True, 0.0, eps)
    else:
        # one spatial element (torch's instance_norm refuses it): the mean is the element
        # itself and the variance 0, as MXNet computes them
        r = _run(_instance_norm_explicit, x, g, b, eps)
    return _assign_out(_new(r, data._ctx), out)


def _instance_norm_explicit(x, g, b, eps):
    dims = tuple(range(2, x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    shape = (1, -1) + (1,) * (x.dim() - 2)
    return (x - mean) / torch.sqrt(var + eps) * g.reshape(shape) + b.reshape(shape)


def GroupNorm(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False, out=None,
              name=None):
    """Group normalisation, as MXNet 1.9.1's ``GroupNorm``.

    The channels (axis 1) are split into ``num_groups`` groups, each normalised over its
    channels and spatial axes. ``gamma`` and ``beta`` have one value per *group*
    (shape ``(num_groups,)``), as in MXNet 1.x. With ``output_mean_var`` the mean and the
    standard deviation (shape ``(batch, num_groups)``) are returned too.
    """
    x = _tt(data, "GroupNorm")
    g = _tt(gamma, "GroupNorm", "gamma")
    b = _tt(beta, "GroupNorm", "beta")
    if x.dim() < 2 or x.shape[1] % num_groups:
        raise MXNetError(f"GroupNorm: data shape {data.shape} has no channel axis divisible "
                         f"into num_groups={num_groups}")
    if g.numel() != num_groups or b.numel() != num_groups:
        raise MXNetError(f"GroupNorm: gamma {gamma.shape} and beta {beta.shape} must have "
                         f"num_groups={num_groups} elements")
    per = x.shape[1] // num_groups

    def fn():
        return F.group_norm(x, num_groups, g.repeat_interleave(per), b.repeat_interleave(per),
                            eps)
    r = _run(fn)
    res = _assign_out(_new(r, data._ctx), out)
    if output_mean_var:
        with torch.no_grad():
            var, mean = torch.var_mean(x.detach().reshape(x.shape[0], num_groups, -1), dim=-1,
                                       unbiased=False)
        return [res, _new(mean, data._ctx), _new(torch.sqrt(var + eps), data._ctx)]
    return res


def L2Normalization(data, eps=1e-10, mode="instance", out=None, name=None):
    """``data / sqrt(sum(data ** 2) + eps)`` per instance, per channel (axis 1) or per
    spatial position (over axis 1)."""
    x = _tt(data, "L2Normalization")
    if mode == "instance":
        dims = tuple(range(1, x.dim()))
    elif mode == "channel":
        dims = (1,)
    elif mode == "spatial":
        dims = tuple(range(2, x.dim()))
    else:
        raise MXNetError(f"L2Normalization: mode must be 'instance', 'channel' or 'spatial', "
                         f"got {mode!r}")

    def fn():
        return x / torch.sqrt((x * x).sum(dim=dims, keepdim=True) + eps)
    return _assign_out(_new(_run(fn), data._ctx), out)


def LRN(data, alpha=1e-4, beta=0.75, knorm=2.0, nsize=5, out=None, name=None):
    """Local response normalisation across channels."""
    x = _tt(data, "LRN")
    r = _run(F.local_response_norm, x, nsize, alpha, beta, knorm)
    return _assign_out(_new(r, data._ctx), out)


# ---------------------------------------------------------------- Dropout
def Dropout(data, p=0.5, mode="training", axes=(), cudnn_off=False, out=None, name=None):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Active in training mode (``autograd.is_training()``), or always with ``mode='always'``;
    otherwise the data passes unchanged. ``axes`` share one mask value along those axes.
    """
    x = _ft(data, "Dropout")
    if mode not in ("training", "always"):
        raise MXNetError(f"Dropout: mode must be 'training' or 'always', got {mode!r}")
    if not (0.0 <= p <= 1.0):
        raise MXNetError(f"Dropout: p must be in [0, 1], got {p}")
    if p == 0 or not (mode == "always" or _state.training):
        return _assign_out(_new(x, data._ctx), out)
    if p == 1:
        # MXNet scales the all-zero mask by 1 / (1 - p): 0 * inf, so the output and the
        # gradient are NaN everywhere
        r = _run(torch.mul, x, torch.full((), float("nan"), dtype=x.dtype, device=x.device))
        return _assign_out(_new(r, data._ctx), out)
    if not axes:
        # torch.dropout is what F.dropout calls after its Python checks (p is checked above)
        r = _run(torch.dropout, x, p, True)
    else:
        shape = list(x.shape)
        for a in axes:
            shape[a] = 1
        keep = 1.0 - p
        mask = torch.empty(shape, dtype=x.dtype, device=x.device).bernoulli_(
            keep, generator=_generator(x.device))
        if keep > 0:
            mask.div_(keep)
        r = _run(torch.mul, x, mask)
    return _assign_out(_new(r, data._ctx), out)


# ---------------------------------------------------------------- Embedding
def Embedding(data, weight, input_dim=None, output_dim=None, dtype="float32",
              sparse_grad=False, out=None, name=None):
    """Look up rows of ``weight`` (``(input_dim, output_dim)``) at the indices in ``data``.

    Indices are truncated to integers and clipped into ``[0, input_dim - 1]``, as MXNet does.
    The output has shape ``data.shape + (output_dim,)``. With ``sparse_grad`` (or a sparse
    weight) the work goes to ``nd.sparse.Embedding``, which gives a row_sparse gradient.
    """
    if type(weight) is not NDArray and getattr(weight, "stype", "default") != "default":
        from .sparse import _embedding_sparse_weight  # a row_sparse weight: no dense table
        return _assign_out(_embedding_sparse_weight(data, weight, input_dim, output_dim,
                                                    sparse_grad), out)
    if sparse_grad or getattr(weight, "stype", "default") != "default":
        from . import sparse  # row_sparse gradients live with the sparse arrays
        return sparse.Embedding(data, weight, input_dim=input_dim, output_dim=output_dim,
                                dtype=dtype, sparse_grad=sparse_grad, out=out)
    idx = _tt(data, "Embedding")
    if idx.requires_grad:
        idx = idx.detach()
    w = _tt(weight, "Embedding", "weight")
    if w.dim() != 2 or (input_dim is not None and w.shape[0] != input_dim) or (
            output_dim is not None and w.shape[1] != output_dim):
        raise MXNetError(f"Embedding: weight shape {weight.shape} does not match "
                         f"input_dim={input_dim}, output_dim={output_dim}")
    if idx.dtype is not torch.int64:
        idx = idx.to(torch.int64)
    idx = idx.clamp(0, w.shape[0] - 1)
    if sparse_grad:  # torch then returns a sparse COO gradient: a row_sparse grad in neogluon
        from .sparse import _check_sparse_embedding, _sparse_embedding
        _check_sparse_embedding(weight)
        r = _run(_sparse_embedding, idx, w)
        return _assign_out(_new(r, data._ctx), out)
    r = _run(F.embedding, idx, w)
    return _assign_out(_new(r, data._ctx), out)


# ---------------------------------------------------------------- losses
def softmax_cross_entropy(data, label, out=None, name=None):
    """Sum over the batch of the cross entropy of ``softmax(data)`` and integer ``label``;
    returns shape ``(1,)``."""
    x = _tt(data, "softmax_cross_entropy")
    lab = _tt(label, "softmax_cross_entropy", "label").detach().to(torch.int64)
    if x.dim() != 2 or lab.shape != (x.shape[0],):
        raise MXNetError(f"softmax_cross_entropy: data must be (batch, classes) and label "
                         f"(batch,), got {data.shape} and {label.shape}")
    r = _run(lambda: F.cross_entropy(x, lab.clamp(0, x.shape[1] - 1), reduction="sum")
             .reshape(1))
    return _assign_out(_new(r, data._ctx), out)


def smooth_l1(data, scalar=1.0, out=None, name=None):
    """``0.5 * (scalar * x) ** 2 / scalar`` where ``|x| < 1 / scalar ** 2``, else
    ``|x| - 0.5 / scalar ** 2``."""
    x = _tt(data, "smooth_l1")
    s2 = float(scalar) ** 2

    def fn():
        ax = x.abs()
        return torch.where(ax < 1.0 / s2, 0.5 * x * x * s2, ax - 0.5 / s2)
    return _assign_out(_new(_run(fn), data._ctx), out)


def CTCLoss(data, label, data_lengths=None, label_lengths=None, use_data_lengths=False,
            use_label_lengths=False, blank_label="first", out=None, name=None):
    """Connectionist temporal classification loss per sequence.

    ``data`` is ``(time, batch, alphabet)`` unnormalised scores; ``label`` is ``(batch,
    max_label_len)``. With ``blank_label='first'`` index 0 is the blank and labels are
    padded with -1 (or 0); with 'last' the blank is ``alphabet - 1``.
    """
    x = _tt(data, "CTCLoss")
    lab = _tt(label, "CTCLoss", "label").detach().to(torch.int64)
    t, n, a = x.shape
    if use_data_lengths and data_lengths is not None:
        in_len = data_lengths._t.detach().to(torch.int64)
    else:
        in_len = torch.full((n,), t, dtype=torch.int64, device=x.device)
    blank = 0 if blank_label == "first" else a - 1
    if use_label_lengths and label_lengths is not None:
        lab_len = label_lengths._t.detach().to(torch.int64)
    else:
        pad_val = (0, -1) if blank_label == "first" else (-1,)
        valid = torch.ones_like(lab, dtype=torch.bool)
        for pv in pad_val:
            valid &= lab != pv
        # the label ends at its first padding value
        lab_len = valid.to(torch.int64).cumprod(dim=1).sum(dim=1)
    lab_c = lab.clamp(min=0)

    # Steps past a sequence's data length take no part (MXNet never reads them): they are
    # replaced by zeros before the softmax so that whatever they hold (NaN padding) gives
    # them a zero gradient instead of spreading NaN.
    past = torch.arange(t, device=x.device).reshape(-1, 1) >= in_len.to(x.device).reshape(1, -1)
    past = past.unsqueeze(-1) if bool(past.any()) else None

    def fn():
        xs = x if past is None else torch.where(past, torch.zeros((), dtype=x.dtype,
                                                                  device=x.device), x)
        lp = torch.log_softmax(xs, dim=-1)
        return F.ctc_loss(lp, lab_c, in_len, lab_len, blank=blank, reduction="none",
                          zero_infinity=False)
    return _assign_out(_new(_run(fn), data._ctx), out)


ctc_loss = CTCLoss


def SoftmaxActivation(data, mode="instance", out=None, name=None):
    """Softmax over the last axis ('instance', which is what MXNet 1.9.1 computes) or over
    axis 1 ('channel')."""
    x = _tt(data, "SoftmaxActivation")
    if mode not in ("instance", "channel"):
        raise MXNetError(f"SoftmaxActivation: mode must be 'instance' or 'channel', got {mode!r}")
    r = _run(torch.softmax, x, 1 if mode == "channel" else -1)
    return _assign_out(_new(r, data._ctx), out)


# ---------------------------------------------------------------- sequences
def _seq_mask(x, lengths, axis):
    steps = x.shape[axis]
    ar = torch.arange(steps, device=x.device)
    lens = lengths.detach().to(torch.int64).to(x.device)
    if axis == 0:
        keep = ar.reshape(-1, 1) < lens.reshape(1, -1)
    else:
        keep = ar.reshape(1, -1) < lens.reshape(-1, 1)
    return keep.reshape(keep.shape + (1,) * (x.dim() - 2))


def SequenceMask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0,
                 out=None, name=None):
    """Set the steps past each sequence's length to ``value``.

    ``data`` is ``(time, batch, ...)`` with ``axis=0`` or ``(batch, time, ...)`` with
    ``axis=1``; ``sequence_length`` has shape ``(batch,)``.
    """
    x = _tt(data, "SequenceMask")
    if axis not in (0, 1):
        raise MXNetError(f"SequenceMask: axis must be 0 or 1, got {axis}")
    if not use_sequence_length:
        return _assign_out(_new(_run(torch.clone, x), data._ctx), out)
    if sequence_length is None:
        raise MXNetError("SequenceMask: use_sequence_length=True needs sequence_length")
    keep = _seq_mask(x, sequence_length._t, axis)
    r = _run(lambda: torch.where(keep, x, torch.tensor(value, dtype=x.dtype, device=x.device)))
    return _assign_out(_new(r, data._ctx), out)


def _check_lengths(op, lengths, steps, shape):
    # MXNet 1.9.1 reads past the array (garbage, heap corruption) for a length above the
    # number of time steps.
    if lengths is None:
        raise MXNetError(f"{op}: use_sequence_length=True needs sequence_length")
    # MXNet reads each length as an integer (3.005 is 3): check the truncated lengths
    top = int(lengths._t.detach().max().trunc()) if lengths.size else 0
    if top > steps:
        raise MXNetError(f"{op}: sequence_length has a length of {top:g} but data of shape "
                         f"{shape} has {steps} time steps")


def SequenceLast(data, sequence_length=None, use_sequence_length=False, axis=0, out=None,
                 name=None):
    """The last valid step of each sequence (``(batch, ...)``)."""
    x = _tt(data, "SequenceLast")
    if not use_sequence_length:
        r = _run(torch.select, x, axis, -1)
    else:
        _check_lengths("SequenceLast", sequence_length, x.shape[axis], data.shape)
        lens = sequence_length._t.detach().to(torch.int64).clamp(min=1) - 1
        bidx = torch.arange(x.shape[1 - axis], device=x.device)
        r = _run(lambda: x[lens, bidx] if axis == 0 else x[bidx, lens])
    return _assign_out(_new(r, data._ctx), out)


def SequenceReverse(data, sequence_length=None, use_sequence_length=False, axis=0, out=None,
                    name=None):
    """Reverse each sequence's valid steps along the time axis 0 (padding stays put)."""
    x = _tt(data, "SequenceReverse")
    if axis != 0:
        raise MXNetError(f"SequenceReverse: only axis=0 is supported (as in MXNet), got {axis}")
    if not use_sequence_length:
        r = _run(torch.flip, x, (0,))
    else:
        steps = x.shape[0]
        _check_lengths("SequenceReverse", sequence_length, steps, data.shape)
        lens = sequence_length._t.detach().to(torch.int64).reshape(1, -1)
        t = torch.arange(steps, device=x.device).reshape(-1, 1)
        src = torch.where(t < lens, lens - 1 - t, t)  # (time, batch)
        idx = src.reshape(src.shape + (1,) * (x.dim() - 2)).expand(x.shape)
        r = _run(torch.gather, x, 0, idx)
    return _assign_out(_new(r, data._ctx), out)


# ---------------------------------------------------------------- padding and resizing
def Pad(data, mode="constant", pad_width=(), constant_value=0.0, out=None, name=None):
    """Pad a 4-D or 5-D array; ``pad_width`` gives (before, after) for every axis, and the
    first two axes must not be padded, as in MXNet."""
    x = _tt(data, "Pad")
    pw = tuple(int(p) for p in pad_width)
    if len(pw) != 2 * x.dim() or any(pw[:4]):
        raise MXNetError(f"Pad: pad_width {pw} must have 2 values per axis of data shape "
                         f"{data.shape}, with zeros for the first two axes")
    flat = []
    for i in range(x.dim() - 1, 1, -1):
        flat += [pw[2 * i], pw[2 * i + 1]]
    tmode = {"constant": "constant", "edge": "replicate", "reflect": "reflect"}.get(mode)
    if tmode is None:
        raise MXNetError(f"Pad: mode must be 'constant', 'edge' or 'reflect', got {mode!r}")
    if tmode == "constant":
        r = _run(F.pad, x, flat, "constant", constant_value)
    else:
        r = _run(F.pad, x, flat, tmode)
    return _assign_out(_new(r, data._ctx), out)


pad = Pad
NDArray.pad = lambda self, *args, **kwargs: Pad(self, *args, **kwargs)


def UpSampling(*data, scale=1, sample_type="nearest", num_args=1, num_filter=0,
               multi_input_mode="concat", workspace=512, out=None, name=None):
    """Upsampling of NCHW data by an integer ``scale``: nearest neighbour, or ``'bilinear'``
    (``data`` then is ``(data, weight)``: MXNet's grouped deconvolution with a
    ``(num_filter, 1, k, k)`` weight, ``k = 2 * scale - scale % 2``)."""
    if sample_type == "bilinear":
        if len(data) != 2:
            raise MXNetError("UpSampling: sample_type='bilinear' takes data and weight, got "
                             f"{len(data)} inputs")
        scale = int(scale)
        k, pad = 2 * scale - scale % 2, (scale - 1 + 1) // 2
        nf = int(num_filter) or data[0].shape[1]
        return Deconvolution(data[0], data[1], kernel=(k, k), stride=(scale, scale),
                             pad=(pad, pad), num_filter=nf, num_group=nf, no_bias=True, out=out)
    if sample_type != "nearest":
        raise MXNetError(f"UpSampling: sample_type must be 'nearest' or 'bilinear', got "
                         f"{sample_type!r}")
    arrs = [_tt(d, "UpSampling") for d in data]
    for d in data:
        if d.ndim != 4:
            raise MXNetError(f"UpSampling: data must be 4-D (batch, channel, y, x), got shape "
                             f"{d.shape}")

    def fn():
        ups = []
        for t in arrs:
            s = scale * arrs[0].shape[-1] // t.shape[-1]
            ups.append(t.repeat_interleave(s, -2).repeat_interleave(s, -1))
        if len(ups) == 1:
            return ups[0]
        if multi_input_mode == "sum":
            return builtins.sum(ups[1:], ups[0])
        return torch.cat(ups, 1)
    r = _run(fn)
    return _assign_out(_new(r, data[0]._ctx), out)


# ---------------------------------------------------------------- output layers (Module era)
class _SoftmaxOutputFn(torch.autograd.Function):
    """Softmax forward; backward is ``(softmax - onehot(label)) * scale``, ignoring the
    incoming gradient, as MXNet's SoftmaxOutput does."""

    @staticmethod
    def forward(ctx, x, label, grad_scale, ignore_label, use_ignore, normalization, axis,
                spatial, smooth_alpha=0.0):
        p = torch.softmax(x, dim=axis)
        ctx.save_for_backward(p, label)
        ctx.prob_label = label.shape == p.shape
        ctx.prob_scale = grad_scale
        ctx.smooth_alpha = smooth_alpha
        # MXNet 1.9.1 divides a multi_output gradient by the spatial size, except with
        # normalization='valid', where the count of valid labels replaces it
        if normalization != "valid":
            grad_scale = grad_scale / spatial
        ctx.cfg = (grad_scale, ignore_label, use_ignore, normalization, axis)
        return p

    @staticmethod
    def backward(ctx, gout):
        p, label = ctx.saved_tensors
        if ctx.prob_label:
            # a label of the output's shape holds probabilities: MXNet's gradient is then
            # (softmax - label) * grad_scale, without ignore_label or normalization
            g = (p - label.to(p.dtype)) * ctx.prob_scale
            return g, None, None, None, None, None, None, None, None
        grad_scale, ignore_label, use_ignore, normalization, axis = ctx.cfg
        lab = label.long()
        pm = p.movedim(axis, -1)
        k = pm.shape[-1]
        alpha = ctx.smooth_alpha
        if alpha > 0 and k > 1:
            onehot = F.one_hot(lab.clamp(0, k - 1), k).to(p.dtype)
            # label smoothing: 1 - alpha on the label's class, alpha / (k - 1) on the others
            onehot = onehot * (1.0 - alpha) + (1.0 - onehot) * (alpha / (k - 1))
            g = pm - onehot
        else:
            # p - onehot(label): p everywhere, p - 1 at the label's class (the same bits as
            # the subtraction of a one-hot array, without building it)
            idx = lab.clamp(0, k - 1).unsqueeze(-1)
            g = pm.contiguous()
            g = g.clone() if g is pm or g.data_ptr() == p.data_ptr() else g
            g.scatter_(-1, idx, g.gather(-1, idx) - 1)
        if use_ignore:
            valid = (lab != int(ignore_label)).to(p.dtype)
            g = torch.where(valid.unsqueeze(-1) > 0, g, torch.zeros_like(g))   # +0, as MXNet
        if normalization == "batch":
            g = g / p.shape[0]
        elif normalization == "valid":
            valid = (lab != int(ignore_label)).to(p.dtype) if use_ignore else \
                torch.ones_like(lab, dtype=p.dtype)
            g = g / valid.sum().clamp(min=1)
        if grad_scale != 1.0:
            g = g * grad_scale
        return g.movedim(-1, axis), None, None, None, None, None, None, None, None


def SoftmaxOutput(data, label, grad_scale=1.0, ignore_label=-1.0, multi_output=False,
                  use_ignore=False, preserve_shape=False, normalization="null", out_grad=False,
                  smooth_alpha=0.0, out=None, name=None):
    """Softmax whose gradient is the cross-entropy gradient against ``label`` (the head
    gradient is ignored), as MXNet's ``SoftmaxOutput``. ``multi_output`` takes the softmax
    over axis 1 of ``(n, c, ...)`` data with labels ``(n, ...)``."""
    x = _tt(data, "SoftmaxOutput")
    lab = _tt(label, "SoftmaxOutput", "label").detach()
    if normalization not in ("null", "batch", "valid"):
        raise MXNetError(f"SoftmaxOutput: normalization must be 'null', 'batch' or 'valid', "
                         f"got {normalization!r}")
    if multi_output:
        axis = 1
    elif preserve_shape:
        axis = -1
    else:
        axis = -1
        if x.dim() > 2:
            x = x.reshape(x.shape[0], -1)
    if tuple(lab.shape) == tuple(data.shape):
        lab = lab.reshape(x.shape)  # probabilities per class, as many as the data's values
    else:
        lab = lab.reshape(x.shape[:axis % x.dim()] + x.shape[axis % x.dim() + 1:])
    # With multi_output MXNet also divides the gradient by the spatial size (not with 'valid').
    spatial = x[0, 0].numel() if multi_output and x.dim() > 2 else 1
    if _state.recording:
        r = _SoftmaxOutputFn.apply(x, lab, float(grad_scale), ignore_label, bool(use_ignore),
                                   normalization, axis, spatial, float(smooth_alpha))
    else:
        r = _call_nograd(torch.softmax, x, axis)
    r = r.reshape(data.shape)
    return _assign_out(_new(r, data._ctx), out)


Softmax = SoftmaxOutput


class _MakeLossFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, grad_scale, normalization, valid_thresh):
        ctx.cfg = (grad_scale, normalization, valid_thresh)
        ctx.save_for_backward(x)
        return x.clone()

    @staticmethod
    def backward(ctx, gout):
        (x,) = ctx.saved_tensors
        grad_scale, normalization, valid_thresh = ctx.cfg
        g = torch.full_like(x, grad_scale)
        if normalization == "batch":
            g = g / x.shape[0]
        elif normalization == "valid":
            g = g / (x > valid_thresh).sum().clamp(min=1)
        return g, None, None, None


def MakeLoss(data, grad_scale=1.0, valid_thresh=0.0, normalization="null", out=None,
             name=None):
    """Mark ``data`` as a loss: forward is the identity, backward gives ``grad_scale``
    (normalised by the batch or the count above ``valid_thresh``), ignoring the head
    gradient, as MXNet's ``MakeLoss``."""
    x = _tt(data, "MakeLoss")
    if _state.recording:
        r = _MakeLossFn.apply(x, float(grad_scale), normalization, float(valid_thresh))
    else:
        r = _call_nograd(torch.clone, x)
    return _assign_out(_new(r, data._ctx), out)


make_loss = MakeLoss
__all__ += ["SoftmaxOutput", "Softmax", "MakeLoss", "make_loss"]


def _guard_all():
    from .ops import _guard
    g = globals()
    for name in __all__:
        g[name] = _guard(g[name])


_guard_all()


# (MXNet's required parameters: a graph that lacks them is refused when it is loaded)
Convolution._mx_required = ("kernel", "num_filter")
Deconvolution._mx_required = ("kernel", "num_filter")
