"""``mx.image`` (also ``mx.img``): decode images and crop, resize and normalise them.

Provided: ``imdecode``, ``imread``, ``imresize``, ``scale_down``, ``resize_short``,
``fixed_crop``, ``random_crop``, ``center_crop``, ``color_normalize``, ``random_size_crop``,
``copyMakeBorder``, ``imrotate``, ``random_rotate``, the ``Augmenter`` classes,
``CreateAugmenter`` and ``ImageIter``. Not provided: the detection module (``ImageDetIter``,
``CreateDetAugmenter``).
"""
from .image import (imdecode, imread, imresize, scale_down, resize_short, fixed_crop,
                    random_crop, center_crop, color_normalize, random_size_crop,
                    copyMakeBorder, imrotate, random_rotate)
from .augment import *  # noqa: F401,F403
from .augment import __all__ as _augment_all
from . import image

__all__ = ["imdecode", "imread", "imresize", "scale_down", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "copyMakeBorder", "imrotate", "random_rotate"] + _augment_all
