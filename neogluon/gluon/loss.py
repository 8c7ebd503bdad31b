"""Losses: HybridBlocks that map predictions and labels to a per-sample loss.

Every loss follows MXNet 1.9.1's formulas, reductions and argument conventions (``weight``,
``sample_weight``, ``batch_axis``). They are written with ``F`` operators only, so that
``hybridize()`` can capture them.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as _torch_F

from .. import ndarray as _nd
from ..base import MXNetError, numeric_types
from ..ndarray.ndarray import NDArray, _new, _run
from . import block as _block
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
           "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "SDMLLoss"]


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """Multiply ``loss`` by ``sample_weight`` (broadcast) and by the scalar ``weight``.

    Parameters
    ----------
    F : module
        The operator namespace.
    loss : NDArray
        The unweighted loss.
    weight : float or None
        Global scalar weight.
    sample_weight : NDArray or None
        Per-sample weights, broadcastable to ``loss`` (for a loss of shape (64, 10),
        weights of shape (64, 1) weigh each sample).

    Returns
    -------
    NDArray
    """
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        assert isinstance(weight, numeric_types), "weight must be a number"
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` reshaped to ``y``'s shape (same number of elements)."""
    if not isinstance(x, NDArray):  # symbols have no shape: let the graph do it
        return F.reshape_like(x, y)
    if x.shape == y.shape:
        return x
    if x.size != y.size:
        raise ValueError(f"Cannot reshape array of size {x.size} into shape {y.shape}")
    return x.reshape(y.shape)


def _fused_elementwise(F, fn, pred, label):
    """``fn(pred, label, reduction='none')`` as one torch kernel (forward and backward) when
    running imperatively on plain arrays of one dtype; None otherwise (use F operators)."""
    if (F is _nd and type(pred) is NDArray and type(label) is NDArray
            and pred._t.dtype is label._t.dtype and pred._t.shape == label._t.shape
            and pred._t.is_floating_point()):
        return _new(_run(fn, pred._t, label._t, reduction="none"), pred._ctx)
    return None


