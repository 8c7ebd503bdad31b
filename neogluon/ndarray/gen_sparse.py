"""``mxnet.ndarray.gen_sparse``: MXNet's generated module of ``sparse`` operators, a view of
``mx.nd.sparse`` (see :mod:`neogluon._opmodule`): every name is looked up there."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.ndarray.sparse


__getattr__, __dir__ = _forward(__name__, _source, None)
