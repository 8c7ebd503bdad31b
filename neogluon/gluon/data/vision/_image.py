"""The image kernels behind ``gluon.data.vision.transforms``.

They live in ``mx.nd.image`` (operators and the shared private kernels) and ``mx.image``
(crop geometry, rotation); this module only adapts their call forms to the transforms.
Images are HWC arrays (or NHWC batches) unless a function says otherwise.
"""
from __future__ import annotations

from ....ndarray import image as _nd_image
from ....ndarray.ndarray import _new
from .... import image as _mx_image

# The functions the transforms call, with MXNet's semantics (and MXNet's names where the
# public ones fit).
to_tensor = _nd_image.to_tensor
scale_down = _mx_image.scale_down
fixed_crop = _mx_image.fixed_crop
center_crop = _mx_image.center_crop
random_size_crop = _mx_image.random_size_crop
imrotate = _mx_image.imrotate
random_rotate = _mx_image.random_rotate
adjust_brightness = _nd_image._adjust_brightness
adjust_contrast = _nd_image._adjust_contrast
adjust_saturation = _nd_image._adjust_saturation
adjust_hue = _nd_image._adjust_hue
adjust_lighting = _nd_image._adjust_lighting
# the random transforms draw from neogluon's generator (``mx.random.seed`` repeats them), as
# MXNet's call its random image operators
random_flip_left_right = _nd_image.random_flip_left_right
random_flip_top_bottom = _nd_image.random_flip_top_bottom
random_brightness = _nd_image.random_brightness
random_contrast = _nd_image.random_contrast
random_saturation = _nd_image.random_saturation
random_hue = _nd_image.random_hue
random_color_jitter = _nd_image.random_color_jitter
random_lighting = _nd_image.random_lighting


def normalize(x, mean=0.0, std=1.0):
    """``(x - mean) / std`` per channel of a CHW (or NCHW) image (1 or 3 channels)."""
    return _nd_image.normalize(x, mean, std)


def resize(x, size, keep_ratio=False, interp=1):
    """Resize an HWC or NHWC image to ``size`` ((width, height) or an int)."""
    return _nd_image.resize(x, size, keep_ratio, interp)


def crop(x, x0, y0, width, height):
    """The ``width`` x ``height`` region of an HWC or NHWC image starting at ``(x0, y0)``."""
    return _new(_nd_image._crop(x, x0, y0, width, height), x._ctx)


def flip(x, axis_3d):
    """Reverse the width (``axis_3d=1``) or height (0) axis of an HWC image (MXNet 1.9.1's
    odd-height top-bottom quirk included: see ``nd.image.flip_top_bottom``)."""
    return _new(_nd_image._flip(x, axis_3d), x._ctx)
