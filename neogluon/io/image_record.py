"""``mx.io.ImageRecordIter`` (and its uint8 variant): MXNet's RecordIO image iterator, in
Python on top of ``mx.recordio`` and ``mx.image``."""
from __future__ import annotations

import math
import os
import random
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..base import MXNetError, MXNetValueError
from .._loaderr import named
from .io import DataIter, DataBatch, DataDesc

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter",
           "ImageRecordIter_v1", "ImageRecordUInt8Iter_v1"]

# Parameters of MXNet's C++ iterator that only tune its threads and buffers.
_IGNORED = {"verbose", "ctx", "device_id",
            "shuffle_chunk_size", "shuffle_chunk_seed"}


class ImageRecordIter(DataIter):
    """Batches of images from a RecordIO file of packed images, as MXNet's ImageRecordIter.

    Each image is decoded (RGB), its shorter side resized to ``resize`` when that is > 0,
    cropped to ``data_shape`` (at the center, or at a random place with ``rand_crop``; a
    smaller image is resized to fit), mirrored with probability 0.5 with ``rand_mirror``,
    and normalised as ``(pixel - mean) * (scale / std)`` per channel.

    Parameters
    ----------
    path_imgrec : str
        The ``.rec`` file (``mx.recordio`` / im2rec).
    data_shape : (3, int, int)
        Output (C, H, W).
    batch_size : int
    path_imgidx : str, optional
        Its index (needed for ``num_parts > 1``).
    path_imglist : str, optional
        A ``.lst`` file whose labels replace the records' (matched by record id).
    label_width : int, default 1
    shuffle : bool, default False
        Shuffle the records at every reset (with ``seed``).
    seed : int, default 0
    round_batch : bool, default True
        Fill the last batch with images from the start (``pad`` counts them) and begin the
        next epoch after them, as MXNet does. With False the next epoch starts at the first
        image.
    rand_crop, rand_mirror : bool, default False
    resize : int, default -1
    mean_r, mean_g, mean_b, std_r, std_g, std_b, scale : float
        Normalisation (mean 0, std 1, scale 1 by default).
    inter_method : int, default 1
        Interpolation for resizing (see ``mx.image.resize_short``).
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` equal parts.
    data_name, label_name : str
    dtype : str, default 'float32'
        The data's dtype ('float32'; 'uint8' or 'int8' without normalisation, int8 pixels
        saturated at 127).
    preprocess_threads : int, default 4
        Accepted for MXNet's scripts: the images are decoded (OpenCV, else Pillow) and
        augmented in one background thread (the per-image work holds the GIL, so more
        threads per batch do not pay).
    mirror : bool, default False
        Mirror every image.
    random_resized_crop : bool, default False
        Crop a random region of area ``[min_random_area, max_random_area]`` times the image's
        and aspect ratio (log-uniform) in ``[min_aspect_ratio, max_aspect_ratio]`` (or
        ``1 -/+ max_aspect_ratio`` when ``min_aspect_ratio`` is None), resized to the output;
        after 10 failed tries the centre crop. Not with ``rand_crop``, the random scale or
        the crop sizes (as MXNet).
    max_rotate_angle, rotate, max_shear_ratio, min_random_scale, max_random_scale,
    max_aspect_ratio, min_aspect_ratio, min_img_size, max_img_size
        Without ``random_resized_crop``: one affine warp with a random angle in
        ``[-max_rotate_angle, max_rotate_angle]`` (``rotate`` > 0 fixes it), shear, scale and
        aspect ratio, into a canvas of the scaled size clipped to ``[min_img_size,
        max_img_size]``, empty pixels ``fill_value``.
    pad, fill_value : int, default 0, 255
        Pad each side by ``pad`` pixels of ``fill_value`` before cropping.
    min_crop_size, max_crop_size : int, default -1
        Crop a random square of side in ``[min_crop_size, max_crop_size]`` (random place with
        ``rand_crop``, else centred), resized to the output.
    random_h, random_s, random_l : int, default 0
        Add a random offset to the hue (OpenCV's 0-180 units), saturation and lightness
        (0-255) in OpenCV's 8-bit HLS space, as MXNet 1.9.1: one offset per channel and
        image, ``int(f * 2r - r)`` with ``f = (u1 + 4 u2) / 5`` from two uniform draws,
        and the same bytes as MXNet for given offsets.
    brightness, contrast, saturation : float, default 0
        Scale by ``1 + U(-v, v)`` (contrast and saturation towards the gray mean / gray
        pixel), the three in a random order.
    pca_noise : float, default 0
        AlexNet-style PCA lighting noise with this standard deviation.
    prefetch_buffer : int, default 4
        With a positive value the next batch is prepared in a background thread while the
        current one is used (MXNet's iterator prefetches too); 0 prepares each batch when
        asked for.

    Notes
    -----
    Random augmentations draw from a generator per image seeded from Python's ``random``
    (so ``random.seed`` makes them repeatable, whatever the thread count); shuffles from
    ``seed``. They are not the C++ iterator's draws, so not MXNet's.
    """

    def __init__(self, path_imgrec, data_shape, batch_size, path_imgidx=None, path_imglist=None,
                 label_width=1, shuffle=False, seed=0, round_batch=True, rand_crop=False,
                 rand_mirror=False, resize=-1, mean_r=0.0, mean_g=0.0, mean_b=0.0, std_r=1.0,
                 std_g=1.0, std_b=1.0, scale=1.0, inter_method=1, num_parts=1, part_index=0,
                 data_name="data", label_name="softmax_label", dtype="float32",
                 preprocess_threads=4, mirror=False, random_resized_crop=False,
                 min_random_area=1.0, max_random_area=1.0, min_aspect_ratio=None,
                 max_aspect_ratio=0.0, max_random_scale=1.0, min_random_scale=1.0,
                 max_rotate_angle=0, max_shear_ratio=0.0, max_crop_size=-1, min_crop_size=-1,
                 max_img_size=1e10, min_img_size=0.0, rotate=-1, pad=0, fill_value=255,
                 brightness=0.0, contrast=0.0, saturation=0.0, pca_noise=0.0, random_h=0,
                 random_s=0, random_l=0, prefetch_buffer=4, mean_img=None, **kwargs):
        super().__init__(batch_size)
        unknown = sorted(set(kwargs) - _IGNORED)
        if unknown:
            raise MXNetError(f"ImageRecordIter: unsupported argument(s) {unknown}")
        from .. import recordio
        data_shape = tuple(int(d) for d in data_shape)
        if len(data_shape) != 3 or data_shape[0] not in (1, 3):
            raise MXNetError(f"ImageRecordIter: data_shape must be (3, H, W) or (1, H, W), got "
                             f"{data_shape}")
        if dtype not in ("float32", "uint8", "int8"):
            raise MXNetError(f"ImageRecordIter: dtype must be float32, uint8 or int8, got "
                             f"{dtype!r}")
        self.data_shape = data_shape
        self.label_width = label_width
        self.shuffle = shuffle
        self.round_batch = round_batch
        self.rand_crop = rand_crop
        self.rand_mirror = rand_mirror
        self.resize = resize
        self.inter_method = inter_method
        self._dtype = dtype
        self._mean = np.array([mean_r, mean_g, mean_b][:data_shape[0]], np.float32)
        self._std = np.array([std_r, std_g, std_b][:data_shape[0]], np.float32)
        self._scale = np.float32(scale)
        self._mean_img = None
        self.mirror = bool(mirror)
        self._aug = _check_aug(dict(
            random_resized_crop=bool(random_resized_crop), min_random_area=min_random_area,
            max_random_area=max_random_area, min_aspect_ratio=min_aspect_ratio,
            max_aspect_ratio=max_aspect_ratio, max_random_scale=max_random_scale,
            min_random_scale=min_random_scale, max_rotate_angle=max_rotate_angle,
            max_shear_ratio=max_shear_ratio, max_crop_size=max_crop_size,
            min_crop_size=min_crop_size, max_img_size=max_img_size, min_img_size=min_img_size,
            rotate=rotate, pad=pad, fill_value=fill_value, brightness=brightness,
            contrast=contrast, saturation=saturation, pca_noise=pca_noise, random_h=random_h,
            random_s=random_s, random_l=random_l, rand_crop=bool(rand_crop),
            inter_method=inter_method))
        if int(prefetch_buffer) < 0:
            raise MXNetError(f"ImageRecordIter: prefetch_buffer must be >= 0, got "
                             f"{prefetch_buffer}")
        self._rng = random.Random(seed)
        # One thread prepares the next batch while the current one trains (MXNet's iterator
        # prefetches too). More threads per batch do not pay: the per-image work holds the GIL.
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="neogluon-imgrec") \
            if int(prefetch_buffer) > 0 else None
        self._pending = None
        self._path = str(path_imgrec)
        if path_imgidx:
            self._rec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
            self._offsets = [self._rec.idx[k] for k in self._rec.keys]
        else:
            self._rec = recordio.MXRecordIO(path_imgrec, "r")
            self._offsets = []
            while True:
                pos = self._rec.tell()
                if self._rec.read() is None:
                    break
                self._offsets.append(pos)
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise MXNetError(f"ImageRecordIter: part_index {part_index} is not in "
                                 f"[0, {num_parts})")
            per = len(self._offsets) // num_parts
            self._offsets = self._offsets[part_index * per:(part_index + 1) * per]
        self._labels = None
        if path_imglist:
            self._labels = _read_imglist(str(path_imglist))
        if not self._offsets:
            raise MXNetError(f"ImageRecordIter: {path_imgrec} holds no records")
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_data = [DataDesc(data_name, (batch_size,) + data_shape,
                                      np.dtype(dtype).type)]
        self.provide_label = [DataDesc(label_name, label_shape, np.float32)]
        self._order = list(range(len(self._offsets)))
        self._start = 0
        self._cursor = 0
        if mean_img:
            self._mean_img = self._load_or_make_mean(str(mean_img))
        self.reset()

    def reset(self):
        self._drop_pending()
        if self.shuffle:
            self._rng.shuffle(self._order)
        self._cursor = self._start

    def _drop_pending(self):
        """Forget a prefetched batch (its reads finish first), with the position it took."""
        pending, self._pending = getattr(self, "_pending", None), None
        if pending is not None:
            future, self._cursor, self._start = pending
            try:
                future.result()
            except Exception:  # noqa: BLE001 - its error belongs to a batch nobody asked for
                pass

    def _read(self, i):
        """The i-th record of this epoch's order, read here (the file is not shared with
        the decoding threads)."""
        from .. import recordio
        k = self._order[i]
        return recordio.unpack(self._rec.read_at(self._offsets[k], f"record {k}"))

    def _guard(self, i, fn, *args):
        """``fn(*args)``, work on the i-th record of this epoch's order: any error is an
        MXNetError naming the file, the record and its byte offset."""
        try:
            return fn(*args)
        except Exception as err:  # noqa: BLE001 - the contract: an MXNetError naming it
            k = self._order[i]
            raise named(err, self._path, f"record {k} (byte {self._offsets[k]})",
                        "ImageRecordIter") from err

    def _record(self, i, seed, raw=False):
        """The i-th record of this epoch's order, read and augmented."""
        return self._guard(i, lambda: self._sample(self._read(i), seed, raw))

    def _load_or_make_mean(self, path):
        """MXNet's ``mean_img``: the per-pixel mean image, read from ``path`` (an ``nd.save``
        file holding ``{'mean_img': (C, H, W)}``) or, when the file does not exist, computed
        over one pass of the records and saved there first."""
        import os as _os
        from .. import ndarray as nd
        if _os.path.exists(path):
            try:
                loaded = nd.load(path)
            except Exception as err:  # noqa: BLE001 - reported with the file name
                raise MXNetError(f"ImageRecordIter: cannot read mean_img {path!r}: {err}") \
                    from err
            arrays = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)
            if isinstance(loaded, dict) and "mean_img" in loaded:
                arrays = [loaded["mean_img"]]
            if len(arrays) != 1 or tuple(arrays[0].shape) != self.data_shape:
                raise MXNetError(f"ImageRecordIter: mean_img {path!r} must hold one array of "
                                 f"shape {self.data_shape} (data_shape), found "
                                 f"{[tuple(a.shape) for a in arrays]}")
            return arrays[0].asnumpy().astype(np.float32)
        total = np.zeros(self.data_shape, np.float64)
        order = list(range(len(self._offsets)))
        saved, self._order = self._order, order
        try:
            for i in order:
                total += self._record(i, random.getrandbits(64), raw=True)[0]
        finally:
            self._order = saved
        mean = (total / len(order)).astype(np.float32)
        nd.save(path, {"mean_img": nd.array(mean)})
        return mean

    def _sample(self, record, seed, raw=False):
        from .. import image
        from ..image.image import _decode
        header, payload = record
        rng = random.Random(seed)
        if not payload:
            raise MXNetError(f"ImageRecordIter: record {header.id} holds no image")
        arr = _decode(bytes(payload), 1 if self.data_shape[0] == 3 else 0, "ImageRecordIter")
        if self.resize > 0:
            from .. import ndarray as _nd
            img = image.resize_short(_nd.array(arr, dtype=np.uint8), self.resize,
                                     _interp(self.inter_method, rng))
            arr = img.asnumpy()
        arr = _augment(arr, self.data_shape, self._aug, rng)
        if self.mirror or (self.rand_mirror and rng.random() < 0.5):
            arr = arr[:, ::-1]
        arr = arr.transpose(2, 0, 1)
        if self._dtype == "float32" and not raw:
            # One float32 factor scale / std per channel, MXNet's rounding.
            mult = (self._scale / self._std).astype(np.float32)
            mean = self._mean[:, None, None] if self._mean_img is None else self._mean_img
            arr = (arr.astype(np.float32) - mean) * mult[:, None, None]
        elif self._dtype == "int8":
            # MXNet's int8 images are the pixels saturated at 127
            arr = np.minimum(arr, 127)
        label = header.label
        if self._labels is not None and header.id in self._labels:
            label = self._labels[header.id]
        label = np.asarray(label, np.float32).reshape(-1)
        if label.size < self.label_width:
            raise MXNetError(f"ImageRecordIter: record {header.id} has {label.size} label(s), "
                             f"label_width is {self.label_width}")
        return arr, label[:self.label_width]

    def _plan(self):
        """The next batch's record positions, padding and per-image seeds, moving the
        position on; None at the end of the epoch. Runs in the caller's thread, so the seeds
        come from Python's ``random`` at a fixed point of the program."""
        n = len(self._offsets)
        if self._cursor >= n:
            return None
        idx = [(self._cursor + k) % n for k in range(self.batch_size)]
        pad = max(0, self._cursor + self.batch_size - n)
        seeds = [random.getrandbits(64) for _ in idx]
        if pad:
            self._start = (self._cursor + self.batch_size) % n if self.round_batch else 0
            self._cursor = n
        else:
            self._cursor += self.batch_size
            if self._cursor >= n:
                self._start = 0
        return idx, pad, seeds

    def _build(self, plan):
        idx, pad, seeds = plan
        samples = [self._record(i, sd) for i, sd in zip(idx, seeds)]
        data = np.stack([s[0] for s in samples])
        label = np.stack([s[1] for s in samples])
        if self.label_width == 1:
            label = label.reshape(-1)
        return data, label, pad

    def next(self):
        if self._pending is not None:
            future, self._pending = self._pending[0], None
            built = future.result()
        else:
            plan = self._plan()
            if plan is None:
                raise StopIteration
            built = self._build(plan)
        if self._worker is not None:
            before = (self._cursor, self._start)
            plan = self._plan()
            if plan is not None:
                self._pending = (self._worker.submit(self._build, plan),) + before
        return self._batch(*built)

    def _batch(self, data, label, pad):
        from .. import ndarray as nd
        return DataBatch([nd.array(data, dtype=self._dtype)], [nd.array(label)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)

    def __del__(self):
        worker = getattr(self, "_worker", None)
        if worker is not None:
            worker.shutdown(wait=False)


def _read_imglist(path):
    """{id: labels} of an image list (``index\\tlabel(s)\\tpath`` lines; lines with fewer
    fields are skipped); a malformed line raises MXNetValueError naming file and line."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise MXNetError(f"ImageRecordIter: cannot read path_imglist {path!r}: "
                         f"{err.strerror}") from None
    labels = {}
    for lineno, line in enumerate(raw.split(b"\n"), 1):
        fields = line.strip().split(b"\t")
        if len(fields) < 3:
            continue
        try:
            labels[int(fields[0])] = [float(v) for v in fields[1:-1]]
        except ValueError:
            raise MXNetValueError(f"ImageRecordIter: {path}: line {lineno}: expected "
                                  "'index<TAB>label(s)<TAB>path' with numbers, got "
                                  f"{line[:80].decode('utf-8', 'replace')!r}") from None
    return labels


# ---------------------------------------------------------------------------------------
# Augmentation: the steps of MXNet's default image augmenter, in its order (shorter-side
# resize; random resized crop, or else affine jitter, padding and a (random) crop; HSL
# jitter; brightness/contrast/saturation in a random order; PCA lighting noise), on HWC
# uint8 numpy arrays. Every draw comes from the per-image ``rng``.

_AFFINE_DEFAULTS = dict(max_rotate_angle=0, max_shear_ratio=0.0, rotate=-1,
                        max_random_scale=1.0, min_random_scale=1.0, max_aspect_ratio=0.0,
                        max_img_size=1e10, min_img_size=0.0)
# AlexNet's ImageNet RGB eigen-decomposition, as mx.image.CreateAugmenter's pca_noise.
_EIGVAL = np.array([55.46, 4.794, 1.148], np.float64)
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                    [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]], np.float64)


def _check_aug(a):
    """Validate the augmentation arguments; MXNetError naming the culprit."""
    def bad(msg):
        raise MXNetError(f"ImageRecordIter: {msg}")
    for name in ("brightness", "contrast", "saturation", "pca_noise", "max_shear_ratio",
                 "max_rotate_angle", "pad", "random_h", "random_s", "random_l",
                 "min_img_size", "max_aspect_ratio"):
        if a[name] < 0:
            bad(f"{name} must be >= 0, got {a[name]}")
    for name in ("random_h", "random_s", "random_l"):
        if a[name] != int(a[name]):
            bad(f"{name} must be an integer (MXNet's parameter is an int), got {a[name]}")
        a[name] = int(a[name])
    if not 0 <= a["fill_value"] <= 255:
        bad(f"fill_value must be in [0, 255], got {a['fill_value']}")
    if a["inter_method"] not in (0, 1, 2, 3, 4, 9, 10):
        bad(f"inter_method must be 0-4, 9 or 10, got {a['inter_method']}")
    if not 0 < a["min_random_scale"] <= a["max_random_scale"]:
        bad(f"need 0 < min_random_scale <= max_random_scale, got {a['min_random_scale']} "
            f"and {a['max_random_scale']}")
    if a["min_img_size"] > a["max_img_size"]:
        bad(f"min_img_size {a['min_img_size']} is larger than max_img_size "
            f"{a['max_img_size']}")
    if a["min_aspect_ratio"] is not None:
        if not 0 < a["min_aspect_ratio"] <= a["max_aspect_ratio"]:
            bad(f"need 0 < min_aspect_ratio <= max_aspect_ratio, got "
                f"{a['min_aspect_ratio']} and {a['max_aspect_ratio']}")
    elif a["max_aspect_ratio"] >= 1:
        bad(f"max_aspect_ratio {a['max_aspect_ratio']} must be < 1 without min_aspect_ratio "
            "(the ratio is drawn from [1 - max_aspect_ratio, 1 + max_aspect_ratio])")
    crop = (a["min_crop_size"], a["max_crop_size"])
    if crop != (-1, -1) and not 0 < crop[0] <= crop[1]:
        bad(f"need 0 < min_crop_size <= max_crop_size, got {crop[0]} and {crop[1]}")
    if a["random_resized_crop"]:
        clash = [n for n, on in (("rand_crop", a["rand_crop"]),
                                 ("min_random_scale", a["min_random_scale"] != 1),
                                 ("max_random_scale", a["max_random_scale"] != 1),
                                 ("min_crop_size", a["min_crop_size"] != -1),
                                 ("max_crop_size", a["max_crop_size"] != -1)) if on]
        if clash:
            bad(f"random_resized_crop=True cannot be combined with {clash} (MXNet refuses "
                "them too)")
        if not 0 < a["min_random_area"] <= a["max_random_area"]:
            bad(f"need 0 < min_random_area <= max_random_area, got {a['min_random_area']} "
                f"and {a['max_random_area']}")
    if (a["random_resized_crop"] and a["min_random_area"] == a["max_random_area"] == 1
            and a["min_aspect_ratio"] is None and a["max_aspect_ratio"] == 0):
        # Nothing to draw: MXNet then takes the plain centre crop, as without the flag.
        a["random_resized_crop"] = False
    a["affine"] = (not a["random_resized_crop"] and (
        a["max_rotate_angle"] > 0 or a["max_shear_ratio"] > 0 or a["rotate"] > 0
        or a["max_random_scale"] != 1 or a["min_random_scale"] != 1
        or a["max_aspect_ratio"] != 0 or a["max_img_size"] != 1e10
        or a["min_img_size"] != 0))
    if a["affine"] and a["inter_method"] == 0:
        bad("inter_method 0 (nearest) is not allowed with the rotate/shear/scale/aspect "
            "augmentations (MXNet allows 1-4, 9, 10)")
    return a


def _interp(method, rng, sizes=None):
    """Resolve MXNet's codes 9 (auto) and 10 (random, drawn from ``rng``)."""
    if method == 10:
        return rng.randint(0, 4)
    if method == 9:
        if sizes is None:
            return 2
        oh, ow, nh, nw = sizes
        return 2 if (nh > oh and nw > ow) else 3 if (nh < oh and nw < ow) else 1
    return method


def _resize(arr, w, h, interp):
    from .. import image, ndarray as nd
    if arr.shape[0] == h and arr.shape[1] == w:
        return arr
    return image.imresize(nd.array(np.ascontiguousarray(arr), dtype=arr.dtype), int(w),
                          int(h), interp=interp).asnumpy()


def _cv2():
    """OpenCV's Python module when installed and not turned off with NEOGLUON_OPENCV=0."""
    if os.environ.get("NEOGLUON_OPENCV", "1") == "0":
        return None
    try:
        import cv2
        return cv2
    except ImportError:
        return None


def _warp(arr, m, w, h, interp, fill):
    """``arr`` warped by the 2x3 forward matrix ``m`` into an (h, w) canvas filled with
    ``fill`` (OpenCV's warpAffine when installed, Pillow's affine transform otherwise)."""
    cv2 = _cv2()
    if cv2 is not None:
        return cv2.warpAffine(np.ascontiguousarray(arr), m.astype(np.float32), (w, h),
                              flags=min(interp, 4), borderMode=cv2.BORDER_CONSTANT,
                              borderValue=(fill,) * 3).reshape(h, w, arr.shape[2])
    from PIL import Image
    inv = np.linalg.inv(np.vstack([m, [0, 0, 1]]))[:2]
    # Pixel centres sit at +0.5 in Pillow and at integers in OpenCV.
    c = inv[:, 2] + 0.5 * (1 - inv[:, 0] - inv[:, 1])
    data = (inv[0, 0], inv[0, 1], c[0], inv[1, 0], inv[1, 1], c[1])
    resample = {0: Image.NEAREST, 2: Image.BICUBIC}.get(interp, Image.BILINEAR)
    gray = arr.shape[2] == 1
    im = Image.fromarray(arr[:, :, 0] if gray else arr)
    out = np.asarray(im.transform((w, h), Image.AFFINE, data, resample=resample,
                                  fillcolor=fill if gray else (fill,) * 3))
    return out.reshape(h, w, arr.shape[2])


def _rgb_to_hls(x):
    """float RGB in [0, 1] -> H in degrees [0, 360), L, S in [0, 1] (float64; for OpenCV's
    8-bit HLS bytes, as MXNet's jitter, see ``_rgb_to_hls_u8`` / ``_hls_jitter``)."""
    mx_, mn = x.max(-1), x.min(-1)
    light = (mx_ + mn) / 2
    d = mx_ - mn
    safe = np.where(d == 0, 1, d)
    sat = np.where(d == 0, 0, np.where(light < 0.5, d / np.where(mx_ + mn == 0, 1, mx_ + mn),
                                       d / np.where(2 - mx_ - mn == 0, 1, 2 - mx_ - mn)))
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    hue = np.where(mx_ == r, (g - b) / safe, np.where(mx_ == g, 2 + (b - r) / safe,
                                                       4 + (r - g) / safe)) * 60
    hue = np.where(d == 0, 0, hue) % 360
    return hue, light, sat


def _hls_to_rgb(hue, light, sat):
    c = (1 - np.abs(2 * light - 1)) * sat
    hp = (hue % 360) / 60
    x = c * (1 - np.abs(hp % 2 - 1))
    zero = np.zeros_like(c)
    k = np.floor(hp).astype(int) % 6
    r = np.choose(k, [c, x, zero, zero, x, c])
    g = np.choose(k, [x, c, c, x, zero, zero])
    b = np.choose(k, [zero, zero, x, c, c, x])
    m = light - c / 2
    return np.stack([r + m, g + m, b + m], -1)


def _to_u8(x):
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


# HSL jitter (random_h / random_s / random_l), as MXNet 1.9.1's default augmenter does it:
# the uint8 image to OpenCV's 8-bit HLS (H in 0..180, half degrees; L and S in 0..255),
# one integer offset per channel for the whole image, clamped to [0, 180] / [0, 255], and
# back. MXNet's wheel links OpenCV 3.4, whose 8-bit RGB->HLS works in float32: channels
# times 1/255, hue from the max channel as 60/(max-min) times a channel difference (+120
# or +240, +360 when negative), halved, then each value rounded half to even (the SSE
# conversion). OpenCV 4's own uint8 conversion rounds the hue of 1,747 of the 16.7M
# colours (those exactly halfway between two 8-bit hues) the other way, so the forward
# step is done here in numpy with 3.4's operations; the way back (HLS->RGB) of OpenCV 4
# gives 3.4's bits and is used when installed (NEOGLUON_OPENCV=0 turns it off), with a
# numpy version of the same float32 steps otherwise. Both paths gave MXNet's bytes for all
# 16.7M colours under several offsets when this was written; the fixture keeps a sample of
# 6,000 hard colours (tools/gen_image_record_hls_fixtures.py, tests/test_image_record_aug.py).

_F32 = np.float32
_INV255 = np.float32(1.0 / 255.0)
_FLT_EPS = np.float32(np.finfo(np.float32).eps)
# For each of the six 60-degree sectors, which of (p2, p1, falling, rising) gives R, G, B.
_HLS_SECTORS = np.array([[0, 3, 1], [2, 0, 1], [1, 0, 3], [1, 2, 0], [3, 1, 0], [0, 1, 2]])


def _hls_draws(rng, random_h, random_s, random_l):
    """MXNet 1.9.1's offsets (dh, ds, dl) for one image: for each of h, s, l in turn,
    f = (u1 + 4 * u2) / 5 from two uniform draws in [0, 1) (a trapezoid-shaped law that
    MXNet chose to make large offsets rarer) and offset = int(f * 2r - r), truncated
    towards zero, so in (-r, r) with 0 twice as likely as its neighbours."""
    out = []
    for r in (random_h, random_s, random_l):
        f = (rng.random() + 4.0 * rng.random()) / 5.0
        out.append(int(f * 2 * r - r))
    return tuple(out)


def _rgb_to_hls_u8(arr):
    """(H, W, 3) uint8 RGB -> (H, W, 3) uint8 OpenCV HLS (H 0..180, L, S 0..255), in
    OpenCV 3.4's float32 steps (see above)."""
    x = arr.astype(_F32)
    x *= _INV255
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    vmax = np.maximum(np.maximum(b, g), r)
    vmin = np.minimum(np.minimum(b, g), r)
    diff = vmax - vmin
    total = vmax + vmin
    light = total * _F32(0.5)
    grey = diff <= _FLT_EPS
    den = np.where(light >= _F32(0.5), _F32(2) - total, total)
    den[grey] = 1
    sat = diff / den
    sat[grey] = 0
    diff[grey] = 1
    step = _F32(60) / diff
    hue = np.where(vmax == r, (g - b) * step,
                   np.where(vmax == g, (b - r) * step + _F32(120), (r - g) * step + _F32(240)))
    hue[hue < 0] += _F32(360)
    hue *= _F32(0.5)
    hue[grey] = 0
    out = np.empty(arr.shape, np.uint8)
    out[..., 0] = np.rint(hue)  # <= 180: no clipping needed
    out[..., 1] = np.rint(light * _F32(255))
    out[..., 2] = np.clip(np.rint(sat * _F32(255)), 0, 255)
    return out


def _hls_u8_to_rgb(hls):
    """(H, W, 3) uint8 OpenCV HLS -> uint8 RGB, in OpenCV's float32 steps (numpy)."""
    hue = hls[..., 0].astype(_F32) * _F32(6.0 / 180.0)
    light = hls[..., 1].astype(_F32) * _INV255
    sat = hls[..., 2].astype(_F32) * _INV255
    p2 = np.where(light <= _F32(0.5), light * (_F32(1) + sat), (light + sat) - light * sat)
    p1 = _F32(2) * light - p2
    whole = np.trunc(hue)
    frac = hue - whole
    sector = (whole - np.trunc(whole / _F32(6)) * _F32(6)).astype(np.intp)
    span = p2 - p1
    tab = np.stack([p2, p1, p1 + span * (_F32(1) - frac), p1 + span * frac])
    pick = _HLS_SECTORS[sector]  # (H, W, 3) rows of tab for R, G, B
    rgb = np.take_along_axis(tab, np.moveaxis(pick, -1, 0), 0)
    rgb *= _F32(255)
    return np.clip(np.rint(np.moveaxis(rgb, 0, -1)), 0, 255).astype(np.uint8)


def _hls_jitter(arr, dh, ds, dl):
    """MXNet's HSL jitter of an (H, W, 3) uint8 RGB array by the integer offsets dh (hue,
    half degrees), ds (saturation) and dl (lightness); a new uint8 array."""
    hls = _rgb_to_hls_u8(arr)
    limits = ((dh, 180), (dl, 255), (ds, 255))  # HLS channel order
    cv2 = _cv2()
    if cv2 is not None:
        lut = np.stack([np.clip(np.arange(256) + d, 0, top) for d, top in limits], -1)
        hls = cv2.LUT(hls, lut.astype(np.uint8).reshape(256, 1, 3))
        return cv2.cvtColor(hls, cv2.COLOR_HLS2RGB)
    wide = hls.astype(np.int16)
    for k, (d, top) in enumerate(limits):
        if d:
            np.clip(wide[..., k] + d, 0, top, out=wide[..., k])
    return _hls_u8_to_rgb(wide.astype(np.uint8))


def _gray(x):
    return x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114


def _augment(arr, data_shape, a, rng):
    """The augmentations after the shorter-side resize, on an HWC uint8 array."""
    _, h, w = data_shape
    method = a["inter_method"]
    done = False
    if a["random_resized_crop"]:
        ih, iw = arr.shape[:2]
        if a["min_aspect_ratio"] is not None:
            lo, hi = a["min_aspect_ratio"], a["max_aspect_ratio"]
        else:
            lo, hi = 1 - a["max_aspect_ratio"], 1 + a["max_aspect_ratio"]
        for _ in range(10):
            area = rng.uniform(a["min_random_area"], a["max_random_area"]) * ih * iw
            ratio = math.exp(rng.uniform(math.log(lo), math.log(hi)))
            cw = int(round(math.sqrt(area * ratio)))
            ch = int(round(math.sqrt(area / ratio)))
            if 0 < cw <= iw and 0 < ch <= ih:
                x0, y0 = rng.randint(0, iw - cw), rng.randint(0, ih - ch)
                arr = _resize(arr[y0:y0 + ch, x0:x0 + cw], w, h,
                              _interp(method, rng, (ch, cw, h, w)))
                done = True
                break
        if not done:  # no attempt fitted: the centre crop of the output's aspect ratio
            cw, ch = _scale_down((iw, ih), (w, h))
            x0, y0 = (iw - cw) // 2, (ih - ch) // 2
            arr = _resize(arr[y0:y0 + ch, x0:x0 + cw], w, h,
                          _interp(method, rng, (ch, cw, h, w)))
            done = True
    else:
        if a["affine"]:
            shear = rng.uniform(-1, 1) * a["max_shear_ratio"]
            angle = rng.randint(-int(a["max_rotate_angle"]), int(a["max_rotate_angle"]))
            if a["rotate"] > 0:
                angle = a["rotate"]
            scale = rng.uniform(a["min_random_scale"], a["max_random_scale"])
            if a["min_aspect_ratio"] is not None:
                ratio = rng.uniform(a["min_aspect_ratio"], a["max_aspect_ratio"])
            else:
                ratio = 1 + rng.uniform(-1, 1) * a["max_aspect_ratio"]
            ih, iw = arr.shape[:2]
            ca, sa = math.cos(math.radians(angle)), math.sin(math.radians(angle))
            hs = 2 * scale / (1 + ratio)
            ws = ratio * hs
            nw = int(max(a["min_img_size"], min(a["max_img_size"], scale * iw)))
            nh = int(max(a["min_img_size"], min(a["max_img_size"], scale * ih)))
            m = np.array([[hs * ca - shear * sa * ws, hs * sa + shear * ca * ws, 0],
                          [-sa * ws, ca * ws, 0]], np.float64)
            m[0, 2] = (nw - (m[0, 0] * iw + m[0, 1] * ih)) / 2
            m[1, 2] = (nh - (m[1, 0] * iw + m[1, 1] * ih)) / 2
            arr = _warp(arr, m, max(nw, 1), max(nh, 1),
                        _interp(method, rng, (ih, iw, nh, nw)), int(a["fill_value"]))
        if a["pad"] > 0:
            p = int(a["pad"])
            ih, iw, ic = arr.shape
            padded = np.full((ih + 2 * p, iw + 2 * p, ic), int(a["fill_value"]), arr.dtype)
            padded[p:p + ih, p:p + iw] = arr
            arr = padded
        ih, iw = arr.shape[:2]
        if a["max_crop_size"] != -1:
            if a["max_crop_size"] > min(ih, iw):
                raise MXNetError(f"ImageRecordIter: max_crop_size {a['max_crop_size']} is "
                                 f"larger than the image ({iw}x{ih} after resize/pad)")
            size = rng.randint(int(a["min_crop_size"]), int(a["max_crop_size"]))
            if a["rand_crop"]:
                y0, x0 = rng.randint(0, ih - size), rng.randint(0, iw - size)
            else:
                y0, x0 = (ih - size) // 2, (iw - size) // 2
            arr = _resize(arr[y0:y0 + size, x0:x0 + size], w, h,
                          _interp(method, rng, (size, size, h, w)))
        else:
            # The output's window (a smaller image gives the largest window of the
            # output's aspect ratio, resized up).
            cw, ch = _scale_down((iw, ih), (w, h))
            if a["rand_crop"]:
                x0, y0 = rng.randint(0, iw - cw), rng.randint(0, ih - ch)
            else:
                x0, y0 = (iw - cw) // 2, (ih - ch) // 2
            arr = arr[y0:y0 + ch, x0:x0 + cw]
            if (cw, ch) != (w, h):
                arr = _resize(arr, w, h, _interp(method, rng, (ch, cw, h, w)))
    if arr.shape[2] == 3 and (a["random_h"] or a["random_s"] or a["random_l"]):
        dh, ds, dl = _hls_draws(rng, a["random_h"], a["random_s"], a["random_l"])
        arr = _hls_jitter(arr, dh, ds, dl)
    if arr.shape[2] == 3 and (a["brightness"] or a["contrast"] or a["saturation"]):
        steps = [0, 1, 2]
        alphas = [1 + rng.uniform(-1, 1) * a[k] for k in ("brightness", "contrast",
                                                           "saturation")]
        rng.shuffle(steps)
        for k in steps:
            if not a[("brightness", "contrast", "saturation")[k]]:
                continue
            x = arr.astype(np.float32)
            if k == 0:
                x = x * alphas[0]
            elif k == 1:
                x = x * alphas[1] + _gray(x).mean() * (1 - alphas[1])
            else:
                x = x * alphas[2] + _gray(x)[..., None] * (1 - alphas[2])
            arr = _to_u8(x)
    if arr.shape[2] == 3 and a["pca_noise"] > 0:
        alpha = np.array([rng.gauss(0, a["pca_noise"]) for _ in range(3)])
        arr = _to_u8(arr.astype(np.float32) + (_EIGVEC @ (alpha * _EIGVAL)).astype(np.float32))
    return arr


def _scale_down(src_size, size):
    """The largest (w, h) window of ``size``'s aspect ratio inside ``src_size``."""
    from .. import image
    return image.scale_down(src_size, size)


def ImageRecordUInt8Iter(*args, **kwargs):
    """:class:`ImageRecordIter` giving uint8 images without normalisation."""
    kwargs["dtype"] = "uint8"
    return ImageRecordIter(*args, **kwargs)


def ImageRecordInt8Iter(*args, **kwargs):
    """:class:`ImageRecordIter` giving int8 images without normalisation: each pixel
    saturated at 127, as MXNet's (deprecated there for ``ImageRecordIter(dtype='int8')``)."""
    kwargs["dtype"] = "int8"
    return ImageRecordIter(*args, **kwargs)


class ImageRecordIter_v1(ImageRecordIter):
    """MXNet's first implementation of :class:`ImageRecordIter` (deprecated there for it),
    with the same arguments and images. Two things differ, as in MXNet 1.9.1: each batch's
    ``index`` holds the ids of its records (the newer iterator gives zeros, neogluon's None);
    and with ``round_batch=False`` the ``pad`` slots of the last batch keep what the batch
    before held there (the iterator reuses its buffer), instead of records from the start."""

    _prev = None

    def _build(self, plan):
        idx, pad, seeds = plan
        records = [self._guard(i, self._read, i) for i in idx]
        samples = [self._guard(i, self._sample, r, sd)
                   for i, r, sd in zip(idx, records, seeds)]
        data = np.stack([s[0] for s in samples])
        label = np.stack([s[1] for s in samples])
        if self.label_width == 1:
            label = label.reshape(-1)
        ids = np.array([r[0].id for r in records], np.uint64)
        return data, label, pad, ids

    def _batch(self, data, label, pad, ids):
        prev = self._prev
        if pad and not self.round_batch and prev is not None \
                and prev[0].shape == data.shape:
            data, label, ids = data.copy(), label.copy(), ids.copy()
            data[-pad:], label[-pad:], ids[-pad:] = prev[0][-pad:], prev[1][-pad:], \
                prev[2][-pad:]
        self._prev = (data, label, ids)
        batch = super()._batch(data, label, pad)
        batch.index = ids
        return batch


def ImageRecordUInt8Iter_v1(*args, **kwargs):
    """:class:`ImageRecordIter_v1` giving uint8 images without normalisation."""
    kwargs["dtype"] = "uint8"
    return ImageRecordIter_v1(*args, **kwargs)
