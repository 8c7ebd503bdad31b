"""``mxnet.symbol.op``: MXNet's module of the public symbol operators (``gen_op``'s names and
``CachedOp``), a view of ``mx.sym`` (see :mod:`neogluon._opmodule`)."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.symbol


__getattr__, __dir__ = _forward(__name__, _source, "op", extra=("CachedOp",))
