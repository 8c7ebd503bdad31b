"""MXNet 1.x's older layer operators that Module-era programs and exported graphs still use.

- The output (loss-head) layers ``LinearRegressionOutput``, ``LogisticRegressionOutput``,
  ``MAERegressionOutput`` and ``SVMOutput``: the forward pass gives the prediction (the data, or
  its sigmoid), the backward pass ignores the head gradient and gives the loss's gradient, as
  ``SoftmaxOutput`` and ``MakeLoss`` do.
- ``IdentityAttachKLSparseReg``: identity whose backward adds a KL sparseness penalty and
  updates its ``moving_avg`` auxiliary state.
- Spatial operators: ``Crop``, ``im2col``/``col2im``, ``GridGenerator``, ``BilinearSampler``,
  ``SpatialTransformer``, ``Correlation`` (FlowNet).
- The legacy names ``Convolution_v1`` (the same maths as ``Convolution``) and ``Pooling_v1``
  (2-D only; zero padding that takes part in max pooling, an average over the whole window,
  max gradients to every tied element).

MXNet 1.9.1's semantics, attribute names and argument order; gradients by torch autograd
except where MXNet's backward is not the derivative of its forward (the loss heads).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..base import MXNetError
from .ndarray import NDArray, _new, _run, _assign_out, _state

__all__ = ["LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
           "SVMOutput", "IdentityAttachKLSparseReg", "Crop", "im2col", "col2im",
           "GridGenerator", "BilinearSampler", "SpatialTransformer", "Correlation",
           "Convolution_v1", "Pooling_v1", "BatchNorm_v1"]


def _tt(x, op, what="data"):
    if isinstance(x, NDArray):
        if getattr(x, "stype", "default") != "default":
            x = x.tostype("default")
        return x._t
    raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")


def _ft(x, op, what="data"):
    t = _tt(x, op, what)
    if not t.is_floating_point():
        raise MXNetError(f"{op}: {what} must be a floating-point array, got "
                         f"{str(t.dtype).replace('torch.', '')}")
    return t


def _ints(v, op, what, n=None, default=None):
    """A shape-tuple attribute as a tuple of ints (``()``/None give ``default``)."""
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        if default is None:
            return ()
        return tuple(default)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = (v,) * (n or 1)
    try:
        t = tuple(int(a) for a in v)
    except (TypeError, ValueError):
        raise MXNetError(f"{op}: {what} must be a tuple of ints, got {v!r}") from None
    if n is not None and len(t) != n:
        raise MXNetError(f"{op}: {what} must have {n} values, got {v!r}")
    return t


# ------------------------------------------------------------------------ loss heads
class _RegressionFn(torch.autograd.Function):
    """Prediction forward; backward ``scale * (out - label)`` (``scale * sign(out - label)``
    for MAE, with MXNet's sign: -1 where out == label), whatever the head gradient."""

    @staticmethod
    def forward(ctx, x, label, kind, scale):
        out = torch.sigmoid(x) if kind == "logistic" else x.clone()
        ctx.save_for_backward(out, label)
        ctx.cfg = (kind, scale)
        return out

    @staticmethod
    def backward(ctx, grad):  # noqa: ARG004 - the head gradient is ignored, as in MXNet
        out, label = ctx.saved_tensors
        kind, scale = ctx.cfg
        diff = out - label.to(out.dtype)
        if kind == "mae":
            diff = torch.where(diff > 0, torch.ones_like(diff), -torch.ones_like(diff))
        return diff * scale, None, None, None


def _regression(kind, opname, formula):
    def op(data, label, grad_scale=1.0, out=None, name=None):
        x = _ft(data, opname)
        lab = _tt(label, opname, "label").detach()
        dshape, lshape = tuple(x.shape), tuple(lab.shape)
        if lab.numel() != x.numel() or (lab.dim() and x.dim() and lshape[0] != dshape[0]):
            raise MXNetError(f"{opname}: label shape {lshape} does not match data shape "
                             f"{dshape} (MXNet wants the same number of values and the same "
                             "first axis)")
        lab = lab.reshape(x.shape)
        # MXNet divides by the label's size per sample (its first axis is the batch)
        per_sample = lab.numel() // lshape[0] if lab.dim() and lshape[0] else 1
        scale = float(grad_scale) / max(1, per_sample)
        if _state.recording:
            r = _RegressionFn.apply(x, lab, kind, scale)
        else:
            r = _run(torch.sigmoid if kind == "logistic" else torch.clone, x)
        return _assign_out(_new(r, data._ctx), out)
    op.__name__ = op.__qualname__ = opname
    op.__doc__ = (f"MXNet's ``{opname}`` (an output layer): the forward pass gives "
                  f"{'sigmoid(data)' if kind == 'logistic' else 'data'}; the backward pass "
                  f"ignores the head gradient and gives ``grad_scale / num_output * {formula}``"
                  ", ``num_output`` being the label's size per sample. ``label`` has data's "
                  "number of values and first axis (``(n,)`` for ``(n, 1)`` data).")
    return op


LinearRegressionOutput = _regression("linear", "LinearRegressionOutput", "(out - label)")
LogisticRegressionOutput = _regression("logistic", "LogisticRegressionOutput",
                                       "(out - label)")
MAERegressionOutput = _regression("mae", "MAERegressionOutput",
                                  "sign(out - label)`` (-1 where they are equal)``")


class _SVMFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x2, label, margin, reg, linear):
        ctx.save_for_backward(x2, label)
        ctx.cfg = (margin, reg, linear)
        return x2.clone()

    @staticmethod
    def backward(ctx, grad):  # noqa: ARG004 - the head gradient is ignored, as in MXNet
        x, label = ctx.saved_tensors
        margin, reg, linear = ctx.cfg
        k = x.shape[1]
        lab = label.to(torch.float64).trunc().long()   # MXNet's static_cast<int>
        own = lab.unsqueeze(1) == torch.arange(k, device=x.device).unsqueeze(0)
        one = torch.ones_like(x)
        zero = torch.zeros_like(x)
        if linear:
            g_own = -torch.where(margin > x, one, zero) * reg
            g_other = torch.where(margin > -x, one, zero) * reg
        else:
            g_own = torch.where(margin > x, 2 * (margin - x), zero) * -reg
            g_other = torch.where(margin > -x, -2 * (margin + x), zero) * -reg
        return torch.where(own, g_own, g_other), None, None, None, None


