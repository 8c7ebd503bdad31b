"""``mx.nd.image``: MXNet 1.9.1's image operators, computed with torch on the array's device.

Images are HWC arrays (NHWC batches where an operator accepts them) of any dtype, uint8
and float32 being the usual ones; :func:`to_tensor` turns them into CHW float32 in [0, 1].

The kernels here are shared: ``gluon.data.vision.transforms`` and ``mx.image`` call the
private helpers (``_resize_hwc``, ``_flip``, ``_adjust_*``...), so the three APIs give the
same numbers. Resizing reproduces OpenCV 3.4's ``cv::resize`` (what MXNet 1.9.1 calls),
including its fixed-point arithmetic on uint8 images.

The random operators draw from neogluon's seeded generator (``mx.random.seed``); the
draws are not MXNet's, only their distributions are.
"""
from __future__ import annotations

import functools
import math

import os

import numpy as np
import torch

from ..base import MXNetError, numeric_types
from ..random import generator
from .ndarray import NDArray, _new, _run

__all__ = ["to_tensor", "normalize", "resize", "crop", "flip_left_right", "flip_top_bottom",
           "random_flip_left_right", "random_flip_top_bottom", "random_brightness",
           "random_contrast", "random_saturation", "random_hue", "random_color_jitter",
           "random_lighting", "adjust_lighting"]


class _Required:
    """Marks an operator argument MXNet requires (no default)."""

    def __repr__(self):
        return "<required>"


_REQUIRED = _Required()


def _need(op, **params):
    for name, value in params.items():
        if value is _REQUIRED:
            raise MXNetError(f"Required parameter {name} of {op} is not presented")


