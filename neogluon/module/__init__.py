"""``mx.module`` (``mx.mod``): MXNet 1.x's Module API on neogluon's executors.

``Module`` trains a Symbol through executors, a KVStore and an optimizer; ``BaseModule`` is
the interface and the ``fit``/``score``/``predict`` loops; ``BucketingModule`` switches
between Modules per bucket key; ``SequentialModule`` chains Modules; ``PythonModule`` and
``PythonLossModule`` are modules written in Python.
"""
from .base_module import BaseModule
from .module import Module

__all__ = ["BaseModule", "Module"]

try:  # the modules built on Module (added as they are written)
    from .bucketing_module import BucketingModule
    __all__.append("BucketingModule")
except ImportError:  # pragma: no cover - during development only
    pass
try:
    from .sequential_module import SequentialModule
    __all__.append("SequentialModule")
except ImportError:  # pragma: no cover
    pass
try:
    from .python_module import PythonModule, PythonLossModule
    __all__ += ["PythonModule", "PythonLossModule"]
except ImportError:  # pragma: no cover
    pass
