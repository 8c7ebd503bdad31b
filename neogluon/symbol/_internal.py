"""``mx.sym._internal``: the symbolic twins of ``mx.nd._internal``'s underscore-named operators
(``mx.sym._internal._plus``, ``_identity_with_attr_like_rhs``...), made on first use."""
from .symbol import _Namespace

_ops = _Namespace("_internal")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)
    from ._control_flow import INTERNAL
    if name in INTERNAL:   # nodes holding subgraphs (_foreach, _cond, _CachedOp...)
        return INTERNAL[name]
    try:
        return getattr(_ops, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}",
                             name=name) from None


def __dir__():
    return dir(_ops)
