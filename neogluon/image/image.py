"""Read images and apply the crop/resize/normalise helpers of MXNet 1.9.1's ``mx.image``.

Decoding uses Pillow (optional: only :func:`imdecode` and :func:`imread` need it) and gives
OpenCV's pixels: PNG bit for bit, JPEG up to the decoders' rounding (both are libjpeg's
integer IDCT, so usually identical). Resizing is ``nd.image``'s reimplementation of OpenCV's
``cv::resize``. Crop geometry draws from Python's ``random`` exactly as MXNet does, so
``random.seed`` gives MXNet's crops.
"""
from __future__ import annotations

import io
import numbers
import random
import warnings

import numpy as np
import torch

from ..base import MXNetError, numeric_types
from ..ndarray import image as _ndimg
from ..ndarray.ndarray import NDArray, _new, array as _nd_array

__all__ = ["imdecode", "imread", "imresize", "scale_down", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "copyMakeBorder", "imrotate", "random_rotate"]


def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise MXNetError("imdecode/imread need OpenCV (pip install opencv-python-headless) "
                         "or the Pillow package (pip install pillow) to decode images; "
                         "neither is installed") from None
    return Image


# libpng's rgb_to_gray weights (what OpenCV asks libpng for: 0.299, 0.587), 15-bit fixed.
_PNG_GRAY = (29900 * 32768 // 100000, 58700 * 32768 // 100000)
_PNG_GRAY = _PNG_GRAY + (32768 - _PNG_GRAY[0] - _PNG_GRAY[1],)
# OpenCV's cvtColor RGB -> gray weights, 14-bit fixed.
_CV_GRAY = (4899, 9617, 1868)


def _to_gray(rgb, weights, shift, rounding):
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    v = (weights[0] * r + weights[1] * g + weights[2] * b + rounding) >> shift
    return v.astype(np.uint8)


_CV2 = []


def _opencv():
    """OpenCV's module when it is installed (``opencv-python-headless``, the ``image``
    extra) and not switched off (``NEOGLUON_IMAGE_DECODER=pil``), else None."""
    if not _CV2:
        import os
        cv2 = None
        if os.environ.get("NEOGLUON_IMAGE_DECODER", "").strip().lower() != "pil":
            try:
                import cv2
            except ImportError:
                cv2 = None
        _CV2.append(cv2)
    return _CV2[0]


# A decoder allocates what an image's header asks for before it reads the data: OpenCV a
# buffer of a PNG chunk's length, and both decoders the pixels. A header is refused when it
# asks for more than its bytes can encode: deflate expands at most 1032:1 (8 one-bit pixels a
# byte), a JPEG spends at least one bit on each 8x8 block. Images up to _FREE_PIXELS pass.
_FREE_PIXELS = 1 << 22
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _check_header(buf, what):
    """MXNetError for a PNG or JPEG whose header claims more than its bytes can hold."""
    try:
        mv = memoryview(buf).cast("B")
    except (TypeError, ValueError):
        return
    n = len(mv)

    def too_big(w, h, per_byte):
        if w * h > max(_FREE_PIXELS, per_byte * n):
            raise MXNetError(f"{what}: decoding failed, the image header claims {w}x{h} "
                             f"pixels, more than its {n} bytes can encode (a corrupted or "
                             "forged header)")
    if bytes(mv[:8]) == b"\x89PNG\r\n\x1a\n":
        pos = 8
        while pos + 8 <= n:
            length = int.from_bytes(mv[pos:pos + 4], "big")
            ctype = bytes(mv[pos + 4:pos + 8])
            if length > n - pos - 12:
                raise MXNetError(f"{what}: decoding failed, PNG chunk {ctype!r} at byte {pos} "
                                 f"claims {length} bytes, {max(n - pos - 12, 0)} follow "
                                 "(a truncated or corrupted image)")
            if ctype == b"IHDR" and length >= 8:
                too_big(int.from_bytes(mv[pos + 8:pos + 12], "big"),
                        int.from_bytes(mv[pos + 12:pos + 16], "big"), 8 * 1032)
            if ctype == b"IEND":
                break
            pos += 12 + length
    elif bytes(mv[:2]) == b"\xff\xd8":
        pos = 2
        while pos + 4 <= n and mv[pos] == 0xFF:
            marker = mv[pos + 1]
            if marker == 0xFF:
                pos += 1
                continue
            if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
                pos += 2
                continue
            if marker in _SOF and pos + 9 <= n:
                too_big(int.from_bytes(mv[pos + 7:pos + 9], "big"),
                        int.from_bytes(mv[pos + 5:pos + 7], "big"), 64 * 8)
                break
            if marker == 0xDA:
                break
            pos += 2 + int.from_bytes(mv[pos + 2:pos + 4], "big")


def _decode(buf, flag, what):
    """Decode encoded image bytes into an HWC uint8 numpy array in RGB (or one gray
    channel when ``flag`` is 0).

    With OpenCV installed it decodes, as MXNet's ``imdecode`` does (``cv::imdecode``): the
    same pixels as MXNet, JPEGs included, and 5-10x faster than Pillow on small images
    (ImageRecordIter's per-batch cost). Otherwise Pillow, with OpenCV's conversions
    (16-bit, gray, alpha); JPEG pixels may then differ by the decoders' rounding."""
    if not len(buf):
        raise MXNetError(f"{what}: decoding failed, the image data is empty")
    _check_header(buf, what)
    cv2 = _opencv()
    if cv2 is not None:
        try:
            img = cv2.imdecode(np.frombuffer(buf, dtype=np.uint8),
                               cv2.IMREAD_COLOR if flag else cv2.IMREAD_GRAYSCALE)
        except cv2.error as err:
            raise MXNetError(f"{what}: decoding failed, invalid image data (OpenCV: "
                             f"{str(err).strip()[-200:]})") from None
        if img is None:
            raise MXNetError(f"{what}: decoding failed, invalid image data (OpenCV could not "
                             f"decode {len(buf)} bytes)")
        if img.ndim == 2:
            return np.ascontiguousarray(img[..., None])
        return np.ascontiguousarray(img[..., ::-1])   # BGR -> RGB
    Image = _pil()
    try:
        img = Image.open(io.BytesIO(buf))
        fmt = img.format
        if flag == 0 and fmt == "JPEG":
            # libjpeg's own grayscale output (the luma plane), as OpenCV requests it.
            img.draft("L", img.size)
        img.load()
    except Exception as err:  # noqa: BLE001 - Pillow raises many types for bad data
        raise MXNetError(f"{what}: decoding failed, invalid image data ({err})") from None
    mode = img.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16-bit gray: OpenCV keeps the high byte when it reads 8-bit output.
        arr = (np.asarray(img).astype(np.int64) >> 8).clip(0, 255).astype(np.uint8)
        arr = arr[..., None]
    elif mode in ("L", "1"):
        arr = np.asarray(img.convert("L"))[..., None]
    elif mode == "LA":
        arr = np.asarray(img)[..., :1]
    else:
        arr = np.asarray(img.convert("RGB"))
    if flag == 0:
        if arr.shape[-1] == 3:
            if fmt == "PNG":
                # libpng's conversion truncates
                arr = _to_gray(arr, _PNG_GRAY, 15, 0)[..., None]
            else:
                arr = _to_gray(arr, _CV_GRAY, 14, 1 << 13)[..., None]
    elif arr.shape[-1] == 1:
        arr = np.repeat(arr, 3, axis=-1)
    return np.ascontiguousarray(arr, dtype=np.uint8)


def _write_out(result, out):
    if out is None:
        return result
    if not isinstance(out, NDArray):
        raise TypeError(f"out must be an NDArray, got {type(out).__name__}")
    if out.shape != result.shape or out.dtype != result.dtype:
        raise MXNetError(f"out has shape {out.shape} and dtype {np.dtype(out.dtype).name}, "
                         f"but the result has shape {result.shape} and dtype "
                         f"{np.dtype(result.dtype).name}")
    out[:] = result
    return out


def _check_flags(flag, to_rgb):
    if not isinstance(flag, (int, np.integer, bool)) or flag < 0:
        raise MXNetError(f"imdecode: flag must be 0 (grayscale) or 1 (color), got {flag!r}")
    if to_rgb not in (0, 1, True, False):
        raise MXNetError(f"imdecode: to_rgb must be a boolean (0 or 1), got {to_rgb!r}")


def imdecode(buf, flag=1, to_rgb=1, out=None):
    """Decode an image (JPEG, PNG, or any format Pillow reads) to an HWC uint8 NDArray.

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray
        The encoded image.
    flag : int, default 1
        1 (any non-zero value) for three colour channels, 0 for one grayscale channel.
    to_rgb : bool, default 1
        True for RGB channel order (MXNet's default), False for BGR (OpenCV's).
    out : NDArray, optional
        Array of the right shape and dtype to write the image into.

    Returns
    -------
    NDArray
        uint8 array of shape (H, W, 3), or (H, W, 1) when ``flag`` is 0.

    Notes
    -----
    Decodes with OpenCV when it is installed (MXNet's decoder: the same pixels), else with
    Pillow (PNG pixels equal OpenCV's, JPEG pixels can differ by the decoders' rounding).
    """
    if isinstance(buf, NDArray):
        data = buf.asnumpy().astype(np.uint8).tobytes()
    elif isinstance(buf, (bytes, bytearray)):
        data = bytes(buf)
    elif isinstance(buf, np.ndarray):
        data = buf.tobytes()
    else:
        raise ValueError("buf must be of type bytes, bytearray or numpy.ndarray, got "
                         f"{type(buf).__name__}; if you would like to input type str, "
                         "please convert to bytes")
    if len(data) == 0:
        raise MXNetError("imdecode: input cannot be an empty buffer")
    _check_flags(flag, to_rgb)
    arr = _decode(data, flag, "imdecode")
    if not to_rgb and arr.shape[-1] == 3:
        arr = np.ascontiguousarray(arr[..., ::-1])
    return _write_out(_nd_array(arr, dtype=np.uint8), out)


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode an image file to an HWC uint8 NDArray.

    Parameters
    ----------
    filename : str
        Path of the image file.
    flag : int, default 1
        1 for three colour channels, 0 for one grayscale channel.
    to_rgb : bool, default True
        True for RGB channel order, False for BGR (OpenCV's).
    out : NDArray, optional
        Array of the right shape and dtype to write the image into.

    Returns
    -------
    NDArray
        uint8 array of shape (H, W, 3) or (H, W, 1).
    """
    _check_flags(flag, to_rgb)
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as err:
        raise MXNetError(f"imread: {filename!r} couldn't open file: {err.strerror}") from None
    if len(data) == 0:
        raise MXNetError(f"imread: {filename!r} is empty")
    arr = _decode(data, flag, f"imread {filename!r}")
    if not to_rgb and arr.shape[-1] == 3:
        arr = np.ascontiguousarray(arr[..., ::-1])
    return _write_out(_nd_array(arr, dtype=np.uint8), out)


def _hwc(src, op):
    if not isinstance(src, NDArray):
        raise TypeError(f"{op}: src must be an NDArray, got {type(src).__name__}")
    if src.ndim != 3:
        raise MXNetError(f"{op}: src must be an image of shape (height, width, channels), "
                         f"but got shape {src.shape}")
    return src._t


def imresize(src, w, h, interp=1, out=None):
    """Resize an HWC image to width ``w`` and height ``h`` (OpenCV's ``cv::resize``).

    Parameters
    ----------
    src : NDArray
        Shape (H, W, C), uint8 or float.
    w, h : int
        Output width and height (at least 1).
    interp : int, default 1
        0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos (8x8).
    out : NDArray, optional

    Returns
    -------
    NDArray
        Shape (h, w, C), same dtype.
    """
    t = _hwc(src, "imresize")
    for name, v in (("w", w), ("h", h)):
        if int(v) < 1:
            raise MXNetError(f"imresize: value {v} for parameter {name} should be greater "
                             "equal to 1")
    r = _ndimg._resize_hwc(t, int(w), int(h), interp, "imresize")
    return _write_out(_new(r, src._ctx), out)


def scale_down(src_size, size):
    """Shrink a crop size to fit in the image, keeping the crop's aspect ratio.

    Parameters
    ----------
    src_size : (int, int)
        Image size as (width, height).
    size : (int, int)
        Crop size as (width, height).

    Returns
    -------
    (int, int)
        The crop size as (width, height).
    """
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _get_interp_method(interp, sizes=()):
    """MXNet's interpolation codes 9 (auto: cubic to enlarge, area to shrink, else
    bilinear) and 10 (random among 0-4) resolved to an OpenCV code."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"Unknown interp method {interp}")
    return interp


def resize_short(src, size, interp=2):
    """Resize so that the shorter side is ``size``, keeping the aspect ratio.

    Parameters
    ----------
    src : NDArray
        Shape (H, W, C).
    size : int
        Length of the shorter side after resizing.
    interp : int, default 2
        OpenCV code 0-4, or 9 (auto) or 10 (random).

    Returns
    -------
    NDArray
    """
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop the ``w`` x ``h`` region at ``(x0, y0)``, then resize it to ``size``.

    Parameters
    ----------
    src : NDArray
        Shape (H, W, C).
    x0, y0 : int
        Left and top of the region.
    w, h : int
        Width and height of the region; it must lie inside the image.
    size : (int, int), optional
        Output (width, height).
    interp : int, default 2
        Interpolation for the resize (see :func:`resize_short`).

    Returns
    -------
    NDArray

    Notes
    -----
    MXNet slices, so a region reaching past the image silently comes back smaller;
    neogluon raises an MXNetError naming the region instead.
    """
    _hwc(src, "fixed_crop")
    out = _new(_ndimg._crop(src, int(x0), int(y0), int(w), int(h), "fixed_crop"), src._ctx)
    if size is not None and (w, h) != size:
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=_get_interp_method(interp, sizes))
    return out


def random_crop(src, size, interp=2):
    """Crop a random region of ``size`` (width, height), upsampled if the image is smaller.

    Parameters
    ----------
    src : NDArray
        Shape (H, W, C).
    size : (int, int)
        Crop (width, height).
    interp : int, default 2

    Returns
    -------
    NDArray
        The crop.
    tuple
        ``(x, y, width, height)`` of the region in ``src``.
    """
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """Crop the centre region of ``size`` (width, height), upsampled if the image is
    smaller.

    Parameters
    ----------
    src : NDArray
        Shape (H, W, C).
    size : (int, int)
        Crop (width, height).
    interp : int, default 2

    Returns
    -------
    NDArray
        The crop.
    tuple
        ``(x, y, width, height)`` of the region in ``src``.
    """
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """Subtract ``mean`` and divide by ``std``, in place on ``src`` (as MXNet does).

    Parameters
    ----------
    src : NDArray
        Image, e.g. (H, W, 3) float.
    mean : NDArray or None
        Per-channel mean (broadcast against ``src``).
    std : NDArray, optional
        Per-channel standard deviation.

    Returns
    -------
    NDArray
        ``src``, modified.
    """
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """Crop a region of random area and aspect ratio, resized to ``size``.

    Parameters
    ----------
    src : NDArray
        Shape (H, W, C).
    size : (int, int)
        Output (width, height).
    area : float or (float, float)
        Range of the crop's area as a fraction of the image's (a float means (area, 1)).
    ratio : (float, float)
        Range of the aspect ratio (width / height), drawn log-uniformly.
    interp : int, default 2

    Returns
    -------
    NDArray
        The crop.
    tuple
        ``(x, y, width, height)`` of the region in ``src``.

    Notes
    -----
    Falls back to :func:`center_crop` after 10 draws that do not fit.
    """
    h, w, _ = src.shape
    src_area = h * w
    if "min_area" in kwargs:
        warnings.warn("`min_area` is deprecated. Please use `area` instead.", DeprecationWarning)
        area = kwargs.pop("min_area")
    if kwargs:
        raise TypeError(f"unexpected keyword arguments for `random_size_crop`: {sorted(kwargs)}")
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
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _border_index(n, before, after, kind):
    """OpenCV's borderInterpolate for every padded position of an axis of length ``n``
    (-1 marks a constant-filled position)."""
    idx = []
    for p in range(-before, n + after):
        if 0 <= p < n:
            idx.append(p)
        elif kind == 0:
            idx.append(-1)
        elif kind == 1:
            idx.append(0 if p < 0 else n - 1)
        elif kind in (2, 4):
            if n == 1:
                idx.append(0)
                continue
            delta = 1 if kind == 4 else 0
            while not 0 <= p < n:
                p = -p - 1 + delta if p < 0 else n - 1 - (p - n) - delta
            idx.append(p)
        else:
            idx.append(p % n)
    return np.array(idx, dtype=np.int64)


# OpenCV's border codes (MXNet's docstring lists them in another order; these are what
# its operator does).
_BORDER_TYPES = {0: "constant", 1: "replicate", 2: "reflect", 3: "wrap", 4: "reflect_101"}


def copyMakeBorder(src=None, top=None, bot=None, left=None, right=None, type=0, value=0.0,
                   values=(), out=None, name=None, **kwargs):
    """Pad an HWC image's borders (OpenCV's ``copyMakeBorder``).

    Parameters
    ----------
    src : NDArray
        Shape (H, W, C).
    top, bot, left, right : int
        Margins in pixels.
    type : int, default 0
        OpenCV's codes: 0 constant, 1 replicate (``aaa|abc``), 2 reflect (``cba|abc``),
        3 wrap (``abc|abc``), 4 reflect-101 (``cb|abc``). (MXNet's docstring lists another
        order; these are what its operator does.)
    value : float, default 0
        Fill value for type 0 (deprecated in favour of ``values``).
    values : tuple of float, optional
        Per-channel fill values for type 0 (up to 4).
    out : NDArray, optional

    Returns
    -------
    NDArray
        Shape (H + top + bot, W + left + right, C).
    """
    t = _hwc(src, "copyMakeBorder")
    margins = {"top": top, "bot": bot, "left": left, "right": right}
    for k, v in margins.items():
        if v is None:
            raise MXNetError(f"copyMakeBorder: required parameter {k} is missing")
        if int(v) < 0:
            raise MXNetError(f"copyMakeBorder: {k} must be >= 0, got {v}")
    if type not in _BORDER_TYPES:
        raise MXNetError(f"copyMakeBorder: unknown border type {type}; use 0 (constant), "
                         "1 (replicate), 2 (reflect), 3 (wrap) or 4 (reflect_101)")
    h, w, c = t.shape
    if h == 0 or w == 0:
        raise MXNetError(f"copyMakeBorder: cannot pad an empty image of shape {src.shape}")
    yi = _border_index(h, int(top), int(bot), type)
    xi = _border_index(w, int(left), int(right), type)
    dev = t.device
    r = t.detach().index_select(0, torch.as_tensor(np.maximum(yi, 0), device=dev))
    r = r.index_select(1, torch.as_tensor(np.maximum(xi, 0), device=dev))
    if type == 0:
        # MXNet: ``values`` (a number or a tuple) fills the channels it names and 0 the rest;
        # without it, ``value`` fills every channel
        if isinstance(values, numbers.Number):
            values = (values,)
        fill = [float(values[i]) if i < len(values) else 0.0 for i in range(c)] \
            if len(values) else [float(value)] * c
        fill_t = _ndimg._saturate(torch.tensor(fill, dtype=torch.float64, device=dev), t.dtype)
        mask = torch.as_tensor((yi[:, None] < 0) | (xi[None, :] < 0), device=dev)
        r = torch.where(mask[..., None], fill_t.reshape(1, 1, c), r)
    return _write_out(_new(r.contiguous(), src._ctx), out)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate CHW (or NCHW) float32 images about their centres, counter-clockwise for
    positive angles, bilinear, with zeros outside the source.

    Parameters
    ----------
    src : NDArray
        Shape (C, H, W) or (N, C, H, W), float32.
    rotation_degrees : float or NDArray
        The angle; with a batch, a scalar or one angle per image.
    zoom_in : bool, default False
        Scale so that no empty corner shows.
    zoom_out : bool, default False
        Scale so that the whole source stays visible.

    Returns
    -------
    NDArray
    """
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype is not np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    t = src._t.detach()
    single = t.dim() == 3
    if single:
        if not isinstance(rotation_degrees, numeric_types):
            raise TypeError("When a single image is passed the rotation angle is required to "
                            "be a scalar.")
        t = t.unsqueeze(0)
    elif t.dim() != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n, _, h, w = t.shape
    dev = t.device
    if isinstance(rotation_degrees, numeric_types):
        deg = torch.full((n,), float(rotation_degrees), dtype=torch.float32, device=dev)
    else:
        deg = (rotation_degrees._t.detach() if isinstance(rotation_degrees, NDArray)
               else torch.as_tensor(np.asarray(rotation_degrees))).to(dev, torch.float32)
        deg = deg.reshape(-1)
        if deg.numel() != n:
            raise ValueError("The number of images must be equal to the number of rotation "
                             "angles")
    rad = (np.pi * deg / 180).reshape(n, 1, 1)
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    hm = (torch.arange(h, dtype=torch.float32, device=dev).reshape(h, 1) - hs).expand(h, w)
    wm = (torch.arange(w, dtype=torch.float32, device=dev).reshape(1, w) - ws).expand(h, w)
    cos, sin = torch.cos(rad), torch.sin(rad)
    w_rot = (wm * cos - hm * sin) / ws
    h_rot = (wm * sin + hm * cos) / hs
    scale = 1.0
    if zoom_in or zoom_out:
        hh = torch.tensor(float(h), device=dev)
        ww = torch.tensor(float(w), device=dev)
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
    r = torch.nn.functional.grid_sample(t, grid, mode="bilinear", padding_mode="zeros",
                                        align_corners=True)
    return _new(r[0] if single else r, src._ctx)


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """:func:`imrotate` by angles drawn uniformly from ``angle_limits`` (numpy's global
    generator, as MXNet), one per image.

    Parameters
    ----------
    src : NDArray
        Shape (C, H, W) or (N, C, H, W), float32.
    angle_limits : (float, float)
        Lower and upper bound of the angle in degrees.
    zoom_in, zoom_out : bool
        As for :func:`imrotate`.

    Returns
    -------
    NDArray
    """
    if src.ndim == 3:
        deg = np.random.uniform(*angle_limits)
    else:
        deg = np.random.uniform(*angle_limits, size=src.shape[0])
    return imrotate(src, deg, zoom_in=zoom_in, zoom_out=zoom_out)


# The augmenters and ImageIter live in augment.py; MXNet has them in mx.image.image too. Last
# in this module because augment.py imports the functions above.
from .augment import *  # noqa: E402,F401,F403
from .augment import __all__ as _augment_all  # noqa: E402

__all__ += _augment_all


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .. import recordio  # noqa: E402,F401
from .. import ndarray as nd  # noqa: E402,F401
from ..util import is_np_array  # noqa: E402,F401
