"""``gluon.data``: datasets, samplers and the DataLoader."""
from .dataset import *  # noqa: F401,F403
from .sampler import *  # noqa: F401,F403
from .dataloader import *  # noqa: F401,F403
from . import dataset, sampler, dataloader  # noqa: F401


def __getattr__(name):
    if name == "vision":
        import importlib
        mod = importlib.import_module(".vision", __name__)
        globals()["vision"] = mod
        return mod
    raise AttributeError(f"module 'neogluon.gluon.data' has no attribute {name!r}")
