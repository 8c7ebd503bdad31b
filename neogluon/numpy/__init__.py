"""``mx.np``: MXNet's NumPy-compatible array API, which neogluon does not provide.

The module exists so that programs importing it (``import mxnet.numpy as np``) still load;
using any of its names raises an AttributeError that says so. neogluon's arrays are
``mx.nd.NDArray`` (with ``asnumpy()``, and zero-copy ``nd.to_torch`` / ``nd.from_torch``).
"""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        f"mx.np.{name}: neogluon does not provide MXNet's NumPy-compatible array API "
        "(mxnet.numpy); use mx.nd arrays, or numpy/torch directly")