def SVMOutput(data, label, margin=1.0, regularization_coefficient=1.0, use_linear=False,
              out=None, name=None):
    """MXNet's ``SVMOutput``: the forward pass gives ``data``; the backward pass ignores the
    head gradient and gives the gradient of the squared hinge loss (``use_linear``: the hinge
    loss) of each row of ``data`` (the last axis holds the classes) against ``label``
    (``data.shape[:-1]``), scaled by ``regularization_coefficient``."""
    x = _ft(data, "SVMOutput")
    lab = _tt(label, "SVMOutput", "label").detach()
    if x.dim() < 1:
        raise MXNetError("SVMOutput: data must have at least one axis")
    want = tuple(x.shape[:-1])
    if tuple(lab.shape) != want:
        raise MXNetError(f"SVMOutput: label must have shape {want} (data's shape without its "
                         f"last axis), got {tuple(lab.shape)}")
    if _state.recording:
        x2 = x.reshape(-1, x.shape[-1]) if x.dim() != 2 else x
        r = _SVMFn.apply(x2, lab.reshape(-1), float(margin),
                         float(regularization_coefficient), bool(use_linear))
        r = r.reshape(x.shape)
    else:
        r = _run(torch.clone, x)
    return _assign_out(_new(r, data._ctx), out)


class _KLSparseFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, moving, target, penalty, momentum):
        ctx.save_for_backward(x)
        ctx.moving = moving
        ctx.cfg = (target, penalty, momentum)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        target, penalty, momentum = ctx.cfg
        moving = ctx.moving
        with torch.no_grad():
            avg = x.detach().sum(0).to(moving.dtype) / x.shape[0]
            moving.mul_(momentum).add_((1 - momentum) * avg)
            m = moving.to(grad.dtype)
        return grad + penalty * (-target / m + (1 - target) / (1 - m)), None, None, None, None


