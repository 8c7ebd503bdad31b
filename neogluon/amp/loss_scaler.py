"""``mx.contrib.amp.loss_scaler``: the module of AMP's dynamic loss scaler (``LossScaler``, the
same class as ``mx.contrib.amp.LossScaler``)."""
from .. import autograd as ag  # noqa: F401  (MXNet's module names)
from .. import ndarray as nd  # noqa: F401
from . import LossScaler

__all__ = ["LossScaler"]
