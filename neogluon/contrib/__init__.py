"""``mx.contrib``: MXNet's experimental namespace.

``mx.contrib.amp`` is :mod:`neogluon.amp`; ``mx.contrib.nd`` / ``mx.contrib.ndarray`` is
:mod:`neogluon.ndarray.contrib` (the same module as ``mx.nd.contrib``); ``mx.contrib.io``
has ``DataLoaderIter``; ``mx.contrib.text`` vocabularies and token embeddings;
``mx.contrib.tensorboard`` a metrics callback writing TensorBoard events;
``mx.contrib.checkpoint`` crash-safe checkpoint sets for (distributed) training (neogluon's own);
``mx.contrib.svrg_optimization`` the SVRG module and optimizers. Submodules load
on first use.
"""
import importlib as _importlib

# name -> the module (inside this package) that provides it
_LAZY = {"amp": ".amp", "ndarray": ".ndarray", "nd": ".ndarray", "autograd": ".autograd",
         "io": ".io", "text": ".text", "onnx": ".onnx", "symbol": ".symbol", "sym": ".symbol",
         "quantization": ".quantization", "quant": ".quantization",
         "tensorboard": ".tensorboard", "svrg_optimization": ".svrg_optimization",
         "checkpoint": ".checkpoint"}


def __getattr__(name):
    if name in _LAZY:
        try:
            module = _importlib.import_module(_LAZY[name], __name__)
        except ModuleNotFoundError as err:
            if err.name != __name__ + _LAZY[name]:
                raise
            raise AttributeError(f"module 'neogluon.contrib' has no attribute {name!r}") from None
        globals()[name] = module
        return module
    raise AttributeError(f"module 'neogluon.contrib' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
