"""Errors, dtype tables and small helpers shared by every layer of neogluon."""
from __future__ import annotations

import numpy as np
import torch

__all__ = ["MXNetError", "MXNetValueError", "NotSupportedForSparseNDArray", "numeric_types", "integer_types",
           "string_types", "to_torch_dtype", "to_numpy_dtype", "dtype_name"]


class MXNetError(RuntimeError):
    """The error neogluon raises where MXNet 1.x raises ``mxnet.base.MXNetError``."""


class MXNetValueError(MXNetError, ValueError):
    """An error MXNet reports as ``ValueError`` (bad shapes in reshape, assignment, ...);
    catchable as either."""


class NotSupportedForSparseNDArray(MXNetError):
    """An operation that a sparse array does not support."""


numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
string_types = (str,)

_NP2TORCH = {
    np.dtype("float32"): torch.float32,
    np.dtype("float64"): torch.float64,
    np.dtype("float16"): torch.float16,
    np.dtype("uint8"): torch.uint8,
    np.dtype("int8"): torch.int8,
    np.dtype("int16"): torch.int16,
    np.dtype("int32"): torch.int32,
    np.dtype("int64"): torch.int64,
    np.dtype("bool"): torch.bool,
}
_TORCH2NP = {v: k for k, v in _NP2TORCH.items()}
_TORCH2NP[torch.bfloat16] = np.dtype("float32")  # numpy has no bfloat16; shown as its widening
_NAMES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
          "int64": torch.int64, "bool": torch.bool, "bfloat16": torch.bfloat16,
          "float": torch.float32, "double": torch.float64, "half": torch.float16}


def to_torch_dtype(dtype) -> torch.dtype:
    """Map a numpy dtype, a dtype name or a torch dtype to a torch dtype."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        try:
            return _NAMES[dtype]
        except KeyError:
            raise TypeError(f"unsupported dtype {dtype!r}; expected one of "
                            f"{sorted(_NAMES)}") from None
    try:
        return _NP2TORCH[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported dtype {dtype!r}") from None


def to_numpy_dtype(dtype: torch.dtype):
    """Map a torch dtype to the numpy dtype *type* MXNet reports (``numpy.float32`` ...)."""
    return _TORCH2NP[dtype].type


def dtype_name(dtype) -> str:
    """Canonical name ('float32', ...) of any dtype spelling."""
    t = to_torch_dtype(dtype)
    if t is torch.bfloat16:
        return "bfloat16"
    return _TORCH2NP[t].name