def _shape_str(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _check(x, op, ndims=(3, 4)):
    """The image's tensor, after checking it is an NDArray with an accepted ndim."""
    if not isinstance(x, NDArray):
        raise TypeError(f"{op}: argument data must be an NDArray, got {type(x).__name__}")
    if x.ndim not in ndims:
        layout = {3: "(height, width, channels)", 4: "(N, height, width, channels)"}
        want = " or ".join(layout[n] for n in ndims)
        raise MXNetError(f"{op}: input image must have shape {want}, but got shape "
                         f"{_shape_str(x.shape)}")
    return x._t


def _channels(x, t, op, allowed=(1, 3)):
    c = t.shape[-1]
    if c not in allowed:
        raise MXNetError(f"{op}: the last dimension of the input image must be the channel "
                         f"dimension with {' or '.join(map(str, allowed))} elements, but got "
                         f"input with shape {_shape_str(x.shape)}")
    return c


def _finish(t, ctx, out):
    res = _new(t, ctx)
    if out is not None:
        out[:] = res
        return out
    return res


def _float(t):
    return t if t.is_floating_point() else t.to(torch.float32)


def _saturate(t, dtype):
    """Round and clip float results into an integer dtype (OpenCV's saturate_cast)."""
    if dtype.is_floating_point:
        return t.to(dtype)
    info = torch.iinfo(dtype)
    return t.round().clamp(info.min, info.max).to(dtype)


def _clip_cast(t, dtype):
    """MXNet's colour operators clip integer results into range and then truncate."""
    if dtype.is_floating_point:
        return t.to(dtype)
    info = torch.iinfo(dtype)
    return t.clamp(info.min, info.max).trunc().to(dtype)


def _uniform(device, low, high):
    gen = generator(device)
    u = torch.rand((), generator=gen, device=device, dtype=torch.float64).item()
    return low + (high - low) * u


# ---------------------------------------------------------------------- to_tensor, normalize

def to_tensor(data=None, out=None, name=None, **kwargs):
    """HWC (or NHWC) images with values in [0, 255] to CHW (NCHW) float32 in [0, 1].

    Parameters
    ----------
    data : NDArray
        An image of shape (H, W, C) or a batch of shape (N, H, W, C), any dtype.
    out : NDArray, optional
        The output array.

    Returns
    -------
    NDArray
        float32 array of shape (C, H, W) or (N, C, H, W), ``data / 255``.
    """
    t = _check(data, "to_tensor")
    perm = (2, 0, 1) if t.dim() == 3 else (0, 3, 1, 2)
    # float64 input is divided in double precision, then rounded to float32 (as MXNet).
    wdt = torch.float64 if t.dtype == torch.float64 else torch.float32
    r = _run(lambda: t.permute(*perm).to(wdt).div(255.0).to(torch.float32).contiguous())
    return _finish(r, data._ctx, out)


def _per_channel(v, c, what, shape_of, t, shape):
    v = [float(v)] if isinstance(v, numeric_types) else [float(e) for e in v]
    if len(v) not in (1, c):
        raise MXNetError(f"normalize: invalid {what} for input with shape "
                         f"{_shape_str(shape_of)}: {what} must have 1 or {c} elements (one per "
                         f"channel), but got {tuple(v)}")
    return torch.tensor(v * (c if len(v) == 1 else 1), dtype=t.dtype,
                        device=t.device).reshape(shape)


def normalize(data=None, mean=(0.0, 0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0, 1.0), out=None,
              name=None, **kwargs):
    """``(data - mean) / std`` per channel of a CHW (or NCHW) image.

    Parameters
    ----------
    data : NDArray
        Shape (C, H, W) or (N, C, H, W) with C = 1 or 3.
    mean : float or tuple of floats
        One value, or one per channel. MXNet's default has four values, which fits no
        input: pass ``mean`` explicitly.
    std : float or tuple of floats
        One value, or one per channel (same remark).
    out : NDArray, optional
        The output array.

    Returns
    -------
    NDArray
        Same shape and dtype as ``data``.
    """
    if not isinstance(data, NDArray):
        raise TypeError(f"normalize: argument data must be an NDArray, got "
                        f"{type(data).__name__}")
    if data.ndim not in (3, 4):
        raise MXNetError("normalize: input tensor must have shape (channels, height, width) "
                         "or (N, channels, height, width), but got shape "
                         f"{_shape_str(data.shape)}")
    t = data._t
    c = t.shape[0] if t.dim() == 3 else t.shape[1]
    if c not in (1, 3):
        raise MXNetError("normalize: the first dimension of the input tensor must be the "
                         "channel dimension with 1 or 3 elements, but got input with shape "
                         f"{_shape_str(data.shape)}")
    shape = (c, 1, 1) if t.dim() == 3 else (1, c, 1, 1)
    m = _per_channel(mean, c, "mean", data.shape, _float(t), shape)
    s = _per_channel(std, c, "std", data.shape, _float(t), shape)
    r = _run(lambda: _wrap_cast((_float(t) - m) / s, t.dtype))
    return _finish(r, data._ctx, out)


def _wrap_cast(t, dtype):
    # MXNet casts normalize's float result straight to an integer dtype: truncation, and
    # out-of-range values wrap (x86's conversion), e.g. -30.3 -> 226 in uint8.
    if dtype.is_floating_point:
        return t.to(dtype)
    return t.trunc().to(torch.int64).to(dtype)


# ---------------------------------------------------------------------- resize (cv::resize)

_INTERP_NAMES = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area", 4: "lanczos4"}
_COEF_SCALE = 2048  # OpenCV's INTER_RESIZE_COEF_SCALE: 11-bit fixed-point coefficients
_f32 = np.float32


def _cubic_coeffs(x):
    # OpenCV's interpolateCubic (A = -0.75), in float32 as OpenCV computes it.
    a, one = _f32(-0.75), _f32(1)
    c0 = ((a * (x + one) - _f32(5) * a) * (x + one) + _f32(8) * a) * (x + one) - _f32(4) * a
    c1 = ((a + _f32(2)) * x - (a + _f32(3))) * x * x + one
    y = one - x
    c2 = ((a + _f32(2)) * y - (a + _f32(3))) * y * y + one
    return [c0, c1, c2, one - c0 - c1 - c2]


_S45 = 0.70710678118654752440084436210485
_LANCZOS_CS = ((1, 0), (-_S45, -_S45), (0, 1), (_S45, -_S45), (-1, 0), (_S45, _S45), (0, -1),
               (-_S45, _S45))


def _lanczos4_coeffs(x):
    # OpenCV's interpolateLanczos4; the mixed float/double steps are OpenCV's.
    if x < np.finfo(np.float32).eps:
        return [_f32(0)] * 3 + [_f32(1)] + [_f32(0)] * 4
    x3 = _f32(x + _f32(3))
    y0 = -float(x3) * math.pi * 0.25
    s0, c0 = math.sin(y0), math.cos(y0)
    coeffs, total = [], _f32(0)
    for i, (cs, cc) in enumerate(_LANCZOS_CS):
        y = -float(_f32(x3 - _f32(i))) * math.pi * 0.25
        v = _f32((cs * s0 + cc * c0) / (y * y))
        coeffs.append(v)
        total = _f32(total + v)
    inv = _f32(_f32(1) / total)
    return [_f32(v * inv) for v in coeffs]


@functools.lru_cache(maxsize=256)
def _taps(n_in, n_out, interp, area_mode, vertical):
    """Source indices and float32 coefficients, each (n_out, K), for one axis of
    ``cv::resize``. The horizontal axis pins edge taps (OpenCV resets fx there), the
    vertical axis clamps row indices instead, as OpenCV does; with fixed-point arithmetic
    the two give different roundings."""
    inv_scale = n_out / n_in
    scale = 1.0 / inv_scale
    if interp == 0:
        idx = np.minimum(np.floor(np.arange(n_out) * scale), n_in - 1).astype(np.int64)
        return idx[:, None], np.ones((n_out, 1), np.float32)
    ksize = {1: 2, 2: 4, 3: 2, 4: 8}[interp]
    half = ksize // 2
    idx = np.zeros((n_out, ksize), np.int64)
    coef = np.zeros((n_out, ksize), np.float32)
    for d in range(n_out):
        if not area_mode:
            fx = _f32((d + 0.5) * scale - 0.5)
            sx = math.floor(fx)
            fx = _f32(fx - _f32(sx))
        else:
            sx = math.floor(d * scale)
            fx = _f32((d + 1) - (sx + 1) * inv_scale)
            fx = _f32(0) if fx <= 0 else _f32(fx - _f32(math.floor(fx)))
        if interp in (1, 3) and not vertical:
            if sx < 0:
                fx, sx = _f32(0), 0
            if sx >= n_in - 1:
                fx, sx = _f32(0), n_in - 1
        idx[d] = np.clip(np.arange(sx - half + 1, sx - half + 1 + ksize), 0, n_in - 1)
        if interp == 2:
            coef[d] = _cubic_coeffs(fx)
        elif interp == 4:
            coef[d] = _lanczos4_coeffs(fx)
        else:
            coef[d] = (_f32(1) - fx, fx)
    return idx, coef


@functools.lru_cache(maxsize=256)
def _area_taps(n_in, n_out):
    """OpenCV's computeResizeAreaTab (shrinking by a non-integer factor): each output cell
    averages the source cells its footprint covers, weighted by the covered fraction."""
    scale = n_in / n_out
    rows = []
    for d in range(n_out):
        f1 = d * scale
        f2 = f1 + scale
        cell = min(scale, n_in - f1)
        s1, s2 = math.ceil(f1), math.floor(f2)
        s2 = min(s2, n_in - 1)
        s1 = min(s1, s2)
        taps = []
        if s1 - f1 > 1e-3:
            taps.append((s1 - 1, (s1 - f1) / cell))
        taps += [(s, 1.0 / cell) for s in range(s1, s2)]
        if f2 - s2 > 1e-3:
            taps.append((s2, min(min(f2 - s2, 1.0), cell) / cell))
        rows.append(taps)
    k = max(len(r) for r in rows)
    # Padding taps (weight 0 on index 0) come last, so they add exact zeros.
    idx = np.zeros((n_out, k), np.int64)
    coef = np.zeros((n_out, k), np.float32)
    for d, taps in enumerate(rows):
        for j, (s, a) in enumerate(taps):
            idx[d, j], coef[d, j] = s, a
    return idx, coef


def _weighted(x, dim, idx, coef, wdt=None):
    """Sum of the taps' gathered slices (cast to ``wdt``) times their coefficients along
    ``dim``, accumulated in tap order (OpenCV's order, so float results match it bit for
    bit; integer sums are exact anyway)."""
    wdt = wdt or x.dtype
    shape = [1] * x.dim()
    shape[dim] = -1
    idx_t = torch.as_tensor(idx, device=x.device)
    coef_t = torch.as_tensor(coef, device=x.device).to(wdt)
    acc = None
    for k in range(idx.shape[1]):
        term = x.index_select(dim, idx_t[:, k]).to(wdt) * coef_t[:, k].reshape(shape)
        acc = term if acc is None else acc + term
    return acc


def _vertical_u8(hsum, idx, qcoef, interp):
    """OpenCV's vertical pass on the 11-bit horizontal sums of a uint8 image, with the
    rounding of the SSE2 kernels MXNet's OpenCV build runs (and the scalar tail)."""
    dev = hsum.device
    rows = [hsum.index_select(1, torch.as_tensor(idx[:, k], device=dev))
            for k in range(idx.shape[1])]
    beta = [torch.as_tensor(qcoef[:, k], device=dev).reshape(1, -1, 1, 1)
            for k in range(idx.shape[1])]
    if interp in (1, 3):
        beta = [b.to(torch.int32) for b in beta]
        # mulhi of (sum >> 4) and beta, then (a + b + 2) >> 2, for every element.
        r = ((((rows[0] >> 4) * beta[0]) >> 16) + (((rows[1] >> 4) * beta[1]) >> 16) + 2) >> 2
        return r.clamp(0, 255).to(torch.uint8)
    # (products of two 11-bit-scaled values can pass 2**31: int64 here)
    exact = rows[0].to(torch.int64) * beta[0]
    for k in range(1, len(rows)):
        exact = exact + rows[k].to(torch.int64) * beta[k]
    exact = (exact + (1 << 21)) >> 22
    if interp != 2:
        return exact.clamp(0, 255).to(torch.uint8)
    # Bicubic: the SIMD kernel works in float32 on blocks of 8 values of a row; the last
    # (row length % 8) values take the exact integer path above.
    scale = _f32(1.0 / (_COEF_SCALE * _COEF_SCALE))
    acc = None
    for k in range(4):
        bk = torch.as_tensor((qcoef[:, k].astype(np.float32) * scale).astype(np.float32),
                             device=dev).reshape(1, -1, 1, 1)
        term = rows[k].to(torch.float32) * bk
        acc = term if acc is None else acc + term
    simd = torch.round(acc).to(torch.int64)
    n, h, w, c = exact.shape
    nvec = (w * c) // 8 * 8
    flat = simd.reshape(n, h, w * c)
    flat[:, :, nvec:] = exact.reshape(n, h, w * c)[:, :, nvec:]
    return flat.reshape(n, h, w, c).clamp(0, 255).to(torch.uint8)


def _area_fast_float(blocks, isx, isy):
    """Block means of (n, h, isy, w, isx, c) float blocks summed in OpenCV's order: the
    block's pixels row by row, four at a time (``sum += ((a + b) + c) + d``), then the
    rest, times ``1 / area`` rounded to float32. For float32 2x2 blocks OpenCV's
    SIMD kernel adds ``(a + b) + (c + d)`` instead: on every pixel with 4 channels, on
    the leading multiple of 4 of each row's values with 1 channel."""
    n, h, _, w, _, c = blocks.shape
    px = [blocks[:, :, sy, :, sx, :] for sy in range(isy) for sx in range(isx)]
    area = len(px)
    acc = None
    k = 0
    while k + 4 <= area:
        group = ((px[k] + px[k + 1]) + px[k + 2]) + px[k + 3]
        acc = group if acc is None else acc + group
        k += 4
    for p in px[k:]:
        acc = p if acc is None else acc + p
    dt = blocks.dtype
    # OpenCV's scale is a float (1.f / area) whatever the image's depth
    scale = torch.tensor(float(_f32(1.0) / _f32(area)), dtype=dt)
    r = acc * scale.to(blocks.device)
    if dt == torch.float32 and isx == 2 and isy == 2 and c in (1, 4):
        simd = ((px[0] + px[1]) + (px[2] + px[3])) * scale.to(blocks.device)
        if c == 4:
            return simd
        nvec = (w * c) // 4 * 4
        r = r.reshape(n, h, w * c).clone()
        r[:, :, :nvec] = simd.reshape(n, h, w * c)[:, :, :nvec]
        r = r.reshape(n, h, w, c)
    return r


def _select_rows(t, yi):
    """Only the source rows the vertical taps read (OpenCV never computes the others),
    with the taps re-indexed into them: shrinking a large image gets cheap."""
    rows = np.unique(yi)
    if len(rows) == t.shape[1]:
        return t, yi
    return t.index_select(1, torch.as_tensor(rows, device=t.device)), np.searchsorted(rows, yi)


_CV2 = []


def _opencv():
    """OpenCV's Python module when installed (and not turned off with NEOGLUON_OPENCV=0)."""
    if not _CV2:
        mod = None
        if os.environ.get("NEOGLUON_OPENCV", "1") != "0":
            try:
                import cv2 as mod  # opencv-python(-headless)
            except ImportError:
                mod = None
        _CV2.append(mod)
    return _CV2[0]


def _cv_resize(t, w, h, interp):
    """``cv::resize`` of an NHWC tensor to width ``w`` and height ``h``."""
    n, ih, iw, c = t.shape
    dtype = t.dtype
    if (ih, iw) == (h, w):
        return t.clone()
    cv2 = _opencv() if dtype == torch.uint8 and interp in (0, 1, 3) else None
    if cv2 is not None and t.device.type == "cpu" and 1 <= c <= 4:
        # OpenCV's own kernels (it releases the GIL, ~15x faster here). For uint8 nearest,
        # bilinear and area they give the bits of the torch code below, which reproduces
        # MXNet's OpenCV 3.4 (tests hold both to MXNet's fixtures); bicubic and lanczos
        # differ in the last bit between OpenCV versions, so those stay on the torch code.
        src = t.contiguous().numpy()
        outs = [cv2.resize(img, (w, h), interpolation=interp) for img in src]
        return torch.from_numpy(np.stack(outs).reshape(n, h, w, c))
    scale_x, scale_y = 1.0 / (w / iw), 1.0 / (h / ih)
    isx, isy = int(round(scale_x)), int(round(scale_y))
    area_fast = (abs(scale_x - isx) < np.finfo(float).eps
                 and abs(scale_y - isy) < np.finfo(float).eps)
    if interp == 1 and area_fast and isx == 2 and isy == 2:
        interp = 3  # OpenCV: halving with INTER_LINEAR is INTER_AREA's block mean
    u8 = dtype == torch.uint8
    wdt = torch.float64 if dtype == torch.float64 else torch.float32
    dev = t.device
    if interp == 3 and scale_x >= 1 and scale_y >= 1:
        if area_fast:
            if u8:
                s = t.reshape(n, h, isy, w * isx * c).sum(2, dtype=torch.int32)
                s = s.reshape(n, h, w, isx, c).sum(3, dtype=torch.int32)
                if isx == 2 and isy == 2 and c in (1, 3, 4):
                    return ((s + 2) >> 2).to(dtype)
                r = s.to(torch.float32) * torch.tensor(_f32(1.0 / (isx * isy)), device=dev)
                return _saturate(r, dtype)
            blocks = t.reshape(n, h, isy, w, isx, c).to(wdt)
            return _saturate(_area_fast_float(blocks, isx, isy), dtype)
        x = _weighted(t, 2, *_area_taps(iw, w), wdt)
        return _saturate(_weighted(x, 1, *_area_taps(ih, h)), dtype)
    area_mode = interp == 3
    xi, xc = _taps(iw, w, interp, area_mode, False)
    yi, yc = _taps(ih, h, interp, area_mode, True)
    if interp == 0:
        rows = t.index_select(1, torch.as_tensor(yi[:, 0], device=dev))
        return rows.index_select(2, torch.as_tensor(xi[:, 0], device=dev))
    src, yi = _select_rows(t, yi)
    if u8:
        xq = np.rint(xc.astype(np.float64) * _COEF_SCALE).astype(np.int64)
        yq = np.rint(yc.astype(np.float64) * _COEF_SCALE).astype(np.int64)
        return _vertical_u8(_weighted(src, 2, xi, xq, torch.int32), yi, yq, interp)
    x = _weighted(src, 2, xi, xc, wdt)
    return _saturate(_weighted(x, 1, yi, yc), dtype)


def _resize_hwc(t, w, h, interp, op="resize"):
    """Resize an HWC or NHWC tensor (OpenCV interpolation codes 0-4)."""
    if interp not in _INTERP_NAMES:
        raise MXNetError(f"{op}: unknown interpolation method interp={interp}; use 0 "
                         "(nearest), 1 (bilinear), 2 (bicubic), 3 (area) or 4 (lanczos4)")
    if w <= 0 or h <= 0:
        raise MXNetError(f"{op}: the output width and height must be greater than 0, got "
                         f"width={w}, height={h}")
    if t.dtype not in (torch.uint8, torch.float32, torch.float64):
        # MXNet hands these to OpenCV, whose resize has no kernel for them either.
        raise MXNetError(f"{op}: images of dtype {str(t.dtype).replace('torch.', '')} cannot "
                         "be resized (OpenCV, which MXNet uses, resizes uint8, float32 and "
                         "float64 images); cast the image first")
    batched = t.dim() == 4
    src = t if batched else t.unsqueeze(0)
    if src.shape[1] == 0 or src.shape[2] == 0:
        raise MXNetError(f"{op}: cannot resize an empty image of shape "
                         f"{_shape_str(tuple(t.shape))}")
    out = _cv_resize(src.detach(), int(w), int(h), int(interp))
    return out if batched else out[0]


def resize(data=None, size=(), keep_ratio=False, interp=1, out=None, name=None, **kwargs):
    """Resize an HWC image or an NHWC batch, as OpenCV's ``cv::resize``.

    Parameters
    ----------
    data : NDArray
        Shape (H, W, C) or (N, H, W, C).
    size : int or tuple of int
        ``(width, height)``, or one int (or a 1-tuple) for both sides.
    keep_ratio : bool, default False
        With one int, resize the shorter side to it and keep the aspect ratio.
    interp : int, default 1
        0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos (8x8), OpenCV's codes.
    out : NDArray, optional
        The output array.

    Returns
    -------
    NDArray
        The resized image, same dtype.
    """
    t = _check(data, "resize")
    ih, iw = (t.shape[0], t.shape[1]) if t.dim() == 3 else (t.shape[1], t.shape[2])
    dims = [size] if isinstance(size, numeric_types) else list(size)
    if len(dims) not in (1, 2):
        raise MXNetError(f"resize: size must be an int, (size,) or (width, height), but got "
                         f"{size!r} ({len(dims)} values)")
    if len(dims) == 1:
        s = int(dims[0])
        if s <= 0:
            raise MXNetError(f"resize: size should be greater than 0, but got {s}")
        if keep_ratio:
            if ih > iw:
                nw, nh = s, int(ih * s / iw)
            else:
                nh, nw = s, int(iw * s / ih)
        else:
            nw = nh = s
    else:
        nw, nh = int(dims[0]), int(dims[1])
        if nw <= 0 or nh <= 0:
            raise MXNetError(f"resize: width and height should be greater than 0, but got "
                             f"size={tuple(dims)}")
    return _finish(_resize_hwc(t, nw, nh, interp), data._ctx, out)


# ---------------------------------------------------------------------- crop and flips

def _crop(x, x0, y0, width, height, op="crop"):
    t = _check(x, op)
    h, w = (t.shape[0], t.shape[1]) if t.dim() == 3 else (t.shape[1], t.shape[2])
    if width <= 0 or height <= 0:
        raise MXNetError(f"{op}: width and height must be greater than 0, got width={width}, "
                         f"height={height}")
    if x0 < 0 or y0 < 0 or x0 + width > w or y0 + height > h:
        raise MXNetError(f"{op}: region x={x0}, y={y0}, width={width}, height={height} is "
                         f"outside the image of width {w} and height {h} (shape "
                         f"{_shape_str(x.shape)})")
    if t.dim() == 3:
        return _run(lambda: t[y0:y0 + height, x0:x0 + width].contiguous())
    return _run(lambda: t[:, y0:y0 + height, x0:x0 + width].contiguous())


def crop(data=None, x=_REQUIRED, y=_REQUIRED, width=_REQUIRED, height=_REQUIRED, out=None,
         name=None, **kwargs):
    """The ``width`` x ``height`` region at ``(x, y)`` of an HWC image or NHWC batch.

    Parameters
    ----------
    data : NDArray
        Shape (H, W, C) or (N, H, W, C).
    x, y : int
        Left and top of the region.
    width, height : int
        Size of the region; it must lie inside the image.
    out : NDArray, optional
        The output array.

    Returns
    -------
    NDArray
    """
    _need("crop", x=x, y=y, width=width, height=height)
    return _finish(_crop(data, int(x), int(y), int(width), int(height)), data._ctx, out)


def _flip(x, axis, op="flip"):
    """Flip an HWC image's width (``axis=1``) or height (0).

    MXNet 1.9.1's flip kernel swaps pairs and never writes the middle row (column) of an
    odd-sized image into its fresh output, which therefore holds whatever that memory held
    (often a previous result). neogluon writes the plain flip, middle included.
    """
    t = _check(x, op, (3,))
    return _run(lambda: torch.flip(t, (axis,)))


def flip_left_right(data=None, out=None, name=None, **kwargs):
    """Mirror an HWC image left to right.

    Parameters
    ----------
    data : NDArray
        Shape (H, W, C).
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    return _finish(_flip(data, 1, "flip_left_right"), data._ctx, out)


def flip_top_bottom(data=None, out=None, name=None, **kwargs):
    """Mirror an HWC image top to bottom.

    Parameters
    ----------
    data : NDArray
        Shape (H, W, C).
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    return _finish(_flip(data, 0, "flip_top_bottom"), data._ctx, out)


def _random_flip(data, axis, op, out):
    t = _check(data, op, (3,))
    if _uniform(t.device, 0.0, 1.0) < 0.5:
        return _finish(_flip(data, axis, op), data._ctx, out)
    return _finish(_run(t.clone), data._ctx, out)


def random_flip_left_right(data=None, out=None, name=None, **kwargs):
    """:func:`flip_left_right` with probability 0.5 (neogluon's generator).

    Parameters
    ----------
    data : NDArray
        Shape (H, W, C).
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    return _random_flip(data, 1, "random_flip_left_right", out)


def random_flip_top_bottom(data=None, out=None, name=None, **kwargs):
    """:func:`flip_top_bottom` with probability 0.5 (neogluon's generator).

    Parameters
    ----------
    data : NDArray
        Shape (H, W, C).
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    return _random_flip(data, 0, "random_flip_top_bottom", out)


# ---------------------------------------------------------------------- colour

_GRAY = (0.299, 0.587, 0.114)


def _as_f32(t):
    # MXNet's colour kernels compute in float32 whatever the image's dtype.
    return t.to(torch.float32)


def _rgb_image(x, op):
    t = _check(x, op, (3,))
    _channels(x, t, op)
    return t.detach()


def _adjust_brightness(x, alpha, op="random_brightness"):
    t = _check(x, op, (3,)).detach()
    return _new(_clip_cast(_as_f32(t) * alpha, t.dtype), x._ctx)


def _gray(t):
    if t.shape[-1] == 1:
        return _as_f32(t)
    coef = torch.tensor(_GRAY, dtype=torch.float32, device=t.device)
    return (_as_f32(t)[..., :3] * coef).sum(-1, keepdim=True)


def _adjust_contrast(x, alpha, op="random_contrast"):
    """Blend with the mean gray level: ``x * alpha + mean_gray * (1 - alpha)``."""
    t = _rgb_image(x, op)
    gray_mean = _gray(t).mean()
    return _new(_clip_cast(_as_f32(t) * alpha + gray_mean * (1 - alpha), t.dtype), x._ctx)


def _adjust_saturation(x, alpha, op="random_saturation"):
    """Blend with a per-pixel gray level, as MXNet 1.9.1 computes it.

    MXNet 1.9.1's operator keeps only the blue term of the luma sum (``0.114 * B``) as the
    gray level; neogluon reproduces that so that augmented data match MXNet's. A
    one-channel image is returned unchanged (as MXNet does).
    """
    t = _rgb_image(x, op)
    if t.shape[-1] == 1:
        return _new(t.clone(), x._ctx)
    gray = _as_f32(t)[..., -1:] * _GRAY[2]
    return _new(_clip_cast(_as_f32(t) * alpha + gray * (1 - alpha), t.dtype), x._ctx)


_EIGVAL = (55.46, 4.794, 1.148)
_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140),
           (-0.5836, -0.6948, 0.4203))


