"""Neural-network operators that the layers use (FullyConnected, Activation, ...).

MXNet's names and argument conventions, computed by torch.nn.functional.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..base import MXNetError
from .ndarray import NDArray, _new, _run

__all__ = ["FullyConnected", "Activation"]


def FullyConnected(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True,
                   out=None, name=None):
    """``data @ weight.T + bias``; with ``flatten`` the input is first made 2-D."""
    x = data._t
    w = weight._t
    if flatten and x.dim() != 2:
        x = x.reshape(x.shape[0], -1)
    if x.shape[-1] != w.shape[1]:
        raise MXNetError(f"FullyConnected: input has {x.shape[-1]} features (data shape "
                         f"{data.shape}) but weight has shape {weight.shape}")
    b = None if (no_bias or bias is None) else bias._t
    return _new(_run(F.linear, x, w, b), data._ctx)


_ACTS = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
         "softrelu": F.softplus, "softsign": F.softsign, "log_sigmoid": F.logsigmoid,
         "mish": F.mish}


def Activation(data, act_type="relu", out=None, name=None):
    """Elementwise activation: relu, sigmoid, tanh, softrelu, softsign, log_sigmoid, mish."""
    fn = _ACTS.get(act_type)
    if fn is None:
        raise MXNetError(f"Activation: unknown act_type {act_type!r}; expected one of "
                         f"{sorted(_ACTS)}")
    return _new(_run(fn, data._t), data._ctx)
