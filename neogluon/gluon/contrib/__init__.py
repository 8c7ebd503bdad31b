"""``gluon.contrib``: the Fit API (:mod:`~neogluon.gluon.contrib.estimator`) and other extras.

Submodules load on first use, so ``import neogluon.gluon.contrib`` stays cheap.
"""
import importlib

_SUBMODULES = ("estimator", "nn", "rnn", "cnn", "data")


def __getattr__(name):
    if name in _SUBMODULES:
        try:
            mod = importlib.import_module("." + name, __name__)
        except ModuleNotFoundError as err:
            if err.name == f"{__name__}.{name}":
                raise AttributeError(
                    f"gluon.contrib.{name} is not available in neogluon; see "
                    "docs/api_status.md") from None
            raise
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'neogluon.gluon.contrib' has no attribute {name!r}")
