"""Image augmenters (``mx.image.*Aug``, ``CreateAugmenter``) and ``ImageIter``.

Augmenters take and return one HWC image NDArray. Randomness comes from Python's ``random``
module (and ``numpy.random`` for the PCA lighting noise), as in MXNet, so seeding those two
reproduces a run.
"""
from __future__ import annotations

import json
import logging
import os
import random

import numpy as np

from ..base import numeric_types, MXNetError, MXNetValueError
from .. import ndarray as nd
from ..ndarray.ndarray import NDArray
from .. import io as _io
from .. import recordio
from .image import (imdecode, imresize, resize_short, random_crop, center_crop,
                    random_size_crop, color_normalize, _get_interp_method)

__all__ = ["Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug",
           "RandomSizedCropAug", "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug",
           "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "ColorJitterAug",
           "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug", "CastAug",
           "CreateAugmenter", "ImageIter"]

# ITU-R BT.601 luma weights, used for the contrast and saturation jitters.
_LUMA = (0.299, 0.587, 0.114)


class _Settings:
    """Keeps an augmenter's settings (arrays as lists) for :meth:`dumps`."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in list(self._kwargs.items()):
            if isinstance(v, NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """The augmenter as a JSON string ``[name, settings]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])


class Augmenter(_Settings):
    """Base class of the image augmenters.

    Parameters
    ----------
    **kwargs
        The augmenter's settings, kept for :meth:`dumps` (arrays are stored as lists).
    """

    def __call__(self, src):
        raise NotImplementedError("Must override implementation.")


class _ListAug(Augmenter):
    """An augmenter made of the augmenters ``ts`` (dumped as their list)."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]


class _SizedAug(Augmenter):
    """An augmenter with an output ``size`` and an interpolation code ``interp``."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp


class SequentialAug(_ListAug):
    """Apply augmenters one after the other.

    Parameters
    ----------
    ts : list of Augmenter
    """

    def __call__(self, src):
        for t in self.ts:
            src = t(src)
        return src


class RandomOrderAug(_ListAug):
    """Apply augmenters in a random order (shuffled on every call).

    Parameters
    ----------
    ts : list of Augmenter
    """

    def __call__(self, src):
        random.shuffle(self.ts)
        for t in self.ts:
            src = t(src)
        return src


class ResizeAug(_SizedAug):
    """Resize the shorter side to ``size`` (:func:`resize_short`).

    Parameters
    ----------
    size : int
    interp : int, default 2
        Interpolation code (see :func:`resize_short`).
    """

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(_SizedAug):
    """Resize to ``size`` = (width, height), ignoring the aspect ratio.

    Parameters
    ----------
    size : (int, int)
    interp : int, default 2
    """

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class RandomCropAug(_SizedAug):
    """Crop a random ``size`` = (width, height) region (:func:`random_crop`).

    Parameters
    ----------
    size : (int, int)
    interp : int, default 2
    """

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """Crop a region of random area and aspect ratio and resize it to ``size``
    (:func:`random_size_crop`).

    Parameters
    ----------
    size : (int, int)
        Output (width, height).
    area : float or (float, float)
        Area range as a fraction of the image (a float is the minimum, up to 1).
    ratio : (float, float)
        Aspect-ratio range.
    interp : int, default 2
    """

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        if "min_area" in kwargs:
            import warnings
            warnings.warn("`min_area` is deprecated. Please use `area` instead.",
                          DeprecationWarning)
            self.area = kwargs.pop("min_area")
        else:
            self.area = area
        self.ratio = ratio
        self.interp = interp
        assert not kwargs, "unexpected keyword arguments for `RandomSizedCropAug`."

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(_SizedAug):
    """Crop the central ``size`` = (width, height) region (:func:`center_crop`).

    Parameters
    ----------
    size : (int, int)
    interp : int, default 2
    """

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """Scale the image by ``1 + u``, u uniform in [-brightness, brightness].

    Parameters
    ----------
    brightness : float
    """

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        src *= alpha
        return src


