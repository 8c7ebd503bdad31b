"""Object detection data (``mx.image.ImageDetIter``, ``CreateDetAugmenter`` and the
``Det*`` augmenters).

A detection label is a float vector ``[header_width, object_width, (extra header...),
objects...]``; each object is ``[class, xmin, ymin, xmax, ymax, (extra...)]`` with the
corners normalised to [0, 1]. The augmenters take and return ``(image, label)`` where the
label is the (objects, object_width) numpy array parsed from it.

Randomness comes from Python's ``random`` (and ``numpy.random`` for the PCA lighting noise),
drawn in MXNet's order, so seeding those two gives MXNet's images and labels.
"""
from __future__ import annotations

import logging
import math
import random
import warnings

import numpy as np

from ..base import MXNetError, numeric_types
from .. import ndarray as nd
from ..ndarray.ndarray import NDArray
from .. import io as _io
from .image import fixed_crop, copyMakeBorder
from .augment import (_Settings, Augmenter, ResizeAug, ForceResizeAug, CastAug,
                      ColorJitterAug, HueJitterAug, LightingAug, RandomGrayAug,
                      ColorNormalizeAug, ImageIter,
                      _PCA_EIGVAL, _PCA_EIGVEC, _IMAGENET_MEAN, _IMAGENET_STD)

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
           "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
           "CreateDetAugmenter", "ImageDetIter"]


class DetAugmenter(_Settings):
    """Base class of the detection augmenters: ``aug(src, label) -> (src, label)``.

    Parameters
    ----------
    **kwargs
        The augmenter's settings, kept for :meth:`dumps`.
    """

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


