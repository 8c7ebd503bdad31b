"""Deformable convolutions (``nd.contrib.DeformableConvolution`` and
``ModulatedDeformableConvolution``), 2-D, written with torch ops so autograd differentiates
data, offsets, mask, weight and bias."""
from __future__ import annotations

import torch

from ..base import MXNetError
from .ndarray import NDArray, _new, _run, _assign_out

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(v, default, name, op):
    if v is None or v == ():
        return (default, default)
    v = tuple(int(a) for a in v) if isinstance(v, (list, tuple)) else (int(v),)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise MXNetError(f"{op}: only 2-D is supported, {name}={v}")
    return v


def _tensor(x, op, what):
    if not isinstance(x, NDArray):
        raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")
    return x._t


def _sample(x, py, px, clamp_high):
    """Bilinear samples of ``x`` (N, G, Cg, H, W) at ``py``/``px`` (N, G, L).

    Returns (N, G, Cg, L). A point with y <= -1, x <= -1, y >= H or x >= W reads 0. Corners
    outside the image read 0, except that with ``clamp_high`` (MXNet's DeformableConvolution)
    a point in the last row/column reads that row/column without interpolating past it.
    """
    n, g, cg, h, w = x.shape
    inside = (py > -1) & (px > -1) & (py < h) & (px < w)
    if clamp_high:
        inside = (py >= 0) & (px >= 0) & (py < h) & (px < w)
        py = torch.where(py >= h - 1, torch.full_like(py, h - 1), py)
        px = torch.where(px >= w - 1, torch.full_like(px, w - 1), px)
    y0 = torch.floor(py)
    x0 = torch.floor(px)
    ly = py - y0
    lx = px - x0
    y0 = y0.long()
    x0 = x0.long()
    flat = x.reshape(n, g, cg, h * w)
    out = 0
    for dy, wy in ((0, 1 - ly), (1, ly)):
        for dx, wx in ((0, 1 - lx), (1, lx)):
            yy = y0 + dy
            xx = x0 + dx
            ok = inside & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            idx = (yy.clamp(0, h - 1) * w + xx.clamp(0, w - 1))
            vals = torch.gather(flat, 3, idx.unsqueeze(2).expand(n, g, cg, idx.shape[-1]))
            weight = (wy * wx * ok.to(x.dtype)).unsqueeze(2)
            out = out + vals * weight
    return out


