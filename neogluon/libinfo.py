"""``mx.libinfo``: where MXNet's native library and headers are.

neogluon has no ``libmxnet``: it runs on PyTorch. The functions say so (MXNetError) instead
of returning paths that do not exist; ``__version__`` is the MXNet API level neogluon
implements.
"""
from .base import MXNetError

__all__ = ["find_lib_path", "find_include_path", "find_conf_path"]
__version__ = "1.9.1"


def _none(what):
    raise MXNetError(f"{what}: neogluon runs on PyTorch and has no libmxnet (no native library, "
                     "C headers or build configuration to point to); code that builds or loads "
                     "C++ against MXNet's C API cannot run on it")


def find_lib_path(prefix="libmxnet"):
    """Paths of MXNet's shared library (not provided: raises MXNetError)."""
    _none("find_lib_path")


def find_include_path():
    """MXNet's C/C++ header directory (not provided: raises MXNetError)."""
    _none("find_include_path")


def find_conf_path(prefix="tvmop"):
    """MXNet's TVM operator configuration file (not provided: raises MXNetError)."""
    _none("find_conf_path")