def IdentityAttachKLSparseReg(data, moving_avg, sparseness_target=0.1, penalty=0.001,
                              momentum=0.9, out=None, name=None):
    """MXNet's ``IdentityAttachKLSparseReg`` (for sigmoid activations ``(batch, units)``):
    the forward pass gives ``data``; the backward pass first updates the auxiliary state
    ``moving_avg`` (``(units,)``) in place to ``momentum * moving_avg + (1 - momentum) *
    mean(data, axis=0)``, then adds ``penalty * (-sparseness_target / moving_avg +
    (1 - sparseness_target) / (1 - moving_avg))`` to the head gradient."""
    x = _ft(data, "IdentityAttachKLSparseReg")
    ma = _tt(moving_avg, "IdentityAttachKLSparseReg", "moving_avg")
    if x.dim() != 2:
        raise MXNetError(f"IdentityAttachKLSparseReg: data must be 2-D (batch, units), got "
                         f"shape {tuple(x.shape)}")
    if tuple(ma.shape) != (x.shape[1],):
        raise MXNetError(f"IdentityAttachKLSparseReg: moving_avg must have shape "
                         f"({x.shape[1]},), got {tuple(ma.shape)}")
    if not 0 <= float(sparseness_target) <= 1 or not 0 <= float(momentum) <= 1:
        raise MXNetError(f"IdentityAttachKLSparseReg: sparseness_target and momentum must be "
                         f"in [0, 1], got {sparseness_target} and {momentum}")
    if _state.recording and x.requires_grad:
        r = _KLSparseFn.apply(x, ma, float(sparseness_target), float(penalty), float(momentum))
    else:
        r = _run(torch.clone, x)
    return _assign_out(_new(r, data._ctx), out)