def _adjust_lighting(x, alpha, op="adjust_lighting"):
    """AlexNet-style PCA lighting noise with per-component weights ``alpha`` (3 values)."""
    t = _rgb_image(x, op)
    if t.shape[-1] != 3:
        # MXNet 1.9.1 accepts one channel but leaves its output unwritten (garbage).
        raise MXNetError(f"{op}: PCA lighting needs an RGB image with 3 channels, but got "
                         f"input with shape {_shape_str(x.shape)}")
    alpha = [float(a) for a in alpha]
    if len(alpha) != 3:
        raise MXNetError(f"{op}: alpha must have 3 values (one per principal component), "
                         f"got {tuple(alpha)}")
    eigval = np.array(_EIGVAL) * np.asarray(alpha, dtype=np.float64)
    rgb = np.dot(np.array(_EIGVEC), eigval)
    shift = torch.tensor(rgb, dtype=torch.float32, device=t.device)
    return _new(_clip_cast(_as_f32(t) + shift, t.dtype), x._ctx)


def _hue_channel(m1, m2, h):
    h = torch.remainder(h, 1.0)
    return torch.where(h < 1 / 6, m1 + (m2 - m1) * h * 6,
                       torch.where(h < 0.5, m2,
                                   torch.where(h < 2 / 3, m1 + (m2 - m1) * (2 / 3 - h) * 6,
                                               m1)))


