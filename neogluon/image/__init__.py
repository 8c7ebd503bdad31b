"""``mx.image`` (also ``mx.img``): decode images and crop, resize and normalise them.

Provided: ``imdecode``, ``imread``, ``imresize``, ``scale_down``, ``resize_short``,
``fixed_crop``, ``random_crop``, ``center_crop``, ``color_normalize``, ``random_size_crop``,
``copyMakeBorder``, ``imrotate``, ``random_rotate``, the ``Augmenter`` classes,
``CreateAugmenter``, ``ImageIter`` and the detection module (``ImageDetIter``,
``CreateDetAugmenter`` and the ``Det*`` augmenters, also as ``mx.image.detection``).
"""
from .image import (imdecode, imread, imresize, scale_down, resize_short, fixed_crop,
                    random_crop, center_crop, color_normalize, random_size_crop,
                    copyMakeBorder, imrotate, random_rotate)
from .augment import *  # noqa: F401,F403
from .augment import __all__ as _augment_all
from . import image
from . import detection
from . import detection as det
from .detection import *  # noqa: F401,F403
from .detection import __all__ as _detection_all

__all__ = ["imdecode", "imread", "imresize", "scale_down", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "copyMakeBorder", "imrotate", "random_rotate"] + _augment_all + _detection_all


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .. import io, recordio  # noqa: E402,F401
from .. import ndarray as nd  # noqa: E402,F401
from ..base import numeric_types  # noqa: E402,F401
from ..util import is_np_array  # noqa: E402,F401
