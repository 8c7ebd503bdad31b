"""Image operations behind the vision transforms (MXNet's ``nd.image`` and ``mx.image``
semantics), computed with torch on the array's own device.

Images are HWC arrays (or NHWC batches) unless a function says otherwise.
"""
from __future__ import annotations

import random

import numpy as np
import torch
import torch.nn.functional as F

from ....base import MXNetError, numeric_types
from ....ndarray.ndarray import NDArray, _new

# OpenCV's codes, which MXNet uses: 0 nearest, 1 bilinear, 2 bicubic, 3 area.
_INTERP = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area"}
_GRAY = (0.299, 0.587, 0.114)


def _check(x, op, ndims=(3, 4)):
    if not isinstance(x, NDArray):
        raise TypeError(f"{op}: expected an NDArray image, got {type(x).__name__}")
    if x.ndim not in ndims:
        raise MXNetError(f"{op}: expected an image with {' or '.join(map(str, ndims))} "
                         f"dimensions, got shape {x.shape}")
    return x._t.detach()


def _saturate(t, dtype):
    """Cast float results back to the input dtype as OpenCV does (round and clip)."""
    if dtype.is_floating_point:
        return t.to(dtype)
    info = torch.iinfo(dtype)
    return t.round().clamp(info.min, info.max).to(dtype)


def to_tensor(x):
    """HWC (or NHWC) values in [0, 255] to CHW (NCHW) float32 in [0, 1]."""
    t = _check(x, "to_tensor")
    t = t.permute(2, 0, 1) if t.dim() == 3 else t.permute(0, 3, 1, 2)
    return _new(t.to(torch.float32).div(255.0).contiguous(), x._ctx)


def normalize(x, mean=0.0, std=1.0):
    """``(x - mean) / std`` per channel of a CHW (or NCHW) float array."""
    t = _check(x, "normalize")
    c = t.shape[0] if t.dim() == 3 else t.shape[1]

    def per_channel(v, what):
        v = [v] if isinstance(v, numeric_types) else list(v)
        if len(v) not in (1, c):
            raise MXNetError(f"normalize: {what} must have 1 or {c} values (one per channel), "
                             f"got {len(v)}")
        if len(v) == 1:
            v = v * c
        shape = (c, 1, 1) if t.dim() == 3 else (1, c, 1, 1)
        return torch.tensor(v, dtype=t.dtype, device=t.device).reshape(shape)
    return _new((t - per_channel(mean, "mean")) / per_channel(std, "std"), x._ctx)


def _area_weights(n_in, n_out, device):
    """(n_out, n_in) matrix: row i holds the coverage of each source cell by output cell i's
    footprint ``[i * s, (i + 1) * s)`` (``s = n_in / n_out``), divided by ``s``."""
    scale = n_in / n_out
    edges = torch.arange(n_out + 1, dtype=torch.float64) * scale
    lo, hi = edges[:-1].unsqueeze(1), edges[1:].unsqueeze(1)
    cells = torch.arange(n_in, dtype=torch.float64).unsqueeze(0)
    cover = (torch.minimum(hi, cells + 1) - torch.maximum(lo, cells)).clamp(min=0)
    return (cover / scale).to(torch.float32).to(device)


def _resize_tensor(t, w, h, interp):
    """Resize an HWC or NHWC tensor to width ``w`` and height ``h``."""
    mode = _INTERP.get(interp)
    if mode is None:
        raise MXNetError(f"resize: interpolation {interp} is not supported; use 0 (nearest), "
                         "1 (bilinear), 2 (bicubic) or 3 (area)")
    batched = t.dim() == 4
    src = t if batched else t.unsqueeze(0)
    if src.shape[1] == h and src.shape[2] == w:
        return t.clone()
    dtype = src.dtype
    x = src.permute(0, 3, 1, 2).to(torch.float32)
    if mode in ("bilinear", "bicubic"):
        x = F.interpolate(x, size=(h, w), mode=mode, align_corners=False)
    elif mode == "area" and (h > src.shape[1] or w > src.shape[2]):
        # OpenCV's INTER_AREA enlarges much like bilinear (approximated by it here).
        x = F.interpolate(x, size=(h, w), mode="bilinear", align_corners=False)
    elif mode == "area":
        # Each output pixel averages the source pixels its footprint covers, weighted by
        # the covered fraction (OpenCV's INTER_AREA when shrinking), done separably.
        wy = _area_weights(src.shape[1], h, x.device)
        wx = _area_weights(src.shape[2], w, x.device)
        x = torch.einsum("oh,nchw,pw->ncop", wy, x, wx)
    else:
        x = F.interpolate(x, size=(h, w), mode=mode)
    out = _saturate(x.permute(0, 2, 3, 1), dtype).contiguous()
    return out if batched else out[0]


