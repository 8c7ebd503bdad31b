"""``mxnet.ndarray.op``: MXNet's module of the public ndarray operators (``gen_op``'s names and
``CachedOp``), a view of ``mx.nd`` (see :mod:`neogluon._opmodule`)."""
from .._opmodule import forward as _forward


def _source():
    import neogluon as _ng
    return _ng.ndarray


__getattr__, __dir__ = _forward(__name__, _source, "op", extra=("CachedOp",))
