"""``mxnet.ndarray.gen_linalg``: MXNet's generated module of ``linalg`` operators, a view of
``mx.nd.linalg`` (see :mod:`neogluon._opmodule`): every name is looked up there."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.ndarray.linalg


__getattr__, __dir__ = _forward(__name__, _source, None)
