"""Image transforms for ``Dataset.transform`` / ``transform_first`` (MXNet 1.9.1's set).

Images are HWC arrays (``uint8`` or float) until :class:`ToTensor` turns them into CHW
float32 in [0, 1]. Random transforms draw from numpy's global generator (Python's ``random``
for the crop geometry of :class:`RandomResizedCrop`, as in MXNet).
"""
from __future__ import annotations

import random

import numpy as np

from ....base import numeric_types
from ...block import Block, HybridBlock
from ...nn import Sequential
from . import _image

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate", "RandomRotation",
           "RandomResizedCrop", "CropResize",
           "CenterCrop", "Resize", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomBrightness", "RandomContrast", "RandomSaturation", "RandomHue",
           "RandomColorJitter",
           "RandomLighting", "RandomApply"]


class Compose(Sequential):
    """Apply transforms in sequence.

    Parameters
    ----------
    transforms : list of callables
        The transforms, applied first to last.

    Notes
    -----
    MXNet hybridizes runs of consecutive HybridBlock transforms; neogluon runs them as they
    are (the results are the same, and per-sample transforms gain nothing from capture).
    """

    def __init__(self, transforms):
        super().__init__()
        for t in transforms:
            if t is not None:
                self.add(t if isinstance(t, Block) else _Callable(t))

    def hybridize(self, active=True, **kwargs):
        # MXNet's Compose groups its HybridBlocks itself, so Sequential's advice to use a
        # HybridSequential does not apply here.
        for child in self._children.values():
            child.hybridize(active, **kwargs)


class _Callable(Block):
    """Lets a plain function sit in a Compose."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, x):
        return self._fn(x)


class _Imperative(HybridBlock):
    """A HybridBlock transform computed by torch image kernels: ``hybridize()`` leaves it
    imperative (capture would freeze its random draws)."""

    def hybridize(self, active=True, **kwargs):
        self._active = False


class Cast(HybridBlock):
    """Cast the input to ``dtype`` (default float32)."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(_Imperative):
    """HWC (or NHWC) images with values in [0, 255] to CHW (NCHW) float32 in [0, 1]."""

    def hybrid_forward(self, F, x):
        return _image.to_tensor(x)


class Normalize(_Imperative):
    """``(x - mean) / std`` per channel of a CHW (or NCHW) float image.

    Parameters
    ----------
    mean : float or tuple of floats
        One value, or one per channel.
    std : float or tuple of floats
        One value, or one per channel.
    """

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return _image.normalize(x, self._mean, self._std)


class Rotate(Block):
    """Rotate CHW (or NCHW) float32 images by a fixed angle (degrees, counter-clockwise).

    Parameters
    ----------
    rotation_degrees : float
    zoom_in : bool, default False
        Zoom so that no empty (zero) corner shows.
    zoom_out : bool, default False
        Zoom out so that the whole image stays visible.
    """

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. Consider calling it "
                            "after ToTensor")
        return _image.imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotate CHW (or NCHW) float32 images by a random angle from ``angle_limits``.

    Parameters
    ----------
    angle_limits : (float, float)
        Lower and upper bound of the angle in degrees.
    zoom_in, zoom_out : bool
        As for :class:`Rotate`.
    rotate_with_proba : float, default 1.0
        Probability of rotating at all.
    """

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. Consider calling it "
                            "after ToTensor")
        return _image.random_rotate(x, *self._args)


class RandomResizedCrop(Block):
    """Crop a random area and aspect ratio, then resize to ``size``.

    Parameters
    ----------
    size : int or (width, height)
        Output size.
    scale : (float, float), default (0.08, 1.0)
        Range of the crop's area as a fraction of the image's.
    ratio : (float, float), default (3/4, 4/3)
        Range of the crop's aspect ratio (width / height).
    interpolation : int, default 1
        0 nearest, 1 bilinear, 2 bicubic, 3 area (OpenCV's codes).
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, scale, ratio, interpolation)

    def forward(self, x):
        return _image.random_size_crop(x, *self._args)[0]