def _adjust_hue(x, alpha, op="random_hue"):
    """Rotate the hue of an HWC RGB image by ``alpha`` turns (HLS colour space, values read
    on a 0-255 scale), as MXNet's hue operator does."""
    t = _rgb_image(x, op)
    if t.shape[-1] == 1:
        # A gray image has no hue. (MXNet 1.9.1 leaves this output unwritten: garbage.)
        return _new(t.clone(), x._ctx)
    f = _as_f32(t)[..., :3].to(torch.float32) / 255.0
    r, g, b = f.unbind(-1)
    maxc = torch.maximum(torch.maximum(r, g), b)
    minc = torch.minimum(torch.minimum(r, g), b)
    light = (maxc + minc) / 2
    d = maxc - minc
    gray = d == 0
    one = torch.ones_like(d)
    safe_d = torch.where(gray, one, d)
    s = torch.where(light <= 0.5, d / torch.where(gray, one, maxc + minc),
                    d / torch.where(gray, one, 2.0 - maxc - minc))
    rc, gc, bc = (maxc - r) / safe_d, (maxc - g) / safe_d, (maxc - b) / safe_d
    h = torch.where(r == maxc, bc - gc, torch.where(g == maxc, 2.0 + rc - bc, 4.0 + gc - rc))
    h = torch.remainder(h / 6.0, 1.0) + alpha
    s = torch.where(gray, torch.zeros_like(s), s)
    m2 = torch.where(light <= 0.5, light * (1.0 + s), light + s - light * s)
    m1 = 2.0 * light - m2
    rgb = torch.stack([_hue_channel(m1, m2, h + 1 / 3), _hue_channel(m1, m2, h),
                       _hue_channel(m1, m2, h - 1 / 3)], dim=-1)
    rgb = torch.where(gray.unsqueeze(-1), light.unsqueeze(-1).expand_as(rgb), rgb) * 255.0
    return _new(_clip_cast(rgb, t.dtype), x._ctx)