def resize(x, size, keep_ratio=False, interp=1):
    """Resize an HWC or NHWC image.

    ``size`` is ``(width, height)`` or an int; with an int and ``keep_ratio`` the shorter
    side becomes ``size`` and the other keeps the aspect ratio.
    """
    t = _check(x, "resize")
    h, w = (t.shape[0], t.shape[1]) if t.dim() == 3 else (t.shape[1], t.shape[2])
    if isinstance(size, numeric_types):
        if keep_ratio:
            if h > w:
                nw, nh = int(size), int(h * size / w)
            else:
                nw, nh = int(w * size / h), int(size)
        else:
            nw = nh = int(size)
    else:
        if len(size) != 2:
            raise MXNetError(f"resize: size must be an int or (width, height), got {size}")
        nw, nh = int(size[0]), int(size[1])
    return _new(_resize_tensor(t, nw, nh, interp), x._ctx)


def crop(x, x0, y0, width, height):
    """The ``width`` x ``height`` region of an HWC or NHWC image starting at ``(x0, y0)``."""
    t = _check(x, "crop")
    h, w = (t.shape[0], t.shape[1]) if t.dim() == 3 else (t.shape[1], t.shape[2])
    if x0 < 0 or y0 < 0 or x0 + width > w or y0 + height > h:
        raise MXNetError(f"crop: region x={x0}, y={y0}, width={width}, height={height} is "
                         f"outside the image of width {w} and height {h}")
    if t.dim() == 3:
        r = t[y0:y0 + height, x0:x0 + width]
    else:
        r = t[:, y0:y0 + height, x0:x0 + width]
    return _new(r.contiguous(), x._ctx)


def fixed_crop(x, x0, y0, w, h, size=None, interp=2):
    """Crop, then resize to ``size`` (``(width, height)``) when given and different."""
    out = crop(x, x0, y0, w, h)
    if size is not None and (w, h) != tuple(size):
        out = _new(_resize_tensor(out._t, size[0], size[1], interp), x._ctx)
    return out


def scale_down(src_size, size):
    """Shrink ``size`` (w, h) to fit in ``src_size`` (w, h), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def center_crop(x, size, interp=2):
    """Crop the centre (resized to ``size`` = (w, h) if the image is too small)."""
    t = _check(x, "center_crop", (3,))
    h, w = t.shape[0], t.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(x, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def random_size_crop(x, size, area, ratio, interp=2):
    """Crop a random region of random area fraction and aspect ratio, resized to ``size``.

    Draws from Python's ``random`` module exactly as MXNet does, so ``random.seed`` gives
    MXNet's crops. Falls back to :func:`center_crop` after 10 unsuccessful draws.
    """
    t = _check(x, "random_size_crop", (3,))
    h, w = t.shape[0], t.shape[1]
    src_area = h * w
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
        new_ratio = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(x, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(x, size, interp)


def flip(x, axis_3d):
    """Reverse the width (``axis_3d=1``) or height (0) axis of an HWC image.

    MXNet 1.9.1's top-bottom flip of an image with an odd height also mirrors the middle
    row left to right; neogluon does the same so that flipped data match MXNet's.
    """
    t = _check(x, "flip", (3,))
    r = torch.flip(t, (axis_3d,))
    if axis_3d == 0 and t.shape[0] % 2:
        mid = t.shape[0] // 2
        r[mid] = torch.flip(t[mid], (0,))
    return _new(r, x._ctx)


def _float(t):
    return t if t.is_floating_point() else t.to(torch.float32)


def _clip_cast(t, dtype):
    """MXNet's colour ops clip integer results into range and then truncate."""
    if dtype.is_floating_point:
        return t.to(dtype)
    info = torch.iinfo(dtype)
    return t.clamp(info.min, info.max).trunc().to(dtype)


