"""``mxnet.ndarray.gen_contrib``: MXNet's generated module of ``contrib`` operators, a view of
``mx.nd.contrib`` (see :mod:`neogluon._opmodule`): every name is looked up there."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.ndarray.contrib


__getattr__, __dir__ = _forward(__name__, _source, "contrib")