# ------------------------------------------------------------------------ Crop
def Crop(*data, offset=(0, 0), h_w=(0, 0), center_crop=False, num_args=None, out=None,
         name=None):
    """MXNet's ``Crop`` of NCHW ``data[0]`` to the height and width ``h_w`` or, with a
    second input, to that input's height and width (its values are not used and get a zero
    gradient), from ``offset`` (y, x) or from the centre (``center_crop``)."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    if num_args is not None and int(num_args) != len(data):
        raise MXNetError(f"Crop: num_args={num_args} but {len(data)} inputs were given")
    if len(data) not in (1, 2):
        raise MXNetError(f"Crop: takes data and an optional crop_like input, got {len(data)} "
                         "inputs")
    x = _tt(data[0], "Crop")
    if x.dim() != 4:
        raise MXNetError(f"Crop: data must be 4-D (batch, channel, y, x), got shape "
                         f"{tuple(x.shape)}")
    H, W = x.shape[2], x.shape[3]
    if len(data) == 2:
        like = data[1]
        if not isinstance(like, NDArray):
            raise TypeError(f"Crop: crop_like must be an NDArray, got {type(like).__name__}")
        if like.ndim < 4:
            raise MXNetError(f"Crop: crop_like must be 4-D, got shape {like.shape}")
        h, w = int(like.shape[2]), int(like.shape[3])
        if h > H or w > W:
            raise MXNetError(f"Crop: crop_like's size ({h}, {w}) is larger than data's "
                             f"({H}, {W})")
    else:
        h, w = _ints(h_w, "Crop", "h_w", 2)
        if not 1 <= h <= H or not 1 <= w <= W:
            raise MXNetError(f"Crop: h_w={tuple(h_w)} must be within 1..({H}, {W}) (data's "
                             "height and width)")
    if center_crop:
        oy, ox = (H - h) // 2, (W - w) // 2
    else:
        oy, ox = _ints(offset, "Crop", "offset", 2)
        if not 0 <= oy <= H - h or not 0 <= ox <= W - w:
            raise MXNetError(f"Crop: offset={tuple(offset)} leaves no room for a ({h}, {w}) "
                             f"crop of data of size ({H}, {W})")
    r = _run(lambda: x[:, :, oy:oy + h, ox:ox + w].clone())
    return _assign_out(_new(r, data[0]._ctx), out)


# ------------------------------------------------------------------------ im2col / col2im
def _sliding(op, kernel, stride, dilate, pad):
    k = _ints(kernel, op, "kernel")
    n = len(k)
    if n not in (1, 2, 3):
        raise MXNetError(f"{op}: kernel must have 1, 2 or 3 values, got {kernel!r}")
    s = _ints(stride, op, "stride", n, (1,) * n)
    d = _ints(dilate, op, "dilate", n, (1,) * n)
    p = _ints(pad, op, "pad", n, (0,) * n)
    if min(k) < 1 or min(s) < 1 or min(d) < 1 or min(p) < 0:
        raise MXNetError(f"{op}: kernel, stride and dilate must be positive and pad "
                         f"non-negative, got kernel={k}, stride={s}, dilate={d}, pad={p}")
    return k, s, d, p


def _out_sizes(op, spatial, k, s, d, p):
    outs = []
    for i, (n, kk, ss, dd, pp) in enumerate(zip(spatial, k, s, d, p)):
        o = (n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
        if o < 1:
            raise MXNetError(f"{op}: the dilated kernel ({dd * (kk - 1) + 1}) is larger than "
                             f"the padded input ({n + 2 * pp}) on spatial axis {i}")
        outs.append(o)
    return outs


def _gather_index(spatial, k, s, d, p, outs, device):
    """(prod(k), prod(outs)) flat indices into the padded spatial block."""
    padded = [n + 2 * pp for n, pp in zip(spatial, p)]
    idx = torch.zeros((1, 1), dtype=torch.int64, device=device)
    for ax in range(len(k)):
        koff = torch.arange(k[ax], device=device) * d[ax]
        opos = torch.arange(outs[ax], device=device) * s[ax]
        pos = koff.unsqueeze(1) + opos.unsqueeze(0)          # (k, o)
        idx = (idx.unsqueeze(1).unsqueeze(3) * padded[ax] +
               pos.unsqueeze(0).unsqueeze(2)).reshape(idx.shape[0] * k[ax],
                                                      idx.shape[1] * outs[ax])
    return idx, padded


def im2col(data, kernel, stride=(), dilate=(), pad=(), out=None, name=None):
    """MXNet's ``im2col``: the sliding blocks of ``(N, C, *spatial)`` data as columns,
    ``(N, C * prod(kernel), L)`` with ``L`` the number of block positions (1-D, 2-D or 3-D)."""
    k, s, d, p = _sliding("im2col", kernel, stride, dilate, pad)
    x = _tt(data, "im2col")
    if x.dim() != len(k) + 2:
        raise MXNetError(f"im2col: a {len(k)}-D kernel needs {len(k) + 2}-D data, got shape "
                         f"{tuple(x.shape)}")
    spatial = list(x.shape[2:])
    outs = _out_sizes("im2col", spatial, k, s, d, p)
    n, c = x.shape[0], x.shape[1]

    def fn():
        if len(k) == 2 and x.is_floating_point():
            return F.unfold(x, k, dilation=d, padding=p, stride=s)
        idx, padded = _gather_index(spatial, k, s, d, p, outs, x.device)
        pads = []
        for pp in reversed(p):
            pads += [pp, pp]
        xp = F.pad(x, pads).reshape(n, c, -1)
        return xp[:, :, idx].reshape(n, c * idx.shape[0], idx.shape[1])
    r = _run(fn)
    return _assign_out(_new(r, data._ctx), out)


def col2im(data, output_size, kernel, stride=(), dilate=(), pad=(), out=None, name=None):
    """MXNet's ``col2im``: sums ``(N, C * prod(kernel), L)`` columns back into
    ``(N, C, *output_size)`` images (overlapping blocks add up), the adjoint of ``im2col``."""
    k, s, d, p = _sliding("col2im", kernel, stride, dilate, pad)
    size = _ints(output_size, "col2im", "output_size", len(k))
    x = _tt(data, "col2im")
    if x.dim() != 3:
        raise MXNetError(f"col2im: data must be 3-D (batch, channel * prod(kernel), blocks), "
                         f"got shape {tuple(x.shape)}")
    outs = _out_sizes("col2im", size, k, s, d, p)
    kk = math.prod(k)
    if x.shape[1] % kk or x.shape[2] != math.prod(outs):
        raise MXNetError(f"col2im: data shape {tuple(x.shape)} does not fit output_size={size} "
                         f"with kernel={k}: axis 1 must be a multiple of {kk} and axis 2 "
                         f"{math.prod(outs)}")
    n, c = x.shape[0], x.shape[1] // kk

    def fn():
        if len(k) == 2 and x.is_floating_point():
            return F.fold(x, size, k, dilation=d, padding=p, stride=s)
        idx, padded = _gather_index(list(size), k, s, d, p, outs, x.device)
        cols = x.reshape(n, c, kk * x.shape[2])
        flat = torch.zeros((n, c, math.prod(padded)), dtype=x.dtype,
                           device=x.device).index_add(2, idx.reshape(-1), cols)
        img = flat.reshape((n, c) + tuple(padded))
        sl = (slice(None), slice(None)) + tuple(slice(pp, pp + sz) for pp, sz in zip(p, size))
        return img[sl]
    r = _run(fn)
    return _assign_out(_new(r, data._ctx), out)


# ------------------------------------------------------------------------ spatial transformers
def _linspace(n, dtype, device):
    # MXNet's -1 + 2 * i / (n - 1); a single position is -1 (MXNet 1.9.1 divides by zero
    # there and fills the whole grid with NaN)
    if n == 1:
        return torch.full((1,), -1.0, dtype=dtype, device=device)
    return torch.arange(n, dtype=dtype, device=device) * (2.0 / (n - 1)) - 1.0


def _target(op, target_shape):
    t = _ints(target_shape, op, "target_shape", 2, (0, 0))
    if t[0] < 1 or t[1] < 1:
        raise MXNetError(f"{op}: target_shape (height, width) must be positive, got "
                         f"{target_shape!r}")
    return t


def _affine_grid(theta, h, w):
    ys = _linspace(h, theta.dtype, theta.device)
    xs = _linspace(w, theta.dtype, theta.device)
    base = torch.stack([xs.repeat(h), ys.repeat_interleave(w),
                        torch.ones(h * w, dtype=theta.dtype, device=theta.device)], 0)
    return torch.matmul(theta.reshape(-1, 2, 3), base).reshape(-1, 2, h, w)


def GridGenerator(data, transform_type, target_shape=(0, 0), out=None, name=None):
    """MXNet's ``GridGenerator``: a sampling grid ``(N, 2, H, W)`` of normalised (x, y)
    source coordinates in [-1, 1] for ``BilinearSampler``. ``'affine'``: ``data`` holds
    ``(N, 6)`` affine matrices applied to the target grid of ``target_shape``; ``'warp'``:
    ``data`` is an optical flow ``(N, 2, H, W)`` in pixels added to each pixel's position."""
    x = _ft(data, "GridGenerator")
    if transform_type == "affine":
        h, w = _target("GridGenerator", target_shape)
        if x.dim() != 2 or x.shape[1] != 6:
            raise MXNetError(f"GridGenerator: affine data must be (batch, 6), got shape "
                             f"{tuple(x.shape)}")
        r = _run(_affine_grid, x, h, w)
    elif transform_type == "warp":
        if x.dim() != 4 or x.shape[1] != 2:
            raise MXNetError(f"GridGenerator: warp data must be a flow (batch, 2, height, "
                             f"width), got shape {tuple(x.shape)}")
        h, w = x.shape[2], x.shape[3]

        def fn():
            gx = torch.arange(w, dtype=x.dtype, device=x.device).reshape(1, w)
            gy = torch.arange(h, dtype=x.dtype, device=x.device).reshape(h, 1)
            ox = (x[:, 0] + gx) / ((w - 1) / 2.0) - 1
            oy = (x[:, 1] + gy) / ((h - 1) / 2.0) - 1
            return torch.stack([ox, oy], 1)
        r = _run(fn)
    else:
        raise MXNetError(f"GridGenerator: transform_type must be 'affine' or 'warp', got "
                         f"{transform_type!r}")
    return _assign_out(_new(r, data._ctx), out)