def adjust_brightness(x, alpha):
    t = _check(x, "brightness")
    return _new(_clip_cast(_float(t) * alpha, t.dtype), x._ctx)


def _gray(t):
    coef = torch.tensor(_GRAY, dtype=torch.float32, device=t.device)
    return (_float(t)[..., :3] * coef).sum(-1, keepdim=True)


def adjust_contrast(x, alpha):
    """Blend an HWC RGB image with its mean gray level: ``x * alpha + mean * (1 - alpha)``."""
    t = _check(x, "contrast", (3,))
    gray_mean = _gray(t).mean()
    return _new(_clip_cast(_float(t) * alpha + gray_mean * (1 - alpha), t.dtype), x._ctx)


def adjust_saturation(x, alpha):
    """Blend an HWC RGB image with a per-pixel gray level, as MXNet 1.9.1 computes it.

    MXNet 1.9.1's operator keeps only the blue term of the luma sum (``0.114 * B``) as the
    gray level; neogluon reproduces that so that augmented data match MXNet's.
    """
    t = _check(x, "saturation", (3,))
    gray = _float(t)[..., 2:3] * _GRAY[2]
    return _new(_clip_cast(_float(t) * alpha + gray * (1 - alpha), t.dtype), x._ctx)


_EIGVAL = (55.46, 4.794, 1.148)
_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140),
           (-0.5836, -0.6948, 0.4203))


def adjust_lighting(x, alpha):
    """AlexNet-style PCA lighting noise with per-component weights ``alpha`` (3 values)."""
    t = _check(x, "lighting", (3,))
    eigval = np.array(_EIGVAL) * np.asarray(alpha, dtype=np.float64)
    rgb = np.dot(np.array(_EIGVEC), eigval)
    shift = torch.tensor(rgb, dtype=torch.float32, device=t.device)
    return _new(_clip_cast(_float(t) + shift, t.dtype), x._ctx)


