"""``mx.npx.image``: the ``mx.nd.image`` operators on mx.np arrays."""
from ..ndarray import image as _ndimage
from . import _make_op

for _name in ("to_tensor", "normalize", "resize", "crop", "flip_left_right", "flip_top_bottom",
              "random_flip_left_right", "random_flip_top_bottom", "random_brightness",
              "random_contrast", "random_saturation", "random_hue", "random_color_jitter",
              "random_lighting", "adjust_lighting", "random_crop", "random_resized_crop"):
    if hasattr(_ndimage, _name):
        _make_op(_name, getattr(_ndimage, _name), namespace=globals())