def _check_sampler(op, x, g):
    if x.dim() != 4:
        raise MXNetError(f"{op}: data must be 4-D (batch, channel, height, width), got shape "
                         f"{tuple(x.shape)}")
    if g.dim() != 4 or g.shape[1] != 2 or g.shape[0] != x.shape[0]:
        raise MXNetError(f"{op}: grid must be ({x.shape[0]}, 2, height, width) for data of "
                         f"shape {tuple(x.shape)}, got {tuple(g.shape)}")


def _sample(x, g):
    # (x, y) in [-1, 1] map to pixel centres 0..W-1 / 0..H-1; corners outside read 0
    return F.grid_sample(x, g.permute(0, 2, 3, 1), mode="bilinear", padding_mode="zeros",
                         align_corners=True)


def BilinearSampler(data, grid, cudnn_off=None, out=None, name=None):
    """MXNet's ``BilinearSampler``: samples NCHW ``data`` at ``grid`` ``(N, 2, H', W')``
    (normalised x, y in [-1, 1]) with bilinear interpolation; points outside read 0."""
    x = _ft(data, "BilinearSampler")
    g = _ft(grid, "BilinearSampler", "grid")
    _check_sampler("BilinearSampler", x, g)
    r = _run(_sample, x, g.to(x.dtype))
    return _assign_out(_new(r, data._ctx), out)