class DetBorrowAug(DetAugmenter):
    """Apply an image :class:`~neogluon.image.Augmenter` that leaves the boxes unchanged
    (colour jitter, casts, a resize of the whole image...).

    Parameters
    ----------
    augmenter : Augmenter
    """

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError("Borrowing from invalid Augmenter")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """Apply one augmenter picked at random from ``aug_list``, or none with probability
    ``skip_prob``.

    Parameters
    ----------
    aug_list : DetAugmenter or list of DetAugmenter
    skip_prob : float, default 0
    """

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError("Allow DetAugmenter in list only")
        if not aug_list:
            skip_prob = 1
        self.aug_list = list(aug_list)
        self.skip_prob = skip_prob

    def dumps(self):
        return [type(self).__name__.lower(), [a.dumps() for a in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Mirror the image and its boxes left-right with probability ``p``.

    Parameters
    ----------
    p : float
    """

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return src, label

    @staticmethod
    def _flip_label(label):
        """Mirror the boxes of ``label`` in place (xmin, xmax -> 1 - xmax, 1 - xmin)."""
        left = 1.0 - label[:, 3]
        label[:, 3] = 1.0 - label[:, 1]
        label[:, 1] = left


def _pair(value, what, name):
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise MXNetError(f"{what}: {name} must be a number or a (low, high) pair, got "
                             f"{value!r}")
        return tuple(value)
    if not isinstance(value, numeric_types):
        raise MXNetError(f"{what}: {name} must be a number or a (low, high) pair, got "
                         f"{value!r}")
    logging.info("Using fixed %s: %s in %s", name, value, what)
    return (value, value)


def _areas(boxes):
    """Areas of (N, 4) [xmin, ymin, xmax, ymax] boxes (0 for empty ones)."""
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


class DetRandomCropAug(DetAugmenter):
    """Crop a random region that keeps at least ``min_object_covered`` of every box it
    touches; boxes that keep less than ``min_eject_coverage`` of their area are dropped.

    Parameters
    ----------
    min_object_covered : float, default 0.1
    aspect_ratio_range : (float, float) or float, default (0.75, 1.33)
        Width / height of the crop.
    area_range : (float, float) or float, default (0.05, 1.0)
        Area of the crop as a fraction of the image's.
    min_eject_coverage : float, default 0.3
    max_attempts : int, default 50
        After this many failed proposals the sample is returned unchanged.
    """

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _pair(aspect_ratio_range, "DetRandomCropAug",
                                   "aspect_ratio_range")
        area_range = _pair(area_range, "DetRandomCropAug", "area_range")
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomCropAug due to invalid area_range: {area_range}")
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn("Skip DetRandomCropAug due to invalid aspect_ratio_range: "
                          f"{aspect_ratio_range}")
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    def _covers_enough(self, label, x0, y0, x1, y1, width, height):
        """Whether the crop (pixels) keeps more than ``min_object_covered`` of every
        (non-tiny) box it overlaps, and overlaps at least one."""
        if (x1 - x0) * (y1 - y0) < 2:
            return False
        box = (x0 / width, y0 / height, x1 / width, y1 / height)
        areas = _areas(label[:, 1:5])
        keep = areas * width * height > 2
        if not keep.any():
            return False
        b = label[keep, 1:5]
        inter = np.stack([np.maximum(b[:, 0], box[0]), np.maximum(b[:, 1], box[1]),
                          np.minimum(b[:, 2], box[2]), np.minimum(b[:, 3], box[3])], 1)
        empty = (inter[:, 0] >= inter[:, 2]) | (inter[:, 1] >= inter[:, 3])
        inter[empty] = 0
        cover = _areas(inter) / areas[keep]
        cover = cover[cover > 0]
        return cover.size > 0 and cover.min() > self.min_object_covered

    def _crop_labels(self, label, box, height, width):
        """``label`` in the crop ``box`` = (x, y, w, h) pixels, without the boxes left
        with too little of themselves; None when none remains."""
        x0, y0 = box[0] / width, box[1] / height
        w, h = box[2] / width, box[3] / height
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] - x0) / w
        out[:, (2, 4)] = (out[:, (2, 4)] - y0) / h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        cover = _areas(out[:, 1:5]) * w * h / _areas(label[:, 1:5])
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (cover > self.min_eject_coverage)
        if not valid.any():
            return None
        return out[valid]

    def _random_crop_proposal(self, label, height, width):
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(math.sqrt(min_area / ratio)))
            max_h = int(round(math.sqrt(max_area / ratio)))
            if round(max_h * ratio) > width:
                # the largest height whose rounded width still fits
                max_h = int((width + 0.4999999) / ratio)
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            area = w * h
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._covers_enough(label, x, y, x + w, y + h, width, height):
                new_label = self._crop_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas filled with ``pad_val``.

    Parameters
    ----------
    aspect_ratio_range : (float, float) or float, default (0.75, 1.33)
        Width / height of the canvas.
    area_range : (float, float) or float, default (1.0, 3.0)
        Area of the canvas as a multiple of the image's.
    max_attempts : int, default 50
    pad_val : float or (float, float, float), default (128, 128, 128)
    """

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            if not isinstance(pad_val, numeric_types):
                raise MXNetError(f"DetRandomPadAug: pad_val must be a number or a tuple of "
                                 f"numbers, got {pad_val!r}")
        aspect_ratio_range = _pair(aspect_ratio_range, "DetRandomPadAug",
                                   "aspect_ratio_range")
        area_range = _pair(area_range, "DetRandomPadAug", "area_range")
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomPadAug due to invalid parameters: {area_range}")
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn("Skip DetRandomPadAug due to invalid aspect_ratio_range: "
                          f"{aspect_ratio_range}")
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = tuple(self.pad_val) if isinstance(self.pad_val, (list, tuple)) \
                else (self.pad_val,)
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 0, values=values)
        return src, label

    @staticmethod
    def _pad_labels(label, box, height, width):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + box[0]) / box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + box[1]) / box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(math.sqrt(min_area / ratio)))
            max_h = int(round(math.sqrt(max_area / ratio)))
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)
            h = max(h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue  # a margin this thin is not worth it
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return (x, y, w, h, self._pad_labels(label, (x, y, w, h), height, width))
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A :class:`DetRandomSelectAug` over several :class:`DetRandomCropAug`: each argument
    may be a list (one value per cropper; lists of one value or scalars are repeated).

    Returns
    -------
    DetRandomSelectAug
    """
    params = [min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
              max_attempts]
    params = [p if isinstance(p, list) else [p] for p in params]
    num = max(len(p) for p in params)
    names = ("min_object_covered", "aspect_ratio_range", "area_range", "min_eject_coverage",
             "max_attempts")
    for k, p in enumerate(params):
        if len(p) != num:
            if len(p) != 1:
                raise MXNetError(f"CreateMultiRandCropAugmenter: {names[k]} has {len(p)} "
                                 f"values, others have {num}")
            params[k] = p * num
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2,
                       min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                       area_range=(0.05, 3.0), min_eject_coverage=0.3, max_attempts=50,
                       pad_val=(127, 127, 127)):
    """The standard detection augmenter list, in MXNet's order: shorter-side resize,
    random crop (probability ``rand_crop``), mirror, random pad (probability ``rand_pad``),
    forced resize to ``data_shape``, float cast, colour jitter, hue, PCA noise, gray,
    normalisation.

    Parameters
    ----------
    data_shape : (int, int, int)
        Output (C, H, W).
    resize : int
        Resize the shorter side to this first (when > 0).
    rand_crop, rand_pad, rand_gray : float
        Probabilities of a random crop, a random pad and a gray image.
    rand_mirror : bool
        Mirror with probability 0.5.
    mean, std : True, numpy array or None
        Normalise (True: ImageNet's RGB mean / std).
    brightness, contrast, saturation, hue, pca_noise : float
        Jitter ranges.
    inter_method : int, default 2
        Interpolation code of every resize.
    min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts
        The croppers' settings (see :func:`CreateMultiRandCropAugmenter`); the padder uses
        ``aspect_ratio_range``, ``(1, area_range[1])`` and ``max_attempts``.
    pad_val : float or tuple, default (127, 127, 127)
        Fill of the padding.

    Returns
    -------
    list of DetAugmenter
    """
    if len(data_shape) != 3:
        raise MXNetError(f"CreateDetAugmenter: data_shape must be (C, H, W), got {data_shape}")
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(
            min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
            max_attempts, skip_prob=1 - rand_crop))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:  # as late as possible: it makes the image larger
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        auglist.append(DetRandomSelectAug([pad], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        auglist.append(DetBorrowAug(LightingAug(pca_noise, _PCA_EIGVAL, _PCA_EIGVEC)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    if mean is True:
        mean = np.array(_IMAGENET_MEAN)
    elif mean is not None:
        if not (isinstance(mean, (np.ndarray, NDArray)) and mean.shape[0] in (1, 3)):
            raise MXNetError("CreateDetAugmenter: mean must be True, None or an array of 1 "
                             f"or 3 values, got {mean!r}")
    if std is True:
        std = np.array(_IMAGENET_STD)
    elif std is not None:
        if not (isinstance(std, (np.ndarray, NDArray)) and std.shape[0] in (1, 3)):
            raise MXNetError("CreateDetAugmenter: std must be True, None or an array of 1 "
                             f"or 3 values, got {std!r}")
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


class ImageDetIter(ImageIter):
    """Batches of images and their boxes from a ``.rec`` file, a ``.lst`` file with
    ``path_root``, or an in-memory ``imglist``.

    The labels come padded with -1 to ``(batch_size, max objects, object_width)``, the most
    objects of any image (counted once over the data at construction).

    Parameters
    ----------
    batch_size : int
    data_shape : (3, int, int)
    path_imgrec, path_imglist, path_root, path_imgidx, imglist, shuffle, part_index,
    num_parts, data_name, last_batch_handle
        As :class:`ImageIter`.
    aug_list : list of DetAugmenter, optional
        By default ``CreateDetAugmenter(data_shape, **kwargs)``.
    label_name : str, default 'label'
    **kwargs
        Passed to :func:`CreateDetAugmenter`.
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name="data", label_name="label",
                 last_batch_handle="pad", **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape,
                         path_imgrec=path_imgrec, path_imglist=path_imglist,
                         path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[],
                         imglist=imglist, data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None \
            else aug_list
        label_shape = self._estimate_label_shape()
        self.provide_label = [(label_name, (self.batch_size,) + label_shape)]
        self.label_shape = label_shape

    def _check_valid_label(self, label):
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError(f"Label with shape (1+, 5+) required, {label} received.")
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError("Invalid label occurs.")

    def _estimate_label_shape(self):
        """(most objects in one image, object width), over one pass of the data."""
        max_count, width = 0, None
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                label = self._parse_label(label)
                max_count = max(max_count, label.shape[0])
                width = label.shape[1]
        except StopIteration:
            pass
        except Exception as err:  # noqa: BLE001 - the contract: an MXNetError naming it
            raise self._named(err) from err
        self.reset()
        if width is None:
            raise MXNetError(f"ImageDetIter: the data ({self._src}) holds no images")
        return (max_count, width)

    def _parse_label(self, label):
        """The (objects, object_width) array of a raw detection label, without the boxes
        that have no area. MXNetError (a RuntimeError) naming the problem otherwise."""
        if isinstance(label, NDArray):
            label = label.asnumpy()
        raw = np.asarray(label).ravel()
        if raw.size < 7:
            raise MXNetError(f"ImageDetIter: label shape is invalid: {raw.shape} (a detection "
                             "label holds [header_width, object_width, ..., objects...]: at "
                             "least 2 + 5 values)")
        header_width, obj_width = int(raw[0]), int(raw[1])
        if header_width < 2 or obj_width < 5:
            raise MXNetError(f"ImageDetIter: label header_width {header_width} (>= 2) or "
                             f"object_width {obj_width} (>= 5) is invalid")
        if (raw.size - header_width) % obj_width != 0:
            raise MXNetError(f"ImageDetIter: label shape {raw.shape} inconsistent with "
                             f"annotation width {obj_width}.")
        out = raw[header_width:].reshape(-1, obj_width)
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2])
        if not valid.any():
            raise MXNetError("ImageDetIter: encounter sample with no valid label.")
        return out[valid]

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape and/or the (padded) label shape.

        Parameters
        ----------
        data_shape : (3, int, int), optional
        label_shape : (int, int), optional
            (objects, object_width); never fewer objects nor another width.
        """
        if data_shape is not None:
            self.check_data_shape(data_shape)
            data_shape = tuple(data_shape)
            self.provide_data = [(self.provide_data[0][0], (self.batch_size,) + data_shape)]
            self.data_shape = data_shape
        if label_shape is not None:
            self.check_label_shape(label_shape)
            label_shape = tuple(label_shape)
            self.provide_label = [(self.provide_label[0][0],
                                   (self.batch_size,) + label_shape)]
            self.label_shape = label_shape

    def check_label_shape(self, label_shape):
        """ValueError unless ``label_shape`` keeps at least the objects and the width."""
        if len(label_shape) != 2:
            raise ValueError("label_shape should have length 2")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError(f"Attempts to reduce label count from {self.label_shape[0]} to "
                             f"{label_shape[0]}, not allowed.")
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError(f"label_shape object width inconsistent: "
                             f"{self.provide_label[0][1][2]} vs {label_shape[1]}.")

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """Apply the detection augmenters in order."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as err:
                    logging.debug("Invalid image, skipping:  %s", err)
                    continue
                datum = self.postprocess_data(data).asnumpy()
                if datum.shape != batch_data.shape[1:]:
                    raise MXNetError(f"ImageDetIter: an augmented image has shape "
                                     f"{datum.shape} (CHW), data_shape is {self.data_shape}; "
                                     "the augmenters must end with a resize to data_shape")
                batch_data[i] = datum
                n = label.shape[0]
                if n > batch_label.shape[1] or label.shape[1] != batch_label.shape[2]:
                    raise MXNetError(f"ImageDetIter: an image has {n} object(s) of width "
                                     f"{label.shape[1]}; the label shape is "
                                     f"{batch_label.shape[1:]} (see reshape / "
                                     "sync_label_shape)")
                batch_label[i] = -1
                batch_label[i, :n] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_batch(self):
        c, h, w = self.data_shape
        return (np.zeros((self.batch_size, c, h, w), np.float32),
                np.full(self.provide_label[0][1], -1, np.float32))

    def _wrap_batch(self, batch_data, batch_label, pad):
        return _io.DataBatch([nd.array(batch_data)], [nd.array(batch_label)], pad=pad)

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name="draw_next", id2labels=None):
        """Yield the next augmented images (HWC uint8, BGR) with their boxes drawn (needs
        OpenCV). ``mean`` / ``std`` (True or arrays) undo a normalisation; with
        ``waitKey`` the images are also shown in a window.
        """
        try:
            import cv2
        except ImportError as err:
            warnings.warn(f"Unable to import cv2, skip drawing: {err}")
            return
        count = 0
        try:
            while True:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                except RuntimeError as err:
                    logging.debug("Invalid image, skipping:  %s", err)
                    continue
                count += 1
                data, label = self.augmentation_transform(data, label)
                image = data.asnumpy().astype(np.float64)
                if std is True:
                    std = np.array(_IMAGENET_STD)
                if std is not None:
                    image *= np.asarray(std)
                if mean is True:
                    mean = np.array(_IMAGENET_MEAN)
                if mean is not None:
                    image += np.asarray(mean)
                image = image[:, :, ::-1]  # RGB -> BGR for OpenCV
                if clip:
                    image = np.clip(image, 0, 255)
                bgr = color[::-1] if color else None
                image = np.ascontiguousarray(image.astype(np.uint8))
                height, width, _ = image.shape
                for obj in label:
                    x1 = int(obj[1] * width)
                    if x1 < 0:
                        continue
                    y1, x2, y2 = int(obj[2] * height), int(obj[3] * width), int(obj[4] * height)
                    bc = tuple(float(v) for v in np.random.rand(3) * 255) if bgr is None \
                        else tuple(bgr)
                    cv2.rectangle(image, (x1, y1), (x2, y2), bc, thickness)
                    if id2labels is not None and int(obj[0]) in id2labels:
                        text = str(id2labels[int(obj[0])])
                        font = cv2.FONT_HERSHEY_SIMPLEX
                        th = cv2.getTextSize(text, font, 0.5, 2)[0][1]
                        cv2.putText(image, text, (x1 + 5, y1 + th + 5), font, 0.5,
                                    (255, 255, 255), 2)
                if waitKey is not None:
                    cv2.imshow(window_name, image)
                    cv2.waitKey(waitKey)
                yield image
        except StopIteration:
            if not count:
                return

    def sync_label_shape(self, it, verbose=False):
        """Pad this iterator's and ``it``'s labels to the same number of objects.

        Parameters
        ----------
        it : ImageDetIter
        verbose : bool, default False

        Returns
        -------
        ImageDetIter
            ``it``.
        """
        if not isinstance(it, ImageDetIter):
            raise MXNetError(f"sync_label_shape: expects an ImageDetIter, got "
                             f"{type(it).__name__}")
        mine, theirs = self.label_shape, it.label_shape
        if mine[1] != theirs[1]:
            raise MXNetError(f"sync_label_shape: object width mismatch: {mine[1]} vs "
                             f"{theirs[1]}")
        most = max(mine[0], theirs[0])
        if most > mine[0]:
            self.reshape(None, (most, mine[1]))
        if most > theirs[0]:
            it.reshape(None, (most, theirs[1]))
        if verbose and most > min(mine[0], theirs[0]):
            logging.info("Resized label_shape to (%d, %d).", most, mine[1])
        return it


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .. import io  # noqa: E402,F401
from ..util import is_np_array  # noqa: E402,F401
from .image import RandomOrderAug  # noqa: E402,F401
