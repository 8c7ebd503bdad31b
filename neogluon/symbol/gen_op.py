"""``mxnet.symbol.gen_op``: MXNet's generated module of ``op`` operators, a view of
``mx.sym`` (see :mod:`neogluon._opmodule`): every name is looked up there."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.symbol


__getattr__, __dir__ = _forward(__name__, _source, "op")
