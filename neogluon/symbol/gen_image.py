"""``mxnet.symbol.gen_image``: MXNet's generated module of ``image`` operators, a view of
``mx.sym.image`` (see :mod:`neogluon._opmodule`): every name is looked up there."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.symbol.image


__getattr__, __dir__ = _forward(__name__, _source, None)