class ContrastJitterAug(Augmenter):
    """Blend the image with its mean luma: ``alpha * src + (1 - alpha) * mean_gray``, alpha
    uniform in [1 - contrast, 1 + contrast].

    Parameters
    ----------
    contrast : float
    """

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast
        self.coef = nd.array([[list(_LUMA)]])

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        gray = src * self.coef
        # The mean over pixels of the per-pixel luma: the sum over H, W and C of the weighted
        # channels, times 3 / size.
        gray = (3.0 * (1.0 - alpha) / gray.size) * nd.sum(gray)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """Blend each pixel with its luma: ``alpha * src + (1 - alpha) * gray``, alpha uniform in
    [1 - saturation, 1 + saturation].

    Parameters
    ----------
    saturation : float
    """

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation
        self.coef = nd.array([[list(_LUMA)]])

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        gray = nd.sum(src * self.coef, axis=2, keepdims=True)
        gray *= (1.0 - alpha)
        src *= alpha
        src += gray
        return src


class HueJitterAug(Augmenter):
    """Rotate the hue by ``u * pi``, u uniform in [-hue, hue], with the linear YIQ
    approximation (rotation of the I/Q plane).

    Parameters
    ----------
    hue : float
    """

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = np.array([[0.299, 0.587, 0.114],
                              [0.596, -0.274, -0.321],
                              [0.211, -0.523, 0.311]])
        self.ityiq = np.array([[1.0, 0.956, 0.621],
                               [1.0, -0.272, -0.647],
                               [1.0, -1.107, 1.705]])

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        c, s = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        rot = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        t = (self.ityiq @ rot @ self.tyiq).T
        return nd.dot(src, nd.array(t))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitters (those > 0) in a random order.

    Parameters
    ----------
    brightness, contrast, saturation : float
    """

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet-style PCA lighting noise: add ``eigvec @ (alpha * eigval)``, alpha normal with
    standard deviation ``alphastd`` (drawn with ``numpy.random``).

    Parameters
    ----------
    alphastd : float
    eigval : array of 3
    eigvec : array of 3x3
    """

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = eigval
        self.eigvec = eigvec

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval)
        src += nd.array(rgb)
        return src


class ColorNormalizeAug(Augmenter):
    """``(src - mean) / std`` (:func:`color_normalize`).

    Parameters
    ----------
    mean : NDArray, array-like or None
    std : NDArray, array-like or None
    """

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, NDArray) else nd.array(std)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace every channel by the gray value
    ``0.21 R + 0.72 G + 0.07 B`` (three channels are kept).

    Parameters
    ----------
    p : float
    """

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21] * 3, [0.72] * 3, [0.07] * 3])

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.dot(src, self.mat)
        return src


class HorizontalFlipAug(Augmenter):
    """Mirror left-right with probability ``p``.

    Parameters
    ----------
    p : float
    """

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Cast to ``typ`` (float32 by default).

    Parameters
    ----------
    typ : str, default 'float32'
    """

    def __init__(self, typ="float32"):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


_PCA_EIGVAL = np.array([55.46, 4.794, 1.148])
_PCA_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                        [-0.5808, -0.0045, -0.8140],
                        [-0.5836, -0.6948, 0.4203]])
_IMAGENET_MEAN = [123.68, 116.28, 103.53]
_IMAGENET_STD = [58.395, 57.12, 57.375]


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False,
                    rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                    saturation=0, hue=0, pca_noise=0, rand_gray=0, inter_method=2):
    """The standard augmenter list, in MXNet's order.

    Parameters
    ----------
    data_shape : (int, int, int)
        Output (C, H, W).
    resize : int
        Resize the shorter side to this first (when > 0).
    rand_crop : bool
        Random crop instead of the center crop.
    rand_resize : bool
        Random-area, random-ratio crop (needs ``rand_crop``).
    rand_mirror : bool
        Mirror with probability 0.5.
    mean, std : True, array or None
        Normalise; True uses ImageNet's RGB mean / std.
    brightness, contrast, saturation, hue : float
        Jitter ranges.
    pca_noise : float
        PCA lighting noise level.
    rand_gray : float
        Probability of a gray image.
    inter_method : int, default 2
        Interpolation code for every resize (0-4, 9 auto, 10 random).

    Returns
    -------
    list of Augmenter
    """
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        assert rand_crop
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0),
                                          inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, _PCA_EIGVAL, _PCA_EIGVEC))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    if mean is True:
        mean = nd.array(_IMAGENET_MEAN)
    elif mean is not None:
        assert isinstance(mean, (np.ndarray, NDArray)) and mean.shape[0] in [1, 3]
    if std is True:
        std = nd.array(_IMAGENET_STD)
    elif std is not None:
        assert isinstance(std, (np.ndarray, NDArray)) and std.shape[0] in [1, 3]
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