def SpatialTransformer(data, loc, target_shape=(0, 0), transform_type="affine",
                       sampler_type="bilinear", cudnn_off=None, out=None, name=None):
    """MXNet's ``SpatialTransformer``: ``GridGenerator`` (affine, ``loc`` ``(N, 6)``,
    ``target_shape``) followed by ``BilinearSampler`` of NCHW ``data``."""
    if transform_type != "affine":
        raise MXNetError(f"SpatialTransformer: transform_type must be 'affine', got "
                         f"{transform_type!r}")
    if sampler_type != "bilinear":
        raise MXNetError(f"SpatialTransformer: sampler_type must be 'bilinear', got "
                         f"{sampler_type!r}")
    x = _ft(data, "SpatialTransformer")
    theta = _ft(loc, "SpatialTransformer", "loc")
    h, w = _target("SpatialTransformer", target_shape)
    if x.dim() != 4:
        raise MXNetError(f"SpatialTransformer: data must be 4-D, got shape {tuple(x.shape)}")
    if theta.numel() != x.shape[0] * 6:
        raise MXNetError(f"SpatialTransformer: loc must hold 6 values per sample, ("
                         f"{x.shape[0]}, 6), got shape {tuple(theta.shape)}")
    r = _run(lambda: _sample(x, _affine_grid(theta.reshape(-1, 6).to(x.dtype), h, w)))
    return _assign_out(_new(r, data._ctx), out)


