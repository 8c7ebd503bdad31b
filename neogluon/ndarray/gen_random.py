"""``mxnet.ndarray.gen_random``: MXNet's generated module of ``random`` operators, a view of
``mx.nd.random`` (see :mod:`neogluon._opmodule`): every name is looked up there."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.ndarray.random


__getattr__, __dir__ = _forward(__name__, _source, None)
