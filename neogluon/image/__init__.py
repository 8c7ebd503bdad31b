"""``mx.image`` (also ``mx.img``): decode images and crop, resize and normalise them.

Provided: ``imdecode``, ``imread``, ``imresize``, ``scale_down``, ``resize_short``,
``fixed_crop``, ``random_crop``, ``center_crop``, ``color_normalize``, ``random_size_crop``,
``copyMakeBorder``, ``imrotate``, ``random_rotate``. Not provided: the ``Augmenter`` classes,
``CreateAugmenter``, ``ImageIter`` and the detection module (use
``gluon.data.vision.transforms`` and ``gluon.data.DataLoader``).
"""
from .image import (imdecode, imread, imresize, scale_down, resize_short, fixed_crop,
                    random_crop, center_crop, color_normalize, random_size_crop,
                    copyMakeBorder, imrotate, random_rotate)
from . import image

__all__ = ["imdecode", "imread", "imresize", "scale_down", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "copyMakeBorder", "imrotate", "random_rotate"]
