"""``mx.np.arrayprint``: printing options of mx.np arrays."""
import numpy as _onp

__all__ = ["set_printoptions"]


def set_printoptions(precision=None, threshold=None, **kwarg):
    """Set how mx.np arrays print: ``precision`` (digits after the point) and ``threshold``
    (the element count above which arrays are summarised). As in MXNet 1.9.1, other NumPy
    options raise NotImplementedError."""
    if kwarg:
        raise NotImplementedError("mxnet.numpy.set_printoptions only supports parameters "
                                  "precision and threshold for now.")
    _onp.set_printoptions(precision=precision, threshold=threshold)


set_printoptions.__module__ = "mxnet.numpy"
