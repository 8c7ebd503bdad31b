"""``mxnet.symbol.gen_random``: MXNet's generated module of ``random`` operators, a view of
``mx.sym.random`` (see :mod:`neogluon._opmodule`): every name is looked up there."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.symbol.random


def _internal(name):
    # MXNet's generated random module also holds the densities (``pdf_normal`` ...), which
    # neogluon keeps under their registry names in _internal (``_random_pdf_normal``).
    if not name.startswith("pdf_"):
        raise AttributeError(name)
    import neogluon as _ng
    return getattr(_ng.symbol._internal, "_random_" + name)


__getattr__, __dir__ = _forward(__name__, _source, None, fallback=_internal)