def _random_factor(op, data, min_factor, max_factor):
    _need(op, min_factor=min_factor, max_factor=max_factor)
    t = _check(data, op, (3,))
    return _uniform(t.device, float(min_factor), float(max_factor))


def random_brightness(data=None, min_factor=_REQUIRED, max_factor=_REQUIRED, out=None,
                      name=None, **kwargs):
    """Multiply an HWC image by a factor drawn uniformly from [min_factor, max_factor].

    Parameters
    ----------
    data : NDArray
        Shape (H, W, C).
    min_factor, max_factor : float
        Range of the factor.
    out : NDArray, optional

    Returns
    -------
    NDArray
        Same dtype; integer results are clipped into range and truncated.
    """
    a = _random_factor("random_brightness", data, min_factor, max_factor)
    return _finish(_adjust_brightness(data, a)._t, data._ctx, out)


def random_contrast(data=None, min_factor=_REQUIRED, max_factor=_REQUIRED, out=None,
                    name=None, **kwargs):
    """Blend an HWC image (1 or 3 channels) with its mean gray level by a factor drawn
    uniformly from [min_factor, max_factor]: ``x * a + mean_gray * (1 - a)``.

    Parameters
    ----------
    data : NDArray
        Shape (H, W, 1 or 3).
    min_factor, max_factor : float
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    a = _random_factor("random_contrast", data, min_factor, max_factor)
    return _finish(_adjust_contrast(data, a)._t, data._ctx, out)


def random_saturation(data=None, min_factor=_REQUIRED, max_factor=_REQUIRED, out=None,
                      name=None, **kwargs):
    """Blend an HWC image with a per-pixel gray level by a factor drawn uniformly from
    [min_factor, max_factor] (MXNet 1.9.1's gray level: ``0.114 * B``).

    Parameters
    ----------
    data : NDArray
        Shape (H, W, 1 or 3).
    min_factor, max_factor : float
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    a = _random_factor("random_saturation", data, min_factor, max_factor)
    return _finish(_adjust_saturation(data, a)._t, data._ctx, out)


def random_hue(data=None, min_factor=_REQUIRED, max_factor=_REQUIRED, out=None, name=None,
               **kwargs):
    """Rotate the hue of an HWC RGB image by ``a - 1`` turns, ``a`` drawn uniformly from
    [min_factor, max_factor] (so factors around 1 change the hue little).

    Parameters
    ----------
    data : NDArray
        Shape (H, W, 1 or 3); a one-channel image is returned unchanged.
    min_factor, max_factor : float
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    a = _random_factor("random_hue", data, min_factor, max_factor)
    return _finish(_adjust_hue(data, a - 1)._t, data._ctx, out)


def random_color_jitter(data=None, brightness=_REQUIRED, contrast=_REQUIRED,
                        saturation=_REQUIRED, hue=_REQUIRED, out=None, name=None, **kwargs):
    """Random brightness, contrast, saturation and hue changes in a random order.

    Each change with a positive strength ``s`` is applied once, with a factor drawn
    uniformly from ``[1 - s, 1 + s]`` (hue: a rotation of ``[-s, s]`` turns).

    Parameters
    ----------
    data : NDArray
        Shape (H, W, 1 or 3).
    brightness, contrast, saturation, hue : float
        Strength of each change (0 leaves it out).
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    op = "random_color_jitter"
    _need(op, brightness=brightness, contrast=contrast, saturation=saturation, hue=hue)
    t = _check(data, op, (3,))
    _channels(data, t, op)
    dev = t.device
    steps = [(float(brightness), _adjust_brightness, 1.0),
             (float(contrast), _adjust_contrast, 1.0),
             (float(saturation), _adjust_saturation, 1.0),
             (float(hue), _adjust_hue, 0.0)]
    order = torch.randperm(4, generator=generator(dev), device=dev).tolist()
    x = data
    for i in order:
        strength, fn, base = steps[i]
        if strength > 0:
            x = fn(x, base + _uniform(dev, -strength, strength), op)
    if x is data:
        return _finish(_run(t.clone), data._ctx, out)
    return _finish(x._t, data._ctx, out)


def adjust_lighting(data=None, alpha=_REQUIRED, out=None, name=None, **kwargs):
    """Add AlexNet-style PCA lighting noise to an HWC RGB image.

    Parameters
    ----------
    data : NDArray
        Shape (H, W, 1 or 3).
    alpha : tuple of 3 floats
        Weights of the three principal components (ImageNet's eigenvalues and vectors).
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    _need("adjust_lighting", alpha=alpha)
    return _finish(_adjust_lighting(data, alpha)._t, data._ctx, out)


def random_lighting(data=None, alpha_std=0.05, out=None, name=None, **kwargs):
    """:func:`adjust_lighting` with ``alpha`` drawn from N(0, alpha_std**2).

    Parameters
    ----------
    data : NDArray
        Shape (H, W, 1 or 3).
    alpha_std : float, default 0.05
        Standard deviation of each component's weight.
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    t = _check(data, "random_lighting", (3,))
    dev = t.device
    alpha = torch.randn(3, generator=generator(dev), device=dev, dtype=torch.float64)
    alpha = (alpha * float(alpha_std)).tolist()
    return _finish(_adjust_lighting(data, alpha, "random_lighting")._t, data._ctx, out)