class Loss(HybridBlock):
    """Base class of losses.

    Parameters
    ----------
    weight : float or None
        Global scalar weight of the loss.
    batch_axis : int
        The axis that indexes samples; the loss is reduced over every other axis.
    """

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override to compute the loss with ``F`` operators."""
        raise NotImplementedError


class L2Loss(Loss):
    r"""Half the mean squared error per sample:
    :math:`L = \frac{1}{2} \sum_i \lvert {label}_i - {pred}_i \rvert^2` (averaged over the
    non-batch axes).

    Parameters
    ----------
    weight : float, default 1.0
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs
    ------
    pred : NDArray
        Predictions, any shape.
    label : NDArray
        Targets with as many elements as ``pred`` (reshaped to its shape).
    sample_weight : NDArray, optional
        Per-sample weights broadcastable to ``pred``.

    Outputs
    -------
    NDArray
        One value per sample, shape ``(batch,)``.
    """

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = _fused_elementwise(F, _torch_F.mse_loss, pred, label)
        if loss is None:
            loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L1Loss(Loss):
    r"""Mean absolute error per sample: :math:`L = \sum_i \lvert {label}_i - {pred}_i \rvert`
    (averaged over the non-batch axes).

    Parameters
    ----------
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs are ``pred``, ``label`` (reshaped to ``pred``'s shape) and an optional
    ``sample_weight``; the output has shape ``(batch,)``.
    """

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = _fused_elementwise(F, _torch_F.l1_loss, pred, label)
        if loss is None:
            loss = F.abs(label - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross-entropy of a sigmoid output, per sample.

    Without ``from_sigmoid`` the loss is computed from logits in the numerically stable form
    :math:`\max(p, 0) - p\,y + \log(1 + e^{-|p|})`.

    Parameters
    ----------
    from_sigmoid : bool, default False
        Whether ``pred`` already holds probabilities (sigmoid applied) rather than logits.
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs
    ------
    pred : NDArray
        Logits (or probabilities with ``from_sigmoid``).
    label : NDArray
        Targets in [0, 1], reshaped to ``pred``'s shape.
    sample_weight : NDArray, optional
        Per-sample weights broadcastable to ``pred``.
    pos_weight : NDArray, optional
        Weight of the positive class, broadcastable to ``pred`` (e.g. one per class).

    Outputs
    -------
    NDArray of shape ``(batch,)``.
    """

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        fused = None
        if not self._from_sigmoid and pos_weight is None:
            fused = _fused_elementwise(F, _torch_F.binary_cross_entropy_with_logits, pred,
                                       label)
        if fused is not None:
            loss = fused
        elif not self._from_sigmoid:
            softrelu = F.Activation(-F.abs(pred), act_type="softrelu")
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + softrelu
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (softrelu + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    r"""Softmax cross-entropy, per sample.

    With sparse labels, :math:`L = -\log \mathrm{softmax}(pred)_{label}`; with dense labels
    (a distribution per sample), :math:`L = -\sum_j label_j \log \mathrm{softmax}(pred)_j`.

    Parameters
    ----------
    axis : int, default -1
        The class axis.
    sparse_label : bool, default True
        Whether labels are class indices (out-of-range indices are clipped, as MXNet's
        ``pick`` does) or distributions of ``pred``'s shape.
    from_logits : bool, default False
        Whether ``pred`` already holds log-probabilities (then no log-softmax is applied).
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs
    ------
    pred : NDArray
        Scores, e.g. of shape ``(batch, classes)``.
    label : NDArray
        Class indices shaped like ``pred`` without ``axis`` (a trailing size-1 axis is
        accepted), or with ``sparse_label=False`` a distribution of ``pred``'s size.
    sample_weight : NDArray, optional
        Per-sample weights broadcastable to ``pred`` with ``axis`` of size 1.

    Outputs
    -------
    NDArray of shape ``(batch,)``.
    """

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def _fusable(self, pred, label, sample_weight):
        if not (self._sparse_label and sample_weight is None and self._batch_axis == 0
                and type(pred) is NDArray and type(label) is NDArray):
            return False
        p = pred._t
        nd = p.dim()
        # classes on the last axis (a sequence model's (T, N, V) too), one label per row
        return (nd >= 2 and self._axis in (-1, nd - 1) and p.shape[-1] > 0
                and label._t.numel() * p.shape[-1] == p.numel())

    def forward(self, x, *args):
        # Hybridized, the common case still takes the fused kernel: it is faster than
        # replaying the captured log_softmax/pick/mean graph. Inside an enclosing block's
        # capture the F operators must run, so that the capture can record them.
        if (self._active and _block._TRACE.tracer is None and 1 <= len(args) <= 2
                and self._fusable(x, args[0], args[1] if len(args) > 1 else None)):
            return self._fused(x, args[0])
        return super().forward(x, *args)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if F is _nd and self._fusable(pred, label, sample_weight):
            return self._fused(pred, label)
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label and not isinstance(pred, NDArray):
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        elif self._sparse_label:
            axis = self._axis % pred.ndim
            want = pred.shape[:axis] + pred.shape[axis + 1:]
            if label.shape != want:
                if label.size != int(np.prod(want)):
                    raise MXNetError(f"SoftmaxCrossEntropyLoss: Shape inconsistent, label has "
                                     f"shape {label.shape} but pred of shape {pred.shape} "
                                     f"needs one class index per sample, shape {want}")
                # MXNet's pick also takes the index with the class axis kept at size 1.
                label = label.reshape(want)
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -(pred * label).sum(axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return loss.mean(axis=self._batch_axis, exclude=True)


    def _fused(self, pred, label):
        # The common (batch, ..., classes) case in one fused torch call: the same numbers as
        # log_softmax + pick + mean, with a much smaller autograd graph (and fewer aten calls).
        x = pred._t
        lead = x.shape[:-1]
        idx = label._t
        if idx.requires_grad:
            idx = idx.detach()
        if idx.dim() != 1:
            idx = idx.reshape(-1)
        # out-of-range labels are clipped, as MXNet's pick does
        if idx.dtype is torch.int64:
            idx = idx.clamp(0, x.shape[-1] - 1)
        else:
            idx = idx.long().clamp_(0, x.shape[-1] - 1)
        if self._from_logits:
            fn = _torch_F.nll_loss
        else:
            fn = _torch_F.cross_entropy
        weight = self._weight

        def run():
            if len(lead) == 1:
                out = fn(x, idx, reduction="none")
                return out if weight is None else out * weight
            out = fn(x.reshape(-1, x.shape[-1]), idx, reduction="none")
            if weight is not None:
                out = out * weight
            # the mean over every axis but the batch axis, as the operator path's
            return out.view(lead).mean(tuple(range(1, len(lead))))
        if weight is not None:
            assert isinstance(weight, numeric_types), "weight must be a number"
        return _new(_run(run), pred._ctx)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence :math:`\sum_i label_i (\log label_i - pred_i)` per sample.

    Parameters
    ----------
    from_logits : bool, default True
        Whether ``pred`` holds log-probabilities; with False a log-softmax over ``axis`` is
        applied first.
    axis : int, default -1
        The class axis (only used when ``from_logits`` is False).
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs are ``pred``, ``label`` (a distribution of ``pred``'s shape) and an optional
    ``sample_weight``; the output, summed over the non-batch axes, has shape ``(batch,)``.
    """

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    r"""Connectionist Temporal Classification loss, per sequence.

    The last class of ``pred`` is the blank; labels use ``0 .. alphabet_size - 2`` and are
    padded with -1 when ``label_lengths`` is not given.

    Parameters
    ----------
    layout : {'NTC', 'TNC'}, default 'NTC'
        Layout of ``pred``: batch, time and class axes.
    label_layout : {'NT', 'TN'}, default 'NT'
        Layout of ``label``.
    weight : float or None
        Global scalar weight.

    Inputs
    ------
    pred : NDArray
        Unnormalised class scores (a softmax is applied inside).
    label : NDArray
        Label sequences.
    pred_lengths : NDArray, optional
        Valid length of each prediction sequence, shape ``(batch,)``.
    label_lengths : NDArray, optional
        Valid length of each label sequence, shape ``(batch,)``.
    sample_weight : NDArray, optional
        Per-sample weights, shape ``(batch,)``.

    Outputs
    -------
    NDArray of shape ``(batch,)``: the negative log-likelihood of each label sequence.
    """

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        assert layout in ["NTC", "TNC"], \
            f"Only 'NTC' and 'TNC' layouts for pred are supported. Got: {layout}"
        assert label_layout in ["NT", "TN"], \
            f"Only 'NT' and 'TN' layouts for label are supported. Got: {label_layout}"
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        if isinstance(pred, NDArray) and (pred.ndim != 3 or label.ndim != 2 or
                                   label.shape[0] != pred.shape[1]):
            raise MXNetError(f"CTCLoss: pred must be 3-D and label 2-D with the same batch "
                             f"size; got pred {pred.shape} (as TNC) and label {label.shape} "
                             "(as NT)")
        if isinstance(pred, NDArray) and label.shape[1] > pred.shape[0]:
            raise MXNetError(f"CTCLoss: The max number of labels cannot exceed the maximum "
                             f"sequence length of the data ({label.shape[1]} label positions "
                             f"vs. {pred.shape[0]} time steps).")
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None,
                         blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    r"""Smoothed L1 loss per sample: :math:`\frac{1}{2\rho} d^2` where
    :math:`d = |label - pred| \le \rho`, and :math:`d - \frac{\rho}{2}` beyond.

    Parameters
    ----------
    rho : float, default 1
        Threshold between the quadratic and the linear part.
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs are ``pred``, ``label`` (reshaped to ``pred``'s shape) and an optional
    ``sample_weight``; the output has shape ``(batch,)``.
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class HingeLoss(Loss):
    r"""Hinge loss :math:`\max(0, margin - pred \cdot label)` per sample, for labels in
    {-1, 1}.

    Parameters
    ----------
    margin : float, default 1
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs are ``pred``, ``label`` (reshaped to ``pred``'s shape) and an optional
    ``sample_weight``; the output has shape ``(batch,)``.
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.relu(self._margin - pred * label)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SquaredHingeLoss(Loss):
    r"""Squared hinge loss :math:`\max(0, margin - pred \cdot label)^2` per sample, for
    labels in {-1, 1}.

    Parameters
    ----------
    margin : float, default 1
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs are ``pred``, ``label`` (reshaped to ``pred``'s shape) and an optional
    ``sample_weight``; the output has shape ``(batch,)``.
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class LogisticLoss(Loss):
    r"""Logistic loss :math:`\log(1 + e^{-pred \cdot label})` per sample.

    Parameters
    ----------
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.
    label_format : {'signed', 'binary'}, default 'signed'
        Labels in {-1, 1} ('signed') or in {0, 1} ('binary').

    Inputs are ``pred``, ``label`` (reshaped to ``pred``'s shape) and an optional
    ``sample_weight``; the output has shape ``(batch,)``.
    """

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if label_format not in ["signed", "binary"]:
            raise ValueError(f"label_format can only be signed or binary, recieved "
                             f"{label_format}.")

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0  # {-1, 1} -> {0, 1}
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class TripletLoss(Loss):
    r"""Triplet loss :math:`\max(0, \|pred - positive\|^2 - \|pred - negative\|^2 + margin)`
    per sample.

    Parameters
    ----------
    margin : float, default 1
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs are ``pred`` (anchors), ``positive`` and ``negative`` (reshaped to ``pred``'s
    shape); the output has shape ``(batch,)``.
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    r"""Negative log-likelihood of a Poisson target, averaged over all elements.

    With ``from_logits`` (``pred`` is the log of the rate) :math:`L = e^{pred} - target\cdot
    pred`, otherwise :math:`L = pred - target \log(pred + \epsilon)`.

    Parameters
    ----------
    weight : float or None
        Global scalar weight.
    from_logits : bool, default True
        Whether ``pred`` is the log of the Poisson rate.
    batch_axis : int, default 0
        The axis that indexes samples.
    compute_full : bool, default False
        Add Stirling's approximation of :math:`\log(target!)` (for targets above 1).

    Inputs are ``pred``, ``target`` (reshaped to ``pred``'s shape), an optional
    ``sample_weight`` and ``epsilon`` (default 1e-08); the output has shape ``(1,)``.
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    r"""Cosine embedding loss per sample: :math:`1 - \cos(x_1, x_2)` for label 1 and
    :math:`\max(0, \cos(x_1, x_2) - margin)` for label -1 (0 for any other label).

    Parameters
    ----------
    weight : float or None
        Global scalar weight.
    batch_axis : int, default 0
        The axis that indexes samples.
    margin : float, default 0

    Inputs
    ------
    input1, input2 : NDArray
        The two embeddings, shape ``(batch, dim)`` (``input1`` is reshaped to ``input2``'s).
    label : NDArray
        1 or -1 per sample.
    sample_weight : NDArray, optional

    Outputs
    -------
    NDArray of shape ``(batch, 1)``.
    """

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        y_1 = label == 1
        y_minus_1 = label == -1
        cos_sim_a = (1 - cos_sim) * y_1
        # max(0, v): the gradient reaches v only where v > 0, as with MXNet's maximum.
        cos_sim_b = F.relu(y_minus_1 * (cos_sim - self._margin))
        loss = cos_sim_a + cos_sim_b
        return _apply_weighting(F, loss, self._weight, sample_weight)

    def _cosine_similarity(self, F, x, y, axis=-1):
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        return x_dot_y / F.maximum(x_norm * y_norm, 1e-12)


class SDMLLoss(Loss):
    r"""Smoothed Deep Metric Learning loss, for batches of matching pairs
    ``(x1[i], x2[i])`` where every other pair in the batch serves as a negative.

    The squared distances between all pairs give log-probabilities (a log-softmax of their
    negatives), compared by KL divergence with labels that put ``1 - smoothing_parameter``
    on the match and spread ``smoothing_parameter`` over the rest.

    Parameters
    ----------
    smoothing_parameter : float, default 0.3
        Probability mass spread over the non-matching pairs.
    weight : float, default 1.0
        Kept for compatibility; as in MXNet 1.9.1 it does not scale the loss.
    batch_axis : int, default 0
        The axis that indexes samples.

    Inputs are ``x1`` and ``x2`` of shape ``(batch, dim)`` (batch at least 2); the output has
    shape ``(batch,)``.
    """

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, x1, x2):
        assert x1.shape == x2.shape, (f"SDMLLoss: x1 and x2 must have the same shape, got "
                                      f"{x1.shape} and {x2.shape}")
        batch_size, dim = x1.shape
        x1_ = x1.expand_dims(1).broadcast_to([batch_size, batch_size, dim])
        x2_ = x2.expand_dims(0).broadcast_to([batch_size, batch_size, dim])
        squared_diffs = (x1_ - x2_) ** 2
        return squared_diffs.sum(axis=2)

    def _compute_labels(self, F, batch_size, like):
        gold = F.one_hot(F.arange(batch_size, ctx=like.context, dtype=like.dtype), batch_size,
                         dtype=like.dtype)
        s = self.smoothing_parameter
        return gold * (1 - s) + (1 - gold) * s / (batch_size - 1)

    def _loss(self, F, x1, x2):
        batch_size = x1.shape[0]
        distances = self._compute_distances(x1, x2)
        labels = self._compute_labels(F, batch_size, distances)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, labels)

    def hybrid_forward(self, F, x1, x2):
        return self._loss(F, x1, x2)