def imrotate(x, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate CHW (or NCHW) float32 images by ``rotation_degrees`` (counter-clockwise for
    positive angles) about their centres, bilinear, with zeros outside the source.

    ``zoom_in`` scales so that no empty corner shows; ``zoom_out`` so that the whole source
    stays visible. With a batch, ``rotation_degrees`` may hold one angle per image.
    """
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if x.dtype is not np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    t = x._t.detach()
    single = t.dim() == 3
    if single:
        if not isinstance(rotation_degrees, numeric_types):
            raise TypeError("When a single image is passed the rotation angle is required to "
                            "be a scalar.")
        t = t.unsqueeze(0)
    elif t.dim() != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n, _, h, w = t.shape
    if isinstance(rotation_degrees, numeric_types):
        deg = torch.full((n,), float(rotation_degrees), dtype=torch.float32, device=t.device)
    else:
        deg = (rotation_degrees._t.detach() if isinstance(rotation_degrees, NDArray)
               else torch.as_tensor(np.asarray(rotation_degrees))).to(t.device, torch.float32)
        deg = deg.reshape(-1)
        if deg.numel() != n:
            raise ValueError("The number of images must be equal to the number of rotation "
                             "angles")
    rad = (np.pi * deg / 180).reshape(n, 1, 1)
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    hm = (torch.arange(h, dtype=torch.float32, device=t.device).reshape(h, 1) - hs).expand(h, w)
    wm = (torch.arange(w, dtype=torch.float32, device=t.device).reshape(1, w) - ws).expand(h, w)
    cos, sin = torch.cos(rad), torch.sin(rad)
    w_rot = (wm * cos - hm * sin) / ws
    h_rot = (wm * sin + hm * cos) / hs
    scale = 1.0
    if zoom_in or zoom_out:
        hh = torch.tensor(float(h), device=t.device)
        ww = torch.tensor(float(w), device=t.device)
        rho = torch.sqrt(hh * hh + ww * ww)
        ang = torch.atan(hh / ww)
        a = rad.abs()
        max_x = torch.maximum((rho * torch.cos(ang + a)).abs(), (rho * torch.cos(ang - a)).abs())
        max_y = torch.maximum((rho * torch.sin(ang + a)).abs(), (rho * torch.sin(ang - a)).abs())
        if zoom_out:
            scale = torch.maximum(max_x / ww, max_y / hh)
        else:
            scale = torch.minimum(ww / max_x, hh / max_y)
    grid = torch.stack([w_rot, h_rot], dim=-1) * (scale.reshape(n, 1, 1, 1)
                                                  if torch.is_tensor(scale) else scale)
    out = F.grid_sample(t, grid, mode="bilinear", padding_mode="zeros", align_corners=True)
    return _new(out[0] if single else out, x._ctx)


def random_rotate(x, angle_limits, zoom_in=False, zoom_out=False):
    """:func:`imrotate` by angles drawn uniformly from ``angle_limits`` (numpy's generator),
    one per image."""
    if x.ndim == 3:
        deg = np.random.uniform(*angle_limits)
    else:
        deg = np.random.uniform(*angle_limits, size=x.shape[0])
    return imrotate(x, deg, zoom_in=zoom_in, zoom_out=zoom_out)


def _hue_channel(m1, m2, h):
    h = torch.remainder(h, 1.0)
    return torch.where(h < 1 / 6, m1 + (m2 - m1) * h * 6,
                       torch.where(h < 0.5, m2,
                                   torch.where(h < 2 / 3, m1 + (m2 - m1) * (2 / 3 - h) * 6,
                                               m1)))


def adjust_hue(x, alpha):
    """Rotate the hue of an HWC RGB image by ``alpha`` turns (HLS colour space, values read
    on a 0-255 scale), as MXNet's hue operator does."""
    t = _check(x, "hue", (3,))
    f = _float(t)[..., :3].to(torch.float32) / 255.0
    r, g, b = f.unbind(-1)
    maxc = torch.maximum(torch.maximum(r, g), b)
    minc = torch.minimum(torch.minimum(r, g), b)
    l = (maxc + minc) / 2
    d = maxc - minc
    gray = d == 0
    safe_d = torch.where(gray, torch.ones_like(d), d)
    s = torch.where(l <= 0.5, d / torch.where(gray, torch.ones_like(d), maxc + minc),
                    d / torch.where(gray, torch.ones_like(d), 2.0 - maxc - minc))
    rc, gc, bc = (maxc - r) / safe_d, (maxc - g) / safe_d, (maxc - b) / safe_d
    h = torch.where(r == maxc, bc - gc, torch.where(g == maxc, 2.0 + rc - bc, 4.0 + gc - rc))
    h = torch.remainder(h / 6.0, 1.0) + alpha
    s = torch.where(gray, torch.zeros_like(s), s)
    m2 = torch.where(l <= 0.5, l * (1.0 + s), l + s - l * s)
    m1 = 2.0 * l - m2
    rgb = torch.stack([_hue_channel(m1, m2, h + 1 / 3), _hue_channel(m1, m2, h),
                       _hue_channel(m1, m2, h - 1 / 3)], dim=-1)
    rgb = torch.where(gray.unsqueeze(-1), l.unsqueeze(-1).expand_as(rgb), rgb) * 255.0
    if t.shape[-1] > 3:
        rgb = torch.cat([rgb, _float(t)[..., 3:].to(torch.float32)], dim=-1)
    return _new(_clip_cast(rgb, t.dtype), x._ctx)
