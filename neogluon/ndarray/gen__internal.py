"""``mxnet.ndarray.gen__internal``: MXNet's generated module of ``_internal`` operators, a view of
``mx.nd._internal`` (see :mod:`neogluon._opmodule`): every name is looked up there."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.ndarray._internal


__getattr__, __dir__ = _forward(__name__, _source, "_internal")
