"""neogluon: MXNet 1.x Gluon's training system, rebuilt on PyTorch.

    import neogluon as mx
    from neogluon import gluon, nd, autograd, optimizer
"""
from .base import MXNetError
from . import base
from . import _malloc  # noqa: F401  (NEOGLUON_KEEP_MEMORY=1 applies at import)
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus
from . import context
from . import autograd
from . import random
from . import ndarray
from . import ndarray as nd
from .util import (is_np_shape, set_np_shape, np_shape, use_np_shape, is_np_array, np_array,
                   use_np_array, use_np)

# ``__version__`` is neogluon's own release, the package metadata's version (a test holds it
# equal to pyproject.toml's). ``__mxnet_version__`` is the MXNet API level neogluon implements;
# under the ``mxnet`` alias (``python -m neogluon.run``, ``import neogluon.mxnet_alias``)
# ``mxnet.__version__`` is that level, which MXNet programs and libraries (GluonCV, GluonNLP)
# compare against MXNet releases. ``__neogluon_version__`` is kept as another name for
# ``__version__``.
__version__ = "0.1.0"
__neogluon_version__ = __version__
__mxnet_version__ = base.MXNET_API_VERSION

import sys as _sys


def __getattr__(name):
    # Higher layers import lazily so `import neogluon` stays fast and layering stays clean.
    import importlib
    lazy = {"gluon": ".gluon", "optimizer": ".optimizer", "lr_scheduler": ".lr_scheduler",
            "kv": ".kvstore", "kvstore": ".kvstore", "init": ".initializer",
            "initializer": ".initializer", "metric": ".metric", "amp": ".amp",
            "test_utils": ".test_utils", "image": ".image", "img": ".image",
            "io": ".io", "recordio": ".recordio", "profiler": ".profiler",
            "runtime": ".runtime", "util": ".util", "contrib": ".contrib", "library": ".library",
            "numpy": ".numpy", "np": ".numpy", "numpy_extension": ".numpy_extension",
            "npx": ".numpy_extension", "model": ".model",
            "sym": ".symbol", "symbol": ".symbol", "name": ".name", "onnx": ".onnx",
            "operator": ".operator", "registry": ".registry",
            # MXNet 1.x's symbolic training stack
            "executor": ".executor", "executor_manager": ".executor_manager",
            "module": ".module", "mod": ".module",
            "callback": ".callback", "monitor": ".monitor", "mon": ".monitor",
            "visualization": ".visualization", "viz": ".visualization",
            "attribute": ".attribute", "rnn": ".rnn", "log": ".log", "engine": ".engine",
            "rnd": ".random", "error": ".error", "libinfo": ".libinfo", "rtc": ".rtc",
            "misc": ".misc", "ndarray_doc": ".ndarray_doc", "symbol_doc": ".symbol_doc",
            "notebook": ".notebook", "numpy_dispatch_protocol": ".numpy_dispatch_protocol",
            "numpy_op_signature": ".numpy_op_signature", "_numpy_op_doc": "._numpy_op_doc"}
    if name in lazy:
        mod = importlib.import_module(lazy[name], __name__)
        # Through setattr (not globals()), so the ``mxnet`` alias module sees it too.
        setattr(_sys.modules[__name__], name, mod)
        return mod
    if name == "AttrScope":   # MXNet's top level re-exports it from mx.attribute
        from .attribute import AttrScope
        setattr(_sys.modules[__name__], name, AttrScope)
        return AttrScope
    raise AttributeError(f"module 'neogluon' has no attribute {name!r}")

# MXNet's job layouts start the same script as scheduler and server processes too
# (DMLC_ROLE). neogluon needs no servers; the scheduler only hosts the workers' rendezvous.
# Either role ends here, before the script trains (see kvstore/_dist_env.py).
import os as _os
if _os.environ.get("DMLC_ROLE") in ("server", "scheduler"):
    from .kvstore._dist_env import handle_role as _handle_role
    _handle_role()
del _os
