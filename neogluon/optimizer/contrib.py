"""``mx.optimizer.contrib``: GroupAdaGrad.

GroupAdaGrad (MXNet 1.9.1's maths) keeps one history value per row of a 2-D weight:
``g = clip(rescale*grad)``; ``h += mean(g^2, axis=1)``; ``w -= lr*g/sqrt(h + eps)``. Weight
decay is not supported (as in MXNet).
"""
from __future__ import annotations

import torch

from ..ndarray.ndarray import _new
from . import _math as M
from .optimizer import _MultiTensor, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(_MultiTensor):
    """AdaGrad with one accumulator per row (for embeddings).

    Parameters
    ----------
    eps : float, default 1e-5
        Added to the history under the square root.
    **kwargs
        See :class:`Optimizer`.
    """

    _clip_if_truthy = False

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise AssertionError(f"GroupAdaGrad needs 2-D weights; index {index!r} has shape "
                                 f"{weight.shape}")
        t = weight._t
        return _new(torch.zeros((t.shape[0], 1), dtype=t.dtype, device=t.device),
                    weight.context)

    def _state_shape(self, weight):
        return (weight.shape[0], 1) if len(weight.shape) == 2 else weight.shape

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        for i, wd in zip(indices, wds):
            if wd != 0:
                raise AssertionError(f"Weight decay is not supported for GroupAdaGrad "
                                     f"(index {i!r} has wd {wd})")
        gg = M.scaled_grads(gs, self.rescale_grad, self._clip())
        hist = [s[0] for s in states]
        sq = torch._foreach_mul(gg, gg)
        # Row means differ in shape from the weights: one small reduction per tensor.
        torch._foreach_add_(hist, [t.mean(dim=1, keepdim=True) for t in sq])
        den = torch._foreach_add(hist, self.float_stable_eps)
        torch._foreach_sqrt_(den)
        step = [g / d for g, d in zip(gg, den)]
        torch._foreach_mul_(step, [-lr for lr in lrs])
        torch._foreach_add_(ws, step)