def _deform_conv(x, offset, mask, weight, bias, kernel, stride, dilate, pad, num_group,
                 num_deformable_group, clamp_high, op):
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = stride
    dh, dw = dilate
    ph, pw = pad
    ho = (h + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    wo = (w + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    k = kh * kw
    gd = num_deformable_group
    if ho <= 0 or wo <= 0:
        raise MXNetError(f"{op}: kernel {kernel} with dilate {dilate} and pad {pad} is larger "
                         f"than the padded input {(h, w)}")
    if c % gd or c % num_group:
        raise MXNetError(f"{op}: {c} input channels are not divisible by "
                         f"num_deformable_group={gd} and num_group={num_group}")
    if tuple(offset.shape) != (n, 2 * gd * k, ho, wo):
        raise MXNetError(f"{op}: offset must have shape {(n, 2 * gd * k, ho, wo)}, got "
                         f"{tuple(offset.shape)}")
    if mask is not None and tuple(mask.shape) != (n, gd * k, ho, wo):
        raise MXNetError(f"{op}: mask must have shape {(n, gd * k, ho, wo)}, got "
                         f"{tuple(mask.shape)}")
    f = weight.shape[0]
    if tuple(weight.shape[1:]) != (c // num_group, kh, kw) or f % num_group:
        raise MXNetError(f"{op}: weight shape {tuple(weight.shape)} does not match "
                         f"{c} channels, kernel {kernel} and num_group={num_group}")
    dev, dt = x.device, x.dtype
    base_y = (torch.arange(ho, device=dev, dtype=dt) * sh - ph).view(1, ho, 1) + \
        (torch.arange(kh, device=dev, dtype=dt) * dh).repeat_interleave(kw).view(k, 1, 1)
    base_x = (torch.arange(wo, device=dev, dtype=dt) * sw - pw).view(1, 1, wo) + \
        (torch.arange(kw, device=dev, dtype=dt) * dw).repeat(kh).view(k, 1, 1)
    off = offset.reshape(n, gd, k, 2, ho, wo)
    py = (base_y + off[:, :, :, 0]).reshape(n, gd, k * ho * wo)
    px = (base_x + off[:, :, :, 1]).reshape(n, gd, k * ho * wo)
    cols = _sample(x.reshape(n, gd, c // gd, h, w), py, px, clamp_high)
    if mask is not None:
        cols = cols * mask.reshape(n, gd, 1, k * ho * wo)
    # (N, C, K, P) -> (N, groups, C/groups*K, P), matching the weight's (c, kh, kw) order.
    cols = cols.reshape(n, num_group, (c // num_group) * k, ho * wo)
    wmat = weight.reshape(num_group, f // num_group, (c // num_group) * k)
    out = torch.einsum("gfq,ngqp->ngfp", wmat, cols).reshape(n, f, ho, wo)
    if bias is not None:
        out = out + bias.view(1, f, 1, 1)
    return out


def _run_deformable(data, offset, mask, weight, bias, kernel, stride, dilate, pad, num_filter,
                    num_group, num_deformable_group, no_bias, clamp_high, op, out):
    x = _tensor(data, op, "data")
    off = _tensor(offset, op, "offset")
    m = None if mask is None else _tensor(mask, op, "mask")
    wt = _tensor(weight, op, "weight")
    b = None if (no_bias or bias is None) else _tensor(bias, op, "bias")
    if x.dim() != 4:
        raise MXNetError(f"{op}: only 2-D (NCHW) data is supported, got shape {data.shape}")
    kernel = _pair(kernel, None, "kernel", op) if kernel else tuple(wt.shape[2:])
    stride = _pair(stride, 1, "stride", op)
    dilate = _pair(dilate, 1, "dilate", op)
    pad = _pair(pad, 0, "pad", op)
    if num_filter is not None and wt.shape[0] != num_filter:
        raise MXNetError(f"{op}: weight has {wt.shape[0]} filters, num_filter={num_filter}")
    res = _run(lambda *a: _deform_conv(*a, kernel, stride, dilate, pad, num_group,
                                       num_deformable_group, clamp_high, op),
               x, off, m, wt, b)
    return _assign_out(_new(res, data._ctx), out)


def DeformableConvolution(data=None, offset=None, weight=None, bias=None, kernel=(),
                          stride=(), dilate=(), pad=(), num_filter=None, num_group=1,
                          num_deformable_group=1, workspace=1024, no_bias=False, layout=None,
                          out=None, name=None):
    """Deformable convolution (Dai et al., 2017): each kernel tap samples the input at its
    grid position plus a learned offset, with bilinear interpolation.

    Parameters
    ----------
    data : NDArray
        ``(N, C, H, W)``.
    offset : NDArray
        ``(N, 2 * num_deformable_group * kh * kw, Ho, Wo)``: for deformable group g and tap
        t = i * kw + j, channel ``2 * (g * kh * kw + t)`` is the y offset and the next one the
        x offset.
    weight : NDArray
        ``(num_filter, C // num_group, kh, kw)``.
    bias : NDArray, optional
        ``(num_filter,)``.
    kernel, stride, dilate, pad : tuple of int
        2-D only.
    num_filter, num_group, num_deformable_group : int
    no_bias : bool

    Returns
    -------
    NDArray
        ``(N, num_filter, Ho, Wo)``.
    """
    return _run_deformable(data, offset, None, weight, bias, kernel, stride, dilate, pad,
                           num_filter, num_group, num_deformable_group, no_bias, True,
                           "DeformableConvolution", out)


def ModulatedDeformableConvolution(data=None, offset=None, mask=None, weight=None, bias=None,
                                   kernel=(), stride=(), dilate=(), pad=(), num_filter=None,
                                   num_group=1, num_deformable_group=1, workspace=1024,
                                   no_bias=False, im2col_step=64, layout=None, out=None,
                                   name=None):
    """Modulated deformable convolution (DCNv2, Zhu et al., 2019): a deformable convolution
    whose samples are also multiplied by ``mask`` (N, num_deformable_group * kh * kw, Ho, Wo).

    Parameters are those of :func:`DeformableConvolution` plus ``mask``.
    """
    if mask is None:
        raise MXNetError("ModulatedDeformableConvolution: mask is required")
    return _run_deformable(data, offset, mask, weight, bias, kernel, stride, dilate, pad,
                           num_filter, num_group, num_deformable_group, no_bias, False,
                           "ModulatedDeformableConvolution", out)