# ------------------------------------------------------------------------ Correlation
def Correlation(data1, data2, kernel_size=1, max_displacement=1, stride1=1, stride2=1,
                pad_size=0, is_multiply=True, out=None, name=None):
    """MXNet's ``Correlation`` (FlowNet): for each displacement (dy, dx) on a
    ``stride2`` grid within ``max_displacement``, the mean over channels and a
    ``kernel_size`` window of ``data1 * data2`` shifted (``|data1 - data2|`` with
    ``is_multiply=False``), at positions ``stride1`` apart of the zero-padded inputs. Output
    ``(N, (2 * (max_displacement // stride2) + 1) ** 2, H', W')``, displacements in
    row-major (dy, dx) order."""
    a = _ft(data1, "Correlation", "data1")
    b = _ft(data2, "Correlation", "data2")
    if a.dim() != 4 or tuple(a.shape) != tuple(b.shape):
        raise MXNetError(f"Correlation: data1 and data2 must be 4-D with the same shape, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    k, md, s1, s2, pad = (int(kernel_size), int(max_displacement), int(stride1), int(stride2),
                          int(pad_size))
    if k < 1 or k % 2 == 0:
        raise MXNetError(f"Correlation: kernel_size must be a positive odd number, got {k}")
    if s1 < 1 or s2 < 1 or md < 0 or pad < 0:
        raise MXNetError(f"Correlation: stride1 and stride2 must be positive, "
                         f"max_displacement and pad_size non-negative, got stride1={s1}, "
                         f"stride2={s2}, max_displacement={md}, pad_size={pad}")
    n, c, h, w = a.shape
    hp, wp = h + 2 * pad, w + 2 * pad
    border = md + (k - 1) // 2
    top_h = math.ceil((hp - 2 * border) / s1)
    top_w = math.ceil((wp - 2 * border) / s1)
    if top_h < 1 or top_w < 1:
        raise MXNetError(f"Correlation: the padded input ({hp}, {wp}) is too small for "
                         f"max_displacement={md} and kernel_size={k}")
    radius = md // s2
    grid = 2 * radius + 1
    span_h = (top_h - 1) * s1 + k       # rows of data1 the windows cover
    span_w = (top_w - 1) * s1 + k

    def fn():
        ap = F.pad(a, (pad, pad, pad, pad))
        bp = F.pad(b.to(a.dtype), (pad, pad, pad, pad))
        a_win = ap[:, :, md:md + span_h, md:md + span_w]
        maps = []
        for ch in range(grid * grid):
            dx = (ch % grid - radius) * s2
            dy = (ch // grid - radius) * s2
            b_win = bp[:, :, md + dy:md + dy + span_h, md + dx:md + dx + span_w]
            if is_multiply:
                prod = (a_win * b_win).sum(1, keepdim=True)
            else:
                diff = a_win - b_win
                # MXNet's backward takes sign(0) as +1 for data1 (-1 for data2)
                prod = torch.where(diff >= 0, diff, -diff).sum(1, keepdim=True)
            maps.append(F.avg_pool2d(prod, k, stride=s1) * (1.0 / c))
        return torch.cat(maps, 1)
    r = _run(fn)
    return _assign_out(_new(r, data1._ctx), out)


# ------------------------------------------------------------------------ legacy v1 names
def Convolution_v1(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(),
                   num_filter=None, num_group=1, workspace=1024, no_bias=False,
                   cudnn_tune=None, cudnn_off=False, layout=None, out=None, name=None):
    """MXNet's legacy ``Convolution_v1``: the same maths as ``Convolution`` (2-D and 3-D
    kernels in MXNet 1.9.1; 1-D is computed here too)."""
    from .nn_ops import Convolution
    return Convolution(data, weight, bias, kernel=kernel, stride=stride, dilate=dilate,
                       pad=pad, num_filter=num_filter, num_group=num_group, no_bias=no_bias,
                       layout=layout, out=out)


class _MaxPoolV1Fn(torch.autograd.Function):
    """Max over unfolded windows; the gradient goes to every element equal to its window's
    maximum (mshadow's unpool), not to one of them."""

    @staticmethod
    def forward(ctx, xp, k, s, hw):
        cols = F.unfold(xp, k, stride=s)                       # (N, C*kk, L)
        n, c = xp.shape[0], xp.shape[1]
        cols = cols.reshape(n, c, k[0] * k[1], -1)
        out = cols.amax(2)
        ctx.save_for_backward(cols, out)
        ctx.cfg = (k, s, tuple(xp.shape[2:]))
        return out.reshape(n, c, hw[0], hw[1])

    @staticmethod
    def backward(ctx, grad):
        cols, out = ctx.saved_tensors
        k, s, size = ctx.cfg
        n, c = cols.shape[0], cols.shape[1]
        g = grad.reshape(n, c, 1, -1)
        gcols = torch.where(cols == out.unsqueeze(2), g, torch.zeros_like(cols))
        return F.fold(gcols.reshape(n, c * k[0] * k[1], -1), size, k, stride=s), None, None, \
            None


def Pooling_v1(data, kernel=(), pool_type="max", global_pool=False, pooling_convention="valid",
               stride=(), pad=(), out=None, name=None):
    """MXNet's legacy ``Pooling_v1`` (2-D NCHW only, as in MXNet 1.9.1). It differs from
    ``Pooling``: the padding is zeros that take part in max pooling; 'avg' divides by the
    whole kernel area even where a window hangs over the padded input ('full'); windows that
    hang over the end are cut there; the max gradient goes to every element equal to the
    maximum."""
    x = _ft(data, "Pooling_v1")
    if pool_type not in ("max", "avg", "sum"):
        raise MXNetError(f"Pooling_v1: pool_type must be 'max', 'avg' or 'sum', got "
                         f"{pool_type!r}")
    if pooling_convention not in ("valid", "full"):
        raise MXNetError(f"Pooling_v1: pooling_convention must be 'valid' or 'full', got "
                         f"{pooling_convention!r}")
    if x.dim() != 4:
        raise MXNetError(f"Pooling_v1: only 2-D pooling of 4-D (batch, channel, y, x) data is "
                         f"implemented (as in MXNet 1.9.1), got shape {tuple(x.shape)}")
    H, W = x.shape[2], x.shape[3]
    if global_pool:
        k, s, p = (H, W), (1, 1), (0, 0)
    else:
        k = _ints(kernel, "Pooling_v1", "kernel")
        if len(k) != 2:
            raise MXNetError(f"Pooling_v1: kernel must be (y, x), got {kernel!r} (3-D pooling "
                             "is not implemented in MXNet 1.9.1 either)")
        s = _ints(stride, "Pooling_v1", "stride", 2, (1, 1))
        p = _ints(pad, "Pooling_v1", "pad", 2, (0, 0))
        if min(k) < 1 or min(s) < 1 or min(p) < 0:
            raise MXNetError(f"Pooling_v1: kernel and stride must be positive and pad "
                             f"non-negative, got kernel={k}, stride={s}, pad={p}")
        if k[0] > H + 2 * p[0] or k[1] > W + 2 * p[1]:
            raise MXNetError(f"Pooling_v1: kernel {k} exceeds the padded input "
                             f"({H + 2 * p[0]}, {W + 2 * p[1]})")
    hp, wp = H + 2 * p[0], W + 2 * p[1]
    if pooling_convention == "valid" or global_pool:
        oh, ow = (hp - k[0]) // s[0] + 1, (wp - k[1]) // s[1] + 1
    else:
        oh = 1 + math.ceil((hp - k[0]) / s[0])
        ow = 1 + math.ceil((wp - k[1]) / s[1])
    # rows/columns the windows reach past the padded input: cut off (-inf for max, 0 else)
    extra_h = max(0, (oh - 1) * s[0] + k[0] - hp)
    extra_w = max(0, (ow - 1) * s[1] + k[1] - wp)

    def fn():
        xp = F.pad(x, (p[1], p[1], p[0], p[0]))
        fill = float("-inf") if pool_type == "max" else 0.0
        if extra_h or extra_w:
            xp = F.pad(xp, (0, extra_w, 0, extra_h), value=fill)
        if pool_type == "max":
            if _state.recording and xp.requires_grad:
                return _MaxPoolV1Fn.apply(xp, k, s, (oh, ow))
            return F.max_pool2d(xp, k, s)
        summed = F.avg_pool2d(xp, k, s, divisor_override=1)
        if pool_type == "avg":   # MXNet: the sum times 1 / (kernel area)
            return summed * (1.0 / (k[0] * k[1]))
        return summed
    r = _run(fn)
    return _assign_out(_new(r, data._ctx), out)


def BatchNorm_v1(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
                 fix_gamma=True, use_global_stats=False, output_mean_var=False, out=None,
                 name=None):
    """MXNet's legacy ``BatchNorm_v1`` (channel axis 1), as ``BatchNorm``: the same outputs,
    training-mode gradients and moving-statistics update. MXNet 1.9.1's v1 operator takes
    the training-mode (batch statistics) backward in inference mode too, a gradient of some
    other function than the one computed; here inference mode's gradient is the computed
    function's (``BatchNorm``'s). MXNet's own ``nd.BatchNorm_v1`` cannot be called
    imperatively (it reads the moving statistics as attributes); graphs hold it."""
    from .nn_ops import BatchNorm
    return BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum,
                     fix_gamma=fix_gamma, use_global_stats=use_global_stats,
                     output_mean_var=output_mean_var, axis=1, out=out)


def _guard_all():
    from .ops import _guard
    g = globals()
    for name in __all__:
        g[name] = _guard(g[name])


_guard_all()
