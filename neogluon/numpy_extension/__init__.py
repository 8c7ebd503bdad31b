"""``mx.npx``: MXNet's NumPy-extension operators, which neogluon does not provide.

The switches MXNet keeps here (``set_np``, ``reset_np``, ``is_np_array``, ``is_np_shape``,
``use_np``, ``np_shape``, ``np_array``) work (see :mod:`neogluon.util`); any other name raises
an AttributeError that says the operators are not provided.
"""
from ..util import (set_np, reset_np, is_np_array, is_np_shape, use_np, use_np_array,  # noqa: F401
                    use_np_shape, np_array, np_shape, get_cuda_compute_capability)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        f"mx.npx.{name}: neogluon does not provide MXNet's NumPy-extension operators "
        "(mxnet.numpy_extension); use the mx.nd operators")
