"""``mx.module`` (``mx.mod``): MXNet 1.x's Module API on neogluon's executors.

``Module`` trains a Symbol through executors, a KVStore and an optimizer; ``BaseModule`` is
the interface and the ``fit``/``score``/``predict`` loops; ``BucketingModule`` switches
between Modules per bucket key; ``SequentialModule`` chains Modules; ``PythonModule`` and
``PythonLossModule`` are modules written in Python.
"""
from .base_module import BaseModule
from .module import Module
from .bucketing_module import BucketingModule
from .sequential_module import SequentialModule
from .python_module import PythonModule, PythonLossModule

__all__ = ["BaseModule", "Module", "BucketingModule", "SequentialModule", "PythonModule",
           "PythonLossModule"]
