"""``mx.library``: loading MXNet extension libraries.

MXNet's extension libraries are shared objects built against MXNet's C++ operator API
(``lib_api.h``); neogluon runs on torch and cannot execute them. :func:`load` checks the path
as MXNet does and then says so, instead of failing somewhere inside a C call.
"""
from __future__ import annotations

import os

from .base import MXNetError

__all__ = ["load"]


def load(path, verbose=True):
    """Load an MXNet extension library (not supported by neogluon).

    Parameters
    ----------
    path : str
        Absolute path of the ``.so`` / ``.dll`` file.
    verbose : bool
        Unused.

    Raises
    ------
    MXNetError
        Always: for a missing, relative or non-library path as MXNet does, and otherwise
        because MXNet's C++ extension libraries cannot run on neogluon (write the operator in
        Python with torch, e.g. as a ``HybridBlock`` or an ``autograd.Function``).
    """
    if not os.path.exists(path):
        raise MXNetError(f"load path {path} does NOT exist")
    if not os.path.isabs(path):
        raise MXNetError(f"load path {path} is not an absolute path")
    if os.path.splitext(path)[1] not in (".so", ".dll"):
        raise MXNetError(f"load path {path} is NOT a library file")
    raise MXNetError(f"cannot load {path}: MXNet extension libraries are built against MXNet's "
                     "C++ operator API, which neogluon (running on PyTorch) does not provide; "
                     "write the operator in Python with torch instead")
