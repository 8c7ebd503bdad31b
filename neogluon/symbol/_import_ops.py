"""Operators MXNet graphs contain that neogluon's nd namespace did not compute yet.

They are registered into ``nd`` (``nd.LinearRegressionOutput``, ``nd.contrib.BilinearResize2D``
...) when absent, so a loaded graph evaluates them like any other nd operator and a
hybridized block records them by their nd path.

- ``LinearRegressionOutput``, ``LogisticRegressionOutput``, ``MAERegressionOutput``: the
  Module-era output layers. Forward returns the data (the sigmoid of it for the logistic one);
  backward ignores the head gradient and gives ``grad_scale / num_output * (out - label)``
  (``sign(out - label)`` for MAE), ``num_output`` being the label's size per sample.
- ``contrib.AdaptiveAvgPooling2D`` and ``contrib.BilinearResize2D`` (GluonCV's segmentation
  and detection models).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..base import MXNetError
from .. import ndarray as _nd
from ..ndarray.ndarray import NDArray, _new, _run, _assign_out


def _tt(x, op, what="data"):
    if not isinstance(x, NDArray):
        raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")
    return x._t


class _RegressionFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, label, kind, scale):
        out = torch.sigmoid(x) if kind == "logistic" else x.clone()
        ctx.save_for_backward(out, label)
        ctx.cfg = (kind, scale)
        return out

    @staticmethod
    def backward(ctx, grad):  # noqa: ARG004 - MXNet ignores the head gradient
        out, label = ctx.saved_tensors
        kind, scale = ctx.cfg
        diff = out - label.to(out.dtype)
        g = torch.sign(diff) if kind == "mae" else diff
        return g * scale, None, None, None


def _regression(kind, opname):
    def op(data, label, grad_scale=1.0, out=None, name=None):
        x = _tt(data, opname)
        lab = _tt(label, opname, "label").detach()
        if lab.numel() != x.numel():
            raise MXNetError(f"{opname}: label shape {tuple(lab.shape)} does not match data "
                             f"shape {tuple(x.shape)}")
        lab = lab.reshape(x.shape)
        per_sample = x[0].numel() if x.dim() > 1 and x.shape[0] else 1
        scale = float(grad_scale) / max(1, per_sample)
        r = _run(_RegressionFn.apply, x, lab, kind, scale)
        return _assign_out(_new(r, data._ctx), out)
    op.__name__ = opname
    op.__doc__ = (f"MXNet's ``{opname}``: forward gives "
                  f"{'sigmoid(data)' if kind == 'logistic' else 'data'}; backward ignores the "
                  "head gradient and gives ``grad_scale / num_output * "
                  f"{'sign(out - label)' if kind == 'mae' else '(out - label)'}``.")
    return op


LinearRegressionOutput = _regression("linear", "LinearRegressionOutput")
LogisticRegressionOutput = _regression("logistic", "LogisticRegressionOutput")
MAERegressionOutput = _regression("mae", "MAERegressionOutput")


def AdaptiveAvgPooling2D(data, output_size=(), out=None, name=None):
    """Average pooling of NCHW data to ``output_size`` (an int, a pair, or empty for 1x1)."""
    x = _tt(data, "AdaptiveAvgPooling2D")
    if x.dim() != 4:
        raise MXNetError(f"AdaptiveAvgPooling2D: data must be 4-D (NCHW), got shape "
                         f"{tuple(x.shape)}")
    size = output_size
    if isinstance(size, int):
        size = (size, size)
    size = tuple(size) if size else (1, 1)
    if len(size) == 1:
        size = (size[0], size[0])
    r = _run(F.adaptive_avg_pool2d, x, size)
    return _assign_out(_new(r, data._ctx), out)


def BilinearResize2D(data, like=None, height=1, width=1, scale_height=None, scale_width=None,
                     mode="size", align_corners=True, out=None, name=None):
    """Bilinear resizing of NCHW data to ``(height, width)``, by ``scale_height`` /
    ``scale_width``, or to ``like``'s size (``mode='like'``)."""
    x = _tt(data, "BilinearResize2D")
    if x.dim() != 4:
        raise MXNetError(f"BilinearResize2D: data must be 4-D (NCHW), got shape "
                         f"{tuple(x.shape)}")
    h_in, w_in = x.shape[2], x.shape[3]
    if mode == "like":
        if like is None:
            raise MXNetError("BilinearResize2D: mode='like' needs the like input")
        size = tuple(like.shape[2:4])
    elif mode == "size":
        if scale_height is not None or scale_width is not None:
            size = (int(h_in * float(scale_height or 1)), int(w_in * float(scale_width or 1)))
        else:
            size = (int(height), int(width))
    else:
        raise MXNetError(f"BilinearResize2D: mode {mode!r} is not supported (only 'size' and "
                         "'like')")
    r = _run(F.interpolate, x, size=size, mode="bilinear", align_corners=bool(align_corners))
    return _assign_out(_new(r, data._ctx), out)


def _register():
    for name, fn in (("LinearRegressionOutput", LinearRegressionOutput),
                     ("LogisticRegressionOutput", LogisticRegressionOutput),
                     ("MAERegressionOutput", MAERegressionOutput)):
        if not hasattr(_nd, name):
            setattr(_nd, name, fn)
    for name, fn in (("AdaptiveAvgPooling2D", AdaptiveAvgPooling2D),
                     ("BilinearResize2D", BilinearResize2D)):
        if not hasattr(_nd.contrib, name):
            setattr(_nd.contrib, name, fn)


_register()
