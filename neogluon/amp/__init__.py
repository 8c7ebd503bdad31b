"""``mx.amp`` (MXNet's ``mxnet.contrib.amp``): dynamic loss scaling for float16 training.

``init_trainer(trainer)`` attaches a :class:`LossScaler`; ``scale_loss(loss, trainer)`` yields
the loss times the current scale and makes the Trainer divide the gradients by it (through
``rescale_grad``, in the same pass as the update); ``Trainer.step`` skips the update when any
gradient is not finite, and the scale adapts: halved on overflow, doubled after
``scale_window`` clean steps.

Unlike MXNet, ``init()`` does not rewrite operators to run in float16: cast the model with
``convert_hybrid_block`` (or ``block.cast('float16')``) and train with
``multi_precision=True``.
"""
from __future__ import annotations

import contextlib

import torch

from ..base import MXNetError

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "LossScaler", "convert_hybrid_block",
           "list_lp16_ops"]

_target = {"dtype": None}


class LossScaler:
    """Dynamic loss scale: start at ``init_scale``, halve on overflow, double after
    ``scale_window`` consecutive finite steps."""

    def __init__(self, init_scale: float = 2.0 ** 16, scale_factor: float = 2.0,
                 scale_window: int = 2000, min_scale: float = 1.0):
        if init_scale <= 0 or scale_factor <= 1 or scale_window < 1:
            raise ValueError(f"invalid loss-scaler settings: init_scale={init_scale}, "
                             f"scale_factor={scale_factor}, scale_window={scale_window}")
        self._loss_scale = float(init_scale)
        self._scale_factor = float(scale_factor)
        self._scale_window = int(scale_window)
        self._min_scale = float(min_scale)
        self._good_steps = 0

    @property
    def loss_scale(self) -> float:
        return self._loss_scale

    def has_overflow(self, params) -> bool:
        """Whether any gradient of ``params`` holds inf or nan; adapts the scale."""
        grads = []
        for param in params:
            if param.grad_req != "null" and param._grad is not None:
                grads.extend(g._t for g in param.list_grad() if g.stype == "default")
        overflow = False
        if grads:
            # One reduction per dtype/device group: the sum is non-finite iff some element is.
            total = torch.stack([g.float().sum() for g in grads]).sum()
            overflow = not bool(torch.isfinite(total))
        self.update_scale(overflow)
        return overflow

    def update_scale(self, overflow: bool) -> None:
        if overflow:
            self._loss_scale = max(self._loss_scale / self._scale_factor, self._min_scale)
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps >= self._scale_window:
                self._loss_scale *= self._scale_factor
                self._good_steps = 0


def init(target_dtype: str = "float16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None, layout_optimization=False):
    """Select the low-precision dtype used by ``convert_hybrid_block``."""
    if target_dtype not in ("float16", "bfloat16"):
        raise ValueError(f"amp.init: target_dtype must be 'float16' or 'bfloat16', got "
                         f"{target_dtype!r}")
    _target["dtype"] = target_dtype


def init_trainer(optimizer_or_trainer):
    """Attach a dynamic loss scaler to a Trainer."""
    from ..gluon.trainer import Trainer
    if not isinstance(optimizer_or_trainer, Trainer):
        raise TypeError("amp.init_trainer expects a gluon.Trainer, got "
                        f"{type(optimizer_or_trainer).__name__}")
    optimizer_or_trainer._amp_loss_scaler = LossScaler()
    optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Yield ``loss * loss_scale`` and have the Trainer divide gradients by the scale."""
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise MXNetError("scale_loss: call amp.init_trainer(trainer) first")
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [l * scaler.loss_scale for l in loss]
    else:
        yield loss * scaler.loss_scale


def unscale(optimizer_or_trainer):
    """Divide the gradients by the loss scale now (before clipping them by hand)."""
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise MXNetError("unscale: call amp.init_trainer(trainer) first")
    inv = 1.0 / scaler.loss_scale
    with torch.no_grad():
        for param in optimizer_or_trainer._params:
            if param.grad_req != "null":
                for g in param.list_grad():
                    t = getattr(g, "_sdata", None)  # a sparse gradient's stored values
                    (g._t if t is None else t).mul_(inv)
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale


def convert_hybrid_block(block, target_dtype=None, cast_optional_params=False, **kwargs):
    """Cast a block's parameters to the low-precision dtype, keeping normalisation layers in
    float32 (their statistics lose too much in float16)."""
    dtype = target_dtype or _target["dtype"] or "float16"
    block.cast(dtype)
    for child in _walk(block):
        if type(child).__name__ in ("BatchNorm", "LayerNorm", "InstanceNorm", "GroupNorm",
                                    "SyncBatchNorm"):
            child.cast("float32")
    return block


def _walk(block):
    yield block
    for child in getattr(block, "_children", {}).values():
        yield from _walk(child)


def list_lp16_ops(target_dtype="float16"):
    return []
