"""``mx.sym`` / ``mx.symbol``: symbolic graphs over neogluon's nd operators.

``mx.sym.X`` is the symbolic twin of ``mx.nd.X`` for every nd operator ``X`` (and
``mx.sym.contrib.X``, ``mx.sym.random.X``... for the nd namespaces). See
:mod:`neogluon.symbol.symbol` for what is and is not supported.
"""
from .symbol import eye, linspace  # noqa: F401
from .symbol import (Symbol, var, Variable, Group, load, load_json, zeros, ones, full, arange,
                     pow, power, maximum, minimum, hypot, eval_symbol, _evaluate, _Namespace,
                     _op_function, _NOT_OP_FUNCS)

contrib = _Namespace("contrib")
random = _Namespace("random")
linalg = _Namespace("linalg")
image = _Namespace("image")
sparse = _Namespace("sparse")
# NumPy mode: F.np / F.npx in hybrid_forward on symbols (the twins of mx.np / mx.npx)
np = numpy = _Namespace("np")
np._Symbol = Symbol   # MXNet's mx.sym.np._Symbol (one symbol type here)
npx = numpy_extension = _Namespace("npx")
from . import _internal   # MXNet's internal operators (_identity_with_attr_like_rhs...)

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "zeros", "ones", "full",
           "arange", "pow", "power", "maximum", "minimum", "hypot", "contrib", "random",
           "linalg", "image", "sparse"]


def __getattr__(name):
    if name == "op" or name.startswith("gen_"):   # MXNet's operator modules (see _opmodule)
        import importlib
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            pass
    # Every nd operator has a symbolic twin, made on first use.
    if name.startswith("__") or name in _NOT_OP_FUNCS:
        raise AttributeError(f"module 'neogluon.symbol' has no attribute {name!r}")
    try:
        fn = _op_function(name)
    except AttributeError:
        raise AttributeError(f"module 'neogluon.symbol' has no attribute {name!r}") from None
    globals()[name] = fn
    return fn
