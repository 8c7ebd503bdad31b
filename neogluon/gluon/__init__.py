"""``mx.gluon``: Parameters, Blocks, layers, losses, data, utilities and the Trainer."""
import importlib

_NAMES = {
    "Parameter": ".parameter", "Constant": ".parameter", "ParameterDict": ".parameter",
    "DeferredInitializationError": ".parameter", "tensor_types": ".parameter",
    "Block": ".block", "HybridBlock": ".block", "SymbolBlock": ".block",
    "Trainer": ".trainer",
}
_MODULES = ("nn", "rnn", "loss", "utils", "data", "model_zoo", "contrib", "parameter", "block",
            "trainer", "metric")

__all__ = list(_NAMES) + list(_MODULES)


def __getattr__(name):
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name], __name__), name)
    elif name == "metric":
        value = importlib.import_module("neogluon.metric")
    elif name in _MODULES:
        value = importlib.import_module("." + name, __name__)
    else:
        raise AttributeError(f"module 'neogluon.gluon' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
