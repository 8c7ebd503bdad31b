"""``mx.io.ImageDetRecordIter``: MXNet's RecordIO iterator for object detection, in Python on
top of ``mx.recordio`` and ``mx.image``.

A record's label is ``[header_width, object_width, (extra header...), objects...]`` with
each object ``[class, xmin, ymin, xmax, ymax, (extra...)]`` in coordinates normalised to
[0, 1]. A batch's label row is ``[channels, height, width, label_length, label...]`` padded
with ``label_pad_value`` to ``4 + label_pad_width`` values, as MXNet's C++ iterator gives it.

The random augmentations reproduce MXNet's own draws: MXNet gives each of its decoding
threads a ``std::mt19937`` seeded ``233 * (thread + 1)`` and draws with libstdc++'s
distributions in a fixed order; this module keeps the same generators (numpy's MT19937 is
the same engine), splits the records among them as MXNet does, and draws in the same order,
so with the same thread count (``preprocess_threads`` capped at the CPU count - 1, as
MXNet) the images and labels are MXNet's. The shuffle is ``std::shuffle`` on a
``std::mt19937`` seeded ``233 + seed``, also reproduced.
"""
from __future__ import annotations

import io as _pyio
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..base import MXNetError
from .._loaderr import named
from .io import DataIter, DataBatch, DataDesc

__all__ = ["ImageDetRecordIter"]

_IGNORED = {"verbose", "ctx", "device_id", "shuffle_chunk_seed", "prefetch_buffer"}
_RAND_MAGIC = 233
# dmlc-core reads a RecordIO file in chunks of this size; each chunk is split among the
# decoding threads (and shuffled on its own).
_CHUNK = 8 << 20
_F = np.float32


# ---------------------------------------------------------------------------------------
# libstdc++'s random engine and distributions (std::mt19937 with uniform_real_distribution
# <float>, uniform_int_distribution and std::shuffle), bit for bit.

class _StdRandom:
    """``std::mt19937(seed)`` and the libstdc++ distributions MXNet draws from."""

    def __init__(self, seed):
        self._mt = np.random.RandomState(int(seed) & 0xFFFFFFFF)._bit_generator

    def raw(self):
        return int(self._mt.random_raw())

    def uniform(self, a, b):
        """``std::uniform_real_distribution<float>(a, b)``: generate_canonical<float, 24>
        (one 32-bit draw), then ``u * (b - a) + a`` in float."""
        u = _F(self.raw()) / _F(4294967296.0)
        if u >= _F(1):
            u = np.nextafter(_F(1), _F(0))
        a, b = _F(a), _F(b)
        return _F(u * _F(b - a) + a)

    def randint(self, lo, hi):
        """``std::uniform_int_distribution(lo, hi)`` (division-based rejection)."""
        urange = hi - lo
        if urange == 0:
            return lo
        erange = urange + 1
        scaling = 0xFFFFFFFF // erange
        past = erange * scaling
        while True:
            r = self.raw()
            if r < past:
                return lo + r // scaling

    def shuffle(self, seq):
        """``std::shuffle(seq.begin(), seq.end(), engine)`` as the libstdc++ MXNet 1.9.1's
        wheel was built with: one ``uniform_int(0, i)`` draw per position from the
        second on (no two-at-a-time draws)."""
        for i in range(1, len(seq)):
            j = self.randint(0, i)
            seq[i], seq[j] = seq[j], seq[i]