class CropResize(_Imperative):
    """Crop the region at ``(x, y)`` of ``width`` x ``height``, optionally resized to ``size``.

    Parameters
    ----------
    x, y : int
        Left and top of the region.
    width, height : int
        Size of the region.
    size : int or (width, height), optional
        Resize the crop to this size.
    interpolation : int, optional
        Interpolation for the resize (default bilinear).
    """

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._x, self._y = x, y
        self._width, self._height = width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = _image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = _image.resize(out, self._size, False, interp)
        return out


class CenterCrop(Block):
    """Crop the centre to ``size`` (shrinking the crop, then resizing, for small images).

    Parameters
    ----------
    size : int or (width, height)
    interpolation : int, default 1
    """

    def __init__(self, size, interpolation=1):
        super().__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, interpolation)

    def forward(self, x):
        return _image.center_crop(x, *self._args)[0]


class Resize(_Imperative):
    """Resize HWC (or NHWC) images.

    Parameters
    ----------
    size : int or (width, height)
    keep_ratio : bool, default False
        With an int ``size``, resize the shorter side to ``size`` and keep the aspect ratio.
    interpolation : int, default 1
        0 nearest, 1 bilinear, 2 bicubic, 3 area (OpenCV's codes).
    """

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return _image.resize(x, self._size, self._keep, self._interpolation)


class RandomFlipLeftRight(_Imperative):
    """Flip HWC images horizontally with probability 0.5."""

    def hybrid_forward(self, F, x):
        return _image.random_flip_left_right(x)


class RandomFlipTopBottom(_Imperative):
    """Flip HWC images vertically with probability 0.5."""

    def hybrid_forward(self, F, x):
        return _image.random_flip_top_bottom(x)


def _factor_range(v):
    return (max(0, 1 - v), 1 + v)


class RandomBrightness(_Imperative):
    """Multiply by a factor drawn uniformly from ``[max(0, 1 - brightness), 1 + brightness]``."""

    def __init__(self, brightness):
        super().__init__()
        self._args = _factor_range(brightness)

    def hybrid_forward(self, F, x):
        return _image.random_brightness(x, *self._args)


class RandomContrast(_Imperative):
    """Blend HWC RGB images with their mean gray level by a random factor in
    ``[max(0, 1 - contrast), 1 + contrast]``."""

    def __init__(self, contrast):
        super().__init__()
        self._args = _factor_range(contrast)

    def hybrid_forward(self, F, x):
        return _image.random_contrast(x, *self._args)


class RandomSaturation(_Imperative):
    """Blend HWC RGB images with their gray level by a random factor in
    ``[max(0, 1 - saturation), 1 + saturation]``."""

    def __init__(self, saturation):
        super().__init__()
        self._args = _factor_range(saturation)

    def hybrid_forward(self, F, x):
        return _image.random_saturation(x, *self._args)


class RandomHue(_Imperative):
    """Rotate the hue of HWC RGB images by a random fraction of a turn, drawn uniformly
    from ``[max(0, 1 - hue), 1 + hue] - 1``."""

    def __init__(self, hue):
        super().__init__()
        self._args = _factor_range(hue)

    def hybrid_forward(self, F, x):
        return _image.random_hue(x, *self._args)


class RandomColorJitter(_Imperative):
    """Random brightness, contrast, saturation and hue changes, applied in a random order.

    Parameters
    ----------
    brightness, contrast, saturation, hue : float
        Strength of each change (0 leaves it out).
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return _image.random_color_jitter(x, *self._args)


class RandomLighting(_Imperative):
    """AlexNet-style PCA lighting noise on HWC RGB images.

    Parameters
    ----------
    alpha : float
        Standard deviation of the noise on each principal component.
    """

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return _image.random_lighting(x, self._alpha)


class RandomApply(Sequential):
    """Apply ``transforms`` with probability ``p`` (Python's ``random``).

    Parameters
    ----------
    transforms : Block
        The transform(s) to apply.
    p : float, default 0.5
    """

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .... import image  # noqa: E402,F401
from ....util import is_np_array  # noqa: E402,F401
from ...nn import HybridSequential  # noqa: E402,F401