def _read_imglist(path, who):
    """(key, labels, path) of each line of an image list (``index\\tlabel(s)\\tpath``;
    lines with fewer fields are skipped, as MXNet does); a malformed line raises
    MXNetValueError naming the file and the line."""
    try:
        with open(path, "rb") as fin:
            raw = fin.read()
    except FileNotFoundError:
        from .._loaderr import LoaderFileNotFoundError
        raise LoaderFileNotFoundError(f"{who}: image list {path!r} does not exist") from None
    out = []
    for lineno, line in enumerate(raw.split(b"\n"), 1):
        def bad(why):
            return MXNetValueError(f"{who}: {path}: line {lineno}: {why}: "
                                   f"{line.strip()[:80].decode('utf-8', 'replace')!r}")
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise bad("not UTF-8 text") from None
        fields = text.strip().split("\t")
        if len(fields) < 3:
            continue
        try:
            out.append((int(fields[0]), [float(v) for v in fields[1:-1]], fields[-1]))
        except ValueError:
            raise bad("expected 'index<TAB>label(s)<TAB>path' with numbers") from None
    return out


class ImageIter(_io.DataIter):
    """Batches of augmented images from a RecordIO file, an image list file or a Python list.

    Parameters
    ----------
    batch_size : int
    data_shape : (3, int, int)
        Output (C, H, W); only 3 channels.
    label_width : int, default 1
        Labels per image.
    path_imgrec : str, optional
        RecordIO file of packed images (``mx.recordio.pack_img``).
    path_imglist : str, optional
        ``.lst`` file: ``index\\tlabel(s)\\tpath`` lines.
    path_root : str, optional
        Directory the list's paths are relative to.
    path_imgidx : str, optional
        Index of ``path_imgrec`` (needed to shuffle or partition it).
    shuffle : bool, default False
        Shuffle (Python's ``random``) at every reset.
    part_index, num_parts : int
        Read only part ``part_index`` of ``num_parts`` equal parts.
    aug_list : list of Augmenter, optional
        Augmenters; by default ``CreateAugmenter(data_shape, **kwargs)``.
    imglist : list, optional
        ``[label(s)..., path]`` items.
    data_name, label_name : str
    dtype : {'float32', 'int32', 'int64', 'float64'}
        The labels' dtype.
    last_batch_handle : {'pad', 'discard', 'roll_over'}, default 'pad'
    **kwargs
        Passed to :func:`CreateAugmenter`.
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name="data",
                 label_name="softmax_label", dtype="float32", last_batch_handle="pad",
                 **kwargs):
        super().__init__()
        assert path_imgrec or path_imglist or isinstance(imglist, list)
        assert dtype in ["int32", "float32", "int64", "float64"], dtype + " label not supported"
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError("last_batch_handle must be 'pad', 'discard' or 'roll_over', got "
                             f"{last_batch_handle!r}")
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
                self.imgidx = None
        else:
            self.imgrec = None
        imgkeys = []
        self._src = str(path_imgrec or path_imglist or "imglist")
        self._where = None
        self._nread = 0
        if path_imglist:
            self.imglist = {}
            for key, labels, fname in _read_imglist(str(path_imglist), type(self).__name__):
                self.imglist[key] = (nd.array(labels, dtype=dtype), fname)
                imgkeys.append(key)
        elif isinstance(imglist, list):
            self.imglist = {}
            for index, img in enumerate(imglist, start=1):
                key = str(index)
                if len(img) > 2:
                    label = nd.array(img[:-1], dtype=dtype)
                elif isinstance(img[0], numeric_types):
                    label = nd.array([img[0]], dtype=dtype)
                else:
                    label = nd.array(img[0], dtype=dtype)
                self.imglist[key] = (label, img[-1])
                imgkeys.append(key)
        else:
            self.imglist = None
        self.path_root = path_root
        self.check_data_shape(data_shape)
        data_shape = tuple(data_shape)
        self.provide_data = [(data_name, (batch_size,) + data_shape)]
        if label_width > 1:
            self.provide_label = [(label_name, (batch_size, label_width))]
        else:
            self.provide_label = [(label_name, (batch_size,))]
        self.batch_size = batch_size
        self.data_shape = data_shape
        self.label_width = label_width
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            assert self.imgidx is not None, "shuffling or partitioning a .rec needs path_imgidx"
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            assert part_index < num_parts
            per_part = len(self.seq) // num_parts
            self.seq = self.seq[part_index * per_part:(part_index + 1) * per_part]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = None
        self._cache_label = None
        self._cache_idx = None
        self.reset()

    def reset(self):
        """Start again (after 'roll_over', the held-over images complete the first batch)."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
                self._nread = 0
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Start again, dropping held-over images."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
            self._nread = 0
        self.cur = 0
        self._allow_read = True
        self._cache_data = None
        self._cache_label = None
        self._cache_idx = None

    def next_sample(self):
        """The next (label, encoded image bytes); StopIteration at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is not None:
            if self.cur >= self.num_image:
                if self.last_batch_handle != "discard":
                    self.cur = 0
                raise StopIteration
            idx = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                self._where = f"record of key {idx}"
                header, img = self._unpack(self.imgrec.read_idx(idx))
                if self.imglist is None:
                    return header.label, img
                return self.imglist[idx][0], img
            label, fname = self.imglist[idx]
            self._where = f"image {fname!r}"
            return label, self.read_image(fname)
        self._where = f"record {self._nread}"
        s = self.imgrec.read()
        if s is None:
            if self.last_batch_handle != "discard":
                self.imgrec.reset()
                self._nread = 0
            raise StopIteration
        self._nread += 1
        header, img = self._unpack(s)
        return header.label, img

    def _unpack(self, s):
        try:
            return recordio.unpack(s)
        except Exception as err:  # noqa: BLE001 - the contract: an MXNetError naming it
            raise self._named(err) from err

    def _named(self, err):
        """``err`` as an MXNetError naming the file and the record at fault."""
        from .._loaderr import named
        return named(err, self._src, self._where, type(self).__name__)

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as err:
                    logging.debug("Invalid image, skipping:  %s", err)
                    continue
                data = self.augmentation_transform(data)
                assert i < self.batch_size, \
                    "Batch size must be multiples of augmenter output length"
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_batch(self):
        """Empty (data, label) arrays of one batch, which ``_batchify`` fills."""
        c, h, w = self.data_shape
        return nd.zeros((self.batch_size, c, h, w)), nd.empty(self.provide_label[0][1])

    def _wrap_batch(self, batch_data, batch_label, pad):
        return _io.DataBatch([batch_data], [batch_label], pad=pad)

    def next(self):
        """The next batch (a :class:`~neogluon.io.DataBatch`). A malformed record or image
        raises an MXNetError naming the file and the record; reset() then starts again."""
        try:
            return self._next()
        except (StopIteration, AssertionError):
            raise
        except Exception as err:  # noqa: BLE001 - the contract: an MXNetError naming it
            raise self._named(err) from err

    def _next(self):
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data, batch_label = self._new_batch()
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = \
                    batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return self._wrap_batch(batch_data, batch_label, pad)

    def check_data_shape(self, data_shape):
        """Raise ValueError unless ``data_shape`` is (3, H, W)."""
        if len(data_shape) != 3:
            raise ValueError("data_shape should have length 3, with dimensions CxHxW")
        if data_shape[0] != 3:
            raise ValueError("This iterator expects inputs to have 3 channels.")

    def check_valid_image(self, data):
        """Raise RuntimeError for an image with no pixels."""
        if len(data[0].shape) == 0:
            raise RuntimeError("Data shape is wrong")

    def imdecode(self, s):
        """Decode image bytes (RGB HWC NDArray); a failure names the image."""
        try:
            return imdecode(s)
        except Exception as err:  # noqa: BLE001 - reported with the image's name
            if self.seq is not None:
                idx = self.seq[(self.cur % self.num_image) - 1]
            else:
                idx = None
            if self.imglist is not None and idx is not None:
                where = f"filename: {self.imglist[idx][1]}"
            else:
                where = f"index: {idx}"
            # MXNet raises RuntimeError; MXNetError is one
            raise MXNetError(f"Broken image {where} ({self._src}), {err}") from None

    def read_image(self, fname):
        """The bytes of image file ``fname`` (under ``path_root``)."""
        from .._loaderr import LoaderFileNotFoundError
        path = os.path.join(self.path_root or "", fname)
        try:
            with open(path, "rb") as fin:
                return fin.read()
        except FileNotFoundError:
            raise LoaderFileNotFoundError(f"{type(self).__name__}: {self._src}: image "
                                          f"{path!r} does not exist") from None
        except OSError as err:
            raise MXNetError(f"{type(self).__name__}: {self._src}: cannot read image "
                             f"{path!r}: {err.strerror or err}") from None

    def augmentation_transform(self, data):
        """Apply the augmenters in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """HWC -> CHW."""
        return nd.transpose(datum, axes=(2, 0, 1))