def _split(starts, begin, end, parts):
    """dmlc-core's byte split: the part of each record (by its start offset) when
    ``[begin, end)`` is cut into ``parts`` equal, 4-byte aligned ranges."""
    size = end - begin
    step = (size + parts - 1) // parts
    step = (step + 3) // 4 * 4
    return [min((s - begin) // step, parts - 1) if step else 0 for s in starts]


def _chunks(starts, end, size=_CHUNK):
    """dmlc-core's chunks of a part (records starting at ``starts``, the part ending at
    ``end``): ``size`` bytes from a chunk's first record, cut before the last record that
    starts in them (at least 8 bytes before their end), the rest of the part whole.
    Index ranges ``(lo, hi)`` into ``starts``."""
    out, lo, n = [], 0, len(starts)
    while lo < n:
        if end - starts[lo] < size:
            out.append((lo, n))
            break
        limit = starts[lo] + size - 8
        hi = lo + 1
        while hi < n and starts[hi] <= limit:
            hi += 1
        # records lo .. hi-1 start in the window; the last of them opens the next chunk
        cut = hi - 1 if hi - 1 > lo else hi
        out.append((lo, cut))
        lo = cut
    return out


# ---------------------------------------------------------------------------------------
# Labels: MXNet's ImageDetLabel (objects with no area are dropped when parsed).

class _DetLabel:
    def __init__(self, raw, where):
        raw = np.asarray(raw, np.float32).reshape(-1)
        if raw.size < 7:
            raise MXNetError(f"ImageDetRecordIter: {where} has a label of {raw.size} value(s); "
                             "a detection label is [header_width, object_width, (extra "
                             "header...), objects...] with at least one 5-value object (7 "
                             "values)")
        hw, ow = int(raw[0]), int(raw[1])
        if hw < 2:
            raise MXNetError(f"ImageDetRecordIter: {where}: label header_width {hw} must be "
                             ">= 2")
        if ow < 5:
            raise MXNetError(f"ImageDetRecordIter: {where}: label object_width {ow} must be "
                             ">= 5 (id, xmin, ymin, xmax, ymax)")
        if hw > raw.size or (raw.size - hw) % ow:
            raise MXNetError(f"ImageDetRecordIter: {where}: label of {raw.size} values does "
                             f"not hold whole objects of width {ow} after a header of {hw}")
        self.header = raw[:hw]
        objs = raw[hw:].reshape(-1, ow)
        self.objects = objs[(objs[:, 3] > objs[:, 1]) & (objs[:, 4] > objs[:, 2])].copy()

    def array(self):
        return np.concatenate([self.header, self.objects.reshape(-1)])

    def project(self, box):
        """Coordinates relative to ``box`` = (x, y, w, h) (normalised), clipped to [0, 1]."""
        x, y, w, h = (_F(v) for v in box)
        o = self.objects
        o[:, 1] = np.maximum(_F(0), (o[:, 1] - x) / w)
        o[:, 2] = np.maximum(_F(0), (o[:, 2] - y) / h)
        o[:, 3] = np.minimum(_F(1), (o[:, 3] - x) / w)
        o[:, 4] = np.minimum(_F(1), (o[:, 4] - y) / h)

    def mirror(self):
        o = self.objects
        left = _F(1) - o[:, 3]
        o[:, 3] = _F(1) - o[:, 1]
        o[:, 1] = left

    def try_crop(self, box, p, idx):
        """MXNet's TryCrop: whether ``box`` (x, y, w, h) satisfies sampler ``idx``'s
        constraints; on success the objects are those kept by the emit rule, projected."""
        objs = self.objects
        if len(objs) == 0:
            return True
        bx, by, bw, bh = box
        lims = [p[k][idx] for k in ("min_crop_overlaps", "max_crop_overlaps",
                                    "min_crop_sample_coverages", "max_crop_sample_coverages",
                                    "min_crop_object_coverages", "max_crop_object_coverages")]
        # MXNet checks the constraints only when all six are set (every min > 0 and every
        # max < 1); otherwise any crop box is accepted.
        if lims[0] > 0 and lims[1] < 1 and lims[2] > 0 and lims[3] < 1 and lims[4] > 0 \
                and lims[5] < 1:
            valid = False
            for o in objs:
                gw, gh = _F(o[3] - o[1]), _F(o[4] - o[2])
                inter = _inter_area((bx, by, bw, bh), (o[1], o[2], gw, gh))
                ovp = _F(0) if inter <= 0 else \
                    _F(inter / _F(_F(bw * bh) + _F(gw * gh) - inter))
                if ovp < lims[0] or ovp > lims[1]:
                    continue
                c = _F(inter / _F(bw * bh))
                if c < lims[2] or c > lims[3]:
                    continue
                c = _F(inter / _F(gw * gh))
                if c < lims[4] or c > lims[5]:
                    continue
                valid = True
                break
            if not valid:
                return False
        keep = []
        for k, o in enumerate(objs):
            if p["crop_emit_mode"] == "center":
                cx, cy = _F((o[1] + o[3]) * _F(0.5)), _F((o[2] + o[4]) * _F(0.5))
                if bx <= cx < _F(bx + bw) and by <= cy < _F(by + bh):
                    keep.append(k)
            else:
                gw, gh = _F(o[3] - o[1]), _F(o[4] - o[2])
                inter = _inter_area((bx, by, bw, bh), (o[1], o[2], gw, gh))
                if _F(inter / _F(gw * gh)) > p["emit_overlap_thresh"]:
                    keep.append(k)
        if not keep:
            return False
        self.objects = self.objects[keep].copy()
        self.project(box)
        return True


def _inter_area(a, b):
    """Area of the intersection of two float (x, y, w, h) rectangles (OpenCV's Rect_&)."""
    x1, y1 = max(_F(a[0]), _F(b[0])), max(_F(a[1]), _F(b[1]))
    w = _F(min(_F(a[0] + a[2]), _F(b[0] + b[2])) - x1)
    h = _F(min(_F(a[1] + a[3]), _F(b[1] + b[3])) - y1)
    if w <= 0 or h <= 0:
        return _F(0)
    return _F(w * h)


# ---------------------------------------------------------------------------------------
# MXNet's det_aug_default augmenter, split in two: `_plan` makes every random draw (in
# MXNet's order, from the image's size and label only) and `_apply` does the pixel work.

def _inter(method, ow, oh, nw, nh, rng):
    if method == 9:
        if nw > ow and nh > oh:
            return 2
        if nw < ow and nh < oh:
            return 3
        return 1
    if method == 10:
        return rng.randint(0, 4)
    return method


def _resize_dims(rows, cols, resize):
    if rows > cols:
        return resize * rows // cols, resize
    return resize, resize * cols // rows


def _plan(p, rows, cols, raw_label, rng, where):
    """The draws and geometry of one image (``rows`` x ``cols`` as decoded)."""
    plan = {}
    if p["resize"] != -1:
        nh, nw = _resize_dims(rows, cols, p["resize"])
        plan["resize"] = (nw, nh, _inter(p["inter_method"], cols, rows, nw, nh, rng))
        rows, cols = nh, nw
    label = _DetLabel(raw_label, where)
    if (p["random_hue_prob"] > 0 or p["random_saturation_prob"] > 0
            or p["random_illumination_prob"] > 0 or p["random_contrast_prob"] > 0):
        h = int(rng.uniform(-1, 1) * _F(p["max_random_hue"]))
        s = int(rng.uniform(-1, 1) * _F(p["max_random_saturation"]))
        li = int(rng.uniform(-1, 1) * _F(p["max_random_illumination"]))
        c = _F(rng.uniform(-1, 1) * _F(p["max_random_contrast"]))
        h = h if rng.uniform(0, 1) < _F(p["random_hue_prob"]) else 0
        s = s if rng.uniform(0, 1) < _F(p["random_saturation_prob"]) else 0
        li = li if rng.uniform(0, 1) < _F(p["random_illumination_prob"]) else 0
        c = c if rng.uniform(0, 1) < _F(p["random_contrast_prob"]) else _F(0)
        if h or s or li:
            plan["hls"] = (h, li, s)
        if abs(c) > 1e-3:
            plan["contrast"] = _F(c + _F(1))
    if p["rand_mirror_prob"] > 0 and rng.uniform(0, 1) < _F(p["rand_mirror_prob"]):
        label.mirror()
        plan["mirror"] = True
    if p["rand_pad_prob"] > 0 and p["max_pad_scale"] > 1:
        if rng.uniform(0, 1) < _F(p["rand_pad_prob"]):
            scale = rng.uniform(1, p["max_pad_scale"])
            if scale >= _F(1.05):
                x0 = rng.uniform(0, _F(scale - _F(1)))
                y0 = rng.uniform(0, _F(scale - _F(1)))
                label.project((-x0, -y0, scale, scale))
                left, top = int(_F(x0 * _F(cols))), int(_F(y0 * _F(rows)))
                right = int(_F(_F(_F(scale - x0) - _F(1)) * _F(cols)))
                bot = int(_F(_F(_F(scale - y0) - _F(1)) * _F(rows)))
                plan["pad"] = (top, bot, left, right)
                rows, cols = rows + top + bot, cols + left + right
    if p["rand_crop_prob"] > 0 and p["num_crop_sampler"] > 0:
        if rng.uniform(0, 1) < _F(p["rand_crop_prob"]):
            order = list(range(p["num_crop_sampler"]))
            rng.shuffle(order)
            done = False
            for idx in order:
                if done:
                    break
                for _ in range(p["max_crop_trials"][idx]):
                    box = _crop_box(p, idx, rng, _F(_F(cols) / _F(rows)))
                    if label.try_crop(box, p, idx):
                        left, top = int(_F(box[0] * _F(cols))), int(_F(box[1] * _F(rows)))
                        width, height = int(_F(box[2] * _F(cols))), int(_F(box[3] * _F(rows)))
                        if width <= 0 or height <= 0:
                            # MXNet fails in cv::resize on the empty crop
                            raise MXNetError(
                                f"ImageDetRecordIter: {where}: a random crop of {width}x"
                                f"{height} pixels of a {cols}x{rows} image (raise "
                                "min_crop_scales)")
                        plan["crop"] = (left, top, width, height)
                        rows, cols = height, width
                        done = True
                        break
    dh, dw = p["data_shape"][1], p["data_shape"][2]
    mode = p["resize_mode"]
    if mode == "force":
        plan["final"] = (dw, dh, _inter(p["inter_method"], cols, rows, dw, dh, rng))
        rows, cols = dh, dw
    elif mode == "shrink" and (rows > dh or cols > dw) or mode == "fit":
        ratio = min(_F(dh) / _F(rows), _F(dw) / _F(cols))
        nh, nw = int(_F(ratio * _F(rows))), int(_F(ratio * _F(cols)))
        plan["final"] = (nw, nh, _inter(p["inter_method"], cols, rows, nw, nh, rng))
        rows, cols = nh, nw
    plan["label"] = label.array()
    plan["size"] = (rows, cols)
    return plan


def _crop_box(p, idx, rng, img_ratio):
    lo_s, hi_s = p["min_crop_scales"][idx], p["max_crop_scales"][idx]
    scale = _F(rng.uniform(lo_s, hi_s) + _F(1e-12))
    min_ratio = max(_F(_F(p["min_crop_aspect_ratios"][idx]) / img_ratio), _F(scale * scale))
    max_ratio = min(_F(_F(p["max_crop_aspect_ratios"][idx]) / img_ratio),
                    _F(1.0 / float(_F(scale * scale))))
    ratio = _F(np.sqrt(rng.uniform(min_ratio, max_ratio)))
    w = min(_F(1), _F(scale * ratio))
    h = min(_F(1), _F(scale / ratio))
    x0 = rng.uniform(0, _F(_F(1) - w))
    y0 = rng.uniform(0, _F(_F(1) - h))
    return (x0, y0, w, h)


def _cv2():
    try:
        import cv2
        return cv2
    except ImportError:
        return None


def _resize(arr, w, h, interp):
    """``cv::resize`` of an HWC uint8 array: OpenCV itself for nearest, bilinear and area
    (the bits neogluon's resize gives, without a round trip through torch), neogluon's
    ``imresize`` otherwise."""
    if arr.shape[0] == h and arr.shape[1] == w:
        return arr
    cv2 = _cv2()
    if cv2 is not None and interp in (0, 1, 3):
        out = cv2.resize(np.ascontiguousarray(arr), (int(w), int(h)), interpolation=interp)
        return out.reshape(int(h), int(w), arr.shape[2])
    from .image_record import _resize as resize
    return resize(arr, w, h, interp)


def _apply(arr, plan, fill):
    """The pixel work of ``plan`` on an HWC uint8 array (RGB or gray)."""
    from .image_record import _to_u8
    if "resize" in plan:
        arr = _resize(arr, *plan["resize"])
    if "hls" in plan and arr.shape[2] == 3:
        from .image_record import _hls_jitter   # MXNet's bytes, with or without OpenCV
        dh, dl, ds = plan["hls"]
        arr = _hls_jitter(np.ascontiguousarray(arr), dh, ds, dl)
    if "contrast" in plan:
        arr = _to_u8(arr.astype(np.float32) * plan["contrast"])
    if plan.get("mirror"):
        arr = arr[:, ::-1]
    if "pad" in plan:
        top, bot, left, right = plan["pad"]
        arr = np.pad(arr, ((top, bot), (left, right), (0, 0)), constant_values=fill)
    if "crop" in plan:
        left, top, width, height = plan["crop"]
        arr = arr[top:top + height, left:left + width]
    if "final" in plan:
        nw, nh, interp = plan["final"]
        arr = _resize(np.ascontiguousarray(arr), nw, nh, interp)
    return arr


def _image_size(payload, gray):
    """(rows, cols) of an encoded image as ``mx.image.imdecode`` gives it, from its header
    when Pillow can read it."""
    try:
        from PIL import Image
        with Image.open(_pyio.BytesIO(payload)) as im:
            w, h = im.size
        return (h, w)
    except Exception:  # noqa: BLE001 - decode it instead
        from .. import image
        return tuple(image.imdecode(payload, flag=0 if gray else 1).shape[:2])


def _tuple(v, name, num, kind=float):
    if isinstance(v, str):
        v = [s for s in v.strip("()[] ").replace(",", " ").split()]
    vals = [kind(x) for x in (v if isinstance(v, (list, tuple)) else [v])]
    if num == 1 and len(vals) != 1:
        raise MXNetError(f"ImageDetRecordIter: {name} has {len(vals)} values; with "
                         "num_crop_sampler=1 it takes one")
    if num > 1:
        if len(vals) == 1:
            vals = vals * num
        elif len(vals) != num:
            raise MXNetError(f"ImageDetRecordIter: {name} has {len(vals)} values for "
                             f"num_crop_sampler={num} samplers (# of parameters/crop_samplers "
                             "mismatch)")
    return vals


class ImageDetRecordIter(DataIter):
    """Batches of images and detection labels from a RecordIO file, as MXNet's
    ImageDetRecordIter (its ``det_aug_default`` augmenter).

    Each image is decoded (RGB, or gray with ``data_shape[0] == 1``), its shorter side
    resized to ``resize`` when > 0, colour-jittered in HLS space and in contrast, mirrored
    with probability ``rand_mirror_prob``, padded (probability ``rand_pad_prob``, scale up to
    ``max_pad_scale``, ``fill_value``), randomly cropped (probability ``rand_crop_prob``, one
    of ``num_crop_sampler`` samplers), then resized by ``resize_mode`` ('force': to
    ``data_shape``; 'shrink': down to fit, keeping the aspect ratio; 'fit': up or down to
    fit) and placed at the top left of a zero canvas of ``data_shape``; then ``(x - mean) /
    std * scale`` per channel (a zero mean or std is skipped). The boxes follow every step;
    objects without area, or that a crop leaves out (``crop_emit_mode``), are dropped.

    Parameters
    ----------
    path_imgrec : str
    data_shape : (C, H, W)
        C is 1 or 3.
    batch_size : int
    path_imglist : str, optional
        ``.lst`` whose labels replace the records' (by record id); label fields are all but
        the index and the last (path) field, or exactly ``label_width`` of them.
    label_width : int, default -1
        Check every label has this many values (-1: any).
    label_pad_width : int, default 0
        Pad each label to this many values (0 or -1: the longest label of the data; smaller
        than that is an error).
    label_pad_value : float, default -1
    shuffle : bool, default False
    seed : int, default 0
    round_batch : bool, default True
    num_parts, part_index : int
        Read byte range ``part_index`` of ``num_parts`` (records split as dmlc-core does).
    preprocess_threads : int, default 4
    data_name, label_name : str
    resize, rand_crop_prob, min_crop_scales, max_crop_scales, min_crop_aspect_ratios,
    max_crop_aspect_ratios, min_crop_overlaps, max_crop_overlaps, min_crop_sample_coverages,
    max_crop_sample_coverages, min_crop_object_coverages, max_crop_object_coverages,
    num_crop_sampler, crop_emit_mode, emit_overlap_thresh, max_crop_trials, rand_pad_prob,
    max_pad_scale, max_random_hue, random_hue_prob, max_random_saturation,
    random_saturation_prob, max_random_illumination, random_illumination_prob,
    max_random_contrast, random_contrast_prob, rand_mirror_prob, fill_value, inter_method,
    resize_mode
        MXNet's det_aug_default arguments, with its defaults. As in MXNet 1.9.1, a crop
        sampler's overlap and coverage bounds are checked only when all six are set (every
        min > 0 and every max < 1); otherwise any crop box that keeps an object is taken.
    mean_r, mean_g, mean_b, std_r, std_g, std_b, scale : float
        Normalisation.
    mean_img : str, optional
        Without ``mean_r/g/b``: subtract this per-pixel mean image (an ``nd.save`` file);
        when the file does not exist it is computed over one pass of augmented images and
        saved there first (neogluon saves the mean of the pixels, MXNet 1.9.1 that of the
        pixels already divided by ``std_*`` and times ``scale``).

    Notes
    -----
    The random draws are MXNet's (see the module's notes), dmlc-core's 8 MB chunks included
    (each chunk is augmented when the batches reach it, then shuffled on its own). Only a
    ``reset()`` in the middle of an epoch over more than one chunk can differ: MXNet's
    prefetching thread has then read an unknown number of chunks ahead.
    """

    def __init__(self, path_imgrec, data_shape, batch_size, path_imglist="", label_width=-1,
                 label_pad_width=0, label_pad_value=-1.0, shuffle=False, seed=0,
                 round_batch=True, num_parts=1, part_index=0, preprocess_threads=4,
                 data_name="data", label_name="softmax_label", dtype=None, resize=-1,
                 rand_crop_prob=0.0, min_crop_scales=(0.0,), max_crop_scales=(1.0,),
                 min_crop_aspect_ratios=(1.0,), max_crop_aspect_ratios=(1.0,),
                 min_crop_overlaps=(0.0,), max_crop_overlaps=(1.0,),
                 min_crop_sample_coverages=(0.0,), max_crop_sample_coverages=(1.0,),
                 min_crop_object_coverages=(0.0,), max_crop_object_coverages=(1.0,),
                 num_crop_sampler=1, crop_emit_mode="center", emit_overlap_thresh=0.3,
                 max_crop_trials=(25,), rand_pad_prob=0.0, max_pad_scale=1.0,
                 max_random_hue=0, random_hue_prob=0.0, max_random_saturation=0,
                 random_saturation_prob=0.0, max_random_illumination=0,
                 random_illumination_prob=0.0, max_random_contrast=0.0,
                 random_contrast_prob=0.0, rand_mirror_prob=0.0, fill_value=127,
                 inter_method=1, resize_mode="force", mean_r=0.0, mean_g=0.0, mean_b=0.0,
                 std_r=0.0, std_g=0.0, std_b=0.0, scale=1.0, mean_img="", **kwargs):
        super().__init__(int(batch_size))
        unknown = sorted(set(kwargs) - _IGNORED - {"aug_seq", "shuffle_chunk_size"})
        if unknown:
            raise MXNetError(f"ImageDetRecordIter: unsupported argument(s) {unknown}")
        if kwargs.get("aug_seq", "det_aug_default") != "det_aug_default":
            raise MXNetError(f"ImageDetRecordIter: aug_seq {kwargs['aug_seq']!r} is not "
                             "supported (only MXNet's 'det_aug_default')")
        if int(kwargs.get("shuffle_chunk_size", 0)) > 0:
            import warnings
            warnings.warn("ImageDetRecordIter: shuffle_chunk_size is ignored (the chunks are "
                          "read in file order; shuffle=True shuffles within each chunk)",
                          stacklevel=2)
        from .. import recordio
        data_shape = tuple(int(d) for d in data_shape)
        if len(data_shape) != 3 or data_shape[0] not in (1, 3) or min(data_shape) <= 0:
            raise MXNetError(f"ImageDetRecordIter: data_shape must be (3, H, W) or (1, H, W) "
                             f"with H, W > 0, got {data_shape}")
        if dtype not in (None, "float32"):
            raise MXNetError(f"ImageDetRecordIter: dtype {dtype!r} is not supported "
                             "(float32 only)")
        if self.batch_size <= 0:
            raise MXNetError(f"ImageDetRecordIter: batch_size must be > 0, got {batch_size}")
        if resize_mode not in ("force", "shrink", "fit"):
            raise MXNetError(f"ImageDetRecordIter: resize_mode must be 'force', 'shrink' or "
                             f"'fit', got {resize_mode!r}")
        if crop_emit_mode not in ("center", "overlap"):
            raise MXNetError(f"ImageDetRecordIter: crop_emit_mode must be 'center' or "
                             f"'overlap', got {crop_emit_mode!r}")
        if inter_method not in (1, 2, 3, 4, 9, 10):
            raise MXNetError(f"ImageDetRecordIter: invalid inter_method {inter_method}: valid "
                             "values are 1, 2, 3, 4, 9, 10")
        if emit_overlap_thresh < 0:
            raise MXNetError(f"ImageDetRecordIter: emit_overlap_thresh must be >= 0, got "
                             f"{emit_overlap_thresh}")
        if not 0 <= int(part_index) < int(num_parts):
            raise MXNetError(f"ImageDetRecordIter: part_index {part_index} is not in "
                             f"[0, {num_parts})")
        num = int(num_crop_sampler)
        p = dict(data_shape=data_shape, resize=int(resize), rand_crop_prob=rand_crop_prob,
                 num_crop_sampler=num, crop_emit_mode=crop_emit_mode,
                 emit_overlap_thresh=_F(emit_overlap_thresh), rand_pad_prob=rand_pad_prob,
                 max_pad_scale=max_pad_scale, max_random_hue=max_random_hue,
                 random_hue_prob=random_hue_prob, max_random_saturation=max_random_saturation,
                 random_saturation_prob=random_saturation_prob,
                 max_random_illumination=max_random_illumination,
                 random_illumination_prob=random_illumination_prob,
                 max_random_contrast=max_random_contrast,
                 random_contrast_prob=random_contrast_prob, rand_mirror_prob=rand_mirror_prob,
                 fill_value=int(fill_value), inter_method=int(inter_method),
                 resize_mode=resize_mode)
        for name, v in (("min_crop_scales", min_crop_scales),
                        ("max_crop_scales", max_crop_scales),
                        ("min_crop_aspect_ratios", min_crop_aspect_ratios),
                        ("max_crop_aspect_ratios", max_crop_aspect_ratios),
                        ("min_crop_overlaps", min_crop_overlaps),
                        ("max_crop_overlaps", max_crop_overlaps),
                        ("min_crop_sample_coverages", min_crop_sample_coverages),
                        ("max_crop_sample_coverages", max_crop_sample_coverages),
                        ("min_crop_object_coverages", min_crop_object_coverages),
                        ("max_crop_object_coverages", max_crop_object_coverages)):
            p[name] = [_F(x) for x in _tuple(v, name, num)]
        p["max_crop_trials"] = _tuple(max_crop_trials, "max_crop_trials", num, int)
        for i in range(num):
            def need(ok, what):
                if not ok:
                    raise MXNetError(f"ImageDetRecordIter: crop sampler {i}: {what}")
            need(p["min_crop_scales"][i] >= 0, "min_crop_scales must be >= 0")
            need(p["max_crop_scales"][i] <= 1, "max_crop_scales must be <= 1")
            need(p["max_crop_scales"][i] > p["min_crop_scales"][i],
                 "max_crop_scales must be > min_crop_scales")
            need(p["min_crop_aspect_ratios"][i] >= 0, "min_crop_aspect_ratios must be >= 0")
            for what in ("aspect_ratios", "overlaps", "sample_coverages", "object_coverages"):
                need(p[f"max_crop_{what}"][i] >= p[f"min_crop_{what}"][i],
                     f"max_crop_{what} must be >= min_crop_{what}")
        self._p = p
        self.data_shape = data_shape
        self.shuffle = bool(shuffle)
        self.round_batch = bool(round_batch)
        self._mean = np.array([mean_r, mean_g, mean_b][:data_shape[0]], np.float32)
        self._std = np.array([std_r, std_g, std_b][:data_shape[0]], np.float32)
        self._scale = _F(scale)
        self._pad_value = _F(label_pad_value)

        # Read the part's records once: offsets, ids, raw labels and image sizes.
        if not os.path.isfile(str(path_imgrec)):
            raise MXNetError(f"ImageDetRecordIter: path_imgrec {path_imgrec!r} does not exist")
        self._path = str(path_imgrec)
        rec = recordio.MXRecordIO(self._path, "r")
        ok = False
        try:
            total = os.path.getsize(self._path)
            step = ((total + num_parts - 1) // num_parts + 3) // 4 * 4
            begin, end = min(step * part_index, total), min(step * (part_index + 1), total)
            self._offsets, ids, labels, sizes = [], [], [], []
            chunk_end = total
            while True:
                pos = rec.tell()
                s = rec.read()
                if s is None:
                    break
                if pos >= end:
                    chunk_end = pos  # the part ends where the next part's records begin
                    break
                if pos < begin:
                    continue
                try:
                    header, payload = recordio.unpack(s)
                    size = _image_size(payload, data_shape[0] == 1)
                except Exception as err:  # noqa: BLE001 - named with file and record
                    raise named(err, self._path, f"record {len(self._offsets)} (byte {pos})",
                                "ImageDetRecordIter") from err
                self._offsets.append(pos)
                ids.append(int(header.id))
                labels.append(None if header.flag == 0 else
                              np.asarray(header.label, np.float32).reshape(-1))
                sizes.append(size)
            ok = True
        finally:
            if not ok:
                rec.close()
        self._rec = rec
        if not self._offsets:
            raise MXNetError(f"ImageDetRecordIter: {path_imgrec} holds no records"
                             + (f" in part {part_index} of {num_parts}" if num_parts > 1
                                else ""))
        if path_imglist:
            table = self._read_list(str(path_imglist), int(label_width))
            for k, i in enumerate(ids):
                if i not in table:
                    raise MXNetError(f"ImageDetRecordIter: fail to find imagelabel for id {i} "
                                     f"in {path_imglist}")
                labels[k] = table[i]
            widest = max(len(v) for v in table.values())
        else:
            for k, lab in enumerate(labels):
                if lab is None:
                    raise MXNetError(f"ImageDetRecordIter: record {ids[k]} has no label "
                                     "packed (and no path_imglist)")
                if label_width > 0 and lab.size != label_width:
                    raise MXNetError(f"ImageDetRecordIter: rec file provide {lab.size}-"
                                     f"dimensional label (record {ids[k]}) but label_width "
                                     f"is set to {label_width}")
            widest = max(lab.size for lab in labels)
        if widest > label_pad_width:
            if label_pad_width > 0:
                raise MXNetError(f"ImageDetRecordIter: label_pad_width {label_pad_width} "
                                 f"smaller than estimated width: {widest}")
            label_pad_width = widest
        self.label_pad_width = int(label_pad_width)
        self._ids, self._labels, self._sizes = ids, labels, sizes

        # MXNet's decoding threads: each with its generator, each a byte range of the data.
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
        slots = max(1, min(int(preprocess_threads), max(cpus - 1, 1)))
        self._chunks = _chunks(self._offsets, chunk_end)
        self._slot = []
        for lo, hi in self._chunks:
            stop = self._offsets[hi] if hi < len(self._offsets) else chunk_end
            self._slot += _split(self._offsets[lo:hi], self._offsets[lo], stop, slots) \
                if slots > 1 else [0] * (hi - lo)
        self._rngs = [_StdRandom((i + 1) * _RAND_MAGIC) for i in range(slots)]
        self._shuffle_rng = _StdRandom(_RAND_MAGIC + int(seed))
        threads = max(1, min(int(preprocess_threads), cpus))
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="neogluon-imgdet") \
            if threads > 1 else None

        self.provide_data = [DataDesc(data_name, (self.batch_size,) + data_shape, np.float32)]
        self.provide_label = [DataDesc(label_name, (self.batch_size, self.label_pad_width + 4),
                                       np.float32)]
        self._pass, self._next_chunk, self._pos = [], 0, 0
        self._overflow = False
        self._mean_img = None
        if mean_img and not (self._mean > 0).any():
            self._mean_img = self._load_or_make_mean(str(mean_img))
        self._new_pass()

    def _load_or_make_mean(self, path):
        """MXNet's ``mean_img``: read from ``path`` (an ``nd.save`` file holding one
        ``(C, H, W)`` array, ``{'mean_img': ...}``), or when it does not exist, the mean of
        one pass of augmented images (drawing as MXNet does, which then starts a new pass),
        saved there."""
        from .. import ndarray as nd
        if os.path.exists(path):
            try:
                loaded = nd.load(path)
            except Exception as err:  # noqa: BLE001 - reported with the file name
                raise MXNetError(f"ImageDetRecordIter: cannot read mean_img {path!r}: "
                                 f"{err}") from err
            arrays = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)
            if len(arrays) != 1 or tuple(arrays[0].shape) != self.data_shape:
                raise MXNetError(f"ImageDetRecordIter: mean_img {path!r} must hold one array "
                                 f"of shape {self.data_shape} (data_shape), found "
                                 f"{[tuple(a.shape) for a in arrays]}")
            return arrays[0].asnumpy().astype(np.float32)
        self._new_pass()
        self._fill(len(self._offsets))
        total = np.zeros(self.data_shape, np.float32)
        for k, plan in self._pass:  # float32 sums in order, as MXNet
            total += self._sample_named((k, plan, self._read(k)), raw=True)[0]
        mean = total * _F(_F(1) / _F(len(self._pass)))
        nd.save(path, {"mean_img": nd.array(mean)})
        return mean

    @staticmethod
    def _read_list(path, label_width):
        if not os.path.isfile(path):
            raise MXNetError(f"ImageDetRecordIter: path_imglist {path!r} does not exist")
        table = {}
        with open(path, "rb") as f:
            raw = f.read()
        for n, line in enumerate(raw.split(b"\n"), 1):
            fields = line.split()
            if not fields:
                continue
            try:
                if label_width > 0:
                    if len(fields) < label_width + 1:
                        raise ValueError
                    vals = [float(v) for v in fields[1:1 + label_width]]
                else:
                    if len(fields) < 3:
                        raise ValueError
                    vals = [float(v) for v in fields[1:-1]]
                table[int(float(fields[0]))] = np.array(vals, np.float32)
            except (ValueError, OverflowError):
                raise MXNetError(f"ImageDetRecordIter: bad image list format in {path} "
                                 f"line {n}: "
                                 f"{line.strip()[:80].decode('utf-8', 'replace')!r}") \
                    from None
        return table

    def _new_pass(self):
        """Start a pass of MXNet's parser over the data. Its chunks are read when the
        batches reach them (``_fill``): each chunk's records augmented in record order,
        each on its thread's generator, then the chunk's order shuffled."""
        self._pass = []      # (record, plan) in serving order, for the chunks read so far
        self._next_chunk = 0
        self._pos = 0
        self._fill(1)

    def _fill(self, count):
        """Read chunks until ``count`` entries of the pass are planned (or none is left)."""
        while len(self._pass) < count and self._next_chunk < len(self._chunks):
            lo, hi = self._chunks[self._next_chunk]
            self._next_chunk += 1
            plans = {}
            for k in range(lo, hi):
                rows, cols = self._sizes[k]
                try:
                    plans[k] = _plan(self._p, rows, cols, self._labels[k],
                                     self._rngs[self._slot[k]], f"record {self._ids[k]}")
                except Exception as err:  # noqa: BLE001 - named with file and record
                    raise self._named(err, k) from err
            order = list(range(lo, hi))
            if self.shuffle:  # MXNet shuffles each chunk on its own
                self._shuffle_rng.shuffle(order)
            self._pass += [(k, plans[k]) for k in order]

    def reset(self):
        if self._overflow:
            # MXNet goes on with the pass that filled the last batch, after those images.
            self._overflow = False
        else:
            self._new_pass()

    def _read(self, k):
        from .. import recordio
        try:
            return recordio.unpack(self._rec.read_at(self._offsets[k], f"record {k}"))[1]
        except Exception as err:  # noqa: BLE001 - named with file and record
            raise self._named(err, k) from err

    def _named(self, err, k):
        return named(err, self._path, f"record {k} (id {self._ids[k]}, byte "
                                      f"{self._offsets[k]})", "ImageDetRecordIter")

    def _sample_named(self, job, raw=False):
        try:
            return self._sample(job, raw)
        except Exception as err:  # noqa: BLE001 - named with file and record
            raise self._named(err, job[0]) from err

    def _sample(self, job, raw=False):
        from .. import image
        k, plan, payload = job
        gray = self.data_shape[0] == 1
        # (numpy straight from the decoder: mx.image.imdecode's pixels, no NDArray)
        img = image.image._decode(payload, 0 if gray else 1,
                                  f"ImageDetRecordIter: record {self._ids[k]}")
        arr = _apply(img, plan, self._p["fill_value"])
        c, h, w = self.data_shape
        out = np.zeros((c, h, w), np.float32)
        rows, cols = arr.shape[:2]
        out[:, :rows, :cols] = arr.transpose(2, 0, 1)
        if raw:
            return out, None
        if (self._mean > 0).any():
            out -= self._mean[:, None, None]
        elif self._mean_img is not None:
            out -= self._mean_img
        for ch in range(c):
            if self._std[ch] > 0:
                out[ch] /= self._std[ch]
        out *= self._scale
        lab = plan["label"]
        vec = np.full(self.label_pad_width + 4, self._pad_value, np.float32)
        vec[:4] = (c, rows, cols, lab.size)
        vec[4:4 + lab.size] = lab
        return out, vec

    def next(self):
        from .. import ndarray as nd
        self._fill(self._pos + self.batch_size)
        if self._overflow or self._pos >= len(self._pass):
            raise StopIteration
        entries = self._pass[self._pos:self._pos + self.batch_size]
        self._pos += len(entries)
        pad = self.batch_size - len(entries)
        if pad:
            if self.round_batch:
                # As MXNet: a new pass fills the batch, and the next epoch goes on after
                # those images.
                if pad > len(self._offsets):
                    raise MXNetError(f"ImageDetRecordIter: number of input must be bigger "
                                     f"than batch size ({len(self._offsets)} records, "
                                     f"batch_size {self.batch_size})")
                self._new_pass()
                self._fill(pad)
                entries = entries + self._pass[:pad]
                self._pos = pad
                self._overflow = True
            else:
                entries = entries + [entries[-1]] * pad
        jobs = [(k, plan, self._read(k)) for k, plan in entries]
        if self._pool is not None:
            samples = list(self._pool.map(self._sample_named, jobs))
        else:
            samples = [self._sample_named(j) for j in jobs]
        data = np.stack([s[0] for s in samples])
        label = np.stack([s[1] for s in samples])
        return DataBatch([nd.array(data)], [nd.array(label)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)
